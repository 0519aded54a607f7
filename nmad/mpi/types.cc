// MadMPI datatype, reduction-operation and memory calls (info objects:
// info.cc; one-sided communication: win.cc). Type maps and pack/unpack
// live in datatype.h, the reductions in op.h; this file maps handles to
// them.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {
namespace {

int AddType(State& st, TypeResult res, MPI_Datatype* out, const char* fn) {
  if (!res.ok()) return RaiseError(nullptr, res.error_class, fn, res.error);
  *out = st.types.Add(std::move(res.type));
  return MPI_SUCCESS;
}

bool OutArg(const void* p, const char* name, const char* fn, int* err) {
  if (p != nullptr) return true;
  *err = RaiseError(nullptr, MPI_ERR_ARG, fn, std::string(name) + " is NULL");
  return false;
}

}  // namespace
}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

#define RONDO_OLD_TYPE(h, arg)                                  \
  int err = MPI_SUCCESS;                                        \
  TypePtr old = CheckType(*st, h, nullptr, kFn, &err, arg, false); \
  if (!old) return err

extern "C" {

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype,
                        MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_contiguous");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st, Contiguous(count, *old), newtype, kFn);
}

int PMPI_Type_vector(int count, int blocklength, int stride,
                    MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_vector");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st, Vector(count, blocklength, stride, *old), newtype, kFn);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                            MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_create_hvector");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st, Hvector(count, blocklength, stride, *old), newtype,
                 kFn);
}

int PMPI_Type_indexed(int count, const int blocklengths[],
                     const int displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_indexed");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st, Indexed(count, blocklengths, displacements, *old),
                 newtype, kFn);
}

int PMPI_Type_create_hindexed(int count, const int blocklengths[],
                             const MPI_Aint displacements[],
                             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_create_hindexed");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st, Hindexed(count, blocklengths, displacements, *old),
                 newtype, kFn);
}

int PMPI_Type_create_indexed_block(int count, int blocklength,
                                  const int displacements[],
                                  MPI_Datatype oldtype,
                                  MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_create_indexed_block");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st, IndexedBlock(count, blocklength, displacements, *old),
                 newtype, kFn);
}

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_create_hindexed_block");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st,
                 HindexedBlock(count, blocklength, array_of_displacements,
                               *old),
                 newtype, kFn);
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                              const int array_of_subsizes[],
                              const int array_of_starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_create_subarray");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st,
                 Subarray(ndims, array_of_sizes, array_of_subsizes,
                          array_of_starts, order, *old),
                 newtype, kFn);
}

int PMPI_Type_create_struct(int count, const int blocklengths[],
                           const MPI_Aint displacements[],
                           const MPI_Datatype types[],
                           MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_create_struct");
  int err = MPI_SUCCESS;
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  if (count > 0 && types == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "types is NULL with count > 0");
  std::vector<TypePtr> keep(count > 0 ? count : 0);
  std::vector<const Datatype*> raw(keep.size());
  for (int i = 0; i < count; ++i) {
    const std::string arg = "types[" + std::to_string(i) + "]";
    keep[i] = CheckType(*st, types[i], nullptr, kFn, &err, arg.c_str(),
                        false);
    if (!keep[i]) return err;
    raw[i] = keep[i].get();
  }
  return AddType(*st, Struct(count, blocklengths, displacements, raw.data()),
                 newtype, kFn);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb,
                            MPI_Aint extent, MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_create_resized");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  return AddType(*st, Resized(*old, lb, extent), newtype, kFn);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RONDO_MPI_ENTER("MPI_Type_dup");
  RONDO_OLD_TYPE(oldtype, "oldtype");
  if (!OutArg(newtype, "newtype", kFn, &err)) return err;
  err = AddType(*st, Dup(*old), newtype, kFn);
  // The duplicate of a committed type is committed (MPI-3.1 4.1.10).
  if (err == MPI_SUCCESS && (old->is_predefined() || st->IsCommitted(oldtype)))
    st->SetCommitted(*newtype, true);
  return err;
}

