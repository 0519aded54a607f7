// Executor: runs a collective schedule (schedule.h) with engine tasks.
//
// Life of a collective: Start() resolves the schedule's buffers, allocates
// the temporaries, and submits one engine task per step that has no
// dependencies. A send/receive step's task posts the message on the
// communicator's session (tag = the collective's tag base | step tag); the
// request's completion callback marks the step done. A reduce/copy step's
// task does the work and marks itself done. Marking a step done submits
// every dependent step whose dependencies are now all done. So steps run as
// soon as their inputs arrive, on whichever trigger runs engine tasks —
// a progress thread, the timer, a Wait, a task runtime's idle hook — and a
// nonblocking collective progresses without any call from the application.
// Every step task has the Core's task cpuset (Core::task_cpuset()), the
// cores the progress configuration gives communication work.
//
// When the last step is done (or, after a failure, every step that was
// started has finished) the operation is complete: done() becomes true and
// the `on_done` callback runs (from an engine task or a waiting thread).
//
// Thread-safety: Start, then done()/status()/Wait()/Test() from any
// thread. The Operation must stay alive and unmoved until done(); its
// destructor must not run before (it checks, and aborts otherwise). It may
// be started again once done. on_done must not destroy the Operation.
#ifndef RONDO_NMAD_COLL_EXECUTOR_H_
#define RONDO_NMAD_COLL_EXECUTOR_H_

#include <atomic>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/status.h"
#include "engine/task.h"
#include "nmad/coll/schedule.h"
#include "nmad/coll/split.h"
#include "nmad/core.h"
#include "queues/spin_lock.h"

namespace rondo::nmad::coll {

// A reduction over `count` elements: inout[i] = in[i] op inout[i]. Called
// from engine tasks; must not throw.
struct ReduceFn {
  void (*fn)(const void* in, void* inout, uint64_t count,
             void* ctx) noexcept = nullptr;
  void* ctx = nullptr;
  uint64_t elem_size = 1;
};

// The communicator a collective runs on, as the executor needs it.
struct CommView {
  Core* core = nullptr;
  Session* session = nullptr;     // the communicator's collective session
  const int* world_ranks = nullptr;  // comm rank -> session (job) rank
  int size = 0;
  // Split schedules: the cores of the kComm steps (the rank's progress
  // cores, engine::Engine::progress_cpuset()); null or empty = the Core's
  // task cpuset, as for unsplit schedules.
  const topology::CpuSet* comm_cpus = nullptr;
};

// Collective tags on a session: bit 30 tells blocking from nonblocking
// collectives, bits 12..29 hold the communicator's collective sequence
// number (mod 2^18), bits 0..11 the step tag.
uint32_t TagBase(uint64_t sequence, bool blocking);

// The order in which a waiting thread runs a batch of ready steps: pass 0,
// 1, then 2. Sends first: posting one costs a header (a rendezvous only
// announces the data), and the peer can start pulling while this thread
// works. Receives next: posting one that meets a rendezvous already
// announced pulls the data at once (on one node, a process_vm_readv of the
// whole message), so a receive posted before the sends delayed them, and
// the peers waiting for them, by a full transfer (measured: a 2-rank
// MPI_Allgather of 1 MiB spent readv + copy + the peer's readv in
// sequence). Local copies and reductions last, while the peers' data moves.
constexpr int InlinePass(StepKind kind) noexcept {
  return kind == StepKind::kSend ? 0 : kind == StepKind::kRecv ? 1 : 2;
}

// A schedule checked and indexed once for the executor (dependents lists,
// temporaries' layout), shareable by any number of operations at once: the
// MPI layer caches them per communicator and arguments.
struct PreparedSchedule {
  Schedule schedule;
  std::vector<uint32_t> dependents;     // CSR: dependents of step i are
  std::vector<uint32_t> dependents_at;  // dependents[at[i] .. at[i+1])
  std::vector<uint32_t> roots;          // steps without dependencies
  std::vector<uint64_t> tmp_offsets;
  uint64_t tmp_total = 0;
  bool has_reduce = false;
  // Split-tree (split.h): split_s >= 0 gives every step a place; -1 = not
  // split (every step is an engine task until someone waits).
  int split_s = -1;
  std::vector<StepPlace> places;
  uint32_t app_start_steps = 0;  // steps placed kAppStart
};

// Checks `schedule` for a communicator of `comm_size` ranks (peers, tags,
// buffers, dependencies on earlier steps only) and indexes it; with
// split_s >= 0, places its steps with SplitPlaces(schedule, split_s). Null,
// with *error saying what is wrong, for a malformed schedule.
std::shared_ptr<const PreparedSchedule> Prepare(Schedule schedule,
                                                int comm_size,
                                                std::string* error,
                                                int split_s = -1);

class Operation {
 public:
  using DoneFn = void (*)(Operation& op, void* arg) noexcept;

