// bench/overlap: overlap of MPI nonblocking collectives with computation,
// by the methodology of Denis et al. ("A methodology for assessing
// computation/communication overlap of MPI nonblocking collectives"; issue
// 7, docs/overlap.md), for Rondo's MadMPI and Open MPI side by side, in
// several progress configurations.
//
//   bazel run -c opt //bench/overlap:overlap -- [--json FILE] [--csv FILE]
//       [--plot-dir DIR] [--compare | --libraries rondo,openmpi]
//       [--configs default,basic,progress,dedicated,timer]
//       [--collectives ibcast,ireduce,iallreduce,iallgather,ialltoall]
//       [--ranks 2] [--comm-us LIST] [--comp-us LIST] [--reps 7] [--full]
//       [--tolerance 0.1]
//       [--timeout S] [--quiet] [--cluster K|auto [--rate R]
//       [--launcher mpirun|srun]]
//
// --cluster K runs on K emulated hosts (bench/cluster), one rank per host,
// started by each library's own launcher in host 0 (--launcher mpirun: Open
// MPI's mpirun for Rondo and Open MPI through PMIx, Hydra for MPICH), or by
// Slurm (--launcher srun: `cluster.sh slurm up K+1` puts slurmctld in an
// extra host 0 and slurmd on the K others, this driver runs inside host 0
// through `cluster.sh slurm run`, each job is `srun --mpi=pmix -N K -n K
// --ntasks-per-node=1`, and `slurm down` removes everything afterwards;
// MPICH is skipped there: Debian's MPICH has no PMIx client). The results
// have the same schema either way.
//
// The measuring program is bench/overlap/overlap.c, built twice from the same
// source: overlap_rondo (Rondo's mpi.h) and overlap_openmpi (Open MPI's). It
// calibrates a message size per collective and communication target and a
// GEMM order per computation target, measures every cell of the grid
// (Algorithm 1 of the paper) and the MPI impact ratio, and writes JSON lines
// from rank 0 (below). This driver runs it once per (library,
// configuration), one job at a time, then merges the results.
//
// Configurations: how each job is started (bench/common/jobs.h has the
// launchers' command lines; the variables override the driver's environment for
// that job only, other RONDO_* variables of the driver's environment pass
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
//   kernel default    not a library: the kernel's floor beside the
//                     computation (issue 27). overlap_openmpi --kernel-floor
//                     under Open MPI's launcher: each collective's least
//                     traffic (2 ranks only) moved by helper threads blocked
//                     in TCP send/recv (bench/overlap/overlap_kernel.h), MPI
//                     only around the timed parts. In the jobs with
//                     --compare on a 2-host cluster; every other library's
//                     summary then gives its overhead and r_comp minus the
//                     floor's (overhead_minus_kernel_floor,
//                     comp_slowdown_minus_kernel_floor).
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
//  * JSON (--json FILE, else DIR/overlap.json; bench/common/report.h's schema):
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
//    (library,config,ratio): the input of bench/overlap/overlap_plot.py,
//    which then draws the heat-maps into DIR (python3 with matplotlib;
//    without it the driver says so and goes on).
// Exit status: 0 when every job ran and wrote all its lines; 1 when a job
// failed or was interrupted (what was measured is still written); 2 on bad
// arguments.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/cluster/cluster_run.h"
#include "bench/common/jobs.h"
#include "bench/common/plot.h"
#include "bench/common/report.h"
#include "bench/overlap/overlap_metrics.h"

