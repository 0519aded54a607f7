// The MadMPI instance, error handling and the environment calls (MPI_Init,
// MPI_Finalize, MPI_Wtime, ...). See internal/state.h.
#include <mpi.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"
#include "nmad/node.h"
#include "nmad/mpi/config.h"
#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/attr.h"
#include "nmad/mpi/internal/requests.h"
#include "nmad/mpi/internal/state.h"
#include "topology/base/config_registry.h"
#include "topology/base/log.h"

namespace rondo::nmad::mpi {
namespace {

// The documented global instance behind the C API (see state.h).
std::atomic<State*> g_state{nullptr};
std::atomic<int> g_phase{0};  // 0 before Init, 1 initialised, 2 finalized

// Error messages: a code is class + 64 * k, where k indexes a ring of the
// last messages, so MPI_Error_string can name the offending argument.
// Classes and codes of MPI_Add_error_class/code are kUserErrorBase + i,
// above every such code (entry i of `user_class` and `user_text`).
constexpr int kClassSpan = 64;
constexpr int kMessages = 4096;
constexpr int kUserErrorBase = 1 << 20;
static_assert(kClassSpan * (kMessages + 1) <= kUserErrorBase);
struct ErrorLog {
  std::mutex mu;
  std::string messages[kMessages];
  int next = 0;
  std::vector<int> user_class;  // a class's own value for a class
  std::vector<std::string> user_text;
  // The entry of a user class or code, or -1. mu held.
  int UserIndex(int code) const {
    if (code < kUserErrorBase) return -1;
    const int64_t i = int64_t{code} - kUserErrorBase;
    return i < static_cast<int64_t>(user_class.size()) ? static_cast<int>(i)
                                                        : -1;
  }
};
ErrorLog& Log() {
  static ErrorLog log;  // messages only; holds no job state
  return log;
}

const char* ClassText(int c) {
  switch (c) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid reduce operation";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: other error";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code in status";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL: invalid key value";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY: invalid info key";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE: invalid info value";
    case MPI_ERR_INFO_NOKEY: return "MPI_ERR_INFO_NOKEY: no such info key";
    case MPI_ERR_INFO: return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_WIN: return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE: invalid size";
    case MPI_ERR_DISP: return "MPI_ERR_DISP: invalid displacement";
    case MPI_ERR_BASE: return "MPI_ERR_BASE: invalid base address";
    case MPI_ERR_SPAWN: return "MPI_ERR_SPAWN: cannot spawn processes";
    case MPI_ERR_PORT: return "MPI_ERR_PORT: invalid port name";
    case MPI_ERR_SERVICE: return "MPI_ERR_SERVICE: invalid service name";
    case MPI_ERR_NAME: return "MPI_ERR_NAME: invalid name";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT: invalid assert argument";
    case MPI_ERR_RMA_CONFLICT:
      return "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window";
    case MPI_ERR_RMA_SYNC:
      return "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "MPI_ERR_UNSUPPORTED_OPERATION: not supported by Rondo";
    case MPI_ERR_SESSION: return "MPI_ERR_SESSION: invalid session";
    case MPI_ERR_RMA_RANGE:
      return "MPI_ERR_RMA_RANGE: target memory outside the window";
    case MPI_ERR_RMA_ATTACH:
      return "MPI_ERR_RMA_ATTACH: memory cannot be attached";
    case MPI_ERR_RMA_SHARED:
      return "MPI_ERR_RMA_SHARED: memory cannot be shared";
    case MPI_ERR_RMA_FLAVOR:
      return "MPI_ERR_RMA_FLAVOR: wrong window flavor";
    case MPIX_ERR_PROC_FAILED:
      return "MPIX_ERR_PROC_FAILED: a process of the job failed";
    default: return nullptr;
  }
}

}  // namespace

State* Mpi() { return g_state.load(std::memory_order_acquire); }
bool Initialized() { return g_phase.load() >= 1; }
bool Finalized() { return g_phase.load() == 2; }

