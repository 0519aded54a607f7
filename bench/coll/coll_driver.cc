// bench/coll: latency of MPI collectives in Rondo's MadMPI against Open MPI
// 4.1.4, on the same machine in the same run, and the Iallreduce overlap
// case. See docs/coll_benchmarks.md.
//
//   bazel run -c opt //bench/coll:coll -- [--json FILE] [--quick]
//       [--ranks 2,3,4,8] [--impls rondo,openmpi] [--sizes 4,64,...]
//       [--collectives all|latency|LIST] [--bind core|none]
//       [--overlap-env RONDO_PROGRESS=none,RONDO_TIMER_US=50] ...
//
// The measuring program is bench/coll/coll.c, built twice from the same source:
// coll_rondo (against //nmad/mpi:mpi) and coll_openmpi (against
// @openmpi//:mpi). For each rank count, and for each implementation in
// turn, this driver starts two jobs, each writing JSON lines to a private
// temporary file:
//   * the latency job: every collective and size (bench/coll/coll.c's banner);
//   * the overlap job (collective iallreduce_overlap), a separate job so
//     that Rondo's engine can get its progress configuration: the driver's
//     environment plus --overlap-env (default RONDO_PROGRESS=none,
//     RONDO_TIMER_US=50: the timer trigger on each rank's core runs the
//     collective's tasks every 50 us while the rank computes; with two
//     ranks on two cores no core is free for a progress thread, and a
//     progress thread on the rank's own core measured worse, see
//     docs/coll_benchmarks.md).
// Rondo's jobs run under rondo-run (`rondo-run -n N --bind core --timeout
// S coll_rondo ...`) with the driver's environment passed through, so
// RONDO_* variables configure the engine of the latency job. Open MPI's
// jobs run under mpirun with its defaults (`--map-by core --bind-to
// core:overload-allowed`, the same round-robin binding as rondo-run's),
// started as drivers/bootstrap/pmix_mpirun_test.sh does: a fresh TMPDIR
// removed afterwards, plm isolated, oversubscription allowed, HOME set; and
// a fresh directory for the shared-memory segments (bench/common/jobs.h builds
// both command lines and environments).
//
// The programs (coll_openmpi, coll_rondo, rondo-run: data dependencies)
// are found in the runfiles, else next to this binary in
// bazel-out/<cfg>/bin. An implementation whose program is missing is
// skipped with a message unless --impls names it (then it is an error).
//
// Output: a table (collective, ranks, bytes, Rondo median, Open MPI median,
// ratio), the overlap table, and with --json FILE the schema of
// bench/common/report.h: cases "coll:<impl>:<collective>:<ranks>:<bytes>"
// (barrier: bytes 0) with median_ns/min_ns/p99_ns, Rondo's cases with
// ratio_vs_openmpi (Rondo median / Open MPI median), overlap cases
// "coll:<impl>:iallreduce_overlap:<ranks>:<bytes>" with overhead_ratio,
// t_comm_ns, t_comp_ns, t_total_ns; skipped and failed cases in top-level
// "skipped" and "failed" lists. Exit status 1 if a job or a check failed.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/common/jobs.h"
#include "bench/common/plot.h"
#include "bench/common/report.h"

namespace rondo::bench {
namespace {

using nlohmann::json;

// The collectives in table order (bench/coll/coll.c's names).
const char* const kCollectives[] = {
    "barrier",   "bcast",    "reduce",
    "allreduce", "gather",   "scatter",
    "allgather", "alltoall", "reduce_scatter_block",
    "scan",      "ibcast",   "iallreduce"};
constexpr const char* kOverlap = "iallreduce_overlap";

struct Args {
  std::string json;
  bool quick = false;
  std::string ranks;  // empty: 2,3,4,8 (--quick: 2)
  std::string impls;  // empty: rondo,openmpi, skipping missing programs
  std::string sizes;  // empty: coll's default (--quick: 4,1024,65536)
  std::string collectives = "all";
  std::string bind = "core";
  std::string overlap_env = "RONDO_PROGRESS=none,RONDO_TIMER_US=50";
  std::string mpirun = "/usr/bin/mpirun";
  int timeout_s = 0;  // 0: 900 (--quick: 120) per job
  double time_per_case_ms = 0, mem_cap_mb = 0, compute_factor = 0;
  int min_reps = 0, max_reps = 0, overlap_reps = 0;
  bool verbose = false;
};

std::string Human(double ns) {
  char buf[32];
  if (ns <= 0) return "-";
  if (ns < 1e4)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (ns < 1e7)
    std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  return buf;
}

std::string HumanBytes(int64_t b) {
  char buf[32];
  if (b >= (1 << 20) && b % (1 << 20) == 0)
    std::snprintf(buf, sizeof buf, "%lld MiB", (long long)(b >> 20));
  else if (b >= 1024 && b % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%lld KiB", (long long)(b >> 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", (long long)b);
  return buf;
}

std::string CaseName(const std::string& impl, const std::string& coll,
                     int ranks, int64_t bytes) {
  return "coll:" + impl + ":" + coll + ":" + std::to_string(ranks) + ":" +
         std::to_string(bytes);
}

struct Impl {
  std::string name;     // rondo | openmpi
  std::string program;  // coll_rondo | coll_openmpi
  std::string library;  // MPI_Get_library_version, from the job line
};

class Driver {
 public:
  Driver(const char* argv0, Args args) : argv0_(argv0), a_(std::move(args)) {}

