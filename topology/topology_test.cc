#include "topology/topology.h"

#include <hwloc.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace rondo::topology {
namespace {

constexpr const char* kTwoSocketNuma = "package:2 numa:2 l3:1 core:6 pu:1";
constexpr const char* kKnlLike = "numa:4 core:16 pu:4";
constexpr const char* kDualSocket48 = "package:2 numa:1 l3:1 core:24 pu:2";
constexpr const char* kTiny = "package:1 core:2 pu:1";

std::shared_ptr<const Topology> Synthetic(const std::string& description) {
  return Topology::Load(
      TopologySource{TopologySource::Kind::kSynthetic, description});
}

// Returns the message of the std::invalid_argument thrown by `f`.
template <typename F>
std::string InvalidArgumentMessage(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  FAIL("no std::invalid_argument thrown");
  return "";
}

// A file in a writable scratch directory (Bazel's per-test one when there is
// one); the pid keeps concurrent runs apart and the name keeps its suffix.
std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" +
         std::to_string(getpid()) + "_" + name;
}

// Structural invariants every loaded tree must satisfy, whatever the machine.
void CheckInvariants(const Topology& t) {
  const std::vector<Node>& nodes = t.Nodes();
  REQUIRE(!nodes.empty());
  CHECK(nodes[0].kind == NodeKind::kMachine);
  CHECK(nodes[0].parent == -1);
  CHECK(nodes[0].depth == 0);
  CHECK(nodes[0].name == "machine:0");
  CHECK(t.AllCores() == CpuSet::Range(0, t.NumCores() - 1));
  CHECK(t.Count(NodeKind::kMachine) == 1);
  CHECK(t.Count(NodeKind::kCore) == t.NumCores());

  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    const Node& n = nodes[i];
    INFO("node " << i << " " << n.name << " " << n.cpuset.ToString());
    CHECK(n.name == std::string(NodeKindName(n.kind)) + ":" +
                        std::to_string(n.index));
    CHECK(t.Find(n.kind, n.index) == i);
    CHECK(t.FindByName(n.name) == i);
    CHECK_FALSE(n.cpuset.Empty());
    if (i > 0) {
      REQUIRE(n.parent >= 0);
      const Node& p = nodes[n.parent];
      CHECK(n.parent < i);  // depth-first order
      CHECK(n.depth == p.depth + 1);
      CHECK(p.cpuset.Contains(n.cpuset));
      CHECK(p.kind <= n.kind);
    }
    // Children partition the parent's cores, in order of first core.
    CpuSet covered;
    int previous_first = -1;
    for (int child : n.children) {
      CHECK(nodes[child].parent == i);
      CHECK_FALSE(covered.Intersects(nodes[child].cpuset));
      covered = covered | nodes[child].cpuset;
      CHECK(nodes[child].cpuset.First() > previous_first);
      previous_first = nodes[child].cpuset.First();
    }
    if (n.kind == NodeKind::kCore) {
      CHECK(n.children.empty());
      CHECK(n.cpuset == CpuSet::Single(n.index));
      CHECK(t.CoreNode(n.index) == i);
    } else {
      CHECK(covered == n.cpuset);
    }
    // Shared caches only: a single-core cache adds nothing to the core.
    if (n.kind == NodeKind::kL3 || n.kind == NodeKind::kL2 ||
        n.kind == NodeKind::kL1) {
      CHECK(n.cpuset.Count() >= 2);
    }
    // The deepest node for a node's own cpuset has exactly that cpuset.
    int deepest = t.DeepestContaining(n.cpuset);
    REQUIRE(deepest >= 0);
    CHECK(nodes[deepest].cpuset == n.cpuset);
    CHECK(nodes[deepest].depth >= n.depth);
  }
  for (int c = 0; c < t.NumCores(); ++c) {
    int numa = t.NumaOfCore(c);
    std::vector<int> cores = t.CoresOfNuma(numa);
    CHECK(std::find(cores.begin(), cores.end(), c) != cores.end());
  }
}

