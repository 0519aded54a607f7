// rondo-info: prints what Rondo sees and how it is configured.
//   rondo-info               topology, and where this node's ranks compute
//                            and progress, with the reason for each
//   rondo-info --config      every RONDO_* variable of every component
//                            (the configuration registry): default, value,
//                            allowed values and help; --json for tools
//   rondo-info --topology T  the same for another topology (RONDO_TOPOLOGY form)
// Started as a job step (rondo-run -n N rondo-info, mpirun, srun --mpi=pmix),
// every rank learns the node's view as an MPI program would (nmad/node.h):
// local rank 0 prints the node's placement, every rank its own line.
#include <algorithm>
#include <chrono>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "drivers/bootstrap/bootstrap.h"
#include "engine/engine.h"
#include "nmad/core.h"
#include "nmad/node.h"
#include "nmad/options.h"
#include "topology/base/config_registry.h"

namespace {

using rondo::engine::Engine;
using rondo::engine::ProgressThread;

std::string Cores(const rondo::topology::CpuSet& set) {
  if (set.Empty()) return "unknown";
  std::string s = set.ToString();
  return s.substr(1, s.size() - 2);
}

std::string CoreList(const std::vector<int>& cores) {
  rondo::topology::CpuSet set;
  for (int c : cores) set.Set(c);
  return cores.empty() ? "-" : Cores(set);
}

// The OS CPU numbers (as taskset, Slurm and /proc show them) of Rondo's
// cores `set`: " (CPU 1)", or "" when they are the same numbers.
std::string OsCpus(const rondo::topology::Topology& topo,
                   const rondo::topology::CpuSet& set) {
  rondo::topology::CpuSet cpus;
  bool same = true;
  for (int pu = 0; pu < rondo::topology::CpuSet::kMaxCores; ++pu) {
    const int core = topo.CoreOfPu(pu);
    if (core < 0 || !set.Test(core)) continue;
    cpus.Set(pu);
    same = same && pu == core;
  }
  if (same || cpus.Empty()) return "";
  return std::string(cpus.Count() == 1 ? " (CPU " : " (CPUs ") +
         Cores(cpus) + ")";
}

// Started by a launcher: learn the node as a rank does (also when the
// launcher is one Rondo cannot talk to, to say so).
bool InJob() {
  for (const char* v : {"RONDO_RUN_SOCKET", "PMIX_RANK", "PMIX_NAMESPACE",
                        "SLURM_STEP_NUM_TASKS", "PMI_SIZE"})
    if (const char* s = rondo::base::EnvLookup(v); s != nullptr && *s != 0)
      return true;
  return false;
}

// One variable of `rondo-info --config`: its declaration, its value (the
// engine's effective one for the engine's variables, else the
// environment's, else the default) and whether the environment sets it.
struct ConfigLine {
  rondo::base::ConfigDecl decl;
  std::string value;
  bool set = false;
};

std::vector<ConfigLine> ConfigLines(
    const rondo::engine::EngineOptions& options) {
  const auto& registry = rondo::base::ConfigRegistry::Global();
  std::vector<ConfigLine> lines;
  for (rondo::base::ConfigDecl& d : registry.All()) {
    ConfigLine line;
    std::optional<std::string> raw = registry.Raw(d.name);
    line.set = raw.has_value();
    line.value = raw && !raw->empty() ? *raw : d.default_value;
    for (const auto& v : rondo::engine::EngineOptions::Table())
      if (d.name == v.name) line.value = v.print(options);
    line.decl = std::move(d);
    lines.push_back(std::move(line));
  }
  return lines;
}

void PrintConfig(const std::vector<ConfigLine>& lines, std::ostream& out) {
  std::string component;
  for (const ConfigLine& l : lines) {
    if (l.decl.component != component) {
      component = l.decl.component;
      out << (out.tellp() > 0 ? "\n" : "") << "[" << component << "]\n";
    }
    out << l.decl.name << "=" << l.value << (l.set ? "" : "  (default)")
        << "\n    " << l.decl.help << "\n    " << l.decl.type
        << "; allowed: " << l.decl.allowed << "; default: "
        << (l.decl.default_value.empty() ? "(unset)" : l.decl.default_value)
        << "\n";
  }
}

void PrintConfigJson(const std::vector<ConfigLine>& lines, std::ostream& out) {
  nlohmann::json variables = nlohmann::json::array();
  for (const ConfigLine& l : lines)
    variables.push_back({{"name", l.decl.name},
                         {"component", l.decl.component},
                         {"type", l.decl.type},
                         {"default", l.decl.default_value},
                         {"value", l.value},
                         {"set", l.set},
                         {"allowed", l.decl.allowed},
                         {"help", l.decl.help}});
  out << nlohmann::json{{"variables", variables}}.dump(2) << "\n";
}

// The node's placement, one line per local rank.
void PrintNode(const Engine& engine, std::ostream& out) {
  const auto& p = engine.node_placement();
  const auto& o = engine.options();
  const int ncores = engine.topology().NumCores();
  out << "node: " << o.local_size << (o.local_size == 1 ? " rank" : " ranks")
      << " on " << ncores << " cores"
      << (p.oversubscribed ? " (oversubscribed: waiting ranks yield their "
                             "core)"
                           : "")
      << "; RONDO_PROGRESS=" << o.progress.ToString() << "\n";
  for (int r = 0; r < o.local_size; ++r) {
    const auto& cores = engine.rank_cores()[r];
    const bool quiet = r < static_cast<int>(p.quiet.size()) && p.quiet[r];
    out << "  local rank " << r << ": computes on "
        << (cores.Empty() ? "cores unknown (not told by the launcher)"
                          : (cores.Count() == 1 ? "core " : "cores ") +
                                Cores(cores) +
                                OsCpus(engine.topology(), cores))
        << "; progress: ";
    rondo::topology::CpuSet progress;
    for (int c : p.progress_cores[r]) progress.Set(c);
    out << (p.progress_cores[r].empty()
                ? "none"
                : quiet && cores.Count() != 1
                      ? "quiet thread, unbound like its application"
                      : (quiet ? "quiet thread on core " : "thread on core ") +
                            CoreList(p.progress_cores[r]) +
                            OsCpus(engine.topology(), progress))
        << "\n";
    if (r < static_cast<int>(p.why.size()) && !p.why[r].empty())
      out << "    why: " << p.why[r] << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Rondo: topology, placement and configuration"};
  bool config = false, json = false;
  std::string topology;
  app.add_flag("--config,-c", config,
               "print every RONDO_* variable: value, default, allowed values "
               "and help, by component");
  app.add_flag("--json", json, "with --config: print JSON");
  app.add_option("--topology,-t", topology,
                 "native | synthetic:<description> | xml:<path>");
  CLI11_PARSE(app, argc, argv);
  try {
    rondo::engine::EngineOptions options =
        rondo::engine::EngineOptions::FromEnvironment();
    if (config) {
      if (!topology.empty()) options.topology = topology;
      std::ostringstream out;
      if (json)
        PrintConfigJson(ConfigLines(options), out);
      else
        PrintConfig(ConfigLines(options), out);
      std::cout << out.str();
      return 0;
    }
    std::unique_ptr<rondo::drivers::bootstrap::Bootstrap> boot;
    if (InJob()) {
      std::string error;
      auto b = rondo::drivers::bootstrap::BootstrapFromEnvironment(&error);
      if (!b.ok()) {
        std::fprintf(stderr, "rondo-info: cannot reach the job's launcher: %s\n",
                     error.c_str());
        return 2;
      }
      boot = std::move(b).value();
      auto o = rondo::nmad::NodeEngineOptions(*boot, &error);
      if (!o.ok()) {
        std::fprintf(stderr, "rondo-info: %s\n", error.c_str());
        return 2;
      }
      options = std::move(o).value();
    }
    // What an MPI program's engine gets (MadMPI marks its calls).
    options.marks_calls = true;
    if (!topology.empty()) options.topology = topology;
    Engine engine(options);
    const auto& topo = engine.topology();
    std::ostringstream out;
    if (options.local_rank == 0) {
      out << "topology: " << topo.source().ToString() << " ("
          << topo.NumCores() << " cores, " << topo.NumNuma()
          << " NUMA nodes)\n"
          << topo.Describe()
          << "queue: " << rondo::queues::QueueKindName(options.queue) << "\n";
      PrintNode(engine, out);
    }
    out << (boot ? "rank " + std::to_string(boot->rank()) + ", " : "")
        << "local rank " << options.local_rank << ": application core "
        << engine.app_core();
    for (const auto& t : engine.threads()) {
      out << "; "
          << (t->mode() == ProgressThread::Mode::kTimer
                  ? "timer thread (" + std::to_string(engine.timer_period_us()) +
                        " us)"
                  : t->mode() == ProgressThread::Mode::kQuiet
                        ? "quiet progress thread"
                        : "progress thread")
          << " on core " << t->core();
    }
    if (engine.threads().empty()) out << "; no engine thread";
    out << "\n";
    if (boot && boot->size() > 1) {
      // The rail that carries each peer's messages (RONDO_SHM: shm inside
      // the node, ucx across nodes).
      const int rank = boot->rank(), size = boot->size();
      std::string error;
      auto core = rondo::nmad::Core::Create(
          engine, std::move(boot), rondo::nmad::NmadOptions::FromEnvironment(),
          &error);
      if (!core.ok()) {
        std::fprintf(stderr, "rondo-info: cannot create the nmad core: %s\n",
                     error.c_str());
        return 2;
      }
      out << "rank " << rank << " rails:";
      for (int peer = 0; peer < size; ++peer)
        out << " " << peer << "=" << core.value()->PathTo(peer);
      out << "\n";
      // The eager limit to each peer: RONDO_EAGER_LIMIT on the node,
      // RONDO_NET_EAGER_LIMIT to other nodes.
      out << "rank " << rank << " eager limits:";
      for (int peer = 0; peer < size; ++peer)
        out << " " << peer << "=" << core.value()->EagerLimitTo(peer);
      out << "\n";
      // What wakes this rank's background progress on each rail, and what
      // it falls back to where nothing does (docs/defaults.md).
      // The cost of that, measured here: an idle progress pass (every rail
      // polled once), times how often it runs while the application
      // computes with work pending and nothing arrives.
      constexpr int kPasses = 2000;
      for (int i = 0; i < kPasses / 10; ++i) core.value()->Progress();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kPasses; ++i) core.value()->Progress();
      const double pass_ns =
          std::chrono::duration<double, std::nano>(
              std::chrono::steady_clock::now() - t0)
              .count() /
          kPasses;
      const int64_t poll_us =
          std::max<int64_t>(engine.options().quiet_period_us / 2, 1);
      bool polled = false;
      out << "rank " << rank << " progress wakes on:";
      for (int r = 0; r < core.value()->rails(); ++r) {
        const bool fd = core.value()->RailWakeup(r) == "event fd";
        polled = polled || !fd;
        out << " rail " << r << ": "
            << (fd ? "the transport's event fd"
                   : "nothing: polled every " + std::to_string(poll_us) +
                         " us");
        if (r + 1 < core.value()->rails()) out << ";";
      }
      const double period_ns =
          polled ? poll_us * 1e3
                 : rondo::engine::ProgressThread::quiet_safety_net_ms() * 1e6;
      char cost[200];
      std::snprintf(cost, sizeof cost,
                    "\nrank %d idle progress pass: %.0f ns; with work pending "
                    "and nothing arriving it runs every %s: %.3f%% of the "
                    "computation's core\n",
                    rank, pass_ns,
                    polled ? (std::to_string(poll_us) + " us").c_str()
                           : (std::to_string(rondo::engine::ProgressThread::
                                                 quiet_safety_net_ms()) +
                              " ms (the safety net)")
                                 .c_str(),
                    100.0 * pass_ns / period_ns);
      out << cost;
      using Q = rondo::engine::EngineOptions::QuietSched;
      const Q sched = engine.options().quiet_sched;
      out << "rank " << rank << " quiet progress policy (RONDO_QUIET_SCHED): "
          << (sched == Q::kStream
                  ? "stream: a transfer's first events preempt the "
                    "computation, then SCHED_BATCH while bytes stream"
              : sched == Q::kBatch
                  ? "batch: its wake-ups wait for the computation's time "
                    "slice"
                  : "normal: every event preempts the computation")
          << "\n";
      std::cout << out.str() << std::flush;
      return 0;  // ~Core: a barrier, then the bootstrap's Finalize
    }
    std::cout << out.str() << std::flush;
    if (boot) (void)boot->Finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rondo-info: %s\n", e.what());
    return 2;
  }
  return 0;
}
