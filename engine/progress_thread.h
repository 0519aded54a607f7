// ProgressThread: a thread that runs the engine's tasks from one core.
//
// Two modes, both triggers of the PIOMan design:
//   kProgress  a progress thread on a dedicated or idle core: it runs
//              ScheduleFrom(core) in a loop; when the queues on its path are
//              empty it spins for idle_spin_ns, then sleeps until a submit
//              wakes it (gentle idling: an idle engine costs no CPU).
//   kTimer     the timer trigger, for cores whose application thread
//              computes and never calls Rondo: while work is queued on its
//              path it wakes every `period_ns`, runs one pass and sleeps
//              again, so it takes a bounded share of the core; with nothing
//              queued it sleeps until a submit re-arms it.
//
//   kQuiet     quiet progress, for a rank with no free core (the default
//              when every core runs an application thread): the thread
//              shares the rank's core and stays asleep unless background
//              work is pending (QuietSignals::background) while the
//              application is outside Rondo. When the application leaves
//              Rondo with work pending, the thread wakes, lets the
//              application have one period (period_ns) and, if it did not
//              call Rondo meanwhile, progresses for it: runs the tasks of
//              its path and sleeps on the networks' fds between arrivals.
//              While the application keeps calling Rondo the period doubles
//              (up to 16x), so a communication loop costs one check per
//              period at most, and a blocking call costs nothing.
//
// Sleeping uses an explicit handshake so that no wake-up is lost: the thread
// announces itself in the sleeper count of every node on its core's path
// (`node_sleepers`, one cache line per node: a thread writes only its own
// path's) and on its own futex word, then checks the queues once more
// (side-effect free) before it sleeps; a submitter pushes to node n, then
// (after a full fence) looks at node n's sleeper count and wakes a sleeper.
//
// With wake-up sources (engine/wakeup_source.h), a thread whose path holds
// only polling tasks that report no work sleeps in poll() on the sources'
// fds instead of spinning; the same handshake applies.
//
// Thread-safety: Wake() and the accessors from any thread; Start/Stop from
// the owning engine only.
#ifndef RONDO_ENGINE_PROGRESS_THREAD_H_
#define RONDO_ENGINE_PROGRESS_THREAD_H_

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "engine/owned_atomic.h"
#include "engine/queue_tree.h"
#include "engine/wakeup_source.h"

namespace rondo::engine {

// What a quiet progress thread watches. Owned by the engine, that is by one
// rank, and kept in the leaf of the rank's application core (the owner given
// to the write audit): written by the rank's application threads on every
// call (EnterCall/ExitCall) and by whoever starts or finishes background
// work, read by the quiet thread on the same core. No other rank and no
// other core's tasks touch it; the one cross-core write is a completion
// (EndBackground) run by the rank's progress thread on a free core, the same
// write as the request's own completion.
struct QuietSignals {
  // Low 32 bits: application threads inside Rondo now; high 32 bits: calls
  // entered so far (wrapping). One word, so that entering and leaving cost
  // one atomic read-modify-write each.
  alignas(64) OwnedAtomic<uint64_t> calls{0};
  // Operations in flight that need progress while the application is
  // outside Rondo (requests, collectives, broadcasts to forward).
  alignas(64) OwnedAtomic<int64_t> background{0};

  static constexpr uint64_t kEntered = uint64_t{1} << 32;
  static constexpr uint64_t kInsideMask = kEntered - 1;
};

class ProgressThread {
 public:
  enum class Mode { kProgress, kTimer, kQuiet };
  struct Config {
    int core = 0;
    Mode mode = Mode::kProgress;
    int64_t period_ns = 200000;     // kTimer; kQuiet: the first period
    int64_t idle_spin_ns = 50000;   // kProgress
    bool bind = true;               // bind to `core` (native topology only)
    // kTimer: explicit polls from the application on `core` (Engine::Poll,
    // Wait). A tick that finds it moved since the last tick skips its pass:
    // the application is polling by itself, and a timer pass on its core
    // would only preempt it (possibly while it holds a queue's spin lock).
    const std::atomic<uint64_t>* app_polls = nullptr;
    // kQuiet: the engine's signals (required).
    QuietSignals* quiet = nullptr;
    // Run under SCHED_BATCH: the scheduler lets a woken thread wait for the
    // running thread's time slice instead of preempting it.
    bool batch = false;
    // kQuiet: SCHED_BATCH only while bytes stream (RONDO_QUIET_SCHED=stream,
    // EngineOptions::quiet_sched).
    bool stream = false;
  };

  // `on_start` runs first on the new thread (the engine records the
  // thread's core there).
  // `node_sleepers` has one counter per node of `tree` (owned by the
  // engine; the thread counts itself in those of its core's path while it
  // sleeps).
  ProgressThread(QueueTree& tree,
                 PaddedOwnedAtomic<int>* node_sleepers,
                 Config config, std::function<void()> on_start);
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  // Sleep on these sources' fds when only polling tasks are queued (set
  // before Start; may be null).
  void set_wakeup_registry(WakeupRegistry* registry) { registry_ = registry; }

  void Start();
  // Asks the thread to finish its current pass and exit, and joins it.
  void Stop();

  // Wakes the thread if it sleeps. Returns true if it was asleep.
  bool Wake() noexcept;
  // kQuiet: the last application thread just left Rondo (or background
  // work started while none is inside). Wakes the thread when work is
  // pending and it sleeps without a deadline (idle, or on the fds);
  // otherwise costs two loads. Any thread.
  void OnApplicationLeft() noexcept {
    if (config_.quiet->background.load(std::memory_order_seq_cst) <= 0)
      return;
    const uint32_t w = sleep_word_.load(std::memory_order_seq_cst);
    if (w == kAsleep || w == kAsleepOnFds) Wake();
  }