std::vector<int> Kinds(const Topology& t, int node) {
  std::vector<int> kinds;
  for (int n = node; n >= 0; n = t.node(n).parent)
    kinds.insert(kinds.begin(), static_cast<int>(t.node(n).kind));
  return kinds;
}

TEST_CASE("TopologySource::Parse accepts the documented forms",
          "[topology]") {
  using Kind = TopologySource::Kind;
  CHECK(TopologySource::Parse("").kind == Kind::kNative);
  CHECK(TopologySource::Parse("native").kind == Kind::kNative);
  CHECK(TopologySource::Parse("  native ").kind == Kind::kNative);

  TopologySource s = TopologySource::Parse("synthetic:package:2 core:4 pu:1");
  CHECK(s.kind == Kind::kSynthetic);
  CHECK(s.value == "package:2 core:4 pu:1");

  s = TopologySource::Parse("package:2 core:4");
  CHECK(s.kind == Kind::kSynthetic);
  CHECK(s.value == "package:2 core:4");

  s = TopologySource::Parse("xml:/data/machine.dump");
  CHECK(s.kind == Kind::kXml);
  CHECK(s.value == "/data/machine.dump");

  s = TopologySource::Parse("/data/machine.xml");
  CHECK(s.kind == Kind::kXml);
  CHECK(s.value == "/data/machine.xml");

  for (const char* text :
       {"native", "synthetic:package:2 core:4 pu:1", "xml:/a/b.xml"}) {
    CHECK(TopologySource::Parse(text).ToString() == text);
  }
}

TEST_CASE("TopologySource::Parse rejects garbage naming the forms",
          "[topology]") {
  for (const char* text :
       {"garbage", "nativ", "package:2 junk", "synthetic:", "xml:", ":2"}) {
    INFO(text);
    std::string msg =
        InvalidArgumentMessage([&] { TopologySource::Parse(text); });
    CHECK_THAT(msg, Catch::Contains("invalid topology '" + std::string(text) +
                                    "'"));
    CHECK_THAT(msg, Catch::Contains("'synthetic:<description>'"));
    CHECK_THAT(msg, Catch::Contains("'xml:<path>'"));
  }
}

TEST_CASE("two packages, two NUMA nodes each, one L3 per NUMA node",
          "[topology]") {
  auto t = Topology::Load(std::string("synthetic:") + kTwoSocketNuma);
  CheckInvariants(*t);
  CHECK_FALSE(t->is_native());
  CHECK(t->source().kind == TopologySource::Kind::kSynthetic);
  CHECK(t->NumCores() == 24);
  CHECK(t->Count(NodeKind::kPackage) == 2);
  CHECK(t->Count(NodeKind::kNuma) == 4);
  CHECK(t->NumNuma() == 4);
  CHECK(t->Count(NodeKind::kL3) == 4);
  CHECK(t->Count(NodeKind::kL2) == 0);
  CHECK(t->Count(NodeKind::kL1) == 0);
  CHECK(t->Nodes().size() == 1 + 2 + 4 + 4 + 24);

  // NUMA nodes and L3s share a cpuset; NUMA nests outside.
  using K = NodeKind;
  const std::vector<int> expected_path = {
      static_cast<int>(K::kMachine), static_cast<int>(K::kPackage),
      static_cast<int>(K::kNuma), static_cast<int>(K::kL3),
      static_cast<int>(K::kCore)};
  for (int c = 0; c < 24; ++c) CHECK(Kinds(*t, t->CoreNode(c)) == expected_path);

  CHECK(t->node(t->FindByName("package:1")).cpuset == CpuSet::Range(12, 23));
  CHECK(t->node(t->FindByName("numa:1")).cpuset == CpuSet::Range(6, 11));
  CHECK(t->node(t->FindByName("l3:3")).cpuset == CpuSet::Range(18, 23));
  CHECK(t->node(t->FindByName("l3:1")).parent == t->FindByName("numa:1"));
  CHECK(t->node(t->FindByName("numa:2")).parent == t->FindByName("package:1"));
  CHECK(t->node(t->FindByName("core:7")).parent == t->FindByName("l3:1"));
  CHECK(t->Root().children ==
        std::vector<int>{t->FindByName("package:0"),
                         t->FindByName("package:1")});

  CHECK(t->DeepestContaining({0, 1}) == t->FindByName("l3:0"));
  CHECK(t->DeepestContaining({0, 6}) == t->FindByName("package:0"));
  CHECK(t->DeepestContaining({0, 12}) == 0);
  CHECK(t->DeepestContaining({5}) == t->FindByName("core:5"));
  CHECK(t->DeepestContaining(CpuSet::Range(6, 11)) == t->FindByName("l3:1"));
  CHECK(t->DeepestContaining(t->AllCores()) == 0);
  CHECK(t->DeepestContaining({}) == -1);
  CHECK(t->DeepestContaining({24}) == -1);
  CHECK(t->DeepestContaining({3, 24}) == -1);

  CHECK(t->NumaOfCore(0) == 0);
  CHECK(t->NumaOfCore(6) == 1);
  CHECK(t->NumaOfCore(23) == 3);
  CHECK(t->CoresOfNuma(2) == std::vector<int>{12, 13, 14, 15, 16, 17});
  CHECK_THAT(InvalidArgumentMessage([&] { t->CoresOfNuma(4); }),
             Catch::Contains("NUMA node 4 does not exist") &&
                 Catch::Contains("NUMA nodes 0-3"));
  CHECK_THAT(InvalidArgumentMessage([&] { t->NumaOfCore(24); }),
             Catch::Contains("core 24 does not exist"));

  CHECK(t->FindByName("numa:4") == -1);
  CHECK(t->FindByName("gpu:0") == -1);
  CHECK(t->FindByName("l3") == -1);
  CHECK(t->FindByName("l3:x") == -1);
  CHECK(t->FindByName("l3:-1") == -1);
  CHECK(t->Find(NodeKind::kL2, 0) == -1);

  int cur = t->CurrentCore();
  CHECK(cur >= 0);
  CHECK(cur < 24);
}