int ErrorClassOf(int code) {
  if (code < 0) return MPI_ERR_UNKNOWN;
  if (code >= kUserErrorBase) {
    ErrorLog& log = Log();
    std::lock_guard<std::mutex> lock(log.mu);
    const int i = log.UserIndex(code);
    return i < 0 ? MPI_ERR_UNKNOWN : log.user_class[i];
  }
  return code % kClassSpan;
}

bool IsErrorCode(int code) {
  if (code < 0) return false;
  if (code >= kUserErrorBase) {
    ErrorLog& log = Log();
    std::lock_guard<std::mutex> lock(log.mu);
    return log.UserIndex(code) >= 0;
  }
  if (code >= kClassSpan * (kMessages + 1)) return false;
  return ClassText(code % kClassSpan) != nullptr;
}

bool IsErrorClass(int code) {
  if (code > 0 && code < kClassSpan) return ClassText(code) != nullptr;
  ErrorLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mu);
  const int i = log.UserIndex(code);
  return i >= 0 && log.user_class[i] == code;
}

std::string ErrorText(int code) {
  if (code >= kUserErrorBase) {
    // MPI_Add_error_string's text as it is ("" until one is set).
    ErrorLog& log = Log();
    std::lock_guard<std::mutex> lock(log.mu);
    const int i = log.UserIndex(code);
    return i < 0 ? "MPI_ERR_UNKNOWN: unknown error code" : log.user_text[i];
  }
  const int c = ErrorClassOf(code);
  const char* generic = ClassText(c);
  std::string text = generic ? generic : "MPI_ERR_UNKNOWN: unknown error code";
  const int k = code / kClassSpan;
  if (k > 0 && code >= 0) {
    ErrorLog& log = Log();
    std::lock_guard<std::mutex> lock(log.mu);
    const std::string& m = log.messages[(k - 1) % kMessages];
    if (!m.empty()) text += ": " + m;
  }
  return text;
}

int AddUserError(int of_class) {
  ErrorLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mu);
  const int value = kUserErrorBase + static_cast<int>(log.user_class.size());
  log.user_class.push_back(of_class < 0 ? value : of_class);
  log.user_text.emplace_back();
  return value;
}

bool SetUserErrorText(int code, const std::string& text) {
  ErrorLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mu);
  const int i = log.UserIndex(code);
  if (i < 0) return false;
  log.user_text[i] = text;
  return true;
}

namespace {

// A communicator's point-to-point session: an MPI request is only seen
// complete through a call that polls (MPI_Test, MPI_Wait...), so eager
// receives are left to those polls, not to background progress
// (SessionOptions::eager_receives_by_caller; docs/overlap.md).
nmad::SessionOptions P2pSessionOptions() {
  nmad::SessionOptions o;
  o.eager_receives_by_caller = true;
  return o;
}

// A new error code of class `error_class` whose text is `message`.
int RecordError(int error_class, const char* fn, const std::string& message) {
  ErrorLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mu);
  const int k = log.next;
  log.next = (log.next + 1) % kMessages;
  log.messages[k] = std::string(fn) + ": " + message;
  return error_class + kClassSpan * (k + 1);
}

// Runs handler `h` on the object `handle` (any kind: handles are ints);
// MPI_ERRORS_ARE_FATAL prints the error and ends the process.
int RunErrhandler(MPI_Errhandler h, int handle, int code, const char* fn) {
  State* st = Mpi();
  if (h == MPI_ERRORS_RETURN) return code;
  if (h != MPI_ERRORS_ARE_FATAL && st != nullptr) {
    if (auto user = st->errhandlers.Get(h); user && user->fn) {
      int c = code;
      user->fn(&handle, &c);
      return code;
    }
  }
  std::string text = ErrorText(code);
  if (text.empty())  // a user code without MPI_Add_error_string
    text = "error code " + std::to_string(code) + " of class " +
           std::to_string(ErrorClassOf(code)) +
           " (from MPI_Add_error_class/code, no string set)";
  std::fflush(stdout);
  RONDO_LOG_ERROR("MPI error on rank {} in {}: {} (aborting)",
                  st ? st->world_rank() : -1, fn, text);
  const int error_class = ErrorClassOf(code);
  std::_Exit(error_class <= 0 || error_class > MPI_ERR_LASTCODE
                 ? 1
                 : 16 + error_class);
}
}  // namespace

