// nmad core: point-to-point messaging over Rondo's engine, NewMadeleine
// style.
//
// A Core connects this process to every rank of the job (gates, one per
// peer) through its rails (drivers). Sessions are independent message
// spaces, like MPI communicators over the whole job: matching, ordering and
// the packet-scheduling strategy are per session. The API never touches the
// network directly: Isend queues the message at its gate and the session's
// strategy turns queued messages into packets when a rail is ready; every
// rail is polled by a repeat task of the engine, queued on the cores that
// share a cache with the thread that created the Core. So a rank that
// computes and never calls into nmad still completes transfers when a
// progress thread or the timer trigger runs those tasks.
//
// Protocols: messages up to NmadOptions::eager_limit go eager (copied once
// on the receiver, into the posted buffer or an unexpected-message buffer);
// larger ones by rendezvous: request-to-send, the receiver matches and
// answers ready-to-receive with the size it accepts, then the data moves
// zero-copy through the drivers' rendezvous, possibly split over rails.
//
// Semantics (MPI's): receives match by source and tag (kAnySource,
// kAnyTag), in posting order; messages from one source in one session are
// matched in the order they were sent (non-overtaking, enforced by sequence
// numbers whatever the rails or strategy did to wire order). A receive
// buffer smaller than the message gets what fits and Status::kTruncated with
// both sizes in RecvInfo. A peer that dies fails the requests that involve
// it with Status::kPeerFailed (FailureText() says what happened).
//
// Thread-safety: every Session and Core method may be called from any number
// of threads at once (MPI_THREAD_MULTIPLE). Locks are per session (matching)
// and per gate (send queues) and per rail (driver); there is no global lock.
// Active-message handlers run inside engine tasks and must not block.
#ifndef RONDO_NMAD_CORE_H_
#define RONDO_NMAD_CORE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "drivers/bootstrap/bootstrap.h"
#include "engine/engine.h"
#include "engine/status.h"
#include "nmad/dynamic_bcast.h"
#include "nmad/options.h"

namespace rondo::nmad {

using engine::Result;
using engine::Status;

inline constexpr int kAnySource = -1;
inline constexpr int kAnyTag = -1;
inline constexpr int kMaxTag = 0x7fffffff;

class Core;
class RailFactory;   // nmad/rail_factory.h
class RemoteMemory;  // nmad/remote_memory.h
class Session;
namespace internal {
struct RecvOp;
struct SendOp;
struct CoreImpl;
struct SessionState;
struct AmDispatch;
struct RequestAccess;
}  // namespace internal

// What a completed receive (or a probe) found.
struct RecvInfo {
  int source = -1;
  int tag = -1;
  size_t size = 0;      // bytes the sender sent
  size_t received = 0;  // bytes delivered (< size when truncated)
};

// A send or receive in flight. The caller owns it; it must stay alive and
// unmoved until done() (then it may be reused for another operation).
class Request {
 public:
  Request() = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  bool done() const noexcept {
    return state_.load(std::memory_order_acquire) == kDone;
  }
  // kInProgress until done; then kOk, kTruncated, kPeerFailed, kCanceled...
  Status status() const noexcept {
    return done() ? status_ : Status::kInProgress;
  }
  const RecvInfo& info() const noexcept { return info_; }

  // Optional completion callback, for upper layers that chain work on
  // completions (nmad/coll submits the next steps of a schedule). It runs
  // once, from whichever thread completes the request (an engine task, a
  // Wait, a driver callback), possibly with Core locks held: it must be
  // short, must not block and must not call into the Core or Session
  // (submit an engine task instead). During the call status and info() are
  // final but done() is still false; the request is marked done right
  // after it returns. Set it while the request is idle or done, before
  // starting the operation; it stays set for later operations.
  using CompletionFn = void (*)(Request& req, Status status,
                                void* arg) noexcept;
  void set_completion(CompletionFn fn, void* arg) noexcept {
    on_complete_ = fn;
    on_complete_arg_ = arg;
  }