  int core() const { return config_.core; }
  Mode mode() const { return config_.mode; }
  bool sleeping() const {
    return sleep_word_.load(std::memory_order_acquire) == kAsleep;
  }
  // Times the thread went to sleep, and passes that ran at least one task.
  // kQuiet: periods after which it progressed for the application.
  uint64_t activations() const {
    return activations_.load(std::memory_order_relaxed);
  }
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  // Times the thread slept on wake-up sources (a subset of sleeps()).
  uint64_t fd_sleeps() const {
    return fd_sleeps_.load(std::memory_order_relaxed);
  }
  // Timer ticks (kQuiet: checks) skipped because the application polled
  // (called Rondo) meanwhile.
  uint64_t skipped_ticks() const {
    return skipped_ticks_.load(std::memory_order_relaxed);
  }
  uint64_t busy_passes() const {
    return busy_passes_.load(std::memory_order_relaxed);
  }
  // kQuiet: ticks of bounded polling because no wake-up source could be
  // armed (a transport with no event fd), and fd sleeps that ran out with
  // work pending that nothing had announced (lost wake-ups; 0 expected).
  uint64_t fallback_ticks() const {
    return fallback_ticks_.load(std::memory_order_relaxed);
  }
  uint64_t strands() const { return strands_.load(std::memory_order_relaxed); }
  // Wakes the thread only if it sleeps on the wake-up fds (a submit or a
  // Notify for a quiet thread that progresses for the application; one
  // asleep with nothing pending is left alone). True if it was woken.
  bool WakeIfOnFds() noexcept;
  // Linux thread id (for diagnostics and /proc), 0 before the thread runs.
  int tid() const { return tid_.load(std::memory_order_acquire); }
  // Whether binding to the core succeeded (false on synthetic topologies).
  bool bound() const { return bound_.load(std::memory_order_acquire); }
  // Whether the thread runs under SCHED_BATCH (Config::batch and the call
  // succeeded).
  bool batch() const { return batch_.load(std::memory_order_acquire); }
  // Config::stream: how many times the thread went to SCHED_BATCH because
  // bytes streamed.
  uint64_t stream_switches() const {
    return stream_switches_.load(std::memory_order_relaxed);
  }

  // How long a quiet thread sleeps on its fds at most while the application
  // computes with work pending: a safety net (rondo-info prints its cost).
  static constexpr int quiet_safety_net_ms() noexcept {
    return kQuietFdSleepMs;
  }

 private:
  static constexpr uint32_t kAwake = 0;
  static constexpr uint32_t kAsleep = 1;
  static constexpr uint32_t kAsleepOnFds = 2;
  // A safety net, not a synchronisation: every wake-up has a sender.
  static constexpr int kMaxFdSleepMs = 100;
  // kQuiet's safety net while it progresses for the application; work its
  // expiry finds is counted as a strand (strands()).
  static constexpr int kQuietFdSleepMs = 20;

  void Main();
  void ProgressLoop();
  void TimerLoop();
  void QuietLoop();
  // kQuiet: sleeps until OnApplicationLeft() or Stop(), unless background
  // work is pending while no application thread is inside Rondo.
  void QuietSleep();
  // Config::stream: this thread's policy, SCHED_BATCH or SCHED_OTHER (a
  // syscall only when it changes).
  void SetBatch(bool batch) noexcept;
  // Sleeps `ns` (interruptible by Stop()).
  void SleepFor(int64_t ns);
  // The sleep handshake; returns after a wake-up (or at once if work or a
  // stop request showed up during the handshake).
  void SleepUntilWoken();
  // Sleeps in ppoll() on the wake-up sources' fds and wake_fd_ for at most
  // timeout_ns, if every source arms and no task showed up on the path
  // meanwhile. The thread announces itself as a sleeper before it arms the
  // sources, so that no Notify or Submit is lost in between.
  enum class FdSleep {
    kWoken,      // an fd, a Notify or a Submit woke it (or came first)
    kTimedOut,   // nothing woke it within timeout_ns
    kNotArmed,   // a source could not arm (events pending, rail busy)
    kNoSources,  // no wake-up source: nothing to sleep on
  };
  FdSleep SleepOnSources(int64_t timeout_ns);

  // Counts this thread in (or out of) the sleepers of its path's nodes.
  void AnnounceSleep() noexcept;
  void RetractSleep() noexcept;

  QueueTree& tree_;
  PaddedOwnedAtomic<int>* node_sleepers_;
  const Config config_;
  std::function<void()> on_start_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> bound_{false};
  std::atomic<bool> batch_{false};
  std::atomic<int> tid_{0};
  alignas(64) OwnedAtomic<uint32_t> sleep_word_{kAwake};
  std::atomic<uint32_t> timer_word_{0};  // futex for interruptible periods
  std::atomic<uint64_t> sleeps_{0};
  std::atomic<uint64_t> busy_passes_{0};
  std::atomic<uint64_t> skipped_ticks_{0};
  std::atomic<uint64_t> fd_sleeps_{0};
  std::atomic<uint64_t> activations_{0};
  std::atomic<uint64_t> fallback_ticks_{0};
  std::atomic<uint64_t> strands_{0};
  std::atomic<uint64_t> stream_switches_{0};
  bool batch_now_ = false;  // Config::stream: under SCHED_BATCH (own thread)
  std::vector<pollfd> fds_;  // SleepOnSources' set, reused
  WakeupRegistry* registry_ = nullptr;
  int wake_fd_ = -1;  // eventfd, written by Wake() while kAsleepOnFds
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_PROGRESS_THREAD_H_
