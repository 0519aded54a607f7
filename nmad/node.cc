#include "nmad/node.h"

#include <algorithm>

#include <sched.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>

#include "topology/base/config_registry.h"
#include "topology/base/log.h"

namespace rondo::nmad {
namespace {

constexpr const char* kKey = "rondo.node";

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

}  // namespace

// The host's name, then the network namespace when the process is not in
// the machine's first one: ranks in different network namespaces are on
// different (emulated, or containerised) hosts even when the kernel gives
// them one name, as bench/cluster's hosts are.
std::string NodeKey() {
  std::string key = HostName();
  char own[64] = {}, init[64] = {};
  const ssize_t n = readlink("/proc/self/ns/net", own, sizeof(own) - 1);
  const ssize_t m = readlink("/proc/1/ns/net", init, sizeof(init) - 1);
  // /proc/1 may be unreadable (another user's init): then the namespace is
  // always part of the key, which is still the same for every rank of a
  // host.
  if (n > 0 && (m <= 0 || std::string_view(own, n) != std::string_view(init, m)))
    key += "@" + std::string(own, n);
  return key;
}

namespace {

topology::CpuSet OwnCpus() {
  topology::CpuSet set;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
    for (int c = 0; c < CPU_SETSIZE && c < topology::CpuSet::kMaxCores; ++c)
      if (CPU_ISSET(c, &mask)) set.Set(c);
  return set;
}

}  // namespace

std::string EncodeNodeRecord(const NodeRecord& record) {
  std::string cpus = record.cpus.ToString();  // "{0-3}"
  return record.host + "|" + std::to_string(record.local_rank) + "|" +
         cpus.substr(1, cpus.size() - 2);
}

std::optional<NodeRecord> DecodeNodeRecord(std::string_view text) {
  const size_t a = text.find('|');
  if (a == std::string_view::npos || a == 0) return std::nullopt;
  const size_t b = text.find('|', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  NodeRecord r;
  r.host = std::string(text.substr(0, a));
  std::string_view lr = text.substr(a + 1, b - a - 1);
  auto [end, ec] = std::from_chars(lr.data(), lr.data() + lr.size(),
                                   r.local_rank);
  if (ec != std::errc() || end != lr.data() + lr.size() || r.local_rank < 0)
    return std::nullopt;
  try {
    r.cpus = topology::CpuSet::Parse(std::string(text.substr(b + 1)));
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  if (r.cpus.Empty()) return std::nullopt;
  return r;
}

std::vector<topology::CpuSet> NodeCpusOf(
    const std::vector<std::optional<NodeRecord>>& records,
    const std::string& host, int local_size) {
  if (local_size < 1) return {};
  std::vector<topology::CpuSet> out(local_size);
  std::vector<bool> seen(local_size, false);
  int found = 0;
  for (const auto& r : records) {
    if (!r || r->host != host) continue;
    if (r->local_rank >= local_size || seen[r->local_rank]) return {};
    seen[r->local_rank] = true;
    out[r->local_rank] = r->cpus;
    ++found;
  }
  if (found != local_size) return {};
  return out;
}

engine::Result<engine::EngineOptions> NodeEngineOptions(
    drivers::bootstrap::Bootstrap& boot, std::string* error) {
  // From here on the library's log lines name this rank and its host.
  base::SetJobIdentity(boot.rank(), HostName());
  engine::EngineOptions o = engine::EngineOptions::FromEnvironment();
  const base::ConfigRegistry& config = base::ConfigRegistry::Global();
  const bool env_local =
      config.IsSet("RONDO_LOCAL_RANK") || config.IsSet("RONDO_LOCAL_SIZE");
  if (!env_local) {
    o.local_rank = boot.local_rank();
    o.local_size = boot.local_size();
  }
  o.job_size = boot.size();
  o.job_rank = boot.rank();
  // srun and mpirun give each rank its CPUs (their binding, their cgroup):
  // Rondo's threads stay inside them.
  o.confined = boot.name() == "pmix";
  o.marks_calls = true;  // MadMPI and nmad's waits mark the application's calls
  // The exchange is a collective: whether it happens must not depend on
  // anything that can differ between ranks (a host with one rank and
  // another with two, or an environment variable given to some ranks
  // only, would leave the others waiting in the Fence). So it depends on
  // the launcher alone: rondo-run describes the node itself
  // (RONDO_NODE_CPUS), PMIx launchers do not.
  // rondo-run with a rank wrapper (each rank possibly on another, emulated
  // host) asks every rank to find its node the same way: the records then
  // carry the rank, and the local ranks follow from the host keys.
  const bool discover = boot.name() == "rondo-run" && !env_local &&
                        config.IsSet("RONDO_RUN_DISCOVER_NODES");
  if ((boot.name() != "pmix" && !discover) || boot.size() == 1) return o;
  const std::vector<topology::CpuSet> given = o.node_cpus;
  NodeRecord self{NodeKey(), discover ? boot.rank() : o.local_rank,
                  OwnCpus()};
  const std::string text = EncodeNodeRecord(self);
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  if (engine::Status s = boot.Put(kKey, {bytes, text.size()});
      s != engine::Status::kOk) {
    if (error) *error = "cannot publish this rank's CPUs: " +
                        std::string(engine::StatusName(s));
    return s;
  }
  if (engine::Status s = boot.Fence(); s != engine::Status::kOk) {
    if (error) *error = "the exchange of the node's CPUs failed: " +
                        std::string(engine::StatusName(s));
    return s;
  }
  std::vector<std::optional<NodeRecord>> records(boot.size());
  for (int r = 0; r < boot.size(); ++r) {
    auto v = boot.Get(r, kKey);
    if (!v.ok()) continue;
    const auto& b = v.value();
    records[r] = DecodeNodeRecord(
        std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  }
  if (discover) {
    // This host's ranks, in rank order, are its local ranks.
    int local_size = 0;
    for (int r = 0; r < boot.size(); ++r) {
      if (!records[r] || records[r]->host != self.host) continue;
      if (r == boot.rank()) o.local_rank = local_size;
      records[r]->local_rank = local_size++;
    }
    o.local_size = std::max(local_size, 1);
  }
  o.node_cpus = NodeCpusOf(records, self.host, o.local_size);
  if (!given.empty()) o.node_cpus = given;  // the user's word wins
  if (o.node_cpus.empty() && o.local_size > 1)
    RONDO_LOG_WARN(
        "the ranks of host {} do not describe {} local ranks consistently; "
        "placing progress threads from this rank's own affinity only",
        self.host, o.local_size);
  return o;
}

}  // namespace rondo::nmad