 private:
  friend class Core;
  friend class Session;
  friend struct internal::CoreImpl;
  friend struct internal::RequestAccess;
  static constexpr uint32_t kIdle = 0, kPending = 1, kDone = 2;
  void Complete(Status s) noexcept {
    status_ = s;
    if (engine::Engine* e = background_; e != nullptr) {
      background_ = nullptr;
      e->EndBackground();
    }
    if (on_complete_ != nullptr) on_complete_(*this, s, on_complete_arg_);
    state_.store(kDone, std::memory_order_release);
  }
  std::atomic<uint32_t> state_{kIdle};
  Status status_ = Status::kOk;
  RecvInfo info_;
  CompletionFn on_complete_ = nullptr;
  void* on_complete_arg_ = nullptr;
  // The engine whose background work this request counts while pending.
  engine::Engine* background_ = nullptr;
};

// How a thread that waits with nothing to do gives its core away, for every
// waiting loop above the core (Core::Wait, collectives, MadMPI's waits).
// Call Pass() after each progress pass with the work it did. With a core
// per rank it spins for RONDO_WAIT_SPIN_US (50 us) with nothing to do,
// then yields the core every Core::idle_passes_before_yield() (64) empty
// passes. On an oversubscribed node it yields after every empty pass and,
// once it has found nothing to do for RONDO_WAIT_SPIN_US, sleeps on the
// rails' wake-up fds (1 ms at most at a time: what no fd announces is seen
// then), so that the ranks sharing its core run undisturbed until its
// message arrives.
// One per waiting loop, on the stack; not thread-safe.
class IdleBackoff {
 public:
  explicit IdleBackoff(const Core& core) noexcept;
  // Inline up to the yield: every pass of a waiter's loop comes here.
  void Pass(int worked) noexcept {
    if (worked > 0) [[unlikely]] {
      idle_ = 0;
      idle_since_ = -1;
      return;
    }
    if (++idle_ < yield_after_) [[likely]]
      return;
    Idle();
  }

 private:
  void Idle() noexcept;  // a run of yield_after_ empty passes

  engine::Engine* engine_;
  uint32_t yield_after_;
  bool sleep_;
  int64_t spin_ns_;
  uint32_t idle_ = 0;
  int64_t idle_since_ = -1;
};

// An active message being delivered to its handler. Valid only during the
// handler call.
class AmMessage {
 public:
  int source() const noexcept { return source_; }
  uint32_t handler_id() const noexcept { return handler_; }
  std::span<const uint8_t> header() const noexcept { return header_; }
  size_t body_size() const noexcept { return body_size_; }
  // True when the body came with the header (small bodies): body() is valid
  // during the handler.
  bool body_inline() const noexcept { return body_inline_; }
  std::span<const uint8_t> body() const noexcept { return body_; }
  // Receives the body into `buf` (of `len` bytes): at once for an inline
  // body, else by rendezvous (`req` completes later, from an engine task).
  // A handler that does not call this discards the body. Call at most once.
  Status ReceiveBody(void* buf, size_t len, Request& req) noexcept;

 private:
  friend struct internal::CoreImpl;
  friend struct internal::AmDispatch;
  internal::CoreImpl* core_ = nullptr;
  int source_ = -1;
  uint32_t session_ = 0;
  uint32_t handler_ = 0;
  std::span<const uint8_t> header_;
  std::span<const uint8_t> body_;
  size_t body_size_ = 0;
  bool body_inline_ = true;
  bool body_taken_ = false;
  uint64_t rdv_id_ = 0;
  int nparts_ = 0;
  const void* parts_ = nullptr;  // wire::RdvPart[nparts_]
};

using AmHandler = void (*)(AmMessage& message, void* arg) noexcept;

struct SessionOptions {
  std::string strategy;  // empty: NmadOptions::strategy
  // A receive from one peer whose buffer is within the eager limit is
  // completed by the polls of whoever tests or waits for it, not by
  // background progress: only eager data can complete it, and that needs
  // no step from this rank (the bytes wait in the transport). A quiet
  // progress thread then stays asleep for it while the application
  // computes. For layers whose requests are only seen complete through a
  // call that polls (MadMPI's point-to-point). False: every request is
  // progressed in the background (Request::done() turns true by itself).
  bool eager_receives_by_caller = false;
};

class Session {
 public:
  std::string_view name() const noexcept;
  std::string_view strategy() const noexcept;
  uint32_t id() const noexcept;
  int rank() const noexcept;
  int size() const noexcept;
  Core& core() const noexcept;

