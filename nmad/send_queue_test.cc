// The send side of a gate alone (nmad/send_queue.h), no driver: sequence
// numbers per (gate, session), control chunks first, round robin over the
// sessions, what the strategies are given, requeueing at the front after
// kNoResource, a failed gate, reserved sequence numbers.
#include "nmad/send_queue.h"

#include <catch2/catch.hpp>
#include <deque>
#include <memory>
#include <vector>

#include "nmad/strategies/strategy.h"

namespace rondo::nmad::internal {
namespace {

using strategies::PendingChunk;
using wire::ChunkKind;

// Records what the gate asks and answers like "default" (one chunk).
struct RecordingStrategy : strategies::Strategy {
  mutable std::vector<size_t> queue_sizes;
  mutable std::vector<size_t> budgets;
  mutable std::vector<int> max_chunks;
  std::string_view name() const noexcept override { return "recording"; }
  bool defers_sends() const noexcept override { return false; }
  void NextPacket(strategies::ChunkQueue& queue, size_t budget, int max,
                  std::vector<PendingChunk*>& packet) const override {
    queue_sizes.push_back(queue.size());
    budgets.push_back(budget);
    max_chunks.push_back(max);
    packet.push_back(queue.front());
    queue.pop_front();
  }
};

struct Fixture {
  Gate gate;
  RecordingStrategy strategy;
  SessionQueues a, b;
  std::deque<SendOp> ops;  // stable addresses
  Fixture() {
    gate.rank = 1;
    a.id = 10;
    b.id = 20;
    a.strategy = b.strategy = &strategy;
    a.out.assign(2, nullptr);
    b.out.assign(2, nullptr);
  }
  SendOp* Op(ChunkKind kind, uint32_t session, size_t bytes = 40) {
    SendOp& op = ops.emplace_back();
    op.kind = kind;
    op.session = session;
    op.wire_bytes = bytes;
    op.rdv_id = ops.size();
    return &op;
  }
  std::vector<SendOp*> Next(size_t budget = 1000, int max = 10) {
    std::vector<PendingChunk*> out;
    NextChunks(gate, budget, max, out);
    std::vector<SendOp*> ops_out;
    for (PendingChunk* c : out) ops_out.push_back(static_cast<SendOp*>(c));
    return ops_out;
  }
};

TEST_CASE("send queue: sequence numbers per session, only for matched kinds") {
  Fixture f;
  SendOp* a0 = f.Op(ChunkKind::kData, 10);
  SendOp* b0 = f.Op(ChunkKind::kRts, 20);
  SendOp* am = f.Op(ChunkKind::kAm, 10);
  SendOp* a1 = f.Op(ChunkKind::kRts, 10);
  SendOp* b1 = f.Op(ChunkKind::kData, 20);
  for (auto [s, op] : {std::pair{&f.a, a0}, {&f.b, b0}, {&f.a, am},
                       {&f.a, a1}, {&f.b, b1}})
    REQUIRE(Enqueue(f.gate, s, op));
  CHECK(a0->seq == 0);
  CHECK(a1->seq == 1);  // the AM between them took none
  CHECK(b0->seq == 0);
  CHECK(b1->seq == 1);
  // Every chunk has its arrival order in its session's queue.
  CHECK(a0->order == 0);
  CHECK(am->order == 1);
  CHECK(a1->order == 2);
  CHECK(f.a.out[1] == &f.gate.queues[10]);
  CHECK(f.gate.queues[10].next_seq == 2);
  CHECK(f.gate.queues[10].strategy == &f.strategy);
}

TEST_CASE("send queue: control chunks go first, packed up to the budget") {
  Fixture f;
  REQUIRE(Enqueue(f.gate, &f.a, f.Op(ChunkKind::kData, 10)));
  SendOp* r1 = f.Op(ChunkKind::kRtr, 0, 30);
  SendOp* r2 = f.Op(ChunkKind::kRtr, 0, 30);
  SendOp* r3 = f.Op(ChunkKind::kRtr, 0, 30);
  for (SendOp* r : {r1, r2, r3}) REQUIRE(Enqueue(f.gate, nullptr, r));
  CHECK(f.Next(/*budget=*/70) == std::vector<SendOp*>{r1, r2});
  CHECK(f.Next(70) == std::vector<SendOp*>{r3});
  CHECK(f.strategy.queue_sizes.empty());  // the data waited
  CHECK(f.Next(70).at(0)->kind == ChunkKind::kData);
  // At least one control chunk even when larger than the budget, at most
  // max_chunks.
  for (int i = 0; i < 3; ++i)
    REQUIRE(Enqueue(f.gate, nullptr, f.Op(ChunkKind::kRtr, 0, 500)));
  CHECK(f.Next(100).size() == 1);
  REQUIRE(Enqueue(f.gate, nullptr, f.Op(ChunkKind::kRtr, 0, 1)));
  CHECK(f.Next(1000, /*max=*/2).size() == 2);  // 500 + 500
  CHECK(f.Next(1000, 2).size() == 1);
  CHECK(f.Next(1000, 2).empty());
}

TEST_CASE("send queue: sessions take turns, through their strategy") {
  Fixture f;
  SendOp* a0 = f.Op(ChunkKind::kData, 10);
  SendOp* a1 = f.Op(ChunkKind::kData, 10);
  SendOp* a2 = f.Op(ChunkKind::kData, 10);
  SendOp* b0 = f.Op(ChunkKind::kData, 20);
  for (SendOp* op : {a0, a1, a2}) REQUIRE(Enqueue(f.gate, &f.a, op));
  REQUIRE(Enqueue(f.gate, &f.b, b0));
  CHECK(f.Next(500, 7) == std::vector<SendOp*>{a0});
  CHECK(f.Next(500, 7) == std::vector<SendOp*>{b0});
  CHECK(f.Next(500, 7) == std::vector<SendOp*>{a1});
  CHECK(f.Next(500, 7) == std::vector<SendOp*>{a2});
  CHECK(f.Next(500, 7).empty());
  // The strategy saw its session's whole FIFO, the budget and the limit.
  CHECK(f.strategy.queue_sizes == std::vector<size_t>{3, 1, 2, 1});
  CHECK(f.strategy.budgets == std::vector<size_t>{500, 500, 500, 500});
  CHECK(f.strategy.max_chunks == std::vector<int>{7, 7, 7, 7});
  CHECK(f.gate.active.empty());
  CHECK_FALSE(f.gate.queues[10].active);
}

TEST_CASE("send queue: a real strategy aggregates from one session") {
  Fixture f;
  auto aggreg = strategies::MakeStrategy("aggreg");
  f.a.strategy = aggreg.get();
  for (int i = 0; i < 4; ++i)
    REQUIRE(Enqueue(f.gate, &f.a, f.Op(ChunkKind::kData, 10, 100)));
  CHECK(f.Next(/*budget=*/250).size() == 2);
  CHECK(f.Next(250).size() == 2);
  CHECK(f.Next(250).empty());
}

TEST_CASE("send queue: refused chunks go back to the front, in order") {
  Fixture f;
  SendOp* a0 = f.Op(ChunkKind::kData, 10);
  SendOp* a1 = f.Op(ChunkKind::kRts, 10);
  SendOp* b0 = f.Op(ChunkKind::kData, 20);
  SendOp* a2 = f.Op(ChunkKind::kData, 10);
  REQUIRE(Enqueue(f.gate, &f.a, a0));
  REQUIRE(Enqueue(f.gate, &f.a, a1));
  REQUIRE(Enqueue(f.gate, &f.b, b0));
  REQUIRE(Enqueue(f.gate, &f.a, a2));
  auto aggreg = strategies::MakeStrategy("aggreg");
  f.a.strategy = f.gate.queues[10].strategy = aggreg.get();
  std::vector<PendingChunk*> taken;
  NextChunks(f.gate, 1000, 2, taken);  // a0, a1
  REQUIRE(taken.size() == 2);
  f.gate.rdv_waiting[a1->rdv_id] = a1;  // as BuildPacket does
  Requeue(f.gate, taken);
  CHECK(f.gate.rdv_waiting.empty());  // no longer announced
  // a0, a1 are before a2 again; session a, which still had a2, kept its
  // turn after b in the round robin.
  CHECK(f.Next(1000, 3) == std::vector<SendOp*>{b0});
  CHECK(f.Next(1000, 3) == std::vector<SendOp*>{a0, a1, a2});
  // A session emptied by the refused packet is first again.
  SendOp* a3 = f.Op(ChunkKind::kData, 10);
  SendOp* b1 = f.Op(ChunkKind::kData, 20);
  REQUIRE(Enqueue(f.gate, &f.a, a3));
  REQUIRE(Enqueue(f.gate, &f.b, b1));
  taken.clear();
  NextChunks(f.gate, 1000, 3, taken);
  REQUIRE(taken == std::vector<PendingChunk*>{a3});
  Requeue(f.gate, taken);
  CHECK(f.Next(1000, 3) == std::vector<SendOp*>{a3});
  CHECK(f.Next(1000, 3) == std::vector<SendOp*>{b1});
  // A refused RTR goes back to the front of the control chunks.
  SendOp* r1 = f.Op(ChunkKind::kRtr, 0);
  SendOp* r2 = f.Op(ChunkKind::kRtr, 0);
  REQUIRE(Enqueue(f.gate, nullptr, r1));
  REQUIRE(Enqueue(f.gate, nullptr, r2));
  taken.clear();
  NextChunks(f.gate, 1000, 1, taken);
  Requeue(f.gate, taken);
  CHECK(f.Next(1000, 5) == std::vector<SendOp*>{r1, r2});
}

TEST_CASE("send queue: a failed gate queues nothing; reserved numbers") {
  Fixture f;
  REQUIRE(Enqueue(f.gate, &f.a, f.Op(ChunkKind::kData, 10)));
  CHECK(ReserveSeq(f.gate, f.a) == 1);
  SendOp* next = f.Op(ChunkKind::kData, 10);
  REQUIRE(Enqueue(f.gate, &f.a, next));
  CHECK(next->seq == 2);  // after the reserved one
  CHECK(ReserveSeq(f.gate, f.b) == 0);
  f.gate.failed.store(true);
  CHECK_FALSE(Enqueue(f.gate, &f.a, f.Op(ChunkKind::kData, 10)));
  CHECK_FALSE(Enqueue(f.gate, nullptr, f.Op(ChunkKind::kRtr, 0)));
  CHECK(f.gate.queues[10].queue.size() == 2);
  CHECK(f.gate.control.empty());
}

}  // namespace
}  // namespace rondo::nmad::internal
