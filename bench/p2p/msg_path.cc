// bench/p2p/msg_path: the cost of one message through nmad's core, in one
// process, on Google Benchmark: the edit-measure loop of the fast path
// (issue 17), with no launcher.
//
//   bazel run -c opt //bench/p2p:msg_path -- [--json FILE] [--quick]
//       [Google Benchmark flags, e.g. --benchmark_filter=ucx]
//
// One iteration = one eager message: a receive posted, the send posted, then
// both ends polled by this thread until both requests are done. So the time
// is the CPU cost of both sides of a message (no cross-core latency), which
// is what the fast path changes. Cases (JSON `case`):
//   msg_path:rondo:loopback:<bytes>  a one-rank Core sending to itself
//                                    (loopback driver: the whole core path,
//                                    no network library);
//   msg_path:rondo:ucx:<bytes>       two Cores in this process (ranks as
//                                    threads: InProcessBootstrap) over UCX
//                                    (shared memory between the two workers);
//   msg_path:rondo:shm:<bytes>       the same over rail 0's shared-memory
//                                    driver (NmadOptions::shm, drivers/shm);
//   msg_path:ucx:<bytes>             the peer: raw UCX between two workers of
//                                    this process, ucp_tag_send_nbx /
//                                    ucp_tag_recv_nbx (bench/p2p/raw_ucx.h),
//                                    the same polling loop;
//   msg_path:{rondo:ucx,ucx}:window64:8  a window of 64 receives then 64
//                                    sends, polled until all are done
//                                    (osu_mbw_mr's message rate): ns and
//                                    counters per message.
// Per case: median/min/p99 over repetitions of ns per message, and
// `allocs_per_msg` (heap allocations counted by //tests:alloc_counter),
// `cycles_per_msg` and `instructions_per_msg` (perf_event_open of this
// thread; absent where the kernel refuses). `ratio` on Rondo's UCX rows is
// its time over raw UCX's of the same size.
#include <benchmark/benchmark.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/report.h"
#include "bench/p2p/raw_ucx.h"
#include "drivers/bootstrap/in_process_bootstrap.h"
#include "drivers/bootstrap/singleton_bootstrap.h"
#include "engine/engine.h"
#include "nmad/core.h"
#include "tests/alloc_counter.h"

