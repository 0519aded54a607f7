/* An erroneous but common program: it starts nonblocking operations and
 * calls MPI_Finalize without completing them. MPI_Finalize must finish them
 * (with a warning) and return, rather than crash or hang, so that the job
 * ends cleanly. Every rank posts an Ibarrier, an Iallreduce whose result is
 * checked after MPI_Finalize, and a self send/receive pair. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Request reqs[4];
  int one = 1, sum = -1, token = 7, got = -1;
  MPI_Ibarrier(MPI_COMM_WORLD, &reqs[0]);
  MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[1]);
  MPI_Irecv(&got, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &reqs[2]);
  MPI_Isend(&token, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &reqs[3]);
  if (MPI_Finalize() != MPI_SUCCESS) {
    printf("FAIL unfinished rank %d: MPI_Finalize failed\n", rank);
    return 1;
  }
  if (sum != size || got != token) {
    printf("FAIL unfinished rank %d: expected sum %d token %d got %d %d\n",
           rank, size, token, sum, got);
    return 1;
  }
  if (rank == 0) printf("unfinished_check: ok (2 checks)\n");
  return 0;
}
