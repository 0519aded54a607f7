// MPI-4 sessions (MPI-4.1 §11.3): MPI_Session_init/finalize, the process
// sets "mpi://WORLD" and "mpi://SELF", session info and error handlers.
// A session is a user of the MadMPI instance (AcquireState, state.cc): the
// first of MPI_Init and MPI_Session_init creates it, the last of
// MPI_Finalize and MPI_Session_finalize destroys it, so a sessions-only
// program runs without MPI_Init and both models live side by side.
// Communicators come from a session's groups through
// MPI_Comm_create_from_group (comm.cc).
#include <mpi.h>
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/comm.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {
namespace {

constexpr const char* kPsets[] = {"mpi://WORLD", "mpi://SELF"};
constexpr int kNumPsets = 2;

const char* ThreadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

// The info key "thread_level" of MPI_Session_init (MPI-4.1 §11.3.1): one
// of the four level names, or -1.
int ParseThreadLevel(const std::string& v) {
  for (int l = MPI_THREAD_SINGLE; l <= MPI_THREAD_MULTIPLE; ++l)
    if (strcasecmp(v.c_str(), ThreadLevelName(l)) == 0) return l;
  return -1;
}

}  // namespace

std::shared_ptr<MpiSession> CheckSession(State& st, MPI_Session h,
                                         const char* fn, int* err) {
  auto s = h == MPI_SESSION_NULL ? nullptr : st.sessions.Get(h);
  if (!s)
    *err = RaiseError(nullptr, MPI_ERR_SESSION, fn,
                      "session = " +
                          (h == MPI_SESSION_NULL ? std::string("MPI_SESSION_NULL")
                                                 : std::to_string(h)) +
                          " is not a live session (from MPI_Session_init, "
                          "not finalized)");
  return s;
}

bool PsetMembers(const State& st, const char* name, std::vector<int>* out) {
  if (name == nullptr) return false;
  if (strcasecmp(name, "mpi://WORLD") == 0) {
    out->resize(st.world_size());
    for (int i = 0; i < st.world_size(); ++i) (*out)[i] = i;
    return true;
  }
  if (strcasecmp(name, "mpi://SELF") == 0) {
    out->assign(1, st.world_rank());
    return true;
  }
  return false;
}

}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

// A session's calls: `s` is the session; its errors go to its handler.
#define RONDO_MPI_ENTER_SESSION(fn, handle)                    \
  RONDO_MPI_ENTER(fn);                                         \
  int err = MPI_SUCCESS;                                       \
  std::shared_ptr<MpiSession> s = CheckSession(*st, handle, kFn, &err); \
  if (!s) return err

namespace {
int SessionError(const MpiSession& s, MPI_Session h, int cls, const char* fn,
                 const std::string& message) {
  return RaiseErrorOn(s.errhandler.load(), h, cls, fn, message);
}
}  // namespace

