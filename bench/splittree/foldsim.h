// A discrete-event simulator of a folded collective: Rondo's own schedules
// (nmad/coll/algorithms.h) for every rank, the split-tree step placement
// (nmad/coll/split.h) and the engine's placement policies
// (engine/placement.h: bind, numa, odd-even, dedicated communication cores),
// run on a simulated many-core node where every core runs one thread at a
// time.
//
// Why: the split-tree paper (Denis, Jaeger, Jeannot, Pérache, Taboada,
// IJHPCA 2019) makes its case on a 64-core KNL and a 48-core Skylake; this
// machine has 2 cores. The simulator reproduces the *mechanisms* the paper
// explains its Figures 7 and 17-19 with (Sections 5.1 and 6.1): progress
// threads gathered on few communication cores serialise what the collective
// would do in parallel, and a send and its receive on one core cannot run at
// the same time. Its times are simulated, never measured.
//
// What is simulated (docs/splittree_sim.md has the full list and the
// reasons for the default values):
//  * Threads. Each rank has an application thread on its application core
//    and (unless the placement is `none`) one progress thread on the first
//    of its progress cores; with `none` the kComm steps run on the
//    application thread, in the call and in Wait only. The application thread runs: the nonblocking call (the
//    rank's StepPlace::kAppStart steps, until all of them are done), then
//    its computation, then Wait (the kAppWait steps; Wait returns when every
//    step of the rank is done). The progress thread runs the kComm steps.
//    Steps are handed to a thread as soon as their dependencies are done;
//    a thread works on its oldest step that can make progress, one slice
//    (one chunk) at a time. In blocking mode every step runs on the
//    application thread before the computation.
//  * Cores. A core runs one thread at a time, round-robin among the
//    runnable threads placed on it, with a time quantum; starting another
//    thread costs `switch_ns`. A thread that cannot progress is blocked:
//    alone on its core it spins for `spin_ns` (resuming costs nothing), then
//    sleeps (resuming costs `wake_ns`); with other runnable threads on the
//    core it yields at once. Blocked threads never consume a core that
//    another thread wants (no busy polling).
//  * Messages: the shared-memory two-copy pipelined protocol. The sender's
//    thread copies the message into a bounded bounce buffer in chunks, the
//    receiver's thread copies the chunks out; the sender waits when the
//    bounce buffer is full, the receiver when it is empty. On two cores the
//    copies overlap (one transfer ~ 1 unit); on one core they serialise with
//    thread switches (~ 2 units). `Protocol::kSingleCopy` instead models a
//    receiver-side single copy (CMA, or a thread-based MPI such as MPC):
//    the sender only posts. A send step completes when its data is in the
//    bounce buffer (two-copy) or copied out (single copy); a receive when
//    its data is in place. Sends may start before the matching receive is
//    posted (eager into the bounce buffer).
//  * Local steps: a copy costs its bytes at the copy bandwidth, a reduce
//    `reduce_factor` times that (a copy onto itself is free, as in the
//    executor). Every step costs `step_ns` of CPU to its thread: a receive
//    pays it when it is posted (as soon as it is ready, in a slice of its
//    own), the others with their first chunk. A message's first chunk is
//    visible to the receiver `latency_ns` after the sender wrote it.
//  * Time. Events of the same instant are all applied before any core
//    picks its next slice, so a tie (a chunk copied in exactly when the
//    previous one is copied out) never makes a thread look blocked.
// Not simulated: caches and memory-bandwidth contention between cores
// (every core copies at the same speed whatever the others do), NUMA
// distances, Rondo's executor handing ready steps to a waiting application
// thread (here kComm steps always run on the progress thread, as in the
// paper's MPC), polling costs of idle threads.
//
// Units: one unit is the time to copy one buffer of the operation's size
// (CollArgs::bytes) at `copy_bytes_per_ns`. Results are in simulated
// nanoseconds and in units.
//
// Deterministic: the same configuration gives bit-identical results (events
// are ordered by time then by creation order). A schedule set that cannot
// finish (a cycle, a receive without a send) ends with FoldResult::deadlock
// and the stuck steps; the simulator never hangs.
//
// Thread-safety: Simulate* are pure functions of their arguments (the
// topology is only read) and may be called from any thread concurrently.
// They are set-up code: bad arguments throw std::invalid_argument naming
// the parameter, the value and what is allowed.
#ifndef RONDO_BENCH_SPLITTREE_FOLDSIM_H_
#define RONDO_BENCH_SPLITTREE_FOLDSIM_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/placement.h"
#include "nmad/coll/algorithms.h"
#include "nmad/coll/schedule.h"
#include "nmad/coll/split.h"
#include "topology/topology.h"

