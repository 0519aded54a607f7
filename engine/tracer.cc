#include "engine/tracer.h"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace rondo::engine {
namespace {

std::atomic<uint64_t> next_tracer_id{1};

struct LocalCache {
  uint64_t tracer_id = 0;
  void* buffer = nullptr;
};
thread_local LocalCache local_cache;
thread_local ThreadRole thread_role = ThreadRole::kApp;
thread_local int32_t thread_os_tid = 0;

int32_t OsTid() noexcept {
  if (thread_os_tid == 0) thread_os_tid = static_cast<int32_t>(gettid());
  return thread_os_tid;
}

const char* RoleName(uint8_t role) {
  switch (static_cast<ThreadRole>(role)) {
    case ThreadRole::kApp: return "app";
    case ThreadRole::kProgress: return "progress";
    case ThreadRole::kTimer: return "timer";
  }
  return "?";
}

}  // namespace

Tracer::Tracer(std::shared_ptr<const topology::Topology> topo,
               int64_t max_events)
    : topo_(std::move(topo)),
      max_events_(max_events),
      id_(next_tracer_id.fetch_add(1, std::memory_order_relaxed)),
      origin_ns_(NowNs()) {}

Tracer::~Tracer() = default;

void Tracer::SetThreadRole(ThreadRole role) noexcept { thread_role = role; }

int64_t Tracer::NowNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

Tracer::Buffer* Tracer::LocalBuffer() noexcept {
  if (local_cache.tracer_id == id_)
    return static_cast<Buffer*>(local_cache.buffer);
  std::lock_guard<std::mutex> lock(mu_);
  buffers_.push_back(std::make_unique<Buffer>());
  buffers_.back()->events.reserve(1024);
  local_cache.tracer_id = id_;
  local_cache.buffer = buffers_.back().get();
  return buffers_.back().get();
}

bool Tracer::Reserve() noexcept {
  if (reserved_.fetch_add(1, std::memory_order_relaxed) >= max_events_) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void Tracer::RecordSubmit(const Task& task, int node, int core) noexcept {
  if (!Reserve()) return;
  int64_t now = NowNs();
  LocalBuffer()->events.push_back({now, now, task.options().name,
                                   task.options().trace_id, node, core, 0, 0,
                                   static_cast<uint8_t>(thread_role), OsTid()});
}

void Tracer::RecordRun(const Task& task, int node, int core, int64_t start_ns,
                       int64_t end_ns, TaskResult result) noexcept {
  if (!Reserve()) return;
  LocalBuffer()->events.push_back(
      {start_ns, end_ns, task.options().name, task.options().trace_id, node,
       core, 1, static_cast<uint8_t>(result),
       static_cast<uint8_t>(thread_role), OsTid()});
}

void Tracer::RecordInline(const Task& task, int core, int64_t start_ns,
                          int64_t end_ns) noexcept {
  if (!Reserve()) return;
  LocalBuffer()->events.push_back(
      {start_ns, end_ns, task.options().name, task.options().trace_id, -1,
       core, 2, static_cast<uint8_t>(TaskResult::kDone),
       static_cast<uint8_t>(thread_role), OsTid()});
}

void Tracer::RecordSpan(const char* name, int core, int64_t start_ns,
                        int64_t end_ns) noexcept {
  if (!Reserve()) return;
  LocalBuffer()->events.push_back(
      {start_ns, end_ns, name, -1, -1, core, 3,
       static_cast<uint8_t>(TaskResult::kDone),
       static_cast<uint8_t>(thread_role), OsTid()});
}

int64_t Tracer::recorded() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  for (const auto& b : buffers_) n += static_cast<int64_t>(b->events.size());
  return n;
}

bool Tracer::Write(const std::string& path, std::string* error) const {
  using nlohmann::json;
  static const char* kResult[] = {"idle", "progress", "done"};
  json events = json::array();
  for (int core = 0; core < topo_->NumCores(); ++core) {
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", 0},
                      {"tid", core},
                      {"args", {{"name", "core " + std::to_string(core)}}}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& b : buffers_) {
    for (const Event& e : b->events) {
      double ts_us = static_cast<double>(e.start_ns - origin_ns_) / 1000.0;
      static const char* kKind[] = {"submit", "run", "inline", "app"};
      json ev = {{"name", e.name ? e.name : "task"},
                 {"cat", kKind[e.kind <= 3 ? e.kind : 0]},
                 {"pid", 0},
                 {"tid", e.core},
                 {"ts", ts_us},
                 {"args",
                  {{"queue", e.node >= 0    ? topo_->node(e.node).name
                             : e.kind == 3 ? std::string("application")
                                           : std::string("inline")},
                   {"thread", RoleName(e.role)},
                   {"os_tid", e.os_tid}}}};
      if (e.id >= 0) ev["args"]["id"] = e.id;
      if (e.kind == 0) {
        ev["ph"] = "i";
        ev["s"] = "t";
      } else {
        ev["ph"] = "X";
        ev["dur"] = static_cast<double>(e.end_ns - e.start_ns) / 1000.0;
        if (e.kind != 3)
          ev["args"]["result"] = kResult[e.result <= 2 ? e.result : 0];
      }
      events.push_back(std::move(ev));
    }
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"topology", topo_->source().ToString()},
                // The monotonic clock at ts = 0: traces of several ranks of
                // one machine line up on it (bench/common/trace_timeline.py).
                {"origin_ns", origin_ns_},
                {"dropped_events", dropped()},
                {"idle_runs", idle_runs()}}}};
  std::ofstream out(path);
  if (!out) {
    if (error) *error = "cannot open trace file '" + path + "' for writing";
    return false;
  }
  out << doc.dump() << '\n';
  if (!out) {
    if (error) *error = "error while writing trace file '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace rondo::engine