namespace rondo::bench {
namespace {

using nlohmann::json;

const char* const kCollectives[] = {"ibcast", "ireduce", "iallreduce",
                                    "iallgather", "ialltoall"};
const char* const kConfigs[] = {"default", "basic", "progress", "dedicated",
                                "timer"};
// "kernel" is not a library: the kernel's floor beside the computation (the
// collective's bytes moved by threads blocked in TCP sockets; overlap.c's
// --kernel-floor, run by Open MPI's build and launcher).
const char* const kLibraries[] = {"rondo", "openmpi", "mpich", "kernel"};
constexpr const char* kDefaultTargets = "100,316,1000,3162,10000";
constexpr const char* kFullTargets =
    "500,1000,2500,5000,10000,25000,50000,100000,250000,500000,1000000";
constexpr int kDefaultReps = 7, kFullReps = 20;
constexpr double kDiagonalFactor = 3.0;
// The emulated cluster's defaults: the four collectives of issue 16's
// targets, the link rate of a commodity cluster, and messages of 1 and 4 MiB
// for the pure communication times.
constexpr const char* kClusterCollectives =
    "ibcast,iallreduce,iallgather,ialltoall";
constexpr const char* kClusterConfigs = "default,basic,progress,timer";
constexpr const char* kClusterCommBytes = "1048576,4194304";
constexpr double kMiB = 1048576.0;
// A cell is significant when the 95% confidence interval of its overhead
// ratio is within +-kSignificance (bootstrap over its repetitions and its
// references' runs): the noise is at most a quarter of the denominator.
constexpr double kSignificance = 0.25;
constexpr int kBootstrap = 1000;
const char* const kCsvHeader =
    "library,config,collective,comm_target_us,comp_target_us,comm_us,"
    "comp_us,measured_us,overhead_ratio,comm_ratio,comp_slowdown,valid,"
    "bytes,significant,ci_low,ci_high";

struct Args {
  std::string json, csv, plot_dir = "overlap-report";
  std::string libraries;  // empty: rondo, plus the peers with --compare
  std::string configs;      // empty: the mode's default list
  std::string collectives;  // empty: the mode's default list
  std::string ranks;        // empty: 2 (shared memory), K (cluster)
  // --cluster, --rate, --launcher, --srun (bench/cluster/cluster_run.h).
  cluster::ClusterArgs cl;
  std::string comm_bytes;          // empty: the mode's default
  double min_bytes = -1;           // < 0: 1 MiB on the cluster, else 0
  double significance = kSignificance;
  std::string mpirun_mpich = "/usr/bin/mpirun.mpich";
  std::string comm_us, comp_us;  // empty: kDefaultTargets (--full: kFull...)
  int reps = 0;                  // 0: kDefaultReps (--full: kFullReps)
  int invocations = 1;           // every job this many times, in turn
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

Config DescribeConfig(const std::string& library, const std::string& config,
                      bool cluster, int ranks) {
  Config c{library, config, {}, 0, "", ""};
  if (library == "kernel") {
    if (config != "default")
      c.skip_reason = "the kernel floor has one configuration (default)";
    else if (ranks != 2)
      c.skip_reason = "the kernel floor is measured between exactly 2 ranks (" +
                      std::to_string(ranks) + " here)";
    else
      c.meaning =
          std::string("the kernel's floor: the collective's bytes moved by "
                      "threads blocked in TCP send/recv, no MPI during the "
                      "computation") +
          (cluster ? "" : " (over the loopback: not a floor for shared memory)");
    return c;
  }
  if (cluster && config == "dedicated") {
    c.skip_reason =
        "an emulated host has no core to spare (bench/cluster gives each "
        "host its share of this machine's cores)";
    return c;
  }
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
    return c;
  }
  const std::string name = library == "openmpi" ? "Open MPI" : "MPICH";
  if (config == "default") {
    c.meaning = name + "'s defaults";
  } else if (config == "basic") {
    c.skip_reason = "the same as " + library + " default (" + name +
                    "'s defaults progress only inside MPI calls)";
  } else if (config == "progress") {
    if (library == "mpich") {
      c.env = {{"MPIR_CVAR_ASYNC_PROGRESS", "1"}};
      c.meaning = "MPICH's asynchronous progress thread";
    } else {
      c.skip_reason =
          "Open MPI 4.1's shared-memory and TCP transports have no "
          "asynchronous progress thread";
    }
  } else if (config == "timer") {
    c.skip_reason = name + " has no timer-driven progress";
  } else if (library == "mpich") {
    c.skip_reason = "not measured for MPICH (see mpich progress)";
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
  std::vector<double> comp_ref_samples_us;  // paired runs (cluster)
  // The CPU that was not the computation, summed over the ranks, per MiB
  // handled (bench/overlap/overlap.c, step 8): over the whole collective and
  // during the computation only.
  std::optional<double> progress_cpu_ns_per_mib, progress_cpu_comp_ns_per_mib;
  // The 95% confidence interval of the overhead ratio and whether it is
  // narrow enough (Driver::Significance).
  std::optional<double> ci_low, ci_high;
  bool significant = false;
};

// The paper's Section 3.3: with good overlap r_comm ~ 0 and
// r_comp_slowdown ~ 1. No progression: the communication happens in
// MPI_Wait (r_comm ~ 1), the computation is undisturbed; computation
// slowed: the progression overlaps but steals the computation's CPU;
// contention: both.
std::string Diagnose(const Cell& c) {
  if (!c.valid) return "invalid";
  if (!c.overhead || !c.comm_ratio || !c.comp_slowdown) return "-";
  if (!c.significant) return "not significant";
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
  std::optional<json> impact;          // rank 0's
  std::vector<json> impact_ranks;      // every rank's that was written
  std::vector<json> comm_sizes;        // comm_size lines
  std::vector<std::string> fails;
  int bad_lines = 0;
  std::string failure;  // non-empty: the job failed, why
  bool finalize_hang = false;      // the library hung in MPI_Finalize
  bool impact_missing_ok = false;  // ... so the impact line is missing
  std::string note;                // reported, not a failure
  int invocation = 0;              // --invocations: 0 .. N-1
  // Issue 27: every rank's passive runs (written before MPI_Finalize), the
  // computation alone in processes that never initialise MPI (run after
  // the job), rank 0's CPU per thread, and the kernel's floor (a plain TCP
  // transfer between the same hosts, run before the job).
  std::vector<json> passive_ranks, alone_ranks;
  json threads;
  json floor;  // {send, recv, bytes, ns_per_mib} or {error}
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
  c.progress_cpu_ns_per_mib = Number(j, "progress_cpu_ns_per_mib");
  c.progress_cpu_comp_ns_per_mib = Number(j, "progress_cpu_comp_ns_per_mib");
  if (j.contains("samples_comp_ref_us") && j["samples_comp_ref_us"].is_array())
    for (const json& s : j["samples_comp_ref_us"])
      if (s.is_number() && std::isfinite(s.get<double>()))
        c.comp_ref_samples_us.push_back(s.get<double>());
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
    if (hosts_ > 0 && !a_.cl.inside) return plan_.RunSelfInside(a_.command);
    PrintPlan();
    char tmpl[] = "/tmp/rondo-overlap.XXXXXX";
    if (mkdtemp(tmpl) == nullptr)
      throw std::runtime_error("cannot make a temporary directory in /tmp");
    parts_dir_ = tmpl;
    bool stop = false;
    // --invocations N: the whole list of jobs N times in turn; the tables,
    // cells and CSV are the first invocation's, the spread is over all.
    for (int inv = 1; inv < a_.invocations; ++inv) {
      repeats_.push_back(jobs_);
      for (Job& job : repeats_.back()) job.invocation = inv;
    }
    for (int inv = 0; inv < a_.invocations; ++inv)
      for (size_t k = 0; k < jobs_.size(); ++k) {
        Job& job = inv == 0 ? jobs_[k] : repeats_[inv - 1][k];
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
    for (const auto& list : repeats_)
      for (const Job& job : list) failed += !job.failure.empty();
    if (failed > 0) {
      std::fprintf(stderr, "\noverlap: %d of %zu job(s) failed:\n", failed,
                   jobs_.size() * a_.invocations);
      for (const Job* job : AllJobs())
        if (!job->failure.empty())
          std::fprintf(stderr, "  %s %s (invocation %d): %s\n",
                       job->config.library.c_str(), job->config.config.c_str(),
                       job->invocation + 1, job->failure.c_str());
      rc = 1;
    }
    return rc;
  }

 private:
  // Every invocation's jobs.
  std::vector<const Job*> AllJobs() const {
    std::vector<const Job*> all;
    for (const Job& j : jobs_) all.push_back(&j);
    for (const auto& list : repeats_)
      for (const Job& j : list) all.push_back(&j);
    return all;
  }

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
  // most 32 (bench/overlap/overlap.c's limits), sorted.
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

  // ---- the emulated cluster ----

  // --cluster, --rate, --launcher (bench/cluster/cluster_run.h): hosts_ (0 =
  // shared memory) and rate_bits_; 0, or the exit status (2 bad arguments, 1
  // the machine cannot do it).
  int ParseCluster() {
    std::string message;
    const int rc = plan_.Parse(a_.cl, &message);
    if (rc == 2) return Bad(message);
    if (rc != 0) {
      std::fprintf(stderr, "overlap: %s Without --cluster, or with --cluster "
                   "auto, the shared-memory comparison runs instead.\n",
                   message.c_str());
      return rc;
    }
    if (!message.empty())
      std::printf("overlap: %s: the shared-memory comparison cannot show "
                  "overlap on a machine whose cores all compute "
                  "(docs/overlap.md)\n", message.c_str());
    hosts_ = plan_.hosts();
    rate_bits_ = plan_.rate_bits();
    return 0;
  }

  // The targets on the cluster: 1.5, 3 and 6 times the time one MiB takes
  // on a link (two significant digits), so that the messages of the
  // diagonal cells run from about 1 MiB to about 10 MiB (--comm-us and
  // --comp-us for more; a 4x4 grid up to 12 times took 3 min per job here,
  // 20 min for the seven jobs of --compare).
  std::string ClusterTargets() const {
    const double mib_us = kMiB * 8 / rate_bits_ * 1e6;
    double base = 1.5 * mib_us;
    const double scale = std::pow(10.0, std::floor(std::log10(base)) - 1);
    base = std::round(base / scale) * scale;
    std::vector<std::string> out;
    for (double f : {1.0, 2.0, 4.0})
      out.push_back(std::to_string(std::llround(
          std::clamp(base * f, 1.0, 1e8))));
    return Join(out, ",");
  }

  // The build of overlap.c a library's jobs run: the kernel floor's is Open
  // MPI's (MPI only around the timed parts, and no progress thread).
  static std::string Build(const std::string& library) {
    return library == "kernel" ? "openmpi" : library;
  }

  // Checks the arguments, finds the programs and plans the jobs; 0, or the
  // exit status (2 bad arguments, 1 nothing can run).
  int Setup() {
    if (const int rc = ParseCluster(); rc != 0) return rc;
    if (!a_.ranks.empty() || hosts_ == 0) {
      const std::string given = a_.ranks.empty() ? "2" : a_.ranks;
      char* end = nullptr;
      errno = 0;
      const long n = std::strtol(given.c_str(), &end, 10);
      if (*end != '\0' || errno != 0 || n < 1 || n > 256)
        return Bad("--ranks: '" + given +
                   "' is not allowed; expected an integer in 1..256");
      ranks_ = static_cast<int>(n);
      if (hosts_ > 0 && ranks_ != hosts_)
        return Bad("--ranks " + given + " with --cluster " +
                   std::to_string(hosts_) +
                   ": the cluster runs one rank per host; leave --ranks out");
    } else {
      ranks_ = hosts_;
    }
    std::vector<std::string> libraries;
    const bool explicit_libraries = !a_.libraries.empty();
    if (explicit_libraries &&
        !Members("--libraries", a_.libraries, kLibraries, &libraries))
      return 2;
    if (!explicit_libraries) libraries = {"rondo"};
    const bool cluster = hosts_ > 0;
    if (!explicit_libraries && a_.compare) {
      libraries.push_back("openmpi");
      libraries.push_back("mpich");
      // On a network, the floor every library is read against (issue 27).
      if (cluster && ranks_ == 2) libraries.push_back("kernel");
    }
    if (!Members("--configs",
                 !a_.configs.empty() ? a_.configs
                 : cluster           ? kClusterConfigs
                                     : "default,basic,progress,dedicated",
                 kConfigs, &configs_))
      return 2;
    if (!Members("--collectives",
                 !a_.collectives.empty() ? a_.collectives
                 : cluster               ? kClusterCollectives
                                         : "ibcast,ireduce,iallreduce,"
                                           "iallgather,ialltoall",
                 kCollectives, &collectives_))
      return 2;
    const std::string grid =
        cluster ? ClusterTargets() : a_.full ? kFullTargets : kDefaultTargets;
    if (!Targets("--comm-us", a_.comm_us.empty() ? grid : a_.comm_us,
                 &comm_us_) ||
        !Targets("--comp-us", a_.comp_us.empty() ? grid : a_.comp_us,
                 &comp_us_))
      return 2;
    {
      const std::string sizes =
          !a_.comm_bytes.empty() ? a_.comm_bytes
          : cluster              ? kClusterCommBytes
                                 : "";
      for (const std::string& item : Split(sizes)) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(item.c_str(), &end, 10);
        if (*end != '\0' || errno != 0 || v < 8 || v > (1LL << 33) ||
            v % 8 != 0)
          return Bad("--comm-bytes: '" + item +
                     "' is not allowed; expected multiples of 8 bytes in "
                     "8..8589934592, comma-separated, such as " +
                     kClusterCommBytes);
        if (std::find(comm_bytes_.begin(), comm_bytes_.end(), v) ==
            comm_bytes_.end())
          comm_bytes_.push_back(v);
      }
      if (comm_bytes_.size() > 32)
        return Bad("--comm-bytes: at most 32 sizes");
    }
    min_bytes_ = a_.min_bytes >= 0 ? a_.min_bytes : cluster ? kMiB : 0;
    if (a_.reps == 0) a_.reps = a_.full ? kFullReps : kDefaultReps;
    std::map<std::string, std::string> overrides;
    for (const std::string& o : a_.program_override) {
      const size_t eq = o.find('=');
      if (eq == std::string::npos ||
          std::find(std::begin(kLibraries), std::end(kLibraries),
                    o.substr(0, eq)) == std::end(kLibraries))
        return Bad("--program-override: '" + o +
                   "' is not allowed; expected rondo=PATH, openmpi=PATH, "
                   "mpich=PATH or kernel=PATH");
      overrides[o.substr(0, eq)] = UserPath(o.substr(eq + 1));
    }
    // Programs.
    for (const std::string& library : libraries) {
      std::string missing;
      std::string program =
          overrides.count(library)
              ? overrides[library]
              : FindExecutable(argv0_, "bench/overlap/overlap_" + Build(library),
                               &missing);
      if (!program.empty() && !Executable(program)) {
        missing = program + " is not an executable file";
        program.clear();
      }
      std::string launcher;
      if (program.empty()) {
        missing += "; build it with `bazel build -c opt "
                   "//bench/overlap:overlap_" +
                   Build(library) + "`";
      } else if (cluster && a_.cl.launcher == "srun" && library == "mpich") {
        missing = "Debian's MPICH 4.0.2 has no PMIx client and srun starts "
                  "ranks through PMIx here (--launcher srun runs Rondo and "
                  "Open MPI)";
      } else if (cluster && a_.cl.launcher == "srun") {
        if (Executable(a_.cl.srun))
          launcher = a_.cl.srun;
        else
          missing = a_.cl.srun + " not found (Debian package slurm-client)";
      } else if (library == "mpich" && !Executable(a_.mpirun_mpich)) {
        missing = a_.mpirun_mpich +
                  " not found (Debian package mpich; or --mpirun-mpich PATH)";
      } else if (library != "mpich" && cluster && !Executable(a_.mpirun)) {
        missing = a_.mpirun + " not found (Debian package openmpi-bin; it " +
                  "starts Rondo's and Open MPI's ranks on the emulated hosts)";
      } else if (cluster) {
        launcher = Env("CLUSTER_SH");
        if (launcher.empty())
          launcher = FindExecutable(argv0_, "bench/cluster/cluster.sh",
                                    &missing);
      } else if (library == "mpich") {
        launcher = a_.mpirun_mpich;
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
        Config c = DescribeConfig(library, config, cluster, ranks_);
        if (c.skip_reason.empty() && !cluster && c.comm_cores >= processors)
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
        if (cluster && a_.cl.launcher == "srun")
          job.launcher = Launcher::kClusterSrun;
        else if (cluster)
          job.launcher = c.library == "mpich" ? Launcher::kClusterMpich
                                              : Launcher::kClusterOpenMpi;
        else
          job.launcher = c.library == "rondo"   ? Launcher::kRondoRun
                         : c.library == "mpich" ? Launcher::kMpich
                                                : Launcher::kMpirun;
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
    const double calib = 8.0 * 5 + 9;  // bench/overlap/overlap.c's defaults
    double us = 0;
    for (long long p : comp_us_) us += p * calib;
    for (size_t c = 0; c < collectives_.size(); ++c)
      for (long long m : comm_us_) {
        us += m * calib;
        for (long long p : comp_us_)
          us += a_.reps * (std::max(m, p) + 0.3 * std::min(m, p) +
                           (hosts_ > 0 ? p : 0));
      }
    return us * 1e-6;
  }

  int Timeout() const {
    if (a_.timeout_s > 0) return a_.timeout_s;
    // Generous: a job is slower than its plan when ranks share cores (Open
    // MPI's dedicated job on 2 cores took 37 times its plan); the timeout
    // is there for a hung job.
    // On the cluster the machine is not shared between ranks as in shared
    // memory, and a library that hangs must not hold the main job long.
    if (hosts_ > 0)
      return static_cast<int>(std::max(300.0, 10 * WorkSeconds()));
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
        "  note: a debug build; use `bazel run -c opt //bench/overlap:overlap`"
        " for figures\n");
#endif
    std::printf("  results: %s\n", plot_dir_.c_str());
    std::fflush(stdout);
  }

  // ---- jobs ----

  void RunJob(size_t k, Job& job) {
    const Config& c = job.config;
    job.out = parts_dir_ + "/" + c.library + "." + c.config + ".inv" +
              std::to_string(job.invocation) + ".jsonl";
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
    if (hosts_ > 0) {
      // A host is a cpuset of this machine, and the ranks start unbound.
      spec.args.push_back("--node-cpus");
      spec.args.push_back("affinity");
      // This VM's cores change speed by up to 2x within seconds (the same
      // loop took 200 to 440 ms on one core, minutes apart): each
      // repetition times the computation alone too, as its reference.
      spec.args.push_back("--paired-comp-ref");
      // Each calibration probe is the median of 3 runs instead of 5: the
      // paired references make the cells independent of the calibration's
      // precision (it only has to land near the target), and it was half
      // of each job's time.
      spec.args.push_back("--calib-runs");
      spec.args.push_back("3");
    }
    if (!comm_bytes_.empty()) {
      std::vector<std::string> sizes;
      for (long long b : comm_bytes_) sizes.push_back(std::to_string(b));
      spec.args.push_back("--comm-bytes");
      spec.args.push_back(Join(sizes, ","));
    }
    if (a_.quiet) spec.args.push_back("--quiet");
    if (c.library == "kernel") spec.args.push_back("--kernel-floor");
    std::printf("\njob %zu/%zu%s: %s %s (env %s; --comm-cores %d: %s)\n",
                k + 1, jobs_.size(),
                a_.invocations > 1
                    ? (" of invocation " + std::to_string(job.invocation + 1) +
                       "/" + std::to_string(a_.invocations))
                          .c_str()
                    : "",
                c.library.c_str(), c.config.c_str(), EnvText(c.env).c_str(),
                c.comm_cores, c.meaning.c_str());
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
    RunFloor(job);
    if (!a_.quiet) std::printf("  %s\n", Join(JobCommand(spec)).c_str());
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    job.status = RunMpiJob(spec, &job.command, &job.interrupted);
    job.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    job.ran = true;
    Collect(job);
    RunCompAlone(job);
    const size_t expected =
        collectives_.size() * comm_us_.size() * comp_us_.size();
    // A library that hangs in MPI_Finalize after every result is written
    // (MPICH 4.0.2 over UCX: bench/overlap/overlap.c's watchdog) is a note
    // about that library, not a failed measurement: only the impact is missing.
    if (job.finalize_hang && !job.interrupted && job.cells.size() == expected) {
      job.note = "MPI_Finalize hung; the impact ratio is missing";
      std::printf("  note: %s %s: %s (a known MPICH 4.0.2 + UCX hang)\n",
                  c.library.c_str(), c.config.c_str(), job.note.c_str());
      job.status = 0;
      job.fails.clear();
      job.impact_missing_ok = true;
    }
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
    if (why.empty() && !job.impact && !job.impact_missing_ok)
      why = "no impact line";
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
        job.impact = j, job.impact_ranks.push_back(j);
      else if (type == "comm_size")
        job.comm_sizes.push_back(j);
      else if (type == "passive")
        job.passive_ranks.push_back(j);
      else if (type == "threads")
        job.threads = j.value("threads", json::array());
      else if (type == "clock") {  // measured at the end: part of the setup
        for (const auto& [k, v] : j.items())
          if (k != "type") job.setup[k] = v;
      }
      else if (type == "fail") {
        job.fails.push_back(j.value("what", "failed"));
        if (j.value("finalize_hang", false)) job.finalize_hang = true;
      }
    }
    // The other ranks' impact and passive lines (bench/overlap/overlap.c writes
    // FILE.impact.R and FILE.passive.R).
    for (int r = 1; r < ranks_; ++r)
      for (const char* type : {"impact", "passive"}) {
        const json j = ReadLine(job.out + "." + type + "." + std::to_string(r),
                                type, &job.bad_lines);
        if (j.is_null()) continue;
        (std::string(type) == "impact" ? job.impact_ranks : job.passive_ranks)
            .push_back(j);
      }
    for (Cell& c : job.cells) Significance(job, &c);
  }

