// HandlePool (MadMPI's request pool): growth by chunks up to the cap, stale
// and garbage handles rejected, slots reused with a new generation, adopted
// objects released, each with and without compare-and-swaps
// (set_concurrent), and concurrent Acquire/Release from several threads
// (run under --config=tsan too).
#include "nmad/mpi/internal/handle_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace rondo::nmad::mpi {
namespace {

struct Obj {
  int value = 0;
  int resets = 0;
  void Reset() noexcept {
    value = 0;
    ++resets;
  }
};

using Pool = HandlePool<Obj>;

TEST_CASE("a new pool allocates on first use and hands out live handles") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  CHECK(pool.capacity() == 0);
  Obj* o = nullptr;
  const int h = pool.Acquire(&o);
  REQUIRE(h > 0);
  REQUIRE(o != nullptr);
  CHECK(pool.capacity() == Pool::kChunkSlots);
  CHECK(pool.Get(h) == o);
  o->value = 42;
  CHECK(pool.Get(h)->value == 42);
}

TEST_CASE("exhaustion grows by chunks up to the cap, then refuses") {
  Pool pool(3 * Pool::kChunkSlots);
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  std::vector<int> handles;
  std::set<Obj*> objects;
  for (uint32_t i = 0; i < 3 * Pool::kChunkSlots; ++i) {
    Obj* o = nullptr;
    const int h = pool.Acquire(&o);
    REQUIRE(h > 0);
    handles.push_back(h);
    objects.insert(o);
    o->value = static_cast<int>(i);
  }
  CHECK(objects.size() == 3 * Pool::kChunkSlots);  // all distinct
  CHECK(pool.capacity() == 3 * Pool::kChunkSlots);
  Obj* none = nullptr;
  CHECK(pool.Acquire(&none) == 0);
  CHECK(none == nullptr);
  CHECK(pool.Adopt(std::make_shared<Obj>()) == 0);
  // Every object still behind its handle after the growth (chunks never
  // move).
  for (size_t i = 0; i < handles.size(); ++i)
    CHECK(pool.Get(handles[i])->value == static_cast<int>(i));
  // One released: one more can be had, and the pool did not grow.
  REQUIRE(pool.Release(handles[100]));
  Obj* again = nullptr;
  CHECK(pool.Acquire(&again) > 0);
  CHECK(pool.capacity() == 3 * Pool::kChunkSlots);
}

TEST_CASE("a released handle is stale: Get, Release and Invalidate refuse it") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  Obj* o = nullptr;
  const int h = pool.Acquire(&o);
  o->value = 7;
  REQUIRE(pool.Release(h));
  CHECK(o->resets == 1);
  CHECK(o->value == 0);
  CHECK(pool.Get(h) == nullptr);
  CHECK_FALSE(pool.Release(h));
  CHECK(pool.Invalidate(h) == Pool::kNoSlot);
  // The slot comes back (LIFO) under a new handle; the old one stays dead.
  Obj* o2 = nullptr;
  const int h2 = pool.Acquire(&o2);
  CHECK(o2 == o);
  CHECK(h2 != h);
  CHECK(pool.Get(h2) == o);
  CHECK(pool.Get(h) == nullptr);
}

TEST_CASE("garbage handles are rejected without a crash") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  Obj* o = nullptr;
  const int h = pool.Acquire(&o);
  for (int bad : {0, -1, -h, 1, 12345, h + 1, h ^ (1 << 25),
                  (1 << 20) | 300 /* chunk 1: not allocated */,
                  static_cast<int>(0x7fffffff), static_cast<int>(0x80000000)}) {
    CAPTURE(bad);
    CHECK(pool.Get(bad) == nullptr);
    CHECK_FALSE(pool.Release(bad));
  }
  CHECK(pool.Get(h) == o);  // untouched by all that
}

TEST_CASE("reuse many times: generations advance and wrap, never 0") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  Obj* first = nullptr;
  int prev = pool.Acquire(&first);
  REQUIRE(pool.Release(prev));
  std::set<int> seen{prev};
  // 2047 generations per slot: the 2047th reuse comes back to the first.
  for (int i = 1; i < 2047; ++i) {
    Obj* o = nullptr;
    const int h = pool.Acquire(&o);
    REQUIRE(o == first);  // LIFO: the same slot
    REQUIRE(h > 0);
    REQUIRE(pool.Get(prev) == nullptr);
    REQUIRE(seen.insert(h).second);  // a handle never seen before
    REQUIRE(pool.Release(h));
    prev = h;
  }
  Obj* o = nullptr;
  const int wrapped = pool.Acquire(&o);
  CHECK(seen.count(wrapped) == 1);  // generation 1 again
  CHECK(wrapped > 0);
  CHECK(o->resets == 2047);
}

TEST_CASE("invalidate keeps the object until it is recycled") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  Obj* o = nullptr;
  const int h = pool.Acquire(&o);
  o->value = 5;
  const uint32_t slot = pool.Invalidate(h);
  REQUIRE(slot != Pool::kNoSlot);
  CHECK(pool.Get(h) == nullptr);
  CHECK(pool.At(slot) == o);
  CHECK(o->value == 5);  // not reset yet
  // Not on the free list: a new Acquire gets another slot.
  Obj* other = nullptr;
  REQUIRE(pool.Acquire(&other) > 0);
  CHECK(other != o);
  pool.Recycle(slot);
  CHECK(o->value == 0);
  Obj* back = nullptr;
  REQUIRE(pool.Acquire(&back) > 0);
  CHECK(back == o);
}

