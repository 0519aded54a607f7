/* bench/overlap/overlap_calibrate.c: the size search of overlap_calibrate.h.
 *
 * Two phases. Bracketing: from the start size, grow (or shrink) the size
 * geometrically until the time crosses the target. Refinement: keep a
 * bracket lo < hi with t(lo) < target < t(hi) and no measured size strictly
 * inside it; each new size is an interpolated guess strictly inside the
 * bracket and replaces one of its ends, so the bracket shrinks by at least
 * one granule per measurement and no size is measured twice. */
#include "bench/overlap/overlap_calibrate.h"

#include <math.h>

typedef struct {
  size_t size;
  double time;
} Point;

/* Not a final status: the search goes on. */
enum { kSearching = -1 };

typedef struct {
  const OvCalibrateSpec* spec;
  OvMeasureFn measure;
  void* arg;
  size_t min_size;  /* smallest multiple of the granule allowed */
  size_t max_size;  /* largest multiple of the granule allowed */
  Point best;       /* closest to the target so far (if n_recent > 0) */
  Point recent[3];  /* last distinct sizes measured, newest first */
  int n_recent;
  int iterations;
} Search;

static int valid_spec(const OvCalibrateSpec* spec, OvMeasureFn measure) {
  return spec != NULL && measure != NULL && isfinite(spec->target) &&
         spec->target > 0.0 && isfinite(spec->tolerance) &&
         spec->tolerance > 0.0 && spec->granule > 0 &&
         spec->min_size <= spec->max_size && isfinite(spec->growth) &&
         spec->growth > 1.0 && spec->max_iterations >= 1;
}

/* The range rounded inward to multiples of the granule, at least one
 * granule (a geometric search cannot grow from 0). Returns 0 if empty. */
static int init_search(Search* s, const OvCalibrateSpec* spec,
                       OvMeasureFn measure, void* arg) {
  if (!valid_spec(spec, measure)) return 0;
  size_t g = spec->granule;
  size_t lo_k = spec->min_size / g + (spec->min_size % g != 0);
  if (lo_k == 0) lo_k = 1;
  size_t hi_k = spec->max_size / g;
  if (lo_k > hi_k) return 0;
  s->spec = spec;
  s->measure = measure;
  s->arg = arg;
  s->min_size = lo_k * g;
  s->max_size = hi_k * g;
  s->n_recent = 0;
  s->iterations = 0;
  return 1;
}

/* The multiple of the granule nearest to x, clamped to [lo_k, hi_k]
 * granules (x may be NaN or huge: the clamp happens before converting). */
static size_t to_granule(const Search* s, double x, size_t lo_k,
                         size_t hi_k) {
  size_t g = s->spec->granule;
  double k = floor(x / (double)g + 0.5);
  if (!(k > (double)lo_k)) return lo_k * g;
  if (k >= (double)hi_k) return hi_k * g;
  return (size_t)k * g;
}

static void remember(Search* s, Point p) {
  double target = s->spec->target;
  if (s->n_recent == 0 ||
      fabs(p.time - target) < fabs(s->best.time - target)) {
    s->best = p;
  }
  int kept = 0;
  Point older[2];
  for (int i = 0; i < s->n_recent && kept < 2; ++i) {
    if (s->recent[i].size != p.size) older[kept++] = s->recent[i];
  }
  s->recent[0] = p;
  for (int i = 0; i < kept; ++i) s->recent[i + 1] = older[i];
  s->n_recent = kept + 1;
}

/* One measurement: a final status (failed, converged, out of iterations)
 * or kSearching with *p set. */
static int measure_at(Search* s, size_t size, Point* p) {
  if (s->iterations >= s->spec->max_iterations) {
    return OV_CALIB_NO_CONVERGENCE;
  }
  double t = s->measure(size, s->arg);
  ++s->iterations;
  if (!isfinite(t) || t < 0.0) return OV_CALIB_MEASURE_FAILED;
  p->size = size;
  p->time = t;
  remember(s, *p);
  double target = s->spec->target;
  if (fabs(t - target) <= s->spec->tolerance * target) {
    return OV_CALIB_CONVERGED;
  }
  return kSearching;
}

static size_t grow(const Search* s, size_t size) {
  size_t g = s->spec->granule;
  return to_granule(s, (double)size * s->spec->growth, size / g + 1,
                    s->max_size / g);
}

static size_t shrink(const Search* s, size_t size) {
  size_t g = s->spec->granule;
  return to_granule(s, (double)size / s->spec->growth, s->min_size / g,
                    size / g - 1);
}

static size_t start_size(const Search* s) {
  size_t g = s->spec->granule;
  size_t start = s->spec->start_size;
  if (start == 0) return s->min_size;
  return to_granule(s, (double)start, s->min_size / g, s->max_size / g);
}

/* Geometric steps from the start size, all in the direction of the
 * target, until the time crosses it: then *lo, *hi bracket it. */
