// MadMPI one-sided communication (MPI-4.1 ch. 12) over nmad/rma.h.
//
// A window is an nmad RmaWindow on a session of its own, named after a
// duplicate of the window's communicator (made by MPI_Win_create: every
// member makes it in the same order, so every member opens the same
// session). Every operation is packed on the origin with the origin
// datatype, travels to the target as active messages with the target
// datatype's flattened blocks, and is applied there by the target's engine
// (its polling task, which a progress thread, the quiet progress thread or
// the timer runs while the target computes): passive-target progress needs
// no MPI call at the target. Reads come back packed and are unpacked with
// the origin (result) datatype when the operation completes.
//
// Synchronisation: fence = complete my operations, then a barrier of the
// window's communicator; PSCW = post and complete signals counted per
// source at the receiver (RmaWindow::Signal); locks = the target's lock
// manager (RmaWindow::Lock). Completion is remote completion (the target
// answers once it applied the operation), so flush_local waits as long as
// flush.
//
// On one node (every rank of the window's communicator shares it) the
// windows of MPI_Win_allocate and MPI_Win_allocate_shared take the
// shared-memory path instead, as Open MPI's osc/sm does: the window lives in
// one shared segment that every rank maps; puts and gets are memcpy into
// and out of the target's part (derived types packed and unpacked with the
// datatype engine), accumulates, get-accumulates, fetch-and-op and
// compare-and-swap run under the target's accumulate lock (a word in the
// segment), so they stay element-wise atomic; every operation is complete
// when its call returns. Locks are a reader-writer word per target in the
// segment, PSCW's post and complete are counters there, flush is a memory
// fence and fence a memory fence plus a barrier. Waits (a lock held by
// another rank, a post not yet made) progress this rank's engine between
// tries. RONDO_RMA_SHM=0 keeps every window on active messages.
//
// Elsewhere (windows of MPI_Win_create, and of MPI_Win_allocate(_shared)
// off the shared-memory path), when rail 0 has a one-sided transport (UCX:
// Core::remote_memory), the window maps its memory at creation and every
// member unpacks the keys of the ranks UCX reaches (RmaWindow::MapDirect /
// SetDirectKey, exchanged with an allgather). Puts and gets to those ranks
// whose target is one contiguous run go as UCX puts and gets. When UCX
// reaches every rank from every rank (the "ucx" path; with several ranks
// per node the node's ranks are served by the shared-memory driver, so
// only the other nodes' ranks are reached: "ucx+am"), accumulates,
// get-accumulates, fetch-and-op and compare-and-swap on 4- and 8-byte C
// integer types with MPI_SUM, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE,
// MPI_NO_OP (and compare-and-swap) go as one UCX atomic per element (on
// "ucx+am" all accumulates stay active messages: the node's ranks could
// not take UCX to a location the others update by UCX). Everything else (derived target types of
// puts and gets, other ops and types, locks, PSCW signals) stays on active
// messages. Element-wise atomicity across the two accumulate paths: the
// route depends only on (op, basic type), never on the count, the layout
// or the origin, and MPI_NO_OP and compare-and-swap on those integer types
// always take UCX; accumulate_ops (same_op_no_op by default, or same_op)
// lets the implementation assume that concurrent accumulates to one
// location use one op (and MPI_NO_OP) on one predefined type, so they all
// take one path. (A non-standard mix, e.g. MPI_PROD and MPI_SUM on one
// int at once, is not atomic.) A misaligned element (its address not a
// multiple of its size) goes as an active message, also per location.
// With accumulate_ordering other than none, each UCX atomic is fenced
// after the operations before it. Completion: UCX puts and non-fetching
// atomics are flushed (ucp_ep_flush_nbx) by every flush, unlock, fence and
// complete, after the window's pending operations. Dynamic windows stay on
// active messages (attach would need a key exchange per region).
// RONDO_RMA_UCX=0 keeps every window off this path.
//
// Errors go to the window's error handler: each Win carries a Comm record
// (`err`) whose handle is the window's and whose handler is the window's,
// so the argument checks of args.h raise on the window.
#include <fcntl.h>
#include <mpi.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/coll_shm.h"
#include "nmad/mpi/internal/comm.h"
#include "nmad/mpi/internal/requests.h"
#include "nmad/mpi/internal/state.h"
#include "nmad/rma.h"

namespace rondo::nmad::mpi {

using rondo::nmad::AtomicOp;

// One operation issued and not yet completed by a flush, unlock, fence or
// complete (or by its request's wait).
struct RmaPending {
  RmaOp op;
  int target = -1;  // rank in the window's communicator
  std::vector<uint8_t> packed;  // the origin data (sent from here)
  std::vector<uint8_t> result;  // reads land here, packed
  void* result_addr = nullptr;
  int result_count = 0;
  TypePtr result_type;
  // 0 open, 1 being finished (by one thread), 2 finished: several threads
  // may complete one operation (flushes, a request's wait).
  std::atomic<int> finish_state{0};
  // Given up on: its target failed before the transport completed it (it
  // then lives in State::rma_abandoned).
  std::atomic<bool> abandoned{false};
  int error = MPI_SUCCESS;
  const char* fn = "";
};

struct Win {
  MPI_Win handle = MPI_WIN_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // the window's own duplicate
  CommPtr c;
  Comm err;  // the window as an error target (handle, handler)
  std::unique_ptr<RmaWindow> rma;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  std::vector<MPI_Aint> sizes;    // every rank's (not dynamic)
  std::vector<int> disp_units;    // every rank's
  std::vector<void*> shared_bases;  // shared windows on one node
  // The shared-memory path (see the banner): the segment's control words
  // (ShmCtlBytes), null on the active-message path.
  bool shm = false;
  uint8_t* ctl = nullptr;
  // The UCX path (see the banner): puts and gets to the ranks UCX reaches
  // (RmaWindow::direct), atomics too when it reaches every rank
  // (ucx_atomics), fenced unless accumulate_ordering is "none".
  bool ucx = false;
  bool ucx_atomics = false;
  bool ucx_ordered = true;
  // Memory the window owns: Win_allocate's, or a shared segment.
  void* owned = nullptr;
  void* mapped = nullptr;
  size_t mapped_bytes = 0;
  std::string name;
  Info info;
  bool no_locks = false;
  // Origin-side epochs, written under mu; fence_open, lock_all and locked
  // are atomics so that the shared-memory fast path reads them without it.
  std::mutex mu;
  std::atomic<bool> fence_open{false};
  std::atomic<bool> lock_all{false};
  bool lock_all_nocheck = false;
  // per rank: 0, MPI_LOCK_SHARED, _EXCLUSIVE
  std::unique_ptr<std::atomic<int>[]> locked;
  std::vector<bool> lock_nocheck;
  int locks = 0;
  bool started = false;          // PSCW access epoch
  std::vector<int> start_ranks;  // window ranks
  bool posted = false;           // PSCW exposure epoch
  std::vector<int> post_ranks;
  std::vector<uint64_t> posts_used, completes_used;  // per job rank
  std::vector<std::shared_ptr<RmaPending>> pending;
  // Completed operations no request refers to, reused by the next ones
  // with their buffers (steady-state operations allocate nothing).
  std::vector<std::shared_ptr<RmaPending>> spare;
};
using WinPtr = std::shared_ptr<Win>;

bool WinExists(State& st, MPI_Win h) {
  return h != MPI_WIN_NULL && st.wins.Get(h) != nullptr;
}

size_t ForgetWindows(State& st) {
  const auto left = st.wins.Values();
  for (auto& slot : st.fast_wins) slot.store(nullptr, std::memory_order_release);
  for (const WinPtr& w : left) {
    w->rma.reset();  // answers in flight finish first
    if (w->mapped) munmap(w->mapped, w->mapped_bytes);
    std::free(w->owned);
    w->mapped = w->owned = nullptr;
    st.wins.Remove(w->handle);
  }
  return left.size();
}

namespace {

constexpr int kPostSignal = 0;
constexpr int kCompleteSignal = 1;

// Applies a predefined op at the target (nmad calls it under the window's
// accumulate lock, in the engine task that serves the message).
void ApplyAtTarget(void*, uint32_t op, uint32_t basic, const void* in,
                   void* inout, size_t bytes) noexcept {
  const MPI_Op o = static_cast<MPI_Op>(op);
  if (o == MPI_NO_OP) return;
  if (o == MPI_REPLACE) {
    std::memmove(inout, in, bytes);
    return;
  }
  const Datatype* t = Predefined(static_cast<MPI_Datatype>(basic));
  if (t == nullptr || t->size() == 0) return;
  ApplyPredefinedPacked(o, static_cast<MPI_Datatype>(basic), in, inout,
                        static_cast<int64_t>(bytes) / t->size());
}

WinPtr CheckWin(State& st, MPI_Win h, const char* fn, int* err) {
  WinPtr w = h == MPI_WIN_NULL ? nullptr : st.wins.Get(h);
  if (!w)
    *err = RaiseError(nullptr, MPI_ERR_WIN, fn,
                      "win = " +
                          (h == MPI_WIN_NULL ? std::string("MPI_WIN_NULL")
                                             : std::to_string(h)) +
                          " is not a live window (from MPI_Win_create, "
                          "_allocate, _allocate_shared or _create_dynamic, "
                          "not freed)");
  return w;
}

#define RONDO_MPI_ENTER_WIN(fn, handle)                       \
  RONDO_MPI_ENTER(fn);                                        \
  int err = MPI_SUCCESS;                                      \
  WinPtr w = CheckWin(*st, handle, kFn, &err);                \
  if (!w) return err

int WinError(Win& w, int cls, const char* fn, const std::string& message) {
  return RaiseError(&w.err, cls, fn, message);
}

// Waits (progressing) until `done` holds.
template <typename F>
void WaitFor(State& st, F done) {
  IdleBackoff backoff(st.core());
  while (!done()) backoff.Pass(ProgressPass(st, true));
}

// Starts `start(job rank, op)` for each window rank of `ranks` (all ranks
// when null), then waits until every op is done; returns whether all
// succeeded (locks, unlocks and PSCW signals to several ranks).
template <typename F>
bool ForRanks(State& st, Win& w, const std::vector<int>* ranks, F start) {
  std::vector<std::unique_ptr<RmaOp>> ops;
  const int n = ranks ? static_cast<int>(ranks->size()) : w.c->size;
  for (int i = 0; i < n; ++i) {
    ops.push_back(std::make_unique<RmaOp>());
    start(w.c->world[ranks ? (*ranks)[i] : i], *ops.back());
  }
  WaitFor(st, [&] {
    for (auto& op : ops)
      if (!op->done()) return false;
    return true;
  });
  for (auto& op : ops)
    if (op->error() != rondo::nmad::RmaError::kOk) return false;
  return true;
}

// ---- the shared-memory path: control words in the segment ----
//
// The segment starts with the fence's barrier line (arrivals at byte 0, the
// generation at byte 8), then one cache line per window rank t (its lock
// word at byte 0, its accumulate lock at byte 8), then the PSCW counters,
// uint64_t [kind][receiver][sender]; the ranks' parts follow.
constexpr uint64_t kShmExclusive = uint64_t{1} << 62;
static_assert(std::atomic_ref<uint64_t>::required_alignment <= 8 &&
              std::atomic<uint64_t>::is_always_lock_free &&
              std::atomic<uint32_t>::is_always_lock_free);

size_t ShmCtlBytes(int n) {
  return (64 * (static_cast<size_t>(n) + 1) +
          2 * static_cast<size_t>(n) * n * 8 + 63) / 64 * 64;
}
std::atomic_ref<uint64_t> ShmLockWord(Win& w, int t) {
  return std::atomic_ref<uint64_t>(
      *reinterpret_cast<uint64_t*>(w.ctl + 64 * (static_cast<size_t>(t) + 1)));
}
std::atomic_ref<uint32_t> ShmAccWord(Win& w, int t) {
  return std::atomic_ref<uint32_t>(
      *reinterpret_cast<uint32_t*>(w.ctl + 64 * (static_cast<size_t>(t) + 1) +
                                   8));
}
// PSCW counter `kind` (kPostSignal, kCompleteSignal) of receiver <- sender.
std::atomic_ref<uint64_t> ShmSignal(Win& w, int kind, int receiver,
                                    int sender) {
  const size_t n = static_cast<size_t>(w.c->size);
  const size_t at = 64 * (n + 1) + ((kind * n + receiver) * n + sender) * 8;
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(w.ctl + at));
}

// Waits (progressing this rank's engine) until `ready` holds, looking for
// failed ranks of the window now and then (a dead rank never releases a
// lock nor arrives at a barrier): -1 once ready, else the failed rank.
template <typename F>
int ShmWait(State& st, Win& w, F ready) {
  int failed = -1;
  uint32_t tries = 0;
  WaitFor(st, [&] {
    if (ready()) return true;
    if (++tries % 4096 != 0) return false;
    for (int r = 0; r < w.c->size && failed < 0; ++r)
      if (!st.core().FailureText(w.c->world[r]).empty()) failed = r;
    return failed >= 0;
  });
  return failed;
}

// The fence's barrier of every window rank, in the segment: the last to
// arrive resets the count and moves the generation the others wait on.
// -1, or the failed rank that ended the wait.
int ShmBarrier(State& st, Win& w) {
  std::atomic_ref<uint64_t> arrived(*reinterpret_cast<uint64_t*>(w.ctl));
  std::atomic_ref<uint64_t> generation(
      *reinterpret_cast<uint64_t*>(w.ctl + 8));
  const uint64_t gen = generation.load(std::memory_order_acquire);
  if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<uint64_t>(w.c->size)) {
    arrived.store(0, std::memory_order_relaxed);
    generation.fetch_add(1, std::memory_order_seq_cst);
    return -1;
  }
  auto moved = [&] {
    return generation.load(std::memory_order_acquire) != gen;
  };
  return moved() ? -1 : ShmWait(st, w, moved);
}

