/* request_pool_check: MadMPI's pooled requests (nmad/mpi/internal/
 * handle_pool.h) seen through the MPI API, on 2 ranks (more ranks: the
 * others only take part in the collectives).
 *
 *   stale      a copy of a completed/freed request handle, and garbage
 *              values, get MPI_ERR_REQUEST (MPI_ERRORS_RETURN), never a
 *              crash; the live requests beside them are untouched (the
 *              stale sends are of 4 KiB: a small send that leaves within
 *              MPI_Isend has no pooled request, see "sent");
 *   sent       what an application may do with the handle of a small
 *              MPI_Isend that completed within the call (one handle value
 *              for all, as MPICH's builtin completed requests): test, get
 *              its status, free it, cancel it (not cancelled), wait for it
 *              in arrays beside pending receives, start it (refused); every
 *              message arrives;
 *   growth     3000 receives in flight at once (the pool grows by chunks of
 *              256), every payload checked, twice (the second round reuses
 *              the slots);
 *   free       MPI_Request_free on a receive still in flight: the next
 *              messages arrive normally (the slot is recycled later);
 *   threads    MPI_THREAD_MULTIPLE: 4 threads per rank exchange 8-byte
 *              messages with Isend/Irecv and complete them by MPI_Wait,
 *              MPI_Test loops, MPI_Waitall and MPI_Testany, while a fifth
 *              thread runs nonblocking allreduces on a duplicate of
 *              MPI_COMM_WORLD completed by MPI_Test loops (a collective
 *              must progress through MPI_Test).
 *
 * Uses Rondo's int handles for the garbage values: Rondo only (no Open MPI
 * build). */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define NTHREADS 4
#define ITERS 400
#define GROWTH 3000

static int rank, size, peer;

