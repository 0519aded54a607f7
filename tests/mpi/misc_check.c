/* misc_check: environment, communicators, groups, topologies, datatypes,
 * ops, info, memory, window creation, and threads.
 *
 *   misc_check
 *
 * Asks MPI_Init_thread for MPI_THREAD_MULTIPLE and reports what it got
 * (rank 0 prints "misc_check: provided <level>"); the threads section runs
 * only with MPI_THREAD_MULTIPLE: 4 threads per rank ping-pong with the
 * same-numbered thread of the partner rank (r^1, or itself), each on its
 * own duplicate of MPI_COMM_WORLD, while a fifth thread runs collectives on
 * another duplicate. */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "check.h"

#define SENT (-123456789)

static int me, nranks;

static const char* level_name(int l) {
  switch (l) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return "?";
}

/* ---------------- Environment ---------------- */

static void t_environment(int provided) {
  chk_context("environment");
  int flag = -1, q = -1;
  MPI_Initialized(&flag);
  check_ll("Initialized after Init", 1, flag);
  MPI_Finalized(&flag);
  check_ll("Finalized before Finalize", 0, flag);
  check_true("provided level is one of the four",
             provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
  check_true("level constants ordered", MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
                                            MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                                            MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE);
  MPI_Query_thread(&q);
  check_ll("Query_thread == provided", provided, q);
  flag = -1;
  MPI_Is_thread_main(&flag);
  check_ll("Is_thread_main", 1, flag);

  double t0 = MPI_Wtime(), prev = t0;
  int mono = 1;
  for (int i = 0; i < 10000; ++i) {
    double t = MPI_Wtime();
    if (t < prev) mono = 0;
    prev = t;
  }
  check_true("Wtime monotonic", mono);
  double tick = MPI_Wtick();
  check_true("Wtick > 0", tick > 0);
  check_true("Wtick <= 1 s", tick <= 1.0);

  char name[MPI_MAX_PROCESSOR_NAME];
  int len = -1;
  memset(name, 'x', sizeof name);
  check_rc("Get_processor_name", MPI_Get_processor_name(name, &len));
  check_true("processor name length in 1..MPI_MAX_PROCESSOR_NAME-1",
             len > 0 && len < MPI_MAX_PROCESSOR_NAME);
  if (len > 0 && len < MPI_MAX_PROCESSOR_NAME)
    check_ll("processor name strlen == resultlen", len, (long long)strlen(name));

  int v = -1, sv = -1;
  MPI_Get_version(&v, &sv);
  check_ll("Get_version version", 3, v);
  check_ll("Get_version == MPI_VERSION", MPI_VERSION, v);
  check_ll("Get_version == MPI_SUBVERSION", MPI_SUBVERSION, sv);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  len = -1;
  MPI_Get_library_version(lib, &len);
  check_true("library version non-empty", len > 0 && lib[0] != 0);
}

/* ---------------- Communicators ---------------- */

static void t_comms(void) {
  chk_context("communicators");
  int r = -1, s = -1, res = -1, flag = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  check_true("0 <= rank < size", r >= 0 && r < s);
  long long sum = 0, mine = r;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  check_ll("sum of ranks", (long long)s * (s - 1) / 2, sum);
  {
    /* Every rank of these tests runs on one node: the shared-memory split
     * is the whole world, in the same order (key = rank). */
    MPI_Comm node;
    check_rc("Comm_split_type(SHARED)",
             MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r,
                                 MPI_INFO_NULL, &node));
    int ns = -1, nr = -1;
    MPI_Comm_size(node, &ns);
    MPI_Comm_rank(node, &nr);
    check_ll("node communicator size", s, ns);
    check_ll("node communicator rank", r, nr);
    MPI_Comm_free(&node);
    MPI_Comm none = MPI_COMM_WORLD;
    check_rc("Comm_split_type(MPI_UNDEFINED)",
             MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, r,
                                 MPI_INFO_NULL, &none));
    check_true("MPI_UNDEFINED gives MPI_COMM_NULL", none == MPI_COMM_NULL);
  }
  MPI_Comm_size(MPI_COMM_SELF, &s);
  check_ll("size of MPI_COMM_SELF", 1, s);

  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
  check_ll("compare(world, world)", MPI_IDENT, res);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &res);
  check_ll("compare(world, dup)", MPI_CONGRUENT, res);
  MPI_Comm_rank(dup, &r);
  check_ll("rank in dup", me, r);

  /* Halves: unequal to world (unless world has 1 rank). */
  MPI_Comm half;
  int lower = me < (nranks + 1) / 2;
  MPI_Comm_split(MPI_COMM_WORLD, lower, me, &half);
  MPI_Comm_compare(MPI_COMM_WORLD, half, &res);
  check_ll("compare(world, split half)", nranks == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, res);
  MPI_Comm_size(half, &s);
  check_ll("half size", lower ? (nranks + 1) / 2 : nranks / 2, s);

  /* Same group, reversed order: similar. */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - me, &rev);
  MPI_Comm_rank(rev, &r);
  check_ll("rank with reversing keys", nranks - 1 - me, r);
  MPI_Comm_compare(MPI_COMM_WORLD, rev, &res);
  check_ll("compare(world, reversed)", nranks == 1 ? MPI_CONGRUENT : MPI_SIMILAR, res);

  /* MPI_UNDEFINED color: MPI_COMM_NULL. */
  MPI_Comm evens;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2 ? MPI_UNDEFINED : 0, me, &evens);
  if (me % 2) {
    check_true("split with MPI_UNDEFINED gives MPI_COMM_NULL", evens == MPI_COMM_NULL);
  } else {
    check_true("split with color 0 gives a communicator", evens != MPI_COMM_NULL);
    if (evens != MPI_COMM_NULL) {
      MPI_Comm_size(evens, &s);
      MPI_Comm_rank(evens, &r);
      check_ll("evens size", (nranks + 1) / 2, s);
      check_ll("evens rank", me / 2, r);
      MPI_Comm_free(&evens);
    }
  }

  /* Comm_create and Comm_create_group from the group of odd ranks. */
  MPI_Group wg, og;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int nodd = nranks / 2;
  int* odd = (int*)chk_malloc((nodd + 1) * sizeof(int));
  for (int i = 0; i < nodd; ++i) odd[i] = 2 * i + 1;
  MPI_Group_incl(wg, nodd, odd, &og);
  MPI_Comm oc;
  check_rc("Comm_create", MPI_Comm_create(MPI_COMM_WORLD, og, &oc));
  if (me % 2) {
    check_true("Comm_create member gets a communicator", oc != MPI_COMM_NULL);
    if (oc != MPI_COMM_NULL) {
      MPI_Comm_size(oc, &s);
      MPI_Comm_rank(oc, &r);
      check_ll("Comm_create size", nodd, s);
      check_ll("Comm_create rank", me / 2, r);
      int sum2 = 0, one = 1;
      MPI_Allreduce(&one, &sum2, 1, MPI_INT, MPI_SUM, oc);
      check_ll("Allreduce on Comm_create result", nodd, sum2);
      MPI_Comm_free(&oc);
    }
    MPI_Comm cg;
    check_rc("Comm_create_group", MPI_Comm_create_group(MPI_COMM_WORLD, og, 5, &cg));
    check_true("Comm_create_group gives a communicator", cg != MPI_COMM_NULL);
    if (cg != MPI_COMM_NULL) {
      MPI_Comm_size(cg, &s);
      MPI_Comm_rank(cg, &r);
      check_ll("Comm_create_group size", nodd, s);
      check_ll("Comm_create_group rank", me / 2, r);
      int v = me == 1 ? 42 : SENT;
      MPI_Bcast(&v, 1, MPI_INT, 0, cg);
      check_ll("Bcast on Comm_create_group result", 42, v);
      MPI_Comm_free(&cg);
    }
  } else {
    check_true("Comm_create non-member gets MPI_COMM_NULL", oc == MPI_COMM_NULL);
  }
  free(odd);
  if (og != MPI_GROUP_EMPTY) MPI_Group_free(&og);
  MPI_Group_free(&wg);

  /* Names. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  check_str("name of MPI_COMM_WORLD", "MPI_COMM_WORLD", name);
  check_ll("name length of MPI_COMM_WORLD", 14, len);
  MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
  check_str("name of MPI_COMM_SELF", "MPI_COMM_SELF", name);
  MPI_Comm_get_name(dup, name, &len);
  /* MPI-3.1 6.8: a communicator without a name returns "" (names are not
   * inherited by MPI_Comm_dup). */
  check_str("name of an unnamed dup", "", name);
  check_ll("name length of an unnamed dup", 0, len);
  MPI_Comm_set_name(dup, "rondo test comm");
  MPI_Comm_get_name(dup, name, &len);
  check_str("name after set_name", "rondo test comm", name);
  check_ll("name length after set_name", 15, len);

  MPI_Comm_test_inter(dup, &flag);
  check_ll("test_inter on an intracommunicator", 0, flag);

  /* MPI_Comm_remote_size takes an intercommunicator (MPI-3.1 6.6.1);
   * calling it on an intracommunicator is erroneous, which Rondo reports
   * as MPI_ERR_COMM. The standard does not require erroneous calls to be
   * detected, and Open MPI 4.1.4 returns MPI_SUCCESS with size 0:
   * tolerated. */
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  s = -7;
  int rc = MPI_Comm_remote_size(dup, &s);
