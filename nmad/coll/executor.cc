#include "nmad/coll/executor.h"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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
    std::fprintf(stderr,
                 "rondo: nmad/coll: an Operation was destroyed while its "
                 "collective was still running\n");
    std::abort();
  }
  Quiesce();
}

void Operation::Quiesce() noexcept {
  // done() can be seen while the engine is still marking the last step's
  // task finished, or a request its completion: wait for those few
  // instructions before the memory goes.
  const uint32_t n = static_cast<uint32_t>(schedule_.steps.size());
  for (uint32_t i = 0; i < n; ++i) {
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

Status Operation::Start(const CommView& comm, Schedule schedule,
                        const void* send_buf, void* recv_buf,
                        uint32_t tag_base, ReduceFn reduce, DoneFn on_done,
                        void* done_arg) {
  if (started_.load(std::memory_order_relaxed)) {
    if (!done()) return Status::kBusy;
    Quiesce();
  }
  if (comm.core == nullptr || comm.session == nullptr ||
      comm.world_ranks == nullptr || comm.size < 1)
    return Status::kInvalidArgument;
  comm_ = comm;
  schedule_ = std::move(schedule);
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

  const uint32_t n = static_cast<uint32_t>(schedule_.steps.size());
  // Cheap structural checks (the builders are tested against
  // Schedule::Validate; this guards the executor's own memory accesses).
  for (uint32_t i = 0; i < n; ++i) {
    const Step& s = schedule_.steps[i];
    const bool msg = s.kind == StepKind::kSend || s.kind == StepKind::kRecv;
    if ((msg && (s.peer < 0 || s.peer >= comm.size || s.tag > kMaxStepTag)) ||
        s.src.buf >= kFirstTmpBuf + schedule_.tmp_bytes.size() ||
        s.dst.buf >= kFirstTmpBuf + schedule_.tmp_bytes.size() ||
        (s.kind == StepKind::kReduce &&
         (reduce_.fn == nullptr || reduce_.elem_size == 0 ||
          s.src.len != s.dst.len || s.src.len % reduce_.elem_size != 0))) {
      std::lock_guard<std::mutex> lock(error_mu_);
      error_ = "malformed schedule: step " + std::to_string(i);
      return Status::kInvalidArgument;
    }
    for (uint32_t d : s.deps)
      if (d >= i) {
        std::lock_guard<std::mutex> lock(error_mu_);
        error_ = "malformed schedule: step " + std::to_string(i) +
                 " depends on a later step";
        return Status::kInvalidArgument;
      }
  }

  // Temporaries: one allocation, each 64-byte aligned.
  uint64_t total = 0;
  std::vector<uint64_t> at;
  for (uint64_t b : schedule_.tmp_bytes) {
    at.push_back(total);
    total += (b + 63) & ~uint64_t{63};
  }
  tmp_storage_.reset(
      total ? static_cast<uint8_t*>(std::aligned_alloc(64, total)) : nullptr);
  if (total && !tmp_storage_) {
    std::lock_guard<std::mutex> lock(error_mu_);
    error_ = "out of memory for " + std::to_string(total) +
             " bytes of collective temporaries";
    return Status::kNoResource;
  }
  tmp_.assign(schedule_.tmp_bytes.size(), nullptr);
  for (size_t i = 0; i < at.size(); ++i) tmp_[i] = tmp_storage_.get() + at[i];

  // Dependents in CSR form.
  dependents_at_.assign(n + 1, 0);
  for (const Step& s : schedule_.steps)
    for (uint32_t d : s.deps) ++dependents_at_[d + 1];
  for (uint32_t i = 0; i < n; ++i) dependents_at_[i + 1] += dependents_at_[i];
  dependents_.assign(dependents_at_[n], 0);
  {
    std::vector<uint32_t> fill(dependents_at_.begin(),
                               dependents_at_.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t d : schedule_.steps[i].deps) dependents_[fill[d]++] = i;
  }

  steps_.reset(new StepState[n]);
  const topology::CpuSet& cpus = comm.core->task_cpuset();
  for (uint32_t i = 0; i < n; ++i) {
    StepState& st = steps_[i];
    st.op = this;
    st.index = i;
    st.remaining.store(static_cast<uint32_t>(schedule_.steps[i].deps.size()),
                       std::memory_order_relaxed);
    st.task.Init(&Operation::RunStep, &st, cpus, {.name = "coll.step"});
    st.req.set_completion(&Operation::OnRequestDone, &st);
  }
  waiter_.store(false, std::memory_order_relaxed);
  has_ready_.store(false, std::memory_order_relaxed);
  ready_.clear();
  ready_.reserve(n);
  running_.clear();
  running_.reserve(n);
  left_.store(n + 1, std::memory_order_relaxed);  // +1: held by Start
  started_.store(true, std::memory_order_release);
  for (uint32_t i = 0; i < n; ++i)
    if (schedule_.steps[i].deps.empty()) Launch(steps_[i]);
  // Release Start's hold: an empty schedule completes here.
  if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (on_done_) on_done_(*this, done_arg_);
    done_.store(true, std::memory_order_release);
  }
  return Status::kOk;
}

void Operation::Fail(Status s, std::string what) noexcept {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!failed_.exchange(true, std::memory_order_acq_rel)) {
    status_ = s;
    error_ = std::move(what);
  }
}

void Operation::Launch(StepState& st) noexcept {
  if (waiter_.load(std::memory_order_acquire)) {
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
  for (uint32_t k = dependents_at_[i]; k < dependents_at_[i + 1]; ++k) {
    StepState& d = steps_[dependents_[k]];
    if (d.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) Launch(d);
  }
  if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (on_done_) on_done_(*this, done_arg_);
    done_.store(true, std::memory_order_release);
  }
}

void Operation::OnRequestDone(Request& req, Status s, void* arg) noexcept {
  auto& st = *static_cast<StepState*>(arg);
  Operation& op = *st.op;
  const Step& step = op.schedule_.steps[st.index];
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
  const Step& step = op.schedule_.steps[st.index];
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
  (void)comm_.core->Progress();  // also polls the engine every few passes
  return done();
}

void Operation::RunReady() noexcept {
  {
    std::lock_guard<queues::SpinLock> lock(ready_mu_);
    running_.swap(ready_);
    has_ready_.store(false, std::memory_order_relaxed);
  }
  for (uint32_t i : running_) (void)RunStep(&steps_[i]);
  running_.clear();
}

Status Operation::Wait() noexcept {
  if (!started_.load(std::memory_order_acquire)) return Status::kInvalidArgument;
  // Only one thread may run steps from the ready list at a time: the first
  // waiter. Another thread waiting on the same operation just progresses.
  const bool runner = !waiter_.exchange(true, std::memory_order_acq_rel);
  uint32_t idle = 0;
  while (!done()) {
    int n = 0;
    if (runner && has_ready_.load(std::memory_order_acquire)) {
      RunReady();
      n = 1;
    }
    n += comm_.core->Progress();
    if (n > 0) {
      idle = 0;
    } else if (++idle >= 64) {
      idle = 0;
      sched_yield();
    }
  }
  return status_;
}

}  // namespace rondo::nmad::coll
