// Implementation notes (the contract is in core.h).
//
// This file is the glue: sessions, receiving (decode, reordering,
// matching, delivery), the protocols' steps, Create and ~Core. The pieces
// are modules, each tested alone:
//   nmad/rail.h             a driver, its lock and holder, deferred driver
//                           operations, gates to flush, packet buffers,
//                           per-rail counters;
//   nmad/send_queue.h       gates: per-session FIFOs, sequence numbers,
//                           control first, round robin, requeue;
//   nmad/packet_builder.h   packets and short packets from queued chunks;
//   nmad/rendezvous.h       part plans, trimming, keys, checks;
//   nmad/match_queues.h     MPI matching (posted receives, unexpected);
//   nmad/reorder.h          per-(source, session) order by sequence number;
//   nmad/active_messages.h  handler registry, send checks, dispatch;
//   nmad/failures.h         what a peer failure completes;
//   nmad/dynamic_bcast_client.h  dynamic broadcasts, through the narrow
//                           BroadcastHost this core implements;
//   nmad/rail_factory.h     where the remote rails' drivers come from.
//
// Locks, always taken in this order and never the other way:
//   rail lock (Rail::mu, held while calling its driver, including the
//   driver's callbacks)  <  session lock (SessionState::mu: matching)  <
//   gate lock (Gate::mu: send queues, rendezvous waiting for their RTR).
// A thread never blocks on a rail lock while holding a session or gate lock:
// it uses Rail::Run() (nmad/rail.h), which runs the driver call at once
// when this thread already holds that rail (a callback), or try-locks it,
// or else leaves the call in the rail's operation list for whoever holds
// the rail next (the rail's polling task drains it on every pass). So
// handlers and matching can post driver operations from anywhere without
// deadlock.
#include "nmad/core.h"

#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "drivers/driver.h"
#include "drivers/loopback/loopback_driver.h"
#include "nmad/active_messages.h"
#include "nmad/dynamic_bcast_client.h"
#include "nmad/failures.h"
#include "nmad/match_queues.h"
#include "nmad/node.h"
#include "nmad/packet_builder.h"
#include "nmad/pool.h"
#include "nmad/rail.h"
#include "nmad/rail_factory.h"
#include "nmad/remote_memory.h"
#include "nmad/rendezvous.h"
#include "nmad/reorder.h"
#include "nmad/request_access.h"
#include "nmad/send_queue.h"
#include "nmad/strategies/strategy.h"
#include "nmad/wire.h"
#include "queues/cpu_relax.h"
#include "queues/spin_lock.h"
#include "topology/base/log.h"

namespace rondo::nmad {
namespace internal {

using drivers::Completion;
using drivers::Driver;
using queues::SpinLock;
using strategies::PendingChunk;
using wire::ChunkKind;
using wire::ChunkView;

static_assert(kAnySource == kMatchAnySource && kAnyTag == kMatchAnyTag);

// A receive: posted by Irecv (matched through its PostedReceive part), or
// an active-message body. From CoreImpl::recv_pool.
struct RecvOp : PostedReceive {
  RecvOp() noexcept {}
  uint8_t* buf = nullptr;
  size_t len = 0;
  Request* req = nullptr;
  int peer = -1;  // set when matched
  struct CoreImpl* core = nullptr;
  std::atomic<int> driver_ops{0};
  std::atomic<bool> user_done{false};
  Status worst = Status::kOk;
  // A rendezvous's parts (PostRecvPart sets each one it posts): left
  // uninitialised, an eager receive never touches them (clearing 128 bytes
  // was an eighth of posting a receive).
  union {
    PartCompletion part_done[wire::kMaxParts];
  };
  // A truncating receive of early rendezvous data (kRtsDataPosted): the
  // part that straddles the end of the buffer lands whole here, and its
  // first scratch_len bytes are copied to scratch_dst (UCX delivers
  // nothing into a truncated receive). Error path only.
  std::unique_ptr<uint8_t[]> scratch;
  int scratch_part = -1;
  uint8_t* scratch_dst = nullptr;
  size_t scratch_len = 0;
};

// A chunk kept for later (unexpected, out of order, or for a session that
// is not open yet), with its own copy of the bytes.
// Unexpected ones are matched through their UnexpectedMessage part. From
// CoreImpl::stash_pool; small chunks are copied inline (no allocation).
struct Stashed : UnexpectedMessage {
  static constexpr size_t kInline = 256;
  Stashed() noexcept {}
  ChunkView view;
  std::vector<uint8_t> bytes;  // am header then payload, when not inline
  // Or the payload lives elsewhere, kept alive by this (a dynamic
  // broadcast's data, shared with the forwarding sends).
  std::shared_ptr<const std::vector<uint8_t>> keep;
  uint8_t inline_bytes[kInline];

  void CopyFrom(int from, const ChunkView& c) {
    peer = from;
    tag = c.tag;
    wire::CopyView(c, &view);
    const size_t n = c.am_header_size + c.payload_size;
    uint8_t* d = inline_bytes;
    if (n > kInline) {
      bytes.resize(n);
      d = bytes.data();
    }
    if (c.am_header_size) std::memcpy(d, c.am_header, c.am_header_size);
    wire::CopyPayload(d + c.am_header_size, c.payload, c.payload_size);
    view.am_header = d;
    view.payload = d + c.am_header_size;
  }
};

// Chunks from one source in one session that came ahead of their turn.
using PeerRecvState = ReorderWindow<Stashed>;

// A session: its send side at the gates (SessionQueues: id, strategy,
// queue per gate), matching, handlers.
// Match bins each session makes at open (MatchQueues::Reserve).
constexpr size_t kReservedMatchBins = 64;

struct SessionState : SessionQueues {
  Session handle;
  std::string name;
  std::unique_ptr<strategies::Strategy> owned_strategy;  // strategy
  bool eager_receives_by_caller = false;  // SessionOptions
  SpinLock mu;  // matching
  // Free receives under `mu` (nmad/pool.h): posting and matching a receive
  // take and give one back with the lock they hold anyway.
  Pool<RecvOp>::Cache recv_cache;
  std::vector<PeerRecvState> from;
  // Posted receives and unexpected messages (nmad/match_queues.h).
  MatchQueues match;
  AmHandlers handlers;  // nmad/active_messages.h
};

struct CoreImpl;

// A waiting thread's own state for CoreImpl::Progress: its pass count (the
// rhythm of the 1-in-4 and 1-in-64 passes), and what it caches of its core
// for OtherTasksOnPath, keyed by the engine (whose ids are never reused, so
// `core` is always one of that engine's) and the CoreImpl. Initial-exec TLS
// (see t_held_rail): a load from %fs, no call, and no line shared with the
// other waiters.
struct WaiterCore {
  uint32_t pass = 0;
  uint64_t engine_id = 0;
  const CoreImpl* impl = nullptr;
  int core = 0;
  int64_t own = 0;
};
constinit thread_local WaiterCore t_waiter
    __attribute__((tls_model("initial-exec"))) = {};

struct CoreImpl final : drivers::PacketSink, RailClient, BroadcastHost {
  // First: destroyed last, after everything that holds their objects.
  Pool<RecvOp> recv_pool;
  Pool<SendOp> send_pool;
  Pool<Stashed> stash_pool;
  Stashed* Stash(int peer, const ChunkView& c) {
    Stashed* m = stash_pool.Get();
    m->CopyFrom(peer, c);
    return m;
  }
  void Free(Stashed* m) noexcept { stash_pool.Put(m); }
  void Free(RecvOp* r) noexcept { recv_pool.Put(r); }
  void Free(SendOp* op) noexcept { send_pool.Put(op); }
  RecvOp* NewRecv() {
    RecvOp* r = recv_pool.Get();
    r->core = this;
    return r;
  }
  SendOp* NewSend() {
    SendOp* op = send_pool.Get();
    op->core = this;
    return op;
  }

  Core* self = nullptr;
  engine::Engine* engine = nullptr;
  std::unique_ptr<drivers::bootstrap::Bootstrap> bootstrap;
  NmadOptions options;
  int rank = 0;
  int size = 1;
  std::vector<std::unique_ptr<Rail>> rails;  // remote rails, then loopback
  // Rail 0's one-sided operations, when its driver has them.
  std::unique_ptr<RemoteMemory> remote_memory;
  topology::CpuSet task_cpus;  // where this core's tasks run
  uint32_t idle_before_yield = 64;  // 1 when oversubscribed
  int loopback = 0;                          // index of the loopback rail
  std::vector<std::unique_ptr<Gate>> gates;
  std::atomic<bool> stopping{false};
  std::atomic<int> running_tasks{0};

  mutable std::shared_mutex sessions_mu;
  std::unordered_map<uint32_t, std::unique_ptr<SessionState>> sessions;
  std::array<std::atomic<SessionState*>, 8> session_slots{};
  std::vector<Stashed*> early;  // chunks for sessions not open yet

  // Dynamic broadcasts: their own channel (a session with one handler),
  // and the operations in flight or finished but not yet reclaimed.
  SessionState* bcast_channel = nullptr;
  std::unique_ptr<DynamicBroadcasts> bcasts;

  FailureLog failures;  // nmad/failures.h

  std::atomic<uint64_t> next_rdv{1};
  // The rare events' counters (the message path's are per rail).
  struct Counters {
    std::atomic<uint64_t> unexpected{0},
        bad_packets{0}, am_dropped{0}, reordered{0};
  } counters;

  // ---- rails ----
  // A gate its packet rail's holder flushes (Rail::Drain).
  void Flush(Rail& r, FlushTarget& t) noexcept override {
    FlushGate(r, static_cast<Gate&>(t));
  }

  // Asks for `gate` to be flushed on its packet rail: now if the rail can be
  // had, else by its next holder.
  void Kick(Gate& gate) noexcept { rails[gate.packet_rail]->Kick(gate); }

