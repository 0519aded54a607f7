/* bench/apps/starpu_cholesky.c: a real tiled Cholesky factorization on StarPU
 * 1.3 with Rondo as its communication backend (nmad/starpu/rondo_starpu.h),
 * issue 19 and Section 5.2 of the dynamic-broadcast paper. One process per
 * rank, started by rondo-run (on the emulated cluster of bench/cluster or
 * in shared memory); bench/apps/starpu_cholesky_driver.cc runs it and reports.
 *
 * The matrix: N x N symmetric positive definite (deterministic random
 * off-diagonal entries in [-0.5, 0.5], N + [0, 1) on the diagonal), T x T
 * tiles of b x b doubles (column-major, ld = b), the lower triangle only,
 * 2D block-cyclic over a P x Q grid: tile (i, j) lives on rank
 * (i mod P) * Q + (j mod Q). Every rank submits the same sequential task
 * flow to its own StarPU (as StarPU-MPI does) and runs the tasks that write
 * its tiles:
 *   for k: POTRF(k,k)                      LAPACKE_dpotrf (lower)
 *          for m > k: TRSM(m,k)  reads L[k][k]   cblas_dtrsm
 *          for m > k: SYRK(m,m)  reads L[m][k]   cblas_dsyrk
 *                     GEMM(m,n)  reads L[m][k], L[n][k] (k < n < m)
 * Communication: a final tile (L[k][k] after POTRF, L[m][k] after TRSM) is
 * sent, right after its producer is submitted, to every other rank that
 * runs a task reading it; a rank receives each remote tile it needs once
 * (StarPU-MPI's cache), into a handle of its own, before the tasks that
 * read it are submitted, so they wait for it. Two modes, in one job:
 *   naive    one rondo_starpu_isend_handle per recipient, detection off:
 *            one message each, from the producer;
 *   dynamic  the same calls with detection on: the sends of a tile merge
 *            while its producer runs and leave as one dynamic broadcast
 *            (nmad's binomial tree unrolled by active messages).
 * Priorities follow the critical path (a task of step k before any of step
 * k + 1; POTRF, TRSM and the updates of panel k + 1 first), for StarPU's
 * prio scheduler and for nmad's packets and broadcast trees.
 *
 * Measured per run: the total time (the last rank's end minus the first
 * rank's start, CLOCK_MONOTONIC, shared by every rank of this machine and
 * of the emulated cluster), the GFlop/s (N^3 / 3 flops), and the time the
 * workers waited (workers x wall time minus kernel time, mean over ranks:
 * waiting for data or for dependencies). After the last run of each mode,
 * the residual ||A - L L^T||_F / ||A||_F on rank 0 (the L tiles gathered
 * there; --no-check skips it). Runs alternate between modes (ABBA).
 *
 * With RONDO_TRACE set, every kernel is recorded as a span in Rondo's trace
 * (rondo_trace_span), beside the engine's tasks: StarPU's kernels and
 * Rondo's progress on one Perfetto timeline.
 *
 *   starpu_cholesky [--n N] [--tile b] [--grid PxQ] [--modes naive,dynamic]
 *                   [--reps R] [--warmup W] [--backend rondo|none]
 *                   [--no-check] [--out FILE] [--quiet] [--fail-rank R]
 * --backend none runs StarPU alone (one rank only: no communication), the
 * reference of the hook's overhead; --fail-rank R makes rank R abort in its
 * first GEMM (the launcher must end the job naming it). Output: rank 0 writes one JSON line per
 * mode to --out (default stdout): {"type": "case", "mode", "n", "tile",
 * "tiles", "ranks", "grid", "workers", "backend", "samples_ns": [...],
 * "wait_ns": [...], "gflops": [...], "residual", "tasks", "broadcasts",
 * "bcast_recipients", "single_sends", "missed", "hook_calls", "hook_work",
 * "errors"}. Bad arguments: a message on stderr and exit status 2; a
 * failed kernel or transfer or a residual over 1e-12: exit status 1. */
