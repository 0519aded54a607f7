/* check.h: the checking helpers shared by the MPI test programs of
 * tests/mpi/ (C11, any MPI-3.1 library: Rondo's MadMPI or Open MPI).
 *
 * Every check compares a value with a reference the program computed
 * itself. A failing check prints one line
 *     FAIL <context> <what> rank <r>: expected X got Y
 * (at most CHK_MAX_PRINTED per rank, then a summary), and chk_finish()
 * adds up checks and failures over MPI_COMM_WORLD, prints
 *     <name>: ok (<n> checks)        (rank 0, n summed over all ranks)
 * or `<name>: FAILED (...)`, and returns the process exit code.
 *
 * Only functions and constants of nmad/mpi/include/mpi.h are used. Handles
 * are ints in Rondo and pointers in Open MPI: never do arithmetic on them,
 * print them, or compare them other than with ==. */
#ifndef RONDO_TESTS_MPI_CHECK_H_
#define RONDO_TESTS_MPI_CHECK_H_

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHK_MAX_PRINTED 40

static int chk_rank = -1;
static long long chk_checks = 0;
static long long chk_fails = 0;
static char chk_ctx[320];

/* Call right after MPI_Init. */
static inline void chk_init(void) { MPI_Comm_rank(MPI_COMM_WORLD, &chk_rank); }

/* Sets the context printed in front of every failure (printf format). */
static inline void chk_context(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(chk_ctx, sizeof chk_ctx, fmt, ap);
  va_end(ap);
}

static inline void chk_report(const char* what, const char* expected,
                              const char* got) {
  ++chk_fails;
  if (chk_fails <= CHK_MAX_PRINTED) {
    printf("FAIL %s%s%s rank %d: expected %s got %s\n", chk_ctx,
           chk_ctx[0] ? " " : "", what, chk_rank, expected, got);
  } else if (chk_fails == CHK_MAX_PRINTED + 1) {
    printf("FAIL (further failures of rank %d not printed)\n", chk_rank);
  }
  fflush(stdout);
}

static inline int check_ll(const char* what, long long expected,
                           long long got) {
  ++chk_checks;
  if (expected == got) return 1;
  char e[32], g[32];
  snprintf(e, sizeof e, "%lld", expected);
  snprintf(g, sizeof g, "%lld", got);
  chk_report(what, e, g);
  return 0;
}

static inline int check_true(const char* what, int cond) {
  ++chk_checks;
  if (cond) return 1;
  chk_report(what, "true", "false");
  return 0;
}

static inline int check_dbl(const char* what, double expected, double got) {
  ++chk_checks;
  if (expected == got) return 1;
  char e[40], g[40];
  snprintf(e, sizeof e, "%.17g", expected);
  snprintf(g, sizeof g, "%.17g", got);
  chk_report(what, e, g);
  return 0;
}

static inline int check_str(const char* what, const char* expected,
                            const char* got) {
  ++chk_checks;
  if (strcmp(expected, got) == 0) return 1;
  char e[300], g[300];
  snprintf(e, sizeof e, "\"%s\"", expected);
  snprintf(g, sizeof g, "\"%s\"", got);
  chk_report(what, e, g);
  return 0;
}

/* One check for a whole int array; a mismatch names the first bad index
 * and how many elements differ. */
static inline int check_ints(const char* what, const int* expected,
                             const int* got, size_t n) {
  ++chk_checks;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (expected[i] != got[i]) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return 1;
  char w[400], e[32], g[64];
  snprintf(w, sizeof w, "%s[%zu] (%zu of %zu elements differ)", what, first,
           bad, n);
  snprintf(e, sizeof e, "%d", expected[first]);
  snprintf(g, sizeof g, "%d", got[first]);
  chk_report(w, e, g);
  return 0;
}

/* The same for bytes. */
static inline int check_bytes(const char* what, const unsigned char* expected,
                              const unsigned char* got, size_t n) {
  ++chk_checks;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (expected[i] != got[i]) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return 1;
  char w[400], e[32], g[64];
  snprintf(w, sizeof w, "%s byte %zu (%zu of %zu bytes differ)", what, first,
           bad, n);
  snprintf(e, sizeof e, "0x%02x", expected[first]);
  snprintf(g, sizeof g, "0x%02x", got[first]);
  chk_report(w, e, g);
  return 0;
}

/* An MPI call that must succeed. */
static inline int check_rc(const char* what, int rc) {
  ++chk_checks;
  if (rc == MPI_SUCCESS) return 1;
  char g[64 + MPI_MAX_ERROR_STRING];
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  snprintf(g, sizeof g, "%d (%s)", rc, msg);
  chk_report(what, "MPI_SUCCESS", g);
  return 0;
}

/* The class of an error code (MPI_Error_class), or -1 if the code is not
 * one (MPI_Error_class fails: its error is raised with MPI_ERRORS_RETURN
 * temporarily set on MPI_COMM_WORLD, so that a garbage code fails the
 * check instead of aborting the job). */
static inline int chk_class(int rc) {
  int cls = -1;
  MPI_Errhandler saved;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved);
  MPI_Errhandler_free(&saved);
  return cls;
}

/* A call that must fail: its code `rc` has class `cls` and, with Rondo, its
 * message (MPI_Error_string) names `word` (the argument, or what is
 * wrong). Other libraries' messages are not checked. */
static inline void check_error(const char* what, int rc, int cls,
                               const char* word) {
  char w[800];
  snprintf(w, sizeof w, "%s: error class", what);
  check_ll(w, cls, chk_class(rc));
#ifdef RONDO_MPI
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  msg[0] = 0;
  MPI_Error_string(rc, msg, &len);
  snprintf(w, sizeof w, "%s: message \"%.300s\" names \"%s\"", what, msg,
           word);
  check_true(w, strstr(msg, word) != NULL);
#else
  (void)word;
#endif
}

/* Never returns NULL; n may be 0. */
static inline void* chk_malloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "rank %d: out of memory (%zu bytes)\n", chk_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}

/* Adds up over `comm` (chk_finish: MPI_COMM_WORLD); its rank 0 prints the summary. Returns the exit
 * code: 0 only if no rank failed. Call before MPI_Finalize. */
static inline int chk_finish_on(const char* name, MPI_Comm comm) {
  long long mine[2] = {chk_checks, chk_fails}, all[2] = {0, 0};
  int rank = 0;
  chk_ctx[0] = 0;
  MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, comm);
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    if (all[1] == 0) {
      printf("%s: ok (%lld checks)\n", name, all[0]);
    } else {
      printf("%s: FAILED (%lld failures in %lld checks)\n", name, all[1],
             all[0]);
    }
    fflush(stdout);
  }
  return all[1] == 0 ? 0 : 1;
}
/* The same over another communicator (a sessions-only program has no
 * MPI_COMM_WORLD). */
static inline int chk_finish(const char* name) {
  return chk_finish_on(name, MPI_COMM_WORLD);
}

#endif /* RONDO_TESTS_MPI_CHECK_H_ */
