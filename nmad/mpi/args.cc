// Argument checks of the MadMPI calls (see internal/args.h).
#include <mpi.h>

#include <string>

#include "nmad/mpi/internal/args.h"

namespace rondo::nmad::mpi {

std::string TypeLabel(MPI_Datatype h) {
  if (const Datatype* p = Predefined(h)) return p->name();
  if (h == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  return std::to_string(h);
}

CommPtr CheckComm(State& st, MPI_Comm h, const char* fn, int* err) {
  if (h == MPI_COMM_NULL) {
    *err = RaiseError(nullptr, MPI_ERR_COMM, fn,
                      "comm = MPI_COMM_NULL (a valid communicator is needed)");
    return nullptr;
  }
  CommPtr c = st.comms.Get(h);
  if (!c)
    *err = RaiseError(nullptr, MPI_ERR_COMM, fn,
                      "comm = " + std::to_string(h) +
                          " is not a valid communicator (never created, or "
                          "freed)");
  return c;
}

TypePtr CheckType(State& st, MPI_Datatype h, const Comm* comm,
                  const char* fn, int* err, const char* arg,
                  bool need_commit) {
  if (const Datatype* p = Predefined(h)) return p->shared_from_this();
  TypePtr t = h == MPI_DATATYPE_NULL ? nullptr : st.types.Get(h);
  if (t && need_commit && !st.IsCommitted(h)) {
    *err = RaiseError(comm, MPI_ERR_TYPE, fn,
                      std::string(arg) + " = " + TypeLabel(h) +
                          " is not committed (call MPI_Type_commit before "
                          "communicating with it)");
    return nullptr;
  }
  if (!t)
    *err = RaiseError(comm, MPI_ERR_TYPE, fn,
                      std::string(arg) + " = " + TypeLabel(h) +
                          " is not a valid datatype (predefined MPI_* types "
                          "or committed user types; freed types are "
                          "invalid)");
  return t;
}

bool CheckCountFailed(int count, const Comm* comm, const char* fn, int* err,
                      const char* arg) {
  *err = RaiseError(comm, MPI_ERR_COUNT, fn,
                    std::string(arg) + " = " + std::to_string(count) +
                        " (must be >= 0)");
  return false;
}

// MPI_BOTTOM (NULL) with absolute addresses is legal when the type's data
// lies at non-zero displacements (built from MPI_Get_address): CheckBuffer
// lets it through before calling this.
bool CheckBufferFailed(int count, const Datatype& type, const Comm* comm,
                       const char* fn, int* err, const char* arg) {
  *err = RaiseError(comm, MPI_ERR_BUFFER, fn,
                    std::string(arg) + " is NULL but count = " +
                        std::to_string(count) + " items of " +
                        std::to_string(type.size()) +
                        " bytes are to be transferred");
  return false;
}

TypePtr CheckData(State& st, const void* buf, int count, MPI_Datatype type,
                  const Comm* comm, const char* fn, int* err,
                  const std::string& side) {
  TypePtr t = CheckType(st, type, comm, fn, err, (side + "type").c_str());
  if (!t || !CheckCount(count, comm, fn, err, (side + "count").c_str()) ||
      !CheckBuffer(buf, count, *t, comm, fn, err, (side + "buf").c_str()))
    return nullptr;
  return t;
}

bool CheckRankFailed(int rank, const Comm& comm, bool any_ok,
                     const char* fn, int* err, const char* arg) {
  *err = RaiseError(&comm, MPI_ERR_RANK, fn,
                    std::string(arg) + " = " + std::to_string(rank) +
                        " (the communicator has " + std::to_string(comm.size) +
                        " ranks: 0.." + std::to_string(comm.size - 1) +
                        ", MPI_PROC_NULL" +
                        (any_ok ? ", MPI_ANY_SOURCE" : "") + ")");
  return false;
}

bool CheckRoot(int root, const Comm& comm, const char* fn, int* err) {
  if (root >= 0 && root < comm.size) return true;
  *err = RaiseError(&comm, MPI_ERR_ROOT, fn,
                    "root = " + std::to_string(root) + " (must be 0.." +
                        std::to_string(comm.size - 1) + ")");
  return false;
}

bool CheckTagFailed(int tag, bool any_ok, const Comm& comm, const char* fn,
                    int* err) {
  *err = RaiseError(&comm, MPI_ERR_TAG, fn,
                    "tag = " + std::to_string(tag) + " (must be 0.." +
                        std::to_string(kMaxTag) + " (MPI_TAG_UB)" +
                        (any_ok ? " or MPI_ANY_TAG" : "") + ")");
  return false;
}

std::shared_ptr<const Op> CheckOpArg(State& st, MPI_Op h,
                                     const Datatype& type, const Comm* comm,
                                     const char* fn, int* err) {
  std::shared_ptr<const Op> op;
  if (IsPredefinedOp(h)) {
    std::string why;
    if (CheckOp(h, type, &why) != MPI_SUCCESS) {
      *err = RaiseError(comm, MPI_ERR_OP, fn, "op: " + why);
      return nullptr;
    }
    static const auto* table = [] {
      auto* t = new std::shared_ptr<const Op>[32];
      for (int i = 1; i < 32; ++i)
        if (IsPredefinedOp(i)) t[i] = std::make_shared<Op>(PredefinedOp(i));
      return t;
    }();
    return table[h];
  }
  op = h == MPI_OP_NULL ? nullptr : st.ops.Get(h);
  if (!op)
    *err = RaiseError(comm, MPI_ERR_OP, fn,
                      "op = " + std::string(h == MPI_OP_NULL
                                                ? "MPI_OP_NULL"
                                                : std::to_string(h)) +
                          " is not a valid operation (predefined MPI_* ops "
                          "or ones from MPI_Op_create)");
  return op;
}

std::shared_ptr<Info> CheckInfo(State& st, MPI_Info h, const Comm* comm,
                                const char* fn, int* err, const char* arg) {
  std::shared_ptr<Info> i = h == MPI_INFO_NULL ? nullptr : st.infos.Get(h);
  if (!i)
    *err = RaiseError(comm, MPI_ERR_INFO, fn,
                      std::string(arg) + " = " +
                          (h == MPI_INFO_NULL ? std::string("MPI_INFO_NULL")
                                              : std::to_string(h)) +
                          " is not a valid info object (from "
                          "MPI_Info_create or MPI_Info_dup, not freed)");
  return i;
}

}  // namespace rondo::nmad::mpi
