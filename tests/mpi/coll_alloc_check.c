/* coll_alloc_check: a warm blocking collective on a cached schedule
 * allocates nothing of its own.
 *
 * The program counts, through //tests:alloc_hook (malloc and friends
 * replaced in a plain build, AddressSanitizer's allocator hooks under
 * ASan: the same counts in both), the allocations made by the main thread
 * between
 * chk_count_begin() and chk_count_end(), over 200 warm blocking calls each
 * of MPI_Barrier, MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Allgather,
 * MPI_Gather, MPI_Scatter, MPI_Alltoall and MPI_Neighbor_alltoall (a
 * periodic ring: two sends and two receives), and 200 MPI_Start +
 * MPI_Wait of a warm persistent MPI_Allreduce_init (its schedule,
 * Operation and staging are the request's own).
 *   - On one rank the schedules send no message (copies at most): the
 *     count must be zero. Rondo's collective layer reuses, per thread, one
 *     request, one Operation with its step states and temporaries, and one
 *     reduction context for blocking calls (nmad/mpi/coll.cc).
 *   - On more ranks the point-to-point core may allocate per message
 *     (not the collective layer's business): the program first counts the
 *     allocations of a warm MPI_Sendrecv exchange with its ring neighbours,
 *     the floor per message (rounded up: a message that arrives before its
 *     receive is posted costs the core a few more), and checks that each
 *     collective call stays within (a bound on its messages) x (that
 *     floor). Bcast and reduce calls are each followed by a barrier, so
 *     that the root's run-ahead (unexpected messages buffered) stays the
 *     same from call to call.
 *
 *   - With --shm (all ranks on one node, RONDO_COLL_SHM on): the small
 *     blocking collectives that take the shared-memory path (barrier,
 *     bcast, allreduce, reduce, allgather, gather, scatter, alltoall) send
 *     no message at all, so their count must be zero on every rank; so
 *     must a large allreduce (kLarge floats, two rounds of the segment's
 *     large regions, mapped by the warm-up), checked only with --shm.
 *
 * With COLL_ALLOC_STACKS=1 in the environment, every counted allocation
 * prints its call stack to stderr (the program is linked with -rdynamic),
 * to find what allocates.
 *
 * Rondo-only: how many allocations an MPI library makes is not something
 * the standard promises. Not under ThreadSanitizer, where nothing is
 * counted: the program fails saying so. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/alloc_hook.h"
#include "tests/mpi/check.h"

static _Thread_local int counting = 0;
static _Thread_local long long allocations = 0;
static int print_stacks = 0;  /* COLL_ALLOC_STACKS=1 */
static _Thread_local int in_hook = 0;

static void Count(void) {
  if (!counting) return;
  ++allocations;
  if (!print_stacks || in_hook) return;
  in_hook = 1;
  void* frames[24];
  const int depth = backtrace(frames, 24);
  static const char kHead[] = "coll_alloc_check: allocation at:\n";
  if (write(2, kHead, sizeof kHead - 1) < 0) {
  }
  backtrace_symbols_fd(frames, depth, 2);
  in_hook = 0;
}

static void chk_count_begin(void) {
  if (!print_stacks) {
    const char* env = getenv("COLL_ALLOC_STACKS");
    if (env != NULL && env[0] == '1') {
      void* warm[1];
      backtrace(warm, 1); /* loads libgcc before counting */
      print_stacks = 1;
    }
  }
  allocations = 0;
  counting = 1;
}
static long long chk_count_end(void) {
  counting = 0;
  return allocations;
}

enum { kWarm = 20, kCalls = 200, kCount = 4, kGrowth = 8 };
/* Floats of the large allreduce: 320 KiB, past a slot and one round. */
enum { kLarge = 80000 };

/* Messages this rank sends plus receives in one call of each collective
 * with Rondo's default algorithms, bounded from above for any rank count
 * (2 x ceil(log2 n) rounds of one send and one receive covers
 * dissemination, recursive doubling, Rabenseifner, binomial trees and the
 * linear bcast of small communicators; the ring and reduce + bcast are
 * within 4 n). */
