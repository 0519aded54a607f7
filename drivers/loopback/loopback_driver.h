// LoopbackDriver: the Driver for messages a process sends to itself.
//
// nmad treats "self" as one more peer on one more rail, so sends to self go
// through the same strategies, matching and completions as network traffic,
// and no network (UCX or other) is needed for them. Packets are copied into
// an internal FIFO by PostPacket() and handed to the sink by Poll();
// rendezvous sends and receives are matched by key (either order) and moved
// with one memcpy when both are present, their completions delivered by the
// next Poll(). Hence caps: rendezvous=true, zero_copy=false.
//
// Thread-safety: none (the Driver contract: the caller serializes all calls).
// Ownership: packets are copied at PostPacket(); rendezvous buffers are
// borrowed from PostRdvSend()/PostRdvRecv() until their completion runs.
// No wake-up fd: a loopback peer has work only after a Post* call by the same
// process, so a caller never needs to sleep on it.
#ifndef RONDO_DRIVERS_LOOPBACK_LOOPBACK_DRIVER_H_
#define RONDO_DRIVERS_LOOPBACK_LOOPBACK_DRIVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "drivers/driver.h"

namespace rondo::drivers::loopback {

struct LoopbackDriverOptions {
  // The largest PostPacket() payload.
  size_t max_packet = size_t{1} << 20;
  // Estimate reported in caps(): one memcpy, a few GB/s on any machine.
  double bandwidth_bytes_per_s = 10e9;
  double latency_ns = 100;
};

class LoopbackDriver final : public Driver {
 public:
  // `self` is this process's own peer id (0 <= self < 65536), the only peer
  // Connect() accepts. Throws std::invalid_argument for a bad `self` or
  // max_packet == 0.
  explicit LoopbackDriver(int self, const LoopbackDriverOptions& options = {});
  ~LoopbackDriver() override;

  LoopbackDriver(const LoopbackDriver&) = delete;
  LoopbackDriver& operator=(const LoopbackDriver&) = delete;

  const DriverCaps& caps() const noexcept override { return caps_; }

  void SetSink(PacketSink* sink, int rail) override;
  // A few bytes naming the process ("loopback" + self); Connect ignores them.
  Result<std::vector<uint8_t>> LocalAddress() override;
  // kOk for peer == self (any address), kInvalidArgument otherwise.
  Status Connect(int peer, std::span<const uint8_t> address) override;
  // Drops queued packets; from inside Close(), unmatched rendezvous
  // operations complete with kCanceled and matched ones not yet delivered
  // with their real status. Later Post* calls return kCanceled.
  void Close(int timeout_ms) noexcept override;

  Status PostPacket(int peer, const iovec* iov, int iovcnt,
                    Completion* done) noexcept override;
  // A second outstanding receive with the same key is kInvalidArgument
  // (the contract makes keys unique among outstanding receives); several
  // sends with one key are matched in posting order.
  Status PostRdvSend(int peer, uint64_t key, const void* buf, size_t len,
                     Completion* done) noexcept override;
  Status PostRdvRecv(int peer, uint64_t key, void* buf, size_t len,
                     Completion* done) noexcept override;
  // Delivers the packets and completions queued before this call started
  // (work posted from inside the callbacks waits for the next Poll, so a
  // sink that answers every packet cannot keep Poll running forever).
  int Poll() noexcept override;
  bool HasWork() const noexcept override {
    return pending_.load(std::memory_order_acquire) != 0;
  }

 private:
  struct PendingSend {
    const void* buf;
    size_t len;
    Completion* done;
  };
  struct PendingRecv {
    void* buf;
    size_t len;
    Completion* done;
  };
  struct Ready {
    Completion* done;
    Status status;
    size_t bytes;
  };

  Status CheckPeer(int peer) const noexcept;
  // Copies the send into the receive and queues both completions.
  void Match(const PendingSend& send, const PendingRecv& recv) noexcept;

  const int self_;
  DriverCaps caps_;
  PacketSink* sink_ = nullptr;
  int rail_ = 0;
  bool closed_ = false;
  // Packets in posting order, from packets_head_; delivered buffers go to
  // spare_ and are reused (their capacity kept): no allocation per packet
  // once the steady state's sizes have been seen.
  std::vector<std::vector<uint8_t>> packets_;
  size_t packets_head_ = 0;
  std::vector<std::vector<uint8_t>> spare_;
  // Packets and completions not yet delivered (read without the caller's
  // lock by HasWork).
  std::atomic<size_t> pending_{0};
  std::multimap<uint64_t, PendingSend> sends_;  // unmatched, FIFO per key
  std::unordered_map<uint64_t, PendingRecv> recvs_;  // unmatched
  std::deque<Ready> ready_;                          // matched, undelivered
};

}  // namespace rondo::drivers::loopback

#endif  // RONDO_DRIVERS_LOOPBACK_LOOPBACK_DRIVER_H_
