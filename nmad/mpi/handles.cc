// Handle conversion between C and Fortran (MPI-4 §19.3.4), which Fortran
// bindings and layered libraries (mpi4py, PETSc) call. MadMPI handles are
// ints already, so MPI_X_c2f is the identity; MPI_X_f2c returns the value
// when it names a live object of that kind and the kind's null handle
// otherwise, raising no error (the standard's rule for an invalid Fortran
// handle). Before MPI_Init and after MPI_Finalize only the predefined
// handles convert. Any thread; lookups take the handle table's lock only.
#include <mpi.h>

#include "nmad/mpi/internal/state.h"

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

extern "C" {

MPI_Fint PMPI_Comm_c2f(MPI_Comm comm) { return comm; }

MPI_Comm PMPI_Comm_f2c(MPI_Fint comm) {
  if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF) return comm;
  State* st = Mpi();
  return st != nullptr && comm != MPI_COMM_NULL && st->comms.Get(comm)
             ? comm
             : MPI_COMM_NULL;
}

MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype) { return datatype; }

MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype) {
  if (Predefined(datatype) != nullptr) return datatype;
  State* st = Mpi();
  return st != nullptr && datatype != MPI_DATATYPE_NULL &&
                 st->types.Get(datatype)
             ? datatype
             : MPI_DATATYPE_NULL;
}

MPI_Fint PMPI_Group_c2f(MPI_Group group) { return group; }

MPI_Group PMPI_Group_f2c(MPI_Fint group) {
  if (group == MPI_GROUP_EMPTY) return group;
  State* st = Mpi();
  return st != nullptr && group != MPI_GROUP_NULL && st->groups.Get(group)
             ? group
             : MPI_GROUP_NULL;
}

MPI_Fint PMPI_Request_c2f(MPI_Request request) { return request; }

// Active requests and inactive persistent ones (both keep their handle).
MPI_Request PMPI_Request_f2c(MPI_Fint request) {
  State* st = Mpi();
  return st != nullptr && request != MPI_REQUEST_NULL &&
                 (request == kSentRequest ||
                  st->requests.Get(request) != nullptr)
             ? request
             : MPI_REQUEST_NULL;
}

MPI_Fint PMPI_Op_c2f(MPI_Op op) { return op; }

MPI_Op PMPI_Op_f2c(MPI_Fint op) {
  if (IsPredefinedOp(op)) return op;
  State* st = Mpi();
  return st != nullptr && op != MPI_OP_NULL && st->ops.Get(op) ? op
                                                               : MPI_OP_NULL;
}

MPI_Fint PMPI_Info_c2f(MPI_Info info) { return info; }

MPI_Info PMPI_Info_f2c(MPI_Fint info) {
  State* st = Mpi();
  return st != nullptr && info != MPI_INFO_NULL && st->infos.Get(info)
             ? info
             : MPI_INFO_NULL;
}

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler) { return errhandler; }

// A user handler stays in the table while communicators use it; it is a
// valid handle while the application holds one (refs > 0).
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler) {
  if (errhandler == MPI_ERRORS_ARE_FATAL || errhandler == MPI_ERRORS_RETURN)
    return errhandler;
  State* st = Mpi();
  if (st == nullptr || errhandler == MPI_ERRHANDLER_NULL)
    return MPI_ERRHANDLER_NULL;
  auto user = st->errhandlers.Get(errhandler);
  return user && user->refs.load() > 0 ? errhandler : MPI_ERRHANDLER_NULL;
}

MPI_Fint PMPI_Message_c2f(MPI_Message message) { return message; }

// A message taken by MPI_Improbe/MPI_Mprobe and not yet received.
MPI_Message PMPI_Message_f2c(MPI_Fint message) {
  if (message == MPI_MESSAGE_NO_PROC) return message;
  State* st = Mpi();
  if (st == nullptr || message == MPI_MESSAGE_NULL) return MPI_MESSAGE_NULL;
  std::lock_guard<std::mutex> lock(st->messages_mu);
  return st->messages.count(message) != 0 ? message : MPI_MESSAGE_NULL;
}

MPI_Fint PMPI_Win_c2f(MPI_Win win) { return win; }

MPI_Win PMPI_Win_f2c(MPI_Fint win) {
  State* st = Mpi();
  return st != nullptr && win != MPI_WIN_NULL && WinExists(*st, win)
             ? win
             : MPI_WIN_NULL;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f
#pragma weak MPI_Comm_f2c = PMPI_Comm_f2c
#pragma weak MPI_Type_c2f = PMPI_Type_c2f
#pragma weak MPI_Type_f2c = PMPI_Type_f2c
#pragma weak MPI_Group_c2f = PMPI_Group_c2f
#pragma weak MPI_Group_f2c = PMPI_Group_f2c
#pragma weak MPI_Request_c2f = PMPI_Request_c2f
#pragma weak MPI_Request_f2c = PMPI_Request_f2c
#pragma weak MPI_Op_c2f = PMPI_Op_c2f
#pragma weak MPI_Op_f2c = PMPI_Op_f2c
#pragma weak MPI_Info_c2f = PMPI_Info_c2f
#pragma weak MPI_Info_f2c = PMPI_Info_f2c
#pragma weak MPI_Errhandler_c2f = PMPI_Errhandler_c2f
#pragma weak MPI_Errhandler_f2c = PMPI_Errhandler_f2c
#pragma weak MPI_Message_c2f = PMPI_Message_c2f
#pragma weak MPI_Message_f2c = PMPI_Message_f2c
#pragma weak MPI_Win_c2f = PMPI_Win_c2f
#pragma weak MPI_Win_f2c = PMPI_Win_f2c
