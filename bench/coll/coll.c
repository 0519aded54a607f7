/* bench/coll/coll.c: latency of MPI collectives, and the Iallreduce overlap
 * case, for one MPI implementation. The same source builds against Open
 * MPI (//bench/coll:coll_openmpi, @openmpi//:mpi) and against Rondo's MadMPI
 * (//bench/coll:coll_rondo, //nmad/mpi:mpi): it uses only standard MPI calls
 * that nmad/mpi/include/mpi.h declares, so the two are compared on the same
 * code. The driver //bench/coll:coll (bench/coll/coll_driver.cc) starts it
 * under rondo-run or mpirun and merges the results; see
 * docs/coll_benchmarks.md.
 *
 *   <launcher> -n N coll_<impl> [--impl NAME] [--out FILE] [--sizes LIST]
 *       [--collectives LIST] [--time-per-case-ms MS] [--min-reps N]
 *       [--max-reps N] [--warmup N] [--overlap-reps N]
 *       [--overlap-bytes B] [--compute-factor F] [--mem-cap-mb MB]
 *       [--quick] [--quiet]
 *
 * Latency. For each collective and per-rank block size B (bytes, a multiple
 * of 4: the data are MPI_INT, reductions are MPI_SUM, the root is rank 0):
 * `warmup` untimed calls, then R repetitions of
 *     MPI_Barrier; t0; <collective> (Ixxx: start + MPI_Wait); t1
 * where each rank keeps its own t1 - t0. After the loop the per-repetition
 * maxima over ranks (MPI_Reduce, MPI_MAX) are the samples (the "t_max" of
 * the Intel MPI Benchmarks): median, min, p99 in ns. With all ranks on
 * one host (one CLOCK_MONOTONIC), span_median_ns is also given: the median
 * of last rank's t1 - first rank's t0, which includes the barrier's exit
 * skew and bounds the latency from above. R adapts to the cost:
 * the warm-up's mean time (max over ranks) sets R = time-per-case / mean,
 * clamped to [min-reps, max-reps]. Cases whose buffers, summed over the job,
 * exceed --mem-cap-mb are skipped and reported as skipped (alltoall,
 * allgather and reduce_scatter_block need N x B per rank on each side).
 *
 * Correctness: before the last timed repetition the receive buffers are
 * poisoned; after it every rank checks its result against the known values
 * (e.g. the allreduce sum of (rank + 1) * 3 + i % 251 over the ranks). A
 * wrong result is reported as a failed case without figures, and the exit
 * status is 3: a broken library cannot post fast numbers.
 *
 * Overlap (collective `iallreduce_overlap`; the overlap methodology paper,
 * as in bench/p2p/overlap_p2p.cc): MPI_Iallreduce of --overlap-bytes (1 MiB) of
 * doubles, MPI_SUM. With --overlap-reps repetitions each, every repetition
 * between barriers and taken as the max over ranks (medians):
 *   t_comm   Iallreduce + Wait,
 *   t_comp   a calibrated compute loop alone (a dependent floating-point
 *            chain, no MPI call, no sleep) sized to compute-factor x t_comm,
 *   t_total  Iallreduce, the compute loop, Wait.
 * overhead_ratio = (t_total - max(t_comm, t_comp)) / min(t_comm, t_comp):
 * 0 = the reduction was hidden behind the computation, 1 = serialized.
 *
 * Output: rank 0 writes JSON lines to --out (default stdout), one object
 * per line: {"type": "job", ...} first, then per case {"type": "case" |
 * "skip" | "fail", "impl", "collective", "ranks", "bytes", ...}. Human lines
 * go to stderr unless --quiet. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/prog_util.h"

/* Open MPI's libraries keep allocations past MPI_Finalize, many from MCA
 * components it has already unloaded (no module name for a suppression).
 * In a sanitizer build (bazel test --config=asan, which sets
 * detect_leaks=1) the Open MPI flavour ends with _exit, skipping the leak
 * check that would report them; coll_rondo keeps the check. */
#if defined(__SANITIZE_ADDRESS__) && !defined(RONDO_MPI)
#define COLL_SKIP_LEAK_CHECK 1
#else
#define COLL_SKIP_LEAK_CHECK 0
#endif

