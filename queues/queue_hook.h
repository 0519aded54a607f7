// QueueHook: the intrusive link that an item embeds to sit in a TaskQueue.
//
// Queues never allocate per item: the caller owns the item (the engine's Task
// derives from QueueHook, and tasks are embedded in the caller's structures,
// as NewMadeleine embeds them in packet wrappers). An item is in at most one
// queue at a time; the queue owns `next` while the item is queued.
#ifndef RONDO_QUEUES_QUEUE_HOOK_H_
#define RONDO_QUEUES_QUEUE_HOOK_H_

namespace rondo::queues {

struct QueueHook {
  QueueHook* queue_next = nullptr;
};

}  // namespace rondo::queues

#endif  // RONDO_QUEUES_QUEUE_HOOK_H_
