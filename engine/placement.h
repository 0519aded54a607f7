// Placement of progress threads, from "Progress thread placement for
// overlapping MPI non-blocking collectives using simultaneous multi-threading"
// (split-tree paper, Section 4-5):
//   bind      the progress thread shares the core of its rank
//   numa      the closest free core of the rank's NUMA node (Equation 1);
//             several ranks' threads may share one core (the paper's Fig. 3)
//   odd-even  ranks alternate between the free cores so that consecutive
//             ranks never share one (Equation 2), for chain collectives
//   cores:L   an explicit list: one progress thread per listed core
//   none      no progress thread (polling, timer and idle hook only)
//   auto      the default (PlaceNodeAuto): a progress thread on a core that
//             no application thread of the node uses, else quiet progress
//   quiet     quiet progress on the rank's own core(s) (see PlaceNodeAuto)
//
// Ranks are the processes of one node: `local_rank` of `local_size`. Where a
// rank's application core is not given, ranks are spread as MPC does: evenly
// over the NUMA nodes in rank order, and within a NUMA node at positions
// floor(i * N / n) so that free cores sit next to the ranks (the paper's
// Figure 1).
//
// Thread-safety: pure functions.
#ifndef RONDO_ENGINE_PLACEMENT_H_
#define RONDO_ENGINE_PLACEMENT_H_

#include <string>
#include <vector>

#include "topology/topology.h"

namespace rondo::engine {

enum class PlacementKind { kNone, kBind, kNuma, kOddEven, kCores, kAuto, kQuiet };

struct PlacementSpec {
  PlacementKind kind = PlacementKind::kAuto;
  std::vector<int> cores;  // for kCores

  // "auto" | "quiet" | "none" | "bind" | "numa" | "odd-even" |
  // "cores:1,3-4". Throws
  // std::invalid_argument naming the text and the allowed forms.
  static PlacementSpec Parse(const std::string& text);
  std::string ToString() const;
};

// Equation 1: position (within its NUMA node) of the progress thread of the
// rank at position M, with N cores and n ranks on that NUMA node. Returns M
// when n >= N (no free core: bind). Throws std::invalid_argument when
// N < 1, n < 1 or M outside [0, N).
int NumaPlacement(int N, int n, int M);

// Equation 2: core (among p) of the progress thread of rank r, with n ranks
// on p cores. Returns -1 when n >= p (no free core). Throws
// std::invalid_argument when p < 1, n < 1 or r outside [0, n).
int OddEvenPlacement(int p, int n, int r);

// MPC's spread placement: the core of local rank r among `local_size` ranks.
// Oversubscribed NUMA nodes (more ranks than cores) wrap around.
int AppCoreOfRank(const topology::Topology& topo, int local_rank,
                  int local_size);

// The cores where the progress threads of local rank `local_rank` run, given
// the rank's application core. Throws std::invalid_argument for a rank
// outside [0, local_size), an application core or listed core that the
// machine does not have; the message names the value and the valid cores.
std::vector<int> ProgressCores(const topology::Topology& topo,
                               const PlacementSpec& spec, int local_rank,
                               int local_size, int app_core);

// ---- Dedicated communication cores (RONDO_COMM_CORES) ----
//
// The paper's Figure 3: the node's cores are split into application cores
// (one rank each, or several when oversubscribed) and communication cores
// that host only progress threads, several ranks' threads per core.

struct CommCoresSpec {
  int count = 0;           // "<n>": n cores chosen from the topology
  std::vector<int> cores;  // "<list>": these cores (sorted, distinct)