  // The first line of `path` when it is a JSON object of `type`; null
  // otherwise (a missing file is not counted as bad).
  static json ReadLine(const std::string& path, const std::string& type,
                       int* bad_lines) {
    std::ifstream f(path);
    std::string line;
    if (!std::getline(f, line)) return nullptr;
    try {
      json j = json::parse(line);
      if (j.is_object() && j.value("type", "") == type) return j;
    } catch (const std::exception&) {
    }
    ++*bad_lines;
    return nullptr;
  }

  // ---- issue 27: the kernel's floor and the computation without MPI ----

  // The command that runs argv in host `host` of the cluster (cluster.sh
  // exec), or here in shared memory; a shell word list.
  std::string OnHost(int host, const std::vector<std::string>& argv) const {
    std::vector<std::string> words;
    if (hosts_ > 0) {
      const std::string sh = Env("CLUSTER_SH");
      words = {sh, "exec", std::to_string(host), "--prefix",
               Env("CLUSTER_PREFIX"), "--"};
    }
    words.insert(words.end(), argv.begin(), argv.end());
    std::vector<std::string> quoted;
    for (const std::string& w : words) quoted.push_back(ShellQuote(w));
    return Join(quoted);
  }

  // Host i of the job's ranks (srun: host 0 is Slurm's controller) and its
  // address (cluster.sh: 10.77.0.(i+1)).
  int RankHost(int rank) const {
    return a_.cl.launcher == "srun" ? rank + 1 : rank;
  }
  std::string HostAddress(int host) const {
    return hosts_ > 0 ? "10.77.0." + std::to_string(host + 1) : "127.0.0.1";
  }

