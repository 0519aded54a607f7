/* slurm_check: does an MPI job started by `srun --mpi=pmix` work across
 * the emulated cluster's Slurm nodes? For slurm_test.sh and for checking a
 * Slurm set-up by hand (docs/cluster.md, "Running under Slurm").
 *
 * Built twice from this file: against Rondo's MadMPI (//bench/cluster:
 * slurm_check) and against Open MPI (slurm_check_openmpi), the reference
 * under the same srun. Plain C and MPI-3 calls, plus Rondo's
 * MPIX_Dynamic_bcast where mpi.h defines RONDO_MPI.
 *
 * Every rank prints, in this order:
 *   rank R of S host NAME cpus LIST
 *   rank R p2p ok (B bytes from rank P, B bytes to rank Q)
 *   rank R iallreduce ok (N ints, sum and max)
 *   rank R dynamic_bcast ok (roots 0 and S-1, N ints)     (Rondo only)
 *   rank R done
 * NAME is MPI_Get_processor_name, LIST the cores it may run on
 * (Cpus_allowed_list after MPI_Init). A wrong value prints
 *   rank R FAIL: what, expected, got
 * and aborts the job (MPI_Abort, code 3).
 *
 *   slurm_check [--bytes N] [--abort-rank R] [--rounds K]
 *
 * --bytes N: bytes each rank sends to the next in a ring (default 1 MiB).
 * --abort-rank R: rank R prints "rank R aborting" and calls abort() right
 * after its first line, while the others wait for it in the ring: for the
 * test that a dead rank ends the job with an error naming it.
 * --rounds K: repeat the ring and the allreduce K times (default 1), each
 * round printing "rank R round I": a long job, for the test that a lost
 * node ends it.
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpus_allowed.h"

static int g_rank = -1;

static void Usage(const char* why) {
  fprintf(stderr,
          "slurm_check: %s\n"
          "Usage: slurm_check [--bytes N] [--abort-rank R] [--rounds K]\n"
          "  --bytes N       bytes each rank sends to the next (1..268435456; "
          "default 1048576)\n"
          "  --abort-rank R  rank R calls abort() after its first line\n"
          "  --rounds K      repeat the ring and the allreduce K times "
          "(1..1000000; default 1)\n",
          why);
}

static void Fail(const char* what, long long expected, long long got) {
  printf("rank %d FAIL: %s, expected %lld, got %lld\n", g_rank, what,
         expected, got);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

static long ParseLong(const char* opt, const char* s, long lo, long hi) {
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || end == s || v < lo || v > hi) {
    char why[256];
    snprintf(why, sizeof why, "invalid %s '%s'; allowed: an integer %ld..%ld",
             opt, s, lo, hi);
    Usage(why);
    exit(2);
  }
  return v;
}

/* The byte at offset i of what rank r sends in the ring. */
static unsigned char Pattern(long i, int r) {
  return (unsigned char)((i * 131 + (i >> 12) * 7 + r * 29 + 1) & 0xff);
}

static void Ring(int rank, int size, long bytes) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  unsigned char* out = malloc((size_t)bytes);
  unsigned char* in = malloc((size_t)bytes);
  if (out == NULL || in == NULL) Fail("allocate the ring's buffers", 0, 1);
  for (long i = 0; i < bytes; ++i) out[i] = Pattern(i, rank);
  memset(in, 0, (size_t)bytes);
  /* A small tagged message first (eager), then the large one (rendezvous
   * above the transports' thresholds), both checked. */
  int small_out = 7000 + rank, small_in = -1;
  MPI_Status st;
  MPI_Sendrecv(&small_out, 1, MPI_INT, next, 11, &small_in, 1, MPI_INT, prev,
               11, MPI_COMM_WORLD, &st);
  if (small_in != 7000 + prev) Fail("small message from the previous rank", 7000 + prev, small_in);
  if (st.MPI_SOURCE != prev) Fail("status source", prev, st.MPI_SOURCE);
  if (st.MPI_TAG != 11) Fail("status tag", 11, st.MPI_TAG);
  MPI_Sendrecv(out, (int)bytes, MPI_BYTE, next, 12, in, (int)bytes, MPI_BYTE,
               prev, 12, MPI_COMM_WORLD, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  if (count != bytes) Fail("bytes received from the previous rank", bytes, count);
  for (long i = 0; i < bytes; ++i)
    if (in[i] != Pattern(i, prev)) Fail("a byte from the previous rank (value)", Pattern(i, prev), in[i]);
  printf("rank %d p2p ok (%ld bytes from rank %d, %ld bytes to rank %d)\n",
         rank, bytes, prev, bytes, next);
  fflush(stdout);
  free(out);
  free(in);
}

