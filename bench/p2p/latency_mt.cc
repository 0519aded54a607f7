// bench/p2p/latency_mt: the OSU latency_mt pattern over nmad (PIOMan paper,
// Figure 4): rank 0 runs K sender threads, rank 1 K receiver threads;
// thread i of rank 0 ping-pongs with thread i of rank 1 on its own tag
// (Session::Send then Session::Recv; the receiver Recv then Send), all K
// pairs at once on one Core and one session (MPI_THREAD_MULTIPLE).
//
//   bazel run -c opt //bench/p2p:latency_mt -- [--threads 1,2,4] [--json FILE]
//       [--quick] [--iterations N] [--progress none|...] [--timer-us US]
//
// Started without a launcher, the binary re-executes itself as
// `rondo-run -n 2 --bind core <itself> ARGS` (rondo-run is a data
// dependency found in the runfiles, see bench/p2p/nmad_bench.h). Each rank is
// bound to one core (rank r on core r), and its threads inherit that
// binding, so with K > 1 the K threads of a rank share one core: what is
// measured is nmad's behaviour under thread contention and time sharing
// (Core::Wait yields the core after 64 empty polls), as on any machine with
// more threads than cores.
//
// Cases `latency_mt:<K>:<bytes>` for 8 B and 4 KiB: one-way latency (half a
// round trip), samples of all K sender threads pooled; `mean_ns` is OSU's
// figure. Engine: RONDO_PROGRESS=none, RONDO_TIMER_US=0 unless flags say
// otherwise.
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/report.h"
#include "bench/p2p/nmad_bench.h"
#include "queues/cpu_relax.h"

namespace rondo::bench {
namespace {

using engine::Status;

struct Args {
  std::string threads = "1,2,4";
  int iterations = 2000;
  std::string json;
  bool quick = false;
  std::string progress = "none";
  int timer_us = 0;
};

void Check(Status s, const char* what) {
  if (s != Status::kOk) {
    std::fprintf(stderr, "latency_mt: %s failed: %s\n", what,
                 std::string(engine::StatusName(s)).c_str());
    std::exit(1);
  }
}

std::vector<int> ParseList(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    int k = std::atoi(item.c_str());
    if (k < 1 || k > 64) {
      std::fprintf(stderr, "latency_mt: bad thread count '%s' (1..64)\n",
                   item.c_str());
      std::exit(2);
    }
    out.push_back(k);
  }
  return out;
}

// All K pairs ping-pong `iterations` times (after a warm-up); returns rank
// 0's half round trips, pooled.
std::vector<double> RunThreads(RankSetup& r, int k, size_t bytes,
                               int iterations) {
  const int warmup = std::max(10, iterations / 10);
  std::vector<std::vector<double>> samples(k);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  const int peer = 1 - r.rank;
  for (int i = 0; i < k; ++i) {
    threads.emplace_back([&, i] {
      std::vector<uint8_t> buf(std::max<size_t>(bytes, 1), uint8_t(i));
      const int tag = 100 + i;
      samples[i].reserve(iterations);
      ready.fetch_add(1);
      while (ready.load() < k) queues::CpuRelax();
      for (int it = 0; it < warmup + iterations; ++it) {
        if (r.rank == 0) {
          int64_t t0 = NowNs();
          Check(r.session->Send(peer, tag, buf.data(), bytes), "Send");
          Check(r.session->Recv(peer, tag, buf.data(), bytes), "Recv");
          if (it >= warmup)
            samples[i].push_back(static_cast<double>(NowNs() - t0) / 2);
        } else {
          Check(r.session->Recv(peer, tag, buf.data(), bytes), "Recv");
          Check(r.session->Send(peer, tag, buf.data(), bytes), "Send");
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  for (auto& s : samples) all.insert(all.end(), s.begin(), s.end());
  return all;
}

int Run(const Args& args) {
  setenv("RONDO_PROGRESS", args.progress.c_str(), 1);
  setenv("RONDO_TIMER_US", std::to_string(args.timer_us).c_str(), 1);
  RankSetup r = SetupRank("latency_mt");
  const std::vector<int> ks = ParseList(args.threads);
  const int iterations =
      args.quick ? std::min(args.iterations, 100) : args.iterations;
  Report report("latency_mt");
  if (r.rank == 0)
    std::printf("latency_mt: 2 ranks (rank 0 on core %d), threads %s, %d "
                "round trips per thread%s\n",
                r.engine->app_core(), args.threads.c_str(), iterations,
                args.quick ? " (quick)" : "");
  for (int k : ks) {
    for (size_t bytes : {size_t{8}, size_t{4096}}) {
      Check(r.core->Barrier(), "barrier");
      std::vector<double> s = RunThreads(r, k, bytes, iterations);
      if (r.rank != 0) continue;
      CaseResult c;
      c.name = "latency_mt:" + std::to_string(k) + ":" + std::to_string(bytes);
      c.stats = Summarize(s);
      char note[128];
      std::snprintf(note, sizeof note,
                    "%d thread pair%s, %zu B, mean %.0f ns (OSU figure)", k,
                    k > 1 ? "s" : "", bytes, c.stats.mean_ns);
      c.note = note;
      c.extra = {{"threads", k},
                 {"bytes", bytes},
                 {"iterations_per_thread", iterations}};
      report.Add(c);
    }
  }
  Check(r.core->Barrier(), "barrier");
  if (r.rank == 0) {
    report.PrintTable();
    WriteUserJson(report, args.json,
                  {{"ranks", 2},
                   {"RONDO_PROGRESS", args.progress},
                   {"RONDO_TIMER_US", args.timer_us}});
  }
  return 0;
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args args;
  CLI::App app{"OSU latency_mt over nmad: K thread pairs ping-pong (2 ranks)"};
  app.add_option("--threads", args.threads,
                 "comma-separated thread counts K (default 1,2,4)");
  app.add_option("--iterations,-n", args.iterations,
                 "round trips per thread and case (default 2000)")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--json", args.json, "write results as JSON to this file");
  app.add_flag("--quick", args.quick, "few samples (smoke test)");
  app.add_option("--progress", args.progress,
                 "RONDO_PROGRESS for both ranks (default none)");
  app.add_option("--timer-us", args.timer_us,
                 "RONDO_TIMER_US for both ranks (default 0: off)")
      ->check(CLI::Range(0, 1000000));
  CLI11_PARSE(app, argc, argv);
  if (!rondo::bench::UnderLauncher())
    return rondo::bench::ExecUnderLauncher(argc, argv);
  try {
    return rondo::bench::Run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "latency_mt: %s\n", e.what());
    return 1;
  }
}
