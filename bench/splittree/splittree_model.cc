// The split-tree model (nmad/coll/splittree_model.h) tabulated: for each
// machine size N_proc (--nproc, default 64) and each N in [1, N_proc], the S
// the model chooses and the model time of every S, for constant-size
// (reduce, broadcast) and size-doubling (gather, scatter) operations.
//
// Why a benchmark: the model is what the runtime uses instead of a
// calibration run, so its predictions are the "figures" to compare with the
// measured split-tree collectives, and the plots reproduce the paper's
// Figures 12-16 for any machine size.
//
// Output: a human table per (op, N_proc); with --json FILE the usual report
// (bench/common/report.h) with one case "choice:<op>:<nproc>:<N>" per point,
// fields S, model_time (units of one buffer transfer), median_ns = min_ns =
// p99_ns = model_time * --unit-ns, and the series the plots need. With
// --plot-dir DIR it runs bench/splittree/splittree_plot.py (python3 +
// matplotlib) to write the PNGs; without matplotlib it says so and still
// succeeds.
//
//   bazel run -c opt //bench/splittree:splittree_model -- --json /tmp/m.json
//     --plot-dir /tmp/figs [--nproc 64,48]
#include <limits.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/common/plot.h"
#include "bench/common/report.h"
#include "nmad/coll/splittree_model.h"

