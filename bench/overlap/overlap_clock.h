/* bench/overlap/overlap_clock.h: a global clock from round trips to rank 0 (the
 * overlap methodology paper, Section 4.2), as pure functions so that the
 * estimation can be tested on simulated clocks.
 *
 * One calibration phase is a series of round trips between a rank and the
 * reference (rank 0): the rank reads its local clock (send), the reference
 * answers with its own clock (remote), the rank reads its clock again
 * (recv). The round trips with the smallest round-trip time are the least
 * disturbed; for them the reference's clock read happened at the local
 * midpoint (send + recv) / 2, up to half the asymmetry of the path.
 *
 * A model maps local time t to the reference's time:
 *   global(t) = t + offset + drift * (t - at)
 * Two phases (at the start and at the end of a run) give the drift by
 * interpolation for post-mortem conversion; the start phase and a later
 * phase give it by extrapolation for real-time use (the window barrier). */
#ifndef RONDO_BENCH_OVERLAP_OVERLAP_CLOCK_H_
#define RONDO_BENCH_OVERLAP_OVERLAP_CLOCK_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double send;   /* local clock before the request left */
  double remote; /* the reference's clock when it answered */
  double recv;   /* local clock when the answer arrived */
} OvClockSample;

/* The offset of the reference's clock against the local one around local
 * time `at`: reference = local + offset there. */
typedef struct {
  double at;
  double offset;
  double rtt;     /* best round-trip time of the phase */
  int samples;    /* round trips used */
} OvClockPoint;

typedef struct {
  double at;      /* local time the offset applies at */
  double offset;  /* reference - local at `at` */
  double drift;   /* d(reference - local) / d(local), e.g. 50e-6 */
} OvClockModel;

/* One phase: the offset from the `keep` fraction (0 < keep <= 1) of the
 * samples with the smallest round-trip time (at least one), averaged;
 * `at` is their mean local midpoint. Returns 0, or -1 if n == 0 or a
 * sample has recv < send (the point is left untouched then). */
int ov_clock_point(const OvClockSample* samples, size_t n, double keep,
                   OvClockPoint* point);

/* The model through two points (a.at < b.at): offset and drift from their
 * line, anchored at a. With b.at <= a.at (or b == NULL), drift 0. */
OvClockModel ov_clock_model(const OvClockPoint* a, const OvClockPoint* b);

/* Reference time of local time t under `m`; and the inverse (the local
 * time at which the reference clock reads g; needs drift > -1). A local
 * clock running fast by d has drift -d / (1 + d). */
double ov_clock_to_global(const OvClockModel* m, double t);
double ov_clock_to_local(const OvClockModel* m, double g);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_BENCH_OVERLAP_OVERLAP_CLOCK_H_ */
