// Schedule: a collective operation as data. A schedule is a small
// dependency graph of steps (send, receive, local reduction, copy) over
// abstract buffers; nmad/coll/algorithms.h builds one per (collective,
// algorithm, communicator size, rank, sizes), and nmad/coll/executor.h runs
// it with engine tasks, each step as soon as the steps it depends on are
// complete. The same description serves the blocking and nonblocking forms
// (and the split-tree forms of issue 5): only how the caller waits differs.
//
// Buffers are named by index, never by pointer, so a schedule does not
// depend on where the data lives:
//   kSendBuf (0)  the caller's input (read only). It may alias kRecvBuf
//                 (MPI_IN_PLACE): a builder reads a byte range of buffer 0
//                 only in steps ordered before any step that writes the
//                 same range of buffer 1, or first copies 0 -> 1 (a copy
//                 onto the same address is skipped by the executor).
//   kRecvBuf (1)  the caller's output; written only on ranks whose output
//                 is defined (e.g. only the root of a reduce).
//   2, 3, ...     temporaries of Schedule::tmp_bytes[i - 2] bytes,
//                 allocated (uninitialised) by the executor.
//
// Messages: a send/recv step names a peer by its rank in the communicator
// and a step tag (0 .. kMaxStepTag). Between one pair of ranks, messages
// with the same step tag match in the order the sends were posted and the
// receives were posted; since the executor may start independent steps in
// any order, two receives (or two sends) between the same pair with the
// same step tag must be ordered by dependencies, else use distinct tags.
// A receive step expects exactly len bytes (a shorter message is an error).
//
// Reductions: a kReduce step computes dst = src (op) dst elementwise over
// len / elem_size elements, where the user's operator is applied with src as
// the left operand (MPI's invec) and dst as the right operand (inoutvec).
// For non-commutative operators the builder keeps the rank order: the final
// result is x_0 op x_1 op ... op x_{n-1}.
#ifndef RONDO_NMAD_COLL_SCHEDULE_H_
#define RONDO_NMAD_COLL_SCHEDULE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rondo::nmad::coll {

inline constexpr uint16_t kSendBuf = 0;
inline constexpr uint16_t kRecvBuf = 1;
inline constexpr uint16_t kFirstTmpBuf = 2;
inline constexpr uint32_t kMaxStepTag = 4095;

enum class StepKind : uint8_t {
  kSend,    // send src (len bytes) to peer
  kRecv,    // receive len bytes from peer into dst
  kReduce,  // dst = src op dst (src.len == dst.len, a multiple of elem_size)
  kCopy,    // dst = src (memmove; skipped when both are the same address)
};

// "send", "recv", "reduce", "copy".
const char* StepKindName(StepKind kind);

struct BufRef {
  uint16_t buf = kSendBuf;
  uint64_t offset = 0;  // bytes
  uint64_t len = 0;     // bytes
};

// Where a step sits in a tree collective (split-tree, nmad/coll/split.h):
// kUp steps carry data towards the root (reduce, gather, the reduce half of
// allreduce), kDown steps away from it (bcast, scatter, the bcast half).
// Steps of other algorithms are kNone.
enum class TreeFlow : uint8_t { kNone, kUp, kDown };

struct Step {
  StepKind kind = StepKind::kCopy;
  // Tree level from the leaves, 1 .. H(N), for binomial-tree steps: a
  // message between ranks 2^(l-1) apart in the tree (relative ranks) is at
  // level l; the reduce or copy that consumes or prepares it shares its
  // level. 0 outside tree collectives. See nmad/coll/split.h.
  uint8_t level = 0;
  TreeFlow flow = TreeFlow::kNone;
  int peer = -1;      // send/recv: rank in the communicator
  uint32_t tag = 0;   // send/recv: step tag, <= kMaxStepTag
  BufRef src;         // send, reduce, copy
  BufRef dst;         // recv, reduce, copy
  std::vector<uint32_t> deps;  // indices of earlier steps that must complete
};

struct Schedule {
  std::vector<Step> steps;
  std::vector<uint64_t> tmp_bytes;  // sizes of buffers 2, 3, ...

  // Adds a step and returns its index.
  uint32_t Add(Step step) {
    steps.push_back(std::move(step));
    return static_cast<uint32_t>(steps.size() - 1);
  }
  // Adds a temporary buffer of `bytes` and returns its buffer index.
  uint16_t AddTmp(uint64_t bytes) {
    tmp_bytes.push_back(bytes);
    return static_cast<uint16_t>(kFirstTmpBuf + tmp_bytes.size() - 1);
  }
  // "" if the schedule is well formed for a communicator of `size` ranks
  // with buffers of these sizes (bytes of buffers 0 and 1; the
  // temporaries' sizes are known), else what is wrong: a step out of its
  // buffer, a dependency on a later step (or itself), a peer out of range, a
  // tag over kMaxStepTag, a reduce or copy whose src and dst lengths differ,
  // a reduce whose length is not a multiple of elem_size, a step writing
  // buffer 0. Linear in the number of steps and dependencies.
  std::string Validate(int size, uint64_t send_bytes, uint64_t recv_bytes,
                       uint64_t elem_size) const;
};

}  // namespace rondo::nmad::coll

#endif  // RONDO_NMAD_COLL_SCHEDULE_H_
