// Peer failures: what is known of each rank's failure, and what a failure
// completes: everything queued for the peer at its gate, the rendezvous
// waiting for its answer or in the drivers, and the posted receives that
// it could have matched (from it, or from any source). core.cc completes
// them with kPeerFailed (CoreImpl::PeerFailed). Internal to //nmad.
#ifndef RONDO_NMAD_FAILURES_H_
#define RONDO_NMAD_FAILURES_H_

#include <mutex>
#include <string>
#include <vector>

#include "nmad/match_queues.h"
#include "nmad/send_queue.h"

namespace rondo::nmad::internal {

// What is known of each rank's failure ("" while alive). Thread-safe.
class FailureLog {
 public:
  explicit FailureLog(int size = 0) : text_(static_cast<size_t>(size)) {}
  void Resize(int size) { text_.resize(static_cast<size_t>(size)); }
  // Records the failure of `rank` (`what`, or "rank N failed" when empty).
  // False when it was already known or `rank` is out of range.
  bool Record(int rank, const std::string& what);
  // "" while `rank` is alive or out of range.
  std::string Text(int rank) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> text_;
};

// Marks `g` failed (later Enqueues are refused) and empties it under its
// lock: the queued chunks of every session, the control chunks and the
// rendezvous waiting for their ready-to-receive are appended to `dropped`
// (the caller completes and frees them); for the operations in the drivers,
// which their completions will free, `on_receiving(RecvOp*)` and
// `on_sending(SendOp*)` run under the gate lock (they tell the user now;
// the lists are left as they are).
template <typename OnReceiving, typename OnSending>
void FailGate(Gate& g, std::vector<SendOp*>& dropped,
              OnReceiving&& on_receiving, OnSending&& on_sending) {
  std::lock_guard<queues::SpinLock> lock(g.mu);
  g.failed.store(true, std::memory_order_release);
  for (auto& [id, q] : g.queues) {
    for (strategies::PendingChunk* c : q.queue)
      dropped.push_back(static_cast<SendOp*>(c));
    q.queue.clear();
    q.active = false;
  }
  g.active.clear();
  for (strategies::PendingChunk* c : g.control)
    dropped.push_back(static_cast<SendOp*>(c));
  g.control.clear();
  for (auto& [id, op] : g.rdv_waiting) dropped.push_back(op);
  g.rdv_waiting.clear();
  for (RecvOp* r : g.rdv_receiving) on_receiving(r);
  for (SendOp* op : g.rdv_sending) on_sending(op);
}

// Removes from `q` and passes to `fn` the posted receives that a failure
// of `peer` fails: those from `peer` and those from any source (the
// message they wait for may have been the dead peer's).
template <typename Fn>
void FailPosted(MatchQueues& q, int peer, Fn&& fn) {
  q.RemovePostedIf(
      [peer](const PostedReceive& r) {
        return r.source == peer || r.source == kMatchAnySource;
      },
      std::forward<Fn>(fn));
}

}  // namespace rondo::nmad::internal

#endif  // RONDO_NMAD_FAILURES_H_
