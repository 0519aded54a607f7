#define _POSIX_C_SOURCE 200809L

#include "bench/common/prog_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double BenchNowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int CompareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n), nearest rank as in
 * bench/common/report.cc. */
static double Quantile(const double* v, int n, double q) {
  int i = (int)(q * (double)(n - 1) + 0.5);
  return v[i < n ? i : n - 1];
}

BenchStats BenchSummarize(double* v, int n) {
  BenchStats s = {0, 0, 0, 0, 0};
  if (n <= 0) return s;
  qsort(v, (size_t)n, sizeof(double), CompareDoubles);
  s.min = v[0];
  s.max = v[n - 1];
  s.median = Quantile(v, n, 0.5);
  s.p99 = Quantile(v, n, 0.99);
  for (int i = 0; i < n; ++i) s.mean += v[i];
  s.mean /= n;
  return s;
}

void BenchJsonString(FILE* f, const char* s) {
  fputc('"', f);
  for (; *s != '\0'; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc(c, f);
    } else if (c < 0x20) {
      fprintf(f, "\\u%04x", c);
    } else {
      fputc(c, f);
    }
  }
  fputc('"', f);
}

double BenchParseDouble(const char* prog, const char* s, const char* what,
                        double lo, double hi) {
  char* end = NULL;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || !(v >= lo && v <= hi)) {
    fprintf(stderr, "%s: %s: '%s' is not allowed; expected a number in %g..%g\n",
            prog, what, s, lo, hi);
    exit(2);
  }
  return v;
}

typedef struct FinalizeWatch {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  int seconds;
  void (*on_hang)(void*);
  void* ctx;
} FinalizeWatch;

static void* FinalizeWatchMain(void* arg) {
  FinalizeWatch* w = arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += w->seconds;
  pthread_mutex_lock(&w->mu);
  while (!w->done)
    if (pthread_cond_timedwait(&w->cv, &w->mu, &until) == ETIMEDOUT) break;
  const int done = w->done;
  pthread_mutex_unlock(&w->mu);
  if (done) return NULL;
  if (w->on_hang != NULL) w->on_hang(w->ctx);
  fflush(NULL);
  _exit(5);
}

int BenchFinalizeWatched(int (*finalize)(void), int seconds,
                         void (*on_hang)(void* ctx), void* ctx) {
  static FinalizeWatch w = {PTHREAD_MUTEX_INITIALIZER,
                            PTHREAD_COND_INITIALIZER, 0, 0, NULL, NULL};
  w.done = 0;
  w.seconds = seconds;
  w.on_hang = on_hang;
  w.ctx = ctx;
  pthread_t tid;
  const int watching = pthread_create(&tid, NULL, FinalizeWatchMain, &w) == 0;
  const int rc = finalize();
  if (watching) {
    pthread_mutex_lock(&w.mu);
    w.done = 1;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(tid, NULL);
  }
  return rc;
}
