// FailureMailbox: peer failures posted by one thread (the launcher client's
// reader, a PMIx event handler) and taken by Bootstrap::PollFailures, which
// a progress task calls on every pass: taking is an atomic comparison when
// nothing new was posted, a lock only when something was.
//
// Thread-safety: Post, Take and posted() from any thread.
#ifndef RONDO_DRIVERS_BOOTSTRAP_INTERNAL_FAILURE_MAILBOX_H_
#define RONDO_DRIVERS_BOOTSTRAP_INTERNAL_FAILURE_MAILBOX_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"

namespace rondo::drivers::bootstrap::internal {

class FailureMailbox {
 public:
  void Post(PeerFailure failure) {
    std::lock_guard lock(mutex_);
    failures_.push_back(std::move(failure));
    posted_.fetch_add(1, std::memory_order_release);
  }

  // What was posted since the last Take (empty: nothing new).
  std::vector<PeerFailure> Take() {
    if (posted_.load(std::memory_order_acquire) ==
        taken_.load(std::memory_order_relaxed))
      return {};
    std::lock_guard lock(mutex_);
    std::vector<PeerFailure> out;
    out.swap(failures_);
    taken_.store(posted_.load(std::memory_order_relaxed),
                 std::memory_order_relaxed);
    return out;
  }

  // How many failures were ever posted.
  uint64_t posted() const { return posted_.load(std::memory_order_acquire); }

 private:
  std::mutex mutex_;                   // guards failures_
  std::vector<PeerFailure> failures_;  // not yet taken
  // Equal: nothing new, checked without the mutex.
  std::atomic<uint64_t> posted_{0};
  std::atomic<uint64_t> taken_{0};
};

}  // namespace rondo::drivers::bootstrap::internal

#endif  // RONDO_DRIVERS_BOOTSTRAP_INTERNAL_FAILURE_MAILBOX_H_