  static engine::TaskResult PollTask(void* arg) noexcept {
    Rail& r = *static_cast<Rail*>(arg);
    CoreImpl& core = *static_cast<CoreImpl*>(r.client);
    if (core.stopping.load(std::memory_order_acquire)) {
      core.running_tasks.fetch_sub(1, std::memory_order_acq_rel);
      return engine::TaskResult::kDone;
    }
    int n = r.Poll();
    if (r.index == 0) n += core.CheckBootstrapFailures();
    return n ? engine::TaskResult::kProgress : engine::TaskResult::kIdle;
  }

  int CheckBootstrapFailures() noexcept {
    std::vector<drivers::bootstrap::PeerFailure> failures =
        bootstrap->PollFailures();
    for (auto& f : failures) PeerFailed(f.rank, f.what);
    return static_cast<int>(failures.size());
  }

  // ---- sending ----
  static void PacketDone(Completion* c, Status s, size_t) noexcept {
    auto* b = reinterpret_cast<PacketBuf*>(c);
    static_cast<CoreImpl*>(b->rail->client)->FinishPacket(*b, s);
  }

  void FinishPacket(PacketBuf& b, Status s) noexcept {
    b.data_with_rts.clear();  // started (or failed) by FlushGate already
    if (Request* req = b.req) {
      b.req = nullptr;
      req->Complete(IsError(s) ? s : Status::kOk);
    }
    for (SendOp* op : b.ops) {
      if (op->req) FinishUser(op, IsError(s) ? s : Status::kOk);
      Free(op);
    }
    b.ops.clear();
    Gate* g = b.gate;
    std::vector<SendOp*> failed;
    {
      std::lock_guard<SpinLock> lock(g->mu);
      --g->inflight;
      // A rendezvous whose announcement was lost will never be answered.
      if (IsError(s))
        for (uint64_t id : b.rts_ids) {
          auto it = g->rdv_waiting.find(id);
          if (it == g->rdv_waiting.end()) continue;
          failed.push_back(it->second);
          g->rdv_waiting.erase(it);
        }
    }
    b.rts_ids.clear();
    for (SendOp* op : failed) {
      FinishUser(op, s);
      Free(op);
    }
    b.rail->PutBuf(&b);  // rail lock is held (callback)
    Kick(*g);
  }

  static void FinishUser(SendOp* op, Status s) noexcept {
    if (!op->user_done.exchange(true, std::memory_order_acq_rel) && op->req)
      op->req->Complete(s);
  }
  static void FinishUser(RecvOp* op, Status s) noexcept {
    if (!op->user_done.exchange(true, std::memory_order_acq_rel) && op->req)
      op->req->Complete(s);
  }

  // Sends packets from `g` while it has chunks and the rail takes them.
  // Rail lock held.
  void FlushGate(Rail& r, Gate& g) noexcept {
    const size_t budget = options.max_packet - wire::kPacketHeaderSize;
    // The calling thread's list, its capacity kept from call to call
    // (swapped out while in use, in case a flush ever nests).
    thread_local std::vector<PendingChunk*> t_chunks;
    std::vector<PendingChunk*> chunks;
    chunks.swap(t_chunks);
    struct GiveBack {
      std::vector<PendingChunk*>& list;
      ~GiveBack() {
        list.clear();
        list.swap(t_chunks);
      }
    } give_back{chunks};
    for (;;) {
      chunks.clear();
      {
        std::lock_guard<SpinLock> lock(g.mu);
        if (g.inflight >= kMaxInflightPackets) return;  // completion kicks
        NextChunks(g, budget, kMaxChunks, chunks);
        if (chunks.empty()) return;
        ++g.inflight;
      }
      PacketBuf* b = r.GetBuf();
      b->gate = &g;
      BuildPacket(*b, g, chunks);
      Status s = r.driver->PostPacket(g.rank, b->iov.data(),
                                      static_cast<int>(b->iov.size()), &b->c);
      if (s == Status::kNoResource) {
        {
          std::lock_guard<SpinLock> lock(g.mu);
          --g.inflight;
          Requeue(g, chunks);
        }
        b->ops.clear();
        b->rts_ids.clear();
        b->data_with_rts.clear();
        r.PutBuf(b);
        r.MarkDirty(g);  // retried on the next pass of the rail's task
        return;
      }
      // The announced rendezvous with early data: their parts leave now
      // (the drivers' own rendezvous holds them until the receiver posts
      // its receives), or fail with the packet that carried the RTS.
      for (SendOp* op : b->data_with_rts) {
        if (IsError(s)) {
          FinishUser(op, s);
          Free(op);
        } else {
          StartRdvSend(g.rank, op, op->len);
        }
      }
      b->data_with_rts.clear();
      Bump(r.counters.packets_sent);
      Bump(r.counters.chunks_sent, chunks.size());
      for (PendingChunk* pc : chunks) {
        const ChunkKind k = static_cast<SendOp*>(pc)->kind;
        if (k == ChunkKind::kData) Bump(r.counters.eager_sent);
        if (k == ChunkKind::kRts) Bump(r.counters.rendezvous_sent);
      }
      if (s == Status::kInProgress) continue;
      FinishPacket(*b, s);  // kOk or an error
    }
  }

  // A short packet that leaves now (the driver copies it out before
  // returning, or it is written in place in the driver's FIFO), rail
  // held and gate locked and idle: kOk, or kNoResource (not now: the rail
  // sends no packet this large at once, or its FIFO is full) or an error,
  // with nothing sent.
  Status PostShortNow(Rail& r, const Gate& g, const GateQueue& q,
                      uint32_t session, int tag, const void* buf,
                      size_t len) noexcept {
    const int dest = g.rank;
    const size_t total = wire::kShortHeaderSize + len;
    if (uint8_t* room = r.driver->ReservePacket(dest, total)) {
      WriteShortPacket(room, session, q.next_seq, tag, buf, len);
      r.driver->CommitPacket(dest, total);
      return Status::kOk;
    }
    // The header and the caller's bytes as they are: the driver gathers
    // both (one copy of the payload, not two).
    alignas(8) uint8_t header[wire::kShortHeaderSize];
    wire::WriteShortHeader(header, session, q.next_seq, tag);
    iovec iov[2] = {{header, wire::kShortHeaderSize},
                    {const_cast<void*>(buf), len}};
    const Status st = r.driver->PostPacket(dest, iov, len ? 2 : 1, nullptr);
    // Refused: this size is not sent at once by this rail (or its queue is
    // full); later ones this large take a buffer. A driver that promised
    // the size (g.immediate_max) only had a full queue.
    if (st == Status::kNoResource && g.immediate_max == 0)
      r.immediate_max = std::max<size_t>(total - 1, kMinImmediate);
    return st;
  }

  // The small-message fast path: when nothing is queued at the gate and
  // this thread gets the rail, the message leaves now as one short packet
  // (nmad/wire.h): no operation, no queue, no allocation. The packet is
  // built on the stack and copied out by the driver at once (PostPacket
  // without a completion) when it fits the rail's immediate size: `req` is
  // then complete. Else it goes in a pooled packet buffer, and `req`
  // completes with the packet (the driver may still hold it in its own
  // queue, which only this process's progress empties: the sender keeps
  // polling until then, as with any send). False: nothing was sent, take
  // the ordinary path. With `req` null (TrySendNow) only a packet that
  // leaves now is sent: nothing is left to complete.
  bool TrySendShort(SessionState* s, int dest, int tag, const void* buf,
                    size_t len, Request* req) noexcept {
    Gate& g = *gates[dest];
    Rail& r = *rails[g.packet_rail];
    if (!r.TryHold()) return false;
    bool sent = false;
    {
      std::lock_guard<SpinLock> lock(g.mu);
      if (!g.failed.load(std::memory_order_relaxed) && g.control.empty() &&
          g.active.empty()) {
        GateQueue& q = QueueOf(g, *s);
        const size_t total = wire::kShortHeaderSize + len;
        Status st = Status::kNoResource;
        if (total <= (g.immediate_max ? g.immediate_max : r.immediate_max))
          st = PostShortNow(r, g, q, s->id, tag, buf, len);
        if (st == Status::kNoResource && req != nullptr &&
            g.inflight < kMaxInflightPackets) {
          PacketBuf* b = r.GetBuf();
          b->gate = &g;
          uint8_t* h = b->header.data();
          WriteShortPacket(h, s->id, q.next_seq, tag, buf, len);
          iovec iov{h, total};
          ++g.inflight;  // FinishPacket gives it back
          st = r.driver->PostPacket(dest, &iov, 1, &b->c);
          if (st == Status::kInProgress) {
            // Completes from a Poll, which needs this rail: not before
            // the request is claimed here.
            Claim(*req);
            b->req = req;
          } else {
            --g.inflight;
            r.PutBuf(b);
          }
        }
        if (st == Status::kOk && req != nullptr) {
          req->info_ = RecvInfo{};
          req->background_ = nullptr;
          req->Complete(Status::kOk);
        }
        if (st == Status::kOk || st == Status::kInProgress) {
          ++q.next_seq;
          ++q.next_order;
          sent = true;
        }
      }
    }
    if (sent) {
      Bump(r.counters.packets_sent);
      Bump(r.counters.chunks_sent);
      Bump(r.counters.eager_sent);
    }
    r.Release();
    return sent;
  }

  void SendRtr(int peer, uint64_t rdv_id, uint64_t accepted) noexcept {
    SendOp* op = NewSend();
    op->kind = ChunkKind::kRtr;
    op->dest = peer;
    op->rdv_id = rdv_id;
    op->accepted = accepted;
    op->wire_bytes = wire::ChunkHeaderSize(ChunkKind::kRtr);
    Gate& g = *gates[peer];
    if (!Enqueue(g, nullptr, op)) {
      Free(op);
      return;
    }
    Kick(g);
  }