  // A plain TCP transfer of the largest --comm-bytes size (4 MiB by
  // default), 8 times, from rank 0's host to rank 1's, both ends' CPU by
  // getrusage (bench/overlap/overlap_floor.c): the kernel's floor, measured
  // before every job so that it follows the machine's state as the jobs do.
  void RunFloor(Job& job) const {
    if (ranks_ < 2) return;
    std::string why;
    const std::string prog =
        FindExecutable(argv0_, "bench/overlap/overlap_floor", &why);
    if (prog.empty()) {
      job.floor = {{"error", why}};
      return;
    }
    const long long bytes =
        comm_bytes_.empty()
            ? 4 * 1048576LL
            : *std::max_element(comm_bytes_.begin(), comm_bytes_.end());
    const std::string reps = "8";
    const int from = RankHost(0), to = RankHost(1);
    const std::string recv_cmd =
        OnHost(to, {prog, "recv", "--bind", HostAddress(to), "--port", "0",
                    "--bytes", std::to_string(bytes), "--reps", reps});
    auto fail = [&job](const std::string& what) {
      job.floor = {{"error", what}};
      std::printf("  note: kernel floor not measured: %s\n", what.c_str());
    };
    FILE* recv = popen(recv_cmd.c_str(), "r");
    if (recv == nullptr) return fail("cannot start " + recv_cmd);
    char line[1024];
    int port = 0;
    if (std::fgets(line, sizeof line, recv) == nullptr ||
        std::sscanf(line, "port %d", &port) != 1 || port <= 0) {
      pclose(recv);
      return fail("the receiver did not print its port: " + recv_cmd);
    }
    const std::string send_cmd = OnHost(
        from, {prog, "send", "--to", HostAddress(to), "--port",
               std::to_string(port), "--bytes", std::to_string(bytes),
               "--reps", reps});
    FILE* send = popen(send_cmd.c_str(), "r");
    json sides = json::object();
    for (FILE* f : {send, recv}) {
      if (f == nullptr) continue;
      while (std::fgets(line, sizeof line, f) != nullptr) {
        try {
          json j = json::parse(line);
          if (j.is_object() && j.value("type", "") == "floor")
            sides[j.value("side", "?")] = j;
        } catch (const std::exception&) {
        }
      }
      pclose(f);
    }
    if (!sides.contains("send") || !sides.contains("recv"))
      return fail("the transfer did not complete (" + send_cmd + ")");
    const double cpu = Number(sides["send"], "cpu_us").value_or(NAN) +
                       Number(sides["recv"], "cpu_us").value_or(NAN);
    const double moved = Number(sides["send"], "bytes").value_or(0);
    // Each byte handled at both ends, as ov_handled_bytes counts them.
    const double per_mib = moved > 0 ? cpu * 1e3 / (2 * moved / kMiB) : NAN;
    const double secs = Number(sides["recv"], "seconds").value_or(NAN);
    job.floor = {{"send", sides["send"]},
                 {"recv", sides["recv"]},
                 {"bytes", moved},
                 {"ns_per_mib", OrNull(per_mib)},
                 {"gbit_per_s", OrNull(moved * 8 / secs / 1e9)}};
    std::printf("  kernel floor: %s x %s over TCP in %.1f ms, %.0f us CPU (send "
                "%.0f, recv %.0f): %.0f us per MiB handled\n",
                reps.c_str(), Bytes(static_cast<double>(bytes)).c_str(),
                secs * 1e3, cpu,
                Number(sides["send"], "cpu_us").value_or(NAN),
                Number(sides["recv"], "cpu_us").value_or(NAN), per_mib / 1e3);
  }

  // After the job: the computation of the passive runs' order, timed on
  // every rank's host at once by a process that never initialises MPI
  // (bench/overlap/overlap.c --comp-alone), so that the impact ratio exists
  // even when the library hung in MPI_Finalize.
  void RunCompAlone(Job& job) const {
    const json* passive = nullptr;
    for (const json& p : job.passive_ranks)
      if (p.value("rank", -1) == 0) passive = &p;
    if (passive == nullptr || job.interrupted) return;
    const int order = passive->value("order", 0);
    if (order < 2) return;
    std::string script;
    for (int r = 0; r < ranks_; ++r) {
      std::vector<std::string> argv = {
          job.program, "--comp-alone", std::to_string(order), "--ref-reps",
          "9", "--threads", std::to_string(passive->value("threads", 1)),
          "--comm-cores", std::to_string(job.config.comm_cores), "--out",
          job.out + ".alone." + std::to_string(r)};
      if (hosts_ > 0) {
        for (const char* w : {"--node-cpus", "affinity"}) argv.push_back(w);
      } else {
        for (const std::string& w :
             {std::string("--local-rank"), std::to_string(r),
              std::string("--local-size"), std::to_string(ranks_)})
          argv.push_back(w);
      }
      script += OnHost(hosts_ > 0 ? RankHost(r) : 0, argv) + " & ";
    }
    script += "wait";
    if (std::system(script.c_str()) != 0)
      std::printf("  note: the computation alone failed: %s\n",
                  script.c_str());
    for (int r = 0; r < ranks_; ++r) {
      json j = ReadLine(job.out + ".alone." + std::to_string(r), "comp_alone",
                        &job.bad_lines);
      if (j.is_null()) continue;
      j["rank"] = r;
      job.alone_ranks.push_back(j);
    }
  }

  // Rank r's impact against the computation without MPI: its passive runs
  // over its process that never initialised MPI.
  static std::optional<double> AloneImpact(const Job& job, int rank) {
    std::optional<double> passive, alone;
    for (const json& p : job.passive_ranks)
      if (p.value("rank", -1) == rank) passive = Number(p, "t_comp_passive_us");
    for (const json& a : job.alone_ranks)
      if (a.value("rank", -1) == rank) alone = Number(a, "t_comp_alone_us");
    if (!passive || !alone || *alone <= 0) return std::nullopt;
    return *passive / *alone;
  }

  // The worst rank's impact without MPI, else the after-MPI_Finalize one.
  static std::optional<double> HonestImpact(const Job& job) {
    std::optional<double> worst;
    for (const json& a : job.alone_ranks) {
      const auto r = AloneImpact(job, a.value("rank", -1));
      if (r && std::isfinite(*r) && (!worst || *r > *worst)) worst = r;
    }
    if (worst) return worst;
    const auto w = WorstImpact(job);
    return w ? std::optional<double>(w->first) : std::nullopt;
  }

  // Every rank's computation without MPI and its impact against it.
  static json AloneJson(const Job& job) {
    json out = json::array();
    for (const json& a : job.alone_ranks) {
      const int rank = a.value("rank", -1);
      out.push_back({{"rank", rank},
                     {"t_comp_alone_ns", NsOrNull(Number(a, "t_comp_alone_us"))},
                     {"ratio", OrNull(AloneImpact(job, rank))}});
    }
    return out;
  }

  static std::optional<double> FloorNsPerMib(const Job& job) {
    if (!job.floor.is_object()) return std::nullopt;
    return Number(job.floor, "ns_per_mib");
  }

  static std::vector<double> SamplesOf(const json& j) {
    std::vector<double> v;
    if (j.contains("samples_us") && j["samples_us"].is_array())
      for (const json& x : j["samples_us"])
        if (x.is_number() && std::isfinite(x.get<double>()))
          v.push_back(x.get<double>());
    return v;
  }