namespace rondo::nmad::coll {

enum class Protocol : uint8_t {
  kTwoCopy,     // sender copies in, receiver copies out, bounded bounce buffer
  kSingleCopy,  // the receiver copies from the sender's buffer
};
std::string_view ProtocolName(Protocol p);  // "two-copy", "single-copy"
// Throws std::invalid_argument naming the text and the allowed names.
Protocol ParseProtocol(std::string_view text);

// Global cost parameters: the same values for every run, no per-case factor.
struct CostModel {
  // One core's copy bandwidth, bytes per ns (= GB/s). 5 GB/s: a KNL core's
  // single-thread memcpy.
  double copy_bytes_per_ns = 5.0;
  // A reduction's cost per byte relative to a copy (it reads two buffers
  // and writes one; vectorised sums are memory-bound).
  double reduce_factor = 1.0;
  Protocol protocol = Protocol::kTwoCopy;
  // Pipeline chunk of the shared-memory protocol, and of local copies and
  // reductions (the scheduling slice of byte work).
  uint64_t chunk_bytes = 32 * 1024;
  // Bounce buffer of one message (two-copy): at most this many bytes copied
  // in and not yet copied out (rounded down to whole chunks, at least one).
  uint64_t bounce_bytes = 64 * 1024;
  // Delay before a message's first chunk is visible to the receiver (not
  // CPU time).
  double latency_ns = 1000;
  // CPU time each step costs its thread (engine task, request, matching).
  double step_ns = 500;
  // Starting another thread on a busy or spinning core.
  double switch_ns = 2000;
  // Resuming a thread on a core that went to sleep.
  double wake_ns = 5000;
  // A blocked thread alone on its core spins this long before sleeping
  // (Rondo's RONDO_IDLE_SPIN_US / RONDO_WAIT_SPIN_US: 50 us).
  double spin_ns = 50000;
  // Round-robin time slice among runnable threads of one core.
  double quantum_ns = 1e6;

