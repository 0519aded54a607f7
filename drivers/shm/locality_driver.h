// LocalityDriver: one rail made of two drivers, chosen per peer: the
// shared-memory driver for the ranks of this node, another driver (UCX) for
// the others. nmad sees one rail, so its packet scheduler, rendezvous
// planning and failure handling are unchanged; the choice is made once per
// peer at Connect() from both addresses (the peer's shm part names this
// rank's segment: shm, else the other driver), which is symmetric.
//
// The wake-up fd is an epoll fd over both drivers' fds. The remote driver
// is polled only once a peer was connected through it, so a job that lives
// on one node never pays for it.
//
// Thread-safety and ownership: the Driver contract; the sub-drivers are
// owned, and report to the same sink and rail index.
#ifndef RONDO_DRIVERS_SHM_LOCALITY_DRIVER_H_
#define RONDO_DRIVERS_SHM_LOCALITY_DRIVER_H_

#include <atomic>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "drivers/driver.h"
#include "drivers/shm/shm_driver.h"

namespace rondo::drivers::shm {

class LocalityDriver final : public Driver {
 public:
  // `local` may be null (no segment on this node: every peer is remote).
  // Returns kInternal with *error when the epoll fd cannot be made.
  static Result<std::unique_ptr<LocalityDriver>> Create(
      std::unique_ptr<Driver> local, std::unique_ptr<Driver> remote,
      std::string* error);
  ~LocalityDriver() override;

  const DriverCaps& caps() const noexcept override { return caps_; }
  void SetSink(PacketSink* sink, int rail) override;
  // [u32 length of the local part][local address][remote address].
  Result<std::vector<uint8_t>> LocalAddress() override;
  Status Connect(int peer, std::span<const uint8_t> address) override;
  void Close(int timeout_ms) noexcept override;

  Status PostPacket(int peer, const iovec* iov, int iovcnt,
                    Completion* done) noexcept override {
    Driver* d = Route(peer);
    return d ? d->PostPacket(peer, iov, iovcnt, done)
             : Status::kInvalidArgument;
  }
  uint8_t* ReservePacket(int peer, size_t len) noexcept override {
    Driver* d = Route(peer);
    return d ? d->ReservePacket(peer, len) : nullptr;
  }
  void CommitPacket(int peer, size_t len) noexcept override {
    Route(peer)->CommitPacket(peer, len);
  }
  size_t ImmediateMax(int peer) const noexcept override {
    const Driver* d = Route(peer);
    return d ? d->ImmediateMax(peer) : 0;
  }
  Status PostRdvSend(int peer, uint64_t key, const void* buf, size_t len,
                     Completion* done) noexcept override {
    Driver* d = Route(peer);
    return d ? d->PostRdvSend(peer, key, buf, len, done)
             : Status::kInvalidArgument;
  }
  Status PostRdvRecv(int peer, uint64_t key, void* buf, size_t len,
                     Completion* done) noexcept override {
    Driver* d = Route(peer);
    return d ? d->PostRdvRecv(peer, key, buf, len, done)
               : Status::kInvalidArgument;
  }
  // Both are on every waiter's pass: the shared-memory part is called
  // directly when it is a ShmDriver (final), not through the vtable,
  // which -O2 guarded with a guess (another LocalityDriver) and a frame of
  // its own (35 instructions per Poll, 17 per HasWork).
  int Poll() noexcept override {
    int n = shm_ != nullptr ? shm_->Poll() : local_ ? local_->Poll() : 0;
    if (remote_used()) n += remote_->Poll();
    return n;
  }
  // Either part's (without the rail, as the contract allows): a job on one
  // node polls only when a frame or a deferred event waits (ShmDriver).
  bool HasWork() const noexcept override {
    if (shm_ != nullptr ? shm_->HasWork() : local_ && local_->HasWork())
      return true;
    return remote_used() && remote_->HasWork();
  }
  int WakeupFd() const noexcept override { return epoll_fd_; }
  Status Arm() noexcept override;

  // The driver that serves `peer` ("shm", the remote driver's name, or ""
  // when not connected), for rondo-info and tests.
  std::string_view PathTo(int peer) const noexcept override;
  bool IsLocal(int peer) const noexcept {
    return local_ != nullptr && Route(peer) == local_.get();
  }
  // The remote driver's, once it serves a peer (RemoteMemory::Reaches
  // says which: not the peers reached through shared memory).
  RemoteMemory* remote_memory() noexcept override {
    return remote_used() ? remote_->remote_memory() : nullptr;
  }
  Driver* local() const noexcept { return local_.get(); }
  Driver* remote() const noexcept { return remote_.get(); }

 private:
  LocalityDriver() = default;
  Driver* Route(int peer) const noexcept {
    if (peer < 0 || static_cast<size_t>(peer) >= route_.size()) return nullptr;
    return route_[static_cast<size_t>(peer)];
  }

  std::unique_ptr<Driver> local_, remote_;
  ShmDriver* shm_ = nullptr;  // local_, when it is one
  DriverCaps caps_;
  std::vector<Driver*> route_;  // by peer: local_, remote_ or null
  bool remote_used() const noexcept {
    return remote_used_.load(std::memory_order_acquire);
  }
  std::atomic<bool> remote_used_{false};  // read by HasWork, any thread
  int epoll_fd_ = -1;
};

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_LOCALITY_DRIVER_H_
