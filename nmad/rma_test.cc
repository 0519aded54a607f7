// nmad RMA on a one-rank core over loopback (no network driver): the
// window's handlers run in the engine's polling task as between ranks.
// Put, get, accumulate with an add function, get-accumulate,
// compare-and-swap, pieces above the eager limit, range errors, locks
// (shared together, exclusive alone) and signals; without a one-sided
// transport (loopback only) the direct operations refuse, nothing issued.
#include "nmad/rma.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "drivers/bootstrap/singleton_bootstrap.h"
#include "engine/engine.h"
#include "nmad/core.h"
#include "nmad/rail_factory.h"

namespace rondo::nmad {
namespace {

struct Self {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<Core> core;
  Session* session = nullptr;
  Self() {
    engine::EngineOptions o = engine::EngineOptions::FromEnvironment();
    o.progress = {engine::PlacementKind::kNone, {}};
    o.timer_period_us = 0;
    engine = std::make_unique<engine::Engine>(o);
    std::string why;
    auto c = Core::Create(*engine,
                          std::make_unique<drivers::bootstrap::SingletonBootstrap>(),
                          NmadOptions{}, NoRemoteRails(), &why);
    INFO(why);
    REQUIRE(c.ok());
    core = std::move(c).value();
    session = core->OpenSession("rma", {}, &why).value();
  }
  void Wait(RmaOp& op) {
    while (!op.done()) core->Progress();
  }
};

// inout += in, as int32 elements.
void AddInts(void* arg, uint32_t op, uint32_t basic, const void* in,
             void* inout, size_t bytes) noexcept {
  auto* calls = static_cast<int*>(arg);
  ++*calls;
  CHECK(op == 3);
  CHECK(basic == 7);
  const auto* a = static_cast<const int32_t*>(in);
  auto* b = static_cast<int32_t*>(inout);
  for (size_t i = 0; i < bytes / 4; ++i) b[i] += a[i];
}

TEST_CASE("rma: put, get, accumulate, fetch, compare-and-swap") {
  Self s;
  int calls = 0;
  RmaWindow win(*s.session, {&AddInts, &calls, false});
  std::vector<int32_t> mem(100000, 0);
  win.Expose(mem.data(), mem.size() * 4);

  // A put of 3 strided blocks, read back with a get.
  int32_t vals[3] = {11, 22, 33};
  RmaBlock blocks[3] = {{0, 4}, {40, 4}, {400, 4}};
  RmaOp op;
  REQUIRE(win.Put(0, blocks, vals, op) == Status::kOk);
  s.Wait(op);
  CHECK(op.error() == RmaError::kOk);
  CHECK(mem[0] == 11);
  CHECK(mem[10] == 22);
  CHECK(mem[100] == 33);
  int32_t back[3] = {};
  REQUIRE(win.Get(0, blocks, back, op) == Status::kOk);
  s.Wait(op);
  CHECK(back[1] == 22);
  CHECK(back[2] == 33);

  // Larger than one eager message: split in pieces, whole elements.
  std::vector<int32_t> big(60000);
  std::iota(big.begin(), big.end(), 1);
  RmaBlock whole{0, static_cast<int64_t>(big.size() * 4)};
  REQUIRE(win.Accumulate(0, std::span(&whole, 1), big.data(), 3, 7, 4,
                         nullptr, op) == Status::kOk);
  s.Wait(op);
  CHECK(calls > 1);
  CHECK(mem[0] == 12);
  CHECK(mem[10] == 33);  // 22 + 11
  CHECK(mem[59999] == 60000);
  std::vector<int32_t> fetched(big.size());
  REQUIRE(win.Accumulate(0, std::span(&whole, 1), big.data(), 3, 7, 4,
                         fetched.data(), op) == Status::kOk);
  s.Wait(op);
  CHECK(fetched[0] == 12);
  CHECK(fetched[59999] == 60000);
  CHECK(mem[0] == 13);
  CHECK(mem[59999] == 120000);
  std::vector<int32_t> got(big.size());
  REQUIRE(win.Get(0, std::span(&whole, 1), got.data(), op) == Status::kOk);
  s.Wait(op);
  CHECK(got == std::vector<int32_t>(mem.begin(), mem.begin() + 60000));

  // Compare-and-swap: a match swaps, a mismatch does not.
  int32_t cmp = 13, val = -5, old = 0;
  REQUIRE(win.CompareAndSwap(0, {0, 4}, &cmp, &val, &old, op) == Status::kOk);
  s.Wait(op);
  CHECK(old == 13);
  CHECK(mem[0] == -5);
  REQUIRE(win.CompareAndSwap(0, {0, 4}, &cmp, &val, &old, op) == Status::kOk);
  s.Wait(op);
  CHECK(old == -5);
  CHECK(mem[0] == -5);

  // Outside the window: the target answers kRange, nothing written.
  RmaBlock past{static_cast<int64_t>(mem.size() * 4) - 2, 4};
  REQUIRE(win.Put(0, std::span(&past, 1), vals, op) == Status::kOk);
  s.Wait(op);
  CHECK(op.error() == RmaError::kRange);
}

TEST_CASE("rma: locks, dynamic regions and signals") {
  Self s;
  RmaWindow win(*s.session, {nullptr, nullptr, true});
  std::vector<int32_t> region(16, 7);
  REQUIRE(win.Attach(region.data(), 64) == Status::kOk);
  CHECK(win.Attach(region.data() + 2, 8) == Status::kInvalidArgument);
  RmaOp a, b, c;
  REQUIRE(win.Lock(0, false, a) == Status::kOk);
  REQUIRE(win.Lock(0, false, b) == Status::kOk);
  s.Wait(a);
  s.Wait(b);
  CHECK(win.LocksHeld() == 2);  // shared locks together
  REQUIRE(win.Lock(0, true, c) == Status::kOk);
  for (int i = 0; i < 100; ++i) s.core->Progress();
  CHECK_FALSE(c.done());  // the exclusive one waits
  REQUIRE(win.Unlock(0, a) == Status::kOk);
  s.Wait(a);
  CHECK_FALSE(c.done());
  REQUIRE(win.Unlock(0, b) == Status::kOk);
  s.Wait(b);
  s.Wait(c);
  CHECK(win.LocksHeld() == 1);
  // Absolute addresses in an attached region.
  int32_t v = 99;
  RmaBlock at{static_cast<int64_t>(reinterpret_cast<uintptr_t>(&region[3])),
              4};
  REQUIRE(win.Put(0, std::span(&at, 1), &v, a) == Status::kOk);
  s.Wait(a);
  CHECK(a.error() == RmaError::kOk);
  CHECK(region[3] == 99);
  REQUIRE(win.Detach(region.data()) == Status::kOk);
  REQUIRE(win.Put(0, std::span(&at, 1), &v, a) == Status::kOk);
  s.Wait(a);
  CHECK(a.error() == RmaError::kRange);
  REQUIRE(win.Unlock(0, c) == Status::kOk);
  s.Wait(c);
  CHECK(win.LocksHeld() == 0);
  REQUIRE(win.Signal(0, 1, a) == Status::kOk);
  s.Wait(a);
  while (win.Signals(1, 0) < 1) s.core->Progress();
  CHECK(win.Signals(1, 0) == 1);
  CHECK(win.Signals(0, 0) == 0);
}

TEST_CASE("rma: direct operations need a one-sided transport") {
  Self s;
  CHECK(s.core->remote_memory() == nullptr);
  RmaWindow win(*s.session, {nullptr, nullptr, false});
  int64_t mem[4] = {};
  win.Expose(mem, sizeof mem);
  const int self = 0;
  bool all = false;
  auto key = win.MapDirect(std::span<const int>(&self, 1), &all);
  CHECK(key.status() == Status::kUnsupported);
  const uint8_t bytes[16] = {};
  CHECK(win.SetDirectKey(0, bytes) == Status::kUnsupported);
  CHECK_FALSE(win.direct(0));
  CHECK_FALSE(win.direct(-1));
  RmaOp op;
  int64_t v = 1;
  CHECK(win.DirectPut(0, 0, &v, 8, op) == Status::kInvalidArgument);
  CHECK(win.DirectGet(0, 0, &v, 8, op) == Status::kInvalidArgument);
  const RmaBlock block{0, 8};
  CHECK(win.DirectAtomic(0, std::span(&block, 1), AtomicOp::kAdd, 8, &v,
                         nullptr, nullptr, true, op) ==
        Status::kInvalidArgument);
  CHECK(win.DirectAtomic(0, std::span(&block, 1), AtomicOp::kAdd, 3, &v,
                         nullptr, nullptr, true, op) ==
        Status::kInvalidArgument);
  CHECK(win.DirectFlush(-1, op) == Status::kUnsupported);
  CHECK(op.done());
}

}  // namespace
}  // namespace rondo::nmad
