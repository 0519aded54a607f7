// Pool<T>: a free list of T for the message path (UCX's ucs_mpool is the
// model): objects are carved from chunks of kChunk, handed out and taken
// back with no allocation once the pool has grown to the steady state's
// peak, and freed only with the pool.
//
// Get() value-initializes the object (T{}); Put() destroys it. A spin lock
// guards the list: gets and puts are a few instructions each and come from
// any thread (a receive is posted by the application and completed by
// whichever thread polls the rail).
#ifndef RONDO_NMAD_POOL_H_
#define RONDO_NMAD_POOL_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "queues/spin_lock.h"

namespace rondo::nmad {

template <typename T>
class Pool {
  union Slot;  // a free object's storage (below)

 public:
  static constexpr size_t kChunk = 64;

  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() = default;  // objects still out are the owner's bug: not destroyed

  // A value-initialized T (std::bad_alloc when the pool cannot grow).
  T* Get() {
    Slot* s;
    {
      std::lock_guard<queues::SpinLock> lock(mu_);
      if (free_ == nullptr) Grow();
      s = free_;
      free_ = s->next;
      ++out_;
    }
    return new (s->storage) T{};
  }
  // Carves the first chunk now, if none is: the first Gets then allocate
  // nothing (a pool first used on a fast path, e.g. the first unexpected
  // message, long after start-up).
  void Reserve() {
    std::lock_guard<queues::SpinLock> lock(mu_);
    if (free_ == nullptr && chunks_.empty()) Grow();
  }
  // Gives `p` (from Get of this pool) back; null is ignored.
  void Put(T* p) noexcept {
    if (p == nullptr) return;
    p->~T();
    Slot* s = reinterpret_cast<Slot*>(p);
    std::lock_guard<queues::SpinLock> lock(mu_);
    s->next = free_;
    free_ = s;
    --out_;
  }
  // A free list of the caller's in front of the pool, guarded by a lock of
  // the caller's that is held anyway where its objects come and go (a
  // session's lock: receives are posted and matched under it). Its gets and
  // puts take no lock of the pool's: two locked instructions less per
  // message (docs/performance.md). It keeps at most kMax free objects and
  // gives the rest back to the pool; objects it holds count as out() of the
  // pool (their memory is the pool's and goes with it).
  class Cache {
   public:
    static constexpr size_t kMax = 256;
    // A value-initialized T, from the cache or else the pool.
    T* Get(Pool& pool) {
      Slot* s = free_;
      if (s == nullptr) return pool.Get();
      free_ = s->next;
      --size_;
      return new (s->storage) T{};
    }
    // Gives `p` (from `pool`, through a cache or not) back; null is ignored.
    void Put(Pool& pool, T* p) noexcept {
      if (p == nullptr) return;
      if (size_ >= kMax) {
        pool.Put(p);
        return;
      }
      p->~T();
      Slot* s = reinterpret_cast<Slot*>(p);
      s->next = free_;
      free_ = s;
      ++size_;
    }
    size_t size() const noexcept { return size_; }

   private:
    Slot* free_ = nullptr;
    size_t size_ = 0;
  };

  // Objects handed out and not yet given back; objects carved so far.
  size_t out() const noexcept { return out_; }
  size_t capacity() const noexcept { return chunks_.size() * kChunk; }

 private:
  union Slot {
    Slot* next;
    alignas(T) unsigned char storage[sizeof(T)];
  };
  void Grow() {
    chunks_.push_back(std::make_unique<Slot[]>(kChunk));
    Slot* c = chunks_.back().get();
    for (size_t i = 0; i < kChunk; ++i) {
      c[i].next = free_;
      free_ = &c[i];
    }
  }

  queues::SpinLock mu_;
  Slot* free_ = nullptr;
  size_t out_ = 0;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
};

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_POOL_H_