#define _GNU_SOURCE
#include <cblas.h>
#include <errno.h>
#include <lapacke.h>
#include <math.h>
#include <sched.h>
#include <starpu.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/rondo_engine.h"
#include "nmad/rondo_nmad.h"
#include "nmad/starpu/rondo_starpu.h"
#include "nmad/starpu/starpu_unchecked.h"

/* ---- options and layout ---- */

static struct {
  int n, b, p, q, reps, warmup, check, quiet, backend_rondo;
  int fail_rank; /* -1, or the rank that dies in its first GEMM (tests) */
  char modes[64];
  const char* out;
} opt = {.n = 2048, .b = 256, .reps = 2, .warmup = 1, .check = 1,
         .backend_rondo = 1, .fail_rank = -1, .modes = "naive,dynamic"};

static int me, nranks, T;

static int owner(int i, int j) { return (i % opt.p) * opt.q + (j % opt.q); }
static int idx(int i, int j) { return i * T + j; }

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A failure in the middle of a run (a peer died, no memory): StarPU's and
 * Rondo's threads are running, so leave without exit handlers, as
 * MPI_Abort does; rondo-run reports the status. */
static void die(void) {
  fflush(stdout);
  fflush(stderr);
  _exit(1);
}

static void die_usage(const char* fmt, const char* what) {
  fprintf(stderr, "starpu_cholesky: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, "\n");
  exit(2);
}

static int parse_int(const char* s, const char* name, int lo, int hi) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    fprintf(stderr, "starpu_cholesky: %s: '%s' is not allowed; expected %d..%d\n",
            name, s, lo, hi);
    exit(2);
  }
  return (int)v;
}

/* ---- the matrix ---- */

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A(r, c), global indices, symmetric. */
static double entry(int r, int c) {
  const uint64_t lo = (uint64_t)(r < c ? r : c), hi = (uint64_t)(r < c ? c : r);
  const double u = (double)(mix(lo * 0x100000001b3ull + hi) >> 11) / 9007199254740992.0;
  return r == c ? opt.n + u : u - 0.5;
}

static void generate(double* tile, int i, int j) {
  for (int c = 0; c < opt.b; ++c)
    for (int r = 0; r < opt.b; ++r)
      tile[(size_t)c * opt.b + r] = entry(i * opt.b + r, j * opt.b + c);
}

/* ---- kernels ---- */

static atomic_llong busy_ns;
static atomic_int kernel_errors;

static void account(const char* name, int64_t t0) {
  const int64_t t1 = now_ns();
  atomic_fetch_add(&busy_ns, t1 - t0);
  if (opt.backend_rondo && rondo_trace_enabled())
    rondo_trace_span(name, rondo_trace_now_ns() - (t1 - t0),
                     rondo_trace_now_ns());
}

static void potrf_cpu(void* buffers[], void* cl_arg) {
  (void)cl_arg;
  const int64_t t0 = now_ns();
  double* a = (double*)STARPU_MATRIX_GET_PTR(buffers[0]);
  const int b = (int)STARPU_MATRIX_GET_NX(buffers[0]);
  if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', b, a, b) != 0)
    atomic_fetch_add(&kernel_errors, 1);
  account("potrf", t0);
}
static void trsm_cpu(void* buffers[], void* cl_arg) {
  (void)cl_arg;
  const int64_t t0 = now_ns();
  const double* l = (const double*)STARPU_MATRIX_GET_PTR(buffers[0]);
  double* a = (double*)STARPU_MATRIX_GET_PTR(buffers[1]);
  const int b = (int)STARPU_MATRIX_GET_NX(buffers[0]);
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans,
              CblasNonUnit, b, b, 1.0, l, b, a, b);
  account("trsm", t0);
}
static void syrk_cpu(void* buffers[], void* cl_arg) {
  (void)cl_arg;
  const int64_t t0 = now_ns();
  const double* l = (const double*)STARPU_MATRIX_GET_PTR(buffers[0]);
  double* a = (double*)STARPU_MATRIX_GET_PTR(buffers[1]);
  const int b = (int)STARPU_MATRIX_GET_NX(buffers[0]);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, b, b, -1.0, l, b, 1.0,
              a, b);
  account("syrk", t0);
}
static void gemm_cpu(void* buffers[], void* cl_arg) {
  (void)cl_arg;
  if (opt.fail_rank == me) {
    /* --fail-rank: this rank dies in the middle of the factorization. */
    fprintf(stderr, "starpu_cholesky: rank %d dies now (--fail-rank)\n", me);
    fflush(stderr);
    abort();
  }
  const int64_t t0 = now_ns();
  const double* x = (const double*)STARPU_MATRIX_GET_PTR(buffers[0]);
  const double* y = (const double*)STARPU_MATRIX_GET_PTR(buffers[1]);
  double* a = (double*)STARPU_MATRIX_GET_PTR(buffers[2]);
  const int b = (int)STARPU_MATRIX_GET_NX(buffers[0]);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, b, -1.0, x, b, y,
              b, 1.0, a, b);
  account("gemm", t0);
}

