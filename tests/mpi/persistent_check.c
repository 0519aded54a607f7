/* persistent_check: persistent point-to-point requests (MPI_Send_init,
 * MPI_Ssend_init, MPI_Rsend_init, MPI_Bsend_init, MPI_Recv_init,
 * MPI_Start, MPI_Startall), on any number of ranks (a ring):
 *   - a ring exchange restarted 40 times with new data each time, eager and
 *     rendezvous sizes, MPI_Startall on a mix of sends and receives;
 *   - inactive requests: the wait and test calls return at once with an
 *     empty status and keep the handle (MPI_Wait, MPI_Test, MPI_Testall,
 *     MPI_Waitany and MPI_Testsome with only inactive requests,
 *     MPI_Request_get_status);
 *   - persistent, matched-probe (MPI_Imrecv) and ordinary requests mixed
 *     in MPI_Waitall, MPI_Waitany and MPI_Testsome;
 *   - synchronous, ready and buffered modes; a derived datatype packed
 *     again at every start; MPI_PROC_NULL;
 *   - MPI_Request_free on an inactive and on an active request (the
 *     message still arrives), MPI_Cancel of a started receive, then a
 *     restart of the same request;
 *   - bad arguments: the error class, and (Rondo) a message naming what
 *     was wrong. */
#include "check.h"

static int me, nranks, left, right;

/* The bad-argument checks: check.h's check_error. */
#define expect check_error

static int value(int rank, int iter, int i) { return rank * 100003 + iter * 1009 + i; }

/* The ring: recv from left, send to right, `n` ints, restarted `iters`
 * times with MPI_Startall (receive first, then send). */
static void t_ring(int n, int iters) {
  chk_context("ring n=%d", n);
  int* sbuf = chk_malloc(sizeof(int) * (size_t)n);
  int* rbuf = chk_malloc(sizeof(int) * (size_t)n);
  MPI_Request req[2];
  check_rc("Recv_init", MPI_Recv_init(rbuf, n, MPI_INT, left, 1,
                                      MPI_COMM_WORLD, &req[0]));
  check_rc("Send_init", MPI_Send_init(sbuf, n, MPI_INT, right, 1,
                                      MPI_COMM_WORLD, &req[1]));
  /* A fresh persistent request is inactive: Wait returns at once. */
  MPI_Status st;
  check_rc("Wait(new inactive)", MPI_Wait(&req[0], &st));
  check_true("new request keeps its handle", req[0] != MPI_REQUEST_NULL);
  int bad = 0;
  for (int it = 0; it < iters; ++it) {
    for (int i = 0; i < n; ++i) sbuf[i] = value(me, it, i);
    for (int i = 0; i < n; ++i) rbuf[i] = -1;
    MPI_Status sts[2];
    check_rc("Startall", MPI_Startall(2, req));
    check_rc("Waitall", MPI_Waitall(2, req, sts));
    for (int i = 0; i < n; ++i)
      if (rbuf[i] != value(left, it, i)) ++bad;
    check_ll("status source", left, sts[0].MPI_SOURCE);
    check_ll("status tag", 1, sts[0].MPI_TAG);
    int count = -1;
    MPI_Get_count(&sts[0], MPI_INT, &count);
    check_ll("count", n, count);
    check_true("handles kept after Waitall",
               req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL);
  }
  check_ll("ring data over all iterations (wrong elements)", 0, bad);

  /* Inactive now: every wait and test call returns at once. */
  chk_context("inactive n=%d", n);
  st.MPI_SOURCE = 12345;
  st.MPI_TAG = 12345;
  check_rc("Wait", MPI_Wait(&req[0], &st));
  check_ll("empty status source", MPI_ANY_SOURCE, st.MPI_SOURCE);
  check_ll("empty status tag", MPI_ANY_TAG, st.MPI_TAG);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  check_ll("empty status count", 0, count);
  int flag = 0;
  check_rc("Test", MPI_Test(&req[1], &flag, MPI_STATUS_IGNORE));
  check_ll("Test flag", 1, flag);
  check_true("Test keeps the handle", req[1] != MPI_REQUEST_NULL);
  flag = 0;
  check_rc("Testall", MPI_Testall(2, req, &flag, MPI_STATUSES_IGNORE));
  check_ll("Testall flag", 1, flag);
  int index = 7;
  check_rc("Waitany", MPI_Waitany(2, req, &index, MPI_STATUS_IGNORE));
  check_ll("Waitany index (no active request)", MPI_UNDEFINED, index);
  int outcount = 7, indices[2];
  check_rc("Testsome", MPI_Testsome(2, req, &outcount, indices,
                                    MPI_STATUSES_IGNORE));
  check_ll("Testsome outcount (no active request)", MPI_UNDEFINED, outcount);
  flag = 0;
  check_rc("Request_get_status",
           MPI_Request_get_status(req[0], &flag, MPI_STATUS_IGNORE));
  check_ll("Request_get_status flag", 1, flag);

  /* Freeing an inactive request. */
  check_rc("Request_free(recv)", MPI_Request_free(&req[0]));
  check_rc("Request_free(send)", MPI_Request_free(&req[1]));
  check_true("freed handles are null",
             req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL);
  free(sbuf);
  free(rbuf);
}

