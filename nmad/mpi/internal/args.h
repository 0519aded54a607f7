// Argument checking for the MPI calls: each helper checks one argument,
// raises the right error class with a message naming the argument, its
// value and what is allowed, and returns false (with *err set to the code
// to return) when the argument is bad.
#ifndef RONDO_NMAD_MPI_INTERNAL_ARGS_H_
#define RONDO_NMAD_MPI_INTERNAL_ARGS_H_

#include <mpi.h>

#include <string>

#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {

// Every call but a few starts with this: MPI must be initialised.
#define RONDO_MPI_ENTER(fn)                                                 \
  ::rondo::nmad::mpi::State* st = ::rondo::nmad::mpi::Mpi();               \
  if (st == nullptr)                                                        \
    return ::rondo::nmad::mpi::RaiseError(                                  \
        nullptr, MPI_ERR_OTHER, fn,                                         \
        ::rondo::nmad::mpi::Finalized() ? "called after MPI_Finalize"       \
                                        : "called before MPI_Init");        \
  /* The application is inside MPI until the call returns: a quiet */      \
  /* progress thread stays away (engine/progress_thread.h). */             \
  ::rondo::engine::Engine::CallScope rondo_mpi_call_scope_(st->engine());  \
  const char* const kFn = fn

// RONDO_MPI_ENTER plus the communicator argument: declares `err` and `c`
// (the communicator), returning the error for an invalid handle.
#define RONDO_MPI_ENTER_COMM(fn, handle)                                    \
  RONDO_MPI_ENTER(fn);                                                      \
  int err = MPI_SUCCESS;                                                    \
  ::rondo::nmad::mpi::CommPtr c =                                           \
      ::rondo::nmad::mpi::CheckComm(*st, handle, kFn, &err);                \
  if (!c) return err

// The communicator behind `h`, or null with *err set.
CommPtr CheckComm(State& st, MPI_Comm h, const char* fn, int* err);
// The datatype behind `h` (predefined or user), or null with *err set.
// Communication needs a committed type (`need_commit`); type queries and
// constructors accept uncommitted ones.
TypePtr CheckType(State& st, MPI_Datatype h, const Comm* comm,
                  const char* fn, int* err, const char* arg = "datatype",
                  bool need_commit = true);
// The checks of the message path are inline: the test of a good argument
// costs a compare, and only a bad one calls out (the *Failed functions
// raise the error and build its message). Measured in docs/performance.md.
bool CheckCountFailed(int count, const Comm* comm, const char* fn, int* err,
                      const char* arg);
inline bool CheckCount(int count, const Comm* comm, const char* fn, int* err,
                       const char* arg = "count") {
  return count >= 0 || CheckCountFailed(count, comm, fn, err, arg);
}
// A buffer may be NULL only when it holds no data (or when the type's data
// lies at absolute addresses: MPI_BOTTOM).
bool CheckBufferFailed(int count, const Datatype& type, const Comm* comm,
                       const char* fn, int* err, const char* arg);
inline bool CheckBuffer(const void* buf, int count, const Datatype& type,
                        const Comm* comm, const char* fn, int* err,
                        const char* arg = "buf") {
  return buf != nullptr || count == 0 || type.size() == 0 ||
         type.true_lb() != 0 ||
         CheckBufferFailed(count, type, comm, fn, err, arg);
}
// CheckComm and CheckType for the point-to-point fast path: the
// predefined communicators and datatypes come back borrowed (no lock, no
// reference count), user ones shared as CheckComm/CheckType give them.
inline CommRef CheckCommRef(State& st, MPI_Comm h, const char* fn,
                            int* err) {
  if (Comm* c = st.PredefinedComm(h)) return CommRef::Borrowed(c);
  return CommRef(CheckComm(st, h, fn, err));
}
inline TypeRef CheckTypeRef(State& st, MPI_Datatype h, const Comm* comm,
                            const char* fn, int* err) {
  if (const Datatype* p = Predefined(h)) return TypeRef::Borrowed(p);
  return TypeRef(CheckType(st, h, comm, fn, err));
}
// A peer rank: 0..size-1, or MPI_PROC_NULL, or MPI_ANY_SOURCE when
// `any_ok`.
// A data argument triple (<side>buf, <side>count, <side>type, side being
// "send" or "recv"): the committed type, or null with *err set.
TypePtr CheckData(State& st, const void* buf, int count, MPI_Datatype type,
                  const Comm* comm, const char* fn, int* err,
                  const std::string& side);
bool CheckRankFailed(int rank, const Comm& comm, bool any_ok,
                     const char* fn, int* err, const char* arg);
inline bool CheckRank(int rank, const Comm& comm, bool any_ok,
                      const char* fn, int* err, const char* arg) {
  return (rank >= 0 && rank < comm.size) || rank == MPI_PROC_NULL ||
         (any_ok && rank == MPI_ANY_SOURCE) ||
         CheckRankFailed(rank, comm, any_ok, fn, err, arg);
}
bool CheckRoot(int root, const Comm& comm, const char* fn, int* err);
bool CheckTagFailed(int tag, bool any_ok, const Comm& comm, const char* fn,
                    int* err);
inline bool CheckTag(int tag, bool any_ok, const Comm& comm, const char* fn,
                     int* err) {
  return (tag >= 0 && tag <= kMaxTag) || (any_ok && tag == MPI_ANY_TAG) ||
         CheckTagFailed(tag, any_ok, comm, fn, err);
}
// An op valid for `type`.
std::shared_ptr<const Op> CheckOpArg(State& st, MPI_Op h, const Datatype& type,
                                  const Comm* comm, const char* fn, int* err);

// The info object behind `h`, or null with *err set (MPI_ERR_INFO; also
// for MPI_INFO_NULL, where the caller has not already allowed it).
std::shared_ptr<Info> CheckInfo(State& st, MPI_Info h, const Comm* comm,
                                const char* fn, int* err,
                                const char* arg = "info");

std::string TypeLabel(MPI_Datatype h);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_ARGS_H_