  // Fills the rendezvous plan of a large send.
  void PlanRendezvous(SessionState* s, SendOp* op) {
    op->rdv_id = next_rdv.fetch_add(1, std::memory_order_relaxed);
    // On the stack: a rendezvous allocates nothing (at most 8 rails).
    strategies::RailInfo infos[strategies::kMaxRdvParts];
    int n = 0;
    if (op->dest != rank)
      for (int i = 0; i < loopback && n < static_cast<int>(std::size(infos));
           ++i) {
        double bw = options.rail_bandwidth_mbps.empty()
                        ? rails[i]->driver->caps().bandwidth_bytes_per_s
                        : options.rail_bandwidth_mbps[i] * 1e6;
        infos[n++] = {i, bw};
      }
    op->nparts = PlanParts(op->len, op->dest == rank, loopback,
                           std::span<const strategies::RailInfo>(infos, n),
                           *s->strategy, op->parts);
  }

  // ---- rendezvous data ----
  static void SendPartDone(Completion* c, Status s, size_t bytes) noexcept {
    auto* pc = reinterpret_cast<PartCompletion*>(c);
    auto* op = static_cast<SendOp*>(pc->owner);
    if (IsError(s)) op->worst = s;
    if (op->driver_ops.fetch_sub(1, std::memory_order_acq_rel) == 1)
      op->core->FinishRdvSend(op);
  }

  void FinishRdvSend(SendOp* op) noexcept {
    Gate& g = *gates[op->dest];
    {
      std::lock_guard<SpinLock> lock(g.mu);
      auto it = std::find(g.rdv_sending.begin(), g.rdv_sending.end(), op);
      if (it != g.rdv_sending.end()) g.rdv_sending.erase(it);
    }
    FinishUser(op, op->worst);
    Free(op);
  }

  static void RecvPartDone(Completion* c, Status s, size_t bytes) noexcept {
    auto* pc = reinterpret_cast<PartCompletion*>(c);
    auto* op = static_cast<RecvOp*>(pc->owner);
    if (IsError(s) && s != Status::kTruncated) op->worst = s;
    if (op->scratch && pc == &op->part_done[op->scratch_part] &&
        s == Status::kOk)
      std::memcpy(op->scratch_dst, op->scratch.get(), op->scratch_len);
    if (op->driver_ops.fetch_sub(1, std::memory_order_acq_rel) == 1)
      op->core->FinishRecv(op);
  }

  // The last part of a rendezvous receive is done: leave the gate's list
  // (where a peer failure would find it), tell the user, free.
  void FinishRecv(RecvOp* op) noexcept {
    if (op->peer >= 0) {
      Gate& g = *gates[op->peer];
      std::lock_guard<SpinLock> lock(g.mu);
      auto it = std::find(g.rdv_receiving.begin(), g.rdv_receiving.end(), op);
      if (it != g.rdv_receiving.end()) g.rdv_receiving.erase(it);
    }
    Status s = op->worst;
    if (s == Status::kOk && op->req &&
        op->req->info_.received < op->req->info_.size)
      s = Status::kTruncated;
    FinishUser(op, s);
    Free(op);
  }

  // Starts the data phase of a matched rendezvous (receiver side). With
  // `data_posted` (kRtsDataPosted) the sender has posted every part
  // already and waits for no ready-to-receive: each non-empty part gets a
  // receive, trimmed to what this receive takes (0 bytes drains a part it
  // does not take, so that the sender's part completes).
  void StartRdvRecv(RecvOp* op, int peer, uint64_t rdv_id, uint64_t msg_size,
                    const wire::RdvPart* parts, int nparts,
                    bool data_posted) noexcept {
    uint64_t accepted = std::min<uint64_t>(op->len, msg_size);
    if (op->req) {
      op->req->info_.size = msg_size;
      op->req->info_.received = accepted;
    }
    wire::RdvPart trimmed[wire::kMaxParts];
    int active = TrimParts(parts, nparts, accepted, trimmed);
    op->peer = peer;
    op->core = this;
    if (data_posted) {
      StartEarlyRdvRecv(op, peer, rdv_id, parts, nparts, trimmed);
      return;
    }
    if (!PartsOnValidRails(trimmed, nparts, peer == rank, loopback)) {
      counters.bad_packets.fetch_add(1);
      active = 0;  // refuse the whole transfer
      accepted = 0;
    }
    SendRtr(peer, rdv_id, active ? accepted : 0);
    if (active == 0) {
      if (op->req) op->req->info_.received = 0;
      FinishRecv(op);
      return;
    }
    op->driver_ops.store(active, std::memory_order_release);
    uint64_t offset = 0;
    for (int i = 0; i < nparts; ++i) {
      const uint64_t n = trimmed[i].bytes;
      if (n == 0) continue;
      PostRecvPart(op, i, trimmed[i].rail, peer, rdv_id, op->buf + offset, n);
      offset += n;
    }
  }

  // Posts the receive of part `i` of rendezvous `rdv_id` from `peer` on
  // `rail`, `len` bytes at `dst`, completing into `op`.
  void PostRecvPart(RecvOp* op, int i, int rail, int peer, uint64_t rdv_id,
                    uint8_t* dst, uint64_t len) noexcept {
    PartCompletion& pc = op->part_done[i];
    pc.c.fn = &RecvPartDone;
    pc.owner = op;
    const uint64_t key = RdvKey(rdv_id, i);
    Rail& r = *rails[rail];
    r.Run([&r, peer, key, dst, len, pc = &pc] {
      Status s = r.driver->PostRdvRecv(peer, key, dst, len, &pc->c);
      if (s != Status::kInProgress) RecvPartDone(&pc->c, s, 0);
    });
  }

  // StartRdvRecv's early-data path: `trimmed` is the sender's plan
  // `parts` trimmed to what `op` accepts.
  void StartEarlyRdvRecv(RecvOp* op, int peer, uint64_t rdv_id,
                         const wire::RdvPart* parts, int nparts,
                         const wire::RdvPart* trimmed) noexcept {
    int posted = 0;
    for (int i = 0; i < nparts; ++i) posted += parts[i].bytes > 0 ? 1 : 0;
    // The plan was checked at decoding (parts add up); a part on a rail
    // that is not a remote one cannot be received (nor drained): refuse
    // the message (the sender's parts on such rails fail by themselves).
    if (posted == 0 || !PartsOnValidRails(parts, nparts, peer == rank,
                                          loopback)) {
      if (posted != 0) counters.bad_packets.fetch_add(1);
      if (op->req) op->req->info_.received = 0;
      FinishRecv(op);
      return;
    }
    op->driver_ops.store(posted, std::memory_order_release);
    uint64_t offset = 0;
    for (int i = 0; i < nparts; ++i) {
      const uint64_t whole = parts[i].bytes;
      if (whole == 0) continue;
      const uint64_t n = trimmed[i].bytes;
      uint8_t* dst = n > 0 ? op->buf + offset : nullptr;
      uint64_t len = n;
      if (n > 0 && n < whole) {
        // The part that straddles the end of the buffer: whole into
        // scratch, its head copied out at completion.
        op->scratch.reset(new (std::nothrow) uint8_t[whole]);
        if (op->scratch) {
          op->scratch_part = i;
          op->scratch_dst = dst;
          op->scratch_len = n;
          dst = op->scratch.get();
          len = whole;
        } else {
          // No memory for it: drain the part, deliver nothing of it.
          if (op->req) op->req->info_.received = offset;
          dst = nullptr;
          len = 0;
        }
      }
      offset += n;
      PostRecvPart(op, i, parts[i].rail, peer, rdv_id, dst, len);
    }
  }

  // The peer is ready: sends the data (sender side). Rail lock held.
  void HandleRtr(int peer, const ChunkView& c) noexcept {
    Gate& g = *gates[peer];
    SendOp* op = nullptr;
    {
      std::lock_guard<SpinLock> lock(g.mu);
      auto it = g.rdv_waiting.find(c.rdv_id);
      if (it != g.rdv_waiting.end()) {
        op = it->second;
        g.rdv_waiting.erase(it);
      }
    }
    if (op == nullptr || c.accepted > op->len) {
      counters.bad_packets.fetch_add(1);
      RONDO_LOG_WARN(
          "nmad: dropped a ready-to-receive from rank {} for unknown "
          "rendezvous {}",
          peer, c.rdv_id);
      return;
    }
    StartRdvSend(peer, op, c.accepted);
  }

  // Posts the parts of rendezvous send `op` to `peer`, trimmed to the
  // `accepted` first bytes: after its ready-to-receive, or with its RTS
  // (data_posted, all of it). Rail lock held.
  void StartRdvSend(int peer, SendOp* op, uint64_t accepted) noexcept {
    Gate& g = *gates[peer];
    wire::RdvPart trimmed[wire::kMaxParts];
    int active = TrimParts(op->parts, op->nparts, accepted, trimmed);
    if (active == 0) {
      FinishUser(op, Status::kOk);
      Free(op);
      return;
    }
    op->core = this;
    op->driver_ops.store(active, std::memory_order_release);
    {
      std::lock_guard<SpinLock> lock(g.mu);
      g.rdv_sending.push_back(op);
    }
    uint64_t offset = 0;
    for (int i = 0; i < op->nparts; ++i) {
      const uint64_t n = trimmed[i].bytes;
      if (n == 0) continue;
      PartCompletion& pc = op->part_done[i];
      pc.c.fn = &SendPartDone;
      pc.owner = op;
      const uint8_t* src = op->data + offset;
      offset += n;
      const uint64_t key = RdvKey(op->rdv_id, i);
      Rail& r = *rails[trimmed[i].rail];
      r.bytes.fetch_add(n, std::memory_order_relaxed);
      r.Run([&r, peer, key, src, n, pc = &pc] {
        Status s = r.driver->PostRdvSend(peer, key, src, n, &pc->c);
        if (s != Status::kInProgress) SendPartDone(&pc->c, s, 0);
      });
    }
  }

