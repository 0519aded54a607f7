/* bench/p2p/mpi_suite_rma.c: the one-sided (RMA) cases of bench/p2p/mpi_suite.c
 * (issue 29), linked into every mpi_suite_<impl> program and run with
 * `mpi_suite_<impl> --rma` (only these cases). Standard MPI-3 calls only, so
 * Rondo, Open MPI and MPICH run the same code. Rank 0 is the origin, rank 1
 * the target (a window of MPI_Win_allocate); other ranks only join the
 * collective calls.
 *
 * Cases (JSON "case"):
 *   rma_put_lat_8B_lockflush  MPI_Put of 8 B + MPI_Win_flush, in one
 *                             MPI_Win_lock(SHARED) epoch: per put+flush;
 *   rma_get_lat_8B_lockflush  the same with MPI_Get;
 *   rma_put_lat_8B_fence      MPI_Put of 8 B + MPI_Win_fence on both ranks
 *                             (osu_put_latency -s fence): per put+fence;
 *   rma_put_bw_1MiB           a window of 16 MPI_Put of 1 MiB then
 *                             MPI_Win_flush, in a lock epoch: time / 16,
 *                             bytes_per_s;
 *   rma_acc_8B                MPI_Accumulate SUM of one double + flush;
 *   rma_fop_8B                MPI_Fetch_and_op SUM of one long long + flush;
 *   rma_cas_8B                MPI_Compare_and_swap of one long long + flush;
 *   rma_passive_put_<T>ms     passive-target overlap: after a barrier the
 *                             target computes T ms (1, 10, 100) without any
 *                             MPI call while the origin times
 *                             lock(EXCLUSIVE) + 8 B put + unlock; then a
 *                             barrier. The same with an idle target (waiting
 *                             in that barrier at once) is the reference:
 *                             median_ns is the busy time, idle_median_ns
 *                             the idle one, ratio = busy / idle;
 *   rma_passive_acc_dtype_<T>ms  the same with an MPI_Accumulate SUM of 4
 *                             doubles through a vector datatype (stride 2)
 *                             on both sides.
 * Samples: the latency cases time batches of operations (a sample is a
 * batch's average); the passive cases time each epoch. median, min and p99
 * are order statistics of the samples. Each case checks its result at the
 * target (or the origin for reads); a wrong value marks it "valid": false.
 *
 * Output: JSON lines {"type": "rma", "impl", "case", "ranks", "bytes",
 * "median_ns", "min_ns", "p99_ns", "samples", "valid", ...} to `out` on rank
 * 0, a human line to stderr unless quiet. */
#define _POSIX_C_SOURCE 200809L

#include "bench/p2p/mpi_suite_rma.h"

#include <stdlib.h>
#include <string.h>

#include "bench/common/prog_util.h"

#define kRmaMaxSamples 200
#define kBwWindow 16
#define kBwBytes ((size_t)1 << 20)

typedef struct Stats {
  double median, min, p99;
  int n;
} Stats;

