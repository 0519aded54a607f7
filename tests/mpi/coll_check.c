/* coll_check: every MPI collective, blocking and nonblocking, checked
 * against references computed locally.
 *
 *   coll_check [--quick]
 *
 * Communicators: MPI_COMM_WORLD and, for every s in 1..N-1, the two halves
 * of MPI_Comm_split(color = rank < s) (odd s reverse the rank order with the
 * key), so every size 1..N runs, non-powers of two included. On each: every
 * collective with roots {0, size-1, size/2}, counts {0, 1, 7, 1000} ints,
 * the MPI_IN_PLACE forms, then 70000 ints (past a 64 KiB pipeline
 * segment); on MPI_COMM_WORLD also ~1 MiB (allgather(v) in place too). Then derived datatypes (vector,
 * indexed, resized, struct with gaps; gaps must stay untouched), MPI_SUM on
 * a contiguous type, MAXLOC/MINLOC with ties, user ops (commutative and a
 * non-commutative 2x2 matrix product, whose result must be the ordered
 * product), the predefined ops on many types, the reductions on the three
 * char types (wrap-around, signedness), and datatypes freed while a
 * nonblocking collective that uses them is in flight. Then 60 rounds of
 * back-to-back small barrier, allreduce, reduce and bcast (roots moving,
 * in place every other round, a p2p message crossing each round), and of
 * gather, allgather, scatter and alltoall around the 16 KiB edges; then
 * barriers after each kind of call, a late rank looking for early leavers;
 * then allreduces past 16 KiB (the large shared-memory rounds).
 * --quick: MPI_COMM_WORLD plus two splits, fewer counts and types.
 *
 * Data: pat() gives any int of a (source, destination, index, salt) tuple;
 * spat() small ints whose sums cannot overflow. Unwritten parts of output
 * buffers hold SENT and are checked too. */
#include <limits.h>

#include "check.h"

#define SENT (-123456789)
#define TAG_BARRIER 77
#define TAG_GO 78
#define MIB_INTS (256 * 1024)
#define MOD_P 10007

static int quick = 0;

typedef struct {
  MPI_Comm comm;
  int rank, size;
  int salt;  // advanced identically by every rank of the communicator
  char name[48];
} Comm;

static inline int pat(int src, int dst, size_t i, int salt) {
  uint32_t x = (uint32_t)src * 0x9E3779B1u + (uint32_t)dst * 0x85EBCA77u +
               (uint32_t)i * 0xC2B2AE3Du + (uint32_t)salt * 0x27D4EB2Fu +
               0x165667B1u;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  x *= 0x297A2D39u;
  x ^= x >> 15;
  return (int)(x & 0x3fffffff);
}

static inline int spat(int src, size_t i, int salt) {
  return (int)(((unsigned long)src * 13u + i * 7u + (unsigned long)salt * 5u) %
               101u) -
         50;
}

static int* ialloc(size_t n) { return (int*)chk_malloc(n * sizeof(int)); }

static void ifill(int* b, size_t n, int v) {
  for (size_t i = 0; i < n; ++i) b[i] = v;
}

static const char* nbs(int nb) { return nb ? "I" : ""; }
static const char* ips(int inplace) { return inplace ? " in_place" : ""; }

/* Completes a nonblocking collective: MPI_Wait, or a MPI_Test loop for
 * every third test. */
static void finish_req(Comm* c, MPI_Request* r) {
  if (c->salt % 3 == 0) {
    int flag = 0;
    while (!flag) MPI_Test(r, &flag, MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(r, MPI_STATUS_IGNORE);
  }
  check_true("request is MPI_REQUEST_NULL when complete", *r == MPI_REQUEST_NULL);
}

/* Runs the blocking call, or starts the nonblocking one (which must write
 * &req_) and completes it. */
#define RUN(nb, blocking, nonblocking)       \
  do {                                       \
    if (nb) {                                \
      MPI_Request req_ = MPI_REQUEST_NULL;   \
      check_rc("start", (nonblocking));      \
      finish_req(c, &req_);                  \
    } else {                                 \
      check_rc("call", (blocking));          \
    }                                        \
  } while (0)

static int roots_of(int size, int* roots) {
  int cand[3] = {0, size - 1, size / 2}, n = 0;
  for (int k = 0; k < 3; ++k) {
    int dup = 0;
    for (int j = 0; j < n; ++j) dup |= roots[j] == cand[k];
    if (!dup) roots[n++] = cand[k];
  }
  return n;
}

/* v-form counts: 0 for count 0, else count-1 + (r % 3) (so count 1 gives
 * 0, 1, 2). */
static int vcount(int r, int count) { return count == 0 ? 0 : count - 1 + r % 3; }
/* Per pair (alltoallv, alltoallw). */
static int pcount(int src, int dst, int count) {
  return count == 0 ? 0 : count - 1 + (2 * src + dst) % 3;
}

/* Blocks in reverse rank order with `gap` unused ints before each; returns
 * the buffer length (ints). */
static size_t rev_displs(int size, const int* counts, int gap, int* displs) {
  size_t pos = 0;
  for (int r = size - 1; r >= 0; --r) {
    pos += gap;
    displs[r] = (int)pos;
    pos += counts[r];
  }
  return pos + gap;
}

/* ---------------- Barrier ---------------- */

static void t_barrier(Comm* c, int nb) {
  int salt = ++c->salt;
  chk_context("%sbarrier %s", nbs(nb), c->name);
  if (c->size == 1) {
    RUN(nb, MPI_Barrier(c->comm), MPI_Ibarrier(c->comm, &req_));
    return;
  }
  int last = c->size - 1;
  if (!nb) {
    /* A synchronous send to the next rank cannot complete before the
     * barrier: its receive is posted after the barrier, which needs us. */
    int next = (c->rank + 1) % c->size, prev = (c->rank + c->size - 1) % c->size;
    int token = pat(c->rank, next, 0, salt), got = SENT, flag = 0;
    MPI_Request sreq;
    MPI_Issend(&token, 1, MPI_INT, next, TAG_BARRIER, c->comm, &sreq);
    MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE);
    check_true("Issend to the next rank still pending before the barrier", !flag);
    check_rc("MPI_Barrier", MPI_Barrier(c->comm));
    MPI_Recv(&got, 1, MPI_INT, prev, TAG_BARRIER, c->comm, MPI_STATUS_IGNORE);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    check_ll("token after barrier", pat(prev, c->rank, 0, salt), got);
    return;
  }
  /* Ibarrier: the last rank enters only after rank 0 saw its own Ibarrier
   * still incomplete. */
  MPI_Request req = MPI_REQUEST_NULL;
  int go = salt;
  if (c->rank != last) {
    check_rc("MPI_Ibarrier", MPI_Ibarrier(c->comm, &req));
    if (c->rank == 0) {
      int flag = 1;
      MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      check_true("Ibarrier incomplete before the last rank entered", !flag);
      MPI_Send(&go, 1, MPI_INT, last, TAG_GO, c->comm);
    }
  } else {
    int got = SENT;
    MPI_Recv(&got, 1, MPI_INT, 0, TAG_GO, c->comm, MPI_STATUS_IGNORE);
    check_ll("go token", salt, got);
    check_rc("MPI_Ibarrier", MPI_Ibarrier(c->comm, &req));
  }
  finish_req(c, &req);
}

/* ---------------- Rooted ---------------- */

static void t_bcast(Comm* c, int root, int count, int nb) {
  int salt = ++c->salt;
  chk_context("%sbcast %s root=%d count=%d", nbs(nb), c->name, root, count);
  int* buf = ialloc(count);
  int* exp = ialloc(count);
  for (int i = 0; i < count; ++i) {
    exp[i] = pat(root, 0, i, salt);
    buf[i] = c->rank == root ? exp[i] : SENT;
  }
  RUN(nb, MPI_Bcast(buf, count, MPI_INT, root, c->comm),
      MPI_Ibcast(buf, count, MPI_INT, root, c->comm, &req_));
  check_ints("buf", exp, buf, count);
  free(buf);
  free(exp);
}

static void t_reduce(Comm* c, int root, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sreduce %s root=%d count=%d%s", nbs(nb), c->name, root, count,
              ips(inplace));
  int* send = ialloc(count);
  int* recv = ialloc(count);
  int* exp = ialloc(count);
  int me = c->rank == root;
  for (int i = 0; i < count; ++i) {
    send[i] = spat(c->rank, i, salt);
    recv[i] = me && inplace ? send[i] : SENT;
    exp[i] = 0;
    for (int r = 0; r < c->size; ++r) exp[i] += spat(r, i, salt);
  }
  const void* sb = me && inplace ? MPI_IN_PLACE : send;
  void* rb = me ? recv : NULL;
  RUN(nb, MPI_Reduce(sb, rb, count, MPI_INT, MPI_SUM, root, c->comm),
      MPI_Ireduce(sb, rb, count, MPI_INT, MPI_SUM, root, c->comm, &req_));
  if (me) check_ints("recv", exp, recv, count);
  free(send);
  free(recv);
  free(exp);
}

static void t_gather(Comm* c, int root, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sgather %s root=%d count=%d%s", nbs(nb), c->name, root, count,
              ips(inplace));
  size_t total = (size_t)count * c->size;
  int me = c->rank == root;
  int* send = ialloc(count);
  int* recv = ialloc(total);
  int* exp = ialloc(total);
  for (int i = 0; i < count; ++i) send[i] = pat(c->rank, root, i, salt);
  for (int r = 0; r < c->size; ++r)
    for (int i = 0; i < count; ++i) {
      exp[(size_t)r * count + i] = pat(r, root, i, salt);
      recv[(size_t)r * count + i] = me && inplace && r == root ? send[i] : SENT;
    }
  const void* sb = me && inplace ? MPI_IN_PLACE : send;
  void* rb = me ? recv : NULL;
  RUN(nb, MPI_Gather(sb, count, MPI_INT, rb, count, MPI_INT, root, c->comm),
      MPI_Igather(sb, count, MPI_INT, rb, count, MPI_INT, root, c->comm, &req_));
  if (me) check_ints("recv", exp, recv, total);
  free(send);
  free(recv);
  free(exp);
}

static void t_gatherv(Comm* c, int root, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sgatherv %s root=%d count=%d%s", nbs(nb), c->name, root, count,
              ips(inplace));
  int me = c->rank == root;
  int* counts = ialloc(c->size);
  int* displs = ialloc(c->size);
  for (int r = 0; r < c->size; ++r) counts[r] = vcount(r, count);
  size_t total = rev_displs(c->size, counts, 2, displs);
  int mine = counts[c->rank];
  int* send = ialloc(mine);
  int* recv = ialloc(total);
  int* exp = ialloc(total);
  for (int i = 0; i < mine; ++i) send[i] = pat(c->rank, root, i, salt);
  ifill(exp, total, SENT);
  ifill(recv, total, SENT);
  for (int r = 0; r < c->size; ++r)
    for (int i = 0; i < counts[r]; ++i) {
      exp[displs[r] + i] = pat(r, root, i, salt);
      if (me && inplace && r == root) recv[displs[r] + i] = send[i];
    }
  const void* sb = me && inplace ? MPI_IN_PLACE : send;
  void* rb = me ? recv : NULL;
  RUN(nb, MPI_Gatherv(sb, mine, MPI_INT, rb, counts, displs, MPI_INT, root, c->comm),
      MPI_Igatherv(sb, mine, MPI_INT, rb, counts, displs, MPI_INT, root, c->comm,
                   &req_));
  if (me) check_ints("recv", exp, recv, total);
  free(counts);
  free(displs);
  free(send);
  free(recv);
  free(exp);
}

