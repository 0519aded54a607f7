// Starting MPI jobs from a benchmark driver: the command line of each
// launcher, the environment a job gets, and running it to completion.
//
// Rondo's programs run under rondo-run (drivers/bootstrap/rondo_run.cc):
//   rondo-run -n N --bind core|none --timeout S PROGRAM ARGS
// with the driver's environment plus the job's overrides (RONDO_* variables
// configure the engine of that job only).
//
// Open MPI's programs run under its mpirun with its defaults, started as
// drivers/bootstrap/pmix_mpirun_test.sh does:
//   mpirun --allow-run-as-root --oversubscribe -n N --timeout S
//          --map-by core --bind-to core:overload-allowed   (bind core)
//          --bind-to none                                  (bind none)
//          PROGRAM ARGS
// with a fresh TMPDIR (also orte's session directory, and HOME when unset)
// removed afterwards, plm isolated (no ssh/rsh agent), oversubscription
// allowed, and a fresh directory for the shared-memory BTL's segments (see
// RunMpiJob). The rondo-run variables of an enclosing Rondo job are removed.
//
// MPICH's Hydra (kMpich):
//   mpirun.mpich -n N -bind-to core|none PROGRAM ARGS
// with MPIEXEC_TIMEOUT=S.
//
// Used by bench/coll and bench/overlap. Not thread-safe: one job at a time,
// from the driver's main thread.
#ifndef RONDO_BENCH_COMMON_JOBS_H_
#define RONDO_BENCH_COMMON_JOBS_H_

#include <map>
#include <string>
#include <vector>

namespace rondo::bench {

// ---- Small helpers ----

// The non-empty items of `s` separated by `sep` ("a,,b" -> {"a", "b"}).
std::vector<std::string> Split(const std::string& s, char sep = ',');

// `items` joined with `sep`.
std::string Join(const std::vector<std::string>& items, const char* sep = " ");

// The value of environment variable `name`, "" when unset.
std::string Env(const char* name);

// The driver's whole environment as NAME -> VALUE.
std::map<std::string, std::string> Environment();

// Whether `path` is a regular file this process may execute.
bool Executable(const std::string& path);

// FindProgram (bench/common/plot.h) that reports instead of throwing: the
// absolute path of `rel` (e.g. "bench/coll/coll_rondo") if it is an executable
// in the runfiles or next to this binary; else "" and *why (if non-null) says
// what is missing.
std::string FindExecutable(const char* argv0, const std::string& rel,
                           std::string* why);

// ---- Jobs ----

// kMpich: MPICH's Hydra on this machine (`mpirun.mpich`). kClusterOpenMpi
// and kClusterMpich: Open MPI's or MPICH's own launcher inside host 0 of a
// running emulated cluster, through `cluster.sh launch openmpi|mpich`
// (bench/cluster/cluster.sh; launcher_path is cluster.sh): the launcher
// starts one rank per host over the emulated links (Rondo's programs run
// under kClusterOpenMpi too, through PMIx, as a cluster starts them).
// kClusterSrun: Slurm's `srun --mpi=pmix -N N -n N --ntasks-per-node=1`
// inside host 0 of an emulated Slurm cluster (`cluster.sh slurm run`;
// launcher_path is srun): one rank per compute node, PMIx for both Rondo's
// and Open MPI's programs.
enum class Launcher {
  kRondoRun,
  kMpirun,
  kMpich,
  kClusterOpenMpi,
  kClusterMpich,
  kClusterSrun
};

// "rondo-run" | "mpirun" | "mpirun.mpich" | "cluster openmpi" |
// "cluster mpich" | "srun".
const char* LauncherName(Launcher launcher);

struct JobSpec {
  Launcher launcher = Launcher::kRondoRun;
  // The launcher's executable: rondo-run (found with FindProgram) or
  // Open MPI's mpirun (e.g. /usr/bin/mpirun).
  std::string launcher_path;
  int ranks = 2;
  // core | none, the same policy for both; auto (rondo-run only): its
  // default, core when the ranks fit on the CPUs, else none.
  std::string bind = "core";
  int timeout_s = 900;        // the launcher kills the job after this
  std::string program;        // absolute path of the MPI program
  std::vector<std::string> args;
  // Set in the job's environment on top of the driver's (an empty value
  // sets the variable to "", it does not remove it).
  std::map<std::string, std::string> env;
};

// The command line that runs `spec` (launcher, its options, program, args).
std::vector<std::string> JobCommand(const JobSpec& spec);

// The launcher's part of the command line with "N" for the rank count and
// no timeout, for reports: "rondo-run -n N --bind core",
// "mpirun --allow-run-as-root --oversubscribe -n N --map-by core ...".
std::string LauncherDescription(Launcher launcher, const std::string& bind);

// What the launcher adds to the environment of every job (values describing
// the fresh directories), for reports; empty for rondo-run.
std::map<std::string, std::string> LauncherEnvironment(Launcher launcher);

// Runs `argv` (argv[0] an executable path) with `env` as its whole
// environment, its stdin/stdout/stderr the driver's; waits for it. Returns
// the exit status, 128 + signal when it was killed, 127 when it could not be
// executed.
//
// With `interrupted` non-null the driver survives SIGINT (Ctrl-C) while the
// job runs (the job, in the same process group, gets it and stops) and
// *interrupted tells whether one arrived, so the caller can report what was
// measured; with nullptr SIGINT keeps its default action.
int RunCommand(const std::vector<std::string>& argv,
               const std::map<std::string, std::string>& env,
               bool* interrupted = nullptr);

// Runs the job `spec` (see the banner for each launcher's command line and
// environment) and waits for it; the fresh directories of an mpirun job are
// removed afterwards. `command` (if non-null) gets the command line run.
// Returns RunCommand's status. Throws std::runtime_error if a temporary
// directory cannot be made.
int RunMpiJob(const JobSpec& spec, std::vector<std::string>* command = nullptr,
              bool* interrupted = nullptr);

}  // namespace rondo::bench

#endif  // RONDO_BENCH_COMMON_JOBS_H_
