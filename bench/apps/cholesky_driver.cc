// bench/apps/cholesky: a synthetic task flow with the tiled Cholesky
// factorization's communication pattern (bench/apps/cholesky.c: POTRF tile to
// the TRSMs of its panel, each TRSM tile to one SYRK and its GEMMs, 2D
// block-cyclic tiles, fake kernels of fixed duration), total time with one
// MPI_Isend per consumer rank ("naive") and with MPIX_Dynamic_bcast
// ("dynamic"), on the emulated cluster of bench/cluster (one rank per
// network namespace, rate-limited links, UCX over TCP), as in Section 5.2
// of the dynamic-broadcast paper. See docs/cholesky.md.
//
//   bazel run -c opt //bench/apps:cholesky -- [--json FILE] [--ranks 9]
//       [--grid PxQ] [--rate 500mbit] [--tiles 8,16] [--tile-doubles 256]
//       [--potrf-us 1000] [--trsm-us 3000] [--syrk-us 3000]
//       [--gemm-us 6000] [--reps 3] [--warmup 1] [--workers 1]
//       [--executor ready] [--queue 10ms]
//       [--idle-poll-us 100] [--progress P] [--local] [--timeout S]
//
// --local runs the same job on this machine without the emulated cluster
// (shared memory: labelled so). The cluster needs root and network
// namespaces (bench/cluster/cluster.sh check); without them the job fails
// and the benchmark exits 1.
//
// Output: a table (T, mode, median and min total time, dynamic / naive,
// broadcasts, plain sends, recipients merged into broadcasts, idle share),
// and with --json FILE the bench/common/report.h schema: cases
// "cholesky:<naive|dynamic>:<T>:<ranks>" with median_ns, min_ns, p99_ns,
// tiles, ranks, grid, broadcasts, sends, bcast_recipients, transfers,
// list_sizes, delivery_ms, errors, idle_fraction, critical_path_ns,
// max_work_ns, and ratio_vs_naive (dynamic). "top/last ms": the mean
// delivery of a tile with two or more recipients to its most urgent and to
// its last recipient (bench/apps/cholesky.c). Exit status 1 if the job failed
// or a tile was routed wrong.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/common/plot.h"
#include "bench/common/report.h"

