/* outstanding_check: many nonblocking collectives in flight at once, mixed
 * with point-to-point traffic, completed in a shuffled order.
 *
 *   outstanding_check
 *
 * 1. Three duplicates of MPI_COMM_WORLD; on each, 20 nonblocking
 *    collectives (Iallreduce, Ibcast with varying roots, Ialltoall,
 *    Ibarrier, Igather, Iallgather, Iscan) of varying sizes, started in the
 *    same order per communicator on every rank but with the communicators
 *    interleaved differently on odd and even ranks, and Isend/Irecv traffic
 *    on the duplicates and MPI_COMM_WORLD (tags that mean nothing in
 *    particular, two messages per tag to check non-overtaking). Then every
 *    request is completed in a per-rank shuffled order: a MPI_Waitall on a
 *    part, MPI_Wait one by one, MPI_Test loops, MPI_Waitany, MPI_Testsome.
 * 2. Blocking and nonblocking collectives alternating on one communicator
 *    (Ibcast outstanding while MPI_Allreduce runs, and more), as MPI allows
 *    when every rank calls them in the same order.
 * 3. 300 small Iallreduce/Ibcast outstanding on one communicator.
 * Every result is compared with a locally computed reference. */
#include "check.h"

#define SENT (-123456789)
#define NCOMMS 3
#define PER_COMM 20

static int world_rank, world_size;

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

static uint32_t rng_state;
static uint32_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

enum {
  K_ALLREDUCE,
  K_BCAST,
  K_ALLTOALL,
  K_BARRIER,
  K_GATHER,
  K_ALLGATHER,
  K_SCAN,
  K_NCOLL,
  K_SEND = 100,
  K_RECV
};
static const char* kind_names[] = {"Iallreduce", "Ibcast",  "Ialltoall", "Ibarrier",
                                   "Igather",    "Iallgather", "Iscan"};

typedef struct {
  int kind;
  MPI_Comm comm;
  const char* comm_name;
  int rank, size;
  int root, count, salt;
  int peer, tag;  /* point-to-point */
  int *send, *recv;
  size_t recv_len;
} Op;

/* Starts a collective; the reference is computed when checking. */
static void start_coll(Op* op, MPI_Request* req) {
  int n = op->count, P = op->size, me = op->rank, s = op->salt;
  switch (op->kind) {
    case K_ALLREDUCE:
    case K_SCAN:
      op->send = ialloc(n);
      op->recv = ialloc(n);
      op->recv_len = n;
      for (int i = 0; i < n; ++i) op->send[i] = spat(me, i, s);
      ifill(op->recv, n, SENT);
      if (op->kind == K_SCAN)
        MPI_Iscan(op->send, op->recv, n, MPI_INT, MPI_SUM, op->comm, req);
      else
        MPI_Iallreduce(op->send, op->recv, n, MPI_INT, MPI_SUM, op->comm, req);
      break;
    case K_BCAST:
      op->recv = ialloc(n);
      op->recv_len = n;
      for (int i = 0; i < n; ++i) op->recv[i] = me == op->root ? pat(op->root, 0, i, s) : SENT;
      MPI_Ibcast(op->recv, n, MPI_INT, op->root, op->comm, req);
      break;
    case K_ALLTOALL:
      op->send = ialloc((size_t)n * P);
      op->recv = ialloc((size_t)n * P);
      op->recv_len = (size_t)n * P;
      for (int r = 0; r < P; ++r)
        for (int i = 0; i < n; ++i) op->send[(size_t)r * n + i] = pat(me, r, i, s);
      ifill(op->recv, op->recv_len, SENT);
      MPI_Ialltoall(op->send, n, MPI_INT, op->recv, n, MPI_INT, op->comm, req);
      break;
    case K_BARRIER:
      MPI_Ibarrier(op->comm, req);
      break;
    case K_GATHER:
    case K_ALLGATHER:
      op->send = ialloc(n);
      op->recv = ialloc((size_t)n * P);
      op->recv_len = (size_t)n * P;
      for (int i = 0; i < n; ++i) op->send[i] = pat(me, 1, i, s);
      ifill(op->recv, op->recv_len, SENT);
      if (op->kind == K_GATHER)
        MPI_Igather(op->send, n, MPI_INT, op->recv, n, MPI_INT, op->root, op->comm,
                    req);
      else
        MPI_Iallgather(op->send, n, MPI_INT, op->recv, n, MPI_INT, op->comm, req);
      break;
  }
}

