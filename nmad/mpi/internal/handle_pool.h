// HandlePool: pooled objects behind int handles (MadMPI's MPI_Request).
//
// Why: a request lives for a few microseconds; allocating it (make_shared)
// and registering it in a locked hash map cost several mallocs and lock
// round trips per message. As UCX's ucs_mpool does, objects here are carved
// from chunks that never move and are never freed before the pool is; free
// objects sit on a lock-free LIFO (a Treiber stack whose head carries an ABA
// tag), so a steady state of Acquire/Release allocates nothing and takes no
// lock: one compare-and-swap to take a slot, one to give it back.
//
// Handles: bits 0..19 are the slot index, bits 20..30 the slot's generation
// (1..2047), bit 31 is zero: handles are positive and 0 (MPI_REQUEST_NULL)
// is never one. Releasing a handle bumps its slot's generation, so an old
// copy of it no longer matches (until the slot has been reused 2047 times);
// a garbage value (negative, generation 0, a chunk that does not exist, a
// slot not in use) is rejected by Get() without touching memory that is not
// the pool's. Lookups take no lock: the chunk pointer and the slot's state
// word, both loaded with acquire.
//
// An object is either the slot's own (Acquire: reset by T::Reset() when the
// slot is recycled) or adopted from the caller (Adopt: a shared_ptr the
// slot holds until it is recycled).
//
// Thread-safety: every member may be called from any thread concurrently,
// except ForEachLive and the destructor (no concurrent Acquire/Release),
// and except while set_concurrent(false) holds: then the caller makes the
// calls one at a time (MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED: the
// application's threads take turns, and only they use the pool), and the
// free list and the slots' states are updated with plain loads and stores
// instead of compare-and-swaps, as Open MPI's free lists are when
// opal_using_threads() is false. Three locked instructions fewer per
// received message (MPI_Irecv's Acquire, MPI_Wait's Invalidate and Push).
// The object behind a handle belongs to whoever holds the handle; using one
// handle from two threads at once (waiting on it in one, freeing it in
// another) is erroneous in MPI and is not defended against beyond memory
// safety (slots stay where they are until the pool dies).
#ifndef RONDO_NMAD_MPI_INTERNAL_HANDLE_POOL_H_
#define RONDO_NMAD_MPI_INTERNAL_HANDLE_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace rondo::nmad::mpi {

template <typename T>
class HandlePool {
 public:
  static constexpr int kIndexBits = 20;
  static constexpr uint32_t kIndexMask = (1u << kIndexBits) - 1;
  static constexpr uint32_t kGenMax = (1u << 11) - 1;  // generations 1..2047
  static constexpr int kChunkBits = 8;
  static constexpr uint32_t kChunkSlots = 1u << kChunkBits;
  static constexpr uint32_t kMaxSlots = 1u << kIndexBits;
  static constexpr uint32_t kMaxChunks = kMaxSlots / kChunkSlots;
  static constexpr uint32_t kNoSlot = 0xffffffffu;

