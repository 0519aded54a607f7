/* bench/coll/bcast.c: root-to-last-receiver time of a broadcast to P receivers
 * (the dynamic-broadcast paper's Figure 2), three ways, in one job:
 *   naive     the root sends to each receiver in turn (MPI_Isend loop),
 *   binomial  MPI_Ibcast on a communicator of the root and the P receivers
 *             (run it with RONDO_COLL_BCAST=binomial: a regular binomial
 *             tree; the split-tree is turned off for it),
 *   dynamic   MPIX_Dynamic_bcast: only the root knows the list, the
 *             receivers post a plain MPI_Irecv from the root.
 * Rank 0 is the root; receivers are ranks 1..P. Every repetition starts
 * after a barrier; the time is the latest receiver's completion minus the
 * root's start, on CLOCK_MONOTONIC, which all ranks of one machine share
 * (the emulated cluster of bench/cluster runs every host on this kernel).
 *
 *   bcast [--bytes B] [--min-p P] [--max-p P] [--reps N] [--warmup N]
 *         [--algos naive,binomial,dynamic] [--out FILE] [--quiet]
 * Needs max-p + 1 ranks. Output: rank 0 writes one JSON object per line to
 * --out (default stdout): {"type": "case", "algo", "p", "bytes",
 * "samples_ns": [...]}; the driver (bench/coll/bcast_driver.cc) turns them into
 * the report. Bad arguments: a message and exit status 2. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int parse_int(const char* v, const char* opt, long lo, long hi) {
  char* end = NULL;
  long x = v ? strtol(v, &end, 10) : 0;
  if (v == NULL || *v == 0 || *end != 0 || x < lo || x > hi) {
    fprintf(stderr, "bcast: %s: '%s' is not allowed; expected %ld..%ld\n",
            opt, v ? v : "(missing)", lo, hi);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return (int)x;
}

enum { kNaive = 0, kBinomial = 1, kDynamic = 2 };
static const char* kAlgoNames[] = {"naive", "binomial", "dynamic"};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = 8L << 20;
  int min_p = 2, max_p = size - 1, reps = 5, warmup = 1, quiet = 0;
  int algos[3] = {1, 1, 1};
  const char* out_path = NULL;
  for (int a = 1; a < argc; ++a) {
    const char* v = a + 1 < argc ? argv[a + 1] : NULL;
    if (strcmp(argv[a], "--bytes") == 0) {
      bytes = parse_int(v, "--bytes", 1, 1L << 30), ++a;
    } else if (strcmp(argv[a], "--min-p") == 0) {
      min_p = parse_int(v, "--min-p", 1, 4096), ++a;
    } else if (strcmp(argv[a], "--max-p") == 0) {
      max_p = parse_int(v, "--max-p", 1, 4096), ++a;
    } else if (strcmp(argv[a], "--reps") == 0) {
      reps = parse_int(v, "--reps", 1, 100000), ++a;
    } else if (strcmp(argv[a], "--warmup") == 0) {
      warmup = parse_int(v, "--warmup", 0, 100000), ++a;
    } else if (strcmp(argv[a], "--out") == 0 && v) {
      out_path = v, ++a;
    } else if (strcmp(argv[a], "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(argv[a], "--algos") == 0 && v) {
      algos[0] = strstr(v, "naive") != NULL;
      algos[1] = strstr(v, "binomial") != NULL;
      algos[2] = strstr(v, "dynamic") != NULL;
      if (!algos[0] && !algos[1] && !algos[2]) {
        fprintf(stderr, "bcast: --algos: '%s' names none of naive, binomial, "
                        "dynamic\n", v);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      ++a;
    } else {
      if (rank == 0)
        fprintf(stderr, "bcast: unknown argument '%s'\nusage: bcast [--bytes "
                        "B] [--min-p P] [--max-p P] [--reps N] [--warmup N] "
                        "[--algos naive,binomial,dynamic] [--out FILE] "
                        "[--quiet]\n", argv[a]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (max_p > size - 1 || min_p > max_p) {
    if (rank == 0)
      fprintf(stderr, "bcast: receivers %d..%d need %d ranks; the job has "
                      "%d\n", min_p, max_p, max_p + 1, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  FILE* out = stdout;
  if (rank == 0 && out_path != NULL) {
    out = fopen(out_path, "w");
    if (out == NULL) {
      fprintf(stderr, "bcast: cannot write %s\n", out_path);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  char* buf = malloc((size_t)bytes);
  for (long i = 0; i < bytes; ++i) buf[i] = (char)(i * 7 + 1);
  int* ranks = malloc(sizeof(int) * (size_t)size);
  int64_t* ends = malloc(sizeof(int64_t) * (size_t)size);
  int64_t* samples = malloc(sizeof(int64_t) * (size_t)reps);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)size);
  int bad = 0;

  for (int p = min_p; p <= max_p; ++p) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank <= p ? 0 : MPI_UNDEFINED, rank, &sub);
#ifdef MPIX_SPLIT_OFF
    if (sub != MPI_COMM_NULL) MPIX_Comm_set_split(sub, MPIX_SPLIT_OFF);
#endif
    for (int i = 0; i < p; ++i) ranks[i] = i + 1;
    for (int algo = 0; algo < 3; ++algo) {
      if (!algos[algo]) continue;
#ifndef MPIX_SPLIT_OFF
      if (algo == kDynamic) continue; /* not an MPI call elsewhere */