static struct starpu_codelet potrf_cl = {
    .cpu_funcs = {potrf_cpu}, .nbuffers = 1, .modes = {STARPU_RW},
    .name = "potrf"};
static struct starpu_codelet trsm_cl = {
    .cpu_funcs = {trsm_cpu}, .nbuffers = 2, .modes = {STARPU_R, STARPU_RW},
    .name = "trsm"};
static struct starpu_codelet syrk_cl = {
    .cpu_funcs = {syrk_cpu}, .nbuffers = 2, .modes = {STARPU_R, STARPU_RW},
    .name = "syrk"};
static struct starpu_codelet gemm_cl = {
    .cpu_funcs = {gemm_cpu}, .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_RW}, .name = "gemm"};

/* ---- who needs which tile ---- */

/* needs[idx(i,j) * nranks + r]: rank r runs a task reading final tile
 * (i, j) (i >= j) that it does not own. */
static unsigned char* needs;

static void compute_needs(void) {
  needs = calloc((size_t)T * T * nranks, 1);
  for (int k = 0; k < T; ++k) {
    for (int m = k + 1; m < T; ++m) {
      needs[idx(k, k) * nranks + owner(m, k)] = 1; /* TRSM(m,k) */
      needs[idx(m, k) * nranks + owner(m, m)] = 1; /* SYRK(m,m) */
      for (int n = k + 1; n < m; ++n) {
        needs[idx(m, k) * nranks + owner(m, n)] = 1; /* GEMM(m,n): A */
        needs[idx(n, k) * nranks + owner(m, n)] = 1; /* GEMM(m,n): B */
      }
    }
  }
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j) needs[idx(i, j) * nranks + owner(i, j)] = 0;
}

/* Urgency: every task of step k outranks every task of step k + 1. */
static int urgency(int k, int cls) { return 3 * (T - k) + cls; }
static int max_urgency(void) { return 3 * T + 2; }
static int starpu_prio(int u) {
  const int lo = starpu_sched_get_min_priority(),
            hi = starpu_sched_get_max_priority();
  if (hi <= lo) return 0;
  /* In 64 bits: a scheduler may allow the whole int range. */
  const long long range = (long long)hi - lo;
  return (int)(lo + (long long)u * range / max_urgency());
}

/* ---- one run ---- */

static double** tiles;  /* owned and received tiles (NULL: none here) */
static starpu_data_handle_t* handles;
static int run_id;

static double* tile_buffer(int i, int j) {
  double* t = NULL;
  if (posix_memalign((void**)&t, 64, sizeof(double) * opt.b * opt.b) != 0) {
    fprintf(stderr, "starpu_cholesky: out of memory\n");
    die();
  }
  return t;
}