TEST_CASE("Release with a reset uses the caller's, once, and refuses a stale handle") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  Obj* o = nullptr;
  const int h = pool.Acquire(&o);
  REQUIRE(h > 0);
  o->value = 7;
  int calls = 0;
  auto lean = [&calls](Obj& x) {
    x.value = 0;
    ++calls;
  };
  REQUIRE(pool.Release(h, lean));
  CHECK(calls == 1);
  CHECK(o->value == 0);
  CHECK(o->resets == 0);  // the pool's own Reset was not called
  CHECK(pool.Get(h) == nullptr);
  // Stale now: neither release touches the object again.
  CHECK_FALSE(pool.Release(h, lean));
  CHECK_FALSE(pool.Release(h));
  CHECK(calls == 1);
  // The slot is free: the next Acquire gets the same object, new handle.
  Obj* back = nullptr;
  const int h2 = pool.Acquire(&back);
  CHECK(back == o);
  CHECK(h2 != h);
}

TEST_CASE("adopted objects are held until released, then dropped") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  auto obj = std::make_shared<Obj>();
  std::weak_ptr<Obj> weak = obj;
  obj->value = 9;
  Obj* raw = obj.get();
  const int h = pool.Adopt(std::move(obj));
  REQUIRE(h > 0);
  CHECK(pool.Get(h) == raw);
  CHECK_FALSE(weak.expired());
  REQUIRE(pool.Release(h));
  CHECK(weak.expired());
  CHECK(pool.Get(h) == nullptr);
  // The slot serves pooled objects again (its own, reset).
  Obj* o = nullptr;
  REQUIRE(pool.Acquire(&o) > 0);
  CHECK(o != raw);
  CHECK(o->value == 0);
}

TEST_CASE("ForEachLive lists exactly the live handles") {
  Pool pool;
  // Both modes: compare-and-swaps (MPI_THREAD_MULTIPLE) or plain stores.
  pool.set_concurrent(GENERATE(true, false));
  std::set<int> live;
  std::vector<int> all;
  for (int i = 0; i < 600; ++i) {
    Obj* o = nullptr;
    all.push_back(pool.Acquire(&o));
    o->value = i;
  }
  for (int i = 0; i < 600; ++i)
    if (i % 3 == 0) REQUIRE(pool.Release(all[i]));
    else live.insert(all[i]);
  std::set<int> listed;
  pool.ForEachLive([&](int h, Obj& o) {
    listed.insert(h);
    CHECK(pool.Get(h) == &o);
  });
  CHECK(listed == live);
}

TEST_CASE("threads acquire and release concurrently without losing slots") {
  Pool pool(4 * Pool::kChunkSlots);
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  constexpr int kHeld = 50;  // each thread holds up to this many at once
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::pair<int, Obj*>> held;
      for (int i = 0; i < kRounds; ++i) {
        if (held.size() < kHeld && (i % 3 != 2 || held.empty())) {
          Obj* o = nullptr;
          const int h = pool.Acquire(&o);
          if (h <= 0 || o->value != 0) ++errors;
          o->value = t * 1000000 + i;  // owned by this thread only
          held.emplace_back(h, o);
        } else {
          auto [h, o] = held.back();
          held.pop_back();
          if (pool.Get(h) != o || o->value % 1000000 > kRounds) ++errors;
          if (!pool.Release(h)) ++errors;
          if (pool.Get(h) != nullptr) ++errors;
        }
      }
      for (auto [h, o] : held)
        if (!pool.Release(h)) ++errors;
    });
  for (auto& t : threads) t.join();
  CHECK(errors.load() == 0);
  // Nothing leaked: all slots free again, none listed live, and the pool
  // never needed more than the threads held at once.
  int live = 0;
  pool.ForEachLive([&](int, Obj&) { ++live; });
  CHECK(live == 0);
  CHECK(pool.capacity() <= 4 * Pool::kChunkSlots);
  std::vector<int> again;
  for (uint32_t i = 0; i < pool.capacity(); ++i) {
    Obj* o = nullptr;
    const int h = pool.Acquire(&o);
    REQUIRE(h > 0);
    again.push_back(h);
  }
  CHECK(std::set<int>(again.begin(), again.end()).size() == again.size());
}

TEST_CASE("a pool used one thread at a time turns concurrent with its state") {
  // MPI_Init (MPI_THREAD_SINGLE) and then MPI_Session_init asking for
  // MPI_THREAD_MULTIPLE: the free list and the live handles carry over.
  Pool pool;
  pool.set_concurrent(false);
  CHECK_FALSE(pool.concurrent());
  std::vector<int> live;
  for (int i = 0; i < 300; ++i) {  // two chunks
    Obj* o = nullptr;
    live.push_back(pool.Acquire(&o));
    o->value = i;
  }
  for (int i = 0; i < 300; i += 2) REQUIRE(pool.Release(live[i]));
  pool.set_concurrent(true);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int k = 0; k < 2000; ++k) {
        Obj* o = nullptr;
        const int h = pool.Acquire(&o);
        if (h <= 0 || o->value != 0) failures.fetch_add(1);
        o->value = 1;
        if (!pool.Release(h)) failures.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  for (int i = 1; i < 300; i += 2) CHECK(pool.Get(live[i])->value == i);
  CHECK(pool.capacity() <= 3 * Pool::kChunkSlots);
}

}  // namespace
}  // namespace rondo::nmad::mpi
