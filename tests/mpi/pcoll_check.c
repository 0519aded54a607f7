/* pcoll_check: MPI-4 persistent collectives (MPI_Barrier_init ...
 * MPI_Reduce_scatter_block_init), on any number of ranks:
 *   - each of the 17, initialised once and started 4 times with new data
 *     each time (values checked every time);
 *   - derived datatypes (packed again at every start);
 *   - two persistent collectives and an ordinary Iallreduce in one
 *     MPI_Startall + MPI_Waitall; a persistent collective mixed with
 *     point-to-point requests in MPI_Waitany;
 *   - an MPI_Allreduce_init started 1,000 times: the resident set does not
 *     grow (Linux /proc/self/statm);
 *   - inactive requests (MPI_Wait returns at once), MPI_Request_free;
 *   - bad arguments.
 * Against Open MPI 4.1.4 the same program uses its MPIX_*_init forms
 * (mpi-ext.h, the pcollreq extension). */
#include "check.h"

#if !defined(RONDO_MPI) && defined(OPEN_MPI)
#include <mpi-ext.h>
#define MPI_Barrier_init MPIX_Barrier_init
#define MPI_Bcast_init MPIX_Bcast_init
#define MPI_Reduce_init MPIX_Reduce_init
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Scan_init MPIX_Scan_init
#define MPI_Exscan_init MPIX_Exscan_init
#define MPI_Gather_init MPIX_Gather_init
#define MPI_Gatherv_init MPIX_Gatherv_init
#define MPI_Allgather_init MPIX_Allgather_init
#define MPI_Allgatherv_init MPIX_Allgatherv_init
#define MPI_Scatter_init MPIX_Scatter_init
#define MPI_Scatterv_init MPIX_Scatterv_init
#define MPI_Alltoall_init MPIX_Alltoall_init
#define MPI_Alltoallv_init MPIX_Alltoallv_init
#define MPI_Alltoallw_init MPIX_Alltoallw_init
#define MPI_Reduce_scatter_init MPIX_Reduce_scatter_init
#define MPI_Reduce_scatter_block_init MPIX_Reduce_scatter_block_init
#endif

static int me, n;
enum { kIters = 4, kC = 5 }; /* starts per collective, ints per block */

static int v(int rank, int it, int i) { return rank * 1000 + it * 100 + i; }

static void run(MPI_Request* q) {
  check_rc("Start", MPI_Start(q));
  check_rc("Wait", MPI_Wait(q, MPI_STATUS_IGNORE));
  check_true("handle kept", *q != MPI_REQUEST_NULL);
}

static void done(MPI_Request* q) {
  /* Inactive: Wait returns at once; then free. */
  MPI_Status st;
  check_rc("Wait(inactive)", MPI_Wait(q, &st));
  check_ll("inactive status tag", MPI_ANY_TAG, st.MPI_TAG);
  check_rc("Request_free", MPI_Request_free(q));
  check_true("freed", *q == MPI_REQUEST_NULL);
}