  // The 95% confidence interval of a cell's overhead ratio, by a bootstrap
  // over its repetitions and the runs of its two references (the ratio of
  // the medians, as the program computes it), and whether it is within
  // +-significance: a cell whose denominator, min(t_comm_ref, t_comp_ref),
  // is not well above the noise of its repetitions is not significant.
  void Significance(const Job& job, Cell* c) const {
    c->significant = false;
    if (!c->valid || !c->overhead) return;
    std::vector<double> comm, comp;
    for (const json& r : job.comm_refs)
      if (r.value("collective", "") == c->collective &&
          std::llround(Number(r, "target_us").value_or(-1)) == c->comm_target)
        comm = SamplesOf(r);
    for (const json& r : job.comp_refs)
      if (std::llround(Number(r, "target_us").value_or(-1)) == c->comp_target)
        comp = SamplesOf(r);
    if (!c->comp_ref_samples_us.empty()) comp = c->comp_ref_samples_us;
    const std::vector<double>& m = c->samples_us;
    if (m.size() < 2 || comm.size() < 2 || comp.size() < 2) return;
    // Seeded by the cell, so that the same results give the same interval.
    std::seed_seq seed(c->collective.begin(), c->collective.end());
    std::mt19937_64 rng(seed);
    rng.discard(static_cast<unsigned long long>(c->comm_target * 1000003 +
                                                c->comp_target) %
                1000);
    auto resampled_median = [&rng](const std::vector<double>& v) {
      std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
      std::vector<double> r(v.size());
      for (double& x : r) x = v[pick(rng)];
      return Median(std::move(r));
    };
    std::vector<double> ratios;
    ratios.reserve(kBootstrap);
    for (int b = 0; b < kBootstrap; ++b) {
      const double tm = resampled_median(m), tc = resampled_median(comm),
                   tp = resampled_median(comp);
      const double lo = std::min(tc, tp);
      if (lo > 0) ratios.push_back((tm - std::max(tc, tp)) / lo);
    }
    if (ratios.size() < kBootstrap / 2) return;
    std::sort(ratios.begin(), ratios.end());
    c->ci_low = ratios[static_cast<size_t>(0.025 * (ratios.size() - 1))];
    c->ci_high = ratios[static_cast<size_t>(0.975 * (ratios.size() - 1))];
    c->significant = (*c->ci_high - *c->ci_low) / 2 <= a_.significance;
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

  // The cells a summary uses: valid, significant, on the diagonal and with
  // messages of at least min_bytes_.
  bool Summarized(const Cell& c) const {
    return c.valid && c.significant && c.overhead &&
           std::isfinite(*c.overhead) && OnDiagonal(c) &&
           static_cast<double>(c.bytes) >= min_bytes_;
  }

  // What a summary of one job and collective ("" = all) is made of.
  struct Summary {
    double overhead = NAN, comm_ratio = NAN, comp_slowdown = NAN;
    int cells = 0;            // used
    int not_significant = 0;  // valid diagonal cells dropped for noise
    int small = 0;            // valid diagonal cells under min_bytes_
    std::vector<double> measured_us;  // the used cells' medians
    // Issue 27: progress CPU per MiB (whole collective, during the
    // computation), and the honest figures against the computation without
    // MPI: each cell's overhead ratio with t_comp_ref / impact as the
    // computation's reference, and r_comp * impact (impact clamped at 1 so
    // that noise never rewards a configuration).
    double progress_ns_per_mib = NAN, progress_comp_ns_per_mib = NAN;
    double overhead_vs_nompi = NAN, comp_slowdown_vs_nompi = NAN;
    // The slowdown the kernel's own work on the bytes would cause if it all
    // ran on the computation's core: 1 + the floor's CPU per MiB x the MiB
    // one rank handles / the computation's reference (issue 27: r_comp
    // should be within 0.05 of it).
    double comp_slowdown_floor = NAN;
  };

  // The kernel floor's share of a cell (see Summary::comp_slowdown_floor).
  std::optional<double> FloorSlowdown(const Job& job, const Cell& c) const {
    const auto floor = FloorNsPerMib(job);
    if (!floor || !c.comp_ref || *c.comp_ref <= 0 || ranks_ < 1)
      return std::nullopt;
    int k = -1;
    for (int i = 0; i < static_cast<int>(std::size(kCollectives)); ++i)
      if (c.collective == kCollectives[i]) k = i;
    if (k < 0) return std::nullopt;
    const double handled = ov_handled_bytes(static_cast<OvCollective>(k),
                                            static_cast<double>(c.bytes),
                                            ranks_);
    if (!std::isfinite(handled)) return std::nullopt;
    const double per_rank_ns = *floor * handled / ranks_ / kMiB;
    return 1 + per_rank_ns / (*c.comp_ref * 1e3);
  }

  Summary SummaryOf(const Job& job, const std::string& collective) const {
    Summary s;
    std::vector<double> o, r, p, cpu, cpu_comp, honest, honest_comp, fl;
    const double impact = std::max(1.0, HonestImpact(job).value_or(NAN));
    for (const Cell& c : job.cells) {
      if (!collective.empty() && c.collective != collective) continue;
      if (!c.valid || !OnDiagonal(c)) continue;
      if (static_cast<double>(c.bytes) < min_bytes_) {
        ++s.small;
        continue;
      }
      // The CPU is measured in every repetition, whatever the noise of the
      // cell's overhead ratio: every eligible cell counts.
      if (c.progress_cpu_ns_per_mib)
        cpu.push_back(*c.progress_cpu_ns_per_mib);
      if (c.progress_cpu_comp_ns_per_mib)
        cpu_comp.push_back(*c.progress_cpu_comp_ns_per_mib);
      if (!c.significant) {
        ++s.not_significant;
        continue;
      }
      if (!Summarized(c)) continue;
      o.push_back(*c.overhead);
      if (c.comm_ratio) r.push_back(*c.comm_ratio);
      if (c.comp_slowdown) p.push_back(*c.comp_slowdown);
      if (const auto f = FloorSlowdown(job, c)) fl.push_back(*f);
      if (c.measured) s.measured_us.push_back(*c.measured);
      if (std::isfinite(impact) && c.measured && c.comp_ref && c.comm_ref) {
        honest.push_back(
            (*c.measured - std::max(*c.comm_ref, *c.comp_ref / impact)) /
            std::min(*c.comm_ref, *c.comp_ref / impact));
        if (c.comp_slowdown) honest_comp.push_back(*c.comp_slowdown * impact);
      }
    }
    s.cells = static_cast<int>(o.size());
    s.progress_ns_per_mib = Median(cpu);
    s.progress_comp_ns_per_mib = Median(cpu_comp);
    s.overhead_vs_nompi = Median(honest);
    s.comp_slowdown_vs_nompi = Median(honest_comp);
    s.overhead = Median(o);
    s.comm_ratio = Median(r);
    s.comp_slowdown = Median(p);
    s.comp_slowdown_floor = Median(fl);
    return s;
  }

  double DiagonalOverhead(const Job& job, const std::string& collective,
                          int* n = nullptr) const {
    const Summary s = SummaryOf(job, collective);
    if (n != nullptr) *n = s.cells;
    return s.overhead;
  }

  // The most frequent diagnosis among a job's summarized cells.
  std::string MostlyDiagnosis(const Job& job) const {
    std::map<std::string, int> count;
    for (const Cell& c : job.cells)
      if (Summarized(c)) ++count[Diagnose(c)];
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

  // The largest impact ratio over the ranks that wrote one, and its rank.
  static std::optional<std::pair<double, int>> WorstImpact(const Job& job) {
    std::optional<std::pair<double, int>> worst;
    for (const json& j : job.impact_ranks) {
      const std::optional<double> r = Number(j, "ratio");
      if (r && std::isfinite(*r) && (!worst || *r > worst->first))
        worst = std::make_pair(*r, j.value("rank", 0));
    }
    return worst;
  }

  const Job* FindJob(const std::string& library,
                     const std::string& config) const {
    for (const Job& j : jobs_)
      if (j.config.library == library && j.config.config == config) return &j;
    return nullptr;
  }

  // The median pure communication time of a fixed size (comm_size lines).
  static std::optional<double> CommSizeUs(const Job& job,
                                          const std::string& collective,
                                          long long bytes) {
    for (const json& j : job.comm_sizes)
      if (j.value("collective", "") == collective &&
          std::llround(Number(j, "bytes").value_or(-1)) == bytes)
        return Number(j, "t_comm_us");
    return std::nullopt;
  }

  void PrintSummary() const {
    std::printf(
        "\nSummary: median overhead ratio of the diagonal cells (both "
        "targets within %gx of each other%s; 0 = perfect overlap, 1 = "
        "serialized), significant cells only (95%% CI within +-%.2f); the "
        "MPI impact ratio of rank 0 and of the worst rank (1 = an idle MPI "
        "costs the computation nothing)\n",
        kDiagonalFactor,
        min_bytes_ > 0
            ? (", messages of at least " + Bytes(min_bytes_)).c_str()
            : "",
        a_.significance);
    std::printf("%-18s", "library:config");
    for (const std::string& coll : collectives_)
      std::printf(" %10s", coll.c_str());
    std::printf(" %8s %7s %7s %6s  %s\n", "all", "impact", "worst", "n.s.",
                "mostly");
    std::printf("%s\n",
                std::string(18 + 11 * collectives_.size() + 52, '-').c_str());
    for (const Job& job : jobs_) {
      std::printf("%-18s",
                  (job.config.library + ":" + job.config.config).c_str());
      for (const std::string& coll : collectives_)
        std::printf(" %10s", Ratio(DiagonalOverhead(job, coll)).c_str());
      const Summary all = SummaryOf(job, "");
      const auto worst = WorstImpact(job);
      std::printf(" %8s %7s %7s %6s  %s%s\n", Ratio(all.overhead).c_str(),
                  Ratio(ImpactRatio(job)).c_str(),
                  worst ? Ratio(worst->first).c_str() : "-",
                  (std::to_string(all.not_significant) + "/" +
                   std::to_string(all.not_significant + all.cells))
                      .c_str(),
                  MostlyDiagnosis(job).c_str(),
                  job.failure.empty() ? "" : " (job failed)");
    }
    std::printf(
        "(n.s.: diagonal cells left out as not significant, of those "
        "eligible; every cell is in the CSV and JSON with its interval)\n");
    PrintProgressCost();
    PrintCommTable();
    PrintPeers();
    PrintAgainstFloor();
    PrintSpread();
    std::fflush(stdout);
  }

  // "12.3" microseconds from nanoseconds, "-" when not finite.
  static std::string UsOf(double ns) {
    char buf[32];
    if (!std::isfinite(ns)) return "-";
    std::snprintf(buf, sizeof buf, "%.0f", ns / 1e3);
    return buf;
  }

  // Issue 27: what progress costs in CPU per MiB, beside the kernel's own
  // cost for the same bytes between the same hosts.
  void PrintProgressCost() const {
    std::printf(
        "\nProgress CPU per MiB handled (us of CPU that was not the "
        "computation, all ranks, per MiB sent or received; medians of the "
        "valid diagonal cells, significant or not: the CPU is measured in "
        "every repetition): during the computation / over the whole "
        "collective (call + computation + wait); the kernel floor is a "
        "plain TCP transfer between the same hosts, both ends, measured "
        "before the job\n");
    std::printf("%-18s", "library:config");
    for (const std::string& coll : collectives_)
      std::printf(" %13s", coll.c_str());
    std::printf(" %13s %7s %9s  %s\n", "all", "floor", "all/floor",
                "threads (rank 0, CPU ms over the job)");
    for (const Job& job : jobs_) {
      std::printf("%-18s",
                  (job.config.library + ":" + job.config.config).c_str());
      for (const std::string& coll : collectives_) {
        const Summary sm = SummaryOf(job, coll);
        std::printf(" %13s", (UsOf(sm.progress_comp_ns_per_mib) + " / " +
                              UsOf(sm.progress_ns_per_mib))
                                 .c_str());
      }
      const Summary all = SummaryOf(job, "");
      const auto floor = FloorNsPerMib(job);
      std::printf(" %13s %7s %9s  %s\n",
                  (UsOf(all.progress_comp_ns_per_mib) + " / " +
                   UsOf(all.progress_ns_per_mib))
                      .c_str(),
                  floor ? UsOf(*floor).c_str() : "-",
                  floor && *floor > 0
                      ? Ratio(all.progress_ns_per_mib / *floor).c_str()
                      : "-",
                  ThreadsText(job).c_str());
    }
  }

  // Rank 0's threads that used CPU, heaviest first: "name 1234, ...".
  static std::string ThreadsText(const Job& job) {
    if (!job.threads.is_array()) return "-";
    std::vector<std::pair<double, std::string>> t;
    for (const json& x : job.threads)
      t.push_back({Number(x, "cpu_ms").value_or(0), x.value("name", "?")});
    std::sort(t.rbegin(), t.rend());
    std::string out;
    for (size_t i = 0; i < t.size() && i < 4; ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %.0f", i ? ", " : "",
                    t[i].second.c_str(), t[i].first);
      out += buf;
    }
    return out.empty() ? "-" : out;
  }

  // The overall median overhead of job k in every invocation.
  std::vector<double> InvocationOverheads(size_t k) const {
    std::vector<double> v = {SummaryOf(jobs_[k], "").overhead};
    for (const auto& list : repeats_) v.push_back(SummaryOf(list[k], "").overhead);
    return v;
  }

  // max - min of the finite values; none when fewer than two are finite
  // (one invocation's median says nothing about the spread).
  static std::optional<double> Spread(const std::vector<double>& v) {
    double lo = INFINITY, hi = -INFINITY;
    int n = 0;
    for (double x : v)
      if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x), ++n;
    if (n < 2) return std::nullopt;
    return hi - lo;
  }

