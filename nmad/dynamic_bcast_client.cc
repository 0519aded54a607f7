#include "nmad/dynamic_bcast_client.h"

#include <utility>

#include "nmad/request_access.h"
#include "topology/base/log.h"

namespace rondo::nmad::internal {

// A dynamic broadcast this process sends as the root or forwards. Owned by
// DynamicBroadcasts::ops_ until finished and every request and task it
// holds is idle again.
struct BcastOp {
  DynamicBroadcasts* owner = nullptr;
  // What is sent: the root's buffer, or `data` at a forwarder.
  const uint8_t* bytes = nullptr;
  size_t len = 0;
  std::shared_ptr<std::vector<uint8_t>> data;
  BroadcastHeader in;  // forwarders: the header received
  std::vector<std::vector<uint8_t>> headers;  // one per child
  std::unique_ptr<Request[]> sends;
  size_t nsends = 0;
  std::atomic<size_t> left{0};
  std::atomic<int> worst{static_cast<int>(Status::kOk)};
  Request* user = nullptr;  // the root's request
  // Forwarders whose receive was posted when the header came: the data is
  // received into that receive's buffer, forwarded from it, and the
  // receive completes once the forwarding sends are over (the user gets
  // the buffer back only when nothing reads it any more).
  RecvOp* in_place = nullptr;
  Request body;             // forwarders: the data's receive
  std::atomic<int> body_status{static_cast<int>(Status::kOk)};
  engine::Task task;        // forwarders: forward and deliver
  std::atomic<bool> finished{false};
  bool counted = false;  // forwarders: counted as background work
  // Large data goes to the children one after another (largest subtree
  // first): the completion of send i submits post_tasks[i + 1], which posts
  // send i + 1 (one task per send: never submitted twice).
  std::vector<BroadcastEntry> child_entries;
  bool one_by_one = false;
  std::unique_ptr<engine::Task[]> post_tasks;
  struct PostArg {
    BcastOp* op;
    size_t index;
  };
  std::unique_ptr<PostArg[]> post_args;
};

DynamicBroadcasts::DynamicBroadcasts(BroadcastHost& host,
                                     engine::Engine& engine,
                                     const topology::CpuSet& task_cpus,
                                     int rank, int size)
    : host_(host),
      engine_(engine),
      task_cpus_(task_cpus),
      rank_(rank),
      size_(size) {}

DynamicBroadcasts::~DynamicBroadcasts() = default;

size_t DynamicBroadcasts::kept() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_.size();
}

void DynamicBroadcasts::Shutdown() noexcept {
  std::list<std::unique_ptr<BcastOp>> ops;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ops.swap(ops_);
  }
  for (auto& op : ops) (void)engine_.WaitFor(op->task, std::chrono::seconds(1));
}

void DynamicBroadcasts::Keep(std::unique_ptr<BcastOp> op) {
  std::lock_guard<std::mutex> lock(mu_);
  // Reclaim the finished ones whose requests and task are idle again.
  for (auto it = ops_.begin(); it != ops_.end();) {
    BcastOp& o = **it;
    bool idle = o.finished.load(std::memory_order_acquire) &&
                o.task.state() != engine::TaskState::kQueued &&
                !RequestAccess::Pending(o.body);
    for (size_t i = 0; idle && i < o.nsends; ++i)
      idle = !RequestAccess::Pending(o.sends[i]) &&
             (!o.post_tasks ||
              o.post_tasks[i].state() != engine::TaskState::kQueued);
    it = idle ? ops_.erase(it) : std::next(it);
  }
  if (op) ops_.push_back(std::move(op));
}

void DynamicBroadcasts::SendDone(Request& req, Status st, void* arg) noexcept {
  auto* op = static_cast<BcastOp*>(arg);
  if (op->one_by_one) {
    // The next child's send is posted from an engine task (a completion
    // may not call into the Core).
    const size_t i = static_cast<size_t>(&req - op->sends.get());
    if (i + 1 < op->nsends &&
        op->owner->engine_.Submit(op->post_tasks[i + 1]) != Status::kOk) {
      // The engine is shutting down: the remaining sends never start.
      for (size_t j = i + 1; j < op->nsends; ++j)
        Release(op, Status::kShutdown);
    }
  }
  Release(op, st);
}

engine::TaskResult DynamicBroadcasts::PostTask(void* arg) noexcept {
  auto* a = static_cast<BcastOp::PostArg*>(arg);
  a->op->owner->PostSends(a->op, a->index);
  return engine::TaskResult::kDone;
}

