// Communicator creation, shared by comm.cc and the process topologies
// (topo.cc).
#ifndef RONDO_NMAD_MPI_INTERNAL_COMM_H_
#define RONDO_NMAD_MPI_INTERNAL_COMM_H_

#include <mpi.h>

#include <string>
#include <vector>

#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {

// Creates the communicator `members` (job ranks) for the caller, who is a
// member, with id `id`; copies the parent's error handler.
int MakeComm(State& st, const Comm& parent, std::string id,
             std::vector<int> members, MPI_Comm* out, const char* fn);

// MPI_Comm_split of `c`: a collective call of all its members.
int SplitComm(State& st, const CommPtr& c, int color, int key, MPI_Comm* out,
              const char* fn);

// The session behind `h`, or null with *err set (MPI_ERR_SESSION raised
// on MPI_COMM_WORLD's handler: an invalid handle has no handler of its own).
std::shared_ptr<MpiSession> CheckSession(State& st, MPI_Session h,
                                         const char* fn, int* err);
// The job ranks of process set `name` ("mpi://WORLD", "mpi://SELF", case
// not significant), or false.
bool PsetMembers(const State& st, const char* name, std::vector<int>* out);

// MPI_{Comm,Win,Session}_create_errhandler: a new user handler of `kind`
// in *out (`what` names the function argument in the error).
int NewErrhandler(State& st, MPI_Comm_errhandler_function* function,
                  ErrhandlerKind kind, MPI_Errhandler* out, const char* fn,
                  const char* what);
// `h` may be set on an object of `kind`: a predefined handler, or a live
// user one made for that kind.
bool ErrhandlerFits(const State& st, MPI_Errhandler h, ErrhandlerKind kind);
// The message for a handler that does not fit: "errhandler = 7 is not a
// window error handler (allowed: ..., or one from MPI_Win_create_errhandler)".
std::string ErrhandlerMismatch(MPI_Errhandler h, ErrhandlerKind kind);

// Fills c.neighbors from c's topology (topo.cc); empty without one.
void SetNeighborhood(Comm& c);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_COMM_H_
