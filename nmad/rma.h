// nmad RMA: one-sided operations served by the target's engine.
//
// A RmaWindow exposes memory of this rank to the other ranks of its
// session (one session per window: open it under the same name on every
// member, as communicators do). Origins put, get, accumulate, fetch-and-op
// and compare-and-swap at (target rank, byte offsets) and take locks; every
// operation travels as an active message (Session::RegisterHandler /
// SendAm) that the TARGET's engine serves from its polling task: a target
// that computes and never calls into nmad still answers when a progress
// thread, the quiet progress thread or the timer runs that task. That is
// passive-target progress without a helper process. An open window counts
// as background work for the engine (Engine::BeginBackground until Close),
// so quiet progress serves it while the application computes.
//
// Addressing: the target side is a list of blocks (byte offset, bytes)
// relative to the exposed region (Expose) or, for a dynamic window, absolute
// addresses inside attached regions (Attach). Data always travels packed
// (the blocks' bytes back to back in block order); the caller packs and
// unpacks its own side (MadMPI reuses its datatype engine).
//
// Accumulates are applied by the window's AccumulateFn on packed bytes:
// the target gathers the blocks into a contiguous run, applies, scatters
// back, under the window's accumulate lock, so accumulates (and
// get-accumulates, fetch-and-op, compare-and-swap) on one window are
// element-wise atomic with respect to each other whoever issues them.
// Puts and gets take no such lock: the engine serves the loopback rail
// (this rank's own operations) and the remote rails on different threads at
// once, so two puts to one location in one epoch really do run together;
// MPI calls them conflicting accesses (an erroneous program).
//
// Completion: each operation is a RmaOp the caller owns; it is done when
// the target has applied it (puts, accumulates) or its data has arrived
// (gets): done() is remote completion, which MPI's flush and unlock need.
// Operations larger than one eager packet are split into several messages
// at element boundaries.
//
// Locks: Lock(target, exclusive) asks the target's lock manager and
// returns a RmaOp done once granted; shared locks are granted together,
// an exclusive one alone, waiters in arrival order. Unlock releases (done
// once the target has released). Signals (PSCW's post and complete) are
// counted per (kind, source) at the receiver.
//
// Direct operations (the one-sided transport, nmad/remote_memory.h): when
// the Core has remote memory, a window may also map its exposed memory
// (MapDirect) and take every member's packed key (SetDirectKey), collectively
// at creation (the caller exchanges the bytes). DirectPut/DirectGet then
// move one contiguous run with the transport's put and get, and
// DirectAtomic applies a transport atomic to each 4- or 8-byte element of
// the blocks, without the target's engine (or, when the transport emulates
// them, with its transport progress only). A direct op is done() once the
// transport completed it locally: gets and fetching atomics have their
// data, puts and non-fetching atomics are remotely complete only after a
// DirectFlush of their target, which MPI's flush, unlock, fence and
// complete issue. Direct atomics are element-wise atomic with each other,
// NOT with the active-message accumulates of this window (those run under
// the target's accumulate lock): the caller routes all the accumulates
// that may touch one location through one of the two paths (MadMPI: by
// the operation and element type, see nmad/mpi/win.cc).
//
// Thread-safety: every method may be called from any thread; handlers run
// in engine tasks. A RmaOp must stay alive and unmoved until done(); once
// done it may start another operation, which reuses its message records
// and buffers (steady-state operations allocate nothing).
#ifndef RONDO_NMAD_RMA_H_
#define RONDO_NMAD_RMA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <vector>

#include "drivers/driver.h"
#include "nmad/core.h"
#include "nmad/remote_memory.h"

namespace rondo::nmad {

// One run of target memory: a byte offset (or, in a dynamic window, an
// address) and a length.
struct RmaBlock {
  int64_t offset = 0;
  int64_t bytes = 0;
};

// Applies `op` to `bytes` bytes of packed elements of type `basic`:
// inout[i] = in[i] (op) inout[i]. Opaque codes for nmad (MadMPI passes its
// MPI_Op and MPI_Datatype handles). Runs in the target's engine task.
using RmaAccumulateFn = void (*)(void* arg, uint32_t op, uint32_t basic,
                                 const void* in, void* inout,
                                 size_t bytes) noexcept;

namespace internal {
struct RmaPiece;
}

// Status codes a target answers with (RmaOp::error()).
enum class RmaError : uint32_t {
  kOk = 0,
  kRange = 1,      // a block outside the exposed or attached memory
  kNoWindow = 2,   // nothing exposed (freed window)
  kPeerFailed = 3, // the target died
  kTransport = 4,  // the one-sided transport failed otherwise
};

// One operation in flight (or a lock, unlock or get). Owned by the caller.
class RmaOp {
 public:
  RmaOp();
  ~RmaOp();
  RmaOp(const RmaOp&) = delete;
  RmaOp& operator=(const RmaOp&) = delete;
  // The target answered every message and every send finished.
  bool done() const noexcept;
  // The first error a target answered (kOk when none).
  RmaError error() const noexcept {
    return static_cast<RmaError>(error_.load(std::memory_order_acquire));
  }
  int target() const noexcept { return target_; }

