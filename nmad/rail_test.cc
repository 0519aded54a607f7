// Rail alone (nmad/rail.h) over the loopback driver, no core: who runs a
// driver operation (the holder, at once, or the next holder, in order),
// kicks and flushes, the order of Drain, requeued targets, the packet
// buffer pool, arming.
#include "nmad/rail.h"

#include <catch2/catch.hpp>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "drivers/loopback/loopback_driver.h"

namespace rondo::nmad::internal {
namespace {

using engine::Status;

struct Sink : drivers::PacketSink {
  std::vector<std::string> packets;
  void OnPacket(int, int, const void* data, size_t len) noexcept override {
    packets.emplace_back(static_cast<const char*>(data), len);
  }
  void OnPeerFailure(int, int, Status, std::string_view) noexcept override {}
};

// Records the flushes, in order; a target named in `requeue` is put back
// on the list from inside its flush (what a refused packet does).
struct Client : RailClient {
  std::vector<FlushTarget*> flushed;
  std::vector<std::string>* log = nullptr;
  FlushTarget* requeue = nullptr;
  int requeues_left = 0;
  void Flush(Rail& r, FlushTarget& t) noexcept override {
    CHECK(r.held());
    flushed.push_back(&t);
    if (log) log->push_back("flush");
    if (&t == requeue && requeues_left-- > 0) r.MarkDirty(t);
  }
};

void DoneCb(drivers::Completion*, Status, size_t) noexcept {}

struct Fixture {
  Sink sink;
  Client client;
  Rail rail;
  Fixture() {
    rail.driver = std::make_unique<drivers::loopback::LoopbackDriver>(0);
    rail.driver->SetSink(&sink, 0);
    REQUIRE(rail.driver->Connect(0, {}) == Status::kOk);
    rail.client = &client;
    rail.buf_bytes = 300;
    rail.packet_done = &DoneCb;
  }
};

// Holds `rail` on another thread until released: what a progress thread
// polling the rail looks like to this one.
struct OtherHolder {
  std::atomic<int> step{0};
  std::thread t;
  explicit OtherHolder(Rail& rail) {
    t = std::thread([this, &rail] {
      while (!rail.TryHold()) {
      }
      step.store(1);
      while (step.load() != 2) std::this_thread::yield();
      rail.Release();  // drains what was left meanwhile
    });
    while (step.load() != 1) std::this_thread::yield();
  }
  void Release() {
    step.store(2);
    t.join();
  }
};

TEST_CASE("rail: Run calls at once when the rail is free or held here") {
  Fixture f;
  int calls = 0;
  f.rail.Run([&] {
    CHECK(f.rail.held());
    ++calls;
  });
  CHECK(calls == 1);
  CHECK_FALSE(f.rail.held());  // taken and given back
  REQUIRE(f.rail.TryHold());
  f.rail.Run([&] {
    f.rail.Run([&] { ++calls; });  // nested: already held
    ++calls;
  });
  CHECK(calls == 3);
  CHECK(f.rail.held());
  f.rail.Release();
  CHECK(t_held_rail == nullptr);
}

TEST_CASE("rail: a thread holding another rail never waits for this one") {
  Fixture f, g;
  REQUIRE(g.rail.TryHold());
  CHECK_FALSE(f.rail.TryHold());  // one rail per thread
  int calls = 0;
  f.rail.Run([&] { ++calls; });
  CHECK(calls == 0);  // left for f's next holder
  g.rail.Release();
  f.rail.Poll();
  CHECK(calls == 1);
}

TEST_CASE("rail: operations left for the holder run in order when it drains") {
  Fixture f;
  OtherHolder other(f.rail);
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) f.rail.Run([&order, i] { order.push_back(i); });
  CHECK(order.empty());
  CHECK(f.rail.HasWork());
  other.Release();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("rail: Drain runs the operations before flushing the targets") {
  Fixture f;
  std::vector<std::string> log;
  f.client.log = &log;
  FlushTarget a;
  OtherHolder other(f.rail);
  f.rail.Kick(a);
  f.rail.Run([&] { log.push_back("op"); });
  CHECK(log.empty());
  CHECK(a.dirty.load());
  other.Release();
  CHECK(log == std::vector<std::string>{"op", "flush"});
  CHECK_FALSE(a.dirty.load());
}

TEST_CASE("rail: a target kicked twice before the flush is flushed once") {
  Fixture f;
  FlushTarget a, b;
  OtherHolder other(f.rail);
  f.rail.Kick(a);
  f.rail.Kick(b);
  f.rail.Kick(a);
  other.Release();
  CHECK(f.client.flushed == std::vector<FlushTarget*>{&a, &b});
  // With the rail free, a kick flushes at once.
  f.rail.Kick(b);
  CHECK(f.client.flushed.size() == 3);
  CHECK(f.client.flushed.back() == &b);
}

TEST_CASE("rail: a target requeued during its flush waits for the next drain") {
  Fixture f;
  FlushTarget a;
  f.client.requeue = &a;
  f.client.requeues_left = 1;
  f.rail.Kick(a);  // flushed once, put back
  CHECK(f.client.flushed.size() == 1);
  CHECK(a.dirty.load());
  CHECK(f.rail.HasWork());
  f.rail.Poll();  // the next pass flushes it again
  CHECK(f.client.flushed.size() == 2);
  CHECK_FALSE(a.dirty.load());
  CHECK(f.rail.Poll() == 0);
  CHECK(f.client.flushed.size() == 2);
}

TEST_CASE("rail: Poll delivers, and does nothing while another holds it") {
  Fixture f;
  REQUIRE(f.rail.TryHold());
  iovec iov{const_cast<char*>("hello"), 5};
  REQUIRE(f.rail.driver->PostPacket(0, &iov, 1, nullptr) == Status::kOk);
  f.rail.Release();
  {
    OtherHolder other(f.rail);
    CHECK(f.rail.Poll() == 0);
    CHECK(f.sink.packets.empty());
    other.Release();
  }
  CHECK(f.rail.Poll() == 1);
  CHECK(f.sink.packets == std::vector<std::string>{"hello"});
}

TEST_CASE("rail: packet buffers are pooled and set up once") {
  Fixture f;
  REQUIRE(f.rail.TryHold());
  PacketBuf* a = f.rail.GetBuf();
  PacketBuf* b = f.rail.GetBuf();
  CHECK(a != b);
  CHECK(a->rail == &f.rail);
  CHECK(a->header.size() == 300);
  CHECK(a->c.fn == &DoneCb);
  f.rail.PutBuf(a);
  f.rail.PutBuf(b);
  CHECK(f.rail.pooled_bufs() == 2);
  CHECK(f.rail.GetBuf() == b);  // last in, first out (warm)
  CHECK(f.rail.GetBuf() == a);
  CHECK(f.rail.pooled_bufs() == 0);
  f.rail.PutBuf(a);
  f.rail.PutBuf(b);
  f.rail.Release();
}  // the pool's buffers go with the rail

TEST_CASE("rail: counters and arming") {
  Fixture f;
  Bump(f.rail.counters.packets_sent);
  Bump(f.rail.counters.packets_sent, 4);
  CHECK(f.rail.counters.packets_sent.load() == 5);
  // Loopback has no wake-up fd: arming is refused, and never while
  // something waits for the holder or someone holds the rail.
  CHECK_FALSE(f.rail.Arm());
  REQUIRE(f.rail.TryHold());
  CHECK_FALSE(f.rail.Arm());
  f.rail.Release();
}

}  // namespace
}  // namespace rondo::nmad::internal