static void t_scatter(Comm* c, int root, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sscatter %s root=%d count=%d%s", nbs(nb), c->name, root, count,
              ips(inplace));
  size_t total = (size_t)count * c->size;
  int me = c->rank == root;
  int* send = ialloc(total);
  int* sendcopy = ialloc(total);
  int* recv = ialloc(count);
  int* exp = ialloc(count);
  for (int r = 0; r < c->size; ++r)
    for (int i = 0; i < count; ++i)
      send[(size_t)r * count + i] = pat(root, r, i, salt);
  memcpy(sendcopy, send, total * sizeof(int));
  for (int i = 0; i < count; ++i) {
    exp[i] = pat(root, c->rank, i, salt);
    recv[i] = SENT;
  }
  const void* sb = me ? send : NULL;
  void* rb = me && inplace ? MPI_IN_PLACE : recv;
  RUN(nb, MPI_Scatter(sb, count, MPI_INT, rb, count, MPI_INT, root, c->comm),
      MPI_Iscatter(sb, count, MPI_INT, rb, count, MPI_INT, root, c->comm, &req_));
  if (!(me && inplace)) check_ints("recv", exp, recv, count);
  if (me) check_ints("send buffer unchanged", sendcopy, send, total);
  free(send);
  free(sendcopy);
  free(recv);
  free(exp);
}

static void t_scatterv(Comm* c, int root, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sscatterv %s root=%d count=%d%s", nbs(nb), c->name, root, count,
              ips(inplace));
  int me = c->rank == root;
  int* counts = ialloc(c->size);
  int* displs = ialloc(c->size);
  for (int r = 0; r < c->size; ++r) counts[r] = vcount(r, count);
  size_t total = rev_displs(c->size, counts, 1, displs);
  int mine = counts[c->rank];
  int* send = ialloc(total);
  int* sendcopy = ialloc(total);
  int* recv = ialloc(mine + 1);
  int* exp = ialloc(mine + 1);
  ifill(send, total, SENT);
  for (int r = 0; r < c->size; ++r)
    for (int i = 0; i < counts[r]; ++i) send[displs[r] + i] = pat(root, r, i, salt);
  memcpy(sendcopy, send, total * sizeof(int));
  for (int i = 0; i <= mine; ++i) {
    exp[i] = i < mine ? pat(root, c->rank, i, salt) : SENT;
    recv[i] = SENT;
  }
  const void* sb = me ? send : NULL;
  void* rb = me && inplace ? MPI_IN_PLACE : recv;
  RUN(nb, MPI_Scatterv(sb, counts, displs, MPI_INT, rb, mine, MPI_INT, root, c->comm),
      MPI_Iscatterv(sb, counts, displs, MPI_INT, rb, mine, MPI_INT, root, c->comm,
                    &req_));
  if (!(me && inplace)) check_ints("recv (+1 past the end)", exp, recv, mine + 1);
  if (me) check_ints("send buffer unchanged", sendcopy, send, total);
  free(counts);
  free(displs);
  free(send);
  free(sendcopy);
  free(recv);
  free(exp);
}

/* ---------------- All-to-all family ---------------- */

static void t_allreduce(Comm* c, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sallreduce %s count=%d%s", nbs(nb), c->name, count, ips(inplace));
  int* send = ialloc(count);
  int* recv = ialloc(count);
  int* exp = ialloc(count);
  for (int i = 0; i < count; ++i) {
    send[i] = spat(c->rank, i, salt);
    recv[i] = inplace ? send[i] : SENT;
    exp[i] = 0;
    for (int r = 0; r < c->size; ++r) exp[i] += spat(r, i, salt);
  }
  const void* sb = inplace ? MPI_IN_PLACE : send;
  RUN(nb, MPI_Allreduce(sb, recv, count, MPI_INT, MPI_SUM, c->comm),
      MPI_Iallreduce(sb, recv, count, MPI_INT, MPI_SUM, c->comm, &req_));
  check_ints("recv", exp, recv, count);
  free(send);
  free(recv);
  free(exp);
}

static void t_scan(Comm* c, int count, int nb, int inplace, int ex) {
  int salt = ++c->salt;
  chk_context("%s%sscan %s count=%d%s", nbs(nb), ex ? "ex" : "", c->name, count,
              ips(inplace));
  int* send = ialloc(count);
  int* recv = ialloc(count);
  int* exp = ialloc(count);
  int upto = ex ? c->rank : c->rank + 1;
  for (int i = 0; i < count; ++i) {
    send[i] = spat(c->rank, i, salt);
    recv[i] = inplace ? send[i] : SENT;
    exp[i] = 0;
    for (int r = 0; r < upto; ++r) exp[i] += spat(r, i, salt);
  }
  const void* sb = inplace ? MPI_IN_PLACE : send;
  if (ex) {
    RUN(nb, MPI_Exscan(sb, recv, count, MPI_INT, MPI_SUM, c->comm),
        MPI_Iexscan(sb, recv, count, MPI_INT, MPI_SUM, c->comm, &req_));
  } else {
    RUN(nb, MPI_Scan(sb, recv, count, MPI_INT, MPI_SUM, c->comm),
        MPI_Iscan(sb, recv, count, MPI_INT, MPI_SUM, c->comm, &req_));
  }
  /* Exscan leaves rank 0's receive buffer undefined. */
  if (!(ex && c->rank == 0)) check_ints("recv", exp, recv, count);
  free(send);
  free(recv);
  free(exp);
}

static void t_allgather(Comm* c, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sallgather %s count=%d%s", nbs(nb), c->name, count, ips(inplace));
  size_t total = (size_t)count * c->size;
  int* send = ialloc(count);
  int* recv = ialloc(total);
  int* exp = ialloc(total);
  for (int i = 0; i < count; ++i) send[i] = pat(c->rank, 0, i, salt);
  for (int r = 0; r < c->size; ++r)
    for (int i = 0; i < count; ++i) {
      exp[(size_t)r * count + i] = pat(r, 0, i, salt);
      recv[(size_t)r * count + i] = inplace && r == c->rank ? send[i] : SENT;
    }
  const void* sb = inplace ? MPI_IN_PLACE : send;
  RUN(nb, MPI_Allgather(sb, count, MPI_INT, recv, count, MPI_INT, c->comm),
      MPI_Iallgather(sb, count, MPI_INT, recv, count, MPI_INT, c->comm, &req_));
  check_ints("recv", exp, recv, total);
  free(send);
  free(recv);
  free(exp);
}

static void t_allgatherv(Comm* c, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sallgatherv %s count=%d%s", nbs(nb), c->name, count, ips(inplace));
  int* counts = ialloc(c->size);
  int* displs = ialloc(c->size);
  for (int r = 0; r < c->size; ++r) counts[r] = vcount(r, count);
  size_t total = rev_displs(c->size, counts, 3, displs);
  int mine = counts[c->rank];
  int* send = ialloc(mine);
  int* recv = ialloc(total);
  int* exp = ialloc(total);
  for (int i = 0; i < mine; ++i) send[i] = pat(c->rank, 0, i, salt);
  ifill(exp, total, SENT);
  ifill(recv, total, SENT);
  for (int r = 0; r < c->size; ++r)
    for (int i = 0; i < counts[r]; ++i) {
      exp[displs[r] + i] = pat(r, 0, i, salt);
      if (inplace && r == c->rank) recv[displs[r] + i] = send[i];
    }
  const void* sb = inplace ? MPI_IN_PLACE : send;
  RUN(nb, MPI_Allgatherv(sb, mine, MPI_INT, recv, counts, displs, MPI_INT, c->comm),
      MPI_Iallgatherv(sb, mine, MPI_INT, recv, counts, displs, MPI_INT, c->comm,
                      &req_));
  check_ints("recv", exp, recv, total);
  free(counts);
  free(displs);
  free(send);
  free(recv);
  free(exp);
}

static void t_alltoall(Comm* c, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%salltoall %s count=%d%s", nbs(nb), c->name, count, ips(inplace));
  size_t total = (size_t)count * c->size;
  int* send = ialloc(total);
  int* recv = ialloc(total);
  int* exp = ialloc(total);
  for (int r = 0; r < c->size; ++r)
    for (int i = 0; i < count; ++i) {
      size_t k = (size_t)r * count + i;
      send[k] = pat(c->rank, r, i, salt);
      exp[k] = pat(r, c->rank, i, salt);
      recv[k] = inplace ? send[k] : SENT;
    }
  const void* sb = inplace ? MPI_IN_PLACE : send;
  RUN(nb, MPI_Alltoall(sb, count, MPI_INT, recv, count, MPI_INT, c->comm),
      MPI_Ialltoall(sb, count, MPI_INT, recv, count, MPI_INT, c->comm, &req_));
  check_ints("recv", exp, recv, total);
  free(send);
  free(recv);
  free(exp);
}

static void t_alltoallv(Comm* c, int count, int nb) {
  int salt = ++c->salt;
  chk_context("%salltoallv %s count=%d", nbs(nb), c->name, count);
  int n = c->size;
  int *sc = ialloc(n), *sd = ialloc(n), *rc = ialloc(n), *rd = ialloc(n);
  for (int r = 0; r < n; ++r) {
    sc[r] = pcount(c->rank, r, count);
    rc[r] = pcount(r, c->rank, count);
  }
  size_t stotal = rev_displs(n, sc, 1, sd);
  size_t rtotal = rev_displs(n, rc, 2, rd);
  int* send = ialloc(stotal);
  int* recv = ialloc(rtotal);
  int* exp = ialloc(rtotal);
  ifill(send, stotal, SENT);
  ifill(recv, rtotal, SENT);
  ifill(exp, rtotal, SENT);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < sc[r]; ++i) send[sd[r] + i] = pat(c->rank, r, i, salt);
    for (int i = 0; i < rc[r]; ++i) exp[rd[r] + i] = pat(r, c->rank, i, salt);
  }
  RUN(nb, MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, c->comm),
      MPI_Ialltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, c->comm, &req_));
  check_ints("recv", exp, recv, rtotal);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(send);
  free(recv);
  free(exp);
}

static MPI_Datatype ctg2;  /* contiguous 2 ints */

/* Alltoallw: pcount ints per pair; each side sends or receives them as
 * MPI_INT or as pairs (ctg2), chosen by parity, so signatures match but
 * types differ; displacements in bytes, blocks in reverse order. */
static void w_type(int src, int dst, int m, int sender, MPI_Datatype* t, int* n) {
  int pairs = ((src + dst + (sender ? 0 : 1)) % 2 == 1) && m % 2 == 0;
  *t = pairs ? ctg2 : MPI_INT;
  *n = pairs ? m / 2 : m;
}

static void t_alltoallw(Comm* c, int count, int nb) {
  int salt = ++c->salt;
  chk_context("%salltoallw %s count=%d", nbs(nb), c->name, count);
  int n = c->size;
  int *sm = ialloc(n), *rm = ialloc(n), *sd = ialloc(n), *rd = ialloc(n);
  int *sc = ialloc(n), *rc = ialloc(n);
  MPI_Datatype* st = (MPI_Datatype*)chk_malloc(n * sizeof(MPI_Datatype));
  MPI_Datatype* rt = (MPI_Datatype*)chk_malloc(n * sizeof(MPI_Datatype));
  for (int r = 0; r < n; ++r) {
    sm[r] = pcount(c->rank, r, count);
    rm[r] = pcount(r, c->rank, count);
    w_type(c->rank, r, sm[r], 1, &st[r], &sc[r]);
    w_type(r, c->rank, rm[r], 0, &rt[r], &rc[r]);
  }
  int sgap = 1, rgap = 2;
#ifndef RONDO_MPI
  /* Open MPI 4.1.4's blocking MPI_Alltoallw on a 1-rank communicator
   * (coll/self) multiplies the byte displacements by the types' extents
   * (`sdisps[0] * sextent`), reading and writing out of bounds: use zero
   * displacements there. */
  if (n == 1 && !nb) sgap = rgap = 0;
#endif
  size_t stotal = rev_displs(n, sm, sgap, sd);
  size_t rtotal = rev_displs(n, rm, rgap, rd);
  int* send = ialloc(stotal);
  int* recv = ialloc(rtotal);
  int* exp = ialloc(rtotal);
  ifill(send, stotal, SENT);
  ifill(recv, rtotal, SENT);
  ifill(exp, rtotal, SENT);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < sm[r]; ++i) send[sd[r] + i] = pat(c->rank, r, i, salt);
    for (int i = 0; i < rm[r]; ++i) exp[rd[r] + i] = pat(r, c->rank, i, salt);
    sd[r] *= (int)sizeof(int); /* bytes */
    rd[r] *= (int)sizeof(int);
  }
  RUN(nb, MPI_Alltoallw(send, sc, sd, st, recv, rc, rd, rt, c->comm),
      MPI_Ialltoallw(send, sc, sd, st, recv, rc, rd, rt, c->comm, &req_));
  check_ints("recv", exp, recv, rtotal);
  free(sm);
  free(rm);
  free(sd);
  free(rd);
  free(sc);
  free(rc);
  free(st);
  free(rt);
  free(send);
  free(recv);
  free(exp);
}

