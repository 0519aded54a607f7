// Node-aware small collectives (issue 28 item 4): MPI_Barrier, MPI_Bcast,
// MPI_Reduce, MPI_Allreduce, MPI_Gather, MPI_Allgather, MPI_Scatter and
// MPI_Alltoall (blocking) of a communicator whose ranks all share one
// node run through a segment that those ranks map, with per-rank flags
// (MPICH's release/gather and Open MPI's coll/sm are the models; the
// protocol is Rondo's own).
//
// The segment (one per communicator, set up collectively by the first
// of these collectives on it): for each rank r, 128 bytes
// holding arrive[r], the last epoch r reached (written by r only), and on
// the second line r's doorbell (a futex word); then the barrier leader's
// release word; then two data slots per rank (epoch parity),
// RONDO_COLL_SHM_BYTES each.
// Every call of the four is one epoch e on every rank (MPI orders the
// collectives of a communicator), and every rank stores arrive[r] = e once
// in each:
//  - barrier: store, then wait until every arrive[q] >= e (one hop: the
//    last to arrive leaves at once, the others at their next look, so that
//    on an oversubscribed node nobody waits for a rank to be scheduled
//    after the last arrival); but on more than 2 ranks right after a bcast
//    or scatter on this path, its root alone waits for them and stores
//    release = e, which the others wait for (MPICH's release/gather: the
//    root leaves first, so a repeat of that call finds the others still
//    leaving). Every rank knows the last call on the path, so they agree;
//  - allreduce: copy the input into slot(r, e), store, wait for every
//    rank, then reduce all slots in rank order (non-commutative ops too)
//    into the output: one flag hop, as recursive doubling on 2 ranks;
//  - reduce: the same, but only the root waits and reduces;
//  - bcast: the root copies into slot(root, e) and stores; the others
//    wait for arrive[root] >= e, copy out, then store.
//  - allgather: as allreduce, each rank copies the other slots' blocks
//    out instead of reducing them (its own goes straight to its place);
//  - gather: as reduce; the root stores at once (it writes no slot);
//  - scatter: as bcast, the root's slot holding every rank's block;
//  - alltoall: each rank copies its own block straight to its place, its
//    n - 1 others into slot(r, e) by shift (place s - 1 holds the block
//    for rank r + s), stores, waits for every rank, then copies the block
//    of place s - 1 of slot(r - s) out for every shift s.
//  Scatter whose n blocks do not fit a slot takes one epoch per round of
//  as many destinations as fit: every rank stores its flag in every round,
//  and only that round's destinations wait and read; alltoall one per
//  round of as many shifts as fit, every rank writing and reading in each.
//  - large allreduce (above a slot, contiguous types; from 3 ranks, and on
//    2 below kCollShmLargeTwoRanks): a second segment, mapped by the first
//    such call, holds two regions (epoch parity) of kCollShmLargeChunk
//    bytes per rank. The vector runs in rounds of a region, two epochs
//    each: every rank copies the round into its region and stores; each
//    reduces its 1/n portion of every region in rank order into its output
//    (a reduce-scatter), copies it into its other region and stores; then
//    copies the other portions out (an allgather).
// Reuse (slots and large regions alike): a rank writes slot(r, e) (last
// used in epoch e - 2) only once it knows every arrive[q] >= e - 1 (each
// rank stores its epoch e - 1 flag after it finished reading epoch e - 2's
// data); barriers and allreduces learn it for free, a bcast root or reduce
// leaf waits for it lazily at its next write. No allocation once set up.
//
// Waits progress the engine (other traffic keeps moving), back off like
// every MadMPI wait (IdleBackoff's rules: yield; on an oversubscribed node,
// after RONDO_WAIT_SPIN_US, sleep, here on the rank's doorbell, which every
// flag store rings, 1 ms at most at a time) and look for failed ranks now
// and then: a dead rank ends the call with MPIX_ERR_PROC_FAILED naming it,
// and the communicator leaves the shared-memory path.
//
// Thread-safety: as MPI collectives: one call at a time per communicator.
#ifndef RONDO_NMAD_MPI_INTERNAL_COLL_SHM_H_
#define RONDO_NMAD_MPI_INTERNAL_COLL_SHM_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "nmad/mpi/internal/state.h"
#include "nmad/mpi/op.h"

