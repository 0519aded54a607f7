// bench/p2p/mpi_suite: what an MPI program sees of Rondo's MPI beside its peers
// (issues 15 and 18, "How it is measured"). OSU-style latency, bandwidth,
// barrier, bcast, allreduce (blocking, nonblocking and persistent),
// neighbourhood alltoall (blocking and persistent), alltoall, allgather,
// gather and scatter under Rondo's defaults,
// under Rondo's best explicit setting, under Open MPI 4.1's defaults and
// under MPICH 4.0's defaults, in one invocation, with the issues' targets.
//
//   bazel run -c opt //bench/p2p:mpi_suite -- [--json FILE] [--ranks 2,4]
//       [--tests all|LIST] [--configs rondo:default,rondo:tuned,...]
//       [--iterations F | --quick] [--time-per-case-ms MS] [--rounds N]
//       [--bind default|core|none] [--timeout S] [--mpirun PATH]
//       [--mpirun-mpich PATH] [--verbose]
//
// The measuring program is bench/p2p/mpi_suite.c (its banner has the tests and
// the timing), built three times from the same source: mpi_suite_rondo
// (Rondo's mpi.h), mpi_suite_openmpi (Open MPI's; MPIX_ persistent
// collectives from its mpi-ext.h) and mpi_suite_mpich (MPICH's; MPI-4's
// names). For each rank count (default 2 and 4; 4 oversubscribes this
// 2-core machine) this driver runs one job per setting, one job at a time,
// each writing JSON lines to a private file:
//   rondo default    rondo-run with the driver's environment unchanged: what
//                    the user gets. The driver adds no RONDO_* variable;
//                    RONDO_* variables it inherits reach the job and are
//                    printed and recorded (machine.configs in the JSON).
//   rondo tuned      the same plus kTunedEnv (below: RONDO_PROGRESS=none
//                    RONDO_TIMER_US=0, progress only inside MPI calls, no
//                    timer), Rondo's best explicit setting today.
//   openmpi default  Open MPI's mpirun (--mpirun) with its defaults.
//   mpich default    MPICH's Hydra, mpirun.mpich (--mpirun-mpich; Debian
//                    packages mpich, libmpich-dev; ch4:ucx), with its
//                    defaults, started as bench/overlap starts it
//                    (bench/common/jobs.h's kMpich: MPIEXEC_TIMEOUT, the
//                    rondo-run variables of an enclosing job removed, no UCX_*
//                    variable added; UCX_* variables the driver inherits
//                    reach every library's jobs and are recorded).
// Binding (--bind default): each launcher binds as its users get it without
// options. rondo-run's default is --bind auto (a CPU per rank when the ranks
// fit on its CPUs, else none, as mpirun does). Open MPI 4.1's mpirun binds
// each rank to a core for up to 2 ranks, to a socket beyond (this
// machine's single socket: all cores) and to nothing when oversubscribed
// (checked with --report-bindings); bench/common/jobs.h offers core and none,
// so its jobs get `--map-by core --bind-to core:overload-allowed` for up to 2
// ranks (when the machine has the cores) and `--bind-to none` beyond.
// Hydra's default is no binding (`mpirun.mpich -bind-to --help`): MPICH's
// jobs get `-bind-to none`. --bind core|none forces one policy on every
// launcher. Open MPI's jobs get bench/common/jobs.h's fresh TMPDIR and
// shared-memory directory, plm isolated and oversubscription allowed, as
// bench/coll's.
//
// Programs (mpi_suite_rondo, mpi_suite_openmpi, mpi_suite_mpich, rondo-run:
// data dependencies) are found in the runfiles, else next to this binary. A
// library whose program or launcher is missing (e.g. no /usr/bin/mpirun or
// /usr/bin/mpirun.mpich) is skipped with a message and shown as "not run",
// never as a number. A job that fails (exit status, or no case written) is
// reported with its library, setting and rank count, the other jobs still
// run, and the exit status is 1. Outcomes of a case that are no failure of
// the run, shown without figures:
//   * "unsupp.": its first call returned an error (MPI_SUM on MPI_CHAR in a
//     library that refuses it), with the error string;
//   * "wrong": a peer library's wrong result that is exactly a known bug of
//     that library (bench/p2p/mpi_suite.c's KnownPeerBug: Open MPI 4.1.4's
//     persistent neighbourhood alltoall on a ring of 1 or 2 ranks,
//     open-mpi/ompi#14430), with the bug and the first wrong element. A
//     wrong result of Rondo's, or any other of a peer's, is a failed check.
// MPICH 4.0.2 over UCX sometimes hangs in MPI_Finalize after every result
// is written (bench/overlap/overlap.c): the program's watchdog ends such a rank
// after 30 s with status 5 and a FILE.finalize.R marker. An MPICH job that
// wrote its "end" line (every case) and then hung so is a note (printed,
// "notes" in the JSON), not a failed job; any other library's hang in
// MPI_Finalize is a failure. The launcher's --timeout bounds the rest.
//
// Output:
//  * a table: one block per test, one row per rank count and size, with
//    the four medians (time per operation: one-way latency, per-message
//    time of the bandwidth window, per-call time of a collective) and the
//    ratios default/tuned, default/openmpi, default/mpich and
//    tuned/openmpi (Rondo's time over the reference's: > 1 is slower; for
//    bandwidth the inverse of the bandwidth ratio; "!" marks a ratio over
//    its issue-15 target); the bandwidth in GB/s; the unsupported and wrong
//    cases with their reasons; then the issues' targets as met/missed:
//      issue 15: rondo default <= 1.1x rondo tuned on every case,
//      rondo default <= 1.5x openmpi on every oversubscribed case (more
//      ranks than processors: the issue's 4-rank cases on this machine);
//      issue 18 (with allreduce_init_float): at 8 B on every rank count,
//      rondo allreduce_init < rondo iallreduce, rondo allreduce_init <=
//      openmpi's (MPIX_Allreduce_init) and <= mpich's (MPI_Allreduce_init);
//    a target is "incomplete" when no compared case misses it but some
//    case could not be compared (unsupported, wrong, failed or not run);
//  * with --json FILE, bench/common/report.h's schema: a case
//    "suite:<library>:<config>:<test>:<ranks>:<bytes>" (library rondo,
//    openmpi or mpich; config default or tuned for Rondo, default for the
//    peers; bytes 8 for latency, 1048576 for bandwidth, 0 for barrier, 8,
//    16384 and 1048576 per block for alltoall, allgather, gather and
//    scatter, 8 and 1048576 for the others) per measured, unsupported or wrong case,
//    with median_ns, min_ns, p99_ns (null when unsupported, with
//    "supported": false and "error", or wrong, with "wrong_result": true,
//    "reason" and "known_issue"; both "valid": false and a "note"),
//    bytes_per_s for bandwidth, ratio_vs_openmpi and ratio_vs_mpich on
//    every Rondo case and ratio_vs_tuned on Rondo's default cases (medians
//    of the same test, ranks and bytes; absent when either side has no
//    figure), paired_ratio_vs_openmpi and paired_ratio_vs_mpich (the
//    median over rounds of the ratio of the two libraries' medians in the
//    same round), library, config, test, ranks, bytes, oversubscribed,
//    samples, iterations, batch, warmup, check, rounds and
//    round_medians_ns (the case is the round with the median median of
//    --rounds alternating rounds); top-level "targets", "failed",
//    "skipped", "not_run", "notes", "configs" (each setting's environment,
//    launcher and library version) and "command".
// Exit status: 0 when every job ran and every check passed (targets missed,
// cases unsupported or a peer's known wrong results included), 1 when a
// job or a check failed, 2 on bad arguments.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/common/jobs.h"
#include "bench/common/plot.h"
#include "bench/common/report.h"