  bool empty() const { return count == 0 && cores.empty(); }
  // "" (none), "<n>" (a count, digits only), or a core list with ',' or '-'
  // such as "3,7" or "6-7", or "cores:<list>" (also for a single core:
  // "cores:5"). Throws std::invalid_argument naming the text and the forms.
  static CommCoresSpec Parse(const std::string& text);
  std::string ToString() const;  // "" | "2" | "cores:6-7"
};

// `count` communication cores chosen from the topology: distributed over the
// NUMA nodes in proportion to their core counts (largest remainder, ties to
// the lower node), and within a NUMA node of N cores with k of them chosen,
// the last core of each of k equal blocks (positions ceil((j+1) N/k) - 1),
// which is where MPC's spread placement leaves its free cores (Figure 1).
// Throws std::invalid_argument unless 1 <= count < NumCores().
std::vector<int> ChooseCommCores(const topology::Topology& topo, int count);

// Where everything of one node goes.
struct NodePlacement {
  // Dedicated communication cores: cores that host progress threads and no
  // rank's application thread (sorted). With a CommCoresSpec, the chosen or
  // listed cores; without, the free cores the placement uses (numa,
  // odd-even); empty for bind and none.
  std::vector<int> comm_cores;
  std::vector<int> app_cores;                    // per local rank
  std::vector<std::vector<int>> progress_cores;  // per local rank
  // Per local rank (PlaceNodeAuto; all false otherwise): the progress thread
  // shares the rank's own core and runs only while background work is
  // pending and the application is outside Rondo (quiet progress).
  std::vector<bool> quiet;
  // Per local rank: why its progress threads are where they are, for
  // rondo-info ("" for the explicit placements).
  std::vector<std::string> why;
  // More ranks than cores on the node: waiting ranks give their core away.
  bool oversubscribed = false;
};

// Places the `local_size` ranks of a node and their progress threads.
// Without comm cores: app cores by AppCoreOfRank, progress cores by
// ProgressCores (Equations 1 and 2). With comm cores C (P of them): ranks
// are spread (as AppCoreOfRank does) over the other cores only, wrapping
// around when there are more ranks than application cores (oversubscribed),
// and the progress thread of rank r goes to
//   bind      its application core;
//   numa      the communication cores of its NUMA node, ranks in blocks:
//             the i-th of the n ranks of that NUMA node gets its k
//             communication cores' floor(i * k / n)-th (Equation 1's
//             grouping); a NUMA node without one uses all of C, by rank;
//   odd-even  C[r mod P] (Equation 2: consecutive ranks on different cores
//             whenever P >= 2);
//   cores:L   the cores L (whatever they are);
//   none      no progress thread.
// Throws std::invalid_argument for local_size < 1, a listed core the machine
// does not have, or comm cores that leave no application core.
NodePlacement PlaceNode(const topology::Topology& topo,
                        const PlacementSpec& spec, const CommCoresSpec& comm,
                        int local_size);

// ---- The default: RONDO_PROGRESS=auto ----
//
// Background progress must never cost an MPI program more than it gives.
// `rank_cores[r]` is the set of cores local rank r's application may run on
// (from its affinity mask, as the launcher or PMIx reports it; empty when
// unknown, which counts as "any core"). A core is used when a rank is bound
// to it alone; ranks bound to several cores (or unknown) take as many cores
// as there are of them, somewhere.
//   - Free cores (used by no application thread; with unbound ranks, at most
//     cores - ranks of them, spread as MPC leaves its free cores) get the
//     progress threads: each rank takes a free core of its own NUMA node
//     when there is one (the ranks of a NUMA node share its free cores in
//     blocks, as Equation 1 groups them), else any free core.
//   - With no free core (one rank per core or more: the ordinary HPC case)
//     every rank gets quiet progress: one thread on its own core, asleep
//     unless background work is pending while the application is outside
//     Rondo (progress_thread.h, ProgressThread::Mode::kQuiet).
//   - ... unless the whole job is on this node (0 < job_size <= local_size):
//     then every byte moves by a copy on a core that also computes, so no
//     thread could overlap anything, and none is started: progress runs
//     inside the MPI calls (RONDO_PROGRESS=quiet asks for it anyway).
// `why` says which case applied and why, per rank. Throws
// std::invalid_argument for local_size < 1 or a rank_cores size other than
// 0 or local_size. job_size 0: unknown (treated as spanning nodes).
// A rank bound to several cores (not all: MPI+OpenMP) uses all of them.
// `quiet_ok` false (no upper layer marks the application's calls): where
// quiet progress would go, an ordinary progress thread on the rank's core.
// `confined` (a resource manager placed the ranks: srun, mpirun): the cores
// outside every local rank's mask belong to someone else, so only cores of
// the ranks' masks may hold a progress thread; a rank bound by the launcher
// then gets quiet progress on its own core rather than a thread on a core
// it was not given. rondo-run, which binds ranks itself and leaves the rest
// of the machine free, passes false.
NodePlacement PlaceNodeAuto(const topology::Topology& topo,
                            const std::vector<topology::CpuSet>& rank_cores,
                            int local_size, int job_size = 0,
                            bool quiet_ok = true, bool confined = false);

// The explicit placement `spec` (RONDO_PROGRESS=cores:<list>, bind, numa,
// odd-even) puts a progress thread of this rank on a core that another
// local rank's application is bound to: one warning line per such core,
// naming the rank ("" when none; the engine logs each line). `rank_cores` as for PlaceNodeAuto.
std::string PlacementConflicts(const topology::Topology& topo,
                               const std::vector<int>& progress_cores,
                               const std::vector<topology::CpuSet>& rank_cores,
                               int local_rank);

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_PLACEMENT_H_
