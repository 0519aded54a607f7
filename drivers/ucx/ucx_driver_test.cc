#include "drivers/ucx/ucx_driver.h"

#include <poll.h>
#include <ucs/type/status.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "drivers/testing/recording_sink.h"

namespace rondo::drivers::ucx {
namespace {

using Clock = std::chrono::steady_clock;

using testing::Packet;
using testing::RecordingSink;
using testing::TestCompletion;

std::unique_ptr<UcxDriver> MakeDriver(UcxDriverOptions options) {
  std::string error;
  auto driver = UcxDriver::Create(options, &error);
  INFO(error);
  REQUIRE(driver.ok());
  return std::move(driver).value();
}

// Two drivers in this process, peers 0 and 1, connected both ways.
struct Pair {
  explicit Pair(bool error_handling, int rail = 0) {
    a = MakeDriver({.self = 0, .rail_id = rail,
                    .error_handling = error_handling});
    b = MakeDriver({.self = 1, .rail_id = rail,
                    .error_handling = error_handling});
    a->SetSink(&sink_a, rail);
    b->SetSink(&sink_b, rail);
    auto address_a = a->LocalAddress();
    auto address_b = b->LocalAddress();
    REQUIRE(address_a.ok());
    REQUIRE(address_b.ok());
    REQUIRE(a->Connect(1, address_b.value()) == Status::kOk);
    REQUIRE(b->Connect(0, address_a.value()) == Status::kOk);
  }
  // Polls both until `done` holds; the 20 s limit only turns a hang into a
  // failure, it is not how the test synchronizes.
  bool PollUntil(const std::function<bool()>& done) {
    const auto limit = Clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (Clock::now() > limit) return false;
      a->Poll();
      b->Poll();
    }
    return true;
  }
  RecordingSink sink_a, sink_b;
  std::unique_ptr<UcxDriver> a, b;
};

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<uint8_t>((i * 131) ^ (i >> 9) ^ seed);
  }
  return v;
}

uint64_t Checksum(const std::vector<uint8_t>& v) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (uint8_t x : v) h = (h ^ x) * 1099511628211ull;
  return h;
}

// error_handling=true selects tcp here (UCX 1.13's shared-memory transports
// cannot do peer error handling), false selects sysv/cma: test both paths.
bool ErrorHandlingMode() { return GENERATE(true, false); }

TEST_CASE("ucx: options are validated", "[ucx]") {
  std::string error;
  auto bad_self = UcxDriver::Create({}, &error);
  CHECK(bad_self.status() == Status::kInvalidArgument);
  CHECK(error.find("self") != std::string::npos);
  CHECK(UcxDriver::Create({.self = 65536}, &error).status() ==
        Status::kInvalidArgument);
  CHECK(UcxDriver::Create({.self = 0, .rail_id = -1}, &error).status() ==
        Status::kInvalidArgument);
  CHECK(UcxDriver::Create({.self = 0, .max_packet = 0}, &error).status() ==
        Status::kInvalidArgument);
  CHECK(UcxDriver::Create({.self = 0, .max_packet = kMaxPacketLimit + 1},
                          &error)
            .status() == Status::kInvalidArgument);
  CHECK(error.find("max_packet") != std::string::npos);
  CHECK(ValidateOptions({.self = 3}).empty());
}

TEST_CASE("ucx: status mapping", "[ucx]") {
  CHECK(FromUcsStatus(UCS_OK) == Status::kOk);
  CHECK(FromUcsStatus(UCS_INPROGRESS) == Status::kInProgress);
  CHECK(FromUcsStatus(UCS_ERR_NO_RESOURCE) == Status::kNoResource);
  CHECK(FromUcsStatus(UCS_ERR_MESSAGE_TRUNCATED) == Status::kTruncated);
  CHECK(FromUcsStatus(UCS_ERR_CANCELED) == Status::kCanceled);
  CHECK(FromUcsStatus(UCS_ERR_UNREACHABLE) == Status::kPeerFailed);
  CHECK(FromUcsStatus(UCS_ERR_CONNECTION_RESET) == Status::kPeerFailed);
  CHECK(FromUcsStatus(UCS_ERR_ENDPOINT_TIMEOUT) == Status::kPeerFailed);
  CHECK(FromUcsStatus(UCS_ERR_TIMED_OUT) == Status::kPeerFailed);
  CHECK(FromUcsStatus(UCS_ERR_INVALID_PARAM) == Status::kInvalidArgument);
  CHECK(FromUcsStatus(UCS_ERR_NO_MEMORY) == Status::kInternal);
}

