// Tests of the pure parts of dynamic broadcasts: the tree (every recipient
// reached once, for 1..64 recipients), the priority order, the recipient
// checks, the wire header (round trip, every malformation refused, random
// corruption never crashes) and the detection helper.
#include "nmad/dynamic_bcast.h"

#include <catch2/catch.hpp>

#include <random>
#include <set>

namespace rondo::nmad {
namespace {

TEST_CASE("the paper's Figure 1: six recipients", "[dynbcast]") {
  // The root sends to 4 (with {5, 6}), then 2 ({3}), then 1.
  std::vector<BroadcastChild> c = TreeChildren(6);
  REQUIRE(c.size() == 3);
  CHECK(c[0].entry == 3);
  CHECK(c[0].first == 4);
  CHECK(c[0].last == 6);
  CHECK(c[1].entry == 1);
  CHECK(c[1].first == 2);
  CHECK(c[1].last == 3);
  CHECK(c[2].entry == 0);
  CHECK(c[2].first == 1);
  CHECK(c[2].last == 1);
  // 4 (list {5, 6}) sends to 6, then 5.
  std::vector<BroadcastChild> c4 = TreeChildren(2);
  REQUIRE(c4.size() == 2);
  CHECK(c4[0].entry == 1);
  CHECK(c4[1].entry == 0);
  CHECK(TreeChildren(0).empty());
  // Receive steps of positions 1..6.
  CHECK(ReceiveSteps(6) == std::vector<int>{3, 2, 3, 1, 3, 2});
}

// Walks the tree of m recipients as the nodes would, each with its list.
void Walk(size_t base, size_t s, std::vector<int>& hits, int& depth,
          int level) {
  depth = std::max(depth, level);
  for (const BroadcastChild& c : TreeChildren(s)) {
    REQUIRE(c.entry < s);
    REQUIRE(c.first == c.entry + 1);
    REQUIRE(c.last <= s);
    const size_t pos = base + c.entry + 1;
    ++hits[pos];
    Walk(pos, c.last - c.first, hits, depth, level + 1);
  }
}

TEST_CASE("every recipient is reached exactly once, in log2 hops",
          "[dynbcast]") {
  for (size_t m = 1; m <= 64; ++m) {
    std::vector<int> hits(m + 1, 0);
    int depth = 0;
    Walk(0, m, hits, depth, 0);
    for (size_t p = 1; p <= m; ++p) {
      INFO("m = " << m << " position " << p);
      CHECK(hits[p] == 1);
    }
    int h = 0;
    while ((size_t{1} << h) < m + 1) ++h;
    CHECK(depth <= h);  // at most ceil(log2(m + 1)) hops
    // The whole broadcast takes ceil(log2(m + 1)) send steps.
    std::vector<int> steps = ReceiveSteps(m);
    CHECK(*std::max_element(steps.begin(), steps.end()) == h);
  }
}

TEST_CASE("higher priorities receive earlier", "[dynbcast]") {
  std::mt19937 rng(7);
  for (size_t m = 1; m <= 33; ++m) {
    std::vector<BroadcastTarget> t(m);
    for (size_t i = 0; i < m; ++i)
      t[i] = {static_cast<int>(i + 1), static_cast<int>(rng() % 5)};
    std::vector<BroadcastTarget> order = OrderForTree(t);
    std::vector<int> steps = ReceiveSteps(m);
    std::set<int> ranks;
    for (const BroadcastTarget& x : order) ranks.insert(x.rank);
    CHECK(ranks.size() == m);  // a permutation
    for (size_t a = 0; a < m; ++a)
      for (size_t b = 0; b < m; ++b)
        if (order[a].priority > order[b].priority) {
          INFO("m = " << m << " positions " << a + 1 << ", " << b + 1);
          CHECK(steps[a] <= steps[b]);
        }
  }
  // Equal priorities keep the caller's order along the receive order.
  std::vector<BroadcastTarget> same{{5, 0}, {6, 0}, {7, 0}};
  std::vector<BroadcastTarget> o = OrderForTree(same);
  // Positions 1..3 receive at steps 2, 1, 2: 5 goes to position 2.
  CHECK(o[1].rank == 5);
  CHECK(o[0].rank == 6);
  CHECK(o[2].rank == 7);
}

TEST_CASE("recipient lists are checked", "[dynbcast]") {
  using T = std::vector<BroadcastTarget>;
  CHECK(CheckTargets(T{{1, 0}, {2, 0}}, 0, 4) == "");
  CHECK_THAT(CheckTargets(T{}, 0, 4), Catch::Contains("empty"));
  CHECK_THAT(CheckTargets(T{{1, 0}, {0, 0}}, 0, 4),
             Catch::Contains("the root itself"));
  CHECK_THAT(CheckTargets(T{{1, 0}, {2, 0}, {1, 3}}, 0, 4),
             Catch::Contains("rank 1 is listed twice (recipients 0 and 2)"));
  CHECK_THAT(CheckTargets(T{{4, 0}}, 0, 4),
             Catch::Contains("rank 4, outside 0..3"));
  CHECK_THAT(CheckTargets(T{{-1, 0}}, 0, 4), Catch::Contains("rank -1"));
}

BroadcastHeader Sample() {
  BroadcastHeader h;
  h.session = 0xabcdef;
  h.root = 2;
  h.tag = 77;
  h.length = 4096;
  h.self_seq = 9;
  h.self_priority = 3;
  h.forward = {{5, 1, 11}, {6, -2, 0}, {1, 0, 4}};
  return h;
}

TEST_CASE("broadcast headers round-trip and refuse what does not add up",
          "[dynbcast]") {
  const BroadcastHeader h = Sample();
  std::vector<uint8_t> w = EncodeBroadcastHeader(h);
  CHECK(w.size() == kBroadcastHeaderFixed + 3 * kBroadcastEntrySize);
  BroadcastHeader d;
  std::string why;
  REQUIRE(DecodeBroadcastHeader(w.data(), w.size(), 3, 8, 4096, &d, &why));
  CHECK(d.session == h.session);
  CHECK(d.root == 2);
  CHECK(d.tag == 77);
  CHECK(d.self_seq == 9);
  CHECK(d.self_priority == 3);
  CHECK(d.forward == h.forward);

  auto refuse = [&](std::vector<uint8_t> bytes, int self, int size,
                    uint64_t body, const char* text) {
    BroadcastHeader x;
    std::string r;
    INFO(text);
    CHECK_FALSE(DecodeBroadcastHeader(bytes.data(), bytes.size(), self, size,
                                      body, &x, &r));
    CHECK_THAT(r, Catch::Contains(text));
  };
  refuse({w.begin(), w.begin() + 20}, 3, 8, 4096, "shorter than");
  std::vector<uint8_t> bad = w;
  bad[0] ^= 1;
  refuse(bad, 3, 8, 4096, "bad magic");
  bad = w;
  bad.pop_back();
  refuse(bad, 3, 8, 4096, "entries but the header has room");
  bad = w;
  bad[32] = 5;  // count 5, room for 3
  refuse(bad, 3, 8, 4096, "holds 5 entries");
  refuse(w, 3, 8, 100, "announces 4096 bytes but the message carries 100");
  refuse(w, 2, 8, 4096, "the receiver is the root");
  refuse(w, 5, 8, 4096, "names rank 5 again");  // the receiver in its list
  refuse(w, 3, 6, 4096, "names rank 6, out of range");
  BroadcastHeader dup = h;
  dup.forward.push_back({5, 0, 1});
  refuse(EncodeBroadcastHeader(dup), 3, 8, 4096, "names rank 5 again");
  BroadcastHeader neg = h;
  neg.tag = -4;
  refuse(EncodeBroadcastHeader(neg), 3, 8, 4096, "negative tag");
}

TEST_CASE("random corruption of headers is refused or decoded, never a crash",
          "[dynbcast]") {
  std::mt19937 rng(1);
  const std::vector<uint8_t> w = EncodeBroadcastHeader(Sample());
  int accepted = 0, refused = 0;
  for (int i = 0; i < 100000; ++i) {
    std::vector<uint8_t> b = w;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] ^= 1 << (rng() % 8);
    if (rng() % 8 == 0) b.resize(rng() % (b.size() + 16));
    BroadcastHeader d;
    std::string why;
    if (DecodeBroadcastHeader(b.data(), b.size(), 3, 8, 4096, &d, &why)) {
      ++accepted;
      // Whatever is accepted is consistent.
      CHECK(d.forward.size() < 8);
      for (const BroadcastEntry& e : d.forward) {
        CHECK(e.rank >= 0);
        CHECK(e.rank < 8);
      }
    } else {
      ++refused;
      CHECK_FALSE(why.empty());
    }
  }
  CHECK(refused > 0);
  CHECK(accepted > 0);  // flips in priorities and seqs are legal
}

TEST_CASE("the detector merges sends registered before the data is ready",
          "[dynbcast]") {
  BroadcastDetector d;
  int data = 0, other = 0;
  CHECK(d.Register(&data, 5, {1, 0}));
  CHECK(d.Register(&data, 5, {3, 2}));
  CHECK(d.Register(&data, 5, {1, 0}));  // a duplicate: kept once
  CHECK(d.Register(&other, 5, {2, 0}));
  CHECK(d.Register(&data, 6, {4, 0}));  // another tag: another broadcast
  std::vector<BroadcastTarget> r = d.Ready(&data, 5);
  REQUIRE(r.size() == 2);
  CHECK(r[0].rank == 1);
  CHECK(r[1].rank == 3);
  CHECK(r[1].priority == 2);
  // Too late: the data went out already.
  CHECK_FALSE(d.Register(&data, 5, {7, 0}));
  CHECK(d.Ready(&other, 5).size() == 1);
  CHECK(d.Ready(&data, 6).size() == 1);
  CHECK(d.Ready(&data, 9).empty());
  // New data in the same buffer: a new pending broadcast.
  d.Forget(&data, 5);
  CHECK(d.Register(&data, 5, {7, 0}));
  BroadcastDetector::Stats s = d.stats();
  CHECK(s.registered == 5);
  CHECK(s.duplicates == 1);
  CHECK(s.broadcasts == 1);
  CHECK(s.merged == 2);
  CHECK(s.single == 2);
  CHECK(s.missed == 1);
}

}  // namespace
}  // namespace rondo::nmad