#ifdef RONDO_MPI
  check_ll("remote_size on an intracommunicator: class", MPI_ERR_COMM, chk_class(rc));
#else
  if (rc != MPI_SUCCESS)
    check_ll("remote_size on an intracommunicator: class", MPI_ERR_COMM, chk_class(rc));
#endif

  /* Attributes. */
  int* ub = NULL;
  flag = -1;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  check_ll("MPI_TAG_UB flag", 1, flag);
  if (flag && ub) check_true("MPI_TAG_UB >= 32767", *ub >= 32767);
  int* us = NULL;
  flag = -1;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &us, &flag);
#ifdef RONDO_MPI
  check_ll("MPI_UNIVERSE_SIZE flag", 1, flag);
  if (flag && us) check_true("MPI_UNIVERSE_SIZE >= size", *us >= nranks);
#else
  /* Open MPI 4.1.4 sets it to the slots mpirun found (the 2 cores here),
   * fewer than the ranks started with --oversubscribe; MPI-3.1 10.5.1 does
   * not tie it to the size of MPI_COMM_WORLD: only check it is positive. */
  if (flag && us) check_true("MPI_UNIVERSE_SIZE > 0", *us > 0);
#endif

  MPI_Comm_free(&dup);
  check_true("Comm_free sets MPI_COMM_NULL", dup == MPI_COMM_NULL);
  MPI_Comm_free(&half);
  MPI_Comm_free(&rev);
  check_true("Comm_free sets MPI_COMM_NULL (split)", half == MPI_COMM_NULL && rev == MPI_COMM_NULL);
}

/* ---------------- Groups ---------------- */