static void t_reduce_scatter_block(Comm* c, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sreduce_scatter_block %s count=%d%s", nbs(nb), c->name, count,
              ips(inplace));
  size_t total = (size_t)count * c->size;
  int* send = ialloc(total);
  int* recv = ialloc(total + 1);
  int* exp = ialloc(count);
  for (size_t k = 0; k < total; ++k) {
    send[k] = spat(c->rank, k, salt);
    recv[k] = inplace ? send[k] : SENT;
  }
  recv[total] = SENT;
  for (int i = 0; i < count; ++i) {
    exp[i] = 0;
    for (int r = 0; r < c->size; ++r)
      exp[i] += spat(r, (size_t)c->rank * count + i, salt);
  }
  const void* sb = inplace ? MPI_IN_PLACE : send;
  RUN(nb, MPI_Reduce_scatter_block(sb, recv, count, MPI_INT, MPI_SUM, c->comm),
      MPI_Ireduce_scatter_block(sb, recv, count, MPI_INT, MPI_SUM, c->comm, &req_));
  check_ints("recv", exp, recv, count);
  if (!inplace && count > 0) check_ll("recv past the block", SENT, recv[count]);
  free(send);
  free(recv);
  free(exp);
}

static void t_reduce_scatter(Comm* c, int count, int nb, int inplace) {
  int salt = ++c->salt;
  chk_context("%sreduce_scatter %s count=%d%s", nbs(nb), c->name, count,
              ips(inplace));
  int* counts = ialloc(c->size);
  size_t total = 0, off = 0;
  for (int r = 0; r < c->size; ++r) {
    counts[r] = vcount(r, count);
    if (r < c->rank) off += counts[r];
    total += counts[r];
  }
  int mine = counts[c->rank];
  int* send = ialloc(total);
  int* recv = ialloc(total + 1);
  int* exp = ialloc(mine);
  for (size_t k = 0; k < total; ++k) send[k] = spat(c->rank, k, salt);
  for (size_t k = 0; k <= total; ++k) recv[k] = inplace && k < total ? send[k] : SENT;
  for (int i = 0; i < mine; ++i) {
    exp[i] = 0;
    for (int r = 0; r < c->size; ++r) exp[i] += spat(r, off + i, salt);
  }
  const void* sb = inplace ? MPI_IN_PLACE : send;
  RUN(nb, MPI_Reduce_scatter(sb, recv, counts, MPI_INT, MPI_SUM, c->comm),
      MPI_Ireduce_scatter(sb, recv, counts, MPI_INT, MPI_SUM, c->comm, &req_));
  check_ints("recv", exp, recv, mine);
  if (!inplace) check_ll("recv past the block", SENT, recv[mine]);
  free(counts);
  free(send);
  free(recv);
  free(exp);
}

/* Every collective on one communicator with one count. */
static void suite_count(Comm* c, int count, int all_roots) {
  int roots[3];
  int nroots = roots_of(c->size, roots);
  if (!all_roots) {
    roots[0] = c->size - 1;
    nroots = 1;
  }
  for (int nb = 0; nb < 2; ++nb) {
    for (int k = 0; k < nroots; ++k) {
      int root = roots[k];
      t_bcast(c, root, count, nb);
      for (int ip = 0; ip < 2; ++ip) {
        if (ip && !all_roots) continue;
        t_reduce(c, root, count, nb, ip);
        t_gather(c, root, count, nb, ip);
        t_gatherv(c, root, count, nb, ip);
        t_scatter(c, root, count, nb, ip);
        t_scatterv(c, root, count, nb, ip);
      }
    }
    for (int ip = 0; ip < 2; ++ip) {
      if (ip && !all_roots) continue;
      t_allreduce(c, count, nb, ip);
      t_allgather(c, count, nb, ip);
      t_allgatherv(c, count, nb, ip);
      t_alltoall(c, count, nb, ip);
      t_reduce_scatter_block(c, count, nb, ip);
      t_reduce_scatter(c, count, nb, ip);
      t_scan(c, count, nb, ip, 0);
      t_scan(c, count, nb, ip, 1);
    }
    t_alltoallv(c, count, nb);
    t_alltoallw(c, count, nb);
  }
}

/* About 1 MiB per rank buffer, on MPI_COMM_WORLD. */
static void suite_mib(Comm* c) {
  int root = c->size / 2;
  int per = MIB_INTS / c->size;
  for (int nb = 0; nb < 2; ++nb) {
    t_bcast(c, root, MIB_INTS, nb);
    t_reduce(c, root, MIB_INTS, nb, 0);
    t_allreduce(c, MIB_INTS, nb, nb);
    t_scan(c, MIB_INTS, nb, 0, 0);
    t_gather(c, root, per, nb, 0);
    t_scatter(c, root, per, nb, 0);
    t_allgather(c, per, nb, 0);
    /* The ring's own block leaves from the input beside its copy (in place:
     * the copy is the block itself). */
    t_allgather(c, per, nb, 1);
    t_allgatherv(c, per, nb, 0);
    t_allgatherv(c, per, nb, 1);
    t_alltoall(c, per, nb, 0);
    t_reduce_scatter_block(c, per, nb, 0);
  }
}

/* ---------------- Derived datatypes ---------------- */

/* A type's map: data blocks (byte offset, length) within one element, in
 * type-map order, and its extent. */
typedef struct {
  const char* name;
  MPI_Datatype type;
  size_t extent;
  int nblocks;
  size_t off[3], len[3];
  size_t size;  /* data bytes per element */
  int all_int;  /* only MPI_INTs: can be matched with MPI_INT */
} Layout;

static Layout L_int, L_vec, L_idx, L_rsz, L_struct;

struct S3 {
  int a;
  double d;
  short s;
};

#define GAP_SENDER 0x3C
#define GAP_RECEIVER 0xA5

static void make_layouts(void) {
  L_int = (Layout){"int", MPI_INT, 4, 1, {0}, {4}, 4, 1};
  /* vector: 2 blocks of 2 ints, stride 3: ints 0,1,3,4; extent 5 ints. */
  MPI_Type_vector(2, 2, 3, MPI_INT, &L_vec.type);
  MPI_Type_commit(&L_vec.type);
  L_vec = (Layout){"vector", L_vec.type, 20, 2, {0, 12}, {8, 8}, 16, 1};
  /* indexed: blocks {1,2,1} at {0,2,5}: ints 0,2,3,5; extent 6 ints. */
  int bl[3] = {1, 2, 1}, dis[3] = {0, 2, 5};
  MPI_Type_indexed(3, bl, dis, MPI_INT, &L_idx.type);
  MPI_Type_commit(&L_idx.type);
  L_idx = (Layout){"indexed", L_idx.type, 24, 3, {0, 8, 20}, {4, 8, 4}, 16, 1};
  /* resized: vector(2,1,2) = ints 0 and 2 (extent 3 ints), resized to 4. */
  MPI_Datatype v;
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 16, &L_rsz.type);
  MPI_Type_free(&v);
  MPI_Type_commit(&L_rsz.type);
  L_rsz = (Layout){"resized", L_rsz.type, 16, 2, {0, 8}, {4, 4}, 8, 1};
  /* struct {int; double; short} with its padding, resized to sizeof. */
  int sbl[3] = {1, 1, 1};
  MPI_Aint sdis[3] = {offsetof(struct S3, a), offsetof(struct S3, d),
                      offsetof(struct S3, s)};
  MPI_Datatype sty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, st;
  MPI_Type_create_struct(3, sbl, sdis, sty, &st);
  MPI_Type_create_resized(st, 0, sizeof(struct S3), &L_struct.type);
  MPI_Type_free(&st);
  MPI_Type_commit(&L_struct.type);
  L_struct = (Layout){"struct", L_struct.type, sizeof(struct S3), 3,
                      {offsetof(struct S3, a), offsetof(struct S3, d),
                       offsetof(struct S3, s)},
                      {4, 8, 2}, 14, 0};
  MPI_Type_contiguous(2, MPI_INT, &ctg2);
  MPI_Type_commit(&ctg2);
}

static void free_layouts(void) {
  MPI_Type_free(&L_vec.type);
  MPI_Type_free(&L_idx.type);
  MPI_Type_free(&L_rsz.type);
  MPI_Type_free(&L_struct.type);
  MPI_Type_free(&ctg2);
}

/* Writes the data stream of (src, dst) into n elements at buf. */
static void lay_put(const Layout* L, unsigned char* buf, size_t n, int src, int dst,
                    int salt) {
  size_t k = 0;
  for (size_t e = 0; e < n; ++e)
    for (int b = 0; b < L->nblocks; ++b)
      for (size_t j = 0; j < L->len[b]; ++j, ++k)
        buf[e * L->extent + L->off[b] + j] = (unsigned char)pat(src, dst, k, salt);
}

enum { DT_BCAST, DT_GATHER, DT_SCATTER, DT_ALLGATHER, DT_ALLTOALL };
static const char* dt_names[] = {"bcast", "gather", "scatter", "allgather",
                                 "alltoall"};

/* Each rank sends n elements of S per block and receives them as rn
 * elements of R. */
static void t_dt(Comm* c, int kind, const Layout* S, const Layout* R, int n,
                 int root, int nb) {
  int salt = ++c->salt;
  chk_context("%s%s %s send=%s x%d recv=%s root=%d", nbs(nb), dt_names[kind],
              c->name, S->name, n, R->name, root);
  int rn = (int)(n * S->size / R->size);
  int P = c->size, me = c->rank;
  size_t sblocks = kind == DT_SCATTER ? (me == root ? P : 0)
                   : kind == DT_ALLTOALL ? P
                   : kind == DT_BCAST ? 0
                   : 1;
  size_t rblocks = kind == DT_GATHER ? (me == root ? P : 0)
                   : kind == DT_ALLGATHER || kind == DT_ALLTOALL ? P
                   : kind == DT_BCAST ? 0
                   : 1;
  size_t sbytes = sblocks * n * S->extent, rbytes = rblocks * rn * R->extent;
  if (kind == DT_BCAST) sbytes = rbytes = (me == root ? n * S->extent : rn * R->extent);
  unsigned char* sb = (unsigned char*)chk_malloc(sbytes);
  unsigned char* rb = (unsigned char*)chk_malloc(rbytes);
  unsigned char* exp = (unsigned char*)chk_malloc(rbytes);
  memset(sb, GAP_SENDER, sbytes);
  memset(rb, GAP_RECEIVER, rbytes);
  memset(exp, GAP_RECEIVER, rbytes);
  size_t sstride = n * S->extent, rstride = rn * R->extent;
  switch (kind) {
    case DT_BCAST:
      if (me == root) {
        lay_put(S, rb, n, root, 0, salt);
        memcpy(exp, rb, rbytes);
      } else {
        lay_put(R, exp, rn, root, 0, salt);
      }
      RUN(nb,
          MPI_Bcast(rb, me == root ? n : rn, me == root ? S->type : R->type, root,
                    c->comm),
          MPI_Ibcast(rb, me == root ? n : rn, me == root ? S->type : R->type, root,
                     c->comm, &req_));
      break;
    case DT_GATHER:
      lay_put(S, sb, n, me, root, salt);
      if (me == root)
        for (int r = 0; r < P; ++r) lay_put(R, exp + r * rstride, rn, r, root, salt);
      RUN(nb,
          MPI_Gather(sb, n, S->type, me == root ? rb : NULL, rn, R->type, root,
                     c->comm),
          MPI_Igather(sb, n, S->type, me == root ? rb : NULL, rn, R->type, root,
                      c->comm, &req_));
      break;
    case DT_SCATTER:
      if (me == root)
        for (int r = 0; r < P; ++r) lay_put(S, sb + r * sstride, n, root, r, salt);
      lay_put(R, exp, rn, root, me, salt);
      RUN(nb,
          MPI_Scatter(me == root ? sb : NULL, n, S->type, rb, rn, R->type, root,
                      c->comm),
          MPI_Iscatter(me == root ? sb : NULL, n, S->type, rb, rn, R->type, root,
                       c->comm, &req_));
      break;
    case DT_ALLGATHER:
      lay_put(S, sb, n, me, 0, salt);
      for (int r = 0; r < P; ++r) lay_put(R, exp + r * rstride, rn, r, 0, salt);
      RUN(nb, MPI_Allgather(sb, n, S->type, rb, rn, R->type, c->comm),
          MPI_Iallgather(sb, n, S->type, rb, rn, R->type, c->comm, &req_));
      break;
    case DT_ALLTOALL:
      for (int r = 0; r < P; ++r) {
        lay_put(S, sb + r * sstride, n, me, r, salt);
        lay_put(R, exp + r * rstride, rn, r, me, salt);
      }
      RUN(nb, MPI_Alltoall(sb, n, S->type, rb, rn, R->type, c->comm),
          MPI_Ialltoall(sb, n, S->type, rb, rn, R->type, c->comm, &req_));
      break;
  }
  check_bytes("recv", exp, rb, rbytes);
  free(sb);
  free(rb);
  free(exp);
}

