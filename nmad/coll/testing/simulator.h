// Simulator: runs the schedules of all ranks of a communicator in one
// process, on real bytes, to prove collective algorithms correct without a
// network. Test-only.
//
// What it checks, in order:
//  1. Each schedule passes Schedule::Validate for its rank's buffers.
//  2. Statically, per rank: two sends (or two receives) with the same peer
//     and tag are ordered by dependencies (else matching is ambiguous), and
//     any two steps touching the same bytes of memory, one of them writing,
//     are ordered by dependencies (no data race, including through the
//     aliasing of buffers 0 and 1). A reduce whose operands overlap is an
//     error. A copy onto its own address is a no-op, as in the executor.
//  3. It runs the schedules: among the steps whose dependencies are
//     complete and the messages that can be matched, it picks the next one
//     at random (seeded), so reruns with other seeds explore other orders.
//     Messages match by (source, destination, tag) in posting order. By
//     default a send completes only when its receive is matched (the
//     strictest, rendezvous-like model, so a schedule that needs buffering
//     deadlocks here); SimOptions::eager completes sends when posted. A
//     receive matched with a message of another length is an error.
//     Steps left with none runnable is a deadlock, reported with the stuck
//     steps.
// The caller then compares the buffers with a reference.
#ifndef RONDO_NMAD_COLL_TESTING_SIMULATOR_H_
#define RONDO_NMAD_COLL_TESTING_SIMULATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nmad/coll/schedule.h"

namespace rondo::nmad::coll::testing {

// inout[i] = in[i] op inout[i] for `count` elements (MPI's invec and
// inoutvec; `in` is the left operand).
using ReduceCallback =
    std::function<void(const void* in, void* inout, size_t count)>;

// One rank's caller buffers.
struct SimRank {
  std::vector<uint8_t> send;  // buffer 0
  std::vector<uint8_t> recv;  // buffer 1
  // MPI_IN_PLACE: one buffer is a window of the other, on the same memory.
  enum class Alias {
    kNone,
    kSendInRecv,  // buffer 0 = recv[alias_offset, +alias_len); `send` unused
    kRecvInSend,  // buffer 1 = send[alias_offset, +alias_len); `recv` unused
  };
  Alias alias = Alias::kNone;
  uint64_t alias_offset = 0;
  uint64_t alias_len = 0;
};

struct SimOptions {
  uint64_t seed = 1;
  bool eager = false;  // sends complete when posted (buffered)
  // Static race checks use dependency bitsets up to this many steps per
  // rank, and a depth-first search beyond.
  size_t bitset_steps = 4096;
};

struct SimStats {
  uint64_t steps = 0;     // executed, all ranks
  uint64_t messages = 0;  // matched
  uint64_t bytes = 0;     // moved by messages
};

// Runs schedules[i] as rank i over ranks[i] (same sizes). Returns "" on
// success, else what went wrong (prefixed with the rank). Temporaries start
// filled with random bytes, so reading one before writing it shows up in the
// results. `reduce` may be empty if no schedule reduces.
std::string Simulate(const std::vector<Schedule>& schedules,
                     std::vector<SimRank>& ranks, const ReduceCallback& reduce,
                     uint64_t elem_size, const SimOptions& options,
                     SimStats* stats = nullptr);
inline std::string Simulate(const std::vector<Schedule>& schedules,
                            std::vector<SimRank>& ranks,
                            const ReduceCallback& reduce, uint64_t elem_size,
                            uint64_t seed) {
  SimOptions o;
  o.seed = seed;
  return Simulate(schedules, ranks, reduce, elem_size, o);
}

// A one-line description of a step, for messages.
std::string DescribeStep(const Schedule& s, uint32_t index);

}  // namespace rondo::nmad::coll::testing

#endif  // RONDO_NMAD_COLL_TESTING_SIMULATOR_H_