namespace rondo::bench {
namespace {

namespace coll = rondo::nmad::coll;
using nlohmann::json;

struct Args {
  std::vector<int> nprocs = {64};
  std::vector<std::string> ops = {"constant", "doubling"};
  std::string level_count = "text";
  double unit_ns = 1.0;
  std::string json_path;
  std::string plot_dir;
  bool quiet = false;
};

// A JSON number, or null for +infinity (a split that needs communication
// cores when there are none).
json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string Cell(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

coll::SplitOp ParseOp(const std::string& name) {
  if (name == "constant") return coll::SplitOp::kConstant;
  if (name == "doubling") return coll::SplitOp::kDoubling;
  throw std::invalid_argument("Invalid value for --ops: '" + name +
                              "'. Expected: constant or doubling");
}

// One table and the report's cases for one (op, N_proc).
void RunOne(const Args& a, coll::SplitOp op, int nproc, Report* report) {
  const int h_max = coll::TreeHeight(nproc);
  if (!a.quiet) {
    std::printf("\n== op %s, N_proc = %d (model times in transfer units; "
                "* = chosen S) ==\n",
                std::string(coll::SplitOpName(op)).c_str(), nproc);
    std::printf("%4s %3s %9s %9s %9s", "N", "P", "S_chosen", "C(N)",
                "blocking");
    for (int s = 0; s <= h_max; ++s) std::printf("  %8s%-2d", "S=", s);
    std::printf("\n");
  }
  for (int n = 1; n <= nproc; ++n) {
    coll::SplitTreeParams p;
    p.nproc = nproc;
    p.n = n;
    p.op = op;
    p.unit_ns = a.unit_ns;
    p.level_count = a.level_count == "printed"
                        ? coll::LevelCountFormula::kAsPrinted
                        : coll::LevelCountFormula::kText;
    const int h = coll::TreeHeight(n);
    const int pcores = coll::CommCores(nproc, n);
    const std::vector<double> overlapped = coll::ModelTimes(p);
    const int chosen = coll::ChooseSplit(p);
    const double model_time = overlapped[chosen];
    const double computation = coll::Computation(p);
    const double blocking = op == coll::SplitOp::kConstant
                                ? coll::TBlocking(n)
                                : coll::TBlockingVar(n);
    json overlapped_j = json::array(), nonblocking_j = json::array(),
         levels_j = json::array();
    for (int s = 0; s <= h; ++s) {
      overlapped_j.push_back(Number(overlapped[s]));
      nonblocking_j.push_back(Number(
          op == coll::SplitOp::kConstant
              ? coll::TNonBlocking(s, n, pcores, p.level_count)
              : coll::TNonBlockingVar(s, n, pcores, p.level_count)));
    }
    for (int i = 1; i <= h; ++i)
      levels_j.push_back(coll::LevelCommunications(n, i, p.level_count));

    CaseResult r;
    r.name = "choice:" + std::string(coll::SplitOpName(op)) + ":" +
             std::to_string(nproc) + ":" + std::to_string(n);
    const double ns = model_time * a.unit_ns;
    r.stats.min_ns = r.stats.median_ns = r.stats.p99_ns = r.stats.max_ns =
        r.stats.mean_ns = ns;
    r.stats.samples = 1;
    r.note = "S=" + std::to_string(chosen);
    r.extra = {{"op", coll::SplitOpName(op)},
               {"nproc", nproc},
               {"N", n},
               {"P", pcores},
               {"H", h},
               {"S", chosen},
               {"model_time", model_time},
               {"unit", "one point-to-point transfer of the operation's "
                        "buffer; *_ns = model_time * unit_ns"},
               {"unit_ns", a.unit_ns},
               {"computation", computation},
               {"blocking", blocking},
               // Blocking collective then computation, in sequence (Fig 14).
               {"blocking_plus_computation", blocking + computation},
               {"overlapped_by_S", std::move(overlapped_j)},
               {"nonblocking_by_S", std::move(nonblocking_j)},
               {"level_communications", std::move(levels_j)}};
    report->Add(std::move(r));

    if (!a.quiet) {
      std::printf("%4d %3d %9d %9.2f %9.2f", n, pcores, chosen, computation,
                  blocking);
      for (int s = 0; s <= h_max; ++s) {
        const std::string c =
            s <= h ? Cell(overlapped[s]) + (s == chosen ? "*" : " ") : "";
        std::printf("  %10s", c.c_str());
      }
      std::printf("\n");
    }
  }
}

int Run(const char* argv0, const Args& a) {
  if (a.level_count != "text" && a.level_count != "printed") {
    throw std::invalid_argument("Invalid value for --level-count: '" +
                                a.level_count + "'. Expected: text or printed");
  }
  Report report("splittree_model");
  for (const std::string& op_name : a.ops) {
    const coll::SplitOp op = ParseOp(op_name);
    for (int nproc : a.nprocs) RunOne(a, op, nproc, &report);
  }
  // Summary: where S switches, per (op, N_proc).
  std::printf("\n== S switches (first N with each S) ==\n");
  for (const std::string& op_name : a.ops) {
    for (int nproc : a.nprocs) {
      std::printf("%-8s N_proc=%-4d", op_name.c_str(), nproc);
      int previous = -1;
      for (int n = 1; n <= nproc; ++n) {
        const std::string name = "choice:" + op_name + ":" +
                                 std::to_string(nproc) + ":" +
                                 std::to_string(n);
        const int s = report.Find(name)->extra["S"].get<int>();
        if (s != previous) std::printf("  S=%d from N=%d", s, n);
        previous = s;
      }
      std::printf("\n");
    }
  }
  const json machine_extra = {
      {"model", "split-tree (Denis et al., IJHPCA 2019, Sec. 6.2)"},
      {"equation_4", "strong scaling: C(N) = N_proc / N * C(N_proc)"},
      {"equation_5", a.level_count == "printed"
                         ? "as printed: ceil(N / 2^i + 1/2)"
                         : "text reading: floor(N / 2^i + 1/2)"},
      {"nprocs", a.nprocs}};
  return WriteJsonAndPlot(argv0, "splittree_model", report, machine_extra,
                          a.json_path, a.plot_dir,
                          "bench/splittree/splittree_plot.py");
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args a;
  CLI::App app{
      "The split-tree model (docs/splittree_model.md): the S chosen for each "
      "N and the model time of every S, for constant-size and size-doubling "
      "operations"};
  app.add_option("--nproc", a.nprocs,
                 "machine sizes N_proc, e.g. 64 or 64,48 (default 64)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("--ops", a.ops, "constant and/or doubling (default both)")
      ->delimiter(',')
      ->check(CLI::IsMember({"constant", "doubling"}));
  app.add_option("--level-count", a.level_count,
                 "Equation 5 reading: text (floor(N/2^i+1/2), default) or "
                 "printed (ceil(N/2^i+1/2))")
      ->check(CLI::IsMember({"text", "printed"}));
  app.add_option("--unit-ns", a.unit_ns,
                 "nanoseconds per unit (one buffer transfer) for the *_ns "
                 "fields (default 1: *_ns = model_time)")
      ->check(CLI::Range(1e-9, 1e15));
  app.add_option("--json", a.json_path, "write results as JSON to this file");
  app.add_option("--plot-dir", a.plot_dir,
                 "write the PNG figures (Figures 12-16) to this directory");
  app.add_flag("--quiet", a.quiet, "print only the S switches");
  CLI11_PARSE(app, argc, argv);
  try {
    return rondo::bench::Run(argv[0], a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splittree_model: %s\n", e.what());
    return 1;
  }
}
