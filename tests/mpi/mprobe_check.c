/* mprobe_check: matched probe (MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv, MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC), MPI 4.0 semantics.
 *
 * Ranks pair up (0-1, 2-3, ...; an odd last rank talks to itself). The
 * sender sends tag 1 (eager), tag 2 (256 KiB: rendezvous in both
 * libraries) and tag 3 (eager), then tag 4 and tag 5. The receiver:
 *   - MPI_Mprobe(ANY_SOURCE, ANY_TAG) finds tag 1 first (order kept), with
 *     its source and size; MPI_Mrecv gets its data and sets the message to
 *     MPI_MESSAGE_NULL;
 *   - MPI_Improbe finds tag 3; once taken, MPI_Iprobe no longer sees it;
 *   - the 256 KiB message by MPI_Improbe + MPI_Imrecv, completed in one
 *     MPI_Waitall with an ordinary MPI_Irecv (tag 4) and the Imrecv of
 *     tag 3; MPI_Waitany on an Imrecv (tag 5);
 *   - MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC, whose Mrecv is empty;
 *   - bad arguments: a NULL message pointer, MPI_MESSAGE_NULL.
 * Runs against Rondo and, as the reference, Open MPI. */
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/check.h"

enum { kSmall = 16, kLarge = 1 << 16 /* ints: 256 KiB */ };

static int me, nranks;

