// MadMPI communicators, groups and error handlers (process topologies:
// topo.cc; attributes: attr.cc). A new communicator is created collectively
// by its parent's members; its id (and so the names of its two nmad
// sessions) derives from the parent's id and the parent's creation counter,
// which every member bumps in the same order, so all members open the same
// sessions.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <tuple>

#include "nmad/node.h"
#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/attr.h"
#include "nmad/mpi/internal/coll.h"
#include "nmad/mpi/internal/comm.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {
namespace {

GroupPtr CheckGroup(State& st, MPI_Group h, const Comm* comm,
                    const char* fn, int* err, const char* arg = "group") {
  GroupPtr g = h == MPI_GROUP_NULL ? nullptr : st.groups.Get(h);
  if (!g)
    *err = RaiseError(comm, MPI_ERR_GROUP, fn,
                      std::string(arg) + " = " +
                          (h == MPI_GROUP_NULL ? "MPI_GROUP_NULL"
                                               : std::to_string(h)) +
                          " is not a valid group");
  return g;
}

MPI_Group AddGroup(State& st, std::vector<int> world) {
  auto g = std::make_shared<Group>();
  g->world = std::move(world);
  return st.groups.Add(std::move(g));
}

}  // namespace

int MakeComm(State& st, const Comm& parent, std::string id,
             std::vector<int> members, MPI_Comm* out, const char* fn) {
  std::string err;
  MPI_Comm h = st.NewComm(std::move(id), std::move(members), &err);
  if (h == MPI_COMM_NULL)
    return RaiseError(&parent, MPI_ERR_INTERN, fn,
                      "cannot open the communicator's sessions: " + err);
  st.comms.Get(h)->errhandler.store(parent.errhandler.load());
  *out = h;
  return MPI_SUCCESS;
}

int NewErrhandler(State& st, MPI_Comm_errhandler_function* function,
                  ErrhandlerKind kind, MPI_Errhandler* out, const char* fn,
                  const char* what) {
  if (function == nullptr || out == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, fn,
                      std::string(what) +
                          " and errhandler must not be NULL");
  auto h = std::make_shared<UserErrhandler>();
  h->fn = function;  // one C type for every kind: handles are ints
  h->kind = kind;
  *out = st.errhandlers.Add(std::move(h));
  return MPI_SUCCESS;
}

bool ErrhandlerFits(const State& st, MPI_Errhandler h, ErrhandlerKind kind) {
  if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN) return true;
  auto user = h == MPI_ERRHANDLER_NULL ? nullptr : st.errhandlers.Get(h);
  return user && user->refs.load() > 0 && user->kind == kind;
}

std::string ErrhandlerMismatch(MPI_Errhandler h, ErrhandlerKind kind) {
  const char* what = kind == ErrhandlerKind::kWin       ? "window"
                     : kind == ErrhandlerKind::kSession ? "session"
                                                        : "communicator";
  const char* maker = kind == ErrhandlerKind::kWin ? "MPI_Win_create_errhandler"
                      : kind == ErrhandlerKind::kSession
                          ? "MPI_Session_create_errhandler"
                          : "MPI_Comm_create_errhandler";
  return "errhandler = " + std::to_string(h) + " is not a " + what +
         " error handler (allowed: MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, "
         "or one from " + maker + ")";
}

