/* bench/p2p/mpi_suite_rma.h: the one-sided cases of bench/p2p/mpi_suite.c
 * (issue 29); see bench/p2p/mpi_suite_rma.c. */
#ifndef RONDO_BENCH_MPI_SUITE_RMA_H_
#define RONDO_BENCH_MPI_SUITE_RMA_H_

#include <mpi.h>
#include <stdio.h>

/* Removes "--rma" from argv; whether it was there. */
int RmaTakeFlag(int* argc, char** argv);
/* Runs every RMA case (rank 0 writes JSON lines to `out`); `scale` scales
 * the iteration counts (--iterations). Collective over MPI_COMM_WORLD. */
int RmaSuite(FILE* out, const char* impl, double scale, int quiet);

#endif /* RONDO_BENCH_MPI_SUITE_RMA_H_ */
