/* errors_check: error handlers, error classes and strings, and the errors
 * of bad arguments, with MPI_ERRORS_RETURN.
 *
 *   errors_check
 *
 * First: MPI_ERRORS_ARE_FATAL is the default on MPI_COMM_WORLD and
 * MPI_COMM_SELF; MPI_Error_class of every class constant is itself;
 * MPI_Error_string of each (and of MPI_SUCCESS) is a non-empty string. Then
 * MPI_ERRORS_RETURN is set on MPI_COMM_WORLD and each bad call must return
 * an error of the standard's class with a non-empty MPI_Error_string; with
 * Rondo (RONDO_MPI) the string must also name the bad argument. Every rank
 * makes the same bad calls, so the erroneous collectives fail alike
 * everywhere without communicating. Handles that are not handles at all
 * ((MPI_Comm)12345, a freed request) are only tried with Rondo: Open MPI's
 * handles are pointers, and it dereferences them.
 *
 * Where Open MPI 4.1.4 does not check (NULL buffers in collectives) the
 * check is Rondo-only; each such place says so. */
#include <limits.h>

#include "check.h"

static int me, nranks;

/* rc must be an error of class `cls`; its string non-empty and, with
 * Rondo, containing `word`. */
static void expect(const char* what, int rc, int cls, const char* word) {
  char w[200];
  snprintf(w, sizeof w, "%s: error class", what);
  check_ll(w, cls, chk_class(rc));
  char msg[MPI_MAX_ERROR_STRING];
  int len = -1;
  msg[0] = 0;
  MPI_Error_string(rc, msg, &len);
  snprintf(w, sizeof w, "%s: MPI_Error_string non-empty", what);
  check_true(w, len > 0 && msg[0] != 0 && (int)strlen(msg) == len);
#ifdef RONDO_MPI
  snprintf(w, sizeof w, "%s: message \"%s\" names \"%s\"", what, msg, word);
  check_true(w, strstr(msg, word) != NULL);
#else
  (void)word;
#endif
}

static void t_classes(void) {
  chk_context("classes");
  const int classes[] = {
      MPI_SUCCESS,       MPI_ERR_BUFFER,       MPI_ERR_COUNT,       MPI_ERR_TYPE,
      MPI_ERR_TAG,       MPI_ERR_COMM,         MPI_ERR_RANK,        MPI_ERR_REQUEST,
      MPI_ERR_ROOT,      MPI_ERR_GROUP,        MPI_ERR_OP,          MPI_ERR_TOPOLOGY,
      MPI_ERR_DIMS,      MPI_ERR_ARG,          MPI_ERR_UNKNOWN,     MPI_ERR_TRUNCATE,
      MPI_ERR_OTHER,     MPI_ERR_INTERN,       MPI_ERR_IN_STATUS,   MPI_ERR_PENDING,
      MPI_ERR_KEYVAL,    MPI_ERR_NO_MEM,       MPI_ERR_BASE,        MPI_ERR_INFO_KEY,
      MPI_ERR_INFO_VALUE, MPI_ERR_INFO_NOKEY,  MPI_ERR_SPAWN,       MPI_ERR_PORT,
      MPI_ERR_SERVICE,   MPI_ERR_NAME,         MPI_ERR_WIN,         MPI_ERR_SIZE,
      MPI_ERR_DISP,      MPI_ERR_INFO,         MPI_ERR_LOCKTYPE,    MPI_ERR_ASSERT,
      MPI_ERR_RMA_CONFLICT, MPI_ERR_RMA_SYNC,  MPI_ERR_UNSUPPORTED_OPERATION,
      MPI_ERR_RMA_RANGE, MPI_ERR_RMA_ATTACH,   MPI_ERR_RMA_SHARED,  MPI_ERR_RMA_FLAVOR,
#ifdef MPI_ERR_SESSION /* MPI-4 (not in Open MPI 4.1.4) */
      MPI_ERR_SESSION,
#endif
  };
  const char* names[] = {
      "MPI_SUCCESS",       "MPI_ERR_BUFFER",       "MPI_ERR_COUNT",     "MPI_ERR_TYPE",
      "MPI_ERR_TAG",       "MPI_ERR_COMM",         "MPI_ERR_RANK",      "MPI_ERR_REQUEST",
      "MPI_ERR_ROOT",      "MPI_ERR_GROUP",        "MPI_ERR_OP",        "MPI_ERR_TOPOLOGY",
      "MPI_ERR_DIMS",      "MPI_ERR_ARG",          "MPI_ERR_UNKNOWN",   "MPI_ERR_TRUNCATE",
      "MPI_ERR_OTHER",     "MPI_ERR_INTERN",       "MPI_ERR_IN_STATUS", "MPI_ERR_PENDING",
      "MPI_ERR_KEYVAL",    "MPI_ERR_NO_MEM",       "MPI_ERR_BASE",      "MPI_ERR_INFO_KEY",
      "MPI_ERR_INFO_VALUE", "MPI_ERR_INFO_NOKEY",  "MPI_ERR_SPAWN",     "MPI_ERR_PORT",
      "MPI_ERR_SERVICE",   "MPI_ERR_NAME",         "MPI_ERR_WIN",       "MPI_ERR_SIZE",
      "MPI_ERR_DISP",      "MPI_ERR_INFO",         "MPI_ERR_LOCKTYPE",  "MPI_ERR_ASSERT",
      "MPI_ERR_RMA_CONFLICT", "MPI_ERR_RMA_SYNC",  "MPI_ERR_UNSUPPORTED_OPERATION",
      "MPI_ERR_RMA_RANGE", "MPI_ERR_RMA_ATTACH",   "MPI_ERR_RMA_SHARED", "MPI_ERR_RMA_FLAVOR",
#ifdef MPI_ERR_SESSION
      "MPI_ERR_SESSION",
#endif
  };
  int n = (int)(sizeof classes / sizeof classes[0]);
  for (int i = 0; i < n; ++i) {
    char w[120];
    snprintf(w, sizeof w, "Error_class(%s)", names[i]);
    check_ll(w, classes[i], chk_class(classes[i]));
    snprintf(w, sizeof w, "%s <= MPI_ERR_LASTCODE", names[i]);
    check_true(w, classes[i] <= MPI_ERR_LASTCODE);
    char msg[MPI_MAX_ERROR_STRING];
    int len = -1;
    msg[0] = 0;
    snprintf(w, sizeof w, "Error_string(%s) non-empty", names[i]);
    MPI_Error_string(classes[i], msg, &len);
    check_true(w, len > 0 && msg[0] != 0 && (int)strlen(msg) == len);
    for (int j = 0; j < i; ++j) {
      if (classes[j] == classes[i]) {
        snprintf(w, sizeof w, "%s distinct from %s", names[i], names[j]);
        check_true(w, 0);
      }
    }
  }
  check_ll("MPI_SUCCESS is 0", 0, MPI_SUCCESS);
}