int RaiseError(const Comm* comm, int error_class, const char* fn,
               const std::string& message) {
  return CallErrhandler(comm, RecordError(error_class, fn, message), fn);
}

int RaiseErrorOn(MPI_Errhandler h, int handle, int error_class, const char* fn,
                 const std::string& message) {
  return RunErrhandler(h, handle, RecordError(error_class, fn, message), fn);
}

int CallErrhandlerOn(MPI_Errhandler h, int handle, int code, const char* fn) {
  return RunErrhandler(h, handle, code, fn);
}

int CallErrhandler(const Comm* comm, int code, const char* fn) {
  MPI_Errhandler h = MPI_ERRORS_ARE_FATAL;
  State* st = Mpi();
  std::shared_ptr<Comm> world;
  MPI_Comm handle = MPI_COMM_WORLD;
  if (comm != nullptr) {
    h = comm->errhandler.load();
    handle = comm->handle;
  } else if (st != nullptr && (world = st->comms.Get(MPI_COMM_WORLD))) {
    h = world->errhandler.load();
  }
  return RunErrhandler(h, handle, code, fn);
}

// ---- State ----
State::State() {
  // Completed: Finish returns at once, so nothing writes it from now on.
  sent_request_.completed = true;
  sent_request_.status = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
  sent_request_.fn = "MPI_Isend";
  std::string err;
  auto boot = drivers::bootstrap::BootstrapFromEnvironment(&err);
  if (!boot.ok())
    throw std::runtime_error("cannot reach the job's launcher: " + err);
  // The node's ranks are known before the engine places anything.
  auto engine_options = NodeEngineOptions(*boot.value(), &err);
  if (!engine_options.ok())
    throw std::runtime_error("cannot learn the node's placement: " + err);
  engine_ = std::make_unique<engine::Engine>(std::move(engine_options).value());
  auto core = Core::Create(*engine_, std::move(boot).value(),
                           NmadOptions::FromEnvironment(), &err);
  if (!core.ok()) throw std::runtime_error("cannot start nmad: " + err);
  core_ = std::move(core).value();
  world_size_ = core_->size();
  main_thread = std::this_thread::get_id();
  attr_universe_size = core_->size();

  // RONDO_COLL_<NAME>=<algorithm>, RONDO_COLL_SEGMENT_BYTES, _RADIX
  // (declared in nmad/mpi/config.cc; a bad value throws naming it).
  const base::ConfigRegistry& config = base::ConfigRegistry::Global();
  for (int c = 0; c < coll::kNumCollectives; ++c) {
    const std::string var = CollVariable(static_cast<coll::Collective>(c));
    if (!config.IsSet(var)) continue;
    forced[c] = *coll::ParseAlgorithm(config.GetChoice(var));
  }
  segment_bytes = static_cast<uint64_t>(config.GetInt(
      "RONDO_COLL_SEGMENT_BYTES", 1, std::numeric_limits<int64_t>::max()));
  radix = static_cast<int>(config.GetInt("RONDO_COLL_RADIX", 2, 64));
  rma_shm = config.GetBool("RONDO_RMA_SHM");
  const std::string rma_ucx_mode = config.GetChoice("RONDO_RMA_UCX");
  rma_ucx = rma_ucx_mode != "0";
  rma_ucx_emulated = rma_ucx_mode == "1";
  coll_shm = config.GetBool("RONDO_COLL_SHM");
  coll_shm_bytes = config.GetInt("RONDO_COLL_SHM_BYTES", 0, 65536);

  split_options = coll::SplitOptionsFromEnv();  // throws on a bad value
  // With dedicated communication cores the application thread stays on its
  // own core, away from the progress threads (the paper's placement).
  if (!engine_->options().comm_cores.empty() &&
      engine_->options().bind_threads)
    engine_->BindCurrentThread(engine_->app_core());

  // MPI_COMM_WORLD and MPI_COMM_SELF.
  std::vector<int> all(world_size());
  for (int i = 0; i < world_size(); ++i) all[i] = i;
  auto make = [&](MPI_Comm handle, std::string id, std::vector<int> ranks,
                  const char* name) {
    auto c = std::make_shared<Comm>();
    c->id = std::move(id);
    c->name = name;
    c->world = std::move(ranks);
    c->size = static_cast<int>(c->world.size());
    c->from_world.assign(world_size(), -1);
    for (int i = 0; i < c->size; ++i) c->from_world[c->world[i]] = i;
    c->rank = c->from_world[world_rank()];
    c->handle = handle;
    auto p2p = core_->OpenSession("mpi:" + c->id, P2pSessionOptions(), &err);
    auto col = core_->OpenSession("mpi:" + c->id + "#coll", {}, &err);
    if (!p2p.ok() || !col.ok())
      throw std::runtime_error("cannot open the sessions of " +
                               std::string(name) + ": " + err);
    c->p2p = p2p.value();
    c->coll = col.value();
    predefined_comms_[handle] = c.get();  // kept alive by `comms`
    comms.Set(handle, std::move(c));
  };
  make(MPI_COMM_WORLD, "world", all, "MPI_COMM_WORLD");
  make(MPI_COMM_SELF, "self" + std::to_string(world_rank()), {world_rank()},
       "MPI_COMM_SELF");
  auto empty = std::make_shared<Group>();
  groups.Set(MPI_GROUP_EMPTY, empty);
}

