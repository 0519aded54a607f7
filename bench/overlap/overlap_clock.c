/* bench/overlap/overlap_clock.c: offset and drift of a local clock against the
 * reference (rank 0) from round trips; see overlap_clock.h. */
#include "bench/overlap/overlap_clock.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

static double rtt_of(const OvClockSample* s) { return s->recv - s->send; }

/* qsort order: smallest round-trip time first. */
static int by_rtt(const void* a, const void* b) {
  double ra = rtt_of((const OvClockSample*)a);
  double rb = rtt_of((const OvClockSample*)b);
  return (ra > rb) - (ra < rb);
}

/* A usable sample has finite readings and did not come back before it
 * left (recv < send, or a NaN, means a broken clock read). */
static int valid_sample(const OvClockSample* s) {
  return isfinite(s->send) && isfinite(s->remote) && isfinite(s->recv) &&
         s->recv >= s->send;
}

int ov_clock_point(const OvClockSample* samples, size_t n, double keep,
                   OvClockPoint* point) {
  if (samples == NULL || point == NULL || n == 0 || !(keep > 0.0) ||
      keep > 1.0) {
    return -1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!valid_sample(&samples[i])) return -1;
  }
  OvClockSample* sorted = malloc(n * sizeof *sorted);
  if (sorted == NULL) return -1;
  for (size_t i = 0; i < n; ++i) sorted[i] = samples[i];
  qsort(sorted, n, sizeof *sorted, by_rtt);

  size_t k = (size_t)(keep * (double)n + 0.5);
  if (k < 1) k = 1;
  if (k > n) k = n;
  /* Midpoints are averaged relative to the first one: absolute clock
   * readings can be large (epoch-based), and their sum would lose the
   * sub-microsecond digits. */
  double mid0 = 0.5 * (sorted[0].send + sorted[0].recv);
  double sum_mid = 0.0;
  double sum_offset = 0.0;
  for (size_t i = 0; i < k; ++i) {
    double mid = 0.5 * (sorted[i].send + sorted[i].recv);
    sum_mid += mid - mid0;
    sum_offset += sorted[i].remote - mid;
  }
  point->at = mid0 + sum_mid / (double)k;
  point->offset = sum_offset / (double)k;
  point->rtt = rtt_of(&sorted[0]);
  point->samples = k > (size_t)INT_MAX ? INT_MAX : (int)k;
  free(sorted);
  return 0;
}

OvClockModel ov_clock_model(const OvClockPoint* a, const OvClockPoint* b) {
  OvClockModel m = {0.0, 0.0, 0.0};
  if (a == NULL) return m;
  m.at = a->at;
  m.offset = a->offset;
  if (b != NULL && b->at > a->at) {
    m.drift = (b->offset - a->offset) / (b->at - a->at);
  }
  return m;
}

double ov_clock_to_global(const OvClockModel* m, double t) {
  return t + m->offset + m->drift * (t - m->at);
}

/* g = at + (t - at) * (1 + drift) + offset, solved for t (drift > -1). */
double ov_clock_to_local(const OvClockModel* m, double g) {
  return m->at + (g - m->at - m->offset) / (1.0 + m->drift);
}