enum Collective {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kGather,
  kScatter,
  kAllgather,
  kAlltoall,
  kReduceScatterBlock,
  kScan,
  kIbcast,
  kIallreduce,
  kIallreduceOverlap,
  kNumCollectives
};

static const char* const kNames[kNumCollectives] = {"barrier",
                                                    "bcast",
                                                    "reduce",
                                                    "allreduce",
                                                    "gather",
                                                    "scatter",
                                                    "allgather",
                                                    "alltoall",
                                                    "reduce_scatter_block",
                                                    "scan",
                                                    "ibcast",
                                                    "iallreduce",
                                                    "iallreduce_overlap"};

#define kMaxSizes 64

typedef struct Options {
  const char* impl;
  const char* out;
  size_t sizes[kMaxSizes];
  int num_sizes;
  int enabled[kNumCollectives];
  double time_per_case_ms;
  int min_reps, max_reps, warmup; /* warmup < 0: by size */
  int overlap_reps;
  size_t overlap_bytes;
  double compute_factor;
  double mem_cap_mb; /* <= 0: a quarter of the memory, at most 2 GiB */
  int quiet;
} Options;

static int rank_ = 0, size_ = 1;
static FILE* out_ = NULL;
static int failures_ = 0;
static int one_node_ = 0; /* all ranks on one host: CLOCK_MONOTONIC shared */

/* ---- Small utilities ---- */

static double NowNs(void) { return BenchNowNs(); }

static void Die(const char* msg) {
  fprintf(stderr, "coll: rank %d: %s\n", rank_, msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

static void CaseHead(const char* type, const Options* o, int c, size_t bytes) {
  fprintf(out_, "{\"type\": \"%s\", \"impl\": ", type);
  BenchJsonString(out_, o->impl);
  fprintf(out_, ", \"collective\": \"%s\", \"ranks\": %d, \"bytes\": %zu",
          kNames[c], size_, bytes);
}

/* ---- Argument parsing (every rank parses the same argv) ---- */

static size_t ParseSize(const char* s, const char* what) {
  char* end = NULL;
  double v = strtod(s, &end);
  if (end == s) {
    fprintf(stderr, "coll: %s: '%s' is not a number\n", what, s);
    exit(2);
  }
  if (*end == 'k' || *end == 'K')
    v *= 1024, ++end;
  else if (*end == 'm' || *end == 'M')
    v *= 1024 * 1024, ++end;
  if (*end != '\0' || v < 0) {
    fprintf(stderr, "coll: %s: '%s' is not allowed; expected N, Nk or Nm\n",
            what, s);
    exit(2);
  }
  return (size_t)v;
}

static void ParseSizes(Options* o, const char* list) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  o->num_sizes = 0;
  for (char* tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
    size_t b = ParseSize(tok, "--sizes");
    if (b < 4 || b % 4 != 0 || b > ((size_t)1 << 30)) {
      fprintf(stderr,
              "coll: --sizes: %zu is not allowed; expected multiples of 4 "
              "bytes in 4..1073741824 (the data are MPI_INT)\n",
              b);
      exit(2);
    }
    if (o->num_sizes == kMaxSizes) {
      fprintf(stderr, "coll: --sizes: at most %d sizes\n", kMaxSizes);
      exit(2);
    }
    o->sizes[o->num_sizes++] = b;
  }
  if (o->num_sizes == 0) {
    fprintf(stderr, "coll: --sizes: empty list\n");
    exit(2);
  }
}

static void ParseCollectives(Options* o, const char* list) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  for (int c = 0; c < kNumCollectives; ++c) o->enabled[c] = 0;
  for (char* tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
    int found = 0;
    if (strcmp(tok, "all") == 0) {
      for (int c = 0; c < kNumCollectives; ++c) o->enabled[c] = 1;
      found = 1;
    } else if (strcmp(tok, "latency") == 0) {
      for (int c = 0; c < kIallreduceOverlap; ++c) o->enabled[c] = 1;
      found = 1;
    }
    for (int c = 0; c < kNumCollectives && !found; ++c)
      if (strcmp(tok, kNames[c]) == 0) o->enabled[c] = found = 1;
    if (!found) {
      fprintf(stderr,
              "coll: --collectives: '%s' is not allowed; expected all, "
              "latency or a comma-separated list of:",
              tok);
      for (int c = 0; c < kNumCollectives; ++c)
        fprintf(stderr, " %s", kNames[c]);
      fprintf(stderr, "\n");
      exit(2);
    }
  }
}

