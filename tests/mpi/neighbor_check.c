/* neighbor_check: MPI-3 neighbourhood collectives and the process
 * topologies they run on, on any number of ranks:
 *   - MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w), blocking,
 *     nonblocking (I) and persistent (MPI-4 _init, started 3 times with new
 *     data each time), on
 *       cartesian grids: a periodic ring, a non-periodic line (MPI_PROC_NULL
 *       blocks stay untouched), a 2-D grid periodic in one dimension, and a
 *       grid with a periodic dimension of one rank (every rank its own
 *       neighbour on both sides);
 *       an irregular distributed graph (MPI_Dist_graph_create_adjacent,
 *       with self loops and, on 1 or 2 ranks, repeated edges);
 *       a distributed graph from MPI_Dist_graph_create (every rank gives
 *       some edges);
 *       a graph (MPI_Graph_create);
 *   - derived datatypes (a strided vector) on either side, v-forms with
 *     gaps and per-edge counts, w-forms with byte displacements;
 *   - nonblocking neighbourhood collectives mixed with point-to-point
 *     requests in one MPI_Waitall;
 *   - MPI_Cart_sub, MPI_Graph_get, MPI_Graphdims_get,
 *     MPI_Graph_neighbors(_count), MPI_Dist_graph_neighbors(_count);
 *   - bad arguments: the error class, and with Rondo the argument named.
 * Every block is checked against what its sender put in the slot of that
 * edge. On a cartesian grid block s of the sender lands in block s ^ 1 of
 * the receiver (MPI-4.0 errata, mpi-forum/mpi-issues#153), also where both
 * neighbours are one rank. On graphs the k-th edge from a rank to another
 * is the k-th edge into the other from it.
 *
 * Against Open MPI 4.1.4 the persistent forms are its MPIX_*_init
 * (mpi-ext.h). Its nonblocking and persistent forms (coll/libnbc) still
 * pair the blocks of a dimension of one or two ranks the old way
 * (open-mpi/ompi#14430), so the reference run skips those forms on the
 * degenerate grid and on a ring of one or two ranks. */
#include "check.h"

#if !defined(RONDO_MPI) && defined(OPEN_MPI)
#include <mpi-ext.h>
#define MPI_Neighbor_allgather_init MPIX_Neighbor_allgather_init
#define MPI_Neighbor_allgatherv_init MPIX_Neighbor_allgatherv_init
#define MPI_Neighbor_alltoall_init MPIX_Neighbor_alltoall_init
#define MPI_Neighbor_alltoallv_init MPIX_Neighbor_alltoallv_init
#define MPI_Neighbor_alltoallw_init MPIX_Neighbor_alltoallw_init
#endif

static int me, n;
enum { kC = 3, kIters = 3 }; /* ints per block; starts of a persistent call */
enum Mode { kBlocking, kNonblocking, kPersistent, kNumModes };
static const char* const kModeNames[] = {"blocking", "nonblocking",
                                         "persistent"};

/* What `rank` sends in its out-slot `slot` (allgather: slot 0), element i,
 * at start `it`. */
static int val(int rank, int slot, int it, int i) {
  return rank * 100000 + slot * 1000 + it * 100 + i + 1;
}

/* A rank's view of a topology. */
typedef struct {
  const char* name;
  MPI_Comm comm;
  int size, rank;
  int indeg, outdeg;
  int* in;       /* in-neighbours (MPI_PROC_NULL allowed) */
  int* out;      /* out-neighbours */
  int* in_slot;  /* per in-slot: the sender's out-slot that lands here */
  int* in_count; /* alltoallv: ints per in-slot (1 + in_slot % kC) */
  int degenerate; /* a periodic dimension of 1 or 2 ranks */
} Topo;

/* Graph view: in/out lists given; the sender's slots come from every rank's
 * out-list (gathered). */
