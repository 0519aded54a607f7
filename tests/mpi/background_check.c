/* background_check: do nonblocking collectives progress while the
 * application computes and makes no MPI call at all?
 *
 *   background_check [--expect-progress | --expect-no-progress]
 *                    [--timeout SECONDS] [--iterations N]
 *
 * Ibcast: every rank but 0 posts MPI_Ibcast of 1 MiB (root 0), tells rank 0
 * so with a small MPI_Send, then computes WITHOUT ANY MPI CALL, polling the
 * buffer (volatile reads) until its last bytes and a checksum of the whole
 * buffer are those of this iteration's pattern, or the wall-clock timeout
 * (clock_gettime) expires; then it calls MPI_Wait and checks every byte.
 * Rank 0 waits for all the "posted" messages, then starts its MPI_Ibcast
 * and waits for it. The data can only reach ranks that are not calling MPI
 * if something progresses the collective in the background (with a tree,
 * ranks that are computing must also forward it).
 * Iallreduce: the same with a 256 Ki-int MPI_SUM, the result polled in the
 * output buffer.
 *
 * --expect-progress (default; timeout 20 s): a timeout prints
 *   "FAIL background: data did not arrive without MPI calls" and the
 *   program exits 1 after the run.
 * --expect-no-progress (timeout 2 s): the opposite; documents a library
 *   without background progress (Open MPI's libNBC): the data must NOT be
 *   complete before the timeout, and must be after MPI_Wait. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "check.h"

#define BCAST_BYTES (1 << 20)
#define AR_INTS (256 * 1024)
#define TAG_POSTED 501

static int me, nranks;
static int expect_progress = 1;
static double timeout_s = -1;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned char bpat(size_t i, int it) {
  uint32_t x = (uint32_t)i * 2654435761u + (uint32_t)it * 40503u + 12345u;
  x ^= x >> 13;
  return (unsigned char)(x ^ (x >> 7));
}

static int arpat(int r, size_t i, int it) { return (int)((r * 31 + i * 7 + it * 13) % 1000); }

/* FNV-1a: order-dependent, so a shifted or partial buffer does not pass. */
static uint64_t checksum(const volatile unsigned char* b, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Polls `buf` without MPI calls until its last `tail` bytes equal those of
 * `exp` and the checksums match, or the timeout. Returns 1 if the data
 * arrived. A little arithmetic between polls stands for the application's
 * work. */
static int compute_until(const volatile unsigned char* buf, const unsigned char* exp,
                         size_t n, double timeout, double* waited) {
  size_t tail = 64 < n ? 64 : n;
  uint64_t want = checksum(exp, n);
  double t0 = now_s();
  volatile double work = 1.0;
  for (;;) {
    int tail_ok = 1;
    for (size_t i = n - tail; i < n && tail_ok; ++i) tail_ok = buf[i] == exp[i];
    if (tail_ok && checksum(buf, n) == want) {
      *waited = now_s() - t0;
      return 1;
    }
    for (int k = 0; k < 20000; ++k) work = work * 1.0000001 + 1e-9;
    if (now_s() - t0 > timeout) {
      *waited = now_s() - t0;
      return 0;
    }
  }
}

static int timeouts = 0;

/* After a first timeout, later waits are short: the run fails anyway. */
static double current_timeout(void) {
  return timeouts > 0 && expect_progress && timeout_s > 2 ? 2 : timeout_s;
}

static void report(const char* what, int arrived, double waited) {
  chk_context("%s", what);
  if (expect_progress) {
    if (!arrived) {
      ++timeouts;
      printf("FAIL background: data did not arrive without MPI calls (%s, rank %d, "
             "%.1f s)\n",
             what, me, waited);
      fflush(stdout);
    }
    ++chk_checks;
    if (!arrived) ++chk_fails;
  } else {
    check_true("data incomplete before MPI_Wait (expected no background progress)",
               !arrived);
  }
}

static void t_ibcast(MPI_Comm comm, int it) {
  unsigned char* buf = (unsigned char*)chk_malloc(BCAST_BYTES);
  unsigned char* exp = (unsigned char*)chk_malloc(BCAST_BYTES);
  for (size_t i = 0; i < BCAST_BYTES; ++i) exp[i] = bpat(i, it);
  MPI_Request req;
  char what[64];
  snprintf(what, sizeof what, "Ibcast 1 MiB iteration %d", it);
  if (me == 0) {
    memcpy(buf, exp, BCAST_BYTES);
    for (int r = 1; r < nranks; ++r) {
      int tok = -1;
      MPI_Recv(&tok, 1, MPI_INT, MPI_ANY_SOURCE, TAG_POSTED, comm, MPI_STATUS_IGNORE);
    }
    MPI_Ibcast(buf, BCAST_BYTES, MPI_BYTE, 0, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    memset(buf, 0, BCAST_BYTES);
    MPI_Ibcast(buf, BCAST_BYTES, MPI_BYTE, 0, comm, &req);
    MPI_Send(&it, 1, MPI_INT, 0, TAG_POSTED, comm);
    double waited = 0;
    int arrived = compute_until(buf, exp, BCAST_BYTES, current_timeout(), &waited);
    report(what, arrived, waited);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  chk_context("%s", what);
  check_bytes("buffer after MPI_Wait", exp, buf, BCAST_BYTES);
  free(buf);
  free(exp);
}

static void t_iallreduce(MPI_Comm comm, int it) {
  int* in = (int*)chk_malloc(AR_INTS * sizeof(int));
  int* out = (int*)chk_malloc(AR_INTS * sizeof(int));
  int* exp = (int*)chk_malloc(AR_INTS * sizeof(int));
  for (size_t i = 0; i < AR_INTS; ++i) {
    in[i] = arpat(me, i, it);
    out[i] = -1; /* never a sum of non-negative values */
    exp[i] = 0;
    for (int r = 0; r < nranks; ++r) exp[i] += arpat(r, i, it);
  }
  MPI_Request req;
  char what[64];
  snprintf(what, sizeof what, "Iallreduce 1 MiB iteration %d", it);
  if (me == 0) {
    for (int r = 1; r < nranks; ++r) {
      int tok = -1;
      MPI_Recv(&tok, 1, MPI_INT, MPI_ANY_SOURCE, TAG_POSTED, comm, MPI_STATUS_IGNORE);
    }
    MPI_Iallreduce(in, out, AR_INTS, MPI_INT, MPI_SUM, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Iallreduce(in, out, AR_INTS, MPI_INT, MPI_SUM, comm, &req);
    MPI_Send(&it, 1, MPI_INT, 0, TAG_POSTED, comm);
    double waited = 0;
    int arrived = compute_until((const volatile unsigned char*)out,
                                (const unsigned char*)exp, AR_INTS * sizeof(int),
                                current_timeout(), &waited);
    report(what, arrived, waited);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  chk_context("%s", what);
  check_ints("output after MPI_Wait", exp, out, AR_INTS);
  free(in);
  free(out);
  free(exp);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int iterations = 2;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--expect-progress") == 0) {
      expect_progress = 1;
    } else if (strcmp(argv[i], "--expect-no-progress") == 0) {
      expect_progress = 0;
    } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
      timeout_s = atof(argv[++i]);
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else {
      if (me == 0)
        fprintf(stderr,
                "usage: background_check [--expect-progress|--expect-no-progress] "
                "[--timeout S] [--iterations N]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (timeout_s <= 0) timeout_s = expect_progress ? 20 : 2;
  if (me == 0) {
    printf("background_check: %s, timeout %.1f s, %d ranks\n",
           expect_progress ? "expecting background progress"
                           : "expecting NO background progress",
           timeout_s, nranks);
    fflush(stdout);
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  for (int it = 0; it < iterations; ++it) {
    t_ibcast(comm, it);
    t_iallreduce(comm, it);
  }
  MPI_Comm_free(&comm);
  int rc = chk_finish("background_check");
  MPI_Finalize();
  return rc;
}
