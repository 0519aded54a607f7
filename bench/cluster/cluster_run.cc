#include "bench/cluster/cluster_run.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "bench/common/plot.h"

namespace rondo::bench::cluster {

double RateBits(const std::string& text) {
  static const std::pair<const char*, double> kUnits[] = {
      {"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3},
      {"tbps", 8e12}, {"gbps", 8e9}, {"mbps", 8e6}, {"kbps", 8e3},
      {"bit", 1},     {"bps", 8}};
  std::string t;
  for (char ch : text) t += static_cast<char>(std::tolower(ch));
  for (const auto& [unit, scale] : kUnits) {
    const size_t n = std::strlen(unit);
    if (t.size() <= n || t.compare(t.size() - n, n, unit) != 0) continue;
    const std::string number = t.substr(0, t.size() - n);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
      return 0;
    return v * scale;
  }
  return 0;
}

std::string ClusterPlan::ClusterSh(std::string* why) const {
  if (!args_.cluster_sh.empty()) return args_.cluster_sh;
  const std::string env = Env("CLUSTER_SH");  // set inside `cluster.sh run`
  if (!env.empty() && Executable(env)) return env;
  return FindExecutable(argv0_.c_str(), "bench/cluster/cluster.sh", why);
}

std::string ClusterPlan::Problems() const {
  std::string why;
  const std::string sh = ClusterSh(&why);
  if (sh.empty()) return "bench/cluster/cluster.sh not found (" + why + ")";
  FILE* p = popen((ShellQuote(sh) + " check 2>&1").c_str(), "r");
  if (p == nullptr) return "cannot run " + sh + " check";
  std::string out, problems;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = pclose(p);
  if (status == 0) return "";
  for (const std::string& line : Split(out, '\n'))
    if (line.rfind("  - ", 0) == 0)
      problems += (problems.empty() ? "" : "; ") + line.substr(4);
  return problems.empty() ? "cluster.sh check failed: " + out : problems;
}

int ClusterPlan::Parse(const ClusterArgs& args, std::string* message) {
  args_ = args;
  hosts_ = 0;
  rate_bits_ = 0;
  message->clear();
  if (args.launcher != "mpirun" && args.launcher != "srun") {
    *message = "--launcher: '" + args.launcher +
               "' is not allowed; expected mpirun or srun";
    return 2;
  }
  const long processors = sysconf(_SC_NPROCESSORS_ONLN);
  const int max_hosts = static_cast<int>(std::min(250L, 4 * processors));
  if (args.cluster == "0" || args.cluster.empty()) {
    hosts_ = 0;
  } else if (args.cluster == "auto") {
    const std::string problems = Problems();
    if (problems.empty()) {
      hosts_ = 2;
    } else {
      *message = "no emulated cluster here (" + problems +
                 "); running in shared memory on this machine instead";
    }
  } else {
    char* end = nullptr;
    errno = 0;
    const long k = std::strtol(args.cluster.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || k < 2 || k > max_hosts) {
      *message = "--cluster: '" + args.cluster +
                 "' is not allowed; expected 0 (shared memory), auto, or a "
                 "host count in 2.." +
                 std::to_string(max_hosts) + " (this machine has " +
                 std::to_string(processors) +
                 " processors; an emulated host gets at least a quarter of "
                 "one)";
      return 2;
    }
    hosts_ = static_cast<int>(k);
  }
  if (hosts_ == 0) {
    if (args.launcher == "srun") {
      *message = "--launcher srun is only allowed with --cluster K: srun "
                 "starts the ranks on an emulated Slurm cluster of K compute "
                 "hosts";
      return 2;
    }
    return 0;
  }
  rate_bits_ = RateBits(args.rate);
  if (rate_bits_ < 1e6 || rate_bits_ > 1e12) {
    *message = "--rate: '" + args.rate +
               "' is not allowed; expected a link rate in tc's units between "
               "1mbit and 1tbit, such as 1gbit or 250mbit";
    return 2;
  }
  if (!args.inside) {
    if (args.cluster != "auto") {
      const std::string problems = Problems();
      if (!problems.empty()) {
        *message = "--cluster " + std::to_string(hosts_) +
                   " needs an emulated cluster, which this machine cannot "
                   "run: " +
                   problems + ". Nothing was created.";
        return 1;
      }
    }
    return 0;
  }
  if (srun() && (Env("CLUSTER_SH").empty() || Env("SLURM_CONF").empty())) {
    *message = "--inside-cluster --launcher srun: not inside `cluster.sh "
               "slurm run` (CLUSTER_SH, SLURM_CONF)";
    return 2;
  }
  if (!srun() && (Env("CLUSTER_SH").empty() ||
                  Env("CLUSTER_HOSTS") != std::to_string(hosts_))) {
    *message = "--inside-cluster: not inside `cluster.sh run " +
               std::to_string(hosts_) + "` (CLUSTER_SH, CLUSTER_HOSTS)";
    return 2;
  }
  return 0;
}

int ClusterPlan::RunSelfInside(const std::vector<std::string>& command) const {
  std::string why;
  const std::string sh = ClusterSh(&why);
  if (sh.empty()) {
    std::fprintf(stderr, "%s: %s\n", who_.c_str(), why.c_str());
    return 1;
  }
  std::string self = command.empty() ? "" : command[0];
  if (self.find('/') != std::string::npos && self[0] != '/') {
    self = std::filesystem::absolute(self).string();
  } else if (self.find('/') == std::string::npos) {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) self.assign(buf, static_cast<size_t>(n));
  }
  const std::string prefix =
      who_.substr(0, 3) +
      std::to_string(static_cast<long>(getpid()) % 100000000);
  const std::string k = std::to_string(hosts_);
  // Slurm: a controller host more than the compute nodes; the driver runs
  // in it (`slurm run`) and `slurm down` removes everything after.
  std::vector<std::string> argv =
      srun() ? std::vector<std::string>{sh, "slurm", "run", "--prefix",
                                        prefix, "--", self}
             : std::vector<std::string>{sh,       "run",  k,      "--rate",
                                        args_.rate, "--prefix", prefix, "--",
                                        self};
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& w = command[i];
    if (w == "--cluster") {
      ++i;
      continue;
    }
    if (w.rfind("--cluster=", 0) == 0) continue;
    argv.push_back(w);
  }
  for (const std::string& w : {std::string("--cluster"), k,
                               std::string("--inside-cluster")})
    argv.push_back(w);
  std::printf("%s: an emulated cluster of %d hosts, one rank per host, links "
              "at %s (bench/cluster/cluster.sh %s, removed afterwards)\n",
              who_.c_str(), hosts_, args_.rate.c_str(),
              srun() ? "slurm: slurmctld in an extra host 0, ranks started by "
                       "srun"
                     : "run");
  std::fflush(stdout);
  bool interrupted = false;
  if (!srun()) {
    const int rc = RunCommand(argv, Environment(), &interrupted);
    return interrupted && rc == 0 ? 1 : rc;
  }
  const std::vector<std::string> up = {sh,       "slurm",     "up",
                                       std::to_string(hosts_ + 1),
                                       "--rate", args_.rate, "--prefix",
                                       prefix};
  const std::vector<std::string> down = {sh, "slurm", "down", "--prefix",
                                         prefix};
  int rc = RunCommand(up, Environment(), &interrupted);
  if (rc == 0 && !interrupted) rc = RunCommand(argv, Environment(), &interrupted);
  bool ignored = false;
  const int down_rc = RunCommand(down, Environment(), &ignored);
  if (down_rc != 0)
    std::fprintf(stderr, "%s: cluster.sh slurm down --prefix %s exited %d\n",
                 who_.c_str(), prefix.c_str(), down_rc);
  return interrupted && rc == 0 ? 1 : rc;
}

std::string ClusterPlan::JobLauncherPath(std::string* why) const {
  if (srun()) {
    if (Executable(args_.srun)) return args_.srun;
    *why = args_.srun + " not found (Debian package slurm-client)";
    return "";
  }
  return ClusterSh(why);
}

}  // namespace rondo::bench::cluster
