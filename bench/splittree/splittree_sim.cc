// The folded-collective simulator (bench/splittree/foldsim.h) on the split-tree
// paper's many-core configurations (Denis et al., IJHPCA 2019):
//   Figure 7      chain MPI_Iscan, 62 ranks on a 64-core KNL, 1 MiB, progress
//                 threads placed bind / numa / odd-even;
//   Figures 17-19 split-tree Ibcast (KNL 64), Ireduce (KNL 64) and Ireduce
//                 (Skylake 48), 2 MiB, S = 0..3, N from N_proc/2 to
//                 N_proc - 1, each rank computing C(N) (strong scaling,
//                 C(N_proc) = the simulated blocking collective on all cores),
//                 beside the blocking collective + computation and beside the
//                 model of Section 6.2 (nmad/coll/splittree_model.h).
//
// Not a measurement: the times are simulated (units of one buffer copy, and
// simulated ns with --copy-gbps), on synthetic topologies. This machine has
// 2 cores.
//
// Output: a human table per figure; with --json FILE the usual report
// (bench/common/report.h): cases iscan:<placement>:<nproc>:<N>,
// blocking:<op>:<nproc>:<N>, split:<op>:<nproc>:<N>:<S> and
// best:<op>:<nproc>:<N>, median_ns = min_ns = p99_ns = the simulated time
// (a deterministic run has one sample). With --plot-dir DIR it runs
// bench/splittree/splittree_sim_plot.py (python3 + matplotlib); without
// matplotlib it says so and still succeeds.
//
//   bazel run -c opt //bench/splittree:splittree_sim -- --json $PWD/docs/results/splittree_sim.json --plot-dir $PWD/docs/figures
#include <limits.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/common/plot.h"
#include "bench/common/report.h"
#include "bench/splittree/foldsim.h"
#include "nmad/coll/splittree_model.h"

