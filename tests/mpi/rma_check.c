/* rma_check: one-sided communication (MPI-4.1 ch. 12), values checked.
 *
 *   rma_check              every window flavor and synchronisation mode on
 *                          any number of ranks: fence, PSCW, lock/unlock
 *                          (shared, exclusive), lock_all, flushes, request
 *                          operations, derived datatypes on both sides,
 *                          accumulates (atomic under contention), fetch-
 *                          and-op, compare-and-swap, attributes, info,
 *                          names, shared and dynamic windows, bad input.
 *   rma_check --passive    passive-target progress: rank 0 computes (no MPI
 *                          call) until the others' lock/put/accumulate/
 *                          unlock epochs on its window have landed, for at
 *                          most 60 s: without background progress at the
 *                          target the origins' unlocks never complete and
 *                          rank 0 reports it (no hang).
 *   rma_check --threads    MPI_THREAD_MULTIPLE origins: 4 threads per rank
 *                          in one lock_all epoch, each fetch-and-op on rank
 *                          0's counter and put, flush, get, flush on a slot
 *                          of its own at the right neighbour; values and
 *                          the counter's total checked.
 *   rma_check --unfreed    an erroneous program: a window used and never
 *                          freed; MPI_Finalize warns and ends cleanly.
 *   rma_check --passive-no-progress   the same, expecting NO progress
 *                          within 3 s (run with neither progress threads
 *                          nor the timer): shows that the check can fail.
 *
 * The fence, datatype and PSCW checks run twice: on MPI_Win_create windows
 * (Rondo: active messages, or UCX's one-sided operations when UCX reaches
 * every rank) and on MPI_Win_allocate windows (Rondo on one node: the
 * shared-memory path, load/store in one segment, unless RONDO_RMA_SHM=0).
 * test_shm_path checks which path Rondo took (RMA_CHECK_PATH: the one
 * expected off the shared-memory path, default "am"); test_atomics_mix
 * runs contended atomics of both of Rondo's accumulate routes at once.
 *
 * Against Open MPI (the reference) the bad-input checks that name Rondo's
 * messages are left out (RONDO_MPI). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static int rank, size;

/* Windows of the fence, datatype and PSCW checks: MPI_Win_create over the
 * caller's memory (0) or MPI_Win_allocate (1). */
static int g_allocate = 0;

/* A window of `bytes` bytes starting with `init`'s contents: over `init`
 * itself, or allocated (then filled from `init`). Returns its memory. */