namespace {

uint32_t HashRanks(const std::vector<int>& v) {
  uint32_t h = 2166136261u;
  for (int x : v) {
    h ^= static_cast<uint32_t>(x);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

int SplitComm(State& st, const CommPtr& c, int color, int key, MPI_Comm* out,
              const char* fn) {
  const uint64_t seq = c->child_seq.fetch_add(1);
  std::vector<int> mine = {color, key};
  std::vector<int> all(2 * c->size);
  int err = InternalAllgather(st, c, mine.data(), all.data(),
                              2 * sizeof(int), fn);
  if (err != MPI_SUCCESS) return err;
  *out = MPI_COMM_NULL;
  if (color == MPI_UNDEFINED) return MPI_SUCCESS;
  std::vector<std::tuple<int, int>> order;  // (key, parent rank)
  for (int r = 0; r < c->size; ++r)
    if (all[2 * r] == color) order.emplace_back(all[2 * r + 1], r);
  std::sort(order.begin(), order.end());
  std::vector<int> members;
  for (auto& [k, r] : order) members.push_back(c->world[r]);
  return MakeComm(st, *c,
                  c->id + "." + std::to_string(seq) + "s" +
                      std::to_string(color),
                  std::move(members), out, fn);
}

namespace {

// MPI_Comm_dup and its variants: a communicator over c's group with c's
// topology, hints (`info` instead when not null) and attributes (their copy
// callbacks run). A callback's error frees the new communicator again
// (*newcomm = MPI_COMM_NULL) and is returned.
int DupComm(State& st, const CommPtr& c, const Info* info, MPI_Comm* newcomm,
            const char* fn) {
  const uint64_t seq = c->child_seq.fetch_add(1);
  int err = MakeComm(st, *c, c->id + "." + std::to_string(seq) + "d",
                     c->world, newcomm, fn);
  if (err != MPI_SUCCESS) return err;
  CommPtr n = st.comms.Get(*newcomm);
  n->topo = c->topo;
  n->dims = c->dims;
  n->periods = c->periods;
  n->sources = c->sources;
  n->destinations = c->destinations;
  n->source_weights = c->source_weights;
  n->dest_weights = c->dest_weights;
  n->weighted = c->weighted;
  n->graph_index = c->graph_index;
  n->graph_edges = c->graph_edges;
  n->neighbors = c->neighbors;
  {
    std::lock_guard<std::mutex> lock(st.detached_mu);
    n->info = info != nullptr ? *info : c->info;
  }
  // A barrier so that no member sends on the new sessions before every
  // member opened them is not needed: nmad keeps early messages.
  err = CopyAttributes(st, *c, *n, fn);
  if (err != MPI_SUCCESS) {
    (void)DeleteAttributes(st, *n, /*raise=*/false, fn);
    st.comms.Remove(*newcomm);
    *newcomm = MPI_COMM_NULL;
  }
  return err;
}

// A request that is complete already (MPI_Comm_idup), or 0 with *err
// raised.
int CompletedRequest(State& st, const Comm& c, const char* fn, int* err) {
  MpiRequest* r = nullptr;
  const int h = st.requests.Acquire(&r);
  if (h == 0) {
    *err = RaiseError(&c, MPI_ERR_NO_MEM, fn,
                      "too many requests in flight (" +
                          std::to_string(RequestTable::kMaxSlots) + ")");
    return 0;
  }
  r->kind = MpiRequest::Kind::kDone;
  r->fn = fn;
  r->status = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
  return h;
}

// MPI_Comm_idup(_with_info): the duplicate is made at once, so the request
// is complete when the call returns (MPI only asks that newcomm be usable
// once it is).
int Idup(State& st, const CommPtr& c, const Info* info, MPI_Comm* newcomm,
         MPI_Request* request, const char* fn) {
  if (newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, fn, "newcomm is NULL");
  if (request == nullptr)
    return RaiseError(c.get(), MPI_ERR_REQUEST, fn,
                      "request is NULL (pass the address of an MPI_Request)");
  int err = MPI_SUCCESS;
  const int h = CompletedRequest(st, *c, fn, &err);
  if (h == 0) return err;
  err = DupComm(st, c, info, newcomm, fn);
  if (err != MPI_SUCCESS) {
    (void)st.requests.Release(h);
    return err;
  }
  *request = h;
  return MPI_SUCCESS;
}

// The info of MPI_Comm_dup_with_info / MPI_Comm_idup_with_info: a copy of
// `h`'s hints, none for MPI_INFO_NULL; false with *err raised for an
// invalid handle.
bool DupInfo(State& st, MPI_Info h, const Comm& c, const char* fn, Info* out,
             int* err) {
  if (h == MPI_INFO_NULL) return true;
  std::shared_ptr<Info> i = CheckInfo(st, h, &c, fn, err);
  if (!i) return false;
  std::lock_guard<std::mutex> lock(st.detached_mu);
  *out = *i;
  return true;
}

}  // namespace
}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

extern "C" {

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_rank", comm);
  if (rank == nullptr) return RaiseError(c.get(), MPI_ERR_ARG, kFn, "rank is NULL");
  *rank = c->rank;
  return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_size", comm);
  if (size == nullptr) return RaiseError(c.get(), MPI_ERR_ARG, kFn, "size is NULL");
  *size = c->size;
  return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_dup", comm);
  if (newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "newcomm is NULL");
  return DupComm(*st, c, nullptr, newcomm, kFn);
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_dup_with_info", comm);
  Info hints;
  if (!DupInfo(*st, info, *c, kFn, &hints, &err)) return err;
  if (newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "newcomm is NULL");
  return DupComm(*st, c, &hints, newcomm, kFn);
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_idup", comm);
  return Idup(*st, c, nullptr, newcomm, request, kFn);
}

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                             MPI_Request* request) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_idup_with_info", comm);
  Info hints;
  if (!DupInfo(*st, info, *c, kFn, &hints, &err)) return err;
  return Idup(*st, c, &hints, newcomm, request, kFn);
}