static void t_rooted(void) {
  const int root = n - 1;
  int* big = chk_malloc(sizeof(int) * (size_t)(n * kC));
  int* big2 = chk_malloc(sizeof(int) * (size_t)(n * kC));
  int* counts = chk_malloc(sizeof(int) * (size_t)n);
  int* displs = chk_malloc(sizeof(int) * (size_t)n);
  int sb[kC], rb[kC];
  MPI_Request q;

  chk_context("Barrier_init");
  check_rc("init", MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) run(&q);
  done(&q);

  chk_context("Bcast_init");
  check_rc("init", MPI_Bcast_init(rb, kC, MPI_INT, root, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) rb[i] = me == root ? v(root, it, i) : -1;
    run(&q);
    for (int i = 0; i < kC; ++i) check_ll("bcast", v(root, it, i), rb[i]);
  }
  done(&q);

  chk_context("Reduce_init");
  check_rc("init", MPI_Reduce_init(sb, rb, kC, MPI_INT, MPI_SUM, root,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) { sb[i] = v(me, it, i); rb[i] = -1; }
    run(&q);
    if (me == root)
      for (int i = 0; i < kC; ++i) {
        long long e = 0;
        for (int r = 0; r < n; ++r) e += v(r, it, i);
        check_ll("reduce", e, rb[i]);
      }
  }
  done(&q);

  chk_context("Gather_init");
  check_rc("init", MPI_Gather_init(sb, kC, MPI_INT, big, kC, MPI_INT, root,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) sb[i] = v(me, it, i);
    for (int i = 0; i < n * kC; ++i) big[i] = -1;
    run(&q);
    if (me == root)
      for (int i = 0; i < n * kC; ++i)
        check_ll("gather", v(i / kC, it, i % kC), big[i]);
  }
  done(&q);

  chk_context("Gatherv_init");
  for (int r = 0; r < n; ++r) { counts[r] = 1 + r % kC; displs[r] = r * kC; }
  check_rc("init", MPI_Gatherv_init(sb, counts[me], MPI_INT, big, counts,
                                    displs, MPI_INT, root, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) sb[i] = v(me, it, i);
    for (int i = 0; i < n * kC; ++i) big[i] = -1;
    run(&q);
    if (me == root)
      for (int r = 0; r < n; ++r)
        for (int i = 0; i < kC; ++i)
          check_ll("gatherv", i < counts[r] ? v(r, it, i) : -1,
                   big[r * kC + i]);
  }
  done(&q);

  chk_context("Scatter_init");
  check_rc("init", MPI_Scatter_init(big, kC, MPI_INT, rb, kC, MPI_INT, root,
                                    MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < n * kC; ++i) big[i] = v(i / kC, it, i % kC);
    for (int i = 0; i < kC; ++i) rb[i] = -1;
    run(&q);
    for (int i = 0; i < kC; ++i) check_ll("scatter", v(me, it, i), rb[i]);
  }
  done(&q);

  chk_context("Scatterv_init");
  check_rc("init", MPI_Scatterv_init(big, counts, displs, MPI_INT, rb,
                                     counts[me], MPI_INT, root,
                                     MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < n * kC; ++i) big[i] = v(i / kC, it, i % kC);
    for (int i = 0; i < kC; ++i) rb[i] = -1;
    run(&q);
    for (int i = 0; i < kC; ++i)
      check_ll("scatterv", i < counts[me] ? v(me, it, i) : -1, rb[i]);
  }
  done(&q);
  free(big);
  free(big2);
  free(counts);
  free(displs);
}

