/* bench/overlap/overlap.c: overlap of MPI nonblocking collectives with
 * computation, by the methodology of Denis et al. ("A methodology for assessing
 * computation/communication overlap of MPI nonblocking collectives",
 * BenchNBC), for any MPI library: standard MPI C, built with Rondo's
 * mpi.h (overlap_rondo), Open MPI's (overlap_openmpi) and MPICH's
 * (overlap_mpich). The driver
 * bench/overlap/overlap_driver.cc runs it once per library and configuration.
 *
 *   overlap --out FILE [--label LIB:CONFIG] [--collectives LIST]
 *           [--comm-us LIST] [--comp-us LIST] [--reps N] [--calib-runs N]
 *           [--comm-cores K] [--threads N] [--max-bytes B] [--max-order N]
 *           [--clock-rounds N] [--tolerance F] [--quiet]
 *           [--node-cpus online|affinity] [--comm-bytes LIST]
 *           [--kernel-floor]
 *   overlap --check-barrier N [--out FILE]      the window barrier's spread
 *   overlap --check-clock [--inject-offset-us X] [--inject-drift-ppm Y]
 *
 * What it does, in order (paper sections in brackets):
 *  1. Global clock [4.2]: every rank measures its clock against rank 0's by
 *     --clock-rounds round trips (ov_clock_point: the least disturbed round
 *     trips), at the start, before every cell (for the real-time clock of
 *     the window barrier: extrapolated from the start), and at the end (for
 *     post-mortem conversion of every recorded time: interpolated).
 *  2. Window barrier [4.2]: rank 0 picks a global deadline a margin ahead
 *     and broadcasts it; every rank busy-waits until its clock, converted,
 *     reaches it. A rank that got the deadline too late counts as late and
 *     the margin doubles for the next cell.
 *  3. Computation [5.1]: one thread per core of the rank's share of the
 *     node (the node's cores minus --comm-cores, shared between the ranks
 *     on the node), each pinned and running a sequential GEMM of order n on
 *     its own matrices. Its time is the slowest thread's (the call's), the
 *     slowest rank's.
 *  4. Calibration [4.3, 5.1]: ov_calibrate finds the message size (bytes
 *     per block) that makes MPI_I<coll> + MPI_Wait take each --comm-us
 *     target, and the GEMM order for each --comp-us target; each probe is
 *     the median of --calib-runs runs after a window barrier, the
 *     collective's time being the latest end minus the earliest start over
 *     all ranks on the global clock [4.1]. Not converged within 10%: the
 *     point is reported invalid. The metrics use the measured reference
 *     times (t_comm_ref, t_comp_ref), never the targets.
 *  5. Overlap [Algorithm 1]: t1, MPI_I<coll>, t2, compute, t3, MPI_Wait,
 *     t4 on every rank, after a window barrier, --reps times per cell, no
 *     MPI_Test inside the computation. Per repetition: t_measured = latest
 *     t4 - earliest t1 (global clock), t_comp = the slowest rank's t3 - t2,
 *     t_call + t_wait = the largest over ranks; the medians over the
 *     repetitions give the overhead ratio (Eq. 1), the communication ratio
 *     (Eq. 4) and the computation slowdown ratio (Eq. 3).
 *  6. MPI impact ratio [3.2.1, Eq. 2]: the computation of the middle
 *     --comp-us target timed after MPI_Init with nothing communicating,
 *     then again after MPI_Finalize (the library gone, same threads, same
 *     cores, all ranks at once): passive / without MPI, on every rank
 *     (rank r > 0 writes its line to FILE.impact.r, FILE being --out).
 *  7. --comm-bytes: the pure communication time of fixed sizes (bytes per
 *     block), the same for every library, timed like the references
 *     (comm_size lines): the calibrated sizes differ between libraries.
 *  8. Progress CPU (issue 27): in every repetition of a cell, each rank
 *     reads its process CPU clock (every thread: the library's progress
 *     threads, MPICH's asynchronous thread, UCX's) at t1..t4 and the
 *     computation threads' own CPU clocks around their GEMMs; what is not
 *     the GEMM is progress. Summed over the ranks, median over the
 *     repetitions, per MiB of ov_handled_bytes: progress_cpu_ns_per_mib
 *     (t1..t4: the call, the background during the computation and the
 *     wait) and progress_cpu_comp_ns_per_mib (t2..t3 only: what competed
 *     with the computation for its cores). A "threads" line gives rank 0's
 *     CPU per thread over the whole job (/proc/self/task).
 *  9. The computation alone in a process that never initialises MPI:
 *     --comp-alone ORDER times ORDER's GEMM --ref-reps times on the rank's
 *     share of the node (--local-rank, --local-size) and exits without
 *     MPI_Init; the driver runs it after each job on every host, so that
 *     the impact is measured even when a library hangs in MPI_Finalize.
 *     The passive runs of step 6 are written ("passive" line) before
 *     MPI_Finalize for the same reason.
 * 10. --kernel-floor (2 ranks; the driver's library `kernel`): every
 *     collective's bytes are moved by the kernel alone, from helper threads
 *     blocked in send() and recv() on two TCP connections between the ranks
 *     (bench/overlap/overlap_kernel.h), instead of by MPI_I<coll>; MPI is
 *     used only around the timed parts (clocks, barriers, gathering the
 *     times). The cells then read the kernel floor beside the computation:
 *     the least overhead and slowdown any library over this transport can
 *     reach, measured exactly as the libraries are. The floor moves the
 *     least traffic of each 2-rank collective (ibcast: B one way; ireduce: B
 *     to the root; iallreduce, iallgather, ialltoall: B each way) and does
 *     the reduction (a sum of doubles) after the wait, on the rank's own
 *     thread.
 * The node's CPUs, shared between its ranks for the computation, are the
 * machine's online processors, or with --node-cpus affinity the CPUs this
 * process may run on at start (a host that is a cpuset of the machine, as
 * bench/cluster's are, launched unbound).
 * Rank 0 writes one JSON object per line to --out (types setup, comm_ref,
 * comp_ref, cell, impact, barrier_check, clock_check, fail; the driver's
 * header comment lists their fields) and shows a progress bar with an
 * estimate of the remaining time on stderr. Bad arguments: a message and
 * exit status 2. */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/prog_util.h"
#include "bench/overlap/overlap_calibrate.h"
#include "bench/overlap/overlap_clock.h"
#include "bench/overlap/overlap_kernel.h"
#include "bench/overlap/overlap_metrics.h"

/* ---- clocks ---- */

static double RawNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The local clock: CLOCK_MONOTONIC, or with --check-clock a skewed copy of
 * it (offset and drift injected on ranks > 0), so that the estimation can
 * be checked against the truth, which all ranks of one machine share. */
typedef struct {
  double offset, drift;
} Skew;
static double SkewedNow(const Skew* s, double raw) {
  return raw * (1.0 + s->drift) + s->offset;
}

/* ---- options ---- */

enum { kMaxList = 32 };
enum { kIbcast, kIreduce, kIallreduce, kIallgather, kIalltoall, kNumColl };
static const char* const kCollNames[kNumColl] = {
    "ibcast", "ireduce", "iallreduce", "iallgather", "ialltoall"};

typedef struct {
  const char* out_path;
  const char* label;
  int coll[kNumColl];
  int ncoll;
  double comm_us[kMaxList], comp_us[kMaxList];
  int ncomm, ncomp;
  int reps, calib_runs, ref_reps;
  int comm_cores, threads;
  int node_affinity; /* --node-cpus affinity: the node is this rank's CPUs */
  int paired_comp_ref; /* --paired-comp-ref: time the computation per rep */
  double comm_bytes[kMaxList]; /* --comm-bytes: fixed sizes timed alone */
  int ncomm_bytes;
  size_t max_bytes; /* buffer memory per rank for the collectives */
  int max_order;
  int clock_rounds;
  double tolerance;
  int quiet;
  int check_barrier;
  int check_clock;
  double inject_offset_us, inject_drift_ppm;
  int comp_alone_order; /* --comp-alone ORDER: no MPI at all */
  int local_rank, local_size; /* --comp-alone: this process's share */
  int kernel_floor; /* --kernel-floor: the kernel moves the bytes, not MPI */
} Options;

static int g_rank = 0; /* set once after MPI_Init; for messages only */

static void Die(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "overlap: rank %d: ", g_rank);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Abort(MPI_COMM_WORLD, code);
  exit(code);
}

static double ParseNumber(const char* v, const char* opt, double lo,
                          double hi) {
  char* end = NULL;
  errno = 0;
  double x = v ? strtod(v, &end) : 0;
  if (v == NULL || *v == 0 || *end != 0 || errno || !(x >= lo && x <= hi))
    Die(2, "%s: '%s' is not allowed; expected a number in %g..%g", opt,
        v ? v : "(missing)", lo, hi);
  return x;
}

static int ParseTimes(const char* v, const char* opt, double* out) {
  int n = 0;
  char buf[1024];
  if (v == NULL || strlen(v) >= sizeof buf)
    Die(2, "%s: expected a comma-separated list of times in microseconds",
        opt);
  strcpy(buf, v);
  for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (n == kMaxList) Die(2, "%s: at most %d values", opt, kMaxList);
    out[n++] = ParseNumber(tok, opt, 1, 1e8);
  }
  if (n == 0) Die(2, "%s: the list is empty", opt);
  return n;
}

