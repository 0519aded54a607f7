// LockFreeQueue: a TaskQueue on boost::lockfree::queue (Michael-Scott queue
// with a node free-list). Items are stored by pointer; the node pool is
// preallocated with `capacity` nodes and grows (allocating) only when more
// items than that are queued at once.
// An atomic counter beside it gives the lock-free emptiness hint.
// Thread-safety: any thread, concurrently.
#ifndef RONDO_QUEUES_LOCKFREE_QUEUE_H_
#define RONDO_QUEUES_LOCKFREE_QUEUE_H_

#include <atomic>
#include <boost/lockfree/queue.hpp>
#include <cstdint>

#include "queues/cpu_relax.h"
#include "queues/task_queue.h"

namespace rondo::queues {

class LockFreeQueue final : public TaskQueue {
 public:
  explicit LockFreeQueue(int capacity) : queue_(capacity) {}
  LockFreeQueue(const LockFreeQueue&) = delete;
  LockFreeQueue& operator=(const LockFreeQueue&) = delete;

  void Push(QueueHook* item) noexcept override;
  QueueHook* TryPop() noexcept override;
  bool MaybeNonEmpty() const noexcept override {
    return size_.load(std::memory_order_acquire) > 0;
  }
  int64_t ApproxSize() const noexcept override {
    int64_t n = size_.load(std::memory_order_relaxed);
    return n < 0 ? 0 : n;
  }
  QueueKind kind() const noexcept override { return QueueKind::kLockFree; }

 private:
  boost::lockfree::queue<QueueHook*> queue_;
  // Incremented after a push, decremented after a pop: may be transiently
  // negative, never positive while the queue is truly empty and quiescent.
  alignas(kCacheLine) std::atomic<int64_t> size_{0};
};

}  // namespace rondo::queues

#endif  // RONDO_QUEUES_LOCKFREE_QUEUE_H_
