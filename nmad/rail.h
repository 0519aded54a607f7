// Rail: one driver of the core, its lock, the driver operations and the
// gates other threads left for its holder, its packet buffers and counters.
// Internal to //nmad (core.cc is the only user; rail_test tests it alone).
//
// Holding a rail (Rail::mu, a spin lock) is what makes a thread the one
// that may call its driver (the Driver contract: callers serialize all
// calls). A thread holds at most one rail at a time (t_held_rail). Locks
// are taken rail < session < gate (core.cc), and nobody blocks on a rail
// while holding a session or gate lock: Run() calls at once when this
// thread holds the rail (a driver callback), else try-locks it, else leaves
// the call in the rail's list for the next holder, who runs the list (and
// flushes the targets kicked meanwhile) in Drain() before letting go. The
// rail's polling task holds it on every pass, so nothing waits long.
#ifndef RONDO_NMAD_RAIL_H_
#define RONDO_NMAD_RAIL_H_

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "drivers/driver.h"
#include "engine/engine.h"
#include "queues/spin_lock.h"

namespace rondo::nmad {
class Request;
namespace internal {

struct Gate;    // nmad/send_queue.h
struct SendOp;  // nmad/send_queue.h
struct Rail;

// Something a rail's holder flushes (a gate with packets to send): kicked
// at most once until flushed (`dirty`).
struct FlushTarget {
  std::atomic<bool> dirty{false};
};

// Who flushes a rail's targets (the core: its packet scheduler).
class RailClient {
 public:
  // Rail held by this thread; target.dirty was just cleared.
  virtual void Flush(Rail& rail, FlushTarget& target) noexcept = 0;