/* Persistent, matched-probe and ordinary requests in one array, completed
 * by Waitall, Waitany and Testsome in turn. */
static void t_mixed(void) {
  enum { kN = 64 };
  int psend[kN], precv[kN], osend[kN], orecv[kN], msend[kN], mrecv[kN];
  MPI_Request pers[2];
  MPI_Recv_init(precv, kN, MPI_INT, left, 2, MPI_COMM_WORLD, &pers[0]);
  MPI_Send_init(psend, kN, MPI_INT, right, 2, MPI_COMM_WORLD, &pers[1]);
  for (int round = 0; round < 3; ++round) {
    const char* how = round == 0 ? "Waitall" : round == 1 ? "Waitany"
                                                           : "Testsome";
    chk_context("mixed %s", how);
    for (int i = 0; i < kN; ++i) {
      psend[i] = value(me, round, i);
      osend[i] = value(me, round + 10, i);
      msend[i] = value(me, round + 20, i);
      precv[i] = orecv[i] = mrecv[i] = -1;
    }
    MPI_Request r[6];
    r[0] = pers[0];
    r[1] = pers[1];
    check_rc("Startall", MPI_Startall(2, r));
    MPI_Irecv(orecv, kN, MPI_INT, left, 3, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(osend, kN, MPI_INT, right, 3, MPI_COMM_WORLD, &r[3]);
    MPI_Isend(msend, kN, MPI_INT, right, 4, MPI_COMM_WORLD, &r[4]);
    MPI_Message msg;
    MPI_Status pst;
    check_rc("Mprobe", MPI_Mprobe(left, 4, MPI_COMM_WORLD, &msg, &pst));
    check_rc("Imrecv", MPI_Imrecv(mrecv, kN, MPI_INT, &msg, &r[5]));
    MPI_Status sts[6];
    if (round == 0) {
      check_rc("Waitall", MPI_Waitall(6, r, sts));
      check_ll("persistent recv source", left, sts[0].MPI_SOURCE);
      check_ll("ordinary recv tag", 3, sts[2].MPI_TAG);
      check_ll("matched recv tag", 4, sts[5].MPI_TAG);
    } else {
      int seen[6] = {0}, done = 0, guard = 0;
      while (done < 6 && guard < 100000000) {
        ++guard;
        if (round == 1) {
          int idx = -1;
          MPI_Status s;
          check_rc("Waitany", MPI_Waitany(6, r, &idx, &s));
          if (idx < 0 || idx >= 6) {
            check_true("Waitany index in range", 0);
            break;
          }
          ++seen[idx];
          ++done;
          if (idx == 0) check_ll("persistent recv source", left, s.MPI_SOURCE);
          if (idx == 5) check_ll("matched recv tag", 4, s.MPI_TAG);
        } else {
          int out = 0, idx[6];
          check_rc("Testsome", MPI_Testsome(6, r, &out, idx, sts));
          if (out == MPI_UNDEFINED) break;
          for (int k = 0; k < out; ++k) {
            ++seen[idx[k]];
            ++done;
          }
        }
      }
      for (int k = 0; k < 6; ++k) check_ll("each request completed once", 1, seen[k]);
      /* All done: the persistent ones are inactive, the others null. */
      int idx = 9;
      check_rc("Waitany after all", MPI_Waitany(6, r, &idx, MPI_STATUS_IGNORE));
      check_ll("Waitany index after all", MPI_UNDEFINED, idx);
    }
    check_true("persistent handles kept",
               r[0] == pers[0] && r[1] == pers[1]);
    check_true("ordinary handles released",
               r[2] == MPI_REQUEST_NULL && r[3] == MPI_REQUEST_NULL &&
                   r[4] == MPI_REQUEST_NULL && r[5] == MPI_REQUEST_NULL);
    int bad = 0;
    for (int i = 0; i < kN; ++i) {
      bad += precv[i] != value(left, round, i);
      bad += orecv[i] != value(left, round + 10, i);
      bad += mrecv[i] != value(left, round + 20, i);
    }
    check_ll("data (wrong elements)", 0, bad);
  }
  MPI_Request_free(&pers[0]);
  MPI_Request_free(&pers[1]);
}

/* Synchronous, ready and buffered modes, and MPI_PROC_NULL. */
static void t_modes(void) {
  chk_context("modes");
  int s = 0, r = -1;
  MPI_Request rq, sq;
  /* Ssend_init */
  MPI_Recv_init(&r, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rq);
  MPI_Ssend_init(&s, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sq);
  for (int it = 0; it < 5; ++it) {
    s = value(me, it, 5);
    MPI_Start(&rq);
    MPI_Start(&sq);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    check_ll("Ssend_init data", value(left, it, 5), r);
  }
  MPI_Request_free(&sq);
  /* Rsend_init: the receive is posted (and a barrier passed) first. */
  MPI_Rsend_init(&s, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sq);
  for (int it = 0; it < 5; ++it) {
    s = value(me, it, 6);
    MPI_Start(&rq);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Start(&sq);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    check_ll("Rsend_init data", value(left, it, 6), r);
  }
  MPI_Request_free(&sq);
  /* Bsend_init: copied at each start. */
  const int bsize = 4 * (MPI_BSEND_OVERHEAD + (int)sizeof(int));
  void* bbuf = chk_malloc((size_t)bsize);
  MPI_Buffer_attach(bbuf, bsize);
  MPI_Bsend_init(&s, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sq);
  for (int it = 0; it < 5; ++it) {
    s = value(me, it, 7);
    MPI_Start(&rq);
    check_rc("Start(Bsend_init)", MPI_Start(&sq));
    s = -7; /* the copy was made: changing the buffer changes nothing */
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    check_ll("Bsend_init data", value(left, it, 7), r);
  }
  MPI_Request_free(&sq);
  MPI_Request_free(&rq);
  void* det;
  int dsize;
  MPI_Buffer_detach(&det, &dsize);
  check_ll("detached size", bsize, dsize);
  free(bbuf);
  /* MPI_PROC_NULL */
  MPI_Status st;
  MPI_Recv_init(&r, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &rq);
  MPI_Send_init(&s, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &sq);
  for (int it = 0; it < 2; ++it) {
    r = 99;
    MPI_Start(&rq);
    MPI_Start(&sq);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, &st);
    check_ll("PROC_NULL recv source", MPI_PROC_NULL, st.MPI_SOURCE);
    check_ll("PROC_NULL recv tag", MPI_ANY_TAG, st.MPI_TAG);
    check_ll("PROC_NULL recv buffer untouched", 99, r);
  }
  MPI_Request_free(&rq);
  MPI_Request_free(&sq);
}

