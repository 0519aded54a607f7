// MadMPI communicator attributes (MPI-4 §7.7): the predefined keys
// (MPI_TAG_UB ... MPI_LASTUSEDCODE, read-only) and user keys with their
// copy and delete callbacks. See internal/attr.h.
//
// Locking: State::attr_mu guards every communicator's attribute list and
// the keys' use counts; it is never held while a callback runs (a callback
// may call MPI), so each step copies what it needs under the lock, runs
// the callback, then updates the list under the lock again.
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/attr.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {
namespace {

bool IsPredefinedKeyval(int keyval) {
  return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

// The user key `keyval`, or null with *err raised (MPI_ERR_KEYVAL).
std::shared_ptr<Keyval> UserKeyval(State& st, int keyval, const Comm* comm,
                                   const char* fn, int* err) {
  if (IsPredefinedKeyval(keyval)) {
    *err = RaiseError(comm, MPI_ERR_KEYVAL, fn,
                      "comm_keyval = " + std::to_string(keyval) +
                          " is a predefined key (MPI_TAG_UB .. "
                          "MPI_LASTUSEDCODE): read-only, and never freed");
    return nullptr;
  }
  std::shared_ptr<Keyval> k =
      keyval == MPI_KEYVAL_INVALID ? nullptr : st.keyvals.Get(keyval);
  if (!k)
    *err = RaiseError(comm, MPI_ERR_KEYVAL, fn,
                      "comm_keyval = " +
                          (keyval == MPI_KEYVAL_INVALID
                               ? std::string("MPI_KEYVAL_INVALID")
                               : std::to_string(keyval)) +
                          " is not a key of MPI_Comm_create_keyval (never "
                          "created, or freed and no longer in use)");
  return k;
}

// The attribute of `key` in `c`, or null. attr_mu held.
Attribute* Find(Comm& c, const Keyval* key) {
  for (Attribute& a : c.attrs)
    if (a.key.get() == key) return &a;
  return nullptr;
}

// Removes the attribute of `key` from `c` if it is there and releases its
// use of the key: a freed key leaves the table with its last attribute.
// attr_mu held.
void Remove(State& st, Comm& c, const Keyval* key) {
  for (auto it = c.attrs.begin(); it != c.attrs.end(); ++it) {
    if (it->key.get() != key) continue;
    std::shared_ptr<Keyval> k = std::move(it->key);
    c.attrs.erase(it);
    if (--k->uses == 0 && k->freed) (void)st.keyvals.Remove(k->handle);
    return;
  }
}

int CallDelete(const Attribute& a, MPI_Comm handle) {
  if (a.key->delete_fn == nullptr) return MPI_SUCCESS;
  return a.key->delete_fn(handle, a.key->handle, a.value,
                          a.key->extra_state);
}

// A callback returned `rc` != MPI_SUCCESS: raised on `c` with the class of
// rc when it is an error code (as MPICH does), else MPI_ERR_OTHER.
int CallbackError(const Comm* c, int rc, const char* which, int keyval,
                  const char* fn) {
  const int cls = IsErrorCode(rc) ? ErrorClassOf(rc) : MPI_ERR_OTHER;
  return RaiseError(c, cls == MPI_SUCCESS ? MPI_ERR_OTHER : cls, fn,
                    std::string("the ") + which +
                        " callback of comm_keyval = " +
                        std::to_string(keyval) + " returned " +
                        std::to_string(rc) + " (" + ErrorText(rc) + ")");
}

}  // namespace

int CopyAttributes(State& st, const Comm& from, Comm& to, const char* fn) {
  std::vector<Attribute> attrs;
  {
    std::lock_guard<std::mutex> lock(st.attr_mu);
    attrs = from.attrs;
  }
  for (const Attribute& a : attrs) {
    MPI_Comm_copy_attr_function* copy = a.key->copy_fn;
    if (copy == nullptr) continue;  // as MPI_COMM_NULL_COPY_FN
    void* out = nullptr;
    int flag = 0;
    const int rc = copy(from.handle, a.key->handle, a.key->extra_state,
                        a.value, &out, &flag);
    if (rc != MPI_SUCCESS)
      return CallbackError(&from, rc, "copy", a.key->handle, fn);
    if (!flag) continue;
    std::lock_guard<std::mutex> lock(st.attr_mu);
    ++a.key->uses;
    Remove(st, to, a.key.get());
    to.attrs.push_back({a.key, out});
  }
  return MPI_SUCCESS;
}

int DeleteAttributes(State& st, Comm& c, bool raise, const char* fn) {
  for (;;) {
    Attribute last;
    {
      std::lock_guard<std::mutex> lock(st.attr_mu);
      if (c.attrs.empty()) return MPI_SUCCESS;
      last = c.attrs.back();
    }
    const int rc = CallDelete(last, c.handle);
    if (rc != MPI_SUCCESS && raise)
      return CallbackError(&c, rc, "delete", last.key->handle, fn);
    std::lock_guard<std::mutex> lock(st.attr_mu);
    Remove(st, c, last.key.get());
  }
}

}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

extern "C" {

// The predefined callbacks (mpi.h: MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN,
// MPI_COMM_NULL_DELETE_FN).
int rondo_mpi_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*,
                                int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int rondo_mpi_comm_dup_fn(MPI_Comm, int, void*, void* attribute_val_in,
                          void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}

int rondo_mpi_comm_null_delete_fn(MPI_Comm, int, void*, void*) {
  return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                            int* comm_keyval, void* extra_state) {
  RONDO_MPI_ENTER("MPI_Comm_create_keyval");
  if (comm_keyval == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "comm_keyval is NULL");
  auto k = std::make_shared<Keyval>();
  // NULL callbacks (MPICH spells MPI_COMM_NULL_COPY_FN and
  // MPI_COMM_NULL_DELETE_FN so) act as the null ones.
  k->copy_fn = comm_copy_attr_fn;
  k->delete_fn = comm_delete_attr_fn;
  k->extra_state = extra_state;
  Keyval* raw = k.get();
  const int h = st->keyvals.Add(std::move(k));
  raw->handle = h;  // before the handle is returned to anyone
  *comm_keyval = h;
  return MPI_SUCCESS;
}

// The key is marked freed and the caller's handle becomes
// MPI_KEYVAL_INVALID; attributes that use it keep it (their callbacks run
// as usual) until they are deleted.
int PMPI_Comm_free_keyval(int* comm_keyval) {
  RONDO_MPI_ENTER("MPI_Comm_free_keyval");
  if (comm_keyval == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "comm_keyval is NULL");
  int err = MPI_SUCCESS;
  std::shared_ptr<Keyval> k =
      UserKeyval(*st, *comm_keyval, nullptr, kFn, &err);
  if (!k) return err;
  bool already = false;
  {
    std::lock_guard<std::mutex> lock(st->attr_mu);
    already = k->freed;
    k->freed = true;
    if (!already && k->uses == 0) (void)st->keyvals.Remove(k->handle);
  }
  if (already)
    return RaiseError(nullptr, MPI_ERR_KEYVAL, kFn,
                      "comm_keyval = " + std::to_string(*comm_keyval) +
                          " was freed already (its attributes still use it)");
  *comm_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

// A value already there for the key is deleted first (its delete callback;
// if that fails, the old value stays and the call fails). The attribute
// then counts as set last (for the deletion order).
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_set_attr", comm);
  std::shared_ptr<Keyval> k = UserKeyval(*st, comm_keyval, c.get(), kFn, &err);
  if (!k) return err;
  Attribute old;
  {
    std::lock_guard<std::mutex> lock(st->attr_mu);
    if (Attribute* a = Find(*c, k.get())) old = *a;
  }
  if (old.key) {
    const int rc = CallDelete(old, c->handle);
    if (rc != MPI_SUCCESS)
      return CallbackError(c.get(), rc, "delete", comm_keyval, kFn);
  }
  std::lock_guard<std::mutex> lock(st->attr_mu);
  ++k->uses;
  Remove(*st, *c, k.get());
  c->attrs.push_back({std::move(k), attribute_val});
  return MPI_SUCCESS;
}

// Deleting a key that has no value on comm does nothing (as MPICH; Open MPI
// 4.1 refuses it with MPI_ERR_OTHER).
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_delete_attr", comm);
  std::shared_ptr<Keyval> k = UserKeyval(*st, comm_keyval, c.get(), kFn, &err);
  if (!k) return err;
  Attribute old;
  {
    std::lock_guard<std::mutex> lock(st->attr_mu);
    if (Attribute* a = Find(*c, k.get())) old = *a;
  }
  if (!old.key) return MPI_SUCCESS;
  const int rc = CallDelete(old, c->handle);
  if (rc != MPI_SUCCESS)
    return CallbackError(c.get(), rc, "delete", comm_keyval, kFn);
  std::lock_guard<std::mutex> lock(st->attr_mu);
  Remove(*st, *c, k.get());
  return MPI_SUCCESS;
}

// Predefined keys give a pointer to their int value (on every
// communicator); user keys the value set, with *flag = 0 when there is
// none.
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val,
                       int* flag) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_get_attr", comm);
  if (attribute_val == nullptr || flag == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "attribute_val and flag must not be NULL");
  const int* value = nullptr;
  switch (comm_keyval) {
    case MPI_TAG_UB: value = &st->attr_tag_ub; break;
    case MPI_HOST: value = &st->attr_host; break;
    case MPI_IO: value = &st->attr_io; break;
    case MPI_WTIME_IS_GLOBAL: value = &st->attr_wtime_is_global; break;
    case MPI_UNIVERSE_SIZE: value = &st->attr_universe_size; break;
    case MPI_APPNUM: value = &st->attr_appnum; break;
    case MPI_LASTUSEDCODE: value = &st->attr_lastusedcode; break;
    default: {
      std::shared_ptr<Keyval> k =
          UserKeyval(*st, comm_keyval, c.get(), kFn, &err);
      if (!k) return err;
      std::lock_guard<std::mutex> lock(st->attr_mu);
      const Attribute* a = Find(*c, k.get());
      *flag = a != nullptr;
      if (a != nullptr) *static_cast<void**>(attribute_val) = a->value;
      return MPI_SUCCESS;
    }
  }
  *static_cast<const int**>(attribute_val) = value;
  *flag = 1;
  return MPI_SUCCESS;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
