// Topology: an immutable tree of the machine (machine, package, NUMA node,
// shared caches, core), loaded with hwloc from the real machine, from an hwloc
// synthetic description, or from an hwloc XML export.
//
// This is the only module that includes hwloc. Everything above it talks in
// core indices (0..NumCores()-1, hwloc's logical order of Core objects) and
// node indices into Nodes().
//
// The tree keeps one node per distinct object of the kinds above. Caches that
// serve a single core (private L1/L2) are left out: a per-core queue already
// covers them. Objects are nested by cpuset inclusion, so NUMA nodes (which
// hwloc 2 attaches as memory children) appear as ordinary levels, e.g.
// machine > package > numa > l3 > core. Objects with equal cpusets nest in
// the order machine, package, numa, l3, l2, l1, core.
//
// Thread-safety: immutable after Load(); every const method may be called
// from any thread. Bind* methods only affect the calling thread.
#ifndef RONDO_TOPOLOGY_TOPOLOGY_H_
#define RONDO_TOPOLOGY_TOPOLOGY_H_

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topology/cpuset.h"

namespace rondo::topology {

enum class NodeKind { kMachine, kPackage, kNuma, kL3, kL2, kL1, kCore };

// "machine", "package", "numa", "l3", "l2", "l1", "core".
std::string_view NodeKindName(NodeKind kind);

struct Node {
  NodeKind kind;
  int index;        // index among nodes of the same kind (0-based, in order)
  int depth;        // 0 for the machine
  int parent;       // node index of the parent, -1 for the machine
  std::vector<int> children;  // node indices
  CpuSet cpuset;    // cores covered by this node
  std::string name; // "<kind>:<index>", e.g. "l3:0", "core:5", "machine:0"
};

// Where a topology comes from. Parse() accepts the RONDO_TOPOLOGY forms:
//   ""  or "native"            the real machine
//   "synthetic:<description>"  e.g. "synthetic:package:2 numa:2 l3:1 core:6 pu:1"
//   "xml:<path>"               an hwloc XML export (lstopo foo.xml)
// A bare description that hwloc accepts as synthetic ("package:2 core:4") and
// a bare path ending in ".xml" are accepted too.
struct TopologySource {
  enum class Kind { kNative, kSynthetic, kXml };
  Kind kind = Kind::kNative;
  std::string value;  // description or path

  // Throws std::invalid_argument naming the text and the allowed forms.
  static TopologySource Parse(const std::string& text);
  std::string ToString() const;
};

class Topology {
 public:
  // Loads a topology. Throws std::invalid_argument for an invalid synthetic
  // description, an unreadable XML file, a machine with no cores or more than
  // CpuSet::kMaxCores cores; the message names the source. Throws
  // std::runtime_error when hwloc cannot read the real machine.
  static std::shared_ptr<const Topology> Load(const TopologySource& source);
  // Shorthand for Load(TopologySource::Parse(text)).
  static std::shared_ptr<const Topology> Load(const std::string& text);

  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const TopologySource& source() const { return source_; }
  // True for the real machine (binding works); false for synthetic and XML
  // topologies (binding is a no-op that warns once).
  bool is_native() const { return source_.kind == TopologySource::Kind::kNative; }

  int NumCores() const { return static_cast<int>(core_nodes_.size()); }
  // Every core: {0..NumCores()-1}.
  const CpuSet& AllCores() const { return nodes_[0].cpuset; }
  const std::vector<Node>& Nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[i]; }
  const Node& Root() const { return nodes_[0]; }
  // Node index of core `core`'s leaf.
  int CoreNode(int core) const { return core_nodes_[core]; }
  // Number of nodes of a kind, and the node index of the i-th one (-1 if none).
  int Count(NodeKind kind) const;
  int Find(NodeKind kind, int index) const;
  // Node index by name ("l3:0"), -1 when there is none.
  int FindByName(std::string_view name) const;

  // The deepest node whose cpuset contains every core of `cpuset`, or -1 when
  // `cpuset` is empty or names a core the machine does not have.
  int DeepestContaining(const CpuSet& cpuset) const;

  // NUMA node index (0-based among NUMA nodes) of a core; 0 when the machine
  // reports no NUMA node.
  // Throws std::invalid_argument for a core that does not exist.
  int NumaOfCore(int core) const;
  // Cores of the i-th NUMA node, in order (all cores when there is none).
  // Throws std::invalid_argument for a NUMA node that does not exist.
  std::vector<int> CoresOfNuma(int numa) const;
  int NumNuma() const;

  // Core holding the OS processor number `os_pu` (as sched_getcpu() returns
  // it), or -1 when the topology has no such processor.
  int CoreOfPu(int os_pu) const {
    return os_pu >= 0 && os_pu < static_cast<int>(pu_to_core_.size())
               ? pu_to_core_[os_pu]
               : -1;
  }

  // Core that runs the calling thread now (sched_getcpu mapped through the
  // topology). For non-native topologies the OS processor number is folded
  // modulo NumCores(), so it is a valid but arbitrary core.
  int CurrentCore() const;

  // Binds the calling thread to the processors of `core` / of every core in
  // `cpuset`. Returns false with a warning on stderr (once per topology) when
  // the topology is not native; throws std::invalid_argument for a core that
  // does not exist or an empty cpuset; returns false when the OS refuses
  // (errno kept).
  bool BindThreadToCore(int core) const;
  bool BindThreadToCpuSet(const CpuSet& cpuset) const;

  // A multi-line drawing of the tree ("machine:0 {0-11}\n  package:0 ...").
  std::string Describe() const;

 private:
  struct HwlocState;
  Topology() = default;
  // Fills every member below from the loaded hwloc_ topology (Load() only).
  void Build();

  TopologySource source_;
  std::vector<Node> nodes_;
  std::vector<int> core_nodes_;            // core index -> node index
  std::vector<std::vector<unsigned>> core_pus_;  // core index -> OS PU numbers
  std::vector<int> pu_to_core_;            // OS PU number -> core (-1)
  std::vector<int> core_numa_;             // core index -> NUMA index
  // NodeKind -> node indices of that kind, in order of their index.
  std::array<std::vector<int>, 7> nodes_by_kind_;
  std::unique_ptr<HwlocState> hwloc_;
  mutable std::atomic<bool> warned_{false};
};

}  // namespace rondo::topology

#endif  // RONDO_TOPOLOGY_TOPOLOGY_H_