static void t_all(void) {
  int* big = chk_malloc(sizeof(int) * (size_t)(n * kC));
  int* big2 = chk_malloc(sizeof(int) * (size_t)(n * kC));
  int* counts = chk_malloc(sizeof(int) * (size_t)n);
  int* displs = chk_malloc(sizeof(int) * (size_t)n);
  int* counts2 = chk_malloc(sizeof(int) * (size_t)n);
  int* displs2 = chk_malloc(sizeof(int) * (size_t)n);
  MPI_Datatype* types = chk_malloc(sizeof(MPI_Datatype) * (size_t)n);
  int sb[kC], rb[kC];
  MPI_Request q;

  chk_context("Allreduce_init");
  check_rc("init", MPI_Allreduce_init(sb, rb, kC, MPI_INT, MPI_SUM,
                                      MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) { sb[i] = v(me, it, i); rb[i] = -1; }
    run(&q);
    for (int i = 0; i < kC; ++i) {
      long long e = 0;
      for (int r = 0; r < n; ++r) e += v(r, it, i);
      check_ll("allreduce", e, rb[i]);
    }
  }
  done(&q);

  chk_context("Allreduce_init in place");
  check_rc("init", MPI_Allreduce_init(MPI_IN_PLACE, rb, kC, MPI_INT, MPI_MAX,
                                      MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) rb[i] = v(me, it, i);
    run(&q);
    for (int i = 0; i < kC; ++i) check_ll("max", v(n - 1, it, i), rb[i]);
  }
  done(&q);

  chk_context("Scan_init");
  check_rc("init", MPI_Scan_init(sb, rb, kC, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) { sb[i] = v(me, it, i); rb[i] = -1; }
    run(&q);
    for (int i = 0; i < kC; ++i) {
      long long e = 0;
      for (int r = 0; r <= me; ++r) e += v(r, it, i);
      check_ll("scan", e, rb[i]);
    }
  }
  done(&q);

  chk_context("Exscan_init");
  check_rc("init", MPI_Exscan_init(sb, rb, kC, MPI_INT, MPI_SUM,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) { sb[i] = v(me, it, i); rb[i] = -1; }
    run(&q);
    if (me > 0)
      for (int i = 0; i < kC; ++i) {
        long long e = 0;
        for (int r = 0; r < me; ++r) e += v(r, it, i);
        check_ll("exscan", e, rb[i]);
      }
  }
  done(&q);

  chk_context("Allgather_init");
  check_rc("init", MPI_Allgather_init(sb, kC, MPI_INT, big, kC, MPI_INT,
                                      MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) sb[i] = v(me, it, i);
    for (int i = 0; i < n * kC; ++i) big[i] = -1;
    run(&q);
    for (int i = 0; i < n * kC; ++i)
      check_ll("allgather", v(i / kC, it, i % kC), big[i]);
  }
  done(&q);

  chk_context("Allgatherv_init");
  for (int r = 0; r < n; ++r) { counts[r] = 1 + (r + 1) % kC; displs[r] = r * kC; }
  check_rc("init", MPI_Allgatherv_init(sb, counts[me], MPI_INT, big, counts,
                                       displs, MPI_INT, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < kC; ++i) sb[i] = v(me, it, i);
    for (int i = 0; i < n * kC; ++i) big[i] = -1;
    run(&q);
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < kC; ++i)
        check_ll("allgatherv", i < counts[r] ? v(r, it, i) : -1,
                 big[r * kC + i]);
  }
  done(&q);

  /* Alltoall: block j of rank r holds v(r, it, j). */
  chk_context("Alltoall_init");
  check_rc("init", MPI_Alltoall_init(big, kC, MPI_INT, big2, kC, MPI_INT,
                                     MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < n * kC; ++i) { big[i] = v(me, it, i); big2[i] = -1; }
    run(&q);
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < kC; ++i)
        check_ll("alltoall", v(r, it, me * kC + i), big2[r * kC + i]);
  }
  done(&q);

  /* Alltoallv / w: rank r sends 1 + (r + j) % kC ints to rank j. */
  for (int j = 0; j < n; ++j) {
    counts[j] = 1 + (me + j) % kC;  /* send counts */
    displs[j] = j * kC;
    counts2[j] = 1 + (j + me) % kC; /* receive counts */
    displs2[j] = j * kC;
  }
  for (int w = 0; w < 2; ++w) {
    chk_context(w ? "Alltoallw_init" : "Alltoallv_init");
    if (w) {
      int* sbytes = chk_malloc(sizeof(int) * (size_t)n);
      int* rbytes = chk_malloc(sizeof(int) * (size_t)n);
      for (int j = 0; j < n; ++j) {
        sbytes[j] = displs[j] * (int)sizeof(int);
        rbytes[j] = displs2[j] * (int)sizeof(int);
        types[j] = MPI_INT;
      }
      check_rc("init", MPI_Alltoallw_init(big, counts, sbytes, types, big2,
                                          counts2, rbytes, types,
                                          MPI_COMM_WORLD, MPI_INFO_NULL, &q));
      for (int it = 0; it < kIters; ++it) {
        for (int i = 0; i < n * kC; ++i) { big[i] = v(me, it, i); big2[i] = -1; }
        run(&q);
        for (int r = 0; r < n; ++r)
          for (int i = 0; i < kC; ++i)
            check_ll("alltoallw", i < counts2[r] ? v(r, it, me * kC + i) : -1,
                     big2[r * kC + i]);
      }
      done(&q); /* the arrays stay valid until the request is freed */
      free(sbytes);
      free(rbytes);
    } else {
      check_rc("init", MPI_Alltoallv_init(big, counts, displs, MPI_INT, big2,
                                          counts2, displs2, MPI_INT,
                                          MPI_COMM_WORLD, MPI_INFO_NULL, &q));
      for (int it = 0; it < kIters; ++it) {
        for (int i = 0; i < n * kC; ++i) { big[i] = v(me, it, i); big2[i] = -1; }
        run(&q);
        for (int r = 0; r < n; ++r)
          for (int i = 0; i < kC; ++i)
            check_ll("alltoallv", i < counts2[r] ? v(r, it, me * kC + i) : -1,
                     big2[r * kC + i]);
      }
      done(&q);
    }
  }

  chk_context("Reduce_scatter_init");
  for (int r = 0; r < n; ++r) counts[r] = 1 + r % 3;
  int total = 0, mine_at = 0;
  for (int r = 0; r < n; ++r) {
    if (r == me) mine_at = total;
    total += counts[r];
  }
  check_rc("init", MPI_Reduce_scatter_init(big, rb, counts, MPI_INT, MPI_SUM,
                                           MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < total; ++i) big[i] = v(me, it, i);
    for (int i = 0; i < kC; ++i) rb[i] = -1;
    run(&q);
    for (int i = 0; i < counts[me]; ++i) {
      long long e = 0;
      for (int r = 0; r < n; ++r) e += v(r, it, mine_at + i);
      check_ll("reduce_scatter", e, rb[i]);
    }
  }
  done(&q);

  chk_context("Reduce_scatter_block_init");
  check_rc("init", MPI_Reduce_scatter_block_init(big, rb, 2, MPI_INT,
                                                 MPI_SUM, MPI_COMM_WORLD,
                                                 MPI_INFO_NULL, &q));
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < 2 * n; ++i) big[i] = v(me, it, i);
    run(&q);
    for (int i = 0; i < 2; ++i) {
      long long e = 0;
      for (int r = 0; r < n; ++r) e += v(r, it, 2 * me + i);
      check_ll("reduce_scatter_block", e, rb[i]);
    }
  }
  done(&q);
  free(big);
  free(big2);
  free(counts);
  free(displs);
  free(counts2);
  free(displs2);
  free(types);
}