TEST_CASE("ucx: caps and set-up", "[ucx]") {
  Pair pair(ErrorHandlingMode());
  const DriverCaps& caps = pair.a->caps();
  CHECK(caps.name == "ucx");
  CHECK(caps.max_packet == 64 * 1024);
  CHECK(caps.rendezvous);
  CHECK(caps.zero_copy);
  CHECK(caps.wakeup_fd);
  CHECK(caps.bandwidth_bytes_per_s > 0);
  CHECK(caps.latency_ns > 0);
  CHECK(pair.a->WakeupFd() >= 0);
  auto address = pair.b->LocalAddress();
  CHECK(pair.a->Connect(1, address.value()) == Status::kInvalidArgument);
  CHECK(pair.a->Connect(-1, address.value()) == Status::kInvalidArgument);
  CHECK(pair.a->Connect(65536, address.value()) == Status::kInvalidArgument);
  char byte = 0;
  iovec iov{&byte, 1};
  CHECK(pair.a->PostPacket(2, &iov, 1, nullptr) == Status::kInvalidArgument);
  auto no_wakeup = MakeDriver({.self = 0, .wakeup = false});
  CHECK_FALSE(no_wakeup->caps().wakeup_fd);
  CHECK(no_wakeup->WakeupFd() == -1);
  CHECK(no_wakeup->Arm() == Status::kUnsupported);
}

TEST_CASE("ucx: 100 packets with 1 and 3 iov entries arrive in order",
          "[ucx]") {
  Pair pair(ErrorHandlingMode(), /*rail=*/4);
  std::vector<std::string> expected;
  std::vector<TestCompletion> done(100);
  std::vector<std::string> parts;
  parts.reserve(300);  // buffers stay alive until their completion
  int in_progress = 0;
  for (int i = 0; i < 100; ++i) {
    std::string& a = parts.emplace_back("head" + std::to_string(i));
    std::string& b = parts.emplace_back(
        static_cast<size_t>(i * 300), static_cast<char>('a' + i % 26));
    std::string& c = parts.emplace_back("tail");
    Status s;
    if (i % 2 == 0) {
      iovec iov{a.data(), a.size()};
      s = pair.a->PostPacket(1, &iov, 1, &done[i]);
      expected.push_back(a);
    } else {
      iovec iov[3] = {{a.data(), a.size()}, {b.data(), b.size()},
                      {c.data(), c.size()}};
      s = pair.a->PostPacket(1, iov, 3, &done[i]);
      expected.push_back(a + b + c);
    }
    REQUIRE((s == Status::kOk || s == Status::kInProgress));
    if (s == Status::kInProgress) ++in_progress;
  }
  REQUIRE(pair.PollUntil([&] { return pair.sink_b.packets.size() == 100; }));
  REQUIRE(pair.PollUntil([&] {
    int calls = 0;
    for (auto& d : done) calls += d.calls;
    return calls == in_progress;
  }));
  for (int i = 0; i < 100; ++i) {
    CHECK(pair.sink_b.packets[i].peer == 0);
    CHECK(pair.sink_b.packets[i].rail == 4);
    CHECK(pair.sink_b.packets[i].data == expected[i]);
    if (done[i].calls == 1) CHECK(done[i].status == Status::kOk);
  }
  CHECK(pair.b->packets_received() == 100);
  CHECK(pair.b->packets_dropped() == 0);
  CHECK(pair.sink_a.packets.empty());
}