  void PrintSpread() const {
    if (repeats_.empty()) return;
    std::printf(
        "\nBetween invocations (--invocations %d): each configuration's "
        "median overhead ratio over its summarized cells, per invocation, "
        "and the spread (max - min)\n",
        a_.invocations);
    for (size_t k = 0; k < jobs_.size(); ++k) {
      std::vector<std::string> text;
      const std::vector<double> v = InvocationOverheads(k);
      for (double x : v) text.push_back(Ratio(x));
      std::printf("%-18s %s   spread %s\n",
                  (jobs_[k].config.library + ":" + jobs_[k].config.config)
                      .c_str(),
                  Join(text, " ").c_str(), Ratio(Spread(v)).c_str());
    }
  }

  static std::string Bytes(double b) {
    char buf[32];
    if (b >= kMiB && std::fmod(b, kMiB) == 0)
      std::snprintf(buf, sizeof buf, "%.0f MiB", b / kMiB);
    else if (b >= 1024 && std::fmod(b, 1024) == 0)
      std::snprintf(buf, sizeof buf, "%.0f KiB", b / 1024);
    else
      std::snprintf(buf, sizeof buf, "%.0f B", b);
    return buf;
  }

  // The pure communication time of the fixed sizes, every library's default
  // configuration, and the ratio to Open MPI's.
  void PrintCommTable() const {
    if (comm_bytes_.empty()) return;
    const Job* ompi = FindJob("openmpi", "default");
    std::printf(
        "\nPure communication time (MPI_I<coll> + MPI_Wait alone, median of "
        "the runs; the same message size for every library)%s\n",
        ompi ? "; in brackets: / Open MPI's default" : "");
    std::printf("%-18s", "library:config");
    for (const std::string& coll : collectives_)
      for (long long b : comm_bytes_)
        std::printf(" %19s", (coll + " " + Bytes(b)).c_str());
    std::printf("\n");
    for (const Job& job : jobs_) {
      if (job.comm_sizes.empty()) continue;
      std::printf("%-18s",
                  (job.config.library + ":" + job.config.config).c_str());
      for (const std::string& coll : collectives_)
        for (long long b : comm_bytes_) {
          const auto t = CommSizeUs(job, coll, b);
          // 0: no Open MPI figure (a plain double: GCC's -O2 took the
          // optional of a conditional for maybe uninitialised).
          const double ref =
              ompi ? CommSizeUs(*ompi, coll, b).value_or(0.0) : 0.0;
          std::string text = t ? Us(*t) : "-";
          if (t && ref > 0) text += " (" + Ratio(*t / ref) + ")";
          std::printf(" %19s", text.c_str());
        }
      std::printf("\n");
    }
  }

  // Every library's configurations side by side with Rondo's defaults, on
  // three axes together: overlap, the computation's slowdown and the idle
  // library's cost, all against the computation without MPI.
  void PrintPeers() const {
    const Job* rondo = FindJob("rondo", "default");
    if (rondo == nullptr || programs_.size() < 2) return;
    std::printf(
        "\nAgainst Rondo's defaults (medians over the summarized cells). "
        "overhead: the paper's ratio, the computation's reference timed in "
        "the job; vs no MPI: the same with the computation's reference "
        "taken without MPI (t_comp_ref / impact), so that a library that "
        "slows the computation all the time pays for it; r_comp x impact: "
        "the computation's slowdown against no MPI; impact: passive / a "
        "process that never initialised MPI, worst rank (after "
        "MPI_Finalize when that process did not run); CPU: progress CPU per "
        "MiB over the whole collective, us; floor r: the slowdown the "
        "kernel's own work on the bytes (the floor, same run) would cause "
        "on the computation's core\n");
    std::printf("%-18s %8s %9s %8s %7s %9s %7s %7s  %s\n", "library:config",
                "overhead", "vs no MPI", "r_comp", "floor r", "r_comp*i",
                "impact", "CPU/MiB", "versus rondo:default");
    const Summary r = SummaryOf(*rondo, "");
    const double ri = HonestImpact(*rondo).value_or(NAN);
    for (const Job& job : jobs_) {
      const Summary sm = SummaryOf(job, "");
      const double impact = HonestImpact(job).value_or(NAN);
      std::printf("%-18s %8s %9s %8s %7s %9s %7s %7s  %s\n",
                  (job.config.library + ":" + job.config.config).c_str(),
                  Ratio(sm.overhead).c_str(),
                  Ratio(sm.overhead_vs_nompi).c_str(),
                  Ratio(sm.comp_slowdown).c_str(),
                  Ratio(sm.comp_slowdown_floor).c_str(),
                  Ratio(sm.comp_slowdown_vs_nompi).c_str(),
                  Ratio(impact).c_str(), UsOf(sm.progress_ns_per_mib).c_str(),
                  &job == rondo ? "(reference)"
                  : job.config.library == "kernel"
                      ? "(the floor: no library over this transport does "
                        "better)"
                      : Verdict(sm, impact, r, ri).c_str());
    }
    std::printf(
        "(A configuration that overlaps more by taking the computation's "
        "core is not better: the verdict weighs the overlap against r_comp "
        "x impact and the impact, and calls a configuration ahead only when "
        "it is not behind on any of them by more than 0.05.)\n");
    for (const json& sk : skipped_)
      if (sk["library"] != "rondo")
        std::printf("  (%s %s skipped: %s)\n",
                    sk["library"].get<std::string>().c_str(),
                    sk["config"].get<std::string>().c_str(),
                    sk["reason"].get<std::string>().c_str());
  }

