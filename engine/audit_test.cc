// The engine's sharing shape, checked on synthetic 16- and 64-core machines
// (engine/owned_atomic.h): a task submitted, run and completed on
// core i writes only state owned by the nodes of core i's path at or below
// the task's queue (for a one-core task: core i's leaf), and the task itself.
// One engine-wide counter on that path (QueueTree's old `queued_`) fails it.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace rondo::engine {
namespace {


constexpr const char* kTopologies[] = {
    "synthetic:package:2 l3:2 core:4 pu:1",                // 16 cores
    "synthetic:package:2 numa:2 l3:2 core:8 pu:1",         // 64 cores
};

EngineOptions Options(const std::string& topology, const std::string& progress) {
  EngineOptions o;
  o.topology = topology;
  o.progress = PlacementSpec::Parse(progress);
  o.timer_period_us = 0;
  o.idle_spin_us = 0;  // progress threads go to sleep at once
  o.wait_spin_us = 0;
  return o;
}

// The nodes from core `core`'s leaf up to (and including) `top`.
std::set<int> PathUpTo(const topology::Topology& topo, int core, int top) {
  std::set<int> nodes;
  for (int n = topo.CoreNode(core); n >= 0; n = topo.node(n).parent) {
    nodes.insert(n);
    if (n == top) break;
  }
  return nodes;
}

// Writes that break the shape for a task queued at `task_node` and
// submitted from `core`: an owner off the path from the core's leaf up to
// the task's node, or an unset or engine-wide owner. A sleeping engine
// thread announces itself on its own core's whole path (that is the sleep
// handshake, not the task's path: a futex call follows it).
std::vector<std::string> Violations(const topology::Topology& topo,
                                    const std::vector<WriteAudit::Write>& ws,
                                    int core, int task_node) {
  const std::set<int> allowed = PathUpTo(topo, core, task_node);
  std::vector<std::string> bad;
  for (const auto& w : ws) {
    bool ok;
    if (w.owner < 0 || w.actor_core < 0) {
      ok = false;
    } else if (w.actor_core == core &&
               std::string(w.what) != "engine node sleepers") {
      ok = allowed.count(w.owner) > 0;
    } else {
      // Another core's thread (one going back to sleep after its own
      // task), or the sleep handshake: its own core's path.
      ok = PathUpTo(topo, w.actor_core, 0).count(w.owner) > 0;
    }
    if (!ok)
      bad.push_back(std::string(w.what) + " (owner node " +
                    std::to_string(w.owner) + ", written for core " +
                    std::to_string(w.actor_core) + ")");
  }
  return bad;
}

struct Counted {
  OwnedAtomic<int64_t>* extra = nullptr;  // a write the task makes, if set
  int runs = 0;
};

TaskResult CountRun(void* arg) noexcept {
  auto* c = static_cast<Counted*>(arg);
  ++c->runs;
  if (c->extra != nullptr) c->extra->fetch_add(1, std::memory_order_relaxed);
  return TaskResult::kDone;
}

// Submits, runs and waits for one task on `core` from a thread acting for
// `core`, with the audit active; returns the writes recorded.
std::vector<WriteAudit::Write> RunAudited(Engine& engine, WriteAudit& audit,
                                          int core, Counted& counted) {
  engine.BindCurrentThread(core);  // synthetic: no binding, acts for `core`
  Task task(&CountRun, &counted, topology::CpuSet::Single(core));
  WriteAudit::Current() = &audit;
  (void)audit.Take();
  REQUIRE(engine.Submit(task) == Status::kOk);
  REQUIRE(engine.Wait(task) == Status::kOk);
  WriteAudit::Current() = nullptr;
  return audit.Take();
}

std::vector<int> SampleCores(int ncores) {
  return {0, 1, ncores / 2 - 1, ncores / 2, ncores - 1};
}

}  // namespace

TEST_CASE("a same-core task writes only its core's leaf (inline polling)") {
  if (!kWriteAuditCompiled) {
    WARN("write audit compiled out (NDEBUG): case skipped");
    return;
  }
  for (const char* desc : kTopologies) {
    Engine engine(Options(desc, "none"));
    const auto& topo = engine.topology();
    INFO(desc << " (" << topo.NumCores() << " cores)");
    REQUIRE(topo.NumCores() >= 16);
    WriteAudit audit;
    for (int core : SampleCores(topo.NumCores())) {
      INFO("core " << core);
      Counted counted;
      auto writes = RunAudited(engine, audit, core, counted);
      CHECK(counted.runs == 1);
      // The audit sees the queue operations on the core's leaf ...
      int on_leaf = 0;
      for (const auto& w : writes)
        if (w.owner == topo.CoreNode(core)) ++on_leaf;
      CHECK(on_leaf >= 2);  // push and pop
      // ... and nothing outside it.
      CHECK(Violations(topo, writes, core, topo.CoreNode(core)) ==
            std::vector<std::string>{});
    }
  }
}

