#include "engine/progress_thread.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <vector>

#include "engine/internal/futex.h"
#include "queues/cpu_relax.h"

namespace rondo::engine {
namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

}  // namespace

ProgressThread::ProgressThread(
    QueueTree& tree, PaddedOwnedAtomic<int>* node_sleepers,
    Config config, std::function<void()> on_start)
    : tree_(tree),
      node_sleepers_(node_sleepers),
      config_(config),
      on_start_(std::move(on_start)),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  // Woken by submitters of the nodes above its core: state of its leaf.
  sleep_word_.set_owner(tree_.topology().CoreNode(config_.core),
                        "progress thread sleep word");
}

ProgressThread::~ProgressThread() {
  Stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ProgressThread::AnnounceSleep() noexcept {
  for (int node : tree_.PathOf(config_.core))
    node_sleepers_[node].v.fetch_add(1, std::memory_order_seq_cst);
}

void ProgressThread::RetractSleep() noexcept {
  for (int node : tree_.PathOf(config_.core))
    node_sleepers_[node].v.fetch_sub(1, std::memory_order_seq_cst);
}

void ProgressThread::Start() { thread_ = std::thread([this] { Main(); }); }

void ProgressThread::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_seq_cst);
  timer_word_.store(1, std::memory_order_release);
  internal::FutexWake(&timer_word_, 1);
  Wake();
  thread_.join();
}

bool ProgressThread::WakeIfOnFds() noexcept {
  if (sleep_word_.load(std::memory_order_relaxed) != kAsleepOnFds)
    return false;
  uint32_t expected = kAsleepOnFds;
  if (!sleep_word_.compare_exchange_strong(expected, kAwake,
                                           std::memory_order_acq_rel))
    return false;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  return true;
}

bool ProgressThread::Wake() noexcept {
  uint32_t word = sleep_word_.load(std::memory_order_relaxed);
  if (word == kAwake) return false;
  word = sleep_word_.exchange(kAwake, std::memory_order_acq_rel);
  if (word == kAsleep) {
    internal::FutexWake(&sleep_word_.word(), 1);
    return true;
  }
  if (word == kAsleepOnFds) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
    return true;
  }
  return false;
}

ProgressThread::FdSleep ProgressThread::SleepOnSources(int64_t timeout_ns) {
  if (registry_ == nullptr || wake_fd_ < 0) return FdSleep::kNoSources;
  // The tasks on our path now, all of which just reported no work (the
  // caller's pass found nothing): a task submitted from here on changes the
  // count.
  const int64_t idle_tasks = tree_.PathQueued(config_.core);
  // Announce ourselves first, then arm: a Notify (work left for a polling
  // task: a rail's pending operations, a gate to flush) or a Submit after
  // the fence below sees us in the sleeper counts and writes wake_fd_; one
  // before it left its mark where Arm() or the queue count below sees it.
  // Arming first would leave a window in which such work is announced to
  // nobody and waits for the timeout.
  sleep_word_.store(kAsleepOnFds, std::memory_order_seq_cst);
  AnnounceSleep();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  FdSleep result = FdSleep::kNotArmed;
  fds_.clear();
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    bool armed = !registry_->sources.empty();
    if (registry_->sources.empty()) result = FdSleep::kNoSources;
    for (WakeupSource* s : registry_->sources) {
      if (!armed) break;
      if (!s->Arm()) armed = false;
      fds_.push_back({s->fd(), POLLIN, 0});
    }
    if (!armed) fds_.clear();
  }
  if (!fds_.empty() && !stop_.load(std::memory_order_seq_cst) &&
      sleep_word_.load(std::memory_order_acquire) == kAsleepOnFds &&
      tree_.PathQueued(config_.core) == idle_tasks) {
    fds_.push_back({wake_fd_, POLLIN, 0});
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    fd_sleeps_.fetch_add(1, std::memory_order_relaxed);
    const timespec ts{static_cast<time_t>(timeout_ns / 1000000000),
                      static_cast<long>(timeout_ns % 1000000000)};
    const int n = ppoll(fds_.data(), fds_.size(), &ts, nullptr);
    result = n == 0 ? FdSleep::kTimedOut : FdSleep::kWoken;
    // Drain wake_fd_ only when it woke us: one read less per transport
    // event. A write that lands after this ppoll (a waker that saw us
    // asleep just before we stored kAwake) stays in the eventfd, so the
    // next ppoll returns at once and drains it here: never lost, at worst
    // one spurious pass.
    if ((fds_.back().revents & POLLIN) != 0) {
      uint64_t drained;
      while (read(wake_fd_, &drained, sizeof drained) > 0) {
      }
    }
  } else if (!fds_.empty()) {
    result = FdSleep::kWoken;  // woken (or stopped) before sleeping
  }
  sleep_word_.store(kAwake, std::memory_order_release);
  RetractSleep();
  return result;
}

