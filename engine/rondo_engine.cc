// The C API: a thin shell over rondo::engine::Engine. The process-wide
// engine instance behind it (g_engine) is Rondo's one documented piece of
// global mutable state.
#include "engine/rondo_engine.h"

#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "engine/c_api_engine.h"
#include "engine/engine.h"
#include "engine/tracer.h"

namespace {

using rondo::engine::Engine;
using rondo::engine::EngineOptions;
using rondo::engine::Status;
using rondo::engine::Task;
using rondo::engine::TaskResult;

struct CTask {
  Task task;
  rondo_task_fn fn;
  void* arg;
};
static_assert(sizeof(CTask) <= RONDO_TASK_STORAGE,
              "rondo_task_t storage too small for the C++ task");
static_assert(alignof(CTask) <= 64, "rondo_task_t alignment too small");

std::mutex g_mu;                  // guards init/finalize
std::unique_ptr<Engine> g_engine; // the documented global engine instance
thread_local std::string t_last_error;

using rondo::engine::capi::Code;

TaskResult Trampoline(void* arg) noexcept {
  auto* t = static_cast<CTask*>(arg);
  int r = t->fn(t->arg);
  if (r == RONDO_TASK_DONE) return TaskResult::kDone;
  if (r == RONDO_TASK_PROGRESS) return TaskResult::kProgress;
  return TaskResult::kIdle;
}

CTask* AsTask(rondo_task_t* t) { return reinterpret_cast<CTask*>(t->opaque); }
const CTask* AsTask(const rondo_task_t* t) {
  return reinterpret_cast<const CTask*>(t->opaque);
}

}  // namespace

namespace rondo::engine::capi {

Engine* Get() noexcept { return g_engine.get(); }

Status Install(std::unique_ptr<Engine> engine, std::string* error) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (engine == nullptr) {
    if (error) *error = "no engine to install";
    return Status::kInvalidArgument;
  }
  if (g_engine) {
    if (error) *error = "the C API's engine is already initialised";
    return Status::kBusy;
  }
  g_engine = std::move(engine);
  return Status::kOk;
}

int Code(Status s) noexcept {
  switch (s) {
    case Status::kOk: return RONDO_OK;
    case Status::kInProgress: return RONDO_IN_PROGRESS;
    case Status::kNoResource: return RONDO_ERR_NO_RESOURCE;
    case Status::kInvalidArgument: return RONDO_ERR_INVALID_ARGUMENT;
    case Status::kBusy: return RONDO_ERR_BUSY;
    case Status::kTruncated: return RONDO_ERR_TRUNCATED;
    case Status::kPeerFailed: return RONDO_ERR_PEER_FAILED;
    case Status::kCanceled: return RONDO_ERR_CANCELED;
    case Status::kShutdown: return RONDO_ERR_SHUTDOWN;
    case Status::kTimedOut: return RONDO_ERR_TIMED_OUT;
    case Status::kUnsupported: return RONDO_ERR_UNSUPPORTED;
    case Status::kInternal: return RONDO_ERR_INTERNAL;
  }
  return RONDO_ERR_INTERNAL;
}

}  // namespace rondo::engine::capi

extern "C" {

int rondo_engine_init(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_engine) {
    t_last_error = "rondo_engine_init: the engine is already initialised";
    return RONDO_ERR_BUSY;
  }
  try {
    g_engine = std::make_unique<Engine>(EngineOptions::FromEnvironment());
  } catch (const std::invalid_argument& e) {
    t_last_error = e.what();
    return RONDO_ERR_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    t_last_error = e.what();
    return RONDO_ERR_INTERNAL;
  }
  return RONDO_OK;
}

int rondo_engine_finalize(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  g_engine.reset();
  return RONDO_OK;
}

int rondo_engine_initialized(void) { return g_engine ? 1 : 0; }

int rondo_engine_num_cores(void) {
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  return g_engine->topology().NumCores();
}

const char* rondo_engine_last_error(void) { return t_last_error.c_str(); }

