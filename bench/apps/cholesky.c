/* bench/apps/cholesky.c: a synthetic task flow with the communication
 * pattern of the tiled Cholesky factorization (the dynamic-broadcast paper,
 * Section 5.2), run twice in one job: with one MPI_Isend per remote consumer
 * rank ("naive") and with MPIX_Dynamic_bcast ("dynamic"). See docs/cholesky.md.
 *
 * The matrix is T x T lower-triangular tiles of b x b doubles, distributed
 * 2D block-cyclically over a p x q grid: tile (i, j) lives on rank
 * (i mod p) * q + (j mod q). Every rank walks the same sequential task flow
 * (Algorithm 1), as StarPU-MPI does:
 *   for k: POTRF(k,k)
 *          for m > k: TRSM(m,k)   reads A[k][k]
 *          for m > k: SYRK(m,m)   reads A[m][k]
 *                     for k < n < m: GEMM(m,n) reads A[m][k], A[n][k]
 * The owner of the tile a task writes runs it. The only tiles that cross
 * the network are final ones: A[k][k] after POTRF (to the TRSMs of its
 * panel: the other process rows of its process column) and A[m][k] after
 * TRSM (to SYRK(m,m) and the GEMMs of row m and of column m: the process
 * row and column of m), so one receive per (tile, rank) is enough: a tile
 * needed by several tasks of one rank is received once (the runtime's
 * cache). The producer sends a tile as soon as its task ends, to every
 * other rank that needs it, highest priority first:
 *   naive    one MPI_Isend per recipient,
 *   dynamic  one MPIX_Dynamic_bcast with the list of recipients when there
 *            are two or more (a plain MPI_Isend for one); the recipients
 *            post the same MPI_Irecv in both modes.
 * Priorities follow the critical path as a runtime's would: a task of step
 * k outranks every task of step k + 1, and within a step POTRF/TRSM and
 * the updates of the next panel come first. A recipient's priority is that
 * of its most urgent task reading the tile.
 *
 * Execution: each rank is a node with --workers cores (default 1: one
 * kernel at a time) and a ready list: a free worker takes the most urgent
 * local task whose inputs are there (--executor inorder: strictly the next
 * one in flow order instead). Receives are all posted when the run starts
 * (a runtime's submission front is far ahead of execution). Kernels are fake: a
 * kernel fills the tile it writes (about a memory pass) and then sleeps with
 * clock_nanosleep until its fixed duration has passed. The sleep models compute
 * time on a node; it is not synchronisation (no rank waits for another in it),
 * and it is a sleep rather than a spin because this machine's two cores are
 * shared by every rank: spinning would measure CPU contention instead of the
 * task flow. While a kernel sleeps, communication progresses in Rondo's
 * progress thread or timer (RONDO_PROGRESS, RONDO_TIMER_US), which also
 * forwards dynamic broadcasts. When a worker is free but no task is ready, the
 * rank polls its receives every --idle-poll-us (0: spins; with no kernel
 * running it blocks in MPI_Waitsome, which polls and yields).
 *
 * Checking: a tile's version v (the number of writes so far) is filled
 * with value(tile, v, run) and its last element with the negation; every
 * received tile and every input of every task is checked (first and last
 * element), so a tile routed to the wrong rank, tag or run is counted as an
 * error. Errors are reported and make the exit status 1.
 *
 * Timing: each run starts after a barrier; its total time is the last
 * rank's end minus the first rank's start, on CLOCK_MONOTONIC, which every
 * rank of this machine shares (the emulated cluster of bench/cluster runs
 * all hosts on one kernel). Runs alternate between the modes (ABBA).
 *
 *   cholesky [--tiles T[,T...]] [--tile-doubles b] [--grid PxQ]
 *            [--potrf-us U] [--trsm-us U] [--syrk-us U] [--gemm-us U]
 *            [--reps N] [--warmup N] [--modes naive,dynamic]
 *            [--workers W] [--executor ready|inorder] [--idle-poll-us U]
 *            [--out FILE] [--quiet]
 * Output: rank 0 writes one JSON object per line and per (T, mode) to --out
 * (default stdout): {"type": "case", "mode", "tiles", "tile_doubles",
 * "ranks", "grid", "workers", "samples_ns": [...], "idle_ns": [...] (mean
 * time per run a rank had no kernel running), "broadcasts", "sends",
 * "bcast_recipients", "transfers", "list_sizes": {"n": count}, "tasks",
 * "critical_path_ns", "max_work_ns", "errors", "delivery_ms": {"top",
 * "first", "last"}}. delivery_ms is, for the tiles with two or more
 * recipients, the mean time from the producer's send to the moment the
 * executor of the most urgent / first / last recipient saw the tile (it
 * looks between kernels, so this includes the end of a running kernel).
 * Bad arguments: a message on stderr and exit status 2. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kPotrf = 0, kTrsm = 1, kSyrk = 2, kGemm = 3 };
enum { kNaive = 0, kDynamic = 1 };
static const char* const kModeNames[] = {"naive", "dynamic"};
enum { kMaxTileCounts = 64 };

typedef struct {
  int kind;
  int m, n;       /* the tile written */
  int k;          /* the step */
  int in[2], nin; /* tiles read (final versions), besides the one written */
  int version;    /* the version this task writes (1 = first write) */
  int owner;
  int prio;
  int64_t dur_ns;
} Task;

