#include "nmad/coll/executor.h"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>

#include "topology/base/log.h"

namespace rondo::nmad::coll {

using engine::Status;
using engine::TaskResult;

uint32_t TagBase(uint64_t sequence, bool blocking) {
  return (blocking ? (1u << 30) : 0u) |
         (static_cast<uint32_t>(sequence & ((1u << 18) - 1)) << 12);
}

Operation::~Operation() {
  if (!started_.load(std::memory_order_acquire)) return;
  if (!done()) {
    RONDO_LOG_FATAL(
        "nmad/coll: an Operation was destroyed while its collective was "
        "still running");
  }
  Quiesce();
}

void Operation::Quiesce() noexcept {
  // done() can be seen while the engine is still marking the last step's
  // task finished, or a request its completion: wait for those few
  // instructions before the memory goes.
  if (!prepared_) return;
  while (runner_busy_.load(std::memory_order_acquire)) sched_yield();
  for (uint32_t i = 0; i < steps_n_; ++i) {
    StepState& st = steps_[i];
    while (st.task.state() == engine::TaskState::kQueued ||
           (st.posted && !st.req.done()))
      sched_yield();
  }
}

std::string Operation::error() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return error_;
}

uint8_t* Operation::Resolve(const BufRef& ref) const noexcept {
  uint8_t* base = ref.buf < kFirstTmpBuf ? bufs_[ref.buf]
                                          : tmp_[ref.buf - kFirstTmpBuf];
  return base == nullptr ? nullptr : base + ref.offset;
}

std::shared_ptr<const PreparedSchedule> Prepare(Schedule schedule,
                                                int comm_size,
                                                std::string* error,
                                                int split_s) {
  auto p = std::make_shared<PreparedSchedule>();
  p->schedule = std::move(schedule);
  const Schedule& sc = p->schedule;
  const uint32_t n = static_cast<uint32_t>(sc.steps.size());
  auto fail = [&](std::string what) {
    if (error) *error = "malformed schedule: " + std::move(what);
    return nullptr;
  };
  // Structural checks (the builders are tested against Schedule::Validate;
  // these guard the executor's own memory accesses).
  for (uint32_t i = 0; i < n; ++i) {
    const Step& s = sc.steps[i];
    const bool msg = s.kind == StepKind::kSend || s.kind == StepKind::kRecv;
    if (msg && (s.peer < 0 || s.peer >= comm_size || s.tag > kMaxStepTag))
      return fail("step " + std::to_string(i) + " has peer " +
                  std::to_string(s.peer) + " or tag " + std::to_string(s.tag) +
                  " out of range");
    if (s.src.buf >= kFirstTmpBuf + sc.tmp_bytes.size() ||
        s.dst.buf >= kFirstTmpBuf + sc.tmp_bytes.size())
      return fail("step " + std::to_string(i) + " names a missing buffer");
    if (s.kind == StepKind::kReduce) {
      if (s.src.len != s.dst.len)
        return fail("reduce step " + std::to_string(i) +
                    " has different source and destination lengths");
      p->has_reduce = true;
    }
    for (uint32_t d : s.deps)
      if (d >= i)
        return fail("step " + std::to_string(i) + " depends on a later step");
    if (s.deps.empty()) p->roots.push_back(i);
  }
  // Temporaries: one allocation per operation, each 64-byte aligned.
  for (uint64_t b : sc.tmp_bytes) {
    p->tmp_offsets.push_back(p->tmp_total);
    p->tmp_total += (b + 63) & ~uint64_t{63};
  }
  // Dependents in CSR form.
  p->dependents_at.assign(n + 1, 0);
  for (const Step& s : sc.steps)
    for (uint32_t d : s.deps) ++p->dependents_at[d + 1];
  for (uint32_t i = 0; i < n; ++i)
    p->dependents_at[i + 1] += p->dependents_at[i];
  p->dependents.assign(p->dependents_at[n], 0);
  std::vector<uint32_t> fill(p->dependents_at.begin(),
                             p->dependents_at.end() - 1);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t d : sc.steps[i].deps) p->dependents[fill[d]++] = i;
  if (split_s >= 0) {
    p->split_s = split_s;
    p->places = SplitPlaces(sc, split_s);
    for (StepPlace pl : p->places)
      if (pl == StepPlace::kAppStart) ++p->app_start_steps;
  }
  return p;
}