static void pair_graph(Topo* t) {
  int* outdegs = chk_malloc(sizeof(int) * (size_t)t->size);
  MPI_Allgather(&t->outdeg, 1, MPI_INT, outdegs, 1, MPI_INT, t->comm);
  int* displs = chk_malloc(sizeof(int) * (size_t)t->size);
  int total = 0;
  for (int r = 0; r < t->size; ++r) {
    displs[r] = total;
    total += outdegs[r];
  }
  int* all = chk_malloc(sizeof(int) * (size_t)(total ? total : 1));
  MPI_Allgatherv(t->out, t->outdeg, MPI_INT, all, outdegs, displs, MPI_INT,
                 t->comm);
  for (int k = 0; k < t->indeg; ++k) {
    const int s = t->in[k];
    int j = 0; /* this is the j-th in-edge from s */
    for (int q = 0; q < k; ++q) j += t->in[q] == s;
    t->in_slot[k] = -1;
    for (int q = 0; q < outdegs[s]; ++q)
      if (all[displs[s] + q] == t->rank && j-- == 0) {
        t->in_slot[k] = q;
        break;
      }
    check_true("graph: every in-edge has its out-edge", t->in_slot[k] >= 0);
  }
  free(all);
  free(displs);
  free(outdegs);
}

static void alloc_lists(Topo* t) {
  t->in = chk_malloc(sizeof(int) * (size_t)(t->indeg + 1));
  t->out = chk_malloc(sizeof(int) * (size_t)(t->outdeg + 1));
  t->in_slot = chk_malloc(sizeof(int) * (size_t)(t->indeg + 1));
  t->in_count = chk_malloc(sizeof(int) * (size_t)(t->indeg + 1));
}

static void finish_topo(Topo* t) {
  for (int k = 0; k < t->indeg; ++k)
    t->in_count[k] = t->in_slot[k] >= 0 ? 1 + t->in_slot[k] % kC : 1;
}

static Topo make_cart(const char* name, int nd, const int* dims,
                      const int* periods) {
  Topo t;
  memset(&t, 0, sizeof t);
  t.name = name;
  check_rc("Cart_create",
           MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &t.comm));
  MPI_Comm_size(t.comm, &t.size);
  MPI_Comm_rank(t.comm, &t.rank);
  int topo = -1;
  MPI_Topo_test(t.comm, &topo);
  check_ll("Topo_test is MPI_CART", MPI_CART, topo);
  t.indeg = t.outdeg = 2 * nd;
  alloc_lists(&t);
  for (int d = 0; d < nd; ++d) {
    int lo, hi;
    check_rc("Cart_shift", MPI_Cart_shift(t.comm, d, 1, &lo, &hi));
    t.in[2 * d] = t.out[2 * d] = lo;
    t.in[2 * d + 1] = t.out[2 * d + 1] = hi;
    t.in_slot[2 * d] = lo == MPI_PROC_NULL ? -1 : 2 * d + 1;
    t.in_slot[2 * d + 1] = hi == MPI_PROC_NULL ? -1 : 2 * d;
    if (periods[d] && dims[d] <= 2) t.degenerate = 1;
  }
  finish_topo(&t);
  return t;
}

static Topo make_dist_adjacent(void) {
  /* Rank r sends to r+1 and r+3 (mod n), and to itself when r is even. */
  Topo t;
  memset(&t, 0, sizeof t);
  t.name = "dist graph (adjacent)";
  t.size = n;
  t.rank = me;
  int outs[3], no = 0;
  outs[no++] = (me + 1) % n;
  outs[no++] = (me + 3) % n;
  if (me % 2 == 0) outs[no++] = me;
  int* ins = chk_malloc(sizeof(int) * (size_t)(3 * n));
  int ni = 0;
  for (int s = 0; s < n; ++s) {
    if ((s + 1) % n == me) ins[ni++] = s;
    if ((s + 3) % n == me) ins[ni++] = s;
    if (s % 2 == 0 && s == me) ins[ni++] = s;
  }
  int* w_in = chk_malloc(sizeof(int) * (size_t)(ni + 1));
  int w_out[3];
  for (int k = 0; k < ni; ++k) w_in[k] = 10 + k;
  for (int k = 0; k < no; ++k) w_out[k] = 20 + k;
  check_rc("Dist_graph_create_adjacent",
           MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, ins, w_in, no,
                                          outs, w_out, MPI_INFO_NULL, 0,
                                          &t.comm));
  int indeg = -1, outdeg = -1, weighted = -1;
  check_rc("Dist_graph_neighbors_count",
           MPI_Dist_graph_neighbors_count(t.comm, &indeg, &outdeg, &weighted));
  check_ll("adjacent indegree", ni, indeg);
  check_ll("adjacent outdegree", no, outdeg);
  check_true("adjacent weighted", weighted != 0);
  t.indeg = ni;
  t.outdeg = no;
  alloc_lists(&t);
  int* wi = chk_malloc(sizeof(int) * (size_t)(ni + 1));
  int wo[3];
  check_rc("Dist_graph_neighbors",
           MPI_Dist_graph_neighbors(t.comm, ni, t.in, wi, no, t.out, wo));
  check_ints("adjacent sources", ins, t.in, (size_t)ni);
  check_ints("adjacent destinations", outs, t.out, (size_t)no);
  check_ints("adjacent source weights", w_in, wi, (size_t)ni);
  check_ints("adjacent destination weights", w_out, wo, (size_t)no);
  pair_graph(&t);
  finish_topo(&t);
  free(wi);
  free(w_in);
  free(ins);
  return t;
}