 private:
  friend class RmaWindow;
  // The completion every direct operation of this op reports to.
  struct DirectDone : drivers::Completion {
    RmaOp* op = nullptr;
  };
  static void OnDirectDone(drivers::Completion* c, Status status,
                           size_t) noexcept;
  // A direct post returned `s`: counts it unless a callback will.
  void Posted(Status s) noexcept;
  void Reset(int target, int messages) noexcept;
  std::atomic<int> pending_{0};  // answers still expected
  std::atomic<uint32_t> error_{0};
  int target_ = -1;
  uint8_t* result_ = nullptr;  // gets: the packed data lands here
  // Message records, kept for reuse; the first used_ are this operation's.
  std::vector<std::unique_ptr<internal::RmaPiece>> pieces_;
  size_t used_ = 0;
  DirectDone direct_;
  // A DirectFlush's (target, issued count) pairs, capacity kept.
  std::vector<std::pair<int, uint64_t>> flush_marks_;
  // Old values a non-fetching swap returns (discarded), or the copy of a
  // compare-and-swap's compare value; capacity kept.
  std::vector<uint8_t> scratch_;
};

class RmaWindow {
 public:
  struct Options {
    RmaAccumulateFn accumulate = nullptr;
    void* accumulate_arg = nullptr;
    // Dynamic window: offsets are addresses inside Attach()ed regions.
    bool dynamic = false;
  };
  // Registers the window's handlers on `session` (which it then owns for
  // RMA: no other handlers of ids 1..kHandlers on it).
  RmaWindow(Session& session, Options options);
  ~RmaWindow();
  RmaWindow(const RmaWindow&) = delete;
  RmaWindow& operator=(const RmaWindow&) = delete;

  // The local memory others reach (a static window); may be empty.
  void Expose(void* base, size_t size) noexcept;
  // Dynamic windows: kInvalidArgument for an overlapping region (Attach) or
  // one not attached (Detach).
  Status Attach(void* base, size_t size) noexcept;
  Status Detach(void* base) noexcept;
  // Stops serving: later messages are answered kNoWindow.
  void Close() noexcept;

  // Most packed bytes one message carries (operations are split above).
  size_t piece_bytes() const noexcept { return piece_bytes_; }

  // Writes `packed` (the blocks' total bytes) at `target`.
  Status Put(int target, std::span<const RmaBlock> blocks,
             const void* packed, RmaOp& op) noexcept;
  // Reads the blocks into `out` (packed, their total bytes); `out` must stay
  // valid until op is done.
  Status Get(int target, std::span<const RmaBlock> blocks, void* out,
             RmaOp& op) noexcept;
  // Accumulates `packed` into the blocks with (op, basic), elements of
  // `element_bytes` never split. With `fetch` non-null (get-accumulate,
  // fetch-and-op), the blocks' previous contents land there (packed).
  Status Accumulate(int target, std::span<const RmaBlock> blocks,
                    const void* packed, uint32_t mpi_op, uint32_t basic,
                    size_t element_bytes, void* fetch, RmaOp& op) noexcept;
  // Compare-and-swap of one element of `bytes` at block `at`: the old value
  // lands in `result`; `compare` and `value` are replaced bytewise.
  Status CompareAndSwap(int target, RmaBlock at, const void* compare,
                        const void* value, void* result, RmaOp& op) noexcept;

  // Passive-target locks at `target`: done once granted / released.
  Status Lock(int target, bool exclusive, RmaOp& op) noexcept;
  Status Unlock(int target, RmaOp& op) noexcept;
  // Sends signal `kind` (0..kSignalKinds-1) to `target`; done once sent.
  static constexpr int kSignalKinds = 4;
  Status Signal(int target, int kind, RmaOp& op) noexcept;
  // Signals of `kind` received from `source` so far (monotonic).
  uint64_t Signals(int kind, int source) const noexcept;
  // Locks held on this rank's memory now (tests, diagnostics).
  int LocksHeld() const noexcept;

  Session& session() const noexcept { return session_; }

