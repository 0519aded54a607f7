// SingletonBootstrap: the bootstrap of a process started without a launcher.
//
// Why: a program linked with Rondo must also run as `./prog`, a job of one
// rank, without mpirun or rondo-run. Put/Get work on a local table (a value
// is visible at once, before any Fence); Fence and Barrier return kOk at
// once; there are no peers, so no failures.
//
// Thread-safety: all methods may be called from any thread.
#ifndef RONDO_DRIVERS_BOOTSTRAP_SINGLETON_BOOTSTRAP_H_
#define RONDO_DRIVERS_BOOTSTRAP_SINGLETON_BOOTSTRAP_H_

#include "drivers/bootstrap/bootstrap.h"
#include "drivers/bootstrap/internal/key_value_store.h"

namespace rondo::drivers::bootstrap {

class SingletonBootstrap final : public Bootstrap {
 public:
  std::string_view name() const noexcept override { return "singleton"; }
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  int local_rank() const noexcept override { return 0; }
  int local_size() const noexcept override { return 1; }

  Status Put(std::string_view key, std::span<const uint8_t> value) override;
  Status Fence() override { return Status::kOk; }
  Result<std::vector<uint8_t>> Get(int rank, std::string_view key) override;
  Status Barrier() override { return Status::kOk; }
  std::vector<PeerFailure> PollFailures() override { return {}; }
  Status Finalize() override { return Status::kOk; }

 private:
  internal::KeyValueStore store_;
};

}  // namespace rondo::drivers::bootstrap

#endif  // RONDO_DRIVERS_BOOTSTRAP_SINGLETON_BOOTSTRAP_H_
