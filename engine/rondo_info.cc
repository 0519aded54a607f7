// rondo-info: prints what Rondo sees and how it is configured.
//   rondo-info               topology tree and thread placement
//   rondo-info --config      effective RONDO_* configuration, with help
//   rondo-info --topology T  the same for another topology (RONDO_TOPOLOGY form)
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "engine/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Rondo: topology, placement and configuration"};
  bool config = false;
  std::string topology;
  app.add_flag("--config,-c", config, "print the effective configuration");
  app.add_option("--topology,-t", topology,
                 "native | synthetic:<description> | xml:<path>");
  CLI11_PARSE(app, argc, argv);
  try {
    rondo::engine::EngineOptions options =
        rondo::engine::EngineOptions::FromEnvironment();
    if (!topology.empty()) options.topology = topology;
    if (config) {
      std::cout << options.Describe();
      return 0;
    }
    rondo::engine::Engine engine(options);
    const auto& topo = engine.topology();
    std::cout << "topology: " << topo.source().ToString() << " ("
              << topo.NumCores() << " cores, " << topo.NumNuma()
              << " NUMA nodes)\n"
              << topo.Describe() << "queue: "
              << rondo::queues::QueueKindName(options.queue) << "\n"
              << "application core: " << engine.app_core() << "\n";
    for (const auto& t : engine.threads()) {
      std::cout << (t->mode() == rondo::engine::ProgressThread::Mode::kProgress
                        ? "progress thread"
                        : "timer thread")
                << " on core " << t->core() << "\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rondo-info: %s\n", e.what());
    return 2;
  }
  return 0;
}
