// The performance model of the split-tree algorithm (Denis, Jaeger, Jeannot,
// Pérache, Taboada, "Study on progress threads placement and dedicated cores
// for overlapping MPI nonblocking collectives on manycore processor",
// IJHPCA 2019, Section 6.2), and the choice of its split point S.
//
// Why: a tree collective folded on the few communication cores left free by
// the application is slow (its wide first levels get serialised), while
// running it on the application cores cannot overlap computation. The
// split-tree algorithm runs the S lowest (widest) levels on the application
// cores and folds the rest on the P(N) = N_proc - N communication cores. The
// model predicts the time of "nonblocking collective overlapped with
// computation" for each S, so the runtime can pick S for the current N, P and
// operation without calibration (Section 6.3: "the model does not depend on
// hardware performance").
//
// Units: one unit is the point-to-point transfer time of one buffer of the
// operation's size (latency, contention and caches are neglected, as in the
// paper). `SplitTreeParams::unit_ns` converts units to nanoseconds.
//
// Two readings differ from the printed paper (see docs/splittree_model.md):
//  * Equation 4 (computation): the paper's experiments are strong-scaled (a
//    fixed global workload), so per-rank computation GROWS as N shrinks:
//    C(N) = (N_proc / N) * C(N_proc). The printed N / N_proc is inverted.
//  * Equation 5 (edges per level): the printed ceil(N/2^i + 1/2) contradicts
//    the text ("if N is a power of 2, the number of edges in level i is
//    N/2^i") and the paper's stated results (minimum at S = 0, N = 51;
//    switches S 0->1 at N = 52, 1->2 at 58, 2->3 at 62). floor(N/2^i + 1/2)
//    (round half up) satisfies both, so it is the default
//    (LevelCountFormula::kText); the printed form stays available as
//    LevelCountFormula::kAsPrinted.
//
// Every function here is pure (no shared state, no allocation beyond the
// returned values), thread-safe, and may be called from any thread. They are
// set-up code: bad arguments throw std::invalid_argument naming the
// parameter, the value and what is allowed.
#ifndef RONDO_NMAD_COLL_SPLITTREE_MODEL_H_
#define RONDO_NMAD_COLL_SPLITTREE_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rondo::nmad::coll {

// The shape of the data flow along the tree.
enum class SplitOp : uint8_t {
  // Same buffer size on every level (reduce, broadcast): Equations 6, 7.
  kConstant,
  // Buffer size doubles at each level from the leaves (gather, scatter):
  // Equations 8, 9.
  kDoubling,
};

// "constant" / "doubling".
std::string_view SplitOpName(SplitOp op);

// Which form of Equation 5 F(N, i) to use (see the banner).
enum class LevelCountFormula : uint8_t {
  kText,       // floor(N / 2^i + 1/2): agrees with the text and the results.
  kAsPrinted,  // ceil(N / 2^i + 1/2): the equation exactly as printed.
};

struct SplitTreeParams {
  // N_proc: cores of the machine (node) shared by ranks and progress threads.
  int nproc = 64;
  // N: application cores, i.e. MPI ranks, one per core; 1 <= n <= nproc.
  // P(N) = nproc - n cores host the progress threads.
  int n = 64;
  SplitOp op = SplitOp::kConstant;
  // C(N_proc), the computation each rank does on the full machine, in units.
  // Negative means the paper's choice: computation sized to last as long as
  // the blocking collective on all cores, T_blocking(N_proc) (Equation 3 for
  // kConstant, W_H(N_proc) for kDoubling).
  double compute_at_nproc = -1.0;
  // Nanoseconds per unit, to express model times as durations (> 0).
  double unit_ns = 1.0;
  LevelCountFormula level_count = LevelCountFormula::kText;
};

// Throws std::invalid_argument unless 1 <= n <= nproc, nproc <= 2^30 and
// unit_ns > 0 (compute_at_nproc may be any finite number; negative = auto).
void ValidateSplitTreeParams(const SplitTreeParams& params);

// ---- The equations, named after the paper ----

// H(N) = ceil(log2 N), the height of the binomial tree whose N leaves are the
// ranks (H(1) = 0). Exact integer arithmetic. Requires n >= 1.
int TreeHeight(int n);

// P(N) = N_proc - N, the communication cores. Requires 1 <= n <= nproc.
int CommCores(int nproc, int n);

// Equation 3: T_blocking(N) = H(N), all levels run at once on all ranks.
double TBlocking(int n);

// The blocking time of a size-doubling operation, W_H(N) = sum_{i=1}^{H(N)}
// 2^(i-1) = 2^H(N) - 1 (the paper defines W_H before Equation 8).
double TBlockingVar(int n);