// Takes the lock of window rank `t` (readers count in the low bits, a
// writer sets kShmExclusive alone), progressing this rank's engine while
// another holds it. A waiter looks for failed ranks of the window now and
// then (a dead holder never releases): returns the first failed one without
// the lock, else -1 with it.
int ShmLock(State& st, Win& w, int t, bool exclusive) {
  std::atomic_ref<uint64_t> word = ShmLockWord(w, t);
  auto take = [&] {
    uint64_t v = word.load(std::memory_order_relaxed);
    if (exclusive)
      return v == 0 && word.compare_exchange_strong(
                           v, kShmExclusive, std::memory_order_acquire,
                           std::memory_order_relaxed);
    return (v & kShmExclusive) == 0 &&
           word.compare_exchange_strong(v, v + 1, std::memory_order_acquire,
                                        std::memory_order_relaxed);
  };
  return take() ? -1 : ShmWait(st, w, take);
}

// The error of a lock that met the failed window rank `failed`.
int ShmLockFailed(Win& w, int failed, const char* fn) {
  std::string text = Mpi()->core().FailureText(w.c->world[failed]);
  return WinError(w, MPIX_ERR_PROC_FAILED, fn,
                  "rank " + std::to_string(failed) +
                      " of the window failed while this rank waited for a "
                      "lock (" + text + ")");
}

void ShmUnlock(Win& w, int t, bool exclusive) {
  ShmLockWord(w, t).fetch_sub(exclusive ? kShmExclusive : 1,
                              std::memory_order_release);
}

// Holds the accumulate lock of window rank `t`: a spin lock whose holder
// only copies and reduces (it never waits for anything), so waiters spin,
// then yield the core.
class ShmAccGuard {
 public:
  ShmAccGuard(Win& w, int t) : word_(ShmAccWord(w, t)) {
    int spins = 0;
    while (word_.exchange(1, std::memory_order_acquire) != 0)
      while (word_.load(std::memory_order_relaxed) != 0)
        if (++spins > 64) sched_yield();
  }
  ~ShmAccGuard() { word_.store(0, std::memory_order_release); }
  ShmAccGuard(const ShmAccGuard&) = delete;
  ShmAccGuard& operator=(const ShmAccGuard&) = delete;

 private:
  std::atomic_ref<uint32_t> word_;
};

// PSCW signal `kind` to the window ranks `ranks`.
void PscwSignal(State& st, Win& w, const std::vector<int>& ranks, int kind) {
  if (w.shm) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int r : ranks)
      ShmSignal(w, kind, r, w.c->rank).fetch_add(1, std::memory_order_seq_cst);
    return;
  }
  (void)ForRanks(st, w, &ranks, [&](int job, RmaOp& op) {
    (void)w.rma->Signal(job, kind, op);
  });
}

// Signals `kind` received from window rank `r` so far.
uint64_t PscwSignals(Win& w, int kind, int r) {
  if (w.shm)
    return ShmSignal(w, kind, w.c->rank, r).load(std::memory_order_acquire);
  return w.rma->Signals(kind, w.c->world[r]);
}

// Another kind of epoch may follow a fence once the fence has completed
// its operations (as MPICH allows); the fence epoch then ends. w.mu held.
bool LeaveFence(Win& w, const char* fn, int* err) {
  if (w.fence_open && !w.pending.empty()) {
    *err = WinError(w, MPI_ERR_RMA_SYNC, fn,
                    "the fence epoch has operations not completed by a "
                    "fence");
    return false;
  }
  w.fence_open = false;
  return true;
}

// Passive-target locks, unless the window's info said no_locks.
bool LocksAllowed(Win& w, const char* fn, int* err) {
  if (!w.no_locks) return true;
  *err = WinError(w, MPI_ERR_RMA_SYNC, fn,
                  "the window was created with info no_locks = true (no "
                  "passive-target locks on it)");
  return false;
}

int FinishPendingOnce(Win& w, RmaPending& p);

// Unpacks a read and converts the target's answer: once, by the first
// thread that gets here; the others wait for it (it only unpacks and
// converts) and return its code.
int FinishPending(Win& w, RmaPending& p) {
  int open = 0;
  if (!p.finish_state.compare_exchange_strong(open, 1,
                                              std::memory_order_acq_rel)) {
    while (p.finish_state.load(std::memory_order_acquire) != 2)
      sched_yield();
    return p.error;
  }
  const int e = FinishPendingOnce(w, p);
  p.finish_state.store(2, std::memory_order_release);
  return e;
}

int FinishPendingOnce(Win& w, RmaPending& p) {
  RmaError error = p.abandoned.load(std::memory_order_acquire)
                       ? RmaError::kPeerFailed
                       : p.op.error();
  // A transport error from a target since known dead is its failure.
  if (error == RmaError::kTransport &&
      Mpi()->core().PeerFailed(w.c->world[p.target]))
    error = RmaError::kPeerFailed;
  switch (error) {
    case RmaError::kOk:
      if (p.result_type && p.result_count > 0 && !p.result.empty())
        p.result_type->Unpack(p.result.data(),
                              static_cast<int64_t>(p.result.size()),
                              p.result_addr, p.result_count);
      break;
    case RmaError::kRange:
      p.error = WinError(w, MPI_ERR_RMA_RANGE, p.fn,
                         "the target (rank " + std::to_string(p.target) +
                             ") refused an access outside its exposed "
                             "memory (dynamic window: not attached there)");
      break;
    case RmaError::kNoWindow:
      p.error = WinError(w, MPI_ERR_WIN, p.fn,
                         "the target (rank " + std::to_string(p.target) +
                             ") has freed the window");
      break;
    case RmaError::kTransport:
      p.error = WinError(w, MPI_ERR_OTHER, p.fn,
                         "the one-sided transport (UCX) failed an operation "
                         "to rank " + std::to_string(p.target));
      break;
    case RmaError::kPeerFailed: {
      std::string text = Mpi()->core().FailureText(w.c->world[p.target]);
      p.error = WinError(w, MPIX_ERR_PROC_FAILED, p.fn,
                         "the target rank " + std::to_string(p.target) +
                             " failed" + (text.empty() ? "" : " (" + text + ")"));
      break;
    }
  }
  return p.error;
}

// Whether window rank `target` (-1: any rank of the window) is known to
// have failed.
bool WinRankFailed(State& st, Win& w, int target) {
  if (target >= 0) return st.core().PeerFailed(w.c->world[target]);
  for (int r = 0; r < w.c->size; ++r)
    if (st.core().PeerFailed(w.c->world[r])) return true;
  return false;
}

// Waits (progressing) until `done` holds or window rank `target` (-1: any)
// is known to have failed; returns done(). Active messages to a failed
// rank complete with kPeerFailed; UCX operations may never complete.
template <typename F>
bool WaitUnlessFailed(State& st, Win& w, int target, F done) {
  uint32_t tries = 0;
  WaitFor(st, [&] {
    return done() || (++tries % 256 == 0 && WinRankFailed(st, w, target));
  });
  return done();
}

// `p` will not complete (its target failed): kept alive for the transport,
// finished as failed.
void Abandon(State& st, const std::shared_ptr<RmaPending>& p) {
  if (p->abandoned.exchange(true, std::memory_order_acq_rel)) return;
  std::lock_guard<std::mutex> lock(st.rma_abandoned_mu);
  st.rma_abandoned.push_back(p);
}

// Completes every pending operation to `target` (-1: all): waits for the
// targets' answers, unpacks reads, forgets them. Returns the first error.
int Complete(State& st, Win& w, int target) {
  if (w.shm) {
    // Every operation completed in its call: a fence orders them before
    // what follows (the lock release, the barrier, the PSCW counter).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return MPI_SUCCESS;
  }
  // The calling thread's list, its capacity kept (swapped out while in use:
  // an error handler may complete another window's operations).
  //
  // The operations are copied, not taken, from the pending list: another
  // thread's flush that finds them there waits for them too (a flush
  // completes every operation issued before it, whoever completes it);
  // they leave the list once finished.
  thread_local std::vector<std::shared_ptr<RmaPending>> spare_list;
  std::vector<std::shared_ptr<RmaPending>> mine;
  mine.swap(spare_list);
  {
    std::lock_guard<std::mutex> lock(w.mu);
    for (const auto& p : w.pending)
      if (target < 0 || p->target == target) mine.push_back(p);
  }
  int first = MPI_SUCCESS;
  for (auto& p : mine) {
    if (!WaitUnlessFailed(st, w, p->target, [&] { return p->op.done(); }))
      Abandon(st, p);
    const int e = FinishPending(w, *p);
    if (first == MPI_SUCCESS) first = e;
  }
  if (w.ucx) {
    // Remote completion of UCX puts and non-fetching atomics (the calling
    // thread's op: its flush marks keep their capacity).
    thread_local std::unique_ptr<RmaOp> flush_op;
    if (!flush_op) flush_op = std::make_unique<RmaOp>();
    RmaOp& flush = *flush_op;
    (void)w.rma->DirectFlush(target < 0 ? -1 : w.c->world[target], flush);
    if (!WaitUnlessFailed(st, w, target, [&] { return flush.done(); })) {
      // A flushed target failed: the transport keeps the op.
      {
        std::lock_guard<std::mutex> lock(st.rma_abandoned_mu);
        st.rma_abandoned.push_back(std::shared_ptr<RmaOp>(std::move(flush_op)));
      }
      const int dead = [&] {
        for (int r = 0; r < w.c->size; ++r)
          if (st.core().PeerFailed(w.c->world[r])) return r;
        return target;
      }();
      if (first == MPI_SUCCESS)
        first = WinError(
            w, MPIX_ERR_PROC_FAILED, "MPI_Win_flush",
            "rank " + std::to_string(dead) +
                " of the window failed before its UCX operations were "
                "flushed (" + st.core().FailureText(w.c->world[dead]) + ")");
    } else {
      w.rma->DirectFlushed(flush);
    }
    if (flush_op && flush.error() != RmaError::kOk && first == MPI_SUCCESS)
      first = WinError(w, MPI_ERR_OTHER, "MPI_Win_flush",
                       "the one-sided transport (UCX) could not flush the "
                       "operations to " +
                           (target < 0 ? std::string("the window's ranks")
                                       : "rank " + std::to_string(target)));
  }
  {
    std::lock_guard<std::mutex> lock(w.mu);
    std::erase_if(w.pending, [](const std::shared_ptr<RmaPending>& p) {
      return p->finish_state.load(std::memory_order_acquire) == 2;
    });
    for (auto& p : mine)
      if (p.use_count() == 1) {  // no request nor other flush refers to it
        p->result_type.reset();
        w.spare.push_back(std::move(p));
      }
  }
  mine.clear();
  mine.swap(spare_list);
  return first;
}

