// Collective calls of the MadMPI layer, shared with the communicator code
// (which needs an allgather to split communicators).
#ifndef RONDO_NMAD_MPI_INTERNAL_COLL_H_
#define RONDO_NMAD_MPI_INTERNAL_COLL_H_

#include <cstddef>

#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {

// A blocking allgather of `bytes` per rank on `comm` (recv holds size *
// bytes), through the collective engine. For communicator creation.
int InternalAllgather(State& st, const CommPtr& comm, const void* send,
                      void* recv, size_t bytes, const char* fn);

// The split-tree level (nmad/coll/split.h) the next nonblocking tree
// collective on `comm` will use, constant-size (bcast, reduce, allreduce) or
// size-doubling (gather, scatter); MPIX_SPLIT_OFF when it is not split.
// Auto mode: the model's S with N = comm.size and P = the node's dedicated
// communication cores; off when P = 0.
int ResolveCommSplit(State& st, const Comm& comm, bool doubling);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_COLL_H_