extern "C" {

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler,
                      MPI_Session* session) {
  const char* kFn = "MPI_Session_init";
  // The handler is checked before anything else: errors of this call go
  // to it (MPI-4.1 §11.3.1), or to MPI_ERRORS_ARE_FATAL when it is bad.
  State* cur = Mpi();
  if (cur == nullptr ? errhandler != MPI_ERRORS_ARE_FATAL &&
                             errhandler != MPI_ERRORS_RETURN
                     : !ErrhandlerFits(*cur, errhandler,
                                       ErrhandlerKind::kSession))
    return RaiseErrorOn(MPI_ERRORS_ARE_FATAL, MPI_SESSION_NULL, MPI_ERR_ARG,
                        kFn,
                        ErrhandlerMismatch(errhandler,
                                           ErrhandlerKind::kSession));
  if (session == nullptr)
    return RaiseErrorOn(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, kFn,
                        "session is NULL");
  *session = MPI_SESSION_NULL;
  int level = MPI_THREAD_MULTIPLE;
  auto obj = std::make_shared<MpiSession>();
  if (info != MPI_INFO_NULL) {
    // Info objects live in the instance: without one yet, only
    // MPI_INFO_NULL can be given.
    std::shared_ptr<Info> in = cur ? cur->infos.Get(info) : nullptr;
    if (!in)
      return RaiseErrorOn(errhandler, MPI_SESSION_NULL, MPI_ERR_INFO, kFn,
                          "info = " + std::to_string(info) +
                              " is not a valid info object (MPI_INFO_NULL "
                              "or one from MPI_Info_create)");
    {
      std::lock_guard<std::mutex> lock(cur->detached_mu);
      obj->info = *in;
    }
    if (const std::string* v = obj->info.Find("thread_level")) {
      level = ParseThreadLevel(*v);
      if (level < 0)
        return RaiseErrorOn(errhandler, MPI_SESSION_NULL, MPI_ERR_INFO_VALUE,
                            kFn,
                            "info key thread_level = '" + *v +
                                "' (allowed: MPI_THREAD_SINGLE, _FUNNELED, "
                                "_SERIALIZED, _MULTIPLE)");
    }
  }
  std::string error;
  State* st = AcquireState(/*world=*/false, level, kFn, &error);
  if (st == nullptr)
    return RaiseErrorOn(errhandler, MPI_SESSION_NULL, MPI_ERR_OTHER, kFn,
                        error);
  obj->errhandler.store(errhandler);
  obj->thread_level = st->thread_level;
  obj->info.Set("thread_level", ThreadLevelName(obj->thread_level));
  *session = st->sessions.Add(std::move(obj));
  return MPI_SUCCESS;
}

int PMPI_Session_finalize(MPI_Session* session) {
  const char* kFn = "MPI_Session_finalize";
  State* st = Mpi();
  if (st == nullptr)
    return RaiseError(nullptr, MPI_ERR_OTHER, kFn,
                      "no session is open (MPI was finalised or never "
                      "initialised)");
  if (session == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "session is NULL");
  int err = MPI_SUCCESS;
  if (!CheckSession(*st, *session, kFn, &err)) return err;
  st->sessions.Remove(*session);
  *session = MPI_SESSION_NULL;
  // Outside the engine's call scope (as MPI_Finalize): the instance may go.
  return ReleaseState(/*world=*/false);
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info,
                               int* npset_names) {
  RONDO_MPI_ENTER_SESSION("MPI_Session_get_num_psets", session);
  (void)info;  // no info key changes the list
  if (npset_names == nullptr)
    return SessionError(*s, session, MPI_ERR_ARG, kFn, "npset_names is NULL");
  *npset_names = kNumPsets;
  return MPI_SUCCESS;
}

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n,
                              int* pset_len, char* pset_name) {
  RONDO_MPI_ENTER_SESSION("MPI_Session_get_nth_pset", session);
  (void)info;
  if (n < 0 || n >= kNumPsets)
    return SessionError(*s, session, MPI_ERR_ARG, kFn,
                        "n = " + std::to_string(n) + " (the session has " +
                            std::to_string(kNumPsets) + " process sets: 0.." +
                            std::to_string(kNumPsets - 1) + ")");
  if (pset_len == nullptr || *pset_len < 0)
    return SessionError(*s, session, MPI_ERR_ARG, kFn,
                        pset_len == nullptr
                            ? std::string("pset_len is NULL")
                            : "*pset_len = " + std::to_string(*pset_len) +
                                  " (allowed: 0 to ask the length, or the "
                                  "size of pset_name)");
  const int len = static_cast<int>(std::strlen(kPsets[n])) + 1;
  // *pset_len == 0 asks the length only (MPI-4.1 §11.3.2); otherwise at
  // most *pset_len - 1 characters and the terminating zero are written.
  if (*pset_len > 0) {
    if (pset_name == nullptr)
      return SessionError(*s, session, MPI_ERR_ARG, kFn,
                          "pset_name is NULL with *pset_len = " +
                              std::to_string(*pset_len));
    const int copy = std::min(*pset_len - 1, len - 1);
    std::memcpy(pset_name, kPsets[n], copy);
    pset_name[copy] = 0;
  }
  *pset_len = len;
  return MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name,
                               MPI_Info* info) {
  RONDO_MPI_ENTER_SESSION("MPI_Session_get_pset_info", session);
  if (info == nullptr)
    return SessionError(*s, session, MPI_ERR_ARG, kFn, "info is NULL");
  std::vector<int> members;
  if (!PsetMembers(*st, pset_name, &members))
    return SessionError(*s, session, MPI_ERR_ARG, kFn,
                        std::string("pset_name = '") +
                            (pset_name ? pset_name : "(NULL)") +
                            "' is not a process set (allowed: mpi://WORLD, "
                            "mpi://SELF)");
  auto out = std::make_shared<Info>();
  out->Set("mpi_size", std::to_string(members.size()));
  *info = st->infos.Add(std::move(out));
  return MPI_SUCCESS;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  RONDO_MPI_ENTER_SESSION("MPI_Session_get_info", session);
  if (info_used == nullptr)
    return SessionError(*s, session, MPI_ERR_ARG, kFn, "info_used is NULL");
  std::shared_ptr<Info> out;
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    out = std::make_shared<Info>(s->info);
  }
  *info_used = st->infos.Add(std::move(out));
  return MPI_SUCCESS;
}

