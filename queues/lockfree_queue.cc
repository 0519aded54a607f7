#include "queues/lockfree_queue.h"

#include "topology/check.h"

namespace rondo::queues {

void LockFreeQueue::Push(QueueHook* item) noexcept {
  // push() takes a node from the preallocated free-list and allocates only
  // when it is exhausted; it fails only if that allocation fails.
  bool pushed = queue_.push(item);
  RONDO_CHECK(pushed, "boost::lockfree::queue could not allocate a node");
  size_.fetch_add(1, std::memory_order_release);
}

QueueHook* LockFreeQueue::TryPop() noexcept {
  if (!MaybeNonEmpty()) return nullptr;
  QueueHook* item = nullptr;
  if (!queue_.pop(item)) return nullptr;
  size_.fetch_sub(1, std::memory_order_relaxed);
  return item;
}

}  // namespace rondo::queues