TEST_CASE("ucx: a packet without completion is copied out or refused",
          "[ucx]") {
  Pair pair(false);
  // 200 packets from one reused stack buffer: each post returns kOk (the
  // driver copied it, the buffer may change at once) or kNoResource
  // (nothing sent; retried), never kInProgress.
  int sent = 0;
  REQUIRE(pair.PollUntil([&] {
    char buf[48];
    std::snprintf(buf, sizeof buf, "packet %03d", sent);
    iovec iov{buf, std::strlen(buf)};
    Status s = pair.a->PostPacket(1, &iov, 1, nullptr);
    REQUIRE((s == Status::kOk || s == Status::kNoResource));
    std::memset(buf, 'x', sizeof buf);  // reused at once
    if (s == Status::kOk) ++sent;
    return sent == 200;
  }));
  REQUIRE(pair.PollUntil([&] { return pair.sink_b.packets.size() == 200; }));
  for (int i = 0; i < 200; ++i) {
    char want[48];
    std::snprintf(want, sizeof want, "packet %03d", i);
    REQUIRE(pair.sink_b.packets[i].data == want);
  }
}

TEST_CASE("ucx: packet size limit", "[ucx]") {
  Pair pair(true);
  std::vector<char> big(64 * 1024 + 1, 'x');
  iovec iov{big.data(), big.size()};
  CHECK(pair.a->PostPacket(1, &iov, 1, nullptr) == Status::kInvalidArgument);
  iovec split[2] = {{big.data(), 32 * 1024}, {big.data(), 32 * 1024 + 1}};
  CHECK(pair.a->PostPacket(1, split, 2, nullptr) == Status::kInvalidArgument);
  std::vector<iovec> many(kMaxIov + 1, iovec{big.data(), 1});
  CHECK(pair.a->PostPacket(1, many.data(), kMaxIov + 1, nullptr) ==
        Status::kInvalidArgument);
  // Exactly max_packet goes through, eagerly.
  TestCompletion done;
  iov.iov_len = 64 * 1024;
  Status s = pair.a->PostPacket(1, &iov, 1, &done);
  REQUIRE((s == Status::kOk || s == Status::kInProgress));
  REQUIRE(pair.PollUntil([&] {
    return pair.sink_b.packets.size() == 1 &&
           (s == Status::kOk || done.calls == 1);
  }));
  CHECK(pair.sink_b.packets[0].data == std::string(64 * 1024, 'x'));
}

TEST_CASE("ucx: 8 MiB rendezvous in both orders", "[ucx]") {
  const bool error_handling = ErrorHandlingMode();
  const bool recv_first = GENERATE(true, false);
  CAPTURE(error_handling, recv_first);
  Pair pair(error_handling);
  constexpr size_t kLen = 8 << 20;
  std::vector<uint8_t> src = Pattern(kLen, 7);
  std::vector<uint8_t> dst(kLen, 0);
  TestCompletion send_done, recv_done;
  if (recv_first) {
    REQUIRE(pair.b->PostRdvRecv(0, 99, dst.data(), kLen, &recv_done) ==
            Status::kInProgress);
    REQUIRE(pair.a->PostRdvSend(1, 99, src.data(), kLen, &send_done) ==
            Status::kInProgress);
  } else {
    REQUIRE(pair.a->PostRdvSend(1, 99, src.data(), kLen, &send_done) ==
            Status::kInProgress);
    // Let the send reach the receiver as an unexpected message first.
    for (int i = 0; i < 100; ++i) {
      pair.a->Poll();
      pair.b->Poll();
    }
    REQUIRE(pair.b->PostRdvRecv(0, 99, dst.data(), kLen, &recv_done) ==
            Status::kInProgress);
  }
  CHECK(recv_done.calls == 0);  // never from inside Post*
  REQUIRE(pair.PollUntil(
      [&] { return send_done.calls == 1 && recv_done.calls == 1; }));
  CHECK(send_done.status == Status::kOk);
  CHECK(send_done.bytes == kLen);
  CHECK(recv_done.status == Status::kOk);
  CHECK(recv_done.bytes == kLen);
  CHECK(Checksum(dst) == Checksum(src));
  CHECK(dst == src);
}