  // ---- direct operations (see the banner) ----
  // Maps the exposed memory for the transport (static windows, after
  // Expose): this rank's packed key for every member's SetDirectKey;
  // *reaches_all says whether the transport reaches every rank of
  // `members` (job ranks; those it does not reach, e.g. served by shared
  // memory, get no key). kUnsupported when the Core has no remote memory or
  // the window is dynamic; the transport's error otherwise. Unless
  // `emulated_too`, a rank the transport reaches only by emulating the
  // operations over its messages (RemoteMemory::Emulated: UCX over TCP)
  // counts as not reached, so that active messages serve it.
  Result<std::vector<uint8_t>> MapDirect(std::span<const int> members,
                                         bool* reaches_all,
                                         bool emulated_too = false);
  // `target`'s packed key (from its MapDirect). kInvalidArgument for
  // malformed bytes, kUnsupported (no key set) for a target the transport
  // does not reach.
  Status SetDirectKey(int target, std::span<const uint8_t> packed);
  // `target` has a key: direct operations may go there.
  bool direct(int target) const noexcept {
    return target >= 0 && target < nranks_ &&
           keys_[static_cast<size_t>(target)].set;
  }
  // Writes / reads `bytes` at byte `offset` of target's exposed memory
  // (the caller checked the range).
  Status DirectPut(int target, int64_t offset, const void* data, size_t bytes,
                   RmaOp& op) noexcept;
  Status DirectGet(int target, int64_t offset, void* out, size_t bytes,
                   RmaOp& op) noexcept;
  // One atomic `aop` per `element` (4 or 8) bytes of the blocks, with the
  // packed `values` (null: a fetch, kOr with zero); with `fetch` non-null the
  // old values land there packed. kCompareSwap takes one element and
  // `compare` (copied). `ordered`: after every operation issued before (a transport
  // fence; MPI's accumulate_ordering). kUnsupported, nothing issued, when
  // an element is not aligned to its size at the target.
  Status DirectAtomic(int target, std::span<const RmaBlock> blocks,
                      AtomicOp aop, size_t element, const void* values,
                      const void* compare, void* fetch, bool ordered,
                      RmaOp& op) noexcept;
  // The Direct* operations return kInvalidArgument or kUnsupported only
  // when nothing was issued (the caller may take the active-message path);
  // a failure after issuing is the op's error().
  // Remote completion of the direct puts and non-fetching atomics issued
  // so far to `target` (-1: every target): done once flushed. Then call
  // DirectFlushed(op), which records what the flush covered (so that later
  // flushes skip targets with nothing new; without it they flush again).
  // Concurrent flushes from several threads each wait for their own.
  Status DirectFlush(int target, RmaOp& op) noexcept;
  void DirectFlushed(RmaOp& op) noexcept;

 private:
  struct DirectKey {
    bool set = false;
    uint64_t base = 0;
    uint64_t size = 0;
    RemoteKey* key = nullptr;
  };
  // The remote address of [offset, offset + bytes) at `target`, checked
  // against its key's size.
  Status DirectTargetAddress(int target, int64_t offset, size_t bytes,
                             uint64_t* at) const noexcept;
  // Counts a put or posted atomic to `target` (after posting it: a flush
  // posted by whoever sees the new count covers it).
  void MarkDirty(int target) noexcept {
    issued_[static_cast<size_t>(target)].fetch_add(1,
                                                   std::memory_order_acq_rel);
  }
  bool Unflushed(int target) const noexcept {
    const auto t = static_cast<size_t>(target);
    return issued_[t].load(std::memory_order_acquire) >
           flushed_[t].load(std::memory_order_acquire);
  }

  struct Waiter {
    int source;
    bool exclusive;
    uint64_t token;
  };
  static void OnMessage(AmMessage& m, void* arg) noexcept;
  void Serve(AmMessage& m) noexcept;
  // Checks the blocks against the exposed memory; their target addresses.
  bool Resolve(std::span<const RmaBlock> blocks, std::vector<uint8_t*>* at)
      const noexcept;
  void Reply(int dest, uint32_t kind, uint64_t token, uint64_t stream,
             RmaError error, const void* body, size_t len) noexcept;
  Status Send(int target, uint32_t kind, uint32_t a, uint32_t b,
              uint64_t stream, std::span<const RmaBlock> blocks,
              const void* data, size_t data_len, size_t extra_len,
              const void* extra, RmaOp& op) noexcept;

  Session& session_;
  Options options_;
  size_t piece_bytes_ = 0;
  std::atomic<bool> open_{true};
  // The memory served.
  mutable std::shared_mutex mem_mu_;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::vector<std::pair<uint8_t*, size_t>> regions_;  // dynamic
  // Element-wise atomicity of accumulates on this window.
  std::mutex acc_mu_;
  // The lock manager of this rank's memory.
  mutable std::mutex lock_mu_;
  int exclusive_holder_ = -1;
  int shared_holders_ = 0;
  std::deque<Waiter> waiters_;
  // Replies in flight (handler side), reused once sent.
  std::mutex reply_mu_;
  std::vector<std::unique_ptr<internal::RmaPiece>> replies_;
  // Signals received, [kind][source].
  std::unique_ptr<std::atomic<uint64_t>[]> signals_;
  int nranks_ = 0;
  // Direct operations: the Core's remote memory, this rank's mapped region,
  // every member's key (by job rank), targets with unflushed puts.
  RemoteMemory* remote_ = nullptr;
  bool emulated_too_ = false;  // MapDirect's argument
  MemoryRegion* region_ = nullptr;
  std::vector<DirectKey> keys_;
  // Per target: puts and posted atomics issued, and how many of them a
  // completed flush covers (DirectFlushed): a flush is needed while
  // issued_ > flushed_, also when another thread's flush is in flight.
  std::unique_ptr<std::atomic<uint64_t>[]> issued_, flushed_;
};

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_RMA_H_