static void suite_datatypes(Comm* c) {
  const Layout* types[4] = {&L_vec, &L_idx, &L_rsz, &L_struct};
  int ns_full[3] = {1, 3, 300}, ns_quick[2] = {1, 300};
  const int* ns = quick ? ns_quick : ns_full;
  int nn = quick ? 2 : 3;
  int root = c->size - 1;
  for (int t = 0; t < 4; ++t) {
    const Layout* L = types[t];
    for (int kind = DT_BCAST; kind <= DT_ALLTOALL; ++kind)
      for (int nb = 0; nb < 2; ++nb) {
        for (int k = 0; k < nn; ++k) t_dt(c, kind, L, L, ns[k], root, nb);
        if (L->all_int) {
          /* Same signature, different types on the two sides. */
          t_dt(c, kind, L, &L_int, 7, c->size / 2, nb);
          t_dt(c, kind, &L_int, L, 7 * (int)(L->size / 4), 0, nb);
        }
      }
  }
}

/* MPI_SUM on a contiguous type of 3 ints (Reduce, Allreduce).
 *
 * MPI-3.1 5.9.1 says "predefined operators work only with the MPI types
 * listed in Section 5.9.2 and 5.9.4", so this is an extension (MPICH and
 * Rondo's MadMPI reduce derived types made of one predefined type). Open MPI
 * 4.1.4 refuses it with MPI_ERR_OP ("not defined for non-intrinsic
 * datatypes"): tolerated outside RONDO_MPI, with MPI_ERRORS_RETURN set for
 * the call (the argument check is local, so every rank fails alike). */
static void t_ctg_sum(Comm* c, int n, int nb) {
  int salt = ++c->salt;
  int root = c->size / 2;
  chk_context("%sreduce/allreduce %s contiguous(3,int) x%d MPI_SUM", nbs(nb),
              c->name, n);
  MPI_Datatype t;
  MPI_Type_contiguous(3, MPI_INT, &t);
  MPI_Type_commit(&t);
  size_t m = (size_t)n * 3;
  int *send = ialloc(m), *recv = ialloc(m), *exp = ialloc(m);
  for (size_t i = 0; i < m; ++i) {
    send[i] = spat(c->rank, i, salt);
    exp[i] = 0;
    for (int r = 0; r < c->size; ++r) exp[i] += spat(r, i, salt);
  }
  for (int what = 0; what < 2; ++what) {
    ifill(recv, m, SENT);
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
#ifndef RONDO_MPI
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
#endif
    if (what == 0) {
      rc = nb ? MPI_Iallreduce(send, recv, n, t, MPI_SUM, c->comm, &req)
              : MPI_Allreduce(send, recv, n, t, MPI_SUM, c->comm);
    } else {
      rc = nb ? MPI_Ireduce(send, recv, n, t, MPI_SUM, root, c->comm, &req)
              : MPI_Reduce(send, recv, n, t, MPI_SUM, root, c->comm);
    }
#ifndef RONDO_MPI
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS) {
      check_ll("Open MPI: error class of MPI_SUM on a contiguous type", MPI_ERR_OP,
               chk_class(rc));
      continue;
    }
#endif
    check_rc(what ? "reduce" : "allreduce", rc);
    if (nb) finish_req(c, &req);
    if (what == 0 || c->rank == root)
      check_ints(what ? "reduce recv" : "allreduce recv", exp, recv, m);
  }
  MPI_Type_free(&t);
  free(send);
  free(recv);
  free(exp);
}

/* A derived type freed right after the nonblocking collective using it
 * started: the operation must still complete correctly. */
static void t_type_freed(Comm* c) {
  int salt = ++c->salt;
  int root = c->size / 2, n = 50;
  chk_context("type freed in flight %s", c->name);
  MPI_Datatype t;
  MPI_Type_vector(2, 2, 3, MPI_INT, &t);
  MPI_Type_commit(&t);
  size_t bytes = n * L_vec.extent;
  unsigned char* buf = (unsigned char*)chk_malloc(bytes);
  unsigned char* exp = (unsigned char*)chk_malloc(bytes);
  memset(buf, GAP_RECEIVER, bytes);
  memset(exp, GAP_RECEIVER, bytes);
  lay_put(&L_vec, exp, n, root, 0, salt);
  if (c->rank == root) memcpy(buf, exp, bytes);
  MPI_Request req;
  MPI_Ibcast(buf, n, t, root, c->comm, &req);
  MPI_Type_free(&t);
  check_true("Type_free sets MPI_DATATYPE_NULL", t == MPI_DATATYPE_NULL);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  check_bytes("Ibcast buf", exp, buf, bytes);
  free(buf);
  free(exp);

  /* Igather with freshly built send and receive types, both freed. */
  MPI_Datatype st, rt;
  int bl[3] = {1, 2, 1}, dis[3] = {0, 2, 5};
  MPI_Type_indexed(3, bl, dis, MPI_INT, &st);
  MPI_Type_commit(&st);
  MPI_Type_vector(2, 2, 3, MPI_INT, &rt);
  MPI_Type_commit(&rt);
  size_t sbytes = n * L_idx.extent, rbytes = (size_t)c->size * n * L_vec.extent;
  unsigned char* sb = (unsigned char*)chk_malloc(sbytes);
  unsigned char* rb = (unsigned char*)chk_malloc(rbytes);
  unsigned char* rexp = (unsigned char*)chk_malloc(rbytes);
  memset(sb, GAP_SENDER, sbytes);
  memset(rb, GAP_RECEIVER, rbytes);
  memset(rexp, GAP_RECEIVER, rbytes);
  lay_put(&L_idx, sb, n, c->rank, root, salt);
  for (int r = 0; r < c->size; ++r)
    lay_put(&L_vec, rexp + r * n * L_vec.extent, n, r, root, salt);
  MPI_Igather(sb, n, st, c->rank == root ? rb : NULL, n, rt, root, c->comm, &req);
  MPI_Type_free(&st);
  MPI_Type_free(&rt);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (c->rank == root) check_bytes("Igather recv", rexp, rb, rbytes);
  free(sb);
  free(rb);
  free(rexp);
}

/* ---------------- MAXLOC / MINLOC ---------------- */

typedef struct {
  int v;
  int i;
} TwoInt;
typedef struct {
  double v;
  int i;
} DoubleInt;

/* Values with ties between ranks; indices decrease with the rank so that
 * "lowest index wins a tie" is not "lowest rank wins". */
static int loc_v(int r, int k, int salt) { return (r + k + salt) % 3; }
static int loc_i(int r, int k) { return 100 - r + k; }

static void t_loc(Comm* c, int count, int nb, int dbl, int maxloc, int which) {
  int salt = ++c->salt;
  MPI_Op op = maxloc ? MPI_MAXLOC : MPI_MINLOC;
  int root = c->size / 2;
  const char* wn[3] = {"allreduce", "reduce", "scan"};
  chk_context("%s%s %s %s %s count=%d", nbs(nb), wn[which], c->name,
              maxloc ? "MAXLOC" : "MINLOC", dbl ? "DOUBLE_INT" : "2INT", count);
  TwoInt *si = NULL, *ri = NULL, *ei = NULL;
  DoubleInt *sd = NULL, *rd = NULL, *ed = NULL;
  void *sb, *rb;
  if (dbl) {
    sd = chk_malloc(count * sizeof *sd);
    rd = chk_malloc(count * sizeof *rd);
    ed = chk_malloc(count * sizeof *ed);
    sb = sd;
    rb = rd;
  } else {
    si = chk_malloc(count * sizeof *si);
    ri = chk_malloc(count * sizeof *ri);
    ei = chk_malloc(count * sizeof *ei);
    sb = si;
    rb = ri;
  }
  int upto = which == 2 ? c->rank + 1 : c->size;
  for (int k = 0; k < count; ++k) {
    int bv = loc_v(0, k, salt), bi = loc_i(0, k);
    for (int r = 1; r < upto; ++r) {
      int v = loc_v(r, k, salt), i = loc_i(r, k);
      int better = maxloc ? v > bv : v < bv;
      if (better || (v == bv && i < bi)) {
        bv = v;
        bi = i;
      }
    }
    if (dbl) {
      sd[k].v = loc_v(c->rank, k, salt) * 0.5;
      sd[k].i = loc_i(c->rank, k);
      rd[k].v = -1;
      rd[k].i = SENT;
      ed[k].v = bv * 0.5;
      ed[k].i = bi;
    } else {
      si[k].v = loc_v(c->rank, k, salt);
      si[k].i = loc_i(c->rank, k);
      ri[k].v = ri[k].i = SENT;
      ei[k].v = bv;
      ei[k].i = bi;
    }
  }
  MPI_Datatype t = dbl ? MPI_DOUBLE_INT : MPI_2INT;
  if (which == 0) {
    RUN(nb, MPI_Allreduce(sb, rb, count, t, op, c->comm),
        MPI_Iallreduce(sb, rb, count, t, op, c->comm, &req_));
  } else if (which == 1) {
    RUN(nb, MPI_Reduce(sb, rb, count, t, op, root, c->comm),
        MPI_Ireduce(sb, rb, count, t, op, root, c->comm, &req_));
  } else {
    RUN(nb, MPI_Scan(sb, rb, count, t, op, c->comm),
        MPI_Iscan(sb, rb, count, t, op, c->comm, &req_));
  }
  if (which != 1 || c->rank == root) {
    int bad = -1;
    for (int k = 0; k < count && bad < 0; ++k) {
      if (dbl ? (rd[k].v != ed[k].v || rd[k].i != ed[k].i)
              : (ri[k].v != ei[k].v || ri[k].i != ei[k].i))
        bad = k;
    }
    char wv[64], wi[64];
    snprintf(wv, sizeof wv, "recv[%d].value", bad);
    snprintf(wi, sizeof wi, "recv[%d].index", bad);
    if (bad < 0) {
      check_true("recv (value, index) pairs", 1);
    } else if (dbl) {
      if (check_dbl(wv, ed[bad].v, rd[bad].v)) check_ll(wi, ed[bad].i, rd[bad].i);
    } else {
      if (check_ll(wv, ei[bad].v, ri[bad].v)) check_ll(wi, ei[bad].i, ri[bad].i);
    }
  }
  free(si);
  free(ri);
  free(ei);
  free(sd);
  free(rd);
  free(ed);
}

/* ---------------- User ops ---------------- */

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const int* a = (const int*)in;
  int* b = (int*)inout;
  for (int i = 0; i < *len; ++i) b[i] += a[i];
}

/* inout = in x inout (2x2 matrices, row-major, mod MOD_P): MPI passes the
 * lower ranks' partial result as `in`. */
static void mat_mul(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const int* a = (const int*)in;
  int* b = (int*)inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    long long c0 = ((long long)a[0] * b[0] + (long long)a[1] * b[2]) % MOD_P;
    long long c1 = ((long long)a[0] * b[1] + (long long)a[1] * b[3]) % MOD_P;
    long long c2 = ((long long)a[2] * b[0] + (long long)a[3] * b[2]) % MOD_P;
    long long c3 = ((long long)a[2] * b[1] + (long long)a[3] * b[3]) % MOD_P;
    b[0] = (int)c0;
    b[1] = (int)c1;
    b[2] = (int)c2;
    b[3] = (int)c3;
  }
}

