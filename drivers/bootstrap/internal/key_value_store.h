// KeyValueStore: the (rank, key) -> value table a bootstrap reads Get() from.
//
// Why: the singleton and the rondo-run client both keep every value locally
// (rondo-run sends all puts at each fence), so Get() never talks to anyone.
//
// Thread-safety: all methods may be called from any thread (one mutex;
// Get() is not on a hot path).
#ifndef RONDO_DRIVERS_BOOTSTRAP_INTERNAL_KEY_VALUE_STORE_H_
#define RONDO_DRIVERS_BOOTSTRAP_INTERNAL_KEY_VALUE_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rondo::drivers::bootstrap::internal {

class KeyValueStore {
 public:
  // Stores (replaces) `rank`'s value for `key`.
  void Set(int rank, std::string key, std::vector<uint8_t> value) {
    std::lock_guard lock(mutex_);
    values_[{rank, std::move(key)}] = std::move(value);
  }
  // A copy of `rank`'s value for `key`, or nullopt.
  std::optional<std::vector<uint8_t>> Find(int rank,
                                           std::string_view key) const {
    std::lock_guard lock(mutex_);
    auto it = values_.find({rank, std::string(key)});
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<int, std::string>, std::vector<uint8_t>> values_;
};

}  // namespace rondo::drivers::bootstrap::internal

#endif  // RONDO_DRIVERS_BOOTSTRAP_INTERNAL_KEY_VALUE_STORE_H_
