#include "engine/engine.h"

#include <poll.h>
#include <sched.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "engine/internal/futex.h"
#include "queues/cpu_relax.h"
#include "topology/base/log.h"

namespace rondo::engine {
namespace {

std::atomic<uint64_t> next_engine_id{1};

// The core a thread polls from, per engine: set for engine threads and by
// BindCurrentThread(). Keyed by engine id so that a thread used with two
// engines (tests) never uses one engine's core number with the other.
struct ThreadCore {
  uint64_t engine_id = 0;
  int core = -1;
};
// Initial-exec TLS: read by CurrentCore() on the waiters' path (see
// t_held_rail in nmad/rail.h).
thread_local ThreadCore thread_core __attribute__((tls_model("initial-exec")));

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

constexpr uint32_t kStateOf(TaskState s) { return static_cast<uint32_t>(s); }

}  // namespace

Engine::Engine(EngineOptions options)
    : options_(std::move(options)),
      id_(next_engine_id.fetch_add(1, std::memory_order_relaxed)) {
  if (options_.local_rank < 0 || options_.local_size < 1 ||
      options_.local_rank >= options_.local_size)
    throw std::invalid_argument(
        "local rank " + std::to_string(options_.local_rank) +
        " is outside 0.." + std::to_string(options_.local_size - 1) +
        " (RONDO_LOCAL_RANK must be below RONDO_LOCAL_SIZE)");
  topo_ = topology::Topology::Load(options_.topology);
  tree_ = std::make_unique<QueueTree>(topo_, options_.queue,
                                      options_.queue_capacity);
  if (!options_.trace_file.empty()) {
    for (char c : options_.trace_file) {
      if (!trace_path_.empty() && trace_path_.back() == '%' &&
          (c == 'r' || c == 'g' || c == 'p')) {
        trace_path_.pop_back();
        const int job_rank =
            options_.job_rank >= 0 ? options_.job_rank : options_.local_rank;
        trace_path_ += std::to_string(c == 'r'   ? options_.local_rank
                                      : c == 'g' ? job_rank
                                                 : static_cast<int>(getpid()));
      } else {
        trace_path_ += c;
      }
    }
    tracer_ = std::make_unique<Tracer>(topo_, options_.trace_max_events);
    tree_->set_tracer(tracer_.get());
  }
  rank_cores_ = ResolveRankCores();
  const bool auto_placement =
      options_.progress.kind == PlacementKind::kAuto &&
      options_.comm_cores.empty();
  if (auto_placement) {
    placement_ = PlaceNodeAuto(*topo_, rank_cores_, options_.local_size,
                               options_.job_size, options_.marks_calls,
                               options_.confined);
  } else {
    placement_ = PlaceNode(*topo_, options_.progress, options_.comm_cores,
                           options_.local_size);
    placement_.quiet.assign(options_.local_size,
                            options_.progress.kind == PlacementKind::kQuiet);
    placement_.why.assign(options_.local_size, "");
    placement_.oversubscribed = options_.local_size > topo_->NumCores();
  }
  app_core_ = ResolveAppCore();
  quiet_.calls.set_owner(topo_->CoreNode(app_core_), "quiet calls");
  quiet_.background.set_owner(topo_->CoreNode(app_core_), "quiet background");
  const bool quiet = placement_.quiet[options_.local_rank];

  // Progress threads, then timer threads on the cores that have none.
  if (auto_placement || !options_.comm_cores.empty()) {
    progress_cores_ = placement_.progress_cores[options_.local_rank];
  } else {
    progress_cores_ = ProgressCores(*topo_, options_.progress,
                                    options_.local_rank, options_.local_size,
                                    app_core_);
  }
  if (quiet) progress_cores_ = {app_core_};
  // With dedicated communication cores PlaceNode moves the ranks off them
  // (MPI_Init binds the application thread), so a launcher's binding onto
  // one is no conflict.
  if (!auto_placement && !quiet && options_.comm_cores.empty()) {
    const std::string conflicts = PlacementConflicts(
        *topo_, progress_cores_, rank_cores_, options_.local_rank);
    for (size_t start = 0, end; start < conflicts.size(); start = end + 1) {
      end = conflicts.find('\n', start);
      if (end == std::string::npos) end = conflicts.size();
      RONDO_LOG_WARN("{}",
                     std::string_view(conflicts).substr(start, end - start));
    }
  }
  const std::vector<int>& progress_cores = progress_cores_;
  topology::CpuSet& progress_set = progress_set_;
  for (int c : progress_cores) progress_set.Set(c);
  timer_period_us_ =
      options_.timer_period_us >= 0
          ? options_.timer_period_us
          : (options_.progress.kind == PlacementKind::kNone
                 ? EngineOptions::kAutoTimerUs
                 : 0);
  std::vector<int> timer_cores;
  if (timer_period_us_ > 0) {
    if (options_.timer_cores == "app") {
      timer_cores.push_back(app_core_);
    } else if (options_.timer_cores != "none") {
      topology::CpuSet set = topology::CpuSet::Parse(options_.timer_cores);
      for (int c = set.First(); c >= 0; c = set.Next(c)) {
        if (c >= topo_->NumCores())
          throw std::invalid_argument(
              "RONDO_TIMER_CORES asks for core " + std::to_string(c) +
              " but this machine has cores 0-" +
              std::to_string(topo_->NumCores() - 1));
        timer_cores.push_back(c);
      }
    }
  }
  app_polls_.reset(
      new PaddedOwnedAtomic<uint64_t>[topo_->NumCores()]);
  for (int c = 0; c < topo_->NumCores(); ++c)
    app_polls_[c].v.set_owner(topo_->CoreNode(c), "engine app polls");
  node_sleepers_.reset(
      new PaddedOwnedAtomic<int>[tree_->NumNodes()]);
  for (int n = 0; n < tree_->NumNodes(); ++n)
    node_sleepers_[n].v.set_owner(n, "engine node sleepers");
  // The engine's threads feed the write audit of the thread that built it
  // (engine/audit_test.cc; nothing in NDEBUG builds).
  WriteAudit* const audit = WriteAudit::Current();
  auto add_thread = [this, audit](int core, ProgressThread::Mode mode) {
    ProgressThread::Config cfg;
    cfg.app_polls = &app_polls_[core].v.word();
    cfg.core = core;
    cfg.mode = mode;
    cfg.idle_spin_ns = options_.idle_spin_us * 1000;
    cfg.period_ns = mode == ProgressThread::Mode::kQuiet
                        ? options_.quiet_period_us * 1000
                        : timer_period_us_ * 1000;
    cfg.bind = options_.bind_threads;
    cfg.quiet = &quiet_;
    if (mode == ProgressThread::Mode::kQuiet) {
      // It shares the application's core: bound there when the application
      // is bound to that one core, else free to go where the application
      // may go (the process's mask).
      const topology::CpuSet& own = rank_cores_[options_.local_rank];
      cfg.bind = cfg.bind && own.Count() == 1 && own.Test(core);
      cfg.batch =
          options_.quiet_sched == EngineOptions::QuietSched::kBatch;
      cfg.stream =
          options_.quiet_sched == EngineOptions::QuietSched::kStream;
    }
    threads_.push_back(std::make_unique<ProgressThread>(
        *tree_, node_sleepers_.get(), cfg, [this, core, mode, audit] {
          thread_core = {id_, core};
          WriteAudit::Current() = audit;
          WriteAudit::ActorCore() = core;
          Tracer::SetThreadRole(mode == ProgressThread::Mode::kTimer
                                    ? ThreadRole::kTimer
                                    : ThreadRole::kProgress);
        }));
  };
  for (int c : progress_cores)
    add_thread(c, quiet ? ProgressThread::Mode::kQuiet
                        : ProgressThread::Mode::kProgress);
  if (quiet) quiet_thread_ = threads_.back().get();
  for (int c : timer_cores) {
    if (!progress_set.Test(c))  // else a progress thread serves it already
      add_thread(c, ProgressThread::Mode::kTimer);
  }
  wakers_.resize(tree_->NumNodes());
  for (int node = 0; node < tree_->NumNodes(); ++node) {
    for (auto mode :
         {ProgressThread::Mode::kProgress, ProgressThread::Mode::kTimer,
          ProgressThread::Mode::kQuiet}) {
      for (auto& t : threads_)
        // A quiet thread comes last, and a submit or a Notify wakes it only
        // while it sleeps on the fds progressing for the application (work
        // left for a polling task must not wait for the fd's timeout);
        // otherwise the application's exit wakes it.
        if (t->mode() == mode && topo_->node(node).cpuset.Test(t->core()))
          wakers_[node].push_back(t.get());
    }
  }
  for (auto& t : threads_) {
    t->set_wakeup_registry(&wakeup_registry_);
    t->Start();
  }
}

Engine::~Engine() { Shutdown(); }

std::vector<topology::CpuSet> Engine::ResolveRankCores() const {
  const int n = options_.local_size;
  std::vector<topology::CpuSet> out(n);
  auto to_cores = [this](const topology::CpuSet& pus) {
    topology::CpuSet cores;
    for (int pu = pus.First(); pu >= 0; pu = pus.Next(pu)) {
      const int c = topo_->is_native() ? topo_->CoreOfPu(pu) : pu;
      if (c >= 0 && c < topo_->NumCores()) cores.Set(c);
    }
    return cores;
  };
  if (!options_.node_cpus.empty()) {
    if (static_cast<int>(options_.node_cpus.size()) != n)
      throw std::invalid_argument(
          "RONDO_NODE_CPUS lists " + std::to_string(options_.node_cpus.size()) +
          " ranks but RONDO_LOCAL_SIZE is " + std::to_string(n) +
          ": expected one CPU list per local rank");
    for (int r = 0; r < n; ++r) out[r] = to_cores(options_.node_cpus[r]);
    return out;
  }
  if (topo_->is_native()) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
      topology::CpuSet pus;
      for (int cpu = 0; cpu < CPU_SETSIZE && cpu < topology::CpuSet::kMaxCores;
           ++cpu)
        if (CPU_ISSET(cpu, &mask)) pus.Set(cpu);
      out[options_.local_rank] = to_cores(pus);
    }
  }
  return out;
}

