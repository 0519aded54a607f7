// NmadOptions: how the nmad core is configured. Callers set fields directly;
// FromEnvironment() fills them from RONDO_* variables through one table
// (strict parsing, "Invalid value for RONDO_X: 'v'. Expected: ...").
#ifndef RONDO_NMAD_OPTIONS_H_
#define RONDO_NMAD_OPTIONS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"

namespace rondo::nmad {

struct NmadOptions {
  // Default strategy of sessions that do not choose one (RONDO_STRATEGY):
  // default | aggreg | prio | split_balance.
  std::string strategy = "default";
  // Messages up to this size go eager, larger ones by rendezvous
  // (RONDO_EAGER_LIMIT, bytes, 0..max_packet-64).
  size_t eager_limit = kDefaultEagerLimit;
  static constexpr size_t kDefaultEagerLimit = 16 * 1024;
  // The same for ranks on other nodes (RONDO_NET_EAGER_LIMIT, bytes,
  // 0..max_packet-64, or kAutoNetEager). Over a network one message that
  // the kernel delivers alone costs the receiving core less than a
  // rendezvous, whose every handshake wakes its progress and runs the
  // kernel's send path on it (docs/p2p_benchmarks.md, "the kernel's
  // floor"); Open MPI's TCP BTL sends up to 64 KiB eagerly too.
  // kAutoNetEager: eager_limit when that was changed from its default,
  // else 64 KiB - 64 (at most max_packet - 64). NetEagerLimit() resolves it.
  static constexpr size_t kAutoNetEager = ~size_t{0};
  size_t net_eager_limit = kAutoNetEager;
  size_t NetEagerLimit() const noexcept {
    if (net_eager_limit != kAutoNetEager) return net_eager_limit;
    if (eager_limit != kDefaultEagerLimit) return eager_limit;
    const size_t net = 64 * 1024 - 64;
    return net < max_packet - 64 ? net : max_packet - 64;
  }
  // Largest packet handed to a driver (RONDO_MAX_PACKET, 1 KiB..1 MiB).
  size_t max_packet = 64 * 1024;
  // Rails to remote peers, in order (RONDO_RAILS, comma-separated list of
  // "ucx"; e.g. "ucx,ucx" for two UCX workers). Messages to self always use
  // the loopback driver.
  std::vector<std::string> rails = {"ucx"};
  // Bandwidth estimate per rail in MB/s used by split_balance
  // (RONDO_RAIL_BW, comma-separated, empty: the drivers' estimates).
  std::vector<double> rail_bandwidth_mbps;
  // Ask UCX to report peer failures (RONDO_UCX_PEER_ERRORS). UCX 1.13 then
  // avoids its shared-memory transports (they cannot report failures) and
  // uses TCP even on one node; off, failures still come from the launcher
  // (rondo-run, PMIx), which is how nmad learns them on one node anyway.
  bool ucx_peer_errors = false;
  // Rail 0 reaches the ranks of this node through Rondo's shared-memory
  // driver (drivers/shm, docs/shm.md) and the others through UCX
  // (RONDO_SHM); false: UCX for every peer (its own shared memory on one
  // node). On by default: faster than UCX's on the message rate and level
  // elsewhere, allocation-free like it (docs/shm.md has the figures).
  bool shm = true;
  // How long Finalize waits for endpoints to flush (RONDO_CLOSE_TIMEOUT_MS).
  int close_timeout_ms = 2000;
  // A rendezvous send to another process posts its data parts with the
  // request-to-send instead of after the ready-to-receive
  // (RONDO_RDV_EARLY_DATA); the drivers' own rendezvous holds the data
  // until the receiver matches (nmad/core.cc, StartRdvRecv). Synchronous
  // sends always wait for the ready-to-receive.
  bool rdv_early_data = true;

  static NmadOptions FromEnvironment();
  // Throws std::invalid_argument naming the bad field.
  void Validate() const;
  std::string Describe() const;
  static const std::vector<engine::ConfigVar<NmadOptions>>& Table();
};

std::vector<std::string_view> NmadVariableNames();
// nmad's declarations in the configuration registry (its table).
std::vector<base::ConfigDecl> NmadDeclarations();

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_OPTIONS_H_