  // Issue 27: every configuration against the kernel floor measured beside
  // the computation in the same run, collective by collective.
  void PrintAgainstFloor() const {
    const Job* floor = FindJob("kernel", "default");
    if (floor == nullptr) return;
    std::printf(
        "\nAgainst the kernel floor beside the computation (job kernel:default:"
        " the same methodology, the bytes moved by threads blocked in TCP "
        "send/recv; the least any library over this transport can reach): "
        "overhead ratio and r_comp minus the floor's, medians of the "
        "summarized cells (0 = at the floor)\n");
    std::printf("%-18s", "library:config");
    for (const std::string& coll : collectives_)
      std::printf(" %15s", coll.c_str());
    std::printf(" %15s\n", "all");
    auto diff = [](double x, double f) {
      char buf[32];
      if (!std::isfinite(x) || !std::isfinite(f)) return std::string("-");
      std::snprintf(buf, sizeof buf, "%+.2f", x - f);
      return std::string(buf);
    };
    std::vector<std::string> colls = collectives_;
    colls.push_back("");
    for (const Job& job : jobs_) {
      std::printf("%-18s",
                  (job.config.library + ":" + job.config.config).c_str());
      for (const std::string& coll : colls) {
        const Summary x = SummaryOf(job, coll), f = SummaryOf(*floor, coll);
        const std::string text =
            &job == floor ? Ratio(f.overhead) + " / " + Ratio(f.comp_slowdown)
                          : diff(x.overhead, f.overhead) + " / " +
                                diff(x.comp_slowdown, f.comp_slowdown);
        std::printf(" %15s", text.c_str());
      }
      std::printf("%s\n", &job == floor ? "  (the floor itself: overhead / "
                                          "r_comp)"
                                        : "");
    }
  }

