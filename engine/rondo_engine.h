/* Rondo progress engine: C API for C communication libraries and task
 * runtimes. A thin shell over rondo::engine::Engine (engine/engine.h).
 *
 * The C API uses one process-wide engine instance, created by
 * rondo_engine_init() from the RONDO_* environment variables and destroyed by
 * rondo_engine_finalize(). It is the only global mutable state in Rondo.
 *
 * Tasks are caller-owned: embed a rondo_task_t in your own structure,
 * initialise it with rondo_task_init(), submit it, and keep it alive and in
 * place until rondo_task_test() says it is finished. Submitting never
 * allocates.
 *
 * Every function returns a rondo status code (RONDO_OK = 0, errors < 0) unless
 * said otherwise; rondo_strerror() describes a code and
 * rondo_engine_last_error() gives the detailed message of the last failed
 * rondo_engine_init() or rondo_task_init() / rondo_task_submit() on this
 * engine. Thread-safety: all task and polling functions may be called from any
 * thread; init and finalize must not race with anything. */
#ifndef RONDO_ENGINE_RONDO_ENGINE_H_
#define RONDO_ENGINE_RONDO_ENGINE_H_

#ifdef __cplusplus
extern "C" {
#endif

enum {
  RONDO_OK = 0,
  RONDO_IN_PROGRESS = 1,
  RONDO_ERR_NO_RESOURCE = -1,
  RONDO_ERR_INVALID_ARGUMENT = -2,
  RONDO_ERR_BUSY = -3,
  RONDO_ERR_TRUNCATED = -4,
  RONDO_ERR_PEER_FAILED = -5,
  RONDO_ERR_CANCELED = -6,
  RONDO_ERR_SHUTDOWN = -7,
  RONDO_ERR_TIMED_OUT = -8,
  RONDO_ERR_UNSUPPORTED = -9,
  RONDO_ERR_INTERNAL = -10,
  RONDO_ERR_NOT_INITIALIZED = -11
};

/* What a task function returns (the poller contract). */
enum {
  RONDO_TASK_IDLE = 0,     /* found nothing to do */
  RONDO_TASK_PROGRESS = 1, /* did work, not finished */
  RONDO_TASK_DONE = 2      /* finished (repeat tasks stop repeating) */
};

/* rondo_task_init() flags. */
enum { RONDO_TASK_REPEAT = 1 };

typedef int (*rondo_task_fn)(void* arg);

/* Opaque, caller-owned task storage. */
#define RONDO_TASK_STORAGE 256
#ifdef __cplusplus
#define RONDO_ALIGN64 alignas(64)
#else
#define RONDO_ALIGN64 _Alignas(64)
#endif
typedef struct rondo_task {
  RONDO_ALIGN64 unsigned char opaque[RONDO_TASK_STORAGE];
} rondo_task_t;

/* Creates the process-wide engine from the environment. Returns
 * RONDO_ERR_BUSY if already initialised, RONDO_ERR_INVALID_ARGUMENT for a bad
 * RONDO_* value (see rondo_engine_last_error()). */
int rondo_engine_init(void);
/* Stops progress threads and cancels queued tasks. */
int rondo_engine_finalize(void);
/* 1 if initialised, else 0. */
int rondo_engine_initialized(void);
/* Number of cores of the engine's topology, or a negative error code. */
int rondo_engine_num_cores(void);
/* Detailed message of the last error ("" if none). Valid until the next
 * call that fails. */
const char* rondo_engine_last_error(void);

/* Initialises a task. `cores` lists the cores allowed to run it (ncores >
 * 0); flags is 0 or RONDO_TASK_REPEAT; name (may be NULL) is used in traces
 * and must outlive the task. */
int rondo_task_init(rondo_task_t* task, rondo_task_fn fn, void* arg,
                    const int* cores, int ncores, unsigned flags,
                    const char* name);
int rondo_task_submit(rondo_task_t* task);
/* Polls from the caller's core until the task is finished. RONDO_OK, or
 * RONDO_ERR_CANCELED if finalize canceled it. */
int rondo_task_wait(rondo_task_t* task);
/* 1 if the task is finished (done or canceled), 0 if not. */
int rondo_task_test(const rondo_task_t* task);
/* Core that last ran the task, -1 before its first run. */
int rondo_task_last_core(const rondo_task_t* task);

/* One scheduling pass from the caller's core. Returns how many task runs did
 * work (>= 0) or a negative error code. */
int rondo_engine_poll(void);
/* The embedding hook for task runtimes (StarPU, TBB, OpenMP): call it from
 * the runtime's idle loop. Same as rondo_engine_poll(). */
int rondo_engine_idle_hook(void);
/* One pass on behalf of `core` (a runtime worker that knows its core). */
int rondo_engine_run_once(int core);
/* The core the calling thread polls from (its bound core, else the core it
 * runs on now), for rondo_engine_run_once(); a negative error code before
 * init. */
int rondo_engine_current_core(void);

/* Operations in flight that need progress while the application computes
 * (Engine::background(): pending sends and receives of a communication
 * layer on this engine), >= 0, or a negative error code. A task runtime's
 * idle hook keeps its worker polling while this is not 0 and lets it sleep
 * otherwise. */
long long rondo_engine_background(void);

/* ---- Traces (RONDO_TRACE=file: a Perfetto / Chrome trace of the engine's
 * tasks, written at rondo_engine_finalize) ---- */
/* 1 if this engine records a trace, else 0. */
int rondo_trace_enabled(void);
/* The trace clock (monotonic nanoseconds). */
long long rondo_trace_now_ns(void);
/* Records the application's own work, e.g. a task runtime's kernel, as a
 * span named `name` from start_ns to end_ns (rondo_trace_now_ns() values)
 * on the calling thread's core, beside the engine's tasks ("cat": "app").
 * `name` must outlive the engine (a string literal). RONDO_OK, and nothing
 * recorded when tracing is off; RONDO_ERR_INVALID_ARGUMENT for a NULL name
 * or end_ns < start_ns. */
int rondo_trace_span(const char* name, long long start_ns, long long end_ns);

/* A static description of a status code. */
const char* rondo_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_ENGINE_RONDO_ENGINE_H_ */
