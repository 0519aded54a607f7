// SpinQueue: PIOMan's task queue (Trahay & Denis, Cluster 2009, Algorithm 2):
// an intrusive singly-linked FIFO behind a test-and-test-and-set spinlock.
// TryPop() first checks emptiness without the lock, so idle pollers of an
// empty queue never touch the lock's cache line with a write.
// Thread-safety: any thread, concurrently.
#ifndef RONDO_QUEUES_SPIN_QUEUE_H_
#define RONDO_QUEUES_SPIN_QUEUE_H_

#include <atomic>
#include <cstdint>

#include "queues/cpu_relax.h"
#include "queues/spin_lock.h"
#include "queues/task_queue.h"

namespace rondo::queues {

class alignas(kCacheLine) SpinQueue final : public TaskQueue {
 public:
  SpinQueue() = default;
  SpinQueue(const SpinQueue&) = delete;
  SpinQueue& operator=(const SpinQueue&) = delete;

  void Push(QueueHook* item) noexcept override {
    item->queue_next = nullptr;
    lock_.lock();
    if (tail_ == nullptr) {
      head_ = item;
    } else {
      tail_->queue_next = item;
    }
    tail_ = item;
    size_.store(size_.load(std::memory_order_relaxed) + 1,
                std::memory_order_release);
    lock_.unlock();
  }

  QueueHook* TryPop() noexcept override {
    if (!MaybeNonEmpty()) return nullptr;  // Algorithm 2: test before lock
    lock_.lock();
    QueueHook* item = head_;
    if (item != nullptr) {  // ... and test again under the lock
      // The popper runs the item and writes its completion next: ask for
      // its line for writing now, and do not read it under the lock when
      // it is the last item (its queue_next is null since Push): a
      // hand-off between cores then moves the item's line once, outside
      // the critical section (bench/engine/task_latency core:1).
      __builtin_prefetch(item, 1, 3);
      if (item == tail_) {
        head_ = nullptr;
        tail_ = nullptr;
      } else {
        head_ = item->queue_next;
        item->queue_next = nullptr;
      }
      size_.store(size_.load(std::memory_order_relaxed) - 1,
                  std::memory_order_relaxed);
    }
    lock_.unlock();
    return item;
  }

  bool MaybeNonEmpty() const noexcept override {
    return size_.load(std::memory_order_acquire) != 0;
  }
  int64_t ApproxSize() const noexcept override {
    return size_.load(std::memory_order_relaxed);
  }
  QueueKind kind() const noexcept override { return QueueKind::kSpin; }

 private:
  SpinLock lock_;
  std::atomic<int64_t> size_{0};  // written under lock_, read without it
  QueueHook* head_ = nullptr;     // guarded by lock_
  QueueHook* tail_ = nullptr;     // guarded by lock_
};

}  // namespace rondo::queues

#endif  // RONDO_QUEUES_SPIN_QUEUE_H_