static int CmpDouble(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static Stats Summarise(double* v, int n) {
  Stats s = {0, 0, 0, n};
  if (n <= 0) return s;
  qsort(v, (size_t)n, sizeof *v, CmpDouble);
  s.min = v[0];
  s.median = v[(n - 1) / 2];
  int p = (int)(0.99 * n + 0.999999) - 1;
  s.p99 = v[p < 0 ? 0 : (p >= n ? n - 1 : p)];
  return s;
}

typedef struct Ctx {
  FILE* out;
  const char* impl;
  int rank, size, quiet, valid;
  double scale;
} Ctx;

static void Emit(const Ctx* c, const char* name, size_t bytes, Stats s,
                 const char* extra) {
  int valid = c->valid;
  MPI_Allreduce(MPI_IN_PLACE, &valid, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (c->rank != 0) return;
  fprintf(c->out,
          "{\"type\": \"rma\", \"impl\": \"%s\", \"case\": \"%s\", "
          "\"ranks\": %d, \"bytes\": %zu, \"median_ns\": %.1f, "
          "\"min_ns\": %.1f, \"p99_ns\": %.1f, \"samples\": %d, "
          "\"valid\": %s%s}\n",
          c->impl, name, c->size, bytes, s.median, s.min, s.p99, s.n,
          valid ? "true" : "false", extra ? extra : "");
  fflush(c->out);
  if (!c->quiet)
    fprintf(stderr, "%-8s %-30s median %10.0f ns  min %10.0f ns%s%s\n",
            c->impl, name, s.median, s.min, valid ? "" : "  WRONG",
            extra ? extra : "");
}

/* Batches of `per` operations; `op(i)` is one (origin side). */
typedef void (*OpFn)(MPI_Win win, void* buf, long long i);

static void PutOp(MPI_Win win, void* buf, long long i) {
  ((long long*)buf)[0] = i;
  MPI_Put(buf, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
  MPI_Win_flush(1, win);
}
static void GetOp(MPI_Win win, void* buf, long long i) {
  (void)i;
  MPI_Get(buf, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
  MPI_Win_flush(1, win);
}
static void AccOp(MPI_Win win, void* buf, long long i) {
  (void)i;
  ((double*)buf)[0] = 1.0;
  MPI_Accumulate(buf, 1, MPI_DOUBLE, 1, 1, 1, MPI_DOUBLE, MPI_SUM, win);
  MPI_Win_flush(1, win);
}
static void FopOp(MPI_Win win, void* buf, long long i) {
  (void)i;
  long long one = 1;
  MPI_Fetch_and_op(&one, buf, MPI_LONG_LONG, 1, 2, MPI_SUM, win);
  MPI_Win_flush(1, win);
}
static void CasOp(MPI_Win win, void* buf, long long i) {
  long long cmp = i, val = i + 1;
  MPI_Compare_and_swap(&val, &cmp, buf, MPI_LONG_LONG, 1, 3, win);
  MPI_Win_flush(1, win);
}

/* A passive-target latency case: rank 0 in one lock epoch, the others wait
 * in the closing barrier (inside MPI). */
static void LockFlushCase(Ctx* c, MPI_Win win, long long* mem,
                          const char* name, OpFn op, int iters) {
  double samples[kRmaMaxSamples];
  int ns = 0;
  long long buf[2] = {0, 0};
  c->valid = 1;
  mem[0] = mem[2] = mem[3] = 0;
  ((double*)mem)[1] = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int batches = 50, per = iters / batches > 0 ? iters / batches : 1;
  long long done = 0;
  if (c->rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int w = 0; w < per && w < 100; ++w) op(win, buf, done++); /* warm */
    for (int b = 0; b < batches && ns < kRmaMaxSamples; ++b) {
      const double t0 = BenchNowNs();
      for (int k = 0; k < per; ++k) op(win, buf, done++);
      samples[ns++] = (BenchNowNs() - t0) / per;
    }
    if (op == GetOp || op == PutOp) {
      /* The last put's value is at the target (read back). */
      MPI_Get(buf, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
      MPI_Win_flush(1, win);
      if (op == PutOp && buf[0] != done - 1) c->valid = 0;
    }
    MPI_Win_unlock(1, win);
  }
  MPI_Bcast(&done, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (c->rank == 1) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    if (op == AccOp && ((double*)mem)[1] != (double)done) c->valid = 0;
    if (op == FopOp && mem[2] != done) c->valid = 0;
    if (op == CasOp && mem[3] != done) c->valid = 0;
    MPI_Win_unlock(1, win);
  }
  Emit(c, name, 8, Summarise(samples, ns), NULL);
}

static void FenceCase(Ctx* c, MPI_Win win, long long* mem, int iters) {
  double samples[kRmaMaxSamples];
  int ns = 0;
  long long v = 0;
  c->valid = 1;
  const int batches = 50, per = iters / batches > 0 ? iters / batches : 1;
  MPI_Win_fence(0, win);
  for (int b = -1; b < batches; ++b) { /* batch -1: warm-up */
    const double t0 = BenchNowNs();
    for (int k = 0; k < per; ++k) {
      ++v;
      if (c->rank == 0)
        MPI_Put(&v, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
      MPI_Win_fence(0, win);
    }
    if (b >= 0) samples[ns++] = (BenchNowNs() - t0) / per;
  }
  if (c->rank == 1 && mem[0] != v) c->valid = 0;
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  Emit(c, "rma_put_lat_8B_fence", 8, Summarise(samples, ns), NULL);
}

static void BandwidthCase(Ctx* c, int iters) {
  char* mem = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)kBwBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                   &win);
  memset(mem, 0, kBwBytes);
  char* src = (char*)malloc(kBwBytes);
  for (size_t i = 0; i < kBwBytes; ++i) src[i] = (char)(i * 7 + 1);
  double samples[kRmaMaxSamples];
  int ns = 0;
  c->valid = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  if (c->rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int r = -2; r < iters && ns < kRmaMaxSamples; ++r) {
      const double t0 = BenchNowNs();
      for (int k = 0; k < kBwWindow; ++k)
        MPI_Put(src, (int)kBwBytes, MPI_CHAR, 1, 0, (int)kBwBytes, MPI_CHAR,
                win);
      MPI_Win_flush(1, win);
      if (r >= 0) samples[ns++] = (BenchNowNs() - t0) / kBwWindow;
    }
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (c->rank == 1)
    for (size_t i = 0; i < kBwBytes; i += 4093)
      if (mem[i] != (char)(i * 7 + 1)) c->valid = 0;
  Stats s = Summarise(samples, ns);
  char extra[96];
  snprintf(extra, sizeof extra, ", \"bytes_per_s\": %.0f",
           s.median > 0 ? (double)kBwBytes * 1e9 / s.median : 0.0);
  Emit(c, "rma_put_bw_1MiB", kBwBytes, s, extra);
  MPI_Win_free(&win);
  free(src);
}

/* Busy loop of `ms` milliseconds without MPI calls. */
static void Compute(double ms) {
  const double end = BenchNowNs() + ms * 1e6;
  volatile double x = 1.0;
  while (BenchNowNs() < end)
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
}

/* One passive epoch timed at the origin; the target computes `ms` (0:
 * idle, waiting in the barrier). `dtype`: the accumulate on a vector. */
static double PassiveOnce(Ctx* c, MPI_Win win, double ms, int dtype,
                          MPI_Datatype vec, long long seq) {
  double t = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (c->rank == 0) {
    const double t0 = BenchNowNs();
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    if (dtype) {
      double add[8] = {1, -1, 1, -1, 1, -1, 1, -1};
      MPI_Accumulate(add, 1, vec, 1, 8, 1, vec, MPI_SUM, win);
    } else {
      long long v = seq;
      MPI_Put(&v, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
    }
    MPI_Win_unlock(1, win);
    t = BenchNowNs() - t0;
  } else if (c->rank == 1 && ms > 0) {
    Compute(ms);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return t;
}

static void PassiveCase(Ctx* c, MPI_Win win, long long* mem, double ms,
                        int dtype, int reps) {
  MPI_Datatype vec;
  MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  double busy[kRmaMaxSamples], idle[kRmaMaxSamples];
  int n = reps < kRmaMaxSamples ? reps : kRmaMaxSamples;
  c->valid = 1;
  double* acc = (double*)(mem + 8);
  for (int i = 0; i < 8; ++i) acc[i] = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  (void)PassiveOnce(c, win, 0, dtype, vec, -1); /* warm-up */
  for (int r = 0; r < n; ++r) {
    idle[r] = PassiveOnce(c, win, 0, dtype, vec, 2 * r);
    busy[r] = PassiveOnce(c, win, ms, dtype, vec, 2 * r + 1);
    if (c->rank == 1) {
      if (!dtype && mem[0] != 2 * r + 1) c->valid = 0;
      if (dtype && (acc[0] != 2.0 * (r + 1) + 1 || acc[1] != 0.0)) c->valid = 0;
    }
  }
  Stats sb = Summarise(busy, n), si = Summarise(idle, n);
  char name[64], extra[160];
  snprintf(name, sizeof name, "rma_passive_%s_%gms",
           dtype ? "acc_dtype" : "put", ms);
  snprintf(extra, sizeof extra,
           ", \"target_compute_ms\": %g, \"idle_median_ns\": %.1f, "
           "\"idle_min_ns\": %.1f, \"ratio\": %.3f",
           ms, si.median, si.min, si.median > 0 ? sb.median / si.median : 0);
  Emit(c, name, dtype ? 32 : 8, sb, extra);
  MPI_Type_free(&vec);
}

int RmaTakeFlag(int* argc, char** argv) {
  int found = 0, k = 1;
  for (int i = 1; i < *argc; ++i) {
    if (strcmp(argv[i], "--rma") == 0) {
      found = 1;
    } else {
      argv[k++] = argv[i];
    }
  }
  *argc = k;
  return found;
}

int RmaSuite(FILE* out, const char* impl, double scale, int quiet) {
  Ctx c = {out, impl, 0, 1, quiet, 1, scale};
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  if (c.size < 2) {
    if (c.rank == 0) fprintf(stderr, "mpi_suite --rma: needs 2 ranks\n");
    return 0;
  }
  long long* mem = NULL;
  MPI_Win win;
  MPI_Win_allocate(16 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &mem, &win);
  memset(mem, 0, 16 * sizeof(long long));
  const int lat = (int)(10000 * scale) > 50 ? (int)(10000 * scale) : 50;
  LockFlushCase(&c, win, mem, "rma_put_lat_8B_lockflush", PutOp, lat);
  LockFlushCase(&c, win, mem, "rma_get_lat_8B_lockflush", GetOp, lat);
  LockFlushCase(&c, win, mem, "rma_acc_8B", AccOp, lat);
  LockFlushCase(&c, win, mem, "rma_fop_8B", FopOp, lat);
  LockFlushCase(&c, win, mem, "rma_cas_8B", CasOp, lat);
  FenceCase(&c, win, mem, lat);
  BandwidthCase(&c, (int)(50 * scale) > 5 ? (int)(50 * scale) : 5);
  const int reps_per_ms[3][2] = {{1, 40}, {10, 15}, {100, 5}};
  for (int k = 0; k < 3; ++k) {
    const int reps = (int)(reps_per_ms[k][1] * scale) > 3
                         ? (int)(reps_per_ms[k][1] * scale)
                         : 3;
    PassiveCase(&c, win, mem, reps_per_ms[k][0], 0, reps);
    PassiveCase(&c, win, mem, reps_per_ms[k][0], 1, reps);
  }
  MPI_Win_free(&win);
  return 0;
}
