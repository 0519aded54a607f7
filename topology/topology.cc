#include "topology/topology.h"

#include <hwloc.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "topology/check.h"
#include "topology/internal/text.h"
#include "topology/base/log.h"

namespace rondo::topology {

// Owns the hwloc topology for the Topology's lifetime: binding needs it after
// Load(), and hwloc must be the only place that knows the OS PU layout.
struct Topology::HwlocState {
  hwloc_topology_t topology = nullptr;

  HwlocState() = default;
  HwlocState(const HwlocState&) = delete;
  HwlocState& operator=(const HwlocState&) = delete;
  ~HwlocState() {
    if (topology != nullptr) hwloc_topology_destroy(topology);
  }
};

namespace {

constexpr int kNumKinds = static_cast<int>(NodeKind::kCore) + 1;

constexpr const char* kSyntheticHint =
    "expected an hwloc synthetic description: levels of <type>:<count> from "
    "the top down, ending with pu, such as 'package:2 numa:2 l3:1 core:6 pu:1'";

constexpr const char* kSourceForms =
    "expected '' or 'native' (this machine), 'synthetic:<description>' (e.g. "
    "'synthetic:package:2 numa:2 l3:1 core:6 pu:1'), 'xml:<path>' (an hwloc "
    "XML export), a bare synthetic description or a path ending in '.xml'";

constexpr const char* kXmlHint =
    "expected an hwloc XML export, e.g. written by 'lstopo machine.xml'";

std::string InvalidXmlMessage(const std::string& path) {
  return "invalid XML topology '" + path + "': hwloc could not parse it; " +
         kXmlHint;
}

using internal::Trim;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A bare RONDO_TOPOLOGY value is taken as synthetic when every token looks
// like "<type>:<count>"; hwloc itself validates it at Load(), which gives the
// precise error. Anything else is more likely a typo than a description.
bool LooksSynthetic(std::string_view text) {
  bool any = false;
  while (true) {
    text = Trim(text);
    if (text.empty()) return any;
    size_t end = 0;
    while (end < text.size() &&
           !std::isspace(static_cast<unsigned char>(text[end])))
      ++end;
    std::string_view token = text.substr(0, end);
    size_t colon = token.find(':');
    if (colon == std::string_view::npos || colon == 0 ||
        colon + 1 == token.size())
      return false;
    any = true;
    text.remove_prefix(end);
  }
}

// Maps the hwloc types Rondo keeps to node kinds; false for the others
// (groups, dies, instruction caches, PUs under cores, I/O, ...).
bool KindOfType(hwloc_obj_t obj, NodeKind* kind) {
  switch (obj->type) {
    case HWLOC_OBJ_PACKAGE:
      *kind = NodeKind::kPackage;
      return true;
    case HWLOC_OBJ_L3CACHE:
      *kind = NodeKind::kL3;
      return true;
    case HWLOC_OBJ_L2CACHE:
      *kind = NodeKind::kL2;
      return true;
    case HWLOC_OBJ_L1CACHE:
      if (obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) return false;
      *kind = NodeKind::kL1;
      return true;
    default:
      return false;
  }
}

bool IsCache(NodeKind kind) {
  return kind == NodeKind::kL3 || kind == NodeKind::kL2 ||
         kind == NodeKind::kL1;
}

// An object of the hwloc tree before it is placed in Rondo's tree.
struct Candidate {
  NodeKind kind;
  CpuSet cpuset;
};

// hwloc bitmaps are heap objects; this keeps every early return leak-free.
struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

std::string CoreRangeText(int num_cores) {
  return num_cores == 1 ? "only core 0"
                        : "cores 0-" + std::to_string(num_cores - 1);
}

}  // namespace

std::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kMachine:
      return "machine";
    case NodeKind::kPackage:
      return "package";
    case NodeKind::kNuma:
      return "numa";
    case NodeKind::kL3:
      return "l3";
    case NodeKind::kL2:
      return "l2";
    case NodeKind::kL1:
      return "l1";
    case NodeKind::kCore:
      return "core";
  }
  return "unknown";
}

