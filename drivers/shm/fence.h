// The asymmetric Dekker handshake of the shared-memory doorbell.
//
// A sender publishes a frame and then reads the receiver's doorbell (every
// message); a receiver about to sleep sets its doorbell and then looks for
// frames (rarely). Each side must see the other's store, so each needs a
// store-load barrier between its two steps. A full fence on the sender
// costs every message its wait for the frame's cache line (an mfence per
// MPI_Isend: about a tenth of the message rate, docs/performance.md).
//
// membarrier(2) moves that cost to the sleeper: the sender orders its two
// steps for the compiler only, and the sleeper calls HeavyBarrier(), which
// makes every running thread of every registered process pass a full
// barrier before it returns (a thread not running is past one already: its
// context switch). Either the sender's frame store precedes that barrier
// and the sleeper's look afterwards sees it, or the sender's doorbell load
// follows it and sees the doorbell set. userspace RCU's membarrier flavour
// and folly's asymmetric fences rest on the same argument.
//
// A process uses the light side only once RegisterHeavyBarrier() succeeded
// (the kernel has MEMBARRIER_CMD_GLOBAL_EXPEDITED, Linux >= 4.16, and no
// seccomp filter refuses it); a rank that could not register fences on
// every send as before. ShmDriver publishes which side each rank takes in
// its segment slot (RankSlot::light_fence).
#ifndef RONDO_DRIVERS_SHM_FENCE_H_
#define RONDO_DRIVERS_SHM_FENCE_H_

namespace rondo::drivers::shm {

// Registers this process for the heavy barrier (idempotent, thread-safe,
// and again in a child after fork); true when the kernel accepted it.
// After true, this process's threads are ordered by other processes'
// HeavyBarrier() calls.
bool RegisterHeavyBarrier() noexcept;

// A full barrier on every running thread of every registered process,
// this one's included; false when the call failed (then nothing is
// ordered: the caller must not rely on it, e.g. must not sleep).
bool HeavyBarrier() noexcept;

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_FENCE_H_
