#include "queues/task_queue.h"

#include <stdexcept>
#include <string>

#include "queues/lockfree_queue.h"
#include "queues/spin_queue.h"

namespace rondo::queues {

std::string_view QueueKindName(QueueKind kind) {
  switch (kind) {
    case QueueKind::kSpin:
      return "spin";
    case QueueKind::kLockFree:
      return "lockfree";
  }
  return "?";
}

QueueKind ParseQueueKind(std::string_view text) {
  if (text == "spin") return QueueKind::kSpin;
  if (text == "lockfree") return QueueKind::kLockFree;
  throw std::invalid_argument("invalid queue kind '" + std::string(text) +
                              "': expected spin|lockfree");
}

std::unique_ptr<TaskQueue> MakeTaskQueue(QueueKind kind, int capacity_hint) {
  switch (kind) {
    case QueueKind::kSpin:
      return std::make_unique<SpinQueue>();
    case QueueKind::kLockFree:
      return std::make_unique<LockFreeQueue>(capacity_hint > 0 ? capacity_hint
                                                               : 1);
  }
  throw std::invalid_argument("unknown queue kind");
}

}  // namespace rondo::queues
