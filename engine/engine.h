// Engine: Rondo's progress engine (PIOMan-style). Communication code hands
// it light tasks with a cpuset; the engine keeps them in a queue tree that
// mirrors the machine and runs them from four triggers:
//   1. explicit polling: Wait(task) and Poll() schedule from the caller's core;
//   2. progress threads on dedicated or idle cores (EngineOptions::progress);
//   3. a timer trigger on the application's core (EngineOptions::timer_*), so
//      tasks pinned to a core whose thread computes still run;
//   4. RunOnce(core), the hook a task runtime (StarPU, TBB, OpenMP) calls from
//      its own idle loop (rondo_engine_idle_hook() in C).
//
// Life of a task: Submit() checks the task, marks it queued and pushes it to
// the queue of the deepest topology node containing its cpuset
// (queue_tree.cc), waking a sleeping progress thread that can reach that queue
// (progress_thread.cc). A trigger on a core of that subtree pops and runs it
// (QueueTree::ScheduleFrom); a one-shot task is then done, a repeat task goes
// back to its queue until its function returns kDone. Wait() polls from the
// caller's core and sleeps on the task's state word when there is nothing to
// do locally.
//
// Shutdown: Shutdown() (also run by the destructor) stops and joins the
// progress and timer threads, then cancels every task still queued (state
// kCanceled; Wait returns Status::kCanceled) and writes the trace if one was
// asked for. Submit after Shutdown returns Status::kShutdown. Shutdown must
// not run concurrently with other calls on the same engine.
//
// Thread-safety: Submit, Wait, Poll, RunOnce may be called from any thread
// concurrently, including from inside task functions (Wait from inside a
// task only if the awaited task can run elsewhere).
#ifndef RONDO_ENGINE_ENGINE_H_
#define RONDO_ENGINE_ENGINE_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/owned_atomic.h"
#include "engine/options.h"
#include "engine/progress_thread.h"
#include "engine/queue_tree.h"
#include "engine/status.h"
#include "engine/task.h"
#include "engine/tracer.h"
#include "engine/wakeup_source.h"
#include "topology/topology.h"

namespace rondo::engine {

class Engine {
 public:
  // Builds the topology, queue tree, tracer and threads. Throws
  // std::invalid_argument for options that cannot work (unknown topology,
  // placement asking for cores that do not exist, ...).
  explicit Engine(EngineOptions options = EngineOptions::FromEnvironment());
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues `task` where its cpuset allows. Returns:
  //   kOk               queued;
  //   kInvalidArgument  no function, empty cpuset, or a core the machine does
  //                     not have (SubmitError() says which);
  //   kBusy             the task is already queued or running;
  //   kShutdown         the engine is shut down.
  // Never allocates. Any thread.
  Status Submit(Task& task) noexcept;
  // Queues `task` in the queue of topology node `node` (a benchmark or a
  // runtime that targets one level explicitly). The task's cpuset must be
  // inside the node's cpuset.
  Status SubmitToNode(Task& task, int node) noexcept;
  // A readable explanation of why Submit would refuse `task` ("" if it would
  // not), naming the bad value and what is allowed.
  std::string SubmitError(const Task& task) const;

  // Runs tasks from the caller's core until `task` is finished. Returns kOk
  // when done, kCanceled if shutdown canceled it, kInvalidArgument for a task
  // never submitted, kTimedOut when `timeout` expired first.
  Status Wait(Task& task) noexcept;
  Status WaitFor(Task& task, std::chrono::nanoseconds timeout) noexcept;

  // One scheduling pass from the caller's core; returns how many task runs
  // did work.
  int Poll() noexcept;
  // Tasks queued now on `core`'s path (tasks being run are not counted):
  // a waiter that polls its own work directly skips Poll() while only its
  // own polling tasks are queued there. Reads the path's queue sizes and
  // writes nothing (no engine-wide counter: docs/task_latency.md).
  int64_t queued_on_path(int core) const noexcept {
    return tree_->PathQueued(core);
  }
  // One scheduling pass from `core`, for a task runtime's idle loop; the
  // caller asserts that it runs on `core`. kInvalidArgument (and *worked
  // untouched) for a core that does not exist.
  Status RunOnce(int core, int* worked = nullptr) noexcept;