State::~State() {
  core_.reset();  // collective: barrier, then closes the rails
  rma_abandoned.clear();  // the transport has let go of them
  engine_->Shutdown();
}

MPI_Comm State::NewComm(std::string id, std::vector<int> world,
                        std::string* error) {
  auto c = std::make_shared<Comm>();
  c->id = std::move(id);
  c->world = std::move(world);
  c->size = static_cast<int>(c->world.size());
  c->from_world.assign(world_size(), -1);
  for (int i = 0; i < c->size; ++i) c->from_world[c->world[i]] = i;
  c->rank = c->from_world[world_rank()];
  auto p2p = core_->OpenSession("mpi:" + c->id, P2pSessionOptions(), error);
  if (!p2p.ok()) return MPI_COMM_NULL;
  auto col = core_->OpenSession("mpi:" + c->id + "#coll", {}, error);
  if (!col.ok()) return MPI_COMM_NULL;
  c->p2p = p2p.value();
  c->coll = col.value();
  Comm* raw = c.get();
  const MPI_Comm h = comms.Add(std::move(c));
  raw->handle = h;  // before the handle is returned to anyone
  return h;
}

}  // namespace rondo::nmad::mpi

using rondo::nmad::mpi::ErrorClassOf;
using rondo::nmad::mpi::ErrorText;
using rondo::nmad::mpi::Mpi;
using rondo::nmad::mpi::RaiseError;
using rondo::nmad::mpi::State;

