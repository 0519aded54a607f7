// Running a benchmark driver on the emulated cluster (bench/cluster), the
// part every driver with a `--cluster K` option shares (bench/overlap,
// bench/overlap_p2p):
//
//   1. the options: `--cluster 0|auto|K`, `--rate R` (tc's units),
//      `--launcher mpirun|srun`, the hidden `--inside-cluster` and
//      `--cluster-sh PATH` (ClusterArgs, checked by ClusterPlan::Parse);
//   2. the driver started by the user re-runs itself inside
//      `cluster.sh run K --rate R -- DRIVER ... --inside-cluster`
//      (`cluster.sh slurm up K+1` / `slurm run` / `slurm down` for srun),
//      which builds the hosts and removes them whatever happens
//      (ClusterPlan::RunSelfInside);
//   3. inside, each job is started by Open MPI's mpirun in host 0
//      (`cluster.sh launch openmpi`, one rank per host, Rondo's ranks through
//      PMIx) or by srun (ClusterPlan::JobLauncher).
//
// Not thread-safe: the driver's main thread only.
#ifndef RONDO_BENCH_CLUSTER_CLUSTER_RUN_H_
#define RONDO_BENCH_CLUSTER_CLUSTER_RUN_H_

#include <string>
#include <vector>

#include "bench/common/jobs.h"

namespace rondo::bench::cluster {

// The link rate in bits per second from tc's units ("1gbit", "250mbit",
// "125mbps"); 0 when the text is not one.
double RateBits(const std::string& text);

// The options as the user gave them.
struct ClusterArgs {
  std::string cluster = "0";        // 0 (shared memory), auto, or K hosts
  std::string rate = "1gbit";       // every host's link rate
  std::string launcher = "mpirun";  // mpirun | srun (--cluster K only)
  std::string srun = "/usr/bin/srun";
  bool inside = false;     // hidden: set by RunSelfInside
  std::string cluster_sh;  // hidden, for tests: cluster.sh's path
};

class ClusterPlan {
 public:
  // `who` prefixes messages ("overlap_p2p"); `argv0` finds cluster.sh in
  // the runfiles.
  ClusterPlan(std::string who, std::string argv0)
      : who_(std::move(who)), argv0_(std::move(argv0)) {}

  // Checks `args`. Returns 0; 2 for a bad argument, 1 when the machine
  // cannot emulate the cluster asked for; *message says why (also set
  // with 0 when `auto` falls back to shared memory).
  int Parse(const ClusterArgs& args, std::string* message);

  int hosts() const { return hosts_; }  // 0: shared memory
  double rate_bits() const { return rate_bits_; }
  bool srun() const { return args_.launcher == "srun"; }
  bool inside() const { return args_.inside; }
  const ClusterArgs& args() const { return args_; }

  // cluster.sh's path, or "" and *why.
  std::string ClusterSh(std::string* why) const;
  // `cluster.sh check`: "" when this machine can emulate a cluster, else
  // the problems it names, on one line.
  std::string Problems() const;

  // Runs `command` (this driver's argv; argv[0] may be relative) again
  // inside a cluster of hosts() hosts with `--cluster K --inside-cluster`
  // in place of its --cluster option, and removes the cluster afterwards.
  // Returns the inner driver's exit status (1 when interrupted).
  int RunSelfInside(const std::vector<std::string>& command) const;

  // Inside the cluster: the launcher of a job of hosts() ranks, one per
  // host, and its executable; "" and *why when it is missing.
  Launcher JobLauncher() const {
    return srun() ? Launcher::kClusterSrun : Launcher::kClusterOpenMpi;
  }
  std::string JobLauncherPath(std::string* why) const;

 private:
  std::string who_, argv0_;
  ClusterArgs args_;
  int hosts_ = 0;
  double rate_bits_ = 0;
};

}  // namespace rondo::bench::cluster

#endif  // RONDO_BENCH_CLUSTER_CLUSTER_RUN_H_
