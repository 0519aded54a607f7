#include "engine/placement.h"

#include <stdexcept>

namespace rondo::engine {
namespace {

std::string CoreRange(const topology::Topology& topo) {
  return "cores 0-" + std::to_string(topo.NumCores() - 1);
}

void CheckCore(const topology::Topology& topo, int core, const char* what) {
  if (core < 0 || core >= topo.NumCores())
    throw std::invalid_argument(std::string(what) + " asks for core " +
                                std::to_string(core) +
                                " but this machine has " + CoreRange(topo));
}

// NUMA node of each local rank (ranks spread evenly, in rank order).
int NumaOfRank(int numas, int local_rank, int local_size) {
  return static_cast<int>(static_cast<int64_t>(local_rank) * numas /
                          local_size);
}

}  // namespace

PlacementSpec PlacementSpec::Parse(const std::string& text) {
  PlacementSpec spec;
  if (text == "none") {
    spec.kind = PlacementKind::kNone;
  } else if (text == "bind") {
    spec.kind = PlacementKind::kBind;
  } else if (text == "numa") {
    spec.kind = PlacementKind::kNuma;
  } else if (text == "odd-even") {
    spec.kind = PlacementKind::kOddEven;
  } else if (text.rfind("cores:", 0) == 0) {
    spec.kind = PlacementKind::kCores;
    topology::CpuSet set;
    try {
      set = topology::CpuSet::Parse(text.substr(6));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("invalid placement '" + text + "': " +
                                  e.what());
    }
    if (set.Empty())
      throw std::invalid_argument("invalid placement '" + text +
                                  "': the core list is empty");
    for (int c = set.First(); c >= 0; c = set.Next(c)) spec.cores.push_back(c);
  } else {
    throw std::invalid_argument("invalid placement '" + text +
                                "': expected none|bind|numa|odd-even|"
                                "cores:<list such as 1,3-4>");
  }
  return spec;
}

std::string PlacementSpec::ToString() const {
  switch (kind) {
    case PlacementKind::kNone: return "none";
    case PlacementKind::kBind: return "bind";
    case PlacementKind::kNuma: return "numa";
    case PlacementKind::kOddEven: return "odd-even";
    case PlacementKind::kCores: {
      topology::CpuSet set;
      for (int c : cores) set.Set(c);
      std::string s = set.ToString();  // "{1,3-4}"
      return "cores:" + s.substr(1, s.size() - 2);
    }
  }
  return "?";
}

int NumaPlacement(int N, int n, int M) {
  if (N < 1 || n < 1 || M < 0 || M >= N)
    throw std::invalid_argument(
        "NumaPlacement(N=" + std::to_string(N) + ", n=" + std::to_string(n) +
        ", M=" + std::to_string(M) + "): expected N >= 1, n >= 1, 0 <= M < N");
  if (n >= N) return M;
  // delta = N / (N - n); floor(M / delta) and ceil((k + 1) * delta) computed
  // in integers to avoid rounding surprises.
  const int64_t free = N - n;
  const int64_t k = static_cast<int64_t>(M) * free / N;
  const int64_t top = ((k + 1) * N + free - 1) / free;  // ceil
  return static_cast<int>(top - 1);
}

int OddEvenPlacement(int p, int n, int r) {
  if (p < 1 || n < 1 || r < 0 || r >= n)
    throw std::invalid_argument(
        "OddEvenPlacement(p=" + std::to_string(p) + ", n=" + std::to_string(n) +
        ", r=" + std::to_string(r) + "): expected p >= 1, n >= 1, 0 <= r < n");
  if (n >= p) return -1;
  // p/(p-n) * (r mod (p-n)) + p/(p-n) - 1, rounded down.
  const int64_t d = p - n;
  return static_cast<int>(static_cast<int64_t>(p) * (r % d + 1) / d - 1);
}

int AppCoreOfRank(const topology::Topology& topo, int local_rank,
                  int local_size) {
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
    throw std::invalid_argument("local rank " + std::to_string(local_rank) +
                                " is outside 0.." +
                                std::to_string(local_size - 1));
  const int numas = topo.NumNuma();
  const int numa = NumaOfRank(numas, local_rank, local_size);
  int first = 0, count = 0;  // ranks of this NUMA node
  for (int r = 0; r < local_size; ++r) {
    if (NumaOfRank(numas, r, local_size) == numa) {
      if (count == 0) first = r;
      ++count;
    }
  }
  const std::vector<int> cores = topo.CoresOfNuma(numa);
  const int N = static_cast<int>(cores.size());
  const int i = local_rank - first;
  if (count > N) return cores[i % N];
  return cores[static_cast<int64_t>(i) * N / count];
}

std::vector<int> ProgressCores(const topology::Topology& topo,
                               const PlacementSpec& spec, int local_rank,
                               int local_size, int app_core) {
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
    throw std::invalid_argument("local rank " + std::to_string(local_rank) +
                                " is outside 0.." +
                                std::to_string(local_size - 1));
  CheckCore(topo, app_core, "the application core");
  switch (spec.kind) {
    case PlacementKind::kNone:
      return {};
    case PlacementKind::kBind:
      return {app_core};
    case PlacementKind::kNuma: {
      const int numa = topo.NumaOfCore(app_core);
      const std::vector<int> cores = topo.CoresOfNuma(numa);
      const int N = static_cast<int>(cores.size());
      int M = 0;
      while (M < N && cores[M] != app_core) ++M;
      int n = 0;  // ranks whose application core is on this NUMA node
      for (int r = 0; r < local_size; ++r) {
        int c = r == local_rank ? app_core : AppCoreOfRank(topo, r, local_size);
        if (topo.NumaOfCore(c) == numa) ++n;
      }
      return {cores[NumaPlacement(N, n, M)]};
    }
    case PlacementKind::kOddEven: {
      int core = OddEvenPlacement(topo.NumCores(), local_size, local_rank);
      return {core < 0 ? app_core : core};
    }
    case PlacementKind::kCores:
      for (int c : spec.cores) CheckCore(topo, c, "the placement");
      return spec.cores;
  }
  return {};
}

}  // namespace rondo::engine
