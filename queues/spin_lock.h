// SpinLock: a test-and-test-and-set lock (PIOMan protects its queues with
// spinlocks because critical sections are shorter than a context switch).
//
// Waiters spin on a plain load, so the line stays shared in their caches
// until the holder releases it; only then do they try the exchange. A
// waiter that has spun long yields its core between looks.
// Satisfies BasicLockable (usable with std::lock_guard). Any thread.
#ifndef RONDO_QUEUES_SPIN_LOCK_H_
#define RONDO_QUEUES_SPIN_LOCK_H_

#include <sched.h>

#include <atomic>

#include "queues/cpu_relax.h"

namespace rondo::queues {

class SpinLock {
 public:
  // The uncontended case inline (one exchange); the spinning out of line,
  // so that callers on the message path inline the fast case.
  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]]
      return;
    LockSlow();
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  // Spins on a plain load; after kSpinsBeforeYield turns, yields the core
  // between looks: with more threads than cores, the holder may be the
  // thread this one is keeping off the core.
  static constexpr int kSpinsBeforeYield = 1024;
  [[gnu::noinline]] void LockSlow() noexcept {
    int spins = 0;
    for (;;) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < kSpinsBeforeYield) {
          CpuRelax();
        } else {
          sched_yield();
        }
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }

  std::atomic<bool> locked_{false};
};

}  // namespace rondo::queues

#endif  // RONDO_QUEUES_SPIN_LOCK_H_