namespace rondo::nmad::mpi {
namespace {
// The instance's users (AcquireState): guarded by g_life_mu.
std::mutex g_life_mu;
int g_session_users = 0;
bool g_world_user = false;
bool g_destroyed = false;

// Waits for the requests still in flight, then destroys the instance
// (collective: the Core's close is a barrier).
void DestroyState(State* st);
}  // namespace

State* AcquireState(bool world, int required, const char* fn,
                    std::string* error) {
  std::lock_guard<std::mutex> lock(g_life_mu);
  if (g_destroyed) {
    *error = "MPI was finalised (the last of MPI_Finalize and "
             "MPI_Session_finalize ran); Rondo cannot restart it in the "
             "same process";
    return nullptr;
  }
  State* st = g_state.load();
  if (st == nullptr) {
    try {
      st = new State();
    } catch (const std::exception& e) {
      RONDO_LOG_ERROR("{} failed: {}", fn, e.what());
      std::_Exit(1);
    }
    st->thread_level = MPI_THREAD_SINGLE;
    g_state.store(st, std::memory_order_release);
  }
  // The level provided is the highest asked by any user (all supported).
  const int level = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                    : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                      : required;
  if (level > st->thread_level) st->thread_level = level;
  // Below MPI_THREAD_MULTIPLE the application's threads take turns, and
  // only they use the request pool: no compare-and-swap there (handle_pool.h).
  // The level only rises, and a rise happens in an init call, which the
  // level held so far lets no other thread overlap.
  // Written only when it changes: other threads may be using the pool
  // under MPI_THREAD_MULTIPLE (a session's) while MPI_Init runs.
  const bool concurrent = st->thread_level == MPI_THREAD_MULTIPLE;
  if (st->requests.concurrent() != concurrent)
    st->requests.set_concurrent(concurrent);
  if (world) {
    g_world_user = true;
  } else {
    ++g_session_users;
  }
  return st;
}

int ReleaseState(bool world) {
  State* st = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_life_mu);
    if (world) {
      g_world_user = false;
    } else {
      --g_session_users;
    }
    if (g_world_user || g_session_users > 0) return MPI_SUCCESS;
    st = g_state.load();
    g_destroyed = true;
  }
  if (st != nullptr) DestroyState(st);
  return MPI_SUCCESS;
}

}  // namespace rondo::nmad::mpi

namespace {
int InitCommon(int required, int* provided, const char* fn) {
  using rondo::nmad::mpi::g_phase;
  int expect = 0;
  if (!g_phase.compare_exchange_strong(expect, 1))
    return RaiseError(nullptr, MPI_ERR_OTHER, fn,
                      expect == 1 ? "MPI is already initialised"
                                  : "MPI was finalised; it cannot restart");
  std::string error;
  State* st = rondo::nmad::mpi::AcquireState(/*world=*/true, required, fn,
                                             &error);
  if (st == nullptr) {
    g_phase.store(2);
    return RaiseError(nullptr, MPI_ERR_OTHER, fn, error);
  }
  st->main_thread = std::this_thread::get_id();
  if (provided) *provided = st->thread_level;
  return MPI_SUCCESS;
}
}  // namespace

