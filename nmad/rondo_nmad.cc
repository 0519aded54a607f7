// The nmad C API (rondo_nmad.h): a thin shell over Core and Session. The
// process-wide instance behind it (g_nmad) is, with the engine's and
// MadMPI's, one of Rondo's documented pieces of global state.
//
// Completion callbacks: nmad completes a request from whichever thread
// finishes it, possibly with Core locks held (Request::set_completion), so
// the C callback cannot run there. The request is pushed onto a lock-free
// stack instead, and a repeat engine task, queued from init to finalize,
// pops them and runs the callbacks with no lock held (one atomic load per
// pass when there is nothing to do, like the rails' own polling tasks).
#include "nmad/rondo_nmad.h"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"
#include "engine/c_api_engine.h"
#include "engine/engine.h"
#include "nmad/core.h"
#include "nmad/dynamic_bcast.h"
#include "nmad/node.h"
#include "nmad/options.h"

namespace {

using rondo::engine::Engine;
using rondo::engine::Status;
using rondo::engine::Task;
using rondo::engine::TaskResult;
using rondo::nmad::BroadcastDetector;
using rondo::nmad::BroadcastTarget;
using rondo::nmad::Core;
using rondo::nmad::Request;
using rondo::nmad::Session;

thread_local std::string t_last_error;
thread_local std::string t_failure_text;

using rondo::engine::capi::Code;

int Fail(int code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

// What a rondo_nmad_request_t holds.
struct CRequest {
  Request req;
  rondo_nmad_callback fn = nullptr;
  void* arg = nullptr;
  rondo_nmad_request_t* self = nullptr;  // the C handle (for the callback)
  int status = RONDO_OK;
  std::atomic<bool> in_flight{false};
  CRequest* next = nullptr;  // the completion stack
};
static_assert(sizeof(CRequest) <= RONDO_NMAD_REQUEST_STORAGE,
              "rondo_nmad_request_t storage too small for the C++ request");
static_assert(alignof(CRequest) <= 64, "rondo_nmad_request_t alignment");

CRequest* AsRequest(rondo_nmad_request_t* r) {
  return std::launder(reinterpret_cast<CRequest*>(r->opaque));
}
const CRequest* AsRequest(const rondo_nmad_request_t* r) {
  return std::launder(reinterpret_cast<const CRequest*>(r->opaque));
}

struct Instance {
  std::unique_ptr<Core> core;
  bool owns_engine = false;
  Engine* engine = nullptr;
  // Requests whose callback is due (a Treiber stack) and the task that
  // runs them.
  std::atomic<CRequest*> due{nullptr};
  std::atomic<bool> stopping{false};
  Task callbacks_task;
};

std::mutex g_mu;                    // guards init/finalize
std::unique_ptr<Instance> g_nmad;   // the documented global instance

TaskResult RunCallbacks(void* arg) noexcept {
  auto* inst = static_cast<Instance*>(arg);
  CRequest* list = inst->due.exchange(nullptr, std::memory_order_acq_rel);
  if (list == nullptr)
    return inst->stopping.load(std::memory_order_acquire) ? TaskResult::kDone
                                                           : TaskResult::kIdle;
  // The stack is newest first: run the callbacks in completion order.
  CRequest* ordered = nullptr;
  while (list != nullptr) {
    CRequest* next = list->next;
    list->next = ordered;
    ordered = list;
    list = next;
  }
  while (ordered != nullptr) {
    CRequest* r = ordered;
    ordered = r->next;
    r->next = nullptr;
    // OnComplete ran inside Request::Complete, which marks the request done
    // right after it returns (on the completing thread, maybe another one):
    // wait for that store before the request may start again.
    while (!r->req.done()) std::this_thread::yield();
    rondo_nmad_callback fn = r->fn;
    void* fn_arg = r->arg;
    const int status = r->status;
    // The request is reusable from here on, also by the callback itself.
    r->in_flight.store(false, std::memory_order_release);
    fn(r->self, status, fn_arg);
  }
  return TaskResult::kProgress;
}

void OnComplete(Request& req, Status status, void* arg) noexcept {
  auto* r = static_cast<CRequest*>(arg);
  (void)req;
  r->status = Code(status);
  Instance* inst = g_nmad.get();
  if (r->fn == nullptr || inst == nullptr) {
    r->in_flight.store(false, std::memory_order_release);
    return;
  }
  CRequest* head = inst->due.load(std::memory_order_relaxed);
  do {
    r->next = head;
  } while (!inst->due.compare_exchange_weak(head, r,
                                            std::memory_order_release,
                                            std::memory_order_relaxed));
  inst->engine->Notify(inst->callbacks_task);
}

Instance* Get(int* err) {
  Instance* inst = g_nmad.get();
  if (inst == nullptr)
    *err = Fail(RONDO_ERR_NOT_INITIALIZED,
                "rondo_nmad: not initialised (call rondo_nmad_init first)");
  return inst;
}

Session* AsSession(rondo_nmad_session_t s) {
  return reinterpret_cast<Session*>(s);
}

// Common checks of a request about to start an operation.
CRequest* Start(rondo_nmad_request_t* req, const char* fn, int* err) {
  if (req == nullptr) {
    *err = Fail(RONDO_ERR_INVALID_ARGUMENT,
                std::string(fn) + ": req is NULL");
    return nullptr;
  }
  CRequest* r = AsRequest(req);
  if (r->self != req) {
    *err = Fail(RONDO_ERR_INVALID_ARGUMENT,
                std::string(fn) +
                    ": the request was not initialised "
                    "(rondo_nmad_request_init) or was moved");
    return nullptr;
  }
  bool expected = false;
  if (!r->in_flight.compare_exchange_strong(expected, true,
                                            std::memory_order_acq_rel)) {
    *err = Fail(RONDO_ERR_BUSY,
                std::string(fn) + ": the request is still in flight");
    return nullptr;
  }
  r->status = RONDO_IN_PROGRESS;
  return r;
}

// After a start that did not start anything.
int Refused(CRequest* r, Status s, const std::string& what) {
  r->in_flight.store(false, std::memory_order_release);
  return Fail(Code(s), what);
}

std::string Describe(const char* fn, Status s, const Core& core, int peer) {
  std::string m = std::string(fn) + ": " + std::string(rondo::engine::StatusName(s));
  if (s == Status::kInvalidArgument)
    m += " (peer " + std::to_string(peer) + " of 0.." +
         std::to_string(core.size() - 1) + ", a tag >= 0 and a buffer that "
         "is not NULL when len > 0)";
  if (s == Status::kPeerFailed && peer >= 0)
    m += ": rank " + std::to_string(peer) + ": " + core.FailureText(peer);
  return m;
}

}  // namespace

extern "C" {

int rondo_nmad_init(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_nmad)
    return Fail(RONDO_ERR_BUSY, "rondo_nmad_init: already initialised");
  std::string err;
  auto boot = rondo::drivers::bootstrap::BootstrapFromEnvironment(&err);
  if (!boot.ok())
    return Fail(RONDO_ERR_PEER_FAILED,
                "rondo_nmad_init: cannot reach the job's launcher: " + err);
  auto inst = std::make_unique<Instance>();
  inst->engine = rondo::engine::capi::Get();
  if (inst->engine == nullptr) {
    try {
      auto options = rondo::nmad::NodeEngineOptions(*boot.value(), &err);
      if (!options.ok())
        return Fail(Code(options.status()),
                    "rondo_nmad_init: cannot learn the node's placement: " +
                        err);
      auto engine =
          std::make_unique<Engine>(std::move(options).value());
      inst->engine = engine.get();
      Status s = rondo::engine::capi::Install(std::move(engine), &err);
      if (s != Status::kOk)
        return Fail(Code(s), "rondo_nmad_init: " + err);
      inst->owns_engine = true;
    } catch (const std::invalid_argument& e) {
      return Fail(RONDO_ERR_INVALID_ARGUMENT,
                  std::string("rondo_nmad_init: ") + e.what());
    } catch (const std::exception& e) {
      return Fail(RONDO_ERR_INTERNAL,
                  std::string("rondo_nmad_init: ") + e.what());
    }
  }
  auto core = Core::Create(*inst->engine, std::move(boot).value(),
                           rondo::nmad::NmadOptions::FromEnvironment(), &err);
  if (!core.ok()) {
    if (inst->owns_engine) rondo_engine_finalize();
    return Fail(Code(core.status()),
                "rondo_nmad_init: cannot start nmad: " + err);
  }
  inst->core = std::move(core).value();
  rondo::engine::TaskOptions opts;
  opts.name = "nmad-c:callbacks";
  opts.repeat = true;
  inst->callbacks_task.Init(&RunCallbacks, inst.get(),
                            inst->core->task_cpuset(), opts);
  g_nmad = std::move(inst);
  Status s = g_nmad->engine->Submit(g_nmad->callbacks_task);
  if (s != Status::kOk) {
    std::string why = g_nmad->engine->SubmitError(g_nmad->callbacks_task);
    g_nmad->core.reset();
    const bool owns = g_nmad->owns_engine;
    g_nmad.reset();
    if (owns) rondo_engine_finalize();
    return Fail(Code(s), "rondo_nmad_init: cannot queue the callback task: " +
                             why);
  }
  return RONDO_OK;
}

int rondo_nmad_finalize(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_nmad)
    return Fail(RONDO_ERR_NOT_INITIALIZED,
                "rondo_nmad_finalize: not initialised");
  const bool owns = g_nmad->owns_engine;
  // Callbacks still due run now; then the task ends.
  g_nmad->stopping.store(true, std::memory_order_release);
  (void)g_nmad->engine->Wait(g_nmad->callbacks_task);
  // The Core's destructor is collective (a barrier) and stops its tasks.
  g_nmad->core.reset();
  g_nmad.reset();
  if (owns) rondo_engine_finalize();
  return RONDO_OK;
}

