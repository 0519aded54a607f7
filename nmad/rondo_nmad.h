/* Rondo nmad: C API for communication libraries and task runtimes (the
 * StarPU backend nmad/starpu, say). A thin shell over rondo::nmad::Core and
 * Session (nmad/core.h): point-to-point messages matched by (source, tag)
 * per session, dynamic broadcasts (nmad/dynamic_bcast.h) and their
 * detection helper.
 *
 * One process-wide instance, made by rondo_nmad_init() (collective: every
 * rank of the job calls it) from the job's launcher (rondo-run, mpirun's
 * PMIx, Slurm's srun --mpi=pmix, or a singleton) and destroyed by
 * rondo_nmad_finalize(). It runs on the engine of the C API
 * (engine/rondo_engine.h): the one rondo_engine_init() made, or, if there
 * is none, one made here with the node's placement (as MPI_Init does) and
 * handed to the engine's C API, so rondo_engine_run_once() and the traces
 * act on it; rondo_nmad_finalize() then finalizes it too. A process uses
 * either this API or MadMPI (mpi.h), not both.
 *
 * Requests are caller-owned, like rondo_task_t: embed a rondo_nmad_request_t
 * in your own structure, rondo_nmad_request_init() it once, and keep it in
 * place until it completes; it may then be reused. A completion callback
 * (rondo_nmad_request_set_callback) runs once per operation from an engine
 * task, on whichever thread runs the engine's tasks (a progress thread, a
 * runtime's idle hook through rondo_engine_run_once(), a waiter), with no
 * Rondo lock held: it may start new operations and call into the runtime.
 *
 * Return values are rondo status codes (RONDO_OK = 0, errors < 0; see
 * rondo_strerror()); rondo_nmad_last_error() gives the detailed message of
 * the calling thread's last failed call. All functions but init and
 * finalize are thread-safe. */
#ifndef RONDO_NMAD_RONDO_NMAD_H_
#define RONDO_NMAD_RONDO_NMAD_H_

#include <stddef.h>

#include "engine/rondo_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Connects to every rank of the job (collective). RONDO_ERR_BUSY if already
 * initialised; RONDO_ERR_PEER_FAILED when the launcher cannot be reached;
 * RONDO_ERR_INVALID_ARGUMENT for a bad RONDO_* variable. */
int rondo_nmad_init(void);
/* Collective: waits for every rank, then closes the connections (and the
 * engine, if rondo_nmad_init made it). */
int rondo_nmad_finalize(void);
int rondo_nmad_initialized(void);
/* This process's rank and the job's size (negative error codes before
 * init). */
int rondo_nmad_rank(void);
int rondo_nmad_size(void);
/* The calling thread's last error message ("" if none). */
const char* rondo_nmad_last_error(void);
/* What is known of `rank`'s failure: "" while it is alive. The string is
 * valid until the calling thread's next call of this function. */
const char* rondo_nmad_failure_text(int rank);
/* A barrier over all ranks (set-up and measurements). */
int rondo_nmad_barrier(void);

/* Sessions: independent matching spaces, matched across ranks by name.
 * Opening a name twice gives the same session. */
typedef struct rondo_nmad_session* rondo_nmad_session_t;
int rondo_nmad_session_open(const char* name, rondo_nmad_session_t* out);

enum { RONDO_NMAD_ANY_SOURCE = -1, RONDO_NMAD_ANY_TAG = -1 };

#define RONDO_NMAD_REQUEST_STORAGE 192
typedef struct rondo_nmad_request {
  RONDO_ALIGN64 unsigned char opaque[RONDO_NMAD_REQUEST_STORAGE];
} rondo_nmad_request_t;

/* `status` is the operation's final status (RONDO_OK, RONDO_ERR_TRUNCATED,
 * RONDO_ERR_PEER_FAILED, ...). */
typedef void (*rondo_nmad_callback)(rondo_nmad_request_t* req, int status,
                                    void* arg);

/* Once, before the request's first use. */
void rondo_nmad_request_init(rondo_nmad_request_t* req);
/* Sets (fn non-NULL) or clears the completion callback of the request's
 * next operations. RONDO_ERR_BUSY while an operation is in flight. */