TopologySource TopologySource::Parse(const std::string& text) {
  std::string_view t = Trim(text);
  TopologySource source;
  if (t.empty() || t == "native") return source;

  auto with_value = [&](Kind kind, std::string_view value) {
    value = Trim(value);
    if (value.empty()) {
      throw std::invalid_argument("invalid topology '" + text +
                                  "': missing value after the prefix; " +
                                  kSourceForms);
    }
    source.kind = kind;
    source.value = std::string(value);
    return source;
  };
  if (StartsWith(t, "synthetic:"))
    return with_value(Kind::kSynthetic, t.substr(std::strlen("synthetic:")));
  if (StartsWith(t, "xml:"))
    return with_value(Kind::kXml, t.substr(std::strlen("xml:")));
  if (t.size() > 4 && t.substr(t.size() - 4) == ".xml")
    return with_value(Kind::kXml, t);
  if (LooksSynthetic(t)) return with_value(Kind::kSynthetic, t);
  throw std::invalid_argument("invalid topology '" + text + "': " +
                              kSourceForms);
}

std::string TopologySource::ToString() const {
  switch (kind) {
    case Kind::kNative:
      return "native";
    case Kind::kSynthetic:
      return "synthetic:" + value;
    case Kind::kXml:
      return "xml:" + value;
  }
  return "unknown";
}

std::shared_ptr<const Topology> Topology::Load(const std::string& text) {
  return Load(TopologySource::Parse(text));
}

std::shared_ptr<const Topology> Topology::Load(const TopologySource& source) {
  auto state = std::make_unique<HwlocState>();
  if (hwloc_topology_init(&state->topology) != 0) {
    state->topology = nullptr;
    throw std::runtime_error("hwloc_topology_init failed: " +
                             std::string(std::strerror(errno)));
  }

  switch (source.kind) {
    case TopologySource::Kind::kNative:
      break;
    case TopologySource::Kind::kSynthetic:
      if (hwloc_topology_set_synthetic(state->topology,
                                       source.value.c_str()) != 0) {
        throw std::invalid_argument("invalid synthetic topology '" +
                                    source.value + "': " + kSyntheticHint);
      }
      break;
    case TopologySource::Kind::kXml: {
      // hwloc's own error for a missing file is a generic load failure, so
      // check first and report the path with the OS reason.
      std::FILE* file = std::fopen(source.value.c_str(), "r");
      if (file == nullptr) {
        throw std::invalid_argument("cannot read XML topology '" +
                                    source.value + "': " +
                                    std::strerror(errno) + "; " + kXmlHint);
      }
      std::fclose(file);
      // hwloc parses the file here (and sometimes only in load below).
      if (hwloc_topology_set_xml(state->topology, source.value.c_str()) != 0)
        throw std::invalid_argument(InvalidXmlMessage(source.value));
      break;
    }
  }

  if (hwloc_topology_load(state->topology) != 0) {
    std::string reason = std::strerror(errno);
    if (source.kind == TopologySource::Kind::kNative) {
      throw std::runtime_error("hwloc could not load this machine's "
                               "topology: " + reason);
    }
    if (source.kind == TopologySource::Kind::kXml)
      throw std::invalid_argument(InvalidXmlMessage(source.value));
    throw std::invalid_argument("invalid synthetic topology '" + source.value +
                                "': hwloc could not build it (" + reason +
                                "); " + kSyntheticHint);
  }

  std::shared_ptr<Topology> topology(new Topology());
  topology->source_ = source;
  topology->hwloc_ = std::move(state);
  topology->Build();
  return topology;
}

Topology::~Topology() = default;

