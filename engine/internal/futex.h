// Thin wrappers over the Linux futex system call, used for the two places
// where a thread must sleep without losing a wake-up: an idle worker waiting
// for a submit, and a thread waiting for a task to complete.
#ifndef RONDO_ENGINE_INTERNAL_FUTEX_H_
#define RONDO_ENGINE_INTERNAL_FUTEX_H_

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace rondo::engine::internal {

// Sleeps while *word == expected, at most `timeout_ns` (< 0: no limit).
// Returns on wake-up, timeout, signal, or if *word != expected on entry.
inline void FutexWait(std::atomic<uint32_t>* word, uint32_t expected,
                      int64_t timeout_ns) noexcept {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  timespec ts;
  timespec* tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = timeout_ns / 1000000000;
    ts.tv_nsec = timeout_ns % 1000000000;
    tsp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE,
          expected, tsp, nullptr, 0);
}

// Wakes up to `count` threads sleeping in FutexWait on `word`.
inline void FutexWake(std::atomic<uint32_t>* word, int count) noexcept {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE,
          count, nullptr, nullptr, 0);
}

}  // namespace rondo::engine::internal

#endif  // RONDO_ENGINE_INTERNAL_FUTEX_H_