static void register_tiles(void) {
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j) {
      const int x = idx(i, j);
      const int mine = owner(i, j) == me;
      if (!mine && !needs[x * nranks + me]) continue;
      if (tiles[x] == NULL) tiles[x] = tile_buffer(i, j);
      if (mine) generate(tiles[x], i, j);
      starpu_matrix_data_register(&handles[x], STARPU_MAIN_RAM,
                                  (uintptr_t)tiles[x], opt.b, opt.b, opt.b,
                                  sizeof(double));
    }
}

static void unregister_tiles(void) {
  for (int x = 0; x < T * T; ++x)
    if (handles[x] != NULL) {
      starpu_data_unregister(handles[x]);
      handles[x] = NULL;
    }
}

static int tag_of(int i, int j) { return (run_id * T + i) * T + j; }

static atomic_int transfer_errors;
static void on_transfer(void* arg, int status) {
  (void)arg;
  if (status != RONDO_OK) atomic_fetch_add(&transfer_errors, 1);
}

/* The final tile (i, j) was just submitted for production: send it to
 * every rank that needs it, or post its receive. */
static void exchange(int i, int j, int k, int cls) {
  const int x = idx(i, j), from = owner(i, j);
  const int tag = tag_of(i, j);
  static const rondo_starpu_completion_t done = {on_transfer, NULL, 0, 0};
  if (from == me) {
    for (int r = 0; r < nranks; ++r)
      if (needs[x * nranks + r] &&
          rondo_starpu_isend_handle(handles[x], r, tag, urgency(k, cls),
                                    &done) != RONDO_OK) {
        fprintf(stderr, "starpu_cholesky: send: %s\n",
                rondo_starpu_last_error());
        atomic_fetch_add(&transfer_errors, 1);
      }
  } else if (needs[x * nranks + me]) {
    if (rondo_starpu_irecv_handle(handles[x], from, tag, &done) != RONDO_OK) {
      fprintf(stderr, "starpu_cholesky: receive: %s\n",
              rondo_starpu_last_error());
      atomic_fetch_add(&transfer_errors, 1);
    }
  }
}

static int tasks_submitted;

static void submit(struct starpu_codelet* cl, int prio, starpu_data_handle_t a,
                   starpu_data_handle_t b, starpu_data_handle_t c) {
  struct starpu_task* t = starpu_task_create();
  t->cl = cl;
  t->handles[0] = a;
  if (b) t->handles[1] = b;
  if (c) t->handles[2] = c;
  t->priority = starpu_prio(prio);
  if (starpu_task_submit(t) != 0) {
    fprintf(stderr, "starpu_cholesky: starpu_task_submit failed\n");
    die();
  }
  ++tasks_submitted;
}

static void submit_flow(void) {
  for (int k = 0; k < T; ++k) {
    if (owner(k, k) == me)
      submit(&potrf_cl, urgency(k, 2), handles[idx(k, k)], NULL, NULL);
    if (opt.backend_rondo) exchange(k, k, k, 2);
    for (int m = k + 1; m < T; ++m) {
      if (owner(m, k) == me)
        submit(&trsm_cl, urgency(k, 1), handles[idx(k, k)],
               handles[idx(m, k)], NULL);
      if (opt.backend_rondo) exchange(m, k, k, 1);
    }
    for (int m = k + 1; m < T; ++m) {
      const int next = m == k + 1;
      if (owner(m, m) == me)
        submit(&syrk_cl, urgency(k, next), handles[idx(m, k)],
               handles[idx(m, m)], NULL);
      for (int n = k + 1; n < m; ++n)
        if (owner(m, n) == me)
          submit(&gemm_cl, urgency(k, n == k + 1), handles[idx(m, k)],
                 handles[idx(n, k)], handles[idx(m, n)]);
    }
  }
}

/* ---- gathering to rank 0 over the nmad C API ---- */

static rondo_nmad_session_t session;

