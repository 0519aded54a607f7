#include "drivers/shm/locality_driver.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rondo::drivers::shm {

Result<std::unique_ptr<LocalityDriver>> LocalityDriver::Create(
    std::unique_ptr<Driver> local, std::unique_ptr<Driver> remote,
    std::string* error) {
  if (remote == nullptr) {
    if (error) *error = "shm: LocalityDriver needs a remote driver";
    return Status::kInvalidArgument;
  }
  std::unique_ptr<LocalityDriver> d(new LocalityDriver);
  const DriverCaps& rc = remote->caps();
  d->caps_ = rc;
  if (local) {
    const DriverCaps& lc = local->caps();
    d->caps_.name = lc.name + "+" + rc.name;
    d->caps_.max_packet = std::min(lc.max_packet, rc.max_packet);
    d->caps_.rendezvous = lc.rendezvous && rc.rendezvous;
    d->caps_.zero_copy = lc.zero_copy && rc.zero_copy;
    d->caps_.wakeup_fd = lc.wakeup_fd && rc.wakeup_fd;
  }
  if (d->caps_.wakeup_fd) {
    d->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    bool ok = d->epoll_fd_ >= 0;
    for (Driver* sub : {local.get(), remote.get()}) {
      if (sub == nullptr || !ok) continue;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ok = epoll_ctl(d->epoll_fd_, EPOLL_CTL_ADD, sub->WakeupFd(), &ev) == 0;
    }
    if (!ok) {
      if (error)
        *error = std::string("shm: cannot make the rail's epoll fd: ") +
                 std::strerror(errno);
      return Status::kInternal;
    }
  }
  d->local_ = std::move(local);
  d->shm_ = dynamic_cast<ShmDriver*>(d->local_.get());
  d->remote_ = std::move(remote);
  return d;
}

LocalityDriver::~LocalityDriver() {
  // The sub-drivers close themselves in their destructors.
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void LocalityDriver::SetSink(PacketSink* sink, int rail) {
  if (local_) local_->SetSink(sink, rail);
  remote_->SetSink(sink, rail);
}

Result<std::vector<uint8_t>> LocalityDriver::LocalAddress() {
  std::vector<uint8_t> l;
  if (local_) {
    auto a = local_->LocalAddress();
    if (!a.ok()) return a.status();
    l = std::move(a).value();
  }
  auto r = remote_->LocalAddress();
  if (!r.ok()) return r.status();
  std::vector<uint8_t> out(4 + l.size() + r.value().size());
  const uint32_t n = static_cast<uint32_t>(l.size());
  std::memcpy(out.data(), &n, 4);
  if (!l.empty()) std::memcpy(out.data() + 4, l.data(), l.size());
  std::memcpy(out.data() + 4 + l.size(), r.value().data(), r.value().size());
  return out;
}

Status LocalityDriver::Connect(int peer, std::span<const uint8_t> address) {
  if (peer < 0 || peer >= 65536 || address.size() < 4)
    return Status::kInvalidArgument;
  uint32_t n;
  std::memcpy(&n, address.data(), 4);
  if (n > address.size() - 4) return Status::kInvalidArgument;
  if (static_cast<size_t>(peer) >= route_.size())
    route_.resize(static_cast<size_t>(peer) + 1, nullptr);
  if (route_[static_cast<size_t>(peer)] != nullptr)
    return Status::kInvalidArgument;
  // Shared memory when the peer's part names our segment (Connect refuses
  // another node's), else the remote driver.
  if (local_ && n > 0 &&
      local_->Connect(peer, address.subspan(4, n)) == Status::kOk) {
    route_[static_cast<size_t>(peer)] = local_.get();
    return Status::kOk;
  }
  Status s = remote_->Connect(peer, address.subspan(4 + n));
  if (s == Status::kOk) {
    route_[static_cast<size_t>(peer)] = remote_.get();
    remote_used_.store(true, std::memory_order_release);
    // The remote driver may refine its estimates at Connect (UCX does).
    caps_.bandwidth_bytes_per_s = remote_->caps().bandwidth_bytes_per_s;
    caps_.latency_ns = remote_->caps().latency_ns;
  }
  return s;
}

void LocalityDriver::Close(int timeout_ms) noexcept {
  if (local_) local_->Close(timeout_ms);
  remote_->Close(timeout_ms);
}

Status LocalityDriver::Arm() noexcept {
  if (epoll_fd_ < 0) return Status::kUnsupported;
  if (local_) {
    if (Status s = local_->Arm(); s != Status::kOk) return s;
  }
  return remote_->Arm();
}

std::string_view LocalityDriver::PathTo(int peer) const noexcept {
  Driver* d = Route(peer);
  if (d == nullptr) return "";
  return d->caps().name;
}

}  // namespace rondo::drivers::shm
