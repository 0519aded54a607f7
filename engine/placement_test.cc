#include "engine/placement.h"

#include <catch2/catch.hpp>

#include "topology/topology.h"

namespace rondo::engine {
namespace {

using topology::Topology;

TEST_CASE("Equation 1 (numa) on the paper's 8-core, 2-NUMA examples",
          "[placement]") {
  // 6 tasks on 8 cores: 3 per NUMA node of 4 cores, at positions 0,1,2; the
  // only free core of each NUMA node (position 3) hosts all their threads.
  for (int M : {0, 1, 2}) CHECK(NumaPlacement(4, 3, M) == 3);
  // 4 tasks on 8 cores: 2 per NUMA node at positions 0 and 2: each gets the
  // free core next to it.
  CHECK(NumaPlacement(4, 2, 0) == 1);
  CHECK(NumaPlacement(4, 2, 2) == 3);
  // One NUMA node of 8 cores with 6 tasks at 0,1,2,4,5,6 (delta = 4).
  const int expected[8] = {3, 3, 3, -1, 7, 7, 7, -1};
  for (int M : {0, 1, 2, 4, 5, 6}) CHECK(NumaPlacement(8, 6, M) == expected[M]);
  // No free core: bind.
  CHECK(NumaPlacement(4, 4, 2) == 2);
  CHECK(NumaPlacement(4, 6, 1) == 1);
  CHECK_THROWS_WITH(NumaPlacement(4, 2, 4), Catch::Contains("M=4"));
  CHECK_THROWS_AS(NumaPlacement(0, 1, 0), std::invalid_argument);
}

TEST_CASE("Equation 2 (odd-even) against hand-worked values", "[placement]") {
  // The paper's KNL case: 62 ranks on 64 cores -> cores 31 and 63.
  for (int r = 0; r < 62; ++r)
    CHECK(OddEvenPlacement(64, 62, r) == (r % 2 == 0 ? 31 : 63));
  // 6 ranks on 8 cores: 3, 7, 3, 7, ...
  for (int r = 0; r < 6; ++r)
    CHECK(OddEvenPlacement(8, 6, r) == (r % 2 == 0 ? 3 : 7));
  // 5 ranks on 8 cores: p/(p-n) = 8/3: 1.67 -> 1, 4.33 -> 4, 7 -> 7.
  CHECK(OddEvenPlacement(8, 5, 0) == 1);
  CHECK(OddEvenPlacement(8, 5, 1) == 4);
  CHECK(OddEvenPlacement(8, 5, 2) == 7);
  CHECK(OddEvenPlacement(8, 5, 3) == 1);
  CHECK(OddEvenPlacement(8, 8, 0) == -1);
  CHECK_THROWS_WITH(OddEvenPlacement(8, 5, 5), Catch::Contains("r=5"));
}

TEST_CASE("MPC spread placement of ranks", "[placement]") {
  auto topo = Topology::Load("synthetic:numa:2 core:4 pu:1");
  std::vector<int> six, four;
  for (int r = 0; r < 6; ++r) six.push_back(AppCoreOfRank(*topo, r, 6));
  for (int r = 0; r < 4; ++r) four.push_back(AppCoreOfRank(*topo, r, 4));
  CHECK(six == std::vector<int>{0, 1, 2, 4, 5, 6});
  CHECK(four == std::vector<int>{0, 2, 4, 6});
  CHECK(AppCoreOfRank(*topo, 0, 1) == 0);
  // Oversubscribed: 10 ranks on 8 cores wrap around within each NUMA node.
  CHECK(AppCoreOfRank(*topo, 4, 10) == 0);
  CHECK_THROWS_WITH(AppCoreOfRank(*topo, 6, 6), Catch::Contains("outside"));
}

TEST_CASE("progress cores for each policy", "[placement]") {
  auto topo = Topology::Load("synthetic:numa:2 core:4 pu:1");
  auto cores = [&](const std::string& spec, int rank, int size) {
    return ProgressCores(*topo, PlacementSpec::Parse(spec), rank, size,
                         AppCoreOfRank(*topo, rank, size));
  };
  // Figure 3: 6 ranks on 8 cores, numa: ranks 0-2 -> core 3, ranks 3-5 -> 7.
  for (int r = 0; r < 6; ++r)
    CHECK(cores("numa", r, 6) == std::vector<int>{r < 3 ? 3 : 7});
  for (int r = 0; r < 4; ++r)
    CHECK(cores("numa", r, 4) == std::vector<int>{2 * r + 1});
  // Figure 2: bind = the rank's own core.
  CHECK(cores("bind", 4, 6) == std::vector<int>{5});
  // odd-even: 6 ranks on 8 cores alternate between cores 3 and 7.
  for (int r = 0; r < 6; ++r)
    CHECK(cores("odd-even", r, 6) == std::vector<int>{r % 2 == 0 ? 3 : 7});
  CHECK(cores("none", 0, 1).empty());
  CHECK(cores("cores:1,3", 0, 1) == std::vector<int>{1, 3});
  // Full NUMA node: numa degrades to bind.
  CHECK(cores("numa", 1, 8) == std::vector<int>{1});
}

TEST_CASE("KNL-like machine: numa gathers 62 threads on cores 31 and 63",
          "[placement]") {
  auto topo = Topology::Load("synthetic:numa:1 core:64 pu:4");
  PlacementSpec numa = PlacementSpec::Parse("numa");
  for (int r = 0; r < 62; ++r) {
    auto c = ProgressCores(*topo, numa, r, 62, AppCoreOfRank(*topo, r, 62));
    CHECK(c == std::vector<int>{r <= 30 ? 31 : 63});
  }
}

TEST_CASE("placement specs: parse, print and bad input", "[placement]") {
  CHECK(PlacementSpec::Parse("odd-even").kind == PlacementKind::kOddEven);
  CHECK(PlacementSpec::Parse("cores:1,3-4").cores == std::vector<int>{1, 3, 4});
  CHECK(PlacementSpec::Parse("cores:1,3-4").ToString() == "cores:1,3-4");
  CHECK(PlacementSpec::Parse("numa").ToString() == "numa");
  CHECK_THROWS_WITH(PlacementSpec::Parse("spread"),
                    Catch::Contains("'spread'") &&
                        Catch::Contains("none|bind|numa|odd-even"));
  CHECK_THROWS_WITH(PlacementSpec::Parse("cores:x"),
                    Catch::Contains("cores:x"));
  auto topo = Topology::Load("synthetic:numa:2 core:4 pu:1");
  CHECK_THROWS_WITH(ProgressCores(*topo, PlacementSpec::Parse("cores:9"), 0, 1,
                                  0),
                    Catch::Contains("core 9") && Catch::Contains("cores 0-7"));
  CHECK_THROWS_WITH(ProgressCores(*topo, PlacementSpec::Parse("bind"), 0, 1,
                                  12),
                    Catch::Contains("core 12"));
}

// ---- dedicated communication cores (RONDO_COMM_CORES) ----

TEST_CASE("comm cores: parse, print and bad input", "[placement]") {
  CHECK(CommCoresSpec::Parse("").empty());
  CHECK(CommCoresSpec::Parse("0").empty());
  CHECK(CommCoresSpec::Parse("2").count == 2);
  CHECK(CommCoresSpec::Parse("2").ToString() == "2");
  CHECK(CommCoresSpec::Parse("6-7").cores == std::vector<int>{6, 7});
  CHECK(CommCoresSpec::Parse("3,7").cores == std::vector<int>{3, 7});
  CHECK(CommCoresSpec::Parse("cores:5").cores == std::vector<int>{5});
  CHECK(CommCoresSpec::Parse("3,7").ToString() == "cores:3,7");
  CHECK_THROWS_WITH(CommCoresSpec::Parse("two"),
                    Catch::Contains("invalid communication cores 'two'") &&
                        Catch::Contains("expected a count such as 2"));
  CHECK_THROWS_WITH(CommCoresSpec::Parse("99999999"),
                    Catch::Contains("too large"));
}

TEST_CASE("comm cores chosen from the topology", "[placement]") {
  // One NUMA node of 64 (KNL quadrant): the ends of equal blocks, where
  // MPC's spread leaves its free cores and Equation 2 puts the threads.
  auto knl = Topology::Load("synthetic:numa:1 core:64 pu:1");
  CHECK(ChooseCommCores(*knl, 2) == std::vector<int>{31, 63});
  CHECK(ChooseCommCores(*knl, 4) == std::vector<int>{15, 31, 47, 63});
  CHECK(ChooseCommCores(*knl, 1) == std::vector<int>{63});
  // Two NUMA nodes of 24 (dual-socket Skylake): shared out, the odd one to
  // the first node.
  auto skl = Topology::Load("synthetic:numa:2 core:24 pu:1");
  CHECK(ChooseCommCores(*skl, 2) == std::vector<int>{23, 47});
  CHECK(ChooseCommCores(*skl, 3) == std::vector<int>{11, 23, 47});
  CHECK_THROWS_WITH(ChooseCommCores(*skl, 48),
                    Catch::Contains("cannot dedicate 48") &&
                        Catch::Contains("expected 1 to 47"));
  CHECK_THROWS(ChooseCommCores(*skl, 0));
}

TEST_CASE("PlaceNode with comm cores: the paper's Figures 3 and 5",
          "[placement]") {
  auto knl = Topology::Load("synthetic:numa:1 core:64 pu:1");
  const CommCoresSpec two = CommCoresSpec::Parse("2");
  NodePlacement numa = PlaceNode(*knl, PlacementSpec::Parse("numa"), two, 62);
  CHECK(numa.comm_cores == std::vector<int>{31, 63});
  for (int r = 0; r < 62; ++r) {
    INFO("rank " << r);
    CHECK(numa.app_cores[r] == (r < 31 ? r : r + 1));
    // Progress threads 0-30 on core 31, 31-61 on core 63 (Section 5.1).
    CHECK(numa.progress_cores[r] == std::vector<int>{r < 31 ? 31 : 63});
  }
  // Without RONDO_COMM_CORES, Equation 1 finds the same free cores.
  NodePlacement eq1 = PlaceNode(*knl, PlacementSpec::Parse("numa"), {}, 62);
  CHECK(eq1.comm_cores == numa.comm_cores);
  CHECK(eq1.app_cores == numa.app_cores);
  CHECK(eq1.progress_cores == numa.progress_cores);
  // Odd-even: consecutive ranks never share a communication core.
  NodePlacement oe = PlaceNode(*knl, PlacementSpec::Parse("odd-even"), two, 62);
  for (int r = 0; r < 62; ++r)
    CHECK(oe.progress_cores[r] == std::vector<int>{r % 2 == 0 ? 31 : 63});
  NodePlacement oe2 = PlaceNode(*knl, PlacementSpec::Parse("odd-even"), {}, 62);
  CHECK(oe2.progress_cores == oe.progress_cores);
  // Bind: the application core; no dedicated core is used.
  NodePlacement bind = PlaceNode(*knl, PlacementSpec::Parse("bind"), {}, 62);
  CHECK(bind.comm_cores.empty());
  CHECK(bind.progress_cores[40] == std::vector<int>{bind.app_cores[40]});
}

TEST_CASE("PlaceNode: several NUMA nodes, lists and oversubscription",
          "[placement]") {
  // Figure 3: 6 ranks on 8 cores in 2 NUMA nodes, one free core per node
  // gathering that node's three progress threads.
  auto topo = Topology::Load("synthetic:numa:2 core:4 pu:1");
  NodePlacement p = PlaceNode(*topo, PlacementSpec::Parse("numa"),
                              CommCoresSpec::Parse("2"), 6);
  CHECK(p.comm_cores == std::vector<int>{3, 7});
  CHECK(p.app_cores == std::vector<int>{0, 1, 2, 4, 5, 6});
  for (int r = 0; r < 6; ++r)
    CHECK(p.progress_cores[r] == std::vector<int>{r < 3 ? 3 : 7});
  // An explicit list on one NUMA node: the other node's ranks use it too.
  NodePlacement l = PlaceNode(*topo, PlacementSpec::Parse("numa"),
                              CommCoresSpec::Parse("6-7"), 4);
  CHECK(l.comm_cores == std::vector<int>{6, 7});
  // 4 + 2 application cores: 3 ranks on NUMA 0 (cores 0, 1, 2: spread
  // over 4), 1 on NUMA 1 (core 4).
  CHECK(l.app_cores == std::vector<int>{0, 1, 2, 4});
  CHECK(l.progress_cores[0] == std::vector<int>{6});  // rank 0 of 4: C[0]
  CHECK(l.progress_cores[1] == std::vector<int>{6});  // rank 1 of 4: C[0]
  CHECK(l.progress_cores[2] == std::vector<int>{7});  // rank 2 of 4: C[1]
  CHECK(l.progress_cores[3] == std::vector<int>{6});  // NUMA 1, i=0 of 1
  // More ranks than application cores wrap around (oversubscribed), as on
  // this 2-core machine with RONDO_COMM_CORES=1.
  auto two = Topology::Load("synthetic:numa:1 core:2 pu:1");
  NodePlacement o = PlaceNode(*two, PlacementSpec::Parse("numa"),
                              CommCoresSpec::Parse("1"), 3);
  CHECK(o.comm_cores == std::vector<int>{1});
  CHECK(o.app_cores == std::vector<int>{0, 0, 0});
  CHECK(o.progress_cores[2] == std::vector<int>{1});
  CHECK_THROWS_WITH(PlaceNode(*two, PlacementSpec::Parse("numa"),
                              CommCoresSpec::Parse("0-1"), 2),
                    Catch::Contains("takes all 2 cores"));
  CHECK_THROWS_WITH(PlaceNode(*two, PlacementSpec::Parse("numa"),
                              CommCoresSpec::Parse("cores:5"), 2),
                    Catch::Contains("asks for core 5"));
  CHECK_THROWS(PlaceNode(*two, PlacementSpec::Parse("numa"), {}, 0));
}

TEST_CASE("PlaceNode shares ranks out by application cores per NUMA node",
          "[placement]") {
  // 48 cores in 2 NUMA nodes, 23 communication cores (12 on node 0, 11 on
  // node 1): 12 + 13 application cores for 25 ranks, so node 0 gets 12
  // ranks and node 1 13, one per core (an even split by rank would put 13
  // on node 0's 12 cores and leave one of node 1's free).
  auto skl = Topology::Load("synthetic:numa:2 core:24 pu:1");
  for (int p = 1; p < 48; ++p) {
    const int n = 48 - p;
    NodePlacement pl = PlaceNode(*skl, PlacementSpec::Parse("numa"),
                                 CommCoresSpec{p, {}}, n);
    std::vector<int> seen(48, 0);
    for (int r = 0; r < n; ++r) {
      INFO("P = " << p << " rank " << r);
      CHECK(++seen[pl.app_cores[r]] == 1);  // one rank per core
      for (int c : pl.comm_cores) CHECK(pl.app_cores[r] != c);
      // The progress thread stays in the rank's NUMA node when that node
      // has a communication core.
      const int numa = skl->NumaOfCore(pl.app_cores[r]);
      bool local = false;
      for (int c : pl.comm_cores) local |= skl->NumaOfCore(c) == numa;
      if (local) CHECK(skl->NumaOfCore(pl.progress_cores[r][0]) == numa);
    }
  }
}

// ---- the default: RONDO_PROGRESS=auto ----

using topology::CpuSet;

TEST_CASE("auto: one rank per core leaves no free core: quiet progress",
          "[placement][auto]") {
  auto topo = Topology::Load("synthetic:core:2 pu:1");
  NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}}, 2);
  CHECK(p.quiet == std::vector<bool>{true, true});
  CHECK(p.app_cores == std::vector<int>{0, 1});
  CHECK(p.progress_cores == std::vector<std::vector<int>>{{0}, {1}});
  CHECK(p.comm_cores.empty());
  CHECK_FALSE(p.oversubscribed);
  CHECK_THAT(p.why[1], Catch::Contains("quiet progress on its core 1") &&
                           Catch::Contains("2 ranks on 2 cores"));
  // Unbound ranks (as under rondo-run's default or mpirun's bind-to
  // socket): two ranks still fill two cores.
  p = PlaceNodeAuto(*topo, {}, 2);
  CHECK(p.quiet == std::vector<bool>{true, true});
  CHECK_THAT(p.why[0], Catch::Contains("unbound"));
}