static void check_op(const Op* op) {
  int n = op->count, P = op->size, me = op->rank, s = op->salt;
  if (op->kind == K_SEND || op->kind == K_BARRIER) {
    free(op->send);
    return;
  }
  if (op->kind >= K_SEND)
    chk_context("Irecv %s from %d tag %d count %d", op->comm_name, op->peer, op->tag, n);
  else
    chk_context("%s %s root=%d count=%d salt=%d", kind_names[op->kind], op->comm_name,
                op->root, n, s);
  int* exp = ialloc(op->recv_len);
  int check = 1;
  switch (op->kind) {
    case K_ALLREDUCE:
    case K_SCAN: {
      int upto = op->kind == K_SCAN ? me + 1 : P;
      for (int i = 0; i < n; ++i) {
        exp[i] = 0;
        for (int r = 0; r < upto; ++r) exp[i] += spat(r, i, s);
      }
      break;
    }
    case K_BCAST:
      for (int i = 0; i < n; ++i) exp[i] = pat(op->root, 0, i, s);
      break;
    case K_ALLTOALL:
      for (int r = 0; r < P; ++r)
        for (int i = 0; i < n; ++i) exp[(size_t)r * n + i] = pat(r, me, i, s);
      break;
    case K_GATHER:
    case K_ALLGATHER:
      for (int r = 0; r < P; ++r)
        for (int i = 0; i < n; ++i) exp[(size_t)r * n + i] = pat(r, 1, i, s);
      check = op->kind == K_ALLGATHER || me == op->root;
      break;
    case K_RECV:
      for (int i = 0; i < n; ++i) exp[i] = pat(op->peer, op->tag, i, s);
      break;
  }
  if (check) check_ints("recv", exp, op->recv, op->recv_len);
  free(exp);
  free(op->send);
  free(op->recv);
}

