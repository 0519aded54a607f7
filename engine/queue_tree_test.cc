#include "engine/queue_tree.h"

#include <catch2/catch.hpp>

#include "engine/engine.h"
#include "topology/topology.h"

namespace rondo::engine {
namespace {

using topology::CpuSet;
using topology::Topology;

struct Counter {
  int runs = 0;
  int finish_after = 1;
};

TaskResult Count(void* arg) noexcept {
  auto* c = static_cast<Counter*>(arg);
  ++c->runs;
  return c->runs >= c->finish_after ? TaskResult::kDone : TaskResult::kIdle;
}

// An engine with no thread of its own: only the test runs tasks.
EngineOptions Quiet(const std::string& topology, queues::QueueKind kind) {
  EngineOptions o;
  o.topology = topology;
  o.queue = kind;
  o.progress = PlacementSpec::Parse("none");
  o.timer_period_us = 0;
  return o;
}

TEST_CASE("Submit picks the deepest queue containing the cpuset",
          "[queue_tree]") {
  auto kind = GENERATE(queues::QueueKind::kSpin, queues::QueueKind::kLockFree);
  auto topo = Topology::Load("synthetic:package:2 numa:2 l3:1 core:6 pu:1");
  QueueTree tree(topo, kind, 64);
  auto name = [&](const CpuSet& s) {
    int n = tree.NodeFor(s);
    return n < 0 ? std::string("none") : topo->node(n).name;
  };
  CHECK(name({5}) == "core:5");
  CHECK(name({0, 1}) == "l3:0");
  CHECK(name(CpuSet::Range(6, 11)) == "l3:1");
  CHECK(name({0, 6}) == "package:0");
  CHECK(name({11, 12}) == "machine:0");
  CHECK(name({}) == "none");
  CHECK(name({24}) == "none");
  // Paths go from the core's leaf to the root.
  std::vector<std::string> path;
  for (int n : tree.PathOf(7)) path.push_back(topo->node(n).name);
  CHECK(path == std::vector<std::string>{"core:7", "l3:1", "numa:1",
                                         "package:0", "machine:0"});
}

TEST_CASE("ScheduleFrom runs the core's path only, repeat tasks once per pass",
          "[queue_tree]") {
  auto kind = GENERATE(queues::QueueKind::kSpin, queues::QueueKind::kLockFree);
  Engine engine(Quiet("synthetic:package:2 core:2 pu:1", kind));  // 4 cores
  QueueTree& tree = engine.queue_tree();
  Counter on_core1, on_pkg0, on_pkg1, global, repeat;
  repeat.finish_after = 3;
  Task t1(&Count, &on_core1, {1});
  Task tp0(&Count, &on_pkg0, {0, 1});
  Task tp1(&Count, &on_pkg1, {2, 3});
  Task tg(&Count, &global, {0, 3});
  Task tr(&Count, &repeat, {0}, TaskOptions{.repeat = true, .name = "poll"});
  for (Task* t : {&t1, &tp0, &tp1, &tg, &tr}) REQUIRE(engine.Submit(*t) == Status::kOk);

  // Core 0 reaches core:0, package:0 and the machine queue.
  CHECK(tree.ScheduleFrom(0) == 2);  // tp0 and tg; tr ran but was idle
  CHECK(on_core1.runs == 0);
  CHECK(on_pkg0.runs == 1);
  CHECK(on_pkg1.runs == 0);
  CHECK(global.runs == 1);
  CHECK(repeat.runs == 1);  // once per pass, back in its queue
  CHECK(tr.last_core() == 0);
  CHECK(tree.PathMaybeNonEmpty(0));
  CHECK(tree.ScheduleFrom(0) == 0);
  CHECK(repeat.runs == 2);
  CHECK(tree.ScheduleFrom(0) == 1);  // third run returns kDone
  CHECK(repeat.runs == 3);
  CHECK(tr.done());
  CHECK_FALSE(tree.PathMaybeNonEmpty(0));

  CHECK(tree.ScheduleFrom(2) == 1);
  CHECK(on_pkg1.runs == 1);
  CHECK(tp1.last_core() == 2);
  CHECK(on_core1.runs == 0);
  CHECK(tree.ScheduleFrom(1) == 1);
  CHECK(on_core1.runs == 1);
  CHECK(t1.last_core() == 1);
}

TEST_CASE("CancelAll cancels every queued task", "[queue_tree]") {
  Engine engine(Quiet("synthetic:core:2 pu:1", queues::QueueKind::kSpin));
  QueueTree& tree = engine.queue_tree();
  Counter c;
  Task a(&Count, &c, {0}), b(&Count, &c, {0, 1});
  REQUIRE(engine.Submit(a) == Status::kOk);
  REQUIRE(engine.Submit(b) == Status::kOk);
  CHECK(tree.CancelAll() == 2);
  CHECK(a.state() == TaskState::kCanceled);
  CHECK(b.state() == TaskState::kCanceled);
  CHECK(c.runs == 0);
  CHECK(tree.ScheduleFrom(0) == 0);
}

}  // namespace
}  // namespace rondo::engine