Status Operation::Start(const CommView& comm, Schedule schedule,
                        const void* send_buf, void* recv_buf,
                        uint32_t tag_base, ReduceFn reduce, DoneFn on_done,
                        void* done_arg) {
  std::string why;
  auto prepared = Prepare(std::move(schedule), comm.size, &why);
  if (!prepared) {
    std::lock_guard<std::mutex> lock(error_mu_);
    error_ = why;
    return Status::kInvalidArgument;
  }
  return Start(comm, std::move(prepared), send_buf, recv_buf, tag_base,
               reduce, on_done, done_arg);
}

Status Operation::Start(const CommView& comm,
                        std::shared_ptr<const PreparedSchedule> prepared,
                        const void* send_buf, void* recv_buf,
                        uint32_t tag_base, ReduceFn reduce, DoneFn on_done,
                        void* done_arg, bool caller_waits) {
  if (started_.load(std::memory_order_relaxed)) {
    if (!done()) return Status::kBusy;
    Quiesce();
  }
  if (comm.core == nullptr || comm.session == nullptr ||
      comm.world_ranks == nullptr || comm.size < 1 || prepared == nullptr)
    return Status::kInvalidArgument;
  if (prepared->has_reduce && (reduce.fn == nullptr || reduce.elem_size == 0)) {
    std::lock_guard<std::mutex> lock(error_mu_);
    error_ = "the schedule reduces but no reduction was given";
    return Status::kInvalidArgument;
  }
  for (const Step& s : prepared->schedule.steps)
    if (s.kind == StepKind::kReduce && s.src.len % reduce.elem_size != 0) {
      std::lock_guard<std::mutex> lock(error_mu_);
      error_ = "a reduce step's length is not a multiple of the element size";
      return Status::kInvalidArgument;
    }
  comm_ = comm;
  prepared_ = std::move(prepared);
  bufs_[0] = static_cast<uint8_t*>(const_cast<void*>(send_buf));
  bufs_[1] = static_cast<uint8_t*>(recv_buf);
  tag_base_ = tag_base;
  reduce_ = reduce;
  on_done_ = on_done;
  done_arg_ = done_arg;
  status_ = Status::kOk;
  failed_.store(false, std::memory_order_relaxed);
  done_.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    error_.clear();
  }
  const Schedule& sc = prepared_->schedule;
  const uint32_t n = static_cast<uint32_t>(sc.steps.size());

  // An Operation started again (the MPI layer keeps one per thread for
  // blocking calls) reuses its temporaries, step states and lists when they
  // are large enough: no allocation on that path.
  const uint64_t total = prepared_->tmp_total;
  if (total > tmp_capacity_) {
    tmp_storage_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, total)));
    tmp_capacity_ = tmp_storage_ ? total : 0;
    if (!tmp_storage_) {
      std::lock_guard<std::mutex> lock(error_mu_);
      error_ = "out of memory for " + std::to_string(total) +
               " bytes of collective temporaries";
      return Status::kNoResource;
    }
  }
  tmp_.assign(sc.tmp_bytes.size(), nullptr);
  for (size_t i = 0; i < tmp_.size(); ++i)
    tmp_[i] = tmp_storage_.get() + prepared_->tmp_offsets[i];

  if (n > steps_capacity_) {
    steps_.reset(new StepState[n]);
    steps_capacity_ = n;
    steps_ready_ = 0;
  }
  const bool split = prepared_->split_s >= 0;
  // A blocking caller runs every step itself (never through the engine's
  // queues), so the tasks are initialised only for the other forms (and
  // for tracing, which names the steps' tasks).
  const bool inline_steps = caller_waits && !split;
  const bool init_tasks =
      !inline_steps || comm.core->engine().tracing();
  const topology::CpuSet& cpus =
      split && comm.comm_cpus != nullptr && !comm.comm_cpus->Empty()
          ? *comm.comm_cpus
          : comm.core->task_cpuset();
  for (uint32_t i = 0; i < n; ++i) {
    StepState& st = steps_[i];
    if (i >= steps_ready_) {
      st.op = this;
      st.index = i;
      st.req.set_completion(&Operation::OnRequestDone, &st);
    }
    st.posted = false;
    st.remaining.store(static_cast<uint32_t>(sc.steps[i].deps.size()),
                       std::memory_order_relaxed);
    if (init_tasks)
      st.task.Init(&Operation::RunStep, &st, cpus,
                   {.name = StepTraceName(sc.steps[i]), .trace_id = i});
  }
  steps_ready_ = std::max(steps_ready_, n);
  steps_n_ = n;
  // A caller that waits at once (a blocking collective) runs the steps
  // itself from the start; others go to the engine until someone waits.
  waiter_.store(caller_waits, std::memory_order_relaxed);
  runner_busy_.store(false, std::memory_order_relaxed);
  has_ready_.store(false, std::memory_order_relaxed);
  has_start_ready_.store(false, std::memory_order_relaxed);
  app_start_left_.store(prepared_->app_start_steps, std::memory_order_relaxed);
  ready_.clear();
  ready_.reserve(n);
  start_ready_.clear();
  start_ready_.reserve(n);
  running_.clear();
  running_.reserve(n);
  left_.store(n + 1, std::memory_order_relaxed);  // +1: held by Start
  // Until Finish(): work that needs progress while the application computes
  // (a quiet progress thread runs it when the application is outside). A
  // blocking caller stays inside until the end: nothing to announce.
  background_ = !inline_steps;
  if (background_) comm.core->engine().BeginBackground();
  started_.store(true, std::memory_order_release);
  for (uint32_t i : prepared_->roots) Launch(steps_[i]);
  // The application's share of an all-to-one split runs here, before the
  // call returns.
  if (prepared_->app_start_steps > 0) RunStart();
  // Release Start's hold: an empty schedule completes here.
  if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
  return Status::kOk;
}