static MPI_Op op_user_sum, op_mat;
static MPI_Datatype mat_type; /* contiguous 4 ints */

static void mat_of(int r, int k, int salt, int* m) {
  m[0] = (r + k + salt) % 5 + 1;
  m[1] = (2 * r + k) % 3 + 1;
  m[2] = (r + 3 * k + salt) % 4;
  m[3] = (r * 7 + k) % 2 + 1;
}

/* Ordered product of the matrices of ranks [lo, hi). */
static void mat_prod(int lo, int hi, int k, int salt, int* out) {
  int id[4] = {1, 0, 0, 1};
  memcpy(out, id, sizeof id);
  for (int r = lo; r < hi; ++r) {
    int m[4], len = 1;
    mat_of(r, k, salt, m);
    mat_mul(out, m, &len, NULL); /* m = out x m */
    memcpy(out, m, sizeof m);
  }
}

enum { U_REDUCE, U_ALLREDUCE, U_SCAN, U_EXSCAN, U_RSB, U_RS };
static const char* u_names[] = {"reduce", "allreduce", "scan", "exscan",
                                "reduce_scatter_block", "reduce_scatter"};

/* The matrix product op: the result must be the ordered product. */
static void t_noncomm(Comm* c, int what, int count, int root, int nb) {
  int salt = ++c->salt;
  chk_context("%s%s %s non-commutative matrix product root=%d count=%d", nbs(nb),
              u_names[what], c->name, root, count);
  int P = c->size, me = c->rank;
  int* rcounts = ialloc(P);
  size_t nmat = count, off = 0, mine = count;
  if (what == U_RSB) nmat = (size_t)count * P, off = (size_t)count * me;
  if (what == U_RS) {
    nmat = 0;
    for (int r = 0; r < P; ++r) {
      rcounts[r] = vcount(r, count);
      if (r < me) off += rcounts[r];
      nmat += rcounts[r];
    }
    mine = rcounts[me];
  }
  int* send = ialloc(nmat * 4);
  int* recv = ialloc(nmat * 4 + 4);
  int* exp = ialloc(mine * 4 + 4);
  for (size_t k = 0; k < nmat; ++k) mat_of(me, (int)k, salt, send + 4 * k);
  ifill(recv, nmat * 4 + 4, SENT);
  ifill(exp, mine * 4 + 4, SENT);
  int lo = 0, hi = P;
  if (what == U_SCAN) hi = me + 1;
  if (what == U_EXSCAN) hi = me;
  for (size_t k = 0; k < mine; ++k) mat_prod(lo, hi, (int)(off + k), salt, exp + 4 * k);
  switch (what) {
    case U_REDUCE:
      RUN(nb, MPI_Reduce(send, recv, count, mat_type, op_mat, root, c->comm),
          MPI_Ireduce(send, recv, count, mat_type, op_mat, root, c->comm, &req_));
      break;
    case U_ALLREDUCE:
      RUN(nb, MPI_Allreduce(send, recv, count, mat_type, op_mat, c->comm),
          MPI_Iallreduce(send, recv, count, mat_type, op_mat, c->comm, &req_));
      break;
    case U_SCAN:
      RUN(nb, MPI_Scan(send, recv, count, mat_type, op_mat, c->comm),
          MPI_Iscan(send, recv, count, mat_type, op_mat, c->comm, &req_));
      break;
    case U_EXSCAN:
      RUN(nb, MPI_Exscan(send, recv, count, mat_type, op_mat, c->comm),
          MPI_Iexscan(send, recv, count, mat_type, op_mat, c->comm, &req_));
      break;
    case U_RSB:
      RUN(nb,
          MPI_Reduce_scatter_block(send, recv, count, mat_type, op_mat, c->comm),
          MPI_Ireduce_scatter_block(send, recv, count, mat_type, op_mat, c->comm,
                                    &req_));
      break;
    case U_RS:
      RUN(nb, MPI_Reduce_scatter(send, recv, rcounts, mat_type, op_mat, c->comm),
          MPI_Ireduce_scatter(send, recv, rcounts, mat_type, op_mat, c->comm,
                              &req_));
      break;
  }
  int checked = !(what == U_REDUCE && me != root) && !(what == U_EXSCAN && me == 0);
  if (checked) check_ints("recv (+1 matrix past the end)", exp, recv, mine * 4 + 4);
  free(rcounts);
  free(send);
  free(recv);
  free(exp);
}

/* The commutative user op (an int sum). */
/* A user op on a derived type whose map does not start at 0: one int at
 * byte 8 of each 16-byte element, lower bound 4 (MPI_Type_create_resized).
 * The function walks the elements by the extent, as MPI programs do; MPI
 * must hand it pointers whose type map is where the data is. */
static void strided_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(*dt, &lb, &extent);
  for (int i = 0; i < *len; ++i) {
    const int* a = (const int*)((const char*)in + i * extent + 8);
    int* b = (int*)((char*)inout + i * extent + 8);
    *b += *a;
  }
}

static void t_user_strided(Comm* c, int count, int nb) {
  int salt = ++c->salt;
  chk_context("%sallreduce %s user op on a resized type count=%d", nbs(nb),
              c->name, count);
  int blens[1] = {1};
  MPI_Aint disps[1] = {8};
  MPI_Datatype types[1] = {MPI_INT}, one, strided;
  MPI_Type_create_struct(1, blens, disps, types, &one);
  MPI_Type_create_resized(one, 4, 16, &strided);
  MPI_Type_commit(&strided);
  MPI_Op op;
  MPI_Op_create(strided_sum, 1, &op);
  size_t ints = (size_t)count * 4 + 4;
  int *send = ialloc(ints), *recv = ialloc(ints);
  ifill(send, ints, SENT);
  ifill(recv, ints, SENT);
  for (int i = 0; i < count; ++i) send[i * 4 + 2] = spat(c->rank, i, salt);
  RUN(nb, MPI_Allreduce(send, recv, count, strided, op, c->comm),
      MPI_Iallreduce(send, recv, count, strided, op, c->comm, &req_));
  for (size_t k = 0; k < ints; ++k) {
    long long want = SENT;
    if (k % 4 == 2 && k / 4 < (size_t)count) {
      want = 0;
      for (int r = 0; r < c->size; ++r) want += spat(r, k / 4, salt);
      want = (int)want;
    }
    check_ll("recv (data and untouched holes)", want, recv[k]);
  }
  MPI_Op_free(&op);
  MPI_Type_free(&strided);
  MPI_Type_free(&one);
  free(send);
  free(recv);
}

static void t_usersum(Comm* c, int what, int count, int nb) {
  int salt = ++c->salt;
  int root = c->size - 1;
  chk_context("%s%s %s commutative user op count=%d", nbs(nb), u_names[what],
              c->name, count);
  int P = c->size, me = c->rank;
  size_t n = what == U_RSB ? (size_t)count * P : (size_t)count;
  size_t off = what == U_RSB ? (size_t)count * me : 0;
  int *send = ialloc(n), *recv = ialloc(n), *exp = ialloc(count);
  for (size_t i = 0; i < n; ++i) send[i] = spat(me, i, salt);
  ifill(recv, n, SENT);
  int hi = what == U_SCAN ? me + 1 : P;
  for (int i = 0; i < count; ++i) {
    exp[i] = 0;
    for (int r = 0; r < hi; ++r) exp[i] += spat(r, off + i, salt);
  }
  switch (what) {
    case U_REDUCE:
      RUN(nb, MPI_Reduce(send, recv, count, MPI_INT, op_user_sum, root, c->comm),
          MPI_Ireduce(send, recv, count, MPI_INT, op_user_sum, root, c->comm,
                      &req_));
      break;
    case U_ALLREDUCE:
      RUN(nb, MPI_Allreduce(send, recv, count, MPI_INT, op_user_sum, c->comm),
          MPI_Iallreduce(send, recv, count, MPI_INT, op_user_sum, c->comm, &req_));
      break;
    case U_SCAN:
      RUN(nb, MPI_Scan(send, recv, count, MPI_INT, op_user_sum, c->comm),
          MPI_Iscan(send, recv, count, MPI_INT, op_user_sum, c->comm, &req_));
      break;
    case U_RSB:
      RUN(nb,
          MPI_Reduce_scatter_block(send, recv, count, MPI_INT, op_user_sum, c->comm),
          MPI_Ireduce_scatter_block(send, recv, count, MPI_INT, op_user_sum,
                                    c->comm, &req_));
      break;
  }
  if (what != U_REDUCE || me == root) check_ints("recv", exp, recv, count);
  free(send);
  free(recv);
  free(exp);
}

/* ---------------- Predefined ops on many types ---------------- */

enum { K_SIGNED, K_UNSIGNED, K_FLOAT, K_BOOL, K_BYTE };

static int op_index(MPI_Op op) {
  MPI_Op ops[10] = {MPI_MAX, MPI_MIN,  MPI_SUM, MPI_PROD, MPI_LAND,
                    MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR};
  for (int k = 0; k < 10; ++k)
    if (ops[k] == op) return k;
  return -1;
}
enum { O_MAX, O_MIN, O_SUM, O_PROD, O_LAND, O_BAND, O_LOR, O_BOR, O_LXOR, O_BXOR };
static const char* op_names[10] = {"MAX", "MIN", "SUM", "PROD", "LAND",
                                   "BAND", "LOR", "BOR", "LXOR", "BXOR"};

/* The value a rank contributes, as a long long chosen so that no
 * reduction over <= 64 ranks overflows any of the types below. */
static long long gen_val(int o, int kind, int r, size_t i, int salt) {
  uint32_t h = (uint32_t)pat(r, o, i, salt);
  switch (o) {
    case O_SUM:
      return kind == K_SIGNED || kind == K_FLOAT ? (long long)(h % 21) - 10 : h % 4;
    case O_PROD:
      if ((i + r) % 5 == 0) return 2;
      if ((i + r + salt) % 7 == 0) return kind == K_UNSIGNED ? 3 : -1;
      return 1;
    case O_MAX:
    case O_MIN:
      return kind == K_SIGNED || kind == K_FLOAT ? (long long)(h % 201) - 100
                                                 : h % 250;
    case O_LAND:
      return h % 6 == 0 ? 0 : 1 + h % 2;
    case O_LOR:
      return h % 6 == 0 ? 2 : 0;
    case O_LXOR:
      return h % 3;
    default: /* bitwise */
      return (long long)(h ^ (h << 7));
  }
}

