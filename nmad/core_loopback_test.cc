// The whole core in one process, with no network driver linked in
// (//nmad:core_base + the loopback driver): one rank sends to itself
// through the same gates, packet scheduler, matching, rendezvous and
// active messages as between ranks.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "drivers/bootstrap/in_process_bootstrap.h"
#include "drivers/bootstrap/singleton_bootstrap.h"
#include "engine/engine.h"
#include "nmad/core.h"
#include "nmad/rail_factory.h"

namespace rondo::nmad {
namespace {

using drivers::bootstrap::InProcessBootstrap;
using drivers::bootstrap::SingletonBootstrap;

std::unique_ptr<engine::Engine> PollingEngine() {
  engine::EngineOptions o = engine::EngineOptions::FromEnvironment();
  o.progress = {engine::PlacementKind::kNone, {}};
  o.timer_period_us = 0;
  return std::make_unique<engine::Engine>(o);
}

struct Self {
  std::unique_ptr<engine::Engine> engine = PollingEngine();
  std::unique_ptr<Core> core;
  Session* session = nullptr;
  explicit Self(NmadOptions options = {}) {
    std::string why;
    auto c = Core::Create(*engine, std::make_unique<SingletonBootstrap>(),
                          options, NoRemoteRails(), &why);
    INFO(why);
    REQUIRE(c.ok());
    core = std::move(c).value();
    session = core->OpenSession("loopback", {}, &why).value();
  }
};

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

TEST_CASE("loopback core: a one-rank core needs no remote driver") {
  Self s;
  CHECK(s.core->rank() == 0);
  CHECK(s.core->size() == 1);
  CHECK(s.core->rails() == 0);
}

TEST_CASE("loopback core: a remote rail without a driver is refused") {
  // Two ranks (threads): a failed Create is collective too (its teardown
  // runs the bootstrap barrier).
  auto group = InProcessBootstrap::MakeGroup(2);
  std::unique_ptr<engine::Engine> e[2] = {PollingEngine(), PollingEngine()};
  std::string why[2];
  Status st[2] = {Status::kOk, Status::kOk};
  std::thread t[2];
  for (int r = 0; r < 2; ++r)
    t[r] = std::thread([&, r] {
      auto c = Core::Create(*e[r], std::move(group[r]), {}, NoRemoteRails(),
                            &why[r]);
      st[r] = c.status();
    });
  for (auto& th : t) th.join();
  for (int r = 0; r < 2; ++r) {
    CHECK(st[r] == Status::kUnsupported);
    CHECK(why[r].find("rail 0 (ucx)") != std::string::npos);
    CHECK(why[r].find("no driver for rail kind 'ucx'") != std::string::npos);
  }
}

TEST_CASE("loopback core: eager, posted first and unexpected") {
  Self s;
  const auto data = Pattern(100, 3);
  std::vector<uint8_t> got(100, 0);
  RecvInfo info;
  // Posted first.
  Request r, w;
  REQUIRE(s.session->Irecv(0, 5, got.data(), got.size(), r) == Status::kOk);
  REQUIRE(s.session->Isend(0, 5, data.data(), data.size(), w) == Status::kOk);
  CHECK(s.core->Wait(w) == Status::kOk);
  CHECK(s.core->Wait(r) == Status::kOk);
  CHECK(got == data);
  CHECK(r.info().source == 0);
  CHECK(r.info().tag == 5);
  CHECK(r.info().size == 100);
  // Unexpected: sent and delivered before the receive exists.
  const uint64_t before = s.core->stats().unexpected;
  REQUIRE(s.session->Isend(0, 6, data.data(), 40, w) == Status::kOk);
  CHECK(s.core->Wait(w) == Status::kOk);
  bool found = false;
  while (!found)
    REQUIRE(s.session->Iprobe(0, 6, &found, &info) == Status::kOk);
  CHECK(info.size == 40);
  CHECK(s.core->stats().unexpected == before + 1);
  std::fill(got.begin(), got.end(), 0);
  REQUIRE(s.session->Recv(0, 6, got.data(), got.size(), &info) == Status::kOk);
  CHECK(info.received == 40);
  CHECK(std::equal(data.begin(), data.begin() + 40, got.begin()));
}

TEST_CASE("loopback core: TrySendNow sends small messages with no request") {
  Self s;
  // Idle gate: a small message leaves at once, nothing to complete.
  const auto a = Pattern(8, 1);
  REQUIRE(s.session->TrySendNow(0, 3, a.data(), a.size()) == Status::kOk);
  // Bad input as Isend's; too large for the short path: not sent.
  CHECK(s.session->TrySendNow(0, -1, a.data(), 8) == Status::kInvalidArgument);
  CHECK(s.session->TrySendNow(7, 3, a.data(), 8) == Status::kInvalidArgument);
  CHECK(s.session->TrySendNow(0, 3, nullptr, 8) == Status::kInvalidArgument);
  const auto big = Pattern(64 * 1024, 2);
  CHECK(s.session->TrySendNow(0, 3, big.data(), big.size()) ==
        Status::kNoResource);
  // Mixed with Isends on the same tag: received in sending order, whether
  // each left now or (refused) took the ordinary path.
  constexpr int kMsgs = 200;
  std::vector<std::vector<uint8_t>> sent;
  sent.push_back(a);
  std::vector<Request> reqs(kMsgs);
  int now = 1;
  for (int i = 1; i < kMsgs; ++i) {
    auto m = Pattern(static_cast<size_t>(i % 50), static_cast<uint8_t>(i));
    if (i % 4 == 0) {
      REQUIRE(s.session->Isend(0, 3, m.data(), m.size(), reqs[i]) ==
              Status::kOk);
      REQUIRE(s.core->Wait(reqs[i]) == Status::kOk);
    } else {
      const Status st = s.session->TrySendNow(0, 3, m.data(), m.size());
      if (st == Status::kNoResource) {
        REQUIRE(s.session->Isend(0, 3, m.data(), m.size(), reqs[i]) ==
                Status::kOk);
        REQUIRE(s.core->Wait(reqs[i]) == Status::kOk);
      } else {
        REQUIRE(st == Status::kOk);
        ++now;
      }
    }
    sent.push_back(std::move(m));
  }
  CHECK(now > kMsgs / 2);
  for (int i = 0; i < kMsgs; ++i) {
    std::vector<uint8_t> got(64, 0xee);
    RecvInfo info;
    REQUIRE(s.session->Recv(0, 3, got.data(), got.size(), &info) ==
            Status::kOk);
    got.resize(info.received);
    INFO("message " << i);
    CHECK(got == sent[static_cast<size_t>(i)]);
  }
}

TEST_CASE("loopback core: rendezvous, exact and truncated") {
  NmadOptions o;
  o.eager_limit = 1024;
  Self s(o);
  const auto data = Pattern(200000, 9);
  std::vector<uint8_t> got(200000, 0);
  Request r, w;
  const uint64_t rdv = s.core->stats().rendezvous_sent;
  REQUIRE(s.session->Irecv(0, 1, got.data(), got.size(), r) == Status::kOk);
  REQUIRE(s.session->Isend(0, 1, data.data(), data.size(), w) == Status::kOk);
  CHECK(s.core->Wait(r) == Status::kOk);
  CHECK(s.core->Wait(w) == Status::kOk);
  CHECK(got == data);
  CHECK(s.core->stats().rendezvous_sent == rdv + 1);
  // Truncated: the receiver takes what fits, both sizes reported.
  std::vector<uint8_t> small(5000, 0);
  REQUIRE(s.session->Isend(0, 2, data.data(), data.size(), w) == Status::kOk);
  REQUIRE(s.session->Irecv(0, 2, small.data(), small.size(), r) ==
          Status::kOk);
  CHECK(s.core->Wait(r) == Status::kTruncated);
  CHECK(s.core->Wait(w) == Status::kOk);
  CHECK(r.info().size == 200000);
  CHECK(r.info().received == 5000);
  CHECK(std::equal(small.begin(), small.end(), data.begin()));
}

TEST_CASE("loopback core: eager truncation") {
  Self s;
  const auto data = Pattern(64, 1);
  std::vector<uint8_t> got(10, 0);
  RecvInfo info;
  Request w;
  REQUIRE(s.session->Isend(0, 0, data.data(), data.size(), w) == Status::kOk);
  CHECK(s.session->Recv(0, 0, got.data(), got.size(), &info) ==
        Status::kTruncated);
  CHECK(s.core->Wait(w) == Status::kOk);
  CHECK(info.size == 64);
  CHECK(info.received == 10);
  CHECK(std::equal(got.begin(), got.end(), data.begin()));
}

TEST_CASE("loopback core: wildcards match in posting and sending order") {
  Self s;
  int a = 0, b = 0, c = 0;
  Request ra, rb, rc;
  REQUIRE(s.session->Irecv(kAnySource, kAnyTag, &a, sizeof a, ra) ==
          Status::kOk);
  REQUIRE(s.session->Irecv(0, 7, &b, sizeof b, rb) == Status::kOk);
  REQUIRE(s.session->Irecv(kAnySource, 7, &c, sizeof c, rc) == Status::kOk);
  // The first message (tag 7) goes to the earliest posted receive that
  // matches it (the full wildcard), the second to the exact one.
  for (int v : {11, 22, 33}) {
    Request w;
    REQUIRE(s.session->Isend(0, 7, &v, sizeof v, w) == Status::kOk);
    REQUIRE(s.core->Wait(w) == Status::kOk);
  }
  CHECK(s.core->Wait(ra) == Status::kOk);
  CHECK(s.core->Wait(rb) == Status::kOk);
  CHECK(s.core->Wait(rc) == Status::kOk);
  CHECK(a == 11);
  CHECK(b == 22);
  CHECK(c == 33);
  CHECK(ra.info().tag == 7);
  // Unexpected messages are taken in arrival order by a wildcard receive.
  for (int v : {1, 2}) {
    Request w;
    REQUIRE(s.session->Isend(0, 40 + v, &v, sizeof v, w) == Status::kOk);
    REQUIRE(s.core->Wait(w) == Status::kOk);
  }
  RecvInfo info;
  REQUIRE(s.session->Recv(kAnySource, kAnyTag, &a, sizeof a, &info) ==
          Status::kOk);
  CHECK(a == 1);
  CHECK(info.tag == 41);
  REQUIRE(s.session->Recv(kAnySource, kAnyTag, &a, sizeof a, &info) ==
          Status::kOk);
  CHECK(a == 2);
  CHECK(info.tag == 42);
}

struct AmLog {
  std::vector<uint8_t> header;
  std::vector<uint8_t> body;
  size_t body_size = 0;
  bool inline_body = false;
  int source = -1;
  Request body_req;
  int calls = 0;
};

void RecordAm(AmMessage& m, void* arg) noexcept {
  auto* log = static_cast<AmLog*>(arg);
  ++log->calls;
  log->source = m.source();
  log->header.assign(m.header().begin(), m.header().end());
  log->body_size = m.body_size();
  log->inline_body = m.body_inline();
  log->body.assign(m.body_size(), 0);
  (void)m.ReceiveBody(log->body.data(), log->body.size(), log->body_req);
}

TEST_CASE("loopback core: active messages, inline and by rendezvous") {
  NmadOptions o;
  o.eager_limit = 1024;
  Self s(o);
  AmLog log;
  REQUIRE(s.session->RegisterHandler(9, &RecordAm, &log) == Status::kOk);
  const auto header = Pattern(12, 4);
  for (size_t n : {size_t{100}, size_t{50000}}) {
    const auto body = Pattern(n, 8);
    Request w;
    REQUIRE(s.session->SendAm(0, 9, header.data(), header.size(), body.data(),
                              body.size(), w) == Status::kOk);
    CHECK(s.core->Wait(w) == Status::kOk);
    while (log.calls == 0) s.core->Progress();
    REQUIRE(log.calls == 1);
    CHECK(s.core->Wait(log.body_req) == Status::kOk);
    CHECK(log.source == 0);
    CHECK(log.header == header);
    CHECK(log.body == body);
    CHECK(log.inline_body == (n == 100));
    log.calls = 0;
  }
  // No handler: dropped and counted, the send still completes.
  const uint64_t dropped = s.core->stats().am_dropped;
  Request w;
  REQUIRE(s.session->SendAm(0, 10, header.data(), header.size(), nullptr, 0,
                            w) == Status::kOk);
  CHECK(s.core->Wait(w) == Status::kOk);
  while (s.core->stats().am_dropped == dropped) s.core->Progress();
  CHECK(s.core->stats().am_dropped == dropped + 1);
}

TEST_CASE("loopback core: a one-rank in-process group, cancel and bad input") {
  auto group = InProcessBootstrap::MakeGroup(1);
  auto e = PollingEngine();
  std::string why;
  auto c = Core::Create(*e, std::move(group[0]), {}, NoRemoteRails(), &why);
  REQUIRE(c.ok());
  Core& core = *c.value();
  Session* s = core.OpenSession("x").value();
  int v = 0;
  Request r;
  REQUIRE(s->Irecv(0, 3, &v, sizeof v, r) == Status::kOk);
  CHECK(s->CancelRecv(r) == Status::kOk);
  CHECK(core.Wait(r) == Status::kCanceled);
  CHECK(s->Isend(1, 0, &v, sizeof v, r) == Status::kInvalidArgument);
  CHECK(s->Isend(0, -2, &v, sizeof v, r) == Status::kInvalidArgument);
  CHECK(s->Irecv(0, 0, nullptr, 4, r) == Status::kInvalidArgument);
}

}  // namespace
}  // namespace rondo::nmad
