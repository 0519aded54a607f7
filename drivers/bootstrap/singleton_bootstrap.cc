#include "drivers/bootstrap/singleton_bootstrap.h"

#include "drivers/bootstrap/internal/protocol.h"

namespace rondo::drivers::bootstrap {

Status SingletonBootstrap::Put(std::string_view key,
                               std::span<const uint8_t> value) {
  if (!internal::CheckKey(key).empty() || !internal::CheckValue(value).empty())
    return Status::kInvalidArgument;
  store_.Set(0, std::string(key), {value.begin(), value.end()});
  return Status::kOk;
}

Result<std::vector<uint8_t>> SingletonBootstrap::Get(int rank,
                                                     std::string_view key) {
  if (rank != 0) return Status::kInvalidArgument;
  std::optional<std::vector<uint8_t>> v = store_.Find(0, key);
  if (!v) return Status::kInvalidArgument;
  return std::move(*v);
}

}  // namespace rondo::drivers::bootstrap