typedef struct {
  int tiles[kMaxTileCounts], ntiles;
  int tile_doubles, p, q;
  int64_t dur_ns[4];
  int reps, warmup, modes[2], inorder, idle_poll_us, workers, quiet;
} Options;

/* The static plan of one problem size, the same on every rank. */
typedef struct {
  int T, ntiles, ntasks, size;
  Task* tasks;
  int* final_version; /* per tile */
  int* owner;         /* per tile */
  /* per tile x rank: 1 + the highest priority of a task of that rank
   * reading the tile's final version (0: the rank does not read it) */
  int* need;
} Plan;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t_ns) {
  struct timespec ts = {(time_t)(t_ns / 1000000000), (long)(t_ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static int tile_id(int m, int n) { return m * (m + 1) / 2 + n; }

/* Exact in a double for tile < 2^20, version < 2^12, run < 2^20. */
static double tile_value(int tile, int version, int run) {
  return 1.0 + (double)run * 4294967296.0 + (double)tile * 4096.0 + version;
}

static int owner_of(int i, int j, int p, int q) {
  return (i % p) * q + (j % q);
}

/* Critical-path priority: every task of step k above every task of step
 * k + 1; within step k, the tasks writing column k (POTRF, TRSM) first,
 * then the updates of column k + 1 (the next panel), and so on. */
static int task_prio(int T, int k, int n) {
  return (T - k) * T + (T - (n - k));
}

static void add_task(Plan* pl, int kind, int k, int m, int n, int in0, int in1,
                     int* writes, const Options* o) {
  Task* t = &pl->tasks[pl->ntasks++];
  t->kind = kind;
  t->k = k;
  t->m = m;
  t->n = n;
  t->nin = 0;
  if (in0 >= 0) t->in[t->nin++] = in0;
  if (in1 >= 0) t->in[t->nin++] = in1;
  t->version = ++writes[tile_id(m, n)];
  t->owner = owner_of(m, n, o->p, o->q);
  t->prio = task_prio(pl->T, k, n);
  t->dur_ns = o->dur_ns[kind];
}

static void build_plan(Plan* pl, int T, int size, const Options* o) {
  pl->T = T;
  pl->size = size;
  pl->ntiles = T * (T + 1) / 2;
  const int max_tasks = T + T * (T - 1) + T * (T - 1) * (T - 2) / 6;
  pl->tasks = calloc((size_t)max_tasks, sizeof(Task));
  pl->final_version = calloc((size_t)pl->ntiles, sizeof(int));
  pl->owner = calloc((size_t)pl->ntiles, sizeof(int));
  pl->need = calloc((size_t)pl->ntiles * (size_t)size, sizeof(int));
  int* writes = calloc((size_t)pl->ntiles, sizeof(int));
  pl->ntasks = 0;
  for (int k = 0; k < T; ++k) {
    add_task(pl, kPotrf, k, k, k, -1, -1, writes, o);
    for (int m = k + 1; m < T; ++m)
      add_task(pl, kTrsm, k, m, k, tile_id(k, k), -1, writes, o);
    for (int m = k + 1; m < T; ++m) {
      add_task(pl, kSyrk, k, m, m, tile_id(m, k), -1, writes, o);
      for (int n = k + 1; n < m; ++n)
        add_task(pl, kGemm, k, m, n, tile_id(m, k), tile_id(n, k), writes, o);
    }
  }
  for (int m = 0; m < T; ++m)
    for (int n = 0; n <= m; ++n)
      pl->owner[tile_id(m, n)] = owner_of(m, n, o->p, o->q);
  for (int i = 0; i < pl->ntasks; ++i) {
    const Task* t = &pl->tasks[i];
    const int out = tile_id(t->m, t->n);
    pl->final_version[out] = writes[out];
    for (int j = 0; j < t->nin; ++j) {
      int* need = &pl->need[(size_t)t->in[j] * (size_t)size + (size_t)t->owner];
      if (t->prio + 1 > *need) *need = t->prio + 1;
    }
  }
  free(writes);
}

static void free_plan(Plan* pl) {
  free(pl->tasks);
  free(pl->final_version);
  free(pl->owner);
  free(pl->need);
}

/* Lower bounds of a run without communication: the critical path with
 * unlimited workers, and the busiest rank's sum of kernel durations divided
 * by its workers. */
static void plan_bounds(const Plan* pl, int workers, int64_t* cp_ns,
                        int64_t* work_ns) {
  int64_t* finish = calloc((size_t)pl->ntasks, sizeof(int64_t));
  int64_t* tile_ready = calloc((size_t)pl->ntiles, sizeof(int64_t));
  int64_t* work = calloc((size_t)pl->size, sizeof(int64_t));
  int64_t cp = 0;
  for (int i = 0; i < pl->ntasks; ++i) {
    const Task* t = &pl->tasks[i];
    const int out = tile_id(t->m, t->n);
    int64_t start = tile_ready[out];
    for (int j = 0; j < t->nin; ++j)
      if (tile_ready[t->in[j]] > start) start = tile_ready[t->in[j]];
    finish[i] = start + t->dur_ns;
    tile_ready[out] = finish[i];
    if (finish[i] > cp) cp = finish[i];
    work[t->owner] += t->dur_ns;
  }
  int64_t w = 0;
  for (int r = 0; r < pl->size; ++r)
    if (work[r] > w) w = work[r];
  *cp_ns = cp;
  *work_ns = w / workers;
  free(finish);
  free(tile_ready);
  free(work);
}

/* This rank's recipients of a tile it produces, most urgent first. */
static int recipients(const Plan* pl, int tile, int rank, int* ranks,
                      int* prios) {
  int n = 0;
  for (int r = 0; r < pl->size; ++r) {
    const int need = pl->need[(size_t)tile * (size_t)pl->size + (size_t)r];
    if (r == rank || need == 0) continue;
    int i = n++;
    while (i > 0 && prios[i - 1] < need - 1) { /* stable insertion */
      ranks[i] = ranks[i - 1];
      prios[i] = prios[i - 1];
      --i;
    }
    ranks[i] = r;
    prios[i] = need - 1;
  }
  return n;
}

typedef struct {
  int64_t start, end, idle;
  long broadcasts, sends, bcast_recipients, transfers, errors;
} RunResult;

typedef struct {
  const Plan* pl;
  const Options* o;
  int rank;
  size_t elems; /* doubles per tile */
  double** buf; /* per tile: owned or received here, else NULL */
  int* local;   /* this rank's tasks, in flow order */
  int nlocal;
  int* recv_tile; /* per receive: its tile */
  int nrecv;
  MPI_Request* recv_req;
  MPI_Request* send_req;
  int nsend_max;
  int* ranks; /* scratch, size */
  int* prios;
  /* per tile, CLOCK_MONOTONIC ns of the last run: when this rank posted its
   * send, and when this rank's executor saw it arrive (0: neither) */
  int64_t* sent_at;
  int64_t* arrived_at;
} Worker;

static void worker_init(Worker* w, const Plan* pl, const Options* o, int rank) {
  memset(w, 0, sizeof(*w));
  w->pl = pl;
  w->o = o;
  w->rank = rank;
  w->elems = (size_t)o->tile_doubles * (size_t)o->tile_doubles;
  w->buf = calloc((size_t)pl->ntiles, sizeof(double*));
  w->local = malloc(sizeof(int) * (size_t)pl->ntasks);
  w->recv_tile = malloc(sizeof(int) * (size_t)pl->ntiles);
  w->ranks = malloc(sizeof(int) * (size_t)pl->size);
  w->prios = malloc(sizeof(int) * (size_t)pl->size);
  w->sent_at = calloc((size_t)pl->ntiles, sizeof(int64_t));
  w->arrived_at = calloc((size_t)pl->ntiles, sizeof(int64_t));
  for (int i = 0; i < pl->ntasks; ++i)
    if (pl->tasks[i].owner == rank) w->local[w->nlocal++] = i;
  for (int t = 0; t < pl->ntiles; ++t) {
    const int needed =
        pl->need[(size_t)t * (size_t)pl->size + (size_t)rank] != 0;
    if (pl->owner[t] == rank) {
      w->buf[t] = malloc(sizeof(double) * w->elems);
      w->nsend_max += recipients(pl, t, rank, w->ranks, w->prios);
    } else if (needed) {
      w->buf[t] = malloc(sizeof(double) * w->elems);
      w->recv_tile[w->nrecv++] = t;
    }
  }
  w->recv_req = malloc(sizeof(MPI_Request) * (size_t)(w->nrecv + 1));
  w->send_req = malloc(sizeof(MPI_Request) * (size_t)(w->nsend_max + 1));
}

static void worker_free(Worker* w) {
  for (int t = 0; t < w->pl->ntiles; ++t) free(w->buf[t]);
  free(w->buf);
  free(w->local);
  free(w->recv_tile);
  free(w->recv_req);
  free(w->send_req);
  free(w->ranks);
  free(w->prios);
  free(w->sent_at);
  free(w->arrived_at);
}

static void fill_tile(double* a, size_t elems, double v) {
  for (size_t i = 0; i + 1 < elems; ++i) a[i] = v;
  a[elems - 1] = -v;
}

static int tile_ok(const double* a, size_t elems, double v) {
  return a[0] == v && a[elems - 1] == -v;
}

static void report_bad(const Worker* w, const char* what, int tile, int version,
                       int run, const double* a, long* errors) {
  if (++*errors <= 5) {
    fprintf(stderr,
            "cholesky: rank %d: %s tile %d: got (%.17g, %.17g), expected "
            "version %d of run %d (%.17g)\n",
            w->rank, what, tile, a[0], a[w->elems - 1], version, run,
            tile_value(tile, version, run));
  }
}

/* Marks the receives that completed since the last call, and checks them. */
static void harvest(Worker* w, int run, int wait, int* pending, char* arrived,
                    int* index, long* errors) {
  const Plan* pl = w->pl;
  int n = 0;
  if (wait)
    MPI_Waitsome(w->nrecv, w->recv_req, &n, index, MPI_STATUSES_IGNORE);
  else
    MPI_Testsome(w->nrecv, w->recv_req, &n, index, MPI_STATUSES_IGNORE);
  const int64_t now = n != MPI_UNDEFINED && n > 0 ? now_ns() : 0;
  for (int i = 0; n != MPI_UNDEFINED && i < n; ++i) {
    const int t = w->recv_tile[index[i]];
    arrived[t] = 1;
    w->arrived_at[t] = now;
    --*pending;
    if (!tile_ok(w->buf[t], w->elems, tile_value(t, pl->final_version[t], run)))
      report_bad(w, "received", t, pl->final_version[t], run, w->buf[t],
                 errors);
  }
}

/* The final version of `tile` goes to every other rank that reads it. */
static void send_tile(Worker* w, int mode, int tile, MPI_Comm comm, int* nsend,
                      RunResult* res) {
  const int n = recipients(w->pl, tile, w->rank, w->ranks, w->prios);
  res->transfers += n;
  w->sent_at[tile] = now_ns();
  if (n >= 2 && mode == kDynamic) {
    MPIX_Dynamic_bcast(w->buf[tile], (int)w->elems, MPI_DOUBLE, tile, w->ranks,
                       w->prios, n, comm, &w->send_req[(*nsend)++]);
    ++res->broadcasts;
    res->bcast_recipients += n;
  } else {
    for (int i = 0; i < n; ++i) {
      MPI_Isend(w->buf[tile], (int)w->elems, MPI_DOUBLE, w->ranks[i], tile,
                comm, &w->send_req[(*nsend)++]);
      ++res->sends;
    }
  }
}

enum { kWaiting = 0, kRunning = 1, kDone = 2 };

/* One timed run of the flow in `mode`; `run` makes the tile values unique
 * to this run, so data left over from another run is caught.
 *
 * The executor: up to --workers kernels run at once ("cores" of the node);
 * a kernel is started by filling its tile and ends at start + duration,
 * when its tile's new version becomes visible and, if final, is sent. The
 * thread sleeps until the next kernel ends when every worker is busy, and
 * polls its receives every --idle-poll-us when a worker is free but no task
 * is ready. */
static RunResult run_flow(Worker* w, int mode, int run, MPI_Comm comm) {
  const Plan* pl = w->pl;
  const Options* o = w->o;
  RunResult res;
  memset(&res, 0, sizeof(res));
  int* version = calloc((size_t)pl->ntiles, sizeof(int)); /* done here */
  char* arrived = calloc((size_t)pl->ntiles, 1);
  char* state = calloc((size_t)w->nlocal, 1);
  int* index = malloc(sizeof(int) * (size_t)(w->nrecv + 1));
  int* running = malloc(sizeof(int) * (size_t)o->workers); /* local index */
  int64_t* ends = malloc(sizeof(int64_t) * (size_t)o->workers);
  for (int t = 0; t < pl->ntiles; ++t)
    if (pl->owner[t] == w->rank)
      fill_tile(w->buf[t], w->elems, tile_value(t, 0, run));
  int nsend = 0, remaining = w->nlocal, next = 0, pending = w->nrecv;
  int nrunning = 0;
  memset(w->sent_at, 0, sizeof(int64_t) * (size_t)pl->ntiles);
  memset(w->arrived_at, 0, sizeof(int64_t) * (size_t)pl->ntiles);

  MPI_Barrier(comm);
  res.start = now_ns();
  for (int i = 0; i < w->nrecv; ++i)
    MPI_Irecv(w->buf[w->recv_tile[i]], (int)w->elems, MPI_DOUBLE,
              pl->owner[w->recv_tile[i]], w->recv_tile[i], comm,
              &w->recv_req[i]);
  while (remaining > 0) {
    if (pending > 0) harvest(w, run, 0, &pending, arrived, index, &res.errors);
    /* Kernels that have ended. */
    int64_t now = now_ns();
    for (int r = 0; r < nrunning;) {
      if (ends[r] > now) {
        ++r;
        continue;
      }
      const int li = running[r];
      const Task* t = &pl->tasks[w->local[li]];
      const int out = tile_id(t->m, t->n);
      version[out] = t->version;
      state[li] = kDone;
      --remaining;
      if (t->version == pl->final_version[out])
        send_tile(w, mode, out, comm, &nsend, &res);
      running[r] = running[--nrunning];
      ends[r] = ends[nrunning];
    }
    while (next < w->nlocal && state[next] != kWaiting) ++next;
    /* Start ready tasks on the free workers: the most urgent first, or the
     * next in flow order. */
    while (nrunning < o->workers) {
      int pick = -1;
      for (int li = next; li < w->nlocal; ++li) {
        if (state[li] != kWaiting) continue;
        const Task* t = &pl->tasks[w->local[li]];
        int ready = version[tile_id(t->m, t->n)] == t->version - 1;
        for (int j = 0; ready && j < t->nin; ++j) {
          const int in = t->in[j];
          ready = pl->owner[in] == w->rank
                      ? version[in] == pl->final_version[in]
                      : arrived[in];
        }
        if (ready && (pick < 0 || t->prio > pl->tasks[w->local[pick]].prio))
          pick = li;
        if (o->inorder) break;
      }
      if (pick < 0) break;
      const Task* t = &pl->tasks[w->local[pick]];
      const int out = tile_id(t->m, t->n);
      const int64_t t0 = now_ns();
      for (int j = 0; j < t->nin; ++j) {
        const int in = t->in[j];
        if (!tile_ok(w->buf[in], w->elems,
                     tile_value(in, pl->final_version[in], run)))
          report_bad(w, "input", in, pl->final_version[in], run, w->buf[in],
                     &res.errors);
      }
      if (!tile_ok(w->buf[out], w->elems, tile_value(out, t->version - 1, run)))
        report_bad(w, "written", out, t->version - 1, run, w->buf[out],
                   &res.errors);
      fill_tile(w->buf[out], w->elems, tile_value(out, t->version, run));
      state[pick] = kRunning;
      running[nrunning] = pick;
      ends[nrunning++] = t0 + t->dur_ns;
      while (next < w->nlocal && state[next] != kWaiting) ++next;
    }
    if (remaining == 0) break;
    /* Wait: for the next kernel end, and for tiles if a worker is free. */
    int64_t next_end = INT64_MAX;
    for (int r = 0; r < nrunning; ++r)
      if (ends[r] < next_end) next_end = ends[r];
    now = now_ns();
    if (next_end <= now) continue;
    if (nrunning == o->workers || pending == 0) {
      if (nrunning == 0) {
        fprintf(stderr,
                "cholesky: rank %d: no task is ready and no receive "
                "is pending (a bug in the plan)\n",
                w->rank);
        MPI_Abort(comm, 3);
      }
      sleep_until(next_end);
      continue;
    }
    /* A worker is free and nothing it could run is here yet. */
    if (o->idle_poll_us > 0) {
      const int64_t poll = now + (int64_t)o->idle_poll_us * 1000;
      sleep_until(poll < next_end ? poll : next_end);
    } else if (nrunning == 0) {
      harvest(w, run, 1, &pending, arrived, index, &res.errors);
    }
    if (nrunning == 0) res.idle += now_ns() - now;
  }
  MPI_Waitall(nsend, w->send_req, MPI_STATUSES_IGNORE);
  res.end = now_ns();
  free(version);
  free(arrived);
  free(state);
  free(index);
  free(running);
  free(ends);
  return res;
}

static int cmp_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return x < y ? -1 : x > y;
}

/* ---- Arguments ---- */

static int bad_arg(int rank, const char* opt, const char* v,
                   const char* expected) {
  if (rank == 0)
    fprintf(stderr, "cholesky: %s: '%s' is not allowed; expected %s\n", opt,
            v ? v : "(missing)", expected);
  return 2;
}

static int parse_long(const char* v, long lo, long hi, long* out) {
  char* end = NULL;
  if (v == NULL || *v == 0) return 0;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno != 0 || *end != 0 || x < lo || x > hi) return 0;
  *out = x;
  return 1;
}

/* 0 on success, else the exit status (2) after a message from rank 0. */
static int parse_args(int argc, char** argv, int rank, int size, Options* o,
                      const char** out_path) {
  char range[64];
  for (int a = 1; a < argc; ++a) {
    const char* opt = argv[a];
    const char* v = a + 1 < argc ? argv[a + 1] : NULL;
    long x = 0;
    int kernel = -1;
    if (strcmp(opt, "--quiet") == 0) {
      o->quiet = 1;
      continue;
    }
    ++a; /* every other option takes a value */
    if (strcmp(opt, "--tiles") == 0) {
      o->ntiles = 0;
      const char* s = v ? v : "";
      char item[32];
      while (1) {
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof(item) || o->ntiles == kMaxTileCounts)
          return bad_arg(rank, opt, v, "a list of tile counts in 2..1000");
        memcpy(item, s, len);
        item[len] = 0;
        if (!parse_long(item, 2, 1000, &x))
          return bad_arg(rank, opt, v, "a list of tile counts in 2..1000");
        o->tiles[o->ntiles++] = (int)x;
        if (s[len] == 0) break;
        s += len + 1;
      }
    } else if (strcmp(opt, "--tile-doubles") == 0) {
      if (!parse_long(v, 2, 4096, &x))
        return bad_arg(rank, opt, v, "2..4096 (a tile is b x b doubles)");
      o->tile_doubles = (int)x;
    } else if (strcmp(opt, "--grid") == 0) {
      int p = 0, q = 0;
      char extra;
      if (v == NULL || sscanf(v, "%dx%d%c", &p, &q, &extra) != 2 || p < 1 ||
          q < 1 || p * q != size) {
        snprintf(range, sizeof(range), "PxQ with P * Q = %d (the job's ranks)",
                 size);
        return bad_arg(rank, opt, v, range);
      }
      o->p = p;
      o->q = q;
    } else if (strcmp(opt, "--potrf-us") == 0) {
      kernel = kPotrf;
    } else if (strcmp(opt, "--trsm-us") == 0) {
      kernel = kTrsm;
    } else if (strcmp(opt, "--syrk-us") == 0) {
      kernel = kSyrk;
    } else if (strcmp(opt, "--gemm-us") == 0) {
      kernel = kGemm;
    } else if (strcmp(opt, "--reps") == 0) {
      if (!parse_long(v, 1, 10000, &x))
        return bad_arg(rank, opt, v, "1..10000");
      o->reps = (int)x;
    } else if (strcmp(opt, "--warmup") == 0) {
      if (!parse_long(v, 0, 10000, &x))
        return bad_arg(rank, opt, v, "0..10000");
      o->warmup = (int)x;
    } else if (strcmp(opt, "--workers") == 0) {
      if (!parse_long(v, 1, 64, &x))
        return bad_arg(rank, opt, v, "1..64 (kernels a rank runs at once)");
      o->workers = (int)x;
    } else if (strcmp(opt, "--idle-poll-us") == 0) {
      if (!parse_long(v, 0, 1000000, &x))
        return bad_arg(rank, opt, v, "0 (block in MPI_Waitsome) .. 1000000");
      o->idle_poll_us = (int)x;
    } else if (strcmp(opt, "--modes") == 0) {
      o->modes[kNaive] = o->modes[kDynamic] = 0;
      const char* s = v ? v : "";
      while (*s) {
        size_t len = strcspn(s, ",");
        if (len == 5 && strncmp(s, "naive", 5) == 0)
          o->modes[kNaive] = 1;
        else if (len == 7 && strncmp(s, "dynamic", 7) == 0)
          o->modes[kDynamic] = 1;
        else
          return bad_arg(rank, opt, v, "naive, dynamic or naive,dynamic");
        s += len + (s[len] == ',');
      }
      if (!o->modes[kNaive] && !o->modes[kDynamic])
        return bad_arg(rank, opt, v, "naive, dynamic or naive,dynamic");
    } else if (strcmp(opt, "--executor") == 0) {
      if (v != NULL && strcmp(v, "ready") == 0)
        o->inorder = 0;
      else if (v != NULL && strcmp(v, "inorder") == 0)
        o->inorder = 1;
      else
        return bad_arg(rank, opt, v, "ready or inorder");
    } else if (strcmp(opt, "--out") == 0 && v != NULL) {
      *out_path = v;
    } else {
      if (rank == 0)
        fprintf(stderr,
                "cholesky: unknown argument '%s'\nusage: cholesky [--tiles "
                "T[,T...]] [--tile-doubles b] [--grid PxQ] [--potrf-us U] "
                "[--trsm-us U] [--syrk-us U] [--gemm-us U] [--reps N] "
                "[--warmup N] [--modes naive,dynamic] [--workers W] "
                "[--executor ready|inorder] [--idle-poll-us U] [--out FILE] "
                "[--quiet]\n",
                opt);
      return 2;
    }
    if (kernel >= 0) {
      if (!parse_long(v, 0, 10000000, &x))
        return bad_arg(rank, opt, v, "0..10000000 microseconds");
      o->dur_ns[kernel] = x * 1000;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  memset(&o, 0, sizeof(o));
  o.tiles[0] = 16;
  o.ntiles = 1;
  o.tile_doubles = 256;
  /* The most square grid: p the largest divisor of size <= sqrt(size). */
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) o.p = d;
  o.q = size / o.p;
  /* The ratio of the real kernels' flop counts (b^3/3, b^3, b^3, 2 b^3). */
  o.dur_ns[kPotrf] = 1000000;
  o.dur_ns[kTrsm] = 3000000;
  o.dur_ns[kSyrk] = 3000000;
  o.dur_ns[kGemm] = 6000000;
  o.reps = 3;
  o.warmup = 1;
  o.modes[kNaive] = o.modes[kDynamic] = 1;
  o.idle_poll_us = 100;
  o.workers = 1;
  const char* out_path = NULL;
  int status = parse_args(argc, argv, rank, size, &o, &out_path);
  FILE* out = stdout;
  if (status == 0 && rank == 0 && out_path != NULL) {
    out = fopen(out_path, "w");
    if (out == NULL) {
      fprintf(stderr, "cholesky: --out: cannot write '%s': %s\n", out_path,
              strerror(errno));
      out = stdout;
      status = 2;
    }
  }
  /* Every rank leaves together on a bad argument (rank 0 alone opens the
   * file). */
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (status != 0) {
    if (rank == 0 && out != stdout) fclose(out);
    MPI_Finalize();
    return status;
  }

  long total_errors = 0;
  int64_t* starts = malloc(sizeof(int64_t) * (size_t)size);
  int64_t* ends = malloc(sizeof(int64_t) * (size_t)size);
  int run = 0;
  for (int ti = 0; ti < o.ntiles; ++ti) {
    const int T = o.tiles[ti];
    Plan pl;
    build_plan(&pl, T, size, &o);
    Worker w;
    worker_init(&w, &pl, &o, rank);
    int64_t cp_ns, work_ns;
    plan_bounds(&pl, o.workers, &cp_ns, &work_ns);
    int64_t* samples[2];
    int64_t* idle[2];
    /* broadcasts, sends, bcast_recipients, transfers, errors */
    long counts[2][5];
    double delivery[2][4]; /* sums of ns: top, first, last recipient; count */
    memset(delivery, 0, sizeof(delivery));
    int64_t* arrived_all =
        malloc(sizeof(int64_t) * (size_t)pl.ntiles * (size_t)size);
    int64_t* sent_all = malloc(sizeof(int64_t) * (size_t)pl.ntiles);
    memset(counts, 0, sizeof(counts));
    for (int m = 0; m < 2; ++m) {
      samples[m] = calloc((size_t)o.reps, sizeof(int64_t));
      idle[m] = calloc((size_t)o.reps, sizeof(int64_t));
    }
    for (int rep = -o.warmup; rep < o.reps; ++rep) {
      for (int i = 0; i < 2; ++i) {
        /* ABBA: naive first on even repetitions, dynamic first on odd. */
        const int mode = ((rep + o.warmup) & 1) ? 1 - i : i;
        if (!o.modes[mode]) continue;
        RunResult r = run_flow(&w, mode, ++run, MPI_COMM_WORLD);
        long mine[5] = {r.broadcasts, r.sends, r.bcast_recipients, r.transfers,
                        r.errors};
        long sum[5];
        int64_t idle_sum = 0;
        MPI_Reduce(mine, sum, 5, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&r.idle, &idle_sum, 1, MPI_INT64_T, MPI_SUM, 0,
                   MPI_COMM_WORLD);
        MPI_Gather(&r.start, 1, MPI_INT64_T, starts, 1, MPI_INT64_T, 0,
                   MPI_COMM_WORLD);
        MPI_Gather(&r.end, 1, MPI_INT64_T, ends, 1, MPI_INT64_T, 0,
                   MPI_COMM_WORLD);
        MPI_Gather(w.arrived_at, pl.ntiles, MPI_INT64_T, arrived_all, pl.ntiles,
                   MPI_INT64_T, 0, MPI_COMM_WORLD);
        MPI_Reduce(w.sent_at, sent_all, pl.ntiles, MPI_INT64_T, MPI_MAX, 0,
                   MPI_COMM_WORLD);
        if (rank != 0) continue;
        int64_t first = starts[0], last = ends[0];
        for (int i2 = 1; i2 < size; ++i2) {
          if (starts[i2] < first) first = starts[i2];
          if (ends[i2] > last) last = ends[i2];
        }
        counts[mode][4] += sum[4]; /* errors count in warm-up runs too */
        total_errors += sum[4];
        if (rep < 0) continue;
        for (int c = 0; c < 4; ++c) counts[mode][c] = sum[c];
        samples[mode][rep] = last - first;
        idle[mode][rep] = idle_sum / size;
        /* Delivery of the tiles with two or more recipients (where the
         * modes differ): from the producer's send to the moment the
         * recipient's executor saw the tile, for the most urgent recipient,
         * the first and the last. */
        for (int t = 0; t < pl.ntiles; ++t) {
          const int n = recipients(&pl, t, pl.owner[t], w.ranks, w.prios);
          if (n < 2) continue;
          int64_t lo = INT64_MAX, hi = 0;
          for (int i2 = 0; i2 < n; ++i2) {
            const int64_t a = arrived_all[(size_t)w.ranks[i2] * pl.ntiles + t];
            if (a < lo) lo = a;
            if (a > hi) hi = a;
          }
          const int64_t top = arrived_all[(size_t)w.ranks[0] * pl.ntiles + t];
          delivery[mode][0] += (double)(top - sent_all[t]);
          delivery[mode][1] += (double)(lo - sent_all[t]);
          delivery[mode][2] += (double)(hi - sent_all[t]);
          delivery[mode][3] += 1;
        }
        if (!o.quiet)
          fprintf(stderr,
                  "cholesky: T=%d %-7s rep %d: %.1f ms (idle %.0f%%)%s\n", T,
                  kModeNames[mode], rep, (last - first) / 1e6,
                  100.0 * (double)idle[mode][rep] / (double)(last - first),
                  sum[4] ? " ROUTING ERRORS" : "");
      }
    }
    if (rank == 0) {
      /* Recipient-list sizes of the produced tiles (the same in both
       * modes): how much a broadcast can merge on this grid. */
      long hist[kMaxTileCounts + 1];
      memset(hist, 0, sizeof(hist));
      for (int t = 0; t < pl.ntiles; ++t) {
        const int n = recipients(&pl, t, pl.owner[t], w.ranks, w.prios);
        if (n > 0) ++hist[n < kMaxTileCounts ? n : kMaxTileCounts];
      }
      for (int mode = 0; mode < 2; ++mode) {
        if (!o.modes[mode]) continue;
        fprintf(out,
                "{\"type\": \"case\", \"mode\": \"%s\", \"tiles\": %d, "
                "\"tile_doubles\": %d, \"tile_bytes\": %zu, \"ranks\": %d, "
                "\"grid\": \"%dx%d\", \"workers\": %d, \"executor\": \"%s\", "
                "\"kernel_us\": {\"potrf\": %lld, \"trsm\": %lld, \"syrk\": "
                "%lld, \"gemm\": %lld}, \"tasks\": %d, "
                "\"critical_path_ns\": %lld, \"max_work_ns\": %lld, "
                "\"broadcasts\": %ld, \"sends\": %ld, \"bcast_recipients\": "
                "%ld, \"transfers\": %ld, \"errors\": %ld, \"list_sizes\": {",
                kModeNames[mode], T, o.tile_doubles, w.elems * sizeof(double),
                size, o.p, o.q, o.workers, o.inorder ? "inorder" : "ready",
                (long long)(o.dur_ns[kPotrf] / 1000),
                (long long)(o.dur_ns[kTrsm] / 1000),
                (long long)(o.dur_ns[kSyrk] / 1000),
                (long long)(o.dur_ns[kGemm] / 1000), pl.ntasks,
                (long long)cp_ns, (long long)work_ns, counts[mode][0],
                counts[mode][1], counts[mode][2], counts[mode][3],
                counts[mode][4]);
        int first = 1;
        for (int n = 1; n <= kMaxTileCounts; ++n)
          if (hist[n]) {
            fprintf(out, "%s\"%d\": %ld", first ? "" : ", ", n, hist[n]);
            first = 0;
          }
        const double nd = delivery[mode][3] > 0 ? delivery[mode][3] : 1;
        fprintf(out,
                "}, \"delivery_ms\": {\"top\": %.3f, \"first\": %.3f, "
                "\"last\": %.3f}",
                delivery[mode][0] / nd / 1e6, delivery[mode][1] / nd / 1e6,
                delivery[mode][2] / nd / 1e6);
        fprintf(out, ", \"samples_ns\": [");
        for (int i = 0; i < o.reps; ++i)
          fprintf(out, "%s%lld", i ? ", " : "", (long long)samples[mode][i]);
        fprintf(out, "], \"idle_ns\": [");
        for (int i = 0; i < o.reps; ++i)
          fprintf(out, "%s%lld", i ? ", " : "", (long long)idle[mode][i]);
        fprintf(out, "]}\n");
        fflush(out);
        if (!o.quiet) {
          int64_t* s = malloc(sizeof(int64_t) * (size_t)o.reps);
          memcpy(s, samples[mode], sizeof(int64_t) * (size_t)o.reps);
          qsort(s, (size_t)o.reps, sizeof(int64_t), cmp_i64);
          fprintf(stderr,
                  "cholesky: T=%d %-7s median %.1f ms (bound without "
                  "communication %.1f ms)\n",
                  T, kModeNames[mode], s[o.reps / 2] / 1e6,
                  (cp_ns > work_ns ? cp_ns : work_ns) / 1e6);
          free(s);
        }
      }
    }
    for (int m = 0; m < 2; ++m) {
      free(samples[m]);
      free(idle[m]);
    }
    free(arrived_all);
    free(sent_all);
    worker_free(&w);
    free_plan(&pl);
  }
  MPI_Bcast(&total_errors, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0 && total_errors)
    fprintf(stderr,
            "cholesky: %ld checks found wrong tile contents "
            "(routing errors)\n",
            total_errors);
  if (rank == 0 && out != stdout) fclose(out);
  free(starts);
  free(ends);
  MPI_Finalize();
  return total_errors ? 1 : 0;
}