namespace rondo::bench {
namespace {

using nlohmann::json;

// Rondo's best explicit setting, the "tuned" configuration: progress only
// inside MPI calls and no timer trigger. The one place to change it.
const std::pair<const char*, const char*> kTunedEnv[] = {
    {"RONDO_PROGRESS", "none"},
    {"RONDO_TIMER_US", "0"},
};

// The issue's targets: Rondo default over Rondo tuned on every case, and
// over Open MPI on every oversubscribed case.
constexpr double kTunedTarget = 1.1;
constexpr double kOpenMpiTarget = 1.5;

// The tests in table order (bench/p2p/mpi_suite.c's names) and their sizes.
struct TestInfo {
  const char* name;
  std::vector<int64_t> bytes;
};
const TestInfo kTests[] = {
    {"latency", {8, 1024, 65536}},
    {"bandwidth", {8, 1 << 20}},
    {"barrier", {0}},
    {"bcast_char", {8, 1 << 20}},
    {"bcast_float", {8, 1 << 20}},
    {"allreduce_char", {8, 1 << 20}},
    {"allreduce_float", {8, 1 << 20}},
    // Issue 18: nonblocking vs persistent (MPI-4) allreduce, and a
    // neighbourhood collective.
    {"iallreduce_float", {8, 1 << 20}},
    {"allreduce_init_float", {8, 1 << 20}},
    {"neighbor_alltoall_float", {8, 1 << 20}},
    {"neighbor_alltoall_init_float", {8, 1 << 20}},
    // Issue 28: the block collectives, 8 B to 16 KiB per block (the
    // shared-memory path's range) and 1 MiB.
    {"alltoall_float", {8, 16384, 1 << 20}},
    {"allgather_float", {8, 16384, 1 << 20}},
    {"gather_float", {8, 16384, 1 << 20}},
    {"scatter_float", {8, 16384, 1 << 20}},
};

// A library and configuration: how its jobs are started.
struct Setting {
  std::string library;                     // rondo | openmpi | mpich
  std::string config;                      // default | tuned
  std::map<std::string, std::string> env;  // set on top of the driver's
  std::string meaning;
  std::string Key() const { return library + ":" + config; }
};

std::vector<Setting> AllSettings() {
  std::map<std::string, std::string> tuned;
  for (const auto& [k, v] : kTunedEnv) tuned[k] = v;
  return {
      {"rondo", "default", {}, "the driver's environment unchanged"},
      {"rondo", "tuned", tuned, "progress only inside MPI calls, no timer"},
      {"openmpi", "default", {}, "Open MPI's defaults"},
      {"mpich", "default", {}, "MPICH's defaults"},
  };
}

struct Args {
  std::string json;
  std::string ranks = "2,4";
  std::string tests = "all";
  std::string configs =
      "rondo:default,rondo:tuned,openmpi:default,mpich:default";
  double iterations = 0;        // 0: 1 (--quick 0.05)
  double time_per_case_ms = 0;  // 0: the program's (1000, --quick 50)
  std::string bytes;            // "": each test's own sizes (kTests)
  bool quick = false;
  int rounds = 0;  // 0: 3 (--quick 1)
  std::string bind = "default";
  int timeout_s = 0;  // 0: 600 (--quick 120) per job
  std::string mpirun = "/usr/bin/mpirun";
  std::string mpirun_mpich = "/usr/bin/mpirun.mpich";
  bool verbose = false;
  std::vector<std::string> program_override;  // hidden: LIB=PATH
  std::vector<std::string> command;           // argv, for the report
};

// ---- formatting ----

std::string Human(double ns) {
  char buf[32];
  if (!std::isfinite(ns) || ns <= 0) return "-";
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
    std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(b >> 20));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

std::string RatioText(const std::optional<double>& r, double target) {
  if (!r) return "-";
  char buf[32];
  // Two significant digits below 0.1 (a 4 ms outlier beside 700 ns is
  // 0.00017x, not 0.00x).
  std::snprintf(buf, sizeof buf,
                *r < 0.1 ? "%.2gx%s" : *r < 10 ? "%.2fx%s" : "%.1fx%s", *r,
                target > 0 && *r > target ? "!" : "");
  return buf;
}

std::string CaseName(const std::string& library, const std::string& config,
                     const std::string& test, int ranks, int64_t bytes) {
  return "suite:" + library + ":" + config + ":" + test + ":" +
         std::to_string(ranks) + ":" + std::to_string(bytes);
}

// ---- the driver ----

class Driver {
 public:
  Driver(const char* argv0, Args args) : argv0_(argv0), a_(std::move(args)) {
    processors_ = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  }

  int Run() {
    if (!Setup()) return 2;
    char tmpl[] = "/tmp/rondo-mpi-suite.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    parts_dir_ = tmpl;
    const int64_t start = NowNs();
    // Rounds alternate the jobs and rotate their order (A B C, B C A,
    // C A B, ...), so that a drift of the machine's speed, and what a job
    // leaves behind for the next (mpirun's daemons still exiting slowed the
    // job after Open MPI's by up to 1.4x), hit every setting alike; each
    // case keeps the round whose median is the median of its rounds
    // (Finalize).
    rounds_ = a_.rounds > 0 ? a_.rounds : a_.quick ? 1 : 3;
    const size_t k = settings_.size();
    for (int round = 0; round < rounds_; ++round)
      for (int n : ranks_)
        for (size_t i = 0; i < k; ++i)
          if (!interrupted_) Job(settings_[(i + round) % k], n, round);
    Finalize();
    if (interrupted_)
      std::printf("mpi_suite: interrupted; what was measured follows\n");
    std::filesystem::remove_all(parts_dir_);
    PrintTable();
    const json targets = Targets(true);
    std::printf("\nmpi_suite: %zu job(s) in %.0f s\n", jobs_run_,
                (NowNs() - start) / 1e9);
    if (!a_.json.empty()) WriteJson(targets);
    if (!failed_.empty()) {
      std::fprintf(stderr, "mpi_suite: %zu job(s) or check(s) failed:\n",
                   failed_.size());
      for (const json& f : failed_)
        std::fprintf(stderr, "  %s %s, %d ranks: %s\n",
                     f.value("library", "").c_str(),
                     f.value("config", "").c_str(), f.value("ranks", 0),
                     f.value("reason", "").c_str());
      return 1;
    }
    return 0;
  }

