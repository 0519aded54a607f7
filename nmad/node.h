// The node's view for the engine: which local rank this process is and
// which CPUs every rank of its node computes on, learned from the job's
// bootstrap before the engine places anything (engine/placement.h,
// PlaceNodeAuto: progress threads only on cores no application uses).
//
// Sources, first found wins: the environment (RONDO_LOCAL_RANK/SIZE and
// RONDO_NODE_CPUS, which rondo-run sets when it starts the ranks itself;
// with a rank wrapper, which may put each rank on another emulated host, it
// sets RONDO_RUN_DISCOVER_NODES instead and every rank takes part in the
// exchange below, its local rank following from the host keys in rank
// order); else the bootstrap's local rank
// and size (PMIx under mpirun or srun) and, under PMIx with several ranks
// (whatever the environment says, so that every rank takes part), one
// exchange: every rank publishes "host|local rank|CPU list"
// (its affinity mask), one Fence, and each rank keeps the records of its
// own host in local rank order. Records that do not describe the node
// consistently (a rank missing, a local rank twice) are not used: the
// engine then knows only its own affinity, and says so in rondo-info.
//
// Thread-safety: NodeEngineOptions is collective over the job (one Fence
// when it exchanges); call it once per process, from one thread.
#ifndef RONDO_NMAD_NODE_H_
#define RONDO_NMAD_NODE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"
#include "engine/options.h"
#include "topology/cpuset.h"

namespace rondo::nmad {

struct NodeRecord {
  std::string host;
  int local_rank = 0;
  topology::CpuSet cpus;  // OS CPU numbers
};

// What identifies this process's host in the exchange: the host name, plus
// "@net:[inode]" when the process is not in the machine's first network
// namespace (the emulated hosts of bench/cluster share one host name).
std::string NodeKey();

// "host|local_rank|cpu list"; Decode returns nullopt for anything else.
std::string EncodeNodeRecord(const NodeRecord& record);
std::optional<NodeRecord> DecodeNodeRecord(std::string_view text);

// The CPUs of local ranks 0..local_size-1 of `host`, in order, from the
// records of every rank of the job; empty when they are not exactly those
// ranks (a record missing, unreadable or repeated).
std::vector<topology::CpuSet> NodeCpusOf(
    const std::vector<std::optional<NodeRecord>>& records,
    const std::string& host, int local_size);

// The engine options of this process: EngineOptions::FromEnvironment()
// (throws std::invalid_argument for a bad RONDO_* value) completed with the
// node's view from `boot` as the banner says. A failed exchange is an
// error (the job is broken: Fence fails for every rank); *error says why.
engine::Result<engine::EngineOptions> NodeEngineOptions(
    drivers::bootstrap::Bootstrap& boot, std::string* error);

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_NODE_H_
