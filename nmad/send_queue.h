// The send side of a gate (one per peer): per-session FIFOs of queued
// chunks with their sequence numbers, control chunks (RTR) that go first,
// round robin over the sessions with something queued, each asked through
// its strategy for its part of the next packet, and the rendezvous that
// wait for their ready-to-receive or are in the drivers. Internal to
// //nmad; the gate lock (Gate::mu) is taken after the rail and session
// locks (core.cc).
#ifndef RONDO_NMAD_SEND_QUEUE_H_
#define RONDO_NMAD_SEND_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "drivers/driver.h"
#include "engine/status.h"
#include "nmad/rail.h"
#include "nmad/strategies/strategy.h"
#include "nmad/wire.h"
#include "queues/spin_lock.h"

namespace rondo::nmad {
class Request;
namespace internal {

struct CoreImpl;
struct RecvOp;

// A rendezvous part's completion and the operation it belongs to.
struct PartCompletion {
  drivers::Completion c;
  void* owner = nullptr;
};

// One message (or control chunk) on its way out. From CoreImpl::send_pool.
struct SendOp : strategies::PendingChunk {
  wire::ChunkKind kind = wire::ChunkKind::kData;
  int dest = -1;
  uint32_t session = 0;
  uint32_t seq = 0;
  int32_t tag = 0;
  uint32_t handler = 0;
  const uint8_t* data = nullptr;  // message or AM body
  size_t len = 0;
  const uint8_t* am_header = nullptr;
  uint32_t am_header_size = 0;
  uint64_t rdv_id = 0;
  uint64_t accepted = 0;  // kRtr
  // kRts: the parts are posted as soon as the RTS is (no kRtr expected;
  // NmadOptions::rdv_early_data).
  bool data_posted = false;
  int nparts = 0;
  wire::RdvPart parts[wire::kMaxParts];
  Request* req = nullptr;
  CoreImpl* core = nullptr;
  std::atomic<int> driver_ops{0};   // rendezvous parts in the drivers
  std::atomic<bool> user_done{false};
  engine::Status worst = engine::Status::kOk;
  PartCompletion part_done[wire::kMaxParts];

  bool announces_rendezvous() const noexcept {
    return kind == wire::ChunkKind::kRts || kind == wire::ChunkKind::kAmRts;
  }
};

struct GateQueue;

// A session as the gates see it: its id, its strategy, and its queue at
// each gate (by rank; set under that gate's lock on first use, the map
// node never moves): no hash lookup per send.
struct SessionQueues {
  uint32_t id = 0;
  strategies::Strategy* strategy = nullptr;
  std::vector<GateQueue*> out;
};

// One session's FIFO at one gate (never moved: a node of Gate::queues).
struct GateQueue {
  explicit GateQueue(strategies::BlockCache* cache = nullptr)
      : queue(strategies::ReuseAllocator<strategies::PendingChunk*>(cache)) {
    if (cache != nullptr) cache->Reserve();
  }
  uint32_t session = 0;
  strategies::Strategy* strategy = nullptr;
  strategies::ChunkQueue queue;
  uint32_t next_seq = 0;    // matched messages (kData, kRts) only
  uint64_t next_order = 0;  // every chunk (the strategies' input order)
  bool active = false;      // in Gate::active
};

struct Gate : FlushTarget {  // flushed by its packet rail's holder
  Gate() {
    nodes.Reserve();  // for active
    nodes.Reserve();  // for control
  }
  int rank = -1;
  int packet_rail = 0;
  // Largest message sent eagerly to this rank: NmadOptions::eager_limit on
  // this node, NetEagerLimit() to another (set once by Core::Create).
  size_t eager_limit = 0;
  // Short packets up to this size leave from the stack or in place
  // (TrySendShort) whatever the rail learned: the packet rail's driver
  // promised it (Driver::ImmediateMax; set once by Core::Create). 0: the
  // rail's learned Rail::immediate_max applies.
  size_t immediate_max = 0;
  queues::SpinLock mu;
  // The deques' freed nodes, reused (under mu; declared before them).
  strategies::BlockCache nodes;
  std::unordered_map<uint32_t, GateQueue> queues;  // by session id
  // Sessions with chunks, round robin.
  strategies::ReuseDeque<GateQueue*> active{
      strategies::ReuseAllocator<GateQueue*>(&nodes)};
  // Control chunks (RTR), sent first.
  strategies::ChunkQueue control{
      strategies::ReuseAllocator<strategies::PendingChunk*>(&nodes)};
  std::unordered_map<uint64_t, SendOp*> rdv_waiting;  // by rdv id
  std::vector<RecvOp*> rdv_receiving;  // receives in the drivers
  std::vector<SendOp*> rdv_sending;    // sends in the drivers
  int inflight = 0;                    // packets in the drivers
  std::atomic<bool> failed{false};
};

// Session `s`'s queue at gate `g`. Gate lock held.
inline GateQueue& QueueOf(Gate& g, SessionQueues& s) {
  GateQueue*& q = s.out[static_cast<size_t>(g.rank)];
  if (q == nullptr) {
    q = &g.queues.try_emplace(s.id, &g.nodes).first->second;
    q->session = s.id;
    q->strategy = s.strategy;
  }
  return *q;
}

// Queues `op` at `g` (gate lock inside): a kRtr with the control chunks
// (`s` unused, may be null), anything else at the end of its session's
// FIFO, a matched message (kData, kRts) with the next sequence number of
// its (gate, session). False, nothing queued, when the gate has failed.
bool Enqueue(Gate& g, SessionQueues* s, SendOp* op);

// Reserves the next sequence number of this process's stream to `g`'s peer
// in session `s` (for a message that travels another way: a dynamic
// broadcast). Gate lock inside.
uint32_t ReserveSeq(Gate& g, SessionQueues& s);

// Takes the next packet's chunks: the control chunks first (as many as fit
// in `budget` bytes, at least one, at most `max_chunks`); else the first
// active session's strategy picks from its FIFO, and that session goes to
// the back of the round robin if it has more. Gate lock held.
void NextChunks(Gate& g, size_t budget, int max_chunks,
                std::vector<strategies::PendingChunk*>& out);

// Puts back at the front of their FIFOs, in their order, chunks NextChunks
// gave that the driver refused (kNoResource); a session that NextChunks
// emptied goes back to the front of the round robin (one that still had
// chunks keeps its turn); a rendezvous they announced is no longer waiting.
// Gate lock held.
void Requeue(Gate& g, std::span<strategies::PendingChunk* const> chunks);

}  // namespace internal
}  // namespace rondo::nmad

#endif  // RONDO_NMAD_SEND_QUEUE_H_