 private:
  // ---- arguments ----

  bool Bad(const char* option, const std::string& value,
           const std::string& allowed) const {
    std::fprintf(stderr, "mpi_suite: %s: '%s' is not allowed; expected %s\n",
                 option, value.c_str(), allowed.c_str());
    return false;
  }

  bool Setup() {
    for (const std::string& r : Split(a_.ranks)) {
      char* end = nullptr;
      const long n = std::strtol(r.c_str(), &end, 10);
      if (*end != '\0' || n < 2 || n > 64)
        return Bad("--ranks", r, "integers in 2..64 such as 2,4");
      if (std::find(ranks_.begin(), ranks_.end(), n) == ranks_.end())
        ranks_.push_back(static_cast<int>(n));
    }
    if (ranks_.empty()) return Bad("--ranks", a_.ranks, "a list such as 2,4");

    std::string test_names;
    for (const TestInfo& t : kTests)
      test_names += std::string(test_names.empty() ? "" : ",") + t.name;
    for (const std::string& t : Split(a_.tests)) {
      if (t == "all") {
        for (const TestInfo& k : kTests) AddTest(k.name);
        continue;
      }
      auto it = std::find_if(std::begin(kTests), std::end(kTests),
                             [&](const TestInfo& k) { return t == k.name; });
      if (it == std::end(kTests))
        return Bad("--tests", t, "all or a list among " + test_names);
      AddTest(t);
    }
    if (tests_.empty()) return Bad("--tests", a_.tests, "all or " + test_names);
    for (const std::string& b : Split(a_.bytes)) {
      char* end = nullptr;
      const long long v = std::strtoll(b.c_str(), &end, 10);
      if (*end != '\0' || v < 4 || v > (64LL << 20) || v % 4 != 0 ||
          bytes_.size() == 16)
        return Bad("--bytes", b,
                   "up to 16 sizes of 4 to 67108864 bytes, multiples of 4, "
                   "such as 1024,16384,65536,1048576,4194304");
      if (std::find(bytes_.begin(), bytes_.end(), v) == bytes_.end())
        bytes_.push_back(v);
    }
    if (!a_.bytes.empty() && bytes_.empty())
      return Bad("--bytes", a_.bytes, "a list such as 1024,1048576");

    const std::vector<Setting> all = AllSettings();
    std::string setting_names;
    for (const Setting& s : all)
      setting_names += (setting_names.empty() ? "" : ",") + s.Key();
    std::vector<Setting> wanted;
    for (const std::string& c : Split(a_.configs)) {
      auto it = std::find_if(all.begin(), all.end(),
                             [&](const Setting& s) { return c == s.Key(); });
      if (it == all.end())
        return Bad("--configs", c, "a list among " + setting_names);
      if (std::none_of(wanted.begin(), wanted.end(),
                       [&](const Setting& s) { return c == s.Key(); }))
        wanted.push_back(*it);
    }
    if (wanted.empty())
      return Bad("--configs", a_.configs, "a list among " + setting_names);

    std::map<std::string, std::string> overrides;
    for (const std::string& kv : a_.program_override) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos)
        return Bad("--program-override", kv, "LIBRARY=PATH");
      overrides[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    if (a_.bind != "default" && a_.bind != "core" && a_.bind != "none")
      return Bad("--bind", a_.bind, "default, core or none");

    // Programs and launchers; a library that is not there is skipped.
    for (const Setting& s : wanted) {
      if (programs_.count(s.library) || not_run_.count(s.library)) {
        if (programs_.count(s.library)) settings_.push_back(s);
        continue;
      }
      std::string missing;
      std::string prog =
          overrides.count(s.library)
              ? overrides[s.library]
              : FindExecutable(argv0_, "bench/p2p/mpi_suite_" + s.library,
                               &missing);
      if (!prog.empty() && !Executable(prog))
        missing = prog + " is not an executable file";
      if (missing.empty() && s.library == "rondo") {
        rondo_run_ =
            FindExecutable(argv0_, "drivers/bootstrap/rondo-run", &missing);
      } else if (missing.empty() && s.library == "openmpi" &&
                 !Executable(a_.mpirun)) {
        missing = a_.mpirun + " not found (Debian package openmpi-bin)";
      } else if (missing.empty() && s.library == "mpich" &&
                 !Executable(a_.mpirun_mpich)) {
        missing = a_.mpirun_mpich +
                  " not found (Debian package mpich; or --mpirun-mpich PATH)";
      }
      if (!missing.empty()) {
        std::fprintf(stderr, "mpi_suite: skipping %s: %s\n", s.library.c_str(),
                     missing.c_str());
        not_run_[s.library] = missing;
        continue;
      }
      programs_[s.library] = prog;
      settings_.push_back(s);
    }
    if (settings_.empty()) {
      std::fprintf(stderr, "mpi_suite: no library to run\n");
      return false;
    }
    return true;
  }

  void AddTest(const std::string& t) {
    if (std::find(tests_.begin(), tests_.end(), t) == tests_.end())
      tests_.push_back(t);
  }

  // ---- jobs ----

  // The binding of a job: --bind, or the launcher's own default (banner).
  std::string Bind(const Setting& s, int ranks) const {
    if (a_.bind != "default") return a_.bind;
    if (s.library == "rondo") return "auto";  // rondo-run's default
    if (s.library == "mpich") return "none";  // Hydra's default
    return ranks <= 2 && ranks <= processors_ ? "core" : "none";
  }

  int Timeout() const {
    return a_.timeout_s > 0 ? a_.timeout_s : a_.quick ? 120 : 600;
  }