static void gather_doubles(const double* mine, int count, double* all) {
  rondo_nmad_request_t q;
  rondo_nmad_request_init(&q);
  if (me == 0) {
    memcpy(all, mine, sizeof(double) * count);
    for (int r = 1; r < nranks; ++r)
      if (rondo_nmad_irecv(session, r, 1, all + (size_t)r * count,
                           sizeof(double) * count, &q) != RONDO_OK ||
          rondo_nmad_wait(&q) != RONDO_OK) {
        fprintf(stderr, "starpu_cholesky: gather from rank %d failed: %s\n",
                r, rondo_nmad_failure_text(r));
        die();
      }
  } else if (rondo_nmad_isend(session, 0, 1, mine, sizeof(double) * count, 0,
                              &q) != RONDO_OK ||
             rondo_nmad_wait(&q) != RONDO_OK) {
    fprintf(stderr, "starpu_cholesky: gather to rank 0 failed\n");
    die();
  }
}

/* ||A - L L^T||_F / ||A||_F with the L tiles gathered on rank 0. */
static double residual(void) {
  const int N = opt.n, b = opt.b;
  double* L = NULL;
  if (me == 0) {
    L = calloc((size_t)N * N, sizeof(double));
    if (L == NULL) {
      fprintf(stderr, "starpu_cholesky: no memory for the residual\n");
      die();
    }
  }
  double* buf = tile_buffer(0, 0);
  rondo_nmad_request_t q;
  rondo_nmad_request_init(&q);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j) {
      const int o = owner(i, j);
      const double* t = NULL;
      if (o == me && me == 0) {
        t = tiles[idx(i, j)];
      } else if (o == me) {
        rondo_nmad_isend(session, 0, 2, tiles[idx(i, j)],
                         sizeof(double) * b * b, 0, &q);
        rondo_nmad_wait(&q);
      } else if (me == 0) {
        if (rondo_nmad_irecv(session, o, 2, buf, sizeof(double) * b * b,
                             &q) != RONDO_OK ||
            rondo_nmad_wait(&q) != RONDO_OK) {
          fprintf(stderr, "starpu_cholesky: residual: tile from rank %d "
                  "lost\n", o);
          die();
        }
        t = buf;
      }
      if (me == 0)
        for (int c = 0; c < b; ++c)
          for (int r = 0; r < b; ++r) {
            const int gr = i * b + r, gc = j * b + c;
            if (gr >= gc) L[(size_t)gc * N + gr] = t[(size_t)c * b + r];
          }
    }
  free(buf);
  if (me != 0) return 0;
  double* C = malloc(sizeof(double) * (size_t)N * N);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, N, N, 1.0, L, N, 0.0,
              C, N);
  double diff = 0, norm = 0;
  for (int c = 0; c < N; ++c)
    for (int r = c; r < N; ++r) {
      const double a = entry(r, c), d = a - C[(size_t)c * N + r];
      const double w = r == c ? 1 : 2; /* the upper half mirrors it */
      diff += w * d * d;
      norm += w * a * a;
    }
  free(C);
  free(L);
  return sqrt(diff) / sqrt(norm);
}

/* ---- main ---- */

struct mode_result {
  char name[16];
  double samples[256], waits[256], gflops[256];
  int count;
  double residual;
  rondo_starpu_stats_t stats;  /* summed over the mode's measured runs */
};

static void add_stats(rondo_starpu_stats_t* sum, const rondo_starpu_stats_t* a,
                      const rondo_starpu_stats_t* b) {
  sum->broadcasts += b->broadcasts - a->broadcasts;
  sum->bcast_recipients += b->bcast_recipients - a->bcast_recipients;
  sum->single_sends += b->single_sends - a->single_sends;
  sum->missed += b->missed - a->missed;
  sum->hook_calls += b->hook_calls - a->hook_calls;
  sum->hook_work += b->hook_work - a->hook_work;
  sum->errors += b->errors - a->errors;
}

