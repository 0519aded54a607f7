// bench/engine/task_latency: Tables I and II of the PIOMan paper on this
// machine.
//
// For every queue of the tree: the time for core 0 to submit an empty task,
// have it run where the queue allows, and notice its completion (min, median,
// p99, and which cores ran it). Also the same-core case, K threads contending
// on the global queue, pick-up by a progress thread that had gone to sleep,
// pick-up by the timer trigger alone, the impact of an idle engine on a
// compute loop (the overlap paper's MPI impact ratio), and, in the same run,
// the physical limit (a cache-line round trip between two cores) and peers
// doing the same hand-off: a mutex+deque queue with a worker thread (spinning
// and condition-variable variants), a boost::lockfree queue, and oneTBB's
// task_group.
//
//   bazel run -c opt //bench/engine:task_latency -- [--iterations N]
//       [--json FILE] [--quick] [--only PREFIX]
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/lockfree/queue.hpp>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <thread>
#include <vector>

#include "bench/common/report.h"
#include "engine/engine.h"
#include "queues/cpu_relax.h"

namespace rondo::bench {
namespace {

using engine::Engine;
using engine::EngineOptions;
using engine::PlacementSpec;
using engine::Status;
using engine::Task;
using engine::TaskResult;
using queues::CpuRelax;
using queues::QueueKind;

struct Args {
  int iterations = 20000;
  std::string json;
  bool quick = false;
  std::string only;
};

engine::TaskResult Empty(void*) noexcept { return TaskResult::kDone; }

std::string RanOnNote(const std::map<int, int64_t>& ran_on) {
  std::string s = "ran on";
  for (auto [core, n] : ran_on)
    s += " core" + std::to_string(core) + ":" + std::to_string(n);
  return s;
}

nlohmann::json RanOnJson(const std::map<int, int64_t>& ran_on) {
  nlohmann::json j = nlohmann::json::object();
  for (auto [core, n] : ran_on) j[std::to_string(core)] = n;
  return j;
}

// An engine whose progress threads (on every core but 0) stay awake, so the
// measured hand-off is the queue's, not a wake-up's.
EngineOptions ActiveEngine(QueueKind kind) {
  EngineOptions o;
  o.queue = kind;
  int ncores = static_cast<int>(std::thread::hardware_concurrency());
  o.progress = ncores > 1
                   ? PlacementSpec::Parse("cores:1-" + std::to_string(ncores - 1))
                   : PlacementSpec::Parse("none");
  o.timer_period_us = 0;
  o.idle_spin_us = 1000000;  // never sleep during the measurement
  o.wait_spin_us = 1000000;
  return o;
}

// Submit to `node` from core 0, Wait for completion; `batch` hand-offs per
// sample.
CaseResult MeasureQueue(Engine& e, int node, const std::string& name,
                        int iterations, int batch) {
  const auto& topo = e.topology();
  Task t(&Empty, nullptr, topo.node(node).cpuset,
         engine::TaskOptions{.name = "empty"});
  std::map<int, int64_t> ran_on;
  for (int i = 0; i < 1000; ++i) {  // warm-up
    (void)e.SubmitToNode(t, node);
    (void)e.Wait(t);
  }
  std::vector<double> samples;
  samples.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    int64_t t0 = NowNs();
    for (int b = 0; b < batch; ++b) {
      if (e.SubmitToNode(t, node) != Status::kOk ||
          e.Wait(t) != Status::kOk) {
        std::fprintf(stderr, "task_latency: submit/wait failed\n");
        std::exit(1);
      }
      ++ran_on[t.last_core()];
    }
    samples.push_back(static_cast<double>(NowNs() - t0) / batch);
  }
  CaseResult r{name, Summarize(samples), RanOnNote(ran_on), {}};
  r.extra = {{"ran_on", RanOnJson(ran_on)},
             {"queue", std::string(queues::QueueKindName(
                           e.options().queue))},
             {"level", topo.node(node).name},
             {"batch", batch}};
  return r;
}

void EngineQueueCases(Report& report, const Args& args, QueueKind kind,
                      const std::string& prefix) {
  Engine e(ActiveEngine(kind));
  e.BindCurrentThread(0);
  const auto& topo = e.topology();
  // same_core: submit + run + complete on core 0, 64 per sample (the clock
  // costs ~20 ns, more than the operation).
  {
    CaseResult r = MeasureQueue(e, topo.CoreNode(0), prefix + "same_core",
                                args.iterations, 64);
    r.note = "core 0 submits, runs and completes; " + r.note;
    report.Add(r);
  }
  for (int node = 0; node < static_cast<int>(topo.Nodes().size()); ++node) {
    const auto& n = topo.node(node);
    std::string name = node == 0 ? "global" : n.name;
    report.Add(MeasureQueue(e, node, prefix + name, args.iterations, 16));
  }
}

// K threads (round-robin over the cores) submit to the global queue and wait.
void GlobalContended(Report& report, const Args& args, int k) {
  Engine e(ActiveEngine(QueueKind::kSpin));
  const int ncores = e.topology().NumCores();
  const int per_thread = std::max(1000, args.iterations / k);
  std::vector<std::vector<double>> samples(k);
  std::vector<std::map<int, int64_t>> ran(k);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < k; ++i) {
    threads.emplace_back([&, i] {
      e.BindCurrentThread(i % ncores);
      Task t(&Empty, nullptr, e.topology().AllCores());
      ready.fetch_add(1);
      while (ready.load() < k) CpuRelax();
      for (int it = 0; it < per_thread; ++it) {
        int64_t t0 = NowNs();
        (void)e.SubmitToNode(t, 0);
        (void)e.Wait(t);
        samples[i].push_back(static_cast<double>(NowNs() - t0));
        ++ran[i][t.last_core()];
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  std::map<int, int64_t> ran_on;
  for (int i = 0; i < k; ++i) {
    all.insert(all.end(), samples[i].begin(), samples[i].end());
    for (auto [c, n] : ran[i]) ran_on[c] += n;
  }
  CaseResult r{"global_contended:" + std::to_string(k), Summarize(all),
               std::to_string(k) + " threads" +
                   (k + 1 > ncores ? " (oversubscribed) " : " ") +
                   RanOnNote(ran_on),
               {{"threads", k}, {"ran_on", RanOnJson(ran_on)}}};
  report.Add(r);
}

// Runs `body` on a thread bound to `core` of the real machine.
std::thread OnCore(const topology::Topology& topo, int core,
                   std::function<void()> body) {
  return std::thread([&topo, core, body = std::move(body)] {
    topo.BindThreadToCore(core);
    body();
  });
}

CaseResult CachelineRoundtrip(const topology::Topology& topo, int iterations) {
  alignas(64) std::atomic<int64_t> ping{0};
  alignas(64) std::atomic<int64_t> pong{0};
  constexpr int kBatch = 16;
  const int64_t total = int64_t{iterations} * kBatch + 1000;
  std::thread peer = OnCore(topo, 1, [&] {
    for (int64_t i = 1; i <= total; ++i) {
      while (ping.load(std::memory_order_acquire) != i) CpuRelax();
      pong.store(i, std::memory_order_release);
    }
  });
  int64_t seq = 0;
  auto round = [&] {
    ++seq;
    ping.store(seq, std::memory_order_release);
    while (pong.load(std::memory_order_acquire) != seq) CpuRelax();
  };
  for (int i = 0; i < 1000; ++i) round();
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    int64_t t0 = NowNs();
    for (int b = 0; b < kBatch; ++b) round();
    samples.push_back(static_cast<double>(NowNs() - t0) / kBatch);
  }
  peer.join();
  return {"cacheline_roundtrip", Summarize(samples),
          "core 0 <-> core 1, the physical limit of a hand-off",
          {{"batch", kBatch}}};
}

// True when the Linux thread `tid` of this process is asleep in the kernel.
bool ThreadAsleep(int tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() &&
         line[paren + 2] == 'S';
}

struct Job {
  std::atomic<bool> done{false};
};

// A hand-off to a worker thread on core 1 through `push`/`pop`.
template <typename Push, typename Pop>
CaseResult PeerHandOff(const topology::Topology& topo, const std::string& name,
                       const std::string& note, int iterations, Push push,
                       Pop pop) {
  std::atomic<bool> stop{false};
  std::thread worker = OnCore(topo, 1, [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (Job* j = pop()) {
        j->done.store(true, std::memory_order_release);
      } else {
        CpuRelax();
      }
    }
  });
  constexpr int kBatch = 16;
  Job job;
  auto one = [&] {
    job.done.store(false, std::memory_order_relaxed);
    push(&job);
    while (!job.done.load(std::memory_order_acquire)) CpuRelax();
  };
  for (int i = 0; i < 1000; ++i) one();
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    int64_t t0 = NowNs();
    for (int b = 0; b < kBatch; ++b) one();
    samples.push_back(static_cast<double>(NowNs() - t0) / kBatch);
  }
  stop.store(true);
  worker.join();
  return {name, Summarize(samples), note, {{"batch", kBatch}}};
}

void Peers(Report& report, const topology::Topology& topo,
           const Args& args) {
  {
    std::mutex mu;
    std::deque<Job*> dq;
    report.Add(PeerHandOff(
        topo, "peer:mutex_deque",
        "std::mutex + std::deque, worker spins on core 1", args.iterations,
        [&](Job* j) {
          std::lock_guard<std::mutex> l(mu);
          dq.push_back(j);
        },
        [&]() -> Job* {
          std::lock_guard<std::mutex> l(mu);
          if (dq.empty()) return nullptr;
          Job* j = dq.front();
          dq.pop_front();
          return j;
        }));
  }
  {
    boost::lockfree::queue<Job*> q(64);
    report.Add(PeerHandOff(
        topo, "peer:boost_lockfree",
        "boost::lockfree::queue, worker spins on core 1", args.iterations,
        [&](Job* j) { q.push(j); },
        [&]() -> Job* {
          Job* j = nullptr;
          return q.pop(j) ? j : nullptr;
        }));
  }
  {
    // The classic thread-pool hand-off: the worker sleeps on a condition
    // variable. Each hand-off starts once the worker is asleep in the kernel,
    // as in pickup_after_sleep, so this is the platform's wake-up floor.
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Job*> dq;
    bool stop = false;
    std::atomic<int> tid{0};
    std::thread worker = OnCore(topo, 1, [&] {
      tid.store(static_cast<int>(gettid()));
      std::unique_lock<std::mutex> l(mu);
      for (;;) {
        cv.wait(l, [&] { return stop || !dq.empty(); });
        if (stop) return;
        Job* j = dq.front();
        dq.pop_front();
        j->done.store(true, std::memory_order_release);
      }
    });
    Job job;
    const int n = std::max(100, args.iterations / 20);
    std::vector<double> samples;
    for (int i = 0; i < n + 20; ++i) {
      while (tid.load() == 0 || !ThreadAsleep(tid.load())) sched_yield();
      job.done.store(false);
      int64_t t0 = NowNs();
      {
        std::lock_guard<std::mutex> l(mu);
        dq.push_back(&job);
      }
      cv.notify_one();
      while (!job.done.load(std::memory_order_acquire)) CpuRelax();
      if (i >= 20) samples.push_back(static_cast<double>(NowNs() - t0));
    }
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_one();
    worker.join();
    report.Add({"peer:condvar_after_sleep", Summarize(samples),
                "std::condition_variable worker asleep in the kernel on core "
                "1 (cf. pickup_after_sleep)",
                {}});
  }
  {
    // oneTBB: run + wait; the waiting thread may run the task itself. TBB
    // sizes its worker pool from the affinity of the thread that first uses
    // it, so it starts on a thread allowed on every core, which then binds
    // itself to core 0 like the other cases' submitter.
    std::map<int, int64_t> ran_on;
    std::vector<double> samples;
    std::thread tbb_thread([&] {
    topo.BindThreadToCpuSet(topo.AllCores());
    tbb::task_arena arena(static_cast<int>(topo.NumCores()));
    arena.initialize();
    topo.BindThreadToCore(0);
    arena.execute([&] {
      tbb::task_group tg;
      std::atomic<int> cpu{-1};
      for (int i = 0; i < 1000; ++i) {
        tg.run([] {});
        tg.wait();
      }
      constexpr int kBatch = 16;
      for (int i = 0; i < args.iterations; ++i) {
        int64_t t0 = NowNs();
        for (int b = 0; b < kBatch; ++b) {
          tg.run([&cpu] { cpu.store(sched_getcpu(), std::memory_order_relaxed); });
          tg.wait();
          ++ran_on[topo.CoreOfPu(cpu.load(std::memory_order_relaxed))];
        }
        samples.push_back(static_cast<double>(NowNs() - t0) / kBatch);
      }
    });
    });
    tbb_thread.join();
    report.Add({"peer:tbb", Summarize(samples),
                "tbb::task_group run+wait; " + RanOnNote(ran_on),
                {{"ran_on", RanOnJson(ran_on)}}});
  }
}

// Core 0 submits a task pinned to core 1 once the only thread that can run it
// sleeps in the kernel; measures until core 0 sees it completed.
CaseResult PickupAfterSleep(const std::string& name, const std::string& note,
                            EngineOptions o, int iterations) {
  Engine e(o);
  e.BindCurrentThread(0);
  engine::ProgressThread& pt = *e.threads().at(0);
  Task t(&Empty, nullptr, {pt.core()});
  std::vector<double> samples;
  std::map<int, int64_t> ran_on;
  for (int i = 0; i < iterations + 20; ++i) {
    while (!(pt.sleeping() && pt.tid() != 0 && ThreadAsleep(pt.tid())))
      sched_yield();
    int64_t t0 = NowNs();
    (void)e.Submit(t);
    while (!t.finished()) CpuRelax();
    if (i >= 20) samples.push_back(static_cast<double>(NowNs() - t0));
    ++ran_on[t.last_core()];
  }
  return {name, Summarize(samples), note + "; " + RanOnNote(ran_on),
          {{"ran_on", RanOnJson(ran_on)}}};
}

// A fixed single-core compute loop (a dependent floating-point chain); the
// result goes to a volatile sink so the compiler keeps the loop.
volatile double compute_sink = 0.0;
void Compute(int64_t n) {
  double x = compute_sink + 1.0;
  for (int64_t i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  compute_sink = x;
}

// Median compute time on core 0 with an idle engine of `o` alive, divided by
// the median with no engine; runs alternate, so drift hits both sides.
CaseResult IdleImpact(const std::string& name, const std::string& note,
                      const EngineOptions& o, int pairs,
                      const topology::Topology& topo) {
  topo.BindThreadToCore(0);
  // Calibrate ~20 ms of work.
  int64_t n = 1 << 20;
  for (;;) {
    int64_t t0 = NowNs();
    Compute(n);
    if (NowNs() - t0 > 20000000 || n > (int64_t{1} << 34)) break;
    n *= 2;
  }
  std::vector<double> base, with;
  for (int p = 0; p < pairs; ++p) {
    int64_t t0 = NowNs();
    Compute(n);
    base.push_back(static_cast<double>(NowNs() - t0));
    {
      Engine e(o);
      for (const auto& th : e.threads())
        while (!(th->sleeping() && th->tid() != 0 && ThreadAsleep(th->tid())))
          sched_yield();
      int64_t t1 = NowNs();
      Compute(n);
      with.push_back(static_cast<double>(NowNs() - t1));
    }
  }
  Stats b = Summarize(base);
  Stats w = Summarize(with);
  double ratio = w.median_ns / b.median_ns;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "ratio %.4f (%.2f ms alone); ", ratio,
                b.median_ns / 1e6);
  return {name, w, buf + note,
          {{"ratio", ratio},
           {"baseline_median_ns", b.median_ns},
           {"pairs", pairs}}};
}

bool Want(const Args& args, const std::string& name) {
  return args.only.empty() || name.rfind(args.only, 0) == 0;
}

void Target(const char* what, bool ok, const std::string& detail) {
  std::printf("  [%s] %s: %s\n", ok ? "met" : "MISSED", what, detail.c_str());
}

void PrintTargets(const Report& r) {
  auto med = [&](const char* c) {
    const CaseResult* x = r.Find(c);
    return x ? x->stats.median_ns : -1.0;
  };
  char buf[256];
  std::printf("\nTargets (this machine; the regression against a reference "
              "commit is tools/perf_compare.py's):\n");
  if (med("same_core") >= 0) {
    std::snprintf(buf, sizeof(buf), "median %.1f ns", med("same_core"));
    Target("same-core submit+run+complete <= 50 ns", med("same_core") <= 50,
           buf);
  }
  if (med("core:1") >= 0 && med("cacheline_roundtrip") > 0) {
    double ratio = med("core:1") / med("cacheline_roundtrip");
    std::snprintf(buf, sizeof(buf), "core:1 %.1f ns = %.2fx round trip %.1f ns",
                  med("core:1"), ratio, med("cacheline_roundtrip"));
    Target("cross-core <= 1.2x cache-line round trip", ratio <= 1.2, buf);
  }
  // Peers are compared with the case that does the same hand-off: TBB's
  // waiting thread runs the task itself (same core); the queue peers hand it
  // to a worker spinning on core 1 (cross-core).
  if (med("same_core") > 0 && med("peer:tbb") > 0) {
    std::snprintf(buf, sizeof(buf), "same_core %.1f ns vs peer:tbb %.1f ns",
                  med("same_core"), med("peer:tbb"));
    Target("same-core <= 0.7x the best same-core peer (oneTBB run+wait)",
           med("same_core") <= 0.7 * med("peer:tbb"), buf);
  }
  double best = -1;
  std::string best_name;
  for (const char* p : {"peer:mutex_deque", "peer:boost_lockfree"}) {
    double m = med(p);
    if (m > 0 && (best < 0 || m < best)) {
      best = m;
      best_name = p;
    }
  }
  if (best > 0 && med("core:1") > 0) {
    std::snprintf(buf, sizeof(buf), "core:1 %.1f ns vs %s %.1f ns",
                  med("core:1"), best_name.c_str(), best);
    Target("cross-core no worse than the best cross-core peer",
           med("core:1") <= best, buf);
  }
  if (med("pickup_after_sleep") > 0 && med("peer:condvar_after_sleep") > 0) {
    std::snprintf(buf, sizeof(buf), "%.1f us vs %.1f us",
                  med("pickup_after_sleep") / 1e3,
                  med("peer:condvar_after_sleep") / 1e3);
    Target("pick-up after sleep no worse than a sleeping condvar worker",
           med("pickup_after_sleep") <= med("peer:condvar_after_sleep"), buf);
  }
  if (const CaseResult* s = r.Find("pickup_after_sleep")) {
    std::snprintf(buf, sizeof(buf), "median %.1f us, p99 %.1f us",
                  s->stats.median_ns / 1e3, s->stats.p99_ns / 1e3);
    Target("pick-up after sleep <= 20 us median, <= 200 us p99",
           s->stats.median_ns <= 20000 && s->stats.p99_ns <= 200000, buf);
  }
  if (const CaseResult* s = r.Find("idle_impact")) {
    double ratio = s->extra.value("ratio", 0.0);
    std::snprintf(buf, sizeof(buf), "ratio %.4f", ratio);
    Target("idle engine changes a compute loop by <= 1%",
           ratio <= 1.01 && ratio >= 0.99, buf);
  }
}

int Run(const Args& args) {
  Report report("task_latency");
  auto topo = topology::Topology::Load("native");
  const int ncores = topo->NumCores();
  if (ncores < 2) {
    std::fprintf(stderr,
                 "task_latency: needs at least 2 cores (found %d)\n", ncores);
    return 2;
  }
  std::printf("task_latency: %d cores, %d samples per case%s\n", ncores,
              args.iterations, args.quick ? " (quick)" : "");
  if (Want(args, "same_core") || Want(args, "core") || Want(args, "global") ||
      Want(args, "l3") || Want(args, "numa") || Want(args, "package")) {
    EngineQueueCases(report, args, QueueKind::kSpin, "");
  }
  if (Want(args, "lockfree/")) {
    EngineQueueCases(report, args, QueueKind::kLockFree, "lockfree/");
  }
  if (Want(args, "global_contended")) {
    for (int k : {1, 2, 4}) GlobalContended(report, args, k);
  }
  if (Want(args, "cacheline_roundtrip"))
    report.Add(CachelineRoundtrip(*topo, args.iterations));
  if (Want(args, "peer")) Peers(report, *topo, args);
  const int wake_iterations = std::max(100, args.iterations / 20);
  if (Want(args, "pickup_after_sleep")) {
    EngineOptions o;
    o.progress = PlacementSpec::Parse("cores:1");
    o.timer_period_us = 0;
    o.idle_spin_us = 0;
    report.Add(PickupAfterSleep("pickup_after_sleep",
                                "progress thread on core 1 asleep in the "
                                "kernel when the task is submitted",
                                o, wake_iterations));
  }
  if (Want(args, "timer_only")) {
    EngineOptions o;
    o.progress = PlacementSpec::Parse("none");
    o.timer_cores = "1";
    report.Add(PickupAfterSleep(
        "timer_only",
        "no progress thread; timer thread on core 1, period " +
            std::to_string(o.timer_period_us >= 0
                               ? o.timer_period_us
                               : EngineOptions::kAutoTimerUs) +
            " us",
        o, std::max(50, wake_iterations / 4)));
  }
  const int pairs = args.quick ? 3 : 21;
  if (Want(args, "idle_impact")) {
    EngineOptions o;  // the defaults: progress thread on a free core, timer
    report.Add(IdleImpact("idle_impact",
                          "default engine (progress thread on core 1, timer "
                          "on core 0), idle",
                          o, pairs, *topo));
    EngineOptions bind;
    bind.progress = PlacementSpec::Parse("bind");
    report.Add(IdleImpact("idle_impact:bind",
                          "progress thread on the compute core, idle", bind,
                          pairs, *topo));
  }
  report.PrintTable();
  PrintTargets(report);
  if (!args.json.empty()) {
    report.WriteJson(args.json);
    std::printf("\nJSON written to %s\n", args.json.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args args;
  CLI::App app{"Rondo task latency per queue level (PIOMan Tables I and II)"};
  app.add_option("--iterations,-n", args.iterations,
                 "samples per case (each of 16 or 64 hand-offs where noted)")
      ->check(CLI::Range(10, 100000000));
  app.add_option("--json", args.json, "write results as JSON to this file");
  app.add_flag("--quick", args.quick, "few samples (smoke test)");
  app.add_option("--only", args.only,
                 "run only cases whose name starts with this prefix "
                 "(e.g. idle_impact, peer, lockfree/)");
  bool idle_impact = false;
  app.add_flag("--idle-impact", idle_impact,
               "run only the idle-impact cases (same as --only idle_impact)");
  CLI11_PARSE(app, argc, argv);
  if (idle_impact) args.only = "idle_impact";
  if (args.quick) args.iterations = std::min(args.iterations, 200);
  try {
    return rondo::bench::Run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "task_latency: %s\n", e.what());
    return 1;
  }
}