/* Derived datatypes: packed again at each start. */
static void t_derived(void) {
  chk_context("derived");
  MPI_Datatype vec, pair;
  MPI_Type_vector(kC, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int buf[2 * kC], s[2 * kC], r[2 * kC];
  MPI_Request q[2];
  check_rc("Bcast_init(vector)", MPI_Bcast_init(buf, 1, vec, 0, MPI_COMM_WORLD,
                                                MPI_INFO_NULL, &q[0]));
#ifdef RONDO_MPI
  check_rc("Allreduce_init(pair)",
           MPI_Allreduce_init(s, r, kC, pair, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[1]));
#else
  /* Open MPI 4.1.4 refuses MPI_SUM on a derived type of ints (MPICH and
   * Rondo accept a type map of one basic type). */
  check_rc("Allreduce_init(int)",
           MPI_Allreduce_init(s, r, 2 * kC, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[1]));
#endif
#ifdef RONDO_MPI
  /* The requests keep their types (MPI: freeing a type does not affect
   * communication using it). Open MPI 4.1.4's libNBC does not: its
   * persistent Bcast crashes in the next start, so it frees them last. */
  MPI_Type_free(&vec);
  MPI_Type_free(&pair);
#endif
  int bad = 0;
  for (int it = 0; it < kIters; ++it) {
    for (int i = 0; i < 2 * kC; ++i) {
      buf[i] = me == 0 ? v(0, it, i) : -1;
      s[i] = v(me, it, i);
      r[i] = -1;
    }
    check_rc("Startall", MPI_Startall(2, q));
    check_rc("Waitall", MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 2 * kC; ++i) {
      bad += buf[i] != (me == 0 || i % 2 == 0 ? v(0, it, i) : -1);
      long long e = 0;
      for (int k = 0; k < n; ++k) e += v(k, it, i);
      bad += r[i] != e;
    }
  }
  check_ll("vector bcast and pair allreduce (wrong elements)", 0, bad);
  MPI_Request_free(&q[0]);
  MPI_Request_free(&q[1]);
#ifndef RONDO_MPI
  MPI_Type_free(&vec);
  MPI_Type_free(&pair);
#endif
}

/* Two persistent collectives and an ordinary Iallreduce in one Waitall;
 * a persistent collective with point-to-point requests in Waitany. */
static void t_mixed(void) {
  chk_context("mixed");
  int a = 0, b = 0, c = 0, ra = -1, rb = -1, rc = -1;
  MPI_Request p[2];
  MPI_Allreduce_init(&a, &ra, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                     MPI_INFO_NULL, &p[0]);
  MPI_Allreduce_init(&b, &rb, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD,
                     MPI_INFO_NULL, &p[1]);
  for (int it = 0; it < kIters; ++it) {
    a = me + it;
    b = me * it;
    c = 1;
    MPI_Request r[3];
    r[0] = p[0];
    r[1] = p[1];
    check_rc("Startall", MPI_Startall(2, r));
    MPI_Iallreduce(&c, &rc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[2]);
    check_rc("Waitall", MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    check_ll("sum", (long long)n * (n - 1) / 2 + (long long)n * it, ra);
    check_ll("max", (long long)(n - 1) * it, rb);
    check_ll("ordinary", n, rc);
    check_true("persistent kept, ordinary released",
               r[0] == p[0] && r[1] == p[1] && r[2] == MPI_REQUEST_NULL);
  }
  /* Waitany over a persistent allreduce and a ring exchange. */
  const int left = (me + n - 1) % n, right = (me + 1) % n;
  int sv = me, rv = -1;
  MPI_Request r[3];
  a = 1;
  r[0] = p[0];
  MPI_Start(&r[0]);
  MPI_Irecv(&rv, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &r[1]);
  MPI_Isend(&sv, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[2]);
  int seen[3] = {0};
  for (int k = 0; k < 3; ++k) {
    int idx = -1;
    check_rc("Waitany", MPI_Waitany(3, r, &idx, MPI_STATUS_IGNORE));
    if (idx >= 0 && idx < 3) ++seen[idx];
  }
  for (int k = 0; k < 3; ++k) check_ll("each completed once", 1, seen[k]);
  check_ll("Waitany allreduce", n, ra);
  check_ll("Waitany ring", left, rv);
  MPI_Request_free(&p[0]);
  MPI_Request_free(&p[1]);
}

static long rss_kib(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long size = 0, rss = 0;
  if (fscanf(f, "%ld %ld", &size, &rss) != 2) rss = -1;
  fclose(f);
  return rss < 0 ? -1 : rss * 4;
}

/* 1,000 starts of one persistent allreduce: no growth in memory. */
static void t_rss(void) {
  chk_context("1000 starts");
  double s[16], r[16];
  MPI_Request q;
  MPI_Allreduce_init(s, r, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                     MPI_INFO_NULL, &q);
  for (int it = 0; it < 100; ++it) { /* warm up */
    s[0] = it;
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  const long before = rss_kib();
  int bad = 0;
  for (int it = 0; it < 1000; ++it) {
    for (int i = 0; i < 16; ++i) s[i] = me + it + i;
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    bad += r[15] != (double)n * (n - 1) / 2 + (double)n * (it + 15);
  }
  const long after = rss_kib();
  check_ll("allreduce values over 1000 starts (wrong)", 0, bad);
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer grows RSS with its own shadow and synchronisation
   * metadata for every new address it sees (600-840 KiB over these 1,000
   * starts in CI), which says nothing of Rondo: the plain and ASan runs of
   * this test check it. */
  if (me == 0) printf("SKIP RSS growth under ThreadSanitizer\n");
  const int measure = 0;
#else
  const int measure = before > 0 && after > 0;
#endif
  if (measure) {
    char w[160];
    snprintf(w, sizeof w, "RSS growth over 1000 starts %ld KiB (<= 512 KiB)",
             after - before);
    check_true(w, after - before <= 512);
  }
  MPI_Request_free(&q);
}

/* The bad-argument checks: check.h's check_error. */
#define expect check_error

static void t_bad_args(void) {
  chk_context("bad arguments");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int x = 1, y = 0;
  MPI_Request q = MPI_REQUEST_NULL;
  expect("Bcast_init with a bad root",
         MPI_Bcast_init(&x, 1, MPI_INT, n + 2, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &q),
         MPI_ERR_ROOT, "root");
  expect("Allreduce_init with a negative count",
         MPI_Allreduce_init(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &q),
         MPI_ERR_COUNT, "count");
  expect("Barrier_init on MPI_COMM_NULL",
         MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &q), MPI_ERR_COMM,
         "comm");
#ifdef RONDO_MPI
  expect("Allreduce_init with a NULL request",
         MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            MPI_INFO_NULL, NULL),
         MPI_ERR_REQUEST, "request");
  MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                     MPI_INFO_NULL, &q);
  MPI_Start(&q);
  expect("Start of an active persistent collective", MPI_Start(&q),
         MPI_ERR_REQUEST, "already active");
  expect("Cancel of a persistent collective", MPI_Cancel(&q),
         MPI_ERR_REQUEST, "cannot be cancelled");
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  check_ll("allreduce after the refused calls", n, y);
  MPI_Request_free(&q);
#endif
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  t_rooted();
  t_all();
  t_derived();
  t_mixed();
  t_rss();
  t_bad_args();
  const int rc = chk_finish("pcoll_check");
  MPI_Finalize();
  return rc;
}
