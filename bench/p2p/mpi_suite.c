/* bench/mpi_suite.c: an OSU-style MPI micro-benchmark suite for one MPI
 * library. The same source builds against Rondo's MadMPI
 * (//bench:mpi_suite_rondo, //nmad/mpi:mpi), Open MPI 4.1
 * (//bench:mpi_suite_openmpi, @openmpi//:mpi) and MPICH 4.0
 * (//bench:mpi_suite_mpich, @mpich//:mpi): it uses only standard MPI
 * calls (Open MPI's MPIX_ names for MPI-4's persistent collectives, below),
 * so the three are compared on the same code. The driver //bench:mpi_suite
 * (bench/mpi_suite_driver.cc) starts it under rondo-run, mpirun or
 * mpirun.mpich in each setting and merges the results (issues 15, 18).
 *
 *   <launcher> -n N mpi_suite_<impl> [--out FILE] [--tests LIST]
 *       [--iterations F] [--time-per-case-ms MS] [--bytes LIST] [--quick]
 *       [--quiet]
 * (--bytes: the sizes of every test but latency, bandwidth and barrier,
 * instead of the ones below; multiples of 4, 4 B to 64 MiB.)
 *
 * Tests (bytes per message; the data are MPI_CHAR unless said):
 *   latency          8 B, 1 KiB, 64 KiB (the driver's sizes): one-way
 *                    latency of a blocking ping-pong between ranks 0 and
 *                    1 (osu_latency): half the round trip;
 *   bandwidth        8 B and 1 MiB: osu_bw: rank 0 posts a window of 64
 *                    MPI_Isend, rank 1 64 MPI_Irecv (distinct buffers),
 *                    both MPI_Waitall, then rank 1 sends a 4-byte ack; the
 *                    time of a window / 64 is the per-message time,
 *                    bytes_per_s = bytes / that time (at 8 B its inverse
 *                    is the message rate, as osu_mbw_mr's window of 64);
 *   barrier          MPI_Barrier (bytes 0);
 *   bcast_char       MPI_Bcast of MPI_CHAR from rank 0, 8 B and 1 MiB;
 *   bcast_float      MPI_Bcast of MPI_FLOAT (bytes / 4 elements);
 *   allreduce_char   MPI_Allreduce MPI_SUM of MPI_CHAR, 8 B and 1 MiB;
 *   allreduce_float  MPI_Allreduce MPI_SUM of MPI_FLOAT;
 *   iallreduce_float the same as MPI_Iallreduce + MPI_Wait;
 *   allreduce_init_float  the same as a persistent collective (MPI-4):
 *                    MPI_Allreduce_init once per case, then MPI_Start +
 *                    MPI_Wait (Open MPI 4.1: MPIX_Allreduce_init from its
 *                    mpi-ext.h; MPICH 4.0 and Rondo: MPI-4's name);
 *   neighbor_alltoall_float  MPI_Neighbor_alltoall of MPI_FLOAT on a
 *                    periodic 1-D cartesian communicator (2 neighbours;
 *                    bytes per neighbour), made once per case;
 *   neighbor_alltoall_init_float  the same as a persistent collective:
 *                    MPI_Neighbor_alltoall_init once per case on that
 *                    communicator, then MPI_Start + MPI_Wait (Open MPI
 *                    4.1: MPIX_Neighbor_alltoall_init);
 *   alltoall_float, allgather_float, gather_float, scatter_float
 *                    MPI_Alltoall, MPI_Allgather, MPI_Gather (to rank 0)
 *                    and MPI_Scatter (from rank 0) of MPI_FLOAT, 8 B,
 *                    16 KiB and 1 MiB per block (bytes per rank pair, as
 *                    osu_alltoall and osu_allgather count them).
 * With more than 2 ranks, latency and bandwidth run between ranks 0 and 1
 * and the other ranks wait in an MPI_Barrier at the end of the case.
 *
 * Timing, as the OSU micro-benchmarks do it: `warmup` untimed iterations
 * (OSU's skip), then `iterations` timed ones, CLOCK_MONOTONIC.
 *   * latency: rank 0 times batches of round trips back to back; sample =
 *     batch time / (2 x batch);
 *   * bandwidth: rank 0 times batches of windows; sample = batch time /
 *     (64 x batch);
 *   * barrier: each rank times a batch of back-to-back barriers;
 *   * bcast, allreduce, neighbourhood: each rank times each call (t0; call;
 *     t1; for a persistent collective MPI_Start + MPI_Wait) and an
 *     MPI_Barrier follows every call outside the timed part (osu_bcast,
 *     osu_allreduce);
 *   for the collectives a sample is, per batch, the maximum over ranks of
 *   each rank's average time per call in that batch (OSU reports the
 *   average over ranks of the per-rank averages; the maximum is the time
 *   by which every rank is done, the figure the slowest rank sees).
 * The timed iterations form `samples` batches (at most 100) of equal size;
 * median, min and p99 are order statistics of the batch samples (nearest
 * rank, as bench/report.cc). The iteration counts are OSU's defaults
 * (latency 10000, bandwidth 100, collectives 1000; 100 at 1 MiB; warm-ups
 * 100, 10, 200 and 10, at least 4) times --iterations (default 1; --quick
 * 0.05), within a time budget per case, --time-per-case-ms (default 1000;
 * --quick 50): the warm-up runs in chunks of 1, 1, 2, 4, ... iterations
 * and stops early after a quarter of the budget; its last chunk's wall time
 * per iteration (barriers included, maximum over ranks) caps the timed
 * count at the budget; and the timed loop stops after twice the budget
 * (the ranks agree after each batch, outside the timing; the case says
 * "stopped_early"). At least 5 iterations are timed. So a slow library or
 * a loaded machine lengthens a case by about 3 budgets at most.
 *
 * Correctness: each case's operation is run once with known data before
 * the warm-up (after poisoning what it writes) and once after the timed
 * loop, and every rank checks the result (the root's pattern after a
 * bcast, the sums after an allreduce, the bytes of every message of a
 * window, the ordering of entry and exit times around a barrier when all
 * ranks share one clock; after a neighbourhood alltoall on the periodic
 * ring block s of the sender lands in block s^1 of the receiver, MPI-4.0's
 * errata: from the left neighbour its block 1, from the right its block 0,
 * also when both neighbours are one rank). A wrong result makes the case
 * "fail" without figures and the exit status 3: a broken library cannot
 * post a time. The first wrong element (lowest rank) is the JSON reason.
 *
 * A peer's known wrong answer: a wrong result of a peer library (never of
 * Rondo's) that is exactly the pattern of a known bug of that library
 * (KnownPeerBug below; today Open MPI 4.1.4's nonblocking and persistent
 * neighbourhood forms on a ring of 1 or 2 ranks, which pair the blocks
 * the pre-errata way, open-mpi/ompi#14430) is reported as "wrong", with
 * the bug and the first wrong element, without figures, and is no failure
 * (as an unsupported case). Any other wrong result stays a "fail".
 *
 * Unsupported operations: the first call of each case runs under
 * MPI_ERRORS_RETURN on MPI_COMM_WORLD. If it returns an error on any rank
 * (e.g. MPI_ERR_OP for MPI_SUM on MPI_CHAR in a library that refuses it),
 * the case is reported as "unsupported" with the error string and the
 * suite goes on; the rest of the run uses MPI_ERRORS_ARE_FATAL.
 *
 * MPI_Finalize under a watchdog: MPICH 4.0.2 over UCX sometimes never
 * returns from MPI_Finalize after every result is written (as in
 * bench/overlap.c). If it has not returned after kFinalizeWatchS seconds,
 * the rank writes {"type": "finalize_hang", "rank": R} to FILE.finalize.R
 * (with --out FILE; else to stderr) and exits with status 5; the driver
 * tells this from a failed job by the "end" line written before.
 *
 * Output: rank 0 writes JSON lines to --out (default stdout), one object
 * per line: {"type": "job", ...} first, then per case {"type": "case" |
 * "unsupported" | "wrong" | "fail" | "skip", "impl", "test", "ranks",
 * "bytes", ...}, then {"type": "end", "cases": N} before MPI_Finalize.
 * Human lines go to stderr unless --quiet. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/prog_util.h"
#include "bench/p2p/mpi_suite_rma.h"

/* The library, from its mpi.h: Rondo's defines RONDO_MPI, Open MPI's
 * OPEN_MPI, MPICH's MPICH (and MPICH_VERSION). */
