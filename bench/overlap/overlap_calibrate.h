/* bench/overlap/overlap_calibrate.h: find the size that makes an operation
 * take a target time (the overlap methodology paper, Sections 4.3 and 5.1),
 * used for both the collective's message size and the GEMM's matrix order.
 *
 * The search measures t(size) through a callback (the callback takes the
 * median of several runs itself), grows the size geometrically until the
 * target is bracketed, then interpolates: a quadratic through the last
 * three distinct measured points (a secant when fewer, or when the
 * quadratic's root is outside the bracket), rounded to the size granule and
 * clamped into the bracket. It stops when |t - target| <= tolerance *
 * target (converged), or after max_iterations measurements, or when the
 * smallest size already takes longer than the target / the largest is
 * still too fast (not converged: the point must be marked invalid). The
 * best point seen (closest to the target) is returned in every case.
 * min_size is rounded up to a multiple of the granule (at least one
 * granule), max_size down, start_size to the nearest multiple. */
#ifndef RONDO_BENCH_OVERLAP_OVERLAP_CALIBRATE_H_
#define RONDO_BENCH_OVERLAP_OVERLAP_CALIBRATE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Time in seconds for `size` (median of runs), or a negative value if it
 * could not be measured (the search then stops, not converged). */
typedef double (*OvMeasureFn)(size_t size, void* arg);

typedef struct {
  double target;       /* seconds, > 0 */
  double tolerance;    /* relative, e.g. 0.10 */
  size_t min_size;     /* smallest size tried (>= granule) */
  size_t max_size;     /* largest size allowed */
  size_t granule;      /* sizes are multiples of it (>= 1) */
  size_t start_size;   /* first size tried (clamped into range); 0 = min */
  double growth;       /* geometric growth factor while bracketing, > 1 */
  int max_iterations;  /* measurements allowed, e.g. 30 */
} OvCalibrateSpec;

typedef enum {
  OV_CALIB_CONVERGED = 0,
  OV_CALIB_TOO_SLOW = 1,     /* even min_size takes longer than target */
  OV_CALIB_TOO_FAST = 2,     /* even max_size is faster than target */
  OV_CALIB_NO_CONVERGENCE = 3, /* max_iterations reached, or the bracket
                                  closed on two adjacent sizes (a jump) */
  OV_CALIB_MEASURE_FAILED = 4,
  OV_CALIB_BAD_SPEC = 5
} OvCalibrateStatus;

typedef struct {
  OvCalibrateStatus status;
  size_t size;        /* best size found (0 if nothing was measured) */
  double time;        /* its measured time (NaN if nothing was measured) */
  int iterations;     /* measurements made */
} OvCalibrateResult;

OvCalibrateResult ov_calibrate(const OvCalibrateSpec* spec,
                               OvMeasureFn measure, void* arg);

/* A human text: "converged", "the smallest size already takes longer
 * than the target", ... */
const char* ov_calibrate_status_text(OvCalibrateStatus s);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_BENCH_OVERLAP_OVERLAP_CALIBRATE_H_ */
