/* Helpers shared by the MPI benchmark programs (bench/coll/coll.c,
 * bench/p2p/mpi_suite.c), plain C with no MPI call, so that the same object
 * links into the programs built against each MPI library: order statistics
 * computed as bench/common/report.cc does, JSON string output, strict number
 * parsing, the monotonic clock and a watchdog over MPI_Finalize.
 * Thread-safety: pure functions, except the watchdog (one call at a time). */
#ifndef RONDO_BENCH_COMMON_PROG_UTIL_H_
#define RONDO_BENCH_COMMON_PROG_UTIL_H_

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct BenchStats {
  double min, median, p99, max, mean;
} BenchStats;

/* CLOCK_MONOTONIC in nanoseconds. */
double BenchNowNs(void);

/* Order statistics of v[0..n) (sorts v; nearest rank, as
 * bench/common/report.cc); all zero when n <= 0. */
BenchStats BenchSummarize(double* v, int n);

/* Writes `s` as a JSON string, quotes included, to `f`. */
void BenchJsonString(FILE* f, const char* s);

/* `s` as a number in lo..hi; otherwise prints "PROG: WHAT: 's' is not
 * allowed; expected a number in lo..hi" and exits with status 2. */
double BenchParseDouble(const char* prog, const char* s, const char* what,
                        double lo, double hi);

/* Runs `finalize` (the program's MPI_Finalize: this file has no MPI) under a
 * watchdog thread. If it has not returned after `seconds`, the watchdog
 * calls on_hang(ctx) (which says so, in the program's own words and files),
 * flushes every stream and ends the process with status 5, instead of
 * holding the job until the launcher's timeout (MPICH 4.0.2 over UCX
 * sometimes never returns from MPI_Finalize). Returns finalize()'s value;
 * without a thread (pthread_create failed) it only calls finalize. */
int BenchFinalizeWatched(int (*finalize)(void), int seconds,
                         void (*on_hang)(void* ctx), void* ctx);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_BENCH_COMMON_PROG_UTIL_H_ */
