#include "drivers/bootstrap/bootstrap.h"

#include <cstdlib>

#include "drivers/bootstrap/launcher_bootstrap.h"
#include "topology/base/config_registry.h"
#include "drivers/bootstrap/pmix_bootstrap.h"
#include "drivers/bootstrap/singleton_bootstrap.h"

namespace rondo::drivers::bootstrap {

namespace {

// A positive integer variable, or 0.
long Tasks(const char* (*lookup)(const char*), const char* name) {
  const char* v = lookup(name);
  if (v == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && *end == 0 && n > 0 ? n : 0;
}

}  // namespace

std::string UnsupportedLauncher(const char* (*lookup)(const char*)) {
  if (lookup("PMIX_NAMESPACE") != nullptr ||
      lookup("RONDO_RUN_SOCKET") != nullptr)
    return "";
  const long slurm = Tasks(lookup, "SLURM_STEP_NUM_TASKS");
  if (slurm > 1) {
    const char* type = lookup("SLURM_MPI_TYPE");
    std::string why = "this process is one of " + std::to_string(slurm) +
                      " tasks of a Slurm job step";
    if (const char* step = lookup("SLURM_STEP_ID"); step != nullptr)
      why += " (" + std::string(lookup("SLURM_JOB_ID") ? lookup("SLURM_JOB_ID")
                                                       : "?") +
             "." + step + ")";
    why += " started without PMIx";
    if (type != nullptr && *type != 0)
      why += " (SLURM_MPI_TYPE=" + std::string(type) + ")";
    return why +
           ", so its ranks cannot find each other: run it with `srun "
           "--mpi=pmix` (`srun --mpi=list` shows the plugins; MpiDefault=pmix "
           "in slurm.conf makes it the default)";
  }
  const long pmi = Tasks(lookup, "PMI_SIZE");
  if (pmi > 1)
    return "this process is one of " + std::to_string(pmi) +
           " ranks started by a PMI-1 launcher (PMI_SIZE is set: MPICH's "
           "mpiexec.hydra?), which Rondo does not speak: start it with "
           "rondo-run, Open MPI's mpirun or `srun --mpi=pmix` (PMIx)";
  return "";
}

Result<std::unique_ptr<Bootstrap>> BootstrapFromEnvironment(
    std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  if (base::ForeignEnv("PMIX_NAMESPACE") != nullptr &&
      base::ForeignEnv("PMIX_RANK") != nullptr)
    return CreatePmixBootstrap(error);
  if (base::EnvLookup("RONDO_RUN_SOCKET") != nullptr) {
    std::optional<LauncherEnvironment> env =
        ParseLauncherEnvironment(&base::EnvLookup, error);
    if (!env) return Status::kInvalidArgument;
    auto connected = LauncherBootstrap::Connect(*env, error);
    if (!connected.ok()) return connected.status();
    return std::unique_ptr<Bootstrap>(std::move(connected).value());
  }
  if (std::string why = UnsupportedLauncher(&base::EnvLookup); !why.empty()) {
    *error = why;
    return Status::kUnsupported;
  }
  return std::unique_ptr<Bootstrap>(std::make_unique<SingletonBootstrap>());
}

}  // namespace rondo::drivers::bootstrap
