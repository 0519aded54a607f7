#include "bench/common/report.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace rondo::bench {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

Stats Summarize(std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
  };
  s.samples = static_cast<int64_t>(v.size());
  s.min_ns = v.front();
  s.max_ns = v.back();
  s.median_ns = at(0.5);
  s.p99_ns = at(0.99);
  s.mean_ns = std::accumulate(v.begin(), v.end(), 0.0) /
              static_cast<double>(v.size());
  return s;
}

const CaseResult* Report::Find(const std::string& name) const {
  for (const auto& r : results_)
    if (r.name == name) return &r;
  return nullptr;
}

void Report::PrintTable() const {
  std::printf("\n%-28s %12s %12s %12s  %s\n", "case", "min ns", "median ns",
              "p99 ns", "note");
  std::printf("%s\n", std::string(96, '-').c_str());
  for (const auto& r : results_) {
    std::printf("%-28s %12.1f %12.1f %12.1f  %s\n", r.name.c_str(),
                r.stats.min_ns, r.stats.median_ns, r.stats.p99_ns,
                r.note.c_str());
  }
  std::fflush(stdout);
}

nlohmann::json Report::ToJson(const nlohmann::json& machine_extra) const {
  nlohmann::json machine = MachineInfo();
  if (machine_extra.is_object()) machine.update(machine_extra);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : results_) {
    nlohmann::json j = {{"case", r.name},
                        {"median_ns", r.stats.median_ns},
                        {"min_ns", r.stats.min_ns},
                        {"p99_ns", r.stats.p99_ns},
                        {"max_ns", r.stats.max_ns},
                        {"mean_ns", r.stats.mean_ns},
                        {"samples", r.stats.samples}};
    if (r.extra.is_object()) j.update(r.extra);
    results.push_back(std::move(j));
  }
  return {{"benchmark", benchmark_},
          {"machine", std::move(machine)},
          {"results", std::move(results)}};
}

void Report::WriteJson(const std::string& path,
                       const nlohmann::json& machine_extra) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write JSON to '" + path + "'");
  out << ToJson(machine_extra).dump(2) << '\n';
  if (!out) throw std::runtime_error("error while writing '" + path + "'");
}

nlohmann::json MachineInfo() {
  nlohmann::json m;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  m["hostname"] = host;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      m["cpu_model"] = line.substr(line.find(':') + 2);
      break;
    }
  }
  m["processors"] = std::thread::hardware_concurrency();
  utsname u;
  if (uname(&u) == 0)
    m["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m["compiler"] = "gcc " __VERSION__;
#ifdef NDEBUG
  m["build"] = "opt";
#else
  m["build"] = "debug (use bazel run -c opt for figures)";
#endif
  return m;
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path,
                                          const char* who) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      out.push_back(nlohmann::json::parse(line));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: bad line in %s: %s\n", who, path.c_str(),
                   e.what());
    }
  }
  return out;
}

}  // namespace rondo::bench
