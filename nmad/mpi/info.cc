// MadMPI info objects (MPI-4 §10): key/value pairs that Rondo keeps and
// does not interpret, numbered in the order the keys were first set (as
// Open MPI and MPICH do). The objects live in State::infos; their contents
// are guarded by State::detached_mu.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {
namespace {

// A key argument: 1..MPI_MAX_INFO_KEY characters (MPI_ERR_INFO_KEY).
bool CheckKey(const char* key, const char* fn, int* err) {
  const size_t n = key == nullptr ? 0 : std::strlen(key);
  if (key != nullptr && n > 0 && n <= MPI_MAX_INFO_KEY) return true;
  *err = RaiseError(nullptr, MPI_ERR_INFO_KEY, fn,
                    key == nullptr
                        ? std::string("key is NULL")
                        : "key \"" + std::string(key).substr(0, 40) +
                              (n > 40 ? "...\"" : "\"") + " has " +
                              std::to_string(n) + " characters (must be 1.." +
                              std::to_string(MPI_MAX_INFO_KEY) +
                              ", MPI_MAX_INFO_KEY)");
  return false;
}

}  // namespace
}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
  RONDO_MPI_ENTER("MPI_Info_create");
  if (info == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "info is NULL");
  *info = st->infos.Add(std::make_shared<Info>());
  return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  RONDO_MPI_ENTER("MPI_Info_set");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i || !CheckKey(key, kFn, &err)) return err;
  if (value == nullptr || std::strlen(value) > MPI_MAX_INFO_VAL)
    return RaiseError(nullptr, MPI_ERR_INFO_VALUE, kFn,
                      "value must be at most " +
                          std::to_string(MPI_MAX_INFO_VAL) +
                          " characters (MPI_MAX_INFO_VAL)");
  std::lock_guard<std::mutex> lock(st->detached_mu);
  i->Set(key, value);
  return MPI_SUCCESS;
}

// value receives at most valuelen characters and a terminator.
int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value,
                  int* flag) {
  RONDO_MPI_ENTER("MPI_Info_get");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i || !CheckKey(key, kFn, &err)) return err;
  if (value == nullptr || flag == nullptr || valuelen < 0)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "value and flag must not be NULL, valuelen = " +
                          std::to_string(valuelen) + " must be >= 0");
  std::lock_guard<std::mutex> lock(st->detached_mu);
  const std::string* v = i->Find(key);
  *flag = v != nullptr;
  if (v != nullptr) {
    const size_t n = std::min<size_t>(v->size(), valuelen);
    std::memcpy(value, v->data(), n);
    value[n] = 0;
  }
  return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info* info) {
  RONDO_MPI_ENTER("MPI_Info_free");
  if (info == nullptr)
    return RaiseError(nullptr, MPI_ERR_INFO, kFn, "info is NULL");
  if (*info == MPI_INFO_NULL || !st->infos.Remove(*info))
    return RaiseError(nullptr, MPI_ERR_INFO, kFn,
                      "info = " + std::to_string(*info) +
                          " is not a valid info object (MPI_INFO_NULL, "
                          "freed, or never created)");
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  RONDO_MPI_ENTER("MPI_Info_dup");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i) return err;
  if (newinfo == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "newinfo is NULL");
  auto copy = std::make_shared<Info>();
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    *copy = *i;
  }
  *newinfo = st->infos.Add(std::move(copy));
  return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char* key) {
  RONDO_MPI_ENTER("MPI_Info_delete");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i || !CheckKey(key, kFn, &err)) return err;
  bool erased;
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    erased = i->Erase(key);
  }
  if (!erased)
    return RaiseError(nullptr, MPI_ERR_INFO_NOKEY, kFn,
                      "key \"" + std::string(key) +
                          "\" is not in info = " + std::to_string(info));
  return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  RONDO_MPI_ENTER("MPI_Info_get_nkeys");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i) return err;
  if (nkeys == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "nkeys is NULL");
  std::lock_guard<std::mutex> lock(st->detached_mu);
  *nkeys = static_cast<int>(i->entries.size());
  return MPI_SUCCESS;
}

// key needs room for MPI_MAX_INFO_KEY characters and a terminator.
int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  RONDO_MPI_ENTER("MPI_Info_get_nthkey");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i) return err;
  if (key == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "key is NULL");
  std::string k;
  int nkeys;
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    nkeys = static_cast<int>(i->entries.size());
    if (n >= 0 && n < nkeys) k = i->entries[n].first;
  }
  if (n < 0 || n >= nkeys)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "n = " + std::to_string(n) + " (the info has " +
                          std::to_string(nkeys) + " keys: n must be 0.." +
                          std::to_string(nkeys - 1) + ")");
  std::memcpy(key, k.c_str(), k.size() + 1);
  return MPI_SUCCESS;
}

// *valuelen: the value's length without its terminator.
int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen,
                           int* flag) {
  RONDO_MPI_ENTER("MPI_Info_get_valuelen");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i || !CheckKey(key, kFn, &err)) return err;
  if (valuelen == nullptr || flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "valuelen and flag must not be NULL");
  std::lock_guard<std::mutex> lock(st->detached_mu);
  const std::string* v = i->Find(key);
  *flag = v != nullptr;
  if (v != nullptr) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}

// MPI-4: with the key there, value gets at most *buflen - 1 characters and
// a terminator (nothing when *buflen is 0), and *buflen becomes the room
// the whole value needs (its length + 1); without it, *flag = 0 and
// neither changes.
int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen,
                         char* value, int* flag) {
  RONDO_MPI_ENTER("MPI_Info_get_string");
  int err = MPI_SUCCESS;
  std::shared_ptr<Info> i = CheckInfo(*st, info, nullptr, kFn, &err);
  if (!i || !CheckKey(key, kFn, &err)) return err;
  if (buflen == nullptr || flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "buflen and flag must not be NULL");
  if (*buflen < 0 || (*buflen > 0 && value == nullptr))
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "*buflen = " + std::to_string(*buflen) +
                          " (must be >= 0, with value not NULL when > 0)");
  std::lock_guard<std::mutex> lock(st->detached_mu);
  const std::string* v = i->Find(key);
  *flag = v != nullptr;
  if (v == nullptr) return MPI_SUCCESS;
  if (*buflen > 0) {
    const size_t n = std::min<size_t>(v->size(), *buflen - 1);
    std::memcpy(value, v->data(), n);
    value[n] = 0;
  }
  *buflen = static_cast<int>(v->size()) + 1;
  return MPI_SUCCESS;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Info_create = PMPI_Info_create
#pragma weak MPI_Info_set = PMPI_Info_set
#pragma weak MPI_Info_get = PMPI_Info_get
#pragma weak MPI_Info_free = PMPI_Info_free
#pragma weak MPI_Info_dup = PMPI_Info_dup
#pragma weak MPI_Info_delete = PMPI_Info_delete
#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
#pragma weak MPI_Info_get_string = PMPI_Info_get_string