/* A list of message sizes in bytes per block (8 .. 2^33). */
static int ParseSizes(const char* v, const char* opt, double* out) {
  int n = 0;
  char buf[1024];
  if (v == NULL || strlen(v) >= sizeof buf)
    Die(2, "%s: expected a comma-separated list of sizes in bytes", opt);
  strcpy(buf, v);
  for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (n == kMaxList) Die(2, "%s: at most %d values", opt, kMaxList);
    out[n++] = floor(ParseNumber(tok, opt, 8, 8589934592.0) / 8) * 8;
  }
  if (n == 0) Die(2, "%s: the list is empty", opt);
  return n;
}

static void ParseCollectives(const char* v, Options* o) {
  char buf[256];
  if (v == NULL || strlen(v) >= sizeof buf)
    Die(2, "--collectives: expected a list of %s,%s,%s,%s,%s", kCollNames[0],
        kCollNames[1], kCollNames[2], kCollNames[3], kCollNames[4]);
  strcpy(buf, v);
  o->ncoll = 0;
  for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int c = 0;
    while (c < kNumColl && strcmp(tok, kCollNames[c]) != 0) ++c;
    if (c == kNumColl)
      Die(2, "--collectives: '%s' is not allowed; expected %s,%s,%s,%s,%s",
          tok, kCollNames[0], kCollNames[1], kCollNames[2], kCollNames[3],
          kCollNames[4]);
    if (o->ncoll < kNumColl) o->coll[o->ncoll++] = c;
  }
}

static void ParseOptions(int argc, char** argv, Options* o) {
  static const double kDefaultTimes[] = {100, 316, 1000, 3162, 10000};
  memset(o, 0, sizeof *o);
  o->label = "mpi:default";
  for (int c = 0; c < kNumColl; ++c) o->coll[c] = c;
  o->ncoll = kNumColl;
  o->ncomm = o->ncomp = 5;
  memcpy(o->comm_us, kDefaultTimes, sizeof kDefaultTimes);
  memcpy(o->comp_us, kDefaultTimes, sizeof kDefaultTimes);
  o->reps = 7;
  o->calib_runs = 5;
  o->ref_reps = 9;
  o->max_bytes = (size_t)512 << 20;
  o->max_order = 2048;
  o->clock_rounds = 1000;
  o->tolerance = 0.10;
  o->inject_offset_us = 2500;
  o->inject_drift_ppm = 80;
  o->local_size = 1;
  for (int a = 1; a < argc; ++a) {
    const char* k = argv[a];
    const char* v = a + 1 < argc ? argv[a + 1] : NULL;
    int used = 1;
    if (strcmp(k, "--out") == 0 && v) o->out_path = v;
    else if (strcmp(k, "--label") == 0 && v) o->label = v;
    else if (strcmp(k, "--collectives") == 0) ParseCollectives(v, o);
    else if (strcmp(k, "--comm-us") == 0) o->ncomm = ParseTimes(v, k, o->comm_us);
    else if (strcmp(k, "--comp-us") == 0) o->ncomp = ParseTimes(v, k, o->comp_us);
    else if (strcmp(k, "--reps") == 0) o->reps = (int)ParseNumber(v, k, 1, 10000);
    else if (strcmp(k, "--calib-runs") == 0) o->calib_runs = (int)ParseNumber(v, k, 1, 1000);
    else if (strcmp(k, "--ref-reps") == 0) o->ref_reps = (int)ParseNumber(v, k, 1, 10000);
    else if (strcmp(k, "--comm-cores") == 0) o->comm_cores = (int)ParseNumber(v, k, 0, 4096);
    else if (strcmp(k, "--threads") == 0) o->threads = (int)ParseNumber(v, k, 1, 4096);
    else if (strcmp(k, "--node-cpus") == 0 && v && strcmp(v, "affinity") == 0) o->node_affinity = 1;
    else if (strcmp(k, "--node-cpus") == 0 && v && strcmp(v, "online") == 0) o->node_affinity = 0;
    else if (strcmp(k, "--node-cpus") == 0)
      Die(2, "--node-cpus: '%s' is not allowed; expected online (the machine's "
             "processors) or affinity (the CPUs this rank may run on at start)",
          v ? v : "(missing)");
    else if (strcmp(k, "--comm-bytes") == 0) o->ncomm_bytes = ParseSizes(v, k, o->comm_bytes);
    else if (strcmp(k, "--max-bytes") == 0) o->max_bytes = (size_t)ParseNumber(v, k, 8, 1e10);
    else if (strcmp(k, "--max-order") == 0) o->max_order = (int)ParseNumber(v, k, 8, 20000);
    else if (strcmp(k, "--clock-rounds") == 0) o->clock_rounds = (int)ParseNumber(v, k, 10, 1e6);
    else if (strcmp(k, "--tolerance") == 0) o->tolerance = ParseNumber(v, k, 0.001, 1);
    else if (strcmp(k, "--check-barrier") == 0) o->check_barrier = (int)ParseNumber(v, k, 1, 1e6);
    else if (strcmp(k, "--inject-offset-us") == 0) o->inject_offset_us = ParseNumber(v, k, -1e9, 1e9);
    else if (strcmp(k, "--inject-drift-ppm") == 0) o->inject_drift_ppm = ParseNumber(v, k, -1e4, 1e4);
    else if (strcmp(k, "--check-clock") == 0) { o->check_clock = 1; used = 0; }
    else if (strcmp(k, "--quiet") == 0) { o->quiet = 1; used = 0; }
    else if (strcmp(k, "--paired-comp-ref") == 0) { o->paired_comp_ref = 1; used = 0; }
    else if (strcmp(k, "--kernel-floor") == 0) { o->kernel_floor = 1; used = 0; }
    else if (strcmp(k, "--comp-alone") == 0) o->comp_alone_order = (int)ParseNumber(v, k, 2, 20000);
    else if (strcmp(k, "--local-rank") == 0) o->local_rank = (int)ParseNumber(v, k, 0, 4095);
    else if (strcmp(k, "--local-size") == 0) o->local_size = (int)ParseNumber(v, k, 1, 4096);
    else
      Die(2, "unknown or incomplete option '%s'; see the usage at the top of "
             "bench/overlap/overlap.c", k);
    a += used;
  }
  if (o->local_rank >= o->local_size)
    Die(2, "--local-rank %d: not allowed with --local-size %d; expected "
           "0..%d", o->local_rank, o->local_size, o->local_size - 1);
}

/* ---- output (rank 0) ---- */

static FILE* g_out = NULL;

static void Emit(const char* fmt, ...) {
  if (g_out == NULL) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(g_out, fmt, ap);
  va_end(ap);
  fputc('\n', g_out);
  fflush(g_out);
}

/* A JSON number, or null when not finite. */
static const char* Num(char* buf, double x) {
  if (isfinite(x)) snprintf(buf, 32, "%.6g", x);
  else strcpy(buf, "null");
  return buf;
}

/* "x1, x2, ..." of v[i] * scale with 3 decimals (a JSON array's inside);
 * the caller frees it. */
static char* SamplesText(const double* v, int n, double scale) {
  const size_t cap = 32 * (size_t)n + 1;
  char* text = malloc(cap);
  size_t used = 0;
  text[0] = 0;
  for (int i = 0; i < n; ++i)
    used += (size_t)snprintf(text + used, cap - used, "%s%.3f", i ? ", " : "",
                             v[i] * scale);
  return text;
}

/* ---- statistics ---- */

static int CompareDouble(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double Median(const double* v, int n) {
  double* c = malloc(sizeof(double) * (size_t)n);
  memcpy(c, v, sizeof(double) * (size_t)n);
  qsort(c, (size_t)n, sizeof(double), CompareDouble);
  double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  free(c);
  return m;
}

/* ---- the global clock ---- */

enum { kTagClock = 9001 };

typedef struct {
  Skew skew;          /* this rank's local clock */
  OvClockPoint start; /* against rank 0, at the start */
  OvClockModel rt;    /* real time: extrapolated from the latest phase */
  int rounds;
} Clock;

static double LocalNow(const Clock* c) { return SkewedNow(&c->skew, RawNow()); }

static double GlobalNow(const Clock* c) {
  return ov_clock_to_global(&c->rt, LocalNow(c));
}

/* One calibration phase of every rank against rank 0 (collective). */
static OvClockPoint ClockPhase(Clock* c, int rounds) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  OvClockPoint p = {LocalNow(c), 0, 0, 0};
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer)
      for (int k = 0; k < rounds; ++k) {
        double t;
        MPI_Recv(&t, 1, MPI_DOUBLE, peer, kTagClock, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        t = LocalNow(c);
        MPI_Send(&t, 1, MPI_DOUBLE, peer, kTagClock, MPI_COMM_WORLD);
      }
    p.at = LocalNow(c);
    p.samples = rounds;
  } else {
    OvClockSample* s = malloc(sizeof *s * (size_t)rounds);
    for (int k = 0; k < rounds; ++k) {
      s[k].send = LocalNow(c);
      MPI_Send(&s[k].send, 1, MPI_DOUBLE, 0, kTagClock, MPI_COMM_WORLD);
      MPI_Recv(&s[k].remote, 1, MPI_DOUBLE, 0, kTagClock, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      s[k].recv = LocalNow(c);
    }
    if (ov_clock_point(s, (size_t)rounds, 0.1, &p) != 0)
      Die(1, "the clock went backwards during synchronisation");
    free(s);
  }
  return p;
}

static void ClockStart(Clock* c, int rounds) {
  c->rounds = rounds;
  c->start = ClockPhase(c, rounds);
  c->rt = ov_clock_model(&c->start, NULL);
}