static Topo make_dist_general(void) {
  /* Every rank gives the edges r -> 2r+1 and r -> r-1 (mod n), and rank 0
   * also gives n-1 -> 0; MPI_Dist_graph_create distributes them. */
  Topo t;
  memset(&t, 0, sizeof t);
  t.name = "dist graph (general)";
  t.size = n;
  t.rank = me;
  int sources[2] = {me, n - 1};
  int degrees[2] = {2, 1};
  int dests[3] = {(2 * me + 1) % n, (me + n - 1) % n, 0};
  check_rc("Dist_graph_create",
           MPI_Dist_graph_create(MPI_COMM_WORLD, me == 0 ? 2 : 1, sources,
                                 degrees, dests, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &t.comm));
  int weighted = -1;
  check_rc("Dist_graph_neighbors_count",
           MPI_Dist_graph_neighbors_count(t.comm, &t.indeg, &t.outdeg,
                                          &weighted));
  check_ll("general graph unweighted", 0, weighted);
  /* Every rank knows the whole graph: count its edges. */
  int want_in = 0, want_out = 2 + (me == n - 1);
  for (int s = 0; s < n; ++s) {
    want_in += (2 * s + 1) % n == me;
    want_in += (s + n - 1) % n == me;
  }
  want_in += me == 0;
  check_ll("general indegree", want_in, t.indeg);
  check_ll("general outdegree", want_out, t.outdeg);
  alloc_lists(&t);
  check_rc("Dist_graph_neighbors",
           MPI_Dist_graph_neighbors(t.comm, t.indeg, t.in, MPI_UNWEIGHTED,
                                    t.outdeg, t.out, MPI_UNWEIGHTED));
  pair_graph(&t);
  finish_topo(&t);
  return t;
}

static Topo make_graph(void) {
  /* A ring with both neighbours (r-1, r+1 mod n), as MPI_Graph_create. */
  Topo t;
  memset(&t, 0, sizeof t);
  t.name = "graph";
  int* index = chk_malloc(sizeof(int) * (size_t)n);
  int* edges = chk_malloc(sizeof(int) * (size_t)(2 * n));
  for (int r = 0; r < n; ++r) {
    index[r] = 2 * (r + 1);
    edges[2 * r] = (r + n - 1) % n;
    edges[2 * r + 1] = (r + 1) % n;
  }
  check_rc("Graph_create",
           MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &t.comm));
  int topo = -1, nnodes = -1, nedges = -1, count = -1;
  MPI_Topo_test(t.comm, &topo);
  check_ll("Topo_test is MPI_GRAPH", MPI_GRAPH, topo);
  check_rc("Graphdims_get", MPI_Graphdims_get(t.comm, &nnodes, &nedges));
  check_ll("Graphdims_get nnodes", n, nnodes);
  check_ll("Graphdims_get nedges", 2 * n, nedges);
  int* gi = chk_malloc(sizeof(int) * (size_t)n);
  int* ge = chk_malloc(sizeof(int) * (size_t)(2 * n));
  check_rc("Graph_get", MPI_Graph_get(t.comm, n, 2 * n, gi, ge));
  check_ints("Graph_get index", index, gi, (size_t)n);
  check_ints("Graph_get edges", edges, ge, (size_t)(2 * n));
  check_rc("Graph_neighbors_count",
           MPI_Graph_neighbors_count(t.comm, me, &count));
  check_ll("Graph_neighbors_count", 2, count);
  t.size = n;
  t.rank = me;
  t.indeg = t.outdeg = 2;
  alloc_lists(&t);
  check_rc("Graph_neighbors", MPI_Graph_neighbors(t.comm, me, 2, t.out));
  check_ints("Graph_neighbors", edges + 2 * me, t.out, 2);
  memcpy(t.in, t.out, sizeof(int) * 2);
  pair_graph(&t);
  finish_topo(&t);
  free(ge);
  free(gi);
  free(edges);
  free(index);
  return t;
}