  // Nonblocking send of `len` bytes at `buf` (unchanged until req is done).
  // `priority` matters to the prio strategy (higher first). Returns kOk (the
  // request is started; its final status comes with req) or, with nothing
  // started: kInvalidArgument (rank, tag, buffer, request in use),
  // kPeerFailed (dest is known dead), kShutdown.
  Status Isend(int dest, int tag, const void* buf, size_t len, Request& req,
               int priority = 0) noexcept;
  // Sends a small message now if it can leave at once with nothing left
  // to complete: kOk means it is sent (copied out by the driver, or written
  // in place in the peer's shared-memory FIFO), `buf` is free and
  // there is no request. kNoResource: nothing was sent (too large for the
  // short path, the gate has sends queued, another thread holds the rail,
  // no room now): use Isend. kShutdown, kPeerFailed, kInvalidArgument as
  // Isend's. MadMPI's MPI_Send and MPI_Isend of small messages try it
  // first. Allocation-free; one exchange for the rail, one for the gate.
  Status TrySendNow(int dest, int tag, const void* buf, size_t len) noexcept;
  // Synchronous-mode send (MPI_Issend): always by rendezvous, so req
  // completes only once the receiver has matched the message.
  Status Issend(int dest, int tag, const void* buf, size_t len,
                Request& req) noexcept;
  // Nonblocking receive into `buf` of `len` bytes; source may be
  // kAnySource, tag kAnyTag. Same return values as Isend.
  Status Irecv(int source, int tag, void* buf, size_t len,
               Request& req) noexcept;
  // Cancels a receive posted by Irecv on this session that has not matched
  // a message yet: it completes with kCanceled and returns kOk. kBusy when
  // it already matched (it will complete normally), kInvalidArgument when
  // `req` is not a pending receive of this session.
  Status CancelRecv(Request& req) noexcept;
  // Blocking forms: post, then Core::Wait.
  Status Send(int dest, int tag, const void* buf, size_t len,
              int priority = 0) noexcept;
  Status Recv(int source, int tag, void* buf, size_t len,
              RecvInfo* info = nullptr) noexcept;
  // Is a message that a receive with (source, tag) would match waiting?
  // Makes progress first. *info describes it (size = full message size).
  Status Iprobe(int source, int tag, bool* found, RecvInfo* info) noexcept;
  Status Probe(int source, int tag, RecvInfo* info) noexcept;
  // Matched probe (MPI's Improbe/Mrecv): like Iprobe, but the message found
  // is taken out of matching, so that no other receive or probe sees it;
  // *msg then names it for exactly one Mrecv. Thread-safe where Iprobe then
  // Irecv is not (another thread may receive in between).
  struct MatchedMessage {
    void* impl = nullptr;
  };
  Status Improbe(int source, int tag, bool* found, RecvInfo* info,
                 MatchedMessage* msg) noexcept;
  // Receives the message `msg` names (into buf/len, truncating as Irecv
  // does) and clears `msg`; kInvalidArgument for an empty one.
  Status Mrecv(MatchedMessage& msg, void* buf, size_t len,
               Request& req) noexcept;

  // Active messages. Handlers are per session and id (0..65535); register
  // the same handlers on every rank before messages can arrive for them.
  // Messages for an id with no handler are dropped and counted.
  Status RegisterHandler(uint32_t id, AmHandler handler, void* arg) noexcept;
  // `priority` as for Isend (the packet scheduler's order).
  Status SendAm(int dest, uint32_t id, const void* header, size_t header_len,
                const void* body, size_t body_len, Request& req,
                int priority = 0) noexcept;

  // Dynamic broadcast (nmad/dynamic_bcast.h): sends `len` bytes at `buf`
  // with `tag` to every rank of `targets` along a binomial tree unrolled by
  // active messages on the broadcasts' own channel; higher priorities sit
  // closer to the root, and forwarded packets keep their priority. Every
  // recipient receives the data with an ordinary Irecv(this rank, tag) on
  // this session, posted before or after the data arrives; dynamic
  // broadcasts and Isends from this rank to a recipient match its receives
  // in the order this rank issued them. `req` completes (kOk, or the first
  // failure such as kPeerFailed) once the root's own sends are done: `buf`
  // may then be reused; the recipients may still be forwarding among
  // themselves. Returns kOk, kBusy (req in use), or kInvalidArgument with
  // *error saying what is wrong (empty or duplicate recipients, the root
  // among them, a rank or tag out of range, a null buffer), nothing sent.
  // A forwarder that dies takes its subtree's data with it (their receives
  // wait, unless the root fails too).
  Status DynamicBroadcast(const void* buf, size_t len, int tag,
                          std::span<const BroadcastTarget> targets,
                          Request& req, std::string* error = nullptr) noexcept;

