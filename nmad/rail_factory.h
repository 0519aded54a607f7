// RailFactory: where a Core gets the drivers of its rails to remote peers.
//
// The driver registry of nmad, passed explicitly (no global state, no
// static self-registration): //nmad:core_base builds without any network
// driver and takes a RailFactory in Core::Create; //nmad:core adds UCX's
// (nmad/ucx_rails.h) behind the Core::Create that every existing user calls.
// A job of one rank has no remote rail, so NoRemoteRails runs the whole core
// over the loopback driver alone (in-process tests of the full core).
#ifndef RONDO_NMAD_RAIL_FACTORY_H_
#define RONDO_NMAD_RAIL_FACTORY_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "drivers/driver.h"
#include "engine/status.h"

namespace rondo::drivers::bootstrap {
class Bootstrap;
}

namespace rondo::nmad {

// What a remote rail's driver is made for.
struct RailConfig {
  std::string_view kind;  // NmadOptions::rails[rail_id], e.g. "ucx"
  int rail_id = 0;
  size_t max_packet = 0;  // NmadOptions::max_packet
  int self = 0;           // this process's rank
  bool peer_errors = false;  // NmadOptions::ucx_peer_errors
  // NmadOptions::shm: the ranks of this node through drivers/shm (a
  // factory that honours it uses the bootstrap, collectively, to set up
  // the node's segment; only for rail 0).
  bool shm = false;
  drivers::bootstrap::Bootstrap* bootstrap = nullptr;
  // More local ranks than cores (engine::Engine::oversubscribed): waiters
  // sleep often, so the shm driver keeps its fence on every send rather
  // than making each sleep interrupt the working ranks (docs/shm.md).
  bool oversubscribed = false;
};

class RailFactory {
 public:
  virtual ~RailFactory() = default;
  // One driver for one rail; kUnsupported (with *error) for a kind this
  // factory does not make, or the driver's own error.
  virtual engine::Result<std::unique_ptr<drivers::Driver>> Create(
      const RailConfig& config, std::string* error) const = 0;
};

// Makes no driver at all: enough for a one-rank job (messages to self go
// through the loopback driver, which the core always has).
class NoRemoteRails final : public RailFactory {
 public:
  engine::Result<std::unique_ptr<drivers::Driver>> Create(
      const RailConfig& config, std::string* error) const override {
    if (error)
      *error = "no driver for rail kind '" + std::string(config.kind) +
               "' in this build (//nmad:core_base without a rail factory; "
               "//nmad:core has ucx)";
    return engine::Status::kUnsupported;
  }
};

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_RAIL_FACTORY_H_