  int Run() {
    if (!Setup()) return 2;
    char tmpl[] = "/tmp/rondo-coll.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    parts_dir_ = tmpl;
    for (int n : ranks_) {
      for (Impl& impl : impls_) {
        if (!latency_.empty()) Job(impl, n, false);
        if (overlap_) Job(impl, n, true);
      }
    }
    std::filesystem::remove_all(parts_dir_);
    PrintTables();
    if (!a_.json.empty()) WriteJson();
    if (job_failures_ + check_failures_ > 0) {
      std::fprintf(stderr,
                   "\ncoll: %d job(s) failed, %d case(s) failed their "
                   "check\n",
                   job_failures_, check_failures_);
      return 1;
    }
    return 0;
  }

 private:
  // Resolves programs, rank counts and collectives; false on bad input.
  bool Setup() {
    for (const std::string& r :
         Split(a_.ranks.empty() ? (a_.quick ? "2" : "2,3,4,8") : a_.ranks)) {
      char* end = nullptr;
      long n = std::strtol(r.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 256) {
        std::fprintf(stderr,
                     "coll: --ranks: '%s' is not allowed; expected "
                     "integers in 1..256 such as 2,3,4,8\n",
                     r.c_str());
        return false;
      }
      ranks_.push_back(static_cast<int>(n));
    }
    if (a_.quick && a_.sizes.empty()) a_.sizes = "4,1024,65536";
    for (const std::string& c : Split(a_.collectives)) {
      if (c == "all" || c == "latency") {
        for (const char* k : kCollectives) latency_.push_back(k);
        overlap_ = overlap_ || c == "all";
      } else if (c == kOverlap) {
        overlap_ = true;
      } else if (std::find_if(std::begin(kCollectives), std::end(kCollectives),
                              [&](const char* k) { return c == k; }) !=
                 std::end(kCollectives)) {
        latency_.push_back(c);
      } else {
        std::fprintf(stderr,
                     "coll: --collectives: '%s' is not allowed; "
                     "expected all, latency, %s or collectives among:",
                     c.c_str(), kOverlap);
        for (const char* k : kCollectives) std::fprintf(stderr, " %s", k);
        std::fprintf(stderr, "\n");
        return false;
      }
    }
    for (const std::string& kv : Split(a_.overlap_env)) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr,
                     "coll: --overlap-env: '%s' is not allowed; "
                     "expected NAME=VALUE[,NAME=VALUE...]\n",
                     kv.c_str());
        return false;
      }
      overlap_env_[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    const bool explicit_impls = !a_.impls.empty();
    for (const std::string& name :
         Split(explicit_impls ? a_.impls : "rondo,openmpi")) {
      if (name != "rondo" && name != "openmpi") {
        std::fprintf(stderr,
                     "coll: --impls: '%s' is not allowed; expected "
                     "rondo and/or openmpi\n",
                     name.c_str());
        return false;
      }
      std::string missing;
      const std::string prog =
          FindExecutable(argv0_, "bench/coll/coll_" + name, &missing);
      if (prog.empty()) {
        if (name == "rondo")
          missing +=
              "; build it with `bazel build -c opt //bench/coll:coll_rondo`"
              " (needs //nmad/mpi:mpi)";
      } else if (name == "rondo") {
        rondo_run_ =
            FindExecutable(argv0_, "drivers/bootstrap/rondo-run", &missing);
      } else if (!Executable(a_.mpirun)) {
        missing = a_.mpirun + " not found (package openmpi-bin)";
      }
      if (!missing.empty()) {
        std::fprintf(stderr, "coll: %s %s: %s\n",
                     explicit_impls ? "cannot run" : "skipping", name.c_str(),
                     missing.c_str());
        if (explicit_impls) return false;
        not_run_[name] = missing;
        continue;
      }
      impls_.push_back({name, prog, ""});
    }
    if (impls_.empty()) {
      std::fprintf(stderr, "coll: no implementation to run\n");
      return false;
    }
    return true;
  }