TEST_CASE("a same-core task run by its core's progress thread stays on the "
          "core's path, whatever sleeps elsewhere") {
  if (!kWriteAuditCompiled) {
    WARN("write audit compiled out (NDEBUG): case skipped");
    return;
  }
  for (const char* desc : kTopologies) {
    const int ncores = std::string(desc).find("numa") != std::string::npos
                           ? 64
                           : 16;
    // A progress thread on every core (64 threads on a 2-core machine: they
    // sleep at once and wake only for their own core's task).
    WriteAudit audit;
    WriteAudit::Current() = &audit;  // the engine's threads inherit it
    Engine engine(Options(desc, "cores:0-" + std::to_string(ncores - 1)));
    WriteAudit::Current() = nullptr;
    const auto& topo = engine.topology();
    INFO(desc);
    REQUIRE(topo.NumCores() == ncores);
    for (int core : SampleCores(ncores)) {
      INFO("core " << core);
      Counted counted;
      auto writes = RunAudited(engine, audit, core, counted);
      CHECK(counted.runs == 1);
      CHECK(Violations(topo, writes, core, topo.CoreNode(core)) ==
            std::vector<std::string>{});
    }
    // Threads that went to sleep or woke meanwhile wrote their own paths
    // only (checked above); stop them with the audit still attached.
    engine.Shutdown();
    (void)audit.Take();
  }
}

TEST_CASE("the quiet-progress accounting of a rank stays in its core's leaf") {
  if (!kWriteAuditCompiled) {
    WARN("write audit compiled out (NDEBUG): case skipped");
    return;
  }
  // With a quiet progress thread the calls are counted (enter, exit) as
  // well as the background work (begin, end): 4 writes, and a fifth (its
  // word, in the same leaf) when the exit that leaves work pending finds
  // the thread asleep and wakes it (it may not be asleep yet). Without
  // one, nobody reads the calls' count and EnterCall/ExitCall write
  // nothing: 2.
  for (const char* progress : {"quiet", "none"}) {
    INFO("progress " << progress);
    EngineOptions o = Options(kTopologies[1], progress);
    o.app_core = 37;
    Engine engine(o);
    const bool quiet = engine.quiet_thread() != nullptr;
    CHECK(quiet == (std::string(progress) == "quiet"));
    const auto& topo = engine.topology();
    engine.BindCurrentThread(37);
    WriteAudit audit;
    WriteAudit::Current() = &audit;
    {
      Engine::CallScope call(engine);  // an MPI call that starts an operation
      engine.BeginBackground();
    }
    engine.EndBackground();  // its completion, here on the same core
    WriteAudit::Current() = nullptr;
    auto writes = audit.Take();
    if (quiet) {
      CHECK((writes.size() == 4u || writes.size() == 5u));
    } else {
      CHECK(writes.size() == 2u);
    }
    CHECK(Violations(topo, writes, 37, topo.CoreNode(37)) ==
          std::vector<std::string>{});
    engine.Shutdown();
  }
}

TEST_CASE("the audit catches an engine-wide counter on the task path") {
  if (!kWriteAuditCompiled) {
    WARN("write audit compiled out (NDEBUG): case skipped");
    return;
  }
  // What QueueTree's `queued_` was: one counter for the whole machine,
  // written by every task (owned by the root, or by nobody).
  for (int owner : {0, kOwnerEngine}) {
    Engine engine(Options(kTopologies[0], "none"));
    const auto& topo = engine.topology();
    OwnedAtomic<int64_t> global(0, owner, "global task counter");
    WriteAudit audit;
    Counted counted;
    counted.extra = &global;
    auto writes = RunAudited(engine, audit, 5, counted);
    CHECK(global.load() == 1);
    auto bad = Violations(topo, writes, 5, topo.CoreNode(5));
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].find("global task counter") != std::string::npos);
  }
}

TEST_CASE("owners are set on every atomic the engine writes") {
  if (!kWriteAuditCompiled) {
    WARN("write audit compiled out (NDEBUG): case skipped");
    return;
  }
  // An OwnedAtomic nobody gave an owner to is reported as such.
  OwnedAtomic<int> unowned;
  WriteAudit audit;
  WriteAudit::Current() = &audit;
  unowned.store(1);
  WriteAudit::Current() = nullptr;
  auto writes = audit.Take();
  REQUIRE(writes.size() == 1);
  CHECK(writes[0].owner == kOwnerUnset);
}

}  // namespace rondo::engine
