/* bench/overlap/overlap_metrics.c: Eqs. 1-4 of the overlap methodology
 * paper. */
#include "bench/overlap/overlap_metrics.h"

#include <math.h>

/* A reference time must be a positive finite duration to divide by. */
static int valid_ref(double ref) { return isfinite(ref) && ref > 0.0; }

double ov_overhead_ratio(double t_measured, double t_comp_ref,
                         double t_comm_ref) {
  if (!isfinite(t_measured) || !valid_ref(t_comp_ref) ||
      !valid_ref(t_comm_ref)) {
    return NAN;
  }
  double ideal = fmax(t_comp_ref, t_comm_ref);
  /* Serialized minus ideal: the overhead of no overlap at all. */
  double serialized_overhead = fmin(t_comp_ref, t_comm_ref);
  return (t_measured - ideal) / serialized_overhead;
}

double ov_mpi_impact_ratio(double t_comp_passive_mpi, double t_comp_ref) {
  if (!isfinite(t_comp_passive_mpi) || !valid_ref(t_comp_ref)) return NAN;
  return t_comp_passive_mpi / t_comp_ref;
}

double ov_comp_slowdown_ratio(double t_comp, double t_comp_ref) {
  if (!isfinite(t_comp) || !valid_ref(t_comp_ref)) return NAN;
  return t_comp / t_comp_ref;
}

double ov_comm_ratio(double t_call, double t_wait, double t_comm_ref) {
  if (!isfinite(t_call) || !isfinite(t_wait) || !valid_ref(t_comm_ref)) {
    return NAN;
  }
  return (t_call + t_wait) / t_comm_ref;
}

double ov_handled_bytes(OvCollective collective, double bytes, int ranks) {
  if (!isfinite(bytes) || bytes < 0 || ranks < 1) return NAN;
  const double p = ranks;
  switch (collective) {
    case OV_IBCAST:
    case OV_IREDUCE:
      return 2 * (p - 1) * bytes;
    case OV_IALLREDUCE:
      return 4 * (p - 1) * bytes;
    case OV_IALLGATHER:
    case OV_IALLTOALL:
      return 2 * p * (p - 1) * bytes;
  }
  return NAN;
}

double ov_ns_per_mib(double cpu_seconds, double bytes) {
  if (!isfinite(cpu_seconds) || !isfinite(bytes) || bytes <= 0) return NAN;
  return cpu_seconds * 1e9 / (bytes / 1048576.0);
}
