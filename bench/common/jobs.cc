#include "bench/common/jobs.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "bench/common/plot.h"

extern char** environ;

namespace rondo::bench {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

bool Executable(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

std::string FindExecutable(const char* argv0, const std::string& rel,
                           std::string* why) {
  std::string path;
  try {
    path = FindProgram(argv0, rel);
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return "";
  }
  if (!Executable(path)) {
    if (why != nullptr) *why = path + " is not an executable file";
    return "";
  }
  return path;
}

const char* LauncherName(Launcher launcher) {
  switch (launcher) {
    case Launcher::kRondoRun: return "rondo-run";
    case Launcher::kMpirun: return "mpirun";
    case Launcher::kMpich: return "mpirun.mpich";
    case Launcher::kClusterOpenMpi: return "cluster openmpi";
    case Launcher::kClusterMpich: return "cluster mpich";
    case Launcher::kClusterSrun: return "srun";
  }
  return "?";
}

namespace {

// mpirun's options after the rank count, for a binding policy.
std::vector<std::string> MpirunBindOptions(const std::string& bind) {
  if (bind == "core")
    return {"--map-by", "core", "--bind-to", "core:overload-allowed"};
  return {"--bind-to", "none"};
}

volatile sig_atomic_t g_sigint = 0;

void OnSigint(int) { g_sigint = 1; }

}  // namespace

std::vector<std::string> JobCommand(const JobSpec& spec) {
  std::vector<std::string> argv;
  if (spec.launcher == Launcher::kRondoRun) {
    argv = {spec.launcher_path,
            "-n",
            std::to_string(spec.ranks),
            "--bind",
            spec.bind,
            "--timeout",
            std::to_string(spec.timeout_s)};
  } else if (spec.launcher == Launcher::kMpich) {
    argv = {spec.launcher_path, "-n", std::to_string(spec.ranks), "-bind-to",
            spec.bind == "core" ? "core" : "none"};
  } else if (spec.launcher == Launcher::kClusterOpenMpi) {
    argv = {spec.launcher_path,         "launch", "openmpi", "--", "-n",
            std::to_string(spec.ranks), "--timeout",
            std::to_string(spec.timeout_s)};
  } else if (spec.launcher == Launcher::kClusterMpich) {
    argv = {spec.launcher_path, "launch", "mpich", "--", "-n",
            std::to_string(spec.ranks)};
  } else if (spec.launcher == Launcher::kClusterSrun) {
    // Slurm's time limit is in minutes; a job over it is killed.
    argv = {spec.launcher_path,
            "--mpi=pmix",
            "-N",
            std::to_string(spec.ranks),
            "-n",
            std::to_string(spec.ranks),
            "--ntasks-per-node=1",
            "--kill-on-bad-exit=1",
            "--time=" + std::to_string((spec.timeout_s + 59) / 60)};
  } else {
    argv = {spec.launcher_path,
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            std::to_string(spec.ranks),
            "--timeout",
            std::to_string(spec.timeout_s)};
    for (const std::string& o : MpirunBindOptions(spec.bind)) argv.push_back(o);
  }
  argv.push_back(spec.program);
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  return argv;
}

std::string LauncherDescription(Launcher launcher, const std::string& bind) {
  if (launcher == Launcher::kRondoRun) return "rondo-run -n N --bind " + bind;
  if (launcher == Launcher::kMpich)
    return std::string("mpirun.mpich -n N -bind-to ") +
           (bind == "core" ? "core" : "none");
  if (launcher == Launcher::kClusterOpenMpi)
    return "cluster.sh launch openmpi -- -n N (mpirun in host 0, one rank "
           "per host; bench/cluster/cluster.sh)";
  if (launcher == Launcher::kClusterMpich)
    return "cluster.sh launch mpich -- -n N (mpirun.mpich in host 0, one "
           "rank per host; bench/cluster/cluster.sh)";
  if (launcher == Launcher::kClusterSrun)
    return "srun --mpi=pmix -N N -n N --ntasks-per-node=1 (slurmctld in host "
           "0, one slurmd and one rank per other host; cluster.sh slurm)";
  return "mpirun --allow-run-as-root --oversubscribe -n N " +
         Join(MpirunBindOptions(bind));
}

std::map<std::string, std::string> LauncherEnvironment(Launcher launcher) {
  if (launcher == Launcher::kMpich || launcher == Launcher::kClusterMpich)
    return {{"MPIEXEC_TIMEOUT", "the job's timeout in seconds"}};
  if (launcher != Launcher::kMpirun) return {};
  return {{"OMPI_MCA_plm", "isolated"},
          {"OMPI_MCA_rmaps_base_oversubscribe", "1"},
          {"TMPDIR", "a fresh /tmp/rondo-mpirun.XXXXXX"},
          {"OMPI_MCA_btl_vader_backing_directory",
           "a fresh /dev/shm/rondo-mpirun.XXXXXX"}};
}

int RunCommand(const std::vector<std::string>& argv,
               const std::map<std::string, std::string>& env,
               bool* interrupted) {
  std::vector<std::string> kv;
  for (const auto& [k, v] : env) kv.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : kv) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  struct sigaction old_int {};
  bool catching = false;
  if (interrupted != nullptr) {
    *interrupted = false;
    // A caught signal's action is reset to the default by execve, so the
    // job still stops on Ctrl-C while the driver goes on to report. An
    // ignored SIGINT (a background job of a shell) stays ignored.
    sigaction(SIGINT, nullptr, &old_int);
    if (old_int.sa_handler != SIG_IGN) {
      g_sigint = 0;
      struct sigaction sa {};
      sa.sa_handler = OnSigint;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGINT, &sa, nullptr);
      catching = true;
    }
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    if (catching) sigaction(SIGINT, &old_int, nullptr);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    execve(cargv[0], cargv.data(), cenv.data());
    std::perror(("exec " + argv[0]).c_str());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (catching) {
    sigaction(SIGINT, &old_int, nullptr);
    *interrupted = g_sigint != 0;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

int RunMpiJob(const JobSpec& spec, std::vector<std::string>* command,
              bool* interrupted) {
  std::map<std::string, std::string> env = Environment();
  std::string session, shm;  // Open MPI's TMPDIR and vader's directory
  if (spec.launcher == Launcher::kMpirun) {
    char tmpl[] = "/tmp/rondo-mpirun.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    session = tmpl;
    // See drivers/bootstrap/pmix_mpirun_test.sh for why each is needed.
    if (env.count("HOME") == 0) env["HOME"] = session;
    env["TMPDIR"] = session;
    env["OMPI_MCA_orte_tmpdir_base"] = session;
    env["OMPI_MCA_plm"] = "isolated";
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1";
    // The shared-memory BTL names its /dev/shm segments after the job id,
    // which mpirun derives from its pid: two mpiruns with the same pid in
    // different PID namespaces (concurrent Bazel sandboxes) would map each
    // other's segments and hang. A private directory per job avoids it.
    char shm_tmpl[] = "/dev/shm/rondo-mpirun.XXXXXX";
    shm = mkdtemp(shm_tmpl) != nullptr ? shm_tmpl : "";
    env["OMPI_MCA_btl_vader_backing_directory"] = shm.empty() ? session : shm;
    for (const char* k :
         {"RONDO_RUN_SOCKET", "RONDO_RUN_KEY", "RONDO_RANK", "RONDO_SIZE"})
      env.erase(k);
  }
  if (spec.launcher != Launcher::kRondoRun)
    for (const char* k : {"RONDO_RUN_SOCKET", "RONDO_RUN_KEY", "RONDO_RANK",
                          "RONDO_SIZE"})
      env.erase(k);
  if (spec.launcher == Launcher::kMpich ||
      spec.launcher == Launcher::kClusterMpich)
    env["MPIEXEC_TIMEOUT"] = std::to_string(spec.timeout_s);
  for (const auto& [k, v] : spec.env) env[k] = v;
  const std::vector<std::string> argv = JobCommand(spec);
  if (command != nullptr) *command = argv;
  int rc;
  try {
    rc = RunCommand(argv, env, interrupted);
  } catch (...) {
    if (!session.empty()) std::filesystem::remove_all(session);
    if (!shm.empty()) std::filesystem::remove_all(shm);
    throw;
  }
  std::error_code ec;  // a leftover directory is no reason to fail the job
  if (!session.empty()) std::filesystem::remove_all(session, ec);
  if (!shm.empty()) std::filesystem::remove_all(shm, ec);
  return rc;
}


}  // namespace rondo::bench
