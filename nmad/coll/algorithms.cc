// coll::Build and friends: names, argument checks, the default choice and
// the dispatch to the builders of internal/builders.h.
#include "nmad/coll/algorithms.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>

#include "nmad/coll/internal/builder.h"
#include "nmad/coll/internal/builders.h"

namespace rondo::nmad::coll {
namespace {

using internal::Builder;
using internal::Plan;
using internal::Ref;

constexpr std::array<std::string_view, kNumCollectives> kCollectiveNames = {
    "barrier",   "bcast",      "reduce",         "allreduce",
    "gather",    "gatherv",    "scatter",        "scatterv",
    "allgather", "allgatherv", "alltoall",       "alltoallv",
    "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
};

constexpr int kNumAlgorithms = 13;
constexpr std::array<std::string_view, kNumAlgorithms> kAlgorithmNames = {
    "auto",  "linear",        "binomial", "knomial",
    "chain", "pipelined_chain", "recursive_doubling", "ring",
    "dissemination", "pairwise", "bruck",  "reduce_bcast",
    "rabenseifner",
};

using C = Collective;
using A = Algorithm;

bool IsReduction(Collective c) {
  return c == C::kReduce || c == C::kAllreduce || c == C::kReduceScatter ||
         c == C::kReduceScatterBlock || c == C::kScan || c == C::kExscan;
}

bool IsRooted(Collective c) {
  return c == C::kBcast || c == C::kReduce || c == C::kGather ||
         c == C::kGatherv || c == C::kScatter || c == C::kScatterv;
}

// Algorithms that reorder the operands of the reduction.
bool NeedsCommutative(Collective c, Algorithm a) {
  return IsReduction(c) && a == A::kRing;
}

std::string Num(uint64_t v) { return std::to_string(v); }

std::string CheckVector(const char* name, const std::vector<uint64_t>& v,
                        int size) {
  if (v.size() != static_cast<size_t>(size)) {
    return std::string(name) + " has " + Num(v.size()) +
           " entries; expected size = " + std::to_string(size);
  }
  return "";
}

// counts[i] multiples of elem_size, displs[i] + counts[i] without overflow.
std::string CheckBlocks(const char* counts_name, const std::vector<uint64_t>& c,
                        const char* displs_name,
                        const std::vector<uint64_t>& d, int size,
                        uint64_t elem_size) {
  std::string err = CheckVector(counts_name, c, size);
  if (err.empty() && displs_name != nullptr) {
    err = CheckVector(displs_name, d, size);
  }
  if (!err.empty()) return err;
  for (int i = 0; i < size; ++i) {
    if (c[i] % elem_size != 0) {
      return std::string(counts_name) + "[" + std::to_string(i) + "] = " +
             Num(c[i]) + " is not a multiple of elem_size " + Num(elem_size);
    }
    if (displs_name != nullptr &&
        d[i] > std::numeric_limits<uint64_t>::max() - c[i]) {
      return std::string(displs_name) + "[" + std::to_string(i) + "] + " +
             counts_name + "[" + std::to_string(i) + "] overflows";
    }
  }
  return "";
}

// This rank's own block of gatherv/scatterv/allgatherv: counts[rank] where
// counts are given, else bytes.
std::string OwnLength(const CollArgs& a, uint64_t* own) {
  if (a.counts.size() != static_cast<size_t>(a.size)) {
    *own = a.bytes;
    return "";
  }
  *own = a.counts[a.rank];
  if (a.bytes != 0 && a.bytes != *own) {
    return "bytes " + Num(a.bytes) + " differs from counts[rank] = " +
           Num(*own) + " (rank " + std::to_string(a.rank) + ")";
  }
  return "";
}

std::string CheckArgs(const CollArgs& a) {
  const int c = static_cast<int>(a.collective);
  if (c < 0 || c >= kNumCollectives) {
    return "unknown collective " + std::to_string(c);
  }
  if (a.size < 1) {
    return "size " + std::to_string(a.size) + " must be >= 1";
  }
  if (a.rank < 0 || a.rank >= a.size) {
    return "rank " + std::to_string(a.rank) + " is not in [0, " +
           std::to_string(a.size) + ")";
  }
  if (IsRooted(a.collective) && (a.root < 0 || a.root >= a.size)) {
    return "root " + std::to_string(a.root) + " is not in [0, " +
           std::to_string(a.size) + ")";
  }
  if (a.elem_size == 0) return "elem_size 0 must be >= 1";
  if (a.bytes % a.elem_size != 0) {
    return "bytes " + Num(a.bytes) + " is not a multiple of elem_size " +
           Num(a.elem_size);
  }
  const uint64_t n = static_cast<uint64_t>(a.size);
  const bool blocks_of_all =
      a.collective == C::kGather || a.collective == C::kScatter ||
      a.collective == C::kAllgather || a.collective == C::kAlltoall ||
      a.collective == C::kReduceScatterBlock;
  if (blocks_of_all && a.bytes > std::numeric_limits<uint64_t>::max() / n) {
    return "bytes " + Num(a.bytes) + " times size " + Num(n) + " overflows";
  }
  const bool at_root = a.rank == a.root;
  uint64_t own = 0;
  std::string err;
  switch (a.collective) {
    case C::kGatherv:
    case C::kScatterv: {
      const char* which = a.collective == C::kGatherv ? "gatherv" : "scatterv";
      if (at_root || !a.counts.empty() || !a.displs.empty()) {
        err = CheckBlocks("counts", a.counts, "displs", a.displs, a.size,
                          a.elem_size);
        if (!err.empty() && !at_root) {
          err += " (non-root ranks of " + std::string(which) +
                 " may leave counts and displs empty)";
        }
      }
      if (err.empty()) err = OwnLength(a, &own);
      break;
    }
    case C::kAllgatherv:
      err = CheckBlocks("counts", a.counts, "displs", a.displs, a.size,
                        a.elem_size);
      if (err.empty()) err = OwnLength(a, &own);
      break;
    case C::kAlltoallv:
      err = CheckBlocks("send_counts", a.send_counts, "send_displs",
                        a.send_displs, a.size, a.elem_size);
      if (err.empty()) {
        err = CheckBlocks("counts", a.counts, "displs", a.displs, a.size,
                          a.elem_size);
      }
      if (err.empty() && a.send_counts[a.rank] != a.counts[a.rank]) {
        err = "send_counts[rank] = " + Num(a.send_counts[a.rank]) +
              " differs from counts[rank] = " + Num(a.counts[a.rank]) +
              " (the block a rank sends itself)";
      }
      break;
    case C::kReduceScatter: {
      err = CheckBlocks("counts", a.counts, nullptr, {}, a.size, a.elem_size);
      uint64_t total = 0;
      for (size_t i = 0; err.empty() && i < a.counts.size(); ++i) {
        if (a.counts[i] > std::numeric_limits<uint64_t>::max() - total) {
          err = "the sum of counts overflows";
        }
        total += a.counts[i];
      }
      break;
    }
    default:
      break;
  }
  return err;
}

Plan MakePlan(const CollArgs& a) {
  Plan p;
  p.size = a.size;
  p.rank = a.rank;
  p.root = a.root;
  p.bytes = a.bytes;
  p.elem_size = a.elem_size;
  p.commutative = a.commutative;
  p.segment = std::max<uint64_t>(a.segment_bytes / a.elem_size, 1) *
              a.elem_size;
  p.radix = a.radix;
  p.counts = a.counts;
  p.displs = a.displs;
  p.send_counts = a.send_counts;
  p.send_displs = a.send_displs;
  const size_t n = static_cast<size_t>(a.size);
  auto uniform = [&](std::vector<uint64_t>* counts,
                     std::vector<uint64_t>* displs) {
    counts->assign(n, a.bytes);
    if (displs == nullptr) return;
    displs->resize(n);
    for (size_t i = 0; i < n; ++i) (*displs)[i] = i * a.bytes;
  };
  p.own = a.bytes;
  switch (a.collective) {
    case C::kGather:
    case C::kScatter:
    case C::kAllgather:
      uniform(&p.counts, &p.displs);
      break;
    case C::kAlltoall:
      uniform(&p.counts, &p.displs);
      uniform(&p.send_counts, &p.send_displs);
      break;
    case C::kReduceScatterBlock:
      uniform(&p.counts, nullptr);
      break;
    case C::kGatherv:
    case C::kScatterv:
    case C::kAllgatherv:
      OwnLength(a, &p.own);
      break;
    default:
      break;
  }
  return p;
}

std::string AlgorithmList(Collective c) {
  std::string s;
  for (Algorithm a : AlgorithmsFor(c)) {
    if (!s.empty()) s += ", ";
    s += AlgorithmName(a);
  }
  return s;
}

bool SameLayout(const CollArgs& a) {
  return a.send_counts == a.counts && a.send_displs == a.displs;
}

// Where buffer 0 may lie relative to buffer 1 under MPI_IN_PLACE (see the
// list in algorithms.h); false where they never alias.
bool AliasDelta(const CollArgs& a, const Plan& p, int64_t* delta) {
  const bool root = a.rank == a.root;
  const int r = a.rank;
  *delta = 0;
  switch (a.collective) {
    case C::kReduce:
      return root;
    case C::kAllreduce:
      return !a.buffers_disjoint;
    case C::kAlltoall:
      return !a.buffers_disjoint;
    case C::kScan:
    case C::kExscan:
    case C::kReduceScatter:
    case C::kReduceScatterBlock:
      return true;
    case C::kAlltoallv:
      return SameLayout(a);
    case C::kGather:
    case C::kGatherv:
      if (!root) return false;
      *delta = static_cast<int64_t>(p.displs[r]);
      return true;
    case C::kScatter:
    case C::kScatterv:
      if (!root) return false;
      *delta = -static_cast<int64_t>(p.displs[r]);
      return true;
    case C::kAllgather:
    case C::kAllgatherv:
      *delta = static_cast<int64_t>(p.displs[r]);
      return true;
    default:
      return false;
  }
}

void Dispatch(Collective c, Algorithm alg, const CollArgs& a, const Plan& p,
              Builder& b) {
  const BufRef in = Ref(kSendBuf, 0, p.bytes);
  const BufRef out = Ref(kRecvBuf, 0, p.bytes);
  switch (c) {
    case C::kBarrier:
      if (alg == A::kDissemination) internal::BarrierDissemination(b);
      if (alg == A::kBinomial) internal::BarrierBinomial(b);
      if (alg == A::kRecursiveDoubling) internal::BarrierRecursiveDoubling(b);
      return;
    case C::kBcast:
      if (alg == A::kBinomial) internal::BcastKnomial(b, p, 2, out);
      if (alg == A::kKnomial) internal::BcastKnomial(b, p, p.radix, out);
      if (alg == A::kLinear) internal::BcastLinear(b, p, out);
      if (alg == A::kChain) internal::BcastChain(b, p, 0, out);
      if (alg == A::kPipelinedChain) {
        internal::BcastChain(b, p, p.segment, out);
      }
      return;
    case C::kReduce:
      if (alg == A::kBinomial) {
        internal::ReduceKnomial(b, p, 2, in, out, p.root, 0);
      }
      if (alg == A::kKnomial) {
        internal::ReduceKnomial(b, p, p.radix, in, out, p.root, 0);
      }
      if (alg == A::kChain) internal::ReduceChain(b, p, 0, in, out);
      if (alg == A::kPipelinedChain) {
        internal::ReduceChain(b, p, p.segment, in, out);
      }
      return;
    case C::kAllreduce:
      if (alg == A::kRecursiveDoubling) {
        internal::AllreduceRecursiveDoubling(b, p);
      }
      if (alg == A::kRing) internal::AllreduceRing(b, p);
      if (alg == A::kReduceBcast) internal::AllreduceReduceBcast(b, p);
      if (alg == A::kRabenseifner) internal::AllreduceRabenseifner(b, p);
      return;
    case C::kGather:
    case C::kGatherv:
      if (alg == A::kBinomial) internal::GatherBinomial(b, p);
      if (alg == A::kLinear) internal::GatherLinear(b, p);
      return;
    case C::kScatter:
    case C::kScatterv:
      if (alg == A::kBinomial) internal::ScatterBinomial(b, p);
      if (alg == A::kLinear) internal::ScatterLinear(b, p);
      return;
    case C::kAllgather:
    case C::kAllgatherv:
      if (alg == A::kRing) internal::AllgathervRing(b, p);
      if (alg == A::kLinear) internal::AllgathervLinear(b, p);
      if (alg == A::kBruck) internal::AllgathervBruck(b, p);
      if (alg == A::kRecursiveDoubling) {
        internal::AllgathervRecursiveDoubling(b, p);
      }
      return;
    case C::kAlltoall:
    case C::kAlltoallv: {
      const bool may_alias =
          c == C::kAlltoall ? !a.buffers_disjoint : SameLayout(a);
      if (alg == A::kPairwise) internal::AlltoallvPairwise(b, p, may_alias);
      if (alg == A::kLinear) internal::AlltoallvLinear(b, p, may_alias);
      if (alg == A::kBruck) internal::AlltoallBruck(b, p);
      return;
    }
    case C::kReduceScatter:
    case C::kReduceScatterBlock:
      if (alg == A::kRing) internal::ReduceScatterRing(b, p);
      if (alg == A::kReduceBcast) internal::ReduceScatterReduceBcast(b, p);
      return;
    case C::kScan:
    case C::kExscan: {
      const bool exclusive = c == C::kExscan;
      if (alg == A::kRecursiveDoubling) {
        internal::ScanRecursiveDoubling(b, p, exclusive);
      }
      if (alg == A::kChain) internal::ScanChain(b, p, 0, exclusive);
      if (alg == A::kPipelinedChain) {
        internal::ScanChain(b, p, p.segment, exclusive);
      }
      return;
    }
  }
}

}  // namespace

std::string_view CollectiveName(Collective c) {
  const size_t i = static_cast<size_t>(c);
  return i < kCollectiveNames.size() ? kCollectiveNames[i] : "?";
}

std::string_view AlgorithmName(Algorithm a) {
  const size_t i = static_cast<size_t>(a);
  return i < kAlgorithmNames.size() ? kAlgorithmNames[i] : "?";
}

std::optional<Collective> ParseCollective(std::string_view name) {
  for (size_t i = 0; i < kCollectiveNames.size(); ++i) {
    if (kCollectiveNames[i] == name) return static_cast<Collective>(i);
  }
  return std::nullopt;
}

std::optional<Algorithm> ParseAlgorithm(std::string_view name) {
  for (size_t i = 0; i < kAlgorithmNames.size(); ++i) {
    if (kAlgorithmNames[i] == name) return static_cast<Algorithm>(i);
  }
  return std::nullopt;
}

std::vector<Algorithm> AlgorithmsFor(Collective c) {
  switch (c) {
    case C::kBarrier:
      return {A::kDissemination, A::kBinomial, A::kRecursiveDoubling};
    case C::kBcast:
      return {A::kBinomial, A::kKnomial, A::kChain, A::kPipelinedChain,
              A::kLinear};
    case C::kReduce:
      return {A::kBinomial, A::kKnomial, A::kChain, A::kPipelinedChain};
    case C::kAllreduce:
      return {A::kRecursiveDoubling, A::kRing, A::kReduceBcast,
              A::kRabenseifner};
    case C::kGather:
    case C::kScatter:
      return {A::kBinomial, A::kLinear};
    case C::kGatherv:
    case C::kScatterv:
      return {A::kLinear};
    case C::kAllgather:
    case C::kAllgatherv:
      return {A::kRecursiveDoubling, A::kBruck, A::kRing, A::kLinear};
    case C::kAlltoall:
      return {A::kPairwise, A::kBruck, A::kLinear};
    case C::kAlltoallv:
      return {A::kPairwise, A::kLinear};
    case C::kReduceScatter:
    case C::kReduceScatterBlock:
      return {A::kRing, A::kReduceBcast};
    case C::kScan:
    case C::kExscan:
      return {A::kRecursiveDoubling, A::kChain, A::kPipelinedChain};
  }
  return {};
}

BufferBytes BufferBytesFor(const CollArgs& a) {
  const uint64_t n = a.size > 0 ? static_cast<uint64_t>(a.size) : 0;
  const uint64_t B = a.bytes;
  const bool root = a.rank == a.root;
  auto extent = [](const std::vector<uint64_t>& c,
                   const std::vector<uint64_t>& d) {
    uint64_t e = 0;
    for (size_t i = 0; i < c.size() && i < d.size(); ++i) {
      if (c[i] > 0) e = std::max(e, d[i] + c[i]);
    }
    return e;
  };
  auto own = [&] {
    uint64_t o = 0;
    OwnLength(a, &o);
    return o;
  };
  switch (a.collective) {
    case C::kBarrier:
      return {0, 0};
    case C::kBcast:
      return {0, B};
    case C::kReduce:
      return {B, root ? B : 0};
    case C::kAllreduce:
    case C::kScan:
    case C::kExscan:
      return {B, B};
    case C::kGather:
      return {B, root ? n * B : 0};
    case C::kGatherv:
      return {own(), root ? extent(a.counts, a.displs) : 0};
    case C::kScatter:
      return {root ? n * B : 0, B};
    case C::kScatterv:
      return {root ? extent(a.counts, a.displs) : 0, own()};
    case C::kAllgather:
      return {B, n * B};
    case C::kAllgatherv:
      return {own(), extent(a.counts, a.displs)};
    case C::kAlltoall:
      return {n * B, n * B};
    case C::kAlltoallv:
      return {extent(a.send_counts, a.send_displs),
              extent(a.counts, a.displs)};
    case C::kReduceScatter: {
      uint64_t total = 0;
      for (uint64_t c : a.counts) total += c;
      const bool ok = a.rank >= 0 && static_cast<size_t>(a.rank) <
                                         a.counts.size();
      return {total, ok ? a.counts[a.rank] : 0};
    }
    case C::kReduceScatterBlock:
      return {n * B, B};
  }
  return {0, 0};
}

Algorithm Choose(const CollArgs& a) {
  // The decision table of docs/mpi.md ("Which algorithm runs"); keep both
  // in step. Thresholds marked MPICH are MPICH 4's defaults
  // (MPIR_CVAR_BCAST_SHORT_MSG_SIZE, _BCAST_MIN_PROCS,
  // _ALLREDUCE_SHORT_MSG_SIZE); the others were measured with
  // bench/p2p/mpi_suite and bench/coll (docs/coll_benchmarks.md).
  const int n = a.size;
  const uint64_t B = a.bytes;
  const uint64_t seg = std::max<uint64_t>(a.segment_bytes, 1);
  const bool many = n >= 4;
  const bool pof2 = (n & (n - 1)) == 0;
  // Long enough for a pipeline of several segments to beat a tree.
  const bool long_message = B >= std::max<uint64_t>(128 * 1024, 4 * seg);
  auto total_of = [&](const std::vector<uint64_t>& v) {
    uint64_t t = 0;
    for (uint64_t x : v) t += x;
    return t;
  };
  switch (a.collective) {
    case C::kBarrier:
      return A::kDissemination;
    case C::kBcast:
      // One node, few ranks: every receiver copies from the root at once
      // (single-copy rendezvous), in one hop.
      if (a.single_node && n <= 8) return n <= 2 ? A::kBinomial : A::kLinear;
      // MPICH: binomial for short messages or fewer than 8 ranks.
      if (B < 12 * 1024 || n < 8) return A::kBinomial;
      return long_message ? A::kPipelinedChain : A::kBinomial;
    case C::kReduce:
      return many && long_message ? A::kPipelinedChain : A::kBinomial;
    case C::kAllreduce: {
      const uint64_t elems = a.elem_size > 0 ? B / a.elem_size : 0;
      int p2 = 1;
      while (p2 <= n / 2) p2 *= 2;
      // Short vectors: log2(n) rounds of whole-vector exchanges. MPICH
      // switches at 2 KiB; with few ranks recursive doubling moves little
      // more than Rabenseifner in half the rounds (measured even at 16-64
      // KiB on 2 ranks, behind at 256 KiB).
      const uint64_t short_bytes = n < 8 ? 64 * 1024 : 2 * 1024;
      if (n <= 1 || B < short_bytes || elems < static_cast<uint64_t>(p2))
        return A::kRecursiveDoubling;
      // Two ranks, long vectors: one rendezvous each way instead of
      // Rabenseifner's two in sequence, which cost more than the halved
      // copy and reduction saves from 512 KiB on (measured: 1 MiB, 235 us
      // against 259 us, bench/p2p/mpi_suite).
      if (n == 2 && B >= 512 * 1024) return A::kRecursiveDoubling;
      // Ranks sharing cores: the same copies and reductions as
      // Rabenseifner, in 2 (n - 1) messages instead of 4 log2(n) per rank.
      if (a.oversubscribed && n > 2) return A::kReduceBcast;
      // A ring needs no folding of extra ranks: for non-powers of two it
      // moves 2 (n - 1) / n of the vector per rank where Rabenseifner's
      // folded pairs move two whole vectors more.
      if (!pof2 && a.commutative && elems >= static_cast<uint64_t>(n))
        return A::kRing;
      return A::kRabenseifner;
    }
    case C::kGather:
      // One node, few ranks: the root pulls every block once, straight from
      // its owner (single-copy rendezvous), where the tree copies each block
      // once per level (measured at 4 ranks on 2 cores, two interleaved
      // runs: 1 MiB 0.55 / 0.69 ms against 2.22 / 1.26 binomial, 4 MiB 5.0
      // / 10.1 ms against 14.1 / 16.8; docs/mpi.md).
      return a.single_node && n <= 4 ? A::kLinear : A::kBinomial;
    case C::kScatter:
      return A::kBinomial;
    case C::kGatherv:
    case C::kScatterv:
      return A::kLinear;
    case C::kAllgather: {
      const uint64_t total = B * static_cast<uint64_t>(std::max(n, 1));
      if (total >= 80 * 1024) return A::kRing;
      return (n & (n - 1)) == 0 ? A::kRecursiveDoubling : A::kBruck;
    }
    case C::kAllgatherv:
      return total_of(a.counts) >= 80 * 1024 ? A::kRing : A::kBruck;
    case C::kAlltoall:
      return B <= 256 && n >= 8 ? A::kBruck : A::kPairwise;
    case C::kAlltoallv:
      return A::kPairwise;
    case C::kReduceScatter:
    case C::kReduceScatterBlock:
      return a.commutative && n > 1 ? A::kRing : A::kReduceBcast;
    case C::kScan:
    case C::kExscan:
      return many && B >= std::max<uint64_t>(512 * 1024, 4 * seg)
                 ? A::kPipelinedChain
                 : A::kRecursiveDoubling;
  }
  return A::kLinear;
}

std::string Build(Algorithm algorithm, const CollArgs& args, Schedule* out) {
  if (out == nullptr) return "out is null";
  std::string err = CheckArgs(args);
  if (!err.empty()) return std::string(CollectiveName(args.collective)) + ": " + err;
  const Collective c = args.collective;
  const std::string what = std::string(CollectiveName(c));
  if (algorithm == A::kAuto) algorithm = Choose(args);
  const std::vector<Algorithm> algs = AlgorithmsFor(c);
  if (std::find(algs.begin(), algs.end(), algorithm) == algs.end()) {
    return what + ": algorithm '" + std::string(AlgorithmName(algorithm)) +
           "' (" + std::to_string(static_cast<int>(algorithm)) +
           ") does not implement it; available: " + AlgorithmList(c);
  }
  if (NeedsCommutative(c, algorithm) && !args.commutative) {
    return what + ": algorithm '" + std::string(AlgorithmName(algorithm)) +
           "' reorders the operands and needs a commutative operator; "
           "use reduce_bcast (or auto) for a non-commutative one";
  }
  if (algorithm == A::kKnomial && args.radix < 2) {
    return what + ": radix " + std::to_string(args.radix) +
           " must be >= 2 for knomial";
  }
  const Plan plan = MakePlan(args);
  Schedule schedule;
  Builder builder(&schedule, args.rank, args.size);
  int64_t delta = 0;
  if (AliasDelta(args, plan, &delta)) builder.AssumeAlias(delta);
  Dispatch(c, algorithm, args, plan, builder);
  *out = std::move(schedule);
  return "";
}

}  // namespace rondo::nmad::coll
