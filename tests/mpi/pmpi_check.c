/* pmpi_check: the profiling interface (MPI-4 section 15.2). Linked with
 * pmpi_tool.c, a tool that defines some MPI_ functions, counts the calls
 * and forwards them to their PMPI_ twins. Checks, on any number of ranks:
 *   - every call the program makes to a wrapped function reaches the tool
 *     once, and the library still does the work (values checked);
 *   - calls the library makes inside itself do not reach the tool: MPI_Rsend
 *     and MPI_Irsend (which send as MPI_Send and MPI_Isend do), the
 *     allgathers inside MPI_Dist_graph_create, MPI_Init's and
 *     MPI_Finalize's own communication;
 *   - an unwrapped function (MPI_Comm_size) still works, and the PMPI_
 *     names can be called directly (not counted).
 * The same program runs against Open MPI 4.1.4 as the reference. */
#include "check.h"

long pmpi_tool_count(const char* name);

static void expect_count(const char* name, long want) {
  char w[96];
  snprintf(w, sizeof w, "tool's count of %s", name);
  check_ll(w, want, pmpi_tool_count(name));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  int me = -1, n = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  expect_count("MPI_Init", 1);
  expect_count("MPI_Comm_rank", 2); /* chk_init's and ours */
  expect_count("MPI_Barrier", 0);   /* MPI_Init's own synchronisation */

  /* A ring of point-to-point messages: 3 sends, 3 receives per rank. */
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  for (int i = 0; i < 3; ++i) {
    int x = me * 10 + i, y = -1;
    MPI_Request q;
    check_rc("Isend", MPI_Isend(&x, 1, MPI_INT, to, i, MPI_COMM_WORLD, &q));
    check_rc("Recv", MPI_Recv(&y, 1, MPI_INT, from, i, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
    check_rc("Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_ll("ring value", from * 10 + i, y);
  }
  expect_count("MPI_Isend", 3);
  expect_count("MPI_Recv", 3);
  expect_count("MPI_Wait", 3);

  /* Ready sends: the receive is posted first (a barrier in between). */
  {
    int y = -1, z = -1, x = me;
    MPI_Request r[2], s;
    MPI_Irecv(&y, 1, MPI_INT, from, 50, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&z, 1, MPI_INT, from, 51, MPI_COMM_WORLD, &r[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    check_rc("Rsend", MPI_Rsend(&x, 1, MPI_INT, to, 50, MPI_COMM_WORLD));
    check_rc("Irsend", MPI_Irsend(&x, 1, MPI_INT, to, 51, MPI_COMM_WORLD, &s));
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    PMPI_Wait(&s, MPI_STATUS_IGNORE); /* the PMPI_ name: not counted */
    check_ll("Rsend value", from, y);
    check_ll("Irsend value", from, z);
  }
  expect_count("MPI_Rsend", 1);
  expect_count("MPI_Irsend", 1);
  expect_count("MPI_Send", 0);  /* not MPI_Rsend's inner send */
  expect_count("MPI_Isend", 3); /* nor MPI_Irsend's */
  expect_count("MPI_Wait", 3);
  expect_count("MPI_Barrier", 1);

  /* Collectives. */
  int sum = 0;
  check_rc("Allreduce", MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM,
                                      MPI_COMM_WORLD));
  check_ll("Allreduce value", (long long)n * (n - 1) / 2, sum);
  PMPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_count("MPI_Allreduce", 1);

  /* MPI_Dist_graph_create exchanges the edges inside the library. */
  int src = me, degree = 1, dst = to;
  MPI_Comm g;
  check_rc("Dist_graph_create",
           MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &degree, &dst,
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
  int indeg = -1, outdeg = -1, weighted = -1;
  MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
  check_ll("graph indegree", 1, indeg);
  MPI_Comm_free(&g);
  expect_count("MPI_Allgather", 0);
  expect_count("MPI_Allgatherv", 0);

  /* An unwrapped function. */
  int size = -1;
  check_rc("Comm_size", MPI_Comm_size(MPI_COMM_WORLD, &size));
  check_ll("Comm_size", n, size);

  expect_count("MPI_Finalize", 0);
  const int rc = chk_finish("pmpi_check");
  MPI_Finalize();
  /* MPI_Finalize reached the tool (a wrapper, not the library directly). */
  if (pmpi_tool_count("MPI_Finalize") != 1) {
    printf("FAIL tool's count of MPI_Finalize rank %d: expected 1 got %ld\n",
           me, pmpi_tool_count("MPI_Finalize"));
    return 1;
  }
  return rc;
}
