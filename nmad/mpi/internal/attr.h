// Communicator attributes with user keys (MPI-4 §7.7), shared by the
// communicator calls (comm.cc: MPI_Comm_dup copies them, MPI_Comm_free
// deletes them) and MPI_Finalize (state.cc), which deletes those of
// MPI_COMM_SELF, then of MPI_COMM_WORLD, before anything else shuts down.
//
// Callbacks run without any MadMPI lock held, so they may call MPI
// (including attribute calls on other communicators).
#ifndef RONDO_NMAD_MPI_INTERNAL_ATTR_H_
#define RONDO_NMAD_MPI_INTERNAL_ATTR_H_

#include <mpi.h>

#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {

// Runs the copy callback of each attribute of `from` (in the order they
// were set) for its duplicate `to`, attaching the values the callbacks
// copy. A callback's error is raised on `from` with the callback's class
// and returned; the caller then frees `to` (DeleteAttributes, raise =
// false).
int CopyAttributes(State& st, const Comm& from, Comm& to, const char* fn);

// Deletes the attributes of `c`, the last set first, running their delete
// callbacks. raise = true (MPI_Comm_free): a callback's error stops it,
// is raised on `c` and returned, and the attributes not deleted yet stay.
// raise = false (MPI_Finalize, cleaning up a failed duplicate): every
// attribute goes, errors are ignored.
int DeleteAttributes(State& st, Comm& c, bool raise, const char* fn);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_ATTR_H_