static void json_array(FILE* f, const char* key, const double* v, int n) {
  fprintf(f, ", \"%s\": [", key);
  for (int i = 0; i < n; ++i) fprintf(f, "%s%.6g", i ? ", " : "", v[i]);
  fprintf(f, "]");
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--n") && v) opt.n = parse_int(argv[++i], "--n", 2, 65536);
    else if (!strcmp(a, "--tile") && v) opt.b = parse_int(argv[++i], "--tile", 2, 8192);
    else if (!strcmp(a, "--reps") && v) opt.reps = parse_int(argv[++i], "--reps", 1, 100);
    else if (!strcmp(a, "--warmup") && v) opt.warmup = parse_int(argv[++i], "--warmup", 0, 100);
    else if (!strcmp(a, "--out") && v) opt.out = argv[++i];
    else if (!strcmp(a, "--no-check")) opt.check = 0;
    else if (!strcmp(a, "--fail-rank") && v) opt.fail_rank = parse_int(argv[++i], "--fail-rank", 0, 65535);
    else if (!strcmp(a, "--quiet")) opt.quiet = 1;
    else if (!strcmp(a, "--grid") && v) {
      char extra;
      if (sscanf(argv[++i], "%dx%d%c", &opt.p, &opt.q, &extra) != 2 ||
          opt.p < 1 || opt.q < 1)
        die_usage("--grid: '%s' is not allowed; expected PxQ", argv[i]);
    } else if (!strcmp(a, "--modes") && v) {
      snprintf(opt.modes, sizeof opt.modes, "%s", argv[++i]);
    } else if (!strcmp(a, "--backend") && v) {
      ++i;
      if (!strcmp(argv[i], "rondo")) opt.backend_rondo = 1;
      else if (!strcmp(argv[i], "none")) opt.backend_rondo = 0;
      else die_usage("--backend: '%s' is not allowed; expected rondo or none", argv[i]);
    } else {
      die_usage("unknown or incomplete argument '%s' (see the banner of "
                "bench/apps/starpu_cholesky.c)", a);
    }
  }
  if (opt.n % opt.b != 0) {
    fprintf(stderr, "starpu_cholesky: --n %d is not a multiple of --tile %d\n",
            opt.n, opt.b);
    return 2;
  }
  T = opt.n / opt.b;
  const char* blas_threads = getenv("OPENBLAS_NUM_THREADS");
  if (blas_threads == NULL || strcmp(blas_threads, "1") != 0)
    fprintf(stderr, "starpu_cholesky: warning: OPENBLAS_NUM_THREADS is not 1: "
            "BLAS threads will compete with StarPU's workers\n");

  struct starpu_conf conf;
  starpu_conf_init(&conf);
  /* One worker per CPU this process may run on (an emulated host's cpuset,
   * a rank's binding), unless STARPU_NCPU says otherwise: StarPU would
   * otherwise start one per CPU of the machine. */
  cpu_set_t affinity;
  if (getenv("STARPU_NCPU") == NULL &&
      sched_getaffinity(0, sizeof affinity, &affinity) == 0)
    conf.ncpus = CPU_COUNT(&affinity);
  if (!opt.backend_rondo &&
      STARPU_CALL_UNCHECKED(starpu_init(&conf)) != 0) {
    fprintf(stderr, "starpu_cholesky: starpu_init failed\n");
    return 1;
  }
  if (opt.backend_rondo) {
    if (STARPU_CALL_UNCHECKED(rondo_starpu_init_all(&conf)) != RONDO_OK) {
      fprintf(stderr, "starpu_cholesky: %s\n", rondo_starpu_last_error());
      return 1;
    }
    me = rondo_starpu_rank();
    nranks = rondo_starpu_size();
    rondo_nmad_session_open("starpu_cholesky", &session);
  } else {
    me = 0;
    nranks = 1;
    if (getenv("RONDO_SIZE") && atoi(getenv("RONDO_SIZE")) > 1) {
      fprintf(stderr, "starpu_cholesky: --backend none runs on one rank\n");
      return 2;
    }
  }
  if (opt.p == 0) {
    opt.p = 1;
    for (int d = 1; d * d <= nranks; ++d)
      if (nranks % d == 0) opt.p = d;
    opt.q = nranks / opt.p;
  }
  if (opt.p * opt.q != nranks) {
    fprintf(stderr, "starpu_cholesky: --grid %dx%d does not have the job's %d "
            "ranks\n", opt.p, opt.q, nranks);
    return 2;
  }
  compute_needs();
  tiles = calloc((size_t)T * T, sizeof *tiles);
  handles = calloc((size_t)T * T, sizeof *handles);
  const int workers = (int)starpu_cpu_worker_get_count();

  /* The modes, then the run order: warm-up, then ABBA. */
  struct mode_result modes[2];
  int nmodes = 0;
  char list[64];
  snprintf(list, sizeof list, "%s", opt.modes);
  for (char* save = NULL, *m = strtok_r(list, ",", &save); m;
       m = strtok_r(NULL, ",", &save)) {
    if (strcmp(m, "naive") && strcmp(m, "dynamic"))
      die_usage("--modes: '%s' is not allowed; expected naive and/or dynamic", m);
    if (nmodes == 2) die_usage("--modes: '%s': at most two modes", m);
    memset(&modes[nmodes], 0, sizeof modes[nmodes]);
    snprintf(modes[nmodes].name, sizeof modes[nmodes].name, "%s", m);
    ++nmodes;
  }
  int errors = 0;
  const int runs = opt.warmup + opt.reps;
  for (int run = 0; run < runs * nmodes; ++run) {
    const int round = run / nmodes, slot = run % nmodes;
    const int mi = (round % 2 == 0) ? slot : nmodes - 1 - slot;
    struct mode_result* mr = &modes[mi];
    const int measured = round >= opt.warmup;
    const int last = round == runs - 1;
    if (opt.backend_rondo)
      rondo_starpu_set_detection(!strcmp(mr->name, "dynamic"));
    register_tiles();
    rondo_starpu_stats_t before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    if (opt.backend_rondo) {
      rondo_starpu_get_stats(&before);
      rondo_nmad_barrier();
    }
    atomic_store(&busy_ns, 0);
    atomic_store(&kernel_errors, 0);
    atomic_store(&transfer_errors, 0);
    tasks_submitted = 0;
    const int64_t t0 = now_ns();
    submit_flow();
    starpu_task_wait_for_all();
    if (opt.backend_rondo) rondo_starpu_wait_all();
    const int64_t t1 = now_ns();
    if (opt.backend_rondo) rondo_starpu_get_stats(&after);
    /* Every rank's times, errors and counters, gathered on rank 0. */
    enum { kF = 10 };
    rondo_starpu_stats_t delta;
    memset(&delta, 0, sizeof delta);
    if (opt.backend_rondo) add_stats(&delta, &before, &after);
    double mine[kF] = {
        (double)t0, (double)t1,
        (double)workers * (t1 - t0) - (double)atomic_load(&busy_ns),
        (double)(atomic_load(&kernel_errors) + atomic_load(&transfer_errors)),
        (double)delta.broadcasts, (double)delta.bcast_recipients,
        (double)delta.single_sends, (double)delta.missed,
        (double)delta.hook_calls, (double)delta.hook_work};
    double* all = calloc(kF * (size_t)nranks, sizeof(double));
    if (opt.backend_rondo) gather_doubles(mine, kF, all);
    else memcpy(all, mine, sizeof mine);
    if (me == 0) {
      double start = all[0], end = all[1], wait = 0;
      rondo_starpu_stats_t sum;
      memset(&sum, 0, sizeof sum);
      for (int r = 0; r < nranks; ++r) {
        const double* a = all + (size_t)kF * r;
        start = fmin(start, a[0]);
        end = fmax(end, a[1]);
        wait += a[2] / nranks;
        errors += (int)a[3];
        sum.broadcasts += (unsigned long long)a[4];
        sum.bcast_recipients += (unsigned long long)a[5];
        sum.single_sends += (unsigned long long)a[6];
        sum.missed += (unsigned long long)a[7];
        sum.hook_calls += (unsigned long long)a[8];
        sum.hook_work += (unsigned long long)a[9];
      }
      if (measured) {
        rondo_starpu_stats_t zero;
        memset(&zero, 0, sizeof zero);
        add_stats(&mr->stats, &zero, &sum);
      }
      if (measured && mr->count < 256) {
        mr->samples[mr->count] = end - start;
        mr->waits[mr->count] = wait;
        mr->gflops[mr->count] =
            (double)opt.n * opt.n * opt.n / 3.0 / (end - start);
        mr->count++;
      }
      if (!opt.quiet)
        fprintf(stderr, "starpu_cholesky: %s run %d%s: %.1f ms, %.2f GFlop/s\n",
                mr->name, round, measured ? "" : " (warm-up)", (end - start) / 1e6,
                (double)opt.n * opt.n * opt.n / 3.0 / (end - start));
    }
    free(all);
    if (last && opt.check) {
      mr->residual = opt.backend_rondo ? residual() : 0;
      if (!opt.backend_rondo) {
        /* One rank holds every tile. */
        double* L = calloc((size_t)opt.n * opt.n, sizeof(double));
        for (int i = 0; i < T; ++i)
          for (int j = 0; j <= i; ++j)
            for (int c = 0; c < opt.b; ++c)
              for (int r = 0; r < opt.b; ++r)
                if (i * opt.b + r >= j * opt.b + c)
                  L[(size_t)(j * opt.b + c) * opt.n + i * opt.b + r] =
                      tiles[idx(i, j)][(size_t)c * opt.b + r];
        double* C = malloc(sizeof(double) * (size_t)opt.n * opt.n);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, opt.n, opt.n,
                    1.0, L, opt.n, 0.0, C, opt.n);
        double diff = 0, norm = 0;
        for (int c = 0; c < opt.n; ++c)
          for (int r = c; r < opt.n; ++r) {
            const double a = entry(r, c), d = a - C[(size_t)c * opt.n + r];
            diff += (r == c ? 1 : 2) * d * d;
            norm += (r == c ? 1 : 2) * a * a;
          }
        mr->residual = sqrt(diff) / sqrt(norm);
        free(C);
        free(L);
      }
    }
    unregister_tiles();
    ++run_id;
  }

  if (me == 0) {
    FILE* f = opt.out ? fopen(opt.out, "a") : stdout;
    if (f == NULL) {
      fprintf(stderr, "starpu_cholesky: cannot open %s\n", opt.out);
      return 1;
    }
    for (int m = 0; m < nmodes; ++m) {
      const struct mode_result* mr = &modes[m];
      fprintf(f, "{\"type\": \"case\", \"mode\": \"%s\", \"n\": %d, \"tile\": %d, "
              "\"tiles\": %d, \"ranks\": %d, \"grid\": \"%dx%d\", "
              "\"workers\": %d, \"backend\": \"%s\", \"tasks\": %d",
              mr->name, opt.n, opt.b, T, nranks, opt.p, opt.q, workers,
              opt.backend_rondo ? "rondo" : "none", tasks_submitted);
      json_array(f, "samples_ns", mr->samples, mr->count);
      json_array(f, "wait_ns", mr->waits, mr->count);
      json_array(f, "gflops", mr->gflops, mr->count);
      if (opt.check) fprintf(f, ", \"residual\": %.6g", mr->residual);
      else fprintf(f, ", \"residual\": null");
      fprintf(f, ", \"broadcasts\": %llu, \"bcast_recipients\": %llu, "
              "\"single_sends\": %llu, \"missed\": %llu, \"hook_calls\": %llu, "
              "\"hook_work\": %llu, \"errors\": %d}\n",
              mr->stats.broadcasts, mr->stats.bcast_recipients,
              mr->stats.single_sends, mr->stats.missed, mr->stats.hook_calls,
              mr->stats.hook_work, errors + (int)mr->stats.errors);
      if (opt.check && !(mr->residual < 1e-12)) errors++;
    }
    if (f != stdout) fclose(f);
  }
  if (opt.backend_rondo) rondo_starpu_shutdown();
  STARPU_CALL_UNCHECKED((starpu_shutdown(), 0));
  return errors ? 1 : 0;
}
