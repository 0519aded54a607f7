// Shared reporting for Rondo's benchmarks: latency statistics, a human
// table, and the JSON every benchmark writes with --json FILE:
//   {"benchmark": NAME, "machine": {...},
//    "results": [{"case": STRING, "median_ns": N, "min_ns": N, "p99_ns": N,
//                 ...other fields}]}
#ifndef RONDO_BENCH_COMMON_REPORT_H_
#define RONDO_BENCH_COMMON_REPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rondo::bench {

struct Stats {
  double min_ns = 0, median_ns = 0, p99_ns = 0, max_ns = 0, mean_ns = 0;
  int64_t samples = 0;
};

// Order statistics of `samples_ns` (which it sorts).
Stats Summarize(std::vector<double>& samples_ns);

struct CaseResult {
  std::string name;
  Stats stats;
  std::string note;      // shown in the table
  nlohmann::json extra;  // extra JSON fields (object or null)
};

class Report {
 public:
  explicit Report(std::string benchmark) : benchmark_(std::move(benchmark)) {}
  void Add(CaseResult result) { results_.push_back(std::move(result)); }
  const std::vector<CaseResult>& results() const { return results_; }
  const CaseResult* Find(const std::string& name) const;

  // Prints "case  min  median  p99  note" rows to stdout.
  void PrintTable() const;
  // The JSON document. `machine` is merged into the machine description.
  nlohmann::json ToJson(const nlohmann::json& machine_extra = {}) const;
  // Writes ToJson() to `path`; throws std::runtime_error naming the path.
  void WriteJson(const std::string& path,
                 const nlohmann::json& machine_extra = {}) const;

 private:
  std::string benchmark_;
  std::vector<CaseResult> results_;
};

// Host name, CPU model, processor count, kernel, compiler, build mode.
nlohmann::json MachineInfo();

// The JSON values of a JSON-lines file (what the MPI benchmark programs
// write), one per non-empty line, in order. A line that is not JSON is
// reported on stderr ("WHO: bad line in PATH: why") and skipped; a missing
// file gives none.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path,
                                          const char* who);

// Nanoseconds from a monotonic clock (~20 ns per call on this machine).
int64_t NowNs();

}  // namespace rondo::bench

#endif  // RONDO_BENCH_COMMON_REPORT_H_
