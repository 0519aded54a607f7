#include "queues/task_queue.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace rondo::queues {
namespace {

struct Item : QueueHook {
  int producer = 0;
  int seq = 0;
  std::atomic<int> popped{0};
};

TEST_CASE("queue kinds parse and print", "[queues]") {
  CHECK(ParseQueueKind("spin") == QueueKind::kSpin);
  CHECK(ParseQueueKind("lockfree") == QueueKind::kLockFree);
  CHECK(QueueKindName(QueueKind::kLockFree) == "lockfree");
  CHECK_THROWS_WITH(ParseQueueKind("mutex"),
                    Catch::Contains("'mutex'") &&
                        Catch::Contains("spin|lockfree"));
}

TEST_CASE("single-threaded FIFO order and emptiness", "[queues]") {
  auto kind = GENERATE(QueueKind::kSpin, QueueKind::kLockFree);
  auto q = MakeTaskQueue(kind, 4);
  CHECK(q->kind() == kind);
  CHECK_FALSE(q->MaybeNonEmpty());
  CHECK(q->TryPop() == nullptr);
  std::vector<Item> items(10);  // more than the lock-free preallocation
  for (auto& it : items) q->Push(&it);
  CHECK(q->MaybeNonEmpty());
  CHECK(q->ApproxSize() == 10);
  for (auto& it : items) CHECK(q->TryPop() == &it);
  CHECK(q->TryPop() == nullptr);
  CHECK_FALSE(q->MaybeNonEmpty());
  CHECK(q->ApproxSize() == 0);
  // An item can go around again once popped.
  q->Push(&items[3]);
  CHECK(q->TryPop() == &items[3]);
}

// Several producers and consumers: every item is popped exactly once, and a
// consumer sees each producer's items in the order they were pushed.
TEST_CASE("MPMC stress: nothing lost, nothing popped twice, per-producer FIFO",
          "[queues][stress]") {
  auto kind = GENERATE(QueueKind::kSpin, QueueKind::kLockFree);
  constexpr int kProducers = 3, kConsumers = 3, kPerProducer = 20000;
  auto q = MakeTaskQueue(kind, 256);
  std::vector<std::vector<Item>> items(kProducers);
  for (auto& per : items) per = std::vector<Item>(kPerProducer);
  std::atomic<int> consumed{0};
  std::atomic<int> order_violations{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        items[p][i].producer = p;
        items[p][i].seq = i;
        q->Push(&items[p][i]);
      }
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      std::vector<int> last_seen(kProducers, -1);
      while (consumed.load(std::memory_order_relaxed) <
             kProducers * kPerProducer) {
        QueueHook* h = q->TryPop();
        if (h == nullptr) continue;
        auto* it = static_cast<Item*>(h);
        it->popped.fetch_add(1, std::memory_order_relaxed);
        if (it->seq <= last_seen[it->producer])
          order_violations.fetch_add(1, std::memory_order_relaxed);
        last_seen[it->producer] = it->seq;
        consumed.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(order_violations.load() == 0);
  CHECK(consumed.load() == kProducers * kPerProducer);
  int wrong = 0;
  for (auto& per : items)
    for (auto& it : per)
      if (it.popped.load() != 1) ++wrong;
  CHECK(wrong == 0);
  CHECK(q->TryPop() == nullptr);
  CHECK(q->ApproxSize() == 0);
}

// Items that are popped and pushed back (as repeat tasks are) are never
// duplicated or lost.
TEST_CASE("re-enqueue under contention keeps every item exactly once",
          "[queues][stress]") {
  auto kind = GENERATE(QueueKind::kSpin, QueueKind::kLockFree);
  constexpr int kItems = 64, kThreads = 4, kRounds = 20000;
  auto q = MakeTaskQueue(kind, 16);
  std::vector<Item> items(kItems);
  for (auto& it : items) q->Push(&it);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        QueueHook* h = q->TryPop();
        if (h == nullptr) continue;
        auto* it = static_cast<Item*>(h);
        // While held, nobody else can have it.
        int before = it->popped.fetch_add(1, std::memory_order_acq_rel);
        it->popped.fetch_sub(1, std::memory_order_acq_rel);
        if (before != 0) it->seq = -1000000;  // marks a double hold
        q->Push(h);
      }
    });
  }
  for (auto& t : threads) t.join();
  int found = 0;
  while (QueueHook* h = q->TryPop()) {
    auto* it = static_cast<Item*>(h);
    CHECK(it->seq == 0);
    CHECK(it->popped.fetch_add(1) == 0);
    ++found;
  }
  CHECK(found == kItems);
}

}  // namespace
}  // namespace rondo::queues
