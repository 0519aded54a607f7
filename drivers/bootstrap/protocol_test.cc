#include "drivers/bootstrap/internal/protocol.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace rondo::drivers::bootstrap::internal {
namespace {

Message Make(MessageType type) {
  Message m;
  m.type = type;
  return m;
}

std::vector<Message> Samples() {
  std::vector<Message> v;
  Message hello = Make(MessageType::kHello);
  hello.key = std::string(64, 'a');
  hello.rank = 4095;
  v.push_back(hello);
  v.push_back(Make(MessageType::kWelcome));
  Message put = Make(MessageType::kPut);
  put.key = "addr";
  put.value = {0, 1, 2, 255};
  v.push_back(put);
  v.push_back(Make(MessageType::kFence));
  Message kv = Make(MessageType::kKeyValue);
  kv.rank = 3;
  kv.key = "k.v:1-x_";
  kv.value = std::vector<uint8_t>(1000, 7);
  v.push_back(kv);
  Message fd = Make(MessageType::kFenceDone);
  fd.ok = true;
  v.push_back(fd);
  v.push_back(Make(MessageType::kBarrier));
  Message bd = Make(MessageType::kBarrierDone);
  bd.ok = false;
  bd.text = "rank 1 died";
  v.push_back(bd);
  Message f = Make(MessageType::kFailure);
  f.rank = 1;
  f.text = "rank 1 (pid 12) was killed by signal 9 (Killed)";
  v.push_back(f);
  v.push_back(Make(MessageType::kFini));
  return v;
}

TEST_CASE("every message round-trips through a frame", "[protocol]") {
  for (const Message& m : Samples()) {
    CAPTURE(MessageTypeName(m.type));
    std::vector<uint8_t> frame = EncodeFrame(m);
    FrameReader reader;
    reader.Append(frame);
    Message out;
    REQUIRE(reader.Next(&out) == FrameReader::Result::kFrame);
    CHECK(out == m);
    CHECK(reader.Next(&out) == FrameReader::Result::kNeedMore);
  }
}

TEST_CASE("frames split at every byte are reassembled", "[protocol]") {
  std::vector<uint8_t> stream;
  const std::vector<Message> samples = Samples();
  for (const Message& m : samples) AppendFrame(m, stream);
  FrameReader reader;
  std::vector<Message> got;
  for (uint8_t byte : stream) {
    reader.Append({&byte, 1});
    Message m;
    while (reader.Next(&m) == FrameReader::Result::kFrame) got.push_back(m);
  }
  CHECK(got == samples);
}

TEST_CASE("a value of exactly 1 MiB fits, one byte more does not",
          "[protocol]") {
  Message kv = Make(MessageType::kKeyValue);
  kv.rank = 0;
  kv.key = std::string(kMaxKeyLength, 'k');
  kv.value.assign(kMaxValueLength, 1);
  FrameReader reader;
  reader.Append(EncodeFrame(kv));
  Message out;
  REQUIRE(reader.Next(&out) == FrameReader::Result::kFrame);
  CHECK(out.value.size() == kMaxValueLength);

  kv.value.push_back(1);  // encodes, but the decoder refuses it
  FrameReader reader2;
  reader2.Append(EncodeFrame(kv));
  CHECK(reader2.Next(&out) == FrameReader::Result::kMalformed);
}

TEST_CASE("malformed frames are rejected, not crashed on", "[protocol]") {
  auto decode = [](std::vector<uint8_t> bytes) {
    FrameReader reader;
    reader.Append(bytes);
    Message m;
    return reader.Next(&m);
  };
  using R = FrameReader::Result;
  // Length 0 and a length above the cap.
  CHECK(decode({0, 0, 0, 0}) == R::kMalformed);
  CHECK(decode({0xff, 0xff, 0xff, 0x7f, 1}) == R::kMalformed);
  // Unknown types.
  CHECK(decode({1, 0, 0, 0, 0}) == R::kMalformed);
  CHECK(decode({1, 0, 0, 0, 200}) == R::kMalformed);
  // FENCE with a trailing byte.
  CHECK(decode({2, 0, 0, 0, 4, 0}) == R::kMalformed);
  // PUT whose key length runs past the frame.
  CHECK(decode({4, 0, 0, 0, 3, 50, 0, 'a'}) == R::kMalformed);
  // PUT whose value length runs past the frame.
  CHECK(decode({9, 0, 0, 0, 3, 1, 0, 'a', 200, 0, 0, 0, 1}) == R::kMalformed);
  // FAILURE with a rank beyond kMaxRanks.
  CHECK(decode({7, 0, 0, 0, 9, 0xff, 0xff, 0, 0, 0, 0}) == R::kMalformed);
  // FENCE_DONE with a boolean that is not 0/1.
  CHECK(decode({4, 0, 0, 0, 6, 2, 0, 0}) == R::kMalformed);
  // Incomplete frames only ask for more.
  CHECK(decode({5, 0, 0}) == R::kNeedMore);
  CHECK(decode({5, 0, 0, 0, 3}) == R::kNeedMore);

  // Malformed is sticky, and names the problem.
  FrameReader reader;
  reader.Append(std::vector<uint8_t>{1, 0, 0, 0, 99});
  Message m;
  CHECK(reader.Next(&m) == R::kMalformed);
  reader.Append(EncodeFrame(Make(MessageType::kFence)));
  CHECK(reader.Next(&m) == R::kMalformed);
  CHECK(reader.error().find("type 99") != std::string::npos);
}

TEST_CASE("random bytes never crash the decoder", "[protocol]") {
  uint32_t x = 12345;
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes(1 + round % 40);
    for (auto& b : bytes) {
      x = x * 1664525u + 1013904223u;
      b = static_cast<uint8_t>(x >> 24);
    }
    if (bytes.size() >= 4) bytes[1] = bytes[2] = bytes[3] = 0;  // short length
    FrameReader reader;
    reader.Append(bytes);
    Message m;
    int frames = 0;
    while (reader.Next(&m) == FrameReader::Result::kFrame) ++frames;
    CHECK(frames <= 10);
  }
}

TEST_CASE("keys and values are checked with readable reasons", "[protocol]") {
  CHECK(CheckKey("addr").empty());
  CHECK(CheckKey("a.b:c-d_E9").empty());
  CHECK(CheckKey(std::string(63, 'x')).empty());
  CHECK(CheckKey("").find("allowed: 1-63") != std::string::npos);
  CHECK(CheckKey(std::string(64, 'x')).find("64 characters") !=
        std::string::npos);
  CHECK(CheckKey("a b").find("[A-Za-z0-9_.:-]") != std::string::npos);
  CHECK(CheckValue(std::vector<uint8_t>(kMaxValueLength)).empty());
  CHECK(CheckValue(std::vector<uint8_t>(kMaxValueLength + 1))
            .find("up to 1048576") != std::string::npos);
}

TEST_CASE("hex and key comparison", "[protocol]") {
  const std::vector<uint8_t> bytes = {0x00, 0x7f, 0xab, 0xff};
  CHECK(ToHex(bytes) == "007fabff");
  CHECK(FromHex("007fabff") == bytes);
  CHECK(FromHex("007FABFF") == bytes);
  CHECK_FALSE(FromHex("abc").has_value());
  CHECK_FALSE(FromHex("zz").has_value());
  CHECK(ConstantTimeEquals("abcd", "abcd"));
  CHECK_FALSE(ConstantTimeEquals("abcd", "abce"));
  CHECK_FALSE(ConstantTimeEquals("abcd", "abc"));
}

}  // namespace
}  // namespace rondo::drivers::bootstrap::internal