namespace rondo::nmad::mpi {
namespace {
void DestroyState(State* st) {
  // Operations still running must finish before the rails close: requests
  // freed by MPI_Request_free, and (an erroneous program) requests never
  // completed; those get a warning. A never-completed point-to-point
  // request gets RONDO_CLOSE_TIMEOUT_MS to finish (its peer may still be
  // on its way); then it is abandoned, with a second warning: a receive is
  // cancelled, a send (nobody receives it) is left to the rails' close.
  // Open MPI finalizes such a job too; waiting for ever would hang it.
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    std::vector<MpiRequest*> pending;
    st->requests.ForEachLive(
        [&](int, MpiRequest& r) { pending.push_back(&r); });
    size_t never_completed = 0;
    for (auto* r : pending)
      if (!IsDone(*r)) ++never_completed;
    if (never_completed > 0) {
      RONDO_LOG_WARN(
          "MPI_Finalize on rank {}: {} requests were never completed "
          "(MPI_Wait/MPI_Test); finishing them first",
          st->world_rank(), never_completed);
      const int timeout_ms = st->core().options().close_timeout_ms;
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(timeout_ms);
      auto p2p = [](const MpiRequest& r) {
        return r.kind == MpiRequest::Kind::kSend ||
               r.kind == MpiRequest::Kind::kRecv ||
               r.kind == MpiRequest::Kind::kSendrecv;
      };
      size_t sends = 0, recvs = 0;
      for (auto* r : pending) {
        if (!p2p(*r)) continue;
        while (!IsDone(*r) &&
               std::chrono::steady_clock::now() < deadline)
          (void)ProgressPass(*st, /*engine_too=*/true);
        if (IsDone(*r)) continue;
        MpiRequest* parts[2] = {r, nullptr};
        if (r->kind == MpiRequest::Kind::kSendrecv)
          parts[0] = &(*r->halves)[0], parts[1] = &(*r->halves)[1];
        for (MpiRequest* q : parts) {
          if (q == nullptr || q->req.done()) continue;
          if (q->kind == MpiRequest::Kind::kRecv) {
            ++recvs;
            (void)q->comm->p2p->CancelRecv(q->req);
          } else {
            ++sends;
            q->kind = MpiRequest::Kind::kDone;  // not waited for below
          }
        }
      }
      if (sends + recvs > 0)
        RONDO_LOG_WARN(
            "MPI_Finalize on rank {}: after {} ms (RONDO_CLOSE_TIMEOUT_MS), "
            "{} sends nobody received and {} receives nobody sent are "
            "abandoned",
            st->world_rank(), timeout_ms, sends, recvs);
    }
    for (uint32_t slot : st->detached)
      pending.push_back(st->requests.At(slot));
    for (auto* r : pending) WaitUntilDone(*st, *r);
    for (uint32_t slot : st->detached) st->requests.Recycle(slot);
    st->detached.clear();
  }
  if (const size_t n = ForgetWindows(*st); n > 0)
    RONDO_LOG_WARN(
        "MPI_Finalize on rank {}: {} windows were never freed "
        "(MPI_Win_free); they stop serving now",
        st->world_rank(), n);
  g_state.store(nullptr, std::memory_order_release);
  delete st;
}
}  // namespace
}  // namespace rondo::nmad::mpi