int PMPI_Type_commit(MPI_Datatype* datatype) {
  RONDO_MPI_ENTER("MPI_Type_commit");
  int err = MPI_SUCCESS;
  if (!OutArg(datatype, "datatype", kFn, &err)) return err;
  // Types are flattened when built: committing only marks the handle.
  TypePtr t = CheckType(*st, *datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!t->is_predefined()) st->SetCommitted(*datatype, true);
  return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype* datatype) {
  RONDO_MPI_ENTER("MPI_Type_free");
  int err = MPI_SUCCESS;
  if (!OutArg(datatype, "datatype", kFn, &err)) return err;
  if (Predefined(*datatype) != nullptr)
    return RaiseError(nullptr, MPI_ERR_TYPE, kFn,
                      "datatype = " + TypeLabel(*datatype) +
                          " is predefined and cannot be freed");
  // Operations in flight hold their own reference (MpiRequest::type).
  st->SetCommitted(*datatype, false);
  if (!st->types.Remove(*datatype))
    return RaiseError(nullptr, MPI_ERR_TYPE, kFn,
                      "datatype = " + TypeLabel(*datatype) +
                          " is not a valid user datatype");
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  RONDO_MPI_ENTER("MPI_Type_size");
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!OutArg(size, "size", kFn, &err)) return err;
  *size = t->size() > INT_MAX ? MPI_UNDEFINED : static_cast<int>(t->size());
  return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  RONDO_MPI_ENTER("MPI_Type_size_x");
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!OutArg(size, "size", kFn, &err)) return err;
  *size = t->size();
  return MPI_SUCCESS;
}

}  // extern "C"

namespace rondo::nmad::mpi {
namespace {

// The four extent queries (MPI_Aint and MPI_Count forms, extent and true
// extent).
template <typename T>
int Extent(MPI_Datatype datatype, T* lb, T* extent, bool true_extent,
           const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!OutArg(lb, true_extent ? "true_lb" : "lb", kFn, &err) ||
      !OutArg(extent, true_extent ? "true_extent" : "extent", kFn, &err))
    return err;
  *lb = true_extent ? t->true_lb() : t->lb();
  *extent = true_extent ? t->true_extent() : t->extent();
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rondo::nmad::mpi

extern "C" {

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb,
                          MPI_Count* extent) {
  return Extent(datatype, lb, extent, false, "MPI_Type_get_extent_x");
}
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb,
                               MPI_Count* true_extent) {
  return Extent(datatype, true_lb, true_extent, true,
                "MPI_Type_get_true_extent_x");
}
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb,
                        MPI_Aint* extent) {
  return Extent(datatype, lb, extent, false, "MPI_Type_get_extent");
}
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb,
                             MPI_Aint* true_extent) {
  return Extent(datatype, true_lb, true_extent, true,
                "MPI_Type_get_true_extent");
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name,
                      int* resultlen) {
  RONDO_MPI_ENTER("MPI_Type_get_name");
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!OutArg(type_name, "type_name", kFn, &err) ||
      !OutArg(resultlen, "resultlen", kFn, &err))
    return err;
  std::string n = t->name().substr(0, MPI_MAX_OBJECT_NAME - 1);
  std::memcpy(type_name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  RONDO_MPI_ENTER("MPI_Type_set_name");
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!OutArg(type_name, "type_name", kFn, &err)) return err;
  if (t->is_predefined())
    return RaiseError(nullptr, MPI_ERR_TYPE, kFn,
                      "datatype = " + TypeLabel(datatype) +
                          " is predefined: Rondo keeps its standard name");
  st->types.Set(datatype, t->WithName(type_name));
  return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers,
                          int* num_addresses, int* num_datatypes,
                          int* combiner) {
  RONDO_MPI_ENTER("MPI_Type_get_envelope");
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!OutArg(num_integers, "num_integers", kFn, &err) ||
      !OutArg(num_addresses, "num_addresses", kFn, &err) ||
      !OutArg(num_datatypes, "num_datatypes", kFn, &err) ||
      !OutArg(combiner, "combiner", kFn, &err))
    return err;
  *num_integers = t->num_integers();
  *num_addresses = t->num_addresses();
  *num_datatypes = t->num_datatypes();
  *combiner = t->combiner();
  return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                          int max_addresses, int max_datatypes,
                          int array_of_integers[],
                          MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[]) {
  RONDO_MPI_ENTER("MPI_Type_get_contents");
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (t->combiner() == MPI_COMBINER_NAMED)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "datatype = " + t->name() +
                          " is predefined (combiner MPI_COMBINER_NAMED): it "
                          "has no contents (check MPI_Type_get_envelope "
                          "first)");
  struct Room {
    const char* max_name;
    int max;
    int need;
    const char* array_name;
    const void* array;
  };
  const Room rooms[] = {
      {"max_integers", max_integers, t->num_integers(), "array_of_integers",
       array_of_integers},
      {"max_addresses", max_addresses, t->num_addresses(),
       "array_of_addresses", array_of_addresses},
      {"max_datatypes", max_datatypes, t->num_datatypes(),
       "array_of_datatypes", array_of_datatypes},
  };
  for (const Room& r : rooms) {
    if (r.max < r.need)
      return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                        std::string(r.max_name) + " = " +
                            std::to_string(r.max) + " but the datatype has " +
                            std::to_string(r.need) +
                            " (see MPI_Type_get_envelope)");
    if (r.need > 0 && r.array == nullptr)
      return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                        std::string(r.array_name) + " is NULL");
  }
  std::copy(t->integers().begin(), t->integers().end(), array_of_integers);
  std::copy(t->addresses().begin(), t->addresses().end(),
            array_of_addresses);
  // Predefined types come back as themselves; derived ones as new handles
  // (to the same immutable description) that the caller frees.
  int i = 0;
  for (const TypePtr& d : t->datatypes()) {
    if (d->is_predefined()) {
      array_of_datatypes[i++] = d->handle();
      continue;
    }
    const MPI_Datatype h = st->types.Add(d);
    st->SetCommitted(h, true);
    array_of_datatypes[i++] = h;
  }
  return MPI_SUCCESS;
}