int rondo_nmad_initialized(void) { return g_nmad ? 1 : 0; }

int rondo_nmad_rank(void) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  return inst ? inst->core->rank() : err;
}

int rondo_nmad_size(void) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  return inst ? inst->core->size() : err;
}

const char* rondo_nmad_last_error(void) { return t_last_error.c_str(); }

const char* rondo_nmad_failure_text(int rank) {
  Instance* inst = g_nmad.get();
  t_failure_text = inst && rank >= 0 && rank < inst->core->size()
                       ? inst->core->FailureText(rank)
                       : std::string();
  return t_failure_text.c_str();
}

int rondo_nmad_barrier(void) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  if (!inst) return err;
  Status s = inst->core->Barrier();
  if (s != Status::kOk)
    return Fail(Code(s), "rondo_nmad_barrier: " +
                             std::string(rondo::engine::StatusName(s)));
  return RONDO_OK;
}

int rondo_nmad_session_open(const char* name, rondo_nmad_session_t* out) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  if (!inst) return err;
  if (name == nullptr || out == nullptr)
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_session_open: name and out must not be NULL");
  std::string why;
  auto s = inst->core->OpenSession(name, {}, &why);
  if (!s.ok())
    return Fail(Code(s.status()), "rondo_nmad_session_open: " + why);
  *out = reinterpret_cast<rondo_nmad_session_t>(s.value());
  return RONDO_OK;
}

