/* fatal_check: with the default error handler (MPI_ERRORS_ARE_FATAL), one
 * bad call must abort the whole job with a non-zero exit code and print a
 * message. Run by run_mpi_test.sh with EXPECT=fatal, which checks both.
 *
 *   fatal_check
 *
 * Rank 0 calls MPI_Send with count -1; the other ranks wait in a receive
 * that nothing will match, so they end only if the job is aborted (the
 * launcher's timeout turns a hang into a failure). This program's own
 * output avoids the words the error message is checked for. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, buf[4] = {0, 0, 0, 0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("fatal_check: rank 0 makes the invalid call now\n");
    fflush(stdout);
    int rc = MPI_Send(buf, -1, MPI_INT, size > 1 ? 1 : 0, 0, MPI_COMM_WORLD);
    printf("FAIL fatal_check rank 0: expected the job to abort got return code %d\n", rc);
    fflush(stdout);
  } else {
    MPI_Recv(buf, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("FAIL fatal_check rank %d: expected the job to abort got a message\n", rank);
    fflush(stdout);
  }
  MPI_Finalize();
  /* Exit 0 on purpose: the runner expects a non-zero exit from the abort,
   * so returning here makes the test fail. */
  return 0;
}