static long long MessageBound(int n) {
  int log2n = 0;
  while ((1 << log2n) < n) ++log2n;
  const long long tree = 4LL * (log2n + 1);
  const long long flat = 4LL * n;
  return tree > flat ? tree : flat;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  int shm = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--shm") == 0) {
      shm = 1;
    } else {
      fprintf(stderr, "usage: coll_alloc_check [--shm]\n");
      MPI_Finalize();
      return 2;
    }
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check_true("allocations are seen in this build (not ThreadSanitizer)",
             rondo_alloc_hook_set(Count));
  float in[kCount], out[kCount * 64], all_in[kCount * 64];
  for (int i = 0; i < kCount * 64; ++i) all_in[i] = (float)(rank * 1000 + i);
  for (int i = 0; i < kCount; ++i) in[i] = (float)(rank + i);

  /* The point-to-point floor: allocations per message of a warm exchange
   * (one send and one receive per call). */
  const int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
  for (int i = 0; i < kWarm; ++i)
    MPI_Sendrecv(in, kCount, MPI_FLOAT, next, 7, out, kCount, MPI_FLOAT, prev,
                 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  chk_count_begin();
  for (int i = 0; i < kCalls; ++i)
    MPI_Sendrecv(in, kCount, MPI_FLOAT, next, 7, out, kCount, MPI_FLOAT, prev,
                 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const long long p2p = chk_count_end();
  /* Per message, rounded up (two messages per call). */
  const long long per_message = (p2p + 2LL * kCalls - 1) / (2LL * kCalls);
  /* With several ranks, timing decides how many messages wait unexpected
   * at once; the core's pools may then grow to a new peak once in a while
   * (a few allocations in all, kGrowth), never once per call (>= kCalls). */
  const long long allowed =
      size == 1 ? 0 : MessageBound(size) * per_message * kCalls + kGrowth;
  if (rank == 0)
    fprintf(stderr,
            "coll_alloc_check: point-to-point: %lld allocations in %d "
            "exchanges (%lld per message, rounded up)\n",
            p2p, kCalls, per_message);

  static const char* const kNames[] = {"barrier", "bcast", "allreduce",
                                       "reduce", "allgather",
                                       "allreduce_init start",
                                       "neighbor_alltoall", "gather",
                                       "scatter", "alltoall",
                                       "large allreduce"};
  enum { kCases = 11 };
  /* The cases on the shared-memory path (--shm): not the persistent
   * allreduce (5) nor the neighbourhood alltoall (6). */
  static const int kOnShm[kCases] = {1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1};
  float* large_in = (float*)malloc(sizeof(float) * kLarge);
  float* large_out = (float*)malloc(sizeof(float) * kLarge);
  for (int i = 0; i < kLarge; ++i) large_in[i] = (float)(rank + i % 1000);
  MPI_Request persistent;
  MPI_Allreduce_init(in, out, kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                     MPI_INFO_NULL, &persistent);
  /* A periodic ring: block 0 goes to the -1 neighbour, block 1 to the +1
   * one; block 0 comes from the -1 neighbour (its block 1), block 1 from
   * the +1 one (its block 0). */
  int dims[1] = {size}, periods[1] = {1};
  MPI_Comm ring;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  float blocks[2 * kCount], got[2 * kCount];
  for (int i = 0; i < 2 * kCount; ++i)
    blocks[i] = (float)(rank * 10 + i / kCount);
  for (int c = 0; c < kCases; ++c) {
    /* The message path's large allreduce is not bounded here (rendezvous
     * messages). */
    if (c == 10 && !shm) continue;
    long long counted = 0;
    for (int phase = 0; phase < 2; ++phase) {
      const int calls = phase == 0 ? kWarm : kCalls;
      if (phase == 1) chk_count_begin();
      for (int i = 0; i < calls; ++i) {
        switch (c) {
          case 0: MPI_Barrier(MPI_COMM_WORLD); break;
          case 1: MPI_Bcast(out, kCount, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
          case 2:
            MPI_Allreduce(in, out, kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            break;
          case 3:
            MPI_Reduce(in, out, kCount, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
            break;
          case 4:
            MPI_Allgather(in, kCount, MPI_FLOAT, out, kCount, MPI_FLOAT,
                          MPI_COMM_WORLD);
            break;
          case 5:
            MPI_Start(&persistent);
            MPI_Wait(&persistent, MPI_STATUS_IGNORE);
            break;
          case 6:
            MPI_Neighbor_alltoall(blocks, kCount, MPI_FLOAT, got, kCount,
                                  MPI_FLOAT, ring);
            break;
          case 7:
            MPI_Gather(in, kCount, MPI_FLOAT, out, kCount, MPI_FLOAT, 0,
                       MPI_COMM_WORLD);
            break;
          case 8:
            MPI_Scatter(all_in, kCount, MPI_FLOAT, out, kCount, MPI_FLOAT, 0,
                        MPI_COMM_WORLD);
            break;
          case 9:
            MPI_Alltoall(all_in, kCount, MPI_FLOAT, out, kCount, MPI_FLOAT,
                         MPI_COMM_WORLD);
            break;
          case 10:
            MPI_Allreduce(large_in, large_out, kLarge, MPI_FLOAT, MPI_SUM,
                          MPI_COMM_WORLD);
            break;
        }
        /* A rooted collective lets the root run ahead by any number of
         * calls (MPI allows it): their messages wait as unexpected ones,
         * whose buffering grows with the run-ahead, not with the calls.
         * A barrier (itself allocation-free) bounds it to one call. */
        if (c == 1 || c == 3 || c == 7 || c == 8) MPI_Barrier(MPI_COMM_WORLD);
      }
      if (phase == 1) counted = chk_count_end();
    }
    chk_context("%s on %d ranks (point-to-point floor %lld per message)",
                kNames[c], size, per_message);
    char what[160];
    snprintf(what, sizeof what,
             "allocations in %d warm calls (%lld) <= %lld", kCalls, counted,
             allowed);
    check_true(what, counted <= allowed);
    if (shm && kOnShm[c]) {
      snprintf(what, sizeof what,
               "allocations in %d warm calls on the shared-memory path",
               kCalls);
      check_ll(what, 0, counted);
    }
    long long most = 0; /* over the ranks (the reduction is not counted) */
    MPI_Allreduce(&counted, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
      fprintf(stderr,
              "coll_alloc_check: %s: %lld allocations in %d calls (at most "
              "%lld on a rank)\n",
              kNames[c], counted, kCalls, most);
    /* The results are still right. */
    if (c == 2 || c == 5) {
      for (int i = 0; i < kCount; ++i)
        check_ll("allreduce sum",
                 (long long)size * (size - 1) / 2 + (long long)size * i,
                 (long long)out[i]);
    }
    /* Block q of rank r's all_in is r * 1000 + q * kCount + i. */
    if (c == 8)
      for (int i = 0; i < kCount; ++i)
        check_ll("scatter", rank * kCount + i, (long long)out[i]);
    if (c == 9)
      for (int q = 0; q < size; ++q)
        for (int i = 0; i < kCount; ++i)
          check_ll("alltoall", q * 1000 + rank * kCount + i,
                   (long long)out[q * kCount + i]);
    if (c == 10)
      for (int i = 0; i < kLarge; i += 997)
        check_ll("large allreduce sum",
                 (long long)size * (size - 1) / 2 + (long long)size * (i % 1000),
                 (long long)large_out[i]);
  }
  free(large_in);
  free(large_out);
  for (int i = 0; i < kCount; ++i) {
    check_ll("neighbor_alltoall block from -1", prev * 10 + 1,
             (long long)got[i]);
    check_ll("neighbor_alltoall block from +1", next * 10,
             (long long)got[kCount + i]);
  }
  MPI_Comm_free(&ring);
  MPI_Request_free(&persistent);
  const int rc = chk_finish("coll_alloc_check");
  MPI_Finalize();
  return rc;
}
