#include "engine/queue_tree.h"

#include "engine/internal/futex.h"
#include "engine/tracer.h"
#include "topology/check.h"

namespace rondo::engine {

QueueTree::QueueTree(std::shared_ptr<const topology::Topology> topo,
                     queues::QueueKind kind, int capacity_hint)
    : topo_(std::move(topo)), kind_(kind) {
  const auto& nodes = topo_->Nodes();
  queues_.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    queues_.push_back(queues::MakeTaskQueue(kind, capacity_hint));
  paths_.resize(topo_->NumCores());
  for (int core = 0; core < topo_->NumCores(); ++core) {
    for (int n = topo_->CoreNode(core); n >= 0; n = nodes[n].parent)
      paths_[core].push_back(n);
  }
}

void QueueTree::Finish(Task& task, TaskState final_state) noexcept {
  uint32_t old = task.state_.exchange(static_cast<uint32_t>(final_state),
                                      std::memory_order_acq_rel);
  if (old & Task::kWaiterBit) internal::FutexWake(&task.state_, INT32_MAX);
}

template <typename Q>
void QueueTree::Run(Task& task, int node, int core, int& worked) noexcept {
  // The state stays kQueued while the task runs (a resubmission is refused
  // all the same), which saves two atomic read-modify-writes per run.
  int64_t start_ns = tracer_ != nullptr ? Tracer::NowNs() : 0;
  TaskResult result = task.fn_(task.arg_);
  task.last_core_.store(core, std::memory_order_relaxed);
  task.runs_.store(task.runs_.load(std::memory_order_relaxed) + 1,
                   std::memory_order_relaxed);
  if (tracer_ != nullptr) [[unlikely]] {
    // Idle runs of repeat tasks (a poll that found nothing) are only
    // counted: they would flood the trace.
    if (result == TaskResult::kIdle)
      tracer_->CountIdleRun();
    else
      tracer_->RecordRun(task, node, core, start_ns, Tracer::NowNs(), result);
  }
  if (!task.options_.repeat || result == TaskResult::kDone) {
    ++worked;
    Finish(task, TaskState::kDone);
    return;
  }
  if (result != TaskResult::kIdle) ++worked;
  AuditWrite(node, "queue push (repeat)");
  static_cast<Q&>(*queues_[node]).Q::Push(&task);
}

template <typename Q>
int QueueTree::ScheduleFromImpl(int core) noexcept {
  RONDO_DCHECK(core >= 0 && core < topo_->NumCores(), "core out of range");
  int worked = 0;
  for (int node : paths_[core]) {
    Q& q = static_cast<Q&>(*queues_[node]);
    if (!q.Q::MaybeNonEmpty()) continue;
    // Bound the pass by what was queued on entry, so that a repeat task that
    // goes back to this queue is not run again in the same pass.
    int64_t budget = q.Q::ApproxSize();
    if (budget < 1) budget = 1;
    while (budget-- > 0) {
      AuditWrite(node, "queue pop");  // TryPop takes the lock
      queues::QueueHook* hook = q.Q::TryPop();
      if (hook == nullptr) break;
      Run<Q>(*static_cast<Task*>(hook), node, core, worked);
    }
  }
  return worked;
}

template int QueueTree::ScheduleFromImpl<queues::SpinQueue>(int) noexcept;
template int QueueTree::ScheduleFromImpl<queues::LockFreeQueue>(int) noexcept;

int QueueTree::CancelAll() noexcept {
  int canceled = 0;
  for (auto& q : queues_) {
    while (queues::QueueHook* hook = q->TryPop()) {
      Finish(*static_cast<Task*>(hook), TaskState::kCanceled);
      ++canceled;
    }
  }
  return canceled;
}

}  // namespace rondo::engine