// Posts send `first` of `op` and, unless one by one, all after it; a send
// that cannot start counts as done with its error and the next is tried.
void DynamicBroadcasts::PostSends(BcastOp* op, size_t first) noexcept {
  for (size_t i = first; i < op->nsends; ++i) {
    const BroadcastEntry& e = op->child_entries[i];
    op->sends[i].set_completion(&DynamicBroadcasts::SendDone, op);
    Status st = host_.SendOnChannel(e.rank, op->headers[i], op->bytes,
                                    op->len, op->sends[i], e.priority);
    const bool started =
        st == Status::kOk || !RequestAccess::Idle(op->sends[i]);
    if (!started) Release(op, st);  // no callback will come
    if (started && op->one_by_one) return;
  }
}

// One send of `op` is over (or the sender's own hold is released).
void DynamicBroadcasts::Release(BcastOp* op, Status st) noexcept {
  if (st != Status::kOk) {
    int ok = static_cast<int>(Status::kOk);
    op->worst.compare_exchange_strong(ok, static_cast<int>(st));
  }
  if (op->left.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(op);
}

void DynamicBroadcasts::Finish(BcastOp* op) noexcept {
  if (op->user != nullptr)
    RequestAccess::Complete(*op->user, static_cast<Status>(op->worst.load()));
  if (RecvOp* r = op->in_place) {
    // A failed forwarding send is the subtree's loss, not this receive's.
    op->owner->host_.FinishInPlace(r, Status::kOk);
    op->in_place = nullptr;
  }
  MarkFinished(op);
}

// A broadcast operation is over: Keep may reclaim it, and a forwarder's
// background work (counted since its header came) ends.
void DynamicBroadcasts::MarkFinished(BcastOp* op) noexcept {
  if (op->counted) op->owner->engine_.EndBackground();
  op->counted = false;
  op->finished.store(true, std::memory_order_release);
}

// Sends the data of `op` to the children of a node whose forwarding list is
// `list` (tree positions 1..n of its subtree), each with its sub-list.
void DynamicBroadcasts::SendChildren(
    BcastOp* op, uint32_t session, int root, int tag,
    const std::vector<BroadcastEntry>& list) noexcept {
  const std::vector<BroadcastChild> children = TreeChildren(list.size());
  op->nsends = children.size();
  op->sends.reset(new Request[op->nsends]);
  op->headers.resize(op->nsends);
  op->child_entries.resize(op->nsends);
  op->one_by_one = op->len >= kBcastOneByOneBytes && op->nsends > 1;
  if (op->one_by_one) {
    op->post_tasks.reset(new engine::Task[op->nsends]);
    op->post_args.reset(new BcastOp::PostArg[op->nsends]);
    for (size_t i = 0; i < op->nsends; ++i) {
      op->post_args[i] = {op, i};
      op->post_tasks[i].Init(&DynamicBroadcasts::PostTask, &op->post_args[i],
                             task_cpus_, {.name = "nmad.bcast.send"});
    }
  }
  op->left.store(op->nsends + 1, std::memory_order_relaxed);  // +1: ours
  for (size_t i = 0; i < children.size(); ++i) {
    const BroadcastChild& c = children[i];
    const BroadcastEntry& e = list[c.entry];
    BroadcastHeader h;
    h.session = session;
    h.root = root;
    h.tag = tag;
    h.length = op->len;
    h.self_seq = e.seq;
    h.self_priority = e.priority;
    h.forward.assign(list.begin() + static_cast<ptrdiff_t>(c.first),
                     list.begin() + static_cast<ptrdiff_t>(c.last));
    op->headers[i] = EncodeBroadcastHeader(h);
    op->child_entries[i] = e;
  }
  PostSends(op, 0);
  Release(op, Status::kOk);  // release ours
}

Status DynamicBroadcasts::Start(uint32_t session, const void* buf, size_t len,
                                int tag,
                                std::span<const BroadcastTarget> targets,
                                Request& req, std::string* error) noexcept {
  auto refuse = [error](std::string what) {
    if (error) *error = std::move(what);
    return Status::kInvalidArgument;
  };
  if (tag < 0 || tag > kMaxTag)
    return refuse("tag " + std::to_string(tag) + " is outside 0.." +
                  std::to_string(kMaxTag));
  if (buf == nullptr && len > 0)
    return refuse("the buffer is null but the length is " +
                  std::to_string(len));
  if (std::string why = CheckTargets(targets, rank_, size_); !why.empty())
    return refuse(why);
  if (!RequestAccess::Claim(req, engine_)) return Status::kBusy;
  RequestAccess::Info(req) = RecvInfo{rank_, tag, len, len};
  std::vector<BroadcastTarget> order = OrderForTree(targets);
  std::vector<BroadcastEntry> list(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    list[i] = {order[i].rank, order[i].priority,
               host_.ReserveSeq(session, order[i].rank)};
  auto op = std::make_unique<BcastOp>();
  op->owner = this;
  op->bytes = static_cast<const uint8_t*>(buf);
  op->len = len;
  op->user = &req;
  BcastOp* raw = op.get();
  Keep(std::move(op));
  counters.sent.fetch_add(1, std::memory_order_relaxed);
  SendChildren(raw, session, rank_, tag, list);
  return Status::kOk;
}

void DynamicBroadcasts::OnMessage(AmMessage& m, void* arg) noexcept {
  auto* self = static_cast<DynamicBroadcasts*>(arg);
  BroadcastHeader h;
  std::string why;
  if (!DecodeBroadcastHeader(m.header().data(), m.header().size(), self->rank_,
                             self->size_, m.body_size(), &h, &why)) {
    uint64_t k = self->counters.dropped.fetch_add(1) + 1;
    if (k <= 10 || (k & (k - 1)) == 0)
      RONDO_LOG_WARN(
          "nmad: dropped a dynamic broadcast from rank {}: {}; {} dropped so "
          "far",
          m.source(), why, k);
    return;  // the body is discarded
  }
  auto op = std::make_unique<BcastOp>();
  BcastOp* o = op.get();
  o->owner = self;
  o->len = h.length;
  uint8_t* in_place_buf = nullptr;
  o->in_place = self->host_.ClaimInPlace(h, &in_place_buf);
  if (o->in_place != nullptr) {
    o->bytes = in_place_buf;
    self->counters.in_place.fetch_add(1, std::memory_order_relaxed);
  } else {
    o->data = std::make_shared<std::vector<uint8_t>>(h.length);
    o->bytes = o->data->data();
  }
  o->in = std::move(h);
  // Forwarding must go on while the application computes.
  o->counted = true;
  self->engine_.BeginBackground();
  o->task.Init(&DynamicBroadcasts::Forward, o, self->task_cpus_,
               {.name = "nmad.bcast"});
  o->body.set_completion(&DynamicBroadcasts::BodyDone, o);
  self->Keep(std::move(op));
  Status st = self->host_.ReceiveBody(m, const_cast<uint8_t*>(o->bytes),
                                      o->len, o->body);
  if (st != Status::kOk) {
    self->counters.dropped.fetch_add(1);
    if (o->in_place != nullptr) {
      self->host_.FinishInPlace(o->in_place, st);
      o->in_place = nullptr;
    }
    MarkFinished(o);
  }
}

void DynamicBroadcasts::BodyDone(Request&, Status st, void* arg) noexcept {
  auto* o = static_cast<BcastOp*>(arg);
  o->body_status.store(static_cast<int>(st), std::memory_order_release);
  if (st != Status::kOk && o->in_place != nullptr) {
    // The task then only counts the drop.
    o->owner->host_.FinishInPlace(o->in_place, st);
    o->in_place = nullptr;
  }
  if (o->owner->engine_.Submit(o->task) != Status::kOk) MarkFinished(o);
}

// Engine task, once the data is here: forward it, then deliver it here.
engine::TaskResult DynamicBroadcasts::Forward(void* arg) noexcept {
  auto* o = static_cast<BcastOp*>(arg);
  DynamicBroadcasts* self = o->owner;
  if (static_cast<Status>(o->body_status.load()) != Status::kOk) {
    self->counters.dropped.fetch_add(1);
    MarkFinished(o);
    return engine::TaskResult::kDone;
  }
  if (!o->in.forward.empty())
    self->counters.forwarded.fetch_add(1, std::memory_order_relaxed);
  if (o->in_place != nullptr) {
    // Matched already: delivered here when the forwarding is over.
    self->counters.delivered.fetch_add(1, std::memory_order_relaxed);
    self->SendChildren(o, o->in.session, o->in.root, o->in.tag,
                       o->in.forward);
    return engine::TaskResult::kDone;
  }
  self->SendChildren(o, o->in.session, o->in.root, o->in.tag, o->in.forward);
  self->counters.delivered.fetch_add(1, std::memory_order_relaxed);
  self->host_.DeliverData(o->in.session, o->in.root, o->in.self_seq,
                          o->in.tag, o->data);
  return engine::TaskResult::kDone;
}

}  // namespace rondo::nmad::internal
