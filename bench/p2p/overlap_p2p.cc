// bench/p2p/overlap_p2p: communication/computation overlap of nmad
// point-to-point transfers (PIOMan paper, Figures 5-7), scored with the
// overhead ratio of the overlap methodology paper (its Equation 1).
//
//   bazel run -c opt //bench/p2p:overlap_p2p -- [--json FILE] [--quick]
//       [--reps N] [--modes default,no_progress,thread,timer,kernel]
//       [--sides send,recv,both] [--sizes 32768,1048576]
//       [--timer-us US] [--thread-placement cross|bind|numa]
//       [--cluster K [--rate R] [--launcher mpirun|srun]]
//
// Engine options are read from the environment when the Engine is built, so
// every progress mode is its own job: the top-level process (started
// without a launcher) runs `rondo-run -n 2 --bind core <itself> --mode M
// --part-json TMP ...` once per mode (rondo-run is a data dependency found
// in the runfiles, see bench/p2p/nmad_bench.h), merges the cases, prints one
// table and writes the JSON. Started under a launcher with --mode, it runs
// that mode only and prints its table.
//
// --cluster K (bench/cluster/cluster_run.h): the driver re-runs itself in
// host 0 of an emulated cluster of K hosts (links at --rate, one core per
// host) and starts each mode's job there with Open MPI's mpirun (`cluster.sh
// launch openmpi`; Rondo's ranks bootstrap through PMIx) or, with
// --launcher srun, with srun --mpi=pmix on an emulated Slurm cluster: the
// bytes cross a rate-limited link and each rank is alone on its host's
// core. Only ranks 0 and 1 take part (K > 2 leaves the other hosts idle).
//
// Modes (each rank sets these before building its Engine):
//   default      nothing: the engine's defaults (docs/defaults.md). With one
//                rank per core that is quiet progress: a thread on the
//                rank's core that sleeps on the transport's events while the
//                application computes outside Rondo (the product's figure).
//   no_progress  RONDO_PROGRESS=none, RONDO_TIMER_US=0: only the
//                application's own calls (Isend/Irecv/Wait) progress.
//   thread       one progress thread per rank, RONDO_TIMER_US=0. Placement
//                (--thread-placement): `cross` (default) puts rank r's
//                thread on the other rank's core (RONDO_PROGRESS=cores:<c>,
//                c = (local rank + 1) mod #cores): on the 2-core reference
//                machine no core is free, and this lets a rank's transfer
//                progress while its own core computes, at the price of time
//                shared with the peer's application thread. `bind` (same core
//                as the rank; also what `numa` resolves to when ranks fill
//                the cores) makes the progress thread compete with the
//                computation it should overlap with.
//   timer        RONDO_PROGRESS=none, RONDO_TIMER_US=--timer-us (default
//                100): the timer thread on the application core runs the
//                polling tasks every period.
//   mpi          the defaults, with the session options of MadMPI's
//                point-to-point (nmad::SessionOptions::
//                eager_receives_by_caller): a receive within the eager
//                limit is completed by the Wait that follows the
//                computation, not by background progress, so the quiet
//                thread stays asleep for it (what an MPI program gets).
//   kernel       the physical floor, not Rondo: the same protocol over a
//                plain TCP connection between the two ranks, each with a
//                thread blocked in send()/recv(MSG_WAITALL) on the whole
//                message (bench/common/tcp_floor.h). The kernel alone moves the
//                bytes, so its slowdown of the receiver's computation is
//                the kernel's own cost of the bytes on that core. On the
//                sending side, send() returns once the bytes are queued in
//                the socket: its t_comm is not the transfer's.
//
// Sides: data always goes from rank 0 to rank 1, 32 KiB and 1 MiB (above
// the 16 KiB eager limit: rendezvous). `send`: rank 0 computes between
// Isend and Wait; `recv`: rank 1 computes between Irecv and Wait; `both`.
// Per iteration the computing side starts the clock once its peer is ready
// (a 0-byte go message from rank 1: in `send`, rank 1 has posted its Irecv
// before it; in `recv`/`both`, rank 0 posts its Isend right after it).
//
// Per case, with the same protocol and `--reps` repetitions each (medians):
//   t_comm  post + Wait with no computation (the reference communication),
//   t_comp  the computation alone: a calibrated busy loop (a dependent
//           floating-point chain; pure CPU work, never calls Rondo, never
//           sleeps) sized to 1.5 x t_comm,
//   t_total post, compute, Wait,
// measured on the computing rank (`both`: the slower rank of each
// iteration). overhead_ratio = (t_total - max(t_comm, t_comp)) /
// min(t_comm, t_comp): 0 = perfect overlap, 1 = serialized; as in the
// paper it is not clamped (< 0: measurement noise, > 1: overlap slowed
// things down); overhead_ratio_clamped is the same in [0, 1]. Also the
// paper's diagnostics: r_comp_slowdown = compute time inside the overlap /
// t_comp, r_comm = (t_total - compute time inside) / t_comm.
// Cases `overlap:<send|recv|both>:<bytes>:<mode>`; median_ns is t_total.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/cluster/cluster_run.h"
#include "bench/common/jobs.h"
#include "bench/common/report.h"
#include "bench/p2p/nmad_bench.h"
#include "bench/common/tcp_floor.h"

