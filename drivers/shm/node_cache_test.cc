#include "drivers/shm/node_cache.h"

#include <catch2/catch.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

namespace rondo::drivers::shm {
namespace {

// Counts the nodes the maps allocate (each test owns its counter).
template <typename T>
struct Counting {
  using value_type = T;
  size_t* count;
  explicit Counting(size_t* c) noexcept : count(c) {}
  template <typename U>
  Counting(const Counting<U>& o) noexcept : count(o.count) {}
  T* allocate(size_t n) {
    ++*count;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  template <typename U>
  bool operator==(const Counting<U>& o) const noexcept { return count == o.count; }
};

using Value = std::pair<const uint64_t, std::string>;
using Multi = std::multimap<uint64_t, std::string, std::less<uint64_t>,
                            Counting<Value>>;
using Unordered = std::unordered_map<uint64_t, std::string, std::hash<uint64_t>,
                                     std::equal_to<uint64_t>, Counting<Value>>;

TEST_CASE("NodeCache: a multimap of bounded size stops allocating", "[shm]") {
  size_t allocs = 0;
  Multi m{Counting<Value>(&allocs)};
  NodeCache<Multi> cache(4);
  // Warm-up: three entries alive at the peak.
  for (uint64_t k = 0; k < 3; ++k) cache.Insert(m, k, "v" + std::to_string(k));
  for (auto it = m.begin(); it != m.end();) it = cache.Erase(m, it);
  CHECK(cache.spare() == 3);
  const size_t warm = allocs;
  // A thousand inserts and erases, at most three alive, equal keys too.
  for (uint64_t k = 0; k < 1000; ++k) {
    auto a = cache.Insert(m, k % 5, "a");
    auto b = cache.Insert(m, k % 5, "b");
    CHECK(a->first == k % 5);
    CHECK(b->second == "b");
    CHECK(m.count(k % 5) == 2);
    cache.Erase(m, a);
    cache.Erase(m, b);
    CHECK(m.empty());
  }
  CHECK(allocs == warm);
}

TEST_CASE("NodeCache: unique keys, values replaced, erase returns the next",
          "[shm]") {
  size_t allocs = 0;
  Unordered m{8, std::hash<uint64_t>(), std::equal_to<uint64_t>(),
              Counting<Value>(&allocs)};
  NodeCache<Unordered> cache;
  cache.Insert(m, 7, "seven");
  cache.Erase(m, m.find(7));
  const size_t warm = allocs;
  auto it = cache.Insert(m, 9, "nine");  // the kept node, re-keyed
  CHECK(allocs == warm);
  CHECK(it->first == 9);
  CHECK(m.at(9) == "nine");
  CHECK_FALSE(m.contains(7));
  cache.Insert(m, 10, "ten");  // none kept: a new node
  CHECK(allocs == warm + 1);
  size_t seen = 0;
  for (auto i = m.begin(); i != m.end();) {
    i = cache.Erase(m, i);
    ++seen;
  }
  CHECK(seen == 2);
  CHECK(m.empty());
}

TEST_CASE("NodeCache: past max_spare, erased nodes are freed", "[shm]") {
  size_t allocs = 0;
  Multi m{Counting<Value>(&allocs)};
  NodeCache<Multi> cache(2);
  for (uint64_t k = 0; k < 5; ++k) cache.Insert(m, k, "x");
  for (auto it = m.begin(); it != m.end();) it = cache.Erase(m, it);
  CHECK(cache.spare() == 2);
  const size_t warm = allocs;
  for (uint64_t k = 0; k < 3; ++k) cache.Insert(m, k, "y");
  CHECK(allocs == warm + 1);  // two kept nodes, then one new
}

TEST_CASE("NodeCache: Prime makes the nodes before the first insert",
          "[shm]") {
  size_t allocs = 0;
  Multi m{Counting<Value>(&allocs)};
  NodeCache<Multi> cache(8);
  cache.Prime(m, 3);
  CHECK(m.empty());
  CHECK(cache.spare() == 3);
  const size_t primed = allocs;
  for (uint64_t k = 0; k < 3; ++k) cache.Insert(m, k, "p");
  CHECK(allocs == primed);
  CHECK(m.size() == 3);
  cache.Prime(m, 100);  // at most max_spare kept
  CHECK(cache.spare() == 8);
}

}  // namespace
}  // namespace rondo::drivers::shm