 private:
  friend class Core;
  friend struct internal::CoreImpl;
  friend struct internal::SessionState;
  Session() = default;
  internal::CoreImpl* core_ = nullptr;
  void* impl_ = nullptr;  // internal::SessionState
};

// Counters, for tests and benchmarks (monotonic since Create).
struct CoreStats {
  uint64_t packets_sent = 0;
  uint64_t packets_received = 0;
  uint64_t chunks_sent = 0;
  uint64_t eager_sent = 0;
  uint64_t rendezvous_sent = 0;
  uint64_t unexpected = 0;  // messages that arrived before their receive
  uint64_t reordered = 0;   // chunks that arrived ahead of their sequence
  uint64_t bad_packets = 0;  // dropped by the header validator
  uint64_t am_dropped = 0;   // active messages with no handler
  uint64_t bcast_sent = 0;       // dynamic broadcasts started as the root
  uint64_t bcast_forwarded = 0;  // received broadcasts forwarded further
  uint64_t bcast_delivered = 0;  // broadcast data delivered here
  uint64_t bcast_dropped = 0;    // malformed or failed broadcasts dropped
  uint64_t bcast_in_place = 0;   // received straight into a posted receive
  uint64_t rail_bytes[8] = {};  // bytes sent per rail (rendezvous data)
};

class Core {
 public:
  // Connects to every rank of the job through `bootstrap` (collective: all
  // ranks call it). Returns kInvalidArgument (bad options), kUnsupported
  // (a driver could not start), kPeerFailed (bootstrap failed); `*error`
  // then says what happened.
  static Result<std::unique_ptr<Core>> Create(
      engine::Engine& engine,
      std::unique_ptr<drivers::bootstrap::Bootstrap> bootstrap,
      NmadOptions options, std::string* error = nullptr);
  // The same with the drivers of the remote rails made by `rails` (the
  // driver registry, nmad/rail_factory.h). //nmad:core_base has only this
  // one (no network driver linked in); //nmad:core defines the one above
  // with UCX's rails (nmad/ucx_rails.h). `rails` is used during the call
  // only.
  static Result<std::unique_ptr<Core>> Create(
      engine::Engine& engine,
      std::unique_ptr<drivers::bootstrap::Bootstrap> bootstrap,
      NmadOptions options, const RailFactory& rails,
      std::string* error = nullptr);
  // Collective: barrier, then stops the polling tasks and closes the rails.
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  int rank() const noexcept;
  int size() const noexcept;
  engine::Engine& engine() const noexcept;
  drivers::bootstrap::Bootstrap& bootstrap() const noexcept;
  const NmadOptions& options() const noexcept;
  // Number of rails to remote peers.
  int rails() const noexcept;
  // Rail 0's one-sided operations (nmad/remote_memory.h: UCX's mapped
  // memory, put, get, atomics), or null when its transport has none. Owned
  // by the Core. Any thread, after Create.
  RemoteMemory* remote_memory() const noexcept;
  // The transport that carries packets to `peer` ("loopback" for this
  // rank, "shm" or "ucx" on rail 0 with RONDO_SHM; Driver::PathTo), "" for
  // a bad rank. Any thread, after Create.
  std::string_view PathTo(int peer) const noexcept;
  // The largest message sent eagerly to `peer`: options().eager_limit on
  // this node, options().NetEagerLimit() to another; 0 for a bad rank. Any
  // thread, after Create.
  size_t EagerLimitTo(int peer) const noexcept;
  // What wakes a thread that sleeps waiting for rail `rail`'s transport
  // (0 .. rails()-1): "event fd" when the driver has a wake-up fd (engine
  // threads sleep on it between the transport's events), "none" when it
  // has not (they poll it: quiet progress every half RONDO_QUIET_US), ""
  // for a bad index. Any thread, after Create.
  std::string_view RailWakeup(int rail) const noexcept;
  // The cores allowed to run this Core's tasks (its rails' polling tasks):
  // those sharing the widest cache with the thread that created it. Upper
  // layers (nmad/coll) give their tasks the same cpuset, so the progress
  // configuration decides where all communication work runs.
  const topology::CpuSet& task_cpuset() const noexcept;

  // Opens (or returns the already open) session `name`. Sessions are
  // matched across ranks by name; messages that arrive before the session
  // is open locally are kept. Throws nothing; kInvalidArgument for an empty
  // name, a name whose id collides with another open session, or an unknown
  // strategy (with *error set).
  Result<Session*> OpenSession(std::string_view name,
                               const SessionOptions& options = {},
                               std::string* error = nullptr);

  // kInProgress while not done, else the request's final status. Makes one
  // progress pass.
  Status Test(Request& req) noexcept;
  // Progresses (explicit polling from the caller's core) until done.
  Status Wait(Request& req) noexcept;
  Status WaitFor(Request& req, std::chrono::nanoseconds timeout) noexcept;
  Status WaitAll(std::span<Request* const> reqs) noexcept;
  // Empty progress passes a waiting thread makes before it yields its core:
  // 64, or 1 when this node runs more ranks than it has cores
  // (oversubscribed: the rank that will complete the wait needs the core).
  uint32_t idle_passes_before_yield() const noexcept;
  // Whether waiting threads sleep on the rails' fds after a while (the node
  // is oversubscribed): see IdleBackoff.
  bool sleep_when_idle() const noexcept;
  // One progress pass from the caller; returns how much work was done.
  int Progress() noexcept;

  // A barrier over all ranks through the bootstrap (set-up, tests).
  Status Barrier() noexcept;
  // What is known of `rank`'s failure ("" while it is alive).
  std::string FailureText(int rank) const;
  // Whether `rank` is known to have failed (one atomic load; false for a
  // bad rank). Any thread.
  bool PeerFailed(int rank) const noexcept;
  CoreStats stats() const noexcept;

 private:
  Core() = default;
  std::unique_ptr<internal::CoreImpl> impl_;
};

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_CORE_H_
