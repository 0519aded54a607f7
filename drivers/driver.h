// Driver: the narrow contract between nmad and a network (UCX style).
//
// A driver moves bytes to numbered peers and nothing else: no matching, no
// protocol. Capabilities are data (DriverCaps) so strategies can reason about
// rails; everything on the data path is non-blocking and returns a Status in
// which kInProgress ("completion comes later") and kNoResource ("retry
// later") are outcomes, not errors. Received packets and completions are
// delivered only from Poll(), so a driver makes no progress until someone
// polls it: nmad runs Poll() from a repeat engine task (progress is "off until
// enabled").
//
// Two transfer kinds:
//   * packets: PostPacket() sends up to caps().max_packet bytes gathered from
//     an iovec; the peer's PacketSink::OnPacket() sees them, in order per
//     (driver, peer) pair.
//   * rendezvous (zero-copy when caps().rendezvous): PostRdvSend(peer, key)
//     and PostRdvRecv(peer, key) move one buffer; they match by (peer, key)
//     whatever their order. Keys are chosen by the caller, below
//     kMaxRdvKey, and must be unique among the outstanding receives from
//     one peer; the driver tells peers apart itself.
//
// Thread-safety: a driver is NOT thread-safe; the caller serializes all calls
// on one instance (nmad holds a per-rail lock). Sink callbacks and completion
// callbacks run on the thread inside Poll() (or inside Post* for immediate
// errors, never for success); they may call Post* and CancelRdvRecv on the
// same driver, but never Poll(), Connect() or Close().
#ifndef RONDO_DRIVERS_DRIVER_H_
#define RONDO_DRIVERS_DRIVER_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/remote_memory.h"
#include "engine/status.h"

namespace rondo::drivers {

using engine::Result;
using engine::Status;

struct DriverCaps {
  std::string name;                  // "ucx", "loopback"
  size_t max_packet = 0;             // largest PostPacket payload (all iov)
  bool rendezvous = false;           // PostRdvSend/PostRdvRecv available
  bool zero_copy = false;            // rendezvous moves data without copies
  double bandwidth_bytes_per_s = 0;  // estimate, used by split strategies
  double latency_ns = 0;             // estimate
  bool wakeup_fd = false;            // WakeupFd()/Arm() usable
};

// Completion of a posted operation, UCX style: intrusive, no allocation.
// `bytes` is the number of bytes transferred (for a receive: received; a
// truncated receive reports kTruncated with the bytes that fit).
struct Completion {
  void (*fn)(Completion* self, Status status, size_t bytes) noexcept = nullptr;
};

// Where a driver delivers what arrives. Called only from Driver::Poll().
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  // A packet from `peer` on rail `rail`; `data` is valid only during the call.
  virtual void OnPacket(int peer, int rail, const void* data,
                        size_t len) noexcept = 0;
  // The driver found `peer` unreachable (endpoint error). Operations to or
  // from it complete with kPeerFailed.
  virtual void OnPeerFailure(int peer, int rail, Status status,
                             std::string_view what) noexcept = 0;
};

// Rendezvous keys are below 2^48 (drivers keep the upper bits for the peer).
inline constexpr uint64_t kMaxRdvKey = uint64_t{1} << 48;

class Driver {
 public:
  virtual ~Driver() = default;

  virtual const DriverCaps& caps() const noexcept = 0;

  // ---- Set-up (before the first Poll; the caller serializes) ----
  // Where `rail` is this driver's index in the caller's rail list.
  virtual void SetSink(PacketSink* sink, int rail) = 0;
  // Opaque bytes a peer passes to Connect() to reach this driver.
  virtual Result<std::vector<uint8_t>> LocalAddress() = 0;
  // Makes `peer` (0 <= peer < 65536) reachable at `address`.
  virtual Status Connect(int peer, std::span<const uint8_t> address) = 0;
  // Flushes and closes every endpoint, waiting at most `timeout_ms`; pending
  // operations complete with kCanceled. After Close only the destructor.
  virtual void Close(int timeout_ms) noexcept = 0;