#endif
      const int tag = 1000 + p * 4 + algo;
      for (int rep = -warmup; rep < reps; ++rep) {
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t start = now_ns(), end = 0;
        if (rank == 0) {
          buf[0] = (char)rep;
          if (algo == kNaive) {
            for (int i = 0; i < p; ++i)
              MPI_Isend(buf, (int)bytes, MPI_BYTE, i + 1, tag, MPI_COMM_WORLD,
                        &reqs[i]);
            MPI_Waitall(p, reqs, MPI_STATUSES_IGNORE);
          } else if (algo == kBinomial) {
            MPI_Ibcast(buf, (int)bytes, MPI_BYTE, 0, sub, &reqs[0]);
            MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
#ifdef MPIX_SPLIT_OFF
          } else {
            MPIX_Dynamic_bcast(buf, (int)bytes, MPI_BYTE, tag, ranks, NULL, p,
                               MPI_COMM_WORLD, &reqs[0]);
            MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
#endif
          }
          end = now_ns();
        } else if (rank <= p) {
          buf[0] = (char)-1;
          if (algo == kBinomial) {
            MPI_Ibcast(buf, (int)bytes, MPI_BYTE, 0, sub, &reqs[0]);
          } else {
            MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD,
                      &reqs[0]);
          }
          MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
          end = now_ns();
          if (buf[0] != (char)rep || buf[bytes - 1] != (char)((bytes - 1) * 7 + 1))
            ++bad;
        }
        MPI_Gather(&end, 1, MPI_INT64_T, ends, 1, MPI_INT64_T, 0,
                   MPI_COMM_WORLD);
        if (rank == 0 && rep >= 0) {
          int64_t last = 0;
          for (int i = 1; i <= p; ++i)
            if (ends[i] > last) last = ends[i];
          samples[rep] = last - start;
        }
      }
      if (rank == 0) {
        fprintf(out, "{\"type\": \"case\", \"algo\": \"%s\", \"p\": %d, "
                     "\"bytes\": %ld, \"samples_ns\": [", kAlgoNames[algo], p,
                bytes);
        for (int i = 0; i < reps; ++i)
          fprintf(out, "%s%lld", i ? ", " : "", (long long)samples[i]);
        fprintf(out, "]}\n");
        fflush(out);
        if (!quiet) {
          int64_t best = samples[0];
          for (int i = 1; i < reps; ++i)
            if (samples[i] < best) best = samples[i];
          fprintf(stderr, "bcast: %-8s P=%2d %ld B: min %.2f ms\n",
                  kAlgoNames[algo], p, bytes, best / 1e6);
        }
      }
    }
    if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
  }
  int total_bad = 0;
  MPI_Reduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0 && total_bad) {
    fprintf(out, "{\"type\": \"fail\", \"what\": \"%d receivers got wrong "
                 "data\"}\n", total_bad);
  }
  if (rank == 0 && out != stdout) fclose(out);
  free(buf);
  free(ranks);
  free(ends);
  free(samples);
  free(reqs);
  MPI_Finalize();
  return total_bad ? 1 : 0;
}