void rondo_nmad_request_init(rondo_nmad_request_t* req) {
  if (req == nullptr) return;
  auto* r = new (req->opaque) CRequest{};
  r->self = req;
  r->req.set_completion(&OnComplete, r);
}

int rondo_nmad_request_set_callback(rondo_nmad_request_t* req,
                                    rondo_nmad_callback fn, void* arg) {
  if (req == nullptr || AsRequest(req)->self != req)
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_request_set_callback: req is NULL or was not "
                "initialised");
  CRequest* r = AsRequest(req);
  if (r->in_flight.load(std::memory_order_acquire))
    return Fail(RONDO_ERR_BUSY,
                "rondo_nmad_request_set_callback: the request is in flight");
  r->fn = fn;
  r->arg = arg;
  return RONDO_OK;
}

int rondo_nmad_isend(rondo_nmad_session_t session, int dest, int tag,
                     const void* buf, size_t len, int priority,
                     rondo_nmad_request_t* req) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  if (!inst) return err;
  if (session == nullptr)
    return Fail(RONDO_ERR_INVALID_ARGUMENT, "rondo_nmad_isend: no session");
  CRequest* r = Start(req, "rondo_nmad_isend", &err);
  if (!r) return err;
  Status s = AsSession(session)->Isend(dest, tag, buf, len, r->req, priority);
  if (s != Status::kOk)
    return Refused(r, s, Describe("rondo_nmad_isend", s, *inst->core, dest));
  return RONDO_OK;
}

int rondo_nmad_irecv(rondo_nmad_session_t session, int source, int tag,
                     void* buf, size_t len, rondo_nmad_request_t* req) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  if (!inst) return err;
  if (session == nullptr)
    return Fail(RONDO_ERR_INVALID_ARGUMENT, "rondo_nmad_irecv: no session");
  CRequest* r = Start(req, "rondo_nmad_irecv", &err);
  if (!r) return err;
  Status s = AsSession(session)->Irecv(source, tag, buf, len, r->req);
  if (s != Status::kOk)
    return Refused(r, s,
                   Describe("rondo_nmad_irecv", s, *inst->core, source));
  return RONDO_OK;
}