int rondo_nmad_request_set_callback(rondo_nmad_request_t* req,
                                    rondo_nmad_callback fn, void* arg);

/* Nonblocking send of `len` bytes at `buf` (left unchanged until the
 * request completes); higher `priority` leaves first under the prio
 * strategy. RONDO_OK: started (its final status comes with the request).
 * With nothing started: RONDO_ERR_INVALID_ARGUMENT (rank, tag, buffer;
 * see rondo_nmad_last_error()), RONDO_ERR_BUSY (request in flight),
 * RONDO_ERR_PEER_FAILED (dest is known dead), RONDO_ERR_NOT_INITIALIZED. */
int rondo_nmad_isend(rondo_nmad_session_t session, int dest, int tag,
                     const void* buf, size_t len, int priority,
                     rondo_nmad_request_t* req);
/* Nonblocking receive of at most `len` bytes; source may be
 * RONDO_NMAD_ANY_SOURCE and tag RONDO_NMAD_ANY_TAG. A longer message
 * completes the request with RONDO_ERR_TRUNCATED (its first `len` bytes
 * delivered; rondo_nmad_recv_info() gives the sender's size). */
int rondo_nmad_irecv(rondo_nmad_session_t session, int source, int tag,
                     void* buf, size_t len, rondo_nmad_request_t* req);
/* Dynamic broadcast (nmad/dynamic_bcast.h): `len` bytes at `buf` to the n
 * ranks of `ranks` (priorities: NULL or n values, higher nearer the root),
 * along a binomial tree unrolled by active messages. Each recipient
 * receives with an ordinary rondo_nmad_irecv(this rank, tag). The request
 * completes once this rank's own sends are done. */
int rondo_nmad_dynamic_bcast(rondo_nmad_session_t session, const void* buf,
                             size_t len, int tag, const int* ranks,
                             const int* priorities, int n,
                             rondo_nmad_request_t* req);
/* RONDO_IN_PROGRESS while in flight (after one progress pass), else the
 * final status. */
int rondo_nmad_test(rondo_nmad_request_t* req);
/* Progresses until the request completes; its final status. */
int rondo_nmad_wait(rondo_nmad_request_t* req);
/* A completed receive: its source, tag and the sender's size in bytes
 * (any pointer may be NULL). RONDO_ERR_BUSY before completion. */
int rondo_nmad_recv_info(const rondo_nmad_request_t* req, int* source,
                         int* tag, size_t* size);

/* ---- Broadcast detection (the dynamic-broadcast paper, Section 3.1) ----
 * A runtime registers every future send of a piece of data (key, tag) to a
 * rank as soon as it knows of it, long before the data is ready; when the
 * data is ready, rondo_nmad_detector_ready() hands back the recipients
 * merged so far, to send as one dynamic broadcast (two or more) or one
 * send. A send registered after that is "missed": send it yourself. */
typedef struct rondo_nmad_detector* rondo_nmad_detector_t;
rondo_nmad_detector_t rondo_nmad_detector_create(void);
void rondo_nmad_detector_destroy(rondo_nmad_detector_t d);
/* 1: merged into the pending broadcast of (key, tag); 0: not pending (send
 * it yourself); negative: a bad argument. A rank registered twice for the
 * same data is kept once. */
int rondo_nmad_detector_register(rondo_nmad_detector_t d, const void* key,
                                 int tag, int rank, int priority);
/* The data of (key, tag) is ready: copies up to `max` recipients (ranks
 * and priorities, in registration order) and returns how many there were
 * (more than `max`: call again with more room; they are kept until a call
 * takes them all). */
int rondo_nmad_detector_ready(rondo_nmad_detector_t d, const void* key,
                              int tag, int* ranks, int* priorities, int max);
/* The runtime reuses `key` for new data under `tag`. */
void rondo_nmad_detector_forget(rondo_nmad_detector_t d, const void* key,
                                int tag);
typedef struct rondo_nmad_detector_stats {
  unsigned long long registered, broadcasts, single, merged, missed,
      duplicates;
} rondo_nmad_detector_stats_t;
void rondo_nmad_detector_stats(rondo_nmad_detector_t d,
                               rondo_nmad_detector_stats_t* out);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_NMAD_RONDO_NMAD_H_ */