static int handler_calls, handler_code, handler_comm_ok;
static MPI_Comm handler_expected_comm;
static void my_handler(MPI_Comm* comm, int* code, ...) {
  ++handler_calls;
  handler_code = *code;
  handler_comm_ok = *comm == handler_expected_comm;
}

static void t_handlers(void) {
  chk_context("error handlers");
  MPI_Errhandler eh;
  /* After MPI_ERRORS_RETURN was set on MPI_COMM_WORLD: */
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  check_true("get_errhandler(world) after set is MPI_ERRORS_RETURN", eh == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);
  /* A dup inherits it. */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_get_errhandler(dup, &eh);
  check_true("dup inherits MPI_ERRORS_RETURN", eh == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);
  /* A user handler sees the communicator and the code; the call then
   * returns the code. */
  MPI_Errhandler mine;
  check_rc("Comm_create_errhandler", MPI_Comm_create_errhandler(my_handler, &mine));
  check_rc("Comm_set_errhandler(user)", MPI_Comm_set_errhandler(dup, mine));
  handler_expected_comm = dup;
  handler_calls = 0;
  int buf[1] = {0};
  int rc = MPI_Send(buf, 1, MPI_INT, nranks + 3, 0, dup);
  check_ll("user handler called once", 1, handler_calls);
  check_true("user handler got the communicator", handler_comm_ok);
  check_ll("user handler code class", MPI_ERR_RANK, chk_class(handler_code));
  check_ll("call returns the handler's code class", MPI_ERR_RANK, chk_class(rc));
  handler_calls = 0;
  MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
  check_ll("Comm_call_errhandler calls the handler", 1, handler_calls);
  check_ll("Comm_call_errhandler passes the code", MPI_ERR_OTHER, handler_code);
  MPI_Comm_get_errhandler(dup, &eh);
  check_true("get_errhandler returns the user handler", eh == mine);
  MPI_Errhandler_free(&eh);
  check_rc("Errhandler_free", MPI_Errhandler_free(&mine));
  check_true("Errhandler_free sets MPI_ERRHANDLER_NULL", mine == MPI_ERRHANDLER_NULL);
  /* Still attached to dup (freed handlers live while in use). */
  handler_calls = 0;
  rc = MPI_Send(buf, 1, MPI_INT, -5, 0, dup);
  check_ll("freed but attached handler still called", 1, handler_calls);
  MPI_Comm_free(&dup);
}