static void t_groups(void) {
  chk_context("groups");
  MPI_Group wg, og, eg, rg, re, g;
  int s = -1, r = -1, res = -1;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_size(wg, &s);
  MPI_Group_rank(wg, &r);
  check_ll("world group size", nranks, s);
  check_ll("world group rank", me, r);

  int nodd = nranks / 2, neven = (nranks + 1) / 2;
  int* odd = (int*)chk_malloc((nodd + 1) * sizeof(int));
  for (int i = 0; i < nodd; ++i) odd[i] = 2 * i + 1;
  MPI_Group_incl(wg, nodd, odd, &og);
  MPI_Group_size(og, &s);
  MPI_Group_rank(og, &r);
  check_ll("odd group size", nodd, s);
  check_ll("odd group rank", me % 2 ? me / 2 : MPI_UNDEFINED, r);
  MPI_Group_excl(wg, nodd, odd, &eg);
  MPI_Group_size(eg, &s);
  MPI_Group_rank(eg, &r);
  check_ll("even group (excl) size", neven, s);
  check_ll("even group (excl) rank", me % 2 ? MPI_UNDEFINED : me / 2, r);
  int ranges[1][3] = {{0, nranks - 1, 2}};
  MPI_Group_range_incl(wg, 1, ranges, &rg);
  MPI_Group_compare(eg, rg, &res);
  check_ll("compare(excl odds, range_incl evens)", MPI_IDENT, res);
  int rev[1][3] = {{nranks - 1, 0, -1}};
  MPI_Group_range_incl(wg, 1, rev, &re);
  MPI_Group_rank(re, &r);
  check_ll("reversed range rank", nranks - 1 - me, r);
  MPI_Group_compare(wg, re, &res);
  check_ll("compare(world, reversed)", nranks == 1 ? MPI_IDENT : MPI_SIMILAR, res);
  MPI_Group_compare(eg, og, &res);
  check_ll("compare(evens, odds)", MPI_UNEQUAL, res);
  MPI_Group_compare(wg, wg, &res);
  check_ll("compare(world, world)", MPI_IDENT, res);

  /* translate: every world rank, MPI_PROC_NULL, into the odd group. */
  int n = nranks + 1;
  int* in = (int*)chk_malloc(n * sizeof(int));
  int* out = (int*)chk_malloc(n * sizeof(int));
  int* exp = (int*)chk_malloc(n * sizeof(int));
  for (int i = 0; i < nranks; ++i) {
    in[i] = i;
    exp[i] = i % 2 ? i / 2 : MPI_UNDEFINED;
    out[i] = SENT;
  }
  in[nranks] = MPI_PROC_NULL;
  exp[nranks] = MPI_PROC_NULL;
  out[nranks] = SENT;
  MPI_Group_translate_ranks(wg, n, in, og, out);
#ifndef RONDO_MPI
  /* Open MPI 4.1.4 answers MPI_UNDEFINED for every rank, MPI_PROC_NULL
   * included, when the target group is empty (1 rank: no odd ranks);
   * MPI-3.1 6.3.1 says MPI_PROC_NULL translates to MPI_PROC_NULL. */
  if (nodd == 0 && out[nranks] == MPI_UNDEFINED) out[nranks] = MPI_PROC_NULL;
#endif
  check_ints("translate_ranks world -> odds", exp, out, n);
  /* ... and back: odds' ranks in world. */
  for (int i = 0; i < nodd; ++i) {
    in[i] = i;
    exp[i] = 2 * i + 1;
  }
  MPI_Group_translate_ranks(og, nodd, in, wg, out);
  check_ints("translate_ranks odds -> world", exp, out, nodd);
  free(in);
  free(out);
  free(exp);

  MPI_Group_size(MPI_GROUP_EMPTY, &s);
  check_ll("MPI_GROUP_EMPTY size", 0, s);
  MPI_Group_rank(MPI_GROUP_EMPTY, &r);
  check_ll("MPI_GROUP_EMPTY rank", MPI_UNDEFINED, r);

  MPI_Group_incl(wg, 1, &me, &g);
  MPI_Group_size(g, &s);
  check_ll("incl self size", 1, s);
  MPI_Group_free(&g);
  check_true("Group_free sets MPI_GROUP_NULL", g == MPI_GROUP_NULL);
  if (og != MPI_GROUP_EMPTY) MPI_Group_free(&og);
  MPI_Group_free(&eg);
  MPI_Group_free(&rg);
  MPI_Group_free(&re);
  MPI_Group_free(&wg);
  free(odd);
}

/* ---------------- Topologies ---------------- */

