// EngineOptions: everything an Engine is built from. Callers set fields
// directly; EngineOptions::FromEnvironment() starts from the defaults below
// and applies the RONDO_* variables of the table in options.cc (strictly
// parsed; `rondo-info --config` prints the effective values).
#ifndef RONDO_ENGINE_OPTIONS_H_
#define RONDO_ENGINE_OPTIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"
#include "engine/placement.h"
#include "queues/task_queue.h"

namespace rondo::engine {

struct EngineOptions {
  // RONDO_TOPOLOGY: "native", "synthetic:<hwloc description>", "xml:<path>".
  std::string topology = "native";
  // RONDO_QUEUE: queue implementation at every node of the tree.
  queues::QueueKind queue = queues::QueueKind::kSpin;
  // RONDO_QUEUE_CAPACITY: preallocated nodes per lock-free queue.
  int queue_capacity = 1024;
  // RONDO_PROGRESS: progress thread placement (auto|quiet|none|bind|numa|
  // odd-even|cores:<list>). auto (PlaceNodeAuto): a free core if the node
  // has one, else quiet progress on the rank's own core.
  PlacementSpec progress = PlacementSpec{PlacementKind::kAuto, {}};
  // RONDO_COMM_CORES: dedicated communication cores of the node ("" none,
  // "<n>" chosen from the topology, or a core list): ranks are spread over
  // the other cores and the progress threads go to these (placement.h).
  CommCoresSpec comm_cores;
  // RONDO_LOCAL_RANK / RONDO_LOCAL_SIZE: this process among the ranks of its
  // node (set by launchers; a single process is rank 0 of 1).
  int local_rank = 0;
  int local_size = 1;
  // RONDO_NODE_CPUS: the OS CPUs each local rank's application may run on,
  // in local rank order (set by rondo-run, or filled from PMIx by nmad's
  // NodeEngineOptions); empty = unknown (only this process's own affinity
  // is known).
  std::vector<topology::CpuSet> node_cpus;
  // Whether an upper layer marks the application's calls and background
  // work (EnterCall/BeginBackground; nmad's NodeEngineOptions sets it).
  // Quiet progress needs it; without it a node with no free core gets an
  // ordinary progress thread on the rank's core (asleep when idle, woken
  // by submits). Not an environment variable.
  bool marks_calls = false;
  // Ranks in the whole job (set by nmad's NodeEngineOptions from the
  // bootstrap; 0 = unknown): with local_size, tells a job that fits on this
  // node (PlaceNodeAuto). Not an environment variable.
  int job_size = 0;
  // This process's rank in the job (the same source; -1 = unknown). Not an
  // environment variable.
  int job_rank = -1;
  // The ranks were placed by a resource manager (PMIx: srun, mpirun): the
  // default placement keeps progress threads inside the ranks' CPU masks
  // (PlaceNodeAuto's `confined`). Set by NodeEngineOptions; not an
  // environment variable.
  bool confined = false;
  // RONDO_APP_CORE: the core of this rank's application thread; -1 = the
  // core the process is bound to if it is bound to exactly one, else MPC's
  // spread placement of local_rank.
  int app_core = -1;
  // RONDO_TIMER_US: timer trigger period in microseconds; 0 disables it;
  // -1 (auto, the default) = kAutoTimerUs with RONDO_PROGRESS=none (the
  // timer is then the only background trigger), off otherwise.
  int64_t timer_period_us = -1;
  static constexpr int64_t kAutoTimerUs = 200;
  // RONDO_QUIET_US: a quiet progress thread checks this long after the
  // application left Rondo with background work pending before it starts
  // progressing; while the application keeps calling Rondo the check period
  // doubles up to 16 times this.
  int64_t quiet_period_us = 100;
  // RONDO_QUIET_SCHED: the quiet progress thread's scheduling policy.
  // "normal" (SCHED_OTHER): a wake-up of the thread (a socket event)
  // preempts the computation on its core at once. "batch" (SCHED_BATCH): it
  // never does; it runs when the computation's time slice ends
  // (docs/overlap.md, "What the computing core pays"). "stream" (the
  // default): normal, so that a protocol event (a rendezvous request, a
  // collective's next step) is answered at once, and batch while bytes
  // stream (fd wake-ups that find work less than 2 ms apart), so that each
  // wake-up then moves a time slice's worth of bytes; back to normal when a
  // wake-up completes background work, finds nothing, or the activation
  // ends (ProgressThread::QuietLoop).
  enum class QuietSched { kNormal, kBatch, kStream };
  QuietSched quiet_sched = QuietSched::kStream;
  // RONDO_TIMER_CORES: cores with a timer thread: "app" (the application
  // core), "none", or a list such as "0,2".
  std::string timer_cores = "app";
  // RONDO_IDLE_SPIN_US: how long an idle progress thread spins before it
  // sleeps until the next submit.
  int64_t idle_spin_us = 50;
  // RONDO_WAIT_SPIN_US: how long a wait polls before it yields its core (a
  // core per rank) or sleeps between polls (oversubscribed).
  int64_t wait_spin_us = 50;
  // RONDO_BIND: bind progress and timer threads to their cores.
  bool bind_threads = true;
  // RONDO_TRACE: write a Chrome trace (Perfetto) of task events to this file
  // at shutdown; empty = tracing off (zero cost). "%r" in the path becomes
  // the local rank, "%g" the job rank (the local rank when unknown) and
  // "%p" the process id (one file per process).
  std::string trace_file;
  // RONDO_TRACE_MAX_EVENTS: bound on recorded events (later ones are counted
  // as dropped).
  int64_t trace_max_events = 1 << 20;

  // Defaults overridden by the environment. Throws std::invalid_argument
  // "Invalid value for RONDO_X: 'v'. Expected: ...". Unknown RONDO_*
  // variables are named once per process through the logger, each with the
  // nearest declared name (topology/base/log.h).
  static EngineOptions FromEnvironment();

  // The table behind FromEnvironment(), for rondo-info and docs.
  static const std::vector<ConfigVar<EngineOptions>>& Table();
  // "NAME=value" lines of the effective configuration.
  std::string Describe() const;
};

// "0-3;4-7": RONDO_NODE_CPUS's form.
std::string NodeCpusToString(const std::vector<topology::CpuSet>& cpus);

// The engine's declarations in the configuration registry (its table).
std::vector<base::ConfigDecl> EngineDeclarations();

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_OPTIONS_H_
