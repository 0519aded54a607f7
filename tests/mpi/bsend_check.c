/* bsend_check: buffered sends (MPI_Buffer_attach, MPI_Bsend, MPI_Ibsend,
 * MPI_Buffer_detach, MPI_BSEND_OVERHEAD) as MPI 4.0 specifies them.
 *
 * Ranks pair up (0-1, 2-3, ...; an odd last rank sends to itself):
 *   - three 256 KiB Bsends fit the attached buffer and return before the
 *     receiver has posted anything; a fourth does not fit and gets
 *     MPI_ERR_BUFFER (Rondo's class; Open MPI's is checked as an error),
 *     and the three accepted messages all arrive, in order, with their
 *     data (nothing already accepted is lost);
 *   - a 1 MiB Bsend returns before its receive is posted (the receiver
 *     first waits for a small message sent after it: a send that waited for
 *     its receiver would deadlock);
 *   - an Ibsend's request is complete at once;
 *   - MPI_Buffer_detach gives the buffer back (address and size) once its
 *     messages are sent; then a Bsend gets MPI_ERR_BUFFER;
 *   - bad arguments: a second attach, a negative size.
 * Runs against Rondo and, as the reference, Open MPI. */
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/check.h"

/* 256 KiB messages: above both libraries' eager limits, so a buffered
 * copy stays in the buffer until its receive is posted (an eager message
 * may leave at once and free its space, and then a fourth fits). */
enum { kInts = 1 << 16, kBig = 1 << 18 /* ints: 1 MiB */ };

static int me, nranks;

static int err_class(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
  int peer = me ^ 1;
  if (peer >= nranks) peer = me;
  const int sender = me <= peer, receiver = me >= peer;

  /* Room for exactly three messages of kInts ints. */
  int one = -1;
  MPI_Pack_size(kInts, MPI_INT, w, &one);
  const int size = 3 * (one + MPI_BSEND_OVERHEAD);
  char* buffer = malloc((size_t)size);
  static int msg[4][kInts];
  for (int m = 0; m < 4; ++m)
    for (int i = 0; i < kInts; ++i) msg[m][i] = me * 100000 + m * 1000 + i;

  chk_context("three fit, the fourth does not");
  check_rc("Buffer_attach", MPI_Buffer_attach(buffer, size));
  {
    const int rc = MPI_Buffer_attach(buffer, size);
    check_true("Buffer_attach twice fails", rc != MPI_SUCCESS);
#ifdef RONDO_MPI
    check_ll("Buffer_attach twice: class", MPI_ERR_BUFFER, err_class(rc));
#endif
  }
  if (sender) {
    for (int m = 0; m < 3; ++m)
      check_rc("Bsend within the buffer",
               MPI_Bsend(msg[m], kInts, MPI_INT, peer, 10 + m, w));
    /* The receiver has posted nothing yet (it is in the barrier): the
     * three copies still fill the buffer. */
    check_ll("Bsend beyond the buffer", MPI_ERR_BUFFER,
             err_class(MPI_Bsend(msg[3], kInts, MPI_INT, peer, 13, w)));
  }
  MPI_Barrier(w);
  if (receiver) {
    static int got[kInts];
    for (int m = 0; m < 3; ++m) {
      MPI_Status st;
      memset(got, 0, sizeof got);
      check_rc("Recv of a buffered message",
               MPI_Recv(got, kInts, MPI_INT, peer, 10 + m, w, &st));
      check_ll("first element", peer * 100000 + m * 1000, got[0]);
      check_ll("last element", peer * 100000 + m * 1000 + kInts - 1,
               got[kInts - 1]);
    }
  }
  MPI_Barrier(w);
  if (receiver) {
    int flag = 1;
    MPI_Iprobe(peer, 13, w, &flag, MPI_STATUS_IGNORE);
    check_ll("the refused fourth message was not sent", 0, flag);
  }

  chk_context("Ibsend");
  if (sender) {
    MPI_Request r;
    int flag = 0;
    check_rc("Ibsend", MPI_Ibsend(msg[3], kInts, MPI_INT, peer, 20, w, &r));
    check_rc("Test", MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    check_ll("Ibsend's request is complete at once", 1, flag);
  }
  if (receiver) {
    static int got[kInts];
    check_rc("Recv of the Ibsend",
             MPI_Recv(got, kInts, MPI_INT, peer, 20, w, MPI_STATUS_IGNORE));
    check_ll("Ibsend data", peer * 100000 + 3000 + 7, got[7]);
  }
  check_rc("Bsend to MPI_PROC_NULL",
           MPI_Bsend(msg[0], kInts, MPI_INT, MPI_PROC_NULL, 1, w));

  chk_context("detach");
  void* back = NULL;
  int back_size = -1;
  check_rc("Buffer_detach", MPI_Buffer_detach(&back, &back_size));
  check_true("detach returns the attached address", back == buffer);
  check_ll("detach returns the attached size", size, back_size);
#ifdef RONDO_MPI
  /* Erroneous; Open MPI 4.1 sends it anyway. */
  if (sender)
    check_ll("Bsend with no buffer attached", MPI_ERR_BUFFER,
             err_class(MPI_Bsend(msg[0], kInts, MPI_INT, peer, 30, w)));
#endif
  check_true("Buffer_attach with a negative size fails",
             MPI_Buffer_attach(buffer, -1) != MPI_SUCCESS);
#ifdef RONDO_MPI
  check_ll("Buffer_attach with a negative size: class", MPI_ERR_ARG,
           err_class(MPI_Buffer_attach(buffer, -1)));
#endif
  free(buffer);

  chk_context("a 1 MiB Bsend returns before its receive is posted");
  int big_one = -1;
  MPI_Pack_size(kBig, MPI_INT, w, &big_one);
  const int big_size = big_one + MPI_BSEND_OVERHEAD;
  char* big_buffer = malloc((size_t)big_size);
  int* big = malloc(sizeof(int) * kBig);
  for (int i = 0; i < kBig; ++i) big[i] = i ^ me;
  check_rc("Buffer_attach (1 MiB)", MPI_Buffer_attach(big_buffer, big_size));
  if (sender && peer != me) {
    check_rc("Bsend 1 MiB", MPI_Bsend(big, kBig, MPI_INT, peer, 40, w));
    int go = 1;
    check_rc("Send after it", MPI_Send(&go, 1, MPI_INT, peer, 41, w));
  } else if (receiver && peer != me) {
    int go = 0;
    check_rc("Recv the later message first",
             MPI_Recv(&go, 1, MPI_INT, peer, 41, w, MPI_STATUS_IGNORE));
    int* got = calloc(kBig, sizeof(int));
    check_rc("Recv 1 MiB",
             MPI_Recv(got, kBig, MPI_INT, peer, 40, w, MPI_STATUS_IGNORE));
    check_ll("1 MiB data, element 12345", 12345 ^ peer, got[12345]);
    free(got);
  }
  check_rc("Buffer_detach (1 MiB)", MPI_Buffer_detach(&back, &back_size));
  free(big_buffer);
  free(big);

  const int rc = chk_finish("bsend_check");
  MPI_Finalize();
  return rc;
}
