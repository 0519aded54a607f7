// Pool<T>: carving, reuse, Reserve, and the caller-guarded Cache.
#include "nmad/pool.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

namespace rondo::nmad {
namespace {

struct Item {
  int value = 7;
  std::string text;  // non-trivial: Put must destroy it
};

TEST_CASE("Pool: Reserve carves one chunk, once; Gets within it do not grow",
          "[pool]") {
  Pool<Item> pool;
  CHECK(pool.capacity() == 0);
  pool.Reserve();
  CHECK(pool.capacity() == Pool<Item>::kChunk);
  pool.Reserve();  // already carved: nothing more
  CHECK(pool.capacity() == Pool<Item>::kChunk);
  std::vector<Item*> items;
  for (size_t i = 0; i < Pool<Item>::kChunk; ++i) items.push_back(pool.Get());
  CHECK(pool.capacity() == Pool<Item>::kChunk);
  CHECK(pool.out() == Pool<Item>::kChunk);
  // Distinct, value-initialized objects.
  CHECK(std::set<Item*>(items.begin(), items.end()).size() == items.size());
  for (Item* it : items) CHECK(it->value == 7);
  // One more grows by one chunk.
  items.push_back(pool.Get());
  CHECK(pool.capacity() == 2 * Pool<Item>::kChunk);
  for (Item* it : items) pool.Put(it);
  CHECK(pool.out() == 0);
}

TEST_CASE("Pool: objects come back value-initialized after reuse", "[pool]") {
  Pool<Item> pool;
  Item* a = pool.Get();
  a->value = 42;
  a->text.assign(1000, 'x');  // heap storage, released by Put's destructor
  pool.Put(a);
  Item* b = pool.Get();
  CHECK(b == a);  // the free list hands the last one back first
  CHECK(b->value == 7);
  CHECK(b->text.empty());
  CHECK(pool.capacity() == Pool<Item>::kChunk);
  pool.Put(b);
  pool.Put(nullptr);  // ignored
  CHECK(pool.out() == 0);
}

TEST_CASE("Pool::Cache keeps up to kMax objects in front of the pool",
          "[pool]") {
  Pool<Item> pool;
  Pool<Item>::Cache cache;
  using Cache = Pool<Item>::Cache;
  // An empty cache takes from the pool.
  Item* a = cache.Get(pool);
  CHECK(pool.out() == 1);
  CHECK(a->value == 7);
  a->value = 1;
  a->text.assign(1000, 'y');  // released by the cache's Put
  cache.Put(pool, a);
  CHECK(cache.size() == 1);
  CHECK(pool.out() == 1);  // held by the cache, not back in the pool
  // The cache hands it back, value-initialized.
  Item* b = cache.Get(pool);
  CHECK(b == a);
  CHECK(b->value == 7);
  CHECK(b->text.empty());
  CHECK(cache.size() == 0);
  // Past kMax, objects go back to the pool.
  std::vector<Item*> items{b};
  for (size_t i = 1; i < Cache::kMax + 10; ++i) items.push_back(pool.Get());
  CHECK(pool.out() == Cache::kMax + 10);
  for (Item* it : items) cache.Put(pool, it);
  CHECK(cache.size() == Cache::kMax);
  CHECK(pool.out() == Cache::kMax);
  cache.Put(pool, nullptr);  // ignored
  CHECK(cache.size() == Cache::kMax);
  // Objects from either list are the pool's: a Get after draining the
  // cache comes from the pool's own list.
  for (size_t i = 0; i < Cache::kMax; ++i) pool.Put(cache.Get(pool));
  CHECK(cache.size() == 0);
  CHECK(pool.out() == 0);
}

}  // namespace
}  // namespace rondo::nmad
