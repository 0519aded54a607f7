// nmad's remote memory: rail 0's one-sided operations
// (drivers/remote_memory.h: UCX's mapped memory, rkeys, put, get and
// atomics) for the layers above the core (nmad/rma.h's windows, MadMPI).
//
// Each call holds rail 0 for the length of the driver call (the Driver
// contract: its holder alone calls the driver), so it may be called from
// any thread, except from inside a driver callback of another rail
// (kBusy). Completions run from the rail's Poll, i.e. from whichever thread
// progresses the Core (Core::Progress, a waiting thread, the engine's
// progress threads): a caller waits by progressing the Core, never by
// spinning alone. Core::remote_memory() gives the Core's, or null when rail
// 0's transport has no one-sided operations (loopback-only jobs, shared
// memory without UCX for any peer, UCX without RMA).
#ifndef RONDO_NMAD_REMOTE_MEMORY_H_
#define RONDO_NMAD_REMOTE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "drivers/remote_memory.h"
#include "engine/status.h"

namespace rondo::nmad {

namespace internal {
struct Rail;
}

using drivers::AtomicOp;
using drivers::MemoryRegion;
using drivers::RemoteKey;

class RemoteMemory {
 public:
  // `rail` holds the driver whose `ops` these are; both outlive this.
  RemoteMemory(internal::Rail& rail, drivers::RemoteMemory& ops) noexcept
      : rail_(rail), ops_(ops) {}
  RemoteMemory(const RemoteMemory&) = delete;
  RemoteMemory& operator=(const RemoteMemory&) = delete;

  // As drivers::RemoteMemory (peers are job ranks).
  bool Reaches(int peer) noexcept;
  bool Emulated(int peer) noexcept;
  engine::Status Map(void* base, size_t len, MemoryRegion** region,
                     std::vector<uint8_t>* packed_key);
  void Unmap(MemoryRegion* region) noexcept;
  engine::Status UnpackKey(int peer, std::span<const uint8_t> packed,
                           RemoteKey** key);
  void ReleaseKey(RemoteKey* key) noexcept;
  engine::Status Put(int peer, const void* buf, size_t len, uint64_t remote,
                     RemoteKey* key, drivers::Completion* done) noexcept;
  engine::Status Get(int peer, void* buf, size_t len, uint64_t remote,
                     RemoteKey* key, drivers::Completion* done) noexcept;
  engine::Status Atomic(int peer, AtomicOp op, size_t size, const void* value,
                        void* result, uint64_t remote, RemoteKey* key,
                        drivers::Completion* done) noexcept;
  engine::Status Fence() noexcept;
  engine::Status Flush(int peer, drivers::Completion* done) noexcept;

 private:
  // Runs `fn` (a driver call) with the rail held: kBusy when this thread
  // holds another rail.
  template <typename Fn>
  engine::Status Held(Fn&& fn) noexcept;
  // A yes/no question to the driver with the rail held (false when the
  // rail cannot be had: kBusy).
  template <typename Fn>
  bool HeldAnswer(Fn&& fn) noexcept;

  internal::Rail& rail_;
  drivers::RemoteMemory& ops_;
};

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_REMOTE_MEMORY_H_
