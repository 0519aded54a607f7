#include "engine/engine.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace rondo::engine {
namespace {

using namespace std::chrono_literals;
using topology::CpuSet;
using Clock = std::chrono::steady_clock;

EngineOptions Options(const std::string& topology, const std::string& progress,
                      int64_t timer_us = 0,
                      queues::QueueKind queue = queues::QueueKind::kSpin) {
  EngineOptions o;
  o.queue = queue;
  o.topology = topology;
  o.progress = PlacementSpec::Parse(progress);
  o.timer_period_us = timer_us;
  o.idle_spin_us = 20;
  o.wait_spin_us = 20;
  return o;
}

struct Probe {
  std::atomic<int> runs{0};
  std::atomic<int> os_cpu{-1};
  std::atomic<int> wrong_core{0};
  const topology::Topology* topo = nullptr;
  int expected_core = -1;
};

// Records where it ran; counts runs on a core other than the expected one.
TaskResult Record(void* arg) noexcept {
  auto* p = static_cast<Probe*>(arg);
  int cpu = sched_getcpu();
  p->os_cpu.store(cpu);
  if (p->topo != nullptr && p->topo->CoreOfPu(cpu) != p->expected_core)
    p->wrong_core.fetch_add(1);
  p->runs.fetch_add(1);
  return TaskResult::kDone;
}

// Spins until `pred` holds or `limit` passes; the caller asserts the result.
template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds limit = 10000ms) {
  auto end = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST_CASE("same-core submit and wait runs the task on the caller's core",
          "[engine]") {
  auto kind = GENERATE(queues::QueueKind::kSpin, queues::QueueKind::kLockFree);
  EngineOptions o = Options("native", "none", /*timer_us=*/0, kind);
  Engine engine(o);
  engine.BindCurrentThread(0);
  Probe p;
  p.topo = &engine.topology();
  p.expected_core = 0;
  Task t(&Record, &p, {0});
  for (int i = 0; i < 100; ++i) {
    REQUIRE(engine.Submit(t) == Status::kOk);
    REQUIRE(engine.Wait(t) == Status::kOk);
  }
  CHECK(p.runs == 100);
  CHECK(p.wrong_core == 0);
  CHECK(t.last_core() == 0);
  CHECK(t.runs() == 1);
}

TEST_CASE("a task pinned to core 1 never runs elsewhere", "[engine]") {
  auto kind = GENERATE(queues::QueueKind::kSpin, queues::QueueKind::kLockFree);
  EngineOptions o = Options("native", "cores:1", /*timer_us=*/100, kind);
  o.timer_cores = "0";  // a second trigger that must not touch core 1's queue
  Probe p;
  std::vector<Task> tasks(200);  // outlive the engine if a check fails
  Engine engine(o);
  engine.BindCurrentThread(0);
  REQUIRE(engine.threads().size() == 2);
  p.topo = &engine.topology();
  p.expected_core = 1;
  for (auto& t : tasks) t.Init(&Record, &p, {1});
  for (auto& t : tasks) REQUIRE(engine.Submit(t) == Status::kOk);
  for (auto& t : tasks) REQUIRE(engine.WaitFor(t, 10s) == Status::kOk);
  CHECK(p.runs == 200);
  CHECK(p.wrong_core == 0);
  for (auto& t : tasks) CHECK(t.last_core() == 1);
}

TEST_CASE("repeat tasks run until they report completion", "[engine]") {
  Engine engine(Options("synthetic:core:2 pu:1", "none"));
  struct Poller {
    int polls = 0;
  } poller;
  auto fn = [](void* arg) noexcept {
    auto* p = static_cast<Poller*>(arg);
    return ++p->polls == 25 ? TaskResult::kDone : TaskResult::kIdle;
  };
  Task t(fn, &poller, {1}, TaskOptions{.repeat = true, .name = "poll"});
  REQUIRE(engine.Submit(t) == Status::kOk);
  int passes = 0;
  while (!t.finished() && passes < 1000) {
    int worked = 0;
    REQUIRE(engine.RunOnce(1, &worked) == Status::kOk);
    ++passes;
  }
  CHECK(t.done());
  CHECK(poller.polls == 25);
  CHECK(passes == 25);  // one run per pass
  CHECK(t.runs() == 25);
}

TEST_CASE("the timer trigger runs tasks while the application only computes",
          "[engine][timer]") {
  // No progress thread: only the timer thread on core 0 can run a task
  // pinned to core 0, and the application thread (bound to core 0) never
  // calls Rondo while it computes.
  Probe p;
  Task t;  // outlives the engine if a check fails
  Engine engine(Options("native", "none", /*timer_us=*/100));
  engine.BindCurrentThread(0);
  REQUIRE(engine.threads().size() == 1);
  CHECK(engine.threads()[0]->mode() == ProgressThread::Mode::kTimer);
  p.topo = &engine.topology();
  p.expected_core = 0;
  t.Init(&Record, &p, {0});
  REQUIRE(engine.Submit(t) == Status::kOk);
  volatile double x = 1.0;
  auto deadline = Clock::now() + 10s;
  uint64_t iterations = 0;
  while (!t.finished() && Clock::now() < deadline) {
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;  // "compute"
    ++iterations;
  }
  REQUIRE(t.done());
  CHECK(p.runs == 1);
  CHECK(p.wrong_core == 0);
  CHECK(iterations > 0);
}

TEST_CASE("progress threads sleep when idle and wake on submit",
          "[engine][progress]") {
  auto kind = GENERATE(queues::QueueKind::kSpin, queues::QueueKind::kLockFree);
  EngineOptions o = Options("native", "cores:1", /*timer_us=*/0, kind);
  Probe probes[5];
  Task tasks[5];  // outlive the engine even if a round fails
  Engine engine(o);
  engine.BindCurrentThread(0);
  ProgressThread& pt = *engine.threads().at(0);
  for (int round = 1; round <= 5; ++round) {
    // It goes to sleep (again) once the previous task is done.
    REQUIRE(Eventually([&] {
      return pt.sleeps() >= static_cast<uint64_t>(round) && pt.sleeping();
    }));
    Task& t = tasks[round - 1];
    t.Init(&Record, &probes[round - 1], {1});
    REQUIRE(engine.Submit(t) == Status::kOk);
    // Only the progress thread can run it: core 0 never polls core 1.
    REQUIRE(engine.WaitFor(t, 10s) == Status::kOk);
    CHECK(t.last_core() == 1);
  }
}

TEST_CASE("bad input gets a clear error", "[engine][errors]") {
  Engine engine(Options("synthetic:core:2 pu:1", "none"));
  Probe p;
  Task empty(&Record, &p, CpuSet{});
  CHECK(engine.Submit(empty) == Status::kInvalidArgument);
  CHECK_THAT(engine.SubmitError(empty),
             Catch::Contains("empty") && Catch::Contains("cores 0-1"));
  Task outside(&Record, &p, {0, 5});
  CHECK(engine.Submit(outside) == Status::kInvalidArgument);
  CHECK_THAT(engine.SubmitError(outside),
             Catch::Contains("{0,5}") && Catch::Contains("core 5") &&
                 Catch::Contains("cores 0-1"));
  Task no_fn;
  no_fn.set_cpuset({0});
  CHECK(engine.Submit(no_fn) == Status::kInvalidArgument);
  CHECK_THAT(engine.SubmitError(no_fn), Catch::Contains("no function"));

  Task twice(&Record, &p, {1});
  REQUIRE(engine.Submit(twice) == Status::kOk);
  CHECK(engine.Submit(twice) == Status::kBusy);
  CHECK_THAT(engine.SubmitError(twice), Catch::Contains("already queued"));
  // The refused resubmission lost nothing: it still runs exactly once.
  REQUIRE(engine.RunOnce(1) == Status::kOk);
  CHECK(p.runs == 1);
  CHECK(twice.done());

  Task never(&Record, &p, {0});
  CHECK(engine.Wait(never) == Status::kInvalidArgument);
  CHECK(engine.RunOnce(2) == Status::kInvalidArgument);
  CHECK(engine.RunOnce(-1) == Status::kInvalidArgument);
  CHECK(engine.SubmitToNode(twice, 99) == Status::kInvalidArgument);
  CHECK_THROWS_WITH(engine.BindCurrentThread(3), Catch::Contains("core 3"));

  CHECK_THROWS_WITH(Engine(Options("synthetic:core:2 pu:1", "cores:7")),
                    Catch::Contains("core 7") && Catch::Contains("cores 0-1"));
  CHECK_THROWS_WITH(Engine(Options("synthetic:bogus", "none")),
                    Catch::Contains("bogus"));
  EngineOptions bad_rank = Options("synthetic:core:2 pu:1", "none");
  bad_rank.local_rank = 2;
  bad_rank.local_size = 2;
  CHECK_THROWS_WITH(Engine(bad_rank), Catch::Contains("local rank 2"));
}

TEST_CASE("shutdown cancels queued tasks and refuses new ones",
          "[engine][shutdown]") {
  Engine engine(Options("synthetic:core:2 pu:1", "none"));
  Probe p;
  std::vector<Task> tasks(10);
  for (auto& t : tasks) {
    t.Init(&Record, &p, {1});
    REQUIRE(engine.Submit(t) == Status::kOk);
  }
  Task repeat(&Record, &p, {0, 1}, TaskOptions{.repeat = true});
  REQUIRE(engine.Submit(repeat) == Status::kOk);
  engine.Shutdown();
  CHECK(engine.canceled_at_shutdown() == 11);
  for (auto& t : tasks) {
    CHECK(t.state() == TaskState::kCanceled);
    CHECK(engine.Wait(t) == Status::kCanceled);
  }
  CHECK(p.runs == 0);
  Task late(&Record, &p, {0});
  CHECK(engine.Submit(late) == Status::kShutdown);
  CHECK_THAT(engine.SubmitError(late), Catch::Contains("shut down"));
  engine.Shutdown();  // idempotent
}

TEST_CASE("many submitters, many levels: every task runs exactly once",
          "[engine][stress]") {
  auto kind = GENERATE(queues::QueueKind::kSpin, queues::QueueKind::kLockFree);
  EngineOptions o = Options("native", "cores:1", /*timer_us=*/100, kind);
  constexpr int kThreads = 3, kTasks = 2000;
  // Declared before the engine so that they outlive it if a failure leaves
  // some of them queued.
  std::vector<std::vector<Task>> all_tasks(kThreads);
  for (auto& v : all_tasks) v = std::vector<Task>(kTasks);
  Engine engine(o);
  std::atomic<int> runs{0};
  auto fn = [](void* arg) noexcept {
    static_cast<std::atomic<int>*>(arg)->fetch_add(1);
    return TaskResult::kDone;
  };
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      std::vector<Task>& tasks = all_tasks[th];
      const CpuSet sets[] = {{0}, {1}, {0, 1}};
      for (int i = 0; i < kTasks; ++i) {
        tasks[i].Init(fn, &runs, sets[(i + th) % 3]);
        if (engine.Submit(tasks[i]) != Status::kOk) errors.fetch_add(1);
      }
      for (auto& t : tasks) {
        // Stop at the first failure so a broken engine fails fast rather
        // than waiting out every task.
        if (errors.load() != 0) break;
        if (engine.WaitFor(t, 20s) != Status::kOk) errors.fetch_add(1);
        if (t.runs() != 1) errors.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors == 0);
  CHECK(runs == kThreads * kTasks);
}

TEST_CASE("the trace is Chrome trace JSON with one row per core",
          "[engine][trace]") {
  std::string path = std::string(std::getenv("TEST_TMPDIR") != nullptr
                                     ? std::getenv("TEST_TMPDIR")
                                     : "/tmp") +
                     "/rondo_trace_test.json";
  std::string beta_queue;
  {
    EngineOptions o = Options("synthetic:core:2 pu:1", "none");
    o.trace_file = path;
    Engine engine(o);
    const auto& topo = engine.topology();
    beta_queue = topo.node(topo.DeepestContaining({0, 1})).name;
    Probe p;
    Task a(&Record, &p, {0}, TaskOptions{.name = "alpha"});
    Task b(&Record, &p, {0, 1}, TaskOptions{.name = "beta"});
    REQUIRE(engine.Submit(a) == Status::kOk);
    REQUIRE(engine.Submit(b) == Status::kOk);
    REQUIRE(engine.RunOnce(1) == Status::kOk);  // runs beta from core 1
    REQUIRE(engine.RunOnce(0) == Status::kOk);  // runs alpha
    REQUIRE(engine.tracer() != nullptr);
    CHECK(engine.tracer()->recorded() == 4);
  }
  std::ifstream in(path);
  REQUIRE(in.good());
  auto doc = nlohmann::json::parse(in);
  int runs = 0, submits = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "X") {
      ++runs;
      if (ev["name"] == "alpha") {
        CHECK(ev["tid"] == 0);
        CHECK(ev["args"]["queue"] == "core:0");
      } else {
        CHECK(ev["name"] == "beta");
        CHECK(ev["tid"] == 1);
        CHECK(ev["args"]["queue"] == beta_queue);
      }
      CHECK(ev["dur"].get<double>() >= 0.0);
    } else if (ev["ph"] == "i") {
      ++submits;
    }
  }
  CHECK(runs == 2);
  CHECK(submits == 2);
}

