// Request completion shared by the point-to-point and collective calls.
#ifndef RONDO_NMAD_MPI_INTERNAL_REQUESTS_H_
#define RONDO_NMAD_MPI_INTERNAL_REQUESTS_H_

#include <mpi.h>

#include <string>

#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {

// True once the operation behind `r` has completed. No polling, but a split
// collective's ready application-thread steps (kAppWait) run here, in the
// caller: every MPI wait and test passes through IsDone.
bool IsDone(const MpiRequest& r);
// One progress pass from the caller: the rails, and the engine's queues
// when `engine_too` (a collective is waited for) or every 16th pass.
int ProgressPass(State& st, bool engine_too);
// Completes a done request once: unpacks, fills r.status and r.error
// (raising the error through the communicator's handler). Idempotent.
int Finish(State& st, MpiRequest& r, const char* fn);
// Progresses until the operation behind `r` is done (any kind).
void WaitUntilDone(State& st, MpiRequest& r);
// Progresses until `r` is done, finishes it and copies its status.
int WaitOne(State& st, MpiRequest& r, MPI_Status* status, const char* fn);
// For a receive that must be abandoned (an error after posting it).
int CancelOrWait(State& st, MpiRequest& r);
// Waits until every buffered send (MPI_Bsend/MPI_Ibsend) has been sent
// (MPI_Buffer_detach; MPI_Finalize). Not with bsend_mu held.
void DrainBufferedSends(State& st);
// Maps a core Status to an MPI error class and raises it.
int StatusError(const Comm* comm, Status s, const char* fn,
                const std::string& what, int peer);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_REQUESTS_H_
