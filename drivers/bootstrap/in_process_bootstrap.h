// InProcessBootstrap: the ranks of a job are threads of one process.
//
// Why: an nmad Core needs a bootstrap for its address exchange; with this one
// several Cores live in one process (one per thread), so the whole message
// path (core, drivers, UCX's self and shared-memory transports) runs in
// unit tests and micro-benchmarks without a launcher. Values are visible to
// every rank as soon as they are Put (a Fence is a barrier); there are no
// failures. Not for production jobs: nothing crosses a process boundary.
//
// Thread-safety: all methods may be called from any thread; the collective
// calls (Fence, Barrier) block until every rank of the group has called them,
// so each rank calls them from its own thread.
#ifndef RONDO_DRIVERS_BOOTSTRAP_IN_PROCESS_BOOTSTRAP_H_
#define RONDO_DRIVERS_BOOTSTRAP_IN_PROCESS_BOOTSTRAP_H_

#include <memory>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"

namespace rondo::drivers::bootstrap {

class InProcessBootstrap final : public Bootstrap {
 public:
  // One bootstrap per rank of a new group of `size` ranks (1..65536);
  // throws std::invalid_argument otherwise.
  static std::vector<std::unique_ptr<Bootstrap>> MakeGroup(int size);

  struct Group;
  InProcessBootstrap(std::shared_ptr<Group> group, int rank);
  ~InProcessBootstrap() override;

  std::string_view name() const noexcept override { return "in-process"; }
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override;
  int local_rank() const noexcept override { return rank_; }
  int local_size() const noexcept override { return size(); }

  Status Put(std::string_view key, std::span<const uint8_t> value) override;
  Status Fence() override { return Barrier(); }
  Result<std::vector<uint8_t>> Get(int rank, std::string_view key) override;
  Status Barrier() override;
  std::vector<PeerFailure> PollFailures() override { return {}; }
  Status Finalize() override { return Status::kOk; }

 private:
  std::shared_ptr<Group> group_;
  int rank_;
};

}  // namespace rondo::drivers::bootstrap

#endif  // RONDO_DRIVERS_BOOTSTRAP_IN_PROCESS_BOOTSTRAP_H_