static double ParseDouble(const char* s, const char* what, double lo,
                          double hi) {
  return BenchParseDouble("coll", s, what, lo, hi);
}

static void Usage(void) {
  fprintf(stderr,
          "usage: <launcher> -n N coll [--impl NAME] [--out FILE]\n"
          "  [--sizes 4,64,1k,...] [--collectives all|latency|LIST]\n"
          "  [--time-per-case-ms MS] [--min-reps N] [--max-reps N]\n"
          "  [--warmup N] [--overlap-reps N] [--overlap-bytes B]\n"
          "  [--compute-factor F] [--mem-cap-mb MB] [--quick] [--quiet]\n");
}

static void ParseArgs(Options* o, int argc, char** argv) {
#ifdef RONDO_MPI
  o->impl = "rondo";
#else
  o->impl = "openmpi";
#endif
  o->out = NULL;
  ParseSizes(o, "4,64,1024,16384,262144,4194304");
  ParseCollectives(o, "all");
  o->time_per_case_ms = 200;
  o->min_reps = 10;
  o->max_reps = 1000;
  o->warmup = -1;
  o->overlap_reps = 30;
  o->overlap_bytes = 1 << 20;
  o->compute_factor = 1.0;
  o->mem_cap_mb = 0;
  o->quiet = 0;
  /* --quick first, so that explicit options given with it win. */
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      o->time_per_case_ms = 20;
      o->min_reps = 3;
      o->max_reps = 30;
      o->warmup = 2;
      o->overlap_reps = 5;
    }
  }
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDS_VALUE                                 \
  if (v == NULL) {                                  \
    fprintf(stderr, "coll: %s needs a value\n", a); \
    exit(2);                                        \
  }                                                 \
  ++i
    if (strcmp(a, "--quick") == 0) {
      /* handled above */
    } else if (strcmp(a, "--quiet") == 0) {
      o->quiet = 1;
    } else if (strcmp(a, "--impl") == 0) {
      NEEDS_VALUE;
      o->impl = v;
    } else if (strcmp(a, "--out") == 0) {
      NEEDS_VALUE;
      o->out = v;
    } else if (strcmp(a, "--sizes") == 0) {
      NEEDS_VALUE;
      ParseSizes(o, v);
    } else if (strcmp(a, "--collectives") == 0) {
      NEEDS_VALUE;
      ParseCollectives(o, v);
    } else if (strcmp(a, "--time-per-case-ms") == 0) {
      NEEDS_VALUE;
      o->time_per_case_ms = ParseDouble(v, a, 1, 600000);
    } else if (strcmp(a, "--min-reps") == 0) {
      NEEDS_VALUE;
      o->min_reps = (int)ParseDouble(v, a, 1, 1e7);
    } else if (strcmp(a, "--max-reps") == 0) {
      NEEDS_VALUE;
      o->max_reps = (int)ParseDouble(v, a, 1, 1e7);
    } else if (strcmp(a, "--warmup") == 0) {
      NEEDS_VALUE;
      o->warmup = (int)ParseDouble(v, a, 0, 1e6);
    } else if (strcmp(a, "--overlap-reps") == 0) {
      NEEDS_VALUE;
      o->overlap_reps = (int)ParseDouble(v, a, 1, 1e6);
    } else if (strcmp(a, "--overlap-bytes") == 0) {
      NEEDS_VALUE;
      o->overlap_bytes = ParseSize(v, a);
      if (o->overlap_bytes < 8 || o->overlap_bytes % 8 != 0) {
        fprintf(stderr,
                "coll: --overlap-bytes: %zu is not allowed; expected "
                "a multiple of 8 (doubles)\n",
                o->overlap_bytes);
        exit(2);
      }
    } else if (strcmp(a, "--compute-factor") == 0) {
      NEEDS_VALUE;
      o->compute_factor = ParseDouble(v, a, 0.01, 100);
    } else if (strcmp(a, "--mem-cap-mb") == 0) {
      NEEDS_VALUE;
      o->mem_cap_mb = ParseDouble(v, a, 1, 1e9);
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      if (rank_ == 0) Usage();
      MPI_Finalize();
      exit(0);
    } else {
      if (rank_ == 0) {
        fprintf(stderr, "coll: unknown argument '%s'\n", a);
        Usage();
      }
      exit(2);
    }
