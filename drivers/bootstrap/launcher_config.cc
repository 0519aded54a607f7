#include "drivers/bootstrap/launcher_config.h"

namespace rondo::drivers::bootstrap {

std::vector<base::ConfigDecl> LauncherDeclarations() {
  return {
      {"RONDO_RUN_SOCKET", "launcher", "string", "",
       "a Unix socket path (set by rondo-run)",
       "where a rank reaches its rondo-run"},
      {"RONDO_RUN_KEY", "launcher", "string", "",
       "64 hex digits (set by rondo-run)",
       "the job's secret key, proving a rank belongs to the job"},
      {"RONDO_RANK", "launcher", "integer", "",
       "an integer in 0..RONDO_SIZE-1 (set by rondo-run)",
       "this process's rank in the job"},
      {"RONDO_SIZE", "launcher", "integer", "",
       "an integer in 1..4096 (set by rondo-run)", "the job's rank count"},
      {"RONDO_RUN_RANK_WRAPPER", "launcher", "string", "",
       "empty, or a command placed before each rank's program",
       "rondo-run starts every rank through this command (e.g. a "
       "namespace or valgrind wrapper)"},
      {"RONDO_RUN_DISCOVER_NODES", "launcher", "boolean", "",
       "1, or unset (set by rondo-run)",
       "ranks find their node by exchanging host keys instead of being "
       "told (set by rondo-run with a rank wrapper)"},
  };
}

namespace {
const base::ConfigRegistration kLauncherConfig(LauncherDeclarations);
}  // namespace

}  // namespace rondo::drivers::bootstrap
