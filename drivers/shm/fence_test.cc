// The asymmetric Dekker handshake (drivers/shm/fence.h): registration, and
// the store-buffering litmus test with a compiler barrier on one side and
// HeavyBarrier() on the other: both loads may never miss both stores.
#include "drivers/shm/fence.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

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

TEST_CASE("a child forked after the registration registers itself",
          "[fence]") {
  if (!RegisterHeavyBarrier()) {
    WARN("membarrier(GLOBAL_EXPEDITED) is not available: nothing to test");
    return;
  }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The registration of this pid, then a heavy barrier from here.
    _exit(RegisterHeavyBarrier() && HeavyBarrier() ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
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
  // Up to kRounds rounds, or as many as 10 s allow on a loaded machine
  // (the waits yield after a while: the two threads may share a core).
  // The bound on time only ends the loop early; nothing is timed.
  constexpr int kRounds = 100000;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto wait_for = [](const std::atomic<int>& v, int want) {
    for (int spins = 0; v.load(std::memory_order_acquire) != want; ++spins)
      if (spins > 1000) std::this_thread::yield();
  };
  std::atomic<int> x{0}, y{0};
  std::atomic<int> round{0};  // the round both sides may run; -1: stop
  std::atomic<int> done_light{0};
  std::vector<int> r_light(kRounds), r_heavy(kRounds);
  std::thread light([&] {
    for (int i = 1; i <= kRounds; ++i) {
      for (int spins = 0;; ++spins) {
        const int r = round.load(std::memory_order_acquire);
        if (r == i) break;
        if (r < 0) return;
        if (spins > 1000) std::this_thread::yield();
      }
      x.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      r_light[i - 1] = y.load(std::memory_order_relaxed);
      done_light.store(i, std::memory_order_release);
    }
  });
  bool barrier_failed = false;
  int rounds = 0;
  for (int i = 1; i <= kRounds; ++i) {
    if ((i & 255) == 0 && std::chrono::steady_clock::now() > deadline) break;
    x.store(0, std::memory_order_relaxed);
    y.store(0, std::memory_order_relaxed);
    round.store(i, std::memory_order_release);
    y.store(1, std::memory_order_relaxed);
    barrier_failed |= !HeavyBarrier();
    r_heavy[i - 1] = x.load(std::memory_order_relaxed);
    wait_for(done_light, i);
    rounds = i;
  }
  round.store(-1, std::memory_order_release);
  light.join();
  CHECK_FALSE(barrier_failed);
  CHECK(rounds >= 255);
  int both_missed = 0;
  for (int i = 0; i < rounds; ++i)
    both_missed += r_light[i] == 0 && r_heavy[i] == 0;
  CHECK(both_missed == 0);
}

}  // namespace
}  // namespace rondo::drivers::shm
