#include "engine/options.h"

#include <stdexcept>

#include "topology/base/log.h"

namespace rondo::engine {

std::string NodeCpusToString(const std::vector<topology::CpuSet>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size(); ++i) {
    std::string s = cpus[i].ToString();  // "{0-3}"
    out += (i ? ";" : "") + s.substr(1, s.size() - 2);
  }
  return out;
}

namespace {

using Var = ConfigVar<EngineOptions>;

std::vector<Var> MakeTable() {
  return {
      {"RONDO_TOPOLOGY", "native",
       "native|synthetic:<hwloc synthetic description>|xml:<path>",
       "machine the engine maps its queue tree onto",
       [](EngineOptions& o, const std::string& v) {
         if (v.empty()) throw std::invalid_argument("empty");
         o.topology = v;
       },
       [](const EngineOptions& o) { return o.topology; }},
      {"RONDO_QUEUE", "spin", "spin|lockfree",
       "queue implementation at each node of the queue tree",
       [](EngineOptions& o, const std::string& v) {
         o.queue = queues::ParseQueueKind(v);
       },
       [](const EngineOptions& o) {
         return std::string(queues::QueueKindName(o.queue));
       }},
      {"RONDO_QUEUE_CAPACITY", "1024", "an integer in 1..1048576",
       "preallocated nodes per lock-free queue",
       [](EngineOptions& o, const std::string& v) {
         o.queue_capacity = static_cast<int>(ParseInt(v, 1, 1 << 20));
       },
       [](const EngineOptions& o) { return std::to_string(o.queue_capacity); }},
      {"RONDO_PROGRESS", "auto",
       "auto|quiet|none|bind|numa|odd-even|cores:<list>",
       "placement of this process's progress threads (auto: a core no "
       "application thread uses, else quiet progress on the rank's core)",
       [](EngineOptions& o, const std::string& v) {
         o.progress = PlacementSpec::Parse(v);
       },
       [](const EngineOptions& o) { return o.progress.ToString(); }},
      {"RONDO_COMM_CORES", "", "empty, a count <n>, or a core list (6-7, 3,7, cores:5)",
       "dedicated communication cores of the node: ranks avoid them, "
       "progress threads go there",
       [](EngineOptions& o, const std::string& v) {
         o.comm_cores = CommCoresSpec::Parse(v);
       },
       [](const EngineOptions& o) { return o.comm_cores.ToString(); }},
      {"RONDO_LOCAL_RANK", "0", "an integer in 0..65535",
       "rank of this process among the ranks of its node",
       [](EngineOptions& o, const std::string& v) {
         o.local_rank = static_cast<int>(ParseInt(v, 0, 65535));
       },
       [](const EngineOptions& o) { return std::to_string(o.local_rank); }},
      {"RONDO_LOCAL_SIZE", "1", "an integer in 1..65536",
       "number of ranks on this node",
       [](EngineOptions& o, const std::string& v) {
         o.local_size = static_cast<int>(ParseInt(v, 1, 65536));
       },
       [](const EngineOptions& o) { return std::to_string(o.local_size); }},
      {"RONDO_NODE_CPUS", "",
       "empty, or one OS CPU list per local rank separated by ';' (0;1 or "
       "0-3;4-7)",
       "CPUs each local rank's application may run on (set by rondo-run)",
       [](EngineOptions& o, const std::string& v) {
         o.node_cpus.clear();
         if (v.empty()) return;
         size_t start = 0;
         for (;;) {
           size_t end = v.find(';', start);
           std::string item = v.substr(start, end == std::string::npos
                                                  ? std::string::npos
                                                  : end - start);
           topology::CpuSet set = topology::CpuSet::Parse(item);
           if (set.Empty())
             throw std::invalid_argument("an empty CPU list");
           o.node_cpus.push_back(set);
           if (end == std::string::npos) break;
           start = end + 1;
         }
       },
       [](const EngineOptions& o) { return NodeCpusToString(o.node_cpus); }},
      {"RONDO_APP_CORE", "-1", "-1 (auto) or a core number",
       "core of this rank's application thread",
       [](EngineOptions& o, const std::string& v) {
         o.app_core = static_cast<int>(ParseInt(v, -1, 65535));
       },
       [](const EngineOptions& o) { return std::to_string(o.app_core); }},
      {"RONDO_TIMER_US", "auto",
       "auto, 0 (off) or a period in 10..1000000 us",
       "timer trigger period (auto: 200 us with RONDO_PROGRESS=none, off "
       "otherwise)",
       [](EngineOptions& o, const std::string& v) {
         if (v == "auto") {
           o.timer_period_us = -1;
           return;
         }
         int64_t us = ParseInt(v, 0, 1000000);
         if (us != 0 && us < 10) throw std::invalid_argument("below 10 us");
         o.timer_period_us = us;
       },
       [](const EngineOptions& o) {
         return o.timer_period_us < 0 ? std::string("auto")
                                      : std::to_string(o.timer_period_us);
       }},
      {"RONDO_QUIET_US", "100", "a period in 10..100000 us",
       "how long a quiet progress thread lets the application stay outside "
       "Rondo with work pending before it progresses in the background",
       [](EngineOptions& o, const std::string& v) {
         o.quiet_period_us = ParseInt(v, 10, 100000);
       },
       [](const EngineOptions& o) { return std::to_string(o.quiet_period_us); }},
      {"RONDO_QUIET_SCHED", "stream", "normal|batch|stream",
       "scheduling policy of a quiet progress thread (normal: its wake-ups "
       "preempt the computation; batch: they wait for the computation's "
       "time slice; stream: normal, and batch while bytes stream)",
       [](EngineOptions& o, const std::string& v) {
         using Q = EngineOptions::QuietSched;
         if (v == "normal") o.quiet_sched = Q::kNormal;
         else if (v == "batch") o.quiet_sched = Q::kBatch;
         else if (v == "stream") o.quiet_sched = Q::kStream;
         else throw std::invalid_argument("not normal, batch or stream");
       },
       [](const EngineOptions& o) {
         using Q = EngineOptions::QuietSched;
         return std::string(o.quiet_sched == Q::kNormal  ? "normal"
                            : o.quiet_sched == Q::kBatch ? "batch"
                                                         : "stream");
       }},
      {"RONDO_TIMER_CORES", "app", "app|none|<core list such as 0,2-3>",
       "cores that get a timer thread",
       [](EngineOptions& o, const std::string& v) {
         if (v != "app" && v != "none") topology::CpuSet::Parse(v);
         o.timer_cores = v;
       },
       [](const EngineOptions& o) { return o.timer_cores; }},
      {"RONDO_IDLE_SPIN_US", "50", "an integer in 0..1000000",
       "spin time of an idle progress thread before it sleeps",
       [](EngineOptions& o, const std::string& v) {
         o.idle_spin_us = ParseInt(v, 0, 1000000);
       },
       [](const EngineOptions& o) { return std::to_string(o.idle_spin_us); }},
      {"RONDO_WAIT_SPIN_US", "50", "an integer in 0..1000000",
       "polling time of a wait before it yields its core (a core per rank) "
       "or sleeps between polls (oversubscribed)",
       [](EngineOptions& o, const std::string& v) {
         o.wait_spin_us = ParseInt(v, 0, 1000000);
       },
       [](const EngineOptions& o) { return std::to_string(o.wait_spin_us); }},
      {"RONDO_BIND", "1", "1|0 (also true/false, yes/no, on/off)",
       "bind progress and timer threads to their cores",
       [](EngineOptions& o, const std::string& v) {
         o.bind_threads = ParseBool(v);
       },
       [](const EngineOptions& o) {
         return std::string(o.bind_threads ? "1" : "0");
       }},
      {"RONDO_TRACE", "", "a file path, or empty for no trace",
       "Chrome trace (Perfetto) of task events, written at shutdown",
       [](EngineOptions& o, const std::string& v) { o.trace_file = v; },
       [](const EngineOptions& o) { return o.trace_file; }},
      {"RONDO_TRACE_MAX_EVENTS", "1048576", "an integer in 1..1000000000",
       "bound on recorded trace events",
       [](EngineOptions& o, const std::string& v) {
         o.trace_max_events = ParseInt(v, 1, 1000000000);
       },
       [](const EngineOptions& o) {
         return std::to_string(o.trace_max_events);
       }},
  };
}

}  // namespace

const std::vector<ConfigVar<EngineOptions>>& EngineOptions::Table() {
  static const std::vector<Var> table = MakeTable();
  return table;
}

std::vector<base::ConfigDecl> EngineDeclarations() {
  return DeclarationsOf(EngineOptions::Table(), "engine");
}

namespace {
const base::ConfigRegistration kEngineConfig(EngineDeclarations);
}  // namespace

EngineOptions EngineOptions::FromEnvironment() {
  EngineOptions o;
  ApplyConfig(Table(), o, /*use_environment=*/true);
  // A typo in a RONDO_* name is named once per process, with the nearest
  // declared name (the engine starts first in every Rondo program).
  base::WarnUnknownVariablesOnce();
  return o;
}

std::string EngineOptions::Describe() const {
  std::string out;
  for (const auto& v : Table()) {
    out += v.name;
    out += '=';
    out += v.print(*this);
    out += "    # ";
    out += v.help;
    out += " (";
    out += v.expected;
    out += ")\n";
  }
  return out;
}

}  // namespace rondo::engine