  // ---- Data path (non-blocking; the caller serializes) ----
  // kOk: sent, the iov buffers may be reused now, `done` is NOT called;
  // kInProgress: `done` is called from a later Poll(), keep buffers alive;
  // kNoResource: nothing was sent, retry later;
  // kInvalidArgument: too large (> caps().max_packet) or unknown peer;
  // kPeerFailed: the peer is gone.
  // With `done` null the caller wants the packet copied out now: the driver
  // returns kOk (sent, buffers free) or an error (kNoResource when it would
  // have to keep the buffers), never kInProgress (the small-message fast
  // path posts from the stack).
  virtual Status PostPacket(int peer, const iovec* iov, int iovcnt,
                            Completion* done) noexcept = 0;
  // A small packet written in place (the shared-memory "fast box"): room
  // for `len` bytes inside the transport, or null when this driver has
  // none, `len` does not fit it, the peer is unknown or failed, or there is
  // no room now (then use PostPacket). The caller writes exactly `len` bytes
  // there and calls CommitPacket(peer, len) before any other call on this
  // driver: the packet is then sent as PostPacket(..., nullptr) returning
  // kOk would have sent it, with no copy in between.
  virtual uint8_t* ReservePacket(int peer, size_t len) noexcept {
    (void)peer;
    (void)len;
    return nullptr;
  }
  virtual void CommitPacket(int peer, size_t len) noexcept {
    (void)peer;
    (void)len;
  }
  // The largest packet to `peer` that PostPacket(..., nullptr) and
  // ReservePacket refuse only for lack of room at the moment (a full FIFO),
  // never for its size: the caller may offer every packet up to it
  // without a completion. 0: no such promise (the caller learns what the
  // driver accepts).
  virtual size_t ImmediateMax(int peer) const noexcept {
    (void)peer;
    return 0;
  }
  // Rendezvous send/receive of one buffer. kInProgress (then `done` is
  // called from Poll()), or an error with nothing posted (kInvalidArgument
  // for a key >= kMaxRdvKey). A receive smaller
  // than the matching send completes with kTruncated and the bytes that fit.
  virtual Status PostRdvSend(int peer, uint64_t key, const void* buf,
                             size_t len, Completion* done) noexcept = 0;
  virtual Status PostRdvRecv(int peer, uint64_t key, void* buf, size_t len,
                             Completion* done) noexcept = 0;
  // Delivers packets and completions; returns how many events it handled
  // (0: nothing happened, cheap to call again).
  virtual int Poll() noexcept = 0;
  // False only when Poll() certainly has nothing to deliver (a driver whose
  // events all come from its own posts, like loopback, can tell without
  // the caller's lock); a waiter then skips it. The default: always poll.
  virtual bool HasWork() const noexcept { return true; }
  // The transport that carries traffic to `peer` (for diagnostics such as
  // rondo-info; a driver that serves peers by different means, like
  // drivers/shm's LocalityDriver, names each). Default: caps().name.
  virtual std::string_view PathTo(int /*peer*/) const noexcept {
    return caps().name;
  }
  // The driver's own one-sided operations (drivers/remote_memory.h), or
  // null when it has none (the default). Owned by the driver.
  virtual RemoteMemory* remote_memory() noexcept { return nullptr; }

  // ---- Sleeping (optional, caps().wakeup_fd) ----
  // A file descriptor that becomes readable when Poll() has work, after a
  // successful Arm(). -1 when unsupported.
  virtual int WakeupFd() const noexcept { return -1; }
  // kOk: armed, the caller may sleep on WakeupFd(); kBusy: events are
  // pending, poll again instead of sleeping; kUnsupported.
  virtual Status Arm() noexcept { return Status::kUnsupported; }
};

}  // namespace rondo::drivers

#endif  // RONDO_DRIVERS_DRIVER_H_