#if defined(RONDO_MPI)
#define SUITE_IMPL "rondo"
#elif defined(OPEN_MPI)
#define SUITE_IMPL "openmpi"
#elif defined(MPICH) && defined(MPICH_VERSION)
#define SUITE_IMPL "mpich"
/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1: GCC's -Wstringop-overflow
 * takes each MPI_Waitall(n, req, MPI_STATUSES_IGNORE) for an overflow. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#else
#error "bench/mpi_suite.c: unknown MPI library (not Rondo, Open MPI or MPICH)"
#endif

/* Open MPI 4.1's persistent collectives are MPIX_ (its pcollreq extension,
 * mpi-ext.h); MPICH 4 and Rondo have MPI-4's names. */
#if !defined(RONDO_MPI) && defined(OPEN_MPI)
#include <mpi-ext.h>
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Neighbor_alltoall_init MPIX_Neighbor_alltoall_init
#endif

/* Open MPI's and MPICH's libraries keep allocations past MPI_Finalize
 * (Open MPI's many from MCA components it has already unloaded). In a
 * sanitizer build the peers' flavours end with _exit, skipping the leak
 * check (as bench/coll.c); mpi_suite_rondo keeps it. */
#if defined(__SANITIZE_ADDRESS__) && !defined(RONDO_MPI)
#define SUITE_SKIP_LEAK_CHECK 1
#else
#define SUITE_SKIP_LEAK_CHECK 0
#endif

enum Test {
  kLatency,
  kBandwidth,
  kBarrier,
  kBcastChar,
  kBcastFloat,
  kAllreduceChar,
  kAllreduceFloat,
  kIallreduceFloat,
  kAllreduceInitFloat,
  kNeighborAlltoallFloat,
  kNeighborAlltoallInitFloat,
  kAlltoallFloat,
  kAllgatherFloat,
  kGatherFloat,
  kScatterFloat,
  kNumTests
};

static const char* const kNames[kNumTests] = {
    "latency",     "bandwidth",      "barrier",        "bcast_char",
    "bcast_float", "allreduce_char", "allreduce_float", "iallreduce_float",
    "allreduce_init_float", "neighbor_alltoall_float",
    "neighbor_alltoall_init_float", "alltoall_float", "allgather_float",
    "gather_float", "scatter_float"};

#define kSmall ((size_t)8)
#define kLarge ((size_t)1 << 20)
#define kMid ((size_t)16384) /* the block collectives' third size */
#define kWindow 64
#define kMaxSamples 100
#define kMinIterations 5
#define kTag 100
#define kAckTag 101
#define kCtlTag 102
#define kWrongTag 103
/* Seconds MPI_Finalize may take before the watchdog ends the rank. */
#define kFinalizeWatchS 30

/* A case's verdict on one rank, ordered: the maximum over ranks wins. */
enum Verdict { kRight = 0, kKnownPeerBug = 1, kWrongResult = 2 };

typedef struct Options {
  const char* out;
  int enabled[kNumTests];
  double scale;            /* --iterations */
  double time_per_case_ms; /* --time-per-case-ms */
  int quiet;
  /* --bytes: the collectives' sizes instead of 8 B, (16 KiB,) 1 MiB. */
  size_t bytes[16];
  int nbytes;
} Options;

static int rank_ = 0, size_ = 1;
static FILE* out_ = NULL;
static int failures_ = 0;
static int one_node_ = 0; /* all ranks on one host: CLOCK_MONOTONIC shared */
static int quiet_ = 0;
static const char* const impl_ = SUITE_IMPL;
/* This rank's first wrong element of the last check (Wrong). */
static char wrong_[256];

/* ---- Small utilities ---- */

static double NowNs(void) { return BenchNowNs(); }

static void Die(const char* msg) {
  fprintf(stderr, "mpi_suite: rank %d: %s\n", rank_, msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* Page-aligned, as OSU's buffers are: two heap blocks a few bytes apart
 * modulo 4 KiB make every copy between them (a library's, or the kernel's
 * CMA) run at a fraction of its speed on some CPUs (4K aliasing: 64 KiB
 * memcpy 1.3 us aligned, 25 us at a 16-byte offset on this VM). */
static void* Alloc(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 4096, bytes > 0 ? bytes : 1) != 0) p = NULL;
  if (p == NULL) Die("out of memory");
  memset(p, 0, bytes > 0 ? bytes : 1); /* touch every page before timing */
  return p;
}