TEST_CASE("ucx: rendezvous matches by peer and key", "[ucx]") {
  Pair pair(false);
  std::vector<uint8_t> x = Pattern(5000, 1), y = Pattern(7000, 2);
  std::vector<uint8_t> rx(5000), ry(7000);
  TestCompletion sx, sy, cx, cy;
  // Receive key 2 first, then both sends: each lands in its own buffer.
  REQUIRE(pair.b->PostRdvRecv(0, 2, ry.data(), ry.size(), &cy) ==
          Status::kInProgress);
  REQUIRE(pair.a->PostRdvSend(1, 1, x.data(), x.size(), &sx) ==
          Status::kInProgress);
  REQUIRE(pair.a->PostRdvSend(1, 2, y.data(), y.size(), &sy) ==
          Status::kInProgress);
  REQUIRE(pair.PollUntil([&] { return cy.calls == 1; }));
  REQUIRE(pair.b->PostRdvRecv(0, 1, rx.data(), rx.size(), &cx) ==
          Status::kInProgress);
  REQUIRE(pair.PollUntil([&] {
    return cx.calls == 1 && sx.calls == 1 && sy.calls == 1;
  }));
  CHECK(rx == x);
  CHECK(ry == y);
  CHECK(cx.bytes == 5000);
  CHECK(cy.bytes == 7000);
  // The same key in the other direction is an independent transfer.
  std::vector<uint8_t> z = Pattern(100, 3), rz(100);
  TestCompletion sz, cz;
  REQUIRE(pair.b->PostRdvSend(0, 5, z.data(), z.size(), &sz) ==
          Status::kInProgress);
  REQUIRE(pair.a->PostRdvRecv(1, 5, rz.data(), rz.size(), &cz) ==
          Status::kInProgress);
  REQUIRE(pair.PollUntil([&] { return cz.calls == 1 && sz.calls == 1; }));
  CHECK(rz == z);
}

TEST_CASE("ucx: truncated rendezvous receive reports kTruncated", "[ucx]") {
  const bool error_handling = ErrorHandlingMode();
  const size_t len = GENERATE(size_t{1000}, size_t{4} << 20);
  CAPTURE(error_handling, len);
  Pair pair(error_handling);
  std::vector<uint8_t> src = Pattern(len, 9);
  std::vector<uint8_t> dst(len / 2, 0xEE);
  TestCompletion send_done, recv_done;
  REQUIRE(pair.b->PostRdvRecv(0, 3, dst.data(), dst.size(), &recv_done) ==
          Status::kInProgress);
  REQUIRE(pair.a->PostRdvSend(1, 3, src.data(), src.size(), &send_done) ==
          Status::kInProgress);
  REQUIRE(pair.PollUntil(
      [&] { return send_done.calls == 1 && recv_done.calls == 1; }));
  CHECK(recv_done.status == Status::kTruncated);
  // Measured UCX 1.13.1 behaviour (documented in ucx_driver.h): no data is
  // delivered into a truncated receive, so 0 bytes are reported.
  CHECK(recv_done.bytes == 0);
  CHECK(dst == std::vector<uint8_t>(len / 2, 0xEE));
  CHECK(send_done.status == Status::kOk);
}

