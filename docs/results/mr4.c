// unexpected-path rate: rank 0 sends a window of 64 x 8 B, both enter a barrier (rank 1 drains the
// messages into its unexpected queue there), then rank 1 posts the 64 receives.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int iters = argc > 1 ? atoi(argv[1]) : 2000;
  char buf[64 * 8];
  MPI_Request req[64];
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (rank == 0) {
      for (int j = 0; j < 64; j++) MPI_Isend(buf + 8 * j, 8, MPI_CHAR, 1, j == 63 ? 2 : 1, MPI_COMM_WORLD, &req[j]);
      MPI_Waitall(64, req, MPI_STATUSES_IGNORE);
      MPI_Barrier(MPI_COMM_WORLD);
    } else {
      MPI_Probe(0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  /* all 64 are here now, unexpected */
      for (int j = 0; j < 64; j++) MPI_Irecv(buf + 8 * j, 8, MPI_CHAR, 0, j == 63 ? 2 : 1, MPI_COMM_WORLD, &req[j]);
      MPI_Waitall(64, req, MPI_STATUSES_IGNORE);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  double t1 = MPI_Wtime();
  if (rank == 0) printf("unexpected-window rate %.3f M/s\n", iters * 64.0 / (t1 - t0) / 1e6);
  MPI_Finalize();
  return 0;
}