static void fill(int* v, int n, int tag, int from) {
  for (int i = 0; i < n; ++i) v[i] = from * 1000000 + tag * 10000 + i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  MPI_Comm w;
  MPI_Comm_dup(MPI_COMM_WORLD, &w);
  MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
  int peer = me ^ 1;
  if (peer >= nranks) peer = me;
  const int sender = me <= peer, receiver = me >= peer;

  static int s1[kSmall], s2[kLarge], s3[kSmall], s4[kSmall], s5[kSmall];
  MPI_Request sreq[5];
  if (sender) {
    fill(s1, kSmall, 1, me);
    fill(s2, kLarge, 2, me);
    fill(s3, kSmall, 3, me);
    fill(s4, kSmall, 4, me);
    fill(s5, kSmall, 5, me);
    MPI_Isend(s1, kSmall, MPI_INT, peer, 1, w, &sreq[0]);
    MPI_Isend(s2, kLarge, MPI_INT, peer, 2, w, &sreq[1]);
    MPI_Isend(s3, kSmall, MPI_INT, peer, 3, w, &sreq[2]);
    MPI_Isend(s4, kSmall, MPI_INT, peer, 4, w, &sreq[3]);
    MPI_Isend(s5, kSmall, MPI_INT, peer, 5, w, &sreq[4]);
  }
  if (receiver) {
    chk_context("Mprobe + Mrecv");
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    check_rc("Mprobe", MPI_Mprobe(peer, MPI_ANY_TAG, w, &m, &st));
    check_true("Mprobe gives a message", m != MPI_MESSAGE_NULL);
    check_ll("first message's tag (order kept)", 1, st.MPI_TAG);
    check_ll("its source", peer, st.MPI_SOURCE);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    check_ll("its size", kSmall, n);
    static int r1[kSmall];
    check_rc("Mrecv", MPI_Mrecv(r1, kSmall, MPI_INT, &m, &st));
    check_true("Mrecv sets MPI_MESSAGE_NULL", m == MPI_MESSAGE_NULL);
    check_ll("Mrecv data", peer * 1000000 + 10000 + 7, r1[7]);
    check_ll("Mrecv status tag", 1, st.MPI_TAG);

    chk_context("Improbe takes the message from matching");
    MPI_Message m3 = MPI_MESSAGE_NULL;
    int flag = 0;
    while (!flag)
      check_rc("Improbe(tag 3)", MPI_Improbe(peer, 3, w, &flag, &m3, &st));
    check_ll("Improbe status tag", 3, st.MPI_TAG);
    int seen = 1;
    MPI_Iprobe(peer, 3, w, &seen, MPI_STATUS_IGNORE);
    check_ll("Iprobe no longer sees a probed message", 0, seen);

    chk_context("Imrecv mixed with ordinary requests");
    MPI_Message m2 = MPI_MESSAGE_NULL;
    flag = 0;
    while (!flag)
      check_rc("Improbe(tag 2)", MPI_Improbe(peer, 2, w, &flag, &m2, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    check_ll("large message's size", kLarge, n);
    static int r2[kLarge], r3[kSmall], r4[kSmall], r5[kSmall];
    MPI_Request rq[3];
    MPI_Status sts[3];
    check_rc("Imrecv(tag 2)", MPI_Imrecv(r2, kLarge, MPI_INT, &m2, &rq[0]));
    check_true("Imrecv sets MPI_MESSAGE_NULL", m2 == MPI_MESSAGE_NULL);
    check_rc("Irecv(tag 4)",
             MPI_Irecv(r4, kSmall, MPI_INT, peer, 4, w, &rq[1]));
    check_rc("Imrecv(tag 3)", MPI_Imrecv(r3, kSmall, MPI_INT, &m3, &rq[2]));
    check_rc("Waitall", MPI_Waitall(3, rq, sts));
    check_ll("Imrecv large data", peer * 1000000 + 20000 + 4321, r2[4321]);
    check_ll("Imrecv large status tag", 2, sts[0].MPI_TAG);
    check_ll("Irecv data", peer * 1000000 + 40000 + 3, r4[3]);
    check_ll("Imrecv small data", peer * 1000000 + 30000 + 5, r3[5]);
    check_ll("Imrecv small status source", peer, sts[2].MPI_SOURCE);

    MPI_Message m5 = MPI_MESSAGE_NULL;
    check_rc("Mprobe(tag 5)", MPI_Mprobe(MPI_ANY_SOURCE, 5, w, &m5, &st));
    MPI_Request one;
    int index = -1;
    check_rc("Imrecv(tag 5)", MPI_Imrecv(r5, kSmall, MPI_INT, &m5, &one));
    check_rc("Waitany", MPI_Waitany(1, &one, &index, &st));
    check_ll("Waitany index", 0, index);
    check_ll("Waitany data", peer * 1000000 + 50000 + 9, r5[9]);
  }
  if (sender) MPI_Waitall(5, sreq, MPI_STATUSES_IGNORE);

  chk_context("MPI_PROC_NULL");
  {
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0;
    check_rc("Improbe(MPI_PROC_NULL)",
             MPI_Improbe(MPI_PROC_NULL, 0, w, &flag, &m, &st));
    check_ll("flag", 1, flag);
    check_true("MPI_MESSAGE_NO_PROC", m == MPI_MESSAGE_NO_PROC);
    check_ll("status source", MPI_PROC_NULL, st.MPI_SOURCE);
    int buf[1] = {77};
    check_rc("Mrecv(MPI_MESSAGE_NO_PROC)", MPI_Mrecv(buf, 1, MPI_INT, &m, &st));
    check_true("then MPI_MESSAGE_NULL", m == MPI_MESSAGE_NULL);
    check_ll("status source after", MPI_PROC_NULL, st.MPI_SOURCE);
    check_ll("buffer untouched", 77, buf[0]);
  }

#ifdef RONDO_MPI
  chk_context("bad arguments");
  /* Errors of calls with no communicator argument go to MPI_COMM_WORLD's
   * handler in Rondo (MPI_COMM_SELF's in MPI 4.0's wording): both return. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  {
    int buf[1], ec = -1;
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Error_class(MPI_Mrecv(buf, 1, MPI_INT, &m, MPI_STATUS_IGNORE), &ec);
    check_ll("Mrecv(MPI_MESSAGE_NULL)", MPI_ERR_REQUEST, ec);
    MPI_Error_class(MPI_Mrecv(buf, 1, MPI_INT, NULL, MPI_STATUS_IGNORE), &ec);
    check_ll("Mrecv(NULL message)", MPI_ERR_ARG, ec);
    int flag = 0;
    MPI_Error_class(MPI_Improbe(nranks + 5, 0, w, &flag, &m, MPI_STATUS_IGNORE),
                    &ec);
    check_ll("Improbe from a bad rank", MPI_ERR_RANK, ec);
  }
#endif

  MPI_Comm_free(&w);
  const int rc = chk_finish("mprobe_check");
  MPI_Finalize();
  return rc;
}