static void free_topo(Topo* t) {
  free(t->in);
  free(t->out);
  free(t->in_slot);
  free(t->in_count);
  MPI_Comm_free(&t->comm);
}

/* ---- one collective in one mode ---- */

enum Coll {
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kAlltoallVector, /* alltoall with a strided vector type on both sides */
  kNumColls
};
static const char* const kCollNames[] = {"allgather", "allgatherv",
                                         "alltoall",  "alltoallv",
                                         "alltoallw", "alltoall(vector)"};

typedef struct {
  int *send, *recv;
  int ns, nr; /* ints */
  int *scounts, *sdispls, *rcounts, *rdispls;
  MPI_Aint *sdispl_b, *rdispl_b;
  MPI_Datatype *stypes, *rtypes;
  MPI_Datatype vec;  /* kC ints, stride 2 */
  MPI_Datatype vres; /* vec resized to 2 kC ints */
} Bufs;

/* Where out-slot j's data starts in `send` (ints), and in-slot k's in recv. */
static int send_at(const Topo* t, enum Coll c, int j) {
  switch (c) {
    case kAllgather:
    case kAllgatherv:
      return 0;
    case kAlltoallv:
    case kAlltoallw:
      return (t->outdeg - 1 - j) * (kC + 1); /* reversed, with gaps */
    case kAlltoallVector:
      return j * 2 * kC;
    default:
      return j * kC;
  }
}
static int recv_at(const Topo* t, enum Coll c, int k) {
  (void)t;
  switch (c) {
    case kAllgatherv:
    case kAlltoallv:
    case kAlltoallw:
      return k * (kC + 2); /* gaps stay untouched */
    case kAlltoallVector:
      return k * 2 * kC;
    default:
      return k * kC;
  }
}
/* Ints in out-slot j / in-slot k. */
static int send_n(enum Coll c, int j) {
  return c == kAlltoallv ? 1 + j % kC : kC;
}
static int recv_n(const Topo* t, enum Coll c, int k) {
  return c == kAlltoallv ? t->in_count[k] : kC;
}
/* The stride of an element (vector types: 2). */
static int stride(enum Coll c, int k, int recv_side) {
  if (c == kAlltoallVector) return 2;
  if (c == kAlltoallw && recv_side && k % 2 == 0) return 2;
  return 1;
}

