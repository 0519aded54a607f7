// QueueTree: one task queue per node of the machine's topology (per-core,
// per shared cache, per NUMA node, per package, global), as in PIOMan.
//
// The queue a task goes to expresses where it may run: Submit() puts it in
// the queue of the deepest node whose cpuset contains the task's cpuset, and
// ScheduleFrom(core) (the paper's Algorithm 1) runs the core's own queue, then
// each ancestor's up to the global queue, so a task only ever runs on a core
// of its cpuset, and locality is kept because cores mostly touch the queues
// of their own subtree. Repeat tasks go back to the queue they came from.
//
// Thread-safety: Push/ScheduleFrom may be called from any thread at once.
// ScheduleFrom(core) must be called by a thread that runs on `core` (or acts
// for it: an embedding runtime's worker, a synthetic topology's thread).
#ifndef RONDO_ENGINE_QUEUE_TREE_H_
#define RONDO_ENGINE_QUEUE_TREE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/owned_atomic.h"
#include "engine/task.h"
#include "queues/lockfree_queue.h"
#include "queues/spin_queue.h"
#include "queues/task_queue.h"
#include "topology/topology.h"

namespace rondo::engine {

class Tracer;

class QueueTree {
 public:
  QueueTree(std::shared_ptr<const topology::Topology> topo,
            queues::QueueKind kind, int capacity_hint);

  const topology::Topology& topology() const { return *topo_; }
  int NumNodes() const { return static_cast<int>(queues_.size()); }
  queues::TaskQueue& queue(int node) { return *queues_[node]; }

  // The queue node for a cpuset: deepest node containing it; -1 when the
  // cpuset is empty or names cores the machine does not have.
  int NodeFor(const CpuSet& cpuset) const {
    int first = cpuset.First();
    if (first >= 0 && first < topo_->NumCores() && cpuset.Count() == 1)
      return topo_->CoreNode(first);  // the common case: one core
    return topo_->DeepestContaining(cpuset);
  }

  // Queues `task` (state already set to kQueued) in node `node`. Writes
  // only the task and node `node`'s queue: no engine-wide state (see
  // engine/owned_atomic.h).
  void Push(Task& task, int node) noexcept {
    task.queue_node_ = node;
    AuditWrite(node, "queue push");
    queues_[node]->Push(&task);
  }

  // Tasks queued now in the queues on `core`'s path (a task being run is
  // not counted). Reads each queue's size, writes nothing: a waiter asks it
  // to know whether tasks other than its own are waiting on its path.
  // Approximate under concurrency.
  int64_t PathQueued(int core) const noexcept {
    int64_t n = 0;
    for (int node : paths_[core]) n += queues_[node]->ApproxSize();
    return n;
  }

  // Algorithm 1 from `core`: for each queue from the core's to the global
  // one, run the tasks that were in it on entry (a repeat task goes back to
  // its queue and is not run twice in one pass). Returns how many task runs
  // did work (result kProgress or kDone, or any one-shot run).
  int ScheduleFrom(int core) noexcept {
    return kind_ == queues::QueueKind::kSpin
               ? ScheduleFromImpl<queues::SpinQueue>(core)
               : ScheduleFromImpl<queues::LockFreeQueue>(core);
  }

  // Side-effect-free check: may any queue on `core`'s path hold a task?
  bool PathMaybeNonEmpty(int core) const noexcept {
    return kind_ == queues::QueueKind::kSpin
               ? PathMaybeNonEmptyImpl<queues::SpinQueue>(core)
               : PathMaybeNonEmptyImpl<queues::LockFreeQueue>(core);
  }
  // The node indices from `core`'s leaf up to the root.
  const std::vector<int>& PathOf(int core) const { return paths_[core]; }

  // Removes every queued task and marks it canceled (engine shutdown).
  // Returns how many were canceled.
  int CancelAll() noexcept;

  void set_tracer(Tracer* tracer) { tracer_ = tracer; }

  // Marks `task` finished with `final_state` and wakes a thread sleeping on
  // it in Engine::Wait.
  void Finish(Task& task, TaskState final_state) noexcept;

 private:
  // The hot paths are instantiated per queue class (both are final), so
  // queue calls are direct and inlined instead of virtual: one branch on the
  // kind per pass instead of an indirect call per queue operation.
  template <typename Q>
  int ScheduleFromImpl(int core) noexcept;
  template <typename Q>
  bool PathMaybeNonEmptyImpl(int core) const noexcept {
    for (int node : paths_[core])
      if (static_cast<const Q&>(*queues_[node]).Q::MaybeNonEmpty()) return true;
    return false;
  }
  template <typename Q>
  void Run(Task& task, int node, int core, int& worked) noexcept;

  std::shared_ptr<const topology::Topology> topo_;
  queues::QueueKind kind_;
  std::vector<std::unique_ptr<queues::TaskQueue>> queues_;  // per node
  std::vector<std::vector<int>> paths_;                      // per core
  Tracer* tracer_ = nullptr;
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_QUEUE_TREE_H_