/* A vector type (every other int): packed again at each start, unpacked
 * at each completion. */
static void t_derived(void) {
  chk_context("derived");
  enum { kBlocks = 300 };
  MPI_Datatype vec;
  MPI_Type_vector(kBlocks, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int s[2 * kBlocks], r[2 * kBlocks];
  MPI_Request req[2];
  MPI_Recv_init(r, 1, vec, left, 6, MPI_COMM_WORLD, &req[0]);
  MPI_Send_init(s, 1, vec, right, 6, MPI_COMM_WORLD, &req[1]);
  MPI_Type_free(&vec); /* the requests keep the type */
  int bad = 0;
  for (int it = 0; it < 6; ++it) {
    for (int i = 0; i < 2 * kBlocks; ++i) {
      s[i] = value(me, it, i);
      r[i] = -3;
    }
    MPI_Startall(2, req);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 2 * kBlocks; ++i)
      bad += r[i] != (i % 2 == 0 ? value(left, it, i) : -3);
  }
  check_ll("vector data and holes (wrong elements)", 0, bad);
  MPI_Request_free(&req[0]);
  MPI_Request_free(&req[1]);
}

/* Request_free of an active request; MPI_Cancel of a started receive. */
static void t_free_and_cancel(void) {
  chk_context("free/cancel");
  int s = value(me, 0, 8), r = -1;
  MPI_Request sq;
  MPI_Send_init(&s, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &sq);
  check_rc("Start", MPI_Start(&sq));
  check_rc("Request_free(active)", MPI_Request_free(&sq));
  check_true("freed handle null", sq == MPI_REQUEST_NULL);
  check_rc("Recv", MPI_Recv(&r, 1, MPI_INT, left, 8, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
  check_ll("message of a freed active send", value(left, 0, 8), r);

  MPI_Request rq;
  MPI_Recv_init(&r, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &rq);
  for (int it = 0; it < 2; ++it) {
    r = 55;
    check_rc("Start", MPI_Start(&rq));
    check_rc("Cancel", MPI_Cancel(&rq));
    MPI_Status st;
    check_rc("Wait(cancelled)", MPI_Wait(&rq, &st));
    int flag = 0;
    MPI_Test_cancelled(&st, &flag);
    check_ll("cancelled", 1, flag);
    check_ll("buffer untouched", 55, r);
    check_true("cancelled request keeps its handle", rq != MPI_REQUEST_NULL);
  }
  MPI_Request_free(&rq);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void t_bad_args(void) {
  chk_context("bad arguments");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int x = 0;
  MPI_Request q = MPI_REQUEST_NULL;
  expect("Send_init to a bad rank",
         MPI_Send_init(&x, 1, MPI_INT, nranks + 3, 0, MPI_COMM_WORLD, &q),
         MPI_ERR_RANK, "dest");
  expect("Recv_init with a negative tag",
         MPI_Recv_init(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &q),
         MPI_ERR_TAG, "tag");
  expect("Send_init with a negative count",
         MPI_Send_init(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &q),
         MPI_ERR_COUNT, "count");
#ifdef RONDO_MPI
  /* Open MPI 4.1.4 does not check these (it starts an ordinary request
   * again, or silently ignores the active one). */
  expect("Startall with count -1", MPI_Startall(-1, &q), MPI_ERR_COUNT,
         "count");
  q = MPI_REQUEST_NULL;
  expect("Start(MPI_REQUEST_NULL)", MPI_Start(&q), MPI_ERR_REQUEST,
         "MPI_REQUEST_NULL");
  MPI_Request ord;
  MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &ord);
  expect("Start of an ordinary request", MPI_Start(&ord), MPI_ERR_REQUEST,
         "not a persistent request");
  MPI_Request rq;
  MPI_Recv_init(&x, 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &rq);
  expect("Cancel of an inactive request", MPI_Cancel(&rq), MPI_ERR_REQUEST,
         "inactive");
  MPI_Start(&rq);
  expect("Start of an active request", MPI_Start(&rq), MPI_ERR_REQUEST,
         "already active");
  MPI_Request two[2] = {rq, ord};
  expect("Startall naming the element", MPI_Startall(2, two),
         MPI_ERR_REQUEST, "requests[0]");
  MPI_Cancel(&rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Request_free(&rq);
  MPI_Cancel(&ord);
  MPI_Wait(&ord, MPI_STATUS_IGNORE);
  /* Buffered mode beyond the attached buffer: the start fails, the
   * request stays inactive and can start again once there is room. */
  int big[64];
  for (int i = 0; i < 64; ++i) big[i] = value(me, 9, i);
  const int bsize = MPI_BSEND_OVERHEAD + 16;
  void* bbuf = chk_malloc((size_t)bsize);
  MPI_Request bq;
  check_rc("Bsend_init", MPI_Bsend_init(big, 64, MPI_INT, right, 9,
                                        MPI_COMM_WORLD, &bq));
  expect("Start(Bsend_init) with no buffer", MPI_Start(&bq), MPI_ERR_BUFFER,
         "no buffer is attached");
  MPI_Buffer_attach(bbuf, bsize);
  expect("Start(Bsend_init) beyond the buffer", MPI_Start(&bq),
         MPI_ERR_BUFFER, "bytes");
  int flag = 0;
  check_rc("Test of the refused start", MPI_Test(&bq, &flag, MPI_STATUS_IGNORE));
  check_ll("refused start left it inactive", 1, flag);
  void* det;
  int dsize;
  MPI_Buffer_detach(&det, &dsize);
  free(bbuf);
  const int bsize2 = MPI_BSEND_OVERHEAD + (int)sizeof big + 64;
  bbuf = chk_malloc((size_t)bsize2);
  MPI_Buffer_attach(bbuf, bsize2);
  check_rc("Start(Bsend_init) with room", MPI_Start(&bq));
  MPI_Wait(&bq, MPI_STATUS_IGNORE);
  int got[64];
  MPI_Recv(got, 64, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int bad = 0;
  for (int i = 0; i < 64; ++i) bad += got[i] != value(left, 9, i);
  check_ll("buffered data after a refused start (wrong elements)", 0, bad);
  MPI_Request_free(&bq);
  MPI_Buffer_detach(&det, &dsize);
  free(bbuf);
#endif
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  left = (me + nranks - 1) % nranks;
  right = (me + 1) % nranks;
  t_ring(16, 40);
  t_ring(100000, 10); /* 400 KB: rendezvous */
  t_mixed();
  t_modes();
  t_derived();
  t_free_and_cancel();
  t_bad_args();
  const int rc = chk_finish("persistent_check");
  MPI_Finalize();
  return rc;
}