int PMPI_Get_address(const void* location, MPI_Aint* address) {
  if (address == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Get_address",
                      "address is NULL");
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return addr1 - addr2;
}

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype,
             void* outbuf, int outsize, int* position, MPI_Comm comm) {
  RONDO_MPI_ENTER_COMM("MPI_Pack", comm);
  TypePtr t = CheckType(*st, datatype, c.get(), kFn, &err);
  if (!t) return err;
  if (!CheckCount(incount, c.get(), kFn, &err, "incount") ||
      !CheckBuffer(inbuf, incount, *t, c.get(), kFn, &err, "inbuf"))
    return err;
  if (position == nullptr || *position < 0 || outsize < 0)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "position must not be NULL and position and outsize "
                      "must be >= 0");
  const int64_t bytes = static_cast<int64_t>(incount) * t->size();
  if (*position + bytes > outsize)
    return RaiseError(c.get(), MPI_ERR_TRUNCATE, kFn,
                      "packing " + std::to_string(bytes) + " bytes at " +
                          std::to_string(*position) +
                          " overflows outsize = " + std::to_string(outsize));
  if (bytes > 0) {
    if (outbuf == nullptr)
      return RaiseError(c.get(), MPI_ERR_BUFFER, kFn, "outbuf is NULL");
    t->Pack(inbuf, incount, static_cast<char*>(outbuf) + *position);
  }
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
               int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  RONDO_MPI_ENTER_COMM("MPI_Unpack", comm);
  TypePtr t = CheckType(*st, datatype, c.get(), kFn, &err);
  if (!t) return err;
  if (!CheckCount(outcount, c.get(), kFn, &err, "outcount") ||
      !CheckBuffer(outbuf, outcount, *t, c.get(), kFn, &err, "outbuf"))
    return err;
  if (position == nullptr || *position < 0 || insize < 0)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "position must not be NULL and position and insize "
                      "must be >= 0");
  const int64_t bytes = static_cast<int64_t>(outcount) * t->size();
  if (*position + bytes > insize)
    return RaiseError(c.get(), MPI_ERR_TRUNCATE, kFn,
                      "unpacking " + std::to_string(bytes) + " bytes at " +
                          std::to_string(*position) + " overruns insize = " +
                          std::to_string(insize));
  if (bytes > 0) {
    if (inbuf == nullptr)
      return RaiseError(c.get(), MPI_ERR_BUFFER, kFn, "inbuf is NULL");
    t->Unpack(static_cast<const char*>(inbuf) + *position, bytes, outbuf,
              outcount);
  }
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
                  int* size) {
  RONDO_MPI_ENTER_COMM("MPI_Pack_size", comm);
  TypePtr t = CheckType(*st, datatype, c.get(), kFn, &err);
  if (!t) return err;
  if (!CheckCount(incount, c.get(), kFn, &err, "incount")) return err;
  if (size == nullptr) return RaiseError(c.get(), MPI_ERR_ARG, kFn, "size is NULL");
  const int64_t bytes = static_cast<int64_t>(incount) * t->size();
  *size = bytes > INT_MAX ? MPI_UNDEFINED : static_cast<int>(bytes);
  return MPI_SUCCESS;
}