#define DEF_INT_OPS(NAME, CT)                                                  \
  static void gen_##NAME(void* b, size_t n, int o, int kind, int r, int salt) { \
    for (size_t i = 0; i < n; ++i) ((CT*)b)[i] = (CT)gen_val(o, kind, r, i, salt); \
  }                                                                            \
  static void red_##NAME(void* acc, const void* in, size_t n, int o) {         \
    CT* a = (CT*)acc;                                                          \
    const CT* x = (const CT*)in;                                               \
    for (size_t i = 0; i < n; ++i) {                                           \
      switch (o) {                                                             \
        case O_MAX: a[i] = x[i] > a[i] ? x[i] : a[i]; break;                   \
        case O_MIN: a[i] = x[i] < a[i] ? x[i] : a[i]; break;                   \
        case O_SUM: a[i] = (CT)(a[i] + x[i]); break;                           \
        case O_PROD: {                                                         \
          long long p_ = (long long)a[i] * (long long)x[i];                    \
          a[i] = (CT)p_;                                                       \
          break;                                                               \
        }                                                                      \
        case O_LAND: a[i] = (CT)(a[i] && x[i]); break;                         \
        case O_LOR: a[i] = (CT)(a[i] || x[i]); break;                          \
        case O_LXOR: a[i] = (CT)(!a[i] != !x[i]); break;                       \
        case O_BAND: a[i] = (CT)(a[i] & x[i]); break;                          \
        case O_BOR: a[i] = (CT)(a[i] | x[i]); break;                           \
        case O_BXOR: a[i] = (CT)(a[i] ^ x[i]); break;                          \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  static long long get_##NAME(const void* b, size_t i) {                       \
    return (long long)((const CT*)b)[i];                                       \
  }

#define DEF_FLT_OPS(NAME, CT)                                                  \
  static void gen_##NAME(void* b, size_t n, int o, int kind, int r, int salt) { \
    for (size_t i = 0; i < n; ++i) {                                           \
      CT v = (CT)gen_val(o, kind, r, i, salt);                                 \
      ((CT*)b)[i] = o == O_PROD ? v : v / (CT)4; /* exact either way */        \
    }                                                                          \
  }                                                                            \
  static void red_##NAME(void* acc, const void* in, size_t n, int o) {         \
    CT* a = (CT*)acc;                                                          \
    const CT* x = (const CT*)in;                                               \
    for (size_t i = 0; i < n; ++i) {                                           \
      switch (o) {                                                             \
        case O_MAX: a[i] = x[i] > a[i] ? x[i] : a[i]; break;                   \
        case O_MIN: a[i] = x[i] < a[i] ? x[i] : a[i]; break;                   \
        case O_SUM: a[i] = a[i] + x[i]; break;                                 \
        case O_PROD: a[i] = a[i] * x[i]; break;                                \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  static long long get_##NAME(const void* b, size_t i) {                       \
    return (long long)(((const CT*)b)[i] * (CT)1024);                          \
  }

DEF_INT_OPS(int, int)
DEF_INT_OPS(unsigned, unsigned)
DEF_INT_OPS(long, long)
DEF_INT_OPS(llong, long long)
DEF_INT_OPS(short, short)
DEF_INT_OPS(uchar, unsigned char)
DEF_INT_OPS(u8, uint8_t)
DEF_INT_OPS(i64, int64_t)
DEF_INT_OPS(u64, uint64_t)
DEF_INT_OPS(cbool, _Bool)
DEF_FLT_OPS(double, double)
DEF_FLT_OPS(float, float)

typedef struct {
  const char* name;
  MPI_Datatype type;
  size_t size;
  int kind;
  void (*gen)(void*, size_t, int, int, int, int);
  void (*red)(void*, const void*, size_t, int);
  long long (*get)(const void*, size_t);
} TypeOps;

static int op_allowed(int kind, int o) {
  switch (kind) {
    case K_SIGNED:
    case K_UNSIGNED:
      return 1;
    case K_FLOAT:
      return o <= O_PROD;
    case K_BOOL:
      return o == O_LAND || o == O_LOR || o == O_LXOR;
    case K_BYTE:
      return o == O_BAND || o == O_BOR || o == O_BXOR;
  }
  return 0;
}

static void t_predef(Comm* c, const TypeOps* T, MPI_Op op, int count, int what,
                     int nb) {
  int salt = ++c->salt;
  int o = op_index(op), root = c->size - 1;
  const char* wn[2] = {"allreduce", "reduce"};
  chk_context("%s%s %s MPI_%s on %s count=%d", nbs(nb), wn[what], c->name,
              op_names[o], T->name, count);
  size_t bytes = count * T->size;
  unsigned char* send = chk_malloc(bytes);
  unsigned char* recv = chk_malloc(bytes);
  unsigned char* exp = chk_malloc(bytes);
  unsigned char* tmp = chk_malloc(bytes);
  T->gen(send, count, o, T->kind, c->rank, salt);
  T->gen(exp, count, o, T->kind, 0, salt);
  for (int r = 1; r < c->size; ++r) {
    T->gen(tmp, count, o, T->kind, r, salt);
    T->red(exp, tmp, count, o);
  }
  memset(recv, 0x5A, bytes);
  if (what == 0) {
    RUN(nb, MPI_Allreduce(send, recv, count, T->type, op, c->comm),
        MPI_Iallreduce(send, recv, count, T->type, op, c->comm, &req_));
  } else {
    RUN(nb, MPI_Reduce(send, recv, count, T->type, op, root, c->comm),
        MPI_Ireduce(send, recv, count, T->type, op, root, c->comm, &req_));
  }
  if (what == 0 || c->rank == root) {
    int bad = -1;
    for (int i = 0; i < count && bad < 0; ++i)
      if (T->get(exp, i) != T->get(recv, i)) bad = i;
    if (bad < 0) {
      check_true("recv", 1);
    } else {
      char w[64];
      snprintf(w, sizeof w, "recv[%d]%s", bad, T->kind == K_FLOAT ? " (x1024)" : "");
      check_ll(w, T->get(exp, bad), T->get(recv, bad));
    }
  }
  free(send);
  free(recv);
  free(exp);
  free(tmp);
}

static void suite_ops(Comm* c) {
  TypeOps types[] = {
      {"MPI_INT", MPI_INT, sizeof(int), K_SIGNED, gen_int, red_int, get_int},
      {"MPI_UNSIGNED", MPI_UNSIGNED, sizeof(unsigned), K_UNSIGNED, gen_unsigned,
       red_unsigned, get_unsigned},
      {"MPI_LONG", MPI_LONG, sizeof(long), K_SIGNED, gen_long, red_long, get_long},
      {"MPI_LONG_LONG", MPI_LONG_LONG, sizeof(long long), K_SIGNED, gen_llong,
       red_llong, get_llong},
      {"MPI_SHORT", MPI_SHORT, sizeof(short), K_SIGNED, gen_short, red_short,
       get_short},
      {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 1, K_UNSIGNED, gen_uchar, red_uchar,
       get_uchar},
      {"MPI_UINT8_T", MPI_UINT8_T, 1, K_UNSIGNED, gen_u8, red_u8, get_u8},
      {"MPI_INT64_T", MPI_INT64_T, 8, K_SIGNED, gen_i64, red_i64, get_i64},
      {"MPI_UINT64_T", MPI_UINT64_T, 8, K_UNSIGNED, gen_u64, red_u64, get_u64},
      {"MPI_C_BOOL", MPI_C_BOOL, sizeof(_Bool), K_BOOL, gen_cbool, red_cbool,
       get_cbool},
      {"MPI_BYTE", MPI_BYTE, 1, K_BYTE, gen_uchar, red_uchar, get_uchar},
      {"MPI_DOUBLE", MPI_DOUBLE, sizeof(double), K_FLOAT, gen_double, red_double,
       get_double},
      {"MPI_FLOAT", MPI_FLOAT, sizeof(float), K_FLOAT, gen_float, red_float,
       get_float},
  };
  MPI_Op ops[10] = {MPI_MAX, MPI_MIN,  MPI_SUM, MPI_PROD, MPI_LAND,
                    MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR};
  int ntypes = (int)(sizeof types / sizeof types[0]);
  for (int t = 0; t < ntypes; ++t) {
    if (quick && t % 3 != 0 && types[t].kind != K_FLOAT) continue;
    for (int k = 0; k < 10; ++k) {
      if (!op_allowed(types[t].kind, k)) continue;
      t_predef(c, &types[t], ops[k], 7, 0, 0);
      t_predef(c, &types[t], ops[k], 1000, 0, 1);
      t_predef(c, &types[t], ops[k], 7, 1, k % 2);
    }
  }
}

/* ---------------- Reductions on the char types ---------------- */

/* MPI_CHAR, MPI_SIGNED_CHAR and MPI_UNSIGNED_CHAR with the ten arithmetic,
 * logical and bitwise ops through Allreduce, Reduce, Iallreduce, Ireduce,
 * Scan, Reduce_scatter_block and Reduce_local. MPI-3.1 5.9.2 leaves
 * MPI_CHAR out of the C integers; Open MPI and MPICH reduce it as the C
 * type char (signed on x86-64) and benchmark suites rely on it, Rondo too
 * (docs/mpi.md). Sums and products wrap around (arithmetic mod 256, so the
 * reference does not depend on the reduction order); MAX/MIN compare with
 * the type's signedness. Even elements are small (sums that cannot
 * overflow), odd ones take any byte (wrap, negatives, bytes >= 128).
 *
 * Open MPI 4.1.4's op/avx component saturates 8-bit MPI_SUM from 16
 * elements per call on (open-mpi/ompi#8045, "wontfix"); its generic
 * kernels and MPICH wrap. Outside RONDO_MPI a SUM element whose partial
 * sums may leave the type's range is therefore not checked. */
enum { CH_ALLREDUCE, CH_REDUCE, CH_IALLREDUCE, CH_IREDUCE, CH_SCAN, CH_RSB,
       CH_LOCAL, CH_NWHAT };
static const char* ch_names[CH_NWHAT] = {"allreduce", "reduce", "iallreduce",
                                         "ireduce", "scan", "reduce_scatter_block",
                                         "reduce_local"};

typedef struct {
  const char* name;
  MPI_Datatype type;
  int is_signed;
} CharType;

static unsigned char ch_val(int r, int o, size_t i, int salt, int is_signed) {
  uint32_t h = (uint32_t)pat(r, o + 20, i, salt);
  if (o == O_LAND || o == O_LOR || o == O_LXOR)
    return h % 3 == 0 ? 0 : (unsigned char)(h >> 8 | 1);  /* 0 or any "true" */
  if (i % 2 == 0)
    return is_signed ? (unsigned char)(signed char)((int)(h % 25) - 12)
                     : (unsigned char)(h % 26);
  return (unsigned char)(h >> 8);
}

static int ch_num(unsigned char b, int is_signed) {
  return is_signed ? (int)(signed char)b : (int)b;
}

/* acc = x (op) acc, in the C type's arithmetic. */
static unsigned char ch_red(unsigned char acc, unsigned char x, int o, int s) {
  switch (o) {
    case O_MAX: return ch_num(x, s) > ch_num(acc, s) ? x : acc;
    case O_MIN: return ch_num(x, s) < ch_num(acc, s) ? x : acc;
    case O_SUM: return (unsigned char)(acc + x);
    case O_PROD: return (unsigned char)(acc * x);
    case O_LAND: return acc && x;
    case O_LOR: return acc || x;
    case O_LXOR: return !acc != !x;
    case O_BAND: return acc & x;
    case O_BOR: return acc | x;
    default: return acc ^ x; /* O_BXOR */
  }
}

static void t_char(Comm* c, const CharType* T, MPI_Op op, int what, int count) {
  int salt = ++c->salt;
  int o = op_index(op), s = T->is_signed, root = c->size / 2;
  chk_context("%s %s MPI_%s on %s count=%d", ch_names[what], c->name, op_names[o],
              T->name, count);
  /* Reduce_scatter_block: count per rank; Reduce_local: two operands. */
  size_t n = what == CH_RSB ? (size_t)count * c->size : (size_t)count;
  unsigned char* send = chk_malloc(n + 1);
  unsigned char* recv = chk_malloc(n + 1);
  for (size_t i = 0; i < n; ++i) send[i] = ch_val(c->rank, o, i, salt, s);
  memset(recv, 0x5A, n + 1);
  if (what == CH_LOCAL) /* inout is the next rank's contribution */
    for (size_t i = 0; i < n; ++i) recv[i] = ch_val(c->rank + 1, o, i, salt, s);
  int rc = MPI_SUCCESS;
  MPI_Request req = MPI_REQUEST_NULL;
  switch (what) {
    case CH_ALLREDUCE:
      rc = MPI_Allreduce(send, recv, count, T->type, op, c->comm);
      break;
    case CH_REDUCE:
      rc = MPI_Reduce(send, recv, count, T->type, op, root, c->comm);
      break;
    case CH_IALLREDUCE:
      rc = MPI_Iallreduce(send, recv, count, T->type, op, c->comm, &req);
      break;
    case CH_IREDUCE:
      rc = MPI_Ireduce(send, recv, count, T->type, op, root, c->comm, &req);
      break;
    case CH_SCAN:
      rc = MPI_Scan(send, recv, count, T->type, op, c->comm);
      break;
    case CH_RSB:
      rc = MPI_Reduce_scatter_block(send, recv, count, T->type, op, c->comm);
      break;
    default:
      rc = MPI_Reduce_local(send, recv, count, T->type, op);
      break;
  }
  check_rc("call", rc);
  if (what == CH_IALLREDUCE || what == CH_IREDUCE) finish_req(c, &req);
  int checked = what != CH_REDUCE && what != CH_IREDUCE ? 1 : c->rank == root;
  int lo = 0, hi = c->size; /* the ranks whose contributions are folded */
  if (what == CH_SCAN) hi = c->rank + 1;
  if (what == CH_LOCAL) lo = c->rank, hi = c->rank + 2;
  size_t first = what == CH_RSB ? (size_t)c->rank * count : 0;
  for (int i = 0; i < count && checked; ++i) {
    unsigned char exp = ch_val(lo, o, first + i, salt, s);
    int pos = 0, neg = 0;
    for (int r = lo; r < hi; ++r) {
      unsigned char x = ch_val(r, o, first + i, salt, s);
      if (r > lo) exp = ch_red(exp, x, o, s);
      if (ch_num(x, s) > 0) pos += ch_num(x, s);
      else neg += ch_num(x, s);
    }
#ifndef RONDO_MPI
    if (o == O_SUM && (pos > (s ? 127 : 255) || neg < (s ? -128 : 0))) continue;
#else
    (void)pos;
    (void)neg;
#endif
    if (exp != recv[i]) {
      char w[48];
      snprintf(w, sizeof w, "recv[%d] (as %s)", i, s ? "signed" : "unsigned");
      check_ll(w, ch_num(exp, s), ch_num(recv[i], s));
      checked = 0;
    }
  }
  if (checked) check_true("recv", 1);
  /* Nothing written past the result. */
  size_t out = what == CH_RSB ? (size_t)count : n;
  if ((what != CH_REDUCE && what != CH_IREDUCE) || c->rank == root)
    check_ll("recv past the result", 0x5A, recv[out]);
  free(send);
  free(recv);
}

static void suite_chars(Comm* c, int world) {
  CharType types[3] = {{"MPI_CHAR", MPI_CHAR, CHAR_MIN < 0},
                       {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, 1},
                       {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 0}};
  MPI_Op ops[10] = {MPI_MAX, MPI_MIN,  MPI_SUM, MPI_PROD, MPI_LAND,
                    MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR};
  /* 5000: past the 4 KiB segments of the pipelined algorithms' tests;
   * 70000: past a 64 KiB pipeline segment. */
  int counts[3] = {7, 5000, 70000};
  for (int t = 0; t < 3; ++t)
    for (int k = 0; k < 10; ++k)
      for (int what = 0; what < CH_NWHAT; ++what)
        for (int j = 0; j < 3; ++j) {
          if (j == 0 && quick) continue;
          if (j == 2 && (quick || !world || k != O_SUM)) continue;
          t_char(c, &types[t], ops[k], what, counts[j]);
        }
}

static void suite_special(Comm* c) {
  int roots[3];
  int nroots = roots_of(c->size, roots);
  int counts[3] = {1, 7, 300};
  for (int nb = 0; nb < 2; ++nb) {
    for (int k = 0; k < 3; ++k) {
      if (quick && k == 1) continue;
      int n = counts[k];
      t_ctg_sum(c, n, nb);
      for (int dbl = 0; dbl < 2; ++dbl)
        for (int mx = 0; mx < 2; ++mx)
          for (int w = 0; w < 3; ++w) t_loc(c, n, nb, dbl, mx, w);
      for (int r = 0; r < nroots; ++r) t_noncomm(c, U_REDUCE, n, roots[r], nb);
      for (int w = U_ALLREDUCE; w <= U_RS; ++w) t_noncomm(c, w, n, 0, nb);
      t_usersum(c, U_REDUCE, n, nb);
      t_usersum(c, U_ALLREDUCE, n, nb);
      t_usersum(c, U_SCAN, n, nb);
      t_usersum(c, U_RSB, n, nb);
      t_user_strided(c, n, nb);
    }
  }
  t_type_freed(c);
}

/* ---------------- Back to back (the shared-memory path) ---------------- */

/* The small blocking barrier, bcast, reduce and allreduce of a one-node
 * communicator take Rondo's shared-memory path (RONDO_COLL_SHM): flags
 * reused by every call, roots changing from call to call, in-place forms,
 * sizes around its 16 KiB limit, a bcast whose root and leaves use
 * different datatypes of one signature, and a point-to-point message to
 * the next rank crossing every round of collectives. */
#define SHM_ROUNDS 60
static void suite_back_to_back(Comm* c) {
  static const int counts[5] = {1, 2, 1000, 4096, 4097};
  const int max = 4097;
  int* send = ialloc(max);
  int* recv = ialloc(max);
  int* wide = ialloc(2 * max);
  MPI_Datatype every_other[5];
  for (int k = 0; k < 5; ++k) {
    MPI_Type_vector(counts[k], 1, 2, MPI_INT, &every_other[k]);
    MPI_Type_commit(&every_other[k]);
  }
  const int next = (c->rank + 1) % c->size;
  const int prev = (c->rank + c->size - 1) % c->size;
  for (int i = 0; i < SHM_ROUNDS; ++i) {
    const int salt = ++c->salt;
    const int count = counts[i % 5];
    const int root = (i * 7 + 1) % c->size;
    const int inplace = i % 2;
    chk_context("back-to-back %s round=%d count=%d root=%d%s", c->name, i,
                count, root, ips(inplace));
    int token = pat(c->rank, next, 1, salt), got = SENT;
    MPI_Request rr, sr;
    MPI_Irecv(&got, 1, MPI_INT, prev, TAG_GO, c->comm, &rr);
    MPI_Isend(&token, 1, MPI_INT, next, TAG_GO, c->comm, &sr);
    check_rc("MPI_Barrier", MPI_Barrier(c->comm));

    /* Allreduce, in place every other round. */
    for (int j = 0; j < count; ++j) {
      send[j] = spat(c->rank, j, salt);
      recv[j] = inplace ? send[j] : SENT;
    }
    check_rc("MPI_Allreduce",
             MPI_Allreduce(inplace ? MPI_IN_PLACE : send, recv, count, MPI_INT,
                           MPI_SUM, c->comm));
    int bad = 0;
    for (int j = 0; j < count && !bad; ++j) {
      int exp = 0;
      for (int r = 0; r < c->size; ++r) exp += spat(r, j, salt);
      bad = !check_ll("allreduce", exp, recv[j]);
    }

    /* Reduce to a changing root, in place at the root every other round. */
    const int me = c->rank == root;
    for (int j = 0; j < count; ++j) {
      send[j] = spat(c->rank, j, salt + 1);
      recv[j] = me && inplace ? send[j] : SENT;
    }
    check_rc("MPI_Reduce",
             MPI_Reduce(me && inplace ? MPI_IN_PLACE : send, me ? recv : NULL,
                        count, MPI_INT, MPI_MAX, root, c->comm));
    for (int j = 0; me && j < count && !bad; ++j) {
      int exp = INT_MIN;
      for (int r = 0; r < c->size; ++r)
        if (spat(r, j, salt + 1) > exp) exp = spat(r, j, salt + 1);
      bad = !check_ll("reduce", exp, recv[j]);
    }

    /* Bcast: contiguous ints at the root, every other int of `wide`
     * elsewhere (the gaps stay untouched). */
    if (me) {
      for (int j = 0; j < count; ++j) send[j] = pat(root, 0, j, salt);
      check_rc("MPI_Bcast", MPI_Bcast(send, count, MPI_INT, root, c->comm));
    } else {
      ifill(wide, 2 * (size_t)count, SENT);
      check_rc("MPI_Bcast",
               MPI_Bcast(wide, 1, every_other[i % 5], root, c->comm));
      for (int j = 0; j < count && !bad; ++j)
        bad = !check_ll("bcast", pat(root, 0, j, salt), wide[2 * j]) ||
              !check_ll("bcast gap", SENT, wide[2 * j + 1]);
    }
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    MPI_Wait(&rr, MPI_STATUS_IGNORE);
    check_ll("token across the collectives", pat(prev, c->rank, 1, salt), got);
  }
  /* Three barriers in a row, then a double allreduce: the flags' epochs
   * move on whatever the collective. */
  for (int k = 0; k < 3; ++k) check_rc("MPI_Barrier", MPI_Barrier(c->comm));
  double d = c->rank + 0.5, dsum = 0;
  check_rc("MPI_Allreduce", MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, c->comm));
  check_ll("double allreduce x2", (long long)c->size * c->size,
           (long long)(2 * dsum));
  for (int k = 0; k < 5; ++k) MPI_Type_free(&every_other[k]);
  free(send);
  free(recv);
  free(wide);
}

