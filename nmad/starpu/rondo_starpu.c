/* rondo_starpu: Rondo as StarPU's communication backend (rondo_starpu.h).
 *
 * The life of a transfer (struct xfer):
 *   1. rondo_starpu_isend_handle / irecv_handle / bcast_handle: checks the
 *      handle, then starpu_data_acquire_cb(R for sends, W for receives).
 *      With detection on, a send of a (handle, tag) that already waits for
 *      its acquisition joins that transfer (rondo_nmad_detector_register)
 *      instead of acquiring again.
 *   2. on_acquired (a StarPU thread, when the data is ready): the recipients
 *      merged so far (rondo_nmad_detector_ready) leave as one dynamic
 *      broadcast, or one send; a receive is posted into the handle's
 *      buffer. The nmad request carries a completion callback.
 *   3. on_nmad_done (an engine task, with no Rondo lock held): queues the
 *      transfer for the completion thread.
 *   4. The completion thread: checks a receive's size against the handle's,
 *      starpu_data_release(), runs the completions (callback, tag), frees.
 *      StarPU calls stay out of Rondo's progress path on purpose: the
 *      progression hook runs inside StarPU's worker loop, where releasing
 *      data (and so scheduling tasks) is not allowed, as StarPU's own MPI
 *      and NewMadeleine backends release from a thread of their own. The
 *      thread sleeps on a condition variable: it uses no core while no
 *      transfer completes.
 * Progress: the hook (idle workers) runs rondo_engine_run_once() on the
 * worker's core; the engine's quiet progress covers busy periods. */
#define _GNU_SOURCE
#include "nmad/starpu/rondo_starpu.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <starpu_expert.h>

#include "nmad/rondo_nmad.h"
#include "topology/base/log_c.h"

/* Messages go through Rondo's logger (topology/base/log_c.h): its level,
 * sink and rank prefix. */
