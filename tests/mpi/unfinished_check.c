/* An erroneous but common program: it starts nonblocking operations and
 * calls MPI_Finalize without completing them. MPI_Finalize must finish them
 * (with a warning) and return, rather than crash or hang, so that the job
 * ends cleanly. Every rank posts an Ibarrier, an Iallreduce whose result is
 * checked after MPI_Finalize, and a self send/receive pair.
 *
 *   unfinished_check [--unmatched]
 *
 * --unmatched (at least 2 ranks): also a send nobody receives (1 MiB, a
 * rendezvous, from rank 0 to the last rank) and a receive nobody sends
 * (on the last rank): MPI_Finalize must give up on them after a bounded
 * wait and return; the abandoned receive's buffer is left untouched. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static char big[1 << 20];

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int unmatched = argc > 1 && strcmp(argv[1], "--unmatched") == 0;
  const int last = size - 1;
  int orphan = -5;
  MPI_Request extra = MPI_REQUEST_NULL;
  if (unmatched && size > 1 && rank == 0)
    MPI_Isend(big, (int)sizeof big, MPI_BYTE, last, 4, MPI_COMM_WORLD, &extra);
  if (unmatched && size > 1 && rank == last)
    MPI_Irecv(&orphan, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &extra);
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
  if (sum != size || got != token || orphan != -5) {
    printf("FAIL unfinished rank %d: expected sum %d token %d orphan -5 got "
           "%d %d %d\n", rank, size, token, sum, got, orphan);
    return 1;
  }
  if (rank == 0) printf("unfinished_check: ok (%d checks)\n", unmatched ? 3 : 2);
  return 0;
}