static void t_bad_args(void) {
  chk_context("bad arguments");
  int buf[8] = {0};
  int* ub = NULL;
  int flag = 0;
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Comm_get_attr(w, MPI_TAG_UB, &ub, &flag);

  /* Ranks. */
  expect("Send dest=size", MPI_Send(buf, 1, MPI_INT, nranks, 0, w), MPI_ERR_RANK, "dest");
  expect("Send dest=-5", MPI_Send(buf, 1, MPI_INT, -5, 0, w), MPI_ERR_RANK, "dest");
  MPI_Request r = MPI_REQUEST_NULL;
  expect("Isend dest=size", MPI_Isend(buf, 1, MPI_INT, nranks, 0, w, &r), MPI_ERR_RANK,
         "dest");
  expect("Recv source=size",
         MPI_Recv(buf, 1, MPI_INT, nranks, 0, w, MPI_STATUS_IGNORE), MPI_ERR_RANK,
         "source");
  expect("Recv source=-5", MPI_Recv(buf, 1, MPI_INT, -5, 0, w, MPI_STATUS_IGNORE),
         MPI_ERR_RANK, "source");

  /* Counts. */
  expect("Send count=-1", MPI_Send(buf, -1, MPI_INT, me, 0, w), MPI_ERR_COUNT, "count");
  expect("Recv count=-1", MPI_Recv(buf, -1, MPI_INT, me, 0, w, MPI_STATUS_IGNORE),
         MPI_ERR_COUNT, "count");
  expect("Bcast count=-1", MPI_Bcast(buf, -1, MPI_INT, 0, w), MPI_ERR_COUNT, "count");
  expect("Allreduce count=-1", MPI_Allreduce(buf, buf + 4, -1, MPI_INT, MPI_SUM, w),
         MPI_ERR_COUNT, "count");

  /* Buffers. */
  expect("Send NULL buf count=4", MPI_Send(NULL, 4, MPI_INT, me, 0, w), MPI_ERR_BUFFER,
         "buf");
  expect("Recv NULL buf count=4", MPI_Recv(NULL, 4, MPI_INT, me, 0, w, MPI_STATUS_IGNORE),
         MPI_ERR_BUFFER, "buf");
#ifdef RONDO_MPI
  /* Open MPI 4.1.4 does not check collective buffers: MPI_Bcast(NULL, 4,
   * MPI_INT) crashes in the copy. Rondo checks. */
  expect("Bcast NULL buf count=4", MPI_Bcast(NULL, 4, MPI_INT, 0, w), MPI_ERR_BUFFER,
         "buf");
  expect("Allreduce NULL sendbuf", MPI_Allreduce(NULL, buf, 4, MPI_INT, MPI_SUM, w),
         MPI_ERR_BUFFER, "buf");
#endif

  /* Datatypes. */
  expect("Send MPI_DATATYPE_NULL", MPI_Send(buf, 1, MPI_DATATYPE_NULL, me, 0, w),
         MPI_ERR_TYPE, "datatype");
  expect("Bcast MPI_DATATYPE_NULL", MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, w),
         MPI_ERR_TYPE, "datatype");
  {
    MPI_Request rq = MPI_REQUEST_NULL;
    expect("Irecv MPI_DATATYPE_NULL count=1",
           MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, me, 0, w, &rq), MPI_ERR_TYPE,
           "datatype");
    check_true("no request from a refused Irecv", rq == MPI_REQUEST_NULL);
  }
#ifdef RONDO_MPI
  /* With count 0, MPI_DATATYPE_NULL describes nothing: accepted in
   * point-to-point calls as MPICH does (Open MPI refuses it). */
  {
    MPI_Request rq[2];
    MPI_Status sts[2];
    check_rc("Irecv count=0 MPI_DATATYPE_NULL",
             MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, me, 556, w, &rq[0]));
    check_rc("Isend count=0 MPI_DATATYPE_NULL",
             MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, me, 556, w, &rq[1]));
    check_rc("Waitall of the empty messages", MPI_Waitall(2, rq, sts));
    int c = -1;
    MPI_Get_count(&sts[0], MPI_BYTE, &c);
    check_ll("received bytes of the empty message", 0, c);
    check_ll("source of the empty message", me, sts[0].MPI_SOURCE);
    check_ll("tag of the empty message", 556, sts[0].MPI_TAG);
    MPI_Status s1;
    check_rc("Sendrecv count=0 MPI_DATATYPE_NULL",
             MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, me, 557, NULL, 0,
                          MPI_DATATYPE_NULL, me, 557, w, &s1));
  }