static void setup(const Topo* t, enum Coll c, Bufs* b) {
  memset(b, 0, sizeof *b);
  const int od = t->outdeg, id = t->indeg;
  b->ns = (od + 1) * 2 * (kC + 1) + 1;
  b->nr = (id + 1) * 2 * (kC + 2) + 1;
  b->send = chk_malloc(sizeof(int) * (size_t)b->ns);
  b->recv = chk_malloc(sizeof(int) * (size_t)b->nr);
  b->scounts = chk_malloc(sizeof(int) * (size_t)(od + 1));
  b->sdispls = chk_malloc(sizeof(int) * (size_t)(od + 1));
  b->rcounts = chk_malloc(sizeof(int) * (size_t)(id + 1));
  b->rdispls = chk_malloc(sizeof(int) * (size_t)(id + 1));
  b->sdispl_b = chk_malloc(sizeof(MPI_Aint) * (size_t)(od + 1));
  b->rdispl_b = chk_malloc(sizeof(MPI_Aint) * (size_t)(id + 1));
  b->stypes = chk_malloc(sizeof(MPI_Datatype) * (size_t)(od + 1));
  b->rtypes = chk_malloc(sizeof(MPI_Datatype) * (size_t)(id + 1));
  MPI_Type_vector(kC, 1, 2, MPI_INT, &b->vec);
  MPI_Type_commit(&b->vec);
  MPI_Type_create_resized(b->vec, 0, (MPI_Aint)(2 * kC * sizeof(int)),
                          &b->vres);
  MPI_Type_commit(&b->vres);
  for (int j = 0; j < od; ++j) {
    b->scounts[j] = send_n(c, j);
    b->sdispls[j] = send_at(t, c, j);
    b->sdispl_b[j] = (MPI_Aint)sizeof(int) * send_at(t, c, j);
    b->stypes[j] = MPI_INT;
  }
  for (int k = 0; k < id; ++k) {
    b->rcounts[k] = recv_n(t, c, k);
    b->rdispls[k] = recv_at(t, c, k);
    b->rdispl_b[k] = (MPI_Aint)sizeof(int) * recv_at(t, c, k);
    b->rtypes[k] = stride(c, k, 1) == 2 ? b->vec : MPI_INT;
  }
  if (c == kAlltoallw)
    for (int k = 0; k < id; ++k)
      if (b->rtypes[k] == b->vec) b->rcounts[k] = 1;
}

static void fill(const Topo* t, enum Coll c, int it, Bufs* b) {
  for (int i = 0; i < b->ns; ++i) b->send[i] = -7;
  for (int i = 0; i < b->nr; ++i) b->recv[i] = -1;
  const int slots = c == kAllgather || c == kAllgatherv ? 1 : t->outdeg;
  for (int j = 0; j < slots; ++j)
    for (int i = 0; i < send_n(c, j); ++i)
      b->send[send_at(t, c, j) + i * stride(c, j, 0)] =
          val(t->rank, j, it, i);
}

static void verify(const Topo* t, enum Coll c, enum Mode m, int it,
                   const Bufs* b) {
  chk_context("%s %s %s start %d", t->name, kCollNames[c], kModeNames[m], it);
  int* want = chk_malloc(sizeof(int) * (size_t)b->nr);
  for (int i = 0; i < b->nr; ++i) want[i] = -1;
  for (int k = 0; k < t->indeg; ++k) {
    if (t->in[k] == MPI_PROC_NULL) continue;
    const int slot =
        c == kAllgather || c == kAllgatherv ? 0 : t->in_slot[k];
    for (int i = 0; i < recv_n(t, c, k); ++i)
      want[recv_at(t, c, k) + i * stride(c, k, 1)] =
          val(t->in[k], slot, it, i);
  }
  check_ints("received", want, b->recv, (size_t)b->nr);
  free(want);
  chk_context("");
}

static void release(Bufs* b) {
  MPI_Type_free(&b->vres);
  MPI_Type_free(&b->vec);
  free(b->send);
  free(b->recv);
  free(b->scounts);
  free(b->sdispls);
  free(b->rcounts);
  free(b->rdispls);
  free(b->sdispl_b);
  free(b->rdispl_b);
  free(b->stypes);
  free(b->rtypes);
}