/* Re-measures the offset and extrapolates from the start and now (the
 * real-time clock of the window barrier). A short phase: the start's is
 * the long one. */
static void ClockRefresh(Clock* c) {
  int rounds = c->rounds / 5 > 20 ? c->rounds / 5 : 20;
  OvClockPoint now = ClockPhase(c, rounds);
  c->rt = now.at - c->start.at > 0.05 ? ov_clock_model(&c->start, &now)
                                     : ov_clock_model(&now, NULL);
}

/* ---- the window barrier ---- */

typedef struct {
  double margin; /* seconds between the decision and the release */
  long late;     /* releases whose deadline had already passed here */
  long late_total;
  int yield; /* ranks share cores: spin politely (sched_yield) */
} Window;

/* Releases every rank when the global clock reaches one deadline; returns
 * this rank's local time at release. */
static double WindowBarrier(const Clock* c, Window* w) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double deadline = rank == 0 ? GlobalNow(c) + w->margin : 0;
  MPI_Bcast(&deadline, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const double local = ov_clock_to_local(&c->rt, deadline);
  double t = LocalNow(c);
  if (t > local) ++w->late;
  while (t < local) {
    if (w->yield) sched_yield();
    t = LocalNow(c);
  }
  return t;
}

/* After a series: doubles the margin if any rank was late (collective). */
static void WindowAdapt(Window* w) {
  long late = 0;
  MPI_Allreduce(&w->late, &late, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (late > 0 && w->margin < 0.05) w->margin *= 2;
  w->late_total += late;
  w->late = 0;
}

/* ---- computation: a pinned thread pool running sequential GEMMs ---- */

typedef struct Pool Pool;
typedef struct {
  Pool* pool;
  int index;
  int cpu;
  double *a, *b, *c;
  double cpu_s; /* this thread's CPU time in its GEMMs, summed */
} Worker;

struct Pool {
  int nthreads;
  int order;      /* the order of the current job */
  int capacity;   /* matrices allocated for this order */
  int stop;
  Worker* workers;
  pthread_t* tids;
  pthread_barrier_t start, done;
};

static void Pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* The calling thread's CPU time, seconds. */
static double ThreadCpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The whole process's CPU time (every thread), seconds. */
static double ProcessCpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* C += A * B, order n, i-k-j loops (sequential, cache-friendly). */
static void Gemm(int n, const double* restrict a, const double* restrict b,
                 double* restrict c) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const double aik = a[(size_t)i * n + k];
      const double* brow = b + (size_t)k * n;
      double* crow = c + (size_t)i * n;
      for (int j = 0; j < n; ++j) crow[j] += aik * brow[j];
    }
}

static void AllocMatrices(Worker* w, int n) {
  const size_t count = (size_t)n * (size_t)n;
  free(w->a);
  free(w->b);
  free(w->c);
  w->a = malloc(sizeof(double) * count);
  w->b = malloc(sizeof(double) * count);
  w->c = calloc(count, sizeof(double));
  if (!w->a || !w->b || !w->c) Die(1, "out of memory for GEMM order %d", n);
  for (size_t i = 0; i < count; ++i) {
    w->a[i] = 1.0 + (double)(i % 7) * 0.125;
    w->b[i] = 0.5 - (double)(i % 5) * 0.0625;
  }
}

static void* WorkerMain(void* arg) {
  Worker* w = arg;
  Pin(w->cpu);
  for (;;) {
    pthread_barrier_wait(&w->pool->start);
    if (w->pool->stop) return NULL;
    const double cpu0 = ThreadCpu();
    Gemm(w->pool->order, w->a, w->b, w->c);
    w->cpu_s += ThreadCpu() - cpu0;
    pthread_barrier_wait(&w->pool->done);
  }
}

static void PoolStart(Pool* p, int nthreads, const int* cpus, int ncpus) {
  memset(p, 0, sizeof *p);
  p->nthreads = nthreads;
  p->workers = calloc((size_t)nthreads, sizeof(Worker));
  p->tids = calloc((size_t)nthreads, sizeof(pthread_t));
  pthread_barrier_init(&p->start, NULL, (unsigned)nthreads);
  pthread_barrier_init(&p->done, NULL, (unsigned)nthreads);
  for (int i = 0; i < nthreads; ++i) {
    p->workers[i].pool = p;
    p->workers[i].index = i;
    p->workers[i].cpu = ncpus ? cpus[i % ncpus] : -1;
  }
  Pin(p->workers[0].cpu); /* the calling thread is worker 0 */
  for (int i = 1; i < nthreads; ++i)
    if (pthread_create(&p->tids[i], NULL, WorkerMain, &p->workers[i]) != 0)
      Die(1, "cannot start compute thread %d", i);
}

/* Every thread multiplies its own matrices of order n; returns when the
 * slowest is done. */
static void Compute(Pool* p, int n) {
  if (n > p->capacity) {
    for (int i = 0; i < p->nthreads; ++i) AllocMatrices(&p->workers[i], n);
    p->capacity = n;
  }
  p->order = n;
  pthread_barrier_wait(&p->start);
  const double cpu0 = ThreadCpu();
  Gemm(n, p->workers[0].a, p->workers[0].b, p->workers[0].c);
  p->workers[0].cpu_s += ThreadCpu() - cpu0;
  pthread_barrier_wait(&p->done);
}

/* The computation threads' CPU time in their GEMMs so far (read between
 * Compute calls: the done barrier orders the workers' writes). */
static double PoolCpu(const Pool* p) {
  double s = 0;
  for (int i = 0; i < p->nthreads; ++i) s += p->workers[i].cpu_s;
  return s;
}

static void PoolStop(Pool* p) {
  p->stop = 1;
  pthread_barrier_wait(&p->start);
  for (int i = 1; i < p->nthreads; ++i) pthread_join(p->tids[i], NULL);
  for (int i = 0; i < p->nthreads; ++i) {
    free(p->workers[i].a);
    free(p->workers[i].b);
    free(p->workers[i].c);
  }
  pthread_barrier_destroy(&p->start);
  pthread_barrier_destroy(&p->done);
  free(p->workers);
  free(p->tids);
}

/* The cores of this rank's share of the node: the node's processors minus
 * the last `comm_cores` (left to communication), split evenly between the
 * `local_size` ranks on the node; at least one (shared when there are more
 * ranks than cores). */
static int ComputeCpus(const int* node, int nnode, int comm_cores,
                       int local_rank, int local_size, int* cpus, int max) {
  int app = nnode - comm_cores;
  if (app < 1) app = 1;
  int first = local_rank * app / local_size;
  int last = (local_rank + 1) * app / local_size;
  int n = 0;
  for (int c = first; c < last && n < max; ++c) cpus[n++] = node[c];
  if (n == 0) cpus[n++] = node[local_rank % app];
  return n;
}

/* The node's CPUs: the machine's online processors 0..N-1, or (--node-cpus
 * affinity, for hosts that are cpusets of one machine, such as
 * bench/cluster's) the CPUs this process may run on. */
static int NodeCpus(int affinity, int* node, int max) {
  int n = 0;
  if (affinity) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE && n < max; ++c)
        if (CPU_ISSET(c, &set)) node[n++] = c;
    if (n > 0) return n;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (int c = 0; c < online && n < max; ++c) node[n++] = c;
  if (n == 0) node[n++] = 0;
  return n;
}

/* ---- collectives ---- */

typedef struct {
  int coll;
  size_t bytes; /* per block */
  int size;
  void *send, *recv;
  size_t capacity; /* bytes allocated per buffer */
  int rank;
  OvKernel* kernel; /* --kernel-floor: the kernel moves the bytes */
} Coll;

/* Blocks of a buffer: P for allgather and alltoall, one for the others. */
static size_t CollBlocks(const Coll* c) {
  return c->coll == kIallgather || c->coll == kIalltoall ? (size_t)c->size
                                                          : 1;
}

static void CollReserve(Coll* c, size_t bytes) {
  const size_t total = bytes * CollBlocks(c);
  if (total <= c->capacity) return;
  free(c->send);
  free(c->recv);
  c->send = malloc(total);
  c->recv = malloc(total);
  if (!c->send || !c->recv)
    Die(1, "out of memory for %zu bytes per block", bytes);
  double* d = c->send;
  for (size_t i = 0; i < total / sizeof(double); ++i) d[i] = (double)(i % 13);
  memset(c->recv, 0, total);
  c->capacity = total;
}

/* --kernel-floor: the collective's least traffic between the 2 ranks,
 * started on the helpers (overlap_kernel.h). */
static void KernelStart(Coll* c) {
  const size_t n = c->bytes;
  const int me = c->rank, peer = 1 - me;
  char* send = c->send;
  char* recv = c->recv;
  const void* out = NULL;
  void* in = NULL;
  switch (c->coll) {
    case kIbcast:
      if (me == 0) out = send;
      else in = send;
      break;
    case kIreduce:
      if (me == 0) in = recv;
      else out = send;
      break;
    case kIallreduce:
      out = send;
      in = recv;
      break;
    case kIallgather:
      memcpy(recv + (size_t)me * n, send, n);
      out = send;
      in = recv + (size_t)peer * n;
      break;
    case kIalltoall:
      memcpy(recv + (size_t)me * n, send + (size_t)me * n, n);
      out = send + (size_t)peer * n;
      in = recv + (size_t)peer * n;
      break;
  }
  char err[256];
  if (ov_kernel_start(c->kernel, out, in, n, err, sizeof err) != 0)
    Die(1, "kernel floor: %s of %zu bytes: %s", kCollNames[c->coll], n, err);
}

