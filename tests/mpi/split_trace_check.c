/* split_trace_check: runs the split-tree collectives at a fixed level S
 * (--s S, MPIX_Comm_set_split on MPI_COMM_WORLD) so that the engine trace
 * (RONDO_TRACE) shows which thread ran which tree level; split_trace_test.sh
 * checks the traces with split_trace_verify. Also checks the results.
 *   split_trace_check --s S */
#include "check.h"

#define COUNT 1000

static volatile double sink;
static void compute(int n) {
  double x = 1.0;
  for (int i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  int rank, n, s = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (int a = 1; a + 1 < argc; ++a)
    if (strcmp(argv[a], "--s") == 0) s = atoi(argv[a + 1]);
  MPIX_Comm_set_split(MPI_COMM_WORLD, s);
  int got = -99;
  MPIX_Comm_get_split(MPI_COMM_WORLD, 0, &got);
  check_ll("MPIX_Comm_get_split", s, got);

  static int in[COUNT], out[COUNT], gat[COUNT * 64];
  MPI_Request req;
  for (int i = 0; i < COUNT; ++i) in[i] = rank + i;
  MPI_Ireduce(in, out, COUNT, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req);
  compute(100000);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (rank == 0)
    for (int i = 0; i < COUNT; ++i)
      check_ll("Ireduce", (long long)n * (n - 1) / 2 + (long long)n * i,
               out[i]);
  for (int i = 0; i < COUNT; ++i) out[i] = rank == 0 ? 3 * i : -1;
  MPI_Ibcast(out, COUNT, MPI_INT, 0, MPI_COMM_WORLD, &req);
  compute(100000);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  for (int i = 0; i < COUNT; ++i) check_ll("Ibcast", 3 * i, out[i]);
  MPI_Iallreduce(in, out, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  compute(100000);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  for (int i = 0; i < COUNT; ++i)
    check_ll("Iallreduce", (long long)n * (n - 1) / 2 + (long long)n * i,
             out[i]);
  if (n <= 64) {
    MPI_Igather(in, COUNT / 10, MPI_INT, gat, COUNT / 10, MPI_INT, 0,
                MPI_COMM_WORLD, &req);
    compute(100000);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank == 0)
      for (int r = 0; r < n; ++r)
        check_ll("Igather", r + 7, gat[r * (COUNT / 10) + 7]);
  }
  int rc = chk_finish("split_trace_check");
  MPI_Finalize();
  return rc;
}