// ---- operations ----
int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  RONDO_MPI_ENTER("MPI_Op_create");
  if (user_fn == nullptr || op == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "user_fn and op must not be NULL");
  auto o = std::make_shared<Op>();
  o->fn = user_fn;
  o->commutative = commute != 0;
  o->predefined = false;
  *op = st->ops.Add(o);
  o->handle = *op;  // not yet visible to other threads through *op
  return MPI_SUCCESS;
}

int PMPI_Op_free(MPI_Op* op) {
  RONDO_MPI_ENTER("MPI_Op_free");
  if (op == nullptr) return RaiseError(nullptr, MPI_ERR_OP, kFn, "op is NULL");
  if (IsPredefinedOp(*op))
    return RaiseError(nullptr, MPI_ERR_OP, kFn,
                      std::string("op = ") + OpName(*op) +
                          " is predefined and cannot be freed");
  if (!st->ops.Remove(*op))
    return RaiseError(nullptr, MPI_ERR_OP, kFn,
                      "op = " + std::to_string(*op) +
                          " is not a valid user operation");
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  RONDO_MPI_ENTER("MPI_Op_commutative");
  if (commute == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "commute is NULL");
  if (IsPredefinedOp(op)) {
    *commute = 1;
    return MPI_SUCCESS;
  }
  auto o = op == MPI_OP_NULL ? nullptr : st->ops.Get(op);
  if (!o)
    return RaiseError(nullptr, MPI_ERR_OP, kFn,
                      "op = " + std::to_string(op) + " is not a valid op");
  *commute = o->commutative;
  return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                     MPI_Datatype datatype, MPI_Op op) {
  RONDO_MPI_ENTER("MPI_Reduce_local");
  int err = MPI_SUCCESS;
  TypePtr t = CheckType(*st, datatype, nullptr, kFn, &err, "datatype", false);
  if (!t) return err;
  if (!CheckCount(count, nullptr, kFn, &err) ||
      !CheckBuffer(inbuf, count, *t, nullptr, kFn, &err, "inbuf") ||
      !CheckBuffer(inoutbuf, count, *t, nullptr, kFn, &err, "inoutbuf"))
    return err;
  auto o = CheckOpArg(*st, op, *t, nullptr, kFn, &err);
  if (!o) return err;
  if (count > 0) Apply(*o, datatype, *t, inbuf, inoutbuf, count);
  return MPI_SUCCESS;
}

// ---- memory ----
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
  RONDO_MPI_ENTER("MPI_Alloc_mem");
  if (size < 0 || baseptr == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "size = " + std::to_string(size) +
                          " (must be >= 0) and baseptr not NULL");
  void* p = std::malloc(size > 0 ? static_cast<size_t>(size) : 1);
  if (p == nullptr)
    return RaiseError(nullptr, MPI_ERR_NO_MEM, kFn,
                      "cannot allocate " + std::to_string(size) + " bytes");
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

int PMPI_Free_mem(void* base) {
  std::free(base);
  return MPI_SUCCESS;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
#pragma weak MPI_Type_vector = PMPI_Type_vector
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
#pragma weak MPI_Type_indexed = PMPI_Type_indexed
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
#pragma weak MPI_Type_dup = PMPI_Type_dup
#pragma weak MPI_Type_commit = PMPI_Type_commit
#pragma weak MPI_Type_free = PMPI_Type_free
#pragma weak MPI_Type_size = PMPI_Type_size
#pragma weak MPI_Type_size_x = PMPI_Type_size_x
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
#pragma weak MPI_Type_get_name = PMPI_Type_get_name
#pragma weak MPI_Type_set_name = PMPI_Type_set_name
#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
#pragma weak MPI_Get_address = PMPI_Get_address
#pragma weak MPI_Aint_add = PMPI_Aint_add
#pragma weak MPI_Aint_diff = PMPI_Aint_diff
#pragma weak MPI_Pack = PMPI_Pack
#pragma weak MPI_Unpack = PMPI_Unpack
#pragma weak MPI_Pack_size = PMPI_Pack_size
#pragma weak MPI_Op_create = PMPI_Op_create
#pragma weak MPI_Op_free = PMPI_Op_free
#pragma weak MPI_Op_commutative = PMPI_Op_commutative
#pragma weak MPI_Reduce_local = PMPI_Reduce_local
#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
#pragma weak MPI_Free_mem = PMPI_Free_mem