/* The end of KernelStart's transfer, and the reduction where there is one
 * (the received block plus this rank's own). */
static void KernelWait(Coll* c) {
  char err[256];
  if (ov_kernel_wait(c->kernel, err, sizeof err) != 0)
    Die(1, "kernel floor: %s of %zu bytes: %s", kCollNames[c->coll], c->bytes,
        err);
  if (c->coll == kIallreduce || (c->coll == kIreduce && c->rank == 0)) {
    double* r = c->recv;
    const double* s = c->send;
    const size_t doubles = c->bytes / sizeof(double);
    for (size_t i = 0; i < doubles; ++i) r[i] += s[i];
  }
}

static void CollStart(Coll* c, MPI_Request* req) {
  if (c->kernel) {
    *req = MPI_REQUEST_NULL;
    KernelStart(c);
    return;
  }
  const int n = (int)c->bytes;
  const int doubles = (int)(c->bytes / sizeof(double));
  int err = MPI_SUCCESS;
  switch (c->coll) {
    case kIbcast:
      err = MPI_Ibcast(c->send, n, MPI_BYTE, 0, MPI_COMM_WORLD, req);
      break;
    case kIreduce:
      err = MPI_Ireduce(c->send, c->recv, doubles, MPI_DOUBLE, MPI_SUM, 0,
                        MPI_COMM_WORLD, req);
      break;
    case kIallreduce:
      err = MPI_Iallreduce(c->send, c->recv, doubles, MPI_DOUBLE, MPI_SUM,
                           MPI_COMM_WORLD, req);
      break;
    case kIallgather:
      err = MPI_Iallgather(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE,
                           MPI_COMM_WORLD, req);
      break;
    case kIalltoall:
      err = MPI_Ialltoall(c->send, n, MPI_BYTE, c->recv, n, MPI_BYTE,
                          MPI_COMM_WORLD, req);
      break;
  }
  if (err != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    Die(1, "%s of %zu bytes failed: %s", kCollNames[c->coll], c->bytes, text);
  }
}

static void CollWait(Coll* c, MPI_Request* req) {
  if (c->kernel) KernelWait(c);
  else MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* --kernel-floor's set-up: rank 1 listens, rank 0 connects (the addresses
 * go through MPI). Exactly 2 ranks. */