bool CheckAssert(Win& w, int assert, int allowed, const char* fn, int* err) {
  if ((assert & ~allowed) == 0) return true;
  *err = WinError(w, MPI_ERR_ASSERT, fn,
                  "assert = " + std::to_string(assert) +
                      " has bits this call does not know (allowed: 0 or an "
                      "OR of the MPI_MODE_* flags of this call, mask " +
                      std::to_string(allowed) + ")");
  return false;
}

bool CheckWinRank(Win& w, int rank, const char* fn, int* err,
                  bool proc_null_ok = true) {
  if ((rank >= 0 && rank < w.c->size) ||
      (proc_null_ok && rank == MPI_PROC_NULL))
    return true;
  *err = WinError(w, MPI_ERR_RANK, fn,
                  "rank = " + std::to_string(rank) + " (the window has " +
                      std::to_string(w.c->size) + " ranks: 0.." +
                      std::to_string(w.c->size - 1) + ", MPI_PROC_NULL)");
  return false;
}

// The window ranks of a group (which must be in the window's group).
bool GroupRanks(State& st, Win& w, MPI_Group group, const char* fn,
                std::vector<int>* out, int* err) {
  auto g = group == MPI_GROUP_NULL ? nullptr : st.groups.Get(group);
  if (!g) {
    *err = WinError(w, MPI_ERR_GROUP, fn,
                    "group = " + std::to_string(group) +
                        " is not a valid group");
    return false;
  }
  out->clear();
  for (int job : g->world) {
    const int r = job >= 0 && job < static_cast<int>(w.c->from_world.size())
                      ? w.c->from_world[job]
                      : -1;
    if (r < 0) {
      *err = WinError(w, MPI_ERR_GROUP, fn,
                      "group holds job rank " + std::to_string(job) +
                          ", which is not in the window's group");
      return false;
    }
    out->push_back(r);
  }
  return true;
}

// Reads the window's info hints (MPI-4.1 §12.2.1).
int ApplyInfo(Win& w, const Info* in, const char* fn) {
  auto flag = [&](const char* key, bool* out) -> int {
    const std::string* v = in ? in->Find(key) : nullptr;
    if (v == nullptr) return MPI_SUCCESS;
    if (*v == "true") {
      *out = true;
    } else if (*v == "false") {
      *out = false;
    } else {
      return WinError(w, MPI_ERR_INFO_VALUE, fn,
                      std::string("info key ") + key + " = '" + *v +
                          "' (allowed: true, false)");
    }
    return MPI_SUCCESS;
  };
  bool same_size = false, same_disp = false;
  if (int e = flag("no_locks", &w.no_locks); e != MPI_SUCCESS) return e;
  if (int e = flag("same_size", &same_size); e != MPI_SUCCESS) return e;
  if (int e = flag("same_disp_unit", &same_disp); e != MPI_SUCCESS) return e;
  if (in != nullptr)
    for (const auto& [k, v] : in->entries) w.info.Set(k, v);
  // What get_info reports: the hints in force, defaults included.
  w.info.Set("no_locks", w.no_locks ? "true" : "false");
  if (!w.info.Find("accumulate_ordering"))
    w.info.Set("accumulate_ordering", "rar,raw,war,waw");
  if (!w.info.Find("accumulate_ops")) w.info.Set("accumulate_ops", "same_op_no_op");
  w.info.Set("same_size", same_size ? "true" : "false");
  w.info.Set("same_disp_unit", same_disp ? "true" : "false");
  return MPI_SUCCESS;
}

// All ranks of `comm` run on this node.
bool OneNode(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                           &node) != MPI_SUCCESS)
    return false;
  int n = 0, all = 0;
  PMPI_Comm_size(node, &n);
  PMPI_Comm_size(comm, &all);
  PMPI_Comm_free(&node);
  return n == all;
}

// Maps a segment of `total` bytes that every rank of the window's
// communicator (all on this node) shares, zero-filled: shm_open by the
// window's rank 0, mapped by all, unlinked once all have. Collective;
// nullptr on every rank when any rank failed.
void* MapSegment(Win& w, size_t total) {
  // (ftruncate zero-fills; nobody touches the window before the
  // constructor's closing barrier.)
  return MapCommSegment(w.comm, w.c->rank, total, "rondo-win");
}

// The UCX path (see the banner): every rank maps its memory and, when all
// could (RONDO_RMA_UCX on every rank), unpacks the key of every rank UCX
// reaches. Collective; leaves w.ucx false when any rank cannot, sets
// w.ucx_atomics when UCX reaches every rank from every rank, and fails only
// on a communication error.
int SetUpUcx(State& st, Win& w) {
  bool all = false;
  auto packed = st.rma_ucx
                    ? w.rma->MapDirect(w.c->world, &all, st.rma_ucx_emulated)
                    : Result<std::vector<uint8_t>>(Status::kUnsupported);
  int mine = packed.ok() ? static_cast<int>(packed.value().size()) : -1;
  const int n = w.c->size;
  std::vector<int> lens(n);
  if (int e = PMPI_Allgather(&mine, 1, MPI_INT, lens.data(), 1, MPI_INT,
                             w.comm);
      e != MPI_SUCCESS)
    return e;
  std::vector<int> displs(n + 1, 0);
  for (int r = 0; r < n; ++r) {
    if (lens[r] < 0) return MPI_SUCCESS;  // somebody cannot: active messages
    displs[r + 1] = displs[r] + lens[r];
  }
  std::vector<uint8_t> keys(static_cast<size_t>(displs[n]));
  if (int e = PMPI_Allgatherv(packed.value().data(), mine, MPI_BYTE,
                              keys.data(), lens.data(), displs.data(),
                              MPI_BYTE, w.comm);
      e != MPI_SUCCESS)
    return e;
  // ok[0]: every key unpacked or not reachable; ok[1]: every rank reached;
  // ok[2]: no other rank reached (only itself: nothing for UCX to do, e.g.
  // every peer behind an emulating transport under RONDO_RMA_UCX=auto).
  int ok[3] = {1, all ? 1 : 0, 1};
  for (int r = 0; r < n && ok[0]; ++r) {
    const Status s = w.rma->SetDirectKey(
        w.c->world[r],
        std::span<const uint8_t>(keys.data() + displs[r], lens[r]));
    ok[0] = s == Status::kOk || s == Status::kUnsupported;
    if (s == Status::kOk && r != w.c->rank) ok[2] = 0;
  }
  int all_ok[3] = {0, 0, 0};
  if (int e = PMPI_Allreduce(ok, all_ok, 3, MPI_INT, MPI_LAND, w.comm);
      e != MPI_SUCCESS)
    return e;
  w.ucx = all_ok[0] != 0 && all_ok[2] == 0;
  w.ucx_atomics = w.ucx && all_ok[1] != 0;
  const std::string* ordering = w.info.Find("accumulate_ordering");
  w.ucx_ordered = ordering == nullptr || *ordering != "none";
  return MPI_SUCCESS;
}

// The collective part of every constructor: duplicates the communicator,
// opens the window's session, registers the handlers, exchanges sizes.
// `base`/`size` is this rank's memory (not for dynamic windows); for
// shared windows `shared` allocates it once the sizes are known.
int CreateWin(State& st, MPI_Comm comm, int flavor, void* base, MPI_Aint size,
              int disp_unit, MPI_Info info, MPI_Win* win, const char* fn,
              void* baseptr) {
  int err = MPI_SUCCESS;
  CommPtr parent = CheckComm(st, comm, fn, &err);
  if (!parent) return err;
  if (win == nullptr)
    return RaiseError(parent.get(), MPI_ERR_ARG, fn, "win is NULL");
  *win = MPI_WIN_NULL;
  if (size < 0)
    return RaiseError(parent.get(), MPI_ERR_SIZE, fn,
                      "size = " + std::to_string(size) + " (must be >= 0)");
  if (disp_unit <= 0)
    return RaiseError(parent.get(), MPI_ERR_DISP, fn,
                      "disp_unit = " + std::to_string(disp_unit) +
                          " (must be > 0)");
  if (flavor == MPI_WIN_FLAVOR_CREATE && base == nullptr && size > 0)
    return RaiseError(parent.get(), MPI_ERR_BASE, fn,
                      "base is NULL with size = " + std::to_string(size));
  std::shared_ptr<Info> in;
  if (info != MPI_INFO_NULL && !(in = CheckInfo(st, info, parent.get(), fn, &err)))
    return err;
  if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) &&
      baseptr == nullptr)
    return RaiseError(parent.get(), MPI_ERR_ARG, fn, "baseptr is NULL");

  // Every RMA message travels eager (one packet, served in the handler).
  if (const size_t eager = st.core().options().eager_limit; eager < 1024)
    return RaiseError(parent.get(), MPI_ERR_OTHER, fn,
                      "RONDO_EAGER_LIMIT = " + std::to_string(eager) +
                          " bytes: one-sided communication needs at least "
                          "1024 (its messages travel eager)");
  auto w = std::make_shared<Win>();
  w->flavor = flavor;
  w->disp_unit = disp_unit;
  w->size = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
  if ((err = PMPI_Comm_dup(comm, &w->comm)) != MPI_SUCCESS) return err;
  w->c = st.comms.Get(w->comm);
  const int n = w->c->size;
  w->locked = std::make_unique<std::atomic<int>[]>(n);
  w->lock_nocheck.assign(n, false);
  w->posts_used.assign(st.world_size(), 0);
  w->completes_used.assign(st.world_size(), 0);
  w->err.errhandler.store(MPI_ERRORS_ARE_FATAL);
  {
    std::lock_guard<std::mutex> lock(st.detached_mu);
    if ((err = ApplyInfo(*w, in.get(), fn)) != MPI_SUCCESS) {
      PMPI_Comm_free(&w->comm);
      return err;
    }
  }
  // Every rank's size and disp_unit, for the origin's range checks and
  // MPI_Win_shared_query.
  struct Shape {
    int64_t size;
    int64_t disp_unit;
  } mine{static_cast<int64_t>(w->size), disp_unit};
  std::vector<Shape> all(n);
  if ((err = PMPI_Allgather(&mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T,
                            w->comm)) != MPI_SUCCESS) {
    PMPI_Comm_free(&w->comm);
    return err;
  }
  for (const Shape& s : all) {
    w->sizes.push_back(static_cast<MPI_Aint>(s.size));
    w->disp_units.push_back(static_cast<int>(s.disp_unit));
  }

  // Memory. On one node, shared windows and (on the shared-memory path)
  // allocated ones live in one segment; the others in private memory.
  const bool shareable =
      flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
  const bool one_node = shareable && OneNode(w->comm);
  if (one_node) {
    // Every rank takes the same path (RONDO_RMA_SHM may differ per rank).
    int want = st.rma_shm ? 1 : 0, all_want = 0;
    PMPI_Allreduce(&want, &all_want, 1, MPI_INT, MPI_LAND, w->comm);
    w->shm = all_want != 0;
  }
  if (one_node && (flavor == MPI_WIN_FLAVOR_SHARED || w->shm)) {
    // Made by the window's rank 0 (the lowest): the control words (shared-
    // memory path), then each rank's part at a 64-byte aligned offset, in
    // rank order.
    std::vector<size_t> offsets(n + 1, w->shm ? ShmCtlBytes(n) : 0);
    for (int r = 0; r < n; ++r)
      offsets[r + 1] = offsets[r] + (static_cast<size_t>(all[r].size) + 63) / 64 * 64;
    const size_t total = std::max<size_t>(offsets[n], 64);
    void* seg = MapSegment(*w, total);
    if (seg == nullptr) {
      PMPI_Comm_free(&w->comm);
      return RaiseError(parent.get(), MPI_ERR_RMA_SHARED, fn,
                        "cannot map a shared segment of " +
                            std::to_string(total) + " bytes (shm_open in "
                            "/dev/shm)");
    }
    w->mapped = seg;
    w->mapped_bytes = total;
    if (w->shm) w->ctl = static_cast<uint8_t*>(seg);
    for (int r = 0; r < n; ++r)
      w->shared_bases.push_back(static_cast<uint8_t*>(seg) + offsets[r]);
    base = w->shared_bases[w->c->rank];
  } else if (shareable) {
    w->owned = std::aligned_alloc(64, ((size > 0 ? size : 1) + 63) / 64 * 64);
    if (w->owned == nullptr) {
      PMPI_Comm_free(&w->comm);
      return RaiseError(parent.get(), MPI_ERR_NO_MEM, fn,
                        "cannot allocate " + std::to_string(size) + " bytes");
    }
    base = w->owned;
    // Ranks on several nodes: shared_query gives the other ranks' sizes and
    // disp_units with a NULL base.
    if (flavor == MPI_WIN_FLAVOR_SHARED) {
      w->shared_bases.assign(n, nullptr);
      w->shared_bases[w->c->rank] = base;
    }
  }
  w->base = flavor == MPI_WIN_FLAVOR_DYNAMIC ? MPI_BOTTOM : base;
  if (baseptr != nullptr) *static_cast<void**>(baseptr) = base;

  std::string why;
  auto session = st.core().OpenSession("mpi:" + w->c->id + "#win", {}, &why);
  if (!session.ok()) {
    PMPI_Comm_free(&w->comm);
    return RaiseError(parent.get(), MPI_ERR_INTERN, fn,
                      "cannot open the window's session: " + why);
  }
  RmaWindow::Options options;
  options.accumulate = &ApplyAtTarget;
  options.dynamic = flavor == MPI_WIN_FLAVOR_DYNAMIC;
  w->rma = std::make_unique<RmaWindow>(*session.value(), options);
  if (flavor != MPI_WIN_FLAVOR_DYNAMIC)
    w->rma->Expose(base, static_cast<size_t>(size));
  if (!w->shm && flavor != MPI_WIN_FLAVOR_DYNAMIC)
    if ((err = SetUpUcx(st, *w)) != MPI_SUCCESS) {
      w->rma.reset();
      PMPI_Comm_free(&w->comm);
      return err;
    }
  {
    std::lock_guard<std::mutex> lock(st.detached_mu);
    w->info.Set("rondo_rma_path", w->shm           ? "shm"
                                  : w->ucx_atomics ? "ucx"
                                  : w->ucx         ? "ucx+am"
                                                   : "am");
  }
  Win* raw = w.get();
  const MPI_Win h = st.wins.Add(std::move(w));
  raw->handle = h;
  raw->err.handle = h;
  if (raw->shm && h > 0)
    st.fast_wins[h % State::kFastWins].store(raw, std::memory_order_release);
  // Nobody sends to a window before every member has registered its
  // handlers (messages for an unregistered handler are dropped).
  if ((err = PMPI_Barrier(raw->comm)) != MPI_SUCCESS) return err;
  *win = h;
  return MPI_SUCCESS;
}

