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

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_COLL_H_