static void* make_win(void* init, MPI_Aint bytes, int disp_unit,
                      MPI_Win* win) {
  void* mem = init;
  if (g_allocate) {
    check_rc("Win_allocate", MPI_Win_allocate(bytes, disp_unit, MPI_INFO_NULL,
                                              MPI_COMM_WORLD, &mem, win));
    memcpy(mem, init, (size_t)bytes);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    check_rc("Win_create", MPI_Win_create(init, bytes, disp_unit,
                                          MPI_INFO_NULL, MPI_COMM_WORLD, win));
  }
  return mem;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Fence: every rank puts its rank at slot `rank` of every rank's window,
 * then gets its right neighbour's whole array, then everyone accumulates
 * into rank 0. */
static void test_fence(void) {
  chk_context("fence");
  int n = 2 * size + 4;
  int* init = chk_malloc(sizeof(int) * n);
  for (int i = 0; i < n; ++i) init[i] = -1;
  MPI_Win win;
  int* mem = make_win(init, sizeof(int) * n, sizeof(int), &win);
  check_rc("fence (open)", MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  for (int t = 0; t < size; ++t)
    check_rc("Put", MPI_Put(&rank, 1, MPI_INT, t, rank, 1, MPI_INT, win));
  check_rc("fence", MPI_Win_fence(0, win));
  for (int r = 0; r < size; ++r) check_ll("slot after put", r, mem[r]);
  int* got = chk_malloc(sizeof(int) * size);
  int right = (rank + 1) % size;
  check_rc("Get", MPI_Get(got, size, MPI_INT, right, 0, size, MPI_INT, win));
  check_rc("fence", MPI_Win_fence(0, win));
  for (int r = 0; r < size; ++r) check_ll("got", r, got[r]);
  int one[2] = {rank + 1, 2 * (rank + 1)};
  check_rc("Accumulate", MPI_Accumulate(one, 2, MPI_INT, 0, size, 2, MPI_INT,
                                        MPI_SUM, win));
  check_rc("fence (close)", MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  if (rank == 0) {
    check_ll("accumulated sum", -1 + size * (size + 1) / 2, mem[size]);
    check_ll("accumulated sum 2", -1 + size * (size + 1), mem[size + 1]);
  }
  check_rc("Win_free", MPI_Win_free(&win));
  check_true("Win_free sets MPI_WIN_NULL", win == MPI_WIN_NULL);
  free(got);
  free(init);
}

/* Derived datatypes on both sides: a vector on the target, a contiguous
 * origin; then a vector origin into a contiguous target. */
static void test_datatypes(void) {
  chk_context("datatypes");
  int init[32];
  for (int i = 0; i < 32; ++i) init[i] = -1;
  MPI_Win win;
  int* mem = make_win(init, sizeof init, sizeof(int), &win);
  MPI_Datatype every_other, pairs;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Type_vector(2, 2, 4, MPI_INT, &pairs);  /* 0 1 . . 4 5 */
  MPI_Type_commit(&pairs);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int src[8];
  for (int i = 0; i < 8; ++i) src[i] = 100 * rank + i;
  MPI_Win_fence(0, win);
  check_rc("Put contiguous -> vector",
           MPI_Put(src, 4, MPI_INT, right, 0, 1, every_other, win));
  check_rc("Put vector -> contiguous",
           MPI_Put(src, 1, pairs, right, 16, 4, MPI_INT, win));
  MPI_Win_fence(0, win);
  for (int i = 0; i < 4; ++i) {
    check_ll("vector target", 100 * left + i, mem[2 * i]);
    check_ll("vector target hole", -1, mem[2 * i + 1]);
  }
  check_ll("from vector 0", 100 * left + 0, mem[16]);
  check_ll("from vector 1", 100 * left + 1, mem[17]);
  check_ll("from vector 2", 100 * left + 4, mem[18]);
  check_ll("from vector 3", 100 * left + 5, mem[19]);
  /* Read before the neighbour's next operations land. */
  MPI_Barrier(MPI_COMM_WORLD);
  /* Accumulate on a derived target and get it back into a derived origin. */
  int add[4] = {1, 1, 1, 1};
  check_rc("Accumulate into vector",
           MPI_Accumulate(add, 4, MPI_INT, right, 0, 1, every_other, MPI_SUM,
                          win));
  MPI_Win_fence(0, win);
  int back[8];
  for (int i = 0; i < 8; ++i) back[i] = -7;
  check_rc("Get vector -> vector",
           MPI_Get(back, 1, every_other, right, 0, 1, every_other, win));
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  for (int i = 0; i < 4; ++i) {
    check_ll("get back", 100 * rank + i + 1, back[2 * i]);
    check_ll("get back hole", -7, back[2 * i + 1]);
  }
  MPI_Type_free(&every_other);
  MPI_Type_free(&pairs);
  MPI_Win_free(&win);
}

/* Post/start/complete/wait: a ring, each rank exposing to its left
 * neighbour and accessing its right one. */
static void test_pscw(void) {
  chk_context("pscw");
  int init[4] = {-1, -1, -1, -1};
  MPI_Win win;
  int* mem = make_win(init, sizeof init, sizeof(int), &win);
  MPI_Group world, lg, rg;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Group_incl(world, 1, &left, &lg);
  MPI_Group_incl(world, 1, &right, &rg);
  for (int round = 0; round < 3; ++round) {
    check_rc("Win_post", MPI_Win_post(lg, 0, win));
    check_rc("Win_start", MPI_Win_start(rg, 0, win));
    int v = 1000 * round + rank;
    check_rc("Put", MPI_Put(&v, 1, MPI_INT, right, round, 1, MPI_INT, win));
    check_rc("Win_complete", MPI_Win_complete(win));
    if (round == 2) {
      int flag = 0;
      while (!flag) check_rc("Win_test", MPI_Win_test(win, &flag));
    } else {
      check_rc("Win_wait", MPI_Win_wait(win));
    }
    check_ll("pscw value", 1000 * round + left, mem[round]);
  }
  MPI_Group_free(&lg);
  MPI_Group_free(&rg);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
}

/* Locks: concurrent passive-target epochs from every rank on rank 0:
 * accumulates under shared locks, puts under exclusive locks, unique
 * tickets from fetch-and-op, one winner of compare-and-swap. */
static void test_locks(void) {
  chk_context("locks");
  long long* mem;
  MPI_Win win;
  check_rc("Win_allocate",
           MPI_Win_allocate(8 * sizeof(long long), sizeof(long long),
                            MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < 8; ++i) mem[i] = 0;
  mem[3] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  const int rounds = 200;
  long long one = 1, pair[2] = {1, 2};
  for (int i = 0; i < rounds; ++i) {
    check_rc("lock shared", MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM,
                   win);
    MPI_Accumulate(pair, 2, MPI_LONG_LONG, 0, 5, 2, MPI_LONG_LONG, MPI_SUM,
                   win);
    check_rc("unlock shared", MPI_Win_unlock(0, win));
    if (i % 50 == 0) {
      check_rc("lock exclusive", MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      long long v = rank;
      MPI_Put(&v, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, win);
      long long seen = -5;
      MPI_Get(&seen, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, win);
      check_rc("flush", MPI_Win_flush(0, win));
      check_ll("exclusive: own put seen", rank, seen);
      check_rc("unlock exclusive", MPI_Win_unlock(0, win));
    }
  }
  /* A ticket per rank: fetch-and-op SUM 1 on slot 2. */
  long long ticket = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  check_rc("Fetch_and_op",
           MPI_Fetch_and_op(&one, &ticket, MPI_LONG_LONG, 0, 2, MPI_SUM, win));
  /* Compare-and-swap -1 -> rank on slot 3: one winner. */
  long long expect = -1, mine = rank, old = -9;
  check_rc("Compare_and_swap",
           MPI_Compare_and_swap(&mine, &expect, &old, MPI_LONG_LONG, 0, 3,
                                win));
  /* An atomic read (NO_OP) and REPLACE. */
  long long readv = -3, dummy = 0;
  check_rc("Get_accumulate NO_OP",
           MPI_Get_accumulate(&dummy, 1, MPI_LONG_LONG, &readv, 1,
                              MPI_LONG_LONG, 0, 7, 1, MPI_LONG_LONG, MPI_NO_OP,
                              win));
  MPI_Win_unlock(0, win);
  check_ll("NO_OP read", 0, readv);
  long long* tickets = chk_malloc(sizeof(long long) * size);
  long long* olds = chk_malloc(sizeof(long long) * size);
  MPI_Allgather(&ticket, 1, MPI_LONG_LONG, tickets, 1, MPI_LONG_LONG,
                MPI_COMM_WORLD);
  MPI_Allgather(&old, 1, MPI_LONG_LONG, olds, 1, MPI_LONG_LONG, MPI_COMM_WORLD);
  long long seen_mask = 0;
  int winners = 0;
  for (int r = 0; r < size; ++r) {
    if (tickets[r] >= 0 && tickets[r] < size) seen_mask |= 1LL << tickets[r];
    if (olds[r] == -1) ++winners;
  }
  check_ll("tickets are 0..size-1", (1LL << size) - 1, seen_mask);
  check_ll("one compare-and-swap winner", 1, winners);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    check_ll("contended sum", (long long)size * rounds, mem[0]);
    check_ll("contended pair 0", (long long)size * rounds, mem[5]);
    check_ll("contended pair 1", 2LL * size * rounds, mem[6]);
    check_ll("fetch-and-op total", size, mem[2]);
    check_true("cas winner's rank", mem[3] >= 0 && mem[3] < size);
    MPI_Win_unlock(0, win);
  }
  free(tickets);
  free(olds);
  MPI_Win_free(&win);
}

/* lock_all epoch with request operations and every flush. */
static void test_lock_all(void) {
  chk_context("lock_all");
  int* mem;
  MPI_Win win;
  MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i < size; ++i) mem[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  check_rc("lock_all", MPI_Win_lock_all(0, win));
  MPI_Request reqs[2];
  int right = (rank + 1) % size;
  int v = 10 + rank, got = -1, sum = -1, add = 5;
  check_rc("Rput", MPI_Rput(&v, 1, MPI_INT, right, rank, 1, MPI_INT, win,
                            &reqs[0]));
  /* A request completes locally only: the put and the accumulate on one
   * location are ordered by a flush (MPI-4.1 §12.7). */
  check_rc("Wait(Rput)", MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
  check_rc("flush (between put and accumulate)", MPI_Win_flush(right, win));
  check_rc("Raccumulate", MPI_Raccumulate(&add, 1, MPI_INT, right, rank, 1,
                                          MPI_INT, MPI_SUM, win, &reqs[1]));
  check_rc("Waitall", MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  check_rc("flush_local", MPI_Win_flush_local(right, win));
  check_rc("flush", MPI_Win_flush(right, win));
  MPI_Request rg;
  check_rc("Rget", MPI_Rget(&got, 1, MPI_INT, right, rank, 1, MPI_INT, win,
                            &rg));
  check_rc("Wait(Rget)", MPI_Wait(&rg, MPI_STATUS_IGNORE));
  check_ll("Rget sees put + accumulate", 15 + rank, got);
  check_rc("Rget_accumulate",
           MPI_Rget_accumulate(&add, 1, MPI_INT, &sum, 1, MPI_INT, right, rank,
                               1, MPI_INT, MPI_SUM, win, &rg));
  check_rc("Wait(Rget_accumulate)", MPI_Wait(&rg, MPI_STATUS_IGNORE));
  check_ll("Rget_accumulate old value", 15 + rank, sum);
  check_rc("flush_all", MPI_Win_flush_all(win));
  check_rc("flush_local_all", MPI_Win_flush_local_all(win));
  check_rc("Win_sync", MPI_Win_sync(win));
  check_rc("unlock_all", MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  int left = (rank + size - 1) % size;
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  check_ll("lock_all result", 20 + left, mem[left]);
  MPI_Win_unlock(rank, win);
  /* NOCHECK epochs skip the lock protocol. */
  check_rc("lock_all NOCHECK", MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  check_rc("Get under NOCHECK",
           MPI_Get(&got, 1, MPI_INT, right, rank, 1, MPI_INT, win));
  check_rc("unlock_all NOCHECK", MPI_Win_unlock_all(win));
  check_ll("NOCHECK get", 20 + rank, got);
  MPI_Win_free(&win);
}

/* Attributes, names, groups, info. */
static void test_attributes(void) {
  chk_context("attributes");
  double* mem;
  MPI_Win win;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "true");
  check_rc("Win_allocate", MPI_Win_allocate(10 * sizeof(double), sizeof(double),
                                            info, MPI_COMM_WORLD, &mem, &win));
  MPI_Info_free(&info);
  void* base = NULL;
  MPI_Aint* sz = NULL;
  int *du = NULL, *flavor = NULL, *model = NULL, flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  check_true("MPI_WIN_BASE", flag && base == mem);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
  check_ll("MPI_WIN_SIZE", 10 * sizeof(double), flag ? *sz : -1);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag);
  check_ll("MPI_WIN_DISP_UNIT", sizeof(double), flag ? *du : -1);
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  check_ll("MPI_WIN_CREATE_FLAVOR", MPI_WIN_FLAVOR_ALLOCATE, flag ? *flavor : -1);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  check_ll("MPI_WIN_MODEL", MPI_WIN_UNIFIED, flag ? *model : -1);
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  check_rc("Win_set_name", MPI_Win_set_name(win, "rondo window"));
  check_rc("Win_get_name", MPI_Win_get_name(win, name, &len));
  check_str("window name", "rondo window", name);
  MPI_Group g, w;
  int result = -1;
  check_rc("Win_get_group", MPI_Win_get_group(win, &g));
  MPI_Comm_group(MPI_COMM_WORLD, &w);
  MPI_Group_compare(g, w, &result);
  check_ll("window group", MPI_IDENT, result);
  MPI_Group_free(&g);
  MPI_Group_free(&w);
  MPI_Info used;
  char value[MPI_MAX_INFO_VAL];
  check_rc("Win_get_info", MPI_Win_get_info(win, &used));
  MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL - 1, value, &flag);
  check_true("no_locks reported true", flag && strcmp(value, "true") == 0);
  MPI_Info_free(&used);
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  check_rc("Win_set_info", MPI_Win_set_info(win, info));
  MPI_Info_free(&info);
  check_rc("Win_get_info", MPI_Win_get_info(win, &used));
  MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, value, &flag);
#ifdef RONDO_MPI
  /* (Open MPI 4.1.4 does not report it.) */
  check_true("accumulate_ordering reported", flag);
#endif
  MPI_Info_free(&used);
  check_true("Win_c2f/f2c", MPI_Win_f2c(MPI_Win_c2f(win)) == win);
#ifdef RONDO_MPI
  /* no_locks: a lock is refused. */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  check_error("lock on a no_locks window",
              MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC,
              "no_locks");
#endif
  MPI_Win_free(&win);
}

/* Shared memory windows: neighbours' memory by load and store. */
static void test_shared(void) {
  chk_context("shared");
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int nrank, nsize;
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_size(node, &nsize);
  int* mine;
  MPI_Win win;
  check_rc("Win_allocate_shared",
           MPI_Win_allocate_shared((nrank + 1) * sizeof(int), sizeof(int),
                                   MPI_INFO_NULL, node, &mine, &win));
  MPI_Win_lock_all(0, win);
  for (int i = 0; i <= nrank; ++i) mine[i] = 1000 * nrank + i;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  int peer = (nrank + 1) % nsize;
  MPI_Aint psize = -1;
  int pdu = -1;
  int* pbase = NULL;
  check_rc("Win_shared_query", MPI_Win_shared_query(win, peer, &psize, &pdu,
                                                    &pbase));
  check_ll("peer size", (peer + 1) * sizeof(int), psize);
  check_ll("peer disp_unit", sizeof(int), pdu);
  if (pbase)
    for (int i = 0; i <= peer; ++i)
      check_ll("peer's value by load", 1000 * peer + i, pbase[i]);
  /* And through RMA calls too. */
  int got = -1;
  MPI_Get(&got, 1, MPI_INT, peer, peer, 1, MPI_INT, win);
  MPI_Win_flush(peer, win);
  check_ll("peer's value by MPI_Get", 1000 * peer + peer, got);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
}

#ifdef RONDO_MPI
/* The path Rondo takes for windows off the shared-memory path: "am", or
 * what RMA_CHECK_PATH says ("ucx" when every rank is reached through UCX:
 * RONDO_SHM=0, or ranks on several hosts). */
static const char* expected_path(void) {
  const char* env = getenv("RMA_CHECK_PATH");
  return env && *env ? env : "am";
}

/* Which path Rondo took: on one node an MPI_Win_allocate window is on the
 * shared-memory path (info "rondo_rma_path" = "shm", and
 * MPI_Win_shared_query gives every rank's memory, which a store reaches)
 * unless RONDO_RMA_SHM=0; an MPI_Win_create window on active messages
 * ("am") or UCX's one-sided operations (expected_path). */
static void test_shm_path(void) {
  chk_context("shm path");
  const char* env = getenv("RONDO_RMA_SHM");
  const int expect_shm = !(env && strcmp(env, "0") == 0);
  long long* mine;
  MPI_Win win;
  check_rc("Win_allocate", MPI_Win_allocate(2 * sizeof(long long),
                                            sizeof(long long), MPI_INFO_NULL,
                                            MPI_COMM_WORLD, &mine, &win));
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  mine[0] = mine[1] = -1;
  MPI_Info used;
  char value[MPI_MAX_INFO_VAL] = "";
  int flag = 0;
  MPI_Win_get_info(win, &used);
  MPI_Info_get(used, "rondo_rma_path", MPI_MAX_INFO_VAL - 1, value, &flag);
  MPI_Info_free(&used);
  check_true("rondo_rma_path reported", flag);
  check_str("rondo_rma_path of Win_allocate",
            expect_shm ? "shm" : expected_path(), value);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Aint rsize = -1;
  int rdu = -1;
  long long* rbase = NULL;
  int rc = MPI_Win_shared_query(win, right, &rsize, &rdu, &rbase);
  if (expect_shm) {
    check_rc("Win_shared_query on a Win_allocate window", rc);
    check_ll("right's size", 2 * sizeof(long long), rsize);
    check_true("right's base", rbase != NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    /* A store through the pointer, seen by the owner. */
    if (rbase) rbase[1] = 7000 + rank;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    check_ll("store through shared_query's pointer", 7000 + left, mine[1]);
  } else {
    check_ll("Win_shared_query on an AM window", MPI_ERR_RMA_FLAVOR,
             rc == MPI_SUCCESS ? MPI_SUCCESS : (MPI_Error_class(rc, &rc), rc));
  }
  /* The checks hold on either path. */
  long long v = 1;
  check_error("Put outside an epoch",
              MPI_Put(&v, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win),
              MPI_ERR_RMA_SYNC, "no access epoch");
  MPI_Win_lock_all(0, win);
  check_error("Put past the window",
              MPI_Put(&v, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, win),
              MPI_ERR_RMA_RANGE, "target_disp = 2");
  check_error("Get_accumulate with mismatched types",
              MPI_Get_accumulate(&v, 1, MPI_LONG_LONG, &v, 1, MPI_INT, right,
                                 0, 1, MPI_LONG_LONG, MPI_SUM, win),
              MPI_ERR_TYPE, "result_count");
  check_error("flush of a rank outside the window",
              MPI_Win_flush(size, win), MPI_ERR_RANK, "rank");
  check_error("exclusive lock inside lock_all",
              MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win),
              MPI_ERR_RMA_SYNC, "already locked");
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  /* MPI_Win_create windows: active messages or UCX. */
  long long mem[2] = {0, 0};
  MPI_Win_create(mem, sizeof mem, sizeof(long long), MPI_INFO_NULL,
                 MPI_COMM_WORLD, &win);
  MPI_Win_get_info(win, &used);
  MPI_Info_get(used, "rondo_rma_path", MPI_MAX_INFO_VAL - 1, value, &flag);
  MPI_Info_free(&used);
  check_str("rondo_rma_path of Win_create", expected_path(), value);
  MPI_Win_free(&win);
}
#endif

/* Concurrent atomics from every rank on rank 0's window, on both accumulate
 * paths at once: on the UCX path the 4/8-byte integer SUM, BOR, BXOR,
 * BAND, REPLACE, NO_OP and compare-and-swap go as UCX atomics (a strided
 * target type too, one atomic per element), MPI_PROD and doubles as active
 * messages, in the same epochs; every total is checked (also against Open
 * MPI, the reference). */
static void test_atomics_mix(void) {
  chk_context("atomics mix");
  struct {
    long long sum, ticket, cas, replace;
    int isum, ior, ixor, iand;
    int strided[4];
    double dsum;
    long long prod;
  } init, *mem;
  memset(&init, 0, sizeof init);
  init.cas = -1;
  init.iand = -1;
  init.prod = 1;
  init.replace = -1;
  MPI_Win win;
  mem = make_win(&init, sizeof init, 1, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
#define OFF(f) ((MPI_Aint)((char*)&init.f - (char*)&init))
  MPI_Datatype stride2;
  MPI_Type_vector(2, 1, 2, MPI_INT, &stride2);
  MPI_Type_commit(&stride2);
  const int rounds = 100;
  long long one = 1, ticket = -1, last = 0;
  int ione = 1, bit = 1 << rank, mask = ~(1 << rank), two[2] = {1, 2};
  double half = 0.5;
  long long factor = 2;
  check_rc("lock_all", MPI_Win_lock_all(0, win));
  for (int i = 0; i < rounds; ++i) {
    check_rc("Accumulate SUM int64",
             MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, OFF(sum), 1,
                            MPI_LONG_LONG, MPI_SUM, win));
    check_rc("Fetch_and_op SUM int64",
             MPI_Fetch_and_op(&one, &ticket, MPI_LONG_LONG, 0, OFF(ticket),
                              MPI_SUM, win));
    check_rc("Accumulate SUM int",
             MPI_Accumulate(&ione, 1, MPI_INT, 0, OFF(isum), 1, MPI_INT,
                            MPI_SUM, win));
    check_rc("Accumulate strided",
             MPI_Accumulate(two, 2, MPI_INT, 0, OFF(strided), 1, stride2,
                            MPI_SUM, win));
    check_rc("Accumulate double (active messages)",
             MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, OFF(dsum), 1, MPI_DOUBLE,
                            MPI_SUM, win));
    check_rc("flush", MPI_Win_flush(0, win));
  }
  check_true("tickets below the total", ticket >= 0 &&
                                            ticket < (long long)rounds * size);
  check_rc("Accumulate BOR",
           MPI_Accumulate(&bit, 1, MPI_INT, 0, OFF(ior), 1, MPI_INT, MPI_BOR,
                          win));
  check_rc("Accumulate BXOR",
           MPI_Accumulate(&bit, 1, MPI_INT, 0, OFF(ixor), 1, MPI_INT, MPI_BXOR,
                          win));
  check_rc("Accumulate BAND",
           MPI_Accumulate(&mask, 1, MPI_INT, 0, OFF(iand), 1, MPI_INT,
                          MPI_BAND, win));
  long long mine = rank, old = -9, expect = -1;
  check_rc("Compare_and_swap",
           MPI_Compare_and_swap(&mine, &expect, &old, MPI_LONG_LONG, 0,
                                OFF(cas), win));
  check_rc("Fetch_and_op REPLACE",
           MPI_Fetch_and_op(&mine, &last, MPI_LONG_LONG, 0, OFF(replace),
                            MPI_REPLACE, win));
  check_rc("Accumulate PROD (active messages)",
           MPI_Accumulate(&factor, 1, MPI_LONG_LONG, 0, OFF(prod), 1,
                          MPI_LONG_LONG, MPI_PROD, win));
  check_rc("unlock_all", MPI_Win_unlock_all(win));
  long long olds[64], lasts[64];
  MPI_Allgather(&old, 1, MPI_LONG_LONG, olds, 1, MPI_LONG_LONG,
                MPI_COMM_WORLD);
  MPI_Allgather(&last, 1, MPI_LONG_LONG, lasts, 1, MPI_LONG_LONG,
                MPI_COMM_WORLD);
  int winners = 0, first_replace = 0;
  for (int r = 0; r < size; ++r) {
    winners += olds[r] == -1;
    first_replace += lasts[r] == -1;
  }
  check_ll("one compare-and-swap winner", 1, winners);
  check_ll("one REPLACE saw the initial value", 1, first_replace);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    long long read = -1, dummy = 0;
    check_rc("Get_accumulate NO_OP",
             MPI_Get_accumulate(&dummy, 1, MPI_LONG_LONG, &read, 1,
                                MPI_LONG_LONG, 0, OFF(sum), 1, MPI_LONG_LONG,
                                MPI_NO_OP, win));
    MPI_Win_unlock(0, win);
    const long long total = (long long)rounds * size;
    check_ll("NO_OP read of the sum", total, read);
    check_ll("SUM int64", total, mem->sum);
    check_ll("fetch-and-op total", total, mem->ticket);
    check_ll("SUM int", total, mem->isum);
    check_ll("strided [0]", total, mem->strided[0]);
    check_ll("strided [1]", 0, mem->strided[1]);
    check_ll("strided [2]", 2 * total, mem->strided[2]);
    check_ll("strided [3]", 0, mem->strided[3]);
    check_true("double SUM", mem->dsum == 0.5 * (double)total);
    check_ll("BOR", (1LL << size) - 1, mem->ior);
    check_ll("BXOR", (1LL << size) - 1, mem->ixor);
    check_ll("BAND", ~((1 << size) - 1), mem->iand);
    check_true("cas winner", mem->cas >= 0 && mem->cas < size);
    check_true("replace holds a rank", mem->replace >= 0 &&
                                           mem->replace < size);
    check_ll("PROD", 1LL << size, mem->prod);
  }
#undef OFF
  MPI_Type_free(&stride2);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
}

/* Dynamic windows: attach, exchange addresses, put, detach. */
static void test_dynamic(void) {
  chk_context("dynamic");
  MPI_Win win;
  check_rc("Win_create_dynamic",
           MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  int buf[4] = {-1, -1, -1, -1};
  check_rc("Win_attach", MPI_Win_attach(win, buf, sizeof buf));
  MPI_Aint addr, *addrs = chk_malloc(sizeof(MPI_Aint) * size);
  MPI_Get_address(buf, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int v[2] = {rank, rank * 2};
  MPI_Win_lock_all(0, win);
  check_rc("Put (dynamic)",
           MPI_Put(v, 2, MPI_INT, right, addrs[right] + sizeof(int), 2,
                   MPI_INT, win));
  MPI_Win_flush(right, win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  check_ll("dynamic put 0", left, buf[1]);
  check_ll("dynamic put 1", 2 * left, buf[2]);
  check_ll("dynamic untouched", -1, buf[0]);
  check_rc("Win_detach", MPI_Win_detach(win, buf));
  free(addrs);
  MPI_Win_free(&win);
}

#ifdef RONDO_MPI
static int g_win_errors = 0;
static void win_handler(MPI_Win* win, int* code, ...) {
  (void)win;
  (void)code;
  ++g_win_errors;
}

/* Bad input: the standard's classes, messages naming what is wrong. */
static void test_errors(void) {
  chk_context("errors");
  int mem[4] = {0, 0, 0, 0};
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                 &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  int v[8] = {0};
  check_error("Put outside an epoch",
              MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC,
              "no access epoch");
  MPI_Win_fence(0, win);
  check_error("Put past the window",
              MPI_Put(v, 2, MPI_INT, 0, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE,
              "target_disp = 3");
  check_error("Put at a negative displacement",
              MPI_Put(v, 1, MPI_INT, 0, -1, 1, MPI_INT, win),
              MPI_ERR_RMA_RANGE, "target_disp = -1");
  check_error("Put to a bad rank",
              MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK,
              "rank =");
  float f = 1;
  check_error("Accumulate with mismatched types",
              MPI_Accumulate(v, 1, MPI_INT, 0, 0, 1, MPI_FLOAT, MPI_SUM, win),
              MPI_ERR_TYPE, "basic type");
  check_error("Accumulate MPI_BAND on float",
              MPI_Accumulate(&f, 1, MPI_FLOAT, 0, 0, 1, MPI_FLOAT, MPI_BAND,
                             win),
              MPI_ERR_OP, "MPI_BAND");
  check_error("Put with mismatched sizes",
              MPI_Put(v, 2, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_TYPE,
              "does not match");
  MPI_Request req;
  check_error("Rput in a fence epoch",
              MPI_Rput(v, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &req),
              MPI_ERR_RMA_SYNC, "passive-target");
  /* A pending put blocks Win_free and a lock. Each rank puts into its own
   * window: puts of several origins to one location in one epoch conflict
   * (MPI-4.1 §12.7, an erroneous program; TSan saw two handlers' memcpy). */
  check_rc("Put (pending)",
           MPI_Put(v, 1, MPI_INT, rank, 0, 1, MPI_INT, win));
  check_error("Win_lock with fence operations pending",
              MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC,
              "fence");
  MPI_Win tmp = win;
  check_error("Win_free with operations pending", MPI_Win_free(&tmp),
              MPI_ERR_RMA_SYNC, "pending");
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  check_error("Put after the closing fence",
              MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC,
              "no access epoch");
  check_error("Win_unlock without a lock", MPI_Win_unlock(0, win),
              MPI_ERR_RMA_SYNC, "not locked");
  check_error("Win_lock with a bad lock type", MPI_Win_lock(7, 0, 0, win),
              MPI_ERR_LOCKTYPE, "lock_type = 7");
  check_error("Win_lock with a bad assert",
              MPI_Win_lock(MPI_LOCK_SHARED, 0, 3, win), MPI_ERR_ASSERT,
              "assert = 3");
  check_rc("lock", MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  check_error("Win_lock twice", MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win),
              MPI_ERR_RMA_SYNC, "already locked");
  check_error("Win_fence inside a lock epoch", MPI_Win_fence(0, win),
              MPI_ERR_RMA_SYNC, "lock");
  if (size > 1)
    check_error("flush of an unlocked rank", MPI_Win_flush(1, win),
                MPI_ERR_RMA_SYNC, "no passive-target epoch");
  check_rc("unlock", MPI_Win_unlock(0, win));
  check_error("Win_complete without start", MPI_Win_complete(win),
              MPI_ERR_RMA_SYNC, "MPI_Win_start");
  check_error("Win_wait without post", MPI_Win_wait(win), MPI_ERR_RMA_SYNC,
              "MPI_Win_post");
  check_error("Win_shared_query on a created window",
              MPI_Win_shared_query(win, 0, NULL, NULL, NULL),
              MPI_ERR_RMA_FLAVOR, "MPI_Win_allocate_shared");
  int dummy_attr = 0, flag = 0;
  check_error("Win_get_attr with a bad key",
              MPI_Win_get_attr(win, 999, &dummy_attr, &flag), MPI_ERR_KEYVAL,
              "win_keyval = 999");
  /* A user handler sees window errors. */
  MPI_Errhandler eh;
  MPI_Win_create_errhandler(win_handler, &eh);
  MPI_Win_set_errhandler(win, eh);
  MPI_Errhandler back;
  MPI_Win_get_errhandler(win, &back);
  check_true("Win_get_errhandler", back == eh);
  MPI_Errhandler_free(&back);
  MPI_Win_unlock(0, win);
  check_ll("user window handler ran", 1, g_win_errors);
  MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
  check_ll("Win_call_errhandler ran it", 2, g_win_errors);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);
  MPI_Win_free(&win);
  /* The target refuses an address outside its memory (a dynamic window
   * with nothing attached there): the origin's flush reports it. */
  MPI_Win dyn;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
  MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
  MPI_Aint nowhere = 0;
  MPI_Get_address(mem, &nowhere);
  check_rc("lock_all (dynamic)", MPI_Win_lock_all(0, dyn));
  check_rc("Put to an unattached address (issued)",
           MPI_Put(v, 1, MPI_INT, (rank + 1) % size, nowhere, 1, MPI_INT,
                   dyn));
  check_error("flush of a put outside the target's memory",
              MPI_Win_flush((rank + 1) % size, dyn), MPI_ERR_RMA_RANGE,
              "outside its exposed memory");
  /* A conflicting lock: an exclusive lock inside the lock_all epoch. */
  check_error("Win_lock exclusive inside lock_all",
              MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, dyn), MPI_ERR_RMA_SYNC,
              "MPI_Win_lock_all");
  check_rc("unlock_all (dynamic)", MPI_Win_unlock_all(dyn));
  MPI_Win_free(&dyn);
  /* Bad constructor arguments. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check_error("Win_create with a negative size",
              MPI_Win_create(mem, -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
              MPI_ERR_SIZE, "size = -4");
  check_error("Win_create with disp_unit 0",
              MPI_Win_create(mem, 4, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
              MPI_ERR_DISP, "disp_unit = 0");
  check_error("Put on MPI_WIN_NULL",
              MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN,
              "MPI_WIN_NULL");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}
#endif

/* Passive target: rank 0 computes without MPI calls while the others lock,
 * put, accumulate and unlock on its window. */
static int test_passive(int expect_progress) {
  chk_context("passive");
  long long* mem;
  MPI_Win win;
  MPI_Win_allocate((size + 1) * sizeof(long long), sizeof(long long),
                   MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i <= size; ++i) mem[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int progressed = 1;
  if (rank == 0) {
    /* The others: size - 1 increments of slot 0 after their puts. */
    const double deadline = now_s() + (expect_progress ? 60.0 : 3.0);
    volatile double x = 1.0;
    while (__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE) < size - 1) {
      for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
      if (now_s() > deadline) {
        progressed = 0;
        break;
      }
    }
    if (expect_progress)
      check_true("the origins' epochs completed while rank 0 computed "
                 "(background progress at the target)",
                 progressed);
    else
      check_true("without progress threads or timer, nothing landed while "
                 "rank 0 computed",
                 !progressed);
  } else {
    long long v = 100 + rank, one = 1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&v, 1, MPI_LONG_LONG, 0, rank, 1, MPI_LONG_LONG, win);
    MPI_Win_unlock(0, win);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM,
                   win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    for (int r = 1; r < size; ++r)
      check_ll("origin's put landed", 100 + r, mem[r]);
  MPI_Win_free(&win);
  return progressed;
}

enum { kRmaThreads = 4, kThreadRounds = 200 };
static MPI_Win g_thread_win;

/* One origin thread of --threads: returns its wrong values. */
static void* rma_thread(void* arg) {
  const int t = *(const int*)arg;
  const int right = (rank + 1) % size;
  const MPI_Aint slot = 1 + (MPI_Aint)rank * kRmaThreads + t;
  long bad = 0;
  long long one = 1, old = -1;
  for (int i = 0; i < kThreadRounds; ++i) {
    bad += MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 0, MPI_SUM,
                            g_thread_win) != MPI_SUCCESS;
    long long v = (long long)(rank * kRmaThreads + t) * 1000 + i, got = -1;
    bad += MPI_Put(&v, 1, MPI_LONG_LONG, right, slot, 1, MPI_LONG_LONG,
                   g_thread_win) != MPI_SUCCESS;
    bad += MPI_Win_flush(right, g_thread_win) != MPI_SUCCESS;
    bad += MPI_Get(&got, 1, MPI_LONG_LONG, right, slot, 1, MPI_LONG_LONG,
                   g_thread_win) != MPI_SUCCESS;
    bad += MPI_Win_flush(right, g_thread_win) != MPI_SUCCESS;
    bad += MPI_Win_flush(0, g_thread_win) != MPI_SUCCESS;
    bad += got != v;
    bad += old < 0 || old >= (long long)size * kRmaThreads * kThreadRounds;
  }
  return (void*)bad;
}

static void test_threads(void) {
  chk_context("threads");
  long long* mem;
  const MPI_Aint n = 1 + (MPI_Aint)size * kRmaThreads;
  check_rc("Win_allocate",
           MPI_Win_allocate(n * (MPI_Aint)sizeof(long long), sizeof(long long),
                            MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                            &g_thread_win));
  for (MPI_Aint i = 0; i < n; ++i) mem[i] = -1;
  mem[0] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  check_rc("lock_all", MPI_Win_lock_all(0, g_thread_win));
  pthread_t th[kRmaThreads];
  int ids[kRmaThreads];
  for (int t = 0; t < kRmaThreads; ++t) {
    ids[t] = t;
    pthread_create(&th[t], NULL, rma_thread, &ids[t]);
  }
  long bad = 0;
  for (int t = 0; t < kRmaThreads; ++t) {
    void* r = NULL;
    pthread_join(th[t], &r);
    bad += (long)r;
  }
  check_rc("unlock_all", MPI_Win_unlock_all(g_thread_win));
  check_ll("threads' wrong values and failed calls", 0, bad);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, g_thread_win);
  const int left = (rank + size - 1) % size;
  for (int t = 0; t < kRmaThreads; ++t)
    check_ll("left's last put per thread",
             (long long)(left * kRmaThreads + t) * 1000 + kThreadRounds - 1,
             mem[1 + left * kRmaThreads + t]);
  if (rank == 0)
    check_ll("fetch-and-op total",
             (long long)size * kRmaThreads * kThreadRounds, mem[0]);
  MPI_Win_unlock(rank, g_thread_win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&g_thread_win);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--threads") == 0) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    chk_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_ll("provided", MPI_THREAD_MULTIPLE, provided);
    if (provided == MPI_THREAD_MULTIPLE) test_threads();
    int code = chk_finish("rma_check");
    MPI_Finalize();
    return code;
  }
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && strcmp(argv[1], "--passive") == 0) {
    test_passive(1);
  } else if (argc > 1 && strcmp(argv[1], "--unfreed") == 0) {
    int* mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &mem, &win);
    int v = rank;
    MPI_Win_lock_all(0, win);
    check_rc("Put", MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT,
                            win));
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    check_ll("put landed", (rank + size - 1) % size, *mem);
  } else if (argc > 1 && strcmp(argv[1], "--passive-no-progress") == 0) {
    test_passive(0);
  } else {
    for (g_allocate = 0; g_allocate < 2; ++g_allocate) {
      test_fence();
      test_datatypes();
      test_pscw();
    }
#ifdef RONDO_MPI
    test_shm_path();
#endif
    for (g_allocate = 0; g_allocate < 2; ++g_allocate) test_atomics_mix();
    test_locks();
    test_lock_all();
    test_attributes();
    test_shared();
    test_dynamic();
#ifdef RONDO_MPI
    test_errors();
#endif
  }
  int code = chk_finish("rma_check");
  MPI_Finalize();
  return code;
}