static void log_line(int level, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
static void log_line(int level, const char* format, ...) {
  if (!rondo_log_enabled(level)) return;
  char buf[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(buf, sizeof(buf), format, ap);
  va_end(ap);
  rondo_log_message(level, buf);
}

enum xfer_kind { XFER_RECV, XFER_SEND, XFER_GROUP, XFER_BCAST };

struct xfer {
  rondo_nmad_request_t req; /* first: 64-byte aligned */
  enum xfer_kind kind;
  starpu_data_handle_t handle;
  int tag;
  int peer;      /* RECV: the source; SEND: the destination */
  int priority;  /* SEND */
  void* ptr;
  size_t size;
  int status;
  /* GROUP and BCAST: the recipients (at most size - 1). */
  int* ranks;
  int* prios;
  int n;
  /* One completion per send request merged in (GROUP), else one. */
  rondo_starpu_completion_t* dones;
  int ndone, capdone;
  struct xfer* next; /* the pending table's chain, then the done queue */
};

#define TABLE_SIZE 1024

static struct {
  int initialized;
  int started_nmad;
  int hook_id;
  int rank, size;
  rondo_nmad_session_t session;
  rondo_nmad_detector_t detector;
  atomic_int detection;
  pthread_mutex_t mu; /* guards table, done queue, stop */
  struct xfer* table[TABLE_SIZE]; /* groups waiting for their data */
  struct xfer* done_head;
  struct xfer* done_tail;
  int stop;
  pthread_cond_t cond; /* the completion thread's */
  pthread_t thread;
  atomic_long in_flight;
  /* The hook may still be running on a worker after StarPU unregistered it
   * (StarPU reads its table, unlocks, then calls): shutdown waits for the
   * calls in progress before it stops the engine. */
  atomic_int hook_enabled;
  atomic_int hook_running;
  atomic_ullong sends, receives, broadcasts, bcast_recipients, single_sends,
      hook_calls, hook_work, errors;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static _Thread_local char t_last_error[512];

static int fail(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t_last_error, sizeof t_last_error, fmt, ap);
  va_end(ap);
  return code;
}

const char* rondo_starpu_last_error(void) { return t_last_error; }

static size_t slot(starpu_data_handle_t h, int tag) {
  uintptr_t k = (uintptr_t)h * 0x9e3779b97f4a7c15ull ^ (uintptr_t)tag;
  return (size_t)((k ^ (k >> 29)) % TABLE_SIZE);
}

/* The handle's data as contiguous bytes in main memory, or an error. */
static int check_handle(starpu_data_handle_t h, const char* fn) {
  if (h == NULL) return fail(RONDO_ERR_INVALID_ARGUMENT, "%s: handle is NULL", fn);
  switch (starpu_data_get_interface_id(h)) {
    case STARPU_VARIABLE_INTERFACE_ID:
    case STARPU_VECTOR_INTERFACE_ID:
      return RONDO_OK;
    case STARPU_MATRIX_INTERFACE_ID:
      if (starpu_matrix_get_local_ld(h) != starpu_matrix_get_nx(h))
        return fail(RONDO_ERR_UNSUPPORTED,
                    "%s: a matrix handle with ld %u != nx %u is not "
                    "contiguous (register tiles with ld = nx)",
                    fn, starpu_matrix_get_local_ld(h),
                    starpu_matrix_get_nx(h));
      return RONDO_OK;
    default:
      return fail(RONDO_ERR_UNSUPPORTED,
                  "%s: only variable, vector and matrix handles are "
                  "supported (interface id %d)",
                  fn, (int)starpu_data_get_interface_id(h));
  }
}

static struct xfer* new_xfer(enum xfer_kind kind, starpu_data_handle_t h,
                             int tag) {
  struct xfer* x = aligned_alloc(64, (sizeof(struct xfer) + 63) / 64 * 64);
  if (x == NULL) return NULL;
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->handle = h;
  x->tag = tag;
  x->peer = -1;
  rondo_nmad_request_init(&x->req);
  return x;
}

static void free_xfer(struct xfer* x) {
  free(x->ranks);
  free(x->prios);
  free(x->dones);
  free(x);
}

static int add_done(struct xfer* x, const rondo_starpu_completion_t* done) {
  if (x->ndone == x->capdone) {
    const int cap = x->capdone ? 2 * x->capdone : 2;
    rondo_starpu_completion_t* d =
        realloc(x->dones, sizeof *d * (size_t)cap);
    if (d == NULL) return RONDO_ERR_NO_RESOURCE;
    x->dones = d;
    x->capdone = cap;
  }
  if (done != NULL) {
    x->dones[x->ndone] = *done;
  } else {
    memset(&x->dones[x->ndone], 0, sizeof x->dones[x->ndone]);
  }
  x->ndone++;
  return RONDO_OK;
}

/* ---- completion (the completion thread) ---- */

static void finish(struct xfer* x) {
  int status = x->status;
  if (x->kind == XFER_RECV && status == RONDO_OK) {
    size_t size = 0;
    int source = -1;
    rondo_nmad_recv_info(&x->req, &source, NULL, &size);
    if (size != x->size) {
      status = RONDO_ERR_TRUNCATED;
      log_line(RONDO_LOG_LEVEL_ERROR,
               "rondo_starpu: rank %d: the message from rank %d with tag %d "
               "holds %zu bytes, the receiving handle %zu: size mismatch, "
               "the data is not used",
               g.rank, source, x->tag, size, x->size);
    }
  } else if (x->kind == XFER_RECV && status == RONDO_ERR_TRUNCATED) {
    size_t size = 0;
    rondo_nmad_recv_info(&x->req, NULL, NULL, &size);
    log_line(RONDO_LOG_LEVEL_ERROR,
             "rondo_starpu: rank %d: the message from rank %d with tag %d "
             "holds %zu bytes, more than the receiving handle's %zu: size "
             "mismatch, the data is not used",
             g.rank, x->peer, x->tag, size, x->size);
  } else if (status != RONDO_OK) {
    log_line(RONDO_LOG_LEVEL_ERROR,
             "rondo_starpu: rank %d: %s of tag %d %s rank %d: %s%s%s",
             g.rank, x->kind == XFER_RECV ? "receive" : "send", x->tag,
             x->kind == XFER_RECV ? "from" : "to", x->peer,
             rondo_strerror(status), x->peer >= 0 ? ": " : "",
             x->peer >= 0 ? rondo_nmad_failure_text(x->peer) : "");
  }
  if (status != RONDO_OK) {
    atomic_fetch_add(&g.errors, 1);
    /* Before the release: no task may run on data nobody vouches for. */
    for (int i = 0; i < x->ndone; ++i)
      if (x->dones[i].callback == NULL) {
        log_line(RONDO_LOG_LEVEL_ERROR,
                 "rondo_starpu: rank %d: a transfer failed (%s) and no "
                 "completion callback handles it: aborting",
                 g.rank, rondo_strerror(status));
        _exit(3);
      }
  }
  starpu_data_release(x->handle);
  for (int i = 0; i < x->ndone; ++i) {
    const rondo_starpu_completion_t* d = &x->dones[i];
    if (d->callback != NULL) d->callback(d->arg, status);
    if (d->notify_tag) starpu_tag_notify_from_apps(d->tag);
  }
  free_xfer(x);
  atomic_fetch_sub(&g.in_flight, 1);
}

static void* completion_thread(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g.mu);
  for (;;) {
    while (g.done_head == NULL && !g.stop) pthread_cond_wait(&g.cond, &g.mu);
    if (g.done_head == NULL && g.stop) break;
    struct xfer* x = g.done_head;
    g.done_head = x->next;
    if (g.done_head == NULL) g.done_tail = NULL;
    x->next = NULL;
    pthread_mutex_unlock(&g.mu);
    finish(x);
    pthread_mutex_lock(&g.mu);
  }
  pthread_mutex_unlock(&g.mu);
  return NULL;
}

static void queue_done(struct xfer* x, int status) {
  x->status = status;
  pthread_mutex_lock(&g.mu);
  x->next = NULL;
  if (g.done_tail) g.done_tail->next = x;
  else g.done_head = x;
  g.done_tail = x;
  pthread_cond_signal(&g.cond);
  pthread_mutex_unlock(&g.mu);
}

/* An engine task (rondo_nmad's callback task): no lock is held. */
static void on_nmad_done(rondo_nmad_request_t* req, int status, void* arg) {
  (void)req;
  queue_done(arg, status);
}

/* ---- starting the transfer once the data is there (a StarPU thread) ---- */

static void on_acquired(void* arg) {
  struct xfer* x = arg;
  x->ptr = starpu_data_get_local_ptr(x->handle);
  x->size = starpu_data_get_size(x->handle);
  int rc = rondo_nmad_request_set_callback(&x->req, on_nmad_done, x);
  if (rc == RONDO_OK) {
    switch (x->kind) {
      case XFER_RECV:
        rc = rondo_nmad_irecv(g.session, x->peer, x->tag, x->ptr, x->size,
                              &x->req);
        break;
      case XFER_SEND:
        rc = rondo_nmad_isend(g.session, x->peer, x->tag, x->ptr, x->size,
                              x->priority, &x->req);
        atomic_fetch_add(&g.single_sends, 1);
        break;
      case XFER_GROUP: {
        /* The recipients merged until now; later sends are on their own. */
        pthread_mutex_lock(&g.mu);
        struct xfer** p = &g.table[slot(x->handle, x->tag)];
        while (*p != NULL && *p != x) p = &(*p)->next;
        if (*p == x) *p = x->next;
        x->next = NULL;
        x->n = rondo_nmad_detector_ready(g.detector, x->handle, x->tag,
                                         x->ranks, x->prios, g.size);
        rondo_nmad_detector_forget(g.detector, x->handle, x->tag);
        pthread_mutex_unlock(&g.mu);
        if (x->n >= 2) {
          rc = rondo_nmad_dynamic_bcast(g.session, x->ptr, x->size, x->tag,
                                        x->ranks, x->prios, x->n, &x->req);
          atomic_fetch_add(&g.broadcasts, 1);
          atomic_fetch_add(&g.bcast_recipients, (unsigned long long)x->n);
        } else if (x->n == 1) {
          x->peer = x->ranks[0];
          rc = rondo_nmad_isend(g.session, x->ranks[0], x->tag, x->ptr,
                                x->size, x->prios[0], &x->req);
          atomic_fetch_add(&g.single_sends, 1);
        } else {
          rc = fail(RONDO_ERR_INTERNAL, "no recipient left for tag %d",
                    x->tag);
        }
        break;
      }
      case XFER_BCAST:
        rc = rondo_nmad_dynamic_bcast(g.session, x->ptr, x->size, x->tag,
                                      x->ranks, x->prios, x->n, &x->req);
        atomic_fetch_add(&g.broadcasts, 1);
        atomic_fetch_add(&g.bcast_recipients, (unsigned long long)x->n);
        break;
    }
  }
  if (rc != RONDO_OK) {
    log_line(RONDO_LOG_LEVEL_ERROR,
             "rondo_starpu: rank %d: cannot start the transfer of tag %d: %s",
             g.rank, x->tag, rondo_nmad_last_error());
    queue_done(x, rc);
  }
}

static int acquire(struct xfer* x, enum starpu_data_access_mode mode) {
  /* The first transfer in flight: workers that went to sleep while nothing
   * was in flight (the hook answered "may block") wake up and call the
   * hook again, so that idle workers progress the communication. */
  if (atomic_fetch_add(&g.in_flight, 1) == 0)
    starpu_wake_all_blocked_workers();
  if (starpu_data_acquire_cb(x->handle, mode, on_acquired, x) != 0) {
    atomic_fetch_sub(&g.in_flight, 1);
    if (x->kind == XFER_GROUP) {
      pthread_mutex_lock(&g.mu);
      struct xfer** p = &g.table[slot(x->handle, x->tag)];
      while (*p != NULL && *p != x) p = &(*p)->next;
      if (*p == x) *p = x->next;
      rondo_nmad_detector_ready(g.detector, x->handle, x->tag, x->ranks,
                                x->prios, g.size);
      rondo_nmad_detector_forget(g.detector, x->handle, x->tag);
      pthread_mutex_unlock(&g.mu);
    }
    free_xfer(x);
    return fail(RONDO_ERR_INTERNAL,
                "starpu_data_acquire_cb refused the handle");
  }
  return RONDO_OK;
}

/* ---- the progression hook (idle StarPU workers) ---- */

static unsigned progression_hook(void* arg) {
  (void)arg;
  atomic_fetch_add(&g.hook_running, 1);
  if (!atomic_load(&g.hook_enabled)) {
    atomic_fetch_sub(&g.hook_running, 1);
    return 1;
  }
  atomic_fetch_add_explicit(&g.hook_calls, 1, memory_order_relaxed);
  const int core = rondo_engine_current_core();
  if (core >= 0 && rondo_engine_run_once(core) > 0)
    atomic_fetch_add_explicit(&g.hook_work, 1, memory_order_relaxed);
  /* The worker may sleep only when no communication is in flight. */
  const unsigned may_block =
      atomic_load_explicit(&g.in_flight, memory_order_relaxed) == 0 &&
              rondo_engine_background() == 0
          ? 1
          : 0;
  atomic_fetch_sub(&g.hook_running, 1);
  return may_block;
}

/* ---- the API ---- */

int rondo_starpu_init(void) {
  if (!starpu_is_initialized())
    return fail(RONDO_ERR_NOT_INITIALIZED,
                "rondo_starpu_init: call starpu_init() first");
  if (g.initialized)
    return fail(RONDO_ERR_BUSY,
                "rondo_starpu_init: already initialised (call it once per "
                "process)");
  if (!rondo_nmad_initialized()) {
    int rc = rondo_nmad_init();
    if (rc != RONDO_OK)
      return fail(rc, "rondo_starpu_init: %s", rondo_nmad_last_error());
    g.started_nmad = 1;
  }
  g.rank = rondo_nmad_rank();
  g.size = rondo_nmad_size();
  int rc = rondo_nmad_session_open("rondo_starpu", &g.session);
  if (rc != RONDO_OK)
    return fail(rc, "rondo_starpu_init: %s", rondo_nmad_last_error());
  g.detector = rondo_nmad_detector_create();
  if (g.detector == NULL)
    return fail(RONDO_ERR_NO_RESOURCE, "rondo_starpu_init: out of memory");
  atomic_store(&g.detection, 1);
  g.stop = 0;
  if (pthread_create(&g.thread, NULL, completion_thread, NULL) != 0) {
    rondo_nmad_detector_destroy(g.detector);
    return fail(RONDO_ERR_NO_RESOURCE,
                "rondo_starpu_init: cannot start the completion thread");
  }
  atomic_store(&g.hook_enabled, 1);
  g.hook_id = starpu_progression_hook_register(progression_hook, NULL);
  if (g.hook_id < 0) {
    pthread_mutex_lock(&g.mu);
    g.stop = 1;
    pthread_cond_signal(&g.cond);
    pthread_mutex_unlock(&g.mu);
    pthread_join(g.thread, NULL);
    rondo_nmad_detector_destroy(g.detector);
    return fail(RONDO_ERR_NO_RESOURCE,
                "rondo_starpu_init: StarPU has no free progression hook slot");
  }
  /* Workers that went to sleep before the hook existed never asked it:
   * wake them so that they call it from now on. */
  starpu_wake_all_blocked_workers();
  g.initialized = 1;
  return RONDO_OK;
}

int rondo_starpu_init_all(struct starpu_conf* conf) {
  if (starpu_is_initialized())
    return fail(RONDO_ERR_BUSY,
                "rondo_starpu_init_all: StarPU is initialised already (call "
                "rondo_starpu_init instead)");
  int started = 0;
  if (!rondo_nmad_initialized()) {
    int rc = rondo_nmad_init();
    if (rc != RONDO_OK)
      return fail(rc, "rondo_starpu_init_all: %s", rondo_nmad_last_error());
    started = 1;
  }
  /* Rank 0 first: it writes StarPU's bus files if they are missing. */
  int rc = RONDO_OK;
  if (rondo_nmad_rank() == 0 && starpu_init(conf) != 0) rc = RONDO_ERR_INTERNAL;
  if (rondo_nmad_barrier() != RONDO_OK && rc == RONDO_OK) rc = RONDO_ERR_PEER_FAILED;
  if (rondo_nmad_rank() != 0 && rc == RONDO_OK && starpu_init(conf) != 0)
    rc = RONDO_ERR_INTERNAL;
  if (rc != RONDO_OK) {
    if (started) rondo_nmad_finalize();
    return fail(rc, "rondo_starpu_init_all: starpu_init failed on rank %d",
                rondo_nmad_rank());
  }
  rc = rondo_starpu_init();
  if (rc == RONDO_OK && started) g.started_nmad = 1;
  return rc;
}

int rondo_starpu_wait_all(void) {
  if (!g.initialized)
    return fail(RONDO_ERR_NOT_INITIALIZED, "rondo_starpu: not initialised");
  while (atomic_load(&g.in_flight) > 0) {
    const int core = rondo_engine_current_core();
    if (core < 0 || rondo_engine_run_once(core) <= 0) sched_yield();
  }
  return RONDO_OK;
}

int rondo_starpu_shutdown(void) {
  if (!g.initialized)
    return fail(RONDO_ERR_NOT_INITIALIZED,
                "rondo_starpu_shutdown: not initialised");
  rondo_starpu_wait_all();
  starpu_progression_hook_deregister(g.hook_id);
  atomic_store(&g.hook_enabled, 0);
  while (atomic_load(&g.hook_running) != 0) sched_yield();
  pthread_mutex_lock(&g.mu);
  g.stop = 1;
  pthread_cond_signal(&g.cond);
  pthread_mutex_unlock(&g.mu);
  pthread_join(g.thread, NULL);
  rondo_nmad_detector_destroy(g.detector);
  g.detector = NULL;
  g.initialized = 0;
  if (g.started_nmad) {
    g.started_nmad = 0;
    return rondo_nmad_finalize();
  }
  return RONDO_OK;
}

int rondo_starpu_rank(void) {
  return g.initialized ? g.rank : RONDO_ERR_NOT_INITIALIZED;
}
int rondo_starpu_size(void) {
  return g.initialized ? g.size : RONDO_ERR_NOT_INITIALIZED;
}

int rondo_starpu_set_detection(int on) {
  if (!g.initialized)
    return fail(RONDO_ERR_NOT_INITIALIZED, "rondo_starpu: not initialised");
  atomic_store(&g.detection, on ? 1 : 0);
  return RONDO_OK;
}

int rondo_starpu_flush(starpu_data_handle_t handle) {
  if (!g.initialized)
    return fail(RONDO_ERR_NOT_INITIALIZED, "rondo_starpu: not initialised");
  pthread_mutex_lock(&g.mu);
  for (size_t i = 0; i < TABLE_SIZE; ++i) {
    struct xfer** p = &g.table[i];
    while (*p != NULL) {
      if ((*p)->handle == handle) {
        /* Still acquiring: it keeps its recipients, new sends start anew. */
        struct xfer* x = *p;
        *p = x->next;
        x->next = NULL;
        x->kind = XFER_BCAST; /* takes its list at acquisition */
        x->n = rondo_nmad_detector_ready(g.detector, x->handle, x->tag,
                                         x->ranks, x->prios, g.size);
        rondo_nmad_detector_forget(g.detector, x->handle, x->tag);
        if (x->n == 1) {
          x->kind = XFER_SEND;
          x->peer = x->ranks[0];
          x->priority = x->prios[0];
        }
      } else {
        p = &(*p)->next;
      }
    }
  }
  pthread_mutex_unlock(&g.mu);
  return RONDO_OK;
}

static int check_rank(int rank, const char* fn, const char* what) {
  if (rank < 0 || rank >= g.size)
    return fail(RONDO_ERR_INVALID_ARGUMENT,
                "%s: %s = %d (the job has ranks 0..%d)", fn, what, rank,
                g.size - 1);
  return RONDO_OK;
}

int rondo_starpu_isend_handle(starpu_data_handle_t handle, int dest, int tag,
                              int priority,
                              const rondo_starpu_completion_t* done) {
  const char* fn = "rondo_starpu_isend_handle";
  if (!g.initialized)
    return fail(RONDO_ERR_NOT_INITIALIZED, "%s: not initialised", fn);
  int rc = check_handle(handle, fn);
  if (rc == RONDO_OK) rc = check_rank(dest, fn, "dest");
  if (rc != RONDO_OK) return rc;
  if (tag < 0) return fail(RONDO_ERR_INVALID_ARGUMENT, "%s: tag = %d (must be >= 0)", fn, tag);
  atomic_fetch_add(&g.sends, 1);
  if (atomic_load(&g.detection) && dest != g.rank) {
    pthread_mutex_lock(&g.mu);
    struct xfer** head = &g.table[slot(handle, tag)];
    struct xfer* x = *head;
    while (x != NULL && !(x->handle == handle && x->tag == tag)) x = x->next;
    if (x != NULL) {
      /* Its data is not ready yet: join its broadcast. */
      if (rondo_nmad_detector_register(g.detector, handle, tag, dest,
                                       priority) == 1) {
        rc = add_done(x, done);
        pthread_mutex_unlock(&g.mu);
        return rc;
      }
    } else {
      x = new_xfer(XFER_GROUP, handle, tag);
      if (x != NULL) {
        x->ranks = malloc(sizeof(int) * (size_t)g.size);
        x->prios = malloc(sizeof(int) * (size_t)g.size);
      }
      if (x == NULL || x->ranks == NULL || x->prios == NULL ||
          add_done(x, done) != RONDO_OK) {
        pthread_mutex_unlock(&g.mu);
        if (x) free_xfer(x);
        return fail(RONDO_ERR_NO_RESOURCE, "%s: out of memory", fn);
      }
      if (rondo_nmad_detector_register(g.detector, handle, tag, dest,
                                       priority) == 1) {
        x->next = *head;
        *head = x;
        pthread_mutex_unlock(&g.mu);
        return acquire(x, STARPU_R);
      }
      free_xfer(x);
    }
    pthread_mutex_unlock(&g.mu);
    /* Not mergeable (already handed out): a send of its own. */
  }
  struct xfer* x = new_xfer(XFER_SEND, handle, tag);
  if (x == NULL || add_done(x, done) != RONDO_OK) {
    if (x) free_xfer(x);
    return fail(RONDO_ERR_NO_RESOURCE, "%s: out of memory", fn);
  }
  x->peer = dest;
  x->priority = priority;
  return acquire(x, STARPU_R);
}

int rondo_starpu_irecv_handle(starpu_data_handle_t handle, int source,
                              int tag, const rondo_starpu_completion_t* done) {
  const char* fn = "rondo_starpu_irecv_handle";
  if (!g.initialized)
    return fail(RONDO_ERR_NOT_INITIALIZED, "%s: not initialised", fn);
  int rc = check_handle(handle, fn);
  if (rc == RONDO_OK) rc = check_rank(source, fn, "source");
  if (rc != RONDO_OK) return rc;
  if (tag < 0) return fail(RONDO_ERR_INVALID_ARGUMENT, "%s: tag = %d (must be >= 0)", fn, tag);
  struct xfer* x = new_xfer(XFER_RECV, handle, tag);
  if (x == NULL || add_done(x, done) != RONDO_OK) {
    if (x) free_xfer(x);
    return fail(RONDO_ERR_NO_RESOURCE, "%s: out of memory", fn);
  }
  x->peer = source;
  atomic_fetch_add(&g.receives, 1);
  return acquire(x, STARPU_W);
}

int rondo_starpu_bcast_handle(starpu_data_handle_t handle, const int* ranks,
                              const int* priorities, int n, int tag,
                              const rondo_starpu_completion_t* done) {
  const char* fn = "rondo_starpu_bcast_handle";
  if (!g.initialized)
    return fail(RONDO_ERR_NOT_INITIALIZED, "%s: not initialised", fn);
  int rc = check_handle(handle, fn);
  if (rc != RONDO_OK) return rc;
  if (n < 1 || n > g.size - 1 || ranks == NULL)
    return fail(RONDO_ERR_INVALID_ARGUMENT,
                "%s: n = %d recipients (must be 1..%d, with ranks not NULL)",
                fn, n, g.size - 1);
  if (tag < 0) return fail(RONDO_ERR_INVALID_ARGUMENT, "%s: tag = %d (must be >= 0)", fn, tag);
  for (int i = 0; i < n; ++i) {
    rc = check_rank(ranks[i], fn, "ranks[i]");
    if (rc != RONDO_OK) return rc;
    if (ranks[i] == g.rank)
      return fail(RONDO_ERR_INVALID_ARGUMENT,
                  "%s: ranks[%d] = %d is this rank, the broadcast's root", fn,
                  i, ranks[i]);
    for (int j = 0; j < i; ++j)
      if (ranks[j] == ranks[i])
        return fail(RONDO_ERR_INVALID_ARGUMENT,
                    "%s: rank %d is listed twice (ranks[%d] and ranks[%d])",
                    fn, ranks[i], j, i);
  }
  struct xfer* x = new_xfer(XFER_BCAST, handle, tag);
  if (x != NULL) {
    x->ranks = malloc(sizeof(int) * (size_t)n);
    x->prios = malloc(sizeof(int) * (size_t)n);
  }
  if (x == NULL || x->ranks == NULL || x->prios == NULL ||
      add_done(x, done) != RONDO_OK) {
    if (x) free_xfer(x);
    return fail(RONDO_ERR_NO_RESOURCE, "%s: out of memory", fn);
  }
  memcpy(x->ranks, ranks, sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) x->prios[i] = priorities ? priorities[i] : 0;
  x->n = n;
  atomic_fetch_add(&g.sends, (unsigned long long)n);
  return acquire(x, STARPU_R);
}

void rondo_starpu_get_stats(rondo_starpu_stats_t* out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  out->sends = atomic_load(&g.sends);
  out->receives = atomic_load(&g.receives);
  out->broadcasts = atomic_load(&g.broadcasts);
  out->bcast_recipients = atomic_load(&g.bcast_recipients);
  out->single_sends = atomic_load(&g.single_sends);
  out->hook_calls = atomic_load(&g.hook_calls);
  out->hook_work = atomic_load(&g.hook_work);
  out->errors = atomic_load(&g.errors);
  if (g.detector != NULL) {
    rondo_nmad_detector_stats_t d;
    rondo_nmad_detector_stats(g.detector, &d);
    out->missed = d.missed;
  }
}