static void t_topologies(void) {
  chk_context("topologies");
  int d2[2] = {0, 0};
  MPI_Dims_create(12, 2, d2);
  check_ll("Dims_create(12, 2)[0]", 4, d2[0]);
  check_ll("Dims_create(12, 2)[1]", 3, d2[1]);
  int d3[3] = {0, 0, 0};
  MPI_Dims_create(12, 3, d3);
  check_ll("Dims_create(12, 3)[0]", 3, d3[0]);
  check_ll("Dims_create(12, 3)[1]", 2, d3[1]);
  check_ll("Dims_create(12, 3)[2]", 2, d3[2]);
  int dp[2] = {0, 2};
  MPI_Dims_create(12, 2, dp);
  check_ll("Dims_create(12, {0, 2})[0]", 6, dp[0]);
  check_ll("Dims_create(12, {0, 2})[1]", 2, dp[1]);
  int dq[3] = {0, 3, 0};
  MPI_Dims_create(24, 3, dq);
  check_ll("Dims_create(24, {0, 3, 0})[0]", 4, dq[0]);
  check_ll("Dims_create(24, {0, 3, 0})[1]", 3, dq[1]);
  check_ll("Dims_create(24, {0, 3, 0})[2]", 2, dq[2]);
  int d7[2] = {0, 0};
  MPI_Dims_create(7, 2, d7);
  check_ll("Dims_create(7, 2)[0]", 7, d7[0]);
  check_ll("Dims_create(7, 2)[1]", 1, d7[1]);

  /* A periodic 2-D grid of all ranks. */
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(nranks, 2, dims);
  check_ll("grid size", nranks, dims[0] * dims[1]);
  check_true("grid dims non-increasing", dims[0] >= dims[1]);
  MPI_Comm cart;
  check_rc("Cart_create", MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  int topo = -1, nd = -1, r = -1;
  MPI_Topo_test(cart, &topo);
  check_ll("Topo_test(cart)", MPI_CART, topo);
  MPI_Topo_test(MPI_COMM_WORLD, &topo);
  check_ll("Topo_test(world)", MPI_UNDEFINED, topo);
  MPI_Cartdim_get(cart, &nd);
  check_ll("Cartdim_get", 2, nd);
  MPI_Comm_rank(cart, &r);
  check_ll("rank in cart (no reorder)", me, r);
  int coords[2] = {-1, -1};
  MPI_Cart_coords(cart, me, 2, coords);
  int c0 = me / dims[1], c1 = me % dims[1]; /* row-major */
  check_ll("Cart_coords[0]", c0, coords[0]);
  check_ll("Cart_coords[1]", c1, coords[1]);
  int rr = -1;
  MPI_Cart_rank(cart, coords, &rr);
  check_ll("Cart_rank(Cart_coords)", me, rr);
  int wrap[2] = {c0 + dims[0], c1 - dims[1]}; /* periodic: wraps */
  MPI_Cart_rank(cart, wrap, &rr);
  check_ll("Cart_rank of out-of-range periodic coords", me, rr);
  int gd[2], gp[2], gc[2];
  MPI_Cart_get(cart, 2, gd, gp, gc);
  check_ll("Cart_get dims[0]", dims[0], gd[0]);
  check_ll("Cart_get dims[1]", dims[1], gd[1]);
  check_true("Cart_get periods", gp[0] && gp[1]);
  check_ll("Cart_get coords[0]", c0, gc[0]);
  check_ll("Cart_get coords[1]", c1, gc[1]);
  for (int dir = 0; dir < 2; ++dir) {
    int src = -1, dst = -1;
    MPI_Cart_shift(cart, dir, 1, &src, &dst);
    int sc0 = dir == 0 ? (c0 - 1 + dims[0]) % dims[0] : c0;
    int sc1 = dir == 1 ? (c1 - 1 + dims[1]) % dims[1] : c1;
    int dc0 = dir == 0 ? (c0 + 1) % dims[0] : c0;
    int dc1 = dir == 1 ? (c1 + 1) % dims[1] : c1;
    char w[64];
    snprintf(w, sizeof w, "Cart_shift dir %d source", dir);
    check_ll(w, sc0 * dims[1] + sc1, src);
    snprintf(w, sizeof w, "Cart_shift dir %d dest", dir);
    check_ll(w, dc0 * dims[1] + dc1, dst);
    /* And the shift works as a communication pattern. */
    int v = me, got = SENT;
    MPI_Sendrecv(&v, 1, MPI_INT, dst, dir, &got, 1, MPI_INT, src, dir, cart,
                 MPI_STATUS_IGNORE);
    snprintf(w, sizeof w, "value shifted along dir %d", dir);
    check_ll(w, sc0 * dims[1] + sc1, got);
  }
  MPI_Comm_free(&cart);

  /* Non-periodic 1-D line: the ends shift to MPI_PROC_NULL. */
  int ld[1] = {nranks}, lp[1] = {0};
  MPI_Comm line;
  MPI_Cart_create(MPI_COMM_WORLD, 1, ld, lp, 0, &line);
  int src = -1, dst = -1;
  MPI_Cart_shift(line, 0, 2, &src, &dst);
  check_ll("line shift by 2 source", me - 2 >= 0 ? me - 2 : MPI_PROC_NULL, src);
  check_ll("line shift by 2 dest", me + 2 < nranks ? me + 2 : MPI_PROC_NULL, dst);
  MPI_Comm_free(&line);

  /* A grid smaller than the communicator: the others get MPI_COMM_NULL. */
  if (nranks > 1) {
    int sd[1] = {nranks - 1}, sp[1] = {0};
    MPI_Comm small;
    MPI_Cart_create(MPI_COMM_WORLD, 1, sd, sp, 0, &small);
    if (me == nranks - 1) {
      check_true("rank outside the grid gets MPI_COMM_NULL", small == MPI_COMM_NULL);
    } else {
      check_true("rank inside the grid gets a communicator", small != MPI_COMM_NULL);
      if (small != MPI_COMM_NULL) MPI_Comm_free(&small);
    }
  }

  /* Distributed graph: a ring, unweighted then weighted. */
  int prev = (me + nranks - 1) % nranks, next = (me + 1) % nranks;
  for (int weighted = 0; weighted < 2; ++weighted) {
    MPI_Comm g;
    int sw[1] = {10 + prev}, dw[1] = {20 + next};
    check_rc("Dist_graph_create_adjacent",
             MPI_Dist_graph_create_adjacent(
                 MPI_COMM_WORLD, 1, &prev, weighted ? sw : MPI_UNWEIGHTED, 1, &next,
                 weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    MPI_Topo_test(g, &topo);
    check_ll("Topo_test(dist graph)", MPI_DIST_GRAPH, topo);
    int indeg = -1, outdeg = -1, w = -1;
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &w);
    check_ll("indegree", 1, indeg);
    check_ll("outdegree", 1, outdeg);
    check_ll("weighted", weighted, !!w);
    int s[1] = {SENT}, d[1] = {SENT}, gsw[1] = {SENT}, gdw[1] = {SENT};
    /* (Weight arrays are passed unweighted too: they are left meaningless
     * then, and GCC warns about Open MPI's zero-size MPI_UNWEIGHTED.) */
    MPI_Dist_graph_neighbors(g, 1, s, gsw, 1, d, gdw);
    check_ll("neighbors source", prev, s[0]);
    check_ll("neighbors destination", next, d[0]);
    if (weighted) {
      check_ll("source weight", 10 + prev, gsw[0]);
      check_ll("destination weight", 20 + next, gdw[0]);
    }
    MPI_Comm_free(&g);
  }
}

/* ---------------- Datatypes ---------------- */

static void check_envelope(const char* what, MPI_Datatype t, int ni, int na, int nd,
                           int combiner) {
  int i = -1, a = -1, d = -1, c = -1;
  char w[128];
  MPI_Type_get_envelope(t, &i, &a, &d, &c);
  snprintf(w, sizeof w, "%s combiner", what);
  check_ll(w, combiner, c);
  snprintf(w, sizeof w, "%s num_integers", what);
  check_ll(w, ni, i);
  snprintf(w, sizeof w, "%s num_addresses", what);
  check_ll(w, na, a);
  snprintf(w, sizeof w, "%s num_datatypes", what);
  check_ll(w, nd, d);
}

static void check_shape(const char* what, MPI_Datatype t, int size, MPI_Aint lb,
                        MPI_Aint extent, MPI_Aint tlb, MPI_Aint textent) {
  int s = -1;
  MPI_Aint l = -1, e = -1;
  char w[128];
  MPI_Type_size(t, &s);
  snprintf(w, sizeof w, "%s size", what);
  check_ll(w, size, s);
  MPI_Count sx = -1;
  MPI_Type_size_x(t, &sx);
  snprintf(w, sizeof w, "%s size_x", what);
  check_ll(w, size, sx);
  MPI_Type_get_extent(t, &l, &e);
  snprintf(w, sizeof w, "%s lb", what);
  check_ll(w, lb, l);
  snprintf(w, sizeof w, "%s extent", what);
  check_ll(w, extent, e);
  MPI_Type_get_true_extent(t, &l, &e);
  snprintf(w, sizeof w, "%s true_lb", what);
  check_ll(w, tlb, l);
  snprintf(w, sizeof w, "%s true_extent", what);
  check_ll(w, textent, e);
}

struct Rec {
  char c;
  double d;
  int i[3];
};

static void t_datatypes(void) {
  chk_context("datatypes");
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Type_get_name(MPI_INT, name, &len);
  check_str("name of MPI_INT", "MPI_INT", name);
  check_ll("name length of MPI_INT", 7, len);
  MPI_Type_get_name(MPI_DOUBLE, name, &len);
  check_str("name of MPI_DOUBLE", "MPI_DOUBLE", name);
  check_envelope("MPI_INT", MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED);

  MPI_Datatype ctg, vec, idx, rsz, dup, hv, str, ib;
  MPI_Type_contiguous(5, MPI_INT, &ctg);
  MPI_Type_commit(&ctg);
  check_shape("contiguous(5, int)", ctg, 20, 0, 20, 0, 20);
  check_envelope("contiguous", ctg, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
  MPI_Type_get_name(ctg, name, &len);
  check_str("name of an unnamed derived type", "", name);
  MPI_Type_set_name(ctg, "five ints");
  MPI_Type_get_name(ctg, name, &len);
  check_str("name after set_name", "five ints", name);

  MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  check_shape("vector(3, 2, 4, int)", vec, 24, 0, 40, 0, 40);
  check_envelope("vector", vec, 3, 0, 1, MPI_COMBINER_VECTOR);

  int bl[2] = {1, 3}, di[2] = {4, 0};
  MPI_Type_indexed(2, bl, di, MPI_INT, &idx);
  MPI_Type_commit(&idx);
  check_shape("indexed({1,3}, {4,0})", idx, 16, 0, 20, 0, 20);
  check_envelope("indexed", idx, 5, 0, 1, MPI_COMBINER_INDEXED);

  MPI_Type_create_resized(MPI_INT, -4, 12, &rsz);
  MPI_Type_commit(&rsz);
  check_shape("resized(int, -4, 12)", rsz, 4, -4, 12, 0, 4);
  check_envelope("resized", rsz, 0, 2, 1, MPI_COMBINER_RESIZED);

  MPI_Type_dup(vec, &dup);
  check_shape("dup(vector)", dup, 24, 0, 40, 0, 40);
  check_envelope("dup", dup, 0, 0, 1, MPI_COMBINER_DUP);

  MPI_Type_create_hvector(2, 1, 16, MPI_DOUBLE, &hv);
  check_shape("hvector(2, 1, 16 B, double)", hv, 16, 0, 24, 0, 24);
  check_envelope("hvector", hv, 2, 1, 1, MPI_COMBINER_HVECTOR);

  {
    /* hindexed: blocks at byte displacements (2 ints at 4, 1 int at 20). */
    MPI_Datatype hi;
    int hbl[2] = {2, 1};
    MPI_Aint hdi[2] = {4, 20};
    check_rc("Type_create_hindexed",
             MPI_Type_create_hindexed(2, hbl, hdi, MPI_INT, &hi));
    check_shape("hindexed({2,1}, {4 B, 20 B}, int)", hi, 12, 4, 20, 4, 20);
    check_envelope("hindexed", hi, 3, 2, 1, MPI_COMBINER_HINDEXED);
    MPI_Type_commit(&hi);
    int src[6] = {10, 11, 12, 13, 14, 15}, dst[6] = {0, 0, 0, 0, 0, 0};
    MPI_Sendrecv(src, 1, hi, 0, 31, dst, 1, hi, 0, 31, MPI_COMM_SELF,
                 MPI_STATUS_IGNORE);
    check_ll("hindexed element 1", 11, dst[1]);
    check_ll("hindexed element 2", 12, dst[2]);
    check_ll("hindexed element 5", 15, dst[5]);
    check_ll("hindexed gap untouched", 0, dst[3]);
    MPI_Type_free(&hi);
  }

  int dib[3] = {0, 2, 5};
  MPI_Type_create_indexed_block(3, 1, dib, MPI_INT, &ib);
  check_shape("indexed_block(1, {0,2,5})", ib, 12, 0, 24, 0, 24);
  check_envelope("indexed_block", ib, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);

  /* Struct from addresses of a real struct. */
  struct Rec rec;
  MPI_Aint base, ad, ai;
  MPI_Get_address(&rec, &base);
  MPI_Get_address(&rec.d, &ad);
  MPI_Get_address(&rec.i[0], &ai);
  check_ll("Get_address difference (d)", (long long)offsetof(struct Rec, d),
           (long long)MPI_Aint_diff(ad, base));
  check_ll("Get_address difference (i)", (long long)offsetof(struct Rec, i),
           (long long)(ai - base));
  check_ll("Aint_add", (long long)ai,
           (long long)MPI_Aint_add(base, (MPI_Aint)offsetof(struct Rec, i)));
  int sbl[3] = {1, 1, 3};
  MPI_Aint sdi[3] = {0, MPI_Aint_diff(ad, base), MPI_Aint_diff(ai, base)};
  MPI_Datatype sty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(3, sbl, sdi, sty, &str);
  MPI_Type_commit(&str);
  int ssize = -1;
  MPI_Type_size(str, &ssize);
  check_ll("struct size", 1 + 8 + 12, ssize);
  MPI_Aint tl = -1, te = -1;
  MPI_Type_get_true_extent(str, &tl, &te);
  check_ll("struct true_lb", 0, tl);
  check_ll("struct true_extent", (long long)(offsetof(struct Rec, i) + 12), te);
  check_envelope("struct", str, 4, 3, 3, MPI_COMBINER_STRUCT);

  /* Pack / Unpack round trip: one vector and 4 ints. */
  int vsrc[10], isrc[4] = {7, -8, 9, -10};
  for (int i = 0; i < 10; ++i) vsrc[i] = 100 + i;
  int psize = -1, p2 = -1;
  MPI_Pack_size(1, vec, MPI_COMM_WORLD, &psize);
  MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &p2);
  check_true("Pack_size(vector) >= its size", psize >= 24);
  check_true("Pack_size(4 ints) >= 16", p2 >= 16);
  int total = psize + p2;
  unsigned char* pbuf = (unsigned char*)chk_malloc(total);
  int pos = 0;
  check_rc("Pack vector", MPI_Pack(vsrc, 1, vec, pbuf, total, &pos, MPI_COMM_WORLD));
  int after_vec = pos;
  check_true("Pack advanced by the vector's size", after_vec >= 24 && after_vec <= psize);
  check_rc("Pack ints", MPI_Pack(isrc, 4, MPI_INT, pbuf, total, &pos, MPI_COMM_WORLD));
  check_true("Pack position within Pack_size", pos <= total);
  int vdst[10], idst[4];
  for (int i = 0; i < 10; ++i) vdst[i] = SENT;
  int upos = 0;
  check_rc("Unpack vector",
           MPI_Unpack(pbuf, pos, &upos, vdst, 1, vec, MPI_COMM_WORLD));
  check_ll("Unpack position after the vector", after_vec, upos);
  check_rc("Unpack ints", MPI_Unpack(pbuf, pos, &upos, idst, 4, MPI_INT, MPI_COMM_WORLD));
  check_ll("Unpack position at the end", pos, upos);
  int vexp[10];
  for (int i = 0; i < 10; ++i) vexp[i] = (i % 4) < 2 ? 100 + i : SENT;
  check_ints("unpacked vector (gaps untouched)", vexp, vdst, 10);
  check_ints("unpacked ints", isrc, idst, 4);
  free(pbuf);

  MPI_Type_free(&ctg);
  check_true("Type_free sets MPI_DATATYPE_NULL", ctg == MPI_DATATYPE_NULL);
  MPI_Type_free(&vec);
  MPI_Type_free(&idx);
  MPI_Type_free(&rsz);
  MPI_Type_free(&dup);
  MPI_Type_free(&hv);
  MPI_Type_free(&str);
  MPI_Type_free(&ib);
}

/* ---------------- Ops ---------------- */

/* x o y = x: associative, not commutative. */
static void first_wins(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  memcpy(inout, in, *len * sizeof(int));
}
static void int_max(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const int* a = (const int*)in;
  int* b = (int*)inout;
  for (int i = 0; i < *len; ++i)
    if (a[i] > b[i]) b[i] = a[i];
}

/* Large-count and status helpers (MPI-3): the _x forms and the status
 * setters of generalized requests and layered libraries. */
static void t_large_counts(void) {
  chk_context("large counts and status helpers");
  MPI_Count size = -1, lb = -1, extent = -1;
  check_rc("Type_size_x", MPI_Type_size_x(MPI_DOUBLE, &size));
  check_ll("Type_size_x(MPI_DOUBLE)", 8, size);
  MPI_Datatype vec;
  MPI_Type_vector(3, 2, 4, MPI_INT, &vec); /* 2 ints every 4, 3 times */
  MPI_Type_commit(&vec);
  check_rc("Type_get_extent_x", MPI_Type_get_extent_x(vec, &lb, &extent));
  check_ll("lb of the vector", 0, lb);
  check_ll("extent of the vector", (2 * 4 + 2) * 4, extent);
  check_rc("Type_get_true_extent_x",
           MPI_Type_get_true_extent_x(vec, &lb, &extent));
  check_ll("true extent of the vector", 40, extent);

  /* A struct of 2 ints and 1 double: set_elements then get_elements. */
  int bl[2] = {2, 1};
  MPI_Aint disp[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st2;
  MPI_Type_create_struct(2, bl, disp, types, &st2);
  MPI_Type_commit(&st2);
  MPI_Status s;
  memset(&s, 0, sizeof s);
  for (int n = 0; n <= 7; ++n) {
    check_rc("Status_set_elements", MPI_Status_set_elements(&s, st2, n));
    int got = -1;
    MPI_Count got_x = -1;
    check_rc("Get_elements", MPI_Get_elements(&s, st2, &got));
    check_rc("Get_elements_x", MPI_Get_elements_x(&s, st2, &got_x));
    check_ll("elements back (int)", n, got);
    check_ll("elements back (MPI_Count)", n, got_x);
  }
  /* 3 elements = one whole item: Get_count says 1; 2 elements: undefined. */
  int cnt = -7;
  MPI_Status_set_elements_x(&s, st2, (MPI_Count)3);
  MPI_Get_count(&s, st2, &cnt);
  check_ll("Get_count of one whole item", 1, cnt);
  MPI_Status_set_elements_x(&s, st2, (MPI_Count)2);
  MPI_Get_count(&s, st2, &cnt);
  check_ll("Get_count of a partial item", MPI_UNDEFINED, cnt);
  MPI_Status_set_elements(&s, MPI_INT, 5);
  MPI_Get_count(&s, MPI_BYTE, &cnt);
  check_ll("bytes of 5 MPI_INT elements", 20, cnt);

  int flag = -1;
  check_rc("Status_set_cancelled(1)", MPI_Status_set_cancelled(&s, 1));
  MPI_Test_cancelled(&s, &flag);
  check_true("Test_cancelled after set_cancelled(1)", flag != 0);
  check_rc("Status_set_cancelled(0)", MPI_Status_set_cancelled(&s, 0));
  MPI_Test_cancelled(&s, &flag);
  check_true("Test_cancelled after set_cancelled(0)", flag == 0);

  /* Bad arguments: a negative count, a null datatype. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int ec = -1;
  MPI_Error_class(MPI_Status_set_elements(&s, MPI_INT, -1), &ec);
  check_ll("Status_set_elements count -1", MPI_ERR_COUNT, ec);
  MPI_Error_class(MPI_Status_set_elements_x(&s, MPI_DATATYPE_NULL, 1), &ec);
  check_ll("Status_set_elements_x MPI_DATATYPE_NULL", MPI_ERR_TYPE, ec);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Type_free(&vec);
  MPI_Type_free(&st2);
}

/* Type introspection: what a user-defined reduction or a tool reads back
 * from a datatype, down through its nested constructors. */
static void t_contents(void) {
  chk_context("type contents");
  MPI_Datatype vec, outer;
  MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
  int bl[2] = {1, 2};
  MPI_Aint disp[2] = {0, 64};
  MPI_Datatype types[2] = {vec, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, disp, types, &outer);
  MPI_Type_commit(&outer);
  int ni = -1, na = -1, nd = -1, comb = -1;
  MPI_Type_get_envelope(outer, &ni, &na, &nd, &comb);
  check_ll("struct combiner", MPI_COMBINER_STRUCT, comb);
  int ints[8];
  MPI_Aint addrs[8];
  MPI_Datatype dts[8];
  check_ll("struct num_integers", 3, ni);
  check_ll("struct num_addresses", 2, na);
  check_ll("struct num_datatypes", 2, nd);
  /* Exactly the envelope's sizes: Open MPI 4.1.4 crashes when given more
   * room than the datatype needs (seen here). */
  check_rc("Type_get_contents(struct)",
           MPI_Type_get_contents(outer, ni, na, nd, ints, addrs, dts));
  check_ll("struct count", 2, ints[0]);
  check_ll("struct blocklength 0", 1, ints[1]);
  check_ll("struct blocklength 1", 2, ints[2]);
  check_ll("struct displacement 1", 64, (long long)addrs[1]);
  check_true("predefined member comes back as itself", dts[1] == MPI_DOUBLE);
  /* The derived member is a new handle describing the vector. */
  MPI_Type_get_envelope(dts[0], &ni, &na, &nd, &comb);
  check_ll("member combiner", MPI_COMBINER_VECTOR, comb);
  check_ll("member num_integers", 3, ni);
  int vints[3];
  MPI_Aint vaddr[1];
  MPI_Datatype vdt[1];
  check_rc("Type_get_contents(vector)",
           MPI_Type_get_contents(dts[0], 3, 0, 1, vints, vaddr, vdt));
  check_ll("vector count", 3, vints[0]);
  check_ll("vector blocklength", 2, vints[1]);
  check_ll("vector stride", 4, vints[2]);
  check_true("vector base type", vdt[0] == MPI_INT);
  int size = -1;
  MPI_Type_size(dts[0], &size);
  check_ll("size through the returned handle", 24, size);
  check_rc("Type_free(returned handle)", MPI_Type_free(&dts[0]));
  /* The original types still work after the returned handle is freed. */
  MPI_Type_size(outer, &size);
  check_ll("struct size after freeing the returned handle", 24 + 16, size);

#ifdef RONDO_MPI
  /* Open MPI 4.1 does not check the room it is given. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int ec = -1;
  MPI_Error_class(MPI_Type_get_contents(outer, 1, 8, 8, ints, addrs, dts), &ec);
  check_ll("Type_get_contents with max_integers too small", MPI_ERR_ARG, ec);
  MPI_Error_class(MPI_Type_get_contents(MPI_INT, 8, 8, 8, ints, addrs, dts),
                  &ec);
  check_ll("Type_get_contents of a predefined type", MPI_ERR_ARG, ec);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
  MPI_Type_free(&vec);
  MPI_Type_free(&outer);
}

static void t_ops(void) {
  chk_context("ops");
  MPI_Op fw, mx;
  int c = -1;
  check_rc("Op_create (non-commutative)", MPI_Op_create(first_wins, 0, &fw));
  check_rc("Op_create (commutative)", MPI_Op_create(int_max, 1, &mx));
  MPI_Op_commutative(fw, &c);
  check_ll("Op_commutative(non-commutative)", 0, c);
  MPI_Op_commutative(mx, &c);
  check_true("Op_commutative(commutative)", c != 0);
  MPI_Op_commutative(MPI_SUM, &c);
  check_true("Op_commutative(MPI_SUM)", c != 0);

  int in[4] = {1, 20, -3, 4}, io[4] = {5, 6, 7, 8};
  MPI_Reduce_local(in, io, 4, MPI_INT, MPI_SUM);
  int e1[4] = {6, 26, 4, 12};
  check_ints("Reduce_local MPI_SUM", e1, io, 4);
  MPI_Reduce_local(in, io, 4, MPI_INT, mx);
  int e2[4] = {6, 26, 4, 12};
  check_ints("Reduce_local user max", e2, io, 4);
  /* inoutbuf = inbuf o inoutbuf, so first_wins copies inbuf. */
  MPI_Reduce_local(in, io, 4, MPI_INT, fw);
  check_ints("Reduce_local non-commutative order", in, io, 4);
  double din[2] = {1.5, -2}, dio[2] = {1, 3};
  MPI_Reduce_local(din, dio, 2, MPI_DOUBLE, MPI_MAX);
  check_dbl("Reduce_local MPI_MAX double [0]", 1.5, dio[0]);
  check_dbl("Reduce_local MPI_MAX double [1]", 3, dio[1]);
  /* The non-commutative op over all ranks: rank 0's value wins. */
  int mine = 1000 + me, got = SENT;
  MPI_Allreduce(&mine, &got, 1, MPI_INT, fw, MPI_COMM_WORLD);
  check_ll("Allreduce with first-wins", 1000, got);
  MPI_Op_free(&fw);
  check_true("Op_free sets MPI_OP_NULL", fw == MPI_OP_NULL);
  MPI_Op_free(&mx);
}

/* ---------------- Info, memory, one-sided ---------------- */

static void t_info_mem_rma(void) {
  chk_context("info");
  MPI_Info info;
  char v[MPI_MAX_INFO_VAL];
  int flag = -1;
  check_rc("Info_create", MPI_Info_create(&info));
  MPI_Info_set(info, "rondo_key", "some value");
  MPI_Info_set(info, "other", "x");
  MPI_Info_set(info, "other", "y"); /* replaces */
  MPI_Info_get(info, "rondo_key", MPI_MAX_INFO_VAL - 1, v, &flag);
  check_ll("Info_get flag", 1, flag);
  if (flag) check_str("Info_get value", "some value", v);
  MPI_Info_get(info, "other", MPI_MAX_INFO_VAL - 1, v, &flag);
  if (flag) check_str("Info_get replaced value", "y", v);
  flag = -1;
  MPI_Info_get(info, "missing", MPI_MAX_INFO_VAL - 1, v, &flag);
  check_ll("Info_get of a missing key", 0, flag);
  memset(v, 0, sizeof v);
  MPI_Info_get(info, "rondo_key", 4, v, &flag);
  check_ll("Info_get truncated flag", 1, flag);
  check_str("Info_get truncated to valuelen", "some", v);
  MPI_Info_free(&info);
  check_true("Info_free sets MPI_INFO_NULL", info == MPI_INFO_NULL);

  chk_context("memory");
  char* mem = NULL;
  check_rc("Alloc_mem", MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem));
  check_true("Alloc_mem pointer", mem != NULL);
  if (mem) {
    memset(mem, 0x5A, 1 << 20);
    check_ll("Alloc_mem memory usable", 0x5A, mem[(1 << 20) - 1]);
    check_rc("Free_mem", MPI_Free_mem(mem));
  }

  chk_context("one-sided");
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  /* Which handler a failed window creation raises its error on is not
   * spelled out by MPI-3.1 (Open MPI and MPICH use comm's; Rondo raises it
   * on MPI_COMM_WORLD): both return here. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int wbuf[4];
  MPI_Win win = MPI_WIN_NULL;
  int rc = MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, comm, &win);
#ifdef RONDO_MPI
  /* Rondo implements windows (rma_check tests them whole): each flavor is
   * created and freed. */
  check_rc("Win_create", rc);
  check_rc("Win_free", MPI_Win_free(&win));
  check_true("Win_free sets MPI_WIN_NULL", win == MPI_WIN_NULL);
  void* base = NULL;
  check_rc("Win_allocate",
           MPI_Win_allocate(64, 1, MPI_INFO_NULL, comm, &base, &win));
  check_true("Win_allocate gives memory", base != NULL);
  check_rc("Win_free", MPI_Win_free(&win));
  check_rc("Win_create_dynamic",
           MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
  check_rc("Win_attach", MPI_Win_attach(win, wbuf, sizeof wbuf));
  check_rc("Win_detach", MPI_Win_detach(win, wbuf));
  check_rc("Win_free", MPI_Win_free(&win));
#else
  /* Open MPI implements windows: either they work or they fail cleanly. */
  if (rc == MPI_SUCCESS) {
    check_true("Win_create gives a window", win != MPI_WIN_NULL);
    check_rc("Win_free", MPI_Win_free(&win));
    check_true("Win_free sets MPI_WIN_NULL", win == MPI_WIN_NULL);
  } else {
    check_true("Win_create error has a class", chk_class(rc) > MPI_SUCCESS);
  }
#endif
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_free(&comm);
}

/* ---------------- Threads ---------------- */

#define NTHREADS 4
#define PINGS 200

typedef struct {
  int t;
  MPI_Comm comm;
  int peer;
  long long checks, fails;
} ThreadArg;

static void tfail(ThreadArg* a, const char* what, long long exp, long long got) {
  ++a->fails;
  if (a->fails <= 5)
    printf("FAIL threads thread %d %s rank %d: expected %lld got %lld\n", a->t, what, me,
           exp, got);
  fflush(stdout);
}

static void* pingpong_thread(void* p) {
  ThreadArg* a = (ThreadArg*)p;
  int sb[64], rb[64];
  for (int it = 0; it < PINGS; ++it) {
    int n = 1 + (it * 7 + a->t) % 64;
    for (int i = 0; i < n; ++i) sb[i] = me * 1000000 + a->t * 10000 + it * 64 + i;
    for (int i = 0; i < 64; ++i) rb[i] = SENT;
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Irecv(rb, 64, MPI_INT, a->peer, it % 3, a->comm, &rq[0]);
    MPI_Isend(sb, n, MPI_INT, a->peer, it % 3, a->comm, &rq[1]);
    MPI_Waitall(2, rq, st);
    int count = -1;
    MPI_Get_count(&st[0], MPI_INT, &count);
    ++a->checks;
    if (count != n) tfail(a, "ping-pong count", n, count);
    ++a->checks;
    for (int i = 0; i < n; ++i) {
      int e = a->peer * 1000000 + a->t * 10000 + it * 64 + i;
      if (rb[i] != e) {
        tfail(a, "ping-pong data", e, rb[i]);
        break;
      }
    }
  }
  return NULL;
}

static void* coll_thread(void* p) {
  ThreadArg* a = (ThreadArg*)p;
  for (int it = 0; it < 100; ++it) {
    int v = me + it, sum = SENT;
    if (it % 2) {
      MPI_Request r;
      MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, a->comm, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, a->comm);
    }
    int exp = nranks * (nranks - 1) / 2 + nranks * it;
    ++a->checks;
    if (sum != exp) tfail(a, "collective thread Allreduce", exp, sum);
    int b = me == it % nranks ? it * 3 : SENT;
    MPI_Bcast(&b, 1, MPI_INT, it % nranks, a->comm);
    ++a->checks;
    if (b != it * 3) tfail(a, "collective thread Bcast", it * 3, b);
  }
  return NULL;
}

static void t_threads(void) {
  chk_context("threads");
  int partner = me ^ 1;
  if (partner >= nranks) partner = me;
  ThreadArg args[NTHREADS + 1];
  pthread_t th[NTHREADS + 1];
  for (int t = 0; t <= NTHREADS; ++t) {
    args[t].t = t;
    args[t].peer = partner;
    args[t].checks = args[t].fails = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm);
  }
  for (int t = 0; t <= NTHREADS; ++t)
    pthread_create(&th[t], NULL, t < NTHREADS ? pingpong_thread : coll_thread, &args[t]);
  for (int t = 0; t <= NTHREADS; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t <= NTHREADS; ++t) {
    chk_checks += args[t].checks;
    chk_fails += args[t].fails;
    MPI_Comm_free(&args[t].comm);
  }
}

int main(int argc, char** argv) {
  int flag = -1, flag2 = -1;
  MPI_Initialized(&flag);
  MPI_Finalized(&flag2);
  int provided = -1;
  /* --init LEVEL: MPI_Init instead of MPI_Init_thread(MPI_THREAD_MULTIPLE),
   * and the level it must provide (Rondo: RONDO_MPI_THREAD_LEVEL, single
   * by default, as Open MPI's). */
  int init_level = -1;
  if (argc > 2 && strcmp(argv[1], "--init") == 0) {
    for (int l = MPI_THREAD_SINGLE; l <= MPI_THREAD_MULTIPLE; ++l)
      if (strcasecmp(argv[2], level_name(l) + strlen("MPI_THREAD_")) == 0) init_level = l;
    if (init_level < 0) {
      printf("FAIL --init %s: not single, funneled, serialized or multiple\n", argv[2]);
      return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Query_thread(&provided);
  } else {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  }
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  chk_context("environment");
  check_ll("Initialized before Init", 0, flag);
  check_ll("Finalized before Init", 0, flag2);
  if (init_level >= 0) check_ll("the level MPI_Init provides", init_level, provided);
  if (me == 0) {
    printf("misc_check: provided %s\n", level_name(provided));
    fflush(stdout);
  }
  t_environment(provided);
  t_comms();
  t_groups();
  t_topologies();
  t_datatypes();
  t_large_counts();
  t_contents();
  t_ops();
  t_info_mem_rma();
  if (provided == MPI_THREAD_MULTIPLE) {
    t_threads();
  } else if (me == 0) {
    printf("misc_check: threads section skipped (no MPI_THREAD_MULTIPLE)\n");
  }
  int rc = chk_finish("misc_check");
  MPI_Finalize();
  flag = -1;
  MPI_Finalized(&flag);
  if (flag != 1) {
    printf("FAIL Finalized after Finalize rank %d: expected 1 got %d\n", me, flag);
    rc = 1;
  }
  flag = -1;
  MPI_Initialized(&flag);
  if (flag != 1) {
    printf("FAIL Initialized after Finalize rank %d: expected 1 got %d\n", me, flag);
    rc = 1;
  }
  return rc;
}
