#include "drivers/loopback/loopback_driver.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace rondo::drivers::loopback {

LoopbackDriver::LoopbackDriver(int self, const LoopbackDriverOptions& options)
    : self_(self) {
  if (self < 0 || self >= 65536) {
    throw std::invalid_argument("LoopbackDriver: invalid self peer id " +
                                std::to_string(self) +
                                ". Expected: 0 <= self < 65536");
  }
  if (options.max_packet == 0) {
    throw std::invalid_argument(
        "LoopbackDriver: invalid max_packet 0. Expected: > 0");
  }
  caps_.name = "loopback";
  caps_.max_packet = options.max_packet;
  caps_.rendezvous = true;
  caps_.zero_copy = false;  // one memcpy from the send to the receive buffer
  caps_.bandwidth_bytes_per_s = options.bandwidth_bytes_per_s;
  caps_.latency_ns = options.latency_ns;
  caps_.wakeup_fd = false;
}

LoopbackDriver::~LoopbackDriver() = default;

void LoopbackDriver::SetSink(PacketSink* sink, int rail) {
  sink_ = sink;
  rail_ = rail;
}

Result<std::vector<uint8_t>> LoopbackDriver::LocalAddress() {
  std::vector<uint8_t> address = {'l', 'o', 'o', 'p', 'b', 'a', 'c', 'k'};
  for (int shift = 0; shift < 32; shift += 8) {
    address.push_back(static_cast<uint8_t>(self_ >> shift));
  }
  return address;
}

Status LoopbackDriver::Connect(int peer, std::span<const uint8_t> address) {
  return peer == self_ ? Status::kOk : Status::kInvalidArgument;
}

Status LoopbackDriver::CheckPeer(int peer) const noexcept {
  if (closed_) return Status::kCanceled;
  return peer == self_ ? Status::kOk : Status::kInvalidArgument;
}

Status LoopbackDriver::PostPacket(int peer, const iovec* iov, int iovcnt,
                                  Completion* done) noexcept {
  if (Status s = CheckPeer(peer); s != Status::kOk) return s;
  if (iovcnt < 0 || (iovcnt > 0 && iov == nullptr)) {
    return Status::kInvalidArgument;
  }
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  if (total > caps_.max_packet) return Status::kInvalidArgument;
  try {
    std::vector<uint8_t> packet;
    if (!spare_.empty()) {
      packet.swap(spare_.back());
      spare_.pop_back();
    }
    packet.resize(total);
    size_t offset = 0;
    for (int i = 0; i < iovcnt; ++i) {
      if (iov[i].iov_len == 0) continue;
      std::memcpy(packet.data() + offset, iov[i].iov_base, iov[i].iov_len);
      offset += iov[i].iov_len;
    }
    packets_.push_back(std::move(packet));
  } catch (const std::bad_alloc&) {
    return Status::kNoResource;
  }
  pending_.fetch_add(1, std::memory_order_release);
  return Status::kOk;  // copied: the caller's buffers are free again
}

void LoopbackDriver::Match(const PendingSend& send,
                           const PendingRecv& recv) noexcept {
  const size_t bytes = std::min(send.len, recv.len);
  if (bytes > 0) std::memcpy(recv.buf, send.buf, bytes);
  // ready_ may grow here; a deque keeps earlier entries where they are.
  pending_.fetch_add(2, std::memory_order_release);
  ready_.push_back({send.done, Status::kOk, send.len});
  ready_.push_back({recv.done,
                    send.len > recv.len ? Status::kTruncated : Status::kOk,
                    bytes});
}

Status LoopbackDriver::PostRdvSend(int peer, uint64_t key, const void* buf,
                                   size_t len, Completion* done) noexcept {
  if (Status s = CheckPeer(peer); s != Status::kOk) return s;
  if (done == nullptr || (buf == nullptr && len > 0)) {
    return Status::kInvalidArgument;
  }
  try {
    PendingSend send{buf, len, done};
    if (auto it = recvs_.find(key); it != recvs_.end()) {
      PendingRecv recv = it->second;
      recvs_.erase(it);
      Match(send, recv);
    } else {
      sends_.emplace(key, send);
    }
  } catch (const std::bad_alloc&) {
    return Status::kNoResource;
  }
  return Status::kInProgress;
}

Status LoopbackDriver::PostRdvRecv(int peer, uint64_t key, void* buf,
                                   size_t len, Completion* done) noexcept {
  if (Status s = CheckPeer(peer); s != Status::kOk) return s;
  if (done == nullptr || (buf == nullptr && len > 0)) {
    return Status::kInvalidArgument;
  }
  if (recvs_.contains(key)) return Status::kInvalidArgument;
  try {
    PendingRecv recv{buf, len, done};
    // lower_bound: the oldest send with this key (multimap keeps order).
    if (auto it = sends_.lower_bound(key);
        it != sends_.end() && it->first == key) {
      PendingSend send = it->second;
      sends_.erase(it);
      Match(send, recv);
    } else {
      recvs_.emplace(key, recv);
    }
  } catch (const std::bad_alloc&) {
    return Status::kNoResource;
  }
  return Status::kInProgress;
}

int LoopbackDriver::Poll() noexcept {
  int events = 0;
  // Only what was queued on entry: callbacks may post more.
  const size_t end = packets_.size();
  while (packets_head_ < end) {
    std::vector<uint8_t> packet = std::move(packets_[packets_head_++]);
    pending_.fetch_sub(1, std::memory_order_relaxed);
    if (sink_ != nullptr) {
      sink_->OnPacket(self_, rail_, packet.data(), packet.size());
    }
    ++events;
    try {
      spare_.push_back(std::move(packet));
    } catch (const std::bad_alloc&) {
      // Dropped: the next post allocates.
    }
  }
  // Drop the delivered slots (what callbacks posted meanwhile moves to the
  // front; no allocation).
  packets_.erase(packets_.begin(),
                 packets_.begin() + static_cast<ptrdiff_t>(packets_head_));
  packets_head_ = 0;
  size_t completions = ready_.size();
  while (completions-- > 0) {
    Ready r = ready_.front();
    ready_.pop_front();
    pending_.fetch_sub(1, std::memory_order_relaxed);
    r.done->fn(r.done, r.status, r.bytes);
    ++events;
  }
  return events;
}

void LoopbackDriver::Close(int timeout_ms) noexcept {
  if (closed_) return;
  closed_ = true;
  packets_.clear();
  packets_head_ = 0;
  pending_.store(0, std::memory_order_relaxed);
  // Gather first: a completion may call Post* again (it then fails with
  // kCanceled because closed_ is set).
  // Matched transfers are done (the data moved): they keep their status.
  std::deque<Ready> finished;
  finished.swap(ready_);
  for (auto& [key, send] : sends_) {
    finished.push_back({send.done, Status::kCanceled, 0});
  }
  for (auto& [key, recv] : recvs_) {
    finished.push_back({recv.done, Status::kCanceled, 0});
  }
  sends_.clear();
  recvs_.clear();
  for (Ready& r : finished) r.done->fn(r.done, r.status, r.bytes);
}

}  // namespace rondo::drivers::loopback