void ProgressThread::Main() {
  tid_.store(static_cast<int>(gettid()), std::memory_order_release);
  if (config_.bind) {
    bool ok = tree_.topology().BindThreadToCore(config_.core);
    bound_.store(ok, std::memory_order_release);
  }
  if (config_.batch) {
    // This thread only (pid 0 = the caller); an unprivileged call. Where it
    // fails the thread keeps the normal policy.
    const sched_param param{};
    batch_.store(sched_setscheduler(0, SCHED_BATCH, &param) == 0,
                 std::memory_order_release);
  }
  if (on_start_) on_start_();
  switch (config_.mode) {
    case Mode::kProgress: ProgressLoop(); break;
    case Mode::kTimer: TimerLoop(); break;
    case Mode::kQuiet: QuietLoop(); break;
  }
}

void ProgressThread::SleepUntilWoken() {
  sleep_word_.store(kAsleep, std::memory_order_seq_cst);
  AnnounceSleep();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Last look, after announcing ourselves: a submit that happened before the
  // announcement is visible here; one after it sees us in
  // the sleeper counts.
  if (!stop_.load(std::memory_order_seq_cst) &&
      !tree_.PathMaybeNonEmpty(config_.core)) {
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    while (sleep_word_.load(std::memory_order_acquire) == kAsleep &&
           !stop_.load(std::memory_order_acquire)) {
      internal::FutexWait(&sleep_word_.word(), kAsleep, -1);
    }
  }
  sleep_word_.store(kAwake, std::memory_order_release);
  RetractSleep();
}

void ProgressThread::ProgressLoop() {
  const int core = config_.core;
  int64_t idle_since = -1;
  uint32_t idle_iterations = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (tree_.ScheduleFrom(core) > 0) {
      busy_passes_.fetch_add(1, std::memory_order_relaxed);
      idle_since = -1;
      idle_iterations = 0;
      continue;
    }
    // Nothing done this pass. Read the clock only now and then.
    if ((++idle_iterations & 63) != 0) {
      queues::CpuRelax();
      continue;
    }
    int64_t now = MonotonicNs();
    if (idle_since < 0) idle_since = now;
    if (now - idle_since < config_.idle_spin_ns) continue;
    if (tree_.PathMaybeNonEmpty(core)) {
      // Tasks are queued but report no work (polling tasks): sleep on their
      // networks' wake-up fds if they have them, else keep polling but let
      // a thread that shares this core run.
      const FdSleep slept =
          SleepOnSources(int64_t{kMaxFdSleepMs} * 1000000);
      if (slept == FdSleep::kWoken || slept == FdSleep::kTimedOut) {
        idle_since = -1;
        continue;
      }
      sched_yield();
      continue;
    }
    SleepUntilWoken();
    idle_since = -1;
  }
}

void ProgressThread::SleepFor(int64_t ns) {
  const int64_t deadline = MonotonicNs() + ns;
  for (int64_t left = ns; left > 0 && !stop_.load(std::memory_order_acquire);
       left = deadline - MonotonicNs()) {
    internal::FutexWait(&timer_word_, 0, left);
  }
}