TEST_CASE("KNL-like: four NUMA clusters of 16 cores, 4 PUs per core",
          "[topology]") {
  auto t = Synthetic(kKnlLike);
  CheckInvariants(*t);
  CHECK(t->NumCores() == 64);
  CHECK(t->Count(NodeKind::kPackage) == 0);
  CHECK(t->NumNuma() == 4);
  CHECK(t->Nodes().size() == 1 + 4 + 64);
  CHECK(t->node(t->FindByName("numa:3")).cpuset == CpuSet::Range(48, 63));
  CHECK(t->node(t->FindByName("numa:3")).depth == 1);
  CHECK(t->node(t->CoreNode(17)).parent == t->FindByName("numa:1"));
  CHECK(t->NumaOfCore(47) == 2);
  CHECK(t->CoresOfNuma(0).size() == 16);
  CHECK(t->DeepestContaining({16, 31}) == t->FindByName("numa:1"));
  CHECK(t->DeepestContaining({15, 16}) == 0);
}

TEST_CASE("dual-socket 48 cores, 2 PUs per core", "[topology]") {
  auto t = Synthetic(kDualSocket48);
  CheckInvariants(*t);
  CHECK(t->NumCores() == 48);
  CHECK(t->Count(NodeKind::kPackage) == 2);
  CHECK(t->NumNuma() == 2);
  CHECK(t->Count(NodeKind::kL3) == 2);
  // Package, NUMA node and L3 cover the same cores and nest in kind order.
  int core30 = t->CoreNode(30);
  CHECK(t->node(core30).depth == 4);
  CHECK(t->node(t->node(core30).parent).name == "l3:1");
  CHECK(Kinds(*t, core30) ==
        std::vector<int>{static_cast<int>(NodeKind::kMachine),
                         static_cast<int>(NodeKind::kPackage),
                         static_cast<int>(NodeKind::kNuma),
                         static_cast<int>(NodeKind::kL3),
                         static_cast<int>(NodeKind::kCore)});
  CHECK(t->node(t->FindByName("numa:1")).cpuset == CpuSet::Range(24, 47));
  CHECK(t->DeepestContaining({0, 23}) == t->FindByName("l3:0"));
  CHECK(t->DeepestContaining({23, 24}) == 0);
  CHECK(t->NumaOfCore(24) == 1);
}

