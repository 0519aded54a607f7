// The asymmetric Dekker handshake (drivers/shm/fence.h): registration, and
// the store-buffering litmus test with a compiler barrier on one side and
// HeavyBarrier() on the other: both loads may never miss both stores.
#include "drivers/shm/fence.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace rondo::drivers::shm {
namespace {

TEST_CASE("RegisterHeavyBarrier is stable, and HeavyBarrier works after it",
          "[fence]") {
  const bool first = RegisterHeavyBarrier();
  CHECK(RegisterHeavyBarrier() == first);
  if (!first) {
    WARN(
        "membarrier(GLOBAL_EXPEDITED) is not available: the shm driver "
        "fences on every send here");
    return;
  }
  CHECK(HeavyBarrier());
}

// One round: the light side stores x and loads y, the heavy side stores y,
// calls HeavyBarrier() and loads x. Without a barrier on either side the
// CPU's store buffer lets both loads read 0 (the outcome x86 permits).
TEST_CASE("store buffering never hides both stores across a heavy barrier",
          "[fence]") {
  if (!RegisterHeavyBarrier()) {
    WARN("membarrier(GLOBAL_EXPEDITED) is not available: nothing to test");
    return;
  }
  constexpr int kRounds = 100000;
  std::atomic<int> x{0}, y{0};
  std::atomic<int> round{0};  // the round both sides may run
  std::atomic<int> done_light{0}, done_heavy{0};
  std::vector<int> r_light(kRounds), r_heavy(kRounds);
  std::thread light([&] {
    for (int i = 1; i <= kRounds; ++i) {
      while (round.load(std::memory_order_acquire) != i) {
      }
      x.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      r_light[i - 1] = y.load(std::memory_order_relaxed);
      done_light.store(i, std::memory_order_release);
    }
  });
  bool barrier_failed = false;
  for (int i = 1; i <= kRounds; ++i) {
    x.store(0, std::memory_order_relaxed);
    y.store(0, std::memory_order_relaxed);
    round.store(i, std::memory_order_release);
    y.store(1, std::memory_order_relaxed);
    barrier_failed |= !HeavyBarrier();
    r_heavy[i - 1] = x.load(std::memory_order_relaxed);
    done_heavy.store(i, std::memory_order_relaxed);
    while (done_light.load(std::memory_order_acquire) != i) {
    }
  }
  light.join();
  CHECK_FALSE(barrier_failed);
  int both_missed = 0;
  for (int i = 0; i < kRounds; ++i)
    both_missed += r_light[i] == 0 && r_heavy[i] == 0;
  CHECK(both_missed == 0);
}

}  // namespace
}  // namespace rondo::drivers::shm