extern "C" {

// MPI_Init provides the level RONDO_MPI_THREAD_LEVEL names: single by
// default, as Open MPI's (OMPI_MPI_THREAD_LEVEL) and MPICH's
// (MPIR_CVAR_DEFAULT_THREAD_LEVEL) do; a program that calls MPI from
// several threads asks MPI_Init_thread for MPI_THREAD_MULTIPLE.
int PMPI_Init(int*, char***) {
  int level = MPI_THREAD_SINGLE;
  try {
    const std::string v = rondo::base::ConfigRegistry::Global().GetChoice(
        "RONDO_MPI_THREAD_LEVEL");
    level = v == "multiple"     ? MPI_THREAD_MULTIPLE
            : v == "serialized" ? MPI_THREAD_SERIALIZED
            : v == "funneled"   ? MPI_THREAD_FUNNELED
                                : MPI_THREAD_SINGLE;
  } catch (const std::exception& e) {
    // As a bad value of any other variable read at MPI_Init (AcquireState).
    RONDO_LOG_ERROR("MPI_Init failed: {}", e.what());
    std::_Exit(1);
  }
  return InitCommon(level, nullptr, "MPI_Init");
}

int PMPI_Init_thread(int*, char***, int required, int* provided) {
  return InitCommon(required, provided, "MPI_Init_thread");
}

int PMPI_Initialized(int* flag) {
  if (flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Initialized",
                      "flag is NULL");
  *flag = rondo::nmad::mpi::Initialized();
  return MPI_SUCCESS;
}

int PMPI_Finalized(int* flag) {
  if (flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
  *flag = rondo::nmad::mpi::Finalized();
  return MPI_SUCCESS;
}

int PMPI_Finalize(void) {
  State* st = Mpi();
  if (st == nullptr || rondo::nmad::mpi::g_phase.load() != 1)
    return RaiseError(nullptr, MPI_ERR_OTHER, "MPI_Finalize",
                      rondo::nmad::mpi::Finalized()
                          ? "MPI_Finalize was already called"
                          : "MPI_Init was not called (a sessions-only "
                            "program ends with MPI_Session_finalize)");
  // First, with MPI still whole (MPI_Finalized says false): the delete
  // callbacks of MPI_COMM_SELF's attributes, as if it were freed, in the
  // reverse order they were set (MPI-4 §11.2.4), then MPI_COMM_WORLD's, as
  // Open MPI and MPICH do.
  for (MPI_Comm h : {MPI_COMM_SELF, MPI_COMM_WORLD})
    (void)rondo::nmad::mpi::DeleteAttributes(*st, *st->PredefinedComm(h),
                                             /*raise=*/false, "MPI_Finalize");
  // Buffered sends are sent first, as if the buffer were detached.
  rondo::nmad::mpi::DrainBufferedSends(*st);
  rondo::nmad::mpi::g_phase.store(2);
  // The instance goes with its last user: now, or at the last
  // MPI_Session_finalize when sessions are still open.
  return rondo::nmad::mpi::ReleaseState(/*world=*/true);
}

int PMPI_Abort(MPI_Comm, int errorcode) {
  State* st = Mpi();
  std::fflush(stdout);
  RONDO_LOG_ERROR("MPI_Abort called on rank {} with code {}",
                  st ? st->world_rank() : -1, errorcode);
  std::_Exit(errorcode == 0 ? 1 : (errorcode & 0xff ? errorcode & 0xff : 1));
}

double PMPI_Wtime(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double PMPI_Wtick(void) {
  timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int PMPI_Get_processor_name(char* name, int* resultlen) {
  if (name == nullptr || resultlen == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Get_processor_name",
                      "name and resultlen must not be NULL");
  if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
    std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
  name[MPI_MAX_PROCESSOR_NAME - 1] = 0;
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}

int PMPI_Get_version(int* version, int* subversion) {
  if (version == nullptr || subversion == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Get_version",
                      "version and subversion must not be NULL");
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int PMPI_Get_library_version(char* version, int* resultlen) {
  if (version == nullptr || resultlen == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Get_library_version",
                      "version and resultlen must not be NULL");
  int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                        "Rondo MadMPI (MPI %d.%d subset over nmad)",
                        MPI_VERSION, MPI_SUBVERSION);
  *resultlen = n;
  return MPI_SUCCESS;
}

int PMPI_Query_thread(int* provided) {
  State* st = Mpi();
  if (provided == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Query_thread",
                      "provided is NULL");
  *provided = st ? st->thread_level : MPI_THREAD_SINGLE;
  return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int* flag) {
  State* st = Mpi();
  if (flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Is_thread_main",
                      "flag is NULL");
  *flag = st != nullptr && st->main_thread == std::this_thread::get_id();
  return MPI_SUCCESS;
}

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (string == nullptr || resultlen == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Error_string",
                      "string and resultlen must not be NULL");
  std::string t = ErrorText(errorcode);
  if (t.size() >= MPI_MAX_ERROR_STRING) t.resize(MPI_MAX_ERROR_STRING - 1);
  std::memcpy(string, t.c_str(), t.size() + 1);
  *resultlen = static_cast<int>(t.size());
  return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int* errorclass) {
  if (errorclass == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Error_class",
                      "errorclass is NULL");
  if (errorcode < 0)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Error_class",
                      "errorcode = " + std::to_string(errorcode) +
                          " is not an MPI error code (must be >= 0)");
  if (errorcode >= rondo::nmad::mpi::kUserErrorBase &&
      !rondo::nmad::mpi::IsErrorCode(errorcode))
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Error_class",
                      "errorcode = " + std::to_string(errorcode) +
                          " is not an MPI error code (neither MPI's nor one "
                          "of MPI_Add_error_class/MPI_Add_error_code)");
  *errorclass = ErrorClassOf(errorcode);
  return MPI_SUCCESS;
}

int PMPI_Pcontrol(const int level, ...) {
  RONDO_MPI_ENTER("MPI_Pcontrol");
  (void)st;
  (void)kFn;
  (void)level;  // every level is accepted; Rondo has no profiling to steer
  return MPI_SUCCESS;
}

// ---- User error classes, codes and strings (MPI-4 §9.5) ----
int PMPI_Add_error_class(int* errorclass) {
  RONDO_MPI_ENTER("MPI_Add_error_class");
  if (errorclass == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "errorclass is NULL");
  *errorclass = rondo::nmad::mpi::AddUserError(-1);
  st->attr_lastusedcode = *errorclass;
  return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  RONDO_MPI_ENTER("MPI_Add_error_code");
  if (errorcode == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "errorcode is NULL");
  if (!rondo::nmad::mpi::IsErrorClass(errorclass))
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "errorclass = " + std::to_string(errorclass) +
                          " is not an error class (an MPI_ERR_* class or "
                          "one from MPI_Add_error_class)");
  *errorcode = rondo::nmad::mpi::AddUserError(errorclass);
  st->attr_lastusedcode = *errorcode;
  return MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char* string) {
  RONDO_MPI_ENTER("MPI_Add_error_string");
  (void)st;
  if (string == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "string is NULL");
  const size_t len = std::strlen(string);
  if (len >= MPI_MAX_ERROR_STRING)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "string has " + std::to_string(len) +
                          " characters (at most MPI_MAX_ERROR_STRING - 1 = " +
                          std::to_string(MPI_MAX_ERROR_STRING - 1) + ")");
  if (!rondo::nmad::mpi::SetUserErrorText(errorcode, string))
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "errorcode = " + std::to_string(errorcode) +
                          " is not a class or code of MPI_Add_error_class/"
                          "MPI_Add_error_code (the texts of MPI's own "
                          "cannot be changed)");
  return MPI_SUCCESS;
}

}  // extern "C"