void ProgressThread::QuietSleep() {
  QuietSignals& q = *config_.quiet;
  sleep_word_.store(kAsleep, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Pairs with OnApplicationLeft(): the application's exit (a seq_cst
  // read-modify-write of `calls`) happens before our loads here and we see
  // no application inside, or it sees kAsleep and wakes us.
  const bool work_for_us =
      q.background.load(std::memory_order_seq_cst) > 0 &&
      (q.calls.load(std::memory_order_seq_cst) & QuietSignals::kInsideMask) ==
          0;
  if (!work_for_us && !stop_.load(std::memory_order_seq_cst)) {
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    while (sleep_word_.load(std::memory_order_acquire) == kAsleep &&
           !stop_.load(std::memory_order_acquire)) {
      internal::FutexWait(&sleep_word_.word(), kAsleep, -1);
    }
  }
  sleep_word_.store(kAwake, std::memory_order_release);
}

void ProgressThread::SetBatch(bool batch) noexcept {
  if (batch == batch_now_) return;
  // This thread only (pid 0 = the caller); unprivileged both ways (a
  // thread may always lower itself to SCHED_BATCH and back to SCHED_OTHER
  // at nice 0). Where it fails the thread keeps its policy.
  const sched_param param{};
  if (sched_setscheduler(0, batch ? SCHED_BATCH : SCHED_OTHER, &param) != 0)
    return;
  batch_now_ = batch;
  if (batch) stream_switches_.fetch_add(1, std::memory_order_relaxed);
}

void ProgressThread::QuietLoop() {
  const int core = config_.core;
  QuietSignals& q = *config_.quiet;
  const int64_t first = config_.period_ns;
  const int64_t longest = 16 * first;
  int64_t period = first;
  auto entered = [&q] {
    return q.calls.load(std::memory_order_acquire) >> 32;
  };
  auto inside = [&q] {
    return (q.calls.load(std::memory_order_acquire) &
            QuietSignals::kInsideMask) != 0;
  };
  uint64_t seen = entered();
  while (!stop_.load(std::memory_order_relaxed)) {
    if (q.background.load(std::memory_order_acquire) <= 0) {
      QuietSleep();
      period = first;
      seen = entered();
      continue;
    }
    // Work is pending: give the application a period to come back.
    SleepFor(period);
    if (stop_.load(std::memory_order_relaxed)) break;
    if (inside() || entered() != seen) {
      // It polls by itself: stay out of its way, and look less often. A
      // call that lasts the longest period (a long blocking call) is left
      // alone until it returns: its ExitCall wakes us.
      skipped_ticks_.fetch_add(1, std::memory_order_relaxed);
      if (inside() && period == longest) {
        QuietSleep();
        period = first;
      } else {
        period = std::min(period * 2, longest);
      }
      seen = entered();
      continue;
    }
    // It stayed outside for a whole period with work pending: progress for
    // it until it comes back or the work is done, event-driven. A pass runs
    // the path's tasks; passes repeat while they find work (UCX's idiom:
    // progress until nothing is left, then arm); then the thread sleeps on
    // the networks' fds until the transport announces something (an
    // arrival, a socket that can take more data: UCX 1.13 over TCP
    // announces every step of a transfer, docs/defaults.md), an enqueuer leaves work for a polling task
    // (Engine::Notify) or a task is submitted on its path. So the
    // computation is interrupted per event, not per period: a 1 MiB
    // transfer at 1 Gbit/s wakes it a few times instead of 168 times at 50
    // us. It shares the core with the computation: after kMaxStreak passes
    // in a row that found work it gives the core back for one tick, so a
    // stream of arrivals cannot take the core away. Where no source can be
    // armed (a driver without a wake-up fd) it falls back to bounded
    // polling, one pass per tick (half a period), and counts it
    // (fallback_ticks(): rondo-info and bench/overlap print them).
    //
    // RONDO_QUIET_SCHED=stream (Config::stream, the default): the thread
    // runs under SCHED_OTHER, so that the first event of a transfer (a
    // rendezvous request to answer, a collective's next step) preempts the
    // computation at once. Once fd wake-ups that find work come less than
    // kStreamGapNs apart, bytes are streaming (at 1 Gbit/s a wake-up every
    // ~0.5 ms, ~64 KiB each): the thread goes to SCHED_BATCH, so that its
    // next wake-ups wait for the computation's time slice and each moves a
    // slice's worth of bytes. The kernel keeps receiving into the socket
    // buffer meanwhile; what changes is how often the computation is
    // interrupted (bench/overlap against its kernel floor,
    // docs/overlap.md). Back to SCHED_OTHER as soon as a pass completes
    // background work (a new protocol phase may start), a wake-up finds
    // nothing, the fd sleep times out, or the activation ends.
    period = first;
    activations_.fetch_add(1, std::memory_order_relaxed);
    const int64_t tick = std::max<int64_t>(first / 2, 1000);
    constexpr int kMaxStreak = 16;
    constexpr int64_t kStreamGapNs = 2000000;
    int streak = 0;
    bool retried = false;
    bool timed_out = false;
    bool fd_woken = false;        // the last sleep ended by an event
    int64_t last_event_ns = -1;   // the last fd wake-up that found work
    while (!stop_.load(std::memory_order_relaxed)) {
      const int64_t pending = config_.stream
                                  ? q.background.load(std::memory_order_relaxed)
                                  : 0;
      const int worked = tree_.ScheduleFrom(core);
      if (inside() || entered() != seen) {
        seen = entered();
        break;
      }
      if (config_.stream) {
        if (worked > 0 &&
            q.background.load(std::memory_order_relaxed) < pending) {
          SetBatch(false);  // work completed: answer the next step at once
          last_event_ns = -1;
        } else if (fd_woken && worked > 0) {
          const int64_t now = MonotonicNs();
          if (last_event_ns >= 0 && now - last_event_ns < kStreamGapNs)
            SetBatch(true);
          last_event_ns = now;
        } else if (fd_woken) {
          SetBatch(false);  // woken for nothing
          last_event_ns = -1;
        }
        fd_woken = false;
      }
      if (worked > 0) {
        busy_passes_.fetch_add(1, std::memory_order_relaxed);
        // Work that the timeout found and no fd announced: a lost wake-up.
        if (timed_out) strands_.fetch_add(1, std::memory_order_relaxed);
        timed_out = false;
        retried = false;
        if (++streak < kMaxStreak) continue;
        streak = 0;
        SleepFor(tick);
        continue;
      }
      streak = 0;
      timed_out = false;
      if (q.background.load(std::memory_order_acquire) <= 0) break;
      switch (SleepOnSources(int64_t{kQuietFdSleepMs} * 1000000)) {
        case FdSleep::kWoken:
          retried = false;
          fd_woken = true;
          break;
        case FdSleep::kTimedOut:
          timed_out = true;
          retried = false;
          if (config_.stream) SetBatch(false);
          last_event_ns = -1;
          break;
        case FdSleep::kNotArmed:
          // Events are pending (a pass will find them) or a rail is held
          // by another thread: one more pass at once, then a tick.
          if (!retried) {
            retried = true;
            break;
          }
          retried = false;
          fallback_ticks_.fetch_add(1, std::memory_order_relaxed);
          SleepFor(tick);
          break;
        case FdSleep::kNoSources:
          fallback_ticks_.fetch_add(1, std::memory_order_relaxed);
          SleepFor(tick);
          break;
      }
    }
    // The activation is over (the application came back, or the work is
    // done): the next one starts by answering at once.
    if (config_.stream) SetBatch(false);
  }
}

void ProgressThread::TimerLoop() {
  const int core = config_.core;
  uint64_t seen_polls =
      config_.app_polls ? config_.app_polls->load(std::memory_order_relaxed)
                        : 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (!tree_.PathMaybeNonEmpty(core)) {
      SleepUntilWoken();
      continue;  // re-armed: wait one period before the first pass
    }
    // One period, interruptible by Stop().
    int64_t deadline = MonotonicNs() + config_.period_ns;
    for (int64_t left = config_.period_ns;
         left > 0 && !stop_.load(std::memory_order_acquire);
         left = deadline - MonotonicNs()) {
      internal::FutexWait(&timer_word_, 0, left);
    }
    if (stop_.load(std::memory_order_relaxed)) break;
    if (config_.app_polls != nullptr) {
      const uint64_t polls =
          config_.app_polls->load(std::memory_order_relaxed);
      if (polls != seen_polls) {  // the application polls by itself
        seen_polls = polls;
        skipped_ticks_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
    }
    if (tree_.ScheduleFrom(core) > 0)
      busy_passes_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace rondo::engine