  // The arguments of bench/coll/coll.c common to every job.
  std::vector<std::string> CollArgs(const Impl& impl, bool overlap,
                                    const std::string& out) const {
    std::vector<std::string> v = {impl.program, "--impl", impl.name, "--out",
                                  out};
    v.push_back("--collectives");
    v.push_back(overlap ? kOverlap : Join(latency_, ","));
    if (a_.quick) v.push_back("--quick");
    if (!a_.verbose) v.push_back("--quiet");
    auto opt = [&](const char* name, double value) {
      if (value <= 0) return;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", value);
      v.push_back(name);
      v.push_back(buf);
    };
    if (!a_.sizes.empty()) {
      v.push_back("--sizes");
      v.push_back(a_.sizes);
    }
    opt("--time-per-case-ms", a_.time_per_case_ms);
    opt("--min-reps", a_.min_reps);
    opt("--max-reps", a_.max_reps);
    opt("--mem-cap-mb", a_.mem_cap_mb);
    opt("--overlap-reps", a_.overlap_reps);
    opt("--compute-factor", a_.compute_factor);
    return v;
  }

  int Timeout() const {
    return a_.timeout_s > 0 ? a_.timeout_s : a_.quick ? 120 : 900;
  }

  void Job(Impl& impl, int ranks, bool overlap) {
    const std::string out = parts_dir_ + "/" + impl.name + "." +
                            std::to_string(ranks) +
                            (overlap ? ".overlap" : "") + ".jsonl";
    const std::vector<std::string> coll = CollArgs(impl, overlap, out);
    JobSpec spec;
    spec.ranks = ranks;
    spec.bind = a_.bind;
    spec.timeout_s = Timeout();
    spec.program = coll[0];
    spec.args.assign(coll.begin() + 1, coll.end());
    if (impl.name == "rondo") {
      spec.launcher = Launcher::kRondoRun;
      spec.launcher_path = rondo_run_;
      if (overlap) spec.env = overlap_env_;
    } else {
      spec.launcher = Launcher::kMpirun;
      spec.launcher_path = a_.mpirun;
    }
    launchers_[impl.name] = LauncherDescription(spec.launcher, a_.bind);
    std::printf("coll: %s, %d ranks, %s ...\n", impl.name.c_str(), ranks,
                overlap ? "overlap" : "latency");
    if (a_.verbose) std::printf("  %s\n", Join(JobCommand(spec)).c_str());
    std::fflush(stdout);
    const int rc = RunMpiJob(spec);
    const int cases = Collect(impl, out, overlap);
    if (rc == 3) {
      // bench/coll/coll.c's exit status for a failed check (already counted).
    } else if (rc != 0 || cases == 0) {
      std::fprintf(stderr,
                   "coll: %s job with %d ranks failed (exit %d, %d "
                   "case(s) written)\n",
                   impl.name.c_str(), ranks, rc, cases);
      ++job_failures_;
      failed_.push_back({{"impl", impl.name},
                         {"ranks", ranks},
                         {"job", overlap ? "overlap" : "latency"},
                         {"reason", "exit status " + std::to_string(rc)}});
    }
  }

  // Reads a job's JSON lines; returns the number of lines read after the
  // job line.
  int Collect(Impl& impl, const std::string& path, bool overlap) {
    int n = 0;
    for (json& j : ReadJsonLines(path, "coll")) {
      const std::string type = j.value("type", "");
      if (type == "job") {
        if (impl.library.empty()) impl.library = j.value("library", "");
        timing_ = j.value("timing", timing_);
        continue;
      }
      ++n;
      j.erase("type");
      if (overlap && impl.name == "rondo") j["env"] = overlap_env_;
      if (type == "skip") {
        skipped_.push_back(j);
      } else if (type == "fail") {
        ++check_failures_;
        failed_.push_back(j);
      } else if (type == "case") {
        const std::string name =
            CaseName(j["impl"], j["collective"], j["ranks"], j["bytes"]);
        cases_[name] = j;
        order_.push_back(name);
      }
    }
    return n;
  }

  const json* Find(const std::string& impl, const std::string& coll, int ranks,
                   int64_t bytes) const {
    auto it = cases_.find(CaseName(impl, coll, ranks, bytes));
    return it == cases_.end() ? nullptr : &it->second;
  }

  static double Median(const json* j) {
    return j ? j->value("median_ns", 0.0) : 0.0;
  }

