#include "drivers/bootstrap/in_process_bootstrap.h"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>

#include "drivers/bootstrap/internal/key_value_store.h"
#include "drivers/bootstrap/internal/protocol.h"

namespace rondo::drivers::bootstrap {

struct InProcessBootstrap::Group {
  int size = 0;
  internal::KeyValueStore store;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  uint64_t generation = 0;
};

std::vector<std::unique_ptr<Bootstrap>> InProcessBootstrap::MakeGroup(
    int size) {
  if (size < 1 || size > 65536)
    throw std::invalid_argument("InProcessBootstrap: a group has 1..65536 "
                                "ranks, not " + std::to_string(size));
  auto group = std::make_shared<Group>();
  group->size = size;
  std::vector<std::unique_ptr<Bootstrap>> out;
  for (int r = 0; r < size; ++r)
    out.push_back(std::make_unique<InProcessBootstrap>(group, r));
  return out;
}

InProcessBootstrap::InProcessBootstrap(std::shared_ptr<Group> group, int rank)
    : group_(std::move(group)), rank_(rank) {}
InProcessBootstrap::~InProcessBootstrap() = default;

int InProcessBootstrap::size() const noexcept { return group_->size; }

Status InProcessBootstrap::Put(std::string_view key,
                               std::span<const uint8_t> value) {
  if (!internal::CheckKey(key).empty() || !internal::CheckValue(value).empty())
    return Status::kInvalidArgument;
  group_->store.Set(rank_, std::string(key),
                    std::vector<uint8_t>(value.begin(), value.end()));
  return Status::kOk;
}

Result<std::vector<uint8_t>> InProcessBootstrap::Get(int rank,
                                                     std::string_view key) {
  if (rank < 0 || rank >= group_->size) return Status::kInvalidArgument;
  auto v = group_->store.Find(rank, key);
  if (!v) return Status::kInvalidArgument;
  return std::move(*v);
}

Status InProcessBootstrap::Barrier() {
  Group& g = *group_;
  std::unique_lock lock(g.mu);
  const uint64_t gen = g.generation;
  if (++g.arrived == g.size) {
    g.arrived = 0;
    ++g.generation;
    g.cv.notify_all();
    return Status::kOk;
  }
  g.cv.wait(lock, [&] { return g.generation != gen; });
  return Status::kOk;
}

}  // namespace rondo::drivers::bootstrap
