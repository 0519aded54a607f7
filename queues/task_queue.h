// TaskQueue: the queue that sits at every node of the engine's queue tree.
//
// A multi-producer multi-consumer FIFO of intrusive items (QueueHook). Two
// implementations are chosen at engine start (RONDO_QUEUE=spin|lockfree):
//   - SpinQueue: the PIOMan paper's queue, an intrusive list behind a
//     test-and-test-and-set spinlock, whose emptiness is checked without the
//     lock before locking (Algorithm 2). Never allocates.
//   - LockFreeQueue: boost::lockfree::queue of item pointers, with nodes
//     preallocated (it allocates only past that capacity).
// bench/engine/task_latency measures both; see docs/architecture.md for which
// wins.
//
// The poller contract: MaybeNonEmpty() is a cheap check with no side effect
// (no lock, no write), so an empty queue costs one load to a poller.
//
// Thread-safety: every method may be called from any thread concurrently.
#ifndef RONDO_QUEUES_TASK_QUEUE_H_
#define RONDO_QUEUES_TASK_QUEUE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "queues/queue_hook.h"

namespace rondo::queues {

enum class QueueKind { kSpin, kLockFree };

// "spin" / "lockfree".
std::string_view QueueKindName(QueueKind kind);
// Parses "spin" or "lockfree"; throws std::invalid_argument otherwise.
QueueKind ParseQueueKind(std::string_view text);

class TaskQueue {
 public:
  virtual ~TaskQueue() = default;

  // Appends `item` (not in any queue). Never fails.
  virtual void Push(QueueHook* item) noexcept = 0;
  // Removes and returns the oldest item, or nullptr when empty.
  virtual QueueHook* TryPop() noexcept = 0;
  // False only if the queue was empty at some instant during the call; may
  // return true for a queue that is being emptied. No lock, no write.
  virtual bool MaybeNonEmpty() const noexcept = 0;
  // Approximate number of queued items (exact when quiescent).
  virtual int64_t ApproxSize() const noexcept = 0;
  virtual QueueKind kind() const noexcept = 0;
};

// A new empty queue of the given kind. `capacity_hint` sizes the
// preallocation of queues that preallocate (LockFreeQueue).
std::unique_ptr<TaskQueue> MakeTaskQueue(QueueKind kind,
                                         int capacity_hint = 1024);

}  // namespace rondo::queues

#endif  // RONDO_QUEUES_TASK_QUEUE_H_