  void Job(const Setting& s, int ranks, int round) {
    const std::string out = parts_dir_ + "/" + s.library + "." + s.config +
                            "." + std::to_string(ranks) + "." +
                            std::to_string(round) + ".jsonl";
    JobSpec spec;
    spec.ranks = ranks;
    spec.bind = Bind(s, ranks);
    spec.timeout_s = Timeout();
    spec.program = programs_.at(s.library);
    spec.args = {"--out", out, "--tests", Join(tests_, ",")};
    if (!bytes_.empty()) {
      std::vector<std::string> b;
      for (int64_t v : bytes_) b.push_back(std::to_string(v));
      spec.args.push_back("--bytes");
      spec.args.push_back(Join(b, ","));
    }
    if (a_.quick) spec.args.push_back("--quick");
    if (!a_.verbose) spec.args.push_back("--quiet");
    auto opt = [&](const char* name, double value) {
      if (value <= 0) return;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", value);
      spec.args.push_back(name);
      spec.args.push_back(buf);
    };
    opt("--iterations", a_.iterations);
    opt("--time-per-case-ms", a_.time_per_case_ms);
    spec.env = s.env;
    spec.launcher = LauncherOf(s);
    spec.launcher_path = s.library == "rondo"   ? rondo_run_
                         : s.library == "mpich" ? a_.mpirun_mpich
                                                : a_.mpirun;
    json& c = configs_[s.Key()];
    c["launcher"][std::to_string(ranks)] =
        LauncherDescription(spec.launcher, spec.bind);
    std::printf("mpi_suite: round %d/%d: %s %s, %d ranks ...", round + 1,
                rounds_, s.library.c_str(), s.config.c_str(), ranks);
    if (a_.verbose) std::printf("\n  %s\n", Join(JobCommand(spec)).c_str());
    std::fflush(stdout);
    const int64_t t0 = NowNs();
    std::vector<std::string> command;
    bool interrupted = false;
    const int rc = RunMpiJob(spec, &command, &interrupted);
    const double seconds = (NowNs() - t0) / 1e9;
    ++jobs_run_;
    bool ended = false;  // the program wrote its "end" line
    const int cases = Collect(s, ranks, out, &ended);
    int watch_s = 0;  // the watchdog's delay, from its marker
    const std::vector<int> hung = FinalizeHangs(out, &watch_s);
    std::printf(" %.1f s\n", seconds);
    // MPI_Finalize hung (the program's watchdog ended the ranks in `hung`)
    // after every result was written: a note for MPICH 4.0.2 + UCX's known
    // hang (banner), a failure for any other library.
    std::string hang;
    if (rc != 0 && ended && !hung.empty() && !interrupted) {
      std::vector<std::string> r;
      for (int h : hung) r.push_back(std::to_string(h));
      hang = "MPI_Finalize did not return within " + std::to_string(watch_s) +
             " s on rank(s) " + Join(r, ",") +
             " after every result was written";
      if (s.library == "mpich") {
        const std::string note =
            hang + " (exit status " + std::to_string(rc) +
            "); the results are kept (a known MPICH 4.0.2 + UCX hang)";
        std::printf("  note: %s %s, %d ranks: %s\n", s.library.c_str(),
                    s.config.c_str(), ranks, note.c_str());
        notes_.push_back({{"library", s.library},
                          {"config", s.config},
                          {"ranks", ranks},
                          {"round", round + 1},
                          {"exit_status", rc},
                          {"note", note}});
        interrupted_ = interrupted_ || interrupted;
        return;
      }
    }
    if (rc == 3) return;  // mpi_suite.c's status for a failed check (counted)
    if (rc != 0 || cases == 0) {
      const std::string reason =
          (interrupted ? "interrupted, " : "") +
          (hang.empty() ? "" : hang + ", ") + std::string("exit status ") +
          std::to_string(rc) + ", " + std::to_string(cases) +
          " case(s) written" + (ended || cases == 0 ? "" : ", no end line");
      std::fprintf(stderr, "mpi_suite: %s %s job with %d ranks failed (%s)\n",
                   s.library.c_str(), s.config.c_str(), ranks, reason.c_str());
      failed_.push_back({{"library", s.library},
                         {"config", s.config},
                         {"ranks", ranks},
                         {"exit_status", rc},
                         {"reason", reason},
                         {"command", Join(command)}});
    }
    interrupted_ = interrupted_ || interrupted;
  }

  static Launcher LauncherOf(const Setting& s) {
    return s.library == "rondo"   ? Launcher::kRondoRun
           : s.library == "mpich" ? Launcher::kMpich
                                  : Launcher::kMpirun;
  }

