// PmixBootstrap: the bootstrap of a process started by a PMIx launcher
// (Open MPI's mpirun/prterun, Slurm's `srun --mpi=pmix`).
//
// Why: on clusters the resource manager already runs a PMIx server next to
// every process; using it means Rondo jobs start exactly like MPI jobs. This
// is the only file pair in Rondo that includes pmix.h.
//
// Put is PMIx_Put(PMIX_GLOBAL) of a byte object under "rondo:<key>" (the
// prefix keeps clear of PMIx's reserved names) followed by PMIx_Commit;
// Fence is PMIx_Fence over the namespace with PMIX_COLLECT_DATA; Barrier is
// the same fence without data. Failures come from a PMIx event handler for
// PMIX_ERR_PROC_ABORTED, PMIX_PROC_TERMINATED and PMIX_ERR_LOST_CONNECTION,
// which runs on PMIx's own thread: it appends to a list behind a mutex and
// bumps an atomic counter that PollFailures() reads first. With Open MPI
// 4.1.4's mpirun these events never reach the client (its server logs
// "PMIX ERROR: BAD-PARAM" in pmix_event_notification.c) and mpirun aborts
// the job by itself; a fence that completes after a failure event was
// seen returns kPeerFailed rather than kOk.
//
// Thread-safety: as Bootstrap. PMIx_Init/PMIx_Finalize happen in Create()
// and Finalize()/the destructor; create at most one per process.
#ifndef RONDO_DRIVERS_BOOTSTRAP_PMIX_BOOTSTRAP_H_
#define RONDO_DRIVERS_BOOTSTRAP_PMIX_BOOTSTRAP_H_

#include <memory>
#include <string>

#include "drivers/bootstrap/bootstrap.h"

namespace rondo::drivers::bootstrap {

// Initializes PMIx and returns the bootstrap (kPeerFailed / kInternal with
// `*error` set if PMIx_Init or a job-level query fails).
Result<std::unique_ptr<Bootstrap>> CreatePmixBootstrap(std::string* error);

}  // namespace rondo::drivers::bootstrap

#endif  // RONDO_DRIVERS_BOOTSTRAP_PMIX_BOOTSTRAP_H_