/* Who leaves a small blocking barrier first depends on the call before it
 * (Rondo's shared-memory path: after a bcast or scatter, its root gathers
 * the arrivals and releases the others; after anything else every rank
 * leaves once it sees every arrival), so each kind of call is followed by
 * a barrier that a late rank, the previous root or not, enters last: it
 * first looks for the message every other rank sends it right after
 * leaving, and must find none; after the barrier it gets all of them. A
 * large bcast between (the message path) must not change the choice on
 * any rank (a disagreement hangs). */
#define TAG_LEFT 79
#define EXIT_ROUNDS 12
static void suite_barrier_exits(Comm* c) {
  const int n = c->size, me = c->rank;
  if (n < 2) return;
  const int big = 5000; /* 20000 bytes: past the path's 16 KiB */
  int* buf = ialloc((size_t)n * big);
  for (int i = 0; i < EXIT_ROUNDS; ++i) {
    const int salt = ++c->salt;
    const int kind = i % 6;
    const int root = (i / 2) % n;
    const int late = i % 2 ? root : (root + 1) % n;
    static const char* const kinds[6] = {"bcast", "scatter", "allreduce",
                                         "barrier", "bcast+large bcast",
                                         "gather"};
    chk_context("barrier exits %s round=%d after %s root=%d late=%d",
                c->name, i, kinds[kind], root, late);
    int v = pat(me, 0, 0, salt), got = SENT;
    switch (kind) {
      case 0:
      case 4:
        got = me == root ? pat(root, 0, 0, salt) : SENT;
        check_rc("MPI_Bcast", MPI_Bcast(&got, 1, MPI_INT, root, c->comm));
        check_ll("bcast", pat(root, 0, 0, salt), got);
        if (kind == 4) {
          const int other = (root + 1) % n;
          for (int j = 0; j < big; ++j)
            buf[j] = me == other ? pat(other, 0, (size_t)j, salt) : SENT;
          check_rc("MPI_Bcast (large)",
                   MPI_Bcast(buf, big, MPI_INT, other, c->comm));
          check_ll("large bcast, last int", pat(other, 0, (size_t)big - 1, salt),
                   buf[big - 1]);
        }
        break;
      case 1:
        for (int q = 0; q < n; ++q) buf[q] = pat(root, q, 0, salt);
        check_rc("MPI_Scatter", MPI_Scatter(buf, 1, MPI_INT, &got, 1, MPI_INT,
                                            root, c->comm));
        check_ll("scatter", pat(root, me, 0, salt), got);
        break;
      case 2: {
        long long sum = 0, mine = spat(me, 0, salt), exp = 0;
        for (int q = 0; q < n; ++q) exp += spat(q, 0, salt);
        check_rc("MPI_Allreduce", MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG,
                                                MPI_SUM, c->comm));
        check_ll("allreduce", exp, sum);
        break;
      }
      case 3:
        check_rc("MPI_Barrier", MPI_Barrier(c->comm));
        break;
      default:
        check_rc("MPI_Gather", MPI_Gather(&v, 1, MPI_INT, buf, 1, MPI_INT,
                                          root, c->comm));
        for (int q = 0; me == root && q < n; ++q)
          check_ll("gather", pat(q, 0, 0, salt), buf[q]);
        break;
    }
    if (me == late) {
      int found = 0;
      for (int k = 0; k < 5000 && !found; ++k)
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_LEFT, c->comm, &found,
                   MPI_STATUS_IGNORE);
      check_true("no rank left the barrier before the late rank entered",
                 !found);
    }
    check_rc("MPI_Barrier", MPI_Barrier(c->comm));
    if (me != late) {
      MPI_Send(&salt, 1, MPI_INT, late, TAG_LEFT, c->comm);
    } else {
      for (int q = 1; q < n; ++q) {
        got = SENT;
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, TAG_LEFT, c->comm,
                 MPI_STATUS_IGNORE);
        check_ll("left-the-barrier message of this round", salt, got);
      }
    }
  }
  free(buf);
}

