// Tests of BuildNeighborExchange: cartesian grids (periodic or not, with
// dimensions of 1 and 2 ranks where both neighbours are the same rank) and
// random graphs with repeated edges and self loops, run by the simulator on
// real bytes; every received block is compared with what its sender put in
// the slot for that edge. Plus the argument checks.
#include "nmad/coll/neighbor.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "nmad/coll/testing/simulator.h"

namespace rondo::nmad::coll {
namespace {

using testing::SimOptions;
using testing::SimRank;
using testing::Simulate;

// One directed edge of a graph: sender's out-slot -> receiver's in-slot.
struct Link {
  int from, from_slot, to, to_slot;
  uint32_t tag;
};

struct Topology {
  int size = 0;
  std::vector<std::vector<int>> in, out;  // per rank: peers (-1 = none)
  std::vector<std::vector<uint32_t>> in_tags, out_tags;
  std::vector<Link> links;  // every edge with a real peer
};

// A cartesian grid, row-major, as MPI_Cart_shift(d, 1) sees it: for each
// dimension the -1 neighbour then the +1 neighbour, in and out alike; a
// message travelling towards -1 along d has tag 2d, towards +1 tag 2d + 1.
Topology Cart(const std::vector<int>& dims, const std::vector<bool>& periods) {
  Topology t;
  t.size = 1;
  for (int d : dims) t.size *= d;
  const int nd = static_cast<int>(dims.size());
  auto coords = [&](int r) {
    std::vector<int> c(nd);
    for (int i = nd - 1; i >= 0; --i) {
      c[i] = r % dims[i];
      r /= dims[i];
    }
    return c;
  };
  auto rank_of = [&](std::vector<int> c) {
    int r = 0;
    for (int i = 0; i < nd; ++i) r = r * dims[i] + c[i];
    return r;
  };
  auto shift = [&](int r, int d, int delta) {
    std::vector<int> c = coords(r);
    c[d] += delta;
    if (c[d] < 0 || c[d] >= dims[d]) {
      if (!periods[d]) return -1;
      c[d] = (c[d] % dims[d] + dims[d]) % dims[d];
    }
    return rank_of(c);
  };
  t.in.resize(t.size);
  t.out.resize(t.size);
  t.in_tags.resize(t.size);
  t.out_tags.resize(t.size);
  for (int r = 0; r < t.size; ++r) {
    for (int d = 0; d < nd; ++d) {
      const int lo = shift(r, d, -1), hi = shift(r, d, +1);
      const uint32_t down = 2 * d, up = 2 * d + 1;
      t.out[r].push_back(lo);
      t.out_tags[r].push_back(down);
      t.out[r].push_back(hi);
      t.out_tags[r].push_back(up);
      t.in[r].push_back(lo);
      t.in_tags[r].push_back(up);  // lo sent it upwards
      t.in[r].push_back(hi);
      t.in_tags[r].push_back(down);
      // What r sends down lands in lo's "from above" slot, and up in hi's
      // "from below" slot.
      if (lo >= 0) t.links.push_back({r, 2 * d, lo, 2 * d + 1, down});
      if (hi >= 0) t.links.push_back({r, 2 * d + 1, hi, 2 * d, up});
    }
  }
  return t;
}

// A random graph with repeated edges and self loops; the k-th edge from a
// to b has tag k on both sides (as the MPI layer numbers a dist graph's
// edges), and the edge lists are shuffled per rank.
Topology RandomGraph(int size, int edges, std::mt19937& rng) {
  Topology t;
  t.size = size;
  t.in.resize(size);
  t.out.resize(size);
  t.in_tags.resize(size);
  t.out_tags.resize(size);
  std::uniform_int_distribution<int> pick(0, size - 1);
  std::vector<std::pair<int, int>> e;
  for (int i = 0; i < edges; ++i) e.emplace_back(pick(rng), pick(rng));
  // Out-lists in edge order; in-lists in a shuffled order of the same edges.
  std::vector<int> order(e.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::shuffle(order.begin(), order.end(), rng);
  std::map<std::pair<int, int>, uint32_t> sent, received;
  std::vector<int> out_slot(e.size());
  std::vector<uint32_t> tag_of(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    const auto [a, b] = e[i];
    tag_of[i] = sent[{a, b}]++;
    out_slot[i] = static_cast<int>(t.out[a].size());
    t.out[a].push_back(b);
    t.out_tags[a].push_back(tag_of[i]);
  }
  // The receiver must enumerate the edges from one sender in the sender's
  // order (tags 0, 1, ...) only when they share a tag; distinct tags let
  // the in-list interleave freely.
  for (int i : order) {
    const auto [a, b] = e[i];
    const int slot = static_cast<int>(t.in[b].size());
    t.in[b].push_back(a);
    t.in_tags[b].push_back(tag_of[i]);
    t.links.push_back({a, out_slot[i], b, slot, tag_of[i]});
  }
  return t;
}

uint8_t Byte(int rank, int slot, uint64_t i) {
  return static_cast<uint8_t>(rank * 37 + slot * 11 + i * 3 + 1);
}

// Runs the exchange with `block(slot)` bytes per slot (the same length on
// both ends of a link: block depends on the link's sender slot) and checks
// every block; unfilled slots (no peer) keep their 0xEE filler.
void RunAndCheck(const Topology& t, uint64_t block, uint64_t seed) {
  std::vector<Schedule> schedules(t.size);
  std::vector<SimRank> ranks(t.size);
  for (int r = 0; r < t.size; ++r) {
    std::vector<NeighborEdge> sends, recvs;
    for (size_t s = 0; s < t.out[r].size(); ++s)
      sends.push_back({t.out[r][s], t.out_tags[r][s], s * block, block});
    for (size_t s = 0; s < t.in[r].size(); ++s)
      recvs.push_back({t.in[r][s], t.in_tags[r][s], s * block, block});
    INFO("rank " << r);
    REQUIRE(BuildNeighborExchange(r, t.size, sends, recvs, &schedules[r]) ==
            "");
    ranks[r].send.resize(t.out[r].size() * block);
    for (size_t s = 0; s < t.out[r].size(); ++s)
      for (uint64_t i = 0; i < block; ++i)
        ranks[r].send[s * block + i] = Byte(r, static_cast<int>(s), i);
    ranks[r].recv.assign(t.in[r].size() * block, 0xEE);
  }
  SimOptions o;
  o.seed = seed;
  REQUIRE(Simulate(schedules, ranks, {}, 1, o) == "");
  std::vector<std::vector<bool>> filled(t.size);
  for (int r = 0; r < t.size; ++r) filled[r].assign(t.in[r].size(), false);
  for (const Link& l : t.links) {
    INFO("link " << l.from << "[" << l.from_slot << "] -> " << l.to << "["
                 << l.to_slot << "] tag " << l.tag);
    filled[l.to][l.to_slot] = true;
    for (uint64_t i = 0; i < block; ++i)
      REQUIRE(ranks[l.to].recv[l.to_slot * block + i] ==
              Byte(l.from, l.from_slot, i));
  }
  for (int r = 0; r < t.size; ++r)
    for (size_t s = 0; s < t.in[r].size(); ++s)
      if (!filled[r][s])
        for (uint64_t i = 0; i < block; ++i)
          REQUIRE(ranks[r].recv[s * block + i] == 0xEE);
}

TEST_CASE("cartesian grids deliver every block to the right slot") {
  struct Grid {
    std::vector<int> dims;
    std::vector<bool> periods;
  };
  const Grid grids[] = {
      {{1}, {true}},           {{1}, {false}},
      {{2}, {true}},           {{2}, {false}},
      {{5}, {true}},           {{5}, {false}},
      {{2, 3}, {true, false}}, {{3, 3}, {true, true}},
      {{2, 2}, {true, true}},  {{1, 4}, {true, false}},
      {{2, 1, 3}, {true, true, false}},
  };
  for (const Grid& g : grids) {
    const Topology t = Cart(g.dims, g.periods);
    for (uint64_t block : {uint64_t{1}, uint64_t{24}})
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        INFO("grid of " << t.size << " ranks, block " << block << ", seed "
                        << seed);
        RunAndCheck(t, block, seed);
      }
  }
}

TEST_CASE("random graphs with repeated edges and self loops") {
  std::mt19937 rng(7);
  for (int size : {1, 2, 3, 6}) {
    for (int round = 0; round < 6; ++round) {
      const Topology t = RandomGraph(size, size * 3, rng);
      INFO("size " << size << ", round " << round);
      RunAndCheck(t, 8, 1 + round);
    }
  }
}

TEST_CASE("a periodic dimension of two ranks gets the direction right") {
  // Rank 0's +1 and -1 neighbours are both rank 1. What rank 1 sends
  // downwards (slot 0) must land in rank 0's "from above" slot (1).
  const Topology t = Cart({2}, {true});
  std::vector<Schedule> s(2);
  std::vector<SimRank> ranks(2);
  for (int r = 0; r < 2; ++r) {
    std::vector<NeighborEdge> sends, recvs;
    for (int k = 0; k < 2; ++k) {
      sends.push_back({t.out[r][k], t.out_tags[r][k], uint64_t(k) * 4, 4});
      recvs.push_back({t.in[r][k], t.in_tags[r][k], uint64_t(k) * 4, 4});
    }
    REQUIRE(BuildNeighborExchange(r, 2, sends, recvs, &s[r]) == "");
    ranks[r].send = {uint8_t(10 * r), uint8_t(10 * r), uint8_t(10 * r),
                     uint8_t(10 * r), uint8_t(10 * r + 1), uint8_t(10 * r + 1),
                     uint8_t(10 * r + 1), uint8_t(10 * r + 1)};
    ranks[r].recv.assign(8, 0);
  }
  REQUIRE(Simulate(s, ranks, {}, 1, 3) == "");
  // Rank 0, slot 0 (from below = rank 1 sending up = its slot 1): 11.
  CHECK(ranks[0].recv[0] == 11);
  CHECK(ranks[0].recv[4] == 10);
  CHECK(ranks[1].recv[0] == 1);
  CHECK(ranks[1].recv[4] == 0);
}

TEST_CASE("bad edges are refused with a reason") {
  Schedule s;
  CHECK_THAT(BuildNeighborExchange(0, 2, {{2, 0, 0, 4}}, {}, &s),
             Catch::Contains("sends[0]: peer 2"));
  CHECK_THAT(BuildNeighborExchange(0, 2, {}, {{1, kMaxStepTag + 1, 0, 4}}, &s),
             Catch::Contains("recvs[0]: tag"));
  CHECK_THAT(
      BuildNeighborExchange(0, 2, {}, {{1, 0, 0, 8}, {1, 1, 4, 8}}, &s),
      Catch::Contains("overlap"));
  CHECK_THAT(BuildNeighborExchange(0, 1, {}, {{0, 0, 0, 4}}, &s),
             Catch::Contains("no matching send"));
  CHECK_THAT(BuildNeighborExchange(0, 1, {{0, 0, 0, 4}}, {}, &s),
             Catch::Contains("no matching receive"));
  CHECK_THAT(BuildNeighborExchange(0, 1, {{0, 0, 0, 4}}, {{0, 0, 0, 8}}, &s),
             Catch::Contains("receives 8 bytes"));
  CHECK_THAT(BuildNeighborExchange(3, 2, {}, {}, &s),
             Catch::Contains("rank 3"));
  // No peer (MPI_PROC_NULL) is fine and moves nothing.
  REQUIRE(BuildNeighborExchange(0, 2, {{-1, 0, 0, 4}}, {{-1, 0, 0, 4}}, &s) ==
          "");
  CHECK(s.steps.empty());
}

}  // namespace
}  // namespace rondo::nmad::coll