// Sanitizer defaults for MPI programs built with -fsanitize (weak: a
// program's own definitions win). libpmix (PMIx 4.2) keeps allocations past
// PMIx_Finalize; boost::lockfree's free list (engine queues) reuses node
// storage in a way the algorithm tolerates but TSan reports (see
// tests/catch_main.cc). Rondo's own code stays fully checked.
extern "C" __attribute__((weak)) const char* __lsan_default_suppressions() {
  return "leak:libpmix.so\n";
}
extern "C" __attribute__((weak)) const char* __tsan_default_suppressions() {
  return "race:boost::lockfree::detail::\n";
}

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Init = PMPI_Init
#pragma weak MPI_Init_thread = PMPI_Init_thread
#pragma weak MPI_Initialized = PMPI_Initialized
#pragma weak MPI_Finalized = PMPI_Finalized
#pragma weak MPI_Finalize = PMPI_Finalize
#pragma weak MPI_Abort = PMPI_Abort
#pragma weak MPI_Wtime = PMPI_Wtime
#pragma weak MPI_Wtick = PMPI_Wtick
#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
#pragma weak MPI_Get_version = PMPI_Get_version
#pragma weak MPI_Get_library_version = PMPI_Get_library_version
#pragma weak MPI_Query_thread = PMPI_Query_thread
#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
#pragma weak MPI_Error_string = PMPI_Error_string
#pragma weak MPI_Error_class = PMPI_Error_class
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
#pragma weak MPI_Add_error_class = PMPI_Add_error_class
#pragma weak MPI_Add_error_code = PMPI_Add_error_code
#pragma weak MPI_Add_error_string = PMPI_Add_error_string