void Topology::Build() {
  hwloc_topology_t topo = hwloc_->topology;

  // Cores are hwloc Core objects in logical order. Some topologies (VMs,
  // "pu:4" synthetic ones, some XML exports) have no Core level: then each
  // PU is a core, which is what the OS schedules anyway.
  hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                         : HWLOC_OBJ_PU;
  int num_cores = hwloc_get_nbobjs_by_type(topo, core_type);
  if (num_cores <= 0 || num_cores > CpuSet::kMaxCores) {
    throw std::invalid_argument(
        "topology '" + source_.ToString() + "' has " +
        std::to_string(std::max(num_cores, 0)) + " cores; Rondo supports 1.." +
        std::to_string(CpuSet::kMaxCores) + " cores (CpuSet::kMaxCores)");
  }
  std::vector<hwloc_obj_t> cores(num_cores);
  for (int i = 0; i < num_cores; ++i) {
    cores[i] = hwloc_get_obj_by_type(topo, core_type, i);
    RONDO_CHECK(cores[i] != nullptr && cores[i]->cpuset != nullptr &&
                    !hwloc_bitmap_iszero(cores[i]->cpuset),
                "hwloc core without processors");
  }

  // hwloc cpusets are in OS PU numbers; Rondo's are in core indices.
  auto to_cpuset = [&](hwloc_const_cpuset_t set) {
    CpuSet result;
    if (set == nullptr) return result;
    for (int i = 0; i < num_cores; ++i) {
      if (hwloc_bitmap_isincluded(cores[i]->cpuset, set)) result.Set(i);
    }
    return result;
  };

  // Collect the objects of the kinds Rondo keeps. Walking every depth
  // (rather than asking for a type) stays correct for types that hwloc
  // places at several depths; NUMA nodes are memory children in hwloc 2 and
  // live at a virtual depth of their own.
  std::vector<Candidate> candidates;
  candidates.push_back({NodeKind::kMachine, CpuSet::Range(0, num_cores - 1)});
  int depth_count = hwloc_topology_get_depth(topo);
  for (int d = 0; d < depth_count; ++d) {
    int width = hwloc_get_nbobjs_by_depth(topo, d);
    for (int i = 0; i < width; ++i) {
      hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, d, i);
      NodeKind kind;
      if (!KindOfType(obj, &kind)) continue;
      CpuSet set = to_cpuset(obj->cpuset);
      // A cache serving one core adds nothing to that core's own queue.
      if (IsCache(kind) && set.Count() < 2) continue;
      if (!set.Empty()) candidates.push_back({kind, set});
    }
  }
  for (hwloc_obj_t numa =
           hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr);
       numa != nullptr;
       numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa)) {
    // CPU-less NUMA nodes (e.g. CXL or HBM memory alone) have no core to
    // schedule on, so they have no place in the tree.
    CpuSet set = to_cpuset(numa->cpuset);
    if (!set.Empty()) candidates.push_back({NodeKind::kNuma, set});
  }
  for (int i = 0; i < num_cores; ++i)
    candidates.push_back({NodeKind::kCore, CpuSet::Single(i)});

  // Larger sets first, so every node's parent is placed before it; equal
  // sets nest in kind order (the machine comes first as the largest).
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (a.cpuset.Count() != b.cpuset.Count())
                       return a.cpuset.Count() > b.cpuset.Count();
                     if (a.kind != b.kind) return a.kind < b.kind;
                     return a.cpuset.First() < b.cpuset.First();
                   });
  RONDO_CHECK(candidates[0].kind == NodeKind::kMachine, "machine is not first");

  // Insert each candidate under the deepest node placed so far that
  // contains it. Objects of a level partition their parent's cores, so at
  // most one child contains the candidate at each step.
  std::vector<Node> tree;
  tree.push_back(Node{candidates[0].kind, 0, 0, -1, {}, candidates[0].cpuset,
                      ""});
  for (size_t c = 1; c < candidates.size(); ++c) {
    const Candidate& cand = candidates[c];
    int at = 0;
    while (true) {
      int next = -1;
      for (int child : tree[at].children) {
        if (tree[child].cpuset.Contains(cand.cpuset)) {
          next = child;
          break;
        }
      }
      if (next < 0) break;
      at = next;
    }
    // Same kind and same cores is the same scheduling domain (e.g. KNL's
    // DDR and MCDRAM NUMA nodes of one cluster): keep one.
    if (tree[at].kind == cand.kind && tree[at].cpuset == cand.cpuset) continue;
    tree[at].children.push_back(static_cast<int>(tree.size()));
    tree.push_back(Node{cand.kind, 0, 0, at, {}, cand.cpuset, ""});
  }

  // Renumber in depth-first order with children by first core, so node 0
  // is the machine, parents precede children and Describe() is a plain
  // loop.
  for (Node& n : tree) {
    std::stable_sort(n.children.begin(), n.children.end(), [&](int a, int b) {
      return tree[a].cpuset.First() < tree[b].cpuset.First();
    });
  }
  std::vector<int> order;
  std::vector<int> new_index(tree.size(), -1);
  std::function<void(int)> visit = [&](int i) {
    new_index[i] = static_cast<int>(order.size());
    order.push_back(i);
    for (int child : tree[i].children) visit(child);
  };
  visit(0);
  nodes_.clear();
  for (int old : order) {
    Node n = tree[old];
    n.parent = n.parent < 0 ? -1 : new_index[n.parent];
    n.depth = n.parent < 0 ? 0 : nodes_[n.parent].depth + 1;
    for (int& child : n.children) child = new_index[child];
    nodes_.push_back(std::move(n));
  }

  // Per-kind indices follow the first core, so "numa:1" is the second NUMA
  // node a reader meets when counting cores.
  for (auto& list : nodes_by_kind_) list.clear();
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i)
    nodes_by_kind_[static_cast<int>(nodes_[i].kind)].push_back(i);
  for (auto& list : nodes_by_kind_) {
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      return nodes_[a].cpuset.First() < nodes_[b].cpuset.First();
    });
    for (int k = 0; k < static_cast<int>(list.size()); ++k) {
      Node& n = nodes_[list[k]];
      n.index = k;
      n.name = std::string(NodeKindName(n.kind)) + ":" + std::to_string(k);
    }
  }

  const std::vector<int>& core_list =
      nodes_by_kind_[static_cast<int>(NodeKind::kCore)];
  RONDO_CHECK(static_cast<int>(core_list.size()) == num_cores,
              "core nodes do not match hwloc cores");
  core_nodes_ = core_list;

  // NUMA node of each core: its NUMA ancestor, or, when a NUMA node does
  // not nest with the other levels, the first NUMA node that has the core.
  const std::vector<int>& numa_list =
      nodes_by_kind_[static_cast<int>(NodeKind::kNuma)];
  core_numa_.assign(num_cores, 0);
  for (int core = 0; core < num_cores; ++core) {
    int found = -1;
    for (int n = core_nodes_[core]; n >= 0; n = nodes_[n].parent) {
      if (nodes_[n].kind == NodeKind::kNuma) {
        found = nodes_[n].index;
        break;
      }
    }
    for (size_t k = 0; found < 0 && k < numa_list.size(); ++k) {
      if (nodes_[numa_list[k]].cpuset.Test(core)) found = static_cast<int>(k);
    }
    core_numa_[core] = found < 0 ? 0 : found;
  }

  // OS processor numbers of each core, for binding and CurrentCore().
  core_pus_.assign(num_cores, {});
  unsigned max_pu = 0;
  for (int core = 0; core < num_cores; ++core) {
    unsigned pu;
    hwloc_bitmap_foreach_begin(pu, cores[core]->cpuset) {
      core_pus_[core].push_back(pu);
      max_pu = std::max(max_pu, pu);
    }
    hwloc_bitmap_foreach_end();
  }
  pu_to_core_.assign(max_pu + 1, -1);
  for (int core = 0; core < num_cores; ++core) {
    for (unsigned pu : core_pus_[core]) pu_to_core_[pu] = core;
  }
}

