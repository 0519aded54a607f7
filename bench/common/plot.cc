#include "bench/common/plot.h"

#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace rondo::bench {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

std::string FindRunfile(const char* argv0, const std::string& rel) {
  std::vector<std::string> candidates;
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"})
    if (!Env(var).empty()) candidates.push_back(Env(var) + "/rondo/" + rel);
  if (argv0 != nullptr && *argv0 != '\0')
    candidates.push_back(std::string(argv0) + ".runfiles/rondo/" + rel);
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n] = '\0';
    candidates.push_back(std::string(buf) + ".runfiles/rondo/" + rel);
  }
  if (!Env("BUILD_WORKSPACE_DIRECTORY").empty())
    candidates.push_back(Env("BUILD_WORKSPACE_DIRECTORY") + "/" + rel);
  for (const auto& c : candidates)
    if (std::filesystem::exists(c)) return c;
  return "";
}

std::string FindProgram(const char* argv0, const std::string& rel) {
  std::string p = FindRunfile(argv0, rel);
  if (p.empty()) {
    // bazel-out/<cfg>/bin/bench/<package>/X -> bazel-out/<cfg>/bin/<rel>
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n > 0) {
      buf[n] = '\0';
      auto c = std::filesystem::path(buf)
                   .parent_path()
                   .parent_path()
                   .parent_path() /
               rel;
      if (std::filesystem::exists(c)) p = c.string();
    }
  }
  if (p.empty())
    throw std::runtime_error(rel + " not found next to this binary or in its "
                             "runfiles (run it with bazel run)");
  return std::filesystem::absolute(p).lexically_normal().string();
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

namespace {

// A Python 3 that can import matplotlib: the one on PATH, else Debian's
// (python3-matplotlib installs for /usr/bin/python3). "" if none.
std::string FindPythonWithMatplotlib() {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    const std::string cmd =
        std::string(py) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return py;
  }
  return "";
}

}  // namespace

std::string UserPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  std::string base = Env("BUILD_WORKING_DIRECTORY");
  if (base.empty()) base = std::filesystem::current_path().string();
  return (std::filesystem::path(base) / path).lexically_normal().string();
}

int RunPythonScript(const char* argv0, const std::string& program,
                    const std::string& script_rel,
                    const std::vector<std::string>& args) {
  const std::string script = FindRunfile(argv0, script_rel);
  if (script.empty()) {
    std::printf("%s: %s not found in the runfiles; no plots (run it with "
                "bazel run)\n",
                program.c_str(), script_rel.c_str());
    return 0;
  }
  const std::string py = FindPythonWithMatplotlib();
  if (py.empty()) {
    std::printf("%s: matplotlib is not installed (Debian: apt-get install "
                "python3-matplotlib); no plots written\n",
                program.c_str());
    return 0;
  }
  std::string cmd = py + " " + ShellQuote(script);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  std::fflush(stdout);  // keep the caller's lines before the script's
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "%s: plotting failed: %s\n", program.c_str(),
                 cmd.c_str());
    return 1;
  }
  return 0;
}

int RunPlotScript(const char* argv0, const std::string& program,
                  const std::string& script_rel, const std::string& json_path,
                  const std::string& plot_dir) {
  return RunPythonScript(argv0, program, script_rel, {json_path, plot_dir});
}

int WriteJsonAndPlot(const char* argv0, const std::string& program,
                     const Report& report, const nlohmann::json& machine_extra,
                     const std::string& json_arg,
                     const std::string& plot_dir_arg,
                     const std::string& script_rel) {
  std::string json_path = UserPath(json_arg);
  const std::string plot_dir = UserPath(plot_dir_arg);
  if (!plot_dir.empty()) {
    std::filesystem::create_directories(plot_dir);
    if (json_path.empty()) json_path = plot_dir + "/" + program + ".json";
  }
  if (!json_path.empty()) {
    report.WriteJson(json_path, machine_extra);
    std::printf("wrote %s (%zu cases)\n", json_path.c_str(),
                report.results().size());
  }
  if (plot_dir.empty()) return 0;
  return RunPlotScript(argv0, program, script_rel, json_path, plot_dir);
}

}  // namespace rondo::bench
