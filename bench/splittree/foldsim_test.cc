// Tests of the folded-collective simulator (foldsim.h): tiny cases worked
// out by hand (in the comments), the split-tree phase rules, the paper's
// Figure 7 ordering and Figures 17-19 collapse on the simulated KNL,
// deadlock reports, determinism and argument checks.
#include "bench/splittree/foldsim.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmad/coll/splittree_model.h"

namespace rondo::nmad::coll {
namespace {

using engine::CommCoresSpec;
using engine::NodePlacement;
using engine::PlacementSpec;

constexpr uint64_t kMiB = 1 << 20;

// 1 MiB in 32 KiB chunks: 32 slices. With no overhead, a pipelined transfer
// between two cores ends one chunk after the sender's last chunk.
constexpr double kChunkFill = 1.0 / 32;

CostModel UnitCost() {
  CostModel c = CostModel::Unit();
  c.chunk_bytes = 32 * 1024;
  c.bounce_bytes = 64 * 1024;
  return c;
}

Step Send(int peer, uint64_t len, std::vector<uint32_t> deps = {}) {
  Step s;
  s.kind = StepKind::kSend;
  s.peer = peer;
  s.src = {kSendBuf, 0, len};
  s.deps = std::move(deps);
  return s;
}

Step Recv(int peer, uint64_t len, std::vector<uint32_t> deps = {}) {
  Step s;
  s.kind = StepKind::kRecv;
  s.peer = peer;
  s.dst = {kRecvBuf, 0, len};
  s.deps = std::move(deps);
  return s;
}

// Ranks whose application threads sit on app[r] and progress threads on
// progress[r].
NodePlacement Placement(std::vector<int> app, std::vector<int> progress) {
  NodePlacement p;
  p.app_cores = std::move(app);
  for (int c : progress) p.progress_cores.push_back({c});
  return p;
}

std::vector<std::vector<StepPlace>> AllComm(const std::vector<Schedule>& s) {
  std::vector<std::vector<StepPlace>> places;
  for (const Schedule& x : s) places.emplace_back(x.steps.size(), StepPlace::kComm);
  return places;
}

// Rank 0 sends 1 MiB to rank 1.
std::vector<Schedule> OneMessage() {
  std::vector<Schedule> s(2);
  s[0].Add(Send(1, kMiB));
  s[1].Add(Recv(0, kMiB));
  return s;
}

TEST_CASE("one message between two cores costs one copy plus the pipeline fill",
          "[foldsim]") {
  const auto s = OneMessage();
  const FoldResult r = SimulateSchedules(s, AllComm(s), Placement({0, 1}, {2, 3}),
                                         4, 0, kMiB, UnitCost());
  REQUIRE_FALSE(r.deadlock);
  // The unit: 1 MiB at 5 bytes/ns.
  CHECK(r.unit_ns == Approx(kMiB / 5.0));
  // Sender copies chunk k during [k, k+1] chunks; the receiver copies it out
  // during [k+1, k+2]; the bounce buffer (2 chunks) never stalls the sender.
  CHECK(r.units() == Approx(1 + kChunkFill).epsilon(1e-12));
  CHECK(r.messages == 1);
  // The sender is done when its last chunk is in the bounce buffer.
  CHECK(r.ranks[0].end_ns == Approx(r.unit_ns).epsilon(1e-12));
}

TEST_CASE("one message within one core serialises the two copies",
          "[foldsim]") {
  const auto s = OneMessage();
  CostModel cost = UnitCost();
  SECTION("no switch cost: exactly two copies") {
    const FoldResult r = SimulateSchedules(
        s, AllComm(s), Placement({0, 1}, {2, 2}), 4, 0, kMiB, cost);
    REQUIRE_FALSE(r.deadlock);
    CHECK(r.units() == Approx(2.0).epsilon(1e-12));
  }
  SECTION("each bounce buffer round trip costs two thread switches") {
    cost.switch_ns = 2000;
    const FoldResult r = SimulateSchedules(
        s, AllComm(s), Placement({0, 1}, {2, 2}), 4, 0, kMiB, cost);
    REQUIRE_FALSE(r.deadlock);
    // 32 chunks, 2 per bounce buffer: 16 rounds of (sender fills 2, receiver
    // drains 2), 16 switches to the receiver and 15 back to the sender.
    CHECK(r.cores[2].switches == 31);
    CHECK(r.time_ns == Approx(2 * r.unit_ns + 31 * 2000.0).epsilon(1e-12));
  }
  SECTION("single copy: only the receiver copies") {
    cost.protocol = Protocol::kSingleCopy;
    const FoldResult r = SimulateSchedules(
        s, AllComm(s), Placement({0, 1}, {2, 2}), 4, 0, kMiB, cost);
    REQUIRE_FALSE(r.deadlock);
    CHECK(r.units() == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("latency, step cost and wake-up add where they should", "[foldsim]") {
  const auto s = OneMessage();
  CostModel cost = UnitCost();
  cost.latency_ns = 1000;  // once, before the receiver sees the first chunk
  cost.step_ns = 300;      // once per step, on the step's thread
  cost.wake_ns = 5000;     // both cores start asleep
  cost.spin_ns = 1e9;      // and then never sleep again
  const FoldResult r = SimulateSchedules(
      s, AllComm(s), Placement({0, 1}, {2, 3}), 4, 0, kMiB, cost);
  REQUIRE_FALSE(r.deadlock);
  const double chunk = r.unit_ns / 32;
  // The receiver's core wakes at 0 (5000 ns) and posts the receive (300 ns,
  // hidden); it sees chunk 0 at wake + the send's step + one chunk +
  // latency, its core still spinning, and copies 32 chunks back to back.
  const double expected = 5000 + 300 + chunk + 1000 + 32 * chunk;
  CHECK(r.time_ns == Approx(expected).epsilon(1e-12));
}

TEST_CASE("binomial reduce on 4 ranks with 4 free cores takes H levels",
          "[foldsim]") {
  auto topo = topology::Topology::Load("synthetic:numa:1 core:8 pu:1");
  FoldConfig c = SplitTreeConfig(*topo, 4, Collective::kReduce, kMiB, 0, 0,
                                 UnitCost());
  const FoldResult r = Simulate(c);
  REQUIRE_FALSE(r.deadlock);
  // Every rank has its own communication core.
  CHECK(r.placement.comm_cores == std::vector<int>{1, 3, 5, 7});
  // H(4) = 2 levels, each one transfer (1 + fill) and one reduction (1).
  CHECK(r.units() == Approx(2 * (1 + kChunkFill + 1)).epsilon(1e-12));
  SECTION("S = H runs everything on the application threads: the blocking time") {
    c.split_s = 2;
    const FoldResult split = Simulate(c);
    c.split_s = 0;
    c.mode = FoldMode::kBlocking;
    const FoldResult blocking = Simulate(c);
    REQUIRE_FALSE(split.deadlock);
    REQUIRE_FALSE(blocking.deadlock);
    CHECK(split.time_ns == Approx(blocking.time_ns).epsilon(1e-12));
    CHECK(blocking.units() == Approx(2 * (1 + kChunkFill + 1)).epsilon(1e-12));
  }
}

TEST_CASE("split levels run in the call or in Wait, the rest overlaps",
          "[foldsim]") {
  // Bcast on 2 ranks, 2 free cores, computation 3 units per rank.
  auto topo = topology::Topology::Load("synthetic:numa:1 core:4 pu:1");
  const CostModel cost = UnitCost();
  const double unit = cost.CopyNs(kMiB);
  FoldConfig c = SplitTreeConfig(*topo, 2, Collective::kBcast, kMiB, 0,
                                 3 * unit, cost);
  SECTION("S = 0: the transfer hides behind the computation") {
    const FoldResult r = Simulate(c);
    REQUIRE_FALSE(r.deadlock);
    CHECK(r.units() == Approx(3.0).epsilon(1e-12));
    CHECK(r.ranks[1].call_return_ns == 0);
  }
  SECTION("S = 1: the one level runs in Wait, after the computation") {
    c.split_s = 1;
    const FoldResult r = Simulate(c);
    REQUIRE_FALSE(r.deadlock);
    CHECK(r.units() == Approx(3 + 1 + kChunkFill).epsilon(1e-12));
    CHECK(r.ranks[1].compute_end_ns == Approx(3 * unit));
  }
  SECTION("reduce, S = 1: the level runs in the call, before the computation") {
    c.args.collective = Collective::kReduce;
    c.split_s = 1;
    const FoldResult r = Simulate(c);
    REQUIRE_FALSE(r.deadlock);
    // Rondo's binomial reduce at a root with one child: receive into a
    // temporary (1 + fill), reduce the input into it (1), copy it to the
    // output (1), all inside the call; then the computation.
    CHECK(r.ranks[0].call_return_ns ==
          Approx((3 + kChunkFill) * unit).epsilon(1e-12));
    CHECK(r.units() == Approx(3 + kChunkFill + 3).epsilon(1e-12));
  }
}

TEST_CASE("a progress thread on a computing core waits for the quantum",
          "[foldsim]") {
  // Rank 0's progress thread has a free core (2); rank 1's shares core 1
  // with rank 1's 3-unit computation. Both ranks compute 3 units.
  const auto s = OneMessage();
  CostModel cost = UnitCost();
  const double unit = cost.CopyNs(kMiB);
  const NodePlacement place = Placement({0, 1}, {2, 1});
  SECTION("a quantum longer than the computation: no progress until it ends") {
    cost.quantum_ns = 10 * unit;
    const FoldResult r =
        SimulateSchedules(s, AllComm(s), place, 3, 3 * unit, kMiB, cost);
    REQUIRE_FALSE(r.deadlock);
    // The receiver copies out from 3 units on; the sender, two chunks
    // ahead, puts its last chunk in at 3 + 31 chunks.
    CHECK(r.ranks[0].end_ns == Approx((3 + 31.0 / 32) * unit).epsilon(1e-12));
    CHECK(r.ranks[1].end_ns == Approx(4 * unit).epsilon(1e-12));
  }
  SECTION("a quarter-unit quantum: the receive progresses during the computation") {
    cost.quantum_ns = unit / 4;
    const FoldResult r =
        SimulateSchedules(s, AllComm(s), place, 3, 3 * unit, kMiB, cost);
    REQUIRE_FALSE(r.deadlock);
    // Core 1 alternates computation and copy-out quanta: the transfer is
    // over long before rank 0's computation, so rank 0 ends at 3 units;
    // core 1 still has 4 units of work.
    CHECK(r.ranks[0].end_ns == Approx(3 * unit).epsilon(1e-12));
    CHECK(r.ranks[1].end_ns == Approx(4 * unit).epsilon(1e-12));
    CHECK(r.cores[1].switches > 4);
  }
}

// Figure 7 on the simulated 64-core KNL with the default cost model. The
// paper measured numa ~3x bind and odd-even ~2x faster than numa; with
// honest parameters the simulator gives the same order with smaller ratios
// (docs/splittree_sim.md explains why): numa/bind 1.82, numa/odd-even 1.47,
// odd-even/bind 1.24. The bands below are those values +-10%.
TEST_CASE("Figure 7: bind < odd-even < numa for the chain Iscan",
          "[foldsim][figure7]") {
  auto knl = topology::Topology::Load("synthetic:numa:1 core:64 pu:1");
  const CostModel cost;  // the defaults
  auto run = [&](const char* placement) {
    const FoldResult r = Simulate(ChainScanConfig(
        *knl, 62, PlacementSpec::Parse(placement), kMiB, cost));
    REQUIRE_FALSE(r.deadlock);
    return r;
  };
  const FoldResult bind = run("bind"), numa = run("numa"),
                   odd_even = run("odd-even");
  CHECK(numa.placement.comm_cores == std::vector<int>{31, 63});
  CHECK(bind.units() < odd_even.units());
  CHECK(odd_even.units() < numa.units());
  const double numa_bind = numa.units() / bind.units();
  const double numa_oe = numa.units() / odd_even.units();
  const double oe_bind = odd_even.units() / bind.units();
  CHECK(numa_bind > 1.64);
  CHECK(numa_bind < 2.0);
  CHECK(numa_oe > 1.32);
  CHECK(numa_oe < 1.62);
  CHECK(oe_bind > 1.12);
  CHECK(oe_bind < 1.37);
  // bind: the 61 hops of the chain, each one transfer and one reduction
  // (about 2 units), in sequence.
  CHECK(bind.units() > 61 * 2.0);
  CHECK(bind.units() < 61 * 2.2);
}

TEST_CASE("Figures 17-19: S = 0 collapses on 2 comm cores, S = 3 does not",
          "[foldsim][figure18]") {
  auto knl = topology::Topology::Load("synthetic:numa:1 core:64 pu:1");
  const CostModel cost;
  const uint64_t bytes = 2 * kMiB;
  const double c64 =
      FullMachineBlockingNs(*knl, Collective::kReduce, bytes, cost);
  // C(64) is the blocking reduce on 64 cores: H(64) = 6 levels of about 2
  // units (transfer + reduction).
  CHECK(c64 / cost.CopyNs(bytes) > 6 * 2.0);
  CHECK(c64 / cost.CopyNs(bytes) < 6 * 2.2);
  const double c62 = StrongScaledComputeNs(64, 62, c64);
  auto run = [&](int s) {
    const FoldResult r = Simulate(
        SplitTreeConfig(*knl, 62, Collective::kReduce, bytes, s, c62, cost));
    REQUIRE_FALSE(r.deadlock);
    return r.units();
  };
  FoldConfig blocking_cfg =
      SplitTreeConfig(*knl, 62, Collective::kReduce, bytes, 0, c62, cost);
  blocking_cfg.mode = FoldMode::kBlocking;
  const double blocking = Simulate(blocking_cfg).units();
  const double s0 = run(0), s3 = run(3);
  CHECK(s0 > 3 * s3);
  CHECK(s3 < blocking);
  // With many free cores (N = 40, P = 24) S = 0 is best: nothing collapses.
  const double c40 = StrongScaledComputeNs(64, 40, c64);
  const double at40_s0 = Simulate(SplitTreeConfig(
      *knl, 40, Collective::kReduce, bytes, 0, c40, cost)).units();
  const double at40_s3 = Simulate(SplitTreeConfig(
      *knl, 40, Collective::kReduce, bytes, 3, c40, cost)).units();
  CHECK(at40_s0 < at40_s3);
  CHECK(at40_s0 == Approx(c40 / cost.CopyNs(bytes)).epsilon(0.01));
}

TEST_CASE("with the model's assumptions the simulator is the model",
          "[foldsim][model]") {
  // No overhead, one copy per message (by the receiver), a reduction as
  // dear as a copy: a blocking level of Ireduce costs 2 units (transfer +
  // reduction), so Equation 7 times 2 must be the simulated time, for every
  // S, on 62 of 64 cores (P = 2). On 63 (P = 1) the simulator is slightly
  // faster for S = 0, 1 (124 and 63 units against 126 and 64): a folded
  // level may start before the whole level below has finished.
  auto knl = topology::Topology::Load("synthetic:numa:1 core:64 pu:1");
  CostModel cost = CostModel::Unit();
  cost.protocol = Protocol::kSingleCopy;
  const uint64_t bytes = 2 * kMiB;
  const double unit = cost.CopyNs(bytes);
  const double c64 =
      FullMachineBlockingNs(*knl, Collective::kReduce, bytes, cost);
  CHECK(c64 / unit == Approx(2.0 * TreeHeight(64)).epsilon(1e-12));
  for (int n : {62, 63}) {
    SplitTreeParams params;
    params.nproc = 64;
    params.n = n;
    for (int s = 0; s <= 3; ++s) {
      INFO("N = " << n << ", S = " << s);
      const FoldResult r = Simulate(SplitTreeConfig(
          *knl, n, Collective::kReduce, bytes, s,
          StrongScaledComputeNs(64, n, c64), cost));
      REQUIRE_FALSE(r.deadlock);
      if (n == 62) {
        CHECK(r.units() == Approx(2 * ModelTime(params, s)).epsilon(1e-9));
      } else {
        CHECK(r.units() <= 2 * ModelTime(params, s) + 1e-9);
        CHECK(r.units() >= 2 * ModelTime(params, s) - 2 - 1e-9);
      }
    }
  }
}

TEST_CASE("a cyclic schedule set is reported as a deadlock", "[foldsim]") {
  // Each rank receives from the other before sending to it.
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    s[r].Add(Recv(1 - r, 4096));
    s[r].Add(Send(1 - r, 4096, {0}));
  }
  const FoldResult res = SimulateSchedules(
      s, AllComm(s), Placement({0, 1}, {0, 1}), 2, 0, 4096, CostModel());
  CHECK(res.deadlock);
  REQUIRE(res.stuck.size() == 4);
  CHECK(res.stuck[0] ==
        "rank 0 step 0 recv from 1 tag 0 (comm): its send (rank 1 step 1) "
        "never started");
  CHECK(res.stuck[1] == "rank 0 step 1 send to 1 tag 0 (comm): waits for step 0");
}

TEST_CASE("unmatched messages are reported as stuck", "[foldsim]") {
  std::vector<Schedule> s(2);
  s[0].Add(Send(1, 1 << 20));  // nobody receives it: fills the bounce buffer
  s[1].Add(Recv(0, 64));
  s[1].steps[0].tag = 7;       // nobody sends this one
  const FoldResult res = SimulateSchedules(
      s, AllComm(s), Placement({0, 1}, {0, 1}), 2, 0, 64, CostModel());
  CHECK(res.deadlock);
  REQUIRE(res.stuck.size() == 2);
  CHECK(res.stuck[0] ==
        "rank 0 step 0 send to 1 tag 0 (comm): no matching receive at rank 1 "
        "tag 0 (bounce buffer full)");
  CHECK(res.stuck[1] ==
        "rank 1 step 0 recv from 0 tag 7 (comm): no matching send from rank 0 "
        "tag 7");
}

TEST_CASE("mismatched lengths and bad arguments throw", "[foldsim]") {
  std::vector<Schedule> s(2);
  s[0].Add(Send(1, 128));
  s[1].Add(Recv(0, 64));
  CHECK_THROWS_WITH(
      SimulateSchedules(s, AllComm(s), Placement({0, 1}, {0, 1}), 2, 0, 64,
                        CostModel()),
      Catch::Contains("sends 128 bytes") && Catch::Contains("expects 64"));
  CHECK_THROWS_WITH(
      SimulateSchedules(s, AllComm(s), Placement({0, 5}, {0, 1}), 2, 0, 64,
                        CostModel()),
      Catch::Contains("application core of rank 1 is core 5"));
  auto topo = topology::Topology::Load("synthetic:numa:1 core:4 pu:1");
  FoldConfig c = SplitTreeConfig(*topo, 2, Collective::kBcast, 1024, 0, 0,
                                 CostModel());
  c.split_s = -1;
  CHECK_THROWS_WITH(Simulate(c), Catch::Contains("split_s is -1"));
  c.split_s = 0;
  c.cost.bounce_bytes = 1024;
  CHECK_THROWS_WITH(Simulate(c), Catch::Contains("bounce_bytes: 1024") &&
                                     Catch::Contains("at least chunk_bytes"));
  c.cost = CostModel();
  c.cost.copy_bytes_per_ns = 0;
  CHECK_THROWS_WITH(Simulate(c), Catch::Contains("copy_bytes_per_ns"));
  c.cost = CostModel();
  c.topology = nullptr;
  CHECK_THROWS_WITH(Simulate(c), Catch::Contains("topology is null"));
  c.topology = topo.get();
  c.args.root = 9;
  CHECK_THROWS_WITH(Simulate(c), Catch::Contains("refused the arguments"));
  CHECK_THROWS_WITH(SplitTreeConfig(*topo, 5, Collective::kBcast, 1024, 0, 0,
                                    CostModel()),
                    Catch::Contains("n is 5"));
  CHECK_THROWS_WITH(ParseProtocol("zero-copy"),
                    Catch::Contains("two-copy or single-copy"));
}

TEST_CASE("the simulation is deterministic", "[foldsim]") {
  auto knl = topology::Topology::Load("synthetic:numa:1 core:64 pu:1");
  const FoldConfig c = SplitTreeConfig(*knl, 57, Collective::kBcast, 2 * kMiB,
                                       1, 5e6, CostModel());
  const FoldResult a = Simulate(c), b = Simulate(c);
  REQUIRE_FALSE(a.deadlock);
  CHECK(a.time_ns == b.time_ns);
  CHECK(a.events == b.events);
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    CHECK(a.ranks[r].end_ns == b.ranks[r].end_ns);
    CHECK(a.ranks[r].call_return_ns == b.ranks[r].call_return_ns);
  }
  for (size_t k = 0; k < a.cores.size(); ++k) {
    CHECK(a.cores[k].busy_ns == b.cores[k].busy_ns);
    CHECK(a.cores[k].switches == b.cores[k].switches);
  }
}

TEST_CASE("every tree collective and S runs to completion", "[foldsim]") {
  auto topo = topology::Topology::Load("synthetic:numa:2 core:8 pu:1");
  for (Collective coll : {Collective::kBcast, Collective::kReduce,
                          Collective::kGather, Collective::kScatter,
                          Collective::kAllreduce}) {
    for (int n : {1, 3, 9, 12, 15}) {
      for (int s = 0; s <= 4; ++s) {
        INFO(CollectiveName(coll) << " n=" << n << " S=" << s);
        const FoldResult r = Simulate(
            SplitTreeConfig(*topo, n, coll, 64 * 1024, s, 1e5, CostModel()));
        CHECK_FALSE(r.deadlock);
        CHECK(r.time_ns >= 1e5);
      }
    }
  }
}

}  // namespace
}  // namespace rondo::nmad::coll