namespace rondo::bench {
namespace {

using nlohmann::json;


// The first three fields of /proc/loadavg ("" if unreadable).
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return in ? a + " " + b + " " + c : "";
}

struct Args {
  std::string json_path, rate = "500mbit", tiles = "8,16", grid, progress;
  std::string queue;  // CLUSTER_TBF_LATENCY, "" for cluster.sh's default
  std::string executor = "ready";
  int ranks = 9, tile_doubles = 256, reps = 3, warmup = 1, timeout = 1800;
  long potrf_us = 1000, trsm_us = 3000, syrk_us = 3000, gemm_us = 6000;
  int idle_poll_us = 100, workers = 1;
  bool local = false;
};

// The job: cholesky_rondo under rondo-run, on the emulated cluster unless
// --local. The same construction as bench/coll/bcast.
std::string JobCommand(const char* argv0, const Args& a,
                       const std::string& out) {
  const std::string rondo_run = FindProgram(argv0, "drivers/bootstrap/rondo-run");
  const std::string prog = FindProgram(argv0, "bench/apps/cholesky_rondo");
  std::ostringstream job;
  std::string wrapper;
  if (!a.local) {
    // cluster.sh creates hosts PREFIX-0..N-1, runs the job, tears down.
    const std::string prefix = "rch" + std::to_string(getpid() % 100000);
    wrapper = "ip netns exec " + prefix + "-{rank}";
    if (!a.queue.empty())
      job << "env CLUSTER_TBF_LATENCY=" << ShellQuote(a.queue) << " ";
    job << "bash " << ShellQuote(FindProgram(argv0, "bench/cluster/cluster.sh"))
        << " run " << a.ranks << " --rate " << ShellQuote(a.rate) << " --prefix "
        << prefix << " -- ";
  }
  job << "env UCX_MEM_MMAP_HOOK_MODE=none ";
  if (!a.local) job << "UCX_TLS=tcp UCX_NET_DEVICES=rc0 ";
  if (!a.progress.empty()) job << "RONDO_PROGRESS=" << ShellQuote(a.progress) << " ";
  job << ShellQuote(rondo_run) << " -n " << a.ranks << " --timeout " << a.timeout;
  if (!wrapper.empty()) job << " --rank-wrapper " << ShellQuote(wrapper);
  job << " " << ShellQuote(prog) << " --tiles " << ShellQuote(a.tiles)
      << " --tile-doubles " << a.tile_doubles << " --potrf-us " << a.potrf_us
      << " --trsm-us " << a.trsm_us << " --syrk-us " << a.syrk_us
      << " --gemm-us " << a.gemm_us << " --reps " << a.reps << " --warmup "
      << a.warmup << " --workers " << a.workers << " --executor "
      << ShellQuote(a.executor) << " --idle-poll-us " << a.idle_poll_us;
  if (!a.grid.empty()) job << " --grid " << ShellQuote(a.grid);
  job << " --out " << ShellQuote(out);
  return job.str();
}

int Run(const char* argv0, const Args& a) {
  const std::string out =
      (std::filesystem::temp_directory_path() /
       ("rondo_cholesky_" + std::to_string(getpid()) + ".jsonl"))
          .string();
  const std::string job = JobCommand(argv0, a, out);
  std::printf("cholesky: %s\n", job.c_str());
  std::fflush(stdout);
  // Other work on this machine shows in the times: record the load.
  const std::string load_before = LoadAverage();
  const int rc = std::system(job.c_str());
  const std::string load_after = LoadAverage();
  std::ifstream in(out);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(json::parse(line));
  std::filesystem::remove(out);
  if (lines.empty()) {
    std::fprintf(stderr, "cholesky: the job failed (status %d, no results)\n",
                 rc);
    return 1;
  }

  // tiles -> mode -> the job's line, and the summary of its samples.
  std::map<int, std::map<std::string, json>> cases;
  std::map<int, std::map<std::string, Stats>> stats;
  long errors = 0;
  for (const json& j : lines) {
    if (j.value("type", "") != "case") continue;
    std::vector<double> s;
    for (const auto& v : j["samples_ns"]) s.push_back(v.get<double>());
    const int t = j["tiles"];
    const std::string mode = j["mode"];
    cases[t][mode] = j;
    stats[t][mode] = Summarize(s);
    errors += j["errors"].get<long>();
  }

  Report report("cholesky");
  std::printf("\n%4s %-8s %10s %9s %9s %10s %6s %7s %8s %5s %15s\n", "T",
              "mode", "median ms", "min ms", "dyn/naive", "broadcasts", "sends",
              "merged", "max list", "idle", "top/last ms");
  for (const auto& [t, by_mode] : cases) {
    for (const std::string mode : {"naive", "dynamic"}) {
      if (!by_mode.count(mode)) continue;
      const json& j = by_mode.at(mode);
      const Stats& st = stats[t][mode];
      std::vector<double> idle;
      for (const auto& v : j["idle_ns"]) idle.push_back(v.get<double>());
      const double idle_fraction =
          st.median_ns > 0 ? Summarize(idle).median_ns / st.median_ns : 0;
      int max_list = 0;
      for (const auto& [n, count] : j["list_sizes"].items())
        max_list = std::max(max_list, std::stoi(n));
      json extra = {{"tiles", t},
                    {"ranks", j["ranks"]},
                    {"grid", j["grid"]},
                    {"tile_doubles", j["tile_doubles"]},
                    {"tile_bytes", j["tile_bytes"]},
                    {"tasks", j["tasks"]},
                    {"executor", j["executor"]},
                    {"workers", j["workers"]},
                    {"kernel_us", j["kernel_us"]},
                    {"broadcasts", j["broadcasts"]},
                    {"sends", j["sends"]},
                    {"bcast_recipients", j["bcast_recipients"]},
                    {"transfers", j["transfers"]},
                    {"list_sizes", j["list_sizes"]},
                    {"delivery_ms", j["delivery_ms"]},
                    {"errors", j["errors"]},
                    {"idle_fraction", idle_fraction},
                    {"critical_path_ns", j["critical_path_ns"]},
                    {"max_work_ns", j["max_work_ns"]},
                    {"samples_ns", j["samples_ns"]},
                    {"emulated_cluster", !a.local}};
      double ratio = -1;
      if (mode == "dynamic" && stats[t].count("naive")) {
        ratio = st.median_ns / stats[t]["naive"].median_ns;
        extra["ratio_vs_naive"] = ratio;
      }
      const std::string name = "cholesky:" + mode + ":" + std::to_string(t) +
                               ":" + std::to_string(j["ranks"].get<int>());
      report.Add({name, st, "", extra});
      char r[16] = "";
      if (ratio > 0) std::snprintf(r, sizeof(r), "%.3f", ratio);
      const json& d = j["delivery_ms"];
      std::printf(
          "%4d %-8s %10.1f %9.1f %9s %10ld %6ld %7ld %8d %4.0f%% "
          "%7.1f/%-7.1f\n",
          t, mode.c_str(), st.median_ns / 1e6, st.min_ns / 1e6, r,
          j["broadcasts"].get<long>(), j["sends"].get<long>(),
          j["bcast_recipients"].get<long>(), max_list, 100 * idle_fraction,
          d["top"].get<double>(), d["last"].get<double>());
    }
    const json& any = by_mode.begin()->second;
    std::string sizes;
    for (const auto& [n, count] : any["list_sizes"].items())
      sizes += " " + n + ":" + std::to_string(count.get<long>());
    std::printf(
        "     (T = %d: %d tasks, %zu-byte tiles, grid %s, %d "
        "worker(s); lower bound without communication %.1f ms;\n"
        "      produced tiles by remote recipients n:count%s)\n",
        t, any["tasks"].get<int>(), any["tile_bytes"].get<size_t>(),
        any["grid"].get<std::string>().c_str(), any["workers"].get<int>(),
        std::max(any["critical_path_ns"].get<double>(),
                 any["max_work_ns"].get<double>()) /
            1e6,
        sizes.c_str());
  }
  if (errors)
    std::printf("\nROUTING ERRORS: %ld checks found wrong tile contents\n",
                errors);
  else
    std::printf(
        "\nevery received tile and task input checked: no routing "
        "errors\n");
  if (a.local)
    std::printf("(--local: shared memory on this machine, not a network)\n");
  if (!a.json_path.empty()) {
    json machine = {{"emulated_cluster", !a.local},
                    {"link_rate", a.local ? "" : a.rate},
                    {"link_queue", a.local           ? ""
                                   : a.queue.empty() ? "10ms"
                                                     : a.queue},
                    {"ranks", a.ranks},
                    {"command", job},
                    {"loadavg_before", load_before},
                    {"loadavg_after", load_after}};
    report.WriteJson(UserPath(a.json_path), machine);
    std::printf("wrote %s\n", UserPath(a.json_path).c_str());
  }
  if (rc != 0) {
    std::fprintf(stderr, "cholesky: the job exited with status %d\n", rc);
    return 1;
  }
  return errors ? 1 : 0;
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args a;
  CLI::App app{
      "bench/apps/cholesky: tiled-Cholesky task flow, naive sends vs dynamic "
      "broadcasts"};
  app.add_option("--json", a.json_path, "write the report here");
  app.add_option("--ranks", a.ranks, "ranks (one per emulated host)")
      ->check(CLI::Range(2, 250));
  app.add_option("--grid", a.grid,
                 "process grid PxQ (P * Q = ranks; default the most square)");
  app.add_option("--rate", a.rate, "link rate of the emulated cluster (tc)");
  app.add_option("--queue", a.queue,
                 "queue bound of the emulated links (CLUSTER_TBF_LATENCY, "
                 "e.g. 100ms; default cluster.sh's 10ms)");
  app.add_option("--tiles", a.tiles,
                 "tiles per matrix side T, or a comma list (one case each)");
  app.add_option("--tile-doubles", a.tile_doubles, "b: a tile is b x b doubles")
      ->check(CLI::Range(2, 4096));
  app.add_option("--potrf-us", a.potrf_us, "POTRF kernel duration")
      ->check(CLI::Range(0L, 10000000L));
  app.add_option("--trsm-us", a.trsm_us, "TRSM kernel duration")
      ->check(CLI::Range(0L, 10000000L));
  app.add_option("--syrk-us", a.syrk_us, "SYRK kernel duration")
      ->check(CLI::Range(0L, 10000000L));
  app.add_option("--gemm-us", a.gemm_us, "GEMM kernel duration")
      ->check(CLI::Range(0L, 10000000L));
  app.add_option("--reps", a.reps, "measured runs per mode")
      ->check(CLI::Range(1, 10000));
  app.add_option("--warmup", a.warmup, "unmeasured runs per mode")
      ->check(CLI::Range(0, 10000));
  app.add_option("--workers", a.workers,
                 "kernels a rank runs at once (the cores of a node)")
      ->check(CLI::Range(1, 64));
  app.add_option("--executor", a.executor,
                 "ready (most urgent ready task) or inorder (flow order)")
      ->check(CLI::IsMember({"ready", "inorder"}));
  app.add_option("--idle-poll-us", a.idle_poll_us,
                 "an idle rank's polling period (0: spin in MPI_Waitsome)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--progress", a.progress,
                 "RONDO_PROGRESS of the ranks (default: the engine's)");
  app.add_option("--timeout", a.timeout, "seconds before the job is killed")
      ->check(CLI::Range(10, 86400));
  app.add_flag("--local", a.local,
               "run on this machine without the emulated cluster");
  CLI11_PARSE(app, argc, argv);
  // The program checks these too, but a typo should not cost a cluster.
  if (!std::regex_match(a.tiles, std::regex("[0-9]+(,[0-9]+)*"))) {
    std::fprintf(stderr,
                 "cholesky: --tiles: '%s' is not allowed; expected "
                 "a tile count or a comma list (8,16)\n",
                 a.tiles.c_str());
    return 2;
  }
  int p = 0, q = 0;
  char extra;
  if (!a.grid.empty() &&
      (std::sscanf(a.grid.c_str(), "%dx%d%c", &p, &q, &extra) != 2 || p < 1 ||
       q < 1 || p * q != a.ranks)) {
    std::fprintf(stderr,
                 "cholesky: --grid: '%s' is not allowed; expected "
                 "PxQ with P * Q = %d (--ranks)\n",
                 a.grid.c_str(), a.ranks);
    return 2;
  }
  try {
    return rondo::bench::Run(argv[0], a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cholesky: %s\n", e.what());
    return 1;
  }
}