// ---- operations ----

// Compare-and-swap takes C integer, logical, byte and multi-language types.
bool CasType(MPI_Datatype b) {
  return !(b == MPI_FLOAT || b == MPI_DOUBLE || b == MPI_LONG_DOUBLE ||
           b == MPI_C_FLOAT_COMPLEX || b == MPI_C_DOUBLE_COMPLEX ||
           b == MPI_C_LONG_DOUBLE_COMPLEX || b > MPI_C_LONG_DOUBLE_COMPLEX);
}

enum class OpKind { kPut, kGet, kAcc, kGetAcc, kCas };

struct OpArgs {
  OpKind kind = OpKind::kPut;
  const void* origin = nullptr;
  int origin_count = 0;
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;
  void* result = nullptr;
  int result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;
  const void* compare = nullptr;
  int target = 0;
  MPI_Aint disp = 0;
  int target_count = 0;
  MPI_Datatype target_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  MPI_Request* request = nullptr;
  bool wants_request = false;  // MPI_Rput ...: request must not be NULL
  const char* fn = "";
};

// May rank `t` be accessed now? Else the MPI_ERR_RMA_SYNC message.
bool InAccessEpoch(Win& w, int t, bool request, std::string* why) {
  if (request) {
    if (w.lock_all || w.locked[t] != 0) return true;
    *why = "request-based operations need a passive-target epoch on rank " +
           std::to_string(t) +
           " (MPI_Win_lock or MPI_Win_lock_all first; fence and PSCW epochs "
           "do not allow them)";
    return false;
  }
  if (w.lock_all || w.locked[t] != 0 || w.fence_open) return true;
  if (w.started &&
      std::find(w.start_ranks.begin(), w.start_ranks.end(), t) !=
          w.start_ranks.end())
    return true;
  *why = "no access epoch to rank " + std::to_string(t) +
         " is open (open one with MPI_Win_fence, MPI_Win_start with a group "
         "that holds it, MPI_Win_lock or MPI_Win_lock_all)";
  return false;
}

// A request already complete (MPI_PROC_NULL targets, shared-memory
// operations).
int DoneRequest(State& st, Win& w, const char* fn, MPI_Request* request) {
  auto r = std::make_shared<MpiRequest>();
  r->kind = MpiRequest::Kind::kDone;
  r->fn = fn;
  *request = st.requests.Add(std::move(r));
  if (*request == MPI_REQUEST_NULL)
    return WinError(w, MPI_ERR_INTERN, fn, "out of request handles");
  return MPI_SUCCESS;
}

// Runs a checked operation on the shared-memory path: load/store in the
// target's part of the segment, complete on return. `blocks` are the target
// runs (byte offsets in its part), `tbytes` their total; `ot`/`rt` the
// origin and result types, `basic` the accumulate's element type.
void ShmIssue(Win& w, const OpArgs& a, const TypePtr& ot, const TypePtr& rt,
              std::span<const RmaBlock> blocks, int64_t tbytes,
              MPI_Datatype basic, bool no_origin) {
  if (tbytes <= 0) return;
  uint8_t* const base = static_cast<uint8_t*>(w.shared_bases[a.target]);
  const size_t bytes = static_cast<size_t>(tbytes);
  // The calling thread's buffers, their capacity kept (steady-state
  // operations allocate nothing).
  thread_local std::vector<uint8_t> packed_in, work, fetched;
  // A contiguous target is one run, written or read in place.
  uint8_t* const run = blocks.size() == 1 ? base + blocks[0].offset : nullptr;
  auto gather = [&](uint8_t* to) {
    for (const RmaBlock& b : blocks) {
      std::memcpy(to, base + b.offset, static_cast<size_t>(b.bytes));
      to += b.bytes;
    }
  };
  auto scatter = [&](const uint8_t* from) {
    for (const RmaBlock& b : blocks) {
      std::memcpy(base + b.offset, from, static_cast<size_t>(b.bytes));
      from += b.bytes;
    }
  };
  // The origin's data, packed unless its type is contiguous.
  auto origin_data = [&]() -> const uint8_t* {
    if (ot->is_contiguous())
      return static_cast<const uint8_t*>(a.origin) + ot->true_lb();
    packed_in.resize(bytes);
    ot->Pack(a.origin, a.origin_count, packed_in.data());
    return packed_in.data();
  };
  // Packed bytes into a user buffer of `count` x `t`.
  auto deliver = [&](const TypePtr& t, void* buf, int count,
                     const uint8_t* from) {
    if (t->is_contiguous()) {
      std::memcpy(static_cast<uint8_t*>(buf) + t->true_lb(), from, bytes);
    } else {
      t->Unpack(from, tbytes, buf, count);
    }
  };
  switch (a.kind) {
    case OpKind::kPut: {
      const uint8_t* from = origin_data();
      if (run) {
        std::memcpy(run, from, bytes);
      } else {
        scatter(from);
      }
      break;
    }
    case OpKind::kGet: {
      void* into = const_cast<void*>(a.origin);
      if (run) {
        deliver(ot, into, a.origin_count, run);
      } else {
        work.resize(bytes);
        gather(work.data());
        deliver(ot, into, a.origin_count, work.data());
      }
      break;
    }
    case OpKind::kAcc:
    case OpKind::kGetAcc: {
      const uint8_t* in = no_origin ? nullptr : origin_data();
      const bool fetch = a.kind == OpKind::kGetAcc;
      if (fetch) fetched.resize(bytes);
      if (!run) work.resize(bytes);
      {
        ShmAccGuard guard(w, a.target);
        uint8_t* inout = run;
        if (!run) {
          gather(work.data());
          inout = work.data();
        }
        if (fetch) std::memcpy(fetched.data(), inout, bytes);
        ApplyAtTarget(nullptr, static_cast<uint32_t>(a.op),
                      static_cast<uint32_t>(basic), in, inout, bytes);
        if (!run) scatter(work.data());
      }
      if (fetch) deliver(rt, a.result, a.result_count, fetched.data());
      break;
    }
    case OpKind::kCas: {
      // One predefined element at blocks[0] (checked by the caller).
      uint8_t* at = base + blocks[0].offset;
      ShmAccGuard guard(w, a.target);
      std::memcpy(a.result, at, bytes);
      if (std::memcmp(at, a.compare, bytes) == 0)
        std::memcpy(at, a.origin, bytes);
      break;
    }
  }
}

// The UCX atomic that performs `op` (kind kAcc, kGetAcc or kCas) on
// elements of `basic`, when there is one: 4- and 8-byte C integers with
// MPI_SUM, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE, MPI_NO_OP, and
// compare-and-swap. The choice depends on (op, basic) alone (see the
// banner: one path per location).
bool UcxAtomic(OpKind kind, MPI_Op op, MPI_Datatype basic, AtomicOp* aop,
               size_t* element) {
  switch (basic) {
    case MPI_INT: case MPI_UNSIGNED: case MPI_LONG: case MPI_UNSIGNED_LONG:
    case MPI_LONG_LONG: case MPI_UNSIGNED_LONG_LONG: case MPI_INT32_T:
    case MPI_INT64_T: case MPI_UINT32_T: case MPI_UINT64_T: case MPI_AINT:
    case MPI_OFFSET: case MPI_COUNT:
      break;
    default:
      return false;
  }
  const Datatype* t = Predefined(basic);
  if (t == nullptr || (t->size() != 4 && t->size() != 8)) return false;
  *element = static_cast<size_t>(t->size());
  if (kind == OpKind::kCas) {
    *aop = AtomicOp::kCompareSwap;
    return true;
  }
  if (op == MPI_SUM) {
    *aop = AtomicOp::kAdd;
  } else if (op == MPI_BAND) {
    *aop = AtomicOp::kAnd;
  } else if (op == MPI_BOR) {
    *aop = AtomicOp::kOr;
  } else if (op == MPI_BXOR) {
    *aop = AtomicOp::kXor;
  } else if (op == MPI_REPLACE) {
    *aop = AtomicOp::kSwap;
  } else if (op == MPI_NO_OP) {
    *aop = AtomicOp::kOr;  // with no values: a fetch (or with zero)
  } else {
    return false;
  }
  return true;
}

// Issues a checked operation on the UCX path when it has one (true), else
// leaves it to active messages (false, nothing issued): a put or get whose
// target is one run, an atomic UcxAtomic knows, aligned at the target.
bool IssueUcx(Win& w, const OpArgs& a, RmaPending& p, int job,
              std::span<const RmaBlock> blocks, MPI_Datatype basic) {
  Status s = Status::kOk;
  switch (a.kind) {
    case OpKind::kPut:
      if (blocks.size() != 1 || !w.rma->direct(job)) return false;
      s = w.rma->DirectPut(job, blocks[0].offset, p.packed.data(),
                           p.packed.size(), p.op);
      break;
    case OpKind::kGet:
      if (blocks.size() != 1 || !w.rma->direct(job)) return false;
      s = w.rma->DirectGet(job, blocks[0].offset, p.result.data(),
                           p.result.size(), p.op);
      break;
    case OpKind::kAcc:
    case OpKind::kGetAcc:
    case OpKind::kCas: {
      // Atomics only when every rank reaches every target through UCX:
      // otherwise some origins would update a location by active messages
      // while others use UCX (see the banner).
      if (!w.ucx_atomics) return false;
      AtomicOp aop = AtomicOp::kAdd;
      size_t element = 0;
      const MPI_Datatype b =
          a.kind == OpKind::kCas ? a.target_type : basic;
      if (!UcxAtomic(a.kind, a.op, b, &aop, &element)) return false;
      const bool fetch_only = a.kind == OpKind::kGetAcc && a.op == MPI_NO_OP;
      s = w.rma->DirectAtomic(
          job, blocks, aop, element, fetch_only ? nullptr : p.packed.data(),
          a.kind == OpKind::kCas ? a.compare : nullptr,
          a.kind == OpKind::kAcc ? nullptr : p.result.data(), w.ucx_ordered,
          p.op);
      break;
    }
  }
  // Refused before anything was issued (a misaligned element): active
  // messages. Any other failure completes the op with its error.
  return s != Status::kUnsupported && s != Status::kInvalidArgument;
}