int Engine::ResolveAppCore() const {
  const int ncores = topo_->NumCores();
  if (options_.app_core >= 0) {
    if (options_.app_core >= ncores)
      throw std::invalid_argument(
          "RONDO_APP_CORE asks for core " + std::to_string(options_.app_core) +
          " but this machine has cores 0-" + std::to_string(ncores - 1));
    return options_.app_core;
  }
  if (topo_->is_native()) {
    // A process bound to exactly one core (by a launcher) computes there.
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
      int core = -1;
      bool single = true;
      for (int cpu = 0; cpu < CPU_SETSIZE && single; ++cpu) {
        if (!CPU_ISSET(cpu, &mask)) continue;
        int c = topo_->CoreOfPu(cpu);
        if (c < 0 || (core >= 0 && c != core)) single = false;
        core = c;
      }
      // ... unless that core is a dedicated communication core: then the
      // node placement's application core wins (a launcher that binds
      // rank r to core r knows nothing of RONDO_COMM_CORES).
      const std::vector<int>& comm = placement_.comm_cores;
      const bool on_comm_core =
          !options_.comm_cores.empty() &&
          std::find(comm.begin(), comm.end(), core) != comm.end();
      if (single && core >= 0 && !on_comm_core) return core;
    }
  }
  return placement_.app_cores[options_.local_rank];
}