namespace rondo::bench {
namespace {

using engine::Status;
using nmad::Request;

struct Args {
  std::string mode;       // set: run this mode as a rank
  std::string part_json;  // rank 0 writes its cases here (orchestrated)
  std::string modes = "default,no_progress,thread,timer,kernel";
  cluster::ClusterArgs cl;            // --cluster, --rate, --launcher
  std::vector<std::string> command;   // argv, re-run inside the cluster
  std::string thread_placement = "cross";
  int timer_us = 100;
  int reps = 50;
  std::string json;
  bool quick = false;
  std::string sides = "send,recv,both";  // which side computes
  std::string sizes = "32768,1048576";   // bytes per transfer
};

constexpr int kTagData = 10, kTagGo = 11, kTagResults = 12, kTagParam = 13,
              kTagAddress = 14;
constexpr size_t kMaxBytes = 1 << 20;  // the message buffer

void Check(Status s, const char* what) {
  if (s != Status::kOk) {
    std::fprintf(stderr, "overlap_p2p: %s failed: %s\n", what,
                 std::string(engine::StatusName(s)).c_str());
    std::exit(1);
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Refuses --sides and --sizes values that no case can run, naming them.
void CheckSidesAndSizes(const Args& a) {
  if (Split(a.sides).empty()) throw std::runtime_error("--sides is empty");
  for (const std::string& side : Split(a.sides))
    if (side != "send" && side != "recv" && side != "both")
      throw std::runtime_error("--sides: unknown side '" + side +
                               "' (allowed: send, recv, both)");
  if (Split(a.sizes).empty()) throw std::runtime_error("--sizes is empty");
  for (const std::string& size : Split(a.sizes)) {
    size_t used = 0;
    unsigned long n = 0;
    try {
      n = std::stoul(size, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != size.size() || n < 1 || n > kMaxBytes)
      throw std::runtime_error("--sizes: '" + size +
                               "' is not a byte count in 1 .. 1048576");
  }
}

// Sets the engine's environment for `mode` (before the Engine exists).
std::string ApplyMode(const Args& a) {
  if (a.mode == "default") return "the engine's defaults";
  if (a.mode == "mpi")
    return "the engine's defaults, MadMPI's session (eager receives by the "
           "caller)";
  std::string progress = "none";
  int timer = 0;
  if (a.mode == "kernel") {
    // nmad only carries the go messages and results; the data goes over
    // TcpFloor.
    setenv("RONDO_PROGRESS", progress.c_str(), 1);
    setenv("RONDO_TIMER_US", "0", 1);
    return "plain TCP, one thread per rank blocked in send/recv (the floor)";
  }
  if (a.mode == "thread") {
    if (a.thread_placement == "cross") {
      const char* lr = std::getenv("RONDO_LOCAL_RANK");
      int local_rank = lr ? std::atoi(lr) : 0;
      int ncores = static_cast<int>(std::thread::hardware_concurrency());
      progress = "cores:" + std::to_string((local_rank + 1) % ncores);
    } else {
      progress = a.thread_placement;
    }
  } else if (a.mode == "timer") {
    timer = a.timer_us;
  } else if (a.mode != "no_progress") {
    throw std::runtime_error("unknown mode '" + a.mode +
                             "' (default|mpi|no_progress|thread|timer|kernel)");
  }
  setenv("RONDO_PROGRESS", progress.c_str(), 1);
  setenv("RONDO_TIMER_US", std::to_string(timer).c_str(), 1);
  return "RONDO_PROGRESS=" + progress + " RONDO_TIMER_US=" +
         std::to_string(timer);
}

struct Sample {
  double total = 0;  // post .. Wait returned
  double comp = 0;   // the computation inside
};

class Bench {
 public:
  Bench(RankSetup& r, const Args& a)
      : r_(r), a_(a), buf_(kMaxBytes), reps_(a.quick ? std::min(a.reps, 10) : a.reps) {
    std::memset(buf_.data(), r.rank + 1, buf_.size());
    ns_per_step_ = CalibrateComputeNsPerStep();
    if (a.mode == "kernel") ConnectTcp();
  }

  // Runs one case; returns the result on rank 0.
  CaseResult RunCase(const std::string& side, size_t n) {
    const bool comp[2] = {side != "recv", side != "send"};
    const bool me = comp[r_.rank];
    // Warm-up, then the reference communication.
    Comm(n, 0, comp, 5);
    std::vector<Sample> comm = Gather(Comm(n, 0, comp, reps_), side);
    double t_comm = 0;
    if (r_.rank == 0) {
      std::vector<double> v;
      for (auto& s : comm) v.push_back(s.total);
      t_comm = Median(v);
      Check(r_.session->Send(1, kTagParam, &t_comm, sizeof t_comm), "Send");
    } else {
      Check(r_.session->Recv(0, kTagParam, &t_comm, sizeof t_comm), "Recv");
    }
    const double target = 1.5 * t_comm;
    const int64_t steps = static_cast<int64_t>(target / ns_per_step_);
    // The computation alone.
    std::vector<Sample> alone(reps_);
    if (me) {
      Compute(steps);
      for (int i = 0; i < reps_; ++i) {
        int64_t t0 = NowNs();
        Compute(steps);
        alone[i].total = alone[i].comp = static_cast<double>(NowNs() - t0);
      }
    }
    alone = Gather(alone, side);
    // Overlap.
    std::vector<Sample> total = Gather(Comm(n, steps, comp, reps_), side);
    if (r_.rank != 0) return {};

    std::vector<double> tot, comp_in, call_wait, comp_alone;
    for (auto& s : total) {
      tot.push_back(s.total);
      comp_in.push_back(s.comp);
      call_wait.push_back(s.total - s.comp);
    }
    for (auto& s : alone) comp_alone.push_back(s.total);
    const double t_comp = Median(comp_alone);
    CaseResult c;
    c.name = "overlap:" + side + ":" + std::to_string(n) + ":" + a_.mode;
    c.stats = Summarize(tot);
    const double t_total = c.stats.median_ns;
    const double lo = std::min(t_comm, t_comp), hi = std::max(t_comm, t_comp);
    const double ratio = lo > 0 ? (t_total - hi) / lo : 0;
    c.extra = {{"overhead_ratio", ratio},
               {"overhead_ratio_clamped", std::clamp(ratio, 0.0, 1.0)},
               {"t_comm_ns", t_comm},
               {"t_comp_ns", t_comp},
               {"t_total_ns", t_total},
               {"r_comp_slowdown", t_comp > 0 ? Median(comp_in) / t_comp : 0},
               {"r_comm", t_comm > 0 ? Median(call_wait) / t_comm : 0},
               {"compute_target_ns", target},
               {"bytes", n},
               {"side", side},
               {"mode", a_.mode},
               {"reps", reps_}};
    return c;
  }

 private:
  // `reps` iterations of the protocol of the banner with `steps` of
  // computation on the computing ranks; this rank's samples.
  std::vector<Sample> Comm(size_t n, int64_t steps, const bool comp[2],
                           int reps) {
    std::vector<Sample> out(reps);
    for (int i = 0; i < reps; ++i) {
      Sample& s = out[i];
      if (r_.rank == 1) {
        if (!comp[1]) Post(n, /*send=*/false);
        Check(r_.session->Send(0, kTagGo, &go_, 0), "Send go");
        int64_t t0 = NowNs();
        if (comp[1]) {
          Post(n, /*send=*/false);
          int64_t c0 = NowNs();
          Compute(steps);
          s.comp = static_cast<double>(NowNs() - c0);
        }
        WaitData("Wait recv");
        s.total = static_cast<double>(NowNs() - t0);
      } else {
        Check(r_.session->Recv(1, kTagGo, &go_, 0), "Recv go");
        int64_t t0 = NowNs();
        Post(n, /*send=*/true);
        if (comp[0]) {
          int64_t c0 = NowNs();
          Compute(steps);
          s.comp = static_cast<double>(NowNs() - c0);
        }
        WaitData("Wait send");
        s.total = static_cast<double>(NowNs() - t0);
      }
    }
    return out;
  }

  // The data transfer: nmad's Isend/Irecv, or the kernel's (mode kernel).
  void Post(size_t n, bool send) {
    if (tcp_) {
      tcp_->Post(buf_.data(), n, send);
    } else if (send) {
      Check(r_.session->Isend(1, kTagData, buf_.data(), n, data_), "Isend");
    } else {
      Check(r_.session->Irecv(0, kTagData, buf_.data(), n, data_), "Irecv");
    }
  }
  void WaitData(const char* what) {
    if (tcp_) {
      tcp_->Wait();
    } else {
      Check(r_.core->Wait(data_), what);
    }
  }

  // Mode kernel: rank 1 listens and sends its addresses to rank 0.
  void ConnectTcp() {
    if (r_.rank == 1) {
      std::string address;
      tcp_ = TcpFloor::Listen(&address);
      Check(r_.session->Send(0, kTagAddress, address.data(), address.size()),
            "Send address");
      tcp_->Accept();
    } else {
      char address[4096] = {};
      Request req;
      Check(r_.session->Irecv(1, kTagAddress, address, sizeof address - 1, req),
            "Irecv address");
      Check(r_.core->Wait(req), "Recv address");
      tcp_ = TcpFloor::Connect(address);
    }
  }

  // Rank 0 gets the per-iteration figure of the case: the computing rank's
  // (for `both`, the slower of the two ranks per iteration).
  std::vector<Sample> Gather(const std::vector<Sample>& mine,
                             const std::string& side) {
    const size_t bytes = mine.size() * sizeof(Sample);
    if (r_.rank == 1) {
      Check(r_.session->Send(0, kTagResults, mine.data(), bytes), "Send");
      return {};
    }
    std::vector<Sample> theirs(mine.size());
    Check(r_.session->Recv(1, kTagResults, theirs.data(), bytes), "Recv");
    if (side == "send") return mine;
    if (side == "recv") return theirs;
    std::vector<Sample> out(mine.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      out[i].total = std::max(mine[i].total, theirs[i].total);
      out[i].comp = std::max(mine[i].comp, theirs[i].comp);
    }
    return out;
  }

  RankSetup& r_;
  const Args& a_;
  std::vector<uint8_t> buf_;
  int reps_;
  double ns_per_step_ = 1;
  uint8_t go_ = 0;  // the 0-byte go message's buffer
  Request data_;     // the transfer's request (nmad)
  std::unique_ptr<TcpFloor> tcp_;  // mode kernel
};

std::string Note(const CaseResult& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "ratio %5.2f  comm %7.1f us  comp %7.1f us  slowdown %.2f "
                "r_comm %.2f",
                c.extra.value("overhead_ratio", 0.0),
                c.extra.value("t_comm_ns", 0.0) / 1e3,
                c.extra.value("t_comp_ns", 0.0) / 1e3,
                c.extra.value("r_comp_slowdown", 0.0),
                c.extra.value("r_comm", 0.0));
  return buf;
}

void Target(const char* what, bool ok, const std::string& detail) {
  std::printf("  [%s] %s: %s\n", ok ? "met" : "MISSED", what, detail.c_str());
}

void PrintTargets(const Report& report, bool cluster) {
  std::printf("\nTargets (%s):\n", cluster ? "emulated cluster"
                                             : "this machine");
  if (const CaseResult* d = report.Find("overlap:recv:1048576:default")) {
    const double r = d->extra.value("overhead_ratio", 0.0);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.2f, computation slowdown %.2f", r,
                  d->extra.value("r_comp_slowdown", 0.0));
    Target(cluster ? "receiver computing, 1 MiB, the defaults: overhead ratio "
                     "<= 0.1"
                   : "receiver computing, 1 MiB, the defaults: overhead ratio "
                     "<= 0.1 (a target of the emulated cluster: here no core "
                     "is free)",
           r <= 0.1, buf);
  }
  const CaseResult* d = report.Find("overlap:recv:1048576:default");
  const CaseResult* k = report.Find("overlap:recv:1048576:kernel");
  if (d && k) {
    const double rd = d->extra.value("overhead_ratio", 0.0);
    const double rk = k->extra.value("overhead_ratio", 0.0);
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "overhead %.2f against the kernel floor's %.2f, slowdown "
                  "%.2f against %.2f",
                  rd, rk, d->extra.value("r_comp_slowdown", 0.0),
                  k->extra.value("r_comp_slowdown", 0.0));
    Target("receiver computing, 1 MiB, the defaults within 0.05 of the "
           "kernel's floor (plain TCP, a blocked thread)",
           rd <= rk + 0.05, buf);
  }
  bool any = false, ok = false;
  std::string detail;
  for (const char* mode : {"thread", "timer"}) {
    const CaseResult* c =
        report.Find(std::string("overlap:recv:1048576:") + mode);
    if (!c) continue;
    any = true;
    double r = c->extra.value("overhead_ratio", 0.0);
    ok = ok || r <= 0.2;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.2f", detail.empty() ? "" : ", ",
                  mode, r);
    detail += buf;
  }
  if (any)
    Target("receiver-side 1 MiB overhead ratio <= 0.2 with a progress thread "
           "or the timer",
           ok, detail);
}

void Finish(const Report& report, const Args& args,
            const nlohmann::json& machine) {
  report.PrintTable();
  PrintTargets(report, machine.value("mode", "") == "cluster");
  WriteUserJson(report, args.json, machine);
}

// One mode, as a rank.
int RunRank(const Args& args) {
  const std::string env = ApplyMode(args);
  nmad::SessionOptions session;
  session.eager_receives_by_caller = args.mode == "mpi";
  RankSetup r = SetupRank("overlap_p2p", "bench", session);
  Bench bench(r, args);
  Report report("overlap_p2p");
  if (r.rank == 0 && args.part_json.empty())
    std::printf("overlap_p2p: mode %s (%s)\n", args.mode.c_str(), env.c_str());
  for (const std::string& side : Split(args.sides)) {
    for (const std::string& size : Split(args.sizes)) {
      const size_t n = std::stoul(size);
      Check(r.core->Barrier(), "barrier");
      CaseResult c = bench.RunCase(side, n);
      if (r.rank != 0) continue;
      c.extra["env"] = env;
      c.note = Note(c);
      report.Add(c);
    }
  }
  Check(r.core->Barrier(), "barrier");
  if (r.rank != 0) return 0;
  if (!args.part_json.empty()) {
    report.WriteJson(args.part_json);
  } else {
    Finish(report, args, {{"ranks", 2}, {"mode", args.mode}, {"env", env}});
  }
  return 0;
}

// One mode's job: under rondo-run on this machine, or inside the cluster
// under its launcher.
int RunModeJob(const char* argv0, const cluster::ClusterPlan& plan,
               const std::vector<std::string>& job_args) {
  if (plan.hosts() == 0) return RunUnderLauncher(argv0, job_args);
  JobSpec spec;
  spec.launcher = plan.JobLauncher();
  std::string why;
  spec.launcher_path = plan.JobLauncherPath(&why);
  if (spec.launcher_path.empty())
    throw std::runtime_error("cannot start the job: " + why);
  spec.ranks = plan.hosts();
  spec.bind = "none";  // a host's cgroup holds one core
  spec.timeout_s = 600;
  spec.program = SelfExe();
  spec.args = job_args;
  // The launcher passes only what it is told to the other hosts: the
  // RONDO_* variables of the driver's environment reach both ranks (a mode
  // still sets its own, before the engine exists).
  for (const auto& [k, v] : Environment())
    if (k.rfind("RONDO_", 0) == 0 && k.rfind("RONDO_RUN_", 0) != 0 &&
        k != "RONDO_RANK" && k != "RONDO_SIZE")
      spec.env[k] = v;
  return RunMpiJob(spec);
}

// Top level: one job per mode, merged.
int Orchestrate(const char* argv0, const Args& args,
                const cluster::ClusterPlan& plan) {
  Report report("overlap_p2p");
  const std::vector<std::string> modes = Split(args.modes);
  char tmpl[] = "/tmp/overlap_p2p.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  const std::string dir = tmpl;
  int failures = 0;
  nlohmann::json envs = nlohmann::json::object();
  for (const std::string& mode : modes) {
    const std::string part = dir + "/" + mode + ".json";
    std::vector<std::string> a = {"--mode", mode,
                                  "--part-json", part,
                                  "--reps", std::to_string(args.reps),
                                  "--timer-us", std::to_string(args.timer_us),
                                  "--thread-placement", args.thread_placement,
                                  "--sides", args.sides,
                                  "--sizes", args.sizes};
    if (args.quick) a.push_back("--quick");
    std::printf("overlap_p2p: running mode %s ...\n", mode.c_str());
    int rc = RunModeJob(argv0, plan, a);
    std::ifstream in(part);
    if (rc != 0 || !in) {
      std::fprintf(stderr, "overlap_p2p: mode %s failed (exit %d)\n",
                   mode.c_str(), rc);
      ++failures;
      continue;
    }
    nlohmann::json doc = nlohmann::json::parse(in);
    for (auto& j : doc["results"]) {
      CaseResult c;
      c.name = j["case"];
      c.stats.median_ns = j["median_ns"];
      c.stats.min_ns = j["min_ns"];
      c.stats.p99_ns = j["p99_ns"];
      c.stats.max_ns = j["max_ns"];
      c.stats.mean_ns = j["mean_ns"];
      c.stats.samples = j["samples"];
      c.extra = j;
      for (const char* k : {"case", "median_ns", "min_ns", "p99_ns", "max_ns",
                            "mean_ns", "samples"})
        c.extra.erase(k);
      c.note = Note(c);
      if (c.extra.contains("env")) envs[mode] = c.extra["env"];
      report.Add(c);
    }
    std::remove(part.c_str());
  }
  rmdir(dir.c_str());
  nlohmann::json machine = {{"ranks", 2},
                            {"thread_placement", args.thread_placement},
                            {"modes", envs},
                            {"mode", plan.hosts() > 0 ? "cluster"
                                                      : "shared memory"},
                            {"cluster_hosts", plan.hosts()}};
  if (plan.hosts() > 0) {
    machine["cluster_rate"] = args.cl.rate;
    machine["launcher"] = LauncherName(plan.JobLauncher());
  }
  Finish(report, args, machine);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args args;
  CLI::App app{"nmad overlap of computation and point-to-point transfers "
               "(PIOMan Figures 5-7, overhead ratio; 2 ranks)"};
  app.add_option("--json", args.json, "write results as JSON to this file");
  app.add_flag("--quick", args.quick, "few repetitions (smoke test)");
  app.add_option("--reps", args.reps, "repetitions per phase (default 50)")
      ->check(CLI::Range(3, 100000));
  app.add_option("--modes", args.modes,
                 "comma-separated modes to run, of default, mpi, "
                 "no_progress, thread, timer, kernel (default: all but mpi)");
  app.add_option("--sides", args.sides,
                 "comma-separated sides that compute: send, recv, both "
                 "(default all three)");
  app.add_option("--sizes", args.sizes,
                 "comma-separated transfer sizes in bytes, 1 .. 1048576 "
                 "(default 32768,1048576)");
  app.add_option("--timer-us", args.timer_us,
                 "timer period of the timer mode (default 100)")
      ->check(CLI::Range(10, 1000000));
  app.add_option("--thread-placement", args.thread_placement,
                 "progress thread of the thread mode: cross (other core, "
                 "default), bind (own core) or numa")
      ->check(CLI::IsMember({"cross", "bind", "numa"}));
  app.add_option("--mode", args.mode,
                 "run one mode as a rank (used under a launcher)");
  app.add_option("--part-json", args.part_json,
                 "internal: where rank 0 writes the cases of its mode");
  app.add_option("--cluster", args.cl.cluster,
                 "0: this machine (default); K: an emulated cluster of K "
                 "hosts (bench/cluster, root and network namespaces), ranks 0 "
                 "and 1 on two of them; auto: 2 hosts when this machine can");
  app.add_option("--rate", args.cl.rate,
                 "with --cluster: the links' rate in tc units (default "
                 "1gbit)");
  app.add_option("--launcher", args.cl.launcher,
                 "with --cluster: mpirun (Open MPI's, in host 0; default) or "
                 "srun (an emulated Slurm cluster)");
  app.add_option("--srun", args.cl.srun,
                 "Slurm's srun (default /usr/bin/srun)");
  app.add_flag("--inside-cluster", args.cl.inside)->group("");
  app.add_option("--cluster-sh", args.cl.cluster_sh)->group("");
  CLI11_PARSE(app, argc, argv);
  args.command.assign(argv, argv + argc);
  try {
    rondo::bench::CheckSidesAndSizes(args);
    if (rondo::bench::UnderLauncher()) {
      if (args.mode.empty()) {
        auto modes = rondo::bench::Split(args.modes);
        args.mode = modes.empty() ? "no_progress" : modes.front();
      }
      return rondo::bench::RunRank(args);
    }
    rondo::bench::cluster::ClusterPlan plan("overlap_p2p", argv[0]);
    std::string message;
    if (const int rc = plan.Parse(args.cl, &message); rc != 0) {
      std::fprintf(stderr, "overlap_p2p: %s\n", message.c_str());
      return rc;
    }
    if (!message.empty()) std::printf("overlap_p2p: %s\n", message.c_str());
    if (plan.hosts() > 0 && !plan.inside())
      return plan.RunSelfInside(args.command);
    return rondo::bench::Orchestrate(argv[0], args, plan);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overlap_p2p: %s\n", e.what());
    return 1;
  }
}