/* Calls collective c in mode m (q: the request of I and _init forms). */
static int call(const Topo* t, enum Coll c, enum Mode m, Bufs* b,
                MPI_Request* q) {
  MPI_Comm k = t->comm;
  switch (c) {
    case kAllgather:
      if (m == kBlocking)
        return MPI_Neighbor_allgather(b->send, kC, MPI_INT, b->recv, kC,
                                      MPI_INT, k);
      if (m == kNonblocking)
        return MPI_Ineighbor_allgather(b->send, kC, MPI_INT, b->recv, kC,
                                       MPI_INT, k, q);
      return MPI_Neighbor_allgather_init(b->send, kC, MPI_INT, b->recv, kC,
                                         MPI_INT, k, MPI_INFO_NULL, q);
    case kAllgatherv:
      if (m == kBlocking)
        return MPI_Neighbor_allgatherv(b->send, kC, MPI_INT, b->recv,
                                       b->rcounts, b->rdispls, MPI_INT, k);
      if (m == kNonblocking)
        return MPI_Ineighbor_allgatherv(b->send, kC, MPI_INT, b->recv,
                                        b->rcounts, b->rdispls, MPI_INT, k, q);
      return MPI_Neighbor_allgatherv_init(b->send, kC, MPI_INT, b->recv,
                                          b->rcounts, b->rdispls, MPI_INT, k,
                                          MPI_INFO_NULL, q);
    case kAlltoall:
      if (m == kBlocking)
        return MPI_Neighbor_alltoall(b->send, kC, MPI_INT, b->recv, kC,
                                     MPI_INT, k);
      if (m == kNonblocking)
        return MPI_Ineighbor_alltoall(b->send, kC, MPI_INT, b->recv, kC,
                                      MPI_INT, k, q);
      return MPI_Neighbor_alltoall_init(b->send, kC, MPI_INT, b->recv, kC,
                                        MPI_INT, k, MPI_INFO_NULL, q);
    case kAlltoallVector:
      /* One vector of kC ints per block; blocks 2 kC ints apart. */
      if (m == kBlocking)
        return MPI_Neighbor_alltoall(b->send, 1, b->vres, b->recv, 1, b->vres,
                                     k);
      if (m == kNonblocking)
        return MPI_Ineighbor_alltoall(b->send, 1, b->vres, b->recv, 1,
                                      b->vres, k, q);
      return MPI_Neighbor_alltoall_init(b->send, 1, b->vres, b->recv, 1,
                                        b->vres, k, MPI_INFO_NULL, q);
    case kAlltoallv:
      if (m == kBlocking)
        return MPI_Neighbor_alltoallv(b->send, b->scounts, b->sdispls,
                                      MPI_INT, b->recv, b->rcounts,
                                      b->rdispls, MPI_INT, k);
      if (m == kNonblocking)
        return MPI_Ineighbor_alltoallv(b->send, b->scounts, b->sdispls,
                                       MPI_INT, b->recv, b->rcounts,
                                       b->rdispls, MPI_INT, k, q);
      return MPI_Neighbor_alltoallv_init(b->send, b->scounts, b->sdispls,
                                         MPI_INT, b->recv, b->rcounts,
                                         b->rdispls, MPI_INT, k,
                                         MPI_INFO_NULL, q);
    case kAlltoallw:
      if (m == kBlocking)
        return MPI_Neighbor_alltoallw(b->send, b->scounts, b->sdispl_b,
                                      b->stypes, b->recv, b->rcounts,
                                      b->rdispl_b, b->rtypes, k);
      if (m == kNonblocking)
        return MPI_Ineighbor_alltoallw(b->send, b->scounts, b->sdispl_b,
                                       b->stypes, b->recv, b->rcounts,
                                       b->rdispl_b, b->rtypes, k, q);
      return MPI_Neighbor_alltoallw_init(b->send, b->scounts, b->sdispl_b,
                                         b->stypes, b->recv, b->rcounts,
                                         b->rdispl_b, b->rtypes, k,
                                         MPI_INFO_NULL, q);
    default:
      return MPI_ERR_ARG;
  }
}