TEST_CASE("auto: a whole job on one node with no free core gets no thread",
          "[placement][auto]") {
  auto topo = Topology::Load("synthetic:core:2 pu:1");
  // Every byte is a CPU copy on a core that computes: nothing to overlap.
  NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}}, 2, 2);
  CHECK(p.quiet == std::vector<bool>{false, false});
  CHECK(p.progress_cores == std::vector<std::vector<int>>{{}, {}});
  CHECK_THAT(p.why[0], Catch::Contains("no progress thread: the whole job") &&
                           Catch::Contains("RONDO_PROGRESS=quiet"));
  // Other ranks elsewhere (job of 8): quiet progress for the remote work.
  p = PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}}, 2, 8);
  CHECK(p.quiet == std::vector<bool>{true, true});
  // A free core is used whatever the job's size.
  auto four = Topology::Load("synthetic:core:4 pu:1");
  p = PlaceNodeAuto(*four, {CpuSet{0}, CpuSet{1}}, 2, 2);
  CHECK(p.progress_cores == std::vector<std::vector<int>>{{2}, {3}});
}

TEST_CASE("auto: more ranks than cores is oversubscribed and quiet",
          "[placement][auto]") {
  auto topo = Topology::Load("synthetic:core:2 pu:1");
  NodePlacement p =
      PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}, CpuSet{0}, CpuSet{1}}, 4);
  CHECK(p.oversubscribed);
  CHECK(p.quiet == std::vector<bool>(4, true));
  CHECK(p.progress_cores == std::vector<std::vector<int>>{{0}, {1}, {0}, {1}});
  CHECK_THAT(p.why[3], Catch::Contains("oversubscribed"));
}

