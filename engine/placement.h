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

enum class PlacementKind { kNone, kBind, kNuma, kOddEven, kCores };

struct PlacementSpec {
  PlacementKind kind = PlacementKind::kNuma;
  std::vector<int> cores;  // for kCores

  // "none" | "bind" | "numa" | "odd-even" | "cores:1,3-4". Throws
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

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_PLACEMENT_H_