/* Part 1. */
static void many_outstanding(int round) {
  MPI_Comm comms[NCOMMS];
  char names[NCOMMS][16];
  for (int k = 0; k < NCOMMS; ++k) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[k]);
    snprintf(names[k], sizeof names[k], "dup%d", k);
  }
  int P = world_size, me = world_rank;
  /* Point-to-point: 2 messages per (iteration, comm slot) to and from
   * different peers, on a duplicate or MPI_COMM_WORLD. */
  int max_ops = NCOMMS * PER_COMM + PER_COMM * 4 * 2;
  Op* ops = (Op*)calloc(max_ops, sizeof(Op));
  MPI_Request* reqs = (MPI_Request*)chk_malloc(max_ops * sizeof(MPI_Request));
  int nops = 0;
  int p2p_counts[4] = {1, 100, 5000, 0};
  for (int j = 0; j < PER_COMM; ++j) {
    for (int kk = 0; kk < NCOMMS; ++kk) {
      int k = me % 2 ? NCOMMS - 1 - kk : kk; /* odd ranks: reverse order */
      Op* op = &ops[nops];
      op->kind = (j + k) % K_NCOLL;
      op->comm = comms[k];
      op->comm_name = names[k];
      op->rank = me;
      op->size = P;
      op->root = (j * 3 + k) % P;
      int sizes[4] = {1, 7, 1000, 20000};
      op->count = sizes[(j + 2 * k) % 4];
      if (op->kind == K_ALLTOALL || op->kind == K_GATHER || op->kind == K_ALLGATHER)
        op->count /= 8;
      op->salt = round * 1000 + j * 10 + k;
      start_coll(op, &reqs[nops]);
      ++nops;
    }
    /* Traffic: to me+d, from me-d. */
    int d = 1 + j % (P > 1 ? P - 1 : 1);
    if (P == 1) d = 0;
    int to = (me + d) % P, from = (me - d + P) % P;
    int slot = j % 4;
    MPI_Comm pc = slot == 3 ? MPI_COMM_WORLD : comms[slot];
    const char* pname = slot == 3 ? "world" : names[slot];
    int tag = j % 5; /* small tags, reused */
    for (int m = 0; m < 2; ++m) {
      int count = p2p_counts[(j + m) % 4];
      int salt = round * 1000 + j * 10 + m;
      Op* r = &ops[nops];
      r->kind = K_RECV;
      r->comm = pc;
      r->comm_name = pname;
      r->peer = from;
      r->tag = tag;
      r->count = count;
      r->salt = salt;
      r->recv = ialloc(count);
      r->recv_len = count;
      ifill(r->recv, count, SENT);
      /* Odd j: post the receives first. */
      if (j % 2) {
        MPI_Irecv(r->recv, count, MPI_INT, from, tag, pc, &reqs[nops]);
      }
      Op* s = &ops[nops + 1];
      s->kind = K_SEND;
      s->send = ialloc(count);
      for (int i = 0; i < count; ++i) s->send[i] = pat(me, tag, i, salt);
      MPI_Isend(s->send, count, MPI_INT, to, tag, pc, &reqs[nops + 1]);
      if (!(j % 2)) {
        MPI_Irecv(r->recv, count, MPI_INT, from, tag, pc, &reqs[nops]);
      }
      nops += 2;
    }
  }

  /* Shuffle, then complete in five different ways. */
  int* order = ialloc(nops);
  for (int i = 0; i < nops; ++i) order[i] = i;
  for (int i = nops - 1; i > 0; --i) {
    int k = (int)(rng() % (uint32_t)(i + 1));
    int t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
  int part = nops / 5;
  MPI_Request* tmp = (MPI_Request*)chk_malloc(nops * sizeof(MPI_Request));
  chk_context("round %d completion", round);
  /* a) Waitall on the first part. */
  for (int i = 0; i < part; ++i) tmp[i] = reqs[order[i]];
  check_rc("Waitall", MPI_Waitall(part, tmp, MPI_STATUSES_IGNORE));
  for (int i = 0; i < part; ++i) {
    if (!check_true("Waitall set MPI_REQUEST_NULL", tmp[i] == MPI_REQUEST_NULL)) break;
    reqs[order[i]] = MPI_REQUEST_NULL;
  }
  /* b) Wait one by one. */
  for (int i = part; i < 2 * part; ++i) check_rc("Wait", MPI_Wait(&reqs[order[i]], MPI_STATUS_IGNORE));
  /* c) Test loops, round robin. */
  for (int left = part; left > 0;) {
    left = 0;
    for (int i = 2 * part; i < 3 * part; ++i) {
      int flag = 0;
      if (reqs[order[i]] == MPI_REQUEST_NULL) continue;
      MPI_Test(&reqs[order[i]], &flag, MPI_STATUS_IGNORE);
      if (!flag) ++left;
    }
  }
  /* d) Waitany until MPI_UNDEFINED. */
  int n4 = part;
  for (int i = 0; i < n4; ++i) tmp[i] = reqs[order[3 * part + i]];
  int done = 0;
  for (;;) {
    int idx = -7;
    MPI_Waitany(n4, tmp, &idx, MPI_STATUS_IGNORE);
    if (idx == MPI_UNDEFINED) break;
    if (!check_true("Waitany index in range", idx >= 0 && idx < n4)) break;
    ++done;
  }
  check_ll("Waitany completions", n4, done);
  for (int i = 0; i < n4; ++i) reqs[order[3 * part + i]] = MPI_REQUEST_NULL;
  /* e) Testsome on the rest. */
  int n5 = nops - 4 * part;
  for (int i = 0; i < n5; ++i) tmp[i] = reqs[order[4 * part + i]];
  int* idx = ialloc(n5);
  done = 0;
  for (;;) {
    int out = -7;
    MPI_Testsome(n5, tmp, &out, idx, MPI_STATUSES_IGNORE);
    if (out == MPI_UNDEFINED) break;
    done += out;
  }
  check_ll("Testsome completions", n5, done);
  free(idx);
  for (int i = 0; i < nops; ++i) check_op(&ops[i]);
  free(order);
  free(tmp);
  free(reqs);
  free(ops);
  for (int k = 0; k < NCOMMS; ++k) MPI_Comm_free(&comms[k]);
}

/* Part 2: blocking collectives while nonblocking ones are outstanding on the
 * same communicator. */
