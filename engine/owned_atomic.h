// OwnedAtomic: a std::atomic that knows which node of the queue tree owns it,
// and the write audit that checks the engine's sharing shape.
//
// PIOMan's tree of queues exists so that a task costs little and no core
// waits on another: a task submitted, run and completed on core i should
// write only state owned by the nodes on core i's path (its leaf, its
// caches, its NUMA node, package and the root's queue only when the task is
// queued there) and the task itself. One engine-wide counter written on every
// task (the `queued_` counter that QueueTree once kept) serialises every
// core's tasks on one cache line and made the same-core path 3.5x slower
// (docs/task_latency.md).
//
// Every atomic of the engine's shared state is an OwnedAtomic with an owner:
// a tree node (>= 0), or kOwnerEngine for engine-wide state that must never
// be written on a task's path (shutdown flags). In builds without NDEBUG
// (the tests' fastbuild, ASan and TSan builds) each write reports
// (actor core, owner) to the thread's active WriteAudit, if any; the engine
// hands its audit to its own threads. engine/audit_test.cc runs tasks on
// synthetic 16- and 64-core machines and fails on any write whose owner is
// not on the actor's path; engine/audit_owners_test.py fails on any
// std::atomic declared in engine/ or queues/ that is neither an OwnedAtomic
// nor listed with its owner in engine/audit_owners.txt. So the next global
// counter on the task path is caught by a test. In NDEBUG builds (-c opt)
// an OwnedAtomic is a std::atomic plus an int.
//
// Thread-safety: as std::atomic. A WriteAudit may be fed by many threads.
#ifndef RONDO_ENGINE_OWNED_ATOMIC_H_
#define RONDO_ENGINE_OWNED_ATOMIC_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace rondo::engine {

// Owners that are not tree nodes.
inline constexpr int kOwnerEngine = -1;  // engine-wide: never on a task path
inline constexpr int kOwnerUnset = -3;   // a bug: every atomic gets an owner

#ifdef NDEBUG
inline constexpr bool kWriteAuditCompiled = false;
#else
inline constexpr bool kWriteAuditCompiled = true;
#endif

// Collects the writes made while it is active on a thread.
class WriteAudit {
 public:
  struct Write {
    int actor_core;  // the core the writing thread acts for (-1: unknown)
    int owner;       // tree node, kOwnerEngine or kOwnerUnset
    const char* what;
  };

  void Record(int actor_core, int owner, const char* what) {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.push_back({actor_core, owner, what});
  }
  std::vector<Write> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(writes_);
  }

  // The calling thread's active audit and the core it acts for. Set by a
  // test on its own threads, and by the engine on the threads it starts.
  static WriteAudit*& Current() noexcept {
    static thread_local WriteAudit* audit = nullptr;
    return audit;
  }
  static int& ActorCore() noexcept {
    static thread_local int core = -1;
    return core;
  }

 private:
  std::mutex mu_;
  std::vector<Write> writes_;
};

// Reports one write to `owner` (a tree node, or a kOwner* value) by the
// calling thread; nothing in NDEBUG builds or without an active audit.
inline void AuditWrite(int owner, const char* what) noexcept {
  if constexpr (kWriteAuditCompiled) {
    if (WriteAudit* a = WriteAudit::Current(); a != nullptr) [[unlikely]]
      a->Record(WriteAudit::ActorCore(), owner, what);
  }
}

template <typename T>
class OwnedAtomic {
 public:
  OwnedAtomic() noexcept = default;
  explicit OwnedAtomic(T value, int owner = kOwnerUnset,
                       const char* name = "") noexcept
      : value_(value), owner_(owner), name_(name) {}
  OwnedAtomic(const OwnedAtomic&) = delete;
  OwnedAtomic& operator=(const OwnedAtomic&) = delete;

  // Sets the owner before the atomic is shared (construction time).
  void set_owner(int owner, const char* name) noexcept {
    owner_ = owner;
    name_ = name;
  }
  int owner() const noexcept { return owner_; }

  T load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return value_.load(order);
  }
  void store(T v, std::memory_order order = std::memory_order_seq_cst) noexcept {
    AuditWrite(owner_, name_);
    value_.store(v, order);
  }
  T exchange(T v, std::memory_order order = std::memory_order_seq_cst) noexcept {
    AuditWrite(owner_, name_);
    return value_.exchange(v, order);
  }
  T fetch_add(T v, std::memory_order order = std::memory_order_seq_cst) noexcept {
    AuditWrite(owner_, name_);
    return value_.fetch_add(v, order);
  }
  T fetch_sub(T v, std::memory_order order = std::memory_order_seq_cst) noexcept {
    AuditWrite(owner_, name_);
    return value_.fetch_sub(v, order);
  }
  bool compare_exchange_strong(T& expected, T desired,
                               std::memory_order order =
                                   std::memory_order_seq_cst) noexcept {
    AuditWrite(owner_, name_);
    return value_.compare_exchange_strong(expected, desired, order);
  }
  // The underlying word, for futex calls and read-only helpers.
  std::atomic<T>& word() noexcept { return value_; }
  const std::atomic<T>& word() const noexcept { return value_; }

 private:
  std::atomic<T> value_{};
  int owner_ = kOwnerUnset;
  const char* name_ = "";
};

// One OwnedAtomic alone on its cache line (per-core and per-node counters
// kept in arrays).
template <typename T>
struct alignas(64) PaddedOwnedAtomic {
  OwnedAtomic<T> v;
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_OWNED_ATOMIC_H_