std::string Engine::SubmitError(const Task& task) const {
  if (is_shut_down()) return "the engine is shut down";
  if (task.fn_ == nullptr) return "the task has no function (Init it first)";
  const topology::CpuSet& set = task.cpuset_;
  if (set.Empty())
    return "the task's cpuset is empty: it must name at least one of cores "
           "0-" + std::to_string(topo_->NumCores() - 1);
  if (!topo_->AllCores().Contains(set))
    return "the task's cpuset " + set.ToString() + " names core " +
           std::to_string(set.Last()) + " but this machine has cores 0-" +
           std::to_string(topo_->NumCores() - 1);
  TaskState s = task.state();
  if (s == TaskState::kQueued)
    return "the task is already queued or running; submit it again only once "
           "it is done";
  return "";
}

Status Engine::Submit(Task& task) noexcept {
  if (shut_down_.load(std::memory_order_relaxed)) [[unlikely]]
    return Status::kShutdown;
  if (task.fn_ == nullptr) [[unlikely]]
    return Status::kInvalidArgument;
  int node = tree_->NodeFor(task.cpuset_);
  if (node < 0) [[unlikely]]
    return Status::kInvalidArgument;
  return Enqueue(task, node);
}

Status Engine::SubmitToNode(Task& task, int node) noexcept {
  if (shut_down_.load(std::memory_order_relaxed)) return Status::kShutdown;
  if (task.fn_ == nullptr || node < 0 || node >= tree_->NumNodes() ||
      task.cpuset_.Empty() ||
      !topo_->node(node).cpuset.Contains(task.cpuset_))
    return Status::kInvalidArgument;
  return Enqueue(task, node);
}

