/* Helpers shared by the MPI benchmark programs (bench/coll.c,
 * bench/mpi_suite.c), plain C with no MPI call, so that the same object
 * links into the programs built against each MPI library: order statistics
 * computed as bench/report.cc does, JSON string output, strict number
 * parsing and the monotonic clock. Thread-safety: pure functions. */
#ifndef RONDO_BENCH_PROG_UTIL_H_
#define RONDO_BENCH_PROG_UTIL_H_

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct BenchStats {
  double min, median, p99, max, mean;
} BenchStats;

/* CLOCK_MONOTONIC in nanoseconds. */
double BenchNowNs(void);

/* Order statistics of v[0..n) (sorts v; nearest rank, as bench/report.cc);
 * all zero when n <= 0. */
BenchStats BenchSummarize(double* v, int n);

/* Writes `s` as a JSON string, quotes included, to `f`. */
void BenchJsonString(FILE* f, const char* s);

/* `s` as a number in lo..hi; otherwise prints "PROG: WHAT: 's' is not
 * allowed; expected a number in lo..hi" and exits with status 2. */
double BenchParseDouble(const char* prog, const char* s, const char* what,
                        double lo, double hi);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_BENCH_PROG_UTIL_H_ */