#endif
  MPI_Datatype unc;
  MPI_Type_contiguous(2, MPI_INT, &unc);
  expect("Send uncommitted datatype", MPI_Send(buf, 1, unc, me, 555, w), MPI_ERR_TYPE,
         "datatype");
  MPI_Type_free(&unc);
#ifdef RONDO_MPI
  expect("Send unknown datatype handle", MPI_Send(buf, 1, (MPI_Datatype)12345, me, 0, w),
         MPI_ERR_TYPE, "datatype");
  expect("Allreduce unknown datatype handle",
         MPI_Allreduce(buf, buf + 4, 1, (MPI_Datatype)12345, MPI_SUM, w), MPI_ERR_TYPE,
         "datatype");
#endif

  /* Ops. */
  expect("Allreduce MPI_OP_NULL", MPI_Allreduce(buf, buf + 4, 1, MPI_INT, MPI_OP_NULL, w),
         MPI_ERR_OP, "op");
  expect("Reduce MPI_OP_NULL", MPI_Reduce(buf, buf + 4, 1, MPI_INT, MPI_OP_NULL, 0, w),
         MPI_ERR_OP, "op");
  double d = 1, e = 0;
  expect("Allreduce MPI_BAND on MPI_DOUBLE",
         MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, w), MPI_ERR_OP, "op");
  /* The char types take the C integer ops (Open MPI and MPICH accept
   * MPI_CHAR too, Rondo as an extension) but not MAXLOC/MINLOC, which need
   * a pair type; MPI_WCHAR is text for all three. The message names the op
   * and the type. */
  char ch[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  expect("Allreduce MPI_MAXLOC on MPI_CHAR (op)",
         MPI_Allreduce(ch, ch + 4, 2, MPI_CHAR, MPI_MAXLOC, w), MPI_ERR_OP, "MPI_MAXLOC");
  expect("Allreduce MPI_MAXLOC on MPI_CHAR (type)",
         MPI_Allreduce(ch, ch + 4, 2, MPI_CHAR, MPI_MAXLOC, w), MPI_ERR_OP, "MPI_CHAR");
  expect("Reduce MPI_MINLOC on MPI_UNSIGNED_CHAR",
         MPI_Reduce(ch, ch + 4, 2, MPI_UNSIGNED_CHAR, MPI_MINLOC, 0, w), MPI_ERR_OP,
         "MPI_MINLOC is not defined for MPI_UNSIGNED_CHAR");
  MPI_Request cq = MPI_REQUEST_NULL;
  expect("Iallreduce MPI_MINLOC on MPI_SIGNED_CHAR",
         MPI_Iallreduce(ch, ch + 4, 2, MPI_SIGNED_CHAR, MPI_MINLOC, w, &cq), MPI_ERR_OP,
         "MPI_MINLOC is not defined for MPI_SIGNED_CHAR");
  wchar_t wc[2] = {1, 2};
  expect("Allreduce MPI_SUM on MPI_WCHAR",
         MPI_Allreduce(wc, wc + 1, 1, MPI_WCHAR, MPI_SUM, w), MPI_ERR_OP,
         "MPI_SUM is not defined for MPI_WCHAR");
  check_rc("Allreduce MPI_SUM on MPI_CHAR", MPI_Allreduce(ch, ch + 4, 4, MPI_CHAR, MPI_SUM, w));
  check_ll("Allreduce MPI_SUM on MPI_CHAR: 1 * size", nranks, ch[4]);
#ifdef RONDO_MPI
  expect("Allreduce unknown op handle",
         MPI_Allreduce(buf, buf + 4, 1, MPI_INT, (MPI_Op)12345, w), MPI_ERR_OP, "op");
#endif

  /* Communicators. */
  expect("Send MPI_COMM_NULL", MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL),
         MPI_ERR_COMM, "comm");
  expect("Barrier MPI_COMM_NULL", MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "comm");
  int s = -1;
  expect("Comm_size MPI_COMM_NULL", MPI_Comm_size(MPI_COMM_NULL, &s), MPI_ERR_COMM, "comm");
