// ReorderWindow alone (nmad/reorder.h): in-order chunks pass, early ones
// wait and come out in sequence order, duplicates are recognised, sequence
// numbers wrap around; checked against a model on random arrival orders.
#include "nmad/reorder.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <random>
#include <vector>

namespace rondo::nmad::internal {
namespace {

struct Item {
  uint32_t seq;
};

// Feeds `arrivals` (sequence numbers) through a window the way core.cc's
// Deliver does; returns the sequence numbers in the order they are matched.
std::vector<uint32_t> Run(ReorderWindow<Item>& w,
                          const std::vector<uint32_t>& arrivals,
                          std::vector<Item>& store, int* dropped) {
  std::vector<uint32_t> matched;
  for (uint32_t seq : arrivals) {
    store.push_back({seq});
    Item* it = &store.back();
    if (!w.is_next(seq)) {
      if (w.IsDuplicate(seq)) {
        ++*dropped;
        continue;
      }
      w.Keep(seq, it);
      continue;
    }
    matched.push_back(seq);
    w.Advance();
    while (Item* next = w.TakeNext()) {
      matched.push_back(next->seq);
      w.Advance();
    }
  }
  return matched;
}

TEST_CASE("reorder: in order passes straight through") {
  ReorderWindow<Item> w;
  std::vector<Item> store;
  store.reserve(16);
  int dropped = 0;
  CHECK(Run(w, {0, 1, 2, 3}, store, &dropped) ==
        std::vector<uint32_t>{0, 1, 2, 3});
  CHECK(w.expected() == 4);
  CHECK(w.kept() == 0);
  CHECK(w.TakeNext() == nullptr);
}

TEST_CASE("reorder: early chunks wait for those before them") {
  ReorderWindow<Item> w;
  std::vector<Item> store;
  store.reserve(16);
  int dropped = 0;
  CHECK(Run(w, {2, 1}, store, &dropped).empty());
  CHECK(w.kept() == 2);
  CHECK(Run(w, {0}, store, &dropped) == std::vector<uint32_t>{0, 1, 2});
  CHECK(w.kept() == 0);
  CHECK(w.expected() == 3);
  CHECK(dropped == 0);
}

TEST_CASE("reorder: duplicates are recognised") {
  ReorderWindow<Item> w;
  std::vector<Item> store;
  store.reserve(16);
  int dropped = 0;
  Run(w, {0, 1, 5}, store, &dropped);
  CHECK(w.IsDuplicate(0));  // behind the window
  CHECK(w.IsDuplicate(1));
  CHECK(w.IsDuplicate(5));  // already kept
  CHECK_FALSE(w.IsDuplicate(4));
  Run(w, {1, 5}, store, &dropped);
  CHECK(dropped == 2);
  CHECK(w.kept() == 1);
}

TEST_CASE("reorder: sequence numbers wrap around") {
  ReorderWindow<Item> w(0xfffffffeu);
  std::vector<Item> store;
  store.reserve(8);
  int dropped = 0;
  CHECK(Run(w, {0xffffffffu, 0}, store, &dropped).empty());
  CHECK_FALSE(w.IsDuplicate(1));           // ahead, past the wrap
  CHECK(w.IsDuplicate(0xfffffffdu));       // behind
  CHECK(Run(w, {0xfffffffeu}, store, &dropped) ==
        std::vector<uint32_t>{0xfffffffeu, 0xffffffffu, 0});
  CHECK(w.expected() == 1);
  CHECK(w.IsDuplicate(0xffffffffu));  // behind, before the wrap
  CHECK(dropped == 0);
}

TEST_CASE("reorder: random arrival orders match in sequence order") {
  std::mt19937 rng(17);
  for (int round = 0; round < 200; ++round) {
    const uint32_t n = 1 + rng() % 40;
    std::vector<uint32_t> arrivals(n);
    for (uint32_t i = 0; i < n; ++i) arrivals[i] = i;
    std::shuffle(arrivals.begin(), arrivals.end(), rng);
    // Some duplicates.
    for (uint32_t k = rng() % 4; k > 0; --k)
      arrivals.insert(arrivals.begin() + rng() % (arrivals.size() + 1),
                      rng() % n);
    ReorderWindow<Item> w;
    std::vector<Item> store;
    store.reserve(arrivals.size());
    int dropped = 0;
    std::vector<uint32_t> matched = Run(w, arrivals, store, &dropped);
    std::vector<uint32_t> expect(n);
    for (uint32_t i = 0; i < n; ++i) expect[i] = i;
    REQUIRE(matched == expect);
    CHECK(dropped == static_cast<int>(arrivals.size() - n));
    CHECK(w.kept() == 0);
  }
}

TEST_CASE("reorder: Drain gives back every kept chunk") {
  ReorderWindow<Item> w;
  Item a{3}, b{7};
  w.Keep(3, &a);
  w.Keep(7, &b);
  std::vector<Item*> got;
  w.Drain([&](Item* i) { got.push_back(i); });
  CHECK(got == std::vector<Item*>{&a, &b});
  CHECK(w.kept() == 0);
}

}  // namespace
}  // namespace rondo::nmad::internal