static void KernelConnect(Coll* c, int size) {
  if (size != 2)
    Die(2, "--kernel-floor: %d ranks is not allowed; the kernel floor is "
           "measured between exactly 2 ranks (one per host)", size);
  char address[4096], err[256];
  c->kernel = NULL;
  if (c->rank == 1) {
    c->kernel = ov_kernel_listen(address, sizeof address, err, sizeof err);
    if (!c->kernel) Die(1, "kernel floor: listen: %s", err);
    MPI_Send(address, (int)strlen(address) + 1, MPI_CHAR, 0, 0,
             MPI_COMM_WORLD);
    if (ov_kernel_accept(c->kernel, err, sizeof err) != 0)
      Die(1, "kernel floor: accept: %s", err);
  } else {
    MPI_Recv(address, (int)sizeof address, MPI_CHAR, 1, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    c->kernel = ov_kernel_connect(address, err, sizeof err);
    if (!c->kernel) Die(1, "kernel floor: connect to %s: %s", address, err);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- the benchmark's state ---- */

typedef struct {
  Options o;
  int rank, size;
  Clock clock;
  Window window;
  Pool pool;
  Coll coll;
  int cpus[1024];
  int ncpus;
  int node[1024]; /* the node's CPUs (NodeCpus), read before MPI_Init */
  int nnode;
  /* raw local times gathered at rank 0, converted post mortem */
  double* gathered; /* size * 4 */
  /* progress */
  double started;
  double work_done, work_total;
  double last_line; /* when the last progress line was printed */
  int tty;
} Bench;

/* Gathers k local times from every rank at rank 0 (into b->gathered). */
static void GatherTimes(Bench* b, const double* mine, int k) {
  MPI_Gather(mine, k, MPI_DOUBLE, b->gathered, k, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
}

/* The latest end minus the earliest start over the gathered (start, end)
 * pairs, converted with `m[r]` (rank 0). */
static double GlobalSpan(const Bench* b, const OvClockModel* m, int stride,
                         int start_at, int end_at) {
  double first = INFINITY, last = -INFINITY;
  for (int r = 0; r < b->size; ++r) {
    const double* t = b->gathered + (size_t)r * stride;
    double s = ov_clock_to_global(&m[r], t[start_at]);
    double e = ov_clock_to_global(&m[r], t[end_at]);
    if (s < first) first = s;
    if (e > last) last = e;
  }
  return last - first;
}

/* The real-time models of every rank, at rank 0 (for calibration). */
static void GatherModels(Bench* b, OvClockModel* m) {
  double mine[3] = {b->clock.rt.at, b->clock.rt.offset, b->clock.rt.drift};
  double* all = malloc(sizeof(double) * 3 * (size_t)b->size);
  MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (b->rank == 0)
    for (int r = 0; r < b->size; ++r)
      m[r] = (OvClockModel){all[3 * r], all[3 * r + 1], all[3 * r + 2]};
  free(all);
}

/* ---- progress bar ---- */

static void Progress(Bench* b, double work, const char* what) {
  b->work_done += work;
  if (b->rank != 0 || b->o.quiet) return;
  const double now = RawNow(), elapsed = now - b->started;
  const double frac = b->work_total > 0 ? b->work_done / b->work_total : 1;
  /* Not a terminal (a launcher's pipe): a line every 2 s at most. */
  if (!b->tty && now - b->last_line < 2 && frac < 1) return;
  b->last_line = now;
  const double left = frac > 0.01 ? elapsed * (1 - frac) / frac : NAN;
  char bar[31];
  int fill = (int)(frac * 30 + 0.5);
  for (int i = 0; i < 30; ++i) bar[i] = i < fill ? '#' : '.';
  bar[30] = 0;
  char eta[32];
  if (isfinite(left)) snprintf(eta, sizeof eta, "~%.0f s left", left);
  else strcpy(eta, "estimating");
  fprintf(stderr, "%s[%s] %s %3.0f%% %6.1f s elapsed, %s  %-34s%s",
          b->tty ? "\r" : "", b->o.label, bar, 100 * frac, elapsed, eta, what,
          b->tty ? "" : "\n");
  fflush(stderr);
}

/* ---- calibration ---- */

typedef struct {
  Bench* b;
  OvClockModel* models; /* rank 0 */
} Probe;

/* One MPI_I<coll> + MPI_Wait after a window barrier; every rank's local
 * (start, end) gathered at rank 0 (b->gathered). */
static void TimeCollective(Bench* b) {
  double t[2];
  MPI_Request req;
  WindowBarrier(&b->clock, &b->window);
  t[0] = LocalNow(&b->clock);
  CollStart(&b->coll, &req);
  CollWait(&b->coll, &req);
  t[1] = LocalNow(&b->clock);
  GatherTimes(b, t, 2);
}

/* Median over `runs` of the slowest rank's computation of order n, each
 * after a window barrier; the same value on every rank. */
static double MedianCompute(Bench* b, int order, int runs, double* samples) {
  double* t = malloc(sizeof(double) * (size_t)runs);
  for (int i = 0; i < runs; ++i) {
    WindowBarrier(&b->clock, &b->window);
    double t0 = LocalNow(&b->clock);
    Compute(&b->pool, order);
    double d = LocalNow(&b->clock) - t0;
    MPI_Allreduce(&d, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  if (samples) memcpy(samples, t, sizeof(double) * (size_t)runs);
  double m = Median(t, runs);
  free(t);
  return m;
}

/* Median over runs of the global time of MPI_I<coll> + MPI_Wait with
 * `bytes` per block; the same value on every rank. */
static double MeasureComm(size_t bytes, void* arg) {
  Probe* p = arg;
  Bench* b = p->b;
  CollReserve(&b->coll, bytes);
  b->coll.bytes = bytes;
  double* spans = malloc(sizeof(double) * (size_t)b->o.calib_runs);
  for (int i = 0; i < b->o.calib_runs; ++i) {
    TimeCollective(b);
    if (b->rank == 0) spans[i] = GlobalSpan(b, p->models, 2, 0, 1);
  }
  double m = b->rank == 0 ? Median(spans, b->o.calib_runs) : 0;
  free(spans);
  MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return m;
}

/* The calibration's probe for the computation. */
static double MeasureComp(size_t order, void* arg) {
  Bench* b = ((Probe*)arg)->b;
  return MedianCompute(b, (int)order, b->o.calib_runs, NULL);
}

/* ---- the sweep ---- */

typedef struct {
  OvCalibrateResult calib;
  double ref;   /* measured reference time, seconds (post mortem) */
  int valid;
  /* raw reference samples at rank 0: [reps][size][2] */
  double* raw;
  double* samples; /* comp: the runs' times, seconds */
} Ref;

/* The reference communication time: --ref-reps runs of MPI_I<coll> +
 * MPI_Wait after window barriers, raw times kept for post-mortem conversion.
 */
static void CommReference(Bench* b, Ref* r) {
  const int reps = b->o.ref_reps;
  if (b->rank == 0) r->raw = malloc(sizeof(double) * (size_t)reps * b->size * 2);
  for (int i = 0; i < reps; ++i) {
    TimeCollective(b);
    if (b->rank == 0)
      memcpy(r->raw + (size_t)i * b->size * 2, b->gathered,
             sizeof(double) * (size_t)b->size * 2);
  }
}

typedef struct {
  int coll, comm_i, comp_i;
  int valid;
  double* raw; /* rank 0: [reps][size][4] local t1..t4 */
  double* cpu; /* rank 0: [reps][size][2] progress CPU t1..t4, t2..t3 */
} Cell;

/* Algorithm 1, --reps times, every rank; raw times to rank 0. With
 * --paired-comp-ref every repetition also times the computation alone
 * (after its own window barrier; times 4 and 5 of the six). */
static void RunCell(Bench* b, Cell* cell, int order) {
  const int reps = b->o.reps, k = b->o.paired_comp_ref ? 6 : 4;
  if (b->rank == 0) {
    cell->raw = malloc(sizeof(double) * (size_t)reps * b->size * k);
    cell->cpu = malloc(sizeof(double) * (size_t)reps * b->size * 2);
  }
  for (int i = 0; i < reps; ++i) {
    double t[6], cpu[4];
    MPI_Request req;
    if (b->o.paired_comp_ref) {
      WindowBarrier(&b->clock, &b->window);
      t[4] = LocalNow(&b->clock);
      Compute(&b->pool, order);
      t[5] = LocalNow(&b->clock);
    }
    WindowBarrier(&b->clock, &b->window);
    cpu[0] = ProcessCpu();
    t[0] = LocalNow(&b->clock);
    CollStart(&b->coll, &req);
    t[1] = LocalNow(&b->clock);
    cpu[1] = ProcessCpu();
    const double gemm0 = PoolCpu(&b->pool);
    Compute(&b->pool, order);
    const double gemm = PoolCpu(&b->pool) - gemm0;
    cpu[2] = ProcessCpu();
    t[2] = LocalNow(&b->clock);
    CollWait(&b->coll, &req);
    t[3] = LocalNow(&b->clock);
    cpu[3] = ProcessCpu();
    GatherTimes(b, t, k);
    if (b->rank == 0)
      memcpy(cell->raw + (size_t)i * b->size * k, b->gathered,
             sizeof(double) * (size_t)b->size * k);
    /* Progress: the process's CPU that was not the GEMM, over the whole
     * collective and over the computation alone. */
    const double progress[2] = {cpu[3] - cpu[0] - gemm, cpu[2] - cpu[1] - gemm};
    GatherTimes(b, progress, 2);
    if (b->rank == 0)
      memcpy(cell->cpu + (size_t)i * b->size * 2, b->gathered,
             sizeof(double) * (size_t)b->size * 2);
  }
}

static const char* StatusName(OvCalibrateStatus s) {
  switch (s) {
    case OV_CALIB_CONVERGED: return "converged";
    case OV_CALIB_TOO_SLOW: return "too_slow";
    case OV_CALIB_TOO_FAST: return "too_fast";
    case OV_CALIB_NO_CONVERGENCE: return "no_convergence";
    case OV_CALIB_MEASURE_FAILED: return "measure_failed";
    case OV_CALIB_BAD_SPEC: return "bad_spec";
  }
  return "unknown";
}

/* Converts the raw cell times with the post-mortem models and writes the
 * cell's line (rank 0). */
static void ReportCell(Bench* b, const Cell* cell, const Ref* comm,
                       const Ref* comp, const OvClockModel* pm) {
  const int reps = b->o.reps, n = b->size, k = b->o.paired_comp_ref ? 6 : 4;
  double* measured = malloc(sizeof(double) * (size_t)reps);
  double* alone = malloc(sizeof(double) * (size_t)reps); /* paired comp */
  double* call_wait = malloc(sizeof(double) * (size_t)reps);
  double* comp_t = malloc(sizeof(double) * (size_t)reps);
  double* call_t = malloc(sizeof(double) * (size_t)reps);
  double* wait_t = malloc(sizeof(double) * (size_t)reps);
  for (int i = 0; i < reps; ++i) {
    const double* rep = cell->raw + (size_t)i * n * k;
    double first = INFINITY, last = -INFINITY;
    double cw = 0, cp = 0, cl = 0, wt = 0, ca = 0;
    for (int r = 0; r < n; ++r) {
      double g[6] = {0};
      for (int x = 0; x < k; ++x) g[x] = ov_clock_to_global(&pm[r], rep[r * k + x]);
      if (g[5] - g[4] > ca) ca = g[5] - g[4];
      if (g[0] < first) first = g[0];
      if (g[3] > last) last = g[3];
      if (g[2] - g[1] > cp) cp = g[2] - g[1];
      if ((g[1] - g[0]) + (g[3] - g[2]) > cw) {
        cw = (g[1] - g[0]) + (g[3] - g[2]);
        cl = g[1] - g[0];
        wt = g[3] - g[2];
      }
    }
    measured[i] = last - first;
    alone[i] = ca;
    call_wait[i] = cw;
    comp_t[i] = cp;
    call_t[i] = cl;
    wait_t[i] = wt;
  }
  /* Progress CPU, summed over the ranks, per repetition. */
  double* cpu_all = malloc(sizeof(double) * (size_t)reps);
  double* cpu_comp = malloc(sizeof(double) * (size_t)reps);
  for (int i = 0; i < reps; ++i) {
    cpu_all[i] = cpu_comp[i] = 0;
    for (int r = 0; r < n; ++r) {
      cpu_all[i] += cell->cpu[((size_t)i * n + r) * 2];
      cpu_comp[i] += cell->cpu[((size_t)i * n + r) * 2 + 1];
    }
  }
  const double cpu_all_s = Median(cpu_all, reps);
  const double cpu_comp_s = Median(cpu_comp, reps);
  const double handled =
      ov_handled_bytes((OvCollective)cell->coll, (double)comm->calib.size, n);
  free(cpu_all);
  free(cpu_comp);
  const double tm = Median(measured, reps), tcw = Median(call_wait, reps);
  const double tc = Median(comp_t, reps);
  const int valid = comm->valid && comp->valid;
  /* The computation's reference: the paired runs when there are (the
   * machine's speed then and there), else the separate reference. */
  const double comp_ref =
      b->o.paired_comp_ref ? Median(alone, reps) : comp->ref;
  const double overhead =
      valid ? ov_overhead_ratio(tm, comp_ref, comm->ref) : NAN;
  const double comm_ratio = valid ? ov_comm_ratio(tcw, 0, comm->ref) : NAN;
  const double slowdown = valid ? ov_comp_slowdown_ratio(tc, comp_ref) : NAN;
  char s[16][32];
  char* samples = SamplesText(measured, reps, 1e6);
  char* alone_text = b->o.paired_comp_ref ? SamplesText(alone, reps, 1e6)
                                          : SamplesText(alone, 0, 1e6);
  Emit("{\"type\": \"cell\", \"collective\": \"%s\", \"comm_target_us\": %.10g, "
       "\"comp_target_us\": %.10g, \"bytes\": %zu, \"order\": %zu, "
       "\"valid\": %s, \"t_comm_ref_us\": %s, \"t_comp_ref_us\": %s, "
       "\"t_measured_us\": %s, \"t_call_us\": %s, \"t_comp_us\": %s, "
       "\"t_wait_us\": %s, \"overhead_ratio\": %s, \"comm_ratio\": %s, "
       "\"comp_slowdown\": %s, \"reps\": %d, \"samples_measured_us\": [%s], "
       "\"t_comp_ref_separate_us\": %s, \"samples_comp_ref_us\": [%s], "
       "\"progress_cpu_us\": %s, \"progress_cpu_comp_us\": %s, "
       "\"handled_bytes\": %.0f, \"progress_cpu_ns_per_mib\": %s, "
       "\"progress_cpu_comp_ns_per_mib\": %s}",
       kCollNames[cell->coll], b->o.comm_us[cell->comm_i],
       b->o.comp_us[cell->comp_i], comm->calib.size, comp->calib.size,
       valid ? "true" : "false", Num(s[0], comm->ref * 1e6),
       Num(s[1], comp_ref * 1e6), Num(s[2], tm * 1e6),
       Num(s[3], Median(call_t, reps) * 1e6), Num(s[4], tc * 1e6),
       Num(s[5], Median(wait_t, reps) * 1e6), Num(s[6], overhead),
       Num(s[7], comm_ratio), Num(s[8], slowdown), reps, samples,
       Num(s[9], comp->ref * 1e6), alone_text, Num(s[10], cpu_all_s * 1e6),
       Num(s[11], cpu_comp_s * 1e6), isfinite(handled) ? handled : 0,
       Num(s[12], ov_ns_per_mib(cpu_all_s, handled)),
       Num(s[13], ov_ns_per_mib(cpu_comp_s, handled)));
  free(samples);
  free(alone_text);
  free(alone);
  free(measured);
  free(call_wait);
  free(comp_t);
  free(call_t);
  free(wait_t);
}

/* The post-mortem models: from the start phase and the end phase, at rank
 * 0 (collective). */
static void EndModels(Bench* b, OvClockModel* pm) {
  OvClockPoint end = ClockPhase(&b->clock, b->clock.rounds);
  OvClockModel mine = ov_clock_model(&b->clock.start, &end);
  double v[3] = {mine.at, mine.offset, mine.drift};
  double* all = malloc(sizeof(double) * 3 * (size_t)b->size);
  MPI_Gather(v, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (b->rank == 0) {
    double drift = 0;
    for (int r = 0; r < b->size; ++r) {
      pm[r] = (OvClockModel){all[3 * r], all[3 * r + 1], all[3 * r + 2]};
      if (fabs(pm[r].drift) > fabs(drift)) drift = pm[r].drift;
    }
    Emit("{\"type\": \"clock\", \"clock_drift_ppm\": %.3f, "
         "\"window_margin_us\": %.1f, \"window_late\": %ld}",
         drift * 1e6, b->window.margin * 1e6, b->window.late_total);
  }
  free(all);
}

static OvCalibrateSpec CommSpec(const Bench* b, double target) {
  OvCalibrateSpec s = {0};
  s.target = target;
  s.tolerance = b->o.tolerance;
  s.min_size = 8;
  /* Send and receive buffers within --max-bytes: P blocks each for
   * allgather and alltoall, one for the others. */
  s.max_size = b->o.max_bytes / (2 * CollBlocks(&b->coll)) / 8 * 8;
  s.granule = 8;
  s.start_size = 1024;
  s.growth = 4;
  s.max_iterations = 30;
  return s;
}

static OvCalibrateSpec CompSpec(const Bench* b, double target) {
  OvCalibrateSpec s = {0};
  s.target = target;
  s.tolerance = b->o.tolerance;
  s.min_size = 2;
  s.max_size = (size_t)b->o.max_order;
  s.granule = 1;
  s.start_size = 32;
  s.growth = 1.6;
  s.max_iterations = 30;
  return s;
}

/* The global spans of a communication reference's runs, converted with the
 * post-mortem models (rank 0); the caller frees them. */
static double* RefSpans(Bench* b, const Ref* r, const OvClockModel* pm) {
  double* spans = malloc(sizeof(double) * (size_t)b->o.ref_reps);
  for (int i = 0; i < b->o.ref_reps; ++i) {
    memcpy(b->gathered, r->raw + (size_t)i * b->size * 2,
           sizeof(double) * (size_t)b->size * 2);
    spans[i] = GlobalSpan(b, pm, 2, 0, 1);
  }
  return spans;
}

static void Sweep(Bench* b) {
  const Options* o = &b->o;
  OvClockModel* models = calloc((size_t)b->size, sizeof(OvClockModel));
  Probe probe = {b, models};
  Ref* comp = calloc((size_t)o->ncomp, sizeof(Ref));
  Ref* comm = calloc((size_t)o->ncoll * o->ncomm, sizeof(Ref));
  /* --comm-bytes: the pure communication time of fixed sizes, the same for
   * every library (the calibrated sizes differ between libraries). */
  Ref* sized = calloc((size_t)o->ncoll * (o->ncomm_bytes + 1), sizeof(Ref));
  Cell* cells = calloc((size_t)o->ncoll * o->ncomm * o->ncomp, sizeof(Cell));
  char what[64];
  /* Work units for the estimate: each calibration and reference counts as
   * its target times the runs it takes, each cell its reps * max time. */
  b->work_total = 0;
  for (int p = 0; p < o->ncomp; ++p)
    b->work_total += o->comp_us[p] * (8.0 * o->calib_runs + o->ref_reps);
  for (int c = 0; c < o->ncoll; ++c)
    for (int m = 0; m < o->ncomm; ++m) {
      b->work_total += o->comm_us[m] * (8.0 * o->calib_runs + o->ref_reps);
      for (int p = 0; p < o->ncomp; ++p)
        b->work_total += o->reps * (o->comm_us[m] > o->comp_us[p]
                                        ? o->comm_us[m] + 0.3 * o->comp_us[p]
                                        : o->comp_us[p] + 0.3 * o->comm_us[m]);
    }

  for (int p = 0; p < o->ncomp; ++p) {
    snprintf(what, sizeof what, "computation %g us", o->comp_us[p]);
    Progress(b, 0, what);
    ClockRefresh(&b->clock);
    OvCalibrateSpec spec = CompSpec(b, o->comp_us[p] * 1e-6);
    comp[p].calib = ov_calibrate(&spec, MeasureComp, &probe);
    comp[p].valid = comp[p].calib.status == OV_CALIB_CONVERGED;
    comp[p].samples = malloc(sizeof(double) * (size_t)o->ref_reps);
    comp[p].ref = MedianCompute(b, (int)comp[p].calib.size, o->ref_reps,
                                comp[p].samples);
    WindowAdapt(&b->window);
    char s1[32];
    char* comp_samples = SamplesText(comp[p].samples, o->ref_reps, 1e6);
    Emit("{\"type\": \"comp_ref\", \"target_us\": %.10g, \"order\": %zu, "
         "\"status\": \"%s\", \"valid\": %s, \"t_comp_ref_us\": %s, "
         "\"iterations\": %d, \"samples_us\": [%s]}",
         o->comp_us[p], comp[p].calib.size, StatusName(comp[p].calib.status),
         comp[p].valid ? "true" : "false", Num(s1, comp[p].ref * 1e6),
         comp[p].calib.iterations, comp_samples);
    free(comp_samples);
    Progress(b, o->comp_us[p] * (8.0 * o->calib_runs + o->ref_reps), what);
  }
  for (int c = 0; c < o->ncoll; ++c) {
    b->coll.coll = o->coll[c];
    for (int k = 0; k < o->ncomm_bytes; ++k) {
      snprintf(what, sizeof what, "%s %.0f bytes", kCollNames[o->coll[c]],
               o->comm_bytes[k]);
      Progress(b, 0, what);
      ClockRefresh(&b->clock);
      CollReserve(&b->coll, (size_t)o->comm_bytes[k]);
      b->coll.bytes = (size_t)o->comm_bytes[k];
      CommReference(b, &sized[c * o->ncomm_bytes + k]);
      WindowAdapt(&b->window);
    }
    for (int m = 0; m < o->ncomm; ++m) {
      Ref* r = &comm[c * o->ncomm + m];
      snprintf(what, sizeof what, "%s %g us: calibrating",
               kCollNames[o->coll[c]], o->comm_us[m]);
      Progress(b, 0, what);
      ClockRefresh(&b->clock);
      GatherModels(b, models);
      OvCalibrateSpec spec = CommSpec(b, o->comm_us[m] * 1e-6);
      r->calib = ov_calibrate(&spec, MeasureComm, &probe);
      r->valid = r->calib.status == OV_CALIB_CONVERGED;
      if (r->calib.size > 0) {
        CollReserve(&b->coll, r->calib.size);
        b->coll.bytes = r->calib.size;
      }
      CommReference(b, r);
      WindowAdapt(&b->window);
      Progress(b, o->comm_us[m] * (8.0 * o->calib_runs + o->ref_reps), what);
      for (int p = 0; p < o->ncomp; ++p) {
        Cell* cell = &cells[(c * o->ncomm + m) * o->ncomp + p];
        cell->coll = o->coll[c];
        cell->comm_i = m;
        cell->comp_i = p;
        snprintf(what, sizeof what, "%s %g us x comp %g us",
                 kCollNames[o->coll[c]], o->comm_us[m], o->comp_us[p]);
        Progress(b, 0, what);
        ClockRefresh(&b->clock);
        RunCell(b, cell, (int)comp[p].calib.size);
        WindowAdapt(&b->window);
        Progress(b,
                 o->reps * (o->comm_us[m] > o->comp_us[p]
                                ? o->comm_us[m] + 0.3 * o->comp_us[p]
                                : o->comp_us[p] + 0.3 * o->comm_us[m]),
                 what);
      }
    }
  }
  if (b->rank == 0 && !o->quiet && b->tty) fputc('\n', stderr);

  /* Post mortem: every recorded time through the start-end models. */
  OvClockModel* pm = calloc((size_t)b->size, sizeof(OvClockModel));
  EndModels(b, pm);
  if (b->rank == 0) {
    for (int c = 0; c < o->ncoll; ++c)
      for (int m = 0; m < o->ncomm; ++m) {
        Ref* r = &comm[c * o->ncomm + m];
        double* spans = RefSpans(b, r, pm);
        r->ref = Median(spans, o->ref_reps);
        char* text = SamplesText(spans, o->ref_reps, 1e6);
        free(spans);
        char s1[32];
        Emit("{\"type\": \"comm_ref\", \"collective\": \"%s\", \"target_us\": "
             "%.10g, \"bytes\": %zu, \"status\": \"%s\", \"valid\": %s, "
             "\"t_comm_ref_us\": %s, \"iterations\": %d, \"samples_us\": [%s]}",
             kCollNames[o->coll[c]], o->comm_us[m], r->calib.size,
             StatusName(r->calib.status), r->valid ? "true" : "false",
             Num(s1, r->ref * 1e6), r->calib.iterations, text);
        free(text);
      }
    for (int c = 0; c < o->ncoll; ++c)
      for (int k = 0; k < o->ncomm_bytes; ++k) {
        Ref* r = &sized[c * o->ncomm_bytes + k];
        double* spans = RefSpans(b, r, pm);
        char* text = SamplesText(spans, o->ref_reps, 1e6);
        char s1[32];
        Emit("{\"type\": \"comm_size\", \"collective\": \"%s\", "
             "\"bytes\": %.0f, \"t_comm_us\": %s, \"samples_us\": [%s]}",
             kCollNames[o->coll[c]], o->comm_bytes[k],
             Num(s1, Median(spans, o->ref_reps) * 1e6), text);
        free(text);
        free(spans);
      }
    for (int c = 0; c < o->ncoll; ++c)
      for (int m = 0; m < o->ncomm; ++m)
        for (int p = 0; p < o->ncomp; ++p)
          ReportCell(b, &cells[(c * o->ncomm + m) * o->ncomp + p],
                     &comm[c * o->ncomm + m], &comp[p], pm);
  }
  for (int i = 0; i < o->ncoll * o->ncomm; ++i) free(comm[i].raw);
  for (int i = 0; i < o->ncoll * o->ncomm_bytes; ++i) free(sized[i].raw);
  for (int i = 0; i < o->ncomp; ++i) free(comp[i].samples);
  free(sized);
  for (int i = 0; i < o->ncoll * o->ncomm * o->ncomp; ++i) {
    free(cells[i].raw);
    free(cells[i].cpu);
  }
  free(cells);
  free(comm);
  free(comp);
  free(pm);
  free(models);
}

/* ---- checks ---- */

/* --check-barrier N: N window barriers; at each release every rank reads
 * CLOCK_MONOTONIC, which all ranks of this machine share, so the spread
 * max - min is the true release skew. */
static void CheckBarrier(Bench* b, int n) {
  double* spread = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    WindowBarrier(&b->clock, &b->window);
    double raw = RawNow();
    GatherTimes(b, &raw, 1);
    if (b->rank == 0) {
      double lo = INFINITY, hi = -INFINITY;
      for (int r = 0; r < b->size; ++r) {
        if (b->gathered[r] < lo) lo = b->gathered[r];
        if (b->gathered[r] > hi) hi = b->gathered[r];
      }
      spread[i] = hi - lo;
    }
    if (i % 100 == 99) {
      ClockRefresh(&b->clock);
      WindowAdapt(&b->window);
    }
  }
  WindowAdapt(&b->window);
  const long late = b->window.late_total;
  if (b->rank == 0) {
    qsort(spread, (size_t)n, sizeof(double), CompareDouble);
    const double med = spread[n / 2], p99 = spread[(n * 99) / 100],
                 mx = spread[n - 1];
    Emit("{\"type\": \"barrier_check\", \"barriers\": %d, \"ranks\": %d, "
         "\"median_us\": %.3f, \"p99_us\": %.3f, \"max_us\": %.3f, "
         "\"margin_us\": %.1f, \"late\": %ld}",
         n, b->size, med * 1e6, p99 * 1e6, mx * 1e6, b->window.margin * 1e6,
         late);
    printf("window barrier, %d ranks, %d releases: spread median %.2f us, "
           "p99 %.2f us, max %.2f us (margin %.0f us, %ld late)\n",
           b->size, n, med * 1e6, p99 * 1e6, mx * 1e6,
           b->window.margin * 1e6, late);
  }
  free(spread);
}

/* --check-clock: ranks > 0 run a skewed clock; after the start phase, one
 * refresh and the end phase, compares the estimated global time of probe
 * readings with the truth (the shared CLOCK_MONOTONIC, which is rank 0's
 * clock), post mortem (interpolated) and in real time (extrapolated). */
static void CheckClock(Bench* b) {
  enum { kProbes = 50 };
  double raw[kProbes], local[kProbes], extra[kProbes];
  for (int i = 0; i < kProbes; ++i) {
    const double until = RawNow() + 0.01; /* spread over ~0.5 s */
    while (RawNow() < until) {
    }
    raw[i] = RawNow();
    local[i] = SkewedNow(&b->clock.skew, raw[i]);
    if (i == kProbes / 2) ClockRefresh(&b->clock);
    extra[i] = i > kProbes / 2 ? ov_clock_to_global(&b->clock.rt, local[i])
                               : NAN;
  }
  OvClockPoint end = ClockPhase(&b->clock, b->clock.rounds);
  OvClockModel pm = ov_clock_model(&b->clock.start, &end);
  double worst_pm = 0, worst_rt = 0;
  for (int i = 0; i < kProbes; ++i) {
    double e = fabs(ov_clock_to_global(&pm, local[i]) - raw[i]);
    if (e > worst_pm) worst_pm = e;
    if (isfinite(extra[i]) && fabs(extra[i] - raw[i]) > worst_rt)
      worst_rt = fabs(extra[i] - raw[i]);
  }
  double mine[4] = {worst_pm, worst_rt, pm.offset, pm.drift};
  double* all = malloc(sizeof(double) * 4 * (size_t)b->size);
  MPI_Gather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (b->rank == 0) {
    double wpm = 0, wrt = 0;
    for (int r = 1; r < b->size; ++r) {
      if (all[4 * r] > wpm) wpm = all[4 * r];
      if (all[4 * r + 1] > wrt) wrt = all[4 * r + 1];
      printf("rank %d: injected offset %.1f us drift %.1f ppm; estimated "
             "drift %.2f ppm; worst error %.3f us post mortem, %.3f us "
             "extrapolated\n",
             r, b->o.inject_offset_us * r, b->o.inject_drift_ppm * r,
             all[4 * r + 3] * -1e6, all[4 * r] * 1e6, all[4 * r + 1] * 1e6);
    }
    Emit("{\"type\": \"clock_check\", \"ranks\": %d, \"rounds\": %d, "
         "\"interp_max_err_us\": %.3f, \"extrap_max_err_us\": %.3f}",
         b->size, b->clock.rounds, wpm * 1e6, wrt * 1e6);
  }
  free(all);
}

/* ---- CPU per thread ---- */

/* Rank 0's CPU time per thread over the job so far, from
 * /proc/self/task/TID/stat (utime + stime, clock ticks): the computation
 * threads, the library's progress threads (Rondo's, MPICH's asynchronous
 * thread), UCX's. One "threads" line. */
static void EmitThreads(void) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == NULL) return;
  const double tick = (double)sysconf(_SC_CLK_TCK);
  char list[8192];
  size_t used = 0;
  list[0] = 0;
  struct dirent* e;
  while ((e = readdir(dir)) != NULL && used + 160 < sizeof list) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], line[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE* f = fopen(path, "r");
    if (f == NULL) continue;
    const size_t got = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[got] = 0;
    /* "tid (name) state ppid ... utime(14) stime(15)": the name may hold
     * spaces and parentheses, so fields are counted after the last ')'. */
    char* open = strchr(line, '(');
    char* close = strrchr(line, ')');
    if (open == NULL || close == NULL || close < open) continue;
    char name[32];
    size_t k = 0;
    for (char* c = open + 1; c < close && k + 1 < sizeof name; ++c)
      if (*c != '"' && *c != '\\' && (unsigned char)*c >= ' ') name[k++] = *c;
    name[k] = 0;
    unsigned long long utime = 0, stime = 0;
    if (sscanf(close + 2,
               "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
               &utime, &stime) != 2)
      continue;
    used += (size_t)snprintf(list + used, sizeof list - used,
                             "%s{\"tid\": %s, \"name\": \"%s\", "
                             "\"cpu_ms\": %.0f}",
                             used ? ", " : "", e->d_name, name,
                             (double)(utime + stime) / tick * 1e3);
  }
  closedir(dir);
  Emit("{\"type\": \"threads\", \"rank\": 0, \"threads\": [%s]}", list);
}

/* ---- the computation without MPI (--comp-alone) ---- */

/* Times the GEMM of order o->comp_alone_order o->ref_reps times (after one
 * warm-up run) on this process's share of the node, never initialising
 * MPI, and writes one comp_alone line to --out (stdout without). */
static int CompAlone(const Options* o) {
  int node[1024], cpus[1024];
  const int nnode = NodeCpus(o->node_affinity, node, 1024);
  const int ncpus = ComputeCpus(node, nnode, o->comm_cores, o->local_rank,
                                o->local_size, cpus, 1024);
  static Pool pool;
  PoolStart(&pool, o->threads ? o->threads : ncpus, cpus, ncpus);
  Compute(&pool, o->comp_alone_order);
  double* t = malloc(sizeof(double) * (size_t)o->ref_reps);
  for (int i = 0; i < o->ref_reps; ++i) {
    const double t0 = RawNow();
    Compute(&pool, o->comp_alone_order);
    t[i] = RawNow() - t0;
  }
  const int threads = pool.nthreads;
  PoolStop(&pool);
  FILE* out = o->out_path ? fopen(o->out_path, "w") : stdout;
  if (out == NULL)
    Die(2, "--out: cannot write '%s': %s", o->out_path, strerror(errno));
  char* text = SamplesText(t, o->ref_reps, 1e6);
  char s1[32];
  fprintf(out,
          "{\"type\": \"comp_alone\", \"local_rank\": %d, \"order\": %d, "
          "\"threads\": %d, \"t_comp_alone_us\": %s, \"samples_us\": [%s]}\n",
          o->local_rank, o->comp_alone_order, threads,
          Num(s1, Median(t, o->ref_reps) * 1e6), text);
  free(text);
  free(t);
  if (out != stdout) fclose(out);
  return 0;
}

/* ---- a watchdog over MPI_Finalize ---- */

/* MPICH 4.0.2 over UCX (TCP) sometimes never returns from MPI_Finalize,
 * with its asynchronous progress thread most of all (on bench/cluster: 4
 * finalizations in 6; one rank closing its UCX endpoints while the other
 * waits in the finalize barrier). Every result but the "without MPI" half
 * of the impact ratio is written by then; after kFinalizeWatchS the rank
 * says so in a fail line (rank 0) and exits with status 5, instead of
 * holding the job until the launcher's timeout. */
enum { kFinalizeWatchS = 30 };
static void OnFinalizeHang(void* ctx) {
  const int rank = *(const int*)ctx;
  fprintf(stderr,
          "overlap: rank %d: MPI_Finalize did not return within %d s; "
          "exiting (the results are written)\n",
          rank, kFinalizeWatchS);
  if (rank == 0)
    Emit("{\"type\": \"fail\", \"what\": \"MPI_Finalize did not return "
         "within %d s (the library hung in its finalization; every result "
         "but the impact ratio is written)\", \"finalize_hang\": true}",
         kFinalizeWatchS);
  if (g_out) fflush(g_out);
}

static int FinalizeWatched(int rank) {
  static int watched_rank;
  watched_rank = rank;
  return BenchFinalizeWatched(MPI_Finalize, kFinalizeWatchS, OnFinalizeHang,
                              &watched_rank);
}

/* ---- main ---- */

static void LocalRank(int* local_rank, int* local_size) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  MPI_Comm_rank(node, local_rank);
  MPI_Comm_size(node, local_size);
  MPI_Comm_free(&node);
}

/* Collective: rank 0 writes the setup line (the worst clock round trip
 * over the ranks included). */
static void PrintSetup(Bench* b) {
  double rtt = 0;
  MPI_Reduce(&b->clock.start.rtt, &rtt, 1, MPI_DOUBLE, MPI_MAX, 0,
             MPI_COMM_WORLD);
  char cpus[256];
  size_t used = 0;
  cpus[0] = 0;
  for (int i = 0; i < b->ncpus && used + 8 < sizeof cpus; ++i)
    used += (size_t)snprintf(cpus + used, sizeof cpus - used, "%s%d",
                             i ? "," : "", b->cpus[i]);
  Emit("{\"type\": \"setup\", \"label\": \"%s\", \"ranks\": %d, "
       "\"threads\": %d, \"cpus\": \"%s\", \"comm_cores\": %d, "
       "\"shared_app_cores\": %s, "
       "\"clock_rtt_us\": %.3f, \"clock_rounds\": %d, \"margin_us\": %.1f, "
       "\"kernel_floor\": %s}",
       b->o.label, b->size, b->pool.nthreads, cpus, b->o.comm_cores,
       b->window.yield ? "true" : "false", rtt * 1e6, b->clock.rounds,
       b->window.margin * 1e6, b->o.kernel_floor ? "true" : "false");
}

int main(int argc, char** argv) {
  static Bench b; /* large; zeroed */
  ParseOptions(argc, argv, &b.o);
  if (b.o.comp_alone_order > 0) return CompAlone(&b.o);
  /* Before MPI_Init, which may bind the process (Open MPI does). */
  b.nnode = NodeCpus(b.o.node_affinity, b.node,
                     (int)(sizeof b.node / sizeof b.node[0]));
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &b.size);
  g_rank = b.rank;
  b.tty = isatty(2);
  b.started = RawNow();
  if (b.rank == 0 && b.o.out_path) {
    g_out = fopen(b.o.out_path, "w");
    if (g_out == NULL)
      Die(2, "--out: cannot write '%s': %s", b.o.out_path, strerror(errno));
  }
  b.gathered = malloc(sizeof(double) * 6 * (size_t)b.size);
  if (b.o.check_clock && b.rank > 0)
    b.clock.skew = (Skew){b.o.inject_offset_us * 1e-6 * b.rank,
                          b.o.inject_drift_ppm * 1e-6 * b.rank};
  ClockStart(&b.clock, b.o.clock_rounds);
  /* The window's first margin: ten barrier-free broadcasts' worth. */
  {
    double t0 = RawNow(), x = 0;
    for (int i = 0; i < 10; ++i) MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double per = (RawNow() - t0) / 10, worst = 0;
    MPI_Allreduce(&per, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    b.window.margin = 4 * worst + 20e-6;
  }
  if (b.o.check_clock) {
    CheckClock(&b);
  } else if (b.o.check_barrier) {
    CheckBarrier(&b, b.o.check_barrier);
  } else {
    int local_rank = 0, local_size = 1;
    LocalRank(&local_rank, &local_size);
    b.ncpus = ComputeCpus(b.node, b.nnode, b.o.comm_cores, local_rank,
                          local_size, b.cpus,
                          (int)(sizeof b.cpus / sizeof b.cpus[0]));
    /* More ranks than application cores: a rank spinning in the window
     * barrier would hold the core its neighbour needs to get there. */
    b.window.yield =
        local_size > b.nnode - b.o.comm_cores;
    PoolStart(&b.pool, b.o.threads ? b.o.threads : b.ncpus, b.cpus, b.ncpus);
    b.coll.size = b.size;
    b.coll.rank = b.rank;
    if (b.o.kernel_floor) KernelConnect(&b.coll, b.size);
    PrintSetup(&b);
    Sweep(&b);
    if (b.rank == 0) EmitThreads();
    /* MPI impact: the middle computation target, passive, then without
     * MPI after MPI_Finalize. */
    Probe probe = {&b, NULL};
    OvCalibrateSpec spec = CompSpec(&b, b.o.comp_us[b.o.ncomp / 2] * 1e-6);
    OvCalibrateResult r = ov_calibrate(&spec, MeasureComp, &probe);
    const int order = (int)r.size;
    const int runs = b.o.ref_reps;
    double* passive = malloc(sizeof(double) * (size_t)runs);
    for (int i = 0; i < runs; ++i) {
      WindowBarrier(&b.clock, &b.window);
      double t0 = RawNow();
      Compute(&b.pool, order);
      passive[i] = RawNow() - t0;
    }
    /* The passive runs, written now: the library may hang in MPI_Finalize
     * (the driver then compares them with a process that never initialises
     * MPI). Rank r > 0 writes FILE.passive.r. */
    {
      char s1[32];
      char* text = SamplesText(passive, runs, 1e6);
      const char* fmt =
          "{\"type\": \"passive\", \"rank\": %d, \"order\": %d, "
          "\"threads\": %d, \"t_comp_passive_us\": %s, \"samples_us\": [%s]}";
      if (b.rank == 0) {
        Emit(fmt, 0, order, b.pool.nthreads,
             Num(s1, Median(passive, runs) * 1e6), text);
      } else if (b.o.out_path) {
        char path[4096];
        snprintf(path, sizeof path, "%s.passive.%d", b.o.out_path, b.rank);
        FILE* f = fopen(path, "w");
        if (f) {
          fprintf(f, fmt, b.rank, order, b.pool.nthreads,
                  Num(s1, Median(passive, runs) * 1e6), text);
          fputc('\n', f);
          fclose(f);
        }
      }
      free(text);
    }
    /* Without MPI there is no barrier: every rank starts run i at the
     * same global time, agreed now (a second for MPI_Finalize, then one
     * period of three passive runs each). */
    double plan[2] = {GlobalNow(&b.clock) + 1.0, 3 * Median(passive, runs)};
    MPI_Bcast(plan, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double* starts = malloc(sizeof(double) * (size_t)runs);
    for (int i = 0; i < runs; ++i)
      starts[i] = ov_clock_to_local(&b.clock.rt, plan[0] + i * plan[1]);
    const Skew skew = b.clock.skew;
    if (b.coll.kernel) ov_kernel_free(b.coll.kernel);
    free(b.coll.send);
    free(b.coll.recv);
    free(b.gathered);
    if (g_out) fflush(g_out);
    FinalizeWatched(b.rank);
    double* without = malloc(sizeof(double) * (size_t)runs);
    long late = 0;
    for (int i = 0; i < runs; ++i) {
      double t0 = SkewedNow(&skew, RawNow());
      if (t0 > starts[i]) ++late;
      while (t0 < starts[i]) t0 = SkewedNow(&skew, RawNow());
      t0 = RawNow();
      Compute(&b.pool, order);
      without[i] = RawNow() - t0;
    }
    free(starts);
    PoolStop(&b.pool);
    const double tp = Median(passive, runs), tn = Median(without, runs);
    char s1[32];
    Emit("{\"type\": \"impact\", \"rank\": 0, \"t_comp_passive_us\": %.3f, "
         "\"t_comp_nompi_us\": %.3f, \"ratio\": %s, \"order\": %d, "
         "\"late_starts\": %ld}",
         tp * 1e6, tn * 1e6, Num(s1, ov_mpi_impact_ratio(tp, tn)), order,
         late);
    /* The other ranks have no MPI left to send theirs to rank 0: each
     * writes its line to FILE.impact.RANK next to --out (the driver reads
     * them for the worst rank; the file system is the machine's). */
    if (b.rank > 0 && b.o.out_path) {
      char path[4096];
      snprintf(path, sizeof path, "%s.impact.%d", b.o.out_path, b.rank);
      FILE* f = fopen(path, "w");
      if (f) {
        fprintf(f,
                "{\"type\": \"impact\", \"rank\": %d, "
                "\"t_comp_passive_us\": %.3f, \"t_comp_nompi_us\": %.3f, "
                "\"ratio\": %s, \"order\": %d, \"late_starts\": %ld}\n",
                b.rank, tp * 1e6, tn * 1e6, Num(s1, ov_mpi_impact_ratio(tp, tn)),
                order, late);
        fclose(f);
      }
    }
    free(passive);
    free(without);
    if (g_out) fclose(g_out);
    return 0;
  }
  free(b.gathered);
  if (g_out) fclose(g_out);
  MPI_Finalize();
  return 0;
}