int rondo_task_init(rondo_task_t* task, rondo_task_fn fn, void* arg,
                    const int* cores, int ncores, unsigned flags,
                    const char* name) {
  if (task == nullptr || fn == nullptr || cores == nullptr || ncores <= 0 ||
      (flags & ~unsigned{RONDO_TASK_REPEAT}) != 0) {
    t_last_error =
        "rondo_task_init: task, fn and cores must be non-NULL, ncores > 0 and "
        "flags 0 or RONDO_TASK_REPEAT";
    return RONDO_ERR_INVALID_ARGUMENT;
  }
  rondo::topology::CpuSet set;
  for (int i = 0; i < ncores; ++i) {
    if (cores[i] < 0 || cores[i] >= rondo::topology::CpuSet::kMaxCores) {
      t_last_error = "rondo_task_init: core " + std::to_string(cores[i]) +
                     " is outside 0.." +
                     std::to_string(rondo::topology::CpuSet::kMaxCores - 1);
      return RONDO_ERR_INVALID_ARGUMENT;
    }
    set.Set(cores[i]);
  }
  auto* t = new (task->opaque) CTask{};
  t->fn = fn;
  t->arg = arg;
  rondo::engine::TaskOptions opts;
  opts.repeat = (flags & RONDO_TASK_REPEAT) != 0;
  opts.name = name != nullptr ? name : "c-task";
  t->task.Init(&Trampoline, t, set, opts);
  return RONDO_OK;
}

int rondo_task_submit(rondo_task_t* task) {
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  if (task == nullptr) return RONDO_ERR_INVALID_ARGUMENT;
  Status s = g_engine->Submit(AsTask(task)->task);
  if (s != Status::kOk)
    t_last_error = "rondo_task_submit: " + g_engine->SubmitError(AsTask(task)->task);
  return Code(s);
}

int rondo_task_wait(rondo_task_t* task) {
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  if (task == nullptr) return RONDO_ERR_INVALID_ARGUMENT;
  return Code(g_engine->Wait(AsTask(task)->task));
}

int rondo_task_test(const rondo_task_t* task) {
  return task != nullptr && AsTask(task)->task.finished() ? 1 : 0;
}

int rondo_task_last_core(const rondo_task_t* task) {
  return task != nullptr ? AsTask(task)->task.last_core() : -1;
}

int rondo_engine_poll(void) {
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  return g_engine->Poll();
}

int rondo_engine_idle_hook(void) { return rondo_engine_poll(); }

int rondo_engine_run_once(int core) {
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  int worked = 0;
  Status s = g_engine->RunOnce(core, &worked);
  return s == Status::kOk ? worked : Code(s);
}

int rondo_engine_current_core(void) {
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  return g_engine->CurrentCore();
}

long long rondo_engine_background(void) {
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  return g_engine->background();
}

int rondo_trace_enabled(void) {
  return g_engine && g_engine->tracing() ? 1 : 0;
}

long long rondo_trace_now_ns(void) { return rondo::engine::Tracer::NowNs(); }

int rondo_trace_span(const char* name, long long start_ns, long long end_ns) {
  if (name == nullptr || end_ns < start_ns) {
    t_last_error = "rondo_trace_span: name must be non-NULL and end_ns >= "
                   "start_ns";
    return RONDO_ERR_INVALID_ARGUMENT;
  }
  if (!g_engine) return RONDO_ERR_NOT_INITIALIZED;
  g_engine->TraceSpan(name, start_ns, end_ns);
  return RONDO_OK;
}

const char* rondo_strerror(int code) {
  switch (code) {
    case RONDO_OK: return "ok";
    case RONDO_IN_PROGRESS: return "in progress";
    case RONDO_ERR_NO_RESOURCE: return "no resource (retry later)";
    case RONDO_ERR_INVALID_ARGUMENT: return "invalid argument";
    case RONDO_ERR_BUSY: return "busy (already queued, running or initialised)";
    case RONDO_ERR_TRUNCATED: return "truncated";
    case RONDO_ERR_PEER_FAILED: return "peer failed";
    case RONDO_ERR_CANCELED: return "canceled";
    case RONDO_ERR_SHUTDOWN: return "engine shut down";
    case RONDO_ERR_TIMED_OUT: return "timed out";
    case RONDO_ERR_UNSUPPORTED: return "unsupported";
    case RONDO_ERR_INTERNAL: return "internal error";
    case RONDO_ERR_NOT_INITIALIZED: return "engine not initialised";
  }
  return "unknown status code";
}

}  // extern "C"