TEST_CASE("auto: free cores get the progress threads", "[placement][auto]") {
  auto topo = Topology::Load("synthetic:core:4 pu:1");
  SECTION("bound ranks: the cores nobody is bound to") {
    NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}}, 2);
    CHECK(p.quiet == std::vector<bool>{false, false});
    CHECK(p.progress_cores == std::vector<std::vector<int>>{{2}, {3}});
    CHECK(p.comm_cores == std::vector<int>{2, 3});
    CHECK_THAT(p.why[0], Catch::Contains("free core 2") &&
                             Catch::Contains("2 free: 2-3"));
  }
  SECTION("bound ranks elsewhere: the free cores wherever they are") {
    NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{1}, CpuSet{3}}, 2);
    CHECK(p.progress_cores == std::vector<std::vector<int>>{{0}, {2}});
  }
  SECTION("unbound ranks: only cores - ranks are free, spread as MPC") {
    NodePlacement p = PlaceNodeAuto(*topo, {}, 2);
    CHECK(p.app_cores == std::vector<int>{0, 2});
    CHECK(p.progress_cores == std::vector<std::vector<int>>{{1}, {3}});
    CHECK(p.quiet == std::vector<bool>{false, false});
  }
  SECTION("three bound ranks share the one free core") {
    NodePlacement p =
        PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}, CpuSet{2}}, 3);
    CHECK(p.progress_cores ==
          std::vector<std::vector<int>>{{3}, {3}, {3}});
  }
  SECTION("a single unbound process on a 2-core machine") {
    auto two = Topology::Load("synthetic:core:2 pu:1");
    NodePlacement p = PlaceNodeAuto(*two, {}, 1);
    CHECK(p.progress_cores == std::vector<std::vector<int>>{{1}});
    CHECK(p.quiet == std::vector<bool>{false});
  }
}