  // ---- receiving ----
  // Flattened (as Session::TrySendNow and Session::Irecv): decoding,
  // ordering, matching and completion of an arriving message inline, one
  // function where -O2 left seven calls (docs/performance.md, "Flattened
  // entry points").
  [[gnu::flatten]]
  void OnPacket(int peer, int rail, const void* data,
                size_t len) noexcept override {
    if (rail >= 0 && rail < static_cast<int>(rails.size()))
      Bump(rails[static_cast<size_t>(rail)]->counters.packets_received);
    // The short packet (one eager message) is the receive's critical path:
    // no reason string and no chunk array in this frame (their set-up and
    // the 14 KiB frame cost about 20 instructions per message); the rest
    // and the refusals are out of line.
    if (wire::IsShortPacket(data, len)) [[likely]] {
      alignas(ChunkView) unsigned char one[sizeof(ChunkView)];
      auto* c = reinterpret_cast<ChunkView*>(one);
      if (peer >= 0 && peer < size && wire::DecodeShort(data, len, c, nullptr))
          [[likely]] {
        DeliverChunk(peer, *c);
        return;
      }
      RefuseShort(peer, rail, data, len);
      return;
    }
    OnLongPacket(peer, rail, data, len);
  }

  [[gnu::noinline]] void RefuseShort(int peer, int rail, const void* data,
                                     size_t len) noexcept {
    if (peer < 0 || peer >= size) {
      DropPacket(peer, rail, len, "unknown rank");
      return;
    }
    std::string why;
    alignas(ChunkView) unsigned char one[sizeof(ChunkView)];
    (void)wire::DecodeShort(data, len, reinterpret_cast<ChunkView*>(one),
                            &why);
    DropPacket(peer, rail, len, why.c_str());
  }

  [[gnu::noinline]] void OnLongPacket(int peer, int rail, const void* data,
                                      size_t len) noexcept {
    std::string why;
    // Storage for the chunks; DecodePacket constructs only those it finds.
    alignas(ChunkView) unsigned char
        storage[sizeof(ChunkView) * wire::kMaxChunksPerPacket];
    auto* chunks = reinterpret_cast<ChunkView*>(storage);
    int n = wire::DecodePacket(data, len, chunks, wire::kMaxChunksPerPacket,
                               &why);
    if (n < 0 || peer < 0 || peer >= size) {
      DropPacket(peer, rail, len, n < 0 ? why.c_str() : "unknown rank");
      return;
    }
    for (int i = 0; i < n; ++i) DeliverChunk(peer, chunks[i]);
  }

  void DropPacket(int peer, int rail, size_t len, const char* why) noexcept {
    uint64_t k = counters.bad_packets.fetch_add(1) + 1;
    if (k <= 10 || (k & (k - 1)) == 0)
      RONDO_LOG_WARN(
          "nmad: dropped a bad packet of {} bytes from rank {} on rail {} "
          "({}); {} dropped so far",
          len, peer, rail, why, k);
  }

  // One decoded chunk from `peer` (rail lock held).
  void DeliverChunk(int peer, const ChunkView& c) noexcept {
    if (c.kind == ChunkKind::kRtr) {
      HandleRtr(peer, c);
      return;
    }
    SessionState* s = FindSession(c.session);
    if (s == nullptr) {
      std::unique_lock<std::shared_mutex> lock(sessions_mu);
      auto it = sessions.find(c.session);
      if (it == sessions.end()) {
        early.push_back(Stash(peer, c));
        return;
      }
      s = it->second.get();
    }
    Deliver(s, peer, c, nullptr);
  }

  SessionState* FindSession(uint32_t id) {
    // The first sessions opened, without a lock (sessions live as long as
    // the core; the slots are written once, under sessions_mu).
    for (auto& slot : session_slots) {
      SessionState* s = slot.load(std::memory_order_acquire);
      if (s == nullptr) break;
      if (s->id == id) return s;
    }
    std::shared_lock<std::shared_mutex> lock(sessions_mu);
    auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second.get();
  }

