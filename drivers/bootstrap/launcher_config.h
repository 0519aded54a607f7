// The launcher's variables in the configuration registry
// (topology/base/config_registry.h): what rondo-run reads (its rank
// wrapper) and what it tells its ranks (socket, key, rank, size, node
// discovery), which the bootstrap and nmad read. One small library, linked
// by rondo-run, by the bootstrap and by rondo-info.
#ifndef RONDO_DRIVERS_BOOTSTRAP_LAUNCHER_CONFIG_H_
#define RONDO_DRIVERS_BOOTSTRAP_LAUNCHER_CONFIG_H_

#include <vector>

#include "topology/base/config_registry.h"

namespace rondo::drivers::bootstrap {

std::vector<base::ConfigDecl> LauncherDeclarations();

}  // namespace rondo::drivers::bootstrap

#endif  // RONDO_DRIVERS_BOOTSTRAP_LAUNCHER_CONFIG_H_