TEST_CASE("ucx: Post from inside OnPacket and completions", "[ucx]") {
  Pair pair(ErrorHandlingMode());
  // b answers every packet with a packet and a rendezvous send; a's
  // completion of the rendezvous receive posts the next one.
  std::vector<std::string> replies;
  replies.reserve(10);
  std::vector<std::unique_ptr<TestCompletion>> reply_done;
  std::vector<uint8_t> payload = Pattern(100000, 4);
  std::vector<std::unique_ptr<TestCompletion>> rdv_done;
  pair.sink_b.on_packet = [&](const Packet& p) {
    std::string& r = replies.emplace_back("re:" + p.data);
    iovec iov{r.data(), r.size()};
    auto& d = reply_done.emplace_back(std::make_unique<TestCompletion>());
    Status s = pair.b->PostPacket(0, &iov, 1, d.get());
    CHECK((s == Status::kOk || s == Status::kInProgress));
    auto& rd = rdv_done.emplace_back(std::make_unique<TestCompletion>());
    CHECK(pair.b->PostRdvSend(0, replies.size(), payload.data(),
                              payload.size(), rd.get()) ==
          Status::kInProgress);
  };
  struct ChainedRecv : Completion {
    UcxDriver* driver;
    std::vector<uint8_t> buf;
    int received = 0;
    bool ok = true;
  } chain;
  chain.driver = pair.a.get();
  chain.buf.resize(payload.size());
  chain.fn = [](Completion* self, Status status, size_t bytes) noexcept {
    auto* c = static_cast<ChainedRecv*>(self);
    c->ok = c->ok && status == Status::kOk && bytes == c->buf.size();
    ++c->received;
    if (c->received < 3) {
      c->ok = c->ok && c->driver->PostRdvRecv(1, c->received + 1,
                                              c->buf.data(), c->buf.size(),
                                              c) == Status::kInProgress;
    }
  };
  REQUIRE(pair.a->PostRdvRecv(1, 1, chain.buf.data(), chain.buf.size(),
                              &chain) == Status::kInProgress);
  std::string msgs[3] = {"one", "two", "three"};
  for (std::string& m : msgs) {
    iovec iov{m.data(), m.size()};
    // No completion: copied out now, or kNoResource (wire-up not done
    // yet): poll and retry.
    Status s;
    REQUIRE(pair.PollUntil([&] {
      s = pair.a->PostPacket(1, &iov, 1, nullptr);
      return s != Status::kNoResource;
    }));
    REQUIRE(s == Status::kOk);
  }
  REQUIRE(pair.PollUntil([&] {
    int sent = 0;
    for (auto& d : rdv_done) sent += d->calls;
    return pair.sink_a.packets.size() == 3 && chain.received == 3 &&
           sent == 3;
  }));
  CHECK(chain.ok);
  CHECK(chain.buf == payload);
  CHECK(pair.sink_a.packets[0].data == "re:one");
  CHECK(pair.sink_a.packets[2].data == "re:three");
  CHECK(pair.sink_a.packets[1].peer == 1);
}

TEST_CASE("ucx: Arm then traffic makes the wakeup fd readable", "[ucx]") {
  Pair pair(ErrorHandlingMode());
  // Drain connection set-up traffic until a's worker agrees to sleep.
  Status armed = Status::kBusy;
  REQUIRE(pair.PollUntil([&] {
    armed = pair.a->Arm();
    return armed != Status::kBusy;
  }));
  REQUIRE(armed == Status::kOk);
  std::string m = "wake up";
  iovec iov{m.data(), m.size()};
  TestCompletion done;
  Status s = pair.b->PostPacket(0, &iov, 1, &done);
  REQUIRE((s == Status::kOk || s == Status::kInProgress));
  pollfd pfd{pair.a->WakeupFd(), POLLIN, 0};
  int ready = 0;
  // b may need progress to push the packet out; a is NOT polled here.
  const auto limit = Clock::now() + std::chrono::seconds(10);
  while (ready == 0 && Clock::now() < limit) {
    pair.b->Poll();
    ready = poll(&pfd, 1, 10);  // upper bound per round, not a sleep
  }
  REQUIRE(ready == 1);
  CHECK((pfd.revents & POLLIN) != 0);
  REQUIRE(pair.PollUntil([&] { return pair.sink_a.packets.size() == 1; }));
  CHECK(pair.sink_a.packets[0].data == "wake up");
}

TEST_CASE("ucx: Arm reports kBusy while completions are queued", "[ucx]") {
  Pair pair(false);
  std::vector<uint8_t> src = Pattern(64, 1), dst(64);
  TestCompletion send_done, recv_done;
  REQUIRE(pair.a->PostRdvSend(1, 8, src.data(), src.size(), &send_done) ==
          Status::kInProgress);
  REQUIRE(pair.PollUntil([&] { return send_done.calls == 1; }));
  // b has the message as unexpected; an immediate receive completion is
  // queued for the next Poll, so b must not sleep.
  for (int i = 0; i < 50; ++i) pair.b->Poll();
  REQUIRE(pair.b->PostRdvRecv(0, 8, dst.data(), dst.size(), &recv_done) ==
          Status::kInProgress);
  if (recv_done.calls == 0) {
    CHECK(pair.b->Arm() == Status::kBusy);
  }
  REQUIRE(pair.PollUntil([&] { return recv_done.calls == 1; }));
  CHECK(dst == src);
}

