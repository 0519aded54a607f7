// Neighbourhood exchanges (MPI-3 neighbourhood collectives) as schedules:
// one round in which a rank receives one block from each of its in-edges
// into buffer 1 and sends one block to each of its out-edges from buffer 0.
// The MPI layer turns a communicator's topology (cartesian or distributed
// graph) into edges; this builder knows nothing of topologies.
//
// Matching: every edge carries a step tag. A block sent on an out-edge with
// tag t to rank q is received by q's in-edge from this rank with tag t. When
// several edges join the same pair of ranks with the same tag, the k-th send
// matches the k-th receive (the builder chains them, so their order holds).
// The MPI layer gives each cartesian edge the direction it travels as its
// tag, so that a periodic dimension of 1 or 2 ranks (the same neighbour on
// both sides) still delivers each block into the right slot.
//
// Edges to this rank itself become local copies, paired the same way (by
// tag, then order): a self send without its self receive, or of another
// length, is an error.
//
// Pure function, thread-safe, no communication.
#ifndef RONDO_NMAD_COLL_NEIGHBOR_H_
#define RONDO_NMAD_COLL_NEIGHBOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nmad/coll/schedule.h"

namespace rondo::nmad::coll {

struct NeighborEdge {
  int peer = 0;         // rank in the communicator; < 0: no peer (skipped,
                        // MPI_PROC_NULL at a non-periodic border)
  uint32_t tag = 0;     // <= kMaxStepTag
  uint64_t offset = 0;  // bytes into buffer 0 (sends) or 1 (receives)
  uint64_t len = 0;     // bytes
};

// Builds this rank's schedule. Returns "" and fills *out, or what is wrong
// (a peer out of range, a tag over kMaxStepTag, unpaired or mismatched
// self edges, receive blocks that overlap each other).
std::string BuildNeighborExchange(int rank, int size,
                                  const std::vector<NeighborEdge>& sends,
                                  const std::vector<NeighborEdge>& recvs,
                                  Schedule* out);

}  // namespace rondo::nmad::coll

#endif  // RONDO_NMAD_COLL_NEIGHBOR_H_
