// LauncherBootstrap: the client side of rondo-run, Rondo's own launcher.
//
// Why: on a machine without Slurm or Open MPI a job still needs its ranks to
// exchange addresses and to learn when a peer dies. rondo-run (rondo_run.cc)
// starts the ranks with RONDO_RUN_SOCKET, RONDO_RUN_KEY, RONDO_RANK,
// RONDO_SIZE, RONDO_LOCAL_RANK and RONDO_LOCAL_SIZE; this class connects to
// the socket, proves it belongs to the job with the key (HELLO), and then
// speaks the protocol of internal/protocol.h.
//
// A reader thread receives every frame: FAILURE notices go to a list behind
// a mutex and bump an atomic counter, so PollFailures() costs one atomic
// load when nothing is new; KV frames fill the local table Get() reads; the
// FENCE_DONE / BARRIER_DONE reply wakes the caller waiting in Fence() or
// Barrier(). A collective returns kPeerFailed when rondo-run reports it
// cannot finish (a rank died) or when the connection closes.
//
// Destroying the object without Finalize() closes the connection without
// announcing a clean exit: if the process then exits, rondo-run reports it
// as a failure, as mpirun does for a process that skips MPI_Finalize.
//
// Thread-safety: as Bootstrap; the reader thread is internal.
#ifndef RONDO_DRIVERS_BOOTSTRAP_LAUNCHER_BOOTSTRAP_H_
#define RONDO_DRIVERS_BOOTSTRAP_LAUNCHER_BOOTSTRAP_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"
#include "drivers/bootstrap/internal/failure_mailbox.h"
#include "drivers/bootstrap/internal/key_value_store.h"
#include "drivers/bootstrap/internal/protocol.h"

namespace rondo::drivers::bootstrap {

// What rondo-run passes to each rank.
struct LauncherEnvironment {
  std::string socket_path;  // RONDO_RUN_SOCKET
  std::string key_hex;      // RONDO_RUN_KEY: 64 hex digits
  int rank = 0;             // RONDO_RANK: 0..size-1
  int size = 1;             // RONDO_SIZE: 1..4096
  int local_rank = 0;       // RONDO_LOCAL_RANK (default: rank)
  int local_size = 1;       // RONDO_LOCAL_SIZE (default: size)
};

// Reads and validates the variables above through `lookup`
// (base::EnvLookup, the configuration registry, in production; a map in
// tests). nullopt with `*error` naming the variable,
// its value and what is allowed.
using EnvironmentLookup = std::function<const char*(const char* name)>;
std::optional<LauncherEnvironment> ParseLauncherEnvironment(
    const EnvironmentLookup& lookup, std::string* error);

class LauncherBootstrap final : public Bootstrap {
 public:
  // Connects to rondo-run and says HELLO. Fails (kPeerFailed, `*error` set)
  // if the socket cannot be reached or rondo-run refuses the key or rank.
  // Blocks until rondo-run answers (at most `timeout_ms`).
  static Result<std::unique_ptr<LauncherBootstrap>> Connect(
      const LauncherEnvironment& env, std::string* error,
      int timeout_ms = 60'000);

  ~LauncherBootstrap() override;
  LauncherBootstrap(const LauncherBootstrap&) = delete;
  LauncherBootstrap& operator=(const LauncherBootstrap&) = delete;

  std::string_view name() const noexcept override { return "rondo-run"; }
  int rank() const noexcept override { return env_.rank; }
  int size() const noexcept override { return env_.size; }
  int local_rank() const noexcept override { return env_.local_rank; }
  int local_size() const noexcept override { return env_.local_size; }

  Status Put(std::string_view key, std::span<const uint8_t> value) override;
  Status Fence() override;
  Result<std::vector<uint8_t>> Get(int rank, std::string_view key) override;
  Status Barrier() override;
  std::vector<PeerFailure> PollFailures() override;
  Status Finalize() override;

 private:
  LauncherBootstrap(LauncherEnvironment env, int fd);

  // Sends one frame (any thread; serialised by send_mutex_).
  Status Send(const internal::Message& message);
  // Sends FENCE or BARRIER and waits for `done` or the connection's end.
  Status Collective(internal::MessageType request, internal::MessageType done);
  // The reader thread's body.
  void ReadLoop();
  void Dispatch(internal::Message message);
  void PostFailure(PeerFailure failure);

  const LauncherEnvironment env_;
  const int fd_;
  internal::KeyValueStore store_;
  std::mutex send_mutex_;  // one writer at a time on fd_

  std::mutex mutex_;  // guards the fields below
  std::condition_variable reply_ready_;
  std::optional<internal::Message> reply_;  // FENCE_DONE or BARRIER_DONE
  bool closed_ = false;                     // the reader saw EOF or an error
  bool finalized_ = false;
  internal::FailureMailbox failures_;  // posted by the reader

  std::thread reader_;  // last: starts after everything above exists
};

}  // namespace rondo::drivers::bootstrap

#endif  // RONDO_DRIVERS_BOOTSTRAP_LAUNCHER_BOOTSTRAP_H_
