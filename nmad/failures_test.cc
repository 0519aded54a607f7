// What a peer failure completes (nmad/failures.h), without a network:
// the failure log, a gate emptied of everything queued and waiting, the
// operations in the drivers reported, the posted receives it fails.
#include "nmad/failures.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace rondo::nmad::internal {
namespace {

using wire::ChunkKind;

TEST_CASE("failures: the first report of a rank is kept") {
  FailureLog log(3);
  CHECK(log.Text(1).empty());
  CHECK(log.Record(1, "rail 0: connection reset"));
  CHECK_FALSE(log.Record(1, "launcher: exited"));
  CHECK(log.Text(1) == "rail 0: connection reset");
  CHECK(log.Record(2, ""));
  CHECK(log.Text(2) == "rank 2 failed");
  CHECK_FALSE(log.Record(3, "x"));  // out of range
  CHECK_FALSE(log.Record(-1, "x"));
  CHECK(log.Text(3).empty());
  CHECK(log.Text(-1).empty());
}

TEST_CASE("failures: concurrent reports of one rank, one wins") {
  FailureLog log(2);
  std::atomic<int> wins{0};
  std::vector<std::thread> t;
  for (int i = 0; i < 4; ++i)
    t.emplace_back([&, i] {
      if (log.Record(1, "from " + std::to_string(i))) wins.fetch_add(1);
    });
  for (auto& th : t) th.join();
  CHECK(wins.load() == 1);
  CHECK(log.Text(1).rfind("from ", 0) == 0);
}

TEST_CASE("failures: a failed gate gives back everything it held") {
  Gate g;
  g.rank = 1;
  SessionQueues a, b;
  a.id = 1;
  b.id = 2;
  a.out.assign(2, nullptr);
  b.out.assign(2, nullptr);
  std::deque<SendOp> ops;
  auto op = [&](ChunkKind k) {
    SendOp& o = ops.emplace_back();
    o.kind = k;
    return &o;
  };
  SendOp* a0 = op(ChunkKind::kData);
  SendOp* b0 = op(ChunkKind::kAm);
  SendOp* rtr = op(ChunkKind::kRtr);
  SendOp* waiting = op(ChunkKind::kRts);
  SendOp* sending = op(ChunkKind::kRts);
  REQUIRE(Enqueue(g, &a, a0));
  REQUIRE(Enqueue(g, &b, b0));
  REQUIRE(Enqueue(g, nullptr, rtr));
  g.rdv_waiting[7] = waiting;
  g.rdv_sending.push_back(sending);
  auto* receiving = reinterpret_cast<RecvOp*>(0x1000);  // never dereferenced
  g.rdv_receiving.push_back(receiving);

  std::vector<SendOp*> dropped;
  std::vector<RecvOp*> told_recv;
  std::vector<SendOp*> told_send;
  FailGate(
      g, dropped, [&](RecvOp* r) { told_recv.push_back(r); },
      [&](SendOp* s) { told_send.push_back(s); });
  std::sort(dropped.begin(), dropped.end());
  std::vector<SendOp*> expect = {a0, b0, rtr, waiting};
  std::sort(expect.begin(), expect.end());
  CHECK(dropped == expect);
  CHECK(told_recv == std::vector<RecvOp*>{receiving});
  CHECK(told_send == std::vector<SendOp*>{sending});
  CHECK(g.failed.load());
  CHECK(g.active.empty());
  CHECK(g.control.empty());
  CHECK(g.rdv_waiting.empty());
  // In the drivers: their completions free them, the lists stay.
  CHECK(g.rdv_sending.size() == 1);
  CHECK(g.rdv_receiving.size() == 1);
  for (auto& [id, q] : g.queues) {
    CHECK(q.queue.empty());
    CHECK_FALSE(q.active);
  }
  CHECK_FALSE(Enqueue(g, &a, op(ChunkKind::kData)));
}

TEST_CASE("failures: receives from the peer and from any source fail") {
  MatchQueues q;
  PostedReceive from1, from2, any, from1_any_tag;
  from1.source = 1;
  from1.tag = 3;
  from2.source = 2;
  from2.tag = 3;
  any.source = kMatchAnySource;
  any.tag = 3;
  from1_any_tag.source = 1;
  from1_any_tag.tag = kMatchAnyTag;
  for (PostedReceive* r : {&from1, &from2, &any, &from1_any_tag}) q.Post(r);
  std::vector<PostedReceive*> failed;
  FailPosted(q, 1, [&](PostedReceive* r) { failed.push_back(r); });
  std::sort(failed.begin(), failed.end());
  std::vector<PostedReceive*> expect = {&from1, &any, &from1_any_tag};
  std::sort(expect.begin(), expect.end());
  CHECK(failed == expect);
  CHECK(q.posted() == 1);
  CHECK(q.MatchMessage(2, 3) == &from2);
}

}  // namespace
}  // namespace rondo::nmad::internal