// Hints are kept, not interpreted: set adds to (or changes) the ones the
// communicator has, get returns them all in a new info object.
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_set_info", comm);
  std::shared_ptr<Info> i = CheckInfo(*st, info, c.get(), kFn, &err);
  if (!i) return err;
  std::lock_guard<std::mutex> lock(st->detached_mu);
  for (const auto& [key, value] : i->entries) c->info.Set(key, value);
  return MPI_SUCCESS;
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_get_info", comm);
  if (info_used == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "info_used is NULL");
  auto copy = std::make_shared<Info>();
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    *copy = c->info;
  }
  *info_used = st->infos.Add(std::move(copy));
  return MPI_SUCCESS;
}

// Every process starts with the job (no MPI_Comm_spawn): no parent.
int PMPI_Comm_get_parent(MPI_Comm* parent) {
  RONDO_MPI_ENTER("MPI_Comm_get_parent");
  (void)st;
  if (parent == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "parent is NULL");
  *parent = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_split", comm);
  if (newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "newcomm is NULL");
  if (color < 0 && color != MPI_UNDEFINED)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "color = " + std::to_string(color) +
                          " (must be >= 0 or MPI_UNDEFINED)");
  return SplitComm(*st, c, color, key, newcomm, kFn);
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info,
                        MPI_Comm* newcomm) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_split_type", comm);
  if (newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "newcomm is NULL");
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "split_type = " + std::to_string(split_type) +
                          " (must be MPI_COMM_TYPE_SHARED or MPI_UNDEFINED)");
  int color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_SHARED) {
    // The host as the placement exchange knows it (nmad/node.h): its name,
    // and its network namespace when that is not the machine's first (the
    // emulated hosts of bench/cluster share one name).
    const std::string host = rondo::nmad::NodeKey();
    uint32_t h = 2166136261u;
    for (char ch : host) {
      h ^= static_cast<uint8_t>(ch);
      h *= 16777619u;
    }
    color = static_cast<int>(h & 0x7fffffff);
  }
  return SplitComm(*st, c, color, key, newcomm, kFn);
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_create", comm);
  GroupPtr g = CheckGroup(*st, group, c.get(), kFn, &err);
  if (!g) return err;
  if (newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "newcomm is NULL");
  for (int w : g->world)
    if (c->from_world[w] < 0)
      return RaiseError(c.get(), MPI_ERR_GROUP, kFn,
                        "group holds a process that is not in comm");
  const uint64_t seq = c->child_seq.fetch_add(1);
  *newcomm = MPI_COMM_NULL;
  if (g->RankOf(st->world_rank()) == MPI_UNDEFINED) return MPI_SUCCESS;
  return MakeComm(*st, *c, c->id + "." + std::to_string(seq) + "g", g->world,
                  newcomm, kFn);
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                          MPI_Comm* newcomm) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_create_group", comm);
  GroupPtr g = CheckGroup(*st, group, c.get(), kFn, &err);
  if (!g) return err;
  if (newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "newcomm is NULL");
  if (!CheckTag(tag, false, *c, kFn, &err)) return err;
  if (g->RankOf(st->world_rank()) == MPI_UNDEFINED)
    return RaiseError(c.get(), MPI_ERR_GROUP, kFn,
                      "the calling process is not in group");
  for (int w : g->world)
    if (c->from_world[w] < 0)
      return RaiseError(c.get(), MPI_ERR_GROUP, kFn,
                        "group holds a process that is not in comm");
  // Only the group's members call: number the creations per (tag, group).
  const std::string key =
      std::to_string(tag) + "/" + std::to_string(HashRanks(g->world));
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    n = st->group_creations[c->id + "|" + key]++;
  }
  return MakeComm(*st, *c, c->id + ".cg" + key + "." + std::to_string(n),
                  g->world, newcomm, kFn);
}