namespace rondo::bench {
namespace {

using engine::Status;
using nmad::Request;

// Cycles and instructions of the calling thread (perf_event_open), or
// nothing when the kernel refuses.
class ThreadPerf {
 public:
  ThreadPerf() {
    fd_[0] = Open(PERF_COUNT_HW_CPU_CYCLES, -1);
    fd_[1] = fd_[0] >= 0 ? Open(PERF_COUNT_HW_INSTRUCTIONS, fd_[0]) : -1;
  }
  ~ThreadPerf() {
    for (int fd : fd_)
      if (fd >= 0) close(fd);
  }
  bool ok() const { return fd_[0] >= 0 && fd_[1] >= 0; }
  void Start() {
    if (!ok()) return;
    ioctl(fd_[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(fd_[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  }
  // {cycles, instructions} since Start().
  std::pair<uint64_t, uint64_t> Stop() {
    if (!ok()) return {0, 0};
    ioctl(fd_[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    uint64_t c = 0, i = 0;
    if (read(fd_[0], &c, sizeof c) != sizeof c) c = 0;
    if (read(fd_[1], &i, sizeof i) != sizeof i) i = 0;
    return {c, i};
  }

 private:
  static int Open(uint64_t config, int group) {
    perf_event_attr a{};
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = config;
    a.disabled = group < 0 ? 1 : 0;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return static_cast<int>(
        syscall(SYS_perf_event_open, &a, 0, -1, group, 0));
  }
  int fd_[2] = {-1, -1};
};

// Runs `one_message` for the benchmark's iterations and sets the counters.
template <typename Fn>
void Measure(benchmark::State& state, Fn&& one_message) {
  for (int i = 0; i < 100; ++i) one_message();  // warm the pools
  ThreadPerf perf;
  const uint64_t a0 = testing::AllocCount();
  perf.Start();
  int64_t n = 0;
  for (auto _ : state) {
    one_message();
    ++n;
  }
  auto [cycles, instructions] = perf.Stop();
  const uint64_t allocs = testing::AllocCount() - a0;
  if (n == 0) return;
  if (testing::AllocCountingSupported())
    state.counters["allocs_per_msg"] = static_cast<double>(allocs) / n;
  if (perf.ok()) {
    state.counters["cycles_per_msg"] = static_cast<double>(cycles) / n;
    state.counters["instructions_per_msg"] =
        static_cast<double>(instructions) / n;
  }
}

std::unique_ptr<engine::Engine> QuietEngine() {
  // Progress only from this thread's polling: no progress thread, no timer
  // (the user's RONDO_* environment still wins).
  setenv("RONDO_PROGRESS", "none", 0);
  setenv("RONDO_TIMER_US", "0", 0);
  return std::make_unique<engine::Engine>();
}

void Fail(const char* what, Status s) {
  std::fprintf(stderr, "msg_path: %s: %s\n", what,
               std::string(engine::StatusName(s)).c_str());
  std::exit(1);
}

// A one-rank Core: messages to itself through the loopback rail.
struct Loopback {
  std::unique_ptr<engine::Engine> engine = QuietEngine();
  std::unique_ptr<nmad::Core> core;
  nmad::Session* session = nullptr;
  Loopback() {
    std::string why;
    auto c = nmad::Core::Create(
        *engine, std::make_unique<drivers::bootstrap::SingletonBootstrap>(),
        {}, &why);
    if (!c.ok()) {
      std::fprintf(stderr, "msg_path: loopback core: %s\n", why.c_str());
      std::exit(1);
    }
    core = std::move(c).value();
    session = core->OpenSession("msg_path", {}, &why).value();
  }
};

// Two Cores of one process over UCX, or (shm) over rail 0's shared-memory
// driver (RONDO_SHM=1: both threads are one node).
struct UcxPair {
  std::unique_ptr<engine::Engine> engine[2];
  std::unique_ptr<nmad::Core> core[2];
  nmad::Session* session[2] = {nullptr, nullptr};
  explicit UcxPair(bool shm) {
    nmad::NmadOptions options;
    options.shm = shm;
    auto group = drivers::bootstrap::InProcessBootstrap::MakeGroup(2);
    std::string why[2];
    std::thread t[2];
    for (int r = 0; r < 2; ++r) engine[r] = QuietEngine();
    for (int r = 0; r < 2; ++r)
      t[r] = std::thread([&, r] {
        auto c = nmad::Core::Create(*engine[r], std::move(group[r]), options,
                                    &why[r]);
        if (c.ok()) core[r] = std::move(c).value();
      });
    for (auto& th : t) th.join();
    for (int r = 0; r < 2; ++r) {
      if (!core[r]) {
        std::fprintf(stderr, "msg_path: ucx core %d: %s\n", r,
                     why[r].c_str());
        std::exit(1);
      }
      session[r] = core[r]->OpenSession("msg_path", {}, &why[r]).value();
    }
  }
  ~UcxPair() {
    // ~Core is collective (a barrier): both at once.
    std::thread t([&] { core[1].reset(); });
    core[0].reset();
    t.join();
  }
};

void BM_Loopback(benchmark::State& state) {
  static Loopback* lb = new Loopback;  // kept: a Core per process is enough
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> sbuf(n + 1, 7), rbuf(n + 1);
  Request sreq, rreq;
  Measure(state, [&] {
    if (Status s = lb->session->Irecv(0, 5, rbuf.data(), n, rreq);
        s != Status::kOk)
      Fail("Irecv", s);
    if (Status s = lb->session->Isend(0, 5, sbuf.data(), n, sreq);
        s != Status::kOk)
      Fail("Isend", s);
    while (!(sreq.done() && rreq.done())) lb->core->Progress();
  });
  if (rbuf[0] != sbuf[0] && n) Fail("loopback data", Status::kInternal);
}

template <bool kShm>
UcxPair* Pair() {
  static UcxPair* pair = new UcxPair(kShm);  // kept until exit (see main)
  return pair;
}

template <bool kShm>
void BM_RondoUcx(benchmark::State& state) {
  UcxPair& p = *Pair<kShm>();
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> sbuf(n + 1, 9), rbuf(n + 1);
  Request sreq, rreq;
  Measure(state, [&] {
    if (Status s = p.session[1]->Irecv(0, 5, rbuf.data(), n, rreq);
        s != Status::kOk)
      Fail("Irecv", s);
    if (Status s = p.session[0]->Isend(1, 5, sbuf.data(), n, sreq);
        s != Status::kOk)
      Fail("Isend", s);
    while (!(sreq.done() && rreq.done())) {
      p.core[0]->Progress();
      p.core[1]->Progress();
    }
  });
  if (n && rbuf[0] != sbuf[0]) Fail("ucx data", Status::kInternal);
}

// A window of 64 messages (osu_mbw_mr's): 64 receives posted, 64 sends,
// then both ends polled until all are done; one iteration = one window, the
// counters are per message.
constexpr int kWindow = 64;

template <bool kShm>
void BM_RondoUcxWindow(benchmark::State& state) {
  UcxPair& p = *Pair<kShm>();
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> sbuf(n + 1, 4);
  std::vector<std::vector<uint8_t>> rbuf(kWindow, std::vector<uint8_t>(n + 1));
  std::vector<Request> sreq(kWindow), rreq(kWindow);
  Measure(state, [&] {
    for (int i = 0; i < kWindow; ++i)
      if (Status s = p.session[1]->Irecv(0, 6, rbuf[i].data(), n, rreq[i]);
          s != Status::kOk)
        Fail("Irecv", s);
    for (int i = 0; i < kWindow; ++i)
      if (Status s = p.session[0]->Isend(1, 6, sbuf.data(), n, sreq[i]);
          s != Status::kOk)
        Fail("Isend", s);
    for (int i = 0; i < kWindow; ++i)
      while (!(sreq[i].done() && rreq[i].done())) {
        p.core[0]->Progress();
        p.core[1]->Progress();
      }
  });
  state.SetItemsProcessed(state.iterations() * kWindow);
}

struct RawPair {
  RawUcx a, b;
  RawPair() {
    a.Connect(b.Address());
    b.Connect(a.Address());
  }
};

void BM_RawUcx(benchmark::State& state) {
  static RawPair* raw = new RawPair;
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> sbuf(n + 1, 3), rbuf(n + 1);
  Measure(state, [&] {
    RawUcx::Handle r = raw->b.Irecv(rbuf.data(), n, 5);
    RawUcx::Handle s = raw->a.Isend(sbuf.data(), n, 5);
    while (!(raw->a.Done(s) & raw->b.Done(r))) {
      raw->a.Progress();
      raw->b.Progress();
    }
  });
}

void BM_RawUcxWindow(benchmark::State& state) {
  static RawPair* raw = new RawPair;
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> sbuf(n + 1, 3);
  std::vector<std::vector<uint8_t>> rbuf(kWindow, std::vector<uint8_t>(n + 1));
  std::vector<RawUcx::Handle> r(kWindow), sh(kWindow);
  Measure(state, [&] {
    for (int i = 0; i < kWindow; ++i) r[i] = raw->b.Irecv(rbuf[i].data(), n, 6);
    for (int i = 0; i < kWindow; ++i) sh[i] = raw->a.Isend(sbuf.data(), n, 6);
    for (int i = 0; i < kWindow; ++i)
      while (!(raw->a.Done(sh[i]) & raw->b.Done(r[i]))) {
        raw->a.Progress();
        raw->b.Progress();
      }
  });
  state.SetItemsProcessed(state.iterations() * kWindow);
}

// Remembers every repetition's time per message and counters.
class Collector : public benchmark::ConsoleReporter {
 public:
  struct Samples {
    std::vector<double> ns;
    std::map<std::string, std::vector<double>> counters;
  };
  std::map<std::string, Samples> runs;  // by benchmark name
  std::vector<std::string> order;

  void ReportRuns(const std::vector<Run>& reports) override {
    for (const Run& r : reports) {
      if (r.run_type != Run::RT_Iteration || r.iterations == 0) continue;
      const std::string name = r.run_name.str();
      if (!runs.count(name)) order.push_back(name);
      Samples& s = runs[name];
      // ns per message (a window iteration carries kWindow messages).
      const bool window = name.find("Window") != std::string::npos;
      s.ns.push_back(r.GetAdjustedRealTime() / (window ? kWindow : 1));
      for (const auto& [k, c] : r.counters)
        if (k != "items_per_second")
          s.counters[k].push_back(c.value / (window ? kWindow : 1));
    }
    ConsoleReporter::ReportRuns(reports);
  }
};

// "BM_RondoUcx/8/repeats:5" -> "msg_path:rondo:ucx:8".
std::string CaseName(const std::string& run) {
  const size_t slash = run.find('/');
  const std::string fn = run.substr(0, slash);
  std::string bytes = slash == std::string::npos ? "0" : run.substr(slash + 1);
  bytes = bytes.substr(0, bytes.find('/'));
  if (fn == "BM_Loopback") return "msg_path:rondo:loopback:" + bytes;
  if (fn == "BM_RondoUcx") return "msg_path:rondo:ucx:" + bytes;
  if (fn == "BM_RondoUcxWindow") return "msg_path:rondo:ucx:window64:" + bytes;
  if (fn == "BM_RondoShm") return "msg_path:rondo:shm:" + bytes;
  if (fn == "BM_RondoShmWindow") return "msg_path:rondo:shm:window64:" + bytes;
  if (fn == "BM_RawUcxWindow") return "msg_path:ucx:window64:" + bytes;
  return "msg_path:ucx:" + bytes;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  using namespace rondo::bench;
  std::string json;
  bool quick = false;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else if (a.rfind("--json=", 0) == 0) {
      json = a.substr(7);
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "bench/p2p/msg_path: one eager message through nmad's core, both "
          "ends polled by one thread (loopback, UCX in-process, raw UCX)\n"
          "usage: msg_path [--json FILE] [--quick] [--benchmark_* flags]\n");
      return 0;
    } else if (a.rfind("--benchmark_", 0) == 0) {
      rest.push_back(argv[i]);
    } else {
      std::fprintf(stderr,
                   "msg_path: unknown argument '%s' (allowed: --json FILE, "
                   "--quick, --benchmark_* flags)\n",
                   argv[i]);
      return 2;
    }
  }
  const int reps = quick ? 2 : 7;
  const double min_time = quick ? 0.01 : 0.2;
  for (int64_t bytes : {8, 64, 1024}) {
    benchmark::RegisterBenchmark("BM_Loopback", BM_Loopback)
        ->Arg(bytes)->Repetitions(reps)->MinTime(min_time);
    benchmark::RegisterBenchmark("BM_RondoUcx", BM_RondoUcx<false>)
        ->Arg(bytes)->Repetitions(reps)->MinTime(min_time);
    benchmark::RegisterBenchmark("BM_RondoShm", BM_RondoUcx<true>)
        ->Arg(bytes)->Repetitions(reps)->MinTime(min_time);
    benchmark::RegisterBenchmark("BM_RawUcx", BM_RawUcx)
        ->Arg(bytes)->Repetitions(reps)->MinTime(min_time);
  }
  benchmark::RegisterBenchmark("BM_RondoUcxWindow", BM_RondoUcxWindow<false>)
      ->Arg(8)->Repetitions(reps)->MinTime(min_time);
  benchmark::RegisterBenchmark("BM_RondoShmWindow", BM_RondoUcxWindow<true>)
      ->Arg(8)->Repetitions(reps)->MinTime(min_time);
  benchmark::RegisterBenchmark("BM_RawUcxWindow", BM_RawUcxWindow)
      ->Arg(8)->Repetitions(reps)->MinTime(min_time);
  int bargc = static_cast<int>(rest.size());
  benchmark::Initialize(&bargc, rest.data());
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);

  Report report("msg_path");
  std::map<std::string, double> raw_median;
  for (const std::string& run : collector.order) {
    const std::string name = CaseName(run);
    if (name.rfind("msg_path:ucx:", 0) == 0)
      raw_median[name.substr(13)] = Median(collector.runs[run].ns);
  }
  for (const std::string& run : collector.order) {
    auto& s = collector.runs[run];
    CaseResult c;
    c.name = CaseName(run);
    c.stats = Summarize(s.ns);
    c.extra = nlohmann::json::object();
    char note[160] = "";
    int len = 0;
    for (const char* k :
         {"allocs_per_msg", "cycles_per_msg", "instructions_per_msg"}) {
      auto it = s.counters.find(k);
      if (it == s.counters.end()) continue;
      const double v = Median(it->second);
      c.extra[k] = v;
      len += std::snprintf(note + len, sizeof note - len, "%s%s %.1f",
                           len ? ", " : "", k, v);
    }
    const std::string bytes = c.name.substr(c.name.rfind(':') + 1);
    // Rondo's rows over UCX and over shm, against raw UCX's of that size.
    std::string key;
    for (const char* prefix : {"msg_path:rondo:ucx:", "msg_path:rondo:shm:"})
      if (c.name.rfind(prefix, 0) == 0) key = c.name.substr(19);
    if (!key.empty() && raw_median.count(key)) {
      const double ratio = c.stats.median_ns / raw_median[key];
      c.extra["ratio"] = ratio;
      std::snprintf(note + len, sizeof note - len, "%s%.2fx raw UCX",
                    len ? ", " : "", ratio);
    }
    c.extra["bytes"] = std::stoll(bytes);
    c.note = note;
    report.Add(std::move(c));
  }
  std::printf("\nns per message (both ends, one thread):\n");
  report.PrintTable();
  if (!json.empty()) {
    report.WriteJson(json, {{"allocation_counting",
                             rondo::testing::AllocCountingSupported()}});
    std::printf("JSON written to %s\n", json.c_str());
  }
  // The Cores are left to process exit: their destructors are collective
  // and the benchmark's static instances have no owner thread to run them.
  std::fflush(stdout);
  _exit(0);
}