static void mixed_blocking(MPI_Comm comm, const char* name, int round) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  int sizes[3] = {1, 1000, 70000};
  for (int k = 0; k < 3; ++k) {
    int n = sizes[k], root = (round + k) % P, salt = round * 100 + k;
    chk_context("mixed %s round %d count %d", name, round, n);
    int* bbuf = ialloc(n);
    int* bexp = ialloc(n);
    int* asend = ialloc(n);
    int* arecv = ialloc(n);
    int* aexp = ialloc(n);
    for (int i = 0; i < n; ++i) {
      bexp[i] = pat(root, 0, i, salt);
      bbuf[i] = me == root ? bexp[i] : SENT;
      asend[i] = spat(me, i, salt);
      aexp[i] = 0;
      for (int r = 0; r < P; ++r) aexp[i] += spat(r, i, salt);
    }
    /* Ibcast outstanding while a blocking Allreduce runs. */
    MPI_Request req;
    MPI_Ibcast(bbuf, n, MPI_INT, root, comm, &req);
    MPI_Allreduce(asend, arecv, n, MPI_INT, MPI_SUM, comm);
    check_ints("Allreduce under an Ibcast", aexp, arecv, n);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_ints("Ibcast around an Allreduce", bexp, bbuf, n);

    /* Iallreduce outstanding across a Bcast, an Ibarrier, an Alltoall
     * and a Barrier. */
    ifill(arecv, n, SENT);
    for (int i = 0; i < n; ++i) bbuf[i] = me == root ? bexp[i] : SENT;
    MPI_Request reqs[2];
    MPI_Iallreduce(asend, arecv, n, MPI_INT, MPI_SUM, comm, &reqs[0]);
    MPI_Bcast(bbuf, n, MPI_INT, root, comm);
    check_ints("Bcast under an Iallreduce", bexp, bbuf, n);
    MPI_Ibarrier(comm, &reqs[1]);
    int a2a_send[64], a2a_recv[64], a2a_exp[64];
    for (int r = 0; r < P && r < 64; ++r) {
      a2a_send[r] = pat(me, r, 0, salt);
      a2a_exp[r] = pat(r, me, 0, salt);
      a2a_recv[r] = SENT;
    }
    if (P <= 64) {
      MPI_Alltoall(a2a_send, 1, MPI_INT, a2a_recv, 1, MPI_INT, comm);
      check_ints("Alltoall under Iallreduce+Ibarrier", a2a_exp, a2a_recv, P);
    }
    MPI_Barrier(comm);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    check_ints("Iallreduce around blocking collectives", aexp, arecv, n);
    free(bbuf);
    free(bexp);
    free(asend);
    free(arecv);
    free(aexp);
  }
}

/* Part 3: hundreds in flight on one communicator. */
static void hundreds(MPI_Comm comm, const char* name) {
  enum { N = 300 };
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  int send[N], recv[N];
  MPI_Request reqs[N];
  for (int i = 0; i < N; ++i) {
    if (i % 2) {
      recv[i] = me == i % P ? pat(i % P, 0, i, 9) : SENT;
      MPI_Ibcast(&recv[i], 1, MPI_INT, i % P, comm, &reqs[i]);
    } else {
      send[i] = spat(me, i, 9);
      recv[i] = SENT;
      MPI_Iallreduce(&send[i], &recv[i], 1, MPI_INT, MPI_SUM, comm, &reqs[i]);
    }
  }
  /* Complete from the last one backwards. */
  for (int i = N - 1; i >= 0; --i) MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
  int exp[N];
  for (int i = 0; i < N; ++i) {
    if (i % 2) {
      exp[i] = pat(i % P, 0, i, 9);
    } else {
      exp[i] = 0;
      for (int r = 0; r < P; ++r) exp[i] += spat(r, i, 9);
    }
  }
  chk_context("%d outstanding on %s", N, name);
  check_ints("results", exp, recv, N);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  rng_state = 0x9E3779B9u ^ (uint32_t)(world_rank * 7919 + 1);
  for (int round = 0; round < 3; ++round) many_outstanding(round);

  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &half);
  for (int round = 0; round < 3; ++round) {
    mixed_blocking(dup, "dup", round);
    mixed_blocking(half, "half", round);
    mixed_blocking(MPI_COMM_WORLD, "world", round);
  }
  hundreds(dup, "dup");
  hundreds(half, "half");
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  int rc = chk_finish("outstanding_check");
  MPI_Finalize();
  return rc;
}
