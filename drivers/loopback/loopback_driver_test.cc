#include "drivers/loopback/loopback_driver.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "drivers/testing/recording_sink.h"

namespace rondo::drivers::loopback {
namespace {

using testing::Packet;
using testing::RecordingSink;
using testing::TestCompletion;

constexpr int kSelf = 3;
constexpr int kRail = 2;

TEST_CASE("loopback: caps and set-up", "[loopback]") {
  LoopbackDriver driver(kSelf);
  CHECK(driver.caps().name == "loopback");
  CHECK(driver.caps().max_packet == size_t{1} << 20);
  CHECK(driver.caps().rendezvous);
  CHECK_FALSE(driver.caps().zero_copy);
  CHECK_FALSE(driver.caps().wakeup_fd);
  CHECK(driver.caps().bandwidth_bytes_per_s > 0);
  CHECK(driver.WakeupFd() == -1);
  CHECK(driver.Arm() == Status::kUnsupported);
  auto address = driver.LocalAddress();
  REQUIRE(address.ok());
  CHECK(driver.Connect(kSelf, address.value()) == Status::kOk);
  CHECK(driver.Connect(kSelf + 1, address.value()) ==
        Status::kInvalidArgument);
  CHECK_THROWS_AS(LoopbackDriver(-1), std::invalid_argument);
  CHECK_THROWS_AS(LoopbackDriver(65536), std::invalid_argument);
  CHECK_THROWS_AS(LoopbackDriver(0, {.max_packet = 0}),
                  std::invalid_argument);
}

TEST_CASE("loopback: packets arrive intact and in order", "[loopback]") {
  LoopbackDriver driver(kSelf);
  RecordingSink sink;
  driver.SetSink(&sink, kRail);
  CHECK(driver.Poll() == 0);
  std::vector<std::string> expected;
  for (int i = 0; i < 100; ++i) {
    std::string a = "head" + std::to_string(i);
    std::string b(static_cast<size_t>(i * 7), static_cast<char>('a' + i % 26));
    std::string c = "tail";
    if (i % 2 == 0) {
      iovec iov{a.data(), a.size()};
      REQUIRE(driver.PostPacket(kSelf, &iov, 1, nullptr) == Status::kOk);
      expected.push_back(a);
    } else {
      iovec iov[3] = {{a.data(), a.size()}, {b.data(), b.size()},
                      {c.data(), c.size()}};
      REQUIRE(driver.PostPacket(kSelf, iov, 3, nullptr) == Status::kOk);
      expected.push_back(a + b + c);
    }
    a.assign(a.size(), 'X');  // the driver copied: buffers reusable at once
  }
  CHECK(sink.packets.empty());  // nothing before Poll
  CHECK(driver.Poll() == 100);
  REQUIRE(sink.packets.size() == 100);
  for (int i = 0; i < 100; ++i) {
    CHECK(sink.packets[i].peer == kSelf);
    CHECK(sink.packets[i].rail == kRail);
    CHECK(sink.packets[i].data == expected[i]);
  }
  CHECK(driver.Poll() == 0);
}

TEST_CASE("loopback: bad packets are refused", "[loopback]") {
  LoopbackDriver driver(kSelf, {.max_packet = 1000});
  std::vector<char> big(1001);
  iovec iov{big.data(), big.size()};
  CHECK(driver.PostPacket(kSelf, &iov, 1, nullptr) ==
        Status::kInvalidArgument);
  iov.iov_len = 1000;
  CHECK(driver.PostPacket(kSelf, &iov, 1, nullptr) == Status::kOk);
  CHECK(driver.PostPacket(kSelf + 1, &iov, 1, nullptr) ==
        Status::kInvalidArgument);
  CHECK(driver.PostPacket(kSelf, &iov, -1, nullptr) ==
        Status::kInvalidArgument);
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed);
  return v;
}

TEST_CASE("loopback: rendezvous in both orders", "[loopback]") {
  const bool recv_first = GENERATE(true, false);
  constexpr size_t kLen = 8 << 20;
  LoopbackDriver driver(kSelf);
  std::vector<uint8_t> src = Pattern(kLen, 5);
  std::vector<uint8_t> dst(kLen, 0);
  TestCompletion send_done, recv_done;
  if (recv_first) {
    REQUIRE(driver.PostRdvRecv(kSelf, 42, dst.data(), kLen, &recv_done) ==
            Status::kInProgress);
    REQUIRE(driver.PostRdvSend(kSelf, 42, src.data(), kLen, &send_done) ==
            Status::kInProgress);
  } else {
    REQUIRE(driver.PostRdvSend(kSelf, 42, src.data(), kLen, &send_done) ==
            Status::kInProgress);
    REQUIRE(driver.PostRdvRecv(kSelf, 42, dst.data(), kLen, &recv_done) ==
            Status::kInProgress);
  }
  CHECK(send_done.calls == 0);  // completions only from Poll
  CHECK(driver.Poll() == 2);
  CHECK(send_done.calls == 1);
  CHECK(send_done.status == Status::kOk);
  CHECK(send_done.bytes == kLen);
  CHECK(recv_done.calls == 1);
  CHECK(recv_done.status == Status::kOk);
  CHECK(recv_done.bytes == kLen);
  CHECK(dst == src);
}

TEST_CASE("loopback: truncated rendezvous receive", "[loopback]") {
  LoopbackDriver driver(kSelf);
  std::vector<uint8_t> src = Pattern(1000, 1);
  std::vector<uint8_t> dst(600, 0);
  TestCompletion send_done, recv_done;
  REQUIRE(driver.PostRdvSend(kSelf, 7, src.data(), src.size(), &send_done) ==
          Status::kInProgress);
  REQUIRE(driver.PostRdvRecv(kSelf, 7, dst.data(), dst.size(), &recv_done) ==
          Status::kInProgress);
  driver.Poll();
  CHECK(send_done.status == Status::kOk);
  CHECK(recv_done.status == Status::kTruncated);
  CHECK(recv_done.bytes == 600);
  CHECK(std::equal(dst.begin(), dst.end(), src.begin()));
}

TEST_CASE("loopback: keys match independently", "[loopback]") {
  LoopbackDriver driver(kSelf);
  std::vector<uint8_t> a = Pattern(100, 1), b = Pattern(200, 2);
  std::vector<uint8_t> ra(100), rb(200), dup(10);
  TestCompletion sa, sb, ca, cb, cdup;
  REQUIRE(driver.PostRdvRecv(kSelf, 2, rb.data(), rb.size(), &cb) ==
          Status::kInProgress);
  CHECK(driver.PostRdvRecv(kSelf, 2, dup.data(), dup.size(), &cdup) ==
        Status::kInvalidArgument);
  REQUIRE(driver.PostRdvSend(kSelf, 1, a.data(), a.size(), &sa) ==
          Status::kInProgress);
  REQUIRE(driver.PostRdvSend(kSelf, 2, b.data(), b.size(), &sb) ==
          Status::kInProgress);
  CHECK(driver.Poll() == 2);  // key 2 matched; key 1 still waits
  CHECK(cb.calls == 1);
  CHECK(rb == b);
  CHECK(sa.calls == 0);
  REQUIRE(driver.PostRdvRecv(kSelf, 1, ra.data(), ra.size(), &ca) ==
          Status::kInProgress);
  CHECK(driver.Poll() == 2);
  CHECK(ra == a);
  CHECK(sa.status == Status::kOk);
  CHECK(cdup.calls == 0);
}

TEST_CASE("loopback: Post from inside OnPacket", "[loopback]") {
  LoopbackDriver driver(kSelf);
  RecordingSink sink;
  driver.SetSink(&sink, 0);
  std::string reply = "reply";
  sink.on_packet = [&](const Packet&) {
    if (sink.packets.size() < 3) {
      iovec iov{reply.data(), reply.size()};
      CHECK(driver.PostPacket(kSelf, &iov, 1, nullptr) == Status::kOk);
    }
  };
  std::string first = "first";
  iovec iov{first.data(), first.size()};
  REQUIRE(driver.PostPacket(kSelf, &iov, 1, nullptr) == Status::kOk);
  CHECK(driver.Poll() == 1);  // the reply waits for the next Poll
  CHECK(driver.Poll() == 1);
  CHECK(driver.Poll() == 1);
  CHECK(driver.Poll() == 0);
  REQUIRE(sink.packets.size() == 3);
  CHECK(sink.packets[0].data == "first");
  CHECK(sink.packets[2].data == "reply");
}

TEST_CASE("loopback: Close cancels pending operations", "[loopback]") {
  LoopbackDriver driver(kSelf);
  std::vector<uint8_t> buf(64), src = Pattern(64, 3), dst(64);
  TestCompletion recv_done, send_done, matched_send, matched_recv;
  REQUIRE(driver.PostRdvRecv(kSelf, 1, buf.data(), buf.size(), &recv_done) ==
          Status::kInProgress);
  REQUIRE(driver.PostRdvSend(kSelf, 2, src.data(), src.size(), &send_done) ==
          Status::kInProgress);
  REQUIRE(driver.PostRdvSend(kSelf, 3, src.data(), src.size(),
                             &matched_send) == Status::kInProgress);
  REQUIRE(driver.PostRdvRecv(kSelf, 3, dst.data(), dst.size(),
                             &matched_recv) == Status::kInProgress);
  driver.Close(100);
  CHECK(recv_done.calls == 1);
  CHECK(recv_done.status == Status::kCanceled);
  CHECK(send_done.status == Status::kCanceled);
  CHECK(matched_send.status == Status::kOk);
  CHECK(matched_recv.status == Status::kOk);
  CHECK(dst == src);
  iovec iov{buf.data(), buf.size()};
  CHECK(driver.PostPacket(kSelf, &iov, 1, nullptr) == Status::kCanceled);
  CHECK(driver.Poll() == 0);
}

}  // namespace
}  // namespace rondo::drivers::loopback