// Equation 4, corrected (strong scaling): C(N) = (N_proc / N) * C(N_proc).
double Computation(int nproc, int n, double compute_at_nproc);

// C(N) for `params`, resolving compute_at_nproc < 0 to the op's blocking time
// on N_proc cores.
double Computation(const SplitTreeParams& params);

// Equation 5: F(N, i), the communications of level i (1 <= i <= H(N)),
// counting the extra edge of a level with an odd number of vertices.
int64_t LevelCommunications(int n, int i,
                            LevelCountFormula formula = LevelCountFormula::kText);

// W(N, S) = sum_{i=1}^{S} 2^(i-1) = 2^S - 1, the weight of levels 1..S of a
// size-doubling operation (before Equation 8). Requires 0 <= s <= 62.
double WeightUpTo(int s);

// The folded part: sum_{i=S+1}^{H(N)} ceil(F(N, i) / P) * weight(i), weight 1
// for kConstant and 2^(i-1) for kDoubling. +infinity when P = 0 and S < H(N)
// (nothing can run folded without communication cores); 0 when S >= H(N).
double FoldedTime(int n, int p, int s, SplitOp op,
                  LevelCountFormula formula = LevelCountFormula::kText);

// Equation 6: T_non-blocking(S, N) = min(S, H(N)) + folded (constant size).
double TNonBlocking(int s, int n, int p,
                    LevelCountFormula formula = LevelCountFormula::kText);

// Equation 7: T_overlapped(S, N) = min(S, H(N)) + max(C(N), folded).
double TOverlapped(int s, int n, int p, double computation,
                   LevelCountFormula formula = LevelCountFormula::kText);

// Equation 8: T^var_non-blocking(S, N) = min(W(N, S), W_H(N)) + folded
// (size doubling).
double TNonBlockingVar(int s, int n, int p,
                       LevelCountFormula formula = LevelCountFormula::kText);

// Equation 9: T^var_overlapped(S, N) = min(W(N, S), W_H(N))
//                                      + max(C(N), folded).
double TOverlappedVar(int s, int n, int p, double computation,
                      LevelCountFormula formula = LevelCountFormula::kText);

// ---- The model and the choice of S ----

// The model time, in units, of the nonblocking collective overlapped with
// the computation for split point `s` >= 0: Equation 7 for kConstant,
// Equation 9 for kDoubling, with C(N) = Computation(params). +infinity when
// the split needs communication cores and there are none (n == nproc and
// s < H(n)).
double ModelTime(const SplitTreeParams& params, int s);

// ModelTime(params, s) * params.unit_ns.
double ModelTimeNs(const SplitTreeParams& params, int s);

// The S in [0, H(N)] minimising ModelTime. Ties go to the smaller S: it
// keeps more of the tree on the communication cores, i.e. more overlap for
// the same predicted time (and is the paper's order of preference). With no
// communication core (n == nproc) this is H(N): the blocking algorithm.
int ChooseSplit(const SplitTreeParams& params);

// ModelTime(params, s) for every s in [0, H(N)].
std::vector<double> ModelTimes(const SplitTreeParams& params);

// ---- Configuration: RONDO_SPLIT_S=auto|<int> ----

inline constexpr std::string_view kSplitSEnvVar = "RONDO_SPLIT_S";
inline constexpr int kMaxFixedSplit = 31;  // H(N) <= 31 for any int N.

struct SplitOptions {
  // true: ChooseSplit picks S for each (N, P, op). false: use fixed_s.
  bool automatic = true;
  // The requested S when !automatic, in [0, kMaxFixedSplit]. A value above
  // H(N) means "all levels on the application cores" (Equation 6 uses
  // min(S, H(N))), so ResolveSplit clamps it to H(N).
  int fixed_s = 0;
};

// Parses "auto" or a decimal integer in [0, kMaxFixedSplit] (digits only: no
// sign, blanks or suffix). Throws std::invalid_argument("Invalid value for
// RONDO_SPLIT_S: 'v'. Expected: auto or an integer from 0 to 31").
SplitOptions ParseSplitOptions(std::string_view value);

// Reads RONDO_SPLIT_S from the environment: unset gives the default (auto);
// anything else goes through ParseSplitOptions (an empty value is an error).
// Not thread-safe with respect to concurrent setenv (it calls getenv).
SplitOptions SplitOptionsFromEnv();

// The S to use: ChooseSplit(params) if automatic, else min(fixed_s, H(N)).
int ResolveSplit(const SplitOptions& options, const SplitTreeParams& params);

}  // namespace rondo::nmad::coll

#endif  // RONDO_NMAD_COLL_SPLITTREE_MODEL_H_