Status Engine::Enqueue(Task& task, int node) noexcept {
  uint32_t expected = task.state_.load(std::memory_order_relaxed);
  if (expected != kStateOf(TaskState::kIdle) &&
      expected != kStateOf(TaskState::kDone) &&
      expected != kStateOf(TaskState::kCanceled))
    return Status::kBusy;
  if (!task.state_.compare_exchange_strong(expected,
                                           kStateOf(TaskState::kQueued),
                                           std::memory_order_acq_rel))
    return Status::kBusy;
  task.runs_.store(0, std::memory_order_relaxed);
  if (tracer_ != nullptr) [[unlikely]]
    tracer_->RecordSubmit(task, node, CurrentCore());
  tree_->Push(task, node);
  // No engine thread can run this queue (e.g. a core's own queue with no
  // progress or timer thread there): nobody to wake, skip the fence.
  if (wakers_[node].empty()) return Status::kOk;
  // Pairs with the fence in ProgressThread::SleepUntilWoken(): either the
  // sleeper sees the task, or we see the sleeper.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (node_sleepers_[node].v.load(std::memory_order_relaxed) > 0) [[unlikely]]
    WakeFor(node);
  return Status::kOk;
}

void Engine::Notify(const Task& task) noexcept {
  // Pairs with the fence of a sleeping thread's handshake. Called on hot
  // paths: nothing else happens unless a thread sleeps.
  int node = task.queue_node_;
  if (node < 0 || node >= tree_->NumNodes()) node = tree_->NodeFor(task.cpuset_);
  if (node < 0) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (node_sleepers_[node].v.load(std::memory_order_relaxed) == 0) return;
  WakeFor(node);
}

void Engine::AddWakeupSource(WakeupSource* source) {
  std::lock_guard<std::mutex> lock(wakeup_registry_.mu);
  wakeup_registry_.sources.push_back(source);
}

void Engine::RemoveWakeupSource(WakeupSource* source) {
  std::lock_guard<std::mutex> lock(wakeup_registry_.mu);
  auto& v = wakeup_registry_.sources;
  v.erase(std::remove(v.begin(), v.end(), source), v.end());
}

bool Engine::SleepOnWakeupSources(int64_t timeout_ns) noexcept {
  constexpr int kMaxFds = 16;
  pollfd fds[kMaxFds];
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(wakeup_registry_.mu);
    const auto& sources = wakeup_registry_.sources;
    if (sources.empty() || sources.size() > kMaxFds) return false;
    for (WakeupSource* s : sources) {
      if (!s->Arm()) return false;
      fds[n++] = {s->fd(), POLLIN, 0};
    }
  }
  const int ms = static_cast<int>(std::max<int64_t>(1, timeout_ns / 1000000));
  (void)poll(fds, n, ms);
  return true;
}