int Topology::Count(NodeKind kind) const {
  return static_cast<int>(nodes_by_kind_[static_cast<int>(kind)].size());
}

int Topology::Find(NodeKind kind, int index) const {
  const std::vector<int>& list = nodes_by_kind_[static_cast<int>(kind)];
  if (index < 0 || index >= static_cast<int>(list.size())) return -1;
  return list[index];
}

int Topology::FindByName(std::string_view name) const {
  size_t colon = name.find(':');
  if (colon == std::string_view::npos) return -1;
  std::string_view kind_name = name.substr(0, colon);
  std::string_view number = name.substr(colon + 1);
  int index = 0;
  auto [end, ec] =
      std::from_chars(number.data(), number.data() + number.size(), index);
  if (ec != std::errc() || end != number.data() + number.size()) return -1;
  for (int k = 0; k < kNumKinds; ++k) {
    if (NodeKindName(static_cast<NodeKind>(k)) == kind_name)
      return Find(static_cast<NodeKind>(k), index);
  }
  return -1;
}

int Topology::DeepestContaining(const CpuSet& cpuset) const {
  if (cpuset.Empty() || !AllCores().Contains(cpuset)) return -1;
  int first = cpuset.First();
  // The common case (a task pinned to one core) needs no walk.
  if (cpuset.Count() == 1) return core_nodes_[first];
  // Every node containing the set contains its first core, so they are all
  // ancestors of that core's leaf; the first one met going up is deepest.
  int n = core_nodes_[first];
  while (!nodes_[n].cpuset.Contains(cpuset)) n = nodes_[n].parent;
  return n;
}

