#include "drivers/shm/cell.h"

#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace rondo::drivers::shm {
namespace {

constexpr uint32_t kRing = 64;

struct Ring {
  std::vector<Cell> cells = std::vector<Cell>(kRing, Cell{});
  std::vector<uint8_t> bounce = std::vector<uint8_t>(kMaxFramePayload);
  uint32_t Write(uint32_t tail, FrameType type, const std::string& s) {
    iovec iov{const_cast<char*>(s.data()), s.size()};
    return WriteFrame(cells.data(), kRing, tail, type, &iov, 1,
                      static_cast<uint32_t>(s.size()));
  }
  FrameRead Read(uint32_t head, uint32_t max_len = kMaxFramePayload) {
    return ReadFrame(cells.data(), kRing, head, max_len, bounce.data());
  }
  std::string Payload(const FrameRead& r) {
    return std::string(reinterpret_cast<char*>(bounce.data()), r.len);
  }
};

TEST_CASE("cell: sizes", "[shm]") {
  CHECK(CellsFor(0) == 1);
  CHECK(CellsFor(8) == 1);
  CHECK(CellsFor(52) == 1);
  CHECK(CellsFor(53) == 2);
  CHECK(CellsFor(112) == 2);
  CHECK(CellsFor(113) == 3);
  CHECK(Tag(0) != 0);
  CHECK(Tag(5) != Tag(5 - kRing));
}

TEST_CASE("cell: frames round-trip, also across the ring's end", "[shm]") {
  Ring r;
  uint32_t tail = 0, head = 0;
  CHECK(r.Read(head).kind == FrameRead::kEmpty);
  // Several laps with sizes that straddle the end at different cells.
  for (int i = 0; i < 200; ++i) {
    std::string s(static_cast<size_t>(i * 37 % 700), '\0');
    for (size_t k = 0; k < s.size(); ++k)
      s[k] = static_cast<char>(i + static_cast<int>(k));
    tail += r.Write(tail, FrameType::kPacket, s);
    FrameRead f = r.Read(head);
    REQUIRE(f.kind == FrameRead::kFrame);
    CHECK(f.type == FrameType::kPacket);
    CHECK(f.ncells == CellsFor(static_cast<uint32_t>(s.size())));
    CHECK(r.Payload(f) == s);
    head += f.ncells;
    CHECK(head == tail);
    CHECK(r.Read(head).kind == FrameRead::kEmpty);  // the previous lap's
  }
}

TEST_CASE("cell: a frame written in place reads as WriteFrame's", "[shm]") {
  Ring r;
  // At the ring's last cell, on the second lap: the word carries the lap.
  for (uint32_t index : {0u, kRing - 1, 2 * kRing + 5}) {
    for (uint32_t len : {0u, 8u, static_cast<uint32_t>(kHeadPayload)}) {
      Cell& c = r.cells[index % kRing];
      std::memset(&c, 0xab, sizeof c);  // whatever an earlier lap left
      std::string msg(len, 'x');
      for (uint32_t i = 0; i < len; ++i) msg[i] = static_cast<char>('a' + i % 26);
      std::memcpy(HeadPayload(c), msg.data(), len);
      PublishHead(c, index, FrameType::kPacket, len);
      uint32_t peek = 999;
      CHECK(PeekPacketCell(c, index, &peek));
      CHECK(peek == len);
      CHECK(std::memcmp(HeadPayload(static_cast<const Cell&>(c)), msg.data(),
                        len) == 0);
      CHECK_FALSE(PeekPacketCell(c, index + 1, &peek));  // not this index
      FrameRead f = r.Read(index);
      REQUIRE(f.kind == FrameRead::kFrame);
      CHECK(f.type == FrameType::kPacket);
      CHECK(f.ncells == 1);
      CHECK(r.Payload(f) == msg);
    }
  }
}

TEST_CASE("cell: only a ready one-cell packet is read in place", "[shm]") {
  Ring r;
  uint32_t len = 0;
  CHECK_FALSE(PeekPacketCell(r.cells[0], 0, &len));  // never written
  r.Write(0, FrameType::kPacket, std::string(kHeadPayload + 1, 'p'));
  CHECK_FALSE(PeekPacketCell(r.cells[0], 0, &len));  // two cells
  r.Write(2, FrameType::kRts, std::string(kRtsBytes, 'r'));
  CHECK_FALSE(PeekPacketCell(r.cells[2], 2, &len));  // not a packet
  r.Write(3, FrameType::kPacket, "ok");
  CHECK(PeekPacketCell(r.cells[3], 3, &len));
  CHECK(len == 2);
  r.cells[3].body[1] = 1;  // flags set: refused here, ReadFrame says why
  CHECK_FALSE(PeekPacketCell(r.cells[3], 3, &len));
  r.Write(4, FrameType::kPacket, "ok");
  const uint32_t too_long = kHeadPayload + 1;
  std::memcpy(r.cells[4].body + 4, &too_long, 4);  // one cell, long length
  CHECK_FALSE(PeekPacketCell(r.cells[4], 4, &len));
  CHECK(r.Read(4).kind == FrameRead::kCorrupt);
}

TEST_CASE("cell: control frames decode", "[shm]") {
  Ring r;
  RtsFrame rts{7, 0x1234, 1 << 20};
  std::string s(reinterpret_cast<char*>(&rts), kRtsBytes);
  r.Write(0, FrameType::kRts, s);
  FrameRead f = r.Read(0);
  REQUIRE(f.kind == FrameRead::kFrame);
  RtsFrame out;
  REQUIRE(DecodeRts(r.bounce.data(), f.len, &out));
  CHECK(out.key == 7);
  CHECK(out.addr == 0x1234);
  CHECK(out.len == 1 << 20);
  CHECK_FALSE(DecodeCts(r.bounce.data(), f.len, nullptr));
  CHECK_FALSE(DecodeFin(r.bounce.data(), f.len, nullptr));
}

TEST_CASE("cell: corrupt frames are refused with a reason", "[shm]") {
  Ring r;
  r.Write(0, FrameType::kPacket, std::string(200, 'x'));
  SECTION("a word that is neither ready nor stale") {
    r.cells[0].word = 0x12345678;
    FrameRead f = r.Read(0);
    CHECK(f.kind == FrameRead::kCorrupt);
    CHECK(f.why.find("0x12345678") != std::string::npos);
  }
  SECTION("an unknown type") {
    r.cells[0].body[0] = 9;
    FrameRead f = r.Read(0);
    CHECK(f.kind == FrameRead::kCorrupt);
    CHECK(f.why.find("unknown frame type 9") != std::string::npos);
  }
  SECTION("a length above the limit") {
    FrameRead f = r.Read(0, 100);
    CHECK(f.kind == FrameRead::kCorrupt);
    CHECK(f.why.find("above the limit 100") != std::string::npos);
  }
  SECTION("a length that does not match the cell count") {
    uint32_t len = 1000;
    std::memcpy(r.cells[0].body + 4, &len, 4);
    FrameRead f = r.Read(0);
    CHECK(f.kind == FrameRead::kCorrupt);
    CHECK(f.why.find("cells for 1000 bytes") != std::string::npos);
  }
  SECTION("a continuation cell with the wrong tag") {
    r.cells[2].word = Tag(7) | kContinuation;
    FrameRead f = r.Read(0);
    CHECK(f.kind == FrameRead::kCorrupt);
    CHECK(f.why.find("cell 2 of the frame at 0") != std::string::npos);
  }
  SECTION("a control frame of the wrong size") {
    Ring c;
    c.Write(0, FrameType::kFin, std::string(10, 'f'));
    FrameRead f = c.Read(0);
    CHECK(f.kind == FrameRead::kCorrupt);
    CHECK(f.why.find("payload of 10 bytes") != std::string::npos);
  }
  SECTION("a frame larger than the ring") {
    Ring c;
    // A header claiming 100 cells in a ring of 64.
    const uint32_t len = kHeadPayload + 99 * kTailPayload;
    c.cells[0].word = Tag(0);
    c.cells[0].body[0] = 1;
    const uint16_t ncells = 100;
    std::memcpy(c.cells[0].body + 2, &ncells, 2);
    std::memcpy(c.cells[0].body + 4, &len, 4);
    CHECK(c.Read(0).kind == FrameRead::kCorrupt);
  }
}

}  // namespace
}  // namespace rondo::drivers::shm
