// Collective algorithms as schedule builders (see schedule.h). Pure
// functions of the arguments: no communication, no engine, no allocation
// beyond the returned schedule; every rank of a communicator builds its own
// schedule from the same arguments (except `rank`), and the schedules of all
// ranks together perform the collective.
//
// Sizes are bytes: the MPI layer turns (count, datatype) into bytes, packing
// derived datatypes when needed; reductions see elements of elem_size bytes.
//
// Every function here is thread-safe (no shared state) and may be called
// from any thread. Bad arguments come back as a message, never as an
// exception.
#ifndef RONDO_NMAD_COLL_ALGORITHMS_H_
#define RONDO_NMAD_COLL_ALGORITHMS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nmad/coll/schedule.h"

namespace rondo::nmad::coll {

enum class Collective : uint8_t {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,  // also alltoallw, once the MPI layer packed per peer
  kReduceScatter,       // per-rank result blocks (CollArgs::counts)
  kReduceScatterBlock,  // equal blocks
  kScan,
  kExscan,
};
inline constexpr int kNumCollectives = 16;

// Which collectives each algorithm builds (AlgorithmsFor is the truth):
enum class Algorithm : uint8_t {
  kAuto,               // Choose() decides
  kLinear,             // one message per pair, all posted at once: bcast,
                       // gather(v), scatter(v), allgather(v), alltoall(v)
  kBinomial,           // binomial tree: barrier, bcast, reduce, gather,
                       // scatter
  kKnomial,            // k-nomial tree (radix CollArgs::radix): bcast, reduce
  kChain,              // a chain, whole message: bcast, reduce, scan, exscan
  kPipelinedChain,     // a chain in segments of CollArgs::segment_bytes:
                       // bcast, reduce, scan, exscan
  kRecursiveDoubling,  // barrier, allreduce, allgather(v), scan, exscan
                       // (any size: extra ranks fold into partners)
  kRing,               // allreduce (reduce-scatter + allgather),
                       // allgather(v), reduce_scatter(_block); commutative
                       // operators only
  kDissemination,      // barrier
  kPairwise,           // alltoall(v): size-1 rounds of exchanges
  kBruck,              // alltoall, allgather(v): log2(size) rounds
  kReduceBcast,        // allreduce, reduce_scatter(_block): reduce to 0
                       // (in rank order) then bcast / scatter
  kRabenseifner,       // allreduce: reduce-scatter by recursive halving,
                       // allgather by recursive doubling (any size: extra
                       // ranks fold into partners; keeps the rank order)
};

// Lower-case names, as in RONDO_COLL_<COLLECTIVE>=<algorithm>:
// "barrier", "bcast", ..., "reduce_scatter_block", "exscan" and "auto",
// "linear", "binomial", "knomial", "chain", "pipelined_chain",
// "recursive_doubling", "ring", "dissemination", "pairwise", "bruck",
// "reduce_bcast", "rabenseifner".
std::string_view CollectiveName(Collective c);
std::string_view AlgorithmName(Algorithm a);
std::optional<Collective> ParseCollective(std::string_view name);
std::optional<Algorithm> ParseAlgorithm(std::string_view name);
// The algorithms Build accepts for `c` (kAuto not included).
std::vector<Algorithm> AlgorithmsFor(Collective c);

struct CollArgs {
  Collective collective = Collective::kBarrier;
  int rank = 0;  // this rank in the communicator
  int size = 1;  // communicator size (>= 1)
  int root = 0;  // bcast, reduce, gather(v), scatter(v)
  // Uniform collectives: bytes of one rank's block.
  //   bcast: the message; reduce, allreduce, scan, exscan: the vector;
  //   gather, scatter, allgather: one rank's block; alltoall: the block
  //   for one peer; reduce_scatter_block: one rank's result block.
  uint64_t bytes = 0;
  // v-forms (bytes and byte offsets, indexed by comm rank):
  //   gatherv/allgatherv: counts[i], displs[i] = rank i's block in buf 1
  //                        (at the root, or everywhere for allgatherv);
  //                        this rank sends `bytes` (== counts[rank]) from
  //                        buf 0.
  //   scatterv: counts/displs of rank i's block in the root's buf 0; this
  //             rank receives counts[rank] bytes into buf 1.
  //   Gatherv and scatterv need counts/displs at the root only (as in MPI):
  //   elsewhere they may be empty, and this rank's own length is then
  //   `bytes`. Where counts are given and `bytes` is not 0, they must agree.
  //   alltoallv: send_counts/send_displs (buf 0, per destination) and
  //              counts/displs (buf 1, per source).
  //   reduce_scatter: counts[i] = bytes of rank i's result block; the
  //                   input vector (buf 0) is the concatenation of all
  //                   blocks in rank order; this rank's block goes to
  //                   buf 1 at offset 0.
  std::vector<uint64_t> counts, displs, send_counts, send_displs;
  // Reductions.
  uint64_t elem_size = 1;  // bytes per element; sizes are multiples of it
  bool commutative = true;
  // Where the communicator runs, for Choose() only (Build ignores them).
  // Every rank of the communicator must pass the same values, as for the
  // other arguments: the MPI layer derives them from job-wide facts.
  //   single_node: every rank of the job shares one node's memory, so a
  //     large message is copied once, by its receiver (single-copy
  //     rendezvous), and many receivers of one root copy in parallel.
  //   oversubscribed: single_node, and the node has more ranks than cores:
  //     ranks take turns on the cores, so each message that has to wait
  //     for another rank to be scheduled costs a context switch, and the
  //     algorithm with the fewest messages in sequence wins over the one
  //     with the shortest critical path.
  bool single_node = false;
  bool oversubscribed = false;
  // The caller promises that buffers 0 and 1 do not overlap (no
  // MPI_IN_PLACE). Allreduce then drops the aliasing guarantee below and
  // its recursive doubling receives straight into the output and reduces
  // the input into it (no copy of the input); alltoall's pairwise and linear
  // receive every block straight into place (no temporary, no copy after
  // the receive). Only allreduce and alltoall read it; the MPI layer's
  // schedule cache must tell the two forms apart.
  bool buffers_disjoint = false;
  // Tuning.
  uint64_t segment_bytes = 64 * 1024;  // pipelined chain (rounded down to a
                                       // multiple of elem_size, >= 1 elem)
  int radix = 4;                       // k-nomial, >= 2
};

// Buffer layouts (buf 0 = input, buf 1 = output; see schedule.h):
//   barrier: none.
//   bcast: buf 1 only (input at the root, output elsewhere).
//   reduce: buf 0 (bytes) everywhere; buf 1 (bytes) at the root only.
//   allreduce, scan, exscan: buf 0 and buf 1 of `bytes` (exscan's buf 1 at
//     rank 0 is left untouched).
//   gather: buf 0 (bytes); at the root buf 1 (size * bytes, rank order).
//   scatter: at the root buf 0 (size * bytes); buf 1 (bytes) everywhere.
//   allgather: buf 0 (bytes); buf 1 (size * bytes).
//   alltoall: buf 0 and buf 1 of size * bytes (block i for/from rank i).
//   reduce_scatter_block: buf 0 of size * bytes, buf 1 of bytes.
//   (v-forms: the same with counts/displs; reduce_scatter: buf 0 of the sum
//   of counts, buf 1 of counts[rank]; BufferBytesFor() computes them.)
//
// With MPI_IN_PLACE the MPI layer makes buf 0 alias the right part of
// buf 1 (e.g. the root's own block for gather, all of buf 1 for allreduce).
// Every algorithm is correct when the buffers alias exactly as listed here
// (at the ranks listed; builders never know whether they do) and when they
// do not overlap at all; any other overlap is undefined:
//   reduce (root), allreduce, scan, exscan: buf 0 == buf 1 (`bytes`).
//   gather (root):  buf 0 == buf 1 + root * bytes (the root's block).
//   gatherv (root): buf 0 == buf 1 + displs[root].
//   scatter (root): buf 1 == buf 0 + root * bytes (the root's block).
//   scatterv (root): buf 1 == buf 0 + displs[root].
//   allgather: buf 0 == buf 1 + rank * bytes.
//   allgatherv: buf 0 == buf 1 + displs[rank].
//   alltoall: buf 0 == buf 1 (all size * bytes).
//   alltoallv: buf 0 == buf 1, only when send_counts == counts and
//     send_displs == displs (MPI_IN_PLACE passes the receive layout twice);
//     with different layouts the buffers must not overlap.
//   reduce_scatter_block, reduce_scatter: buf 1 == buf 0 (buf 1 is the first
//     bytes / counts[rank] bytes of the input vector, as MPI leaves the
//     in-place result at the start of recvbuf).
// The price of this guarantee is small: the input is copied or read before
// the output range it shares is written, and alltoall(v) pairwise/linear
// receive into a temporary the blocks whose input may not have been sent
// yet (about half the data for pairwise, all of it for linear with aliasing
// layouts), whether or not the buffers actually alias.

// Builds this rank's schedule. Returns "" and fills *out, or returns what is
// wrong with the arguments (an algorithm that does not implement the
// collective, a bad root or rank, sizes that are not multiples of
// elem_size, a non-commutative reduction for an algorithm that cannot keep
// the order, mismatched count vectors). kAuto means Choose(args).
std::string Build(Algorithm algorithm, const CollArgs& args, Schedule* out);

// The default algorithm for these arguments, by size, process count and
// where the ranks run (the decision table is in docs/mpi.md). Never an
// algorithm Build refuses for valid arguments (e.g. no ring for a
// non-commutative reduction).
Algorithm Choose(const CollArgs& args);

// Bytes of buffers 0 and 1 that this rank's schedule may touch (the layouts
// above; for v-forms the end of the furthest block). Zero for a buffer the
// rank does not use. Meaningful for arguments Build accepts.
struct BufferBytes {
  uint64_t send = 0;
  uint64_t recv = 0;
};
BufferBytes BufferBytesFor(const CollArgs& args);

}  // namespace rondo::nmad::coll

#endif  // RONDO_NMAD_COLL_ALGORITHMS_H_