static int lines_ = 0; /* case lines written (rank 0) */

static void CaseHead(const char* type, int t, size_t bytes) {
  ++lines_;
  fprintf(out_,
          "{\"type\": \"%s\", \"impl\": \"%s\", \"test\": \"%s\", "
          "\"ranks\": %d, \"bytes\": %zu",
          type, impl_, kNames[t], size_, bytes);
}

/* ---- Argument parsing (every rank parses the same argv) ---- */

static double ParseDouble(const char* s, const char* what, double lo,
                          double hi) {
  return BenchParseDouble("mpi_suite", s, what, lo, hi);
}

static void ParseTests(Options* o, const char* list) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  for (int t = 0; t < kNumTests; ++t) o->enabled[t] = 0;
  int any = 0;
  for (char* tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
    int found = 0;
    if (strcmp(tok, "all") == 0) {
      for (int t = 0; t < kNumTests; ++t) o->enabled[t] = 1;
      found = 1;
    }
    for (int t = 0; t < kNumTests && !found; ++t)
      if (strcmp(tok, kNames[t]) == 0) o->enabled[t] = found = 1;
    if (!found) {
      fprintf(stderr,
              "mpi_suite: --tests: '%s' is not allowed; expected all or a "
              "comma-separated list of:",
              tok);
      for (int t = 0; t < kNumTests; ++t) fprintf(stderr, " %s", kNames[t]);
      fprintf(stderr, "\n");
      exit(2);
    }
    any = 1;
  }
  if (!any) {
    fprintf(stderr, "mpi_suite: --tests: empty list\n");
    exit(2);
  }
}

static void Usage(void) {
  fprintf(stderr,
          "usage: <launcher> -n N mpi_suite [--out FILE] [--tests LIST]\n"
          "  [--iterations F] [--time-per-case-ms MS] [--bytes LIST] [--quick]"
          " [--quiet]\n");
}

/* --bytes: sizes of 4 B to 64 MiB, multiples of 4 (MPI_FLOAT counts). */
static void ParseBytes(Options* o, const char* list) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  o->nbytes = 0;
  for (char* tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
    char* end = NULL;
    const long long b = strtoll(tok, &end, 10);
    if (*end != '\0' || b < 4 || b > (64LL << 20) || b % 4 != 0 ||
        o->nbytes == (int)(sizeof o->bytes / sizeof o->bytes[0])) {
      fprintf(stderr,
              "mpi_suite: --bytes: '%s' is not allowed; expected up to 16 "
              "sizes of 4 to 67108864 bytes, multiples of 4\n",
              tok);
      exit(2);
    }
    o->bytes[o->nbytes++] = (size_t)b;
  }
  if (o->nbytes == 0) {
    fprintf(stderr, "mpi_suite: --bytes: empty list\n");
    exit(2);
  }
}

static void ParseArgs(Options* o, int argc, char** argv) {
  o->out = NULL;
  ParseTests(o, "all");
  o->scale = 1.0;
  o->time_per_case_ms = 1000;
  o->quiet = 0;
  o->nbytes = 0;
  /* --quick first, so that explicit options given with it win. */
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      o->scale = 0.05;
      o->time_per_case_ms = 50;
    }
  }
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDS_VALUE                                      \
  if (v == NULL) {                                       \
    fprintf(stderr, "mpi_suite: %s needs a value\n", a); \
    exit(2);                                             \
  }                                                      \
  ++i
    if (strcmp(a, "--quick") == 0) {
      /* handled above */
    } else if (strcmp(a, "--quiet") == 0) {
      o->quiet = 1;
    } else if (strcmp(a, "--out") == 0) {
      NEEDS_VALUE;
      o->out = v;
    } else if (strcmp(a, "--tests") == 0) {
      NEEDS_VALUE;
      ParseTests(o, v);
    } else if (strcmp(a, "--iterations") == 0) {
      NEEDS_VALUE;
      o->scale = ParseDouble(v, a, 0.001, 1000);
    } else if (strcmp(a, "--time-per-case-ms") == 0) {
      NEEDS_VALUE;
      o->time_per_case_ms = ParseDouble(v, a, 1, 3600000);
    } else if (strcmp(a, "--bytes") == 0) {
      NEEDS_VALUE;
      ParseBytes(o, v);
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      if (rank_ == 0) Usage();
      MPI_Finalize();
      exit(0);
    } else {
      if (rank_ == 0) {
        fprintf(stderr, "mpi_suite: unknown argument '%s'\n", a);
        Usage();
      }
      exit(2);
    }
#undef NEEDS_VALUE
  }
}

/* ---- Data patterns and checks ---- */

/* The root's byte i (latency, bandwidth, bcast_char). */
static char ByteVal(size_t i, int salt) {
  return (char)((i * 131 + 7 + (size_t)salt * 29) & 0x7f);
}
/* Rank r's element i of allreduce_char: sums stay in 0..127 for <= 127
 * ranks. */
static char CharVal(int r, size_t i) { return (char)((i + (size_t)r) % 2); }
/* Rank r's element i of allreduce_float: small integers, exact sums. */
static float FloatVal(int r, size_t i) {
  return (float)(r + 1) + (float)(i % 7);
}
static float BcastFloatVal(size_t i) { return (float)(i % 1000) + 0.5f; }

typedef struct Buffers {
  char* send;   /* latency/bandwidth send, bcast buffer, allreduce input */
  char* recv;   /* latency receive, allreduce output */
  char** wins;  /* bandwidth: rank 1's kWindow receive buffers */
  size_t bytes; /* per message */
  int count;    /* elements per call (per neighbour) */
  MPI_Request persistent; /* *_init: made by the first call */
  MPI_Comm cart;          /* neighbor_alltoall*: made by the first call */
} Buffers;

static void FreeBuffers(Buffers* b) {
  if (b->wins != NULL)
    for (int w = 0; w < kWindow; ++w) free(b->wins[w]);
  free(b->wins);
  free(b->send);
  free(b->recv);
  if (b->persistent != MPI_REQUEST_NULL) MPI_Request_free(&b->persistent);
  if (b->cart != MPI_COMM_NULL) MPI_Comm_free(&b->cart);
}

