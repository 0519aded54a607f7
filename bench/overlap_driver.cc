// bench/overlap: overlap of MPI nonblocking collectives with computation,
// by the methodology of Denis et al. ("A methodology for assessing
// computation/communication overlap of MPI nonblocking collectives"; issue
// 7, docs/overlap.md), for Rondo's MadMPI and Open MPI side by side, in
// several progress configurations.
//
//   bazel run -c opt //bench:overlap -- [--json FILE] [--csv FILE]
//       [--plot-dir DIR] [--compare | --libraries rondo,openmpi]
//       [--configs default,basic,progress,dedicated,timer]
//       [--collectives ibcast,ireduce,iallreduce,iallgather,ialltoall]
//       [--ranks 2] [--comm-us LIST] [--comp-us LIST] [--reps 7] [--full]
//       [--tolerance 0.1]
//       [--timeout S] [--quiet]
//
// The measuring program is bench/overlap.c, built twice from the same
// source: overlap_rondo (Rondo's mpi.h) and overlap_openmpi (Open MPI's). It
// calibrates a message size per collective and communication target and a
// GEMM order per computation target, measures every cell of the grid
// (Algorithm 1 of the paper) and the MPI impact ratio, and writes JSON lines
// from rank 0 (below). This driver runs it once per (library,
// configuration), one job at a time, then merges the results.
//
// Configurations: how each job is started (bench/jobs.h has the launchers'
// command lines; the variables override the driver's environment for that
// job only, other RONDO_* variables of the driver's environment pass
// through and are reported):
//   rondo default     no variable set (the product's defaults: quiet
//                     progress where no core is free), --comm-cores 0
//   rondo basic       RONDO_PROGRESS=none RONDO_TIMER_US=0, --comm-cores 0:
//                     progress only inside MPI calls
//   rondo progress    RONDO_PROGRESS=bind RONDO_TIMER_US=0, --comm-cores 0:
//                     a progress thread on each rank's own core
//   rondo timer       RONDO_PROGRESS=none RONDO_TIMER_US=50, --comm-cores 0:
//                     the timer trigger on each rank's core (only if asked)
//   rondo dedicated   RONDO_COMM_CORES=1 RONDO_TIMER_US=200, --comm-cores 1: one core of the
//                     node kept for progress threads, Rondo places them there
//   openmpi basic     Open MPI's defaults, --comm-cores 0
//   openmpi default   skipped: the same as openmpi basic
//   openmpi progress  skipped: Open MPI 4.1's shared-memory and TCP
//                     transports have no asynchronous progress thread
//   openmpi timer     skipped: Open MPI has no timer-driven progress
//   openmpi dedicated --comm-cores 1: the core is left idle (what
//                     "dedicated" means for a library without a progress
//                     thread), OMPI_MCA_mpi_yield_when_idle=1 (the ranks
//                     share the other cores when there are few)
// Rondo's jobs: `rondo-run -n N --bind core --timeout S overlap_rondo ARGS`;
// Open MPI's: `mpirun --allow-run-as-root --oversubscribe -n N --timeout S
// --map-by core --bind-to core:overload-allowed overlap_openmpi ARGS` with a
// fresh TMPDIR and shared-memory directory (as bench/coll does). ARGS, the
// same for every rank: --out FILE --label LIB:CONFIG --collectives LIST
// --comm-us LIST --comp-us LIST --reps N --comm-cores K [--threads N]
// [--quiet]. The job's stdout and stderr (its progress bar) are the
// driver's.
//
// The program's JSON lines (one object per line; ratios null when invalid):
//   {"type":"setup","label":S,"ranks":N,"threads":T,"cpus":"0,1",
//    "shared_app_cores":B,
//    "comm_cores":K,"clock_rtt_us":X,...}
//   {"type":"comm_ref","collective":S,"target_us":X,"bytes":N,"status":S,
//    "valid":B,"t_comm_ref_us":X,"iterations":N}
//   {"type":"comp_ref","target_us":X,"order":N,"status":S,"valid":B,
//    "t_comp_ref_us":X,"iterations":N}
//   {"type":"cell","collective":S,"comm_target_us":X,"comp_target_us":X,
//    "bytes":N,"order":N,"valid":B,"t_comm_ref_us":X,"t_comp_ref_us":X,
//    "t_measured_us":X,"t_call_us":X,"t_comp_us":X,"t_wait_us":X,
//    "overhead_ratio":X,"comm_ratio":X,"comp_slowdown":X,"reps":N,
//    "samples_measured_us":[...]}
//   {"type":"clock","clock_drift_ppm":X,"window_margin_us":X,
//    "window_late":N}   (after the sweep; merged into the setup)
//   {"type":"impact","t_comp_passive_us":X,"t_comp_nompi_us":X,"ratio":X,
//    "order":N}
//   {"type":"fail","what":S}   (the job also exits non-zero)
//
// Output:
//  * a table per (library, configuration): every cell's targets, measured
//    references, the three ratios and a diagnosis after the paper's
//    Section 3.3 (Diagnose()); then a summary: per library:config the
//    median overhead ratio over the valid cells whose two targets are
//    within a factor of 3 of each other (the diagonal, where overlap
//    matters most), per collective and overall, and the MPI impact ratio;
//    with both libraries, the two side by side;
//  * JSON (--json FILE, else DIR/overlap.json; bench/report.h's schema):
//    a case "overlap:<library>:<config>:<collective>:<comm_us>:<comp_us>"
//    per cell (targets as integers) with median_ns/min_ns/p99_ns of the
//    measured times and overhead_ratio, comm_ratio, comp_slowdown,
//    t_comm_ref_ns, t_comp_ref_ns, t_call_ns, t_comp_ns, t_wait_ns, bytes,
//    order, valid, diagnosis (an invalid cell keeps its case, ratios null);
//    a case "mpi_impact:<library>:<config>" per job with ratio (median_ns =
//    t_comp_passive); top-level "skipped", "failed", "configs" (each job's
//    environment, command, setup line and calibration lines) and
//    "command" (this driver's command line);
//  * CSV (--csv FILE, else DIR/overlap.csv): library,config,collective,
//    comm_target_us,comp_target_us,comm_us,comp_us,measured_us,
//    overhead_ratio,comm_ratio,comp_slowdown,valid, and DIR/impact.csv
//    (library,config,ratio): the input of bench/overlap_plot.py, which then
//    draws the heat-maps into DIR (python3 with matplotlib; without it the
//    driver says so and goes on).
// Exit status: 0 when every job ran and wrote all its lines; 1 when a job
// failed or was interrupted (what was measured is still written); 2 on bad
// arguments.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/jobs.h"
#include "bench/plot.h"
#include "bench/report.h"