#ifdef RONDO_MPI
  expect("Send unknown comm handle", MPI_Send(buf, 1, MPI_INT, 0, 0, (MPI_Comm)12345),
         MPI_ERR_COMM, "comm");
  expect("Allreduce unknown comm handle",
         MPI_Allreduce(buf, buf + 4, 1, MPI_INT, MPI_SUM, (MPI_Comm)12345), MPI_ERR_COMM,
         "comm");
#endif

  /* Requests. */
  r = MPI_REQUEST_NULL;
  expect("Request_free(MPI_REQUEST_NULL)", MPI_Request_free(&r), MPI_ERR_REQUEST,
         "request");
#ifdef RONDO_MPI
  {
    /* A copy of a request handle taken before MPI_Request_free: with
     * Rondo's int handles the stale copy is detected. (Open MPI's are
     * pointers to freed memory.) 2 KiB: a small send that leaves within
     * MPI_Isend has no request of its own to go stale. */
    static int v[512], got[512];
    v[0] = 5;
    MPI_Request q, copy;
    MPI_Isend(v, 512, MPI_INT, me, 77, w, &q);
    copy = q;
    MPI_Request_free(&q);
    expect("Wait on a freed request", MPI_Wait(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
           "request");
    MPI_Recv(got, 512, MPI_INT, me, 77, w, MPI_STATUS_IGNORE);
    check_ll("message of the freed send", 5, got[0]);
  }
#endif

  /* Roots. */
  expect("Bcast root=size", MPI_Bcast(buf, 1, MPI_INT, nranks, w), MPI_ERR_ROOT, "root");
  expect("Bcast root=-1", MPI_Bcast(buf, 1, MPI_INT, -1, w), MPI_ERR_ROOT, "root");
  expect("Reduce root=size", MPI_Reduce(buf, buf + 4, 1, MPI_INT, MPI_SUM, nranks, w),
         MPI_ERR_ROOT, "root");
  MPI_Request q = MPI_REQUEST_NULL;
  expect("Ibcast root=size", MPI_Ibcast(buf, 1, MPI_INT, nranks, w, &q), MPI_ERR_ROOT,
         "root");

  /* Tags. */
  expect("Send tag=-3", MPI_Send(buf, 1, MPI_INT, me, -3, w), MPI_ERR_TAG, "tag");
  expect("Send tag=MPI_ANY_TAG", MPI_Send(buf, 1, MPI_INT, me, MPI_ANY_TAG, w), MPI_ERR_TAG,
         "tag");
  expect("Recv tag=-3", MPI_Recv(buf, 1, MPI_INT, me, -3, w, MPI_STATUS_IGNORE), MPI_ERR_TAG,
         "tag");
  if (flag && ub && *ub < INT_MAX) {
    expect("Send tag=TAG_UB+1", MPI_Send(buf, 1, MPI_INT, me, *ub + 1, w), MPI_ERR_TAG,
           "tag");
  }
  /* (Open MPI's MPI_TAG_UB is INT_MAX: no larger tag to try.) */
  if (flag && ub) {
    /* TAG_UB itself is a valid tag. */
    int v = 9, got = 0;
    check_rc("Sendrecv tag=TAG_UB",
             MPI_Sendrecv(&v, 1, MPI_INT, me, *ub, &got, 1, MPI_INT, me, *ub, w,
                          MPI_STATUS_IGNORE));
    check_ll("message with tag TAG_UB", 9, got);
  }

  /* After all these errors, the library still works. */
  int one = 1, sum = 0;
  check_rc("Allreduce after errors", MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, w));
  check_ll("Allreduce after errors", nranks, sum);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  chk_context("defaults");
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  check_true("default errhandler of MPI_COMM_WORLD is MPI_ERRORS_ARE_FATAL",
             eh == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh);
  check_true("default errhandler of MPI_COMM_SELF is MPI_ERRORS_ARE_FATAL",
             eh == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
  char msg[MPI_MAX_ERROR_STRING];
  int len = -1;
  MPI_Error_string(MPI_SUCCESS, msg, &len);
  check_true("Error_string(MPI_SUCCESS) non-empty", len > 0 && msg[0] != 0);

  check_rc("Comm_set_errhandler(world, MPI_ERRORS_RETURN)",
           MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  t_classes();
  t_bad_args();
  t_handlers(); /* last: a broken handler may abort the job */

  int rc = chk_finish("errors_check");
  MPI_Finalize();
  return rc;
}