static int IsNeighbor(int t) {
  return t == kNeighborAlltoallFloat || t == kNeighborAlltoallInitFloat;
}
/* One block per rank: alltoall, allgather, gather, scatter. */
static int IsBlocks(int t) {
  return t == kAlltoallFloat || t == kAllgatherFloat || t == kGatherFloat ||
         t == kScatterFloat;
}
static int IsFloat(int t) {
  return t == kBcastFloat || t == kAllreduceFloat || t == kIallreduceFloat ||
         t == kAllreduceInitFloat || IsNeighbor(t) || IsBlocks(t);
}

static Buffers MakeBuffers(int t, size_t bytes) {
  Buffers b = {NULL, NULL, NULL, bytes, 0, MPI_REQUEST_NULL, MPI_COMM_NULL};
  /* neighbor_alltoall*: one block per neighbour (2). */
  const size_t blocks = IsNeighbor(t) ? 2 : IsBlocks(t) ? (size_t)size_ : 1;
  b.send = Alloc(bytes * blocks);
  b.recv = Alloc(bytes * blocks);
  b.count = (int)(IsFloat(t) ? bytes / sizeof(float) : bytes);
  if (t == kBandwidth && rank_ == 1) {
    b.wins = calloc(kWindow, sizeof(char*));
    if (b.wins == NULL) Die("out of memory");
    for (int w = 0; w < kWindow; ++w) b.wins[w] = Alloc(bytes);
  }
  return b;
}

/* Sets the inputs of test `t` on this rank and poisons its outputs. */
static void Prepare(int t, Buffers* b) {
  size_t i;
  switch (t) {
    case kLatency:
    case kBandwidth:
      for (i = 0; i < b->bytes; ++i) b->send[i] = ByteVal(i, rank_);
      memset(b->recv, 0xff, b->bytes);
      if (b->wins != NULL)
        for (int w = 0; w < kWindow; ++w) memset(b->wins[w], 0xff, b->bytes);
      break;
    case kBcastChar:
      for (i = 0; i < b->bytes; ++i)
        b->send[i] = rank_ == 0 ? ByteVal(i, 0) : (char)0xff;
      break;
    case kBcastFloat: {
      float* f = (float*)b->send;
      for (i = 0; i < (size_t)b->count; ++i)
        f[i] = rank_ == 0 ? BcastFloatVal(i) : -1.0f;
      break;
    }
    case kAllreduceChar:
      for (i = 0; i < b->bytes; ++i) b->send[i] = CharVal(rank_, i);
      memset(b->recv, 0x7f, b->bytes);
      break;
    case kAllreduceFloat:
    case kIallreduceFloat:
    case kAllreduceInitFloat: {
      float* f = (float*)b->send;
      float* g = (float*)b->recv;
      for (i = 0; i < (size_t)b->count; ++i) {
        f[i] = FloatVal(rank_, i);
        g[i] = -1.0f;
      }
      break;
    }
    case kNeighborAlltoallFloat:
    case kNeighborAlltoallInitFloat: {
      /* Block 0 goes to the left neighbour, block 1 to the right one. */
      float* f = (float*)b->send;
      float* g = (float*)b->recv;
      for (i = 0; i < 2 * (size_t)b->count; ++i) {
        f[i] = FloatVal(rank_, i);
        g[i] = -1.0f;
      }
      break;
    }
    case kAlltoallFloat:
    case kAllgatherFloat:
    case kGatherFloat:
    case kScatterFloat: {
      /* Element i of the n blocks of this rank's send buffer (allgather
       * and gather send the first block only). */
      float* f = (float*)b->send;
      float* g = (float*)b->recv;
      for (i = 0; i < (size_t)size_ * (size_t)b->count; ++i) {
        f[i] = FloatVal(rank_, i);
        g[i] = -1.0f;
      }
      break;
    }
    default:
      break;
  }
}

/* Records the first wrong element in wrong_ (printed and reported by
 * Case); returns 1. */
static int Wrong(int t, const char* what, size_t i, double got, double want) {
  (void)t;
  snprintf(wrong_, sizeof wrong_, "rank %d: %s element %zu is %g, expected %g",
           rank_, what, i, got, want);
  return 1;
}

/* Checks this rank's outputs after one call; returns 1 if wrong. */
static int Check(int t, const Buffers* b) {
  size_t i;
  switch (t) {
    case kLatency: /* rank 1 got rank 0's bytes, rank 0 got rank 1's */
      if (rank_ > 1) return 0;
      for (i = 0; i < b->bytes; ++i)
        if (b->recv[i] != ByteVal(i, 1 - rank_))
          return Wrong(t, "received", i, b->recv[i], ByteVal(i, 1 - rank_));
      return 0;
    case kBandwidth:
      if (rank_ != 1) return 0;
      for (int w = 0; w < kWindow; ++w)
        for (i = 0; i < b->bytes; ++i)
          if (b->wins[w][i] != ByteVal(i, 0))
            return Wrong(t, "window message", i, b->wins[w][i], ByteVal(i, 0));
      return 0;
    case kBcastChar:
      for (i = 0; i < b->bytes; ++i)
        if (b->send[i] != ByteVal(i, 0))
          return Wrong(t, "bcast", i, b->send[i], ByteVal(i, 0));
      return 0;
    case kBcastFloat: {
      const float* f = (const float*)b->send;
      for (i = 0; i < (size_t)b->count; ++i)
        if (f[i] != BcastFloatVal(i))
          return Wrong(t, "bcast", i, f[i], BcastFloatVal(i));
      return 0;
    }
    case kAllreduceChar:
      for (i = 0; i < b->bytes; ++i) {
        int want = 0;
        for (int r = 0; r < size_; ++r) want += CharVal(r, i);
        if (b->recv[i] != (char)want)
          return Wrong(t, "sum", i, b->recv[i], want);
      }
      return 0;
    case kNeighborAlltoallFloat:
    case kNeighborAlltoallInitFloat: {
      /* From the left neighbour its block 1 (sent right), from the right
       * neighbour its block 0 (MPI-4.0 errata: also when both neighbours
       * are one rank, on a ring of 1 or 2). */
      const float* g = (const float*)b->recv;
      const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
      const size_t c = (size_t)b->count;
      for (i = 0; i < c; ++i) {
        if (g[i] != FloatVal(left, c + i))
          return Wrong(t, "from the left", i, g[i], FloatVal(left, c + i));
        if (g[c + i] != FloatVal(right, i))
          return Wrong(t, "from the right", i, g[c + i], FloatVal(right, i));
      }
      return 0;
    }
    case kAllreduceFloat:
    case kIallreduceFloat:
    case kAllreduceInitFloat: {
      const float* g = (const float*)b->recv;
      for (i = 0; i < (size_t)b->count; ++i) {
        float want = 0;
        for (int r = 0; r < size_; ++r) want += FloatVal(r, i);
        if (g[i] != want) return Wrong(t, "sum", i, g[i], want);
      }
      return 0;
    }
    case kAlltoallFloat:
    case kAllgatherFloat:
    case kGatherFloat: {
      /* Block q: rank q's block for this rank (alltoall) or its first. */
      const float* g = (const float*)b->recv;
      const size_t c = (size_t)b->count;
      if (t == kGatherFloat && rank_ != 0) return 0;
      for (int q = 0; q < size_; ++q)
        for (i = 0; i < c; ++i) {
          const float want =
              FloatVal(q, (t == kAlltoallFloat ? (size_t)rank_ * c : 0) + i);
          if (g[(size_t)q * c + i] != want)
            return Wrong(t, "block", (size_t)q * c + i, g[(size_t)q * c + i],
                         want);
        }
      return 0;
    }
    case kScatterFloat: {
      const float* g = (const float*)b->recv;
      const size_t c = (size_t)b->count;
      for (i = 0; i < c; ++i)
        if (g[i] != FloatVal(0, (size_t)rank_ * c + i))
          return Wrong(t, "block", i, g[i], FloatVal(0, (size_t)rank_ * c + i));
      return 0;
    }
    default:
      return 0;
  }
}