// MPI-4 sessions (session.cc): the group of a process set.
int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name,
                                 MPI_Group* newgroup) {
  RONDO_MPI_ENTER("MPI_Group_from_session_pset");
  int err = MPI_SUCCESS;
  auto s = CheckSession(*st, session, kFn, &err);
  if (!s) return err;
  if (newgroup == nullptr)
    return RaiseErrorOn(s->errhandler.load(), session, MPI_ERR_ARG, kFn,
                        "newgroup is NULL");
  std::vector<int> members;
  if (!PsetMembers(*st, pset_name, &members))
    return RaiseErrorOn(s->errhandler.load(), session, MPI_ERR_ARG, kFn,
                        std::string("pset_name = '") +
                            (pset_name ? pset_name : "(NULL)") +
                            "' is not a process set (allowed: mpi://WORLD, "
                            "mpi://SELF)");
  *newgroup = AddGroup(*st, std::move(members));
  return MPI_SUCCESS;
}

// MPI-4.1 §7.4.2: collective over the group's members, who give the same
// stringtag; no parent communicator. The id names the tag (hashed), the
// group and how many communicators this process made from that pair
// before, so every member opens the same sessions.
int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                                MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm* newcomm) {
  RONDO_MPI_ENTER("MPI_Comm_create_from_group");
  // Errors go to the handler given (MPI_ERRORS_ARE_FATAL if it is bad).
  MPI_Errhandler h = errhandler;
  if (!ErrhandlerFits(*st, errhandler, ErrhandlerKind::kComm))
    return RaiseErrorOn(MPI_ERRORS_ARE_FATAL, MPI_COMM_NULL, MPI_ERR_ARG, kFn,
                        ErrhandlerMismatch(errhandler, ErrhandlerKind::kComm));
  if (newcomm == nullptr)
    return RaiseErrorOn(h, MPI_COMM_NULL, MPI_ERR_ARG, kFn, "newcomm is NULL");
  *newcomm = MPI_COMM_NULL;
  GroupPtr g = group == MPI_GROUP_NULL ? nullptr : st->groups.Get(group);
  if (!g)
    return RaiseErrorOn(h, MPI_COMM_NULL, MPI_ERR_GROUP, kFn,
                        "group = " + std::to_string(group) +
                            " is not a valid group");
  if (stringtag == nullptr)
    return RaiseErrorOn(h, MPI_COMM_NULL, MPI_ERR_ARG, kFn,
                        "stringtag is NULL");
  const size_t tag_len = std::strlen(stringtag);
  if (tag_len >= MPI_MAX_STRINGTAG_LEN)
    return RaiseErrorOn(h, MPI_COMM_NULL, MPI_ERR_ARG, kFn,
                        "stringtag has " + std::to_string(tag_len) +
                            " characters (at most MPI_MAX_STRINGTAG_LEN - 1 "
                            "= " + std::to_string(MPI_MAX_STRINGTAG_LEN - 1) +
                            ")");
  std::shared_ptr<Info> hints;
  if (info != MPI_INFO_NULL && !(hints = st->infos.Get(info)))
    return RaiseErrorOn(h, MPI_COMM_NULL, MPI_ERR_INFO, kFn,
                        "info = " + std::to_string(info) +
                            " is not a valid info object");
  if (g->RankOf(st->world_rank()) == MPI_UNDEFINED)
    return RaiseErrorOn(h, MPI_COMM_NULL, MPI_ERR_GROUP, kFn,
                        "the calling process (job rank " +
                            std::to_string(st->world_rank()) +
                            ") is not in group");
  std::vector<int> tag_bytes(stringtag, stringtag + tag_len);
  const std::string key = std::to_string(HashRanks(tag_bytes)) + "/" +
                          std::to_string(tag_len) + "/" +
                          std::to_string(HashRanks(g->world));
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    n = st->group_creations["fromgroup|" + key]++;
  }
  std::string error;
  MPI_Comm out = st->NewComm("fg" + key + "." + std::to_string(n), g->world,
                             &error);
  if (out == MPI_COMM_NULL)
    return RaiseErrorOn(h, MPI_COMM_NULL, MPI_ERR_INTERN, kFn,
                        "cannot open the communicator's sessions: " + error);
  CommPtr c = st->comms.Get(out);
  c->errhandler.store(errhandler);
  if (hints) {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    c->info = *hints;
  }
  *newcomm = out;
  return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm* comm) {
  RONDO_MPI_ENTER("MPI_Comm_free");
  if (comm == nullptr)
    return RaiseError(nullptr, MPI_ERR_COMM, kFn, "comm is NULL");
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return RaiseError(nullptr, MPI_ERR_COMM, kFn,
                      "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
  int err = MPI_SUCCESS;
  CommPtr c = CheckComm(*st, *comm, kFn, &err);
  if (!c) return err;
  // The attributes' delete callbacks first; one that fails keeps the
  // communicator (and the attributes not deleted yet), as Open MPI and
  // MPICH do.
  err = DeleteAttributes(*st, *c, /*raise=*/true, kFn);
  if (err != MPI_SUCCESS) return err;
  st->comms.Remove(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  RONDO_MPI_ENTER("MPI_Comm_compare");
  int err = MPI_SUCCESS;
  CommPtr a = CheckComm(*st, comm1, kFn, &err);
  if (!a) return err;
  CommPtr b = CheckComm(*st, comm2, kFn, &err);
  if (!b) return err;
  if (result == nullptr)
    return RaiseError(a.get(), MPI_ERR_ARG, kFn, "result is NULL");
  if (comm1 == comm2) {
    *result = MPI_IDENT;
  } else if (a->world == b->world) {
    *result = MPI_CONGRUENT;
  } else {
    auto x = a->world, y = b->world;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = x == y ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_group", comm);
  if (group == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "group is NULL");
  *group = AddGroup(*st, c->world);
  return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_get_name", comm);
  if (comm_name == nullptr || resultlen == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "comm_name and resultlen must not be NULL");
  std::string n;
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    n = c->name;
  }
  n.resize(std::min<size_t>(n.size(), MPI_MAX_OBJECT_NAME - 1));
  std::memcpy(comm_name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_set_name", comm);
  if (comm_name == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "comm_name is NULL");
  std::lock_guard<std::mutex> lock(st->detached_mu);
  c->name = std::string(comm_name).substr(0, MPI_MAX_OBJECT_NAME - 1);
  return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_test_inter", comm);
  if (flag == nullptr) return RaiseError(c.get(), MPI_ERR_ARG, kFn, "flag is NULL");
  *flag = 0;  // Rondo has intracommunicators only
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_remote_size", comm);
  (void)size;
  return RaiseError(c.get(), MPI_ERR_COMM, kFn,
                    "comm is an intracommunicator (MPI_Comm_remote_size "
                    "needs an intercommunicator)");
}

// ---- error handlers ----
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_set_errhandler", comm);
  if (!ErrhandlerFits(*st, errhandler, ErrhandlerKind::kComm))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      ErrhandlerMismatch(errhandler, ErrhandlerKind::kComm));
  c->errhandler.store(errhandler);
  return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_get_errhandler", comm);
  if (errhandler == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "errhandler is NULL");
  *errhandler = c->errhandler.load();
  if (auto user = st->errhandlers.Get(*errhandler)) user->refs.fetch_add(1);
  return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                               MPI_Errhandler* errhandler) {
  RONDO_MPI_ENTER("MPI_Comm_create_errhandler");
  if (function == nullptr || errhandler == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "function and errhandler must not be NULL");
  auto h = std::make_shared<UserErrhandler>();
  h->fn = function;
  *errhandler = st->errhandlers.Add(std::move(h));
  return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  RONDO_MPI_ENTER_COMM("MPI_Comm_call_errhandler", comm);
  (void)CallErrhandler(c.get(), errorcode, kFn);
  return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  RONDO_MPI_ENTER("MPI_Errhandler_free");
  if (errhandler == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "errhandler is NULL");
  if (*errhandler != MPI_ERRORS_ARE_FATAL &&
      *errhandler != MPI_ERRORS_RETURN) {
    auto user = st->errhandlers.Get(*errhandler);
    int refs = user ? user->refs.load() : 0;
    while (refs > 0 && !user->refs.compare_exchange_weak(refs, refs - 1)) {
    }
    if (refs <= 0)
      return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                        "errhandler = " + std::to_string(*errhandler) +
                            " is not a valid error handler (already freed?)");
  }
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

// ---- groups ----
int PMPI_Group_size(MPI_Group group, int* size) {
  RONDO_MPI_ENTER("MPI_Group_size");
  int err = MPI_SUCCESS;
  GroupPtr g = CheckGroup(*st, group, nullptr, kFn, &err);
  if (!g) return err;
  if (size == nullptr) return RaiseError(nullptr, MPI_ERR_ARG, kFn, "size is NULL");
  *size = static_cast<int>(g->world.size());
  return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int* rank) {
  RONDO_MPI_ENTER("MPI_Group_rank");
  int err = MPI_SUCCESS;
  GroupPtr g = CheckGroup(*st, group, nullptr, kFn, &err);
  if (!g) return err;
  if (rank == nullptr) return RaiseError(nullptr, MPI_ERR_ARG, kFn, "rank is NULL");
  *rank = g->RankOf(st->world_rank());
  return MPI_SUCCESS;
}

static bool CheckGroupRanks(const Group& g, int n, const int* ranks,
                            const char* fn, int* err) {
  if (n < 0 || (n > 0 && ranks == nullptr)) {
    *err = RaiseError(nullptr, MPI_ERR_ARG, fn,
                      "n = " + std::to_string(n) +
                          " must be >= 0 and ranks not NULL when n > 0");
    return false;
  }
  std::vector<bool> seen(g.world.size(), false);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= static_cast<int>(g.world.size()) ||
        seen[ranks[i]]) {
      *err = RaiseError(nullptr, MPI_ERR_RANK, fn,
                        "ranks[" + std::to_string(i) + "] = " +
                            std::to_string(ranks[i]) +
                            " (must be a distinct rank in 0.." +
                            std::to_string(g.world.size() - 1) + ")");
      return false;
    }
    seen[ranks[i]] = true;
  }
  return true;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
                   MPI_Group* newgroup) {
  RONDO_MPI_ENTER("MPI_Group_incl");
  int err = MPI_SUCCESS;
  GroupPtr g = CheckGroup(*st, group, nullptr, kFn, &err);
  if (!g) return err;
  if (newgroup == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "newgroup is NULL");
  if (!CheckGroupRanks(*g, n, ranks, kFn, &err)) return err;
  std::vector<int> w;
  for (int i = 0; i < n; ++i) w.push_back(g->world[ranks[i]]);
  *newgroup = n == 0 ? MPI_GROUP_EMPTY : AddGroup(*st, std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
                   MPI_Group* newgroup) {
  RONDO_MPI_ENTER("MPI_Group_excl");
  int err = MPI_SUCCESS;
  GroupPtr g = CheckGroup(*st, group, nullptr, kFn, &err);
  if (!g) return err;
  if (newgroup == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "newgroup is NULL");
  if (!CheckGroupRanks(*g, n, ranks, kFn, &err)) return err;
  std::vector<bool> out(g->world.size(), false);
  for (int i = 0; i < n; ++i) out[ranks[i]] = true;
  std::vector<int> w;
  for (size_t i = 0; i < g->world.size(); ++i)
    if (!out[i]) w.push_back(g->world[i]);
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : AddGroup(*st, std::move(w));
  return MPI_SUCCESS;
}

// The ranks the triplets ranges[0..n) (first, last, stride) of
// MPI_Group_range_incl/excl name, in order, or false with *err raised.
// first and last must be ranks of the group and the stride must lead from
// first towards last (a positive stride for first <= last, a negative one
// for first >= last): Open MPI and MPICH refuse the others; every rank may
// be named once.
static bool ExpandRanges(const Group& g, int n, int ranges[][3],
                         const char* fn, int* err, std::vector<int>* out) {
  if (n < 0) {
    *err = RaiseError(nullptr, MPI_ERR_ARG, fn,
                      "n = " + std::to_string(n) + " (must be >= 0)");
    return false;
  }
  if (n > 0 && ranges == nullptr) {
    *err = RaiseError(nullptr, MPI_ERR_ARG, fn,
                      "ranges is NULL with n = " + std::to_string(n));
    return false;
  }
  const int size = static_cast<int>(g.world.size());
  std::vector<int> named_by(g.world.size(), -1);  // the triplet, or -1
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    const std::string triplet = "ranges[" + std::to_string(i) + "] = {" +
                                std::to_string(first) + ", " +
                                std::to_string(last) + ", " +
                                std::to_string(stride) + "}";
    if (stride == 0) {
      *err = RaiseError(nullptr, MPI_ERR_ARG, fn,
                        triplet + ": the stride must not be 0");
      return false;
    }
    for (int r : {first, last})
      if (r < 0 || r >= size) {
        *err = RaiseError(nullptr, MPI_ERR_RANK, fn,
                          triplet + ": " + std::to_string(r) +
                              " is not a rank of the group (0.." +
                              std::to_string(size - 1) + ")");
        return false;
      }
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
      *err = RaiseError(nullptr, MPI_ERR_RANK, fn,
                        triplet + ": a stride of " + std::to_string(stride) +
                            " leads away from last (it must be " +
                            (stride > 0 ? "negative" : "positive") +
                            " to go from first to last)");
      return false;
    }
    for (int64_t r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (named_by[r] >= 0) {
        *err = RaiseError(nullptr, MPI_ERR_RANK, fn,
                          triplet + " names rank " + std::to_string(r) +
                              ", which ranges[" +
                              std::to_string(named_by[r]) +
                              "] named already (each rank at most once)");
        return false;
      }
      named_by[r] = i;
      out->push_back(static_cast<int>(r));
    }
  }
  return true;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                         MPI_Group* newgroup) {
  RONDO_MPI_ENTER("MPI_Group_range_incl");
  int err = MPI_SUCCESS;
  GroupPtr g = CheckGroup(*st, group, nullptr, kFn, &err);
  if (!g) return err;
  if (newgroup == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "newgroup is NULL");
  std::vector<int> ranks;
  if (!ExpandRanges(*g, n, ranges, kFn, &err, &ranks)) return err;
  std::vector<int> w;
  for (int r : ranks) w.push_back(g->world[r]);
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : AddGroup(*st, std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                         MPI_Group* newgroup) {
  RONDO_MPI_ENTER("MPI_Group_range_excl");
  int err = MPI_SUCCESS;
  GroupPtr g = CheckGroup(*st, group, nullptr, kFn, &err);
  if (!g) return err;
  if (newgroup == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "newgroup is NULL");
  std::vector<int> ranks;
  if (!ExpandRanges(*g, n, ranges, kFn, &err, &ranks)) return err;
  std::vector<bool> out(g->world.size(), false);
  for (int r : ranks) out[r] = true;
  std::vector<int> w;
  for (size_t i = 0; i < g->world.size(); ++i)
    if (!out[i]) w.push_back(g->world[i]);
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : AddGroup(*st, std::move(w));
  return MPI_SUCCESS;
}

// MPI_Group_union, _intersection and _difference (MPI-4 §7.3.2): union is
// group1's processes then those of group2 not in group1, in group2's
// order; intersection and difference keep group1's processes (those in
// group2, those not) in group1's order. An empty result is
// MPI_GROUP_EMPTY.
enum class SetOp { kUnion, kIntersection, kDifference };

static int GroupSetOp(MPI_Group group1, MPI_Group group2,
                      MPI_Group* newgroup, SetOp op, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  GroupPtr a = CheckGroup(*st, group1, nullptr, kFn, &err, "group1");
  if (!a) return err;
  GroupPtr b = CheckGroup(*st, group2, nullptr, kFn, &err, "group2");
  if (!b) return err;
  if (newgroup == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "newgroup is NULL");
  // Job ranks as marks: groups hold ranks of this job only.
  std::vector<char> in_b(static_cast<size_t>(st->world_size()), 0);
  for (int w : b->world) in_b[w] = 1;
  std::vector<int> w;
  for (int x : a->world)
    if (op == SetOp::kUnion || (in_b[x] != 0) == (op == SetOp::kIntersection))
      w.push_back(x);
  if (op == SetOp::kUnion) {
    std::vector<char> in_a(static_cast<size_t>(st->world_size()), 0);
    for (int x : a->world) in_a[x] = 1;
    for (int x : b->world)
      if (!in_a[x]) w.push_back(x);
  }
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : AddGroup(*st, std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2,
                     MPI_Group* newgroup) {
  return GroupSetOp(group1, group2, newgroup, SetOp::kUnion,
                    "MPI_Group_union");
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2,
                            MPI_Group* newgroup) {
  return GroupSetOp(group1, group2, newgroup, SetOp::kIntersection,
                    "MPI_Group_intersection");
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2,
                          MPI_Group* newgroup) {
  return GroupSetOp(group1, group2, newgroup, SetOp::kDifference,
                    "MPI_Group_difference");
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                              MPI_Group group2, int ranks2[]) {
  RONDO_MPI_ENTER("MPI_Group_translate_ranks");
  int err = MPI_SUCCESS;
  GroupPtr a = CheckGroup(*st, group1, nullptr, kFn, &err, "group1");
  if (!a) return err;
  GroupPtr b = CheckGroup(*st, group2, nullptr, kFn, &err, "group2");
  if (!b) return err;
  if (n < 0 || (n > 0 && (ranks1 == nullptr || ranks2 == nullptr)))
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "n must be >= 0, ranks1 and ranks2 not NULL");
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (ranks1[i] < 0 || ranks1[i] >= static_cast<int>(a->world.size()))
      return RaiseError(nullptr, MPI_ERR_RANK, kFn,
                        "ranks1[" + std::to_string(i) + "] = " +
                            std::to_string(ranks1[i]) + " is not in group1");
    ranks2[i] = b->RankOf(a->world[ranks1[i]]);
  }
  return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  RONDO_MPI_ENTER("MPI_Group_compare");
  int err = MPI_SUCCESS;
  GroupPtr a = CheckGroup(*st, group1, nullptr, kFn, &err, "group1");
  if (!a) return err;
  GroupPtr b = CheckGroup(*st, group2, nullptr, kFn, &err, "group2");
  if (!b) return err;
  if (result == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "result is NULL");
  if (a->world == b->world) {
    *result = MPI_IDENT;
  } else {
    auto x = a->world, y = b->world;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = x == y ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

int PMPI_Group_free(MPI_Group* group) {
  RONDO_MPI_ENTER("MPI_Group_free");
  if (group == nullptr)
    return RaiseError(nullptr, MPI_ERR_GROUP, kFn, "group is NULL");
  if (*group != MPI_GROUP_EMPTY && !st->groups.Remove(*group))
    return RaiseError(nullptr, MPI_ERR_GROUP, kFn,
                      "group = " + std::to_string(*group) +
                          " is not a valid group");
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Comm_rank = PMPI_Comm_rank
#pragma weak MPI_Comm_size = PMPI_Comm_size
#pragma weak MPI_Comm_dup = PMPI_Comm_dup
#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
#pragma weak MPI_Comm_idup = PMPI_Comm_idup
#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info
#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
#pragma weak MPI_Comm_split = PMPI_Comm_split
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
#pragma weak MPI_Comm_create = PMPI_Comm_create
#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
#pragma weak MPI_Group_from_session_pset = PMPI_Group_from_session_pset
#pragma weak MPI_Comm_create_from_group = PMPI_Comm_create_from_group
#pragma weak MPI_Comm_free = PMPI_Comm_free
#pragma weak MPI_Comm_compare = PMPI_Comm_compare
#pragma weak MPI_Comm_group = PMPI_Comm_group
#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
#pragma weak MPI_Group_size = PMPI_Group_size
#pragma weak MPI_Group_rank = PMPI_Group_rank
#pragma weak MPI_Group_incl = PMPI_Group_incl
#pragma weak MPI_Group_excl = PMPI_Group_excl
#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
#pragma weak MPI_Group_union = PMPI_Group_union
#pragma weak MPI_Group_intersection = PMPI_Group_intersection
#pragma weak MPI_Group_difference = PMPI_Group_difference
#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
#pragma weak MPI_Group_compare = PMPI_Group_compare
#pragma weak MPI_Group_free = PMPI_Group_free