TEST_CASE("ucx: Close completes a pending receive with kCanceled", "[ucx]") {
  Pair pair(ErrorHandlingMode());
  std::vector<uint8_t> dst(1 << 20);
  TestCompletion recv_done;
  REQUIRE(pair.a->PostRdvRecv(1, 11, dst.data(), dst.size(), &recv_done) ==
          Status::kInProgress);
  pair.a->Poll();
  pair.b->Poll();
  pair.a->Close(2000);
  CHECK(recv_done.calls == 1);
  CHECK(recv_done.status == Status::kCanceled);
  CHECK(recv_done.bytes == 0);
  char byte = 0;
  iovec iov{&byte, 1};
  CHECK(pair.a->PostPacket(1, &iov, 1, nullptr) == Status::kCanceled);
  CHECK(pair.a->PostRdvRecv(1, 12, dst.data(), dst.size(), &recv_done) ==
        Status::kCanceled);
  pair.b->Close(2000);
}

TEST_CASE("ucx: two rails per side both carry traffic", "[ucx]") {
  const bool error_handling = ErrorHandlingMode();
  Pair rail0(error_handling, 0);
  Pair rail1(error_handling, 1);
  constexpr size_t kHalf = 4 << 20;
  std::vector<uint8_t> src = Pattern(2 * kHalf, 5), dst(2 * kHalf, 0);
  TestCompletion s0, s1, r0, r1;
  REQUIRE(rail0.b->PostRdvRecv(0, 1, dst.data(), kHalf, &r0) ==
          Status::kInProgress);
  REQUIRE(rail1.b->PostRdvRecv(0, 1, dst.data() + kHalf, kHalf, &r1) ==
          Status::kInProgress);
  REQUIRE(rail0.a->PostRdvSend(1, 1, src.data(), kHalf, &s0) ==
          Status::kInProgress);
  REQUIRE(rail1.a->PostRdvSend(1, 1, src.data() + kHalf, kHalf, &s1) ==
          Status::kInProgress);
  std::string p0 = "rail0", p1 = "rail1";
  iovec i0{p0.data(), p0.size()}, i1{p1.data(), p1.size()};
  Status st0 = Status::kNoResource, st1 = Status::kNoResource;
  for (auto t = Clock::now() + std::chrono::seconds(20);
       (st0 == Status::kNoResource || st1 == Status::kNoResource) &&
       Clock::now() < t;) {
    if (st0 == Status::kNoResource)
      st0 = rail0.a->PostPacket(1, &i0, 1, nullptr);
    if (st1 == Status::kNoResource)
      st1 = rail1.a->PostPacket(1, &i1, 1, nullptr);
    rail0.a->Poll();
    rail0.b->Poll();
    rail1.a->Poll();
    rail1.b->Poll();
  }
  REQUIRE(st0 == Status::kOk);
  REQUIRE(st1 == Status::kOk);
  const auto limit = Clock::now() + std::chrono::seconds(20);
  while (!(r0.calls && r1.calls && s0.calls && s1.calls &&
           rail0.sink_b.packets.size() == 1 &&
           rail1.sink_b.packets.size() == 1) &&
         Clock::now() < limit) {
    rail0.a->Poll();
    rail0.b->Poll();
    rail1.a->Poll();
    rail1.b->Poll();
  }
  REQUIRE(r0.calls == 1);
  REQUIRE(r1.calls == 1);
  CHECK(r0.status == Status::kOk);
  CHECK(r1.status == Status::kOk);
  CHECK(dst == src);
  REQUIRE(rail0.sink_b.packets.size() == 1);
  REQUIRE(rail1.sink_b.packets.size() == 1);
  CHECK(rail0.sink_b.packets[0].data == "rail0");
  CHECK(rail0.sink_b.packets[0].rail == 0);
  CHECK(rail1.sink_b.packets[0].data == "rail1");
  CHECK(rail1.sink_b.packets[0].rail == 1);
}

