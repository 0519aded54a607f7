#include "bench/p2p/nmad_bench.h"

#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "bench/common/report.h"
#include "drivers/bootstrap/bootstrap.h"
#include "nmad/node.h"

namespace rondo::bench {
namespace {

bool Executable(const std::string& p) {
  struct stat st;
  return !p.empty() && stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(p.c_str(), X_OK) == 0;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> LauncherArgv(const std::string& rondo_run, int ranks,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> v = {rondo_run, "-n", std::to_string(ranks),
                                "--bind", "core", SelfExe()};
  v.insert(v.end(), args.begin(), args.end());
  return v;
}

std::vector<char*> CArgv(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool UnderLauncher() {
  return !Env("RONDO_RUN_SOCKET").empty() || !Env("PMIX_RANK").empty();
}

std::string SelfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  buf[n] = '\0';
  return buf;
}

std::string FindRondoRun(const char* argv0) {
  const std::string rel = "rondo/drivers/bootstrap/rondo-run";
  std::vector<std::string> tried;
  std::vector<std::string> candidates;
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"})
    if (!Env(var).empty()) candidates.push_back(Env(var) + "/" + rel);
  if (argv0 != nullptr && *argv0 != '\0')
    candidates.push_back(std::string(argv0) + ".runfiles/" + rel);
  const std::string self = SelfExe();
  candidates.push_back(self + ".runfiles/" + rel);
  // bazel-out/<cfg>/bin/bench/p2p/X -> bazel-out/<cfg>/bin/drivers/bootstrap/.
  std::string dir = self.substr(0, self.rfind('/'));
  candidates.push_back(dir + "/../../drivers/bootstrap/rondo-run");
  for (const auto& c : candidates) {
    if (Executable(c)) return c;
    tried.push_back(c);
  }
  std::string msg = "cannot find rondo-run; tried:";
  for (const auto& t : tried) msg += "\n  " + t;
  throw std::runtime_error(msg);
}

void WriteUserJson(const Report& report, const std::string& json_arg,
                   const nlohmann::json& machine) {
  if (json_arg.empty()) return;
  const std::string path = UserPath(json_arg);
  report.WriteJson(path, machine);
  std::printf("\nJSON written to %s\n", path.c_str());
}

int ExecUnderLauncher(int argc, char** argv, int ranks) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::vector<std::string> v = LauncherArgv(FindRondoRun(argv[0]), ranks,
                                              args);
    std::vector<char*> cv = CArgv(v);
    std::fflush(stdout);
    execv(cv[0], cv.data());
    std::perror(("exec " + v[0]).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
  }
  return 1;
}

int RunUnderLauncher(const char* argv0, const std::vector<std::string>& args,
                     int ranks) {
  std::vector<std::string> v = LauncherArgv(FindRondoRun(argv0), ranks, args);
  std::vector<char*> cv = CArgv(v);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    execv(cv[0], cv.data());
    std::perror(("exec " + v[0]).c_str());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

RankSetup SetupRank(const char* who, const std::string& session,
                    const nmad::SessionOptions& session_options) {
  RankSetup r;
  std::string error;
  auto bs = drivers::bootstrap::BootstrapFromEnvironment(&error);
  if (!bs.ok()) {
    std::fprintf(stderr, "%s: bootstrap: %s\n", who, error.c_str());
    std::exit(1);
  }
  // The engine as the library builds it (rondo_nmad_init, MadMPI): with
  // the node's view from the bootstrap and the application's calls marked,
  // so that "default" measures the product's placement (quiet progress
  // for one rank per core on a network), not a bare Engine's.
  try {
    auto options = nmad::NodeEngineOptions(*bs.value(), &error);
    if (!options.ok()) {
      std::fprintf(stderr, "%s: node placement: %s\n", who, error.c_str());
      std::exit(1);
    }
    r.engine = std::make_unique<engine::Engine>(std::move(options).value());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: engine: %s\n", who, e.what());
    std::exit(1);
  }
  // Bind before Create: the Core queues its polling tasks on the cores that
  // share a cache with the creating thread.
  r.engine->BindCurrentThread(r.engine->app_core());
  auto core = nmad::Core::Create(*r.engine, std::move(bs).value(),
                                 nmad::NmadOptions::FromEnvironment(), &error);
  if (!core.ok()) {
    std::fprintf(stderr, "%s: nmad: %s\n", who, error.c_str());
    std::exit(1);
  }
  r.core = std::move(core).value();
  auto s = r.core->OpenSession(session, session_options, &error);
  if (!s.ok()) {
    std::fprintf(stderr, "%s: session: %s\n", who, error.c_str());
    std::exit(1);
  }
  r.session = s.value();
  r.rank = r.core->rank();
  r.size = r.core->size();
  if (r.size != 2) {
    std::fprintf(stderr, "%s: needs exactly 2 ranks (got %d)\n", who, r.size);
    std::exit(2);
  }
  return r;
}

volatile double compute_sink = 0.0;

void Compute(int64_t n) {
  double x = compute_sink + 1.0;
  for (int64_t i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  compute_sink = x;
}

double CalibrateComputeNsPerStep() {
  constexpr int64_t kSteps = 200000;
  Compute(kSteps);  // warm-up
  double best = 1e30;
  for (int i = 0; i < 15; ++i) {
    int64_t t0 = NowNs();
    Compute(kSteps);
    best = std::min(best, static_cast<double>(NowNs() - t0) / kSteps);
  }
  return best;
}

}  // namespace rondo::bench