namespace rondo::bench {
namespace {

using nlohmann::json;

const char* const kCollectives[] = {"ibcast", "ireduce", "iallreduce",
                                    "iallgather", "ialltoall"};
const char* const kConfigs[] = {"default", "basic", "progress", "dedicated",
                                "timer"};
const char* const kLibraries[] = {"rondo", "openmpi"};
constexpr const char* kDefaultTargets = "100,316,1000,3162,10000";
constexpr const char* kFullTargets =
    "500,1000,2500,5000,10000,25000,50000,100000,250000,500000,1000000";
constexpr int kDefaultReps = 7, kFullReps = 20;
constexpr double kDiagonalFactor = 3.0;
const char* const kCsvHeader =
    "library,config,collective,comm_target_us,comp_target_us,comm_us,"
    "comp_us,measured_us,overhead_ratio,comm_ratio,comp_slowdown,valid";

struct Args {
  std::string json, csv, plot_dir = "overlap-report";
  std::string libraries;  // empty: rondo, plus openmpi when present
  std::string configs = "default,basic,progress,dedicated";
  std::string collectives = "ibcast,ireduce,iallreduce,iallgather,ialltoall";
  std::string ranks = "2";
  std::string comm_us, comp_us;  // empty: kDefaultTargets (--full: kFull...)
  int reps = 0;                  // 0: kDefaultReps (--full: kFullReps)
  double tolerance = 0.10;       // calibration: converged within this
  bool full = false;
  bool compare = false;
  int timeout_s = 0;  // 0: from the grid (Timeout())
  int threads = 0;    // 0: the program's default (one per core of its share)
  bool quiet = false;
  bool cells = false;  // print the per-cell tables
  std::string mpirun = "/usr/bin/mpirun";
  std::vector<std::string> program_override;  // hidden: LIB=PATH
  std::vector<std::string> command;           // argv, for the report
};

// ---- configurations ----

// How one (library, configuration) job is started, or why it is not.
struct Config {
  std::string library, config;
  std::map<std::string, std::string> env;  // overrides
  int comm_cores = 0;
  std::string meaning;      // one line, for the tables
  std::string skip_reason;  // non-empty: not run
};

Config DescribeConfig(const std::string& library, const std::string& config) {
  Config c{library, config, {}, 0, "", ""};
  if (library == "rondo") {
    if (config == "default") {
      c.meaning = "Rondo's defaults (no RONDO_ variable set by the driver)";
    } else if (config == "basic") {
      c.env = {{"RONDO_PROGRESS", "none"}, {"RONDO_TIMER_US", "0"}};
      c.meaning = "progress only inside MPI calls";
    } else if (config == "progress") {
      c.env = {{"RONDO_PROGRESS", "bind"}, {"RONDO_TIMER_US", "0"}};
      c.meaning = "a progress thread on each rank's own core";
    } else if (config == "timer") {
      c.env = {{"RONDO_PROGRESS", "none"}, {"RONDO_TIMER_US", "50"}};
      c.meaning = "the timer trigger (50 us) on each rank's core";
    } else {
      // The timer was on by default before quiet progress: keep this
      // configuration what it was measured as (issue 7).
      c.env = {{"RONDO_COMM_CORES", "1"}, {"RONDO_TIMER_US", "200"}};
      c.comm_cores = 1;
      c.meaning = "one core kept for the progress threads";
    }
  } else {
    if (config == "default") {
      c.skip_reason = "the same as openmpi basic (Open MPI's defaults)";
    } else if (config == "basic") {
      c.meaning = "Open MPI's defaults";
    } else if (config == "progress") {
      c.skip_reason =
          "Open MPI 4.1's shared-memory and TCP transports have no "
          "asynchronous progress thread";
    } else if (config == "timer") {
      c.skip_reason = "Open MPI has no timer-driven progress";
    } else {
      c.comm_cores = 1;
      // With fewer cores than ranks + 1 the ranks share their cores; Open
      // MPI's own setting for oversubscription keeps its busy waits from
      // taking whole time slices from each other.
      c.env = {{"OMPI_MCA_mpi_yield_when_idle", "1"}};
      c.meaning =
          "one core left idle (no progress thread to put there); ranks yield "
          "when idle";
    }
  }
  return c;
}

std::string EnvText(const std::map<std::string, std::string>& env) {
  std::vector<std::string> kv;
  for (const auto& [k, v] : env) kv.push_back(k + "=" + v);
  return kv.empty() ? "defaults" : Join(kv);
}

// ---- formatting ----

// A time in microseconds, readable: "316 us", "3.16 ms", "1.00 s"; "-" if
// not finite or not positive.
std::string Us(double us) {
  char buf[32];
  if (!std::isfinite(us) || us <= 0) return "-";
  if (us < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f us", us);
  else if (us < 1e6)
    std::snprintf(buf, sizeof buf, "%.3g ms", us / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g s", us / 1e6);
  return buf;
}

std::string Ratio(const std::optional<double>& r) {
  char buf[32];
  if (!r || !std::isfinite(*r)) return "-";
  std::snprintf(buf, sizeof buf, "%.2f", std::fabs(*r) < 0.005 ? 0.0 : *r);
  return buf;
}

std::string Duration(double s) {
  char buf[32];
  if (s < 10)
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 90)
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 5400)
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  else
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

// `x` for a CSV field: "" when absent or not finite.
std::string CsvNumber(const std::optional<double>& x) {
  if (!x || !std::isfinite(*x)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", *x);
  return buf;
}

// A number field of a JSON line; nullopt when absent, null or not a number.
std::optional<double> Number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

json NsOrNull(const std::optional<double>& us) {
  if (!us || !std::isfinite(*us)) return nullptr;
  return *us * 1e3;
}

json OrNull(const std::optional<double>& x) {
  if (!x || !std::isfinite(*x)) return nullptr;
  return *x;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---- results ----

struct Cell {
  std::string collective;
  long long comm_target = 0, comp_target = 0;  // us
  bool valid = false;
  std::optional<double> comm_ref, comp_ref, measured, call, comp, wait;  // us
  std::optional<double> overhead, comm_ratio, comp_slowdown;
  long long bytes = 0, order = 0;
  int reps = 0;
  std::vector<double> samples_us;
};

// The paper's Section 3.3: with good overlap r_comm ~ 0 and
// r_comp_slowdown ~ 1. No progression: the communication happens in
// MPI_Wait (r_comm ~ 1), the computation is undisturbed; computation
// slowed: the progression overlaps but steals the computation's CPU;
// contention: both.
std::string Diagnose(const Cell& c) {
  if (!c.valid) return "invalid";
  if (!c.overhead || !c.comm_ratio || !c.comp_slowdown) return "-";
  if (*c.overhead < 0.3) return "overlap";
  const bool comm_high = *c.comm_ratio >= 0.8;
  const bool comp_high = *c.comp_slowdown >= 1.2;
  if (comm_high && !comp_high) return "no progression";
  if (comp_high && *c.comm_ratio < 0.5) return "computation slowed";
  if (comp_high && comm_high) return "contention";
  return "partial";
}

bool OnDiagonal(const Cell& c) {
  const double hi = std::max(c.comm_target, c.comp_target);
  const double lo = std::min(c.comm_target, c.comp_target);
  return lo > 0 && hi <= kDiagonalFactor * lo;
}

struct Job {
  Config config;
  std::string program, launcher_path;
  Launcher launcher = Launcher::kRondoRun;
  std::string out;  // the program's --out
  // After the run:
  bool ran = false, interrupted = false;
  int status = -1;
  double seconds = 0;
  std::vector<std::string> command;
  json setup;  // null until seen
  std::vector<json> comm_refs, comp_refs;
  std::vector<Cell> cells;
  std::optional<json> impact;
  std::vector<std::string> fails;
  int bad_lines = 0;
  std::string failure;  // non-empty: the job failed, why
};

Cell ParseCell(const json& j) {
  Cell c;
  c.collective = j.value("collective", "");
  c.comm_target = std::llround(Number(j, "comm_target_us").value_or(0));
  c.comp_target = std::llround(Number(j, "comp_target_us").value_or(0));
  c.valid = j.value("valid", false);
  c.comm_ref = Number(j, "t_comm_ref_us");
  c.comp_ref = Number(j, "t_comp_ref_us");
  c.measured = Number(j, "t_measured_us");
  c.call = Number(j, "t_call_us");
  c.comp = Number(j, "t_comp_us");
  c.wait = Number(j, "t_wait_us");
  if (c.valid) {
    c.overhead = Number(j, "overhead_ratio");
    c.comm_ratio = Number(j, "comm_ratio");
    c.comp_slowdown = Number(j, "comp_slowdown");
  }
  c.bytes = std::llround(Number(j, "bytes").value_or(0));
  c.order = std::llround(Number(j, "order").value_or(0));
  c.reps = j.value("reps", 0);
  if (j.contains("samples_measured_us") && j["samples_measured_us"].is_array())
    for (const json& s : j["samples_measured_us"])
      if (s.is_number() && std::isfinite(s.get<double>()))
        c.samples_us.push_back(s.get<double>());
  return c;
}

std::string CaseName(const std::string& library, const std::string& config,
                     const Cell& c) {
  return "overlap:" + library + ":" + config + ":" + c.collective + ":" +
         std::to_string(c.comm_target) + ":" + std::to_string(c.comp_target);
}

// ---- the driver ----

class Driver {
 public:
  Driver(const char* argv0, Args args) : argv0_(argv0), a_(std::move(args)) {}

  int Run() {
    if (const int rc = Setup(); rc != 0) return rc;
    PrintPlan();
    char tmpl[] = "/tmp/rondo-overlap.XXXXXX";
    if (mkdtemp(tmpl) == nullptr)
      throw std::runtime_error("cannot make a temporary directory in /tmp");
    parts_dir_ = tmpl;
    bool stop = false;
    for (size_t k = 0; k < jobs_.size(); ++k) {
      Job& job = jobs_[k];
      if (stop) {
        job.failure = "not run: interrupted";
        continue;
      }
      RunJob(k, job);
      if (job.interrupted) {
        std::fprintf(stderr,
                     "overlap: interrupted; writing what was measured\n");
        stop = true;
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(parts_dir_, ec);
    if (a_.cells) PrintTables();
    PrintSummary();
    int rc = WriteOutputs();
    int failed = 0;
    for (const Job& job : jobs_) failed += !job.failure.empty();
    if (failed > 0) {
      std::fprintf(stderr, "\noverlap: %d of %zu job(s) failed:\n", failed,
                   jobs_.size());
      for (const Job& job : jobs_)
        if (!job.failure.empty())
          std::fprintf(stderr, "  %s %s: %s\n", job.config.library.c_str(),
                       job.config.config.c_str(), job.failure.c_str());
      rc = 1;
    }
    return rc;
  }

 private:
  // ---- arguments ----

  static int Bad(const std::string& message) {
    std::fprintf(stderr, "overlap: %s\n", message.c_str());
    return 2;
  }

  // `list` as distinct members of `allowed` (in the given order); false with
  // a message naming the bad item otherwise.
  template <size_t N>
  static bool Members(const std::string& option, const std::string& list,
                      const char* const (&allowed)[N],
                      std::vector<std::string>* out) {
    std::string all;
    for (const char* a : allowed)
      all += (all.empty() ? "" : ",") + std::string(a);
    const std::vector<std::string> items = Split(list);
    if (items.empty()) {
      Bad(option + ": the list is empty; expected some of " + all);
      return false;
    }
    for (const std::string& item : items) {
      if (item == "all") {
        for (const char* a : allowed)
          if (std::find(out->begin(), out->end(), a) == out->end())
            out->push_back(a);
        continue;
      }
      if (std::find(std::begin(allowed), std::end(allowed), item) ==
          std::end(allowed)) {
        Bad(option + ": '" + item + "' is not allowed; expected a " +
            "comma-separated list of " + all + " (or all)");
        return false;
      }
      if (std::find(out->begin(), out->end(), item) == out->end())
        out->push_back(item);
    }
    return true;
  }

  // A list of target times: distinct integers in 1..1e8 microseconds, at
  // most 32 (bench/overlap.c's limits), sorted.
  static bool Targets(const std::string& option, const std::string& list,
                      std::vector<long long>* out) {
    const std::vector<std::string> items = Split(list);
    if (items.empty() || items.size() > 32) {
      Bad(option + ": '" + list + "' is not allowed; expected 1 to 32 " +
          "comma-separated times in microseconds such as " + kDefaultTargets);
      return false;
    }
    for (const std::string& item : items) {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (*end != '\0' || errno != 0 || v < 1 || v > 100000000) {
        Bad(option + ": '" + item + "' is not allowed; expected whole " +
            "microseconds in 1..100000000, comma-separated, such as " +
            kDefaultTargets);
        return false;
      }
      if (std::find(out->begin(), out->end(), v) == out->end())
        out->push_back(v);
    }
    std::sort(out->begin(), out->end());
    return true;
  }

  // Checks the arguments, finds the programs and plans the jobs; 0, or the
  // exit status (2 bad arguments, 1 nothing can run).
  int Setup() {
    {
      char* end = nullptr;
      errno = 0;
      const long n = std::strtol(a_.ranks.c_str(), &end, 10);
      if (a_.ranks.empty() || *end != '\0' || errno != 0 || n < 1 || n > 256)
        return Bad("--ranks: '" + a_.ranks +
                   "' is not allowed; expected an integer in 1..256");
      ranks_ = static_cast<int>(n);
    }
    std::vector<std::string> libraries;
    const bool explicit_libraries = !a_.libraries.empty();
    if (explicit_libraries &&
        !Members("--libraries", a_.libraries, kLibraries, &libraries))
      return 2;
    if (!explicit_libraries) libraries = {"rondo"};
    if (!explicit_libraries && a_.compare) libraries.push_back("openmpi");
    if (!Members("--configs", a_.configs, kConfigs, &configs_)) return 2;
    if (!Members("--collectives", a_.collectives, kCollectives, &collectives_))
      return 2;
    const char* grid = a_.full ? kFullTargets : kDefaultTargets;
    if (!Targets("--comm-us", a_.comm_us.empty() ? grid : a_.comm_us,
                 &comm_us_) ||
        !Targets("--comp-us", a_.comp_us.empty() ? grid : a_.comp_us,
                 &comp_us_))
      return 2;
    if (a_.reps == 0) a_.reps = a_.full ? kFullReps : kDefaultReps;
    std::map<std::string, std::string> overrides;
    for (const std::string& o : a_.program_override) {
      const size_t eq = o.find('=');
      if (eq == std::string::npos ||
          std::find(std::begin(kLibraries), std::end(kLibraries),
                    o.substr(0, eq)) == std::end(kLibraries))
        return Bad("--program-override: '" + o +
                   "' is not allowed; expected rondo=PATH or openmpi=PATH");
      overrides[o.substr(0, eq)] = UserPath(o.substr(eq + 1));
    }
    // Programs.
    for (const std::string& library : libraries) {
      std::string missing;
      std::string program =
          overrides.count(library)
              ? overrides[library]
              : FindExecutable(argv0_, "bench/overlap_" + library, &missing);
      if (!program.empty() && !Executable(program)) {
        missing = program + " is not an executable file";
        program.clear();
      }
      std::string launcher;
      if (program.empty()) {
        missing += "; build it with `bazel build -c opt //bench:overlap_" +
                   library + "`";
      } else if (library == "rondo") {
        launcher =
            FindExecutable(argv0_, "drivers/bootstrap/rondo-run", &missing);
      } else if (Executable(a_.mpirun)) {
        launcher = a_.mpirun;
      } else {
        missing = a_.mpirun + " not found (Debian package openmpi-bin; or " +
                  "--mpirun PATH)";
      }
      if (launcher.empty()) {
        if (explicit_libraries) {
          std::fprintf(stderr, "overlap: cannot run %s: %s\n", library.c_str(),
                       missing.c_str());
          return 1;
        }
        std::printf("overlap: %s not run: %s\n", library.c_str(),
                    missing.c_str());
        skipped_.push_back(
            {{"library", library}, {"config", "all"}, {"reason", missing}});
        continue;
      }
      programs_[library] = {program, launcher};
    }
    if (programs_.empty()) {
      std::fprintf(stderr, "overlap: no library to run\n");
      return 1;
    }
    // Jobs, configuration by configuration so that the libraries are
    // compared in the same conditions of the machine.
    const long processors = sysconf(_SC_NPROCESSORS_ONLN);
    for (const std::string& config : configs_) {
      for (const char* library : kLibraries) {
        if (programs_.count(library) == 0) continue;
        Config c = DescribeConfig(library, config);
        if (c.skip_reason.empty() && c.comm_cores >= processors)
          c.skip_reason = "needs at least " + std::to_string(c.comm_cores + 1) +
                          " processors (this machine has " +
                          std::to_string(processors) + ")";
        if (!c.skip_reason.empty()) {
          skipped_.push_back({{"library", c.library},
                              {"config", c.config},
                              {"reason", c.skip_reason}});
          continue;
        }
        Job job;
        job.config = c;
        job.program = programs_[library].first;
        job.launcher_path = programs_[library].second;
        job.launcher =
            c.library == "rondo" ? Launcher::kRondoRun : Launcher::kMpirun;
        jobs_.push_back(std::move(job));
      }
    }
    if (jobs_.empty()) {
      std::fprintf(stderr,
                   "overlap: no job to run with these --libraries "
                   "and --configs:\n");
      for (const json& s : skipped_)
        std::fprintf(stderr, "  %s %s skipped: %s\n",
                     s["library"].get<std::string>().c_str(),
                     s["config"].get<std::string>().c_str(),
                     s["reason"].get<std::string>().c_str());
      return 2;
    }
    // Output paths, checked now rather than after the measurements.
    plot_dir_ = UserPath(a_.plot_dir.empty() ? "overlap-report" : a_.plot_dir);
    csv_ = a_.csv.empty() ? plot_dir_ + "/overlap.csv" : UserPath(a_.csv);
    impact_csv_ = plot_dir_ + "/impact.csv";
    json_ = a_.json.empty() ? plot_dir_ + "/overlap.json" : UserPath(a_.json);
    for (const auto& [option, given, path] :
         {std::tuple<std::string, std::string, std::string>{"--json", a_.json,
                                                            json_},
          {"--csv", a_.csv, csv_}}) {
      const auto dir = std::filesystem::path(path).parent_path();
      if (!given.empty() && !dir.empty() && !std::filesystem::is_directory(dir))
        return Bad(option + ": the directory of '" + path + "' does not exist");
    }
    {
      std::error_code ec;
      std::filesystem::create_directories(plot_dir_, ec);
      if (ec || !std::filesystem::is_directory(plot_dir_))
        return Bad("--plot-dir: cannot create the directory '" + plot_dir_ +
                   "'" + (ec ? ": " + ec.message() : ""));
    }
    // RONDO_* variables of the driver's environment reach every Rondo job
    // whose configuration does not set them.
    for (const auto& [k, v] : Environment())
      if (k.rfind("RONDO_", 0) == 0 && k.rfind("RONDO_RUN_", 0) != 0 &&
          k != "RONDO_RANK" && k != "RONDO_SIZE")
        inherited_[k] = v;
    return 0;
  }

  // Seconds of measurement the program plans for one job (its progress
  // bar's work model: calibration probes, references and cells).
  double WorkSeconds() const {
    const double calib = 8.0 * 5 + 9;  // bench/overlap.c's defaults
    double us = 0;
    for (long long p : comp_us_) us += p * calib;
    for (size_t c = 0; c < collectives_.size(); ++c)
      for (long long m : comm_us_) {
        us += m * calib;
        for (long long p : comp_us_)
          us += a_.reps * (std::max(m, p) + 0.3 * std::min(m, p));
      }
    return us * 1e-6;
  }

  int Timeout() const {
    if (a_.timeout_s > 0) return a_.timeout_s;
    // Generous: a job is slower than its plan when ranks share cores (Open
    // MPI's dedicated job on 2 cores took 37 times its plan); the timeout
    // is there for a hung job.
    return static_cast<int>(
        std::min(86400.0 * 7, std::max(1800.0, 60 * WorkSeconds())));
  }

  static std::vector<std::string> TargetStrings(
      const std::vector<long long>& v) {
    std::vector<std::string> s;
    for (long long x : v) s.push_back(std::to_string(x));
    return s;
  }

  void PrintPlan() const {
    std::printf(
        "overlap: %d ranks; %zu collective(s) (%s) x %zu communication x "
        "%zu computation targets, %d repetitions per cell\n"
        "  communication targets (us): %s\n  computation targets (us):   "
        "%s\n",
        ranks_, collectives_.size(), Join(collectives_, ",").c_str(),
        comm_us_.size(), comp_us_.size(), a_.reps,
        Join(TargetStrings(comm_us_), ",").c_str(),
        Join(TargetStrings(comp_us_), ",").c_str());
    std::printf("  %zu job(s):", jobs_.size());
    for (const Job& j : jobs_)
      std::printf(" %s:%s", j.config.library.c_str(), j.config.config.c_str());
    std::printf("; timeout %s per job\n", Duration(Timeout()).c_str());
    for (const json& s : skipped_)
      std::printf("  skipped %s %s: %s\n",
                  s["library"].get<std::string>().c_str(),
                  s["config"].get<std::string>().c_str(),
                  s["reason"].get<std::string>().c_str());
    if (!inherited_.empty() && programs_.count("rondo"))
      std::printf(
          "  note: from your environment, %s reach(es) every Rondo "
          "job whose configuration does not set it\n",
          EnvText(inherited_).c_str());
    if (ranks_ > sysconf(_SC_NPROCESSORS_ONLN))
      std::printf(
          "  note: %d ranks on %ld processors: ranks share cores and "
          "the figures include the scheduler's time slicing\n",
          ranks_, sysconf(_SC_NPROCESSORS_ONLN));
#ifndef NDEBUG
    std::printf(
        "  note: a debug build; use `bazel run -c opt //bench:overlap`"
        " for figures\n");
#endif
    std::printf("  results: %s\n", plot_dir_.c_str());
    std::fflush(stdout);
  }

  // ---- jobs ----

  void RunJob(size_t k, Job& job) {
    const Config& c = job.config;
    job.out = parts_dir_ + "/" + c.library + "." + c.config + ".jsonl";
    JobSpec spec;
    spec.launcher = job.launcher;
    spec.launcher_path = job.launcher_path;
    spec.ranks = ranks_;
    spec.timeout_s = Timeout();
    spec.program = job.program;
    spec.env = c.env;
    spec.args = {"--out",         job.out,
                 "--label",       c.library + ":" + c.config,
                 "--collectives", Join(collectives_, ","),
                 "--comm-us",     Join(TargetStrings(comm_us_), ","),
                 "--comp-us",     Join(TargetStrings(comp_us_), ","),
                 "--reps",        std::to_string(a_.reps),
                 "--tolerance",   std::to_string(a_.tolerance),
                 "--comm-cores",  std::to_string(c.comm_cores)};
    if (a_.threads > 0) {
      spec.args.push_back("--threads");
      spec.args.push_back(std::to_string(a_.threads));
    }
    if (a_.quiet) spec.args.push_back("--quiet");
    std::printf("\njob %zu/%zu: %s %s (env %s; --comm-cores %d: %s)\n", k + 1,
                jobs_.size(), c.library.c_str(), c.config.c_str(),
                EnvText(c.env).c_str(), c.comm_cores, c.meaning.c_str());
    double done_s = 0;
    int done = 0;
    for (size_t i = 0; i < k; ++i)
      if (jobs_[i].ran) done_s += jobs_[i].seconds, ++done;
    if (done > 0)
      std::printf(
          "  about %s left for the %zu remaining job(s) (%s per job "
          "so far)\n",
          Duration(done_s / done * (jobs_.size() - k)).c_str(),
          jobs_.size() - k, Duration(done_s / done).c_str());
    else
      std::printf(
          "  (the job's progress bar estimates its time; the next "
          "jobs take about as long)\n");
    if (!a_.quiet) std::printf("  %s\n", Join(JobCommand(spec)).c_str());
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    job.status = RunMpiJob(spec, &job.command, &job.interrupted);
    job.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    job.ran = true;
    Collect(job);
    const size_t expected =
        collectives_.size() * comm_us_.size() * comp_us_.size();
    std::string why;
    if (job.interrupted)
      why = "interrupted";
    else if (job.status != 0)
      why = "exit status " + std::to_string(job.status) +
            (job.status == 124 || job.status == 137 ? " (timeout?)" : "");
    if (!job.fails.empty())
      why += std::string(why.empty() ? "" : "; ") + Join(job.fails, "; ");
    if (why.empty() && job.setup.is_null()) why = "no setup line";
    if (why.empty() && job.cells.size() != expected)
      why = std::to_string(job.cells.size()) + " of " +
            std::to_string(expected) + " cells written";
    if (why.empty() && !job.impact) why = "no impact line";
    if (!why.empty()) {
      job.failure = why + " (" + std::to_string(job.cells.size()) + " of " +
                    std::to_string(expected) + " cells written)";
      std::fprintf(stderr, "overlap: job %s %s failed: %s\n", c.library.c_str(),
                   c.config.c_str(), job.failure.c_str());
    } else {
      std::printf("  done in %s: %zu cells\n", Duration(job.seconds).c_str(),
                  job.cells.size());
    }
    std::fflush(stdout);
  }

  // `c` with its targets replaced by the requested ones they stand for: the
  // program prints them with %g (6 significant digits).
  Cell Snapped(Cell c) const {
    auto snap = [](long long x, const std::vector<long long>& targets) {
      for (long long t : targets)
        if (std::llabs(x - t) <= t / 100000) return t;
      return x;
    };
    c.comm_target = snap(c.comm_target, comm_us_);
    c.comp_target = snap(c.comp_target, comp_us_);
    return c;
  }

  void Collect(Job& job) {
    std::ifstream in(job.out);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      json j;
      try {
        j = json::parse(line);
      } catch (const std::exception& e) {
        if (job.bad_lines++ == 0)
          std::fprintf(stderr, "overlap: bad line from %s %s: %s\n",
                       job.config.library.c_str(), job.config.config.c_str(),
                       e.what());
        continue;
      }
      const std::string type = j.is_object() ? j.value("type", "") : "";
      if (type == "setup")
        job.setup = j;
      else if (type == "comm_ref")
        job.comm_refs.push_back(j);
      else if (type == "comp_ref")
        job.comp_refs.push_back(j);
      else if (type == "cell")
        job.cells.push_back(Snapped(ParseCell(j)));
      else if (type == "impact")
        job.impact = j;
      else if (type == "clock") {  // measured at the end: part of the setup
        for (const auto& [k, v] : j.items())
          if (k != "type") job.setup[k] = v;
      }
      else if (type == "fail")
        job.fails.push_back(j.value("what", "failed"));
    }
  }

  // ---- tables ----

  void PrintTables() const {
    for (const Job& job : jobs_) {
      if (job.cells.empty()) continue;
      const Config& c = job.config;
      std::printf("\n%s %s: %s (env %s; --comm-cores %d", c.library.c_str(),
                  c.config.c_str(), c.meaning.c_str(), EnvText(c.env).c_str(),
                  c.comm_cores);
      if (job.setup.is_object())
        std::printf(
            "; %d ranks, %d compute thread(s) per rank, rank 0 on "
            "cpus %s",
            job.setup.value("ranks", 0), job.setup.value("threads", 0),
            job.setup.value("cpus", "?").c_str());
      std::printf(")\n");
      if (job.setup.is_object() && job.setup.value("shared_app_cores", false))
        std::printf(
            "NOTE: the ranks share their application cores (more ranks than "
            "cores left to computation): a rank posts its collective only when "
            "the scheduler switches to it from its neighbour's computation, "
            "so the overlap seen here depends on what preempts the "
            "computation (Rondo's timer thread does, at the computation's "
            "expense: see the MPI impact ratio); read this configuration on "
            "a machine with at least one application core per rank.\n");
      std::printf("%-10s %9s %9s %10s %10s %8s %6s %6s  %s\n", "collective",
                  "comm", "comp", "t_comm_ref", "t_comp_ref", "overhead",
                  "r_comm", "r_comp", "diagnosis");
      std::printf("%s\n", std::string(94, '-').c_str());
      for (const Cell& cell : job.cells)
        std::printf(
            "%-10s %9s %9s %10s %10s %8s %6s %6s  %s\n",
            cell.collective.c_str(), Us(cell.comm_target).c_str(),
            Us(cell.comp_target).c_str(), Us(cell.comm_ref.value_or(0)).c_str(),
            Us(cell.comp_ref.value_or(0)).c_str(), Ratio(cell.overhead).c_str(),
            Ratio(cell.comm_ratio).c_str(), Ratio(cell.comp_slowdown).c_str(),
            Diagnose(cell).c_str());
    }
    std::printf(
        "\n(comm, comp: the target times; t_comm_ref, t_comp_ref: measured "
        "alone; overhead ratio: 0 = perfect overlap, 1 = serialized; r_comm "
        "= (t_call + t_wait) / t_comm_ref; r_comp = t_comp / t_comp_ref. "
        "Diagnosis (paper, Section 3.3): overlap if overhead < 0.3; else no "
        "progression if r_comm >= 0.8 and r_comp < 1.2, computation slowed "
        "if r_comp >= 1.2 and r_comm < 0.5, contention if r_comp >= 1.2 and "
        "r_comm >= 0.8, partial otherwise; invalid: a calibration did not "
        "converge)\n");
    std::fflush(stdout);
  }

  // The median overhead ratio of a job's valid diagonal cells of
  // `collective` ("" = all); NaN without any. `n` gets their number.
  static double DiagonalOverhead(const Job& job, const std::string& collective,
                                 int* n = nullptr) {
    std::vector<double> v;
    for (const Cell& c : job.cells)
      if (c.valid && c.overhead && std::isfinite(*c.overhead) &&
          OnDiagonal(c) && (collective.empty() || c.collective == collective))
        v.push_back(*c.overhead);
    if (n != nullptr) *n = static_cast<int>(v.size());
    return Median(v);
  }

  // The most frequent diagnosis among a job's valid diagonal cells.
  static std::string MostlyDiagnosis(const Job& job) {
    std::map<std::string, int> count;
    for (const Cell& c : job.cells)
      if (c.valid && OnDiagonal(c)) ++count[Diagnose(c)];
    std::string best = "-";
    int most = 0;
    for (const auto& [d, n] : count)
      if (n > most) best = d, most = n;
    return best;
  }

  static std::optional<double> ImpactRatio(const Job& job) {
    if (!job.impact) return std::nullopt;
    return Number(*job.impact, "ratio");
  }

  const Job* FindJob(const std::string& library,
                     const std::string& config) const {
    for (const Job& j : jobs_)
      if (j.config.library == library && j.config.config == config) return &j;
    return nullptr;
  }

  void PrintSummary() const {
    std::printf(
        "\nSummary: median overhead ratio on the diagonal (valid cells whose "
        "communication and computation targets are within %gx of each "
        "other; 0 = perfect overlap, 1 = serialized) and the MPI impact "
        "ratio (1 = an idle MPI costs the computation nothing)\n",
        kDiagonalFactor);
    std::printf("%-18s", "library:config");
    for (const std::string& coll : collectives_)
      std::printf(" %10s", coll.c_str());
    std::printf(" %8s %7s  %s\n", "all", "impact", "mostly");
    std::printf("%s\n",
                std::string(18 + 11 * collectives_.size() + 36, '-').c_str());
    for (const Job& job : jobs_) {
      std::printf("%-18s",
                  (job.config.library + ":" + job.config.config).c_str());
      for (const std::string& coll : collectives_)
        std::printf(" %10s", Ratio(DiagonalOverhead(job, coll)).c_str());
      int n = 0;
      const double all = DiagonalOverhead(job, "", &n);
      std::printf(" %8s %7s  %s%s\n", Ratio(all).c_str(),
                  Ratio(ImpactRatio(job)).c_str(), MostlyDiagnosis(job).c_str(),
                  job.failure.empty() ? "" : " (job failed)");
    }
    // Side by side.
    if (programs_.count("rondo") && programs_.count("openmpi")) {
      std::printf(
          "\nRondo against Open MPI: median diagonal overhead ratio, "
          "rondo / openmpi (lower is better)\n");
      std::printf("%-10s", "config");
      for (const std::string& coll : collectives_)
        std::printf(" %11s", coll.c_str());
      std::printf(" %11s %11s  %s\n", "all", "impact", "better overlap");
      std::printf("%s\n",
                  std::string(10 + 12 * collectives_.size() + 40, '-').c_str());
      for (const std::string& config : configs_) {
        const Job* r = FindJob("rondo", config);
        const Job* o = FindJob("openmpi", config);
        if (r == nullptr && o == nullptr) continue;
        auto pair = [](const Job* r, const Job* o, const std::string& coll) {
          const std::string a =
              r ? Ratio(DiagonalOverhead(*r, coll)) : std::string("-");
          const std::string b =
              o ? Ratio(DiagonalOverhead(*o, coll)) : std::string("-");
          return a + "/" + b;
        };
        std::printf("%-10s", config.c_str());
        for (const std::string& coll : collectives_)
          std::printf(" %11s", pair(r, o, coll).c_str());
        std::printf(" %11s", pair(r, o, "").c_str());
        std::printf(" %11s",
                    ((r ? Ratio(ImpactRatio(*r)) : std::string("-")) + "/" +
                     (o ? Ratio(ImpactRatio(*o)) : std::string("-")))
                        .c_str());
        std::string better = "-";
        if (r && o) {
          const double x = DiagonalOverhead(*r, ""),
                       y = DiagonalOverhead(*o, "");
          if (std::isfinite(x) && std::isfinite(y))
            better = std::fabs(x - y) < 0.05 ? "same"
                     : x < y                 ? "rondo"
                                             : "openmpi";
        } else {
          for (const json& s : skipped_)
            if (s["config"] == config)
              better = s["library"].get<std::string>() + " skipped";
        }
        std::printf("  %s\n", better.c_str());
      }
    }
    std::fflush(stdout);
  }

  // ---- files ----

  json ConfigsJson() const {
    json out = json::array();
    for (const Job& job : jobs_) {
      const Config& c = job.config;
      json env = c.env;
      json j = {{"library", c.library},
                {"config", c.config},
                {"meaning", c.meaning},
                {"env", env},
                {"comm_cores", c.comm_cores},
                {"launcher", LauncherDescription(job.launcher, "core")},
                {"launcher_env", LauncherEnvironment(job.launcher)},
                {"program", job.program},
                {"command",
                 job.command.empty() ? json(nullptr) : json(Join(job.command))},
                {"exit_status", job.ran ? json(job.status) : json(nullptr)},
                {"seconds", job.seconds},
                {"setup", job.setup},
                {"comm_ref", job.comm_refs},
                {"comp_ref", job.comp_refs}};
      if (c.library == "rondo") {
        json inherited = json::object();
        for (const auto& [k, v] : inherited_)
          if (c.env.count(k) == 0) inherited[k] = v;
        j["env_inherited"] = inherited;
      }
      out.push_back(j);
    }
    return out;
  }

  int WriteOutputs() const {
    Report report("overlap");
    std::string csv = std::string(kCsvHeader) + "\n";
    std::string impact = "library,config,ratio\n";
    int rows = 0, impact_rows = 0;
    for (const Job& job : jobs_) {
      const Config& c = job.config;
      for (const Cell& cell : job.cells) {
        CaseResult r;
        r.name = CaseName(c.library, c.config, cell);
        std::vector<double> ns;
        for (double us : cell.samples_us) ns.push_back(us * 1e3);
        r.stats = Summarize(ns);
        r.extra = {{"library", c.library},
                   {"config", c.config},
                   {"collective", cell.collective},
                   {"comm_target_us", cell.comm_target},
                   {"comp_target_us", cell.comp_target},
                   {"valid", cell.valid},
                   {"overhead_ratio", OrNull(cell.overhead)},
                   {"comm_ratio", OrNull(cell.comm_ratio)},
                   {"comp_slowdown", OrNull(cell.comp_slowdown)},
                   {"t_measured_ns", NsOrNull(cell.measured)},
                   {"t_comm_ref_ns", NsOrNull(cell.comm_ref)},
                   {"t_comp_ref_ns", NsOrNull(cell.comp_ref)},
                   {"t_call_ns", NsOrNull(cell.call)},
                   {"t_comp_ns", NsOrNull(cell.comp)},
                   {"t_wait_ns", NsOrNull(cell.wait)},
                   {"bytes", cell.bytes},
                   {"order", cell.order},
                   {"reps", cell.reps},
                   {"diagnosis", Diagnose(cell)}};
        report.Add(std::move(r));
        csv += c.library + "," + c.config + "," + cell.collective + "," +
               std::to_string(cell.comm_target) + "," +
               std::to_string(cell.comp_target) + "," +
               CsvNumber(cell.comm_ref) + "," + CsvNumber(cell.comp_ref) + "," +
               CsvNumber(cell.measured) + "," + CsvNumber(cell.overhead) + "," +
               CsvNumber(cell.comm_ratio) + "," +
               CsvNumber(cell.comp_slowdown) + "," + (cell.valid ? "1" : "0") +
               "\n";
        ++rows;
      }
      if (job.impact) {
        const json& j = *job.impact;
        const std::optional<double> passive = Number(j, "t_comp_passive_us");
        const std::optional<double> ratio = Number(j, "ratio");
        CaseResult r;
        r.name = "mpi_impact:" + c.library + ":" + c.config;
        if (passive && std::isfinite(*passive)) {
          r.stats.median_ns = r.stats.min_ns = r.stats.p99_ns = r.stats.max_ns =
              r.stats.mean_ns = *passive * 1e3;
          r.stats.samples = 1;
        }
        r.extra = {{"library", c.library},
                   {"config", c.config},
                   {"ratio", OrNull(ratio)},
                   {"t_comp_passive_ns", NsOrNull(passive)},
                   {"t_comp_nompi_ns", NsOrNull(Number(j, "t_comp_nompi_us"))},
                   {"order", j.value("order", 0)}};
        report.Add(std::move(r));
        impact += c.library + "," + c.config + "," + CsvNumber(ratio) + "\n";
        ++impact_rows;
      }
    }
    int rc = 0;
    json failed = json::array();
    for (const Job& job : jobs_)
      if (!job.failure.empty())
        failed.push_back(
            {{"library", job.config.library},
             {"config", job.config.config},
             {"reason", job.failure},
             {"exit_status", job.ran ? json(job.status) : json(nullptr)},
             {"cells_written", job.cells.size()}});
    json machine = {
        {"ranks", ranks_},
        {"collectives", collectives_},
        {"comm_targets_us", comm_us_},
        {"comp_targets_us", comp_us_},
        {"reps", a_.reps},
        {"tolerance", a_.tolerance},
        {"full", a_.full},
        {"timeout_s", Timeout()},
        {"diagonal_factor", kDiagonalFactor},
    };
    json doc = report.ToJson(machine);
    doc["skipped"] = skipped_;
    doc["failed"] = failed;
    doc["configs"] = ConfigsJson();
    doc["command"] = Join(Quoted(a_.command));
    auto write = [&](const std::string& path, const std::string& text,
                     const char* what) {
      std::ofstream out(path);
      out << text;
      out.close();
      if (!out) {
        std::fprintf(stderr, "overlap: cannot write %s to '%s'\n", what,
                     path.c_str());
        rc = 1;
        return false;
      }
      std::printf("%s written to %s\n", what, path.c_str());
      return true;
    };
    std::printf("\n");
    write(json_, doc.dump(2) + "\n", "JSON");
    const bool csv_ok = write(csv_, csv, "CSV");
    const bool impact_ok = write(impact_csv_, impact, "impact CSV");
    if (rows == 0) {
      std::printf("overlap: no cell measured; no plots\n");
    } else if (csv_ok) {
      std::vector<std::string> args = {"--csv", csv_, "--out-dir", plot_dir_};
      if (impact_ok && impact_rows > 0) {
        args.push_back("--impact-csv");
        args.push_back(impact_csv_);
      }
      args.push_back("--title-prefix");
      args.push_back(std::to_string(ranks_) + " ranks:");
      if (RunPythonScript(argv0_, "overlap", "bench/overlap_plot.py", args) !=
          0)
        rc = 1;
      else
        std::printf("plots in %s\n", plot_dir_.c_str());
    }
    std::fflush(stdout);
    return rc;
  }

  static std::vector<std::string> Quoted(const std::vector<std::string>& v) {
    std::vector<std::string> out;
    for (const std::string& s : v)
      out.push_back(s.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_=+,./:@") ==
                            std::string::npos
                        ? s
                        : ShellQuote(s));
    return out;
  }

  const char* argv0_;
  Args a_;
  int ranks_ = 2;
  std::vector<std::string> configs_, collectives_;
  std::vector<long long> comm_us_, comp_us_;
  std::map<std::string, std::pair<std::string, std::string>>
      programs_;  // library -> (program, launcher)
  std::map<std::string, std::string> inherited_;
  std::vector<Job> jobs_;
  std::vector<json> skipped_;
  std::string plot_dir_, csv_, impact_csv_, json_, parts_dir_;
};

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args a;
  a.command.assign(argv, argv + argc);
  CLI::App app{
      "Overlap of MPI nonblocking collectives with computation (the "
      "methodology of Denis et al.; docs/overlap.md): Rondo's MadMPI and "
      "Open MPI side by side, one job per library and configuration.\n\n"
      "Configurations (how each job is started):\n"
      "  rondo default      no RONDO_ variable set: the defaults (quiet "
      "progress where no core is free), --comm-cores 0\n"
      "  rondo basic        RONDO_PROGRESS=none RONDO_TIMER_US=0, "
      "--comm-cores 0: progress only inside MPI calls\n"
      "  rondo progress     RONDO_PROGRESS=bind RONDO_TIMER_US=0, "
      "--comm-cores 0: a progress thread on each rank's core\n"
      "  rondo timer        RONDO_PROGRESS=none RONDO_TIMER_US=50, "
      "--comm-cores 0 (only if asked)\n"
      "  rondo dedicated    RONDO_COMM_CORES=1 RONDO_TIMER_US=200, --comm-cores 1: one core "
      "kept for the progress threads\n"
      "  openmpi basic      Open MPI's defaults, --comm-cores 0\n"
      "  openmpi progress   skipped: no asynchronous progress thread in "
      "Open MPI 4.1's shared-memory and TCP transports\n"
      "  openmpi timer      skipped: no timer-driven progress\n"
      "  openmpi dedicated  --comm-cores 1: the core is left idle\n"
      "Rondo runs under `rondo-run -n N --bind core`, Open MPI under `mpirun "
      "--map-by core --bind-to core:overload-allowed` (bench/jobs.h).\n\n"
      "Writes DIR/overlap.json, DIR/overlap.csv, DIR/impact.csv and the "
      "heat-maps (python3 + matplotlib) into --plot-dir DIR. Exit status: "
      "0 all jobs complete, 1 a job failed, 2 bad arguments."};
  app.get_formatter()->column_width(30);
  app.add_option("--json", a.json,
                 "write the results as JSON here (default DIR/overlap.json)");
  app.add_option("--csv", a.csv,
                 "write the cells as CSV here (default DIR/overlap.csv)");
  app.add_option("--plot-dir", a.plot_dir,
                 "directory DIR for the CSVs, JSON and heat-maps (default "
                 "overlap-report in the current directory)");
  app.add_option("--libraries", a.libraries,
                 "rondo and/or openmpi (default rondo; see --compare)");
  app.add_flag("--compare", a.compare,
               "comparison mode: the same grid with Open MPI too, in the same "
               "invocation (skipped with a message when it is not installed), "
               "side by side");
  app.add_option("--configs", a.configs,
                 "default, basic, progress, dedicated and/or timer (default "
                 "default,basic,progress,dedicated)");
  app.add_option("--collectives", a.collectives,
                 "among ibcast,ireduce,iallreduce,iallgather,ialltoall "
                 "(default all five)");
  app.add_option("--ranks", a.ranks, "MPI ranks per job, 1..256 (default 2)");
  app.add_option("--comm-us", a.comm_us,
                 "communication target times in microseconds (default "
                 "100,316,1000,3162,10000; --full: 500 .. 1000000)");
  app.add_option("--comp-us", a.comp_us,
                 "computation target times in microseconds (default as "
                 "--comm-us)");
  app.add_option("--reps", a.reps,
                 "measured repetitions per cell (default 7, --full 20)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--tolerance", a.tolerance,
                 "calibration: a target is reached within this relative "
                 "error, else the cell is invalid (default 0.10, the "
                 "paper's 10%)")
      ->check(CLI::Range(0.01, 1.0));
  app.add_flag("--full", a.full,
               "the paper's grid for a real cluster: 500 us .. 1 s on both "
               "axes, 20 repetitions (hours)");
  app.add_option("--timeout", a.timeout_s,
                 "seconds per job before the launcher kills it (default: "
                 "60 times the planned measurement, at least 1800)")
      ->check(CLI::Range(10, 7 * 86400));
  app.add_option("--threads", a.threads,
                 "computation threads per rank (default one per core of the "
                 "rank's share of the node)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--mpirun", a.mpirun,
                 "Open MPI's mpirun (default /usr/bin/mpirun)");
  app.add_flag("--quiet", a.quiet,
               "no progress bars or command lines: the job lines, the "
               "summary and the files");
  app.add_flag("--cells", a.cells,
               "also print every cell of every job (they are always in the "
               "CSV and the JSON)");
  // For tests: a stand-in program for a library (LIB=PATH).
  app.add_option("--program-override", a.program_override)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    if (rc != 0)
      std::fprintf(stderr,
                   "overlap: bad argument; --help lists the values allowed\n");
    return rc == 0 ? 0 : 2;
  }
  try {
    return rondo::bench::Driver(argv[0], a).Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overlap: %s\n", e.what());
    return 1;
  }
}