#undef NEEDS_VALUE
  }
  if (o->min_reps > o->max_reps) {
    fprintf(stderr, "coll: --min-reps %d > --max-reps %d\n", o->min_reps,
            o->max_reps);
    exit(2);
  }
  if (o->mem_cap_mb <= 0) {
    double phys =
        (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double cap = phys / 4 / (1024.0 * 1024.0);
    o->mem_cap_mb = cap > 2048 || cap <= 0 ? 2048 : cap;
  }
}

/* ---- Data patterns and checks ---- */

/* Rank r's element i (bcast, reduce, allreduce, gather, allgather, scan). */
static int Val(int r, size_t i) { return (r + 1) * 3 + (int)(i % 251); }
/* Rank s's element i of the block for rank d (scatter, alltoall,
 * reduce_scatter_block). */
static int Val2(int s, int d, size_t i) {
  return s * 4096 + d * 16 + (int)(i % 13);
}
static int SumVal(int upto, size_t i) { /* sum of Val(r, i), r < upto */
  return 3 * upto * (upto + 1) / 2 + upto * (int)(i % 251);
}

typedef struct Buffers {
  int* send;
  int* recv;
  size_t send_ints, recv_ints;
} Buffers;

/* Bytes each rank needs for collective c with block b (root: rank 0). */
static void Needs(int c, size_t b, int r, size_t* send, size_t* recv) {
  const size_t n = (size_t)size_;
  *send = *recv = 0;
  switch (c) {
    case kBarrier:
      break;
    case kBcast:
    case kIbcast:
      *send = b;
      break;
    case kReduce:
    case kAllreduce:
    case kScan:
    case kIallreduce:
      *send = b;
      *recv = b;
      break;
    case kGather:
      *send = b;
      *recv = r == 0 ? n * b : 0;
      break;
    case kScatter:
      *send = r == 0 ? n * b : 0;
      *recv = b;
      break;
    case kAllgather:
      *send = b;
      *recv = n * b;
      break;
    case kAlltoall:
      *send = n * b;
      *recv = n * b;
      break;
    case kReduceScatterBlock:
      *send = n * b;
      *recv = b;
      break;
    default:
      break;
  }
}

static double JobBytes(int c, size_t b) {
  double total = 0;
  for (int r = 0; r < size_; ++r) {
    size_t s, v;
    Needs(c, b, r, &s, &v);
    total += (double)s + (double)v;
  }
  return total;
}

/* Fills the send side (and for bcast the root's buffer) with known values. */
static void Fill(int c, size_t count, Buffers* bf) {
  const size_t n = (size_t)size_;
  switch (c) {
    case kBcast:
    case kIbcast:
      for (size_t i = 0; i < count; ++i)
        bf->send[i] = rank_ == 0 ? Val(0, i) : -1;
      break;
    case kScatter:
    case kAlltoall:
    case kReduceScatterBlock:
      for (size_t d = 0; d < n && bf->send != NULL; ++d)
        for (size_t i = 0; i < count; ++i)
          bf->send[d * count + i] = Val2(rank_, (int)d, i);
      break;
    default:
      for (size_t i = 0; i < bf->send_ints; ++i) bf->send[i] = Val(rank_, i);
      break;
  }
}

/* Poisons what the collective writes on this rank. */
static void Poison(int c, Buffers* bf) {
  if (c == kBcast || c == kIbcast) {
    if (rank_ != 0) memset(bf->send, 0xa5, bf->send_ints * sizeof(int));
  } else if (bf->recv != NULL) {
    memset(bf->recv, 0xa5, bf->recv_ints * sizeof(int));
  }
}

