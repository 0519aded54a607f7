#include "nmad/ucx_rails.h"

#include <string>

#include "drivers/ucx/ucx_driver.h"
#include "nmad/core.h"

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
  return std::unique_ptr<drivers::Driver>(std::move(d).value());
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
