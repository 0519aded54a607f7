#include "engine/options.h"

#include <cstdlib>
#include <utility>
#include <catch2/catch.hpp>

namespace rondo::engine {
namespace {

// Sets a variable for the scope of a test section.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    setenv(name, value, 1);
  }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

TEST_CASE("defaults when the environment is empty", "[options]") {
  EngineOptions o = EngineOptions::FromEnvironment();
  CHECK(o.topology == "native");
  CHECK(o.queue == queues::QueueKind::kSpin);
  CHECK(o.progress.kind == PlacementKind::kAuto);
  CHECK(o.timer_period_us == -1);  // auto: off where a progress thread is
  CHECK(o.quiet_period_us == 100);
  CHECK(o.node_cpus.empty());
  CHECK(o.trace_file.empty());
}

TEST_CASE("environment values are parsed strictly", "[options]") {
  {
    ScopedEnv a("RONDO_QUEUE", "lockfree");
    ScopedEnv b("RONDO_PROGRESS", "cores:1,3");
    ScopedEnv c("RONDO_TIMER_US", "0");
    ScopedEnv d("RONDO_BIND", "off");
    ScopedEnv e("RONDO_TOPOLOGY", "synthetic:core:4");
    EngineOptions o = EngineOptions::FromEnvironment();
    CHECK(o.queue == queues::QueueKind::kLockFree);
    CHECK(o.progress.cores == std::vector<int>{1, 3});
    CHECK(o.timer_period_us == 0);
    CHECK_FALSE(o.bind_threads);
    CHECK(o.topology == "synthetic:core:4");
    std::string d2 = o.Describe();
    CHECK_THAT(d2, Catch::Contains("RONDO_QUEUE=lockfree"));
    CHECK_THAT(d2, Catch::Contains("RONDO_PROGRESS=cores:1,3"));
  }
  {
    ScopedEnv a("RONDO_QUEUE", "fast");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::StartsWith("Invalid value for RONDO_QUEUE: "
                                        "'fast'. Expected: spin|lockfree"));
  }
  {
    ScopedEnv a("RONDO_TIMER_US", "5");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("RONDO_TIMER_US: '5'") &&
                          Catch::Contains("below 10 us"));
  }
  {
    ScopedEnv a("RONDO_IDLE_SPIN_US", "12abc");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("RONDO_IDLE_SPIN_US: '12abc'") &&
                          Catch::Contains("not an integer"));
  }
  {
    ScopedEnv a("RONDO_LOCAL_SIZE", "0");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("out of range 1..65536"));
  }
  {
    ScopedEnv a("RONDO_TIMER_CORES", "0-");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("RONDO_TIMER_CORES"));
  }
}

TEST_CASE("node CPUs, quiet progress and the automatic timer",
          "[options]") {
  {
    ScopedEnv a("RONDO_NODE_CPUS", "0;1-3;0,2");
    ScopedEnv b("RONDO_PROGRESS", "quiet");
    ScopedEnv c("RONDO_TIMER_US", "auto");
    EngineOptions o = EngineOptions::FromEnvironment();
    REQUIRE(o.node_cpus.size() == 3);
    CHECK(o.node_cpus[0] == topology::CpuSet{0});
    CHECK(o.node_cpus[1] == topology::CpuSet{1, 2, 3});
    CHECK(o.node_cpus[2] == topology::CpuSet{0, 2});
    CHECK(o.progress.kind == PlacementKind::kQuiet);
    CHECK(o.timer_period_us == -1);
    CHECK_THAT(o.Describe(), Catch::Contains("RONDO_NODE_CPUS=0;1-3;0,2") &&
                                 Catch::Contains("RONDO_TIMER_US=auto") &&
                                 Catch::Contains("RONDO_PROGRESS=quiet"));
  }
  for (const char* bad : {"0;;1", "x", ";", "0;1-"}) {
    ScopedEnv a("RONDO_NODE_CPUS", bad);
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("Invalid value for RONDO_NODE_CPUS") &&
                          Catch::Contains("one OS CPU list per local rank"));
  }
  {
    ScopedEnv a("RONDO_QUIET_US", "5");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("RONDO_QUIET_US: '5'"));
  }
  {
    ScopedEnv a("RONDO_QUIET_SCHED", "idle");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("RONDO_QUIET_SCHED: 'idle'") &&
                          Catch::Contains("normal|batch|stream"));
  }
  using Q = EngineOptions::QuietSched;
  for (auto [text, want] : {std::pair{"batch", Q::kBatch},
                            std::pair{"normal", Q::kNormal},
                            std::pair{"stream", Q::kStream}}) {
    ScopedEnv a("RONDO_QUIET_SCHED", text);
    CHECK(EngineOptions::FromEnvironment().quiet_sched == want);
  }
  CHECK(EngineOptions::FromEnvironment().quiet_sched == Q::kStream);
  {
    ScopedEnv a("RONDO_PROGRESS", "spread");
    CHECK_THROWS_WITH(EngineOptions::FromEnvironment(),
                      Catch::Contains("auto|quiet|none|bind|numa"));
  }
}

TEST_CASE("unknown RONDO_ variables are reported", "[options]") {
  ScopedEnv a("RONDO_QUEUEE", "spin");
  auto unknown = base::ConfigRegistry::Global().UnknownVariables();
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0].name == "RONDO_QUEUEE");
  CHECK(unknown[0].nearest == "RONDO_QUEUE");
}

TEST_CASE("the engine's table is declared in the registry", "[options]") {
  const auto& registry = base::ConfigRegistry::Global();
  for (const auto& v : EngineOptions::Table()) {
    INFO(v.name);
    auto d = registry.Find(v.name);
    REQUIRE(d);
    CHECK(d->component == "engine");
    CHECK(d->default_value == v.default_value);
    CHECK(d->allowed == v.expected);
  }
}

}  // namespace
}  // namespace rondo::engine