/* The value collective c should leave at element k of this rank's result
 * (blocks of `count` ints). */
static int Expected(int c, size_t k, size_t count) {
  const size_t blk = k / count, i = k % count;
  switch (c) {
    case kBcast:
    case kIbcast:
      return Val(0, i);
    case kReduce:
    case kAllreduce:
    case kIallreduce:
      return SumVal(size_, i);
    case kScan:
      return SumVal(rank_ + 1, i);
    case kGather:
    case kAllgather:
      return Val((int)blk, i);
    case kScatter:
      return Val2(0, rank_, i);
    case kAlltoall:
      return Val2((int)blk, rank_, i);
    case kReduceScatterBlock: {
      int sum = 0;
      for (int s = 0; s < size_; ++s) sum += Val2(s, rank_, i);
      return sum;
    }
    default:
      return 0;
  }
}

/* 0 if this rank's result is right; else prints the first wrong element. */
static int Check(int c, size_t count, const Buffers* bf) {
  const int* got = bf->recv;
  size_t n = bf->recv_ints;
  if (c == kBarrier || count == 0) return 0;
  if (c == kBcast || c == kIbcast) got = bf->send, n = bf->send_ints;
  if (c == kReduce && rank_ != 0) return 0; /* only the root has a result */
  for (size_t k = 0; k < n; ++k) {
    const int want = Expected(c, k, count);
    if (got[k] != want) {
      fprintf(stderr, "coll: %s: rank %d: element %zu is %d, expected %d\n",
              kNames[c], rank_, k, got[k], want);
      return 1;
    }
  }
  return 0;
}

