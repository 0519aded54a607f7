// Shared plumbing of the two-rank nmad benchmarks (pingpong, latency_mt,
// overlap_p2p): finding and running the launcher, setting up one rank
// (bootstrap, Engine, Core, Session), and a calibrated compute loop.
//
// Launch: `bazel run -c opt //bench/p2p:X -- ARGS` starts the binary without a
// launcher (neither RONDO_RUN_SOCKET nor PMIX_RANK set). The binary then
// finds rondo-run, a data dependency, in its runfiles
// (RUNFILES_DIR, TEST_SRCDIR, <argv0>.runfiles, /proc/self/exe.runfiles,
// then bazel-out/<cfg>/bin/drivers/bootstrap/rondo-run next to itself) and
// runs `rondo-run -n 2 <itself> ARGS`. Under a launcher (rondo-run, mpirun,
// srun) it is a rank and runs the benchmark.
#ifndef RONDO_BENCH_P2P_NMAD_BENCH_H_
#define RONDO_BENCH_P2P_NMAD_BENCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/common/plot.h"  // UserPath
#include "bench/common/report.h"
#include "engine/engine.h"
#include "nmad/core.h"

namespace rondo::bench {

// True when a launcher started this process (RONDO_RUN_SOCKET or PMIX_RANK).
bool UnderLauncher();

// Path of the rondo-run binary shipped with this benchmark (see banner);
// throws std::runtime_error listing the places tried.
std::string FindRondoRun(const char* argv0);

// The path of this executable (/proc/self/exe).
std::string SelfExe();

// With a --json argument, writes `report` there (through UserPath) with
// `machine` added to the machine section, and says where; else nothing.
void WriteUserJson(const Report& report, const std::string& json_arg,
                   const nlohmann::json& machine);

// Replaces this process by `rondo-run -n <ranks> --bind core <self> args...`
// (args = argv[1..]). Returns only on failure (with a message on stderr).
int ExecUnderLauncher(int argc, char** argv, int ranks = 2);

// Runs `rondo-run -n <ranks> --bind core <self> args` as a child and waits
// for it; returns its exit status (128+signal when killed).
int RunUnderLauncher(const char* argv0, const std::vector<std::string>& args,
                     int ranks = 2);

// One rank of a benchmark: bootstrap from the environment, an Engine from
// the environment (set RONDO_* with setenv before calling), the main thread
// bound to the engine's application core, a Core and one session.
struct RankSetup {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<nmad::Core> core;
  nmad::Session* session = nullptr;
  int rank = -1;
  int size = 0;
};
// Exits the process with a message naming `who` on failure.
RankSetup SetupRank(const char* who, const std::string& session = "bench",
                    const nmad::SessionOptions& session_options = {});

// A pure-CPU compute loop that never calls into Rondo: a dependent
// floating-point chain of `n` steps, its result stored to a volatile sink.
void Compute(int64_t n);
// Nanoseconds per Compute step on this thread's core (min of several runs).
double CalibrateComputeNsPerStep();

}  // namespace rondo::bench

#endif  // RONDO_BENCH_P2P_NMAD_BENCH_H_