  // Every overhead zero (latency, step, switch, wake): a transfer on two
  // cores costs exactly its copy, as in the paper's model.
  static CostModel Unit();
  // Throws std::invalid_argument naming the parameter and the allowed range.
  void Validate() const;
  // Nanoseconds to copy `bytes` (> 0 -> > 0).
  double CopyNs(uint64_t bytes) const;
};

enum class FoldMode : uint8_t {
  // Steps placed by SplitPlaces(schedule, split_s): the nonblocking call,
  // computation, Wait.
  kNonblocking,
  // Every step on the application thread before the computation: the
  // blocking collective, then the computation.
  kBlocking,
};

// One simulated run: a collective on `ranks` ranks of one node.
struct FoldConfig {
  const topology::Topology* topology = nullptr;  // not owned; required
  int ranks = 0;  // N, one process per rank; 1 <= ranks
  engine::PlacementSpec placement;  // default numa
  engine::CommCoresSpec comm_cores;  // empty: the placement's own free cores
  // collective, root, bytes, elem_size (rank and size are set per rank).
  CollArgs args;
  Algorithm algorithm = Algorithm::kBinomial;
  FoldMode mode = FoldMode::kNonblocking;
  int split_s = 0;  // S >= 0 (kNonblocking)
  // Computation of each rank between the nonblocking call and Wait (or
  // after the blocking collective), in ns (>= 0).
  double compute_ns = 0;
  CostModel cost;
};

struct RankTimes {
  double start_ns = 0;        // the call starts (0 for every rank)
  double call_return_ns = 0;  // its kAppStart steps are done
  double compute_end_ns = 0;  // its computation is done
  double end_ns = 0;          // Wait returns: all its steps are done
};

struct CoreStats {
  double busy_ns = 0;      // copying, reducing, computing, step costs
  double overhead_ns = 0;  // thread switches and wake-ups
  int64_t switches = 0;
  int64_t wakeups = 0;
};

struct FoldResult {
  // Time of the whole run: latest end - earliest start, ns.
  double time_ns = 0;
  // The unit: CostModel::CopyNs(args.bytes).
  double unit_ns = 0;
  double units() const { return unit_ns > 0 ? time_ns / unit_ns : 0; }
  std::vector<RankTimes> ranks;
  std::vector<CoreStats> cores;  // indexed by core
  // Placement actually used (from engine::PlaceNode).
  engine::NodePlacement placement;
  // Ranks whose application core hosts another rank's application thread
  // too (oversubscription: their computations time-share the core). 0 when
  // every rank has its own core.
  int shared_app_core_ranks = 0;
  int64_t events = 0;
  int64_t messages = 0;
  // True when the run cannot finish: `stuck` names the unfinished steps
  // ("rank 3 step 2 recv from 2 tag 0: no matching send", at most 32 lines
  // and a count of the rest) and the times above cover what did finish.
  bool deadlock = false;
  std::vector<std::string> stuck;
};

// Builds every rank's schedule with Build(config.algorithm, ...), places
// the ranks with engine::PlaceNode and the steps with SplitPlaces, and
// simulates. Throws std::invalid_argument for a bad configuration (no
// topology, ranks < 1, S < 0, compute_ns < 0, a cost parameter out of
// range, arguments Build refuses, a placement PlaceNode refuses).
FoldResult Simulate(const FoldConfig& config);

// The engine underneath, for explicit schedules: schedules[r] and places[r]
// (one StepPlace per step) of rank r, the node placement (app_cores and
// progress_cores per rank, cores of `num_cores`), each rank's computation.
// `unit_bytes` only sets FoldResult::unit_ns. Sends and receives match per
// (sender, receiver, tag) in step order. Throws std::invalid_argument when
// sizes disagree, a core or peer is out of range, or a matched send and
// receive differ in length; an unmatched or cyclic schedule set is a
// deadlock, not an exception.
FoldResult SimulateSchedules(const std::vector<Schedule>& schedules,
                             const std::vector<std::vector<StepPlace>>& places,
                             const engine::NodePlacement& placement,
                             int num_cores, double compute_ns,
                             uint64_t unit_bytes, const CostModel& cost);

// ---- The paper's experiments ----

// Figure 7: a chain MPI_Iscan (Algorithm::kChain, whole message) of `bytes`
// on `ranks` ranks with this progress-thread placement, no computation
// (Iscan then Wait): the communication time.
FoldConfig ChainScanConfig(const topology::Topology& topo, int ranks,
                           const engine::PlacementSpec& placement,
                           uint64_t bytes, const CostModel& cost);

// Figures 17-19: a binomial-tree collective (kBcast, kReduce, kGather,
// kScatter with kBinomial; kAllreduce with kReduceBcast) of `bytes` from
// root 0 on n ranks, P = NumCores() - n communication cores with the numa
// placement (several ranks' progress threads per core, the paper's Figure
// 3), split at s, with compute_ns of computation per rank.
FoldConfig SplitTreeConfig(const topology::Topology& topo, int n,
                           Collective collective, uint64_t bytes, int s,
                           double compute_ns, const CostModel& cost);

// The same collective run blocking on all NumCores() cores (one rank per
// core): C(N_proc), the computation the paper sizes for perfect overlap.
double FullMachineBlockingNs(const topology::Topology& topo,
                             Collective collective, uint64_t bytes,
                             const CostModel& cost);

// Strong scaling (the paper's Equation 4 as docs/splittree_model.md reads
// it): C(N) = N_proc / N * C(N_proc).
double StrongScaledComputeNs(int nproc, int n, double compute_at_nproc_ns);

}  // namespace rondo::nmad::coll

#endif  // RONDO_BENCH_SPLITTREE_FOLDSIM_H_