  void PrintTables() const {
    // Latency: one row per (collective, ranks, bytes) seen in any impl.
    std::set<std::tuple<int, int, int64_t>> rows;
    for (const auto& [name, j] : cases_) {
      const std::string coll = j["collective"];
      auto it = std::find_if(std::begin(kCollectives), std::end(kCollectives),
                             [&](const char* k) { return coll == k; });
      if (it == std::end(kCollectives)) continue;
      rows.insert({static_cast<int>(it - std::begin(kCollectives)),
                   j["ranks"].get<int>(), j["bytes"].get<int64_t>()});
    }
    const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    bool oversubscribed = false;
    std::printf("\n%-22s %5s %9s %13s %13s %8s\n", "collective", "ranks",
                "bytes", "rondo median", "openmpi med.", "ratio");
    std::printf("%s\n", std::string(76, '-').c_str());
    for (const auto& [c, n, b] : rows) {
      const double r = Median(Find("rondo", kCollectives[c], n, b));
      const double o = Median(Find("openmpi", kCollectives[c], n, b));
      char ratio[16] = "-";
      if (r > 0 && o > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r / o);
      std::printf("%-22s %4d%s %9s %13s %13s %8s\n", kCollectives[c], n,
                  n > cores ? "*" : " ", c == 0 ? "-" : HumanBytes(b).c_str(),
                  Human(r).c_str(), Human(o).c_str(), ratio);
      oversubscribed = oversubscribed || n > cores;
    }
    if (oversubscribed)
      std::printf(
          "* more ranks than the %d processors: ranks share cores "
          "and the figures include the scheduler's time slicing; a "
          "median can even fall below the 2-rank one (work done while "
          "a rank waited for a CPU): span_median_ns in the JSON bounds "
          "it from above (docs/coll_benchmarks.md)\n",
          cores);
    // Overlap.
    bool any = false;
    for (const auto& [name, j] : cases_) {
      if (j["collective"] != kOverlap) continue;
      if (!any)
        std::printf("\n%-8s %5s %9s %11s %11s %11s %9s\n", "overlap", "ranks",
                    "bytes", "t_comm", "t_comp", "t_total", "overhead");
      any = true;
      std::printf("%-8s %4d%s %9s %11s %11s %11s %9.2f\n",
                  j["impl"].get<std::string>().c_str(), j["ranks"].get<int>(),
                  j["ranks"].get<int>() > cores ? "*" : " ",
                  HumanBytes(j["bytes"].get<int64_t>()).c_str(),
                  Human(j.value("t_comm_ns", 0.0)).c_str(),
                  Human(j.value("t_comp_ns", 0.0)).c_str(),
                  Human(j.value("t_total_ns", 0.0)).c_str(),
                  j.value("overhead_ratio", 0.0));
    }
    if (any)
      std::printf(
          "(overhead ratio: 0 = the Iallreduce hidden behind the "
          "computation, 1 = serialized; Rondo with %s)\n",
          a_.overlap_env.c_str());
    for (const auto& j : skipped_)
      std::printf("skipped: %s %s, %d ranks, %s: %s\n",
                  j.value("impl", "").c_str(),
                  j.value("collective", "").c_str(), j.value("ranks", 0),
                  HumanBytes(j.value("bytes", int64_t{0})).c_str(),
                  j.value("reason", "").c_str());
    for (const auto& [name, reason] : not_run_)
      std::printf("not run: %s: %s\n", name.c_str(), reason.c_str());
    std::fflush(stdout);
  }