TEST_CASE("ucx: a destroyed peer is reported from Poll", "[ucx]") {
  Pair pair(true);  // needs UCP_ERR_HANDLING_MODE_PEER (tcp here)
  std::string m = "hello";
  iovec iov{m.data(), m.size()};
  Status st;
  REQUIRE(pair.PollUntil([&] {
    st = pair.a->PostPacket(1, &iov, 1, nullptr);
    return st != Status::kNoResource;
  }));
  REQUIRE(st == Status::kOk);
  REQUIRE(pair.PollUntil([&] { return pair.sink_b.packets.size() == 1; }));
  std::vector<uint8_t> dst(100);
  TestCompletion recv_done;
  REQUIRE(pair.a->PostRdvRecv(1, 77, dst.data(), dst.size(), &recv_done) ==
          Status::kInProgress);
  pair.b.reset();  // peer 1 disappears without a goodbye
  const auto limit = Clock::now() + std::chrono::seconds(20);
  std::vector<TestCompletion> sends(1000);
  size_t next = 0;
  while (pair.sink_a.failures.empty() && Clock::now() < limit) {
    if (next < sends.size()) {  // traffic makes the failure visible
      Status s = pair.a->PostPacket(1, &iov, 1, &sends[next++]);
      if (s == Status::kPeerFailed) break;
    }
    pair.a->Poll();
  }
  pair.a->Poll();
  REQUIRE(pair.sink_a.failures.size() == 1);
  CHECK(pair.sink_a.failures[0].peer == 1);
  CHECK(pair.sink_a.failure_status == Status::kPeerFailed);
  INFO(pair.sink_a.failures[0].data);
  CHECK(pair.sink_a.failures[0].data.find("UCX") != std::string::npos);
  CHECK(recv_done.calls == 1);
  CHECK(recv_done.status == Status::kPeerFailed);
  CHECK(pair.a->PostPacket(1, &iov, 1, nullptr) == Status::kPeerFailed);
}