  // The verdict of configuration x against Rondo's defaults r on the three
  // axes (overhead against no MPI, r_comp x impact, impact; 0.05 is "the
  // same").
  static std::string Verdict(const Summary& x, double xi, const Summary& r,
                             double ri) {
    auto cmp = [](double a, double b) {  // -1: a lower (better), 1: higher
      if (!std::isfinite(a) || !std::isfinite(b)) return 2;
      return std::fabs(a - b) < 0.05 ? 0 : a < b ? -1 : 1;
    };
    const int o = cmp(x.overhead_vs_nompi, r.overhead_vs_nompi);
    const int c = cmp(x.comp_slowdown_vs_nompi, r.comp_slowdown_vs_nompi);
    const int i = cmp(xi, ri);
    if (o == 2) return "-";
    const bool costlier = c == 1 || i == 1;
    const bool cheaper = c == -1 || i == -1;
    char costs[96];
    std::snprintf(costs, sizeof costs,
                  "r_comp x impact %s vs %s, impact %s vs %s",
                  Ratio(x.comp_slowdown_vs_nompi).c_str(),
                  Ratio(r.comp_slowdown_vs_nompi).c_str(), Ratio(xi).c_str(),
                  Ratio(ri).c_str());
    if (o == -1 && !costlier)
      return "ahead of rondo:default: overlaps more at no more cost";
    if (o == -1)
      return std::string("overlaps more by taking the computation's core (") +
             costs + "): not better";
    if (o == 0 && cheaper && !costlier)
      return "same overlap at less cost: ahead";
    if (o == 0 && costlier && !cheaper)
      return "same overlap at more cost: rondo ahead";
    if (o == 0 && costlier)
      return std::string("same overlap, mixed costs (") + costs + ")";
    if (o == 0) return "same on all three";
    if (cheaper && !costlier)
      return std::string("rondo overlaps more; this costs the computation "
                         "less (") + costs + ")";
    if (cheaper)
      return std::string("rondo overlaps more; mixed costs (") + costs + ")";
    return "rondo ahead: overlaps more at no more cost";
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
                {"note", job.note.empty() ? json(nullptr) : json(job.note)},
                {"seconds", job.seconds},
                {"setup", job.setup},
                {"comm_ref", job.comm_refs},
                {"comp_ref", job.comp_refs},
                {"kernel_floor", job.floor},
                {"threads", job.threads},
                {"passive", job.passive_ranks},
                {"comp_alone", job.alone_ranks}};
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
    std::string impact = "library,config,ratio,ratio_worst,worst_rank\n";
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
                   {"significant", cell.significant},
                   {"ci_low", OrNull(cell.ci_low)},
                   {"ci_high", OrNull(cell.ci_high)},
                   {"diagnosis", Diagnose(cell)},
                   {"progress_cpu_ns_per_mib",
                    OrNull(cell.progress_cpu_ns_per_mib)},
                   {"progress_cpu_comp_ns_per_mib",
                    OrNull(cell.progress_cpu_comp_ns_per_mib)},
                   {"kernel_floor_ns_per_mib", OrNull(FloorNsPerMib(job))}};
        report.Add(std::move(r));
        csv += c.library + "," + c.config + "," + cell.collective + "," +
               std::to_string(cell.comm_target) + "," +
               std::to_string(cell.comp_target) + "," +
               CsvNumber(cell.comm_ref) + "," + CsvNumber(cell.comp_ref) + "," +
               CsvNumber(cell.measured) + "," + CsvNumber(cell.overhead) + "," +
               CsvNumber(cell.comm_ratio) + "," +
               CsvNumber(cell.comp_slowdown) + "," + (cell.valid ? "1" : "0") +
               "," + std::to_string(cell.bytes) + "," +
               (cell.valid ? (cell.significant ? "1" : "0") : "") + "," +
               CsvNumber(cell.ci_low) + "," + CsvNumber(cell.ci_high) + "\n";
        ++rows;
      }
      const json* passive0 = nullptr;
      for (const json& p : job.passive_ranks)
        if (p.value("rank", -1) == 0) passive0 = &p;
      if (job.impact || passive0 != nullptr) {
        // The library may have hung in MPI_Finalize: then only the passive
        // runs and the computation without MPI (a separate process) exist.
        const json& j = job.impact ? *job.impact : *passive0;
        const std::optional<double> passive = Number(j, "t_comp_passive_us");
        const std::optional<double> ratio = Number(j, "ratio");
        CaseResult r;
        r.name = "mpi_impact:" + c.library + ":" + c.config;
        if (passive && std::isfinite(*passive)) {
          r.stats.median_ns = r.stats.min_ns = r.stats.p99_ns = r.stats.max_ns =
              r.stats.mean_ns = *passive * 1e3;
          r.stats.samples = 1;
        }
        const auto worst = WorstImpact(job);
        json per_rank = json::array();
        for (const json& x : job.impact_ranks)
          per_rank.push_back({{"rank", x.value("rank", 0)},
                              {"ratio", OrNull(Number(x, "ratio"))}});
        r.extra = {{"library", c.library},
                   {"config", c.config},
                   {"ratio", OrNull(ratio)},
                   {"rank", 0},
                   {"ratio_worst",
                    worst ? json(worst->first) : json(nullptr)},
                   {"worst_rank", worst ? json(worst->second) : json(nullptr)},
                   {"ranks", per_rank},
                   {"t_comp_passive_ns", NsOrNull(passive)},
                   {"t_comp_nompi_ns", NsOrNull(Number(j, "t_comp_nompi_us"))},
                   {"order", j.value("order", 0)},
                   {"ratio_vs_nompi_process", OrNull(AloneImpact(job, 0))},
                   {"ratio_vs_nompi_process_worst", OrNull(HonestImpact(job))},
                   {"ranks_vs_nompi_process", AloneJson(job)},
                   {"after_finalize", job.impact.has_value()}};
        report.Add(std::move(r));
        impact += c.library + "," + c.config + "," + CsvNumber(ratio) + "," +
                  (worst ? CsvNumber(worst->first) : std::string()) + "," +
                  (worst ? std::to_string(worst->second) : std::string()) +
                  "\n";
        ++impact_rows;
      }
    }
    // Summaries: per collective and "all".
    for (const Job& job : jobs_) {
      const Config& c = job.config;
      std::vector<std::string> colls = collectives_;
      colls.push_back("");
      for (const std::string& coll : colls) {
        const Summary sm = SummaryOf(job, coll);
        CaseResult r;
        r.name = "summary:" + c.library + ":" + c.config + ":" +
                 (coll.empty() ? "all" : coll);
        std::vector<double> ns;
        for (double us : sm.measured_us) ns.push_back(us * 1e3);
        r.stats = ::rondo::bench::Summarize(ns);
        r.extra = {{"library", c.library},
                   {"config", c.config},
                   {"collective", coll.empty() ? "all" : coll},
                   {"overhead_ratio", OrNull(sm.overhead)},
                   {"comm_ratio", OrNull(sm.comm_ratio)},
                   {"comp_slowdown", OrNull(sm.comp_slowdown)},
                   {"comp_slowdown_kernel_floor",
                    OrNull(sm.comp_slowdown_floor)},
                   {"cells", sm.cells},
                   {"not_significant", sm.not_significant},
                   {"below_min_bytes", sm.small},
                   {"min_bytes", min_bytes_},
                   {"progress_cpu_ns_per_mib", OrNull(sm.progress_ns_per_mib)},
                   {"progress_cpu_comp_ns_per_mib",
                    OrNull(sm.progress_comp_ns_per_mib)},
                   {"kernel_floor_ns_per_mib", OrNull(FloorNsPerMib(job))},
                   {"overhead_ratio_vs_nompi", OrNull(sm.overhead_vs_nompi)},
                   {"comp_slowdown_vs_nompi",
                    OrNull(sm.comp_slowdown_vs_nompi)},
                   {"impact_vs_nompi", OrNull(HonestImpact(job))},
                   {"invocations", a_.invocations},
                   {"what",
                    "median over the valid, significant diagonal cells"}};
        // Issue 27: the kernel floor beside the computation, same run.
        if (const Job* floor = FindJob("kernel", "default");
            floor != nullptr && floor != &job) {
          const Summary f = SummaryOf(*floor, coll);
          r.extra["kernel_floor_overhead_ratio"] = OrNull(f.overhead);
          r.extra["kernel_floor_comp_slowdown"] = OrNull(f.comp_slowdown);
          r.extra["overhead_minus_kernel_floor"] =
              OrNull(sm.overhead - f.overhead);
          r.extra["comp_slowdown_minus_kernel_floor"] =
              OrNull(sm.comp_slowdown - f.comp_slowdown);
        }
        if (coll.empty()) {
          // Every invocation's overall median and their spread.
          const std::vector<double> v =
              InvocationOverheads(static_cast<size_t>(&job - jobs_.data()));
          json list = json::array();
          for (double x : v) list.push_back(OrNull(x));
          r.extra["overhead_ratio_invocations"] = list;
          r.extra["overhead_ratio_spread"] = OrNull(Spread(v));
        }
        report.Add(std::move(r));
      }
    }
    // Pure communication times of the fixed sizes.
    const Job* ompi = FindJob("openmpi", "default");
    for (const Job& job : jobs_)
      for (const json& j : job.comm_sizes) {
        const std::string coll = j.value("collective", "");
        const long long bytes = std::llround(Number(j, "bytes").value_or(0));
        CaseResult r;
        r.name = "comm:" + job.config.library + ":" + job.config.config + ":" +
                 coll + ":" + std::to_string(bytes);
        std::vector<double> ns;
        for (double us : SamplesOf(j)) ns.push_back(us * 1e3);
        r.stats = ::rondo::bench::Summarize(ns);
        const auto t = Number(j, "t_comm_us");
        const double ref =
            ompi ? CommSizeUs(*ompi, coll, bytes).value_or(0.0) : 0.0;
        r.extra = {{"library", job.config.library},
                   {"config", job.config.config},
                   {"collective", coll},
                   {"bytes", bytes},
                   {"ratio_vs_openmpi",
                    t && ref > 0 ? json(*t / ref) : json(nullptr)}};
        report.Add(std::move(r));
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
        {"mode", hosts_ > 0 ? "cluster" : "shared memory"},
        {"cluster_hosts", hosts_},
        {"cluster_rate", hosts_ > 0 ? json(a_.cl.rate) : json(nullptr)},
        {"cluster_host_cpus",
         hosts_ > 0 ? json(Env("CLUSTER_HOST_CPUS")) : json(nullptr)},
        {"processors", sysconf(_SC_NPROCESSORS_ONLN)},
        {"significance_half_width", a_.significance},
        {"min_bytes", min_bytes_},
        {"comm_bytes", comm_bytes_},
        {"collectives", collectives_},
        {"comm_targets_us", comm_us_},
        {"comp_targets_us", comp_us_},
        {"reps", a_.reps},
        {"invocations", a_.invocations},
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
      args.push_back(hosts_ > 0 ? std::to_string(hosts_) + " hosts at " +
                                      a_.cl.rate + ":"
                                : std::to_string(ranks_) + " ranks:");
      // One heat-map per library side by side: each library's defaults,
      // and MPICH's progress thread.
      std::vector<std::string> keys;
      for (const Job& job : jobs_)
        if (job.config.config == "default" ||
            (job.config.library == "mpich" && job.config.config == "progress"))
          if (!job.cells.empty())
            keys.push_back(job.config.library + ":" + job.config.config);
      if (keys.size() >= 2) {
        args.push_back("--compare");
        args.push_back(Join(keys, ","));
      }
      if (min_bytes_ > 0) {
        args.push_back("--min-bytes");
        args.push_back(std::to_string(std::llround(min_bytes_)));
      }
      if (RunPythonScript(argv0_, "overlap", "bench/overlap/overlap_plot.py",
                          args) != 0)
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
  cluster::ClusterPlan plan_{"overlap", argv0_};
  int hosts_ = 0;          // emulated hosts; 0: shared memory
  double rate_bits_ = 0;   // the cluster's link rate
  double min_bytes_ = 0;   // the summary's smallest message
  std::vector<long long> comm_bytes_;
  std::vector<std::string> configs_, collectives_;
  std::vector<long long> comm_us_, comp_us_;
  std::map<std::string, std::pair<std::string, std::string>>
      programs_;  // library -> (program, launcher)
  std::map<std::string, std::string> inherited_;
  std::vector<Job> jobs_;
  std::vector<std::vector<Job>> repeats_;  // invocations 2 .. N
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
      "--map-by core --bind-to core:overload-allowed` "
      "(bench/common/jobs.h).\n\n"
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
                 "rondo, openmpi and/or mpich (default rondo; see --compare)");
  app.add_flag("--compare", a.compare,
               "comparison mode: the same grid with Open MPI and MPICH too, in "
               "the same invocation (a library that is not installed is "
               "skipped with a message), side by side");
  app.add_option("--configs", a.configs,
                 "default, basic, progress, dedicated and/or timer (default "
                 "default,basic,progress,dedicated; on the cluster "
                 "default,basic,progress,timer)");
  app.add_option("--collectives", a.collectives,
                 "among ibcast,ireduce,iallreduce,iallgather,ialltoall "
                 "(default all five; on the cluster all but ireduce)");
  app.add_option("--ranks", a.ranks,
                 "MPI ranks per job, 1..256 (default 2; with --cluster K, "
                 "K)");
  app.add_option("--comm-us", a.comm_us,
                 "communication target times in microseconds (default "
                 "100,316,1000,3162,10000; --full: 500 .. 1000000)");
  app.add_option("--comp-us", a.comp_us,
                 "computation target times in microseconds (default as "
                 "--comm-us)");
  app.add_option("--reps", a.reps,
                 "measured repetitions per cell (default 7, --full 20)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--invocations", a.invocations,
                 "run the whole comparison this many times in turn and "
                 "report the spread of each configuration's median overhead "
                 "between invocations (default 1; the cells, tables and CSV "
                 "are the first invocation's)")
      ->check(CLI::Range(1, 20));
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
  app.add_option("--launcher", a.cl.launcher,
                 "with --cluster: mpirun (each library's own launcher in "
                 "host 0, the default) or srun (an emulated Slurm cluster, "
                 "srun --mpi=pmix: Rondo and Open MPI)");
  app.add_option("--srun", a.cl.srun, "Slurm's srun (default /usr/bin/srun)");
  app.add_flag("--quiet", a.quiet,
               "no progress bars or command lines: the job lines, the "
               "summary and the files");
  app.add_flag("--cells", a.cells,
               "also print every cell of every job (they are always in the "
               "CSV and the JSON)");
  app.add_option("--cluster", a.cl.cluster,
                 "0: shared memory on this machine (default); K: an emulated "
                 "cluster of K hosts (bench/cluster, needs root and network "
                 "namespaces), one rank per host, every library started by "
                 "its own launcher; auto: 2 hosts when this machine can, "
                 "else shared memory");
  app.add_option("--rate", a.cl.rate,
                 "the emulated links' rate in tc units (default 1gbit); the "
                 "communication targets follow from it");
  app.add_option("--comm-bytes", a.comm_bytes,
                 "message sizes (bytes per block) whose pure communication "
                 "time is measured for every library (default on the "
                 "cluster: 1048576,4194304; none in shared memory)");
  app.add_option("--min-bytes", a.min_bytes,
                 "the summary's smallest message (default 1 MiB on the "
                 "cluster, 0 in shared memory)")
      ->check(CLI::Range(0.0, 1e12));
  app.add_option("--significance", a.significance,
                 "a cell is significant when the 95% confidence interval "
                 "of its overhead ratio is within +- this (default 0.25)")
      ->check(CLI::Range(0.01, 100.0));
  app.add_option("--mpirun-mpich", a.mpirun_mpich,
                 "MPICH's mpirun (default /usr/bin/mpirun.mpich)");
  app.add_flag("--inside-cluster", a.cl.inside)->group("");
  app.add_option("--cluster-sh", a.cl.cluster_sh)->group("");
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