  // At most `max_slots` objects in use at once (rounded up to whole chunks
  // of 256, at most 2^20). Allocates nothing until the first Acquire.
  explicit HandlePool(uint32_t max_slots = kMaxSlots)
      : max_chunks_(max_slots >= kMaxSlots
                        ? kMaxChunks
                        : (max_slots + kChunkSlots - 1) / kChunkSlots) {}
  ~HandlePool() {
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;

  // Whether calls may come from several threads at once (the default).
  // Changed only while no other thread uses the pool; read on every call
  // (relaxed: a plain load), so that a thread asking while others use the
  // pool concurrently reads it without a race.
  void set_concurrent(bool concurrent) noexcept {
    concurrent_.store(concurrent, std::memory_order_relaxed);
  }
  bool concurrent() const noexcept {
    return concurrent_.load(std::memory_order_relaxed);
  }

  // A free object of the pool (in its reset state) in *obj and its handle;
  // 0 (and *obj untouched) when max_slots objects are in use.
  int Acquire(T** obj) {
    const uint32_t i = Pop();
    if (i == kNoSlot) return 0;
    Slot& s = SlotAt(i);
    *obj = s.obj;
    return Publish(s, i);
  }
  // Registers an object owned by the caller (the slot keeps `obj` alive
  // until it is recycled); 0 when max_slots objects are in use.
  int Adopt(std::shared_ptr<T> obj) {
    const uint32_t i = Pop();
    if (i == kNoSlot) return 0;
    Slot& s = SlotAt(i);
    s.obj = obj.get();
    s.external = std::move(obj);
    return Publish(s, i);
  }

  // The object behind a live handle, or null for any other value.
  T* Get(int handle) const noexcept {
    const Slot* s = Find(handle);
    if (s == nullptr) return nullptr;
    if (s->state.load(std::memory_order_acquire) != LiveState(handle))
      return nullptr;
    return s->obj;
  }

  // Ends `handle` (Get fails for it from now on) and returns its slot, whose
  // object stays as it is, unused by the pool, until Recycle(slot): a
  // request freed before it completed lives on that way. kNoSlot when the
  // handle is not live (then nothing changes). Of two threads releasing the
  // same handle, one gets the slot.
  uint32_t Invalidate(int handle) noexcept {
    Slot* s = const_cast<Slot*>(Find(handle));
    if (s == nullptr) return kNoSlot;
    uint32_t expected = LiveState(handle);
    const uint32_t gen = expected >> 1;
    const uint32_t next_gen = gen == kGenMax ? 1 : gen + 1;
    if (!concurrent()) {
      if (s->state.load(std::memory_order_relaxed) != expected) return kNoSlot;
      s->state.store(next_gen << 1, std::memory_order_relaxed);
      return static_cast<uint32_t>(handle) & kIndexMask;
    }
    // acq_rel: the winner sees the holder's writes to the object, and a
    // later Get of the old handle sees the slot dead.
    if (!s->state.compare_exchange_strong(expected, next_gen << 1,
                                          std::memory_order_acq_rel,
                                          std::memory_order_relaxed))
      return kNoSlot;
    return static_cast<uint32_t>(handle) & kIndexMask;
  }
  // The object of a slot Invalidate returned (until it is recycled).
  T* At(uint32_t slot) noexcept { return SlotAt(slot).obj; }
  // Resets the slot's object (or drops the adopted one) and makes the slot
  // free. `slot` must come from Invalidate and be recycled once.
  // `reset(T&)` instead of T::Reset brings one of the pool's own objects
  // back: a reset that knows what the object was used for (an adopted one
  // is dropped either way).
  template <typename Reset>
  void Recycle(uint32_t slot, Reset&& reset) noexcept {
    Slot& s = SlotAt(slot);
    if (s.external) {
      s.external.reset();
      s.obj = &s.own;
    } else {
      reset(s.own);
    }
    Push(slot);
  }
  void Recycle(uint32_t slot) noexcept {
    Recycle(slot, [](T& o) { o.Reset(); });
  }
  // Invalidate + Recycle; false when the handle is not live (then nothing
  // is reset).
  template <typename Reset>
  bool Release(int handle, Reset&& reset) noexcept {
    const uint32_t slot = Invalidate(handle);
    if (slot == kNoSlot) return false;
    Recycle(slot, reset);
    return true;
  }
  bool Release(int handle) noexcept {
    return Release(handle, [](T& o) { o.Reset(); });
  }

  // Calls f(handle, T&) for every live handle. Not concurrently with
  // Acquire/Adopt/Release (MPI_Finalize, tests).
  template <typename F>
  void ForEachLive(F f) {
    const uint32_t n = num_chunks_.load(std::memory_order_acquire);
    for (uint32_t c = 0; c < n; ++c) {
      Slot* chunk = chunks_[c].load(std::memory_order_acquire);
      for (uint32_t k = 0; k < kChunkSlots; ++k) {
        const uint32_t st = chunk[k].state.load(std::memory_order_acquire);
        if (st & 1)
          f(static_cast<int>(((st >> 1) << kIndexBits) | (c << kChunkBits) | k),
            *chunk[k].obj);
      }
    }
  }
  // Slots created so far (chunks * 256).
  uint32_t capacity() const noexcept {
    return num_chunks_.load(std::memory_order_acquire) * kChunkSlots;
  }

 private:
  struct Slot {
    // (generation << 1) | live. Starts at generation 1, not live.
    std::atomic<uint32_t> state{1u << 1};
    // The next free slot while on the free list (read by a racing Pop
    // whose CAS then fails: atomic only to keep that read defined).
    std::atomic<uint32_t> next{kNoSlot};
    T* obj = &own;
    std::shared_ptr<T> external;
    T own;
  };

  static uint32_t LiveState(int handle) noexcept {
    return ((static_cast<uint32_t>(handle) >> kIndexBits) << 1) | 1u;
  }
  // The slot a handle names if its chunk exists (state not checked).
  const Slot* Find(int handle) const noexcept {
    if (handle <= 0 || (static_cast<uint32_t>(handle) >> kIndexBits) == 0)
      return nullptr;
    const uint32_t i = static_cast<uint32_t>(handle) & kIndexMask;
    const Slot* chunk =
        chunks_[i >> kChunkBits].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[i & (kChunkSlots - 1)];
  }
  Slot& SlotAt(uint32_t i) noexcept {
    return chunks_[i >> kChunkBits].load(std::memory_order_acquire)
        [i & (kChunkSlots - 1)];
  }
  int Publish(Slot& s, uint32_t i) noexcept {
    const uint32_t gen = s.state.load(std::memory_order_relaxed) >> 1;
    // release: a thread that gets the handle and Gets it sees the slot's
    // object as this thread left it.
    s.state.store((gen << 1) | 1u, std::memory_order_release);
    return static_cast<int>((gen << kIndexBits) | i);
  }

  // head_: (ABA tag << 32) | first free slot (kNoSlot: empty).
  static uint64_t Head(uint64_t tag, uint32_t slot) noexcept {
    return (tag << 32) | slot;
  }
  uint32_t Pop() {
    uint64_t h = head_.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t i = static_cast<uint32_t>(h);
      if (i == kNoSlot) {
        if (!Grow()) return kNoSlot;
        h = head_.load(std::memory_order_acquire);
        continue;
      }
      const uint32_t next =
          SlotAt(i).next.load(std::memory_order_relaxed);
      if (!concurrent()) {
        head_.store(Head((h >> 32) + 1, next), std::memory_order_relaxed);
        return i;
      }
      // The lock-prefixed instruction of Acquire: taking a slot from a list
      // other threads push to and pop from; the tag makes a slot popped and
      // pushed back meanwhile (ABA) fail the CAS.
      if (head_.compare_exchange_weak(h, Head((h >> 32) + 1, next),
                                      std::memory_order_acquire,
                                      std::memory_order_acquire))
        return i;
    }
  }
  void Push(uint32_t i) noexcept { PushChain(i, i); }
  // Pushes the chain first..last (linked through `next`) at once.
  void PushChain(uint32_t first, uint32_t last) noexcept {
    Slot& tail = SlotAt(last);
    uint64_t h = head_.load(std::memory_order_relaxed);
    if (!concurrent()) {
      tail.next.store(static_cast<uint32_t>(h), std::memory_order_relaxed);
      head_.store(Head((h >> 32) + 1, first), std::memory_order_relaxed);
      return;
    }
    do {
      tail.next.store(static_cast<uint32_t>(h), std::memory_order_relaxed);
      // The lock-prefixed instruction of Release (see Pop); release: the
      // next Pop of this slot sees its reset object.
    } while (!head_.compare_exchange_weak(h, Head((h >> 32) + 1, first),
                                          std::memory_order_release,
                                          std::memory_order_relaxed));
  }
  // Adds a chunk of free slots; false at max_slots. Rare, so a mutex.
  bool Grow() {
    std::lock_guard<std::mutex> lock(grow_mu_);
    if (static_cast<uint32_t>(head_.load(std::memory_order_acquire)) !=
        kNoSlot)
      return true;  // another thread grew, or slots were released
    const uint32_t n = num_chunks_.load(std::memory_order_relaxed);
    if (n >= max_chunks_) return false;
    Slot* chunk = new Slot[kChunkSlots];
    const uint32_t base = n << kChunkBits;
    for (uint32_t k = 0; k + 1 < kChunkSlots; ++k)
      chunk[k].next.store(base + k + 1, std::memory_order_relaxed);
    chunks_[n].store(chunk, std::memory_order_release);
    num_chunks_.store(n + 1, std::memory_order_release);
    PushChain(base, base + kChunkSlots - 1);
    return true;
  }

  const uint32_t max_chunks_;
  std::atomic<bool> concurrent_{true};
  alignas(64) std::atomic<uint64_t> head_{Head(0, kNoSlot)};
  alignas(64) std::atomic<uint32_t> num_chunks_{0};
  std::mutex grow_mu_;
  std::atomic<Slot*> chunks_[kMaxChunks] = {};
};

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_HANDLE_POOL_H_
