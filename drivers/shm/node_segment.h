// SetupNodeSegment: the one segment of a node's ranks, through the job's
// bootstrap (collective over the whole job: every rank calls it once, in
// the same order as its other collective bootstrap calls).
//
// Every rank publishes its node key ("shm.node": what identifies its host,
// nmad's NodeKey(): the host name, plus the network namespace for the
// emulated hosts of bench/cluster); one Fence; the ranks of one key form a
// node, in rank order (their local indices). The node's lowest rank
// creates /dev/shm/rondo-shm-<random 64 bits>-<rank> with O_EXCL (a new name
// on a clash: two jobs never share a segment) and publishes its name
// ("shm.seg"; "!" and the reason when it failed); a second Fence; the
// others open it; a Barrier; the creator unlinks it, so the name is gone
// before any message flows and nothing is left even after kill -9.
//
// A rank alone on its node gets no segment. A rank whose segment could not
// be made or opened gets none either, with the reason: its peers then
// reach it through the other driver (LocalityDriver decides per peer from
// both addresses, so the choice is symmetric).
#ifndef RONDO_DRIVERS_SHM_NODE_SEGMENT_H_
#define RONDO_DRIVERS_SHM_NODE_SEGMENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"
#include "drivers/shm/segment.h"

namespace rondo::drivers::shm {

struct NodeSegment {
  std::shared_ptr<ShmSegment> segment;  // null: no shared memory
  int local = -1;                       // this rank's index in it
  std::vector<int> ranks;               // local index -> job rank
  std::string why_none;                 // when segment is null
};

// kPeerFailed (and *error) only when a collective bootstrap call failed
// (the job is broken); a segment that cannot be made is not an error.
Result<NodeSegment> SetupNodeSegment(bootstrap::Bootstrap& boot,
                                     std::string_view node_key,
                                     uint32_t ring_cells, std::string* error);

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_NODE_SEGMENT_H_