TEST_CASE("auto: ranks placed by a resource manager keep to their CPUs",
          "[placement][auto]") {
  auto topo = Topology::Load("synthetic:core:4 pu:1");
  SECTION("bound by srun --cpu-bind=cores: quiet progress, not core 2") {
    NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}}, 2,
                                    /*job_size=*/4, /*quiet_ok=*/true,
                                    /*confined=*/true);
    CHECK(p.quiet == std::vector<bool>{true, true});
    CHECK(p.progress_cores == std::vector<std::vector<int>>{{0}, {1}});
    CHECK(p.comm_cores.empty());
  }
  SECTION("given two cores each and bound to one: the rest of its own") {
    // Two ranks, each allowed cores {0,1} and {2,3}: the masks span the
    // node's four cores, and the ranks run on two of them somewhere.
    NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{0, 1}, CpuSet{2, 3}}, 2,
                                    4, true, true);
    CHECK(p.comm_cores.empty());  // all four are used by the ranks
    CHECK(p.quiet == std::vector<bool>{true, true});
  }
  SECTION("one rank given cores 0-2 of 4: a thread on its own cores only") {
    // An unbound rank inside a 3-core allocation: one core of the three is
    // left over for a progress thread, never core 3.
    NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{0, 1, 2}}, 1, 2, true,
                                    true);
    for (int c : p.comm_cores) CHECK(c != 3);
  }
  SECTION("the same without confinement takes the other cores") {
    NodePlacement p = PlaceNodeAuto(*topo, {CpuSet{0}, CpuSet{1}}, 2, 4);
    CHECK(p.comm_cores == std::vector<int>{2, 3});
  }
}