int Issue(State& st, Win& w, const OpArgs& a) {
  const char* fn = a.fn;
  int err = MPI_SUCCESS;
  Comm* ec = &w.err;
  if (a.request) *a.request = MPI_REQUEST_NULL;
  const bool reads = a.kind == OpKind::kGet || a.kind == OpKind::kGetAcc ||
                     a.kind == OpKind::kCas;
  const bool writes_origin = a.kind != OpKind::kGet;
  // Counts and types.
  if (!CheckCount(a.origin_count, ec, fn, &err, "origin_count")) return err;
  if (!CheckCount(a.target_count, ec, fn, &err, "target_count")) return err;
  if (!CheckCount(a.result_count, ec, fn, &err, "result_count")) return err;
  // MPI_NO_OP get-accumulates ignore the origin buffer and type.
  const bool no_origin = a.kind == OpKind::kGetAcc && a.op == MPI_NO_OP;
  TypePtr ot, tt, rt;
  if (!no_origin &&
      !(ot = CheckType(st, a.origin_type, ec, fn, &err, "origin_datatype")))
    return err;
  if (!(tt = CheckType(st, a.target_type, ec, fn, &err, "target_datatype")))
    return err;
  if (a.kind == OpKind::kGetAcc &&
      !(rt = CheckType(st, a.result_type, ec, fn, &err, "result_datatype")))
    return err;
  if (a.kind == OpKind::kGet) rt = ot;
  if (a.kind == OpKind::kCas) rt = ot;
  if (!CheckWinRank(w, a.target, fn, &err)) return err;
  if (a.target == MPI_PROC_NULL)
    return a.request ? DoneRequest(st, w, fn, a.request) : MPI_SUCCESS;
  const int64_t tbytes = a.target_count * tt->size();
  if (!no_origin && ot && a.kind != OpKind::kGet && writes_origin &&
      a.origin_count * ot->size() != tbytes)
    return WinError(w, MPI_ERR_TYPE, fn,
                    "origin_count x origin_datatype = " +
                        std::to_string(a.origin_count) + " x " +
                        TypeLabel(a.origin_type) + " (" +
                        std::to_string(a.origin_count * ot->size()) +
                        " bytes) does not match target_count x "
                        "target_datatype = " +
                        std::to_string(a.target_count) + " x " +
                        TypeLabel(a.target_type) + " (" +
                        std::to_string(tbytes) + " bytes)");
  if (a.kind == OpKind::kGet && a.origin_count * ot->size() != tbytes)
    return WinError(w, MPI_ERR_TYPE, fn,
                    "origin_count x origin_datatype (" +
                        std::to_string(a.origin_count * ot->size()) +
                        " bytes) does not match target_count x "
                        "target_datatype (" + std::to_string(tbytes) +
                        " bytes)");
  if (a.kind == OpKind::kGetAcc && a.result_count * rt->size() != tbytes)
    return WinError(w, MPI_ERR_TYPE, fn,
                    "result_count x result_datatype (" +
                        std::to_string(a.result_count * rt->size()) +
                        " bytes) does not match target_count x "
                        "target_datatype (" + std::to_string(tbytes) +
                        " bytes)");
  size_t element = 1;
  MPI_Datatype basic = MPI_BYTE;
  if (a.kind == OpKind::kAcc || a.kind == OpKind::kGetAcc) {
    if (!IsPredefinedOp(a.op))
      return WinError(w, MPI_ERR_OP, fn,
                      std::string("op = ") + OpName(a.op) +
                          " (one-sided accumulates take predefined ops "
                          "only: MPI_SUM ... MPI_REPLACE, MPI_NO_OP)");
    const bool any_type = a.op == MPI_REPLACE || a.op == MPI_NO_OP;
    basic = tt->uniform_basic();
    if (!any_type && basic == MPI_DATATYPE_NULL)
      return WinError(w, MPI_ERR_TYPE, fn,
                      "target_datatype = " + TypeLabel(a.target_type) +
                          " mixes basic types (accumulates need one "
                          "predefined type throughout, except MPI_REPLACE "
                          "and MPI_NO_OP)");
    for (const TypePtr& t : {ot, rt}) {
      if (!t || t->size() == 0 || any_type) continue;
      if (t->uniform_basic() != basic)
        return WinError(w, MPI_ERR_TYPE, fn,
                        "origin/result datatype of basic type " +
                            TypeLabel(t->uniform_basic()) +
                            " does not match target_datatype's " +
                            TypeLabel(basic) +
                            " (accumulates need the same basic type)");
    }
    if (!any_type) {
      std::string why;
      if (CheckOp(a.op, *tt, &why) != MPI_SUCCESS)
        return WinError(w, MPI_ERR_OP, fn, why);
      if (basic == MPI_SHORT_INT)
        return WinError(w, MPI_ERR_TYPE, fn,
                        "MPI_SHORT_INT accumulates are not supported by "
                        "Rondo (its C struct has a hole; use MPI_2INT)");
      element = static_cast<size_t>(Predefined(basic)->size());
    } else if (basic != MPI_DATATYPE_NULL && Predefined(basic)) {
      element = static_cast<size_t>(Predefined(basic)->size());
    }
  }
  // Target range (known for static windows).
  const int64_t unit = w.disp_units[a.target];
  const int64_t start =
      w.flavor == MPI_WIN_FLAVOR_DYNAMIC ? a.disp : a.disp * unit;
  // The target blocks: the calling thread's list, its capacity kept.
  thread_local std::vector<RmaBlock> blocks;
  blocks.clear();
  if (tbytes > 0) {
    const int64_t lo = start + tt->true_lb();
    const int64_t hi = lo + tt->SpanBytes(a.target_count);
    if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC &&
        (lo < 0 || hi > static_cast<int64_t>(w.sizes[a.target])))
      return WinError(w, MPI_ERR_RMA_RANGE, fn,
                      "target_disp = " + std::to_string(a.disp) +
                          " with target_count = " +
                          std::to_string(a.target_count) + " x " +
                          TypeLabel(a.target_type) + " reaches bytes [" +
                          std::to_string(lo) + ", " + std::to_string(hi) +
                          ") of rank " + std::to_string(a.target) +
                          "'s window, which has " +
                          std::to_string(w.sizes[a.target]) +
                          " bytes (disp_unit " + std::to_string(unit) + ")");
    // A contiguous target is one run (not one block per item: a 1 MiB put
    // of MPI_CHAR took ~30 ms in that loop).
    if (tt->is_contiguous()) blocks.push_back({lo, tbytes});
    for (int64_t i = 0; i < a.target_count && !tt->is_contiguous(); ++i)
      for (const TypeBlock& b : tt->blocks()) {
        const int64_t off = start + i * tt->extent() + b.offset;
        if (!blocks.empty() && blocks.back().offset + blocks.back().bytes == off &&
            (a.kind == OpKind::kPut || a.kind == OpKind::kGet ||
             element == 1 || blocks.back().bytes % element == 0)) {
          blocks.back().bytes += b.bytes;
        } else {
          blocks.push_back({off, b.bytes});
        }
      }
  }
  if (a.kind == OpKind::kCas) {
    if (tt->size() == 0 || !tt->is_predefined())
      return WinError(w, MPI_ERR_TYPE, fn,
                      "datatype = " + TypeLabel(a.target_type) +
                          " (compare-and-swap takes one predefined integer, "
                          "logical, byte or multi-language type)");
    const MPI_Datatype b = tt->handle();
    if (!CasType(b))
      return WinError(w, MPI_ERR_TYPE, fn,
                      "datatype = " + TypeLabel(b) +
                          " (compare-and-swap takes C integer, logical, "
                          "byte or multi-language types, not floating "
                          "point, complex or pair types)");
  }
  // Epoch.
  std::shared_ptr<RmaPending> p;
  {
    std::lock_guard<std::mutex> lock(w.mu);
    std::string why;
    if (!InAccessEpoch(w, a.target, a.request != nullptr, &why))
      return WinError(w, MPI_ERR_RMA_SYNC, fn, why);
    if (!w.shm && !w.spare.empty()) {
      p = std::move(w.spare.back());
      w.spare.pop_back();
    }
  }
  if (w.shm) {
    ShmIssue(w, a, ot, rt, blocks, tbytes, basic, no_origin);
    return a.request ? DoneRequest(st, w, fn, a.request) : MPI_SUCCESS;
  }
  if (p) {
    p->packed.clear();
    p->result.clear();
    p->result_addr = nullptr;
    p->result_count = 0;
    p->finish_state.store(0, std::memory_order_relaxed);
    p->error = MPI_SUCCESS;
  } else {
    p = std::make_shared<RmaPending>();
  }
  p->target = a.target;
  p->fn = fn;
  const int job = w.c->world[a.target];
  // On the UCX path a put or get between a contiguous origin buffer and one
  // target run moves in place: MPI leaves the origin buffer to the
  // operation until it completes (no pack, no unpack).
  bool in_place = false;
  if (w.ucx && tbytes > 0 && blocks.size() == 1 &&
      (a.kind == OpKind::kPut || a.kind == OpKind::kGet) && ot &&
      ot->is_contiguous() && w.rma->direct(job)) {
    auto* user =
        static_cast<uint8_t*>(const_cast<void*>(a.origin)) + ot->true_lb();
    const Status s =
        a.kind == OpKind::kPut
            ? w.rma->DirectPut(job, blocks[0].offset, user,
                               static_cast<size_t>(tbytes), p->op)
            : w.rma->DirectGet(job, blocks[0].offset, user,
                               static_cast<size_t>(tbytes), p->op);
    in_place = s != Status::kInvalidArgument;
  }
  // Pack the origin's data.
  if (!in_place && !no_origin && a.kind != OpKind::kGet && ot && tbytes > 0) {
    p->packed.resize(static_cast<size_t>(tbytes));
    ot->Pack(a.origin, a.origin_count, p->packed.data());
  }
  if (!in_place && reads && tbytes > 0) {
    p->result.resize(static_cast<size_t>(tbytes));
    p->result_type = rt;
    p->result_addr = a.kind == OpKind::kGet ? const_cast<void*>(a.origin)
                                            : a.result;
    p->result_count = a.kind == OpKind::kGet      ? a.origin_count
                      : a.kind == OpKind::kGetAcc ? a.result_count
                                                  : 1;
  }
  Status s = Status::kOk;
  if (in_place) {
    // issued above
  } else if (w.ucx && tbytes > 0 && IssueUcx(w, a, *p, job, blocks, basic)) {
    // issued on the UCX path
  } else if (tbytes == 0) {
    // Nothing moves; the target still answers, which keeps ordering simple.
    s = w.rma->Put(job, {}, nullptr, p->op);
  } else {
    switch (a.kind) {
      case OpKind::kPut:
        s = w.rma->Put(job, blocks, p->packed.data(), p->op);
        break;
      case OpKind::kGet:
        s = w.rma->Get(job, blocks, p->result.data(), p->op);
        break;
      case OpKind::kAcc:
      case OpKind::kGetAcc:
        s = w.rma->Accumulate(
            job, blocks, no_origin ? nullptr : p->packed.data(),
            static_cast<uint32_t>(a.op), static_cast<uint32_t>(basic), element,
            a.kind == OpKind::kGetAcc ? p->result.data() : nullptr, p->op);
        break;
      case OpKind::kCas:
        // (compare is copied into the message)
        s = w.rma->CompareAndSwap(job, blocks[0], a.compare, p->packed.data(),
                                  p->result.data(), p->op);
        break;
    }
  }
  (void)s;  // a failed send completes the op with kPeerFailed
  {
    std::lock_guard<std::mutex> lock(w.mu);
    w.pending.push_back(p);
  }
  if (a.request) {
    auto r = std::make_shared<MpiRequest>();
    r->kind = MpiRequest::Kind::kRma;
    r->fn = fn;
    r->comm = w.c;
    WinPtr keep = st.wins.Get(w.handle);
    r->rma_done = [p, &st, job] {
      if (p->op.done()) return true;
      // A UCX operation to a failed target may never complete.
      if (!st.core().PeerFailed(job)) return false;
      Abandon(st, p);
      return true;
    };
    r->rma_finish = [p, keep] { return FinishPending(*keep, *p); };
    *a.request = st.requests.Add(std::move(r));
    if (*a.request == MPI_REQUEST_NULL)
      return WinError(w, MPI_ERR_INTERN, fn, "out of request handles");
  }
  return MPI_SUCCESS;
}