  Operation() = default;
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  // Starts `schedule` on `comm` with the caller's buffers (buf 0 = send,
  // buf 1 = recv; either may be null when the schedule does not use it).
  // Returns kOk (the operation runs; on_done will be called once), or with
  // nothing started kInvalidArgument (a malformed schedule, error() says
  // why) or kShutdown.
  engine::Status Start(const CommView& comm, Schedule schedule,
                       const void* send_buf, void* recv_buf,
                       uint32_t tag_base, ReduceFn reduce,
                       DoneFn on_done = nullptr, void* done_arg = nullptr);
  // The same with a prepared schedule. `caller_waits`: the caller calls
  // Wait() next (a blocking collective), so the steps are run by the
  // waiting thread from the start instead of being queued in the engine.
  //
  // A split schedule (prepared with split_s >= 0) runs by place: kComm
  // steps are always engine tasks on comm.comm_cpus (a waiting thread does
  // not take them), kAppStart steps are run by the calling thread before
  // Start returns (Start blocks until they are all done: the paper's
  // "blocking point-to-point before the schedule is handed over"), and
  // kAppWait steps only by a thread in Wait() or Test().
  engine::Status Start(const CommView& comm,
                       std::shared_ptr<const PreparedSchedule> prepared,
                       const void* send_buf, void* recv_buf,
                       uint32_t tag_base, ReduceFn reduce,
                       DoneFn on_done = nullptr, void* done_arg = nullptr,
                       bool caller_waits = false);

  bool done() const noexcept {
    return done_.load(std::memory_order_acquire);
  }
  // kInProgress until done; then kOk, or the first failure's status
  // (kPeerFailed, kTruncated when a message had an unexpected size, ...).
  engine::Status status() const noexcept {
    return done() ? status_ : engine::Status::kInProgress;
  }
  // What failed ("" when nothing did).
  std::string error() const;

  // Progress from the caller until done. From the first Wait on, steps that
  // become ready are run by the waiting thread itself (explicit polling, the
  // first of the engine's triggers) instead of going through the engine's
  // queues; steps already queued still run wherever the engine runs them.
  // (Split schedules: only the kAppWait steps, see Start.)
  engine::Status Wait() noexcept;
  // One progress pass (running the ready kAppWait steps of a split
  // schedule); true when done.
  bool Test() noexcept;
  // Runs the kAppWait steps of a split schedule that are ready, in the
  // calling thread, without polling anything; true if it ran some. For
  // callers that progress the core themselves (MPI_Waitall and friends).
  bool RunReadyAppSteps() noexcept {
    return has_ready_.load(std::memory_order_acquire) && RunReady(false);
  }

  // Number of step tasks run, for tests.
  uint64_t steps_run() const noexcept {
    return steps_run_.load(std::memory_order_relaxed);
  }

 private:
  struct StepState {
    Operation* op = nullptr;
    uint32_t index = 0;
    engine::Task task;
    Request req;
    std::atomic<uint32_t> remaining{0};  // deps not done yet
    bool posted = false;                 // req was started
  };
  void Quiesce() noexcept;
  // Runs the steps of ready_ (or start_ready_) in the calling thread; one
  // thread at a time (a try-lock), false if another thread holds it.
  bool RunReady(bool start_steps) noexcept;
  // Runs the ready steps of ready_ (or start_ready_) and progresses the
  // core until finished() holds, yielding the core when idle.
  template <typename Finished>
  void ProgressUntil(bool start_steps, Finished finished) noexcept;
  void RunStart() noexcept;
  static engine::TaskResult RunStep(void* arg) noexcept;
  static void OnRequestDone(Request& req, engine::Status s,
                            void* arg) noexcept;
  void Launch(StepState& st) noexcept;
  void StepDone(StepState& st) noexcept;
  // The last step is done: on_done, then done() (and the background work
  // counted since Start ends).
  void Finish() noexcept;
  void Fail(engine::Status s, std::string what) noexcept;
  uint8_t* Resolve(const BufRef& ref) const noexcept;

  CommView comm_;
  std::shared_ptr<const PreparedSchedule> prepared_;
  uint8_t* bufs_[2] = {nullptr, nullptr};
  std::vector<uint8_t*> tmp_;
  struct FreeDeleter {
    void operator()(uint8_t* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<uint8_t, FreeDeleter> tmp_storage_;
  uint32_t tag_base_ = 0;
  ReduceFn reduce_;
  DoneFn on_done_ = nullptr;
  void* done_arg_ = nullptr;
  uint64_t tmp_capacity_ = 0;     // bytes of tmp_storage_
  std::unique_ptr<StepState[]> steps_;
  uint32_t steps_capacity_ = 0;  // entries of steps_
  uint32_t steps_ready_ = 0;     // entries whose op/index/completion are set
  uint32_t steps_n_ = 0;         // steps of the current schedule
  bool background_ = false;      // BeginBackground was called at Start
  std::atomic<uint32_t> left_{0};        // steps not finished
  std::atomic<bool> failed_{false};
  std::atomic<bool> done_{false};
  std::atomic<bool> started_{false};
  std::atomic<uint64_t> steps_run_{0};
  // Steps made ready while a thread waits (see Wait), run by that thread;
  // for split schedules, the kAppWait steps (ready_) and the kAppStart steps
  // (start_ready_).
  std::atomic<bool> waiter_{false};
  std::atomic<bool> runner_busy_{false};
  std::atomic<bool> has_ready_{false};
  std::atomic<bool> has_start_ready_{false};
  std::atomic<uint32_t> app_start_left_{0};
  queues::SpinLock ready_mu_;
  std::vector<uint32_t> ready_;        // reserved at Start: no allocation
  std::vector<uint32_t> start_ready_;  // reserved at Start
  std::vector<uint32_t> running_;      // the runner's copy
  engine::Status status_ = engine::Status::kOk;
  mutable std::mutex error_mu_;
  std::string error_;
};

}  // namespace rondo::nmad::coll

#endif  // RONDO_NMAD_COLL_EXECUTOR_H_