static void run_one(const Topo* t, enum Coll c, enum Mode m) {
  Bufs b;
  setup(t, c, &b);
  MPI_Request q = MPI_REQUEST_NULL;
  if (m == kPersistent) {
    fill(t, c, 0, &b);
    check_rc("init", call(t, c, m, &b, &q));
    for (int it = 0; it < kIters; ++it) {
      fill(t, c, it, &b); /* new data before every start */
      check_rc("Start", MPI_Start(&q));
      check_rc("Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
      verify(t, c, m, it, &b);
    }
    check_rc("Request_free", MPI_Request_free(&q));
  } else {
    fill(t, c, 0, &b);
    check_rc(kCollNames[c], call(t, c, m, &b, &q));
    if (m == kNonblocking) check_rc("Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
    verify(t, c, m, 0, &b);
  }
  release(&b);
}

static void run_topo(Topo* t) {
  for (int c = 0; c < kNumColls; ++c)
    for (int m = 0; m < kNumModes; ++m) {
#if !defined(RONDO_MPI) && defined(OPEN_MPI)
      /* open-mpi/ompi#14430: libnbc pairs degenerate blocks the old way. */
      if (t->degenerate && m != kBlocking && c != kAllgather &&
          c != kAllgatherv)
        continue;
#endif
      run_one(t, (enum Coll)c, (enum Mode)m);
    }
}

/* A nonblocking neighbourhood collective and point-to-point requests in one
 * MPI_Waitall. */
static void t_mixed(const Topo* ring) { /* any non-degenerate topology */
  chk_context("mixed Waitall");
  Bufs b;
  setup(ring, kAlltoall, &b);
  fill(ring, kAlltoall, 0, &b);
  MPI_Request q[3];
  int token = me * 7, got = -1;
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  check_rc("Irecv", MPI_Irecv(&got, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &q[0]));
  check_rc("Ineighbor_alltoall",
           MPI_Ineighbor_alltoall(b.send, kC, MPI_INT, b.recv, kC, MPI_INT,
                                  ring->comm, &q[1]));
  check_rc("Isend", MPI_Isend(&token, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &q[2]));
  check_rc("Waitall", MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
  check_ll("point-to-point beside it", from * 7, got);
  verify(ring, kAlltoall, kNonblocking, 0, &b);
  release(&b);
}

static void t_cart_sub(void) {
  chk_context("Cart_sub");
  int dims[2] = {0, 0}, periods[2] = {1, 0}, keep[2] = {0, 1};
  MPI_Dims_create(n, 2, dims);
  MPI_Comm grid, row;
  check_rc("Cart_create", MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0,
                                          &grid));
  check_rc("Cart_sub", MPI_Cart_sub(grid, keep, &row));
  int rs = -1, rr = -1, nd = -1, coords[2];
  MPI_Comm_size(row, &rs);
  MPI_Comm_rank(row, &rr);
  MPI_Cart_coords(grid, me, 2, coords);
  check_ll("row size", dims[1], rs);
  check_ll("row rank", coords[1], rr);
  check_rc("Cartdim_get", MPI_Cartdim_get(row, &nd));
  check_ll("row dimensions", 1, nd);
  int sub_dims[1] = {-1}, sub_periods[1] = {-1}, sub_coords[1] = {-1};
  check_rc("Cart_get", MPI_Cart_get(row, 1, sub_dims, sub_periods,
                                    sub_coords));
  check_ll("row dims", dims[1], sub_dims[0]);
  check_ll("row periods", 0, sub_periods[0]);
  check_ll("row coords", coords[1], sub_coords[0]);
  /* The row sums its members' grid ranks: they are one row of the grid. */
  int sum = -1;
  MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, row);
  const int first = coords[0] * dims[1];
  check_ll("row members", dims[1] * first + dims[1] * (dims[1] - 1) / 2, sum);
  /* Nothing kept: a 0-dimensional grid of one rank. */
  int none[2] = {0, 0}, size0 = -1;
  MPI_Comm self;
  check_rc("Cart_sub (nothing kept)", MPI_Cart_sub(grid, none, &self));
  MPI_Comm_size(self, &size0);
  check_ll("nothing kept: size", 1, size0);
  MPI_Comm_free(&self);
  MPI_Comm_free(&row);
  MPI_Comm_free(&grid);
  chk_context("");
}

/* The bad-argument checks: check.h's check_error. */
#define expect check_error

static void t_bad_args(const Topo* ring) {
  chk_context("bad arguments");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(ring->comm, MPI_ERRORS_RETURN);
  int x[8] = {0}, y[8] = {0};
  MPI_Request q = MPI_REQUEST_NULL;
  expect("Neighbor_alltoall without a topology",
         MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD),
         MPI_ERR_TOPOLOGY, "topology");
  expect("Neighbor_allgather with a negative sendcount",
         MPI_Neighbor_allgather(x, -1, MPI_INT, y, 1, MPI_INT, ring->comm),
         MPI_ERR_COUNT, "sendcount");
  expect("Ineighbor_alltoall with MPI_DATATYPE_NULL",
         MPI_Ineighbor_alltoall(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT,
                                ring->comm, &q),
         MPI_ERR_TYPE, "sendtype");
  expect("Neighbor_alltoall on MPI_COMM_NULL",
         MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_NULL),
         MPI_ERR_COMM, "comm");
  expect("Graph_neighbors_count without a graph",
         MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, x), MPI_ERR_TOPOLOGY,
         "topology");