  void WriteJson() const {
    Report report("coll");
    for (const std::string& name : order_) {
      const json& j = cases_.at(name);
      CaseResult c;
      c.name = name;
      c.stats.median_ns = j.value("median_ns", 0.0);
      c.stats.min_ns = j.value("min_ns", 0.0);
      c.stats.p99_ns = j.value("p99_ns", 0.0);
      c.stats.max_ns = j.value("max_ns", 0.0);
      c.stats.mean_ns = j.value("mean_ns", 0.0);
      c.stats.samples = j.value("samples", int64_t{0});
      c.extra = j;
      for (const char* k :
           {"median_ns", "min_ns", "p99_ns", "max_ns", "mean_ns", "samples"})
        c.extra.erase(k);
      const std::string coll = j["collective"];
      if (j["impl"] == "rondo" && coll != kOverlap) {
        const double o = Median(Find("openmpi", coll, j["ranks"], j["bytes"]));
        if (o > 0) c.extra["ratio_vs_openmpi"] = c.stats.median_ns / o;
      }
      report.Add(std::move(c));
    }
    json impls = json::object();
    for (const Impl& impl : impls_) {
      json d = {
          {"library", impl.library},
          {"program", "bench/coll/coll_" + impl.name},
          {"launcher", launchers_.count(impl.name) ? launchers_.at(impl.name)
                                                   : std::string()}};
      if (impl.name == "rondo") {
        json env = json::object();
        for (const auto& [k, v] : Environment())
          if (k.rfind("RONDO_", 0) == 0) env[k] = v;
        d["env"] = env;  // the latency jobs' RONDO_* (others: defaults)
        d["overlap_env"] = overlap_env_;
      } else {
        d["env"] = LauncherEnvironment(Launcher::kMpirun);
      }
      impls[impl.name] = d;
    }
    json machine = {{"ranks", ranks_},     {"bind", a_.bind},
                    {"timing", timing_},   {"impls", impls},
                    {"not_run", not_run_}, {"quick", a_.quick}};
    json doc = report.ToJson(machine);
    doc["skipped"] = skipped_;
    doc["failed"] = failed_;
    const std::string path = UserPath(a_.json);
    std::ofstream out(path);
    out << doc.dump(2) << '\n';
    if (!out) throw std::runtime_error("cannot write JSON to '" + path + "'");
    std::printf("\nJSON written to %s\n", path.c_str());
  }

  const char* argv0_;
  Args a_;
  std::vector<int> ranks_;
  std::vector<std::string> latency_;
  bool overlap_ = false;
  std::map<std::string, std::string> overlap_env_;
  std::vector<Impl> impls_;
  std::map<std::string, std::string> not_run_;
  std::map<std::string, std::string> launchers_;
  std::string rondo_run_;
  std::string parts_dir_;
  std::string timing_;
  std::map<std::string, json> cases_;
  std::vector<std::string> order_;
  std::vector<json> skipped_, failed_;
  int job_failures_ = 0, check_failures_ = 0;
};

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args a;
  CLI::App app{
      "MPI collective latency and Iallreduce overlap: Rondo's "
      "MadMPI against Open MPI (docs/coll_benchmarks.md)"};
  app.add_option("--json", a.json, "write results as JSON to this file");
  app.add_flag("--quick", a.quick,
               "short run: ranks 2, sizes 4,1024,65536, few repetitions");
  app.add_option("--ranks", a.ranks, "rank counts (default 2,3,4,8)");
  app.add_option("--impls", a.impls,
                 "rondo and/or openmpi (default both, skipping a missing "
                 "program)");
  app.add_option("--sizes", a.sizes,
                 "per-rank block sizes in bytes, multiples of 4 (default "
                 "4,64,1024,16384,262144,4194304)");
  app.add_option("--collectives", a.collectives,
                 "all (default), latency, iallreduce_overlap or a list of "
                 "collectives");
  app.add_option("--bind", a.bind,
                 "rank binding of both launchers: core "
                 "(round robin, default) or none")
      ->check(CLI::IsMember({"core", "none"}));
  app.add_option("--overlap-env", a.overlap_env,
                 "environment of Rondo's overlap jobs (default "
                 "RONDO_PROGRESS=none,RONDO_TIMER_US=50)");
  app.add_option("--mpirun", a.mpirun,
                 "Open MPI's mpirun (default "
                 "/usr/bin/mpirun)");
  app.add_option("--timeout", a.timeout_s,
                 "seconds per job (default 900, --quick 120)")
      ->check(CLI::Range(1, 86400));
  app.add_option("--time-per-case-ms", a.time_per_case_ms,
                 "timed budget per latency case (default 200, --quick 20)")
      ->check(CLI::Range(1.0, 600000.0));
  app.add_option("--min-reps", a.min_reps,
                 "repetitions at least (default 10, --quick 3)")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--max-reps", a.max_reps,
                 "repetitions at most (default 1000, --quick 30)")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--overlap-reps", a.overlap_reps,
                 "repetitions per overlap phase (default 30, --quick 5)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--compute-factor", a.compute_factor,
                 "overlap compute time / t_comm (default 1)")
      ->check(CLI::Range(0.01, 100.0));
  app.add_option("--mem-cap-mb", a.mem_cap_mb,
                 "skip cases whose buffers over the job exceed this (default "
                 "a quarter of the memory, at most 2048)")
      ->check(CLI::Range(1.0, 1e9));
  app.add_flag("--verbose", a.verbose, "print command lines and every case");
  CLI11_PARSE(app, argc, argv);
  try {
    return rondo::bench::Driver(argv[0], a).Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coll: %s\n", e.what());
    return 1;
  }
}
