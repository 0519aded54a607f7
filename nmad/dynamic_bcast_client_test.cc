// Dynamic broadcasts as a client (nmad/dynamic_bcast_client.h) over a fake
// BroadcastHost, no core and no network: what the root sends to whom with
// which reserved sequence numbers, its request's completion, one-by-one
// sends of large data, a forwarder's receive, forwarding and delivery (into
// a posted receive or as a message), malformed headers.
#include "nmad/dynamic_bcast_client.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "nmad/active_messages.h"
#include "nmad/request_access.h"
#include "nmad/wire.h"

namespace rondo::nmad::internal {
namespace {

std::unique_ptr<engine::Engine> PollingEngine() {
  engine::EngineOptions o = engine::EngineOptions::FromEnvironment();
  o.progress = {engine::PlacementKind::kNone, {}};
  o.timer_period_us = 0;
  return std::make_unique<engine::Engine>(o);
}

struct Sent {
  int dest;
  BroadcastHeader header;
  std::vector<uint8_t> body;
  Request* req;
  int priority;
};

struct Delivered {
  uint32_t session;
  int root;
  uint32_t seq;
  int tag;
  std::vector<uint8_t> data;
};

struct FakeHost : BroadcastHost {
  engine::Engine* engine = nullptr;
  int size = 8;
  std::map<int, uint32_t> next_seq;  // per peer
  std::vector<uint32_t> reserved_sessions;
  std::vector<Sent> sent;
  std::vector<Delivered> delivered;
  // In place: the receive to hand out, and how it finished.
  RecvOp* in_place = nullptr;
  std::vector<uint8_t> in_place_buf;
  std::vector<Status> in_place_done;
  Status receive_status = Status::kOk;