/* ---- The operations ---- */

/* One iteration of test `t` (untimed parts included: the ack of a window);
 * returns the first error code (MPI_SUCCESS when all calls succeed). */
static int Once(int t, Buffers* b) {
  const MPI_Comm w = MPI_COMM_WORLD;
  int rc = MPI_SUCCESS;
#define TRY(call)                    \
  do {                               \
    int rc_ = (call);                \
    if (rc == MPI_SUCCESS) rc = rc_; \
  } while (0)
  switch (t) {
    case kLatency:
      if (rank_ == 0) {
        TRY(MPI_Send(b->send, b->count, MPI_CHAR, 1, kTag, w));
        TRY(MPI_Recv(b->recv, b->count, MPI_CHAR, 1, kTag, w,
                     MPI_STATUS_IGNORE));
      } else if (rank_ == 1) {
        TRY(MPI_Recv(b->recv, b->count, MPI_CHAR, 0, kTag, w,
                     MPI_STATUS_IGNORE));
        TRY(MPI_Send(b->send, b->count, MPI_CHAR, 0, kTag, w));
      }
      break;
    case kBandwidth: {
      MPI_Request req[kWindow];
      int ack = 0;
      if (rank_ == 0) {
        for (int i = 0; i < kWindow; ++i)
          TRY(MPI_Isend(b->send, b->count, MPI_CHAR, 1, kTag, w, &req[i]));
        TRY(MPI_Waitall(kWindow, req, MPI_STATUSES_IGNORE));
        TRY(MPI_Recv(&ack, 4, MPI_CHAR, 1, kAckTag, w, MPI_STATUS_IGNORE));
      } else if (rank_ == 1) {
        for (int i = 0; i < kWindow; ++i)
          TRY(MPI_Irecv(b->wins[i], b->count, MPI_CHAR, 0, kTag, w, &req[i]));
        TRY(MPI_Waitall(kWindow, req, MPI_STATUSES_IGNORE));
        TRY(MPI_Send(&ack, 4, MPI_CHAR, 0, kAckTag, w));
      }
      break;
    }
    case kBarrier:
      TRY(MPI_Barrier(w));
      break;
    case kBcastChar:
      TRY(MPI_Bcast(b->send, b->count, MPI_CHAR, 0, w));
      break;
    case kBcastFloat:
      TRY(MPI_Bcast(b->send, b->count, MPI_FLOAT, 0, w));
      break;
    case kAllreduceChar:
      TRY(MPI_Allreduce(b->send, b->recv, b->count, MPI_CHAR, MPI_SUM, w));
      break;
    case kAllreduceFloat:
      TRY(MPI_Allreduce(b->send, b->recv, b->count, MPI_FLOAT, MPI_SUM, w));
      break;
    case kIallreduceFloat: {
      MPI_Request r;
      TRY(MPI_Iallreduce(b->send, b->recv, b->count, MPI_FLOAT, MPI_SUM, w,
                         &r));
      if (rc == MPI_SUCCESS) TRY(MPI_Wait(&r, MPI_STATUS_IGNORE));
      break;
    }
    case kAllreduceInitFloat:
      if (b->persistent == MPI_REQUEST_NULL)
        TRY(MPI_Allreduce_init(b->send, b->recv, b->count, MPI_FLOAT, MPI_SUM,
                               w, MPI_INFO_NULL, &b->persistent));
      if (rc == MPI_SUCCESS) TRY(MPI_Start(&b->persistent));
      if (rc == MPI_SUCCESS) TRY(MPI_Wait(&b->persistent, MPI_STATUS_IGNORE));
      break;
    case kNeighborAlltoallFloat:
      if (b->cart == MPI_COMM_NULL) {
        int dims[1] = {size_}, periods[1] = {1};
        TRY(MPI_Cart_create(w, 1, dims, periods, 0, &b->cart));
      }
      if (rc == MPI_SUCCESS)
        TRY(MPI_Neighbor_alltoall(b->send, b->count, MPI_FLOAT, b->recv,
                                  b->count, MPI_FLOAT, b->cart));
      break;
    case kNeighborAlltoallInitFloat:
      if (b->cart == MPI_COMM_NULL) {
        int dims[1] = {size_}, periods[1] = {1};
        TRY(MPI_Cart_create(w, 1, dims, periods, 0, &b->cart));
      }
      if (rc == MPI_SUCCESS && b->persistent == MPI_REQUEST_NULL)
        TRY(MPI_Neighbor_alltoall_init(b->send, b->count, MPI_FLOAT, b->recv,
                                       b->count, MPI_FLOAT, b->cart,
                                       MPI_INFO_NULL, &b->persistent));
      if (rc == MPI_SUCCESS) TRY(MPI_Start(&b->persistent));
      if (rc == MPI_SUCCESS) TRY(MPI_Wait(&b->persistent, MPI_STATUS_IGNORE));
      break;
    case kAlltoallFloat:
      TRY(MPI_Alltoall(b->send, b->count, MPI_FLOAT, b->recv, b->count,
                       MPI_FLOAT, w));
      break;
    case kAllgatherFloat:
      TRY(MPI_Allgather(b->send, b->count, MPI_FLOAT, b->recv, b->count,
                        MPI_FLOAT, w));
      break;
    case kGatherFloat:
      TRY(MPI_Gather(b->send, b->count, MPI_FLOAT, b->recv, b->count,
                     MPI_FLOAT, 0, w));
      break;
    case kScatterFloat:
      TRY(MPI_Scatter(b->send, b->count, MPI_FLOAT, b->recv, b->count,
                      MPI_FLOAT, 0, w));
      break;
    default:
      break;
  }
#undef TRY
  return rc;
}