  // A chunk for session `s` (from the wire, or replayed from `stash`, which
  // this call then owns).
  void Deliver(SessionState* s, int peer, const ChunkView& c,
               Stashed* stash) noexcept {
    if (c.kind == ChunkKind::kAm || c.kind == ChunkKind::kAmRts) {
      RunHandler(s, peer, c);
      Free(stash);
      return;
    }
    std::lock_guard<SpinLock> lock(s->mu);
    PeerRecvState& from = s->from[peer];
    if (!from.is_next(c.seq)) {
      if (from.IsDuplicate(c.seq)) {
        counters.bad_packets.fetch_add(1);
        Free(stash);
        return;  // a duplicate: drop
      }
      from.Keep(c.seq, stash ? stash : Stash(peer, c));
      counters.reordered.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    Match(s, peer, c, stash);
    from.Advance();
    MatchReordered(s, peer, from);
  }

  // Session lock held: matches the chunks from `peer` kept for the
  // sequence numbers that are now next.
  void MatchReordered(SessionState* s, int peer, PeerRecvState& from) {
    while (Stashed* next = from.TakeNext()) {
      Match(s, peer, next->view, next);
      from.Advance();
    }
  }

  // Session lock held. Removes and returns the receive that a message from
  // `peer` with `tag` matches, or null; with `peek`, leaves it posted.
  static RecvOp* TakePosted(SessionState* s, int peer, int tag,
                            bool peek = false) noexcept {
    return static_cast<RecvOp*>(s->match.MatchMessage(peer, tag, peek));
  }

  // Session lock held; `stash` (may be null) is owned by this call.
  void Match(SessionState* s, int peer, const ChunkView& c,
             Stashed* stash) noexcept {
    RecvOp* r = TakePosted(s, peer, c.tag);
    if (r == nullptr) {
      s->match.Arrive(stash ? stash : Stash(peer, c));
      counters.unexpected.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    Consume(r, peer, c, &s->recv_cache);
    Free(stash);
  }

  // Hands a matched message to receive `r`. `cache`: the session's, when
  // its lock is held (a finished receive goes back there), else null.
  void Consume(RecvOp* r, int peer, const ChunkView& c,
               Pool<RecvOp>::Cache* cache = nullptr) noexcept {
    if (r->req) {
      r->req->info_.source = peer;
      r->req->info_.tag = c.tag;
    }
    if (c.kind == ChunkKind::kData) {
      const size_t n = std::min<size_t>(r->len, c.payload_size);
      wire::CopyPayload(r->buf, c.payload, n);
      if (r->req) {
        r->req->info_.size = c.payload_size;
        r->req->info_.received = n;
      }
      // `r` is this call's alone: every caller took it from the posted
      // queue or never posted it, and it goes back to the pool below, so
      // no other path (a cancel, a peer's failure, the shutdown) can reach
      // it: it completes without FinishUser's exchange, which settles a
      // race between those paths (a locked instruction per message).
      if (r->req)
        r->req->Complete(n < c.payload_size ? Status::kTruncated
                                            : Status::kOk);
      if (cache != nullptr)
        cache->Put(recv_pool, r);
      else
        Free(r);
      return;
    }
    // A rendezvous needs this rank's progress: count the receive now if
    // Irecv did not (eager_only).
    if (r->req) RequestAccess::Background(*r->req, *engine);
    Gate& g = *gates[peer];
    {
      std::lock_guard<SpinLock> lock(g.mu);
      if (g.failed.load()) {
        FinishUser(r, Status::kPeerFailed);
        Free(r);
        return;
      }
      g.rdv_receiving.push_back(r);
    }
    StartRdvRecv(r, peer, c.rdv_id, c.msg_size, c.parts, c.nparts,
                 c.kind == ChunkKind::kRts &&
                     (c.flags & wire::kRtsDataPosted) != 0);
  }

  void RunHandler(SessionState* s, int peer, const ChunkView& c) noexcept {
    switch (AmDispatch::Run(s->handlers, this, peer, s->id, c)) {
      case AmOutcome::kNoHandler:
        counters.am_dropped.fetch_add(1);
        if (c.kind == ChunkKind::kAmRts) SendRtr(peer, c.rdv_id, 0);
        return;
      case AmOutcome::kBodyDeclined:
        SendRtr(peer, c.rdv_id, 0);
        return;
      case AmOutcome::kDelivered:
        return;
    }
  }

  Status ReceiveAmBody(AmMessage& m, void* buf, size_t len,
                       Request& req) noexcept {
    if (m.body_taken_) return Status::kBusy;
    if (buf == nullptr && len > 0) return Status::kInvalidArgument;
    uint32_t expect = Request::kIdle;
    if (!req.state_.compare_exchange_strong(expect, Request::kPending) &&
        expect != Request::kDone)
      return Status::kBusy;
    req.state_.store(Request::kPending);
    m.body_taken_ = true;
    req.info_ = {m.source_, -1, m.body_size_, std::min(len, m.body_size_)};
    if (m.body_inline_) {
      if (req.info_.received) std::memcpy(buf, m.body_.data(), req.info_.received);
      req.Complete(req.info_.received < m.body_size_ ? Status::kTruncated
                                                     : Status::kOk);
      return Status::kOk;
    }
    RecvOp* r = NewRecv();
    r->buf = static_cast<uint8_t*>(buf);
    r->len = len;
    r->req = &req;
    req.background_ = engine;  // a rendezvous to progress
    engine->BeginBackground();
    Gate& g = *gates[m.source_];
    {
      std::lock_guard<SpinLock> lock(g.mu);
      g.rdv_receiving.push_back(r);
    }
    StartRdvRecv(r, m.source_, m.rdv_id_, m.body_size_,
                 static_cast<const wire::RdvPart*>(m.parts_), m.nparts_,
                 /*data_posted=*/false);
    return Status::kOk;
  }

  static SessionState& State(const Session& s) {
    return *static_cast<SessionState*>(s.impl_);
  }

  // Marks `req` pending for a new operation; false if it is still in use.
  // Every claimed request completes (Request::Complete), which ends the
  // background work counted here: a request in flight is what a quiet
  // progress thread progresses while the application computes.
  bool Claim(Request& req) noexcept {
    return RequestAccess::Claim(req, *engine);
  }

  Status CheckPeer(int peer, bool any_ok) const noexcept {
    if (stopping.load(std::memory_order_relaxed)) return Status::kShutdown;
    if (any_ok && peer == kAnySource) return Status::kOk;
    if (peer < 0 || peer >= size) return Status::kInvalidArgument;
    if (gates[peer]->failed.load(std::memory_order_acquire))
      return Status::kPeerFailed;
    return Status::kOk;
  }

  Status Isend(SessionState* s, int dest, int tag, const void* buf,
               size_t len, Request& req, int priority,
               bool synchronous = false) noexcept {
    if (Status st = CheckPeer(dest, false); st != Status::kOk) return st;
    if (tag < 0 || (buf == nullptr && len > 0)) return Status::kInvalidArgument;
    if (req.state_.load(std::memory_order_acquire) == Request::kPending)
      return Status::kBusy;
    const size_t eager_limit = gates[dest]->eager_limit;
    if (len <= kShortMax && len <= eager_limit && !synchronous &&
        !s->strategy->defers_sends() &&
        TrySendShort(s, dest, tag, buf, len, &req))
      return Status::kOk;
    if (!Claim(req)) return Status::kBusy;
    SendOp* op = NewSend();
    op->dest = dest;
    op->session = s->id;
    op->tag = tag;
    op->priority = priority;
    op->data = static_cast<const uint8_t*>(buf);
    op->len = len;
    op->req = &req;
    if (len <= eager_limit && !synchronous) {
      op->kind = ChunkKind::kData;
      op->wire_bytes = wire::ChunkHeaderSize(ChunkKind::kData) + len;
    } else {
      op->kind = ChunkKind::kRts;
      PlanRendezvous(s, op);
      op->wire_bytes = wire::ChunkHeaderSize(ChunkKind::kRts, op->nparts);
      // Early data: a synchronous send must not complete before the
      // receiver matched, which only the ready-to-receive tells.
      op->data_posted =
          options.rdv_early_data && !synchronous && dest != rank;
    }
    return Post(s, op);
  }

  // Session::TrySendNow: the short path of Isend without a request, for
  // what leaves at once.
  Status TrySendNow(SessionState* s, int dest, int tag, const void* buf,
                    size_t len) noexcept {
    if (Status st = CheckPeer(dest, false); st != Status::kOk) return st;
    if (tag < 0 || (buf == nullptr && len > 0)) return Status::kInvalidArgument;
    const Gate& g = *gates[dest];
    if (len > kShortMax || len > g.eager_limit ||
        s->strategy->defers_sends() ||
        !TrySendShort(s, dest, tag, buf, len, nullptr))
      return Status::kNoResource;
    return Status::kOk;
  }

  // Queues a new send (message or active message) at its gate and, as the
  // session's strategy wants, flushes now or leaves it for the rail's task.
  Status Post(SessionState* s, SendOp* op) noexcept {
    Gate& g = *gates[op->dest];
    if (!Enqueue(g, s, op)) {
      Request* req = op->req;
      Free(op);
      req->Complete(Status::kPeerFailed);
      return Status::kPeerFailed;
    }
    if (!s->strategy->defers_sends()) Kick(g);
    else MarkDirty(g);
    return Status::kOk;
  }

  // Leaves `gate` for the next pass of its rail's task.
  void MarkDirty(Gate& gate) noexcept {
    Rail& r = *rails[gate.packet_rail];
    r.MarkDirty(gate);
    r.Notify();
  }

  Status SendAm(SessionState* s, int dest, uint32_t id, const void* header,
                size_t header_len, const void* body, size_t body_len,
                Request& req, int priority = 0) noexcept {
    if (Status st = CheckPeer(dest, false); st != Status::kOk) return st;
    if (Status st = CheckAmSend(id, header, header_len, body, body_len,
                                options.max_packet);
        st != Status::kOk)
      return st;
    if (!Claim(req)) return Status::kBusy;
    SendOp* op = NewSend();
    op->dest = dest;
    op->session = s->id;
    op->handler = id;
    op->am_header = static_cast<const uint8_t*>(header);
    op->am_header_size = static_cast<uint32_t>(header_len);
    op->data = static_cast<const uint8_t*>(body);
    op->len = body_len;
    op->req = &req;
    op->priority = priority;
    if (header_len + body_len <= options.eager_limit) {
      op->kind = ChunkKind::kAm;
      op->wire_bytes =
          wire::ChunkHeaderSize(ChunkKind::kAm) + header_len + body_len;
    } else {
      op->kind = ChunkKind::kAmRts;
      PlanRendezvous(s, op);
      op->wire_bytes =
          wire::ChunkHeaderSize(ChunkKind::kAmRts, op->nparts) + header_len;
    }
    return Post(s, op);
  }

  // ---- dynamic broadcasts: the core as their BroadcastHost ----
  // (nmad/dynamic_bcast_client.h runs them.)

  uint32_t ReserveSeq(uint32_t session, int peer) noexcept override {
    return internal::ReserveSeq(*gates[peer], *FindSession(session));
  }

  Status SendOnChannel(int dest, std::span<const uint8_t> header,
                       const uint8_t* body, size_t len, Request& req,
                       int priority) noexcept override {
    return SendAm(bcast_channel, dest, kBcastHandler, header.data(),
                  header.size(), body, len, req, priority);
  }

  Status ReceiveBody(AmMessage& m, void* buf, size_t len,
                     Request& req) noexcept override {
    return m.ReceiveBody(buf, len, req);
  }

  void FinishInPlace(RecvOp* r, Status s) noexcept override {
    FinishUser(r, s);
    Free(r);
  }

  // The receive that the broadcast described by `h` is matched to, taken
  // now if the message it carries is the next one from the root and a
  // posted receive matches it with room for all the data; else null (the
  // data is then kept and delivered like a message: DeliverData).
  // Matching at the header, before the data is here, is what a rendezvous
  // does; the root's order is kept because the message is the next one.
  RecvOp* ClaimInPlace(const BroadcastHeader& h,
                       uint8_t** buf) noexcept override {
    SessionState* s = FindSession(h.session);
    if (s == nullptr) return nullptr;
    std::lock_guard<SpinLock> lock(s->mu);
    PeerRecvState& from = s->from[h.root];
    if (!from.is_next(h.self_seq)) return nullptr;
    RecvOp* r = TakePosted(s, h.root, h.tag, /*peek=*/true);
    if (r == nullptr || r->len < h.length) return nullptr;
    TakePosted(s, h.root, h.tag);
    r->peer = h.root;
    if (r->req) r->req->info_ = RecvInfo{h.root, h.tag, h.length, h.length};
    from.Advance();
    MatchReordered(s, h.root, from);
    *buf = r->buf;
    return r;
  }

  // Delivers a broadcast's data as the message `seq` from `root` in session
  // `sid`: matched like any message, in the root's stream order.
  void DeliverData(uint32_t sid, int root, uint32_t seq, int tag,
                   std::shared_ptr<std::vector<uint8_t>> data) noexcept override {
    Stashed* m = stash_pool.Get();
    m->peer = root;
    m->tag = tag;
    m->view.kind = ChunkKind::kData;
    m->view.session = sid;
    m->view.seq = seq;
    m->view.tag = tag;
    m->view.payload = data->data();
    m->view.payload_size = data->size();
    m->view.msg_size = data->size();
    m->keep = std::move(data);
    SessionState* s = FindSession(sid);
    if (s == nullptr) {
      std::unique_lock<std::shared_mutex> lock(sessions_mu);
      auto it = sessions.find(sid);
      if (it == sessions.end()) {
        early.push_back(m);  // replayed when the session opens
        return;
      }
      s = it->second.get();
    }
    Rail& r = *rails[root == rank ? loopback : 0];
    r.Run([this, s, m] { Deliver(s, m->peer, m->view, m); });
  }

  Status Irecv(SessionState* s, int source, int tag, void* buf, size_t len,
               Request& req) noexcept {
    const Status peer_status = CheckPeer(source, true);
    if (peer_status != Status::kOk && peer_status != Status::kPeerFailed)
      return peer_status;
    if (tag < kAnyTag || (buf == nullptr && len > 0))
      return Status::kInvalidArgument;
    if (peer_status == Status::kPeerFailed) {
      // A message that arrived before its sender failed is still delivered
      // (eager data: a rendezvous would need the dead sender); else the
      // receive is refused.
      std::lock_guard<SpinLock> lock(s->mu);
      auto* m = static_cast<Stashed*>(
          s->match.MatchReceive(source, tag, /*take=*/false));
      if (m == nullptr || m->view.kind != ChunkKind::kData)
        return Status::kPeerFailed;
    }
    // SessionOptions::eager_receives_by_caller: a receive from one peer
    // whose buffer is within the eager limit can only be completed by eager
    // data, which needs no protocol step from this rank (the bytes wait in
    // the kernel's socket buffer or the shared-memory ring until a poll
    // copies them out), so it is not counted as background work and a
    // quiet progress thread need not wake for it (docs/overlap.md). A
    // rendezvous that still reaches it (a sender with a smaller limit, a
    // truncation) counts it then (Consume).
    const bool eager_only = s->eager_receives_by_caller &&
                            source != kAnySource &&
                            len <= gates[source]->eager_limit;
    if (!RequestAccess::Claim(req, *engine, !eager_only))
      return Status::kBusy;
    RecvOp* r;
    Stashed* found = nullptr;
    {
      std::lock_guard<SpinLock> lock(s->mu);
      r = s->recv_cache.Get(recv_pool);
      r->core = this;
      r->source = source;
      r->tag = tag;
      r->buf = static_cast<uint8_t*>(buf);
      r->len = len;
      r->req = &req;
      found = static_cast<Stashed*>(
          s->match.MatchReceive(source, tag, /*take=*/true));
      if (found == nullptr && peer_status == Status::kOk) {
        s->match.Post(r);
        return Status::kOk;
      }
    }
    if (found == nullptr) {  // the failed peer's message was taken meanwhile
      FinishUser(r, Status::kPeerFailed);
      Free(r);
      return Status::kOk;
    }
    Consume(r, found->peer, found->view);
    Free(found);
    return Status::kOk;
  }

  Status CancelRecv(SessionState* s, Request& req) noexcept {
    RecvOp* found = nullptr;
    {
      std::lock_guard<SpinLock> lock(s->mu);
      s->match.RemovePostedIf(
          [&](const PostedReceive& p) {
            return found == nullptr &&
                   static_cast<const RecvOp&>(p).req == &req;
          },
          [&](PostedReceive* p) { found = static_cast<RecvOp*>(p); });
    }
    if (found == nullptr)
      return req.state_.load(std::memory_order_acquire) == Request::kPending
                 ? Status::kBusy
                 : Status::kInvalidArgument;
    req.info_ = RecvInfo{found->source, found->tag, 0, 0};
    FinishUser(found, Status::kCanceled);
    Free(found);
    return Status::kOk;
  }

  Status Iprobe(SessionState* s, int source, int tag, bool* found,
                RecvInfo* info) noexcept {
    return Probe(s, source, tag, found, info, nullptr);
  }

  Status Improbe(SessionState* s, int source, int tag, bool* found,
                 RecvInfo* info, Session::MatchedMessage* msg) noexcept {
    if (msg == nullptr) return Status::kInvalidArgument;
    return Probe(s, source, tag, found, info, msg);
  }

  // Iprobe, or with `msg` a matched probe: the message found is taken out
  // of matching and named by *msg.
  Status Probe(SessionState* s, int source, int tag, bool* found,
               RecvInfo* info, Session::MatchedMessage* msg) noexcept {
    if (found == nullptr) return Status::kInvalidArgument;
    if (source != kAnySource && (source < 0 || source >= size))
      return Status::kInvalidArgument;
    if (tag < kAnyTag) return Status::kInvalidArgument;
    *found = false;
    Progress();
    std::lock_guard<SpinLock> lock(s->mu);
    if (auto* m = static_cast<Stashed*>(
            s->match.MatchReceive(source, tag, /*take=*/msg != nullptr))) {
      *found = true;
      if (info) *info = {m->peer, m->view.tag, m->view.msg_size, 0};
      if (msg) msg->impl = m;
      return Status::kOk;
    }
    if (source != kAnySource && gates[source]->failed.load())
      return Status::kPeerFailed;
    return Status::kOk;
  }

  Status Mrecv(Session::MatchedMessage& msg, void* buf, size_t len,
               Request& req) noexcept {
    auto* m = static_cast<Stashed*>(msg.impl);
    if (m == nullptr || (buf == nullptr && len > 0))
      return Status::kInvalidArgument;
    if (!Claim(req)) return Status::kBusy;
    msg.impl = nullptr;
    RecvOp* r = NewRecv();
    r->source = m->peer;
    r->tag = m->view.tag;
    r->buf = static_cast<uint8_t*>(buf);
    r->len = len;
    r->req = &req;
    Consume(r, m->peer, m->view);
    Free(m);
    return Status::kOk;
  }

  // Explicit polling from a waiting thread. The rails are polled directly
  // (try-lock: a progress thread polling the same rail is left alone), which
  // is what a waiter is there for and skips the queue tree's pop and re-push
  // of the polling task; one pass in four goes through the engine so that
  // the other tasks queued on this core's path run too (bench/p2p/pingpong
  // measured ~30% of a small-message round trip in that walk).
  int Progress() noexcept {
    int n = 0;
    for (auto& r : rails)
      if (r->HasWork()) n += r->Poll();
    // The engine's queues hold this core's polling tasks (one per rail,
    // just done by hand); other tasks queued on this core's path get a pass
    // one time in four, and the tree is walked one time in 64 regardless.
    // The check reads the path's queue sizes and writes nothing.
    const uint32_t pass = ++t_waiter.pass;  // this thread's (t_waiter)
    if (((pass & 3) == 0 && OtherTasksOnPath((pass & 63) == 0)) ||
        (pass & 63) == 0)
      n += engine->Poll();
    if ((pass & 63) == 0) n += CheckBootstrapFailures();
    return n;
  }

  // Whether tasks other than the rails' polling tasks are queued on the
  // calling thread's path (a polling task being run elsewhere is not
  // queued: then one other task may wait for the 1-in-64 pass). The
  // thread's core and the count of this core's polling tasks on its path
  // are looked up again when `refresh` (one pass in 64) or for another
  // engine or core (t_waiter): Engine::CurrentCore is mostly sched_getcpu,
  // 67 instructions, where the rest of the check is a few loads. A thread
  // that moved meanwhile is seen by the 1-in-64 Engine::Poll, which looks
  // its core up afresh.
  bool OtherTasksOnPath(bool refresh) const noexcept {
    WaiterCore& w = t_waiter;
    if (refresh || w.engine_id != engine->id() || w.impl != this) {
      w.engine_id = engine->id();
      w.impl = this;
      w.core = engine->CurrentCore();
      w.own = 0;
      if (!rails.empty()) {
        const int node = rails[0]->poll_task.queue_node();
        for (int n : engine->queue_tree().PathOf(w.core))
          if (n == node) w.own = static_cast<int64_t>(rails.size());
      }
    }
    return engine->queued_on_path(w.core) > w.own;
  }

  // ---- failures ----
  void OnPeerFailure(int peer, int rail, Status status,
                     std::string_view what) noexcept override {
    PeerFailed(peer, "rail " + std::to_string(rail) + ": " + std::string(what));
  }

  void PeerFailed(int peer, const std::string& what) noexcept {
    if (peer < 0 || peer >= size || peer == rank) return;
    if (!failures.Record(peer, what)) return;
    RONDO_LOG_ERROR("nmad: rank {} lost rank {}: {}", rank, peer, what);
    // Operations in the drivers are freed by their completions (at the
    // latest when the rail closes); the user learns of the failure now.
    std::vector<SendOp*> sends;
    FailGate(
        *gates[peer], sends,
        [](RecvOp* r) { FinishUser(r, Status::kPeerFailed); },
        [](SendOp* op) { FinishUser(op, Status::kPeerFailed); });
    for (SendOp* op : sends) {
      FinishUser(op, Status::kPeerFailed);
      if (op->driver_ops.load() == 0) Free(op);  // never reached a driver
    }
    std::vector<SessionState*> all;
    {
      std::shared_lock<std::shared_mutex> lock(sessions_mu);
      for (auto& [id, s] : sessions) all.push_back(s.get());
    }
    for (SessionState* s : all) {
      std::lock_guard<SpinLock> lock(s->mu);
      std::vector<RecvOp*> failed;
      FailPosted(s->match, peer, [&](PostedReceive* r) {
        failed.push_back(static_cast<RecvOp*>(r));
      });
      for (RecvOp* r : failed) {
        FinishUser(r, Status::kPeerFailed);
        Free(r);
      }
    }
  }
};

}  // namespace internal

using internal::CoreImpl;
using internal::Gate;
using internal::RecvOp;
using internal::SendOp;
using internal::SessionState;
using internal::Stashed;
using internal::ChunkKind;


// ---- AmMessage ----
Status AmMessage::ReceiveBody(void* buf, size_t len, Request& req) noexcept {
  return core_->ReceiveAmBody(*this, buf, len, req);
}

// ---- Session ----
std::string_view Session::name() const noexcept {
  return CoreImpl::State(*this).name;
}
std::string_view Session::strategy() const noexcept {
  return CoreImpl::State(*this).strategy->name();
}
uint32_t Session::id() const noexcept { return CoreImpl::State(*this).id; }
int Session::rank() const noexcept { return core_->rank; }
int Session::size() const noexcept { return core_->size; }
Core& Session::core() const noexcept { return *core_->self; }

Status Session::Isend(int dest, int tag, const void* buf, size_t len,
                      Request& req, int priority) noexcept {
  return core_->Isend(&CoreImpl::State(*this), dest, tag, buf, len, req,
                      priority);
}
[[gnu::flatten]]
Status Session::TrySendNow(int dest, int tag, const void* buf,
                           size_t len) noexcept {
  return core_->TrySendNow(&CoreImpl::State(*this), dest, tag, buf, len);
}
Status Session::Issend(int dest, int tag, const void* buf, size_t len,
                       Request& req) noexcept {
  return core_->Isend(&CoreImpl::State(*this), dest, tag, buf, len, req, 0,
                      /*synchronous=*/true);
}
Status Session::CancelRecv(Request& req) noexcept {
  return core_->CancelRecv(&CoreImpl::State(*this), req);
}
Status Session::DynamicBroadcast(const void* buf, size_t len, int tag,
                                 std::span<const BroadcastTarget> targets,
                                 Request& req, std::string* error) noexcept {
  return core_->bcasts->Start(CoreImpl::State(*this).id, buf, len, tag,
                              targets, req, error);
}
[[gnu::flatten]]
Status Session::Irecv(int source, int tag, void* buf, size_t len,
                      Request& req) noexcept {
  return core_->Irecv(&CoreImpl::State(*this), source, tag, buf, len, req);
}
Status Session::Send(int dest, int tag, const void* buf, size_t len,
                     int priority) noexcept {
  Request req;
  if (Status s = Isend(dest, tag, buf, len, req, priority); s != Status::kOk)
    return s;
  return core_->self->Wait(req);
}
Status Session::Recv(int source, int tag, void* buf, size_t len,
                     RecvInfo* info) noexcept {
  Request req;
  if (Status s = Irecv(source, tag, buf, len, req); s != Status::kOk) return s;
  Status s = core_->self->Wait(req);
  if (info) *info = req.info();
  return s;
}
Status Session::Iprobe(int source, int tag, bool* found,
                       RecvInfo* info) noexcept {
  return core_->Iprobe(&CoreImpl::State(*this), source, tag, found, info);
}
Status Session::Improbe(int source, int tag, bool* found, RecvInfo* info,
                        MatchedMessage* msg) noexcept {
  return core_->Improbe(&CoreImpl::State(*this), source, tag, found, info,
                        msg);
}
Status Session::Mrecv(MatchedMessage& msg, void* buf, size_t len,
                      Request& req) noexcept {
  return core_->Mrecv(msg, buf, len, req);
}
Status Session::Probe(int source, int tag, RecvInfo* info) noexcept {
  for (;;) {
    bool found = false;
    Status s = Iprobe(source, tag, &found, info);
    if (s != Status::kOk || found) return s;
    queues::CpuRelax();
  }
}
Status Session::RegisterHandler(uint32_t id, AmHandler handler,
                                void* arg) noexcept {
  return CoreImpl::State(*this).handlers.Register(id, handler, arg);
}
Status Session::SendAm(int dest, uint32_t id, const void* header,
                       size_t header_len, const void* body, size_t body_len,
                       Request& req, int priority) noexcept {
  return core_->SendAm(&CoreImpl::State(*this), dest, id, header, header_len,
                       body, body_len, req, priority);
}

// ---- Core ----
namespace {

// The node whose cores share the widest cache with `core` (the polling
// affinity of the PIOMan paper): its L3, else L2, else its NUMA node.
topology::CpuSet PollingCpuSet(const topology::Topology& topo, int core) {
  int best = -1;
  for (int n = topo.CoreNode(core); n >= 0; n = topo.node(n).parent) {
    topology::NodeKind k = topo.node(n).kind;
    if (k == topology::NodeKind::kL3 || k == topology::NodeKind::kL2 ||
        k == topology::NodeKind::kL1)
      best = n;
    if (k == topology::NodeKind::kNuma && best < 0) best = n;
  }
  if (best < 0) best = topo.CoreNode(core);
  return topo.node(best).cpuset;
}

uint32_t SessionId(std::string_view name) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

Result<std::unique_ptr<Core>> Core::Create(
    engine::Engine& engine,
    std::unique_ptr<drivers::bootstrap::Bootstrap> bootstrap,
    NmadOptions options, const RailFactory& rail_factory, std::string* error) {
  auto fail = [error](Status s, std::string what) {
    if (error) *error = std::move(what);
    return s;
  };
  if (bootstrap == nullptr)
    return fail(Status::kInvalidArgument, "nmad: no bootstrap given");
  try {
    options.Validate();
  } catch (const std::invalid_argument& e) {
    return fail(Status::kInvalidArgument, e.what());
  }
  std::unique_ptr<Core> core(new Core);
  core->impl_ = std::make_unique<CoreImpl>();
  CoreImpl& c = *core->impl_;
  c.self = core.get();
  c.engine = &engine;
  c.options = options;
  c.rank = bootstrap->rank();
  c.size = bootstrap->size();
  c.bootstrap = std::move(bootstrap);
  c.failures.Resize(c.size);
  // The operations' pools are carved now: a first unexpected message (or
  // rendezvous) in a steady state allocates nothing
  // (tests/mpi/alloc_count_check.cc).
  c.recv_pool.Reserve();
  c.send_pool.Reserve();
  c.stash_pool.Reserve();
  const bool remote = c.size > 1;
  // Rails: the remote ones (only when there are remote peers), then loopback.
  if (remote) {
    for (size_t i = 0; i < options.rails.size(); ++i) {
      RailConfig rc;
      rc.kind = options.rails[i];
      rc.rail_id = static_cast<int>(i);
      rc.max_packet = options.max_packet;
      rc.self = c.rank;
      rc.peer_errors = options.ucx_peer_errors;
      rc.shm = options.shm;
      rc.bootstrap = c.bootstrap.get();
      rc.oversubscribed = engine.oversubscribed();
      std::string why;
      auto d = rail_factory.Create(rc, &why);
      if (!d.ok())
        return fail(Status::kUnsupported, "nmad: rail " + std::to_string(i) +
                                              " (" + options.rails[i] +
                                              "): " + why);
      auto r = std::make_unique<internal::Rail>();
      r->driver = std::move(d).value();
      c.rails.push_back(std::move(r));
    }
  }
  c.loopback = static_cast<int>(c.rails.size());
  {
    auto r = std::make_unique<internal::Rail>();
    r->driver = std::make_unique<drivers::loopback::LoopbackDriver>(c.rank);
    c.rails.push_back(std::move(r));
  }
  for (size_t i = 0; i < c.rails.size(); ++i) {
    internal::Rail& r = *c.rails[i];
    r.index = static_cast<int>(i);
    r.client = &c;
    r.engine = &engine;
    r.notify_after_post = r.index == c.loopback;
    r.buf_bytes = internal::PacketBufBytes();
    r.packet_done = &CoreImpl::PacketDone;
    r.immediate_max = internal::kFirstImmediate;
    r.driver->SetSink(&c, static_cast<int>(i));
  }
  // Address exchange.
  for (int i = 0; i < c.loopback; ++i) {
    auto addr = c.rails[i]->driver->LocalAddress();
    if (!addr.ok())
      return fail(addr.status(), "nmad: rail " + std::to_string(i) +
                                     " has no local address");
    if (Status s = c.bootstrap->Put("nmad.rail" + std::to_string(i),
                                     addr.value());
        s != Status::kOk)
      return fail(s, "nmad: bootstrap Put failed");
  }
  // The node each rank is on (nmad/node.h: emulated hosts are nodes of
  // their own), for the eager limit to its rank.
  const std::string node = NodeKey();
  if (Status s = c.bootstrap->Put(
          "nmad.node", std::span<const uint8_t>(
                           reinterpret_cast<const uint8_t*>(node.data()),
                           node.size()));
      s != Status::kOk)
    return fail(s, "nmad: bootstrap Put failed");
  if (Status s = c.bootstrap->Fence(); s != Status::kOk)
    return fail(s, std::string("nmad: bootstrap fence failed: ") +
                       std::string(engine::StatusName(s)));
  for (int peer = 0; peer < c.size; ++peer) {
    auto g = std::make_unique<Gate>();
    g->rank = peer;
    g->packet_rail = peer == c.rank ? c.loopback : 0;
    g->eager_limit = c.options.eager_limit;
    if (peer != c.rank) {
      auto key = c.bootstrap->Get(peer, "nmad.node");
      if (!key.ok())
        return fail(key.status(), "nmad: no node key of rank " +
                                      std::to_string(peer));
      if (std::string_view(reinterpret_cast<const char*>(key.value().data()),
                           key.value().size()) != node)
        g->eager_limit = c.options.NetEagerLimit();
    }
    c.gates.push_back(std::move(g));
    if (peer == c.rank) {
      if (Status s = c.rails[c.loopback]->driver->Connect(peer, {});
          s != Status::kOk)
        return fail(s, "nmad: loopback connect failed");
      continue;
    }
    for (int i = 0; i < c.loopback; ++i) {
      auto addr = c.bootstrap->Get(peer, "nmad.rail" + std::to_string(i));
      if (!addr.ok())
        return fail(addr.status(), "nmad: no address of rank " +
                                       std::to_string(peer) + " rail " +
                                       std::to_string(i));
      if (Status s = c.rails[i]->driver->Connect(peer, addr.value());
          s != Status::kOk)
        return fail(s, "nmad: cannot connect to rank " + std::to_string(peer) +
                           " on rail " + std::to_string(i) + ": " +
                           std::string(engine::StatusName(s)));
    }
    internal::Gate& gate = *c.gates.back();
    gate.immediate_max = c.rails[static_cast<size_t>(gate.packet_rail)]
                             ->driver->ImmediateMax(peer);
  }
  // Polling tasks, with the affinity of the creating thread's core.
  // With quiet progress, where its thread looks (the rank's application
  // core; an unbound rank's creating thread may run anywhere).
  c.task_cpus = PollingCpuSet(engine.topology(),
                              engine.quiet_thread() != nullptr
                                  ? engine.quiet_thread()->core()
                                  : engine.CurrentCore());
  // The engine's view of the node (nmad/node.h), not the bootstrap's: under
  // rondo-run with a rank wrapper only the engine's is the host's.
  if (engine.options().local_size > engine.topology().NumCores() ||
      engine.oversubscribed())
    c.idle_before_yield = 1;
  const topology::CpuSet& cpus = c.task_cpus;
  for (auto& r : c.rails)
    if (r->driver->caps().wakeup_fd && r->driver->WakeupFd() >= 0)
      engine.AddWakeupSource(r.get());
  for (auto& r : c.rails) {
    r->poll_task.Init(&CoreImpl::PollTask, r.get(), cpus,
                      {.repeat = true, .name = "nmad.poll"});
    c.running_tasks.fetch_add(1);
    if (Status s = engine.Submit(r->poll_task); s != Status::kOk) {
      c.running_tasks.fetch_sub(1);
      return fail(s, "nmad: cannot submit the polling task: " +
                         engine.SubmitError(r->poll_task));
    }
  }
  if (remote)
    if (drivers::RemoteMemory* ops = c.rails[0]->driver->remote_memory())
      c.remote_memory = std::make_unique<RemoteMemory>(*c.rails[0], *ops);
  // The dynamic broadcasts' own channel, on every rank.
  c.bcasts = std::make_unique<internal::DynamicBroadcasts>(
      c, engine, c.task_cpus, c.rank, c.size);
  std::string why;
  auto channel = core->OpenSession("rondo.dynbcast", {}, &why);
  if (!channel.ok())
    return fail(Status::kInvalidArgument,
                "nmad: cannot open the dynamic broadcast channel: " + why);
  c.bcast_channel = &CoreImpl::State(*channel.value());
  (void)channel.value()->RegisterHandler(internal::kBcastHandler,
                                         &internal::DynamicBroadcasts::OnMessage,
                                         c.bcasts.get());
  return core;
}

Core::~Core() {
  if (!impl_) return;
  CoreImpl& c = *impl_;
  // Everyone stops sending before anyone closes.
  (void)c.bootstrap->Barrier();
  for (auto& r : c.rails) c.engine->RemoveWakeupSource(r.get());
  c.stopping.store(true, std::memory_order_release);
  for (auto& r : c.rails) (void)c.engine->WaitFor(r->poll_task, std::chrono::seconds(10));
  for (auto& r : c.rails) {
    std::lock_guard<queues::SpinLock> lock(r->mu);
    internal::t_held_rail = r.get();
    r->Drain();
    r->driver->Close(c.options.close_timeout_ms);
    internal::t_held_rail = nullptr;
  }
  (void)c.bootstrap->Finalize();
  if (c.bcasts) c.bcasts->Shutdown();
  for (auto& [id, s] : c.sessions) {
    s->match.DrainUnexpected(
        [&c](UnexpectedMessage* m) { c.Free(static_cast<Stashed*>(m)); });
    for (auto& f : s->from) f.Drain([&c](Stashed* m) { c.Free(m); });
    s->match.DrainPosted([&c](PostedReceive* p) {
      auto* r = static_cast<RecvOp*>(p);
      CoreImpl::FinishUser(r, Status::kCanceled);
      c.Free(r);
    });
  }
  for (auto* m : c.early) c.Free(m);
  for (auto& g : c.gates) {
    for (auto& [id, q] : g->queues)
      for (auto* op : q.queue) {
        CoreImpl::FinishUser(static_cast<SendOp*>(op), Status::kCanceled);
        c.Free(static_cast<SendOp*>(op));
      }
    for (auto* op : g->control) c.Free(static_cast<SendOp*>(op));
    for (auto& [id, op] : g->rdv_waiting) {
      CoreImpl::FinishUser(op, Status::kCanceled);
      c.Free(op);
    }
  }
}

int Core::rank() const noexcept { return impl_->rank; }
int Core::size() const noexcept { return impl_->size; }
engine::Engine& Core::engine() const noexcept { return *impl_->engine; }
drivers::bootstrap::Bootstrap& Core::bootstrap() const noexcept {
  return *impl_->bootstrap;
}
const NmadOptions& Core::options() const noexcept { return impl_->options; }
int Core::rails() const noexcept { return impl_->loopback; }
RemoteMemory* Core::remote_memory() const noexcept {
  return impl_->remote_memory.get();
}
std::string_view Core::PathTo(int peer) const noexcept {
  const CoreImpl& c = *impl_;
  if (peer < 0 || peer >= c.size) return "";
  // Connect() ran for every peer in Create; PathTo only reads the route.
  return c.rails[c.gates[peer]->packet_rail]->driver->PathTo(peer);
}

size_t Core::EagerLimitTo(int peer) const noexcept {
  const CoreImpl& c = *impl_;
  if (peer < 0 || peer >= c.size) return 0;
  return c.gates[peer]->eager_limit;
}

std::string_view Core::RailWakeup(int rail) const noexcept {
  const CoreImpl& c = *impl_;
  if (rail < 0 || rail >= c.loopback) return "";
  const drivers::Driver& d = *c.rails[rail]->driver;
  return d.caps().wakeup_fd && d.WakeupFd() >= 0 ? "event fd" : "none";
}

Result<Session*> Core::OpenSession(std::string_view name,
                                   const SessionOptions& options,
                                   std::string* error) {
  auto fail = [error](std::string what) {
    if (error) *error = std::move(what);
    return Status::kInvalidArgument;
  };
  if (name.empty()) return fail("nmad: a session needs a non-empty name");
  CoreImpl& c = *impl_;
  std::unique_ptr<strategies::Strategy> strategy;
  try {
    strategy = strategies::MakeStrategy(
        options.strategy.empty() ? c.options.strategy : options.strategy);
  } catch (const std::invalid_argument& e) {
    return fail(e.what());
  }
  const uint32_t id = SessionId(name);
  std::vector<Stashed*> replay;
  SessionState* st;
  {
    std::unique_lock<std::shared_mutex> lock(c.sessions_mu);
    auto it = c.sessions.find(id);
    if (it != c.sessions.end()) {
      if (it->second->name != name)
        return fail("nmad: session '" + std::string(name) +
                    "' has the same id as open session '" + it->second->name +
                    "'; choose another name");
      return &it->second->handle;
    }
    auto s = std::make_unique<SessionState>();
    s->name = std::string(name);
    s->id = id;
    s->owned_strategy = std::move(strategy);
    s->strategy = s->owned_strategy.get();
    s->eager_receives_by_caller = options.eager_receives_by_caller;
    s->from.resize(c.size);
    s->out.assign(c.size, nullptr);
    // Match bins for the keys in use at once (collectives number their
    // tags per call; a peer running ahead keeps a few more alive): made
    // now, so that a late new peak allocates nothing
    // (tests/mpi/coll_alloc_check.c).
    s->match.Reserve(internal::kReservedMatchBins);
    s->handle.core_ = &c;
    s->handle.impl_ = s.get();
    st = s.get();
    c.sessions.emplace(id, std::move(s));
    for (auto& slot : c.session_slots)
      if (slot.load(std::memory_order_relaxed) == nullptr) {
        slot.store(st, std::memory_order_release);
        break;
      }
    for (auto it2 = c.early.begin(); it2 != c.early.end();) {
      if ((*it2)->view.session == id) {
        replay.push_back(*it2);
        it2 = c.early.erase(it2);
      } else {
        ++it2;
      }
    }
  }
  // Early chunks are replayed by the rails' holders, in arrival order.
  for (Stashed* m : replay) {
    internal::Rail& r = *c.rails[m->peer == c.rank ? c.loopback : 0];
    r.Run([&c, st, m] { c.Deliver(st, m->peer, m->view, m); });
  }
  return &st->handle;
}

Status Core::Test(Request& req) noexcept {
  if (req.state_.load(std::memory_order_acquire) == Request::kIdle)
    return Status::kInvalidArgument;
  if (!req.done()) impl_->Progress();
  return req.status();
}

Status Core::Wait(Request& req) noexcept {
  if (req.state_.load(std::memory_order_acquire) == Request::kIdle)
    return Status::kInvalidArgument;
  // Busy polling, as MPI does; after a run of empty passes, yield the core
  // so that oversubscribed ranks and threads (more of them than cores) let
  // the thread that will complete this request run. A quiet progress
  // thread stays away meanwhile (the caller polls).
  engine::Engine::CallScope call(*impl_->engine);
  IdleBackoff backoff(*this);
  while (!req.done()) backoff.Pass(impl_->Progress());
  return req.status_;
}

Status Core::WaitFor(Request& req, std::chrono::nanoseconds timeout) noexcept {
  if (req.state_.load(std::memory_order_acquire) == Request::kIdle)
    return Status::kInvalidArgument;
  engine::Engine::CallScope call(*impl_->engine);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  uint32_t n = 0;
  while (!req.done()) {
    impl_->Progress();
    if ((++n & 63) == 0 && std::chrono::steady_clock::now() > deadline)
      return Status::kTimedOut;
  }
  return req.status_;
}

Status Core::WaitAll(std::span<Request* const> reqs) noexcept {
  Status worst = Status::kOk;
  for (Request* r : reqs) {
    Status s = Wait(*r);
    if (s != Status::kOk && worst == Status::kOk) worst = s;
  }
  return worst;
}

int Core::Progress() noexcept { return impl_->Progress(); }
uint32_t Core::idle_passes_before_yield() const noexcept {
  return impl_->idle_before_yield;
}
bool Core::sleep_when_idle() const noexcept {
  return impl_->idle_before_yield == 1;
}

IdleBackoff::IdleBackoff(const Core& core) noexcept
    : engine_(&core.engine()),
      yield_after_(core.idle_passes_before_yield()),
      sleep_(core.sleep_when_idle()),
      spin_ns_(core.engine().options().wait_spin_us * 1000) {}

void IdleBackoff::Idle() noexcept {
  idle_ = 0;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const int64_t now = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  if (idle_since_ < 0) idle_since_ = now;
  if (sleep_) {
    if (now - idle_since_ >= spin_ns_ &&
        engine_->SleepOnWakeupSources(1000000))
      return;
  } else if (now - idle_since_ < spin_ns_) {
    // A core per rank: spin through the short waits (a message rate's
    // window, a ping-pong's reply) as Open MPI and MPICH do; a
    // sched_yield there is a system call during which an arrival waits
    // (one per window of bench/p2p's message rate, measured). Longer
    // waits yield one pass in yield_after_, for the threads sharing it.
    return;
  }
  sched_yield();
}
const topology::CpuSet& Core::task_cpuset() const noexcept {
  return impl_->task_cpus;
}

Status Core::Barrier() noexcept { return impl_->bootstrap->Barrier(); }

bool Core::PeerFailed(int rank) const noexcept {
  const CoreImpl& c = *impl_;
  return rank >= 0 && rank < c.size &&
         c.gates[rank]->failed.load(std::memory_order_acquire);
}

std::string Core::FailureText(int rank) const {
  return impl_->failures.Text(rank);
}

CoreStats Core::stats() const noexcept {
  const auto& k = impl_->counters;
  CoreStats s;
  for (const auto& r : impl_->rails) {
    s.packets_sent += r->counters.packets_sent.load();
    s.packets_received += r->counters.packets_received.load();
    s.chunks_sent += r->counters.chunks_sent.load();
    s.eager_sent += r->counters.eager_sent.load();
    s.rendezvous_sent += r->counters.rendezvous_sent.load();
  }
  s.unexpected = k.unexpected.load();
  s.bad_packets = k.bad_packets.load();
  s.am_dropped = k.am_dropped.load();
  s.reordered = k.reordered.load();
  if (const auto* b = impl_->bcasts.get()) {
    s.bcast_sent = b->counters.sent.load();
    s.bcast_forwarded = b->counters.forwarded.load();
    s.bcast_delivered = b->counters.delivered.load();
    s.bcast_in_place = b->counters.in_place.load();
    s.bcast_dropped = b->counters.dropped.load();
  }
  for (int i = 0; i < impl_->loopback && i < 8; ++i)
    s.rail_bytes[i] = impl_->rails[i]->bytes.load();
  return s;
}

}  // namespace rondo::nmad