namespace rondo::nmad::mpi {

// The largest communicator on the shared-memory path (every rank polls
// every flag and an allreduce reads every slot: beyond this the existing
// trees do better).
inline constexpr int kCollShmMaxRanks = 16;
// The largest RONDO_COLL_SHM_BYTES.
inline constexpr int64_t kCollShmMaxBytes = 64 * 1024;
// The bytes of a round of the large allreduce (ShmReduce above a slot):
// each rank maps two regions of this size.
inline constexpr size_t kCollShmLargeChunk = 256 * 1024;
// On 2 ranks the large allreduce serves vectors below this many bytes.
inline constexpr uint64_t kCollShmLargeTwoRanks = 512 * 1024;

// Maps `total` zero-filled bytes that every rank of `comm` (all on this
// node) shares: shm_open with O_EXCL and a random name
// /<prefix>-<pid>-<random> (prefix: at most 16 characters) by comm rank 0,
// the name broadcast, mapped by all, unlinked once all have (nothing is
// left after kill -9). The mechanism of win.cc's MapSegment, which could
// call it with "rondo-win". Collective; nullptr on every rank when any
// rank failed.
void* MapCommSegment(MPI_Comm comm, int rank, size_t total,
                     const char* prefix);

// Each returns true when the call ran on the shared-memory path (*result
// is then its MPI return code), false when the caller takes the existing
// path (not one node, RONDO_COLL_SHM=0, too many bytes or ranks, a forced
// RONDO_COLL_<NAME>, a user op on a non-contiguous type, ...). The choice
// is the same on every rank. Blocking calls only; arguments checked.
bool ShmBarrier(State& st, Comm& comm, const char* fn, int* result);
bool ShmBcast(State& st, Comm& comm, void* buf, int count,
              const Datatype& type, int root, const char* fn, int* result);
// Reduce (`root` >= 0) or allreduce (`root` < 0). `sendbuf` may be
// MPI_IN_PLACE (at the root of a reduce). An allreduce of a contiguous type
// above RONDO_COLL_SHM_BYTES takes the large rounds (above).
bool ShmReduce(State& st, Comm& comm, const void* sendbuf, void* recvbuf,
               int count, MPI_Datatype handle, const Datatype& type,
               const Op& op, int root, const char* fn, int* result);

// The block collectives (arguments checked; the block sizes agree, the
// truncation checks done). Any datatype: non-contiguous ones are packed
// into and unpacked out of the slots. `stype` is null where the send side
// is MPI_IN_PLACE, `rtype` where this rank receives nothing.
// Gather (`root` >= 0) or allgather (`root` < 0): `sendbuf` may be
// MPI_IN_PLACE at a receiver (its block is already at its place in
// recvbuf). Up to RONDO_COLL_SHM_BYTES per block.
bool ShmGather(State& st, Comm& comm, const void* sendbuf, int scount,
               const Datatype* stype, void* recvbuf, int rcount,
               const Datatype* rtype, int root, const char* fn, int* result);
// Scatter: `recvbuf` may be MPI_IN_PLACE at the root. Up to
// RONDO_COLL_SHM_BYTES per block (in rounds of as many blocks as a slot
// holds).
bool ShmScatter(State& st, Comm& comm, const void* sendbuf, int scount,
                const Datatype* stype, void* recvbuf, int rcount,
                const Datatype* rtype, int root, const char* fn, int* result);
// Alltoall: `sendbuf` may be MPI_IN_PLACE (recvbuf holds the blocks to
// send). Up to RONDO_COLL_SHM_BYTES per block, in rounds of as many
// blocks as a slot holds; in place, all of a rank's n - 1 others in one.
bool ShmAlltoall(State& st, Comm& comm, const void* sendbuf, int scount,
                 const Datatype* stype, void* recvbuf, int rcount,
                 const Datatype& rtype, const char* fn, int* result);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_COLL_SHM_H_
