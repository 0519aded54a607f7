// SpinLock: a test-and-test-and-set lock (PIOMan protects its queues with
// spinlocks because critical sections are shorter than a context switch).
//
// Waiters spin on a plain load, so the line stays shared in their caches
// until the holder releases it; only then do they try the exchange.
// Satisfies BasicLockable (usable with std::lock_guard). Any thread.
#ifndef RONDO_QUEUES_SPIN_LOCK_H_
#define RONDO_QUEUES_SPIN_LOCK_H_

#include <atomic>

#include "queues/cpu_relax.h"

namespace rondo::queues {

class SpinLock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) CpuRelax();
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace rondo::queues

#endif  // RONDO_QUEUES_SPIN_LOCK_H_