TEST_CASE("a machine without an explicit NUMA level", "[topology]") {
  auto t = Synthetic(kTiny);
  CheckInvariants(*t);
  CHECK(t->NumCores() == 2);
  // hwloc always reports at least one NUMA node covering the machine.
  CHECK(t->NumNuma() == 1);
  CHECK(t->NumaOfCore(1) == 0);
  CHECK(t->CoresOfNuma(0) == std::vector<int>{0, 1});
  CHECK(t->Describe() ==
        "machine:0 {0-1}\n"
        "  package:0 {0-1}\n"
        "    numa:0 {0-1}\n"
        "      core:0 {0}\n"
        "      core:1 {1}\n");
  CHECK(t->DeepestContaining({0, 1}) == t->FindByName("numa:0"));
}

TEST_CASE("PUs stand for cores when there is no Core level", "[topology]") {
  auto t = Synthetic("pu:3");
  CheckInvariants(*t);
  CHECK(t->NumCores() == 3);
  CHECK(t->node(t->CoreNode(2)).name == "core:2");
}

TEST_CASE("only caches shared by several cores are kept", "[topology]") {
  // Each L2 serves two cores; each L1 serves one.
  auto t = Synthetic("package:1 l3:1 l2:2 l1:2 core:1 pu:2");
  CheckInvariants(*t);
  CHECK(t->NumCores() == 4);
  CHECK(t->Count(NodeKind::kL3) == 1);
  CHECK(t->Count(NodeKind::kL2) == 2);
  CHECK(t->Count(NodeKind::kL1) == 0);
  CHECK(t->node(t->FindByName("l2:1")).cpuset == CpuSet{2, 3});
  CHECK(t->node(t->CoreNode(3)).parent == t->FindByName("l2:1"));
  CHECK(t->DeepestContaining({2, 3}) == t->FindByName("l2:1"));
  CHECK(t->DeepestContaining({1, 2}) == t->FindByName("l3:0"));
}

TEST_CASE("binding is skipped on a synthetic topology", "[topology]") {
  auto t = Synthetic(kTwoSocketNuma);
  CHECK_FALSE(t->BindThreadToCore(3));
  CHECK_FALSE(t->BindThreadToCpuSet({0, 1, 2}));
  CHECK_THAT(InvalidArgumentMessage([&] { t->BindThreadToCore(24); }),
             Catch::Contains("core 24 does not exist: this topology has "
                             "cores 0-23"));
  CHECK_THAT(InvalidArgumentMessage([&] { t->BindThreadToCore(-1); }),
             Catch::Contains("core -1 does not exist"));
  CHECK_THAT(InvalidArgumentMessage([&] { t->BindThreadToCpuSet({2, 30}); }),
             Catch::Contains("core 30 does not exist"));
  CHECK_THAT(InvalidArgumentMessage([&] { t->BindThreadToCpuSet({}); }),
             Catch::Contains("empty cpuset"));
}

TEST_CASE("native topology binds the calling thread", "[topology][native]") {
  auto t = Topology::Load("native");
  CheckInvariants(*t);
  CHECK(t->is_native());
  REQUIRE(t->NumCores() >= 1);

  // Check the binding against hwloc directly rather than through
  // CurrentCore(), which shares the PU map under test.
  hwloc_topology_t hw;
  REQUIRE(hwloc_topology_init(&hw) == 0);
  REQUIRE(hwloc_topology_load(hw) == 0);
  hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                       : HWLOC_OBJ_PU;
  hwloc_obj_t core0 = hwloc_get_obj_by_type(hw, core_type, 0);
  REQUIRE(core0 != nullptr);

  // A fresh thread, so the test runner's own affinity is left alone.
  bool bound = false;
  int cpu = -1;
  int current = -1;
  std::thread worker([&] {
    bound = t->BindThreadToCore(0);
    cpu = sched_getcpu();
    current = t->CurrentCore();
  });
  worker.join();
  CHECK(bound);
  REQUIRE(cpu >= 0);
  CHECK(hwloc_bitmap_isset(core0->cpuset, static_cast<unsigned>(cpu)));
  CHECK(current == 0);
  hwloc_topology_destroy(hw);

  CHECK_THAT(
      InvalidArgumentMessage([&] { t->BindThreadToCore(t->NumCores()); }),
      Catch::Contains("core " + std::to_string(t->NumCores()) +
                      " does not exist"));
}