/* The small blocking gather, allgather, scatter and alltoall take the same
 * path (RONDO_COLL_SHM) while a block fits a rank's 16 KiB slot; scatter
 * and alltoall in rounds when the n blocks do not (an in-place alltoall
 * then takes the message path). Block counts around both edges (4096
 * ints, 4096 / n ints), 0, roots
 * changing, each count plain, in place, and with a receiving (or, for
 * alltoall, sending) datatype with a gap after each int (the gaps stay
 * untouched) against contiguous ints elsewhere. */
static void check_gapped(const char* what, const int* wide, size_t first,
                         size_t n, int src, int dst, int salt, int* bad) {
  for (size_t j = 0; j < n && !*bad; ++j)
    *bad = !check_ll(what, pat(src, dst, j, salt), wide[2 * (first + j)]) ||
           !check_ll("gap", SENT, wide[2 * (first + j) + 1]);
}

#define BLOCK_ROUNDS 24
static void suite_back_to_back_blocks(Comm* c) {
  const int n = c->size, me = c->rank;
  const int counts[6] = {0, 1, 4096 / n, 4096 / n + 1, 4096, 4097};
  const size_t max = (size_t)n * 4097 + 16;
  int* send = ialloc(max);
  int* recv = ialloc(max);
  int* wide = ialloc(2 * max);
  MPI_Datatype gapped; /* one int, extent two */
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &gapped);
  MPI_Type_commit(&gapped);
  for (int i = 0; i < BLOCK_ROUNDS; ++i) {
    const int salt = ++c->salt;
    /* Scatter and alltoall: n blocks of `nc` ints; (all)gather: `gc`.
     * Every count in every mode: plain, in place, gapped, plain. */
    const int nc = counts[(i + 3) % 6], gc = counts[i % 6];
    const int root = (i * 5 + 2) % n;
    const int mode = (i / 6) % 4;
    const int inplace = mode == 1, strided = mode == 2;
    int bad = 0;
    chk_context("back-to-back blocks %s round=%d counts=%d/%d root=%d%s%s",
                c->name, i, nc, gc, root, ips(inplace),
                strided ? " gapped" : "");

    /* Allgather. */
    for (int j = 0; j < gc; ++j) send[j] = pat(me, 0, j, salt);
    ifill(recv, (size_t)n * gc, SENT);
    ifill(wide, 2 * (size_t)n * gc, SENT);
    if (inplace)
      for (int j = 0; j < gc; ++j) recv[(size_t)me * gc + j] = send[j];
    check_rc("MPI_Allgather",
             MPI_Allgather(inplace ? MPI_IN_PLACE : send, gc, MPI_INT,
                           strided ? (void*)wide : (void*)recv, gc,
                           strided ? gapped : MPI_INT, c->comm));
    for (int q = 0; q < n && !bad; ++q) {
      if (strided) {
        check_gapped("allgather", wide, (size_t)q * gc, gc, q, 0, salt, &bad);
      } else {
        for (int j = 0; j < gc && !bad; ++j)
          bad = !check_ll("allgather", pat(q, 0, j, salt),
                          recv[(size_t)q * gc + j]);
      }
    }

    /* Gather to a moving root. */
    const int is_root = me == root;
    for (int j = 0; j < gc; ++j) send[j] = pat(me, root, j, salt);
    ifill(recv, (size_t)n * gc, SENT);
    ifill(wide, 2 * (size_t)n * gc, SENT);
    if (inplace && is_root)
      for (int j = 0; j < gc; ++j) recv[(size_t)me * gc + j] = send[j];
    check_rc("MPI_Gather",
             MPI_Gather(inplace && is_root ? MPI_IN_PLACE : send, gc, MPI_INT,
                        strided ? (void*)wide : (void*)recv, gc,
                        strided ? gapped : MPI_INT, root, c->comm));
    for (int q = 0; is_root && q < n && !bad; ++q) {
      if (strided) {
        check_gapped("gather", wide, (size_t)q * gc, gc, q, root, salt, &bad);
      } else {
        for (int j = 0; j < gc && !bad; ++j)
          bad = !check_ll("gather", pat(q, root, j, salt),
                          recv[(size_t)q * gc + j]);
      }
    }
    if (!is_root)
      for (int j = 0; j < n * gc && !bad; ++j)
        bad = !check_ll("gather: a leaf's recvbuf untouched", SENT, recv[j]);

    /* Scatter from a moving root. */
    for (int q = 0; q < n; ++q)
      for (int j = 0; j < nc; ++j)
        send[(size_t)q * nc + j] = is_root ? pat(root, q, j, salt) : SENT;
    ifill(recv, (size_t)nc, SENT);
    ifill(wide, 2 * (size_t)nc, SENT);
    check_rc("MPI_Scatter",
             MPI_Scatter(send, nc, MPI_INT,
                         inplace && is_root ? MPI_IN_PLACE
                         : strided          ? (void*)wide
                                            : (void*)recv,
                         nc, strided ? gapped : MPI_INT, root, c->comm));
    if (inplace && is_root) {
      for (int j = 0; j < nc && !bad; ++j)
        bad = !check_ll("scatter in place: the root's block stays",
                        pat(root, root, j, salt), send[(size_t)me * nc + j]);
    } else if (strided) {
      check_gapped("scatter", wide, 0, nc, root, me, salt, &bad);
    } else {
      for (int j = 0; j < nc && !bad; ++j)
        bad = !check_ll("scatter", pat(root, me, j, salt), recv[j]);
    }

    /* Alltoall (strided rounds: every other int of `wide` is sent). */
    ifill(wide, 2 * (size_t)n * nc, SENT);
    for (int q = 0; q < n; ++q)
      for (int j = 0; j < nc; ++j) {
        const size_t at = (size_t)q * nc + j;
        (inplace ? recv : send)[at] = pat(me, q, j, salt);
        wide[2 * at] = pat(me, q, j, salt);
        if (!inplace) recv[at] = SENT;
      }
    check_rc("MPI_Alltoall",
             MPI_Alltoall(inplace   ? MPI_IN_PLACE
                          : strided ? (void*)wide
                                    : (void*)send,
                          nc, strided ? gapped : MPI_INT, recv, nc, MPI_INT,
                          c->comm));
    for (int q = 0; q < n && !bad; ++q)
      for (int j = 0; j < nc && !bad; ++j)
        bad = !check_ll("alltoall", pat(q, me, j, salt),
                        recv[(size_t)q * nc + j]);
    /* A barrier now and then: the epochs move on whatever the call. */
    if (i % 3 == 0) check_rc("MPI_Barrier", MPI_Barrier(c->comm));
  }
  MPI_Type_free(&gapped);
  free(send);
  free(recv);
  free(wide);
}

/* ---------------- Large allreduce (the shared-memory rounds) ---------------- */

/* Allreduces past a slot (16 KiB) run through the communicator's large
 * segment on one node (from 3 ranks; below 512 KiB on 2) in rounds of
 * 256 KiB, each rank reducing its portion of a round and every rank copying
 * the others' out. Counts: just past a slot, one round and 5 ints (the last
 * round's portions mostly empty), three rounds and a part; in place every
 * other call; a small bcast between calls (the epochs and regions move on);
 * the int past the end stays. Then the non-commutative matrix product over
 * two rounds and past a slot (rank order in every portion), and a
 * contiguous type of 3 ints (portions not of whole cache lines). */
static void suite_large_allreduce(Comm* c) {
  static const int counts[3] = {4097, 65536 + 5, 3 * 65536 + 17};
  const int max = 3 * 65536 + 17;
  int* send = ialloc(max);
  int* recv = ialloc(max + 1);
  int* exp = ialloc(max);
  for (int i = 0; i < 6; ++i) {
    const int salt = ++c->salt;
    const int count = counts[i % 3];
    const int inplace = i >= 3;
    const int root = i % c->size;
    chk_context("large allreduce %s call=%d count=%d%s", c->name, i, count,
                ips(inplace));
    for (int j = 0; j < count; ++j) {
      send[j] = spat(c->rank, j, salt);
      recv[j] = inplace ? send[j] : SENT;
      exp[j] = 0;
      for (int r = 0; r < c->size; ++r) exp[j] += spat(r, j, salt);
    }
    recv[count] = SENT;
    check_rc("MPI_Allreduce",
             MPI_Allreduce(inplace ? MPI_IN_PLACE : send, recv, count, MPI_INT,
                           MPI_SUM, c->comm));
    check_ints("recv", exp, recv, count);
    check_ll("the int past the end", SENT, recv[count]);
    int b = c->rank == root ? salt : SENT;
    check_rc("MPI_Bcast", MPI_Bcast(&b, 1, MPI_INT, root, c->comm));
    check_ll("bcast between", salt, b);
  }
  free(send);
  free(recv);
  free(exp);
  for (int nb = 0; nb < 2; ++nb) {
    t_noncomm(c, U_ALLREDUCE, 16384 + 16, 0, nb); /* 256 KiB + 256 B */
    t_noncomm(c, U_ALLREDUCE, 1100, 0, nb);       /* 17600 B */
    t_ctg_sum(c, 2000, nb);                       /* 24000 B */
  }
}

/* ---------------- Driver ---------------- */

static void run_comm(Comm* c, int world) {
  if (quick) {
    int counts[3] = {0, 7, 1000};
    for (int k = 0; k < 3; ++k) suite_count(c, counts[k], 1);
  } else {
    int counts[4] = {0, 1, 7, 1000};
    for (int k = 0; k < 4; ++k) suite_count(c, counts[k], 1);
  }
  for (int nb = 0; nb < 2; ++nb) t_barrier(c, nb);
  suite_back_to_back(c);
  suite_back_to_back_blocks(c);
  suite_barrier_exits(c);
  suite_large_allreduce(c);
  if (!quick || world) suite_count(c, 70000, !quick);
  if (world) suite_mib(c);
  suite_special(c);
  if (world || !quick) suite_datatypes(c);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else {
      if (chk_rank == 0) fprintf(stderr, "usage: coll_check [--quick]\n");
      MPI_Finalize();
      return 2;
    }
  }
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  make_layouts();
  MPI_Type_contiguous(4, MPI_INT, &mat_type);
  MPI_Type_commit(&mat_type);
  MPI_Op_create(user_sum, 1, &op_user_sum);
  MPI_Op_create(mat_mul, 0, &op_mat);

  /* MPI_COMM_WORLD itself, and the predefined ops on it. */
  Comm world = {MPI_COMM_WORLD, chk_rank, size, 0, ""};
  snprintf(world.name, sizeof world.name, "world(%d)", size);
  run_comm(&world, 1);
  suite_ops(&world);
  suite_chars(&world, 1);

  /* Splits: sizes s and size-s for s = 1..size-1 (--quick: s = 1 and
   * size/2). */
  for (int s = 1; s < size; ++s) {
    if (quick && s != 1 && s != size / 2) continue;
    int color = chk_rank < s ? 0 : 1;
    int key = s % 2 ? size - chk_rank : chk_rank; /* odd s: reversed order */
    Comm sub = {MPI_COMM_NULL, 0, 0, 0, ""};
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &sub.comm);
    MPI_Comm_rank(sub.comm, &sub.rank);
    MPI_Comm_size(sub.comm, &sub.size);
    snprintf(sub.name, sizeof sub.name, "split%d%s(%d)", s, color ? "b" : "a",
             sub.size);
    chk_context("split s=%d", s);
    check_ll("sub-communicator size", color ? size - s : s, sub.size);
    int exp_rank = s % 2 ? (color ? size - 1 - chk_rank : s - 1 - chk_rank)
                         : (color ? chk_rank - s : chk_rank);
    check_ll("sub-communicator rank", exp_rank, sub.rank);
    run_comm(&sub, 0);
    if (s == (size + 1) / 2 && !quick) {
      suite_ops(&sub);
      suite_chars(&sub, 0);
    }
    MPI_Comm_free(&sub.comm);
  }

  MPI_Op_free(&op_user_sum);
  MPI_Op_free(&op_mat);
  MPI_Type_free(&mat_type);
  free_layouts();
  int rc = chk_finish("coll_check");
  MPI_Finalize();
  return rc;
}