void Engine::WakeFor(int node) noexcept {
  for (ProgressThread* t : wakers_[node]) {
    const bool woken = t->mode() == ProgressThread::Mode::kQuiet
                           ? t->WakeIfOnFds()
                           : t->Wake();
    if (woken) return;
  }
}

int Engine::CurrentCore() const noexcept {
  if (thread_core.engine_id == id_) return thread_core.core;
  return topo_->CurrentCore();
}

void Engine::BindCurrentThread(int core) {
  if (core < 0 || core >= topo_->NumCores())
    throw std::invalid_argument("core " + std::to_string(core) +
                                " does not exist: this machine has cores 0-" +
                                std::to_string(topo_->NumCores() - 1));
  topo_->BindThreadToCore(core);
  thread_core = {id_, core};
  WriteAudit::ActorCore() = core;
}

int Engine::Poll() noexcept {
  // Engine threads schedule through QueueTree directly, so this counts the
  // application's (and task runtimes') explicit polls.
  const int core = CurrentCore();
  CountAppPoll(core);
  return tree_->ScheduleFrom(core);
}

Status Engine::RunOnce(int core, int* worked) noexcept {
  if (core < 0 || core >= topo_->NumCores()) return Status::kInvalidArgument;
  int n = tree_->ScheduleFrom(core);
  if (worked != nullptr) *worked = n;
  return Status::kOk;
}

Status Engine::Wait(Task& task) noexcept {
  return WaitFor(task, std::chrono::nanoseconds::max());
}

Status Engine::WaitFor(Task& task, std::chrono::nanoseconds timeout) noexcept {
  const int core = CurrentCore();
  // The clock is read only once the wait turns out not to be immediate: the
  // common same-core case never pays for it.
  int64_t start = -1;
  const int64_t limit = timeout.count();
  const int64_t spin_ns = options_.wait_spin_us * 1000;
  // While sleeping, wake up this often to poll our own core's queues: a task
  // that only this core may run would not wake us otherwise.
  constexpr int64_t kMaxSleepNs = 1000000;
  uint32_t idle = 0;
  for (;;) {
    uint32_t s = task.state_.load(std::memory_order_acquire);
    switch (static_cast<TaskState>(s & Task::kStateMask)) {
      case TaskState::kDone: return Status::kOk;
      case TaskState::kCanceled: return Status::kCanceled;
      case TaskState::kIdle: return Status::kInvalidArgument;
      default: break;
    }
    CountAppPoll(core);
    if (tree_->ScheduleFrom(core) > 0) {
      idle = 0;
      continue;
    }
    if ((++idle & 63) != 0) {
      queues::CpuRelax();
      continue;
    }
    const int64_t now = MonotonicNs();
    if (start < 0) start = now;
    const int64_t elapsed = now - start;
    if (elapsed >= limit) return Status::kTimedOut;
    if (elapsed < spin_ns) continue;
    if (tree_->PathMaybeNonEmpty(core)) {
      sched_yield();  // local tasks with nothing to do yet: keep polling
      continue;
    }
    // Sleep on the task's state word until it finishes (or a while passes).
    if ((s & Task::kWaiterBit) == 0 &&
        !task.state_.compare_exchange_weak(s, s | Task::kWaiterBit,
                                           std::memory_order_acq_rel))
      continue;
    int64_t nap = std::min(kMaxSleepNs, limit - elapsed);
    internal::FutexWait(&task.state_, s | Task::kWaiterBit, nap);
  }
}

void Engine::Shutdown() {
  if (shut_down_.exchange(true, std::memory_order_acq_rel)) return;
  for (auto& t : threads_) t->Stop();
  canceled_at_shutdown_ = tree_->CancelAll();
  if (tracer_ != nullptr) {
    std::string error;
    if (!tracer_->Write(trace_path_, &error))
      RONDO_LOG_ERROR("{}", error);
  }
}

}  // namespace rondo::engine