void Operation::Finish() noexcept {
  if (on_done_) on_done_(*this, done_arg_);
  if (background_) comm_.core->engine().EndBackground();
  done_.store(true, std::memory_order_release);
}

template <typename Finished>
void Operation::ProgressUntil(bool start_steps, Finished finished) noexcept {
  std::atomic<bool>& has = start_steps ? has_start_ready_ : has_ready_;
  IdleBackoff backoff(*comm_.core);
  while (!finished()) {
    int n = 0;
    if (has.load(std::memory_order_acquire) && RunReady(start_steps)) n = 1;
    n += comm_.core->Progress();
    backoff.Pass(n);
  }
}

void Operation::RunStart() noexcept {
  ProgressUntil(true, [this] {
    return app_start_left_.load(std::memory_order_acquire) == 0;
  });
}

void Operation::Fail(Status s, std::string what) noexcept {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!failed_.exchange(true, std::memory_order_acq_rel)) {
    status_ = s;
    error_ = std::move(what);
  }
}

void Operation::Launch(StepState& st) noexcept {
  if (prepared_->split_s >= 0) {
    const StepPlace place = prepared_->places[st.index];
    if (place != StepPlace::kComm) {
      std::lock_guard<queues::SpinLock> lock(ready_mu_);
      if (place == StepPlace::kAppStart) {
        start_ready_.push_back(st.index);
        has_start_ready_.store(true, std::memory_order_release);
      } else {
        ready_.push_back(st.index);
        has_ready_.store(true, std::memory_order_release);
      }
      return;
    }
  } else if (waiter_.load(std::memory_order_acquire)) {
    // A thread waits for this operation: it runs the step (no queueing).
    std::lock_guard<queues::SpinLock> lock(ready_mu_);
    ready_.push_back(st.index);
    has_ready_.store(true, std::memory_order_release);
    return;
  }
  Status s = comm_.core->engine().Submit(st.task);
  if (s != Status::kOk) {
    Fail(s, "cannot submit a collective step to the engine: " +
                std::string(engine::StatusName(s)));
    StepDone(st);
  }
}

void Operation::StepDone(StepState& st) noexcept {
  const uint32_t i = st.index;
  if (prepared_->split_s >= 0 &&
      prepared_->places[i] == StepPlace::kAppStart)
    app_start_left_.fetch_sub(1, std::memory_order_acq_rel);
  const auto& at = prepared_->dependents_at;
  for (uint32_t k = at[i]; k < at[i + 1]; ++k) {
    StepState& d = steps_[prepared_->dependents[k]];
    if (d.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) Launch(d);
  }
  if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
}

