// Tests of the packet-scheduling strategies: names, NextPacket's contract
// (at least one chunk, at most max_chunks, within budget unless the first
// chunk alone is larger) and rendezvous splitting.
#include "nmad/strategies/strategy.h"

#include <catch2/catch.hpp>

#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rondo::nmad::strategies {
namespace {

// A queue of chunks owned by the test; queue() hands out pointers in order.
struct Queue {
  std::deque<PendingChunk> storage;
  ChunkQueue q;

  void Add(size_t wire_bytes, int priority = 0) {
    storage.push_back(PendingChunk{priority, wire_bytes, storage.size()});
    q.push_back(&storage.back());
  }
};

std::vector<uint64_t> Orders(const std::vector<PendingChunk*>& p) {
  std::vector<uint64_t> out;
  for (const PendingChunk* c : p) out.push_back(c->order);
  return out;
}

std::vector<uint64_t> Orders(const ChunkQueue& p) {
  return Orders(std::vector<PendingChunk*>(p.begin(), p.end()));
}

size_t Bytes(const std::vector<PendingChunk*>& p) {
  size_t n = 0;
  for (const PendingChunk* c : p) n += c->wire_bytes;
  return n;
}

uint64_t Sum(const std::vector<RdvPart>& parts) {
  uint64_t n = 0;
  for (const RdvPart& p : parts) n += p.bytes;
  return n;
}

std::vector<RailInfo> Rails(std::vector<double> bw) {
  std::vector<RailInfo> rails;
  for (size_t i = 0; i < bw.size(); ++i)
    rails.push_back(RailInfo{static_cast<int>(i), bw[i]});
  return rails;
}

TEST_CASE("MakeStrategy knows the four names", "[strategy]") {
  REQUIRE(StrategyNames() ==
          std::vector<std::string>{"default", "aggreg", "prio",
                                   "split_balance"});
  for (const std::string& name : StrategyNames()) {
    std::unique_ptr<Strategy> s = MakeStrategy(name);
    REQUIRE(s != nullptr);
    CHECK(s->name() == name);
  }
  CHECK_FALSE(MakeStrategy("default")->defers_sends());
  CHECK(MakeStrategy("aggreg")->defers_sends());
  CHECK(MakeStrategy("prio")->defers_sends());
  CHECK_FALSE(MakeStrategy("split_balance")->defers_sends());
}

TEST_CASE("MakeStrategy rejects unknown names listing the allowed ones",
          "[strategy]") {
  for (const char* bad : {"", "Default", "aggregate", "split-balance", " prio"}) {
    INFO("name '" << bad << "'");
    try {
      MakeStrategy(bad);
      FAIL("no exception");
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      CHECK_THAT(msg, Catch::Contains("'" + std::string(bad) + "'"));
      CHECK_THAT(msg, Catch::Contains(
                          "Expected one of: default, aggreg, prio, split_balance"));
    }
  }
  CHECK_THROWS_WITH(MakeStrategy("fast"),
                    "Unknown strategy 'fast'. Expected one of: default, "
                    "aggreg, prio, split_balance");
}

TEST_CASE("default takes exactly one chunk, in order", "[strategy]") {
  for (const char* name : {"default", "split_balance"}) {
    INFO(name);
    auto s = MakeStrategy(name);
    Queue q;
    q.Add(10);
    q.Add(10, 5);
    q.Add(100000);
    std::vector<PendingChunk*> packet;
    s->NextPacket(q.q, 1000, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{0});
    CHECK(q.q.size() == 2);
    packet.clear();
    s->NextPacket(q.q, 1000, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{1});
    packet.clear();
    // Larger than the budget: still sent alone.
    s->NextPacket(q.q, 1000, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{2});
    CHECK(q.q.empty());
    packet.clear();
    s->NextPacket(q.q, 1000, 64, packet);
    CHECK(packet.empty());
  }
}

TEST_CASE("aggreg packs up to the budget and max_chunks", "[strategy]") {
  auto s = MakeStrategy("aggreg");
  std::vector<PendingChunk*> packet;

  SECTION("budget") {
    Queue q;
    for (int i = 0; i < 10; ++i) q.Add(100);
    s->NextPacket(q.q, 350, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{0, 1, 2});
    CHECK(Bytes(packet) <= 350);
    CHECK(Orders(q.q) == std::vector<uint64_t>{3, 4, 5, 6, 7, 8, 9});
  }
  SECTION("exactly the budget") {
    Queue q;
    for (int i = 0; i < 4; ++i) q.Add(100);
    s->NextPacket(q.q, 300, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{0, 1, 2});
  }
  SECTION("max_chunks") {
    Queue q;
    for (int i = 0; i < 10; ++i) q.Add(1);
    s->NextPacket(q.q, 1000, 4, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{0, 1, 2, 3});
    CHECK(q.q.size() == 6);
  }
  SECTION("a first chunk larger than the budget goes alone") {
    Queue q;
    q.Add(5000);
    q.Add(1);
    s->NextPacket(q.q, 1000, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{0});
    CHECK(q.q.size() == 1);
  }
  SECTION("keeps arrival order and stops at the first chunk that does not fit") {
    Queue q;
    q.Add(100);
    q.Add(900);  // does not fit after the first
    q.Add(10);   // would fit, but must not overtake
    s->NextPacket(q.q, 500, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{0});
    CHECK(Orders(q.q) == std::vector<uint64_t>{1, 2});
  }
  SECTION("empty queue") {
    Queue q;
    s->NextPacket(q.q, 500, 64, packet);
    CHECK(packet.empty());
  }
  SECTION("drains a long queue packet by packet within the contract") {
    Queue q;
    for (int i = 0; i < 200; ++i) q.Add(1 + (i * 37) % 300);
    uint64_t next = 0;
    while (!q.q.empty()) {
      packet.clear();
      s->NextPacket(q.q, 1000, 16, packet);
      REQUIRE(!packet.empty());
      CHECK(packet.size() <= 16);
      if (packet.size() > 1) CHECK(Bytes(packet) <= 1000);
      for (PendingChunk* c : packet) CHECK(c->order == next++);
    }
    CHECK(next == 200);
  }
}

TEST_CASE("prio orders by priority, ties by arrival, within budget",
          "[strategy]") {
  auto s = MakeStrategy("prio");
  std::vector<PendingChunk*> packet;

  SECTION("priority first, arrival order among equals") {
    Queue q;
    q.Add(10, 0);  // 0
    q.Add(10, 5);  // 1
    q.Add(10, 1);  // 2
    q.Add(10, 5);  // 3
    q.Add(10, -3); // 4
    q.Add(10, 1);  // 5
    s->NextPacket(q.q, 1000, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{1, 3, 2, 5, 0, 4});
    CHECK(q.q.empty());
  }
  SECTION("budget") {
    Queue q;
    q.Add(100, 0);  // 0
    q.Add(100, 2);  // 1
    q.Add(100, 1);  // 2
    q.Add(100, 2);  // 3
    s->NextPacket(q.q, 250, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{1, 3});
    CHECK(Bytes(packet) <= 250);
    // What is left keeps its order.
    CHECK(Orders(q.q) == std::vector<uint64_t>{0, 2});
  }
  SECTION("never carries a lower priority past a higher one left behind") {
    Queue q;
    q.Add(100, 9);  // 0
    q.Add(900, 5);  // 1: does not fit after 0
    q.Add(10, 1);   // 2: would fit, must wait behind 1
    s->NextPacket(q.q, 500, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{0});
    CHECK(Orders(q.q) == std::vector<uint64_t>{1, 2});
  }
  SECTION("a first chunk larger than the budget goes alone") {
    Queue q;
    q.Add(10, 0);
    q.Add(5000, 7);
    s->NextPacket(q.q, 1000, 64, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{1});
    CHECK(Orders(q.q) == std::vector<uint64_t>{0});
  }
  SECTION("max_chunks") {
    Queue q;
    for (int i = 0; i < 6; ++i) q.Add(1, i % 2);
    s->NextPacket(q.q, 1000, 3, packet);
    CHECK(Orders(packet) == std::vector<uint64_t>{1, 3, 5});
    CHECK(Orders(q.q) == std::vector<uint64_t>{0, 2, 4});
  }
  SECTION("empty queue") {
    Queue q;
    s->NextPacket(q.q, 500, 64, packet);
    CHECK(packet.empty());
  }
}

TEST_CASE("Base SplitRendezvous: one part on the first rail", "[strategy]") {
  for (const char* name : {"default", "aggreg", "prio"}) {
    INFO(name);
    auto s = MakeStrategy(name);
    std::vector<RailInfo> rails = {{3, 1e9}, {1, 5e9}};
    std::vector<RdvPart> parts = s->SplitRendezvous(1 << 20, rails);
    REQUIRE(parts.size() == 1);
    CHECK(parts[0].rail == 3);
    CHECK(parts[0].bytes == (1u << 20));
    parts = s->SplitRendezvous(0, rails);
    REQUIRE(parts.size() == 1);
    CHECK(parts[0].rail == 3);
    CHECK(parts[0].bytes == 0);
  }
}

TEST_CASE("split_balance splits in proportion to bandwidth", "[strategy]") {
  auto s = MakeStrategy("split_balance");

  SECTION("3:1 gives 75% / 25%") {
    for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{4000000} + 3,
                           uint64_t{1} << 40}) {
      INFO("bytes " << bytes);
      std::vector<RdvPart> parts = s->SplitRendezvous(bytes, Rails({3e9, 1e9}));
      REQUIRE(parts.size() == 2);
      CHECK(parts[0].rail == 0);
      CHECK(parts[1].rail == 1);
      CHECK(Sum(parts) == bytes);
      const double expect0 = 0.75 * static_cast<double>(bytes);
      CHECK(static_cast<double>(parts[0].bytes) >= expect0 - 1);
      CHECK(static_cast<double>(parts[0].bytes) <= expect0 + 1);
    }
  }
  SECTION("1:3 gives 25% / 75%") {
    const uint64_t bytes = 8 << 20;
    std::vector<RdvPart> parts = s->SplitRendezvous(bytes, Rails({1e9, 3e9}));
    REQUIRE(parts.size() == 2);
    CHECK(Sum(parts) == bytes);
    CHECK(parts[0].bytes == bytes / 4);
    CHECK(parts[1].bytes == bytes - bytes / 4);
  }
  SECTION("equal rails share equally") {
    const uint64_t bytes = 3 << 20;
    std::vector<RdvPart> parts =
        s->SplitRendezvous(bytes, Rails({2e9, 2e9, 2e9}));
    REQUIRE(parts.size() == 3);
    for (const RdvPart& p : parts) {
      CHECK(p.bytes + 1 >= bytes / 3);
      CHECK(p.bytes <= bytes / 3 + 1);
    }
    CHECK(Sum(parts) == bytes);
  }
  SECTION("rail indices are taken from RailInfo") {
    std::vector<RailInfo> rails = {{4, 1e9}, {2, 1e9}};
    std::vector<RdvPart> parts = s->SplitRendezvous(1 << 20, rails);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].rail == 4);
    CHECK(parts[1].rail == 2);
  }
  SECTION("tiny messages use one rail, the fastest") {
    for (const auto& bw : std::vector<std::vector<double>>{
             {3e9, 1e9}, {1e9, 3e9}, {1e9, 5e9, 2e9}, {1e9}}) {
      int fastest = 0;
      for (size_t i = 0; i < bw.size(); ++i)
        if (bw[i] > bw[fastest]) fastest = static_cast<int>(i);
      for (uint64_t bytes : {uint64_t{1}, uint64_t{1000}, uint64_t{65535},
                             uint64_t{64 * 1024}}) {
        INFO("rails " << bw.size() << " fastest " << fastest << " bytes "
                      << bytes);
        std::vector<RdvPart> parts = s->SplitRendezvous(bytes, Rails(bw));
        REQUIRE(parts.size() == 1);
        CHECK(parts[0].rail == fastest);
        CHECK(parts[0].bytes == bytes);
      }
    }
  }
  SECTION("zero bytes: one part of 0 on the fastest rail") {
    std::vector<RdvPart> parts = s->SplitRendezvous(0, Rails({1e9, 3e9}));
    REQUIRE(parts.size() == 1);
    CHECK(parts[0].rail == 1);
    CHECK(parts[0].bytes == 0);
    parts = s->SplitRendezvous(0, Rails({0, 0}));
    REQUIRE(parts.size() == 1);
    CHECK(parts[0].rail == 0);
    CHECK(parts[0].bytes == 0);
  }
  SECTION("unknown (0) bandwidths count as equal") {
    std::vector<RdvPart> parts = s->SplitRendezvous(1 << 20, Rails({0, 0}));
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].bytes == (1u << 20) / 2);
    CHECK(Sum(parts) == (1u << 20));
  }
  SECTION("parts are non-empty, on distinct rails and add up, for any size") {
    const std::vector<std::vector<double>> configs = {
        {3e9, 1e9}, {1e9, 3e9}, {1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9},
        {1e6, 1e10}, {1e10, 1e6, 5e9}, {7e9}, {0, 1e9}, {-5, 2e9}};
    uint64_t bytes = 0;
    for (int i = 0; i < 400; ++i) {
      bytes = i < 100 ? static_cast<uint64_t>(i) * 1361
                      : bytes * 3 / 2 + static_cast<uint64_t>(i);
      if (bytes > (uint64_t{1} << 48)) bytes = static_cast<uint64_t>(i) << 20;
      for (const auto& bw : configs) {
        INFO("bytes " << bytes << " rails " << bw.size());
        std::vector<RdvPart> parts = s->SplitRendezvous(bytes, Rails(bw));
        REQUIRE(!parts.empty());
        REQUIRE(parts.size() <= bw.size());
        CHECK(Sum(parts) == bytes);
        std::vector<bool> seen(bw.size());
        for (const RdvPart& p : parts) {
          REQUIRE(p.rail >= 0);
          REQUIRE(p.rail < static_cast<int>(bw.size()));
          CHECK_FALSE(seen[p.rail]);
          seen[p.rail] = true;
          if (bytes > 0) CHECK(p.bytes > 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace rondo::nmad::strategies