static int bracket(Search* s, Point* lo, Point* hi) {
  double target = s->spec->target;
  Point p;
  Point prev;
  int status = measure_at(s, start_size(s), &p);
  if (status != kSearching) return status;
  int up = p.time < target;
  for (;;) {
    if (up && p.size == s->max_size) return OV_CALIB_TOO_FAST;
    if (!up && p.size == s->min_size) return OV_CALIB_TOO_SLOW;
    prev = p;
    status = measure_at(s, up ? grow(s, p.size) : shrink(s, p.size), &p);
    if (status != kSearching) return status;
    if (up && p.time > target) {
      *lo = prev;
      *hi = p;
      return kSearching;
    }
    if (!up && p.time < target) {
      *lo = p;
      *hi = prev;
      return kSearching;
    }
  }
}

/* Real roots of A x^2 + B x + C (numerically stable form); returns how
 * many were written to r. */
static int solve_quadratic(double a, double b, double c, double r[2]) {
  if (a == 0.0) {
    if (b == 0.0) return 0;
    r[0] = -c / b;
    return 1;
  }
  double disc = b * b - 4.0 * a * c;
  if (!(disc >= 0.0)) return 0;
  double q = -0.5 * (b + copysign(sqrt(disc), b));
  r[0] = q / a;
  if (q == 0.0) return 1;
  r[1] = c / q;
  return 2;
}

/* The size where the quadratic through the last three measured points
 * reaches the target, strictly inside (lo, hi) and closest to `secant`;
 * NaN if there is none. Fitted in x = s - s0 (Newton form) so that large
 * sizes do not cancel. */
static double quadratic_guess(const Search* s, const Point* lo,
                              const Point* hi, double secant) {
  if (s->n_recent < 3) return NAN;
  const Point* p = s->recent;
  double s0 = (double)p[0].size;
  double d1 = (double)p[1].size - s0;
  double d2 = (double)p[2].size - s0;
  double f01 = (p[1].time - p[0].time) / d1;
  double f12 = (p[2].time - p[1].time) / (d2 - d1);
  double f012 = (f12 - f01) / d2;
  double roots[2];
  int n = solve_quadratic(f012, f01 - f012 * d1, p[0].time - s->spec->target,
                          roots);
  double guess = NAN;
  for (int i = 0; i < n; ++i) {
    double x = s0 + roots[i];
    if (!(x > (double)lo->size && x < (double)hi->size)) continue;
    if (isnan(guess) || fabs(x - secant) < fabs(guess - secant)) guess = x;
  }
  return guess;
}

/* The next size strictly inside (lo, hi), or 0 when no multiple of the
 * granule is left there. */
static size_t next_size(const Search* s, const Point* lo, const Point* hi) {
  size_t g = s->spec->granule;
  if (hi->size - lo->size <= g) return 0;
  double target = s->spec->target;
  double secant = (double)lo->size + (target - lo->time) *
                                         (double)(hi->size - lo->size) /
                                         (hi->time - lo->time);
  double guess = quadratic_guess(s, lo, hi, secant);
  if (isnan(guess)) guess = secant;
  return to_granule(s, guess, lo->size / g + 1, hi->size / g - 1);
}

static int refine(Search* s, Point lo, Point hi) {
  for (;;) {
    size_t size = next_size(s, &lo, &hi);
    if (size == 0) return OV_CALIB_NO_CONVERGENCE;
    Point p;
    int status = measure_at(s, size, &p);
    if (status != kSearching) return status;
    if (p.time < s->spec->target) {
      lo = p;
    } else {
      hi = p;
    }
  }
}

OvCalibrateResult ov_calibrate(const OvCalibrateSpec* spec,
                               OvMeasureFn measure, void* arg) {
  OvCalibrateResult result = {OV_CALIB_BAD_SPEC, 0, NAN, 0};
  Search s;
  if (!init_search(&s, spec, measure, arg)) return result;
  Point lo;
  Point hi;
  int status = bracket(&s, &lo, &hi);
  if (status == kSearching) status = refine(&s, lo, hi);
  result.status = (OvCalibrateStatus)status;
  result.iterations = s.iterations;
  if (s.n_recent > 0) {
    result.size = s.best.size;
    result.time = s.best.time;
  }
  return result;
}

const char* ov_calibrate_status_text(OvCalibrateStatus s) {
  switch (s) {
    case OV_CALIB_CONVERGED:
      return "converged";
    case OV_CALIB_TOO_SLOW:
      return "the smallest size already takes longer than the target";
    case OV_CALIB_TOO_FAST:
      return "the largest size allowed is still faster than the target";
    case OV_CALIB_NO_CONVERGENCE:
      return "did not converge within the iterations allowed";
    case OV_CALIB_MEASURE_FAILED:
      return "a measurement failed";
    case OV_CALIB_BAD_SPEC:
      return "invalid calibration parameters";
  }
  return "unknown calibration status";
}
