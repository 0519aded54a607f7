#include "drivers/shm/cell.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace rondo::drivers::shm {
namespace {

constexpr uint32_t kRingBytes = 4096;  // 64 cache lines

struct Ring {
  std::vector<Cell> cells = std::vector<Cell>(kRingBytes / kCellBytes, Cell{});
  uint8_t* bytes() { return cells[0].bytes; }
  // Writes at `tail` (room is the caller's: these tests keep it).
  uint32_t Write(uint32_t tail, FrameType type, const std::string& s) {
    iovec iov{const_cast<char*>(s.data()), s.size()};
    return WriteFrame(bytes(), kRingBytes, tail, type, &iov, 1,
                      static_cast<uint32_t>(s.size()));
  }
  Peek Read(uint32_t head, Frame* f, uint32_t max_len = kMaxFramePayload) {
    return PeekFrame(bytes(), kRingBytes, head, max_len, f);
  }
  std::string Why(uint32_t head, uint32_t max_len = kMaxFramePayload) {
    return Explain(bytes(), kRingBytes, head, max_len);
  }
  void SetHeader(uint32_t pos, uint64_t h) {
    std::memcpy(bytes() + (pos & (kRingBytes - 1)), &h, 8);
  }
};

std::string Payload(const Frame& f) {
  return std::string(reinterpret_cast<const char*>(f.data), f.len);
}

TEST_CASE("cell: sizes and placement", "[shm]") {
  CHECK(FrameBytes(0) == 8);
  CHECK(FrameBytes(1) == 16);
  CHECK(FrameBytes(8) == 16);
  CHECK(FrameBytes(24) == 32);  // an 8-byte MPI message: two to a line
  CHECK(FrameBytes(25) == 40);
  CHECK(Tag(0) != 0);
  CHECK(Tag(8) != Tag(16));
  // Fits before the end: the frame and the next header word.
  CHECK(Place(kRingBytes, 0, 24).at == 0);
  CHECK(Place(kRingBytes, 0, 24).need == 40);
  CHECK(Place(kRingBytes, kRingBytes - 32, 24).at == kRingBytes - 32);
  CHECK(Place(kRingBytes, kRingBytes - 32, 24).need == 40);
  // Does not: a skip to the next lap first.
  const Placement p = Place(kRingBytes, 3 * kRingBytes - 16, 24);
  CHECK(p.at == 3 * kRingBytes);
  CHECK(p.need == 16 + 32 + 8);
}

TEST_CASE("cell: frames round-trip in place, also across laps", "[shm]") {
  Ring r;
  uint32_t tail = 0, head = 0;
  Frame f;
  CHECK(r.Read(head, &f) == Peek::kEmpty);
  // Several laps with sizes that reach the end at different offsets.
  int skips = 0;
  for (int i = 0; i < 400; ++i) {
    std::string s(static_cast<size_t>(i * 37 % 700), '\0');
    for (size_t k = 0; k < s.size(); ++k)
      s[k] = static_cast<char>(i + static_cast<int>(k));
    const Placement at =
        Place(kRingBytes, tail, static_cast<uint32_t>(s.size()));
    skips += at.at != tail;
    tail = r.Write(tail, FrameType::kPacket, s);
    CHECK(tail == at.at + FrameBytes(static_cast<uint32_t>(s.size())));
    REQUIRE(r.Read(head, &f) == Peek::kFrame);
    if (f.type == FrameType::kSkip) {
      CHECK(f.len == at.at - head - 8);
      head += f.bytes;
      CHECK((head & (kRingBytes - 1)) == 0);
      REQUIRE(r.Read(head, &f) == Peek::kFrame);
    }
    CHECK(f.type == FrameType::kPacket);
    CHECK(f.bytes == FrameBytes(static_cast<uint32_t>(s.size())));
    CHECK(reinterpret_cast<uintptr_t>(f.data) % 8 == 0);
    CHECK(Payload(f) == s);
    head += f.bytes;
    CHECK(head == tail);
    // The next header was zeroed before this one was published, whatever
    // an earlier lap left there.
    CHECK(r.Read(head, &f) == Peek::kEmpty);
  }
  CHECK(skips > 10);
}

TEST_CASE("cell: a frame sent to the next lap early reads after its skip",
          "[shm]") {
  // Place(..., next_lap): at a lap's start nothing moves; elsewhere the
  // frame goes to the next lap behind a skip, as when it does not fit.
  CHECK(Place(kRingBytes, kRingBytes, 24, true).at == kRingBytes);
  CHECK(Place(kRingBytes, kRingBytes, 24, true).need == 40);
  const Placement p = Place(kRingBytes, kRingBytes + 1000, 24, true);
  CHECK(p.at == 2 * kRingBytes);
  CHECK(p.need == (kRingBytes - 1000) + 40);
  // The consumer has read the first frame (the second reuses its place),
  // and the skip's header, at 1000, lies past the second frame and the
  // header it zeroes (the `need` a driver checks: here 4136 - 1000 bytes,
  // within the ring).
  Ring r;
  const std::string first(992, 'f');
  uint32_t tail = r.Write(0, FrameType::kPacket, first);
  REQUIRE(tail == 1000);
  Frame f;
  uint32_t head = 0;
  REQUIRE(r.Read(head, &f) == Peek::kFrame);
  CHECK(Payload(f) == first);
  head += f.bytes;
  CHECK(r.Read(head, &f) == Peek::kEmpty);
  const std::string second = "second, at the next lap's start";
  iovec iov{const_cast<char*>(second.data()), second.size()};
  const Placement at =
      Place(kRingBytes, tail, static_cast<uint32_t>(second.size()), true);
  REQUIRE(at.need <= kRingBytes);
  tail = WriteFrameAt(r.bytes(), kRingBytes, tail, at.at, FrameType::kPacket,
                      &iov, 1, static_cast<uint32_t>(second.size()));
  CHECK(tail == kRingBytes + FrameBytes(static_cast<uint32_t>(second.size())));
  REQUIRE(r.Read(head, &f) == Peek::kFrame);
  CHECK(f.type == FrameType::kSkip);
  head += f.bytes;
  CHECK(head == kRingBytes);
  REQUIRE(r.Read(head, &f) == Peek::kFrame);
  CHECK(Payload(f) == second);
  head += f.bytes;
  CHECK(r.Read(head, &f) == Peek::kEmpty);
}

TEST_CASE("cell: a payload written in place reads as WriteFrame's", "[shm]") {
  Ring r;
  std::memset(r.bytes(), 0xab, kRingBytes);  // whatever an earlier lap left
  r.SetHeader(kRingBytes - 16, 0);           // the consumer's head: nothing
  for (uint32_t len : {0u, 8u, 52u, 1000u}) {
    uint32_t tail = kRingBytes - 16;
    const Placement at = Place(kRingBytes, tail, len);
    std::string msg(len, 'x');
    for (uint32_t i = 0; i < len; ++i) msg[i] = static_cast<char>('a' + i % 26);
    std::memcpy(FramePayload(r.bytes(), kRingBytes, at.at), msg.data(), len);
    tail = PublishFrame(r.bytes(), kRingBytes, tail, at.at, FrameType::kPacket,
                        len);
    Frame f;
    uint32_t head = kRingBytes - 16;
    REQUIRE(r.Read(head, &f) == Peek::kFrame);
    if (f.type == FrameType::kSkip) {
      head += f.bytes;
      REQUIRE(r.Read(head, &f) == Peek::kFrame);
    }
    CHECK(f.type == FrameType::kPacket);
    CHECK(Payload(f) == msg);
    CHECK(head + f.bytes == tail);
    CHECK(r.Read(tail, &f) == Peek::kEmpty);
    // Reset for the next size: the same head, nothing published there.
    std::memset(r.bytes(), 0xab, kRingBytes);
    r.SetHeader(kRingBytes - 16, 0);
  }
}

TEST_CASE("cell: control frames decode", "[shm]") {
  Ring r;
  RtsFrame rts{7, 0x1234, 1 << 20};
  std::string s(reinterpret_cast<char*>(&rts), kRtsBytes);
  r.Write(0, FrameType::kRts, s);
  Frame f;
  REQUIRE(r.Read(0, &f) == Peek::kFrame);
  RtsFrame out;
  REQUIRE(DecodeRts(f.data, f.len, &out));
  CHECK(out.key == 7);
  CHECK(out.addr == 0x1234);
  CHECK(out.len == 1 << 20);
  CHECK_FALSE(DecodeCts(f.data, f.len, nullptr));
  CHECK_FALSE(DecodeFin(f.data, f.len, nullptr));
}

TEST_CASE("cell: corrupt frames are refused with a reason", "[shm]") {
  Ring r;
  r.Write(64, FrameType::kPacket, std::string(200, 'x'));
  Frame f;
  SECTION("a header without its position's tag") {
    r.SetHeader(64, HeaderWord(72, FrameType::kPacket, 200));
    CHECK(r.Read(64, &f) == Peek::kCorrupt);
    CHECK(r.Why(64).find("does not carry the tag") != std::string::npos);
    // An earlier lap's tag is refused too: it can never be at a head.
    r.SetHeader(64, HeaderWord(64 - kRingBytes, FrameType::kPacket, 200));
    CHECK(r.Read(64, &f) == Peek::kCorrupt);
  }
  SECTION("an unknown type") {
    r.SetHeader(64, HeaderWord(64, static_cast<FrameType>(9), 200));
    CHECK(r.Read(64, &f) == Peek::kCorrupt);
    CHECK(r.Why(64).find("unknown frame type 9") != std::string::npos);
  }
  SECTION("a length above the limit") {
    CHECK(r.Read(64, &f, 100) == Peek::kCorrupt);
    CHECK(r.Why(64, 100).find("above the limit 100") != std::string::npos);
  }
  SECTION("a frame running past the ring's end") {
    r.SetHeader(64, HeaderWord(64, FrameType::kPacket, kRingBytes - 64));
    CHECK(r.Read(64, &f) == Peek::kCorrupt);
    CHECK(r.Why(64).find("runs past the ring's end") != std::string::npos);
  }
  SECTION("a skip that does not reach the end, or starts a lap") {
    r.SetHeader(64, HeaderWord(64, FrameType::kSkip, 100));
    CHECK(r.Read(64, &f) == Peek::kCorrupt);
    CHECK(r.Why(64).find("skip of 100 bytes") != std::string::npos);
    r.SetHeader(0, HeaderWord(0, FrameType::kSkip, kRingBytes - 8));
    CHECK(r.Read(0, &f) == Peek::kCorrupt);
    r.SetHeader(64, HeaderWord(64, FrameType::kSkip, kRingBytes - 72));
    CHECK(r.Read(64, &f) == Peek::kFrame);  // the real thing
  }
  SECTION("a control frame of the wrong size") {
    Ring c;
    c.Write(0, FrameType::kFin, std::string(10, 'f'));
    CHECK(c.Read(0, &f) == Peek::kCorrupt);
    CHECK(c.Why(0).find("payload of 10 bytes") != std::string::npos);
  }
}

}  // namespace
}  // namespace rondo::drivers::shm