int Topology::NumaOfCore(int core) const {
  if (core < 0 || core >= NumCores()) {
    throw std::invalid_argument("core " + std::to_string(core) +
                                " does not exist: this topology has " +
                                CoreRangeText(NumCores()));
  }
  return core_numa_[core];
}

std::vector<int> Topology::CoresOfNuma(int numa) const {
  std::vector<int> result;
  if (NumNuma() == 0) {
    for (int c = 0; c < NumCores(); ++c) result.push_back(c);
    return result;
  }
  int n = Find(NodeKind::kNuma, numa);
  if (n < 0) {
    throw std::invalid_argument(
        "NUMA node " + std::to_string(numa) +
        " does not exist: this topology has NUMA nodes 0-" +
        std::to_string(NumNuma() - 1));
  }
  const CpuSet& set = nodes_[n].cpuset;
  for (int c = set.First(); c >= 0; c = set.Next(c)) result.push_back(c);
  return result;
}

int Topology::NumNuma() const { return Count(NodeKind::kNuma); }

int Topology::CurrentCore() const {
  int cpu = sched_getcpu();
  if (cpu < 0) return 0;
  if (is_native() && cpu < static_cast<int>(pu_to_core_.size()) &&
      pu_to_core_[cpu] >= 0) {
    return pu_to_core_[cpu];
  }
  // Not this machine's layout (or a PU hwloc did not report): any valid
  // core keeps callers' per-core arrays in bounds.
  return cpu % NumCores();
}

bool Topology::BindThreadToCore(int core) const {
  if (core < 0 || core >= NumCores()) {
    throw std::invalid_argument("core " + std::to_string(core) +
                                " does not exist: this topology has " +
                                CoreRangeText(NumCores()));
  }
  return BindThreadToCpuSet(CpuSet::Single(core));
}

bool Topology::BindThreadToCpuSet(const CpuSet& cpuset) const {
  if (cpuset.Empty()) {
    throw std::invalid_argument(
        "cannot bind a thread to the empty cpuset {}: give at least one of " +
        CoreRangeText(NumCores()));
  }
  if (!AllCores().Contains(cpuset)) {
    // Core indices are never negative, so the culprit is past the last core.
    int bad = cpuset.Next(NumCores() - 1);
    throw std::invalid_argument("core " + std::to_string(bad) +
                                " does not exist: this topology has " +
                                CoreRangeText(NumCores()));
  }
  // Binding to a machine we are not running on (synthetic, XML, or hwloc
  // redirected by HWLOC_XMLFILE and friends) would pin threads to unrelated
  // processors; skip it, and say so once rather than per thread.
  if (!is_native() || !hwloc_topology_is_thissystem(hwloc_->topology)) {
    if (!warned_.exchange(true)) {
      RONDO_LOG_WARN(
          "topology '{}' is not the real machine; thread binding is skipped",
          source_.ToString());
    }
    return false;
  }
  Bitmap set(hwloc_bitmap_alloc());
  if (set == nullptr) return false;
  for (int c = cpuset.First(); c >= 0; c = cpuset.Next(c)) {
    for (unsigned pu : core_pus_[c]) hwloc_bitmap_set(set.get(), pu);
  }
  return hwloc_set_cpubind(hwloc_->topology, set.get(),
                           HWLOC_CPUBIND_THREAD) == 0;
}

std::string Topology::Describe() const {
  // nodes_ is in depth-first order, so indenting by depth draws the tree.
  std::string out;
  for (const Node& n : nodes_) {
    out.append(2 * n.depth, ' ');
    out += n.name;
    out += ' ';
    out += n.cpuset.ToString();
    out += '\n';
  }
  return out;
}

}  // namespace rondo::topology