/* One call of collective c (for Ixxx: start and wait). */
static void Run(int c, size_t count, Buffers* bf) {
  const int n = (int)count;
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request req;
  switch (c) {
    case kBarrier:
      MPI_Barrier(w);
      break;
    case kBcast:
      MPI_Bcast(bf->send, n, MPI_INT, 0, w);
      break;
    case kReduce:
      MPI_Reduce(bf->send, bf->recv, n, MPI_INT, MPI_SUM, 0, w);
      break;
    case kAllreduce:
      MPI_Allreduce(bf->send, bf->recv, n, MPI_INT, MPI_SUM, w);
      break;
    case kGather:
      MPI_Gather(bf->send, n, MPI_INT, bf->recv, n, MPI_INT, 0, w);
      break;
    case kScatter:
      MPI_Scatter(bf->send, n, MPI_INT, bf->recv, n, MPI_INT, 0, w);
      break;
    case kAllgather:
      MPI_Allgather(bf->send, n, MPI_INT, bf->recv, n, MPI_INT, w);
      break;
    case kAlltoall:
      MPI_Alltoall(bf->send, n, MPI_INT, bf->recv, n, MPI_INT, w);
      break;
    case kReduceScatterBlock:
      MPI_Reduce_scatter_block(bf->send, bf->recv, n, MPI_INT, MPI_SUM, w);
      break;
    case kScan:
      MPI_Scan(bf->send, bf->recv, n, MPI_INT, MPI_SUM, w);
      break;
    case kIbcast:
      MPI_Ibcast(bf->send, n, MPI_INT, 0, w, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
    case kIallreduce:
      MPI_Iallreduce(bf->send, bf->recv, n, MPI_INT, MPI_SUM, w, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
    default:
      break;
  }
}

/* 1 on every rank if any rank's `bad` is set. */
static int AnyBad(int bad) {
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

static void* Alloc(size_t bytes) {
  if (bytes == 0) return NULL;
  void* p = malloc(bytes);
  if (p == NULL) Die("out of memory");
  memset(p, 0, bytes); /* touch every page before timing */
  return p;
}

/* ---- Latency cases ---- */

static void LatencyCase(const Options* o, int c, size_t bytes) {
  const size_t count = c == kBarrier ? 0 : bytes / sizeof(int);
  const double job_mb = JobBytes(c, bytes) / (1024.0 * 1024.0);
  if (job_mb > o->mem_cap_mb) {
    if (rank_ == 0) {
      CaseHead("skip", o, c, bytes);
      fprintf(out_,
              ", \"reason\": \"memory cap: needs %.0f MiB over the job "
              "> --mem-cap-mb %.0f\"}\n",
              job_mb, o->mem_cap_mb);
      fflush(out_);
      if (!o->quiet)
        fprintf(stderr,
                "%-22s %2d ranks %9zu B  skipped: needs %.0f MiB "
                "over the job (cap %.0f MiB)\n",
                kNames[c], size_, bytes, job_mb, o->mem_cap_mb);
    }
    return;
  }
  Buffers bf;
  size_t sb, rb;
  Needs(c, bytes, rank_, &sb, &rb);
  bf.send = Alloc(sb);
  bf.recv = Alloc(rb);
  bf.send_ints = sb / sizeof(int);
  bf.recv_ints = rb / sizeof(int);
  Fill(c, count, &bf);

  int warmup = o->warmup >= 0 ? o->warmup : bytes <= 65536 ? 20 : 3;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = NowNs();
  for (int i = 0; i < warmup; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    Run(c, count, &bf);
  }
  double mine = warmup > 0 ? (NowNs() - t0) / warmup : 0, est = 0;
  MPI_Allreduce(&mine, &est, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double want = est > 0 ? o->time_per_case_ms * 1e6 / est : o->max_reps;
  int reps = want < o->min_reps   ? o->min_reps
             : want > o->max_reps ? o->max_reps
                                  : (int)want;

  /* Per repetition: this rank's start and end on CLOCK_MONOTONIC. */
  double* t0s = malloc(sizeof(double) * (size_t)reps);
  double* t1s = malloc(sizeof(double) * (size_t)reps);
  double* t = malloc(sizeof(double) * (size_t)reps);
  double* tmax = malloc(sizeof(double) * (size_t)reps);
  if (!t0s || !t1s || !t || !tmax) Die("out of memory");
  for (int i = 0; i < reps; ++i) {
    if (i == reps - 1) Poison(c, &bf);
    MPI_Barrier(MPI_COMM_WORLD);
    t0s[i] = NowNs();
    Run(c, count, &bf);
    t1s[i] = NowNs();
  }
  const int bad = AnyBad(Check(c, count, &bf));
  for (int i = 0; i < reps; ++i) t[i] = t1s[i] - t0s[i];
  MPI_Reduce(t, tmax, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  /* The span (first start to last end), where all ranks share the clock. */
  double span_median = 0;
  if (one_node_) {
    MPI_Reduce(t0s, t, reps, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(t1s, t0s, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
      for (int i = 0; i < reps; ++i) t1s[i] = t0s[i] - t[i];
      span_median = BenchSummarize(t1s, reps).median;
    }
  }
  if (rank_ == 0) {
    if (bad) {
      ++failures_;
      CaseHead("fail", o, c, bytes);
      fprintf(out_,
              ", \"reason\": \"wrong result on at least one rank (see "
              "stderr)\"}\n");
      fprintf(stderr, "%-22s %2d ranks %9zu B  WRONG RESULT\n", kNames[c],
              size_, bytes);
    } else {
      BenchStats s = BenchSummarize(tmax, reps);
      CaseHead("case", o, c, bytes);
      fprintf(out_,
              ", \"median_ns\": %.1f, \"min_ns\": %.1f, \"p99_ns\": %.1f, "
              "\"max_ns\": %.1f, \"mean_ns\": %.1f, \"samples\": %d, "
              "\"warmup\": %d, \"check\": \"ok\"",
              s.median, s.min, s.p99, s.max, s.mean, reps, warmup);
      if (one_node_) fprintf(out_, ", \"span_median_ns\": %.1f", span_median);
      fprintf(out_, "}\n");
      if (!o->quiet)
        fprintf(stderr,
                "%-22s %2d ranks %9zu B  median %11.0f ns  min "
                "%11.0f  p99 %11.0f  reps %d\n",
                kNames[c], size_, bytes, s.median, s.min, s.p99, reps);
    }
    fflush(out_);
  }
  free(t0s);
  free(t1s);
  free(t);
  free(tmax);
  free(bf.send);
  free(bf.recv);
}

/* ---- Overlap case ---- */

static volatile double compute_sink = 0.0;

/* The compute loop of bench/p2p/nmad_bench.cc: a dependent floating-point
 * chain of n steps; it never calls MPI. */
static void Compute(int64_t n) {
  double x = compute_sink + 1.0;
  for (int64_t i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  compute_sink = x;
}

static double CalibrateNsPerStep(void) {
  const int64_t steps = 200000;
  double best = 1e30;
  Compute(steps);
  for (int i = 0; i < 15; ++i) {
    double t0 = NowNs();
    Compute(steps);
    double per = (NowNs() - t0) / (double)steps;
    if (per < best) best = per;
  }
  return best;
}

/* Per-repetition maxima over ranks of `mine` into `out` on every rank. */
static void MaxOverRanks(const double* mine, double* out, int reps) {
  MPI_Allreduce(mine, out, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

static double MedianOf(double* v, int n) { return BenchSummarize(v, n).median; }

static void OverlapCase(const Options* o) {
  const size_t bytes = o->overlap_bytes;
  const int count = (int)(bytes / sizeof(double));
  const int reps = o->overlap_reps;
  double* send = Alloc(bytes);
  double* recv = Alloc(bytes);
  for (int i = 0; i < count; ++i) send[i] = rank_ + 1 + i % 5;
  double* mine = malloc(sizeof(double) * (size_t)reps);
  double* mine_comp = malloc(sizeof(double) * (size_t)reps);
  double* all = malloc(sizeof(double) * (size_t)reps);
  double* all_comp = malloc(sizeof(double) * (size_t)reps);
  if (!mine || !mine_comp || !all || !all_comp) Die("out of memory");
  MPI_Request req;
  const double ns_per_step = CalibrateNsPerStep();

  /* Warm-up, then t_comm. */
  for (int i = 0; i < 3; ++i) {
    MPI_Iallreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                   &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double a = NowNs();
    MPI_Iallreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                   &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    mine[i] = NowNs() - a;
  }
  MaxOverRanks(mine, all, reps);
  const double t_comm = MedianOf(all, reps);
  const double target = o->compute_factor * t_comm;
  const int64_t steps = (int64_t)(target / ns_per_step);

  /* t_comp: the computation alone. */
  Compute(steps);
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double a = NowNs();
    Compute(steps);
    mine[i] = NowNs() - a;
  }
  MaxOverRanks(mine, all, reps);
  const double t_comp = MedianOf(all, reps);

  /* t_total: start, compute (no MPI call), wait. */
  for (int i = 0; i < reps; ++i) {
    if (i == reps - 1) memset(recv, 0xa5, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double a = NowNs();
    MPI_Iallreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                   &req);
    double c0 = NowNs();
    Compute(steps);
    mine_comp[i] = NowNs() - c0;
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    mine[i] = NowNs() - a;
  }
  int bad = 0;
  for (int i = 0; i < count && !bad; ++i) {
    double want = (double)size_ * (size_ + 1) / 2 + (double)size_ * (i % 5);
    if (recv[i] != want) {
      fprintf(stderr,
              "coll: iallreduce_overlap: rank %d: element %d is %g, "
              "expected %g\n",
              rank_, i, recv[i], want);
      bad = 1;
    }
  }
  bad = AnyBad(bad);
  MaxOverRanks(mine, all, reps);
  MaxOverRanks(mine_comp, all_comp, reps);
  /* r_comm: the part of t_total outside the computation, over t_comm. */
  for (int i = 0; i < reps; ++i) mine[i] -= mine_comp[i];
  MaxOverRanks(mine, mine_comp, reps);
  if (rank_ == 0) {
    if (bad) {
      ++failures_;
      CaseHead("fail", o, kIallreduceOverlap, bytes);
      fprintf(out_,
              ", \"reason\": \"wrong result on at least one rank (see "
              "stderr)\"}\n");
      fprintf(stderr, "iallreduce_overlap %2d ranks: WRONG RESULT\n", size_);
    } else {
      const double comp_in = MedianOf(all_comp, reps);
      const double outside = MedianOf(mine_comp, reps);
      BenchStats s = BenchSummarize(all, reps);
      const double t_total = s.median;
      const double lo = t_comm < t_comp ? t_comm : t_comp;
      const double hi = t_comm < t_comp ? t_comp : t_comm;
      const double ratio = lo > 0 ? (t_total - hi) / lo : 0;
      const double clamped = ratio < 0 ? 0 : ratio > 1 ? 1 : ratio;
      CaseHead("case", o, kIallreduceOverlap, bytes);
      fprintf(out_,
              ", \"median_ns\": %.1f, \"min_ns\": %.1f, \"p99_ns\": %.1f, "
              "\"max_ns\": %.1f, \"mean_ns\": %.1f, \"samples\": %d, "
              "\"overhead_ratio\": %.4f, \"overhead_ratio_clamped\": %.4f, "
              "\"t_comm_ns\": %.1f, \"t_comp_ns\": %.1f, \"t_total_ns\": %.1f, "
              "\"r_comp_slowdown\": %.4f, \"r_comm\": %.4f, "
              "\"compute_target_ns\": %.1f, \"check\": \"ok\"}\n",
              s.median, s.min, s.p99, s.max, s.mean, reps, ratio, clamped,
              t_comm, t_comp, t_total, t_comp > 0 ? comp_in / t_comp : 0,
              t_comm > 0 ? outside / t_comm : 0, target);
      if (!o->quiet)
        fprintf(stderr,
                "iallreduce_overlap     %2d ranks %9zu B  t_comm "
                "%.1f us  t_comp %.1f us  t_total %.1f us  overhead "
                "ratio %.2f\n",
                size_, bytes, t_comm / 1e3, t_comp / 1e3, t_total / 1e3, ratio);
    }
    fflush(out_);
  }
  free(send);
  free(recv);
  free(mine);
  free(mine_comp);
  free(all);
  free(all_comp);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  Options o;
  ParseArgs(&o, argc, argv);
  /* Every rank uses rank 0's memory cap, so all skip the same cases. */
  MPI_Bcast(&o.mem_cap_mb, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  {
    char host[MPI_MAX_PROCESSOR_NAME + 1] = {0};
    int len = 0;
    unsigned long long fnv = 1469598103934665603ULL; /* FNV-1a */
    long long h, lo = 0, hi = 0;
    MPI_Get_processor_name(host, &len);
    for (const char* p = host; *p != '\0'; ++p)
      fnv = (fnv ^ (unsigned char)*p) * 1099511628211ULL;
    h = (long long)(fnv >> 1);
    MPI_Allreduce(&h, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    one_node_ = lo == hi;
  }

  if (rank_ == 0) {
    out_ = stdout;
    if (o.out != NULL && (out_ = fopen(o.out, "w")) == NULL) {
      fprintf(stderr, "coll: cannot write '%s'\n", o.out);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
    int len = 0;
    MPI_Get_library_version(version, &len);
    fprintf(out_, "{\"type\": \"job\", \"impl\": ");
    BenchJsonString(out_, o.impl);
    fprintf(out_, ", \"ranks\": %d, \"library\": ", size_);
    BenchJsonString(out_, version);
    fprintf(out_,
            ", \"timing\": \"barrier, then per-rank time of one call; "
            "sample = max over ranks per repetition\", "
            "\"one_node\": %s, \"mem_cap_mb\": %.0f, "
            "\"time_per_case_ms\": %g, \"min_reps\": %d, "
            "\"max_reps\": %d}\n",
            one_node_ ? "true" : "false", o.mem_cap_mb, o.time_per_case_ms,
            o.min_reps, o.max_reps);
    fflush(out_);
  }
  for (int c = 0; c < kIallreduceOverlap; ++c) {
    if (!o.enabled[c]) continue;
    if (c == kBarrier) {
      LatencyCase(&o, c, 0);
      continue;
    }
    for (int s = 0; s < o.num_sizes; ++s) LatencyCase(&o, c, o.sizes[s]);
  }
  if (o.enabled[kIallreduceOverlap]) OverlapCase(&o);

  if (rank_ == 0 && out_ != stdout) fclose(out_);
  MPI_Finalize();
  if (COLL_SKIP_LEAK_CHECK) {
    fflush(NULL);
    _exit(failures_ > 0 ? 3 : 0);
  }
  return failures_ > 0 ? 3 : 0;
}
