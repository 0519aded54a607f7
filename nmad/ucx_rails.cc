#include "nmad/ucx_rails.h"

#include <string>

#include "drivers/shm/locality_driver.h"
#include "drivers/shm/node_segment.h"
#include "drivers/shm/shm_driver.h"
#include "drivers/ucx/ucx_driver.h"
#include "nmad/core.h"
#include "nmad/node.h"

namespace rondo::nmad {

engine::Result<std::unique_ptr<drivers::Driver>> UcxRails::Create(
    const RailConfig& config, std::string* error) const {
  if (config.kind != "ucx") return NoRemoteRails().Create(config, error);
  drivers::ucx::UcxDriverOptions uo;
  uo.rail_id = config.rail_id;
  uo.max_packet = config.max_packet;
  uo.self = config.self;
  uo.error_handling = config.peer_errors;
  auto d = drivers::ucx::UcxDriver::Create(uo, error);
  if (!d.ok()) return d.status();
  std::unique_ptr<drivers::Driver> ucx = std::move(d).value();
  if (!config.shm || config.rail_id != 0 || config.bootstrap == nullptr)
    return ucx;
  // Rail 0: shared memory to this node's ranks (NodeKey: the emulated
  // hosts of bench/cluster are nodes of their own), UCX to the others.
  namespace shm = drivers::shm;
  auto node = shm::SetupNodeSegment(*config.bootstrap, NodeKey(),
                                    shm::RingCellsFor(config.max_packet),
                                    error);
  if (!node.ok()) return node.status();
  std::unique_ptr<drivers::Driver> local;
  if (node.value().segment) {
    shm::ShmDriverOptions so;
    so.self = config.self;
    so.local = node.value().local;
    so.rail_id = config.rail_id;
    so.max_packet = config.max_packet;
    // Sleepers are frequent when ranks outnumber cores: each would
    // interrupt the working ranks with the heavy barrier's IPI (the 4-rank
    // 1 MiB bandwidth lost 5-8%), so the senders fence instead.
    so.asymmetric_fence = !config.oversubscribed;
    auto s = shm::ShmDriver::Create(node.value().segment, so, error);
    if (!s.ok()) return s.status();
    local = std::move(s).value();
  }
  auto l = shm::LocalityDriver::Create(std::move(local), std::move(ucx), error);
  if (!l.ok()) return l.status();
  return std::unique_ptr<drivers::Driver>(std::move(l).value());
}

// The Core::Create of every existing user: UCX rails.
Result<std::unique_ptr<Core>> Core::Create(
    engine::Engine& engine,
    std::unique_ptr<drivers::bootstrap::Bootstrap> bootstrap,
    NmadOptions options, std::string* error) {
  const UcxRails ucx;  // used during Create only
  return Create(engine, std::move(bootstrap), std::move(options), ucx, error);
}

}  // namespace rondo::nmad