  uint32_t ReserveSeq(uint32_t session, int peer) noexcept override {
    reserved_sessions.push_back(session);
    return next_seq[peer]++;
  }
  Status SendOnChannel(int dest, std::span<const uint8_t> header,
                       const uint8_t* body, size_t len, Request& req,
                       int priority) noexcept override {
    if (!RequestAccess::Claim(req, *engine)) return Status::kBusy;
    Sent s{dest, {}, std::vector<uint8_t>(body, body + len), &req, priority};
    std::string why;
    CHECK(DecodeBroadcastHeader(header.data(), header.size(), dest, size, len,
                                &s.header, &why));
    sent.push_back(std::move(s));
    return Status::kOk;
  }
  Status ReceiveBody(AmMessage& m, void* buf, size_t len,
                     Request& req) noexcept override {
    if (receive_status != Status::kOk) return receive_status;
    REQUIRE(RequestAccess::Claim(req, *engine));
    std::memcpy(buf, m.body().data(), std::min(len, m.body().size()));
    RequestAccess::Complete(req, Status::kOk);
    return Status::kOk;
  }
  RecvOp* ClaimInPlace(const BroadcastHeader& h,
                       uint8_t** buf) noexcept override {
    if (in_place == nullptr) return nullptr;
    in_place_buf.assign(h.length, 0);
    *buf = in_place_buf.data();
    return in_place;
  }
  void FinishInPlace(RecvOp* r, Status s) noexcept override {
    CHECK(r == in_place);
    in_place_done.push_back(s);
  }
  void DeliverData(uint32_t session, int root, uint32_t seq, int tag,
                   std::shared_ptr<std::vector<uint8_t>> data) noexcept
      override {
    delivered.push_back({session, root, seq, tag, *data});
  }
  // Completes every send not yet completed, with `s` (the requests belong
  // to the broadcasts, which may reclaim them once done: forgotten here).
  void CompleteSends(Status s = Status::kOk) {
    for (Sent& x : sent) Complete(x, s);
  }
  static void Complete(Sent& x, Status s) {
    if (x.req != nullptr && RequestAccess::Pending(*x.req))
      RequestAccess::Complete(*x.req, s);
    x.req = nullptr;
  }
};

struct Fixture {
  std::unique_ptr<engine::Engine> engine = PollingEngine();
  FakeHost host;
  std::unique_ptr<DynamicBroadcasts> bcasts;
  explicit Fixture(int rank = 0, int size = 8) {
    host.engine = engine.get();
    host.size = size;
    bcasts = std::make_unique<DynamicBroadcasts>(
        host, *engine, engine->topology().AllCores(), rank, size);
  }
  ~Fixture() {
    host.CompleteSends();
    bcasts->Shutdown();
  }
  void RunTasks() {
    while (engine->Poll() > 0) {
    }
  }
};

std::vector<uint8_t> Data(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 13 + 1);
  return v;
}

TEST_CASE("bcast client: bad input is refused with a message") {
  Fixture f;
  Request req;
  std::string why;
  const auto d = Data(4);
  std::vector<BroadcastTarget> t = {{1, 0}};
  CHECK(f.bcasts->Start(5, d.data(), 4, -1, t, req, &why) ==
        Status::kInvalidArgument);
  CHECK(why.find("tag -1") != std::string::npos);
  CHECK(f.bcasts->Start(5, nullptr, 4, 0, t, req, &why) ==
        Status::kInvalidArgument);
  CHECK(why.find("null") != std::string::npos);
  std::vector<BroadcastTarget> self = {{0, 0}};
  CHECK(f.bcasts->Start(5, d.data(), 4, 0, self, req, &why) ==
        Status::kInvalidArgument);
  CHECK_FALSE(why.empty());
  CHECK(f.bcasts->Start(5, d.data(), 4, 0, {}, req, &why) ==
        Status::kInvalidArgument);
  CHECK(f.host.sent.empty());
  CHECK(f.host.reserved_sessions.empty());
}

TEST_CASE("bcast client: the root reserves sequence numbers and sends the tree") {
  Fixture f;
  const auto d = Data(100);
  f.host.next_seq[3] = 7;  // earlier messages to rank 3
  std::vector<BroadcastTarget> t = {{1, 0}, {2, 5}, {3, 0}, {4, 0}};
  Request req;
  REQUIRE(f.bcasts->Start(42, d.data(), d.size(), 9, t, req, nullptr) ==
          Status::kOk);
  CHECK(f.host.reserved_sessions == std::vector<uint32_t>(4, 42));
  CHECK(f.bcasts->counters.sent.load() == 1);
  // Every recipient is reached once, directly or through a forwarder, with
  // the sequence number reserved for it.
  std::map<int, uint32_t> seq_of;
  for (const Sent& s : f.host.sent) {
    CHECK(s.header.session == 42);
    CHECK(s.header.root == 0);
    CHECK(s.header.tag == 9);
    CHECK(s.body == d);
    CHECK(s.priority == s.header.self_priority);
    seq_of[s.dest] = s.header.self_seq;
    for (const BroadcastEntry& e : s.header.forward) seq_of[e.rank] = e.seq;
  }
  CHECK(seq_of == std::map<int, uint32_t>{{1, 0}, {2, 0}, {3, 7}, {4, 0}});
  // The highest priority is a direct child of the root.
  bool prio_direct = false;
  for (const Sent& s : f.host.sent) prio_direct |= s.dest == 2;
  CHECK(prio_direct);
  CHECK(f.host.sent.size() < t.size());  // a tree, not a star
  // The root's request completes with its sends, with the first failure.
  CHECK_FALSE(req.done());
  FakeHost::Complete(f.host.sent[0], Status::kPeerFailed);
  CHECK_FALSE(req.done());
  f.host.CompleteSends();
  REQUIRE(req.done());
  CHECK(req.status() == Status::kPeerFailed);
  CHECK(req.info().size == 100);
  Request again;
  REQUIRE(f.bcasts->Start(42, d.data(), d.size(), 9, t, again, nullptr) ==
          Status::kOk);
  f.host.CompleteSends();
  CHECK(again.status() == Status::kOk);
  CHECK(f.bcasts->kept() == 1);  // the first one was reclaimed
}

TEST_CASE("bcast client: large data goes to the children one by one") {
  Fixture f;
  const auto d = Data(kBcastOneByOneBytes);
  std::vector<BroadcastTarget> t = {{1, 0}, {2, 0}, {3, 0}};
  Request req;
  REQUIRE(f.bcasts->Start(1, d.data(), d.size(), 0, t, req, nullptr) ==
          Status::kOk);
  REQUIRE(f.host.sent.size() == 1);  // the largest subtree first
  f.RunTasks();
  CHECK(f.host.sent.size() == 1);  // the next waits for this one
  f.host.CompleteSends();
  f.RunTasks();  // the completion submitted the next send's task
  CHECK(f.host.sent.size() == 2);
  f.host.CompleteSends();
  CHECK(req.done());
  CHECK(req.status() == Status::kOk);
}

// Delivers one channel message (a header and an inline body from
// `source`) as the core does: through the active-message dispatch.
void Arrive(Fixture& f, int source, const BroadcastHeader& h,
            const std::vector<uint8_t>& body) {
  const std::vector<uint8_t> header = EncodeBroadcastHeader(h);
  AmHandlers handlers;
  REQUIRE(handlers.Register(kBcastHandler, &DynamicBroadcasts::OnMessage,
                            f.bcasts.get()) == Status::kOk);
  wire::ChunkView c;
  c.kind = wire::ChunkKind::kAm;
  c.handler = kBcastHandler;
  c.am_header = header.data();
  c.am_header_size = static_cast<uint32_t>(header.size());
  c.payload = body.data();
  c.payload_size = body.size();
  c.msg_size = body.size();
  CHECK(AmDispatch::Run(handlers, nullptr, source, 0, c) ==
        AmOutcome::kDelivered);
}

BroadcastHeader ForwarderHeader(size_t len) {
  BroadcastHeader h;
  h.session = 42;
  h.root = 0;
  h.tag = 6;
  h.length = len;
  h.self_seq = 3;
  h.self_priority = 1;
  h.forward = {{5, 0, 11}, {6, 2, 12}};
  return h;
}

TEST_CASE("bcast client: a forwarder forwards, then delivers as a message") {
  Fixture f(/*rank=*/2);
  const auto d = Data(300);
  Arrive(f, 0, ForwarderHeader(d.size()), d);
  CHECK(f.host.sent.empty());  // forwarded from an engine task
  f.RunTasks();
  REQUIRE(f.host.delivered.size() == 1);
  const Delivered& got = f.host.delivered[0];
  CHECK(got.session == 42);
  CHECK(got.root == 0);
  CHECK(got.seq == 3);
  CHECK(got.tag == 6);
  CHECK(got.data == d);
  // Ranks 5 and 6 got the data with their own sequence numbers.
  std::map<int, uint32_t> seq_of;
  for (const Sent& s : f.host.sent) {
    CHECK(s.body == d);
    seq_of[s.dest] = s.header.self_seq;
    for (const BroadcastEntry& e : s.header.forward) seq_of[e.rank] = e.seq;
  }
  CHECK(seq_of == std::map<int, uint32_t>{{5, 11}, {6, 12}});
  CHECK(f.bcasts->counters.forwarded.load() == 1);
  CHECK(f.bcasts->counters.delivered.load() == 1);
  CHECK(f.bcasts->counters.in_place.load() == 0);
}

TEST_CASE("bcast client: into a posted receive, completed after forwarding") {
  Fixture f(/*rank=*/2);
  alignas(8) unsigned char token[8];
  f.host.in_place = reinterpret_cast<RecvOp*>(token);  // opaque to the client
  const auto d = Data(300);
  Arrive(f, 0, ForwarderHeader(d.size()), d);
  CHECK(f.host.in_place_buf == d);  // received straight into it
  f.RunTasks();
  CHECK(f.host.delivered.empty());  // matched already
  CHECK(f.host.in_place_done.empty());  // the sends still read the buffer
  f.host.CompleteSends(Status::kPeerFailed);
  // A failed forward is the subtree's loss, not this receive's.
  CHECK(f.host.in_place_done == std::vector<Status>{Status::kOk});
  CHECK(f.bcasts->counters.in_place.load() == 1);
  CHECK(f.bcasts->counters.delivered.load() == 1);
}

TEST_CASE("bcast client: a failed body receive or a bad header is dropped") {
  Fixture f(/*rank=*/2);
  alignas(8) unsigned char token[8];
  f.host.in_place = reinterpret_cast<RecvOp*>(token);
  f.host.receive_status = Status::kInvalidArgument;
  const auto d = Data(16);
  Arrive(f, 0, ForwarderHeader(d.size()), d);
  CHECK(f.host.in_place_done == std::vector<Status>{Status::kInvalidArgument});
  CHECK(f.bcasts->counters.dropped.load() == 1);
  f.RunTasks();
  CHECK(f.host.sent.empty());
  CHECK(f.host.delivered.empty());
  // A header naming the receiver itself among the recipients.
  f.host.receive_status = Status::kOk;
  BroadcastHeader bad = ForwarderHeader(d.size());
  bad.forward.push_back({2, 0, 1});
  Arrive(f, 0, bad, d);
  CHECK(f.bcasts->counters.dropped.load() == 2);
  f.RunTasks();
  CHECK(f.host.sent.empty());
  CHECK(f.host.delivered.empty());
}

}  // namespace
}  // namespace rondo::nmad::internal
