/* An MPI program built outside Bazel with the installed rondo-mpicc (or
 * rondo-mpicxx, or pkg-config rondo-mpi), run by tools/install_test.sh under
 * rondo-run: point-to-point, a blocking and a nonblocking collective, and an
 * error returned (not fatal) with MPI_ERRORS_RETURN. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int provided = -1, rank = -1, size = -1, bad = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided != MPI_THREAD_MULTIPLE) bad++;

  int token = rank == 0 ? 42 : -1;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) MPI_Send(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
  } else {
    MPI_Status st;
    MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
    if (st.MPI_SOURCE != 0 || st.MPI_TAG != 7) bad++;
  }
  if (token != 42) bad++;

  long sum = 0, mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (sum != (long)size * (size + 1) / 2) bad++;

  double v[4] = {0};
  if (rank == size - 1) for (int i = 0; i < 4; ++i) v[i] = 1.5 * i;
  MPI_Request req;
  MPI_Ibcast(v, 4, MPI_DOUBLE, size - 1, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  for (int i = 0; i < 4; ++i) if (v[i] != 1.5 * i) bad++;

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int err = MPI_Send(&token, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), cls = -1;
  MPI_Error_class(err, &cls);
  if (cls != MPI_ERR_COUNT) bad++;

  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0) printf("outside_mpi: ok (%d ranks)\n", size);
    else printf("outside_mpi: %d failed checks\n", total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
