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
// Sleeping uses an explicit handshake so that no wake-up is lost: the thread
// announces itself in `sleepers` and on its own futex word, then checks the
// queues once more (side-effect free) before it sleeps; a submitter pushes,
// then (after a full fence) looks at `sleepers` and wakes a sleeper.
//
// With wake-up sources (engine/wakeup_source.h), a thread whose path holds
// only polling tasks that report no work sleeps in poll() on the sources'
// fds instead of spinning; the same handshake applies.
//
// Thread-safety: Wake() and the accessors from any thread; Start/Stop from
// the owning engine only.
#ifndef RONDO_ENGINE_PROGRESS_THREAD_H_
#define RONDO_ENGINE_PROGRESS_THREAD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "engine/queue_tree.h"
#include "engine/wakeup_source.h"

namespace rondo::engine {

class ProgressThread {
 public:
  enum class Mode { kProgress, kTimer };
  struct Config {
    int core = 0;
    Mode mode = Mode::kProgress;
    int64_t period_ns = 200000;     // kTimer
    int64_t idle_spin_ns = 50000;   // kProgress
    bool bind = true;               // bind to `core` (native topology only)
    // kTimer: explicit polls from the application on `core` (Engine::Poll,
    // Wait). A tick that finds it moved since the last tick skips its pass:
    // the application is polling by itself, and a timer pass on its core
    // would only preempt it (possibly while it holds a queue's spin lock).
    const std::atomic<uint64_t>* app_polls = nullptr;
  };

  // `on_start` runs first on the new thread (the engine records the
  // thread's core there).
  ProgressThread(QueueTree& tree, std::atomic<int>& sleepers, Config config,
                 std::function<void()> on_start);
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

  int core() const { return config_.core; }
  Mode mode() const { return config_.mode; }
  bool sleeping() const {
    return sleep_word_.load(std::memory_order_acquire) == kAsleep;
  }
  // Times the thread went to sleep, and passes that ran at least one task.
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  // Times the thread slept on wake-up sources (a subset of sleeps()).
  uint64_t fd_sleeps() const {
    return fd_sleeps_.load(std::memory_order_relaxed);
  }
  // Timer ticks skipped because the application polled meanwhile.
  uint64_t skipped_ticks() const {
    return skipped_ticks_.load(std::memory_order_relaxed);
  }
  uint64_t busy_passes() const {
    return busy_passes_.load(std::memory_order_relaxed);
  }
  // Linux thread id (for diagnostics and /proc), 0 before the thread runs.
  int tid() const { return tid_.load(std::memory_order_acquire); }
  // Whether binding to the core succeeded (false on synthetic topologies).
  bool bound() const { return bound_.load(std::memory_order_acquire); }

 private:
  static constexpr uint32_t kAwake = 0;
  static constexpr uint32_t kAsleep = 1;
  static constexpr uint32_t kAsleepOnFds = 2;
  // A safety net, not a synchronisation: every wake-up has a sender.
  static constexpr int kMaxFdSleepMs = 100;

  void Main();
  void ProgressLoop();
  void TimerLoop();
  // The sleep handshake; returns after a wake-up (or at once if work or a
  // stop request showed up during the handshake).
  void SleepUntilWoken();
  // Sleeps in poll() on the wake-up sources and wake_fd_ if every source
  // arms; returns false (without sleeping) otherwise.
  bool SleepOnSources();

  QueueTree& tree_;
  std::atomic<int>& sleepers_;
  const Config config_;
  std::function<void()> on_start_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> bound_{false};
  std::atomic<int> tid_{0};
  alignas(64) std::atomic<uint32_t> sleep_word_{kAwake};
  std::atomic<uint32_t> timer_word_{0};  // futex for interruptible periods
  std::atomic<uint64_t> sleeps_{0};
  std::atomic<uint64_t> busy_passes_{0};
  std::atomic<uint64_t> skipped_ticks_{0};
  std::atomic<uint64_t> fd_sleeps_{0};
  WakeupRegistry* registry_ = nullptr;
  int wake_fd_ = -1;  // eventfd, written by Wake() while kAsleepOnFds
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_PROGRESS_THREAD_H_
