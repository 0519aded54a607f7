/* rondo_starpu: Rondo as StarPU's communication backend, the way StarPU's
 * NewMadeleine backend sits on nmad (issue 19; the dynamic-broadcast paper,
 * ../shared/papers/dynamic-broadcasts.md).
 *
 *   - Progress: rondo_starpu_init() registers Rondo's engine with StarPU's
 *     progression hook, so that idle StarPU workers run Rondo's tasks on
 *     their own cores (rondo_engine_run_once); the engine's quiet progress
 *     covers the time when every worker computes. No core is taken from
 *     StarPU unless RONDO_PROGRESS / RONDO_COMM_CORES ask for one.
 *   - Data-handle communication in the spirit of StarPU-MPI: a send acquires
 *     the handle for reading once the tasks submitted before it that write
 *     it are done, sends its data, and releases it; a receive acquires it
 *     for writing, so tasks submitted after the receive that access the
 *     handle wait for the data (StarPU's implicit dependencies), and
 *     releases it when the data is there. Completion is a callback, a StarPU
 *     tag notified, or both.
 *   - Dynamic broadcasts: sends of one (handle, tag) to several ranks that
 *     are registered before the handle's data is ready are merged
 *     (nmad's BroadcastDetector through rondo_nmad_detector_*) and leave as
 *     one dynamic broadcast when it is ready; the receivers post ordinary
 *     receives. rondo_starpu_set_detection(0) sends each one by itself
 *     (the "naive" mode). Contract: a new version of a handle's data must
 *     be sent under a new tag, or after rondo_starpu_flush(handle), else a
 *     send registered after the new writer was submitted could join the
 *     broadcast of the old version.
 *
 * Supported handles: StarPU's variable, vector and matrix interfaces with
 * contiguous data (a matrix whose ld equals its nx). Others are refused
 * with RONDO_ERR_UNSUPPORTED.
 *
 * Errors: calls return rondo status codes (engine/rondo_engine.h) with a
 * message in rondo_starpu_last_error(). A transfer that fails later (a
 * received message whose size differs from the handle's, a dead peer)
 * prints "rondo_starpu: ..." with the ranks, tag and sizes and completes
 * with the error status; the receiving handle's data is not used (StarPU
 * tasks waiting on it still run: check the status in the completion). A
 * transfer without a completion callback that fails aborts the process, as
 * MPI_ERRORS_ARE_FATAL does, rather than let tasks compute on a wrong tile.
 *
 * Thread-safety: every call but init and shutdown may come from any thread,
 * StarPU callbacks and tasks included. */
#ifndef RONDO_NMAD_STARPU_RONDO_STARPU_H_
#define RONDO_NMAD_STARPU_RONDO_STARPU_H_

#include <starpu.h>

#include "engine/rondo_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* After starpu_init(), once per process (collective: every rank of the
 * job). Starts Rondo's nmad layer (rondo_nmad_init) unless it runs
 * already. RONDO_ERR_NOT_INITIALIZED before starpu_init();
 * RONDO_ERR_BUSY the second time. */
int rondo_starpu_init(void);
/* StarPU and rondo_starpu together, collectively: rondo_nmad_init(), then
 * starpu_init(conf) on rank 0 before the other ranks (StarPU 1.3 measures
 * and writes its bus performance files at the first starpu_init of a
 * STARPU_HOME, and concurrent first inits on one machine crash in
 * _starpu_load_bus_performance_files), then rondo_starpu_init(). `conf`
 * may be NULL (StarPU's defaults). RONDO_ERR_INTERNAL if starpu_init
 * fails. */
int rondo_starpu_init_all(struct starpu_conf* conf);
/* Waits for the transfers in flight, unregisters the hook and stops nmad
 * if rondo_starpu_init started it (collective). Before starpu_shutdown(). */
int rondo_starpu_shutdown(void);
int rondo_starpu_rank(void);
int rondo_starpu_size(void);
const char* rondo_starpu_last_error(void);

/* Broadcast detection on (1, the default) or off (0). Call between
 * transfers (it applies to sends registered from then on). */
int rondo_starpu_set_detection(int on);
/* Closes the pending broadcasts of `handle`: later sends start new ones. */
int rondo_starpu_flush(starpu_data_handle_t handle);

/* What to do when a transfer completes. `callback` (may be NULL) gets its
 * arg and the final status (RONDO_OK, RONDO_ERR_TRUNCATED for a size
 * mismatch, RONDO_ERR_PEER_FAILED, ...); with `notify_tag` set,
 * starpu_tag_notify_from_apps(tag) follows (tasks declared with
 * starpu_tag_declare_deps on it then start). NULL: nothing, and a failure
 * is fatal. Copied at the call. */
typedef struct rondo_starpu_completion {
  void (*callback)(void* arg, int status);
  void* arg;
  int notify_tag;
  starpu_tag_t tag;
} rondo_starpu_completion_t;

/* Sends `handle`'s data to `dest` with `tag` (>= 0) once the data is
 * ready. `priority`: StarPU's, higher first (nmad's prio strategy and the
 * broadcast tree honour it). Detached: returns at once. */
int rondo_starpu_isend_handle(starpu_data_handle_t handle, int dest, int tag,
                              int priority,
                              const rondo_starpu_completion_t* done);
/* Receives `handle`'s data from `source` with `tag`. Tasks submitted after
 * this call that access `handle` wait for the data. */
int rondo_starpu_irecv_handle(starpu_data_handle_t handle, int source,
                              int tag, const rondo_starpu_completion_t* done);
/* Sends `handle`'s data to the n ranks of `ranks` (priorities: NULL or n
 * values) as one dynamic broadcast once the data is ready, whatever the
 * detection setting. */
int rondo_starpu_bcast_handle(starpu_data_handle_t handle, const int* ranks,
                              const int* priorities, int n, int tag,
                              const rondo_starpu_completion_t* done);

/* Blocks (running Rondo's progress) until every transfer started so far
 * has completed. */
int rondo_starpu_wait_all(void);

typedef struct rondo_starpu_stats {
  unsigned long long sends;          /* send requests (isend_handle calls) */
  unsigned long long receives;
  unsigned long long broadcasts;     /* dynamic broadcasts started */
  unsigned long long bcast_recipients;
  unsigned long long single_sends;   /* messages sent point to point */
  unsigned long long missed;         /* sends registered too late to merge */
  unsigned long long hook_calls;     /* progression hook calls */
  unsigned long long hook_work;      /* of which ran engine tasks */
  unsigned long long errors;
} rondo_starpu_stats_t;
void rondo_starpu_get_stats(rondo_starpu_stats_t* out);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_NMAD_STARPU_RONDO_STARPU_H_ */