#ifdef RONDO_MPI
  /* Open MPI 4.1.4 does not check these. */
  expect("Neighbor_alltoall with MPI_IN_PLACE",
         MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT,
                               ring->comm),
         MPI_ERR_BUFFER, "MPI_IN_PLACE");
  expect("Ineighbor_alltoall with a NULL request",
         MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, ring->comm,
                                NULL),
         MPI_ERR_REQUEST, "request");
  expect("Neighbor_alltoall with different send and receive sizes",
         MPI_Neighbor_alltoall(x, 2, MPI_INT, y, 1, MPI_INT, ring->comm),
         MPI_ERR_TRUNCATE, "differs");
  int rc_neg[2] = {1, -3}, dz[2] = {0, 4};
  expect("Neighbor_alltoallv with a negative recvcount",
         MPI_Neighbor_alltoallv(x, rc_neg, dz, MPI_INT, y, rc_neg, dz,
                                MPI_INT, ring->comm),
         MPI_ERR_COUNT, "sendcounts[1]");
  /* On the periodic ring every rank has both in-neighbours, so every rank
   * refuses the call (a collective error must be the same everywhere). */
  int one[2] = {1, 1}, overlap[2] = {0, 0};
  expect("Neighbor_allgatherv into overlapping blocks",
         MPI_Neighbor_allgatherv(x, 1, MPI_INT, y, one, overlap, MPI_INT,
                                 ring->comm),
         MPI_ERR_BUFFER, "overlap");
  int bad_edges[2] = {0, n + 4}, index[1] = {2};
  MPI_Comm g;
  expect("Graph_create with an edge out of range",
         MPI_Graph_create(MPI_COMM_WORLD, 1, index, bad_edges, 0, &g),
         MPI_ERR_ARG, "edges[1]");
  int deg[1] = {-1}, src[1] = {0};
  expect("Dist_graph_create with a negative degree",
         MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, src,
                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
         MPI_ERR_ARG, "degrees[0]");
#endif
  /* The ring still works after the refused calls. */
  run_one(ring, kAlltoall, kBlocking);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(ring->comm, MPI_ERRORS_ARE_FATAL);
  chk_context("");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  int ring_dims[1] = {n}, ring_periods[1] = {1}, line_periods[1] = {0};
  int grid_dims[2] = {0, 0}, grid_periods[2] = {1, 0};
  MPI_Dims_create(n, 2, grid_dims);
  int flat_dims[2] = {n, 1}, flat_periods[2] = {0, 1};

  Topo ring = make_cart("periodic ring", 1, ring_dims, ring_periods);
  Topo line = make_cart("line", 1, ring_dims, line_periods);
  Topo grid = make_cart("2-D grid", 2, grid_dims, grid_periods);
  Topo flat = make_cart("grid with a periodic dimension of 1", 2, flat_dims,
                        flat_periods);
  Topo adj = make_dist_adjacent();
  Topo gen = make_dist_general();
  Topo graph = make_graph();
  Topo* all[] = {&ring, &line, &grid, &flat, &adj, &gen, &graph};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) run_topo(all[i]);
  t_mixed(&line); /* not degenerate: the Open MPI reference runs it too */
  t_cart_sub();
  t_bad_args(&ring);
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) free_topo(all[i]);
  const int rc = chk_finish("neighbor_check");
  MPI_Finalize();
  return rc;
}