static void check_stale(void) {
  chk_context("stale");
  if (rank > 1) return;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* 4 KiB: past the small-message path, so each send has a pooled
   * request whose stale copies can be told apart. */
  static int64_t out[512];
  for (int i = 0; i < 512; ++i) out[i] = 1000 + rank + i;
  int64_t in = -1;
  MPI_Request live, r, copy;
  /* A live receive that must survive the bad calls. */
  check_rc("irecv live", MPI_Irecv(&in, 1, MPI_INT64_T, peer, 7,
                                   MPI_COMM_WORLD, &live));
  check_rc("isend", MPI_Isend(out, 512, MPI_INT64_T, peer, 8,
                              MPI_COMM_WORLD, &r));
  copy = r;
  check_rc("wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
  check_true("wait nulls the handle", r == MPI_REQUEST_NULL);
  MPI_Request stale = copy;
  check_ll("wait on a completed handle's copy", MPI_ERR_REQUEST,
           chk_class(MPI_Wait(&stale, MPI_STATUS_IGNORE)));
  int flag = -1;
  stale = copy;
  check_ll("test on a completed handle's copy", MPI_ERR_REQUEST,
           chk_class(MPI_Test(&stale, &flag, MPI_STATUS_IGNORE)));
  stale = copy;
  check_ll("free of a completed handle's copy", MPI_ERR_REQUEST,
           chk_class(MPI_Request_free(&stale)));
  stale = copy;
  check_ll("cancel of a completed handle's copy", MPI_ERR_REQUEST,
           chk_class(MPI_Cancel(&stale)));
  MPI_Request arr[2] = {MPI_REQUEST_NULL, copy};
  check_ll("waitall with a completed handle's copy", MPI_ERR_REQUEST,
           chk_class(MPI_Waitall(2, arr, MPI_STATUSES_IGNORE)));
  /* Garbage values: never a crash. */
  const MPI_Request garbage[] = {-1, 2, 12345, 0x7fffffff, (MPI_Request)0x80000001,
                                 (1 << 20) | 4095, copy ^ (1 << 27)};
  for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; ++i) {
    MPI_Request g = garbage[i];
    check_ll("wait on a garbage handle", MPI_ERR_REQUEST,
             chk_class(MPI_Wait(&g, MPI_STATUS_IGNORE)));
    g = garbage[i];
    check_ll("test on a garbage handle", MPI_ERR_REQUEST,
             chk_class(MPI_Test(&g, &flag, MPI_STATUS_IGNORE)));
  }
  /* The freed request's slot is reused for the next one: the old copy
   * stays invalid even then. */
  MPI_Request next;
  check_rc("isend next", MPI_Isend(out, 512, MPI_INT64_T, peer, 9,
                                   MPI_COMM_WORLD, &next));
  stale = copy;
  check_ll("old copy after the slot's reuse", MPI_ERR_REQUEST,
           chk_class(MPI_Test(&stale, &flag, MPI_STATUS_IGNORE)));
  check_rc("wait next", MPI_Wait(&next, MPI_STATUS_IGNORE));
  /* The peer sends tag 7 once it has our tags 8 and 9. */
  static int64_t got8[512], got9[512];
  check_rc("recv 8", MPI_Recv(got8, 512, MPI_INT64_T, peer, 8,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  check_rc("recv 9", MPI_Recv(got9, 512, MPI_INT64_T, peer, 9,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  check_ll("payload 8", 1000 + peer + 511, got8[511]);
  check_ll("payload 9", 1000 + peer + 511, got9[511]);
  int64_t seven = 2000 + rank;
  check_rc("send 7", MPI_Send(&seven, 1, MPI_INT64_T, peer, 7,
                              MPI_COMM_WORLD));
  check_rc("wait live", MPI_Wait(&live, MPI_STATUS_IGNORE));
  check_ll("live receive's payload", 2000 + peer, in);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void check_sent(void) {
  chk_context("sent");
  if (rank > 1) return;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int64_t out[6], in[6];
  MPI_Request s[6], copy;
  for (int i = 0; i < 6; ++i) {
    out[i] = 100 * rank + i;
    in[i] = -1;
  }
  int flag = 0;
  MPI_Status st;
  /* Test completes it; a copy may still ask for its status, then free it. */
  check_rc("isend 0", MPI_Isend(&out[0], 1, MPI_INT64_T, peer, 20,
                                MPI_COMM_WORLD, &s[0]));
  check_true("isend 0 gives a handle", s[0] != MPI_REQUEST_NULL);
  copy = s[0];
  check_rc("test 0", MPI_Test(&s[0], &flag, &st));
  check_true("test 0 completes it", flag == 1 && s[0] == MPI_REQUEST_NULL);
  check_ll("send status error", MPI_SUCCESS, st.MPI_ERROR);
  /* Cancel: a send that completed is not cancelled. */
  check_rc("isend 1", MPI_Isend(&out[1], 1, MPI_INT64_T, peer, 21,
                                MPI_COMM_WORLD, &s[1]));
  check_rc("cancel 1", MPI_Cancel(&s[1]));
  check_rc("wait 1", MPI_Wait(&s[1], &st));
  check_rc("test_cancelled", MPI_Test_cancelled(&st, &flag));
  check_ll("send 1 not cancelled", 0, flag);
  /* Start: not a persistent request. */
  check_rc("isend 2", MPI_Isend(&out[2], 1, MPI_INT64_T, peer, 22,
                                MPI_COMM_WORLD, &s[2]));
  MPI_Request started = s[2];
  check_ll("start a completed send", MPI_ERR_REQUEST,
           chk_class(MPI_Start(&started)));
  check_rc("free 2", MPI_Request_free(&s[2]));
  check_true("free nulls it", s[2] == MPI_REQUEST_NULL);
  /* Beside receives in Waitany/Waitsome/Waitall. */
  MPI_Request mix[4];
  check_rc("irecv 20", MPI_Irecv(&in[0], 1, MPI_INT64_T, peer, 20,
                                 MPI_COMM_WORLD, &mix[0]));
  check_rc("isend 3", MPI_Isend(&out[3], 1, MPI_INT64_T, peer, 23,
                                MPI_COMM_WORLD, &mix[1]));
  check_rc("irecv 21", MPI_Irecv(&in[1], 1, MPI_INT64_T, peer, 21,
                                 MPI_COMM_WORLD, &mix[2]));
  check_rc("isend 4", MPI_Isend(&out[4], 1, MPI_INT64_T, peer, 24,
                                MPI_COMM_WORLD, &mix[3]));
  int index = -1, outcount = 0, indices[4];
  check_rc("waitany", MPI_Waitany(4, mix, &index, MPI_STATUS_IGNORE));
  check_true("waitany completes one", index >= 0 && index < 4 &&
                                          mix[index] == MPI_REQUEST_NULL);
  check_rc("waitsome", MPI_Waitsome(4, mix, &outcount, indices,
                                    MPI_STATUSES_IGNORE));
  check_true("waitsome completes some", outcount >= 1);
  check_rc("waitall", MPI_Waitall(4, mix, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 4; ++i)
    check_true("all completed", mix[i] == MPI_REQUEST_NULL);
  /* Testall: all complete at once, every handle nulled. */
  MPI_Request two[2];
  int64_t extra[2] = {7 + rank, 8 + rank}, got_extra[2] = {-1, -1};
  check_rc("isend 26", MPI_Isend(&extra[0], 1, MPI_INT64_T, peer, 26,
                                 MPI_COMM_WORLD, &two[0]));
  check_rc("isend 27", MPI_Isend(&extra[1], 1, MPI_INT64_T, peer, 27,
                                 MPI_COMM_WORLD, &two[1]));
  flag = 0;
  while (!flag)
    check_rc("testall", MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE));
  check_true("testall nulls the handles",
             two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL);
  /* MPI_Send and a free of the copy taken above. */
  check_rc("send 5", MPI_Send(&out[5], 1, MPI_INT64_T, peer, 25,
                              MPI_COMM_WORLD));
  /* Both sends left within MPI_Isend (the same handle): the copy is still
   * a completed send's handle. (With a progress thread holding the rail a
   * send may take a pooled request instead; its copy is stale then.) */
  if (copy == started) {
    check_rc("get_status of the copy",
             MPI_Request_get_status(copy, &flag, MPI_STATUS_IGNORE));
    check_ll("a completed send's status is there", 1, flag);
    check_true("f2c keeps a completed send's handle",
               MPI_Request_f2c(MPI_Request_c2f(copy)) == copy);
    check_rc("free the copy", MPI_Request_free(&copy));
    check_true("free nulls the copy", copy == MPI_REQUEST_NULL);
  }
  /* Everything arrived, in order per tag. */
  for (int i = 2; i < 6; ++i)
    check_rc("recv", MPI_Recv(&in[i], 1, MPI_INT64_T, peer, 20 + i,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int i = 0; i < 6; ++i) check_ll("payload", 100 * peer + i, in[i]);
  check_rc("recv 26", MPI_Recv(&got_extra[0], 1, MPI_INT64_T, peer, 26,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  check_rc("recv 27", MPI_Recv(&got_extra[1], 1, MPI_INT64_T, peer, 27,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  check_ll("payload 26", 7 + peer, got_extra[0]);
  check_ll("payload 27", 8 + peer, got_extra[1]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void check_growth(void) {
  if (rank > 1) return;
  int64_t* in = chk_malloc(sizeof(int64_t) * GROWTH);
  int64_t* out = chk_malloc(sizeof(int64_t) * GROWTH);
  MPI_Request* rq = chk_malloc(sizeof(MPI_Request) * GROWTH * 2);
  for (int round = 0; round < 2; ++round) {
    chk_context("growth round %d", round);
    for (int i = 0; i < GROWTH; ++i) {
      in[i] = -1;
      out[i] = (int64_t)rank * 1000000 + round * 100000 + i;
      check_rc("irecv", MPI_Irecv(&in[i], 1, MPI_INT64_T, peer, i,
                                  MPI_COMM_WORLD, &rq[i]));
    }
    for (int i = 0; i < GROWTH; ++i)
      check_rc("isend", MPI_Isend(&out[i], 1, MPI_INT64_T, peer, i,
                                  MPI_COMM_WORLD, &rq[GROWTH + i]));
    /* Every receive's handle distinct while in flight; the sends' not
     * null (small sends that left within MPI_Isend share one handle). */
    int distinct = 1;
    for (int i = 1; i < GROWTH && distinct; ++i)
      distinct = rq[i] != rq[i - 1] && rq[i] != MPI_REQUEST_NULL;
    for (int i = GROWTH; i < 2 * GROWTH && distinct; ++i)
      distinct = rq[i] != MPI_REQUEST_NULL && rq[i] != rq[GROWTH - 1];
    check_true("handles distinct and not null", distinct);
    check_rc("waitall", MPI_Waitall(2 * GROWTH, rq, MPI_STATUSES_IGNORE));
    int bad = 0;
    for (int i = 0; i < GROWTH; ++i)
      bad += in[i] != (int64_t)peer * 1000000 + round * 100000 + i;
    check_ll("payloads wrong", 0, bad);
    int nulls = 0;
    for (int i = 0; i < 2 * GROWTH; ++i) nulls += rq[i] == MPI_REQUEST_NULL;
    check_ll("handles nulled by waitall", 2 * GROWTH, nulls);
  }
  free(in);
  free(out);
  free(rq);
}

static void check_free(void) {
  chk_context("free");
  if (rank > 1) return;
  static int64_t lost = -1;  /* written whenever the freed receive lands */
  int64_t after = -1, out = 3000 + rank;
  MPI_Request r;
  check_rc("irecv", MPI_Irecv(&lost, 1, MPI_INT64_T, peer, 20,
                              MPI_COMM_WORLD, &r));
  check_rc("request_free", MPI_Request_free(&r));
  check_true("free nulls the handle", r == MPI_REQUEST_NULL);
  check_rc("send 20", MPI_Send(&out, 1, MPI_INT64_T, peer, 20,
                               MPI_COMM_WORLD));
  check_rc("send 21", MPI_Send(&out, 1, MPI_INT64_T, peer, 21,
                               MPI_COMM_WORLD));
  check_rc("recv 21", MPI_Recv(&after, 1, MPI_INT64_T, peer, 21,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  check_ll("message after the freed receive", 3000 + peer, after);
  /* A second free: reaps the first if it completed meanwhile. */
  MPI_Request s;
  check_rc("isend", MPI_Isend(&out, 1, MPI_INT64_T, peer, 22, MPI_COMM_WORLD,
                              &s));
  check_rc("request_free send", MPI_Request_free(&s));
  int64_t got = -1;
  check_rc("recv 22", MPI_Recv(&got, 1, MPI_INT64_T, peer, 22,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  check_ll("freed send's payload", 3000 + peer, got);
}

struct thread_arg {
  int t;
  long long fails;
  long long checks;
};

/* Payload of message i of thread t from rank r. */
static int64_t payload(int r, int t, int i) {
  return ((int64_t)r << 40) | ((int64_t)t << 32) | i;
}

static void* p2p_thread(void* p) {
  struct thread_arg* a = p;
  const int t = a->t;
  for (int i = 0; i < ITERS; ++i) {
    int64_t in[2] = {-1, -1}, out[2] = {payload(rank, t, i),
                                        payload(rank, t, i + ITERS)};
    MPI_Request rq[4];
    int rc = MPI_SUCCESS;
    rc |= MPI_Irecv(&in[0], 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD, &rq[0]);
    rc |= MPI_Irecv(&in[1], 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD, &rq[1]);
    rc |= MPI_Isend(&out[0], 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD, &rq[2]);
    rc |= MPI_Isend(&out[1], 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD, &rq[3]);
    switch (i % 4) {
      case 0:
        for (int k = 0; k < 4; ++k) rc |= MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
        break;
      case 1:
        for (int k = 0; k < 4; ++k) {
          int flag = 0;
          while (!flag && rc == MPI_SUCCESS) {
            rc |= MPI_Test(&rq[k], &flag, MPI_STATUS_IGNORE);
            if (!flag) sched_yield();  /* 10 threads on 2 cores */
          }
        }
        break;
      case 2:
        rc |= MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        break;
      default:
        for (int left = 4; left > 0 && rc == MPI_SUCCESS;) {
          int idx, flag = 0;
          rc |= MPI_Testany(4, rq, &idx, &flag, MPI_STATUS_IGNORE);
          if (flag && idx != MPI_UNDEFINED) --left;
          else sched_yield();
        }
        break;
    }
    a->checks += 4;
    a->fails += rc != MPI_SUCCESS;
    /* Same source, tag and communicator: in order. */
    a->fails += in[0] != payload(peer, t, i);
    a->fails += in[1] != payload(peer, t, i + ITERS);
    for (int k = 0; k < 4; ++k) a->fails += rq[k] != MPI_REQUEST_NULL;
  }
  return NULL;
}

static MPI_Comm coll_comm;

static void* coll_thread(void* p) {
  struct thread_arg* a = p;
  for (int i = 0; i < 200; ++i) {
    int64_t in = rank + i, out = -1;
    MPI_Request r;
    int rc = MPI_Iallreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, coll_comm,
                            &r);
    int flag = 0;
    while (!flag && rc == MPI_SUCCESS) {
      rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      if (!flag) sched_yield();
    }
    a->checks += 2;
    a->fails += rc != MPI_SUCCESS;
    a->fails += out != (int64_t)size * (size - 1) / 2 + (int64_t)size * i;
  }
  return NULL;
}

static void check_threads(int provided) {
  chk_context("threads");
  if (!check_ll("thread level", MPI_THREAD_MULTIPLE, provided)) return;
  MPI_Comm_dup(MPI_COMM_WORLD, &coll_comm);
  pthread_t th[NTHREADS + 1];
  struct thread_arg args[NTHREADS + 1];
  const int n = rank > 1 ? 0 : NTHREADS;  /* ranks > 1: collectives only */
  for (int t = 0; t <= NTHREADS; ++t) args[t] = (struct thread_arg){t, 0, 0};
  for (int t = 0; t < n; ++t)
    pthread_create(&th[t], NULL, p2p_thread, &args[t]);
  pthread_create(&th[NTHREADS], NULL, coll_thread, &args[NTHREADS]);
  for (int t = 0; t < n; ++t) pthread_join(th[t], NULL);
  pthread_join(th[NTHREADS], NULL);
  for (int t = 0; t <= NTHREADS; ++t) {
    char what[64];
    snprintf(what, sizeof what, "thread %d failures", t);
    check_ll(what, 0, args[t].fails);
    chk_checks += args[t].checks;
  }
  MPI_Comm_free(&coll_comm);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) printf("request_pool_check: needs at least 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  peer = rank == 0 ? 1 : rank == 1 ? 0 : MPI_PROC_NULL;
  check_stale();
  MPI_Barrier(MPI_COMM_WORLD);
  check_sent();
  MPI_Barrier(MPI_COMM_WORLD);
  check_growth();
  MPI_Barrier(MPI_COMM_WORLD);
  check_free();
  MPI_Barrier(MPI_COMM_WORLD);
  check_threads(provided);
  const int rc = chk_finish("request_pool_check");
  MPI_Finalize();
  return rc;
}
