// suite-like window-64 rate: a sync (allreduce of 1 double) before each timed window; deciles of per-message time
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = argc > 1 ? atoi(argv[1]) : 5000;
  int sync = argc > 2 ? atoi(argv[2]) : 1;
  static char wins[64][4096]; char sbuf[8] = {0}; int ack = 0;
  double* s = malloc(sizeof(double) * n);
  MPI_Request req[64];
  for (int i = 0; i < n; i++) {
    if (sync) { double v = 1, o; MPI_Allreduce(&v, &o, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); }
    double t0 = now();
    if (rank == 0) {
      for (int j = 0; j < 64; j++) MPI_Isend(sbuf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req[j]);
      MPI_Waitall(64, req, MPI_STATUSES_IGNORE);
      MPI_Recv(&ack, 4, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      for (int j = 0; j < 64; j++) MPI_Irecv(wins[j], 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req[j]);
      MPI_Waitall(64, req, MPI_STATUSES_IGNORE);
      MPI_Send(&ack, 4, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
    }
    s[i] = (now() - t0) / 64;
  }
  if (rank == 0) { qsort(s, n, sizeof(double), cmp);
    printf("p5 %.1f p25 %.1f p50 %.1f p75 %.1f p95 %.1f\n", s[n/20], s[n/4], s[n/2], s[3*n/4], s[19*n/20]); }
  MPI_Finalize();
  return 0;
}