  // The ranks whose MPI_Finalize watchdog fired in the job writing `out`
  // (bench/p2p/mpi_suite.c writes OUT.finalize.R), in rank order; *seconds gets
  // the watchdog's delay.
  static std::vector<int> FinalizeHangs(const std::string& out, int* seconds) {
    std::vector<int> ranks;
    const std::filesystem::path p(out);
    const std::string prefix = p.filename().string() + ".finalize.";
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator(p.parent_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      char* end = nullptr;
      const long r = std::strtol(name.c_str() + prefix.size(), &end, 10);
      if (end == nullptr || *end != '\0') continue;
      ranks.push_back(static_cast<int>(r));
      for (const json& j : ReadJsonLines(e.path().string(), "mpi_suite"))
        *seconds = j.value("seconds", *seconds);
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks;
  }

  // Reads a job's JSON lines; returns the number of case lines. *ended: the
  // program's "end" line is there and counts as many cases.
  int Collect(const Setting& s, int ranks, const std::string& path,
              bool* ended) {
    int n = 0, end_cases = -1;
    for (json& j : ReadJsonLines(path, "mpi_suite")) {
      const std::string type = j.value("type", "");
      if (type == "job") {
        configs_[s.Key()]["library"] = j.value("library", "");
        timing_ = j.value("timing", timing_);
        continue;
      }
      if (type == "end") {
        end_cases = j.value("cases", -1);
        continue;
      }
      ++n;
      j.erase("type");
      j.erase("impl");
      j["library"] = s.library;
      j["config"] = s.config;
      if (type == "skip") {
        skipped_.push_back(j);
      } else if (type == "fail") {
        j["reason"] = "wrong result in " + j.value("test", std::string()) +
                      " " + std::to_string(j.value("bytes", 0)) +
                      " B: " + j.value("reason", "");
        failed_.push_back(j);
      } else if (type == "case" || type == "unsupported" || type == "wrong") {
        j["supported"] = type != "unsupported";
        if (type == "wrong") j["wrong_result"] = true;
        const std::string name = CaseName(s.library, s.config, j["test"], ranks,
                                          j.value("bytes", int64_t{0}));
        if (!rounds_of_.count(name)) order_.push_back(name);
        rounds_of_[name].push_back(j);
      }
    }
    *ended = end_cases >= 0 && end_cases == n;
    return n;
  }

  // Whether a case (or a round of it) has figures: not unsupported, not a
  // peer's wrong result.
  static bool HasFigures(const json& j) {
    return j.value("supported", false) && !j.value("wrong_result", false);
  }

  // Each case: the round whose median is the median of the rounds' (an
  // unsupported or wrong round makes the case so), with every round's
  // median kept in round_medians_ns.
  void Finalize() {
    for (auto& [name, rounds] : rounds_of_) {
      json chosen = rounds.front();
      std::vector<std::pair<double, size_t>> medians;
      bool figures = true;
      for (size_t i = 0; i < rounds.size(); ++i) {
        if (!HasFigures(rounds[i])) {
          figures = false;
          chosen = rounds[i];
          break;
        }
        medians.push_back({rounds[i].value("median_ns", 0.0), i});
      }
      if (figures) {
        std::sort(medians.begin(), medians.end());
        chosen = rounds[medians[(medians.size() - 1) / 2].second];
        json all = json::array();
        for (const json& r : rounds) all.push_back(r.value("median_ns", 0.0));
        chosen["round_medians_ns"] = all;
      }
      chosen["rounds"] = rounds.size();
      cases_[name] = chosen;
    }
  }

  // ---- results ----

  const json* Find(const std::string& library, const std::string& config,
                   const std::string& test, int ranks, int64_t bytes) const {
    auto it = cases_.find(CaseName(library, config, test, ranks, bytes));
    return it == cases_.end() ? nullptr : &it->second;
  }

  static std::optional<double> Median(const json* j) {
    if (j == nullptr || !HasFigures(*j)) return std::nullopt;
    const double m = j->value("median_ns", 0.0);
    if (!std::isfinite(m) || m <= 0) return std::nullopt;
    return m;
  }

  static std::optional<double> Ratio(const json* a, const json* b) {
    const auto x = Median(a), y = Median(b);
    if (!x || !y) return std::nullopt;
    return *x / *y;
  }

  // The median over rounds of a's round median over b's in the same round.
  // The rounds alternate the libraries, so a pair shares the machine's
  // state of that moment; the ratio of the medians mixes states when they
  // change from one job to the next (this project's VM switches between a
  // fast and a slow one, docs/performance.md). Even counts: the mean of
  // the two middle ratios.
  static std::optional<double> PairedRatio(const json* a, const json* b) {
    if (!Median(a) || !Median(b)) return std::nullopt;
    const json& x = a->contains("round_medians_ns") ? (*a)["round_medians_ns"]
                                                    : json();
    const json& y = b->contains("round_medians_ns") ? (*b)["round_medians_ns"]
                                                    : json();
    if (!x.is_array() || !y.is_array()) return std::nullopt;
    std::vector<double> r;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!x[i].is_number() || !y[i].is_number()) continue;
      const double u = x[i].get<double>(), v = y[i].get<double>();
      if (std::isfinite(u) && std::isfinite(v) && u > 0 && v > 0)
        r.push_back(u / v);
    }
    if (r.empty()) return std::nullopt;
    std::sort(r.begin(), r.end());
    const size_t k = r.size() / 2;
    return r.size() % 2 == 1 ? r[k] : (r[k - 1] + r[k]) / 2;
  }

  bool Ran(const std::string& key) const {
    return std::any_of(settings_.begin(), settings_.end(),
                       [&](const Setting& s) { return s.Key() == key; });
  }

  // A table cell: the median, "unsupp.", "wrong" (a peer's known wrong
  // result) or "-" (not run or failed).
  std::string Cell(const json* j) const {
    if (j == nullptr) return "-";
    if (!j->value("supported", false)) return "unsupp.";
    if (j->value("wrong_result", false)) return "wrong";
    return Human(j->value("median_ns", 0.0));
  }

  // Why case `j` of `who` has no figure, for the targets' "not compared".
  static std::string NoFigure(const json* j, const std::string& who) {
    if (j == nullptr) return who + " not measured";
    if (!j->value("supported", false)) return who + " unsupported";
    if (j->value("wrong_result", false)) return who + " wrong result";
    return who + " has no figure";
  }