static int PointToPoint(int t) { return t == kLatency || t == kBandwidth; }

/* Runs `n` iterations of `t`; returns this rank's timed nanoseconds per
 * operation (0 where this rank does not time: ranks other than 0 in the
 * point-to-point tests). `sync` puts a barrier after each collective call
 * outside the timed part (OSU's collective loop). */
static double Iterations(int t, Buffers* b, int n, int sync) {
  if (PointToPoint(t)) {
    if (rank_ > 1) return 0;
    const double t0 = NowNs();
    for (int i = 0; i < n; ++i) Once(t, b);
    const double dt = NowNs() - t0;
    if (rank_ != 0) return 0;
    return t == kLatency ? dt / (2.0 * n) : dt / ((double)kWindow * n);
  }
  if (t == kBarrier) {
    const double t0 = NowNs();
    for (int i = 0; i < n; ++i) Once(t, b);
    return (NowNs() - t0) / n;
  }
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double t0 = NowNs();
    Once(t, b);
    sum += NowNs() - t0;
    if (sync) MPI_Barrier(MPI_COMM_WORLD);
  }
  return sum / n;
}

/* The barrier's check: a rank leaves no earlier than the last one entered
 * (on one host, where CLOCK_MONOTONIC is shared). The last rank spins for a
 * millisecond first so that a barrier that does not wait is caught. */
static int BarrierCheck(void) {
  if (size_ < 2 || !one_node_) return 0;
  if (rank_ == size_ - 1) {
    const double until = NowNs() + 1e6;
    while (NowNs() < until) {
    }
  }
  const double in = NowNs();
  MPI_Barrier(MPI_COMM_WORLD);
  const double out = NowNs();
  double last_in = 0;
  MPI_Allreduce(&in, &last_in, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (out < last_in) {
    snprintf(wrong_, sizeof wrong_,
             "rank %d left %.0f ns before the last rank entered", rank_,
             last_in - out);
    return 1;
  }
  return 0;
}

/* ---- Known wrong answers of the peer libraries ---- */

/* The known bug of this library (never Rondo's) that a wrong result of
 * test `t` may be, or NULL. */
static const char* KnownPeerBug(int t) {
#if !defined(RONDO_MPI) && defined(OPEN_MPI)
  /* Open MPI 4.1.4's nonblocking and persistent neighbourhood collectives
   * (coll/libnbc) pair the blocks of a periodic dimension of 1 or 2 ranks
   * the pre-MPI-4.0-errata way: block s of the receiver gets the sender's
   * block s, not s^1 (tests/mpi/neighbor_check.c skips them there). */
  if (t == kNeighborAlltoallInitFloat && size_ <= 2)
    return "open-mpi/ompi#14430: Open MPI 4.1's nonblocking and persistent "
           "neighbourhood collectives pair the blocks of a periodic "
           "dimension of 1 or 2 ranks the pre-MPI-4.0-errata way (block s "
           "lands in block s, not s^1)";
#else
  (void)t;
#endif
  return NULL;
}

/* Whether this rank's (wrong) result is exactly the known bug's pattern. */
static int MatchesKnownPeerBug(int t, const Buffers* b) {
  if (KnownPeerBug(t) == NULL) return 0;
  switch (t) {
    case kNeighborAlltoallInitFloat: {
      /* Block s from the neighbour on side s is its block s. */
      const float* g = (const float*)b->recv;
      const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
      const size_t c = (size_t)b->count;
      for (size_t i = 0; i < c; ++i)
        if (g[i] != FloatVal(left, i) || g[c + i] != FloatVal(right, c + i))
          return 0;
      return 1;
    }
    default:
      return 0;
  }
}

/* This rank's verdict on the outputs of test `t` (wrong_ says why). */
static int Judge(int t, const Buffers* b) {
  wrong_[0] = '\0';
  if (t == kBarrier) return BarrierCheck() ? kWrongResult : kRight;
  if (!Check(t, b)) return kRight;
  return MatchesKnownPeerBug(t, b) ? kKnownPeerBug : kWrongResult;
}

/* The worst of the ranks' verdicts, on every rank; on rank 0 `detail` gets
 * the first wrong element of the lowest rank with that verdict. Each rank
 * prints its own wrong element on stderr (a known peer bug's only without
 * --quiet). */
static int Agreed(int t, size_t bytes, int local, char* detail,
                  size_t detail_len) {
  if (local != kRight && (local == kWrongResult || !quiet_))
    fprintf(stderr, "mpi_suite: %s %d ranks %zu B: %s%s\n", kNames[t], size_,
            bytes, wrong_,
            local == kKnownPeerBug ? " (a known bug of this library)" : "");
  int worst = kRight;
  MPI_Allreduce(&local, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == kRight) return worst;
  int me = local == worst ? rank_ : size_, first = size_;
  MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  char msg[sizeof wrong_];
  if (first == 0) {
    memcpy(msg, wrong_, sizeof msg);
  } else if (rank_ == first) {
    MPI_Send(wrong_, (int)sizeof wrong_, MPI_CHAR, 0, kWrongTag,
             MPI_COMM_WORLD);
  } else if (rank_ == 0) {
    MPI_Recv(msg, (int)sizeof msg, MPI_CHAR, first, kWrongTag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  }
  if (rank_ == 0) {
    msg[sizeof msg - 1] = '\0';
    snprintf(detail, detail_len, "%s", msg);
  }
  return worst;
}

/* One checked call: inputs set, outputs poisoned, the call, the check on
 * every rank. Returns the worst verdict, on every rank. */
static int Verified(int t, Buffers* b, char* detail, size_t detail_len) {
  if (t != kBarrier) {
    Prepare(t, b);
    Once(t, b);
  }
  return Agreed(t, b->bytes, Judge(t, b), detail, detail_len);
}

/* The first call under MPI_ERRORS_RETURN. Returns 0 if it succeeded on
 * every rank, else 1 and (on rank 0) the error string in `err`. */
static int Probe(int t, Buffers* b, char* err, size_t err_len) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Prepare(t, b);
  const int rc = Once(t, b);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int code = rc == MPI_SUCCESS ? 0 : rc, worst = 0, who = -1, first = -1;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) return 0;
  who = code != 0 ? rank_ : size_;
  MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank_ == 0) {
    char msg[MPI_MAX_ERROR_STRING + 1] = {0};
    int len = 0;
    if (MPI_Error_string(code != 0 ? code : worst, msg, &len) != MPI_SUCCESS)
      snprintf(msg, sizeof msg, "error code %d", worst);
    snprintf(err, err_len, "rank %d: %s", first, msg);
  }
  return 1;
}

