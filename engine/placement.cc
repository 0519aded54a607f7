#include "engine/placement.h"

#include <algorithm>
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
  if (text == "auto") {
    spec.kind = PlacementKind::kAuto;
  } else if (text == "quiet") {
    spec.kind = PlacementKind::kQuiet;
  } else if (text == "none") {
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
                                "': expected auto|quiet|none|bind|numa|"
                                "odd-even|cores:<list such as 1,3-4>");
  }
  return spec;
}

std::string PlacementSpec::ToString() const {
  switch (kind) {
    case PlacementKind::kAuto: return "auto";
    case PlacementKind::kQuiet: return "quiet";
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
    case PlacementKind::kQuiet:
    case PlacementKind::kAuto:  // without the node's view: the own core
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

CommCoresSpec CommCoresSpec::Parse(const std::string& text) {
  CommCoresSpec spec;
  if (text.empty()) return spec;
  const char* kForms =
      "expected a count such as 2, a core list such as 6-7 or 3,7, or "
      "cores:<list> (cores:5 for one core)";
  bool digits = true;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (digits) {
    if (text.size() > 6)
      throw std::invalid_argument("invalid communication cores '" + text +
                                  "': the count is too large");
    spec.count = std::stoi(text);  // 0: no dedicated core
    return spec;
  }
  std::string list = text.rfind("cores:", 0) == 0 ? text.substr(6) : text;
  topology::CpuSet set;
  try {
    set = topology::CpuSet::Parse(list);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("invalid communication cores '" + text +
                                "': " + e.what() + "; " + kForms);
  }
  if (set.Empty())
    throw std::invalid_argument("invalid communication cores '" + text +
                                "': the core list is empty; " + kForms);
  for (int c = set.First(); c >= 0; c = set.Next(c)) spec.cores.push_back(c);
  return spec;
}

std::string CommCoresSpec::ToString() const {
  if (!cores.empty()) {
    topology::CpuSet set;
    for (int c : cores) set.Set(c);
    std::string s = set.ToString();  // "{1,3-4}"
    return "cores:" + s.substr(1, s.size() - 2);
  }
  return count == 0 ? "" : std::to_string(count);
}

std::vector<int> ChooseCommCores(const topology::Topology& topo, int count) {
  const int ncores = topo.NumCores();
  if (count < 1 || count >= ncores)
    throw std::invalid_argument(
        "cannot dedicate " + std::to_string(count) +
        " communication cores on a machine of " + std::to_string(ncores) +
        " cores: expected 1 to " + std::to_string(ncores - 1) +
        " (at least one core must stay for the application)");
  const int numas = topo.NumNuma();
  // Largest remainder apportionment of `count` over the NUMA nodes.
  std::vector<int> share(numas, 0);
  std::vector<std::pair<int64_t, int>> rest;  // (remainder, numa)
  int given = 0;
  for (int m = 0; m < numas; ++m) {
    const int64_t size = static_cast<int64_t>(topo.CoresOfNuma(m).size());
    share[m] = static_cast<int>(size * count / ncores);
    given += share[m];
    rest.push_back({(size * count) % ncores, m});
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < count && i < rest.size(); ++i) {
    ++share[rest[i].second];
    ++given;
  }
  std::vector<int> chosen;
  for (int m = 0; m < numas; ++m) {
    const std::vector<int> cores = topo.CoresOfNuma(m);
    const int64_t N = static_cast<int64_t>(cores.size());
    const int64_t k = std::min<int64_t>(share[m], N);
    for (int64_t j = 0; j < k; ++j)
      chosen.push_back(cores[((j + 1) * N + k - 1) / k - 1]);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

NodePlacement PlaceNode(const topology::Topology& topo,
                        const PlacementSpec& spec, const CommCoresSpec& comm,
                        int local_size) {
  if (local_size < 1)
    throw std::invalid_argument("a node needs at least one rank, not " +
                                std::to_string(local_size));
  NodePlacement out;
  out.app_cores.resize(local_size);
  out.progress_cores.resize(local_size);
  if (comm.empty()) {
    std::vector<int> ranks_on_numa(topo.NumNuma(), 0);
    for (int r = 0; r < local_size; ++r) {
      out.app_cores[r] = AppCoreOfRank(topo, r, local_size);
      ++ranks_on_numa[topo.NumaOfCore(out.app_cores[r])];
    }
    topology::CpuSet apps, used;
    for (int r = 0; r < local_size; ++r) {
      const int app = out.app_cores[r];
      apps.Set(app);
      if (spec.kind == PlacementKind::kNuma) {
        // ProgressCores' Equation 1, with the ranks per NUMA node counted
        // once for the whole node.
        const std::vector<int> cores = topo.CoresOfNuma(topo.NumaOfCore(app));
        const int N = static_cast<int>(cores.size());
        int M = 0;
        while (M < N && cores[M] != app) ++M;
        out.progress_cores[r] = {
            cores[NumaPlacement(N, ranks_on_numa[topo.NumaOfCore(app)], M)]};
      } else {
        out.progress_cores[r] = ProgressCores(topo, spec, r, local_size, app);
      }
      for (int c : out.progress_cores[r]) used.Set(c);
    }
    for (int c = used.First(); c >= 0; c = used.Next(c))
      if (!apps.Test(c)) out.comm_cores.push_back(c);
    return out;
  }
  std::vector<int> cc = comm.cores.empty() ? ChooseCommCores(topo, comm.count)
                                           : comm.cores;
  for (int c : cc) CheckCore(topo, c, "RONDO_COMM_CORES");
  topology::CpuSet is_comm;
  for (int c : cc) is_comm.Set(c);
  if (static_cast<int>(cc.size()) >= topo.NumCores())
    throw std::invalid_argument(
        "RONDO_COMM_CORES=" + comm.ToString() + " takes all " +
        std::to_string(topo.NumCores()) +
        " cores: at least one must stay for the application");
  out.comm_cores = cc;
  // Ranks spread over each NUMA node's application cores, as AppCoreOfRank
  // spreads them over all cores; NUMA nodes without application cores
  // get no rank.
  std::vector<std::vector<int>> app_of_numa(topo.NumNuma());
  std::vector<int> numa_with_app;
  for (int m = 0; m < topo.NumNuma(); ++m) {
    for (int c : topo.CoresOfNuma(m))
      if (!is_comm.Test(c)) app_of_numa[m].push_back(c);
    if (!app_of_numa[m].empty()) numa_with_app.push_back(m);
  }
  // Ranks per NUMA node in proportion to its application cores (largest
  // remainder, ties to the lower node), in rank order: a node never gets
  // more ranks than application cores unless the whole node is
  // oversubscribed.
  int64_t total_app = 0;
  for (int m : numa_with_app) total_app += app_of_numa[m].size();
  std::vector<int64_t> quota(topo.NumNuma(), 0);
  std::vector<std::pair<int64_t, int>> rest;  // (remainder, numa)
  int64_t given = 0;
  for (int m : numa_with_app) {
    const int64_t w = static_cast<int64_t>(local_size) * app_of_numa[m].size();
    quota[m] = w / total_app;
    given += quota[m];
    rest.push_back({w % total_app, m});
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < local_size; i = (i + 1) % rest.size()) {
    ++quota[rest[i].second];
    ++given;
  }
  std::vector<int> numa_of_rank(local_size), index_in_numa(local_size);
  std::vector<int> ranks_in_numa(topo.NumNuma(), 0);
  size_t next_numa = 0;
  for (int r = 0; r < local_size; ++r) {
    while (ranks_in_numa[numa_with_app[next_numa]] >=
           quota[numa_with_app[next_numa]])
      ++next_numa;
    const int m = numa_with_app[next_numa];
    numa_of_rank[r] = m;
    index_in_numa[r] = ranks_in_numa[m]++;
  }
  for (int r = 0; r < local_size; ++r) {
    const std::vector<int>& cores = app_of_numa[numa_of_rank[r]];
    const int64_t N = static_cast<int64_t>(cores.size());
    const int64_t n = ranks_in_numa[numa_of_rank[r]];
    const int64_t i = index_in_numa[r];
    out.app_cores[r] = n > N ? cores[i % N] : cores[i * N / n];
  }
  const int P = static_cast<int>(cc.size());
  for (int r = 0; r < local_size; ++r) {
    std::vector<int>& pc = out.progress_cores[r];
    switch (spec.kind) {
      case PlacementKind::kNone:
        break;
      case PlacementKind::kBind:
      case PlacementKind::kQuiet:
        pc = {out.app_cores[r]};
        break;
      case PlacementKind::kAuto:  // dedicated cores given: as numa
      case PlacementKind::kNuma: {
        std::vector<int> local;  // comm cores of the rank's NUMA node
        for (int c : cc)
          if (topo.NumaOfCore(c) == numa_of_rank[r]) local.push_back(c);
        if (local.empty()) {
          pc = {cc[static_cast<int64_t>(r) * P / local_size]};
        } else {
          const int64_t k = static_cast<int64_t>(local.size());
          const int64_t n = ranks_in_numa[numa_of_rank[r]];
          pc = {local[index_in_numa[r] * k / n]};
        }
        break;
      }
      case PlacementKind::kOddEven:
        pc = {cc[r % P]};
        break;
      case PlacementKind::kCores:
        for (int c : spec.cores) CheckCore(topo, c, "the placement");
        pc = spec.cores;
        break;
    }
  }
  return out;
}

namespace {

std::string CoreList(const std::vector<int>& cores) {
  topology::CpuSet set;
  for (int c : cores) set.Set(c);
  std::string s = set.ToString();  // "{1,3-4}"
  return s.substr(1, s.size() - 2);
}

}  // namespace

NodePlacement PlaceNodeAuto(const topology::Topology& topo,
                            const std::vector<topology::CpuSet>& rank_cores,
                            int local_size, int job_size, bool quiet_ok,
                            bool confined) {
  if (local_size < 1)
    throw std::invalid_argument("a node needs at least one rank, not " +
                                std::to_string(local_size));
  if (!rank_cores.empty() &&
      static_cast<int>(rank_cores.size()) != local_size)
    throw std::invalid_argument(
        "the CPUs of " + std::to_string(rank_cores.size()) +
        " ranks are given but the node has " + std::to_string(local_size) +
        ": expected one CPU set per local rank");
  const int ncores = topo.NumCores();
  const topology::CpuSet all = topo.AllCores();
  NodePlacement out;
  out.app_cores.resize(local_size);
  out.progress_cores.resize(local_size);
  out.quiet.assign(local_size, false);
  out.why.resize(local_size);
  out.oversubscribed = local_size > ncores;

  // Which cores the applications use.
  topology::CpuSet used;
  std::vector<bool> bound(local_size, false);
  int unbound = 0;
  for (int r = 0; r < local_size; ++r) {
    topology::CpuSet mask =
        rank_cores.empty() ? topology::CpuSet() : rank_cores[r];
    if (mask.Empty() || !all.Contains(mask)) mask = all;
    if (mask.Count() == 1) {
      bound[r] = true;
      used.Set(mask.First());
      out.app_cores[r] = mask.First();
    } else if (mask != all) {
      // Bound to a set of cores (its OpenMP threads, say): all are used.
      for (int c = mask.First(); c >= 0; c = mask.Next(c)) used.Set(c);
      out.app_cores[r] = mask.First();
    } else {
      ++unbound;
      out.app_cores[r] = AppCoreOfRank(topo, r, local_size);
    }
  }
  // The cores the launcher gave the node's ranks (confined): the union of
  // their masks; all cores otherwise.
  topology::CpuSet given = all;
  if (confined && !rank_cores.empty()) {
    given = topology::CpuSet();
    for (int r = 0; r < local_size; ++r) {
      const topology::CpuSet& m = rank_cores[r];
      if (m.Empty() || !all.Contains(m)) {
        given = all;  // a rank we know nothing of may run anywhere
        break;
      }
      for (int c = m.First(); c >= 0; c = m.Next(c)) given.Set(c);
    }
  }
  std::vector<int> candidates;  // cores no bound rank uses
  for (int c = 0; c < ncores; ++c)
    if (!used.Test(c) && given.Test(c)) candidates.push_back(c);
  std::vector<int> free_cores = candidates;
  if (unbound > 0) {
    // Unbound ranks run somewhere among the candidates: only as many cores
    // as are left over stay free, spread where MPC leaves its free cores.
    const int64_t n = static_cast<int64_t>(candidates.size());
    const int64_t k = std::max<int64_t>(0, n - unbound);
    free_cores.clear();
    for (int64_t j = 0; j < k; ++j)
      free_cores.push_back(candidates[((j + 1) * n + k - 1) / k - 1]);
  }
  const std::string node_text =
      std::to_string(local_size) + (local_size == 1 ? " rank" : " ranks") +
      " on " + std::to_string(ncores) + (ncores == 1 ? " core" : " cores");
  if (free_cores.empty() && job_size > 0 && job_size <= local_size) {
    for (int r = 0; r < local_size; ++r)
      out.why[r] = "no progress thread: the whole job (" + node_text +
                   (out.oversubscribed ? ", oversubscribed" : "") +
                   ") is on this node and no core is free of application "
                   "threads, so every transfer is a copy by a core that also "
                   "computes and a thread could not overlap it; progress "
                   "runs inside MPI calls (RONDO_PROGRESS=quiet forces quiet "
                   "progress)";
    return out;
  }
  if (free_cores.empty() && !quiet_ok) {
    for (int r = 0; r < local_size; ++r) {
      out.progress_cores[r] = {out.app_cores[r]};
      out.why[r] = "progress thread on core " +
                   std::to_string(out.app_cores[r]) +
                   ", the rank's own: no core is free (" + node_text +
                   "), and nothing marks the application's calls for quiet "
                   "progress; it sleeps when idle and wakes on submits";
    }
    return out;
  }
  if (free_cores.empty()) {
    for (int r = 0; r < local_size; ++r) {
      out.quiet[r] = true;
      out.progress_cores[r] = {out.app_cores[r]};
      std::string where =
          bound[r] ? "its core " + std::to_string(out.app_cores[r])
                   : "its cores (unbound)";
      out.why[r] = "quiet progress on " + where + ": no core is free of " +
                   "application threads (" + node_text +
                   (out.oversubscribed ? ", oversubscribed" : "") +
                   "); the thread runs only while background work is "
                   "pending and the application is outside Rondo";
    }
    return out;
  }
  // Ranks take the free cores of their NUMA node in blocks (Equation 1's
  // grouping), else any free core, by rank.
  std::vector<int> ranks_on_numa(topo.NumNuma(), 0), index_on_numa(local_size);
  for (int r = 0; r < local_size; ++r)
    index_on_numa[r] = ranks_on_numa[topo.NumaOfCore(out.app_cores[r])]++;
  const int64_t F = static_cast<int64_t>(free_cores.size());
  topology::CpuSet taken;
  for (int r = 0; r < local_size; ++r) {
    const int numa = topo.NumaOfCore(out.app_cores[r]);
    std::vector<int> local;
    for (int c : free_cores)
      if (topo.NumaOfCore(c) == numa) local.push_back(c);
    int core;
    if (!local.empty()) {
      const int64_t k = static_cast<int64_t>(local.size());
      core = local[index_on_numa[r] * k / ranks_on_numa[numa]];
    } else {
      core = free_cores[static_cast<int64_t>(r) * F / local_size];
    }
    out.progress_cores[r] = {core};
    taken.Set(core);
    out.why[r] = "progress thread on free core " + std::to_string(core) +
                 " (no application thread of the node uses it; " +
                 std::to_string(free_cores.size()) + " free: " +
                 CoreList(free_cores) + "; " + node_text +
                 (unbound > 0 ? ", " + std::to_string(unbound) + " unbound"
                              : "") +
                 ")";
  }
  for (int c = taken.First(); c >= 0; c = taken.Next(c))
    out.comm_cores.push_back(c);
  return out;
}

std::string PlacementConflicts(const topology::Topology& topo,
                               const std::vector<int>& progress_cores,
                               const std::vector<topology::CpuSet>& rank_cores,
                               int local_rank) {
  std::string out;
  for (int c : progress_cores) {
    if (c < 0 || c >= topo.NumCores()) continue;
    for (int r = 0; r < static_cast<int>(rank_cores.size()); ++r) {
      if (r == local_rank || rank_cores[r].Count() != 1 ||
          !rank_cores[r].Test(c))
        continue;
      out += "a progress thread of local rank " +
             std::to_string(local_rank) + " is placed on core " +
             std::to_string(c) + ", where local rank " + std::to_string(r) +
             " computes: the two will share that core (RONDO_PROGRESS=auto "
             "avoids it)\n";
    }
  }
  return out;
}

}  // namespace rondo::engine
