/* bench/overlap/overlap_metrics.h: the metrics of the overlap methodology paper
 * (Denis, Jaeger, Taboada et al., "A methodology for assessing
 * computation/communication overlap of MPI nonblocking collectives",
 * Section 3), as pure functions of measured times. C11, used by the MPI
 * program bench/overlap/overlap.c (built with any mpicc) and by the unit tests.
 *
 * Every time is in seconds (any unit works as long as it is the same). The
 * reference times are the measured ones, never the calibration targets. */
#ifndef RONDO_BENCH_OVERLAP_OVERLAP_METRICS_H_
#define RONDO_BENCH_OVERLAP_OVERLAP_METRICS_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Times of one overlap measurement (Algorithm 1: t1 before the MPI_I*
 * call, t2 after it, t3 after the computation, t4 after MPI_Wait). */
typedef struct {
  double t_measured; /* t4 - t1 (or the global span over all ranks) */
  double t_call;     /* t2 - t1 */
  double t_comp;     /* t3 - t2 */
  double t_wait;     /* t4 - t3 */
} OvTimes;

/* Eq. 1: (t_measured - max(comp_ref, comm_ref)) / min(comp_ref, comm_ref).
 * 0 = perfect overlap, 1 = serialized, > 1 slower than serialized, < 0
 * faster than the ideal (imprecise references). NaN if a reference is not
 * positive. */
double ov_overhead_ratio(double t_measured, double t_comp_ref,
                         double t_comm_ref);

/* Eq. 2: t_comp_passive_mpi / t_comp_ref (1 = the idle MPI library costs
 * the computation nothing). NaN if t_comp_ref is not positive. */
double ov_mpi_impact_ratio(double t_comp_passive_mpi, double t_comp_ref);

/* Eq. 3: t_comp / t_comp_ref. */
double ov_comp_slowdown_ratio(double t_comp, double t_comp_ref);

/* Eq. 4: (t_call + t_wait) / t_comm_ref. */
double ov_comm_ratio(double t_call, double t_wait, double t_comm_ref);

/* The collectives whose traffic ov_handled_bytes knows
 * (bench/overlap/overlap.c's order). */
typedef enum {
  OV_IBCAST,
  OV_IREDUCE,
  OV_IALLREDUCE,
  OV_IALLGATHER,
  OV_IALLTOALL
} OvCollective;

/* The payload that passes through the hosts' network stacks for one
 * collective of `bytes` per block among `ranks` ranks, counted once where
 * it is sent and once where it is received, summed over the ranks, for
 * the least traffic any algorithm needs: a broadcast or a reduction moves
 * the block to (from) the P - 1 others, 2 (P - 1) B; an allreduce a
 * reduce-scatter plus an allgather, 4 (P - 1) B; an allgather or an
 * alltoall P (P - 1) blocks, 2 P (P - 1) B. 0 for one rank; NaN for bad
 * input. The progress CPU per MiB (bench/overlap/overlap.c) divides by it, so
 * that an algorithm that moves more than the least pays for it there. */
double ov_handled_bytes(OvCollective collective, double bytes, int ranks);

/* cpu_seconds / (bytes / 2^20), in nanoseconds: CPU time per MiB. NaN when
 * bytes is not positive or either is not finite. */
double ov_ns_per_mib(double cpu_seconds, double bytes);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_BENCH_OVERLAP_OVERLAP_METRICS_H_ */
