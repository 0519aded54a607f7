// Bootstrap: how the ranks of a job find each other before any network
// exists. One interface, three implementations chosen from the environment:
//   * "pmix"      the process was started by Open MPI's mpirun, Slurm's
//                 `srun --mpi=pmix` or prterun (PMIX_NAMESPACE/PMIX_RANK set);
//   * "rondo-run" the process was started by Rondo's own launcher
//                 (RONDO_RUN_SOCKET set): a private Unix socket to rondo-run;
//   * "singleton" neither: a job of one rank. A process that a launcher
//                 started as one of several tasks without PMIx (Slurm's srun
//                 without --mpi=pmix, MPICH's Hydra speaking PMI-1) is not
//                 a singleton: that is an error naming the missing option
//                 (UnsupportedLauncher), never N jobs of one rank.
//
// The exchange is key/value, PMIx style: every rank Put()s its values, one
// collective Fence() makes all of them visible, Get() reads any rank's.
// Barrier() is a fence without data.
//
// Peer failure: when a rank of the job dies (or exits without Finalize()),
// the launcher tells the others. PollFailures() returns what was learned
// since the last call; it is cheap (an atomic load when nothing is new) so a
// progress task may call it on every pass. A Fence() or Barrier() that cannot
// finish because a rank died returns kPeerFailed instead of hanging.
//
// Thread-safety: all methods may be called from any thread; collective calls
// (Fence, Barrier, Finalize) must be made by one thread at a time per process.
#ifndef RONDO_DRIVERS_BOOTSTRAP_BOOTSTRAP_H_
#define RONDO_DRIVERS_BOOTSTRAP_BOOTSTRAP_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"

namespace rondo::drivers::bootstrap {

using engine::Result;
using engine::Status;

struct PeerFailure {
  int rank = -1;
  std::string what;  // e.g. "rank 2 was killed by signal 9 (Killed)"
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual std::string_view name() const noexcept = 0;
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  // Rank and rank count on this node (for placement).
  virtual int local_rank() const noexcept = 0;
  virtual int local_size() const noexcept = 0;

  // Publishes `value` under `key` for this rank; visible after Fence().
  // Keys: 1-63 characters [A-Za-z0-9_.:-]; values up to 1 MiB
  // (kInvalidArgument otherwise).
  virtual Status Put(std::string_view key, std::span<const uint8_t> value) = 0;
  // Collective over all ranks: makes every Put() visible; also a barrier.
  virtual Status Fence() = 0;
  // `rank`'s value for `key` (after a Fence). kInvalidArgument for a bad rank
  // or a key that rank did not put.
  virtual Result<std::vector<uint8_t>> Get(int rank, std::string_view key) = 0;
  // Collective over all ranks.
  virtual Status Barrier() = 0;
  // Failures learned since the last call (empty: nothing new). Cheap.
  virtual std::vector<PeerFailure> PollFailures() = 0;
  // Announces a clean exit; after this, exiting is not a failure. Idempotent.
  virtual Status Finalize() = 0;
};

// "" when the environment is not that of a multi-task launcher Rondo
// cannot talk to, else what is wrong and how to start the job instead:
// Slurm job steps of several tasks without PMIx (SLURM_STEP_NUM_TASKS > 1,
// no PMIX_*: srun without --mpi=pmix, or SLURM_MPI_TYPE naming another
// plugin) and PMI-1 launchers (PMI_SIZE > 1: MPICH's Hydra). `lookup`
// reads the environment (base::EnvLookup; a parameter for tests).
std::string UnsupportedLauncher(const char* (*lookup)(const char*));

// Chooses and initializes the bootstrap for this process (see banner).
// Errors (bad environment, wrong key, unreachable launcher) come back as a
// Status with `*error` set to a readable explanation when `error` is given.
Result<std::unique_ptr<Bootstrap>> BootstrapFromEnvironment(
    std::string* error = nullptr);

}  // namespace rondo::drivers::bootstrap

#endif  // RONDO_DRIVERS_BOOTSTRAP_BOOTSTRAP_H_
