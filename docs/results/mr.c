// window-64 message rate, 8 B, and ping-pong latency (the ping-pong size, 8 B by default, as the third argument)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  int pp = argc > 2 ? atoi(argv[2]) : 80000;
  int psz = argc > 3 ? atoi(argv[3]) : 8; static char buf[1 << 20]; char ack = 0;
  MPI_Request req[64];
  for (int rep = 0; rep < 2; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
      if (rank == 0) {
        for (int j = 0; j < 64; j++) MPI_Isend(buf + 8 * j, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(64, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        for (int j = 0; j < 64; j++) MPI_Irecv(buf + 8 * j, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(64, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
      }
    }
    double t1 = MPI_Wtime();
    if (rank == 0 && rep == 1) printf("rate %.3f M/s\n", iters * 64.0 / (t1 - t0) / 1e6);
  }
  double best = 1e9, blk[200]; int nb = 0;
  for (int rep = 0; rep < 2; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), tb = t0;
    for (int i = 0; i < pp; i++) {
      if (i % 2000 == 1999) { double t = MPI_Wtime(); if (rep == 1 && nb < 200) { blk[nb++] = (t - tb) / 2000 / 2 * 1e9; } if ((t - tb) / 4000 * 1e9 < best && rep == 1) best = (t - tb) / 4000 * 1e9; tb = t; }
      if (rank == 0) { MPI_Send(buf, psz, MPI_CHAR, 1, 3, MPI_COMM_WORLD); MPI_Recv(buf, psz, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
      else { MPI_Recv(buf, psz, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(buf, psz, MPI_CHAR, 0, 3, MPI_COMM_WORLD); }
    }
    double t1 = MPI_Wtime();
    if (rank == 0 && rep == 1) { for (int a = 0; a < nb; a++) for (int b = a + 1; b < nb; b++) if (blk[b] < blk[a]) { double x = blk[a]; blk[a] = blk[b]; blk[b] = x; }
      printf("lat %.1f ns latmin %.1f ns latp10 %.1f ns\n", (t1 - t0) / pp / 2 * 1e9, best, blk[nb / 10]); }
  }
  MPI_Finalize();
  return 0;
}