void Operation::OnRequestDone(Request& req, Status s, void* arg) noexcept {
  auto& st = *static_cast<StepState*>(arg);
  Operation& op = *st.op;
  const Step& step = op.prepared_->schedule.steps[st.index];
  if (s != Status::kOk) {
    op.Fail(s, std::string(step.kind == StepKind::kSend ? "send to"
                                                        : "receive from") +
                   " rank " + std::to_string(step.peer) + " failed: " +
                   std::string(engine::StatusName(s)));
  } else if (step.kind == StepKind::kRecv && req.info().size != step.dst.len) {
    op.Fail(Status::kTruncated,
            "received " + std::to_string(req.info().size) +
                " bytes from rank " + std::to_string(step.peer) +
                " where the collective expects " +
                std::to_string(step.dst.len) +
                " (do all ranks pass matching counts and datatypes?)");
  }
  op.StepDone(st);
}

TaskResult Operation::RunStep(void* arg) noexcept {
  auto& st = *static_cast<StepState*>(arg);
  Operation& op = *st.op;
  op.steps_run_.fetch_add(1, std::memory_order_relaxed);
  const Step& step = op.prepared_->schedule.steps[st.index];
  if (op.failed_.load(std::memory_order_acquire)) {
    op.StepDone(st);
    return TaskResult::kDone;
  }
  switch (step.kind) {
    case StepKind::kSend:
    case StepKind::kRecv: {
      const int peer = op.comm_.world_ranks[step.peer];
      const int tag = static_cast<int>(op.tag_base_ | step.tag);
      Status s =
          step.kind == StepKind::kSend
              ? op.comm_.session->Isend(peer, tag, op.Resolve(step.src),
                                        step.src.len, st.req)
              : op.comm_.session->Irecv(peer, tag, op.Resolve(step.dst),
                                        step.dst.len, st.req);
      if (s == Status::kOk) {
        st.posted = true;
      } else {
        // Not started: the completion callback will not run.
        op.Fail(s, "cannot post a collective message to rank " +
                       std::to_string(step.peer) + ": " +
                       std::string(engine::StatusName(s)));
        op.StepDone(st);
      }
      // Completions may already have run StepDone (and freed nothing: the
      // Operation lives until done, which needs this step).
      return TaskResult::kDone;
    }
    case StepKind::kReduce:
      if (step.src.len > 0)
        op.reduce_.fn(op.Resolve(step.src), op.Resolve(step.dst),
                      step.src.len / op.reduce_.elem_size, op.reduce_.ctx);
      break;
    case StepKind::kCopy: {
      uint8_t* from = op.Resolve(step.src);
      uint8_t* to = op.Resolve(step.dst);
      if (step.src.len > 0 && from != to) std::memmove(to, from, step.src.len);
      break;
    }
  }
  op.StepDone(st);
  return TaskResult::kDone;
}

bool Operation::Test() noexcept {
  if (done()) return true;
  if (has_ready_.load(std::memory_order_acquire)) (void)RunReady(false);
  (void)comm_.core->Progress();  // also polls the engine every few passes
  return done();
}

bool Operation::RunReady(bool start_steps) noexcept {
  if (runner_busy_.exchange(true, std::memory_order_acquire)) return false;
  {
    std::lock_guard<queues::SpinLock> lock(ready_mu_);
    if (start_steps) {
      running_.swap(start_ready_);
      has_start_ready_.store(false, std::memory_order_relaxed);
    } else {
      running_.swap(ready_);
      has_ready_.store(false, std::memory_order_relaxed);
    }
  }
  engine::Engine& engine = comm_.core->engine();
  const bool tracing = engine.tracing();
  // Three passes over the batch, no sorting, in InlinePass order: sends,
  // receives, then the local steps (see executor.h).
  const std::vector<Step>& steps = prepared_->schedule.steps;
  for (int pass = 0; pass < 3; ++pass) {
    for (uint32_t i : running_) {
      if (InlinePass(steps[i].kind) != pass) continue;
      const int64_t t0 = tracing ? engine::Tracer::NowNs() : 0;
      (void)RunStep(&steps_[i]);
      if (tracing)
        engine.TraceInline(steps_[i].task, t0, engine::Tracer::NowNs());
    }
  }
  running_.clear();
  runner_busy_.store(false, std::memory_order_release);
  return true;
}

Status Operation::Wait() noexcept {
  if (!started_.load(std::memory_order_acquire)) return Status::kInvalidArgument;
  waiter_.store(true, std::memory_order_release);
  ProgressUntil(false, [this] { return done(); });
  return status_;
}

}  // namespace rondo::nmad::coll
