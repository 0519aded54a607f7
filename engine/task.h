// Task: a light task in the PIOMan sense: a function, its argument, the
// cores allowed to run it, and options (one-shot, or repeat until the
// function reports completion, as polling tasks do).
//
// Tasks are never allocated by the engine: callers embed a Task in their own
// structures (NewMadeleine embeds them in packet wrappers), initialise it
// once, and may submit it again once it has completed. The caller keeps the
// Task alive and does not move it until it is completed or canceled.
//
// The poller contract: the function returns kIdle when it found nothing to
// do, kProgress when it did work but is not finished, kDone when finished.
// A one-shot task is complete after one run whatever it returns. The function
// must not throw (it is called on progress paths that are noexcept) and may
// run on any core of its cpuset, on a progress thread, a timer thread, inside
// Wait/Poll, or inside a task runtime's idle hook.
//
// Thread-safety: state(), done(), last_core() may be read from any thread.
// The setters may only be used while the task is not queued or running.
#ifndef RONDO_ENGINE_TASK_H_
#define RONDO_ENGINE_TASK_H_

#include <atomic>
#include <cstdint>

#include "queues/queue_hook.h"
#include "topology/cpuset.h"

namespace rondo::engine {

using topology::CpuSet;

enum class TaskResult : int { kIdle = 0, kProgress = 1, kDone = 2 };

// The task function. `arg` is the pointer given at initialisation.
using TaskFunction = TaskResult (*)(void* arg) noexcept;

enum class TaskState : uint32_t {
  kIdle = 0,      // initialised or never submitted
  kQueued = 1,    // in a queue, or its function is running
  kDone = 2,      // completed
  kCanceled = 3,  // removed by engine shutdown before it completed
};

struct TaskOptions {
  // Run again (in the same queue) until the function returns kDone.
  bool repeat = false;
  // Shown in traces; must outlive the task (a string literal).
  const char* name = "task";
  // Shown in traces as "id" when >= 0 (e.g. a collective's step index).
  int64_t trace_id = -1;
};

class Engine;
class QueueTree;

class Task : public queues::QueueHook {
 public:
  Task() = default;
  Task(TaskFunction fn, void* arg, const CpuSet& cpuset,
       TaskOptions options = {})
      : fn_(fn), arg_(arg), cpuset_(cpuset), options_(options) {}
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  // Re-initialises an idle, done or canceled task.
  void Init(TaskFunction fn, void* arg, const CpuSet& cpuset,
            TaskOptions options = {}) {
    fn_ = fn;
    arg_ = arg;
    cpuset_ = cpuset;
    options_ = options;
  }
  void set_cpuset(const CpuSet& cpuset) { cpuset_ = cpuset; }

  const CpuSet& cpuset() const { return cpuset_; }
  const TaskOptions& options() const { return options_; }
  TaskState state() const {
    return static_cast<TaskState>(state_.load(std::memory_order_acquire) &
                                  kStateMask);
  }
  // Completed or canceled: the engine no longer touches the task.
  bool finished() const {
    TaskState s = state();
    return s == TaskState::kDone || s == TaskState::kCanceled;
  }
  bool done() const { return state() == TaskState::kDone; }
  // Core that ran the function last (-1 before the first run).
  int last_core() const { return last_core_.load(std::memory_order_relaxed); }
  // Node of the queue tree it was last queued in (-1 before submit).
  int queue_node() const { return queue_node_; }
  // Number of times the function ran since the last submit.
  uint64_t runs() const { return runs_.load(std::memory_order_relaxed); }

 private:
  friend class Engine;
  friend class QueueTree;

  // state_ holds a TaskState in the low bits and kWaiterBit when a thread
  // sleeps on the word waiting for completion.
  static constexpr uint32_t kStateMask = 0xff;
  static constexpr uint32_t kWaiterBit = 0x100;

  TaskFunction fn_ = nullptr;
  void* arg_ = nullptr;
  std::atomic<uint32_t> state_{0};
  int queue_node_ = -1;               // written by the submitter / runner
  std::atomic<int> last_core_{-1};
  std::atomic<uint64_t> runs_{0};
  int64_t submit_ns_ = 0;             // for traces only
  CpuSet cpuset_;
  TaskOptions options_;
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_TASK_H_