  // Wakes an engine thread that can run `task` if one sleeps: for work a
  // queued polling task will find that no Submit announced (e.g. a driver
  // operation left for the task). Cheap when no thread sleeps. Any thread.
  void Notify(const Task& task) noexcept;

  // ---- Quiet progress ----
  // An upper layer marks its application threads' calls (EnterCall and
  // ExitCall, or a CallScope) and the operations in flight that need
  // progress while the application computes (BeginBackground and
  // EndBackground, paired). With quiet progress (NodePlacement::quiet) the
  // progress thread runs only while background work is pending and no
  // application thread is inside; otherwise these calls only count. Each
  // is one atomic read-modify-write (the price of knowing, race-free, when
  // the application leaves); never blocks, never allocates. Any thread.
  // Without a quiet thread (fixed at construction) nobody reads the calls'
  // count, and EnterCall/ExitCall do nothing: two locked instructions less
  // on every MPI call (docs/performance.md).
  void EnterCall() noexcept {
    if (quiet_thread_ == nullptr) return;
    quiet_.calls.fetch_add(QuietSignals::kEntered + 1,
                           std::memory_order_seq_cst);
  }
  void ExitCall() noexcept {
    if (quiet_thread_ == nullptr) return;
    const uint64_t before =
        quiet_.calls.fetch_sub(1, std::memory_order_seq_cst);
    if ((before & QuietSignals::kInsideMask) == 1)
      quiet_thread_->OnApplicationLeft();
  }
  void BeginBackground() noexcept {
    // Work started with no application thread inside (a C++ user that does
    // not mark its calls, or a task): nobody's ExitCall will tell the quiet
    // thread, so tell it now.
    if (quiet_.background.fetch_add(1, std::memory_order_seq_cst) == 0 &&
        quiet_thread_ != nullptr &&
        (quiet_.calls.load(std::memory_order_seq_cst) &
         QuietSignals::kInsideMask) == 0)
      quiet_thread_->OnApplicationLeft();
  }
  void EndBackground() noexcept {
    quiet_.background.fetch_sub(1, std::memory_order_release);
  }
  // EnterCall() for the scope's lifetime.
  class CallScope {
   public:
    explicit CallScope(Engine& engine) noexcept : engine_(engine) {
      engine_.EnterCall();
    }
    ~CallScope() { engine_.ExitCall(); }
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;

   private:
    Engine& engine_;
  };
  // Operations in flight counted by BeginBackground (diagnostics, tests).
  int64_t background() const noexcept {
    return quiet_.background.load(std::memory_order_relaxed);
  }
  // This rank's quiet progress thread, or null.
  const ProgressThread* quiet_thread() const noexcept { return quiet_thread_; }
  // More local ranks than cores: waiting threads should give their core
  // away quickly.
  bool oversubscribed() const noexcept { return placement_.oversubscribed; }
  // The cores each local rank's application may use, as the engine knows
  // them (RONDO_NODE_CPUS converted to cores, else this process's
  // affinity for its own rank and nothing for the others).
  const std::vector<topology::CpuSet>& rank_cores() const {
    return rank_cores_;
  }
  // Effective timer period in microseconds (0: no timer).
  int64_t timer_period_us() const { return timer_period_us_; }

  // For an application thread that waits with nothing to do: sleeps in
  // poll() on the wake-up sources' fds (an arrival on any of them wakes
  // it) for at most `timeout_ns`. Returns false at once, without sleeping,
  // when there is no source or one cannot be armed (events are pending:
  // poll instead). Completions that no fd announces (another thread's, a
  // task's) are seen when the timeout expires: keep it short. Any thread.
  bool SleepOnWakeupSources(int64_t timeout_ns) noexcept;

  // Progress threads sleep on these sources' fds instead of spinning over
  // polling tasks (see engine/wakeup_source.h). The source must stay valid
  // until removed. Any thread.
  void AddWakeupSource(WakeupSource* source);
  void RemoveWakeupSource(WakeupSource* source);

  // The core the calling thread polls from: its bound core if it was bound
  // through BindCurrentThread() or is an engine thread, else the core it
  // runs on now.
  int CurrentCore() const noexcept;
  // This engine's number, unique in the process (never reused): a key for
  // what a thread caches about it.
  uint64_t id() const noexcept { return id_; }
  // Binds the calling thread to `core` (a no-op with a warning on synthetic
  // topologies) and makes Poll/Wait on this thread schedule from `core`.
  // Throws std::invalid_argument for a core that does not exist.
  void BindCurrentThread(int core);