int rondo_nmad_dynamic_bcast(rondo_nmad_session_t session, const void* buf,
                             size_t len, int tag, const int* ranks,
                             const int* priorities, int n,
                             rondo_nmad_request_t* req) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  if (!inst) return err;
  if (session == nullptr || n <= 0 || ranks == nullptr)
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_dynamic_bcast: a session and n >= 1 ranks are "
                "needed (n = " + std::to_string(n) + ")");
  std::vector<BroadcastTarget> targets(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    targets[i] = {ranks[i], priorities ? priorities[i] : 0};
  CRequest* r = Start(req, "rondo_nmad_dynamic_bcast", &err);
  if (!r) return err;
  std::string why;
  Status s = AsSession(session)->DynamicBroadcast(buf, len, tag, targets,
                                                  r->req, &why);
  if (s != Status::kOk)
    return Refused(r, s, "rondo_nmad_dynamic_bcast: " +
                             (why.empty() ? std::string(
                                                rondo::engine::StatusName(s))
                                          : why));
  return RONDO_OK;
}

int rondo_nmad_test(rondo_nmad_request_t* req) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  if (!inst) return err;
  if (req == nullptr || AsRequest(req)->self != req)
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_test: req is NULL or was not initialised");
  return Code(inst->core->Test(AsRequest(req)->req));
}

int rondo_nmad_wait(rondo_nmad_request_t* req) {
  int err = RONDO_OK;
  Instance* inst = Get(&err);
  if (!inst) return err;
  if (req == nullptr || AsRequest(req)->self != req)
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_wait: req is NULL or was not initialised");
  return Code(inst->core->Wait(AsRequest(req)->req));
}

int rondo_nmad_recv_info(const rondo_nmad_request_t* req, int* source,
                         int* tag, size_t* size) {
  if (req == nullptr || AsRequest(req)->self != req)
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_recv_info: req is NULL or was not initialised");
  const CRequest* r = AsRequest(req);
  if (!r->req.done())
    return Fail(RONDO_ERR_BUSY, "rondo_nmad_recv_info: not completed");
  const auto& info = r->req.info();
  if (source) *source = info.source;
  if (tag) *tag = info.tag;
  if (size) *size = info.size;
  return RONDO_OK;
}

// ---- detection ----

struct rondo_nmad_detector {
  BroadcastDetector detector;
  std::mutex mu;  // guards stash
  // Recipients handed out by Ready but not yet taken (too little room).
  std::map<std::pair<const void*, int>, std::vector<BroadcastTarget>> stash;
};

rondo_nmad_detector_t rondo_nmad_detector_create(void) {
  return new (std::nothrow) rondo_nmad_detector();
}

void rondo_nmad_detector_destroy(rondo_nmad_detector_t d) { delete d; }

int rondo_nmad_detector_register(rondo_nmad_detector_t d, const void* key,
                                 int tag, int rank, int priority) {
  if (d == nullptr || rank < 0)
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_detector_register: a detector and a rank >= 0 "
                "are needed (rank = " + std::to_string(rank) + ")");
  return d->detector.Register(key, tag, {rank, priority}) ? 1 : 0;
}

int rondo_nmad_detector_ready(rondo_nmad_detector_t d, const void* key,
                              int tag, int* ranks, int* priorities, int max) {
  if (d == nullptr || max < 0 || (max > 0 && ranks == nullptr))
    return Fail(RONDO_ERR_INVALID_ARGUMENT,
                "rondo_nmad_detector_ready: a detector, max >= 0 and ranks "
                "when max > 0 are needed");
  std::vector<BroadcastTarget> list;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    auto it = d->stash.find({key, tag});
    if (it != d->stash.end()) {
      list = std::move(it->second);
      d->stash.erase(it);
    }
  }
  if (list.empty()) list = d->detector.Ready(key, tag);
  const int n = static_cast<int>(list.size());
  if (n > max) {
    std::lock_guard<std::mutex> lock(d->mu);
    d->stash[{key, tag}] = std::move(list);
    return n;
  }
  for (int i = 0; i < n; ++i) {
    ranks[i] = list[i].rank;
    if (priorities) priorities[i] = list[i].priority;
  }
  return n;
}

void rondo_nmad_detector_forget(rondo_nmad_detector_t d, const void* key,
                                int tag) {
  if (d == nullptr) return;
  d->detector.Forget(key, tag);
  std::lock_guard<std::mutex> lock(d->mu);
  d->stash.erase({key, tag});
}

void rondo_nmad_detector_stats(rondo_nmad_detector_t d,
                               rondo_nmad_detector_stats_t* out) {
  if (d == nullptr || out == nullptr) return;
  const BroadcastDetector::Stats s = d->detector.stats();
  out->registered = s.registered;
  out->broadcasts = s.broadcasts;
  out->single = s.single;
  out->merged = s.merged;
  out->missed = s.missed;
  out->duplicates = s.duplicates;
}

}  // extern "C"
