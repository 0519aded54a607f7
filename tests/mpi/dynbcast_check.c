/* dynbcast_check: MPIX_Dynamic_bcast (Rondo extension). Every root sends to
 * recipient lists of every size 1..N-1 (chosen and prioritised by a seeded
 * generator all ranks share), contiguous and derived datatypes, small and
 * rendezvous-sized; recipients receive with plain MPI_Irecv posted before
 * the data arrives or only once MPI_Iprobe sees it; broadcasts mixed with
 * plain sends from the same root and tag arrive in the root's order; bad
 * lists are refused with the right error class. Rondo-only. */
#include "check.h"

static uint32_t rng_state;
static uint32_t next_rand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

static int value(int iter, int i) { return iter * 7919 + i * 31 + 5; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Datatype every_other; /* one int out of two */
  MPI_Type_vector(4096, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int* ranks = malloc(sizeof(int) * n);
  int* prios = malloc(sizeof(int) * n);
  const int big = 50000;
  int* send = malloc(sizeof(int) * 2 * big);
  int* recv = malloc(sizeof(int) * 2 * big);
  int iter = 0;

  for (int root = 0; root < n; ++root) {
    for (int m = 1; m < n; ++m, ++iter) {
      /* Recipients: a shuffled selection of the other ranks. */
      int others[256], k = 0;
      for (int r = 0; r < n && k < 256; ++r)
        if (r != root) others[k++] = r;
      rng_state = 2463534242u + (uint32_t)iter;
      for (int i = k - 1; i > 0; --i) {
        int j = (int)(next_rand() % (uint32_t)(i + 1)), t = others[i];
        others[i] = others[j];
        others[j] = t;
      }
      int mine = -1;
      for (int i = 0; i < m; ++i) {
        ranks[i] = others[i];
        prios[i] = (int)(next_rand() % 4);
        if (ranks[i] == rank) mine = i;
      }
      const int derived = iter % 3 == 0; /* every_other: 4096 ints */
      const int count = derived ? 1 : (iter % 2 ? 10 : big);
      const int elems = derived ? 4096 : count;
      const int tag = 100 + iter;
      chk_context("root %d m %d iter %d", root, m, iter);
      MPI_Request req = MPI_REQUEST_NULL;
      const int early = mine >= 0 && mine % 2 == 0;
      for (int i = 0; i < 2 * elems; ++i) recv[i] = -1;
      if (early)
        MPI_Irecv(recv, count, derived ? every_other : MPI_INT, root, tag,
                  MPI_COMM_WORLD, &req);
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == root) {
        for (int i = 0; i < 2 * elems; ++i) send[i] = value(iter, i);
        MPI_Request b;
        MPIX_Dynamic_bcast(send, count, derived ? every_other : MPI_INT, tag,
                           ranks, iter % 4 ? prios : NULL, m, MPI_COMM_WORLD,
                           &b);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
      } else if (mine >= 0) {
        if (!early) { /* only once the data is here */
          int flag = 0;
          while (!flag)
            MPI_Iprobe(root, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
          MPI_Irecv(recv, count, derived ? every_other : MPI_INT, root, tag,
                    MPI_COMM_WORLD, &req);
        }
        MPI_Status st;
        MPI_Wait(&req, &st);
        check_ll("status source", root, st.MPI_SOURCE);
        check_ll("status tag", tag, st.MPI_TAG);
        long long wrong = 0;
        for (int i = 0; i < elems; ++i) {
          const int at = derived ? 2 * i : i;
          wrong += recv[at] != value(iter, at);
          if (derived) wrong += recv[at + 1] != -1; /* holes untouched */
        }
        check_ll("wrong elements", 0, wrong);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }

  /* Mixed with plain sends, same root and tag: A (send), B (broadcast),
   * C (send) arrive in that order. */
  {
    const int root = n - 1, tag = 9;
    int a = 1, b = 2, c = 3;
    chk_context("mixed");
    if (rank == root) {
      int m = 0;
      for (int r = 0; r < n; ++r)
        if (r != root) ranks[m++] = r;
      MPI_Request reqs[3];
      if (m > 0) {
        for (int i = 0; i < m; ++i)
          MPI_Send(&a, 1, MPI_INT, ranks[i], tag, MPI_COMM_WORLD);
        MPIX_Dynamic_bcast(&b, 1, MPI_INT, tag, ranks, NULL, m,
                           MPI_COMM_WORLD, &reqs[0]);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        for (int i = 0; i < m; ++i)
          MPI_Send(&c, 1, MPI_INT, ranks[i], tag, MPI_COMM_WORLD);
      }
      (void)reqs;
    } else {
      int got[3] = {0, 0, 0};
      for (int k = 0; k < 3; ++k)
        MPI_Recv(&got[k], 1, MPI_INT, root, k == 1 ? MPI_ANY_TAG : tag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      check_ll("first", 1, got[0]);
      check_ll("second (the broadcast)", 2, got[1]);
      check_ll("third", 3, got[2]);
    }
  }

  /* Bad lists: refused with a class, nothing sent. */
  if (n >= 2) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, cls = -1, other = (rank + 1) % n;
    MPI_Request r;
    int list[2];
    chk_context("errors");
    MPI_Error_class(MPIX_Dynamic_bcast(&x, 1, MPI_INT, 1, list, NULL, 0,
                                       MPI_COMM_WORLD, &r), &cls);
    check_ll("empty list", MPI_ERR_ARG, cls);
    list[0] = rank;
    MPI_Error_class(MPIX_Dynamic_bcast(&x, 1, MPI_INT, 1, list, NULL, 1,
                                       MPI_COMM_WORLD, &r), &cls);
    check_ll("the root in its list", MPI_ERR_RANK, cls);
    list[0] = other;
    list[1] = other;
    if (other != rank) {
      MPI_Error_class(MPIX_Dynamic_bcast(&x, 1, MPI_INT, 1, list, NULL, 2,
                                         MPI_COMM_WORLD, &r), &cls);
      check_ll("a duplicate", MPI_ERR_RANK, cls);
    }
    list[0] = n + 5;
    MPI_Error_class(MPIX_Dynamic_bcast(&x, 1, MPI_INT, 1, list, NULL, 1,
                                       MPI_COMM_WORLD, &r), &cls);
    check_ll("a rank out of range", MPI_ERR_RANK, cls);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    list[0] = other;
    list[1] = other;
    int code = MPIX_Dynamic_bcast(&x, 1, MPI_INT, 1, list, NULL, 2,
                                  MPI_COMM_WORLD, &r);
    MPI_Error_string(code, text, &len);
    if (other != rank)
      check_ll("message names the duplicate",
               1, strstr(text, "listed twice") != NULL);
  }
  free(ranks);
  free(prios);
  free(send);
  free(recv);
  MPI_Type_free(&every_other);
  int rc = chk_finish("dynbcast_check");
  MPI_Finalize();
  return rc;
}
