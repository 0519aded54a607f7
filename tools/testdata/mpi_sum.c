/* mpi_sum: an MPI program for the build-system tests (autotools_test,
 * cmake_test). Rank r contributes (r + 1)^2 to an MPI_Allreduce and sends its
 * rank to its right neighbour with MPI_Sendrecv; rank 0 prints
 *   mpi_sum: ranks=N sum=S ring=ok
 * where S = N(N+1)(2N+1)/6. Compiles as C and as C++. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long mine = (long)(rank + 1) * (rank + 1);
  long sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  int right = (rank + 1) % size;
  int left = (rank + size - 1) % size;
  int from_left = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &from_left, 1, MPI_INT, left, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int ring_ok = from_left == left;
  int all_ok = 0;
  MPI_Allreduce(&ring_ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

  if (rank == 0)
    printf("mpi_sum: ranks=%d sum=%ld ring=%s\n", size, sum,
           all_ok ? "ok" : "BROKEN");
  MPI_Finalize();
  return 0;
}