TEST_CASE("auto: ranks use the free cores of their own NUMA node",
          "[placement][auto]") {
  auto topo = Topology::Load("synthetic:numa:2 core:4 pu:1");
  // Ranks on 0,1,2 (NUMA 0) and 4,5,6 (NUMA 1): free cores 3 and 7.
  std::vector<CpuSet> cores = {CpuSet{0}, CpuSet{1}, CpuSet{2},
                               CpuSet{4}, CpuSet{5}, CpuSet{6}};
  NodePlacement p = PlaceNodeAuto(*topo, cores, 6);
  CHECK(p.progress_cores ==
        std::vector<std::vector<int>>{{3}, {3}, {3}, {7}, {7}, {7}});
  // NUMA 0 full, two free cores on NUMA 1: NUMA 0's ranks go there too.
  cores = {CpuSet{0}, CpuSet{1}, CpuSet{2}, CpuSet{3}, CpuSet{4}, CpuSet{5}};
  p = PlaceNodeAuto(*topo, cores, 6);
  for (int r = 0; r < 6; ++r) {
    REQUIRE(p.progress_cores[r].size() == 1);
    const int c = p.progress_cores[r][0];
    CHECK((c == 6 || c == 7));
  }
}

TEST_CASE("auto: ranks bound to several cores use all of them",
          "[placement][auto]") {
  auto topo = Topology::Load("synthetic:core:8 pu:1");
  // MPI+OpenMP: two ranks of 3 cores each; cores 6 and 7 are free.
  NodePlacement p =
      PlaceNodeAuto(*topo, {CpuSet{0, 1, 2}, CpuSet{3, 4, 5}}, 2);
  CHECK(p.app_cores == std::vector<int>{0, 3});
  CHECK(p.progress_cores == std::vector<std::vector<int>>{{6}, {7}});
  // Four such ranks fill the node: quiet progress, or (nothing marks the
  // calls) an ordinary thread on each rank's first core.
  std::vector<CpuSet> full = {CpuSet{0, 1}, CpuSet{2, 3}, CpuSet{4, 5},
                              CpuSet{6, 7}};
  p = PlaceNodeAuto(*topo, full, 4, 8);
  CHECK(p.quiet == std::vector<bool>(4, true));
  p = PlaceNodeAuto(*topo, full, 4, 8, /*quiet_ok=*/false);
  CHECK(p.quiet == std::vector<bool>(4, false));
  CHECK(p.progress_cores ==
        std::vector<std::vector<int>>{{0}, {2}, {4}, {6}});
  CHECK_THAT(p.why[0], Catch::Contains("nothing marks the application's"));
}

TEST_CASE("auto: bad input and conflicts of explicit placements",
          "[placement][auto][errors]") {
  auto topo = Topology::Load("synthetic:core:4 pu:1");
  CHECK_THROWS_WITH(PlaceNodeAuto(*topo, {CpuSet{0}}, 2),
                    Catch::Contains("CPUs of 1 ranks") &&
                        Catch::Contains("has 2"));
  CHECK_THROWS_WITH(PlaceNodeAuto(*topo, {}, 0),
                    Catch::Contains("at least one rank"));
  CHECK(PlacementSpec::Parse("auto").ToString() == "auto");
  CHECK(PlacementSpec::Parse("quiet").kind == PlacementKind::kQuiet);
  const std::vector<CpuSet> cores = {CpuSet{0}, CpuSet{1}, CpuSet{0, 1, 2, 3}};
  std::string w = PlacementConflicts(*topo, {1}, cores, 0);
  CHECK_THAT(w, Catch::Contains("core 1, where local rank 1 computes"));
  CHECK(PlacementConflicts(*topo, {2}, cores, 0).empty());  // rank 2 unbound
  CHECK(PlacementConflicts(*topo, {0}, cores, 0).empty());  // its own core
}

}  // namespace
}  // namespace rondo::engine
