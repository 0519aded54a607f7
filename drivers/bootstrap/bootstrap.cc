#include "drivers/bootstrap/bootstrap.h"

#include <cstdlib>

#include "drivers/bootstrap/launcher_bootstrap.h"
#include "drivers/bootstrap/pmix_bootstrap.h"
#include "drivers/bootstrap/singleton_bootstrap.h"

namespace rondo::drivers::bootstrap {

Result<std::unique_ptr<Bootstrap>> BootstrapFromEnvironment(
    std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  if (std::getenv("PMIX_NAMESPACE") != nullptr &&
      std::getenv("PMIX_RANK") != nullptr)
    return CreatePmixBootstrap(error);
  if (std::getenv("RONDO_RUN_SOCKET") != nullptr) {
    std::optional<LauncherEnvironment> env = ParseLauncherEnvironment(
        [](const char* name) { return std::getenv(name); }, error);
    if (!env) return Status::kInvalidArgument;
    auto connected = LauncherBootstrap::Connect(*env, error);
    if (!connected.ok()) return connected.status();
    return std::unique_ptr<Bootstrap>(std::move(connected).value());
  }
  return std::unique_ptr<Bootstrap>(std::make_unique<SingletonBootstrap>());
}

}  // namespace rondo::drivers::bootstrap