// The arguments every data operation has; `request` for the R forms.
OpArgs Args(OpKind kind, const char* fn, const void* origin, int origin_count,
            MPI_Datatype origin_type, int target, MPI_Aint disp,
            int target_count, MPI_Datatype target_type,
            MPI_Op op = MPI_OP_NULL) {
  OpArgs a;
  a.kind = kind;
  a.fn = fn;
  a.origin = origin;
  a.origin_count = origin_count;
  a.origin_type = origin_type;
  a.target = target;
  a.disp = disp;
  a.target_count = target_count;
  a.target_type = target_type;
  a.op = op;
  return a;
}

OpArgs WithResult(OpArgs a, void* result, int count, MPI_Datatype type) {
  a.result = result;
  a.result_count = count;
  a.result_type = type;
  return a;
}

// The request-based forms (MPI_Rput ...): `request` must not be NULL.
OpArgs WithRequest(OpArgs a, MPI_Request* request) {
  a.request = request;
  a.wants_request = true;
  return a;
}

bool FastAtomic(MPI_Win h, const OpArgs& a);  // below

int RunOp(MPI_Win win, const OpArgs& a) {
  if (a.kind != OpKind::kPut && a.kind != OpKind::kGet && FastAtomic(win, a))
    return MPI_SUCCESS;
  RONDO_MPI_ENTER_WIN(a.fn, win);
  if (a.wants_request && a.request == nullptr)
    return WinError(*w, MPI_ERR_ARG, kFn, "request is NULL");
  if (a.kind == OpKind::kCas &&
      (a.origin == nullptr || a.compare == nullptr || a.result == nullptr))
    return WinError(*w, MPI_ERR_BUFFER, kFn,
                    "origin_addr, compare_addr and result_addr must not be "
                    "NULL");
  return Issue(*st, *w, a);
}

// ---- the shared-memory fast path ----
//
// MPI_Put and MPI_Get of contiguous predefined types, and the flushes, on a
// window on the shared-memory path inside an open epoch: the window comes
// from State::fast_wins (no table lock, no reference count, no
// thread-local: MadMPI may be a shared library, where those cost a call),
// the epoch from the atomics, and no engine call scope is taken (the
// engine has no part in it). Anything else, every error included, takes
// the full path, which checks and raises as before. (A window freed while
// another thread uses it is erroneous in MPI.)

Win* FastWin(MPI_Win h) {
  State* st = Mpi();
  if (st == nullptr || h <= 0) return nullptr;
  Win* w = st->fast_wins[h % State::kFastWins].load(std::memory_order_acquire);
  return w != nullptr && w->handle == h ? w : nullptr;
}

// An access epoch to window rank `t` is open (fence, lock or lock_all;
// PSCW takes the full path).
bool FastEpoch(const Win& w, int t) {
  return w.lock_all.load(std::memory_order_relaxed) ||
         w.locked[t].load(std::memory_order_relaxed) != 0 ||
         w.fence_open.load(std::memory_order_relaxed);
}

// Where `bytes` bytes at `disp` of window rank `target` are, when they are
// inside its window and an access epoch to it is open; else nullptr.
uint8_t* FastTarget(Win& w, int target, MPI_Aint disp, int64_t bytes) {
  int64_t lo = 0;
  if (__builtin_mul_overflow(int64_t{disp}, int64_t{w.disp_units[target]},
                             &lo) ||
      lo > static_cast<int64_t>(w.sizes[target]) - bytes ||
      !FastEpoch(w, target))
    return nullptr;
  return static_cast<uint8_t*>(w.shared_bases[target]) + lo;
}

// Done here (true) or to be done by the full path (false).
bool FastPutGet(MPI_Win h, bool put, const void* origin, int origin_count,
                MPI_Datatype origin_type, int target, MPI_Aint disp,
                int target_count, MPI_Datatype target_type) {
  Win* w = FastWin(h);
  if (w == nullptr || target < 0 || target >= w->c->size || disp < 0 ||
      origin_count < 0 || target_count < 0)
    return false;
  const Datatype* ot = Predefined(origin_type);
  const Datatype* tt = Predefined(target_type);
  if (ot == nullptr || tt == nullptr || !ot->is_contiguous() ||
      !tt->is_contiguous() || ot->true_lb() != 0 || tt->true_lb() != 0)
    return false;
  const int64_t bytes = int64_t{target_count} * tt->size();
  if (int64_t{origin_count} * ot->size() != bytes) return false;
  uint8_t* at = FastTarget(*w, target, disp, bytes);
  if (at == nullptr) return false;
  if (bytes == 0) return true;
  if (put) {
    std::memcpy(at, origin, static_cast<size_t>(bytes));
  } else {
    std::memcpy(const_cast<void*>(origin), at, static_cast<size_t>(bytes));
  }
  return true;
}

// Accumulate, get-accumulate, fetch-and-op and compare-and-swap of one
// contiguous predefined type (the same on every side; no MPI_NO_OP) under
// the target's accumulate lock, without the full path's look-ups.
bool FastAtomic(MPI_Win h, const OpArgs& a) {
  if (a.request != nullptr || a.origin == nullptr) return false;
  Win* w = FastWin(h);
  if (w == nullptr || a.target < 0 || a.target >= w->c->size || a.disp < 0 ||
      a.target_count <= 0 || a.origin_count != a.target_count ||
      a.origin_type != a.target_type)
    return false;
  if (a.kind != OpKind::kAcc &&
      (a.result == nullptr || a.result_count != a.target_count ||
       a.result_type != a.target_type))
    return false;
  const Datatype* t = Predefined(a.target_type);
  if (t == nullptr || !t->is_contiguous() || t->true_lb() != 0 ||
      t->size() == 0 || a.target_type == MPI_SHORT_INT)
    return false;
  if (a.kind == OpKind::kCas) {
    if (a.compare == nullptr || !CasType(a.target_type)) return false;
  } else if (a.op == MPI_NO_OP || !IsPredefinedOp(a.op)) {
    return false;
  } else if (a.op != MPI_REPLACE) {
    std::string why;
    if (CheckOp(a.op, *t, &why) != MPI_SUCCESS) return false;
  }
  const int64_t bytes = int64_t{a.target_count} * t->size();
  uint8_t* at = FastTarget(*w, a.target, a.disp, bytes);
  if (at == nullptr) return false;
  const size_t n = static_cast<size_t>(bytes);
  ShmAccGuard guard(*w, a.target);
  if (a.kind == OpKind::kCas) {
    std::memcpy(a.result, at, n);
    if (std::memcmp(at, a.compare, n) == 0) std::memcpy(at, a.origin, n);
    return true;
  }
  if (a.kind == OpKind::kGetAcc) std::memcpy(a.result, at, n);
  ApplyAtTarget(nullptr, static_cast<uint32_t>(a.op),
                static_cast<uint32_t>(a.target_type), a.origin, at, n);
  return true;
}

// A flush of window rank `rank` (-1: all) in an open passive-target epoch:
// the operations are complete, a fence orders them.
bool FastFlush(MPI_Win h, int rank) {
  Win* w = FastWin(h);
  if (w == nullptr) return false;
  const bool all = w->lock_all.load(std::memory_order_relaxed);
  const bool ok = rank == -1 ? all
                  : rank >= 0 && rank < w->c->size &&
                        (all || w->locked[rank].load(
                                    std::memory_order_relaxed) != 0);
  if (ok) std::atomic_thread_fence(std::memory_order_seq_cst);
  return ok;
}

}  // namespace
}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation
using rondo::nmad::RmaOp;

extern "C" {

// ---- windows ----

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                    MPI_Comm comm, MPI_Win* win) {
  RONDO_MPI_ENTER("MPI_Win_create");
  return CreateWin(*st, comm, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit,
                   info, win, kFn, nullptr);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                      MPI_Comm comm, void* baseptr, MPI_Win* win) {
  RONDO_MPI_ENTER("MPI_Win_allocate");
  return CreateWin(*st, comm, MPI_WIN_FLAVOR_ALLOCATE, nullptr, size,
                   disp_unit, info, win, kFn, baseptr);
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                             MPI_Comm comm, void* baseptr, MPI_Win* win) {
  RONDO_MPI_ENTER("MPI_Win_allocate_shared");
  return CreateWin(*st, comm, MPI_WIN_FLAVOR_SHARED, nullptr, size, disp_unit,
                   info, win, kFn, baseptr);
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  RONDO_MPI_ENTER("MPI_Win_create_dynamic");
  return CreateWin(*st, comm, MPI_WIN_FLAVOR_DYNAMIC, nullptr, 0, 1, info,
                   win, kFn, nullptr);
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size,
                          int* disp_unit, void* baseptr) {
  RONDO_MPI_ENTER_WIN("MPI_Win_shared_query", win);
  if (w->flavor != MPI_WIN_FLAVOR_SHARED && !w->shm)
    return WinError(*w, MPI_ERR_RMA_FLAVOR, kFn,
                    "the window is not from MPI_Win_allocate_shared (nor "
                    "an MPI_Win_allocate window on one node, on the "
                    "shared-memory path)");
  if (size == nullptr || disp_unit == nullptr || baseptr == nullptr)
    return WinError(*w, MPI_ERR_ARG, kFn,
                    "size, disp_unit and baseptr must not be NULL");
  if (rank == MPI_PROC_NULL) {
    // The first rank with memory (MPI-4.1 §12.2.3).
    rank = 0;
    for (int r = 0; r < w->c->size; ++r)
      if (w->sizes[r] > 0) {
        rank = r;
        break;
      }
  } else if (!CheckWinRank(*w, rank, kFn, &err, false)) {
    return err;
  }
  *size = w->sizes[rank];
  *disp_unit = w->disp_units[rank];
  *static_cast<void**>(baseptr) = w->shared_bases[rank];
  return MPI_SUCCESS;
}

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  RONDO_MPI_ENTER_WIN("MPI_Win_attach", win);
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return WinError(*w, MPI_ERR_RMA_FLAVOR, kFn,
                    "the window is not from MPI_Win_create_dynamic");
  if (size < 0 || (base == nullptr && size > 0))
    return WinError(*w, MPI_ERR_RMA_ATTACH, kFn,
                    "base = " + std::string(base ? "(set)" : "NULL") +
                        ", size = " + std::to_string(size) +
                        " (size >= 0, base not NULL)");
  if (w->rma->Attach(base, static_cast<size_t>(size)) != rondo::nmad::Status::kOk)
    return WinError(*w, MPI_ERR_RMA_ATTACH, kFn,
                    "the region of " + std::to_string(size) +
                        " bytes overlaps a region already attached");
  return MPI_SUCCESS;
}

int PMPI_Win_detach(MPI_Win win, const void* base) {
  RONDO_MPI_ENTER_WIN("MPI_Win_detach", win);
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return WinError(*w, MPI_ERR_RMA_FLAVOR, kFn,
                    "the window is not from MPI_Win_create_dynamic");
  if (w->rma->Detach(const_cast<void*>(base)) != rondo::nmad::Status::kOk)
    return WinError(*w, MPI_ERR_RMA_ATTACH, kFn,
                    "base is not the start of a region attached with "
                    "MPI_Win_attach");
  return MPI_SUCCESS;
}

