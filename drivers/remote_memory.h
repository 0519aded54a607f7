// RemoteMemory: a driver's own one-sided operations (UCX's ucp_mem_map,
// rkeys, ucp_put_nbx / ucp_get_nbx / ucp_atomic_op_nbx), an optional
// capability of a Driver (Driver::remote_memory()).
//
// A rank maps memory (Map) and hands the packed key bytes to its peers out
// of band (nmad's RMA windows exchange them collectively); a peer unpacks
// them once (UnpackKey) and then reads, writes and updates that memory at
// absolute remote addresses without the target's CPU, or with the target's
// transport progress when the transport emulates the operation (UCX's
// software atomics over TCP need the target's worker polled, which Rondo's
// engine does in the background).
//
// Completion: every data operation returns kOk (complete now: buffers free,
// a get's or atomic's result is there, `done` is NOT called), kInProgress
// (`done` runs later from Poll(), on the polling thread, inside the
// transport's progress: it must be short and must not call the driver), or
// an error with nothing started. A put or non-fetching atomic is locally
// complete then (its buffer reusable); it is remotely complete only after a
// later Flush of its peer completes. Operations to one peer are not ordered
// among themselves except across a Fence.
//
// Thread-safety: as the Driver: the caller serializes every call with the
// driver's other calls (nmad holds the rail). Keys and regions are owned by
// the driver until Release/Unmap; Unmap only once no peer accesses the
// region any more.
#ifndef RONDO_DRIVERS_REMOTE_MEMORY_H_
#define RONDO_DRIVERS_REMOTE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/status.h"

namespace rondo::drivers {

struct Completion;  // drivers/driver.h
// Opaque handles, defined by each driver.
struct MemoryRegion;
struct RemoteKey;

// The atomic operations a transport may offer on 4- and 8-byte integers.
enum class AtomicOp : uint8_t {
  kAdd,
  kAnd,
  kOr,
  kXor,
  kSwap,         // fetching: the old value
  kCompareSwap,  // fetching: compares with `value`; `result` holds the
                 // value to store on entry and the old value on completion
};

class RemoteMemory {
 public:
  // True when `peer` (or this process itself) can be reached by the
  // operations below.
  virtual bool Reaches(int peer) const noexcept = 0;
  // True when the transport carries these operations to `peer` in
  // software over its own messages (UCX over TCP: every put is a message
  // the target's transport must answer). Active messages served by the
  // target's engine then do as well or better, so callers may prefer them.
  virtual bool Emulated(int /*peer*/) const noexcept { return false; }
  // Registers [base, base + len) (len > 0) for remote access: *region and
  // the packed key its peers unpack. kInvalidArgument, or the transport's
  // error.
  virtual engine::Status Map(void* base, size_t len, MemoryRegion** region,
                             std::vector<uint8_t>* packed_key) = 0;
  virtual void Unmap(MemoryRegion* region) noexcept = 0;
  // The key of `peer`'s region, from its packed bytes.
  virtual engine::Status UnpackKey(int peer, std::span<const uint8_t> packed,
                                   RemoteKey** key) = 0;
  virtual void ReleaseKey(RemoteKey* key) noexcept = 0;

  // Writes `len` bytes of `buf` at `remote` (an address inside the region
  // of `key`, which belongs to `peer`).
  virtual engine::Status Put(int peer, const void* buf, size_t len,
                             uint64_t remote, RemoteKey* key,
                             Completion* done) noexcept = 0;
  virtual engine::Status Get(int peer, void* buf, size_t len, uint64_t remote,
                             RemoteKey* key, Completion* done) noexcept = 0;
  // An atomic `op` on the `size`-byte (4 or 8) integer at `remote` (aligned
  // to `size`) with `value`; with `result` non-null the old value lands
  // there (required for kSwap and kCompareSwap). kUnsupported when the
  // transport offers no such atomic.
  virtual engine::Status Atomic(int peer, AtomicOp op, size_t size,
                                const void* value, void* result,
                                uint64_t remote, RemoteKey* key,
                                Completion* done) noexcept = 0;
  // Orders the operations issued before it before those issued after it
  // (to any peer). Non-blocking.
  virtual engine::Status Fence() noexcept = 0;
  // Remote completion of every operation issued to `peer` so far: kOk (now)
  // or kInProgress (`done` later), or an error.
  virtual engine::Status Flush(int peer, Completion* done) noexcept = 0;

 protected:
  ~RemoteMemory() = default;
};

}  // namespace rondo::drivers

#endif  // RONDO_DRIVERS_REMOTE_MEMORY_H_