int PMPI_Session_create_errhandler(
    MPI_Session_errhandler_function* session_errhandler_fn,
    MPI_Errhandler* errhandler) {
  RONDO_MPI_ENTER("MPI_Session_create_errhandler");
  return NewErrhandler(*st, session_errhandler_fn, ErrhandlerKind::kSession,
                       errhandler, kFn, "session_errhandler_fn");
}

int PMPI_Session_set_errhandler(MPI_Session session,
                                MPI_Errhandler errhandler) {
  RONDO_MPI_ENTER_SESSION("MPI_Session_set_errhandler", session);
  if (!ErrhandlerFits(*st, errhandler, ErrhandlerKind::kSession))
    return SessionError(*s, session, MPI_ERR_ARG, kFn,
                        ErrhandlerMismatch(errhandler,
                                           ErrhandlerKind::kSession));
  s->errhandler.store(errhandler);
  return MPI_SUCCESS;
}

int PMPI_Session_get_errhandler(MPI_Session session,
                                MPI_Errhandler* errhandler) {
  RONDO_MPI_ENTER_SESSION("MPI_Session_get_errhandler", session);
  if (errhandler == nullptr)
    return SessionError(*s, session, MPI_ERR_ARG, kFn, "errhandler is NULL");
  *errhandler = s->errhandler.load();
  if (auto user = st->errhandlers.Get(*errhandler)) user->refs.fetch_add(1);
  return MPI_SUCCESS;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  RONDO_MPI_ENTER_SESSION("MPI_Session_call_errhandler", session);
  CallErrhandlerOn(s->errhandler.load(), session, errorcode, kFn);
  return MPI_SUCCESS;
}

MPI_Fint PMPI_Session_c2f(MPI_Session session) { return session; }

MPI_Session PMPI_Session_f2c(MPI_Fint session) {
  State* st = Mpi();
  return st != nullptr && session != MPI_SESSION_NULL &&
                 st->sessions.Get(session)
             ? session
             : MPI_SESSION_NULL;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): see handles.cc.
#pragma weak MPI_Session_init = PMPI_Session_init
#pragma weak MPI_Session_finalize = PMPI_Session_finalize
#pragma weak MPI_Session_get_num_psets = PMPI_Session_get_num_psets
#pragma weak MPI_Session_get_nth_pset = PMPI_Session_get_nth_pset
#pragma weak MPI_Session_get_pset_info = PMPI_Session_get_pset_info
#pragma weak MPI_Session_get_info = PMPI_Session_get_info
#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler
#pragma weak MPI_Session_set_errhandler = PMPI_Session_set_errhandler
#pragma weak MPI_Session_get_errhandler = PMPI_Session_get_errhandler
#pragma weak MPI_Session_call_errhandler = PMPI_Session_call_errhandler
#pragma weak MPI_Session_c2f = PMPI_Session_c2f
#pragma weak MPI_Session_f2c = PMPI_Session_f2c
