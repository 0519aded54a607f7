// Tracer: an optional timeline of task events (submit, run start and end,
// core, queue level, task name, the thread's role; idle runs of repeat
// tasks are only counted) written as Chrome trace JSON, which Perfetto
// (ui.perfetto.dev) and chrome://tracing open: Rondo's version of the ViTE
// traces of the split-tree paper. One timeline row per core.
//
// Cost: when tracing is off the engine holds no Tracer and pays one
// predictable branch per submit and per run. When on, each thread appends to
// its own buffer (no lock on the hot path); buffers are bounded by
// max_events in total and further events are counted as dropped.
//
// Thread-safety: Record* from any thread; Write() once the recording threads
// are quiet (the engine calls it at shutdown).
#ifndef RONDO_ENGINE_TRACER_H_
#define RONDO_ENGINE_TRACER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/task.h"
#include "topology/topology.h"

namespace rondo::engine {

// Who runs a task, shown as "thread" in the trace: an engine progress or
// timer thread, or an application thread (Wait, Poll, the idle hook, or a
// library running a step inline).
enum class ThreadRole : uint8_t { kApp, kProgress, kTimer };

class Tracer {
 public:
  // The role of the calling thread in every trace (default kApp); engine
  // threads set theirs when they start.
  static void SetThreadRole(ThreadRole role) noexcept;

  Tracer(std::shared_ptr<const topology::Topology> topo, int64_t max_events);
  ~Tracer();

  static int64_t NowNs() noexcept;

  void RecordSubmit(const Task& task, int node, int core) noexcept;
  void RecordRun(const Task& task, int node, int core, int64_t start_ns,
                 int64_t end_ns, TaskResult result) noexcept;
  // A task's work run by the calling thread outside the queues (e.g. a
  // collective step run by the thread waiting for it): "cat": "inline".
  void RecordInline(const Task& task, int core, int64_t start_ns,
                    int64_t end_ns) noexcept;

  // Work of the application itself (a task runtime's kernel, say) from
  // start_ns to end_ns on `core`, named `name` (a string that outlives the
  // tracer): "cat": "app", on the same timeline as the engine's tasks.
  void RecordSpan(const char* name, int core, int64_t start_ns,
                  int64_t end_ns) noexcept;

  // A run that returned kIdle: counted, not recorded.
  void CountIdleRun() noexcept {
    idle_runs_.fetch_add(1, std::memory_order_relaxed);
  }
  int64_t idle_runs() const {
    return idle_runs_.load(std::memory_order_relaxed);
  }

  int64_t recorded() const;
  int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  // Writes the Chrome trace JSON. Returns false (and the reason in *error)
  // when the file cannot be written.
  bool Write(const std::string& path, std::string* error) const;

 private:
  struct Event {
    int64_t start_ns;
    int64_t end_ns;  // == start_ns for instant events
    const char* name;
    int64_t id;  // TaskOptions::trace_id
    int node;    // -1 for inline runs
    int core;
    uint8_t kind;  // 0 submit, 1 run, 2 inline run, 3 application span
    uint8_t result;
    uint8_t role;  // ThreadRole
    int32_t os_tid;
  };
  struct Buffer {
    std::vector<Event> events;
  };
  Buffer* LocalBuffer() noexcept;
  bool Reserve() noexcept;

  std::shared_ptr<const topology::Topology> topo_;
  const int64_t max_events_;
  const uint64_t id_;  // distinguishes tracers for the thread-local cache
  int64_t origin_ns_;
  std::atomic<int64_t> reserved_{0};
  std::atomic<int64_t> dropped_{0};
  std::atomic<int64_t> idle_runs_{0};
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // guarded by mu_
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_TRACER_H_