int PMPI_Win_free(MPI_Win* win) {
  RONDO_MPI_ENTER("MPI_Win_free");
  if (win == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "win is NULL");
  int err = MPI_SUCCESS;
  WinPtr w = CheckWin(*st, *win, kFn, &err);
  if (!w) return err;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    std::string why;
    if (w->locks > 0 || w->lock_all)
      why = "a passive-target epoch is open (MPI_Win_unlock / "
            "MPI_Win_unlock_all first)";
    else if (w->started)
      why = "an access epoch of MPI_Win_start is open (MPI_Win_complete "
            "first)";
    else if (w->posted)
      why = "an exposure epoch of MPI_Win_post is open (MPI_Win_wait first)";
    else if (!w->pending.empty())
      why = std::to_string(w->pending.size()) +
            " operations are pending (close their epoch with MPI_Win_fence, "
            "MPI_Win_complete or MPI_Win_unlock first)";
    if (!why.empty()) return WinError(*w, MPI_ERR_RMA_SYNC, kFn, why);
  }
  // Nobody accesses the memory once every member is here.
  if ((err = PMPI_Barrier(w->comm)) != MPI_SUCCESS) return err;
  {
    Win* mine = w.get();
    st->fast_wins[*win % State::kFastWins].compare_exchange_strong(
        mine, nullptr, std::memory_order_acq_rel);
  }
  w->rma->Close();
  w->rma.reset();
  st->wins.Remove(*win);
  if (w->mapped) munmap(w->mapped, w->mapped_bytes);
  std::free(w->owned);
  PMPI_Comm_free(&w->comm);
  *win = MPI_WIN_NULL;
  return MPI_SUCCESS;
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  RONDO_MPI_ENTER_WIN("MPI_Win_get_group", win);
  if (group == nullptr) return WinError(*w, MPI_ERR_ARG, kFn, "group is NULL");
  return PMPI_Comm_group(w->comm, group);
}

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val,
                      int* flag) {
  RONDO_MPI_ENTER_WIN("MPI_Win_get_attr", win);
  if (attribute_val == nullptr || flag == nullptr)
    return WinError(*w, MPI_ERR_ARG, kFn,
                    "attribute_val and flag must not be NULL");
  void* v = nullptr;
  switch (win_keyval) {
    case MPI_WIN_BASE: v = w->base; break;
    case MPI_WIN_SIZE: v = &w->size; break;
    case MPI_WIN_DISP_UNIT: v = &w->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = &w->flavor; break;
    case MPI_WIN_MODEL: v = &w->model; break;
    default:
      return WinError(*w, MPI_ERR_KEYVAL, kFn,
                      "win_keyval = " + std::to_string(win_keyval) +
                          " (allowed: MPI_WIN_BASE, MPI_WIN_SIZE, "
                          "MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, "
                          "MPI_WIN_MODEL)");
  }
  *static_cast<void**>(attribute_val) = v;
  *flag = 1;
  return MPI_SUCCESS;
}

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  RONDO_MPI_ENTER_WIN("MPI_Win_set_name", win);
  if (win_name == nullptr)
    return WinError(*w, MPI_ERR_ARG, kFn, "win_name is NULL");
  std::lock_guard<std::mutex> lock(w->mu);
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  RONDO_MPI_ENTER_WIN("MPI_Win_get_name", win);
  if (win_name == nullptr || resultlen == nullptr)
    return WinError(*w, MPI_ERR_ARG, kFn,
                    "win_name and resultlen must not be NULL");
  std::lock_guard<std::mutex> lock(w->mu);
  std::memcpy(win_name, w->name.c_str(), w->name.size() + 1);
  *resultlen = static_cast<int>(w->name.size());
  return MPI_SUCCESS;
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  RONDO_MPI_ENTER_WIN("MPI_Win_set_info", win);
  auto in = CheckInfo(*st, info, &w->err, kFn, &err);
  if (!in) return err;
  std::lock_guard<std::mutex> lock(st->detached_mu);
  return ApplyInfo(*w, in.get(), kFn);
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  RONDO_MPI_ENTER_WIN("MPI_Win_get_info", win);
  if (info_used == nullptr)
    return WinError(*w, MPI_ERR_ARG, kFn, "info_used is NULL");
  std::shared_ptr<Info> out;
  {
    std::lock_guard<std::mutex> lock(st->detached_mu);
    out = std::make_shared<Info>(w->info);
  }
  *info_used = st->infos.Add(std::move(out));
  return MPI_SUCCESS;
}

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  RONDO_MPI_ENTER("MPI_Win_create_errhandler");
  return NewErrhandler(*st, win_errhandler_fn, ErrhandlerKind::kWin,
                       errhandler, kFn, "win_errhandler_fn");
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  RONDO_MPI_ENTER_WIN("MPI_Win_set_errhandler", win);
  if (!ErrhandlerFits(*st, errhandler, ErrhandlerKind::kWin))
    return WinError(*w, MPI_ERR_ARG, kFn,
                    ErrhandlerMismatch(errhandler, ErrhandlerKind::kWin));
  w->err.errhandler.store(errhandler);
  return MPI_SUCCESS;
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  RONDO_MPI_ENTER_WIN("MPI_Win_get_errhandler", win);
  if (errhandler == nullptr)
    return WinError(*w, MPI_ERR_ARG, kFn, "errhandler is NULL");
  *errhandler = w->err.errhandler.load();
  if (auto user = st->errhandlers.Get(*errhandler)) user->refs.fetch_add(1);
  return MPI_SUCCESS;
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  RONDO_MPI_ENTER_WIN("MPI_Win_call_errhandler", win);
  (void)CallErrhandler(&w->err, errorcode, kFn);
  return MPI_SUCCESS;
}

// ---- communication ----

int PMPI_Put(const void* origin_addr, int origin_count,
             MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win) {
  if (FastPutGet(win, true, origin_addr, origin_count, origin_datatype,
                 target_rank, target_disp, target_count, target_datatype))
    return MPI_SUCCESS;
  return RunOp(win, Args(OpKind::kPut, "MPI_Put", origin_addr, origin_count,
                         origin_datatype, target_rank, target_disp,
                         target_count, target_datatype));
}

int PMPI_Rput(const void* origin_addr, int origin_count,
              MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  return RunOp(win, WithRequest(Args(OpKind::kPut, "MPI_Rput", origin_addr,
                                     origin_count, origin_datatype,
                                     target_rank, target_disp, target_count,
                                     target_datatype),
                                request));
}

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win) {
  if (FastPutGet(win, false, origin_addr, origin_count, origin_datatype,
                 target_rank, target_disp, target_count, target_datatype))
    return MPI_SUCCESS;
  return RunOp(win, Args(OpKind::kGet, "MPI_Get", origin_addr, origin_count,
                         origin_datatype, target_rank, target_disp,
                         target_count, target_datatype));
}

int PMPI_Rget(void* origin_addr, int origin_count,
              MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  return RunOp(win, WithRequest(Args(OpKind::kGet, "MPI_Rget", origin_addr,
                                     origin_count, origin_datatype,
                                     target_rank, target_disp, target_count,
                                     target_datatype),
                                request));
}

int PMPI_Accumulate(const void* origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return RunOp(win, Args(OpKind::kAcc, "MPI_Accumulate", origin_addr,
                         origin_count, origin_datatype, target_rank,
                         target_disp, target_count, target_datatype, op));
}

int PMPI_Raccumulate(const void* origin_addr, int origin_count,
                     MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request* request) {
  return RunOp(win, WithRequest(Args(OpKind::kAcc, "MPI_Raccumulate",
                                     origin_addr, origin_count,
                                     origin_datatype, target_rank, target_disp,
                                     target_count, target_datatype, op),
                                request));
}

int PMPI_Get_accumulate(const void* origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype,
                        MPI_Op op, MPI_Win win) {
  OpArgs a = Args(OpKind::kGetAcc, "MPI_Get_accumulate", origin_addr,
                  origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, op);
  return RunOp(win, WithResult(a, result_addr, result_count, result_datatype));
}

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, void* result_addr,
                         int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype,
                         MPI_Op op, MPI_Win win, MPI_Request* request) {
  OpArgs a = Args(OpKind::kGetAcc, "MPI_Rget_accumulate", origin_addr,
                  origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, op);
  return RunOp(win, WithRequest(WithResult(a, result_addr, result_count,
                                           result_datatype),
                                request));
}

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                      MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  OpArgs a = Args(OpKind::kGetAcc, "MPI_Fetch_and_op", origin_addr, 1,
                  datatype, target_rank, target_disp, 1, datatype, op);
  return RunOp(win, WithResult(a, result_addr, 1, datatype));
}

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                          void* result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp,
                          MPI_Win win) {
  OpArgs a = Args(OpKind::kCas, "MPI_Compare_and_swap", origin_addr, 1,
                  datatype, target_rank, target_disp, 1, datatype);
  a.compare = compare_addr;
  return RunOp(win, WithResult(a, result_addr, 1, datatype));
}

// ---- synchronisation ----

int PMPI_Win_fence(int assert, MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_fence", win);
  if (!CheckAssert(*w, assert,
                   MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
                       MPI_MODE_NOSUCCEED,
                   kFn, &err))
    return err;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->locks > 0 || w->lock_all || w->started || w->posted)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "a lock or PSCW epoch is open on this window (fence "
                      "epochs do not mix with them)");
  }
  // My operations are done at their targets before I enter the barrier;
  // so once everyone has, every operation on my memory is done.
  const int e = Complete(*st, *w, -1);
  // MPI_MODE_NOPRECEDE and NOSUCCEED together: nothing before, nothing
  // after; no other rank can depend on this call, so no barrier.
  // The shared-memory path's barrier is the segment's.
  if (!((assert & MPI_MODE_NOPRECEDE) && (assert & MPI_MODE_NOSUCCEED))) {
    if (!w->shm) {
      if ((err = PMPI_Barrier(w->comm)) != MPI_SUCCESS) return err;
    } else if (const int failed = ShmBarrier(*st, *w); failed >= 0) {
      return WinError(*w, MPIX_ERR_PROC_FAILED, kFn,
                      "rank " + std::to_string(failed) +
                          " of the window failed before it reached the "
                          "fence");
    }
  }
  // (shared-memory path: the others' stores before the barrier are seen
  // by this rank's loads after it)
  if (w->shm) std::atomic_thread_fence(std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(w->mu);
    w->fence_open = (assert & MPI_MODE_NOSUCCEED) == 0;
  }
  return e;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_post", win);
  if (!CheckAssert(*w, assert,
                   MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, kFn,
                   &err))
    return err;
  std::vector<int> ranks;
  if (!GroupRanks(*st, *w, group, kFn, &ranks, &err)) return err;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->posted)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "an exposure epoch is already open (MPI_Win_wait "
                      "first)");
    if (!LeaveFence(*w, kFn, &err)) return err;
    w->posted = true;
    w->post_ranks = ranks;
  }
  // With MPI_MODE_NOCHECK the origins do not wait for the post (they know
  // it happened), so none is sent.
  if (assert & MPI_MODE_NOCHECK) return MPI_SUCCESS;
  PscwSignal(*st, *w, ranks, kPostSignal);
  return MPI_SUCCESS;
}

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_start", win);
  if (!CheckAssert(*w, assert, MPI_MODE_NOCHECK, kFn, &err)) return err;
  std::vector<int> ranks;
  if (!GroupRanks(*st, *w, group, kFn, &ranks, &err)) return err;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->started || w->locks > 0 || w->lock_all)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "an access epoch is already open on this window "
                      "(MPI_Win_complete or unlock first)");
    if (!LeaveFence(*w, kFn, &err)) return err;
  }
  // Each target's post, once per epoch.
  // A target that dies before it posts fails the call, naming it.
  if (!(assert & MPI_MODE_NOCHECK)) {
    for (int r : ranks) {
      const int job = w->c->world[r];
      if (!WaitUnlessFailed(*st, *w, r, [&] {
            return PscwSignals(*w, kPostSignal, r) > w->posts_used[job];
          }))
        return WinError(*w, MPIX_ERR_PROC_FAILED, kFn,
                        "rank " + std::to_string(r) +
                            " of the window failed before it posted");
      ++w->posts_used[job];
    }
  }
  std::lock_guard<std::mutex> lock(w->mu);
  w->started = true;
  w->start_ranks = ranks;
  return MPI_SUCCESS;
}

int PMPI_Win_complete(MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_complete", win);
  std::vector<int> ranks;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!w->started)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "no access epoch of MPI_Win_start is open");
    ranks = w->start_ranks;
  }
  const int e = Complete(*st, *w, -1);
  PscwSignal(*st, *w, ranks, kCompleteSignal);
  std::lock_guard<std::mutex> lock(w->mu);
  w->started = false;
  w->start_ranks.clear();
  return e;
}