/* OSU's iteration counts and warm-ups for test `t` at `bytes`. */
static void Defaults(int t, size_t bytes, int* iterations, int* warmup) {
  const int large = bytes > 8192;
  switch (t) {
    case kLatency:
      *iterations = large ? 1000 : 10000;
      *warmup = large ? 10 : 100;
      break;
    case kBandwidth:
      *iterations = 100;
      *warmup = 10;
      break;
    default:
      *iterations = large ? 100 : 1000;
      *warmup = large ? 10 : 200;
      break;
  }
}

/* Makes the ranks that run test `t` agree on `v` (n <= 2 doubles): the
 * maximum over all ranks for a collective; rank 0's values, sent to rank 1,
 * for a point-to-point test (ranks 0 and 1 only; outside the timing). */
static void Agree(int t, double* v, int n) {
  if (PointToPoint(t)) {
    if (rank_ == 0)
      MPI_Send(v, n, MPI_DOUBLE, 1, kCtlTag, MPI_COMM_WORLD);
    else if (rank_ == 1)
      MPI_Recv(v, n, MPI_DOUBLE, 0, kCtlTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return;
  }
  double max[2] = {0, 0};
  MPI_Allreduce(v, max, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  memcpy(v, max, sizeof(double) * (size_t)n);
}

/* ---- One case ---- */

static void Case(const Options* o, int t, size_t bytes) {
  if (PointToPoint(t) && size_ < 2) {
    if (rank_ == 0) {
      CaseHead("skip", t, bytes);
      fprintf(out_, ", \"reason\": \"needs 2 ranks\"}\n");
      fflush(out_);
    }
    return;
  }
  const double case_t0 = NowNs();
  Buffers b = MakeBuffers(t, bytes);
  char err[MPI_MAX_ERROR_STRING + 64] = {0};
  if (Probe(t, &b, err, sizeof err)) {
    if (rank_ == 0) {
      CaseHead("unsupported", t, bytes);
      fprintf(out_, ", \"error\": ");
      BenchJsonString(out_, err);
      fprintf(out_, "}\n");
      fflush(out_);
      if (!o->quiet)
        fprintf(stderr, "%-28s %2d ranks %8zu B  unsupported: %s\n", kNames[t],
                size_, bytes, err);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FreeBuffers(&b);
    return;
  }
  char detail[sizeof wrong_] = {0}; /* rank 0: the first wrong element */
  int verdict = t == kBarrier ? kRight
                              : Agreed(t, bytes, Judge(t, &b), detail,
                                       sizeof detail);

  int iterations, warmup;
  Defaults(t, bytes, &iterations, &warmup);
  iterations = (int)(iterations * o->scale + 0.5);
  warmup = (int)(warmup * o->scale + 0.5);
  if (warmup < 4) warmup = 4;
  const double budget_ns = o->time_per_case_ms * 1e6;
  const int runs = !PointToPoint(t) || rank_ <= 1; /* this rank takes part */

  /* Warm-up in chunks of 1, 1, 2, 4, ... iterations until `warmup` are done
   * or a quarter of the budget is spent. The last chunk's wall time per
   * iteration (barriers included; maximum over ranks) is the estimate
   * that caps the timed count at the budget. */
  double est = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (runs) {
    const double start = NowNs();
    for (int done = 0, chunk = 1; done<warmup; chunk *= done> 1 ? 2 : 1) {
      const int k = chunk < warmup - done ? chunk : warmup - done;
      const double t0 = NowNs();
      Iterations(t, &b, k, 1);
      done += k;
      double v[2] = {(NowNs() - t0) / k, NowNs() - start > budget_ns / 4};
      Agree(t, v, 2);
      est = v[0];
      if (v[1] != 0) break;
    }
  }
  if (est > 0 && budget_ns / est < iterations)
    iterations = (int)(budget_ns / est);
  if (iterations < kMinIterations) iterations = kMinIterations;
  int samples = iterations < kMaxSamples ? iterations : kMaxSamples;
  const int batch = iterations / samples;

  /* The timed batches. A case that runs past twice its budget (the machine
   * slowed down after the estimate) stops after kMinIterations samples
   * or more, the ranks agreeing after each batch (outside the timing). */
  double* local = calloc((size_t)samples, sizeof(double));
  double* all = calloc((size_t)samples, sizeof(double));
  if (local == NULL || all == NULL) Die("out of memory");
  int stopped_early = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (runs) {
    const double start = NowNs();
    for (int s = 0; s < samples; ++s) {
      local[s] = Iterations(t, &b, batch, 1);
      double stop = s + 1 >= kMinIterations && s + 1 < samples &&
                    NowNs() - start > 2 * budget_ns;
      Agree(t, &stop, 1);
      if (stop != 0) {
        samples = s + 1;
        stopped_early = 1;
      }
    }
  }
  iterations = batch * samples;
  MPI_Barrier(MPI_COMM_WORLD);
  if (PointToPoint(t)) /* rank 0's own times */
    memcpy(all, local, sizeof(double) * (size_t)samples);
  else
    MPI_Reduce(local, all, samples, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  /* `verdict` is the same on every rank. */
  if (verdict == kRight) verdict = Verified(t, &b, detail, sizeof detail);

  if (rank_ == 0) {
    if (verdict == kWrongResult) {
      ++failures_;
      CaseHead("fail", t, bytes);
      fprintf(out_, ", \"reason\": ");
      char reason[sizeof detail + 64];
      snprintf(reason, sizeof reason,
               "wrong result on at least one rank (first: %s)", detail);
      BenchJsonString(out_, reason);
      fprintf(out_, "}\n");
      fprintf(stderr, "%-28s %2d ranks %8zu B  WRONG RESULT: %s\n", kNames[t],
              size_, bytes, detail);
    } else if (verdict == kKnownPeerBug) {
      /* A peer's known wrong answer: no figure, no failure (banner). */
      const char* bug = KnownPeerBug(t);
      if (bug == NULL) bug = "?"; /* kKnownPeerBug implies one */
      CaseHead("wrong", t, bytes);
      fprintf(out_, ", \"reason\": ");
      BenchJsonString(out_, detail);
      fprintf(out_, ", \"known_issue\": ");
      BenchJsonString(out_, bug);
      fprintf(out_, "}\n");
      if (!o->quiet)
        fprintf(stderr, "%-28s %2d ranks %8zu B  wrong result (%s): %s\n",
                kNames[t], size_, bytes, bug, detail);
    } else {
      BenchStats st = BenchSummarize(all, samples);
      CaseHead("case", t, bytes);
      fprintf(out_,
              ", \"median_ns\": %.1f, \"min_ns\": %.1f, \"p99_ns\": %.1f, "
              "\"max_ns\": %.1f, \"mean_ns\": %.1f, \"samples\": %d, "
              "\"batch\": %d, \"iterations\": %d, \"warmup\": %d, "
              "\"check\": \"%s\", \"wall_ms\": %.1f, "
              "\"stopped_early\": %s",
              st.median, st.min, st.p99, st.max, st.mean, samples, batch,
              iterations, warmup,
              t == kBarrier && !one_node_ ? "skipped: several hosts" : "ok",
              (NowNs() - case_t0) / 1e6, stopped_early ? "true" : "false");
      if (t == kBandwidth && st.median > 0)
        fprintf(out_, ", \"bytes_per_s\": %.1f, \"window\": %d",
                (double)bytes / st.median * 1e9, kWindow);
      fprintf(out_, "}\n");
      if (!o->quiet)
        fprintf(stderr,
                "%-28s %2d ranks %8zu B  median %11.1f ns  min %11.1f  p99 "
                "%11.1f  iterations %d\n",
                kNames[t], size_, bytes, st.median, st.min, st.p99, iterations);
    }
    fflush(out_);
  }
  free(local);
  free(all);
  FreeBuffers(&b);
}

/* ---- A watchdog over MPI_Finalize (banner) ---- */

/* Says that MPI_Finalize hung (ctx: --out, or NULL), on stderr and in
 * OUT.finalize.RANK for the driver. */
static void OnFinalizeHang(void* ctx) {
  const char* out = ctx;
  fprintf(stderr,
          "mpi_suite: %s rank %d: MPI_Finalize did not return within %d s; "
          "exiting with status 5 (every result was written before)\n",
          impl_, rank_, kFinalizeWatchS);
  if (out == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s.finalize.%d", out, rank_);
  FILE* f = fopen(path, "w");
  if (f == NULL) return;
  fprintf(f,
          "{\"type\": \"finalize_hang\", \"impl\": \"%s\", \"rank\": "
          "%d, \"seconds\": %d}\n",
          impl_, rank_, kFinalizeWatchS);
  fclose(f);
}

/* MPI_Finalize, ending the process with status 5 if it has not returned
 * after kFinalizeWatchS seconds. */
static int FinalizeWatched(const char* out) {
  return BenchFinalizeWatched(MPI_Finalize, kFinalizeWatchS, OnFinalizeHang,
                              (void*)out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  Options o;
  const int rma = RmaTakeFlag(&argc, argv); /* only the one-sided cases */
  ParseArgs(&o, argc, argv);
  quiet_ = o.quiet;
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
      fprintf(stderr, "mpi_suite: cannot write '%s'\n", o.out);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
    int len = 0;
    MPI_Get_library_version(version, &len);
    fprintf(out_,
            "{\"type\": \"job\", \"impl\": \"%s\", \"ranks\": %d, "
            "\"library\": ",
            impl_, size_);
    BenchJsonString(out_, version);
    fprintf(out_,
            ", \"one_node\": %s, \"iterations_scale\": %g, "
            "\"time_per_case_ms\": %g, \"timing\": \"OSU-style: warm-up, "
            "then batches of timed iterations; collectives: per batch the "
            "max over ranks of each rank's average per call, a barrier "
            "after each call outside the timed part; latency: half the "
            "round trip; bandwidth: window time / %d\"}\n",
            one_node_ ? "true" : "false", o.scale, o.time_per_case_ms, kWindow);
    fflush(out_);
  }
  if (rma) RmaSuite(out_, impl_, o.scale, o.quiet);
  for (int t = 0; t < kNumTests && !rma; ++t) {
    if (!o.enabled[t]) continue;
    switch (t) {
      case kLatency: /* issue 28's three sizes: a cell, a few KiB, rendezvous */
        Case(&o, t, kSmall);
        Case(&o, t, 1024);
        Case(&o, t, 65536);
        break;
      case kBarrier:
        Case(&o, t, 0);
        break;
      default:
        if (o.nbytes > 0 && t != kBandwidth) {
          for (int k = 0; k < o.nbytes; ++k) Case(&o, t, o.bytes[k]);
          break;
        }
        Case(&o, t, kSmall);
        if (IsBlocks(t)) Case(&o, t, kMid);
        Case(&o, t, kLarge);
        break;
    }
  }
  if (rank_ == 0) {
    /* Every result is written: a hang in MPI_Finalize after this line is
     * the library's (the watchdog). */
    fprintf(out_, "{\"type\": \"end\", \"impl\": \"%s\", \"cases\": %d}\n",
            impl_, lines_);
    fflush(out_);
    if (out_ != stdout) fclose(out_);
  }
  FinalizeWatched(o.out);
  if (SUITE_SKIP_LEAK_CHECK) {
    fflush(NULL);
    _exit(failures_ > 0 ? 3 : 0);
  }
  return failures_ > 0 ? 3 : 0;
}