  void PrintTable() const {
    std::printf("\nsettings (ranks > %d processors are oversubscribed, *):\n",
                processors_);
    for (const Setting& s : AllSettings()) {
      std::string how;
      if (not_run_.count(s.library)) {
        how = "not run: " + not_run_.at(s.library);
      } else if (!Ran(s.Key())) {
        how = "not run (--configs)";
      } else {
        // The launcher's command lines in rank order, each with its rank
        // counts unless there is one for all.
        std::vector<std::pair<std::string, std::vector<std::string>>> lines;
        const json& c = configs_.count(s.Key()) ? configs_.at(s.Key()) : json();
        for (int n : ranks_) {
          const std::string r = std::to_string(n);
          if (!c.contains("launcher") || !c["launcher"].contains(r)) continue;
          const std::string command = c["launcher"][r];
          auto it =
              std::find_if(lines.begin(), lines.end(),
                           [&](const auto& l) { return l.first == command; });
          if (it == lines.end())
            lines.push_back({command, {r}});
          else
            it->second.push_back(r);
        }
        std::vector<std::string> launch;
        for (const auto& [command, counts] : lines)
          launch.push_back(lines.size() == 1
                               ? command
                               : Join(counts, ",") + " ranks: " + command);
        std::vector<std::string> env;
        for (const auto& [k, v] : s.env) env.push_back(k + "=" + v);
        how = s.meaning + (env.empty() ? "" : " (" + Join(env) + ")") + "; " +
              Join(launch, "; ");
      }
      std::printf("  %-16s %s\n", s.Key().c_str(), how.c_str());
    }
    const std::map<std::string, std::string> inherited = InheritedRondoEnv();
    if (!inherited.empty() && Ran("rondo:default")) {
      std::vector<std::string> kv;
      for (const auto& [k, v] : inherited) kv.push_back(k + "=" + v);
      std::printf(
          "  note: rondo:default ran with %s from the driver's environment "
          "(rondo:tuned overrides only its own variables)\n",
          Join(kv).c_str());
    }
    if (const auto ucx = InheritedEnv("UCX_"); !ucx.empty()) {
      std::vector<std::string> kv;
      for (const auto& [k, v] : ucx) kv.push_back(k + "=" + v);
      std::printf(
          "  note: %s from the driver's environment reach every job (Rondo's "
          "UCX rail, MPICH's ch4:ucx, Open MPI's UCX components)\n",
          Join(kv).c_str());
    }

    // One block per test (its name on a line of its own: the names are up
    // to 28 characters), one row per rank count and size.
    std::printf("\n%-19s %11s %11s %11s %11s %10s %10s %10s %10s %10s\n",
                "test / ranks, bytes", "rondo def.", "rondo tuned", "openmpi",
                "mpich", "def/tuned", "def/ompi", "pair/ompi", "def/mpich",
                "tuned/ompi");
    std::printf("%s\n", std::string(122, '-').c_str());
    for (const std::string& test : tests_) {
      std::printf("%s\n", test.c_str());
      for (int n : ranks_) {
        for (int64_t b : TestBytes(test)) {
          const json* d = Find("rondo", "default", test, n, b);
          const json* t = Find("rondo", "tuned", test, n, b);
          const json* o = Find("openmpi", "default", test, n, b);
          const json* m = Find("mpich", "default", test, n, b);
          const bool over = n > processors_;
          std::printf(
              "  %5d%s %10s %11s %11s %11s %11s %10s %10s %10s %10s %10s\n",
              n, over ? "*" : " ",
              test == "barrier" ? "-" : HumanBytes(b).c_str(),
              Cell(d).c_str(), Cell(t).c_str(), Cell(o).c_str(),
              Cell(m).c_str(), RatioText(Ratio(d, t), kTunedTarget).c_str(),
              RatioText(Ratio(d, o), over ? kOpenMpiTarget : 0).c_str(),
              RatioText(PairedRatio(d, o), 0).c_str(),
              RatioText(Ratio(d, m), 0).c_str(),
              RatioText(Ratio(t, o), 0).c_str());
        }
      }
    }
    std::printf(
        "(medians; time per operation: one-way latency, per-message time in "
        "the bandwidth window, per call for collectives; ratios are Rondo's "
        "time over the reference's, > 1 slower; pair/ompi = the median "
        "over rounds of Rondo's round over Open MPI's in the same round; "
        "! = over the issue-15 target; unsupp. = the first call returned "
        "an error; wrong = a peer's known wrong result, below)\n");
    for (int n : ranks_) {
      std::vector<std::string> bw;
      for (const Setting& s : settings_) {
        const json* j = Find(s.library, s.config, "bandwidth", n, 1 << 20);
        if (Median(j)) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%s %.2f GB/s", s.Key().c_str(),
                        j->value("bytes_per_s", 0.0) / 1e9);
          bw.push_back(buf);
        }
      }
      if (!bw.empty())
        std::printf("bandwidth, %d ranks, 1 MiB, window 64: %s\n", n,
                    Join(bw, ", ").c_str());
      std::vector<std::string> rate;
      for (const Setting& s : settings_) {
        const json* j = Find(s.library, s.config, "bandwidth", n, 8);
        if (auto m = Median(j); m && *m > 0) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%s %.2f M/s", s.Key().c_str(),
                        1e3 / *m);
          rate.push_back(buf);
        }
      }
      if (!rate.empty())
        std::printf("message rate, %d ranks, 8 B, window 64: %s\n", n,
                    Join(rate, ", ").c_str());
    }
    std::map<std::string, std::vector<std::string>> unsupported;  // by error
    for (const std::string& name : order_) {
      const json& j = cases_.at(name);
      if (!j.value("supported", true))
        unsupported[j.value("error", "")].push_back(name);
    }
    for (const auto& [error, names] : unsupported)
      std::printf("unsupported (%s): %s\n", error.c_str(),
                  Join(names, ", ").c_str());
    // A peer's known wrong answers, by bug: no figure, no failure.
    std::map<std::string, std::vector<std::string>> wrong;  // by known issue
    for (const std::string& name : order_) {
      const json& j = cases_.at(name);
      if (j.value("wrong_result", false))
        wrong[j.value("known_issue", "")].push_back(
            j.value("library", "") + " " + j.value("config", "") + " " +
            j.value("test", "") + " " + std::to_string(j.value("ranks", 0)) +
            " ranks " + HumanBytes(j.value("bytes", int64_t{0})) + ": " +
            j.value("reason", ""));
    }
    if (!wrong.empty())
      std::printf("wrong results (\"wrong\"), known bugs of the peers: no "
                  "figure, no failure:\n");
    for (const auto& [issue, cases] : wrong) {
      std::printf("  %s\n", issue.c_str());
      for (const std::string& c : cases) std::printf("    %s\n", c.c_str());
    }
    for (const json& j : notes_)
      std::printf("note: %s %s, %d ranks, round %d: %s\n",
                  j.value("library", "").c_str(), j.value("config", "").c_str(),
                  j.value("ranks", 0), j.value("round", 0),
                  j.value("note", "").c_str());
    for (const json& j : skipped_)
      std::printf("skipped: %s %s %s, %d ranks: %s\n",
                  j.value("library", "").c_str(), j.value("config", "").c_str(),
                  j.value("test", "").c_str(), j.value("ranks", 0),
                  j.value("reason", "").c_str());
    std::fflush(stdout);
  }

  // --bytes replaces the sizes of every test but these (the program's rule).
  std::vector<int64_t> TestBytes(const std::string& test) const {
    if (!bytes_.empty() && test != "latency" && test != "bandwidth" &&
        test != "barrier")
      return bytes_;
    for (const TestInfo& t : kTests)
      if (test == t.name) return t.bytes;
    return {};
  }

  static std::map<std::string, std::string> InheritedEnv(
      const std::string& prefix) {
    std::map<std::string, std::string> env;
    for (const auto& [k, v] : Environment())
      if (k.rfind(prefix, 0) == 0) env[k] = v;
    return env;
  }
  static std::map<std::string, std::string> InheritedRondoEnv() {
    return InheritedEnv("RONDO_");
  }

  // One target: Rondo default's median over the reference's (`ref_lib`
  // `ref_config`) at most `limit` on every row (test, ranks, bytes), or on
  // the oversubscribed rows only. Prints its lines when `print`.
  json Target(const std::string& name, const std::string& ref_lib,
              const std::string& ref_config, double limit,
              bool oversubscribed_only, bool print) const {
    json missed = json::array(), not_compared = json::array();
    int compared = 0;
    std::optional<double> worst;
    std::string worst_row;
    for (const std::string& test : tests_) {
      for (int n : ranks_) {
        if (oversubscribed_only && n <= processors_) continue;
        for (int64_t b : TestBytes(test)) {
          const json* d = Find("rondo", "default", test, n, b);
          const json* r = Find(ref_lib, ref_config, test, n, b);
          const std::string row =
              test + " " + std::to_string(n) + " ranks" +
              (test == "barrier" ? "" : " " + HumanBytes(b));
          const auto ratio = Ratio(d, r);
          if (!ratio) {
            const std::string ref = ref_lib + " " + ref_config;
            const std::string why = !Median(d) ? NoFigure(d, "rondo default")
                                               : NoFigure(r, ref);
            not_compared.push_back(row + " (" + why + ")");
            continue;
          }
          ++compared;
          if (*ratio > limit) missed.push_back(row);
          if (!worst || *ratio > *worst) {
            worst = *ratio;
            worst_row = row;
          }
        }
      }
    }
    std::string status = !missed.empty()         ? "missed"
                         : compared == 0         ? "not measured"
                         : !not_compared.empty() ? "incomplete"
                                                 : "met";
    json t = {{"target", name},   {"limit", limit},
              {"status", status}, {"compared", compared},
              {"missed", missed}, {"not_compared", not_compared}};
    if (worst) t["worst"] = {{"case", worst_row}, {"ratio", *worst}};
    if (print) {
      std::string line = status;
      for (char& ch : line) ch = static_cast<char>(std::toupper(ch));
      if (status == "missed")
        line += " on " + std::to_string(missed.size()) + " of " +
                std::to_string(compared) + " cases";
      else if (compared > 0)
        line += " on " + std::to_string(compared) + " compared case(s)";
      if (worst) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2fx", *worst);
        line += " (worst " + worst_row + ": " + buf + ")";
      }
      std::printf("  %-58s %s\n", name.c_str(), line.c_str());
      if (!not_compared.empty()) {
        std::vector<std::string> v;
        for (const auto& x : not_compared) v.push_back(x.get<std::string>());
        std::printf("  %-58s not compared: %s\n", "", Join(v, ", ").c_str());
      }
      if (oversubscribed_only && compared == 0 && not_compared.empty())
        std::printf(
            "  %-58s (no rank count above the %d processors: see "
            "--ranks)\n",
            "", processors_);
    }
    return t;
  }

  // Rondo default's `test` over `ref_lib`'s `ref_test` (default config) at
  // `bytes`, on every rank count: at most `limit` (issue 18's persistent
  // collective targets).
  json Versus(const std::string& name, const std::string& test,
              const std::string& ref_lib, const std::string& ref_test,
              int64_t bytes, double limit, bool print) const {
    json missed = json::array(), not_compared = json::array(),
         ratios = json::object();
    int compared = 0;
    for (int n : ranks_) {
      const std::string row = std::to_string(n) + " ranks";
      const json* d = Find("rondo", "default", test, n, bytes);
      const json* r = Find(ref_lib, "default", ref_test, n, bytes);
      const auto ratio = Ratio(d, r);
      if (!ratio) {
        const std::string why =
            !Median(d) ? NoFigure(d, "rondo " + test)
                       : NoFigure(r, ref_lib + " " + ref_test);
        not_compared.push_back(row + " (" + why + ")");
        continue;
      }
      ++compared;
      ratios[row] = *ratio;
      if (*ratio > limit) missed.push_back(row);
    }
    const std::string status = !missed.empty()         ? "missed"
                               : compared == 0         ? "not measured"
                               : !not_compared.empty() ? "incomplete"
                                                       : "met";
    if (print) {
      std::string line = status;
      for (char& ch : line) ch = static_cast<char>(std::toupper(ch));
      for (const auto& [row, v] : ratios.items())
        line += " " + row + " " + RatioText(v.get<double>(), 0);
      std::printf("  %-58s %s\n", name.c_str(), line.c_str());
      if (!not_compared.empty()) {
        std::vector<std::string> v;
        for (const auto& x : not_compared) v.push_back(x.get<std::string>());
        std::printf("  %-58s not compared: %s\n", "", Join(v, ", ").c_str());
      }
    }
    return {{"target", name},     {"limit", limit},
            {"status", status},   {"compared", compared},
            {"missed", missed},   {"not_compared", not_compared},
            {"ratios", ratios}};
  }

  json Targets(bool print) const {
    json t = Issue15Targets(print);
    const bool p = std::find(tests_.begin(), tests_.end(),
                             "allreduce_init_float") != tests_.end();
    if (!p) return t;
    if (print) std::printf("\ntargets (issue 18):\n");
    t.push_back(Versus("rondo allreduce_init < rondo iallreduce, 8 B",
                       "allreduce_init_float", "rondo",
                       "iallreduce_float", 8, 1.0, print));
    t.push_back(Versus("rondo allreduce_init <= openmpi's (MPIX_), 8 B",
                       "allreduce_init_float", "openmpi",
                       "allreduce_init_float", 8, 1.0, print));
    t.push_back(
        Versus("rondo allreduce_init <= mpich's MPI_Allreduce_init, 8 B",
               "allreduce_init_float", "mpich", "allreduce_init_float", 8, 1.0,
               print));
    return t;
  }

  json Issue15Targets(bool print) const {
    if (print) std::printf("\ntargets (issue 15):\n");
    char a[96], b[96];
    std::snprintf(a, sizeof a, "rondo default <= %.1fx rondo tuned, every case",
                  kTunedTarget);
    std::snprintf(b, sizeof b,
                  "rondo default <= %.1fx openmpi, every oversubscribed case",
                  kOpenMpiTarget);
    return json::array(
        {Target(a, "rondo", "tuned", kTunedTarget, false, print),
         Target(b, "openmpi", "default", kOpenMpiTarget, true, print)});
  }

  void WriteJson(const json& targets) const {
    Report report("mpi_suite");
    for (const std::string& name : order_) {
      const json& j = cases_.at(name);
      const std::string lib = j["library"], cfg = j["config"], test = j["test"];
      const int n = j["ranks"];
      const int64_t b = j["bytes"];
      CaseResult c;
      c.name = name;
      c.extra = j;
      c.extra["oversubscribed"] = n > processors_;
      if (HasFigures(j)) {
        c.stats.median_ns = j.value("median_ns", 0.0);
        c.stats.min_ns = j.value("min_ns", 0.0);
        c.stats.p99_ns = j.value("p99_ns", 0.0);
        c.stats.max_ns = j.value("max_ns", 0.0);
        c.stats.mean_ns = j.value("mean_ns", 0.0);
        c.stats.samples = j.value("samples", int64_t{0});
        for (const char* k :
             {"median_ns", "min_ns", "p99_ns", "max_ns", "mean_ns", "samples"})
          c.extra.erase(k);
      } else {
        // No figure: null, and the case says why (DEVELOPERS.md).
        for (const char* k :
             {"median_ns", "min_ns", "p99_ns", "max_ns", "mean_ns"})
          c.extra[k] = nullptr;
        c.extra["samples"] = 0;
        c.extra["valid"] = false;
        c.extra["note"] =
            j.value("wrong_result", false)
                ? "wrong result, a known bug of " + lib + " (" +
                      j.value("known_issue", std::string()) +
                      "): " + j.value("reason", std::string())
                : "unsupported: " + j.value("error", std::string());
      }
      if (lib == "rondo") {
        const json* self = &j;
        if (auto r = Ratio(self, Find("openmpi", "default", test, n, b)))
          c.extra["ratio_vs_openmpi"] = *r;
        if (auto r = Ratio(self, Find("mpich", "default", test, n, b)))
          c.extra["ratio_vs_mpich"] = *r;
        if (auto r = PairedRatio(self, Find("openmpi", "default", test, n, b)))
          c.extra["paired_ratio_vs_openmpi"] = *r;
        if (auto r = PairedRatio(self, Find("mpich", "default", test, n, b)))
          c.extra["paired_ratio_vs_mpich"] = *r;
        if (cfg == "default")
          if (auto r = Ratio(self, Find("rondo", "tuned", test, n, b)))
            c.extra["ratio_vs_tuned"] = *r;
      }
      report.Add(std::move(c));
    }
    json configs = json::object();
    for (const Setting& s : settings_) {
      json d = configs_.count(s.Key()) ? configs_.at(s.Key()) : json::object();
      d["meaning"] = s.meaning;
      d["env"] = s.env;
      if (s.library == "rondo")
        d["inherited_rondo_env"] = InheritedRondoEnv();
      else
        d["launcher_env"] = LauncherEnvironment(LauncherOf(s));
      d["inherited_ucx_env"] = InheritedEnv("UCX_");
      d["program"] = "bench/p2p/mpi_suite_" + s.library;
      configs[s.Key()] = d;
    }
    json tuned = json::object();
    for (const auto& [k, v] : kTunedEnv) tuned[k] = v;
    json machine = {{"ranks", ranks_},   {"tests", tests_},
                    {"bind", a_.bind},   {"timing", timing_},
                    {"quick", a_.quick}, {"rounds", rounds_},
                    {"configs", configs},
                    {"tuned_env", tuned}};
    json doc = report.ToJson(machine);
    doc["targets"] = targets;
    doc["failed"] = failed_;
    doc["skipped"] = skipped_;
    doc["not_run"] = not_run_;
    doc["notes"] = notes_;
    doc["command"] = Join(a_.command);
    const std::string path = UserPath(a_.json);
    std::ofstream out(path);
    out << doc.dump(2) << '\n';
    if (!out) throw std::runtime_error("cannot write JSON to '" + path + "'");
    std::printf("JSON written to %s\n", path.c_str());
  }

  const char* argv0_;
  Args a_;
  int processors_ = 1;
  std::vector<int> ranks_;
  std::vector<int64_t> bytes_;  // --bytes, in the order given
  std::vector<std::string> tests_;
  std::vector<Setting> settings_;
  std::map<std::string, std::string> programs_;  // library -> program
  std::map<std::string, std::string> not_run_;   // library -> why
  std::string rondo_run_;
  std::string parts_dir_;
  std::string timing_;
  std::map<std::string, json> configs_;  // Key() -> launcher, library
  std::map<std::string, json> cases_;
  std::map<std::string, std::vector<json>> rounds_of_;
  int rounds_ = 1;
  std::vector<std::string> order_;
  std::vector<json> skipped_, failed_, notes_;
  size_t jobs_run_ = 0;
  bool interrupted_ = false;  // Ctrl-C: no further job
};

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args a;
  a.command.assign(argv, argv + argc);
  CLI::App app{
      "OSU-style MPI suite (issues 15, 18): latency, bandwidth, barrier, "
      "bcast, allreduce (blocking, nonblocking, persistent) and neighbourhood "
      "alltoall (blocking, persistent) under Rondo's defaults, Rondo tuned "
      "(RONDO_PROGRESS=none RONDO_TIMER_US=0), Open MPI's and MPICH's "
      "defaults, in one invocation; prints the ratios and the issues' "
      "targets. Exit status: 0 all jobs ran, 1 a job or a check failed, 2 "
      "bad arguments."};
  app.get_formatter()->column_width(30);
  app.add_option("--json", a.json, "write the results as JSON to this file");
  app.add_option("--ranks", a.ranks,
                 "rank counts, 2..64 (default 2,4; more than the processors "
                 "oversubscribes)");
  app.add_option("--tests", a.tests,
                 "all (default) or among latency, bandwidth, barrier, "
                 "bcast_char, bcast_float, allreduce_char, allreduce_float, "
                 "iallreduce_float, allreduce_init_float, "
                 "neighbor_alltoall_float, neighbor_alltoall_init_float, "
                 "alltoall_float, allgather_float, gather_float, "
                 "scatter_float");
  app.add_option("--configs", a.configs,
                 "among rondo:default, rondo:tuned, openmpi:default, "
                 "mpich:default (default all four)");
  app.add_option("--iterations", a.iterations,
                 "multiplies OSU's iteration counts and the time per case "
                 "(default 1; --quick 0.05)")
      ->check(CLI::Range(0.001, 1000.0));
  app.add_option("--time-per-case-ms", a.time_per_case_ms,
                 "a case stops after about this long (default 1000, --quick "
                 "50)")
      ->check(CLI::Range(1.0, 3600000.0));
  app.add_option("--bytes", a.bytes,
                 "sizes for every test but latency, bandwidth and barrier "
                 "(bytes per block for the block collectives), e.g. "
                 "1024,16384,65536,1048576,4194304 (default: each test's own: "
                 "8 B, 16 KiB for the block collectives, 1 MiB)");
  app.add_option("--rounds", a.rounds,
                 "run every job this many times, alternating the libraries, "
                 "and keep each case's median round (default 3, --quick 1)")
      ->check(CLI::Range(1, 100));
  app.add_flag("--quick", a.quick,
               "a short run for smoke tests: 5% of the iterations, 50 ms per "
               "case");
  app.add_option("--bind", a.bind,
                 "default (each launcher's own: rondo-run auto; mpirun core "
                 "up to 2 ranks, none beyond; mpirun.mpich none), core or "
                 "none for all");
  app.add_option("--timeout", a.timeout_s,
                 "seconds per job before the launcher kills it (default 600, "
                 "--quick 120)")
      ->check(CLI::Range(1, 86400));
  app.add_option("--mpirun", a.mpirun,
                 "Open MPI's mpirun (default /usr/bin/mpirun)");
  app.add_option("--mpirun-mpich", a.mpirun_mpich,
                 "MPICH's Hydra mpirun (default /usr/bin/mpirun.mpich)");
  app.add_flag("--verbose", a.verbose,
               "print the command lines and every case as it is measured");
  // For tests: a stand-in program for a library (LIB=PATH).
  app.add_option("--program-override", a.program_override)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    if (rc != 0)
      std::fprintf(stderr,
                   "mpi_suite: bad argument; --help lists the values "
                   "allowed\n");
    return rc == 0 ? 0 : 2;
  }
  try {
    return rondo::bench::Driver(argv[0], a).Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_suite: %s\n", e.what());
    return 1;
  }
}