 protected:
  ~RailClient() = default;
};

// A packet in a driver: headers and small payloads in `header`, the iovec
// handed to the driver, and what completes with the packet. Pooled per
// rail (Rail::GetBuf/PutBuf, under the rail lock).
struct PacketBuf {
  drivers::Completion c;  // c.fn: Rail::packet_done
  Rail* rail = nullptr;
  Gate* gate = nullptr;
  std::vector<SendOp*> ops;       // eager, AM, RTR: freed with the packet
  Request* req = nullptr;         // a short packet's send (TrySendShort)
  std::vector<uint64_t> rts_ids;  // rendezvous announced by this packet
  // Rendezvous announced by this packet whose parts start once it is
  // posted (kRts with data_posted): not in rts_ids nor rdv_waiting.
  std::vector<SendOp*> data_with_rts;
  std::vector<iovec> iov;
  std::vector<uint8_t> header;
};

struct Rail;
// The rail this thread holds, or null. Initial-exec TLS: read on every
// poll, and in the shared library the default model is a call to
// __tls_get_addr per access (8 bytes of the static TLS block instead, which
// a dlopen()ed librondo.so also gets from glibc's reserve).
inline constinit thread_local Rail* t_held_rail
    __attribute__((tls_model("initial-exec"))) = nullptr;

// Adds `n` to a counter that only the holder of its rail writes (a plain
// load and store, no locked instruction).
inline void Bump(std::atomic<uint64_t>& c, uint64_t n = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct Rail final : engine::WakeupSource {
  Rail() = default;
  Rail(const Rail&) = delete;
  Rail& operator=(const Rail&) = delete;
  ~Rail() override;

  int fd() const noexcept override { return driver->WakeupFd(); }
  // Arming touches the driver: only when nobody holds the rail and nothing
  // is left for its holder.
  bool Arm() noexcept override;

  // ---- set up before use ----
  int index = 0;
  std::unique_ptr<drivers::Driver> driver;
  RailClient* client = nullptr;
  engine::Engine* engine = nullptr;  // null: nobody to notify (tests)
  engine::Task poll_task;            // runs Poll() (the core's PollTask)
  // No wake-up fd (loopback): what is posted to it is delivered by its
  // polling task, which a sleeping thread must be told to run.
  bool notify_after_post = false;
  size_t buf_bytes = 0;  // PacketBuf::header size
  void (*packet_done)(drivers::Completion*, engine::Status, size_t) noexcept =
      nullptr;

  // ---- holding ----
  bool held() const noexcept { return t_held_rail == this; }
  // Takes the rail if this thread holds none and nobody holds it.
  bool TryHold() noexcept {
    if (t_held_rail != nullptr || !mu.try_lock()) return false;
    t_held_rail = this;
    return true;
  }
  // Drains, then lets the rail go.
  void Release() noexcept {
    Drain();
    t_held_rail = nullptr;
    mu.unlock();
  }
  // Runs the driver operations and flushes the targets left for the
  // holder (rail held). A target refused again during its flush (Requeue)
  // waits for the next Drain, after the driver has polled.
  void Drain() noexcept {
    if (has_ops.load(std::memory_order_acquire) ||
        has_dirty.load(std::memory_order_acquire))
      DrainSlow();
  }
  // One driver poll and a Drain, unless another thread holds the rail.
  int Poll() noexcept {
    if (!mu.try_lock()) return 0;
    t_held_rail = this;
    int n = driver->Poll();
    Release();
    return n;
  }
  // Whether a Poll could do anything.
  bool HasWork() const noexcept {
    return driver->HasWork() || has_ops.load(std::memory_order_relaxed) ||
           has_dirty.load(std::memory_order_relaxed);
  }

  // Runs `fn` (a driver call) now if this thread holds the rail or can take
  // it, else leaves it to the holder (in order).
  template <typename Fn>
  void Run(Fn&& fn) {
    if (held()) {
      fn();
      return;
    }
    if (TryHold()) {
      fn();
      Release();
      return;
    }
    {
      std::lock_guard<std::mutex> g(ops_mu);
      ops.emplace_back(std::forward<Fn>(fn));
      has_ops.store(true, std::memory_order_release);
    }
    Notify();  // a progress thread may sleep on its fd
  }

  // Puts `t` on the list of targets to flush (once until flushed).
  void MarkDirty(FlushTarget& t) noexcept {
    if (!t.dirty.exchange(true, std::memory_order_acq_rel)) {
      std::lock_guard<std::mutex> g(dirty_mu);
      dirty.push_back(&t);
      has_dirty.store(true, std::memory_order_release);
    }
  }
  // Flushes `t` now if the rail can be had, else by its next holder.
  void Kick(FlushTarget& t) noexcept {
    MarkDirty(t);
    if (held()) return;  // flushed when the holder drains
    if (TryHold()) {
      Release();
      return;
    }
    Notify();
  }
  // Wakes whoever runs the rail's polling task.
  void Notify() noexcept {
    if (engine != nullptr) engine->Notify(poll_task);
  }

  // ---- packet buffers (rail held) ----
  PacketBuf* GetBuf() {
    if (!free_bufs.empty()) {
      PacketBuf* b = free_bufs.back();
      free_bufs.pop_back();
      return b;
    }
    return NewBuf();
  }
  void PutBuf(PacketBuf* b) noexcept { free_bufs.push_back(b); }
  size_t pooled_bufs() const noexcept { return free_bufs.size(); }

  queues::SpinLock mu;
  // Short packets up to this size are offered to the driver from the
  // stack first (TrySendShort; shrinks to what the rail accepts). Rail held.
  size_t immediate_max = 0;
  std::atomic<uint64_t> bytes{0};  // rendezvous bytes sent on this rail
  // Message-path counters, written only by the rail's holder (Bump), read
  // by Core::stats().
  struct Counters {
    std::atomic<uint64_t> packets_sent{0}, packets_received{0},
        chunks_sent{0}, eager_sent{0}, rendezvous_sent{0};
  } counters;

 private:
  void DrainSlow() noexcept;
  PacketBuf* NewBuf();

  std::mutex ops_mu;
  std::vector<std::function<void()>> ops;
  std::atomic<bool> has_ops{false};
  std::mutex dirty_mu;
  std::vector<FlushTarget*> dirty;
  std::atomic<bool> has_dirty{false};
  // What DrainSlow runs, swapped with `ops` and `dirty` under their locks
  // and cleared after (rail held): both pairs keep their capacity, so a
  // warm rail posts and flushes without allocating.
  std::vector<std::function<void()>> ops_run;
  std::vector<FlushTarget*> dirty_run;
  std::vector<PacketBuf*> free_bufs;  // rail held
};

}  // namespace internal
}  // namespace rondo::nmad

#endif  // RONDO_NMAD_RAIL_H_
