#include "nmad/send_queue.h"

#include <mutex>

namespace rondo::nmad::internal {

using strategies::PendingChunk;
using wire::ChunkKind;

bool Enqueue(Gate& g, SessionQueues* s, SendOp* op) {
  std::lock_guard<queues::SpinLock> lock(g.mu);
  if (g.failed.load(std::memory_order_acquire)) return false;
  if (op->kind == ChunkKind::kRtr) {
    g.control.push_back(op);
    return true;
  }
  GateQueue& q = QueueOf(g, *s);
  // Only matched messages take a sequence number: active messages are not
  // matched, so they do not hold up the messages behind them.
  if (op->kind == ChunkKind::kData || op->kind == ChunkKind::kRts)
    op->seq = q.next_seq++;
  op->order = q.next_order++;
  q.queue.push_back(op);
  if (!q.active) {
    q.active = true;
    g.active.push_back(&q);
  }
  return true;
}

uint32_t ReserveSeq(Gate& g, SessionQueues& s) {
  std::lock_guard<queues::SpinLock> lock(g.mu);
  return QueueOf(g, s).next_seq++;
}

void NextChunks(Gate& g, size_t budget, int max_chunks,
                std::vector<PendingChunk*>& out) {
  if (!g.control.empty()) {
    size_t used = 0;
    while (!g.control.empty() && static_cast<int>(out.size()) < max_chunks) {
      PendingChunk* c = g.control.front();
      if (!out.empty() && used + c->wire_bytes > budget) break;
      used += c->wire_bytes;
      out.push_back(c);
      g.control.pop_front();
    }
    return;
  }
  while (!g.active.empty() && out.empty()) {
    GateQueue* q = g.active.front();
    g.active.pop_front();
    q->strategy->NextPacket(q->queue, budget, max_chunks, out);
    if (!q->queue.empty()) {
      g.active.push_back(q);
    } else {
      q->active = false;
    }
  }
}

void Requeue(Gate& g, std::span<PendingChunk* const> chunks) {
  for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) {
    SendOp* op = static_cast<SendOp*>(*it);
    if (op->announces_rendezvous()) g.rdv_waiting.erase(op->rdv_id);
    if (op->kind == ChunkKind::kRtr) {
      g.control.push_front(op);
    } else {
      GateQueue& q = g.queues[op->session];
      q.queue.push_front(op);
      if (!q.active) {
        q.active = true;
        g.active.push_front(&q);
      }
    }
  }
}

}  // namespace rondo::nmad::internal
