// The schedule builders behind coll::Build, one function per (collective,
// algorithm) family. Build (algorithms.cc) checks the arguments, normalises
// them into a Plan and sets the Builder's aliasing; these functions only
// append steps. Tree and chain shapes are in trees.cc, exchanges (all-to-all
// patterns, rings, recursive doubling, scans) in exchanges.cc.
#ifndef RONDO_NMAD_COLL_INTERNAL_BUILDERS_H_
#define RONDO_NMAD_COLL_INTERNAL_BUILDERS_H_

#include <cstdint>
#include <vector>

#include "nmad/coll/internal/builder.h"
#include "nmad/coll/schedule.h"

namespace rondo::nmad::coll::internal {

// Checked and normalised arguments.
struct Plan {
  int size = 1;
  int rank = 0;
  int root = 0;
  uint64_t bytes = 0;      // uniform block or vector (see algorithms.h)
  uint64_t elem_size = 1;
  bool commutative = true;
  uint64_t segment = 1;    // pipelined chain: a multiple of elem_size, > 0
  int radix = 2;           // k-nomial, >= 2
  // v-forms, uniform forms expressed as v-forms where the code is shared
  // (allgather, alltoall, reduce_scatter_block): size entries each.
  std::vector<uint64_t> counts, displs, send_counts, send_displs;
  uint64_t own = 0;        // this rank's block (gatherv, scatterv,
                           // allgatherv)
};

// A k-nomial tree over ranks 0..n-1 rooted at 0 (radix 2: binomial).
struct TreeNode {
  int64_t parent = -1;  // -1 at the root
  int64_t span = 1;     // nodes in this subtree: [v, v + span)
  struct Child {
    int64_t node, span;
  };
  std::vector<Child> children;  // largest subtrees first (bcast order)
};
TreeNode KnomialNode(int64_t v, int64_t n, int64_t radix);

// ---- trees.cc ----
void BarrierDissemination(Builder& b);
void BarrierBinomial(Builder& b);
void BarrierRecursiveDoubling(Builder& b);

// Broadcasts `data` (buffer 1) from p.root.
void BcastKnomial(Builder& b, const Plan& p, int radix, const BufRef& data);
void BcastLinear(Builder& b, const Plan& p, const BufRef& data);
void BcastChain(Builder& b, const Plan& p, uint64_t segment,
                const BufRef& data);

// Reduces `in` (every rank) into `out` at `root` (out unused elsewhere),
// tags `tag` and `tag + 1`. Keeps the rank order for non-commutative ops.
void ReduceKnomial(Builder& b, const Plan& p, int radix, const BufRef& in,
                   const BufRef& out, int root, uint32_t tag);
void ReduceChain(Builder& b, const Plan& p, uint64_t segment,
                 const BufRef& in, const BufRef& out);

void GatherBinomial(Builder& b, const Plan& p);
void GatherLinear(Builder& b, const Plan& p);   // gather and gatherv
void ScatterBinomial(Builder& b, const Plan& p);
void ScatterLinear(Builder& b, const Plan& p);  // scatter and scatterv
// Binomial scatter from rank 0 of blocks of p.counts, packed in rank order
// in `src` (rank 0 only), into `out` (p.counts[rank] bytes); tag `tag`.
void ScatterBlocksFromZero(Builder& b, const Plan& p, const BufRef& src,
                           const BufRef& out, uint32_t tag);

void ScanChain(Builder& b, const Plan& p, uint64_t segment, bool exclusive);

// ---- exchanges.cc ----
void AllreduceRecursiveDoubling(Builder& b, const Plan& p);
void AllreduceRing(Builder& b, const Plan& p);
// Reduce-scatter by recursive halving, then allgather by recursive doubling
// (Rabenseifner; MPICH's long-message allreduce); keeps the rank order.
void AllreduceRabenseifner(Builder& b, const Plan& p);
void AllreduceReduceBcast(Builder& b, const Plan& p);

// Allgather(v) over p.counts / p.displs (buffer 1); own block p.own.
void AllgathervRing(Builder& b, const Plan& p);
void AllgathervLinear(Builder& b, const Plan& p);
void AllgathervBruck(Builder& b, const Plan& p);
void AllgathervRecursiveDoubling(Builder& b, const Plan& p);

// Alltoall(v) over p.send_counts/send_displs and p.counts/displs.
void AlltoallvPairwise(Builder& b, const Plan& p, bool may_alias);
void AlltoallvLinear(Builder& b, const Plan& p, bool may_alias);
void AlltoallBruck(Builder& b, const Plan& p);

// Reduce-scatter(block) over p.counts (result blocks, rank order).
void ReduceScatterRing(Builder& b, const Plan& p);
void ReduceScatterReduceBcast(Builder& b, const Plan& p);

void ScanRecursiveDoubling(Builder& b, const Plan& p, bool exclusive);

}  // namespace rondo::nmad::coll::internal

#endif  // RONDO_NMAD_COLL_INTERNAL_BUILDERS_H_