static void Iallreduce(int rank, int size) {
  enum { kN = 10000 };
  static int in[kN], sum[kN], max[kN];
  for (int i = 0; i < kN; ++i) in[i] = (rank + 1) * (i % 97 + 1);
  MPI_Request reqs[2];
  MPI_Iallreduce(in, sum, kN, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
  MPI_Iallreduce(in, max, kN, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &reqs[1]);
  /* Some polling before the wait: the reductions progress in MPI_Test. */
  int done = 0;
  for (int k = 0; k < 100 && !done; ++k)
    MPI_Testall(2, reqs, &done, MPI_STATUSES_IGNORE);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  const long long ranks_sum = (long long)size * (size + 1) / 2;
  for (int i = 0; i < kN; ++i) {
    if (sum[i] != ranks_sum * (i % 97 + 1)) Fail("MPI_Iallreduce MPI_SUM element", ranks_sum * (i % 97 + 1), sum[i]);
    if (max[i] != size * (i % 97 + 1)) Fail("MPI_Iallreduce MPI_MAX element", (long long)size * (i % 97 + 1), max[i]);
  }
  printf("rank %d iallreduce ok (%d ints, sum and max)\n", rank, kN);
  fflush(stdout);
}

#ifdef RONDO_MPI
/* MPIX_Dynamic_bcast from rank 0 and from rank size-1 to every other rank,
 * with priorities; the recipients use plain MPI_Recv. */
static void DynamicBcast(int rank, int size) {
  enum { kN = 100000 }; /* 400 kB: rendezvous-sized */
  static int buf[kN];
  const int roots[2] = {0, size - 1};
  for (int k = 0; k < 2; ++k) {
    const int root = roots[k], tag = 40 + k;
    if (rank == root) {
      int* ranks = malloc(sizeof(int) * (size_t)size);
      int* prios = malloc(sizeof(int) * (size_t)size);
      int n = 0;
      for (int r = 0; r < size; ++r)
        if (r != root) {
          ranks[n] = r;
          prios[n] = r % 3;
          ++n;
        }
      for (int i = 0; i < kN; ++i) buf[i] = i * 3 + root;
      MPI_Request req;
      int rc = MPIX_Dynamic_bcast(buf, kN, MPI_INT, tag, ranks, prios, n,
                                  MPI_COMM_WORLD, &req);
      if (rc != MPI_SUCCESS) Fail("MPIX_Dynamic_bcast's return code", MPI_SUCCESS, rc);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      free(ranks);
      free(prios);
    } else {
      MPI_Status st;
      memset(buf, 0, sizeof buf);
      MPI_Recv(buf, kN, MPI_INT, root, tag, MPI_COMM_WORLD, &st);
      if (st.MPI_SOURCE != root) Fail("dynamic bcast: status source", root, st.MPI_SOURCE);
      if (st.MPI_TAG != tag) Fail("dynamic bcast: status tag", tag, st.MPI_TAG);
      for (int i = 0; i < kN; ++i)
        if (buf[i] != i * 3 + root) Fail("dynamic bcast: element", i * 3 + root, buf[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  printf("rank %d dynamic_bcast ok (roots 0 and %d, %d ints)\n", rank,
         size - 1, kN);
  fflush(stdout);
}
#endif

int main(int argc, char** argv) {
  long bytes = 1L << 20, abort_rank = -1, rounds = 1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
      bytes = ParseLong("--bytes", argv[++i], 1, 1L << 28);
    } else if (strcmp(argv[i], "--abort-rank") == 0 && i + 1 < argc) {
      abort_rank = ParseLong("--abort-rank", argv[++i], 0, 1L << 20);
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = ParseLong("--rounds", argv[++i], 1, 1000000);
    } else {
      char why[256];
      snprintf(why, sizeof why, "unknown or incomplete argument '%s'",
               argv[i]);
      Usage(why);
      return 2;
    }
  }

  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_rank = rank;

  char host[MPI_MAX_PROCESSOR_NAME + 1] = "?";
  int host_len = 0;
  MPI_Get_processor_name(host, &host_len);
  char cpus[1024];
  CpusAllowed(cpus, sizeof cpus);
  printf("rank %d of %d host %s cpus %s\n", rank, size, host, cpus);
  fflush(stdout);

  if (rank == abort_rank) {
    printf("rank %d aborting (--abort-rank %ld)\n", rank, abort_rank);
    fflush(stdout);
    abort();
  }
  for (long round = 0; round < rounds; ++round) {
    if (rounds > 1 && rank == 0) {
      printf("rank %d round %ld\n", rank, round);
      fflush(stdout);
    }
    if (size >= 2) Ring(rank, size, bytes);
    Iallreduce(rank, size);
  }
#ifdef RONDO_MPI
  if (size >= 2) DynamicBcast(rank, size);
#endif
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d done\n", rank);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