namespace rondo::bench {
namespace {

namespace coll = rondo::nmad::coll;
using nlohmann::json;

struct Args {
  std::vector<int> figures = {7, 17, 18, 19};
  std::string knl_topology = "synthetic:numa:1 core:64 pu:1";
  std::string skl_topology = "synthetic:numa:2 core:24 pu:1";
  int iscan_ranks = 62;
  uint64_t iscan_bytes = 1 << 20;
  uint64_t split_bytes = 2 << 20;
  int p_max = 0;  // 0: N_proc / 2
  int s_max = 3;
  std::string cost = "default";
  std::string protocol;
  double copy_gbps = -1, reduce_factor = -1, latency_ns = -1, step_ns = -1,
         switch_ns = -1, wake_ns = -1, spin_ns = -1, quantum_ns = -1;
  int64_t chunk_bytes = -1, bounce_bytes = -1;
  bool measure_copy = false;
  std::string json_path;
  std::string plot_dir;
  bool quiet = false;
};

// Measured-cost mode: this machine's single-thread memcpy bandwidth for
// buffers of `bytes`, bytes per ns (median of repeated copies).
double MeasureCopyBytesPerNs(uint64_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::vector<double> per_ns;
  for (int i = 0; i < 41; ++i) {
    const int64_t t0 = NowNs();
    std::memcpy(b.data(), a.data(), bytes);
    const int64_t t1 = NowNs();
    a[i % bytes] = b[(i * 7) % bytes];  // keep the copies observable
    if (i > 0) per_ns.push_back(double(bytes) / double(std::max<int64_t>(1, t1 - t0)));
  }
  std::sort(per_ns.begin(), per_ns.end());
  return per_ns[per_ns.size() / 2];
}

coll::CostModel MakeCost(const Args& a) {
  if (a.cost != "default" && a.cost != "unit") {
    throw std::invalid_argument("Invalid value for --cost: '" + a.cost +
                                "'. Expected: default or unit");
  }
  coll::CostModel c = a.cost == "unit" ? coll::CostModel::Unit()
                                       : coll::CostModel();
  if (!a.protocol.empty()) c.protocol = coll::ParseProtocol(a.protocol);
  if (a.copy_gbps >= 0) c.copy_bytes_per_ns = a.copy_gbps;
  if (a.reduce_factor >= 0) c.reduce_factor = a.reduce_factor;
  if (a.latency_ns >= 0) c.latency_ns = a.latency_ns;
  if (a.step_ns >= 0) c.step_ns = a.step_ns;
  if (a.switch_ns >= 0) c.switch_ns = a.switch_ns;
  if (a.wake_ns >= 0) c.wake_ns = a.wake_ns;
  if (a.spin_ns >= 0) c.spin_ns = a.spin_ns;
  if (a.quantum_ns >= 0) c.quantum_ns = a.quantum_ns;
  if (a.chunk_bytes >= 0) c.chunk_bytes = uint64_t(a.chunk_bytes);
  if (a.bounce_bytes >= 0) c.bounce_bytes = uint64_t(a.bounce_bytes);
  if (a.measure_copy) {
    c.copy_bytes_per_ns =
        MeasureCopyBytesPerNs(std::max(a.iscan_bytes, a.split_bytes));
  }
  c.Validate();
  return c;
}

json CostJson(const coll::CostModel& c) {
  return {{"protocol", coll::ProtocolName(c.protocol)},
          {"copy_bytes_per_ns", c.copy_bytes_per_ns},
          {"reduce_factor", c.reduce_factor},
          {"chunk_bytes", c.chunk_bytes},
          {"bounce_bytes", c.bounce_bytes},
          {"latency_ns", c.latency_ns},
          {"step_ns", c.step_ns},
          {"switch_ns", c.switch_ns},
          {"wake_ns", c.wake_ns},
          {"spin_ns", c.spin_ns},
          {"quantum_ns", c.quantum_ns}};
}

CaseResult SimCase(const std::string& name, double ns, json extra,
                   std::string note) {
  CaseResult r;
  r.name = name;
  r.stats.min_ns = r.stats.median_ns = r.stats.p99_ns = r.stats.max_ns =
      r.stats.mean_ns = ns;
  r.stats.samples = 1;
  r.note = std::move(note);
  extra["simulated"] = true;
  r.extra = std::move(extra);
  return r;
}

void CheckRun(const coll::FoldResult& r, const std::string& what) {
  if (!r.deadlock) return;
  std::string msg = "the simulation of " + what + " deadlocked:";
  for (const auto& s : r.stuck) msg += "\n  " + s;
  throw std::runtime_error(msg);
}

std::shared_ptr<const topology::Topology> LoadTopology(const std::string& t,
                                                       const char* option) {
  try {
    return topology::Topology::Load(t);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("Invalid value for ") + option +
                                ": " + e.what());
  }
}

// ---- Figure 7 ----

void RunFigure7(const Args& a, const coll::CostModel& cost,
                const topology::Topology& knl, Report* report) {
  const int nproc = knl.NumCores();
  const std::map<std::string, double> paper = {
      {"bind", 1.0}, {"numa", 3.0}, {"odd-even", 1.5}};
  double bind_units = 0;
  if (!a.quiet) {
    std::printf("\n== Figure 7: chain Iscan, %d ranks on %d cores, %llu bytes "
                "(simulated; unit = one %llu-byte copy = %.1f us) ==\n",
                a.iscan_ranks, nproc, (unsigned long long)a.iscan_bytes,
                (unsigned long long)a.iscan_bytes,
                cost.CopyNs(a.iscan_bytes) / 1000);
    std::printf("%-9s %10s %12s %10s %10s %10s %s\n", "placement", "units",
                "sim_ms", "vs bind", "paper", "switches", "comm cores");
  }
  for (const std::string placement : {"bind", "numa", "odd-even"}) {
    const coll::FoldConfig cfg = coll::ChainScanConfig(
        knl, a.iscan_ranks, engine::PlacementSpec::Parse(placement),
        a.iscan_bytes, cost);
    const coll::FoldResult r = coll::Simulate(cfg);
    CheckRun(r, "the chain Iscan with " + placement);
    if (placement == "bind") bind_units = r.units();
    int64_t switches = 0;
    for (const auto& c : r.cores) switches += c.switches;
    std::string comm;
    for (int c : r.placement.comm_cores)
      comm += (comm.empty() ? "" : ",") + std::to_string(c);
    const double ratio = r.units() / bind_units;
    json extra = {{"figure", 7},
                  {"collective", "scan"},
                  {"algorithm", "chain"},
                  {"placement", placement},
                  {"nproc", nproc},
                  {"N", a.iscan_ranks},
                  {"bytes", a.iscan_bytes},
                  {"units", r.units()},
                  {"unit_ns", r.unit_ns},
                  {"ratio_to_bind", ratio},
                  {"paper_ratio_to_bind", paper.at(placement)},
                  {"overlappable", placement != "bind"},
                  {"comm_cores", r.placement.comm_cores},
                  {"switches", switches},
                  {"messages", r.messages}};
    report->Add(SimCase("iscan:" + placement + ":" + std::to_string(nproc) +
                            ":" + std::to_string(a.iscan_ranks),
                        r.time_ns, std::move(extra),
                        "simulated, " + std::to_string(ratio).substr(0, 4) +
                            "x bind"));
    if (!a.quiet) {
      std::printf("%-9s %10.2f %12.3f %9.2fx %9.1fx %10lld %s\n",
                  placement.c_str(), r.units(), r.time_ns / 1e6, ratio,
                  paper.at(placement), (long long)switches,
                  comm.empty() ? "-" : comm.c_str());
    }
  }
  const double numa = report->Find("iscan:numa:" + std::to_string(nproc) +
                                   ":" + std::to_string(a.iscan_ranks))
                          ->extra["units"]
                          .get<double>();
  const double oe = report->Find("iscan:odd-even:" + std::to_string(nproc) +
                                 ":" + std::to_string(a.iscan_ranks))
                        ->extra["units"]
                        .get<double>();
  std::printf("Figure 7 (simulated): numa / bind = %.2f (paper ~3), numa / "
              "odd-even = %.2f (paper ~2), odd-even / bind = %.2f (paper "
              "~1.5)\n",
              numa / bind_units, numa / oe, oe / bind_units);
}

// ---- Figures 17-19 ----

struct SplitFigure {
  int number;
  coll::Collective collective;
  std::string op;  // "bcast" / "reduce"
  const topology::Topology* topo;
  std::string machine;  // "KNL" / "Skylake"
};

void RunSplitFigure(const Args& a, const coll::CostModel& cost,
                    const SplitFigure& f, Report* report) {
  const topology::Topology& topo = *f.topo;
  const int nproc = topo.NumCores();
  const int n_min = nproc - (a.p_max > 0 ? a.p_max : nproc / 2);
  const uint64_t bytes = a.split_bytes;
  const double unit_ns = cost.CopyNs(bytes);
  // C(N_proc): the blocking collective on the full machine (simulated).
  const double c_nproc =
      coll::FullMachineBlockingNs(topo, f.collective, bytes, cost);
  // The model's unit is one tree level of the blocking collective; the
  // simulator's blocking level costs c_nproc / H(N_proc) (a transfer plus,
  // for reduce, the reduction and the overheads).
  const double model_scale = c_nproc / unit_ns / coll::TBlocking(nproc);
  std::vector<int> oversubscribed_n;
  if (!a.quiet) {
    std::printf("\n== Figure %d: split-tree I%s on %s (%d cores), %llu bytes "
                "(simulated; unit = one %llu-byte copy = %.1f us; C(N_proc) = "
                "%.2f units; model x %.3f) ==\n",
                f.number, f.op.c_str(), f.machine.c_str(), nproc,
                (unsigned long long)bytes, (unsigned long long)bytes,
                unit_ns / 1000, c_nproc / unit_ns, model_scale);
    std::printf("%4s %3s %8s %8s", "N", "P", "C(N)", "blocking");
    for (int s = 0; s <= a.s_max; ++s) std::printf("   sim S=%d", s);
    std::printf(" %5s %7s", "S_sim", "S_model");
    for (int s = 0; s <= a.s_max; ++s) std::printf(" model S=%d", s);
    std::printf("\n");
  }
  for (int n = n_min; n < nproc; ++n) {
    const int p = nproc - n;
    const int h = coll::TreeHeight(n);
    const double compute = coll::StrongScaledComputeNs(nproc, n, c_nproc);
    coll::FoldConfig blocking_cfg =
        coll::SplitTreeConfig(topo, n, f.collective, bytes, 0, compute, cost);
    blocking_cfg.mode = coll::FoldMode::kBlocking;
    const coll::FoldResult blocking = coll::Simulate(blocking_cfg);
    const std::string where = f.op + " on " + std::to_string(n) + " ranks of " +
                              std::to_string(nproc);
    CheckRun(blocking, "the blocking " + where);
    // engine::PlaceNode put two ranks on one application core although the
    // machine has a core for every rank and communication core: a placement
    // defect the simulation then faithfully charges for.
    const int shared = blocking.shared_app_core_ranks;
    if (shared > 0) oversubscribed_n.push_back(n);
    coll::SplitTreeParams mp;
    mp.nproc = nproc;
    mp.n = n;
    mp.op = coll::SplitOp::kConstant;
    const int s_model = coll::ChooseSplit(mp);
    const std::vector<double> model = coll::ModelTimes(mp);
    const std::string suffix =
        f.op + ":" + std::to_string(nproc) + ":" + std::to_string(n);
    report->Add(SimCase(
        "blocking:" + suffix, blocking.time_ns,
        {{"figure", f.number},
         {"op", f.op},
         {"machine", f.machine},
         {"bytes", bytes},
         {"nproc", nproc},
         {"N", n},
         {"P", p},
         {"units", blocking.units()},
         {"unit_ns", unit_ns},
         {"compute_units", compute / unit_ns},
         {"shared_app_core_ranks", shared},
         {"model_units", coll::TBlocking(n) + coll::Computation(mp)},
         {"model_scaled_units",
          (coll::TBlocking(n) + coll::Computation(mp)) * model_scale}},
        "simulated blocking + computation"));
    std::vector<double> sim(h + 1);
    int s_sim = 0;
    for (int s = 0; s <= h; ++s) {
      const coll::FoldConfig cfg =
          coll::SplitTreeConfig(topo, n, f.collective, bytes, s, compute, cost);
      const coll::FoldResult r = coll::Simulate(cfg);
      CheckRun(r, "split-tree S=" + std::to_string(s) + " " + where);
      sim[s] = r.units();
      if (sim[s] < sim[s_sim]) s_sim = s;
      if (s > a.s_max) continue;
      double comm_end = 0;
      for (const auto& rt : r.ranks)
        comm_end = std::max(comm_end, rt.call_return_ns);
      report->Add(SimCase(
          "split:" + suffix + ":" + std::to_string(s), r.time_ns,
          {{"figure", f.number},
           {"op", f.op},
           {"machine", f.machine},
           {"bytes", bytes},
           {"nproc", nproc},
           {"N", n},
           {"P", p},
           {"S", s},
           {"H", h},
           {"units", r.units()},
           {"unit_ns", unit_ns},
           {"compute_units", compute / unit_ns},
           {"blocking_units", blocking.units()},
           {"shared_app_core_ranks", shared},
           {"call_return_units", comm_end / unit_ns},
           {"model_units", model[std::min(s, h)]},
           {"model_scaled_units", model[std::min(s, h)] * model_scale}},
          "simulated comp + comms"));
    }
    report->Add(SimCase(
        "best:" + suffix, sim[s_sim] * unit_ns,
        {{"figure", f.number},
         {"op", f.op},
         {"machine", f.machine},
         {"bytes", bytes},
         {"nproc", nproc},
         {"N", n},
         {"P", p},
         {"H", h},
         {"S_sim", s_sim},
         {"S_model", s_model},
         {"units", sim[s_sim]},
         {"units_at_S_model", sim[s_model]},
         {"loss_at_S_model", sim[s_model] / sim[s_sim] - 1},
         {"units_by_S", sim},
         {"shared_app_core_ranks", shared},
         {"unit_ns", unit_ns}},
        "S_sim=" + std::to_string(s_sim) + " S_model=" +
            std::to_string(s_model)));
    if (!a.quiet) {
      std::printf("%4d %3d %8.2f %8.2f", n, p, compute / unit_ns,
                  blocking.units());
      for (int s = 0; s <= a.s_max; ++s) {
        if (s <= h)
          std::printf(" %9.2f", sim[s]);
        else
          std::printf(" %9s", "-");
      }
      std::printf(" %5d %7d", s_sim, s_model);
      for (int s = 0; s <= a.s_max; ++s)
        std::printf(" %9.2f", model[std::min(s, h)] * model_scale);
      if (shared > 0) std::printf("  ! %d ranks share app cores", shared);
      std::printf("\n");
    }
  }
  if (!oversubscribed_n.empty()) {
    std::string list;
    for (int n : oversubscribed_n)
      list += (list.empty() ? "" : ",") + std::to_string(n);
    std::printf("WARNING: Figure %d: for N = %s, engine::PlaceNode puts two "
                "ranks on one application core although N + P = N_proc "
                "(ranks and communication cores are shared out over the NUMA "
                "nodes differently); those points are slowed by that, not by "
                "the split.\n",
                f.number, list.c_str());
  }
  // Where the best S switches, simulated and modelled.
  std::printf("Figure %d (simulated I%s, %s %d): best S switches:", f.number,
              f.op.c_str(), f.machine.c_str(), nproc);
  int prev = -1;
  for (int n = n_min; n < nproc; ++n) {
    const int s = report->Find("best:" + f.op + ":" + std::to_string(nproc) +
                               ":" + std::to_string(n))
                      ->extra["S_sim"]
                      .get<int>();
    if (s != prev) std::printf(" S=%d from N=%d", s, n);
    prev = s;
  }
  std::printf("; model:");
  prev = -1;
  for (int n = n_min; n < nproc; ++n) {
    const int s = report->Find("best:" + f.op + ":" + std::to_string(nproc) +
                               ":" + std::to_string(n))
                      ->extra["S_model"]
                      .get<int>();
    if (s != prev) std::printf(" S=%d from N=%d", s, n);
    prev = s;
  }
  std::printf("\n");
}

int Run(const char* argv0, const Args& a) {
  const coll::CostModel cost = MakeCost(a);
  if (a.s_max < 0 || a.s_max > 8) {
    throw std::invalid_argument("Invalid value for --s-max: " +
                                std::to_string(a.s_max) +
                                ". Expected 0 to 8");
  }
  for (int f : a.figures) {
    if (f != 7 && f != 17 && f != 18 && f != 19) {
      throw std::invalid_argument("Invalid value for --figures: " +
                                  std::to_string(f) +
                                  ". Expected some of 7,17,18,19");
    }
  }
  if (a.iscan_bytes == 0 || a.split_bytes == 0) {
    throw std::invalid_argument(
        "Invalid value for --iscan-bytes/--split-bytes: 0. Expected at least "
        "1 byte");
  }
  const auto knl = LoadTopology(a.knl_topology, "--knl-topology");
  const auto skl = LoadTopology(a.skl_topology, "--skl-topology");
  auto wants = [&](int f) {
    return std::find(a.figures.begin(), a.figures.end(), f) != a.figures.end();
  };
  // Every argument is checked before anything runs.
  if (wants(7) && (a.iscan_ranks < 2 || a.iscan_ranks >= knl->NumCores())) {
    throw std::invalid_argument(
        "Invalid value for --iscan-ranks: " + std::to_string(a.iscan_ranks) +
        ". Expected 2 to " + std::to_string(knl->NumCores() - 1) +
        " (fewer ranks than the --knl-topology's " +
        std::to_string(knl->NumCores()) +
        " cores, so that numa and odd-even have free cores)");
  }
  for (const auto& [fig, topo, option] :
       {std::tuple{17, knl.get(), "--knl-topology"},
        std::tuple{18, knl.get(), "--knl-topology"},
        std::tuple{19, skl.get(), "--skl-topology"}}) {
    if (wants(fig) && (a.p_max >= topo->NumCores() || topo->NumCores() < 2)) {
      throw std::invalid_argument(
          "Invalid value for --p-max: " + std::to_string(a.p_max) +
          ". Expected fewer than the " + std::to_string(topo->NumCores()) +
          " cores of " + option + " (Figure " + std::to_string(fig) +
          " needs at least one rank and one communication core)");
    }
  }
  const int64_t t0 = NowNs();
  Report report("splittree_sim");
  std::printf("splittree_sim: SIMULATED times (bench/splittree/foldsim.h), not "
              "measurements; cost model %s, %s, copy %.3g GB/s\n",
              a.cost.c_str(),
              std::string(coll::ProtocolName(cost.protocol)).c_str(),
              cost.copy_bytes_per_ns);
  if (wants(7)) RunFigure7(a, cost, *knl, &report);
  const std::vector<SplitFigure> figures = {
      {17, coll::Collective::kBcast, "bcast", knl.get(), "KNL"},
      {18, coll::Collective::kReduce, "reduce", knl.get(), "KNL"},
      {19, coll::Collective::kReduce, "reduce", skl.get(), "Skylake"}};
  for (const SplitFigure& f : figures)
    if (wants(f.number)) RunSplitFigure(a, cost, f, &report);
  const double seconds = double(NowNs() - t0) / 1e9;
  std::printf("\n%zu simulated cases in %.2f s of this machine's time\n",
              report.results().size(), seconds);

  const json machine_extra = {
      {"simulated", true},
      {"note", "simulated times of a folded collective on synthetic "
               "topologies (bench/splittree/foldsim.h); not a measurement of a "
               "many-core machine"},
      {"simulator", "bench/splittree/foldsim"},
      {"cost_model", CostJson(cost)},
      {"cost_preset", a.cost},
      {"copy_measured", a.measure_copy},
      {"knl_topology", a.knl_topology},
      {"skl_topology", a.skl_topology},
      {"iscan_bytes", a.iscan_bytes},
      {"split_bytes", a.split_bytes},
      {"model_scaling",
       "model_scaled_units = model_units * C_sim(N_proc) / H(N_proc): one "
       "model unit (a tree level) costs what one level of the simulated "
       "blocking collective costs"}};
  return WriteJsonAndPlot(argv0, "splittree_sim", report, machine_extra,
                          a.json_path, a.plot_dir,
                          "bench/splittree/splittree_sim_plot.py");
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args a;
  CLI::App app{
      "Simulated many-core runs of Rondo's folded collectives "
      "(bench/splittree/foldsim.h; docs/splittree_sim.md): the split-tree "
      "paper's "
      "Figure 7 (chain Iscan, bind/numa/odd-even) and Figures 17-19 "
      "(split-tree S = 0..3 beside the model). Simulated, not measured."};
  app.add_option("--figures", a.figures,
                 "which figures to simulate: some of 7,17,18,19 (default all)")
      ->delimiter(',');
  app.add_option("--knl-topology", a.knl_topology,
                 "topology of Figures 7, 17, 18 (default \"synthetic:numa:1 "
                 "core:64 pu:1\": a 64-core KNL in quadrant mode)");
  app.add_option("--skl-topology", a.skl_topology,
                 "topology of Figure 19 (default \"synthetic:numa:2 core:24 "
                 "pu:1\": a dual-socket 48-core Skylake)");
  app.add_option("--iscan-ranks", a.iscan_ranks,
                 "ranks of the Figure 7 chain Iscan (default 62)");
  app.add_option("--iscan-bytes", a.iscan_bytes,
                 "message of the Figure 7 Iscan (default 1048576)");
  app.add_option("--split-bytes", a.split_bytes,
                 "message of Figures 17-19 (default 2097152)");
  app.add_option("--p-max", a.p_max,
                 "most communication cores of Figures 17-19: N runs from "
                 "N_proc - p_max to N_proc - 1 (default N_proc / 2)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--s-max", a.s_max,
                 "largest S drawn (default 3; the best S is searched over "
                 "0..H(N) anyway)");
  app.add_option("--cost", a.cost,
                 "cost preset: default (overheads of a KNL-like core, see "
                 "docs/splittree_sim.md) or unit (no overhead at all)")
      ->check(CLI::IsMember({"default", "unit"}));
  app.add_option("--protocol", a.protocol,
                 "two-copy (default) or single-copy")
      ->check(CLI::IsMember({"two-copy", "single-copy"}));
  app.add_option("--copy-gbps", a.copy_gbps,
                 "one core's copy bandwidth, GB/s (default 5)")
      ->check(CLI::Range(1e-6, 1e6));
  app.add_flag("--measure-copy", a.measure_copy,
               "measured-cost mode: use this machine's memcpy bandwidth "
               "(measured now) as the copy bandwidth");
  app.add_option("--reduce-factor", a.reduce_factor,
                 "reduce cost per byte relative to a copy (default 1)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--chunk-bytes", a.chunk_bytes,
                 "pipeline chunk (default 32768)")
      ->check(CLI::Range(int64_t(64), int64_t(1) << 30));
  app.add_option("--bounce-bytes", a.bounce_bytes,
                 "bounce buffer per message (default 65536)")
      ->check(CLI::Range(int64_t(64), int64_t(1) << 40));
  app.add_option("--latency-ns", a.latency_ns, "message latency (default 1000)")
      ->check(CLI::Range(0.0, 1e12));
  app.add_option("--step-ns", a.step_ns, "CPU cost per step (default 500)")
      ->check(CLI::Range(0.0, 1e12));
  app.add_option("--switch-ns", a.switch_ns,
                 "thread switch on a core (default 2000)")
      ->check(CLI::Range(0.0, 1e12));
  app.add_option("--wake-ns", a.wake_ns,
                 "wake-up of a sleeping core (default 5000)")
      ->check(CLI::Range(0.0, 1e12));
  app.add_option("--spin-ns", a.spin_ns,
                 "spin of a blocked thread before it sleeps (default 50000)")
      ->check(CLI::Range(0.0, 1e12));
  app.add_option("--quantum-ns", a.quantum_ns,
                 "round-robin time slice (default 1000000)")
      ->check(CLI::Range(1.0, 1e15));
  app.add_option("--json", a.json_path, "write results as JSON to this file");
  app.add_option("--plot-dir", a.plot_dir,
                 "write the PNG figures (sim_fig7/17/18/19) to this directory");
  app.add_flag("--quiet", a.quiet, "print only the summaries");
  CLI11_PARSE(app, argc, argv);
  try {
    return rondo::bench::Run(argv[0], a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splittree_sim: %s\n", e.what());
    return 1;
  }
}
