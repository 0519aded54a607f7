// Rendezvous planning alone (nmad/rendezvous.h): keys, trimming to what
// the receiver accepts, part plans from the strategies, the receiver's
// check of a plan.
#include "nmad/rendezvous.h"

#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <vector>

namespace rondo::nmad::internal {
namespace {

TEST_CASE("rendezvous: keys are distinct per (id, part) and below 2^48") {
  std::set<uint64_t> keys;
  for (uint64_t id : {uint64_t{1}, uint64_t{2}, uint64_t{1} << 39})
    for (int part = 0; part < wire::kMaxParts; ++part) {
      const uint64_t k = RdvKey(id, part);
      CHECK(k < (uint64_t{1} << 48));
      CHECK(k % 256 == static_cast<uint64_t>(part));
      keys.insert(k);
    }
  CHECK(keys.size() == 3 * wire::kMaxParts);
  // Only the low 40 bits of the id count (ids wrap after 2^40 rendezvous).
  CHECK(RdvKey((uint64_t{1} << 40) + 5, 2) == RdvKey(5, 2));
}

TEST_CASE("rendezvous: TrimParts keeps the accepted first bytes") {
  const wire::RdvPart plan[3] = {{0, 100}, {1, 50}, {0, 30}};
  wire::RdvPart out[3];
  CHECK(TrimParts(plan, 3, 180, out) == 3);
  CHECK(out[2].bytes == 30);
  CHECK(TrimParts(plan, 3, 120, out) == 2);
  CHECK(out[0].bytes == 100);
  CHECK(out[1].bytes == 20);
  CHECK(out[1].rail == 1);
  CHECK(out[2].bytes == 0);  // every part is written, some empty
  CHECK(out[2].rail == 0);
  CHECK(TrimParts(plan, 3, 0, out) == 0);
  CHECK(TrimParts(plan, 3, 1000, out) == 3);  // never more than the plan
  CHECK(out[0].bytes + out[1].bytes + out[2].bytes == 180);
}

TEST_CASE("rendezvous: plans over rails") {
  const std::vector<strategies::RailInfo> rails = {{0, 3e9}, {1, 1e9}};
  wire::RdvPart parts[wire::kMaxParts];
  auto def = strategies::MakeStrategy("default");
  auto split = strategies::MakeStrategy("split_balance");
  // To self: one part on the loopback rail, whatever the strategy.
  REQUIRE(PlanParts(1 << 20, true, 2, rails, *split, parts) == 1);
  CHECK(parts[0].rail == 2);
  CHECK(parts[0].bytes == (1u << 20));
  // The default strategy keeps a message on one rail.
  REQUIRE(PlanParts(1 << 20, false, 2, rails, *def, parts) == 1);
  CHECK(parts[0].bytes == (1u << 20));
  // split_balance splits by bandwidth; the parts add up.
  const int n = PlanParts(4 << 20, false, 2, rails, *split, parts);
  REQUIRE(n == 2);
  CHECK(parts[0].bytes + parts[1].bytes == (4u << 20));
  CHECK(parts[0].bytes > parts[1].bytes);
  CHECK(parts[0].rail != parts[1].rail);
}

// A strategy whose plan does not add up.
struct BadSplit : strategies::Strategy {
  std::string_view name() const noexcept override { return "bad"; }
  bool defers_sends() const noexcept override { return false; }
  void NextPacket(strategies::ChunkQueue&, size_t, int,
                  std::vector<strategies::PendingChunk*>&) const override {}
  int SplitRendezvousInto(
      uint64_t bytes, std::span<const strategies::RailInfo>,
      std::span<strategies::RdvPart, strategies::kMaxRdvParts> out)
      const override {
    out[0] = {1, bytes / 2};
    return 1;
  }
};

TEST_CASE("rendezvous: a plan that does not add up becomes one part") {
  const std::vector<strategies::RailInfo> rails = {{0, 1e9}, {1, 1e9}};
  wire::RdvPart parts[wire::kMaxParts];
  REQUIRE(PlanParts(1000, false, 2, rails, BadSplit(), parts) == 1);
  CHECK(parts[0].rail == 0);
  CHECK(parts[0].bytes == 1000);
}

TEST_CASE("rendezvous: the receiver's check of a plan") {
  const wire::RdvPart remote[2] = {{0, 10}, {1, 10}};
  const wire::RdvPart self[1] = {{2, 10}};
  const wire::RdvPart empty_bad[2] = {{0, 10}, {7, 0}};
  CHECK(PartsOnValidRails(remote, 2, false, 2));
  CHECK_FALSE(PartsOnValidRails(remote, 2, true, 2));   // self via network
  CHECK(PartsOnValidRails(self, 1, true, 2));
  CHECK_FALSE(PartsOnValidRails(self, 1, false, 2));    // loopback remote
  CHECK(PartsOnValidRails(empty_bad, 2, false, 2));     // empty parts ignored
  const wire::RdvPart beyond[1] = {{3, 1}};
  CHECK_FALSE(PartsOnValidRails(beyond, 1, false, 2));
}

}  // namespace
}  // namespace rondo::nmad::internal