  void Shutdown();
  bool is_shut_down() const {
    return shut_down_.load(std::memory_order_acquire);
  }

  const topology::Topology& topology() const { return *topo_; }
  std::shared_ptr<const topology::Topology> topology_ptr() const {
    return topo_;
  }
  const EngineOptions& options() const { return options_; }
  QueueTree& queue_tree() { return *tree_; }
  int app_core() const { return app_core_; }
  const std::vector<std::unique_ptr<ProgressThread>>& threads() const {
    return threads_;
  }
  // The node's placement (all local ranks; placement.h), this process's
  // progress cores, and them as a cpuset (empty with RONDO_PROGRESS=none):
  // the cores where communication work of this rank should run.
  const NodePlacement& node_placement() const { return placement_; }
  const std::vector<int>& progress_cores() const { return progress_cores_; }
  const topology::CpuSet& progress_cpuset() const { return progress_set_; }
  // Null when tracing is off.
  const Tracer* tracer() const { return tracer_.get(); }
  // Records `task`'s work run by the calling thread outside the queues
  // (Tracer::RecordInline); nothing when tracing is off.
  void TraceInline(const Task& task, int64_t start_ns,
                   int64_t end_ns) noexcept {
    if (tracer_ != nullptr) [[unlikely]]
      tracer_->RecordInline(task, CurrentCore(), start_ns, end_ns);
  }
  bool tracing() const noexcept { return tracer_ != nullptr; }
  // Records the application's own work (Tracer::RecordSpan) on the calling
  // thread's core; nothing when tracing is off.
  void TraceSpan(const char* name, int64_t start_ns, int64_t end_ns) noexcept {
    if (tracer_ != nullptr) [[unlikely]]
      tracer_->RecordSpan(name, CurrentCore(), start_ns, end_ns);
  }
  // Number of tasks canceled by Shutdown().
  int canceled_at_shutdown() const { return canceled_at_shutdown_; }

 private:
  Status Enqueue(Task& task, int node) noexcept;
  // Moves core `core`'s explicit-poll count (only "it moved" matters to the
  // timer thread, so a plain store, not a locked add: two threads of one
  // core may lose an increment, never the movement).
  void CountAppPoll(int core) noexcept {
    auto& polls = app_polls_[core].v;
    polls.store(polls.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
  }
  void WakeFor(int node) noexcept;
  int ResolveAppCore() const;
  // The cores each local rank may run on (see rank_cores()).
  std::vector<topology::CpuSet> ResolveRankCores() const;

  EngineOptions options_;
  std::shared_ptr<const topology::Topology> topo_;
  std::unique_ptr<Tracer> tracer_;
  std::unique_ptr<QueueTree> tree_;
  int app_core_ = 0;
  NodePlacement placement_;
  std::vector<int> progress_cores_;
  topology::CpuSet progress_set_;
  std::string trace_path_;  // RONDO_TRACE with %r and %p expanded
  const uint64_t id_;
  // Per tree node: engine threads asleep that can run its queue (one cache
  // line per node; a thread counts itself in its core's path only).
  std::unique_ptr<PaddedOwnedAtomic<int>[]> node_sleepers_;
  OwnedAtomic<bool> shut_down_{false, kOwnerEngine,
                                         "engine shut_down"};
  std::vector<std::unique_ptr<ProgressThread>> threads_;
  // Per node: the threads that can run its queue, progress threads first.
  std::vector<std::vector<ProgressThread*>> wakers_;
  int canceled_at_shutdown_ = 0;
  // Per core, one cache line each: explicit polls (Poll, Wait) from
  // non-engine threads; the timer thread of that core skips its tick when
  // they move.
  std::unique_ptr<PaddedOwnedAtomic<uint64_t>[]> app_polls_;
  WakeupRegistry wakeup_registry_;
  QuietSignals quiet_;
  ProgressThread* quiet_thread_ = nullptr;
  std::vector<topology::CpuSet> rank_cores_;
  int64_t timer_period_us_ = 0;
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_ENGINE_H_