TEST_CASE("an XML export loads to the same tree", "[topology]") {
  hwloc_topology_t hw;
  REQUIRE(hwloc_topology_init(&hw) == 0);
  REQUIRE(hwloc_topology_set_synthetic(hw, kTwoSocketNuma) == 0);
  REQUIRE(hwloc_topology_load(hw) == 0);
  std::string path = TempPath("two_socket.xml");
  REQUIRE(hwloc_topology_export_xml(hw, path.c_str(), 0) == 0);
  hwloc_topology_destroy(hw);

  auto from_xml = Topology::Load("xml:" + path);
  auto bare_path = Topology::Load(path);
  auto synthetic = Synthetic(kTwoSocketNuma);
  CheckInvariants(*from_xml);
  CHECK(from_xml->source().kind == TopologySource::Kind::kXml);
  CHECK(from_xml->source().value == path);
  CHECK_FALSE(from_xml->is_native());
  CHECK(from_xml->NumCores() == 24);
  CHECK(from_xml->Describe() == synthetic->Describe());
  CHECK(bare_path->Describe() == synthetic->Describe());
  CHECK_FALSE(from_xml->BindThreadToCore(0));
  std::remove(path.c_str());
}

TEST_CASE("bad topologies are refused with the source named", "[topology]") {
  std::string msg = InvalidArgumentMessage(
      [] { Topology::Load("synthetic:package:2 bogus:3 pu:1"); });
  CHECK_THAT(msg, Catch::Contains(
                      "invalid synthetic topology 'package:2 bogus:3 pu:1'"));
  CHECK_THAT(msg, Catch::Contains("'package:2 numa:2 l3:1 core:6 pu:1'"));

  msg = InvalidArgumentMessage(
      [] { Topology::Load("xml:/nonexistent/rondo/machine.xml"); });
  CHECK_THAT(msg, Catch::Contains("'/nonexistent/rondo/machine.xml'"));
  CHECK_THAT(msg, Catch::Contains("No such file or directory"));

  std::string garbage = TempPath("garbage.xml");
  {
    std::ofstream out(garbage);
    out << "this is not an hwloc export\n";
  }
  msg = InvalidArgumentMessage([&] { Topology::Load("xml:" + garbage); });
  CHECK_THAT(msg, Catch::Contains("invalid XML topology '" + garbage + "'"));
  CHECK_THAT(msg, Catch::Contains("hwloc XML export"));
  std::remove(garbage.c_str());

  msg = InvalidArgumentMessage([] { Topology::Load("not a topology"); });
  CHECK_THAT(msg, Catch::Contains("invalid topology 'not a topology'"));

  // More cores than a CpuSet holds.
  msg = InvalidArgumentMessage([] { Synthetic("package:2 core:300 pu:1"); });
  CHECK_THAT(msg, Catch::Contains("has 600 cores"));
  CHECK_THAT(msg, Catch::Contains("1..512"));
}

TEST_CASE("NodeKindName names every kind", "[topology]") {
  CHECK(NodeKindName(NodeKind::kMachine) == "machine");
  CHECK(NodeKindName(NodeKind::kPackage) == "package");
  CHECK(NodeKindName(NodeKind::kNuma) == "numa");
  CHECK(NodeKindName(NodeKind::kL3) == "l3");
  CHECK(NodeKindName(NodeKind::kL2) == "l2");
  CHECK(NodeKindName(NodeKind::kL1) == "l1");
  CHECK(NodeKindName(NodeKind::kCore) == "core");
}

}  // namespace
}  // namespace rondo::topology