// One-sided operations, with and without peer error handling (tcp, or
// shared memory with cma): put, get, every atomic on 4 and 8 bytes, flush,
// and this process's own memory through the self endpoint.
TEST_CASE("ucx: remote memory put, get, atomics and flush", "[ucx]") {
  const bool error_handling = GENERATE(false, true);
  Pair pair(error_handling);
  RemoteMemory* ra = pair.a->remote_memory();
  RemoteMemory* rb = pair.b->remote_memory();
  REQUIRE(ra != nullptr);
  REQUIRE(rb != nullptr);
  CHECK(ra->Reaches(0));
  CHECK(ra->Reaches(1));
  CHECK_FALSE(ra->Reaches(2));
  alignas(64) uint64_t window[64] = {};
  MemoryRegion* region = nullptr;
  std::vector<uint8_t> packed;
  REQUIRE(rb->Map(window, sizeof window, &region, &packed) == Status::kOk);
  CHECK(rb->Map(nullptr, 8, &region, &packed) == Status::kInvalidArgument);
  RemoteKey* key = nullptr;
  REQUIRE(ra->UnpackKey(1, packed, &key) == Status::kOk);
  CHECK(ra->UnpackKey(7, packed, &key) == Status::kInvalidArgument);
  const uint64_t base = reinterpret_cast<uintptr_t>(window);
  // Waits for an operation that returned kInProgress.
  auto finish = [&](Status s, TestCompletion& c) {
    if (s == Status::kOk) return true;
    REQUIRE(s == Status::kInProgress);
    return pair.PollUntil([&] { return c.calls == 1; }) &&
           c.status == Status::kOk;
  };
  std::vector<uint8_t> out = Pattern(200, 3);
  TestCompletion put_done;
  REQUIRE(finish(ra->Put(1, out.data(), out.size(), base + 8, key, &put_done),
                 put_done));
  TestCompletion flushed;
  REQUIRE(finish(ra->Flush(1, &flushed), flushed));
  CHECK(std::memcmp(reinterpret_cast<uint8_t*>(window) + 8, out.data(),
                    out.size()) == 0);
  std::vector<uint8_t> in(200);
  TestCompletion got;
  REQUIRE(finish(ra->Get(1, in.data(), in.size(), base + 8, key, &got), got));
  CHECK(in == out);

  window[40] = 10;
  uint64_t v = 5, old = 0;
  TestCompletion c1;
  REQUIRE(finish(ra->Atomic(1, AtomicOp::kAdd, 8, &v, &old, base + 40 * 8,
                            key, &c1),
                 c1));
  CHECK(old == 10);
  v = 0xF0;
  TestCompletion c2;
  REQUIRE(finish(ra->Atomic(1, AtomicOp::kOr, 8, &v, nullptr, base + 40 * 8,
                            key, &c2),
                 c2));
  TestCompletion f2;
  REQUIRE(finish(ra->Flush(1, &f2), f2));
  CHECK(window[40] == (15 | 0xF0));
  // Compare-and-swap: compare with `value`, the new value in `result`.
  uint64_t compare = 15 | 0xF0, swap_in = 77;
  TestCompletion c3;
  REQUIRE(finish(ra->Atomic(1, AtomicOp::kCompareSwap, 8, &compare, &swap_in,
                            base + 40 * 8, key, &c3),
                 c3));
  CHECK(swap_in == (15 | 0xF0));
  CHECK(window[40] == 77);
  uint32_t w32 = 0x0F, old32 = 0;
  window[41] = 0;
  reinterpret_cast<uint32_t*>(&window[41])[1] = 0xFF;
  TestCompletion c4;
  REQUIRE(finish(ra->Atomic(1, AtomicOp::kAnd, 4, &w32, &old32,
                            base + 41 * 8 + 4, key, &c4),
                 c4));
  CHECK(old32 == 0xFF);
  CHECK(reinterpret_cast<uint32_t*>(&window[41])[1] == 0x0F);
  uint32_t x32 = 3;
  TestCompletion c5;
  REQUIRE(finish(ra->Atomic(1, AtomicOp::kSwap, 4, &x32, &old32,
                            base + 41 * 8 + 4, key, &c5),
                 c5));
  CHECK(old32 == 0x0F);
  CHECK(reinterpret_cast<uint32_t*>(&window[41])[1] == 3);
  // Misaligned, wrong size, swap without result: refused, nothing sent.
  CHECK(ra->Atomic(1, AtomicOp::kAdd, 8, &v, nullptr, base + 4, key,
                   nullptr) == Status::kInvalidArgument);
  CHECK(ra->Atomic(1, AtomicOp::kAdd, 2, &v, nullptr, base, key, nullptr) ==
        Status::kInvalidArgument);
  CHECK(ra->Atomic(1, AtomicOp::kSwap, 8, &v, nullptr, base, key, nullptr) ==
        Status::kInvalidArgument);

  // This process's own memory, through the self endpoint.
  alignas(8) uint64_t mine[4] = {1, 2, 3, 4};
  MemoryRegion* own = nullptr;
  std::vector<uint8_t> own_packed;
  REQUIRE(ra->Map(mine, sizeof mine, &own, &own_packed) == Status::kOk);
  RemoteKey* self_key = nullptr;
  REQUIRE(ra->UnpackKey(0, own_packed, &self_key) == Status::kOk);
  uint64_t add = 100, before = 0;
  TestCompletion c6;
  REQUIRE(finish(ra->Atomic(0, AtomicOp::kAdd, 8, &add, &before,
                            reinterpret_cast<uintptr_t>(&mine[2]), self_key,
                            &c6),
                 c6));
  CHECK(before == 3);
  CHECK(mine[2] == 103);
  ra->ReleaseKey(self_key);
  ra->Unmap(own);
  ra->ReleaseKey(key);
  rb->Unmap(region);
}

}  // namespace
}  // namespace rondo::drivers::ucx