TEST_CASE("tracing off records nothing", "[engine][trace]") {
  Engine engine(Options("synthetic:core:2 pu:1", "none"));
  CHECK(engine.tracer() == nullptr);
}

// A launcher binds rank r to core r; with RONDO_COMM_CORES its binding must
// not put a rank's application thread on a communication core.
TEST_CASE("the application core follows the launcher unless it is a "
          "communication core", "[engine][placement]") {
  cpu_set_t saved;
  REQUIRE(sched_getaffinity(0, sizeof saved, &saved) == 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(1, &one);  // as `rondo-run --bind core` does for rank 1
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  {
    EngineOptions o = Options("native", "none");
    o.local_rank = 1;
    o.local_size = 2;
    Engine launcher_wins(o);
    CHECK(launcher_wins.app_core() == 1);
  }
  {
    EngineOptions o = Options("native", "none");
    o.local_rank = 1;
    o.local_size = 2;
    o.comm_cores = CommCoresSpec::Parse("1");  // core 1 of this machine
    Engine placement_wins(o);
    CHECK(placement_wins.node_placement().comm_cores == std::vector<int>{1});
    CHECK(placement_wins.app_core() == 0);
  }
  sched_setaffinity(0, sizeof saved, &saved);
}

// ---- quiet progress ----

EngineOptions QuietOptions() {
  EngineOptions o = Options("native", "quiet", /*timer_us=*/-1);
  o.quiet_period_us = 50;
  return o;
}

TEST_CASE("quiet progress: one thread, no timer, asleep while nothing is "
          "pending", "[engine][quiet]") {
  Engine engine(QuietOptions());
  REQUIRE(engine.threads().size() == 1);  // auto timer: off
  CHECK(engine.timer_period_us() == 0);
  const ProgressThread& q = *engine.threads()[0];
  CHECK(q.mode() == ProgressThread::Mode::kQuiet);
  CHECK(engine.quiet_thread() == &q);
  CHECK(q.core() == engine.app_core());
  REQUIRE(Eventually([&] { return q.sleeps() >= 1 && q.sleeping(); }));
  // Blocking calls (work begins and ends inside the call) never wake it.
  const uint64_t sleeps = q.sleeps();
  for (int i = 0; i < 10000; ++i) {
    Engine::CallScope call(engine);
    engine.BeginBackground();
    engine.EndBackground();
  }
  CHECK(engine.background() == 0);
  CHECK(q.sleeps() == sleeps);
  CHECK(q.sleeping());
  CHECK(q.activations() == 0);
}

TEST_CASE("quiet progress: runs pending work only while the application is "
          "outside", "[engine][quiet]") {
  Probe p;
  Task t;  // outlives the engine if a check fails
  Engine engine(QuietOptions());
  const ProgressThread& q = *engine.threads().at(0);
  REQUIRE(Eventually([&] { return q.sleeping(); }));
  t.Init(&Record, &p, CpuSet::Single(q.core()));
  engine.EnterCall();
  engine.BeginBackground();
  REQUIRE(engine.Submit(t) == Status::kOk);
  engine.EnterCall();  // nested calls (threads, or MPI inside a callback)
  engine.ExitCall();
  // The inner exit leaves one call open: the thread must stay away.
  CHECK(q.activations() == 0);
  engine.ExitCall();  // the application leaves with work pending
  REQUIRE(Eventually([&] { return t.finished(); }));
  CHECK(p.runs == 1);
  CHECK(q.activations() >= 1);
  CHECK(t.last_core() == q.core());
  engine.EndBackground();
  // Nothing pending any more: back to the sleep without a deadline.
  REQUIRE(Eventually([&] { return q.sleeping(); }));
}

TEST_CASE("quiet progress under SCHED_BATCH: the policy is the thread's "
          "and pending work still runs", "[engine][quiet]") {
  Probe p;
  Task t;
  EngineOptions options = QuietOptions();
  options.quiet_sched = EngineOptions::QuietSched::kBatch;
  Engine engine(options);
  const ProgressThread& q = *engine.threads().at(0);
  REQUIRE(Eventually([&] { return q.sleeping(); }));
  // SCHED_BATCH needs no privilege: the thread runs under it, and the
  // calling thread (the application) keeps its own policy.
  CHECK(q.batch());
  CHECK(sched_getscheduler(0) == SCHED_OTHER);
  t.Init(&Record, &p, CpuSet::Single(q.core()));
  engine.EnterCall();
  engine.BeginBackground();
  REQUIRE(engine.Submit(t) == Status::kOk);
  engine.ExitCall();
  REQUIRE(Eventually([&] { return t.finished(); }));
  CHECK(p.runs == 1);
  CHECK(q.activations() >= 1);
  engine.EndBackground();
  REQUIRE(Eventually([&] { return q.sleeping(); }));
}

// An eventfd that a test thread writes: a transport announcing arrivals.
struct EventSource final : WakeupSource {
  int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  std::atomic<bool> finish{false};
  ~EventSource() override { close(efd); }
  int fd() const noexcept override { return efd; }
  bool Arm() noexcept override {  // armed unless an event is pending
    pollfd p{efd, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }
  void Announce() {
    const uint64_t one = 1;
    REQUIRE(write(efd, &one, sizeof one) == sizeof one);
  }
};

// The source's polling task: work when it consumed an event.
TaskResult ConsumeEvents(void* arg) noexcept {
  auto* s = static_cast<EventSource*>(arg);
  uint64_t v = 0;
  const bool event = read(s->efd, &v, sizeof v) == sizeof v;
  if (s->finish.load()) return TaskResult::kDone;
  return event ? TaskResult::kProgress : TaskResult::kIdle;
}

TEST_CASE("quiet progress, stream policy (the default): SCHED_BATCH while "
          "events stream, SCHED_OTHER again once the work is done",
          "[engine][quiet]") {
  EventSource src;  // outlives the engine
  Task t;
  EngineOptions options = QuietOptions();
  REQUIRE(options.quiet_sched == EngineOptions::QuietSched::kStream);
  Engine engine(options);
  engine.AddWakeupSource(&src);
  const ProgressThread& q = *engine.threads().at(0);
  REQUIRE(Eventually([&] { return q.sleeping(); }));
  CHECK_FALSE(q.batch());
  t.Init(&ConsumeEvents, &src, CpuSet::Single(q.core()),
         TaskOptions{.repeat = true, .name = "events"});
  engine.EnterCall();
  engine.BeginBackground();
  REQUIRE(engine.Submit(t) == Status::kOk);
  engine.ExitCall();
  // A stream: an event every 200 us (faster than a 1 Gbit/s link's
  // ~64 KiB every 0.5 ms), until the thread has switched or 10 s passed.
  std::atomic<bool> streaming{true};
  std::thread writer([&] {
    while (streaming.load()) {
      const uint64_t one = 1;
      (void)!write(src.efd, &one, sizeof one);
      std::this_thread::sleep_for(200us);
    }
  });
  const bool switched = Eventually([&] { return q.stream_switches() > 0; });
  streaming.store(false);
  writer.join();
  CHECK(switched);
  // The work done: the thread's activation ends under SCHED_OTHER (no
  // thread is left under SCHED_BATCH by a stream that stopped).
  src.finish.store(true);
  src.Announce();
  REQUIRE(Eventually([&] { return t.finished(); }));
  engine.EndBackground();
  CHECK(Eventually([&] {
    return q.sleeping() && sched_getscheduler(q.tid()) == SCHED_OTHER;
  }));
  engine.RemoveWakeupSource(&src);
}

TEST_CASE("quiet progress: an application that keeps calling in keeps the "
          "thread out of its way", "[engine][quiet]") {
  Probe p;
  Task t;
  // A period long enough that this thread's step out and back in (timed
  // below) fits in it even on a busy machine: the quiet thread gives the
  // application one period to come back before it runs anything.
  EngineOptions options = QuietOptions();
  options.quiet_period_us = 20000;
  Engine engine(options);
  const ProgressThread& q = *engine.threads().at(0);
  REQUIRE(Eventually([&] { return q.sleeping(); }));
  t.Init(&Record, &p, CpuSet::Single(q.core()));
  engine.EnterCall();
  engine.BeginBackground();
  REQUIRE(engine.Submit(t) == Status::kOk);
  // Out (wakes the thread: work pending, nobody inside) and at once back
  // in, to stay: the thread checks, sees the application inside, and
  // stays away (its checks are counted). If this thread was descheduled
  // for a whole period in between, the thread rightly ran the task: the
  // case is then not what it tests, and is skipped visibly.
  const auto out = std::chrono::steady_clock::now();
  engine.ExitCall();
  engine.EnterCall();
  const auto back = std::chrono::steady_clock::now();
  if (back - out >= std::chrono::microseconds(options.quiet_period_us)) {
    WARN("stepped out for a whole quiet period (busy machine): not checked");
    engine.ExitCall();
    REQUIRE(Eventually([&] { return t.finished(); }));
    engine.EndBackground();
    return;
  }
  REQUIRE(Eventually([&] { return q.skipped_ticks() >= 3; }));
  CHECK(p.runs == 0);
  CHECK(q.activations() == 0);
  CHECK(t.state() == TaskState::kQueued);
  engine.ExitCall();
  REQUIRE(Eventually([&] { return t.finished(); }));
  engine.EndBackground();
}

TEST_CASE("quiet progress: work begun with nobody inside wakes the thread",
          "[engine][quiet]") {
  Probe p;
  Task t;
  Engine engine(QuietOptions());
  const ProgressThread& q = *engine.threads().at(0);
  REQUIRE(Eventually([&] { return q.sleeping(); }));
  t.Init(&Record, &p, CpuSet::Single(q.core()));
  REQUIRE(engine.Submit(t) == Status::kOk);
  engine.BeginBackground();  // a C++ user that does not mark its calls
  REQUIRE(Eventually([&] { return t.finished(); }));
  CHECK(q.activations() >= 1);
  engine.EndBackground();
}

TEST_CASE("auto placement of one process on this machine", "[engine][auto]") {
  EngineOptions o = Options("synthetic:core:2 pu:1", "auto", -1);
  o.marks_calls = true;  // as nmad sets it
  o.local_size = 2;
  o.local_rank = 1;
  o.node_cpus = {CpuSet{0}, CpuSet{1}};
  Engine engine(o);
  CHECK(engine.app_core() == 1);
  REQUIRE(engine.threads().size() == 1);
  CHECK(engine.threads()[0]->mode() == ProgressThread::Mode::kQuiet);
  CHECK(engine.threads()[0]->core() == 1);
  CHECK(engine.timer_period_us() == 0);
  CHECK_THAT(engine.node_placement().why[1], Catch::Contains("quiet"));
  // Four cores: rank 1 gets free core 3, a normal progress thread.
  o.topology = "synthetic:core:4 pu:1";
  Engine wide(o);
  REQUIRE(wide.threads().size() == 1);
  CHECK(wide.threads()[0]->mode() == ProgressThread::Mode::kProgress);
  CHECK(wide.threads()[0]->core() == 3);
  CHECK(wide.quiet_thread() == nullptr);
  // Nothing marks the application's calls (the engine used alone): an
  // ordinary progress thread on the rank's core instead of quiet progress.
  {
    EngineOptions alone = o;
    alone.marks_calls = false;
    alone.topology = "synthetic:core:2 pu:1";
    Engine e(alone);
    REQUIRE(e.threads().size() == 1);
    CHECK(e.threads()[0]->mode() == ProgressThread::Mode::kProgress);
    CHECK(e.threads()[0]->core() == 1);
  }
  // The whole job on this node, no free core: no thread, no timer.
  o.topology = "synthetic:core:2 pu:1";
  o.job_size = 2;
  Engine local(o);
  CHECK(local.threads().empty());
  CHECK(local.timer_period_us() == 0);
  CHECK(local.progress_cores().empty());
  // RONDO_PROGRESS=none: the automatic timer runs at 200 us.
  o.progress = PlacementSpec::Parse("none");
  Engine timed(o);
  CHECK(timed.timer_period_us() == EngineOptions::kAutoTimerUs);
  REQUIRE(timed.threads().size() == 1);
  CHECK(timed.threads()[0]->mode() == ProgressThread::Mode::kTimer);
  // A node description that does not match the node is refused.
  o.node_cpus = {CpuSet{0}};
  CHECK_THROWS_WITH(Engine(o), Catch::Contains("RONDO_NODE_CPUS lists 1") &&
                                   Catch::Contains("RONDO_LOCAL_SIZE is 2"));
}

}  // namespace
}  // namespace rondo::engine