namespace {
// The origins of the exposure epoch that have completed (consumed once).
bool AllCompleted(Win& w) {
  for (int r : w.post_ranks) {
    const int job = w.c->world[r];
    if (PscwSignals(w, kCompleteSignal, r) <= w.completes_used[job])
      return false;
  }
  return true;
}
void EndExposure(Win& w) {
  for (int r : w.post_ranks) ++w.completes_used[w.c->world[r]];
  w.posted = false;
  w.post_ranks.clear();
}
}  // namespace

int PMPI_Win_wait(MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_wait", win);
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!w->posted)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "no exposure epoch of MPI_Win_post is open");
  }
  // An origin of the post group that dies before it completes fails the
  // call, naming it (the exposure epoch stays open: nothing is lost).
  int dead = -1;
  WaitFor(*st, [&] {
    if (AllCompleted(*w)) return true;
    for (int r : w->post_ranks)
      if (st->core().PeerFailed(w->c->world[r])) {
        dead = r;
        return true;
      }
    return false;
  });
  if (dead >= 0 && !AllCompleted(*w))
    return WinError(*w, MPIX_ERR_PROC_FAILED, kFn,
                    "rank " + std::to_string(dead) +
                        " of the window failed before it completed its "
                        "access epoch");
  std::lock_guard<std::mutex> lock(w->mu);
  EndExposure(*w);
  return MPI_SUCCESS;
}

int PMPI_Win_test(MPI_Win win, int* flag) {
  RONDO_MPI_ENTER_WIN("MPI_Win_test", win);
  if (flag == nullptr) return WinError(*w, MPI_ERR_ARG, kFn, "flag is NULL");
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!w->posted)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "no exposure epoch of MPI_Win_post is open");
  }
  (void)ProgressPass(*st, true);
  *flag = AllCompleted(*w);
  if (*flag) {
    std::lock_guard<std::mutex> lock(w->mu);
    EndExposure(*w);
  }
  return MPI_SUCCESS;
}

namespace {
// The lock protocol with one target: lock_type MPI_LOCK_SHARED or
// _EXCLUSIVE, or 0 to unlock (skipped with MPI_MODE_NOCHECK).
// `exclusive` tells an unlock which lock it releases.
int LockOne(State& st, Win& w, int rank, bool nocheck, int lock_type,
            const char* fn, bool exclusive = false) {
  if (nocheck) return MPI_SUCCESS;
  if (w.shm) {
    if (lock_type == 0) {
      ShmUnlock(w, rank, exclusive);
    } else if (const int failed =
                   ShmLock(st, w, rank, lock_type == MPI_LOCK_EXCLUSIVE);
               failed >= 0) {
      return ShmLockFailed(w, failed, fn);
    }
    return MPI_SUCCESS;
  }
  const std::vector<int> one{rank};
  const bool ok = ForRanks(st, w, &one, [&](int job, RmaOp& op) {
    if (lock_type == 0) {
      (void)w.rma->Unlock(job, op);
    } else {
      (void)w.rma->Lock(job, lock_type == MPI_LOCK_EXCLUSIVE, op);
    }
  });
  if (ok) return MPI_SUCCESS;
  return WinError(w, MPIX_ERR_PROC_FAILED, fn,
                  std::string(lock_type == 0 ? "the unlock of" : "the lock of") +
                      " rank " + std::to_string(rank) +
                      " failed (the target died)");
}
}  // namespace

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_lock", win);
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
    return WinError(*w, MPI_ERR_LOCKTYPE, kFn,
                    "lock_type = " + std::to_string(lock_type) +
                        " (allowed: MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE)");
  if (!CheckAssert(*w, assert, MPI_MODE_NOCHECK, kFn, &err)) return err;
  if (!CheckWinRank(*w, rank, kFn, &err)) return err;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  const bool nocheck = (assert & MPI_MODE_NOCHECK) != 0;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!LocksAllowed(*w, kFn, &err)) return err;
    if (w->locked[rank] != 0 || w->lock_all)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "rank " + std::to_string(rank) +
                          " is already locked by this process (" +
                          (w->lock_all ? "MPI_Win_lock_all"
                                       : w->locked[rank] == MPI_LOCK_SHARED
                                             ? "MPI_LOCK_SHARED"
                                             : "MPI_LOCK_EXCLUSIVE") +
                          "): unlock it first");
    if (w->started || w->posted)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "a PSCW epoch is open on this window (locks do not "
                      "mix with it)");
    if (!LeaveFence(*w, kFn, &err)) return err;
    w->locked[rank] = lock_type;
    w->lock_nocheck[rank] = nocheck;
    ++w->locks;
  }
  const int e = LockOne(*st, *w, rank, nocheck, lock_type, kFn);
  if (e != MPI_SUCCESS) {
    std::lock_guard<std::mutex> lock(w->mu);
    w->locked[rank] = 0;
    --w->locks;
  }
  return e;
}

int PMPI_Win_unlock(int rank, MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_unlock", win);
  if (!CheckWinRank(*w, rank, kFn, &err)) return err;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  bool nocheck, exclusive;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->locked[rank] == 0)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "rank " + std::to_string(rank) +
                          " is not locked by this process (MPI_Win_lock "
                          "first" +
                          (w->lock_all ? "; MPI_Win_lock_all's epoch ends "
                                         "with MPI_Win_unlock_all"
                                       : "") +
                          ")");
    nocheck = w->lock_nocheck[rank];
    exclusive = w->locked[rank] == MPI_LOCK_EXCLUSIVE;
  }
  int e = Complete(*st, *w, rank);
  const int u = LockOne(*st, *w, rank, nocheck, /*unlock=*/0, kFn, exclusive);
  std::lock_guard<std::mutex> lock(w->mu);
  w->locked[rank] = 0;
  --w->locks;
  return e != MPI_SUCCESS ? e : u;
}

int PMPI_Win_lock_all(int assert, MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_lock_all", win);
  if (!CheckAssert(*w, assert, MPI_MODE_NOCHECK, kFn, &err)) return err;
  const bool nocheck = (assert & MPI_MODE_NOCHECK) != 0;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!LocksAllowed(*w, kFn, &err)) return err;
    if (w->lock_all || w->locks > 0 || w->started || w->posted)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "an epoch is already open on this window (lock, "
                      "lock_all or PSCW)");
    if (!LeaveFence(*w, kFn, &err)) return err;
    w->lock_all = true;
    w->lock_all_nocheck = nocheck;
  }
  if (nocheck) return MPI_SUCCESS;
  if (w->shm) {
    for (int r = 0; r < w->c->size; ++r)
      if (const int failed = ShmLock(*st, *w, r, false); failed >= 0) {
        for (int taken = 0; taken < r; ++taken) ShmUnlock(*w, taken, false);
        std::lock_guard<std::mutex> lock(w->mu);
        w->lock_all = false;
        return ShmLockFailed(*w, failed, kFn);
      }
    return MPI_SUCCESS;
  }
  if (!ForRanks(*st, *w, nullptr, [&](int job, RmaOp& op) {
        (void)w->rma->Lock(job, /*exclusive=*/false, op);
      }))
    return WinError(*w, MPIX_ERR_PROC_FAILED, kFn,
                    "a lock request of MPI_Win_lock_all failed (a target "
                    "died)");
  return MPI_SUCCESS;
}

int PMPI_Win_unlock_all(MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_unlock_all", win);
  bool nocheck;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!w->lock_all)
      return WinError(*w, MPI_ERR_RMA_SYNC, kFn,
                      "no MPI_Win_lock_all epoch is open");
    nocheck = w->lock_all_nocheck;
  }
  const int e = Complete(*st, *w, -1);
  if (!nocheck && w->shm) {
    for (int r = 0; r < w->c->size; ++r) ShmUnlock(*w, r, false);
  } else if (!nocheck) {
    (void)ForRanks(*st, *w, nullptr, [&](int job, RmaOp& op) {
      (void)w->rma->Unlock(job, op);
    });
  }
  std::lock_guard<std::mutex> lock(w->mu);
  w->lock_all = false;
  return e;
}

namespace {
int FlushCommon(State& st, Win& w, int rank, const char* fn) {
  {
    std::lock_guard<std::mutex> lock(w.mu);
    const bool ok = w.lock_all || (rank >= 0 ? w.locked[rank] != 0 : w.locks > 0);
    if (!ok)
      return WinError(w, MPI_ERR_RMA_SYNC, fn,
                      rank >= 0 ? "no passive-target epoch is open on rank " +
                                      std::to_string(rank) +
                                      " (flush needs MPI_Win_lock or "
                                      "MPI_Win_lock_all)"
                                : std::string("no passive-target epoch is "
                                              "open (flush needs "
                                              "MPI_Win_lock or "
                                              "MPI_Win_lock_all)"));
  }
  return Complete(st, w, rank);
}
}  // namespace

int PMPI_Win_flush(int rank, MPI_Win win) {
  if (FastFlush(win, rank)) return MPI_SUCCESS;
  RONDO_MPI_ENTER_WIN("MPI_Win_flush", win);
  if (!CheckWinRank(*w, rank, kFn, &err)) return err;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  return FlushCommon(*st, *w, rank, kFn);
}

int PMPI_Win_flush_local(int rank, MPI_Win win) {
  if (FastFlush(win, rank)) return MPI_SUCCESS;
  RONDO_MPI_ENTER_WIN("MPI_Win_flush_local", win);
  if (!CheckWinRank(*w, rank, kFn, &err)) return err;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  return FlushCommon(*st, *w, rank, kFn);
}

int PMPI_Win_flush_all(MPI_Win win) {
  if (FastFlush(win, -1)) return MPI_SUCCESS;
  RONDO_MPI_ENTER_WIN("MPI_Win_flush_all", win);
  return FlushCommon(*st, *w, -1, kFn);
}

int PMPI_Win_flush_local_all(MPI_Win win) {
  if (FastFlush(win, -1)) return MPI_SUCCESS;
  RONDO_MPI_ENTER_WIN("MPI_Win_flush_local_all", win);
  return FlushCommon(*st, *w, -1, kFn);
}

int PMPI_Win_sync(MPI_Win win) {
  RONDO_MPI_ENTER_WIN("MPI_Win_sync", win);
  // The unified model: public and private copies are one; a full fence
  // orders this thread's loads and stores against the engine's.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return MPI_SUCCESS;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): see handles.cc.
#pragma weak MPI_Win_create = PMPI_Win_create
#pragma weak MPI_Win_allocate = PMPI_Win_allocate
#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
#pragma weak MPI_Win_attach = PMPI_Win_attach
#pragma weak MPI_Win_detach = PMPI_Win_detach
#pragma weak MPI_Win_free = PMPI_Win_free
#pragma weak MPI_Win_get_group = PMPI_Win_get_group
#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
#pragma weak MPI_Win_set_name = PMPI_Win_set_name
#pragma weak MPI_Win_get_name = PMPI_Win_get_name
#pragma weak MPI_Win_set_info = PMPI_Win_set_info
#pragma weak MPI_Win_get_info = PMPI_Win_get_info
#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
#pragma weak MPI_Put = PMPI_Put
#pragma weak MPI_Get = PMPI_Get
#pragma weak MPI_Accumulate = PMPI_Accumulate
#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
#pragma weak MPI_Rput = PMPI_Rput
#pragma weak MPI_Rget = PMPI_Rget
#pragma weak MPI_Raccumulate = PMPI_Raccumulate
#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
#pragma weak MPI_Win_fence = PMPI_Win_fence
#pragma weak MPI_Win_post = PMPI_Win_post
#pragma weak MPI_Win_start = PMPI_Win_start
#pragma weak MPI_Win_complete = PMPI_Win_complete
#pragma weak MPI_Win_wait = PMPI_Win_wait
#pragma weak MPI_Win_test = PMPI_Win_test
#pragma weak MPI_Win_lock = PMPI_Win_lock
#pragma weak MPI_Win_unlock = PMPI_Win_unlock
#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
#pragma weak MPI_Win_flush = PMPI_Win_flush
#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
#pragma weak MPI_Win_sync = PMPI_Win_sync
