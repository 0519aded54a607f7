// Tests of the nmad wire format: round trips of every chunk kind written the
// way nmad/core.cc writes them (packet header, then for each chunk its
// WriteChunkHeader() followed by the payload bytes), and rejection of every
// kind of malformed packet DecodePacket() promises to catch. Every decode
// runs on an exact-size heap copy so that ASan (--config=asan) reports any
// read past the end of the packet.
#include "nmad/wire.h"

#include "nmad/testdata/packet_builder.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace rondo::nmad::wire {
namespace {

using testing::Bytes;
using testing::Encode;
using testing::Rtr;
using testing::Rts;
using Spec = testing::ChunkSpec;

Spec Data(uint32_t session, uint32_t seq, int32_t tag, size_t n,
          uint8_t seed = 1) {
  return testing::Data(session, seq, tag, n, seed);
}
Spec Am(uint32_t session, uint32_t handler, size_t header, size_t body) {
  return testing::Am(session, handler, header, body, 0x40, 0x80);
}
Spec AmRts(uint32_t session, uint32_t handler, size_t header, uint64_t rdv_id,
           std::vector<RdvPart> parts) {
  return testing::AmRts(session, handler, header, rdv_id, parts, 0x20);
}

// Decodes from an exact-size heap copy (so ASan sees any overread), checks
// that every returned pointer lies inside the copy, and rebases pointers to
// offsets so callers can compare with the original vector.
struct Decoded {
  int n = -1;
  std::string why;
  std::vector<ChunkView> chunks;
  std::vector<std::vector<uint8_t>> am_headers;
  std::vector<std::vector<uint8_t>> payloads;
};

bool Inside(const uint8_t* base, size_t len, const uint8_t* p, uint64_t n) {
  if (n == 0) return p == nullptr || (p >= base && p <= base + len);
  return p != nullptr && p >= base && p <= base + len &&
         n <= static_cast<uint64_t>(base + len - p);
}

Decoded DecodeCopy(const uint8_t* data, size_t len,
                   int max_chunks = kMaxChunksPerPacket) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[len == 0 ? 1 : len]);
  if (len) std::memcpy(copy.get(), data, len);
  ChunkView views[kMaxChunksPerPacket];
  Decoded d;
  d.n = DecodePacket(copy.get(), len, views, max_chunks, &d.why);
  for (int i = 0; i < d.n; ++i) {
    const ChunkView& c = views[i];
    INFO("chunk " << i);
    REQUIRE(Inside(copy.get(), len, c.payload, c.payload_size));
    REQUIRE(Inside(copy.get(), len, c.am_header, c.am_header_size));
    d.chunks.push_back(c);
    d.am_headers.emplace_back(c.am_header, c.am_header + c.am_header_size);
    d.payloads.emplace_back(c.payload, c.payload + c.payload_size);
  }
  return d;
}

Decoded DecodeCopy(const std::vector<uint8_t>& buf,
                   int max_chunks = kMaxChunksPerPacket) {
  return DecodeCopy(buf.data(), buf.size(), max_chunks);
}

// What a successful decode must satisfy whatever the input.
void CheckSelfConsistent(const Decoded& d) {
  REQUIRE(d.n >= 1);
  REQUIRE(d.n <= kMaxChunksPerPacket);
  for (int i = 0; i < d.n; ++i) {
    const ChunkView& c = d.chunks[i];
    INFO("chunk " << i);
    const auto kind = static_cast<int>(c.kind);
    REQUIRE(kind >= 1);
    REQUIRE(kind <= 5);
    const bool has_parts =
        c.kind == ChunkKind::kRts || c.kind == ChunkKind::kAmRts;
    if (has_parts) {
      REQUIRE(c.nparts >= 1);
      REQUIRE(c.nparts <= kMaxParts);
      uint64_t sum = 0;
      for (int k = 0; k < c.nparts; ++k) sum += c.parts[k].bytes;
      REQUIRE(sum == c.msg_size);
    } else {
      REQUIRE(c.nparts == 0);
    }
    switch (c.kind) {
      case ChunkKind::kData:
        REQUIRE(c.tag >= 0);
        REQUIRE(c.payload_size == c.msg_size);
        REQUIRE(c.am_header_size == 0);
        break;
      case ChunkKind::kRts:
        REQUIRE(c.tag >= 0);
        REQUIRE(c.payload_size == 0);
        break;
      case ChunkKind::kRtr:
        REQUIRE(c.payload_size == 0);
        break;
      case ChunkKind::kAm:
        REQUIRE(c.payload_size == c.msg_size);
        break;
      case ChunkKind::kAmRts:
        REQUIRE(c.payload_size == 0);
        break;
    }
  }
}

void CheckSame(const Decoded& d, const std::vector<Spec>& specs) {
  REQUIRE(d.n == static_cast<int>(specs.size()));
  for (size_t i = 0; i < specs.size(); ++i) {
    INFO("chunk " << i);
    const ChunkView& c = d.chunks[i];
    const ChunkView& e = specs[i].v;
    CHECK(c.kind == e.kind);
    CHECK(c.session == e.session);
    CHECK(c.seq == e.seq);
    CHECK(c.tag == e.tag);
    CHECK(c.flags == e.flags);
    CHECK(c.handler == e.handler);
    CHECK(c.msg_size == e.msg_size);
    CHECK(c.rdv_id == e.rdv_id);
    CHECK(c.accepted == e.accepted);
    CHECK(c.nparts == e.nparts);
    for (int k = 0; k < e.nparts; ++k) {
      CHECK(c.parts[k].rail == e.parts[k].rail);
      CHECK(c.parts[k].bytes == e.parts[k].bytes);
    }
    CHECK(c.am_header_size == e.am_header_size);
    CHECK(d.am_headers[i] == specs[i].am_header);
    CHECK(d.payloads[i] == specs[i].body);
    CHECK(c.payload_size == specs[i].body.size());
  }
  CheckSelfConsistent(d);
}

template <typename T>
void Patch(std::vector<uint8_t>& buf, size_t off, T v) {
  REQUIRE(off + sizeof(T) <= buf.size());
  std::memcpy(buf.data() + off, &v, sizeof(T));
}

// Offsets inside a chunk (from its first byte).
constexpr size_t kKind = 0, kNparts = 1, kHeaderSize = 2, kPayloadSize = 4;
constexpr size_t kTag = 16;            // kData, kRts
constexpr size_t kRtsFlags = 20;       // kRts
constexpr size_t kAmHeaderSize = 16;   // kAm, kAmRts
constexpr size_t kMsgSize = 24;        // kRts, kAm, kAmRts
constexpr size_t kRtsParts = 40;       // kRts, kAmRts: first part
// Offsets inside the packet header.
constexpr size_t kVersionAt = 2, kNchunksAt = 3, kTotalAt = 4;
constexpr size_t kChunk0 = kPacketHeaderSize;

void ExpectReject(const std::vector<uint8_t>& buf, const std::string& reason,
                  int max_chunks = kMaxChunksPerPacket) {
  Decoded d = DecodeCopy(buf, max_chunks);
  INFO("why: " << d.why);
  CHECK(d.n == -1);
  CHECK_THAT(d.why, Catch::Contains(reason));
}

// A packet with one chunk of every kind and payloads of various sizes.
std::vector<Spec> Mixed() {
  return {
      Data(1, 10, 5, 17),
      Rts(2, 11, 0, 0xdeadbeefcafe, {{0, 1000}, {1, 3000}, {3, 5}}),
      Rtr(0x1234567890, 4096),
      Am(3, 65535, 9, 33),
      AmRts(4, 7, 12, 99, {{2, 1 << 20}}),
      Data(1, 12, 0x7fffffff, 0),
      Am(5, 0, 0, 0),
  };
}

TEST_CASE("ChunkHeaderSize per kind", "[wire]") {
  CHECK(ChunkHeaderSize(ChunkKind::kData) == 24);
  CHECK(ChunkHeaderSize(ChunkKind::kRtr) == 24);
  CHECK(ChunkHeaderSize(ChunkKind::kAm) == 32);
  CHECK(ChunkHeaderSize(ChunkKind::kRts, 1) == 56);
  CHECK(ChunkHeaderSize(ChunkKind::kRts, kMaxParts) == 40 + 16 * kMaxParts);
  CHECK(ChunkHeaderSize(ChunkKind::kAmRts, 2) == 72);
  // Kinds without parts ignore nparts.
  CHECK(ChunkHeaderSize(ChunkKind::kData, 5) == 24);
  CHECK(ChunkHeaderSize(ChunkKind::kAm, 3) == 32);
}

TEST_CASE("Packet header layout", "[wire]") {
  uint8_t h[kPacketHeaderSize];
  WritePacketHeader(h, 3, 0x01020304);
  CHECK(h[0] == (kMagic & 0xff));
  CHECK(h[1] == (kMagic >> 8));
  CHECK(h[2] == kVersion);
  CHECK(h[3] == 3);
  CHECK(h[4] == 0x04);
  CHECK(h[7] == 0x01);
}

TEST_CASE("Round trip of each chunk kind alone", "[wire]") {
  std::vector<std::vector<Spec>> cases = {
      {Data(0, 0, 0, 0)},
      {Data(7, 42, 123, 1)},
      {Data(0xffffffff, 0xffffffff, 0x7fffffff, 1000)},
      {Rts(3, 4, 5, 6, {{0, 1}})},
      {Rts(3, 4, 5, 6, {{0, 0}})},  // empty rendezvous message: one part of 0
      {RtsFlags(Rts(3, 4, 5, 7, {{0, 100000}, {1, 5}}), kRtsDataPosted)},
      {Rts(1, 2, 3, ~uint64_t{0},
           {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7},
            {255, uint64_t{1} << 48}})},
      {Rtr(0, 0)},
      {Rtr(~uint64_t{0}, ~uint64_t{0})},
      {Am(1, 2, 0, 0)},
      {Am(1, 2, 16, 0)},
      {Am(1, 2, 0, 64)},
      {Am(0xffffffff, 0xffffffff, 100, 200)},
      {AmRts(1, 2, 0, 3, {{0, 100000}})},
      {AmRts(1, 2, 40, 3, {{0, 100000}, {1, 300000}})},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    std::vector<uint8_t> buf = Encode(cases[i]);
    Decoded d = DecodeCopy(buf);
    INFO("why: " << d.why);
    CheckSame(d, cases[i]);
    CHECK(d.why.empty());
  }
}

TEST_CASE("Round trip of packets with several chunks", "[wire]") {
  SECTION("one of each kind") {
    std::vector<Spec> specs = Mixed();
    std::vector<uint8_t> buf = Encode(specs);
    CheckSame(DecodeCopy(buf), specs);
  }
  SECTION("the maximum number of chunks") {
    std::vector<Spec> specs;
    for (int i = 0; i < kMaxChunksPerPacket; ++i) {
      switch (i % 5) {
        case 0: specs.push_back(Data(i, i, i, i)); break;
        case 1: specs.push_back(Rts(i, i, i, i, {{0, uint64_t(i)}})); break;
        case 2: specs.push_back(Rtr(i, i)); break;
        case 3: specs.push_back(Am(i, i, i % 7, i)); break;
        case 4: specs.push_back(AmRts(i, i, i, i, {{1, uint64_t(i) + 1}}));
      }
    }
    std::vector<uint8_t> buf = Encode(specs);
    CheckSame(DecodeCopy(buf), specs);
    // A caller with room for fewer chunks gets a rejection, not an overflow.
    ExpectReject(buf, "chunk count 64", kMaxChunksPerPacket - 1);
  }
  SECTION("pointers refer into the packet, in order") {
    std::vector<Spec> specs = {Data(1, 1, 1, 5, 0x11), Am(1, 9, 3, 4),
                               Data(1, 2, 1, 6, 0x22)};
    std::vector<uint8_t> buf = Encode(specs);
    ChunkView v[kMaxChunksPerPacket];
    std::string why;
    REQUIRE(DecodePacket(buf.data(), buf.size(), v, kMaxChunksPerPacket,
                         &why) == 3);
    const uint8_t* base = buf.data();
    CHECK(v[0].payload == base + 8 + 24);
    CHECK(v[1].am_header == base + 8 + 24 + 5 + 32);
    CHECK(v[1].payload == v[1].am_header + 3);
    CHECK(v[2].payload == base + 8 + 24 + 5 + 32 + 3 + 4 + 24);
    CHECK(v[2].payload + v[2].payload_size == base + buf.size());
  }
  SECTION("why may be null") {
    std::vector<uint8_t> buf = Encode(Mixed());
    ChunkView v[kMaxChunksPerPacket];
    CHECK(DecodePacket(buf.data(), buf.size(), v, kMaxChunksPerPacket,
                       nullptr) == 7);
    CHECK(DecodePacket(buf.data(), buf.size() - 1, v, kMaxChunksPerPacket,
                       nullptr) == -1);
  }
}

TEST_CASE("Rejection of malformed packet headers", "[wire]") {
  std::vector<uint8_t> good = Encode({Data(1, 2, 3, 4)});
  REQUIRE(DecodeCopy(good).n == 1);

  SECTION("null data") {
    ChunkView v[1];
    std::string why;
    CHECK(DecodePacket(nullptr, 0, v, 1, &why) == -1);
    CHECK_THAT(why, Catch::Contains("shorter than its 8-byte header"));
  }
  SECTION("short packet") {
    for (size_t n = 0; n < kPacketHeaderSize; ++n) {
      INFO("len " << n);
      std::vector<uint8_t> b(good.begin(), good.begin() + n);
      ExpectReject(b, "shorter than its 8-byte header");
    }
  }
  SECTION("bad magic") {
    Patch<uint16_t>(good, 0, kMagic ^ 1);
    ExpectReject(good, "bad magic number");
  }
  SECTION("wrong version") {
    Patch<uint8_t>(good, kVersionAt, kVersion + 1);
    ExpectReject(good, "wire version 2, expected 1");
    Patch<uint8_t>(good, kVersionAt, 0);
    ExpectReject(good, "wire version 0");
  }
  SECTION("total length mismatch") {
    Patch<uint32_t>(good, kTotalAt, static_cast<uint32_t>(good.size() + 1));
    ExpectReject(good, "bytes, packet has");
    Patch<uint32_t>(good, kTotalAt, static_cast<uint32_t>(good.size() - 1));
    ExpectReject(good, "bytes, packet has");
  }
  SECTION("header only") {
    std::vector<uint8_t> b(kPacketHeaderSize);
    WritePacketHeader(b.data(), 1, kPacketHeaderSize);
    ExpectReject(b, "chunk 0: truncated chunk header");
  }
  SECTION("zero chunks") {
    Patch<uint8_t>(good, kNchunksAt, 0);
    ExpectReject(good, "chunk count 0 is outside");
    std::vector<uint8_t> b(kPacketHeaderSize);
    WritePacketHeader(b.data(), 0, kPacketHeaderSize);
    ExpectReject(b, "chunk count 0 is outside");
  }
  SECTION("more chunks than kMaxChunksPerPacket") {
    Patch<uint8_t>(good, kNchunksAt, kMaxChunksPerPacket + 1);
    ExpectReject(good, "chunk count 65");
    // Even when the caller claims room for more.
    ExpectReject(good, "chunk count 65", 255);
    Patch<uint8_t>(good, kNchunksAt, 255);
    ExpectReject(good, "chunk count 255", 255);
  }
  SECTION("more chunks than the caller's max_chunks") {
    std::vector<uint8_t> b = Encode({Rtr(1, 1), Rtr(2, 2), Rtr(3, 3)});
    ExpectReject(b, "chunk count 3 is outside 1..2", 2);
    CHECK(DecodeCopy(b, 3).n == 3);
  }
  SECTION("more chunks announced than present") {
    Patch<uint8_t>(good, kNchunksAt, 2);
    ExpectReject(good, "chunk 1: truncated chunk header");
  }
}

TEST_CASE("Rejection of malformed chunks", "[wire]") {
  SECTION("unknown kind") {
    for (int kind : {0, 6, 0x7f, 0xff}) {
      std::vector<uint8_t> b = Encode({Rtr(1, 2)});
      Patch<uint8_t>(b, kChunk0 + kKind, static_cast<uint8_t>(kind));
      ExpectReject(b, "chunk 0: unknown kind " + std::to_string(kind));
    }
  }
  SECTION("header_size mismatch") {
    for (const Spec& s : Mixed()) {
      std::vector<uint8_t> b = Encode({s});
      const uint16_t size = static_cast<uint16_t>(
          ChunkHeaderSize(s.v.kind, s.v.nparts));
      for (uint16_t bad : {uint16_t(size - 1), uint16_t(size + 1),
                           uint16_t(size + 16), uint16_t(0), uint16_t(0xffff)}) {
        INFO("kind " << int(s.v.kind) << " header_size " << bad);
        Patch<uint16_t>(b, kChunk0 + kHeaderSize, bad);
        ExpectReject(b, "does not match its kind");
      }
    }
  }
  SECTION("header past the end") {
    // A kRts whose part list is claimed consistently but not present.
    std::vector<uint8_t> b = Encode({Rts(1, 1, 1, 1, {{0, 10}})});
    Patch<uint8_t>(b, kChunk0 + kNparts, 2);
    Patch<uint16_t>(b, kChunk0 + kHeaderSize,
                    static_cast<uint16_t>(ChunkHeaderSize(ChunkKind::kRts, 2)));
    ExpectReject(b, "chunk 0: truncated chunk header");
  }
  SECTION("payload past the end") {
    std::vector<uint8_t> b = Encode({Data(1, 1, 1, 10)});
    Patch<uint32_t>(b, kChunk0 + kPayloadSize, 11);
    ExpectReject(b, "payload of 11 bytes runs past the packet");
    Patch<uint32_t>(b, kChunk0 + kPayloadSize, 0xffffffff);
    ExpectReject(b, "runs past the packet");
  }
  SECTION("payload past the end of a later chunk") {
    std::vector<uint8_t> b = Encode({Data(1, 1, 1, 10), Am(1, 1, 4, 4)});
    const size_t am = kChunk0 + 24 + 10;
    Patch<uint32_t>(b, am + kPayloadSize, 9);
    ExpectReject(b, "chunk 1: payload of 9 bytes runs past the packet");
  }
  SECTION("trailing bytes") {
    std::vector<uint8_t> b = Encode({Data(1, 1, 1, 10)});
    b.push_back(0);
    b.push_back(0);
    Patch<uint32_t>(b, kTotalAt, static_cast<uint32_t>(b.size()));
    ExpectReject(b, "2 trailing bytes after the chunks");
    // A payload shorter than what follows it is the same thing.
    std::vector<uint8_t> c = Encode({Data(1, 1, 1, 10)});
    Patch<uint32_t>(c, kChunk0 + kPayloadSize, 9);
    ExpectReject(c, "1 trailing bytes");
  }
  SECTION("unknown request-to-send flags") {
    std::vector<uint8_t> b = Encode({Rts(1, 1, 0, 1, {{0, 3}})});
    Patch<uint32_t>(b, kChunk0 + kRtsFlags, 2);
    ExpectReject(b, "chunk 0: unknown request-to-send flags 2");
    Patch<uint32_t>(b, kChunk0 + kRtsFlags, kRtsDataPosted | 0x80000000u);
    ExpectReject(b, "unknown request-to-send flags");
    Patch<uint32_t>(b, kChunk0 + kRtsFlags, kRtsDataPosted);
    Decoded d = DecodeCopy(b);
    INFO("why: " << d.why);
    REQUIRE(d.n == 1);
    CHECK(d.chunks[0].flags == kRtsDataPosted);
  }
  SECTION("negative tag") {
    std::vector<uint8_t> b = Encode({Data(1, 1, 0, 3)});
    Patch<int32_t>(b, kChunk0 + kTag, -1);
    ExpectReject(b, "chunk 0: negative tag -1");
    std::vector<uint8_t> r = Encode({Rts(1, 1, 0, 1, {{0, 3}})});
    Patch<int32_t>(r, kChunk0 + kTag, INT32_MIN);
    ExpectReject(r, "negative tag");
  }
  SECTION("parts not adding up") {
    std::vector<uint8_t> b = Encode({Rts(1, 1, 1, 1, {{0, 10}, {1, 20}})});
    Patch<uint64_t>(b, kChunk0 + kMsgSize, 31);
    ExpectReject(b, "parts add up to 30 bytes, message is 31");
    std::vector<uint8_t> a = Encode({AmRts(1, 1, 4, 1, {{0, 10}})});
    Patch<uint64_t>(a, kChunk0 + kRtsParts, 9);
    ExpectReject(a, "parts add up to 9 bytes, message is 10");
  }
  SECTION("part larger than 2^48") {
    const uint64_t big = (uint64_t{1} << 48) + 1;
    std::vector<uint8_t> b = Encode({Rts(1, 1, 1, 1, {{0, 10}})});
    Patch<uint64_t>(b, kChunk0 + kRtsParts, big);
    Patch<uint64_t>(b, kChunk0 + kMsgSize, big);
    ExpectReject(b, "part larger than 2^48 bytes");
  }
  SECTION("nparts 0 or above kMaxParts for kRts and kAmRts") {
    for (ChunkKind kind : {ChunkKind::kRts, ChunkKind::kAmRts}) {
      for (int n : {0, kMaxParts + 1, 255}) {
        INFO("kind " << int(kind) << " nparts " << n);
        std::vector<uint8_t> b = Encode(
            {kind == ChunkKind::kRts ? Rts(1, 1, 1, 1, {{0, 10}})
                                     : AmRts(1, 1, 0, 1, {{0, 10}})});
        Patch<uint8_t>(b, kChunk0 + kNparts, static_cast<uint8_t>(n));
        // Keep header_size consistent with n (mod 2^16) so that the part
        // count is what gets rejected.
        Patch<uint16_t>(b, kChunk0 + kHeaderSize,
                        static_cast<uint16_t>(ChunkHeaderSize(kind, n)));
        ExpectReject(b, "bad part count " + std::to_string(n));
      }
    }
  }
  SECTION("parts on a kind without parts") {
    for (const Spec& s : {Data(1, 1, 1, 1), Rtr(1, 1), Am(1, 1, 1, 1)}) {
      std::vector<uint8_t> b = Encode({s});
      Patch<uint8_t>(b, kChunk0 + kNparts, 1);
      ExpectReject(b, "bad part count 1");
    }
  }
  SECTION("control chunk with payload") {
    for (const Spec& s : {Rtr(5, 5), Rts(1, 1, 1, 1, {{0, 2}})}) {
      std::vector<uint8_t> b = Encode({s});
      b.push_back(0xaa);
      Patch<uint32_t>(b, kTotalAt, static_cast<uint32_t>(b.size()));
      ExpectReject(b, "1 trailing bytes");
      Patch<uint32_t>(b, kChunk0 + kPayloadSize, 1);
      ExpectReject(b, "control chunk with a payload");
    }
  }
  SECTION("active-message header larger than the payload") {
    std::vector<uint8_t> b = Encode({Am(1, 1, 4, 4)});
    Patch<uint32_t>(b, kChunk0 + kAmHeaderSize, 9);
    ExpectReject(b, "active-message header larger than the payload");
    Patch<uint32_t>(b, kChunk0 + kAmHeaderSize, 0xffffffff);
    ExpectReject(b, "active-message header larger than the payload");
    std::vector<uint8_t> r = Encode({AmRts(1, 1, 4, 1, {{0, 5}})});
    Patch<uint32_t>(r, kChunk0 + kAmHeaderSize, 5);
    ExpectReject(r, "active-message header larger than the payload");
  }
  SECTION("active-message body size mismatch") {
    std::vector<uint8_t> b = Encode({Am(1, 1, 4, 4)});
    Patch<uint64_t>(b, kChunk0 + kMsgSize, 5);
    ExpectReject(b, "active-message body size does not match");
    Patch<uint32_t>(b, kChunk0 + kAmHeaderSize, 3);  // body 5 inline
    Patch<uint64_t>(b, kChunk0 + kMsgSize, 5);
    CHECK(DecodeCopy(b).n == 1);
  }
  SECTION("rendezvous active message with an inline body") {
    std::vector<uint8_t> b = Encode({AmRts(1, 1, 4, 1, {{0, 5}})});
    Patch<uint32_t>(b, kChunk0 + kAmHeaderSize, 3);
    ExpectReject(b, "rendezvous active message with an inline body");
  }
}

TEST_CASE("Every truncation of a valid packet is rejected", "[wire]") {
  const std::vector<uint8_t> good = Encode(Mixed());
  REQUIRE(DecodeCopy(good).n == 7);
  for (size_t n = 0; n < good.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    // As is (total_len no longer matches) ...
    Decoded d = DecodeCopy(good.data(), n);
    CHECK(d.n == -1);
    CHECK_FALSE(d.why.empty());
    // ... and with total_len and nchunks rewritten to look plausible, so the
    // chunk walk itself meets the end of the packet.
    if (n >= kPacketHeaderSize) {
      std::vector<uint8_t> b(good.begin(), good.begin() + n);
      Patch<uint32_t>(b, kTotalAt, static_cast<uint32_t>(n));
      Decoded e = DecodeCopy(b);
      INFO("why: " << e.why);
      CHECK(e.n == -1);
    }
  }
}

TEST_CASE("Single-byte corruptions never read out of bounds", "[wire]") {
  // Mixed() plus a chunk at the very end whose payload ends at the packet's
  // end, so that corrupted sizes point right past the end.
  std::vector<Spec> specs = Mixed();
  specs.push_back(Data(9, 9, 9, 3));
  const std::vector<uint8_t> good = Encode(specs);
  REQUIRE(DecodeCopy(good).n == static_cast<int>(specs.size()));
  size_t accepted = 0, rejected = 0;
  std::vector<uint8_t> b = good;
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (int value = 0; value < 256; ++value) {
      if (value == good[pos]) continue;
      b[pos] = static_cast<uint8_t>(value);
      Decoded d = DecodeCopy(b);
      if (d.n < 0) {
        ++rejected;
        if (d.why.empty()) FAIL("rejected without a reason at " << pos);
      } else {
        ++accepted;
        INFO("byte " << pos << " = " << value);
        CheckSelfConsistent(d);
      }
    }
    b[pos] = good[pos];
  }
  // Payload bytes, padding, ids and the like decode; sizes and kinds don't.
  CHECK(accepted > 0);
  CHECK(rejected > 0);
}

}  // namespace
}  // namespace rondo::nmad::wire

namespace rondo::nmad::wire {
namespace {

TEST_CASE("short packets round-trip and are told apart from framed ones") {
  uint8_t p[kShortHeaderSize + 8];
  WriteShortHeader(p, 0xabcdef01u, 77, 12345);
  const char msg[8] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
  std::memcpy(p + kShortHeaderSize, msg, 8);
  REQUIRE(IsShortPacket(p, sizeof p));
  ChunkView c;
  std::string why;
  REQUIRE(DecodeShort(p, sizeof p, &c, &why));
  CHECK(c.kind == ChunkKind::kData);
  CHECK(c.session == 0xabcdef01u);
  CHECK(c.seq == 77);
  CHECK(c.tag == 12345);
  CHECK(c.payload == p + kShortHeaderSize);
  CHECK(c.payload_size == 8);
  CHECK(c.msg_size == 8);
  // An empty message is a header alone.
  REQUIRE(DecodeShort(p, kShortHeaderSize, &c, &why));
  CHECK(c.payload_size == 0);
  // A framed packet is not a short one, and the other way round.
  uint8_t framed[kPacketHeaderSize];
  WritePacketHeader(framed, 1, sizeof framed);
  CHECK_FALSE(IsShortPacket(framed, sizeof framed));
  ChunkView out[1];
  CHECK(DecodePacket(p, sizeof p, out, 1, &why) == -1);
  CHECK(why == "bad magic number");
}

TEST_CASE("a short packet decoded over a used view sets every field it "
          "reads") {
  // The decoder default-initializes the view (its parts are left alone):
  // whatever an earlier decode left there must not show through.
  ChunkView c;
  std::memset(static_cast<void*>(&c), 0xa5, sizeof c);
  uint8_t p[kShortHeaderSize + 3];
  WriteShortHeader(p, 9, 10, 11);
  std::string why;
  REQUIRE(DecodeShort(p, sizeof p, &c, &why));
  CHECK(c.kind == ChunkKind::kData);
  CHECK(c.session == 9);
  CHECK(c.seq == 10);
  CHECK(c.tag == 11);
  CHECK(c.flags == 0);
  CHECK(c.handler == 0);
  CHECK(c.rdv_id == 0);
  CHECK(c.accepted == 0);
  CHECK(c.nparts == 0);
  CHECK(c.am_header == nullptr);
  CHECK(c.am_header_size == 0);
  CHECK(c.payload_size == 3);
  CHECK(c.msg_size == 3);
}

TEST_CASE("CopyView copies every field and the parts in use") {
  ChunkView from{};
  from.kind = ChunkKind::kAmRts;
  from.session = 1;
  from.seq = 2;
  from.tag = 3;
  from.flags = 4;
  from.handler = 5;
  from.msg_size = 6;
  from.rdv_id = 7;
  from.accepted = 8;
  from.nparts = 3;
  for (int i = 0; i < 3; ++i) from.parts[i] = {static_cast<uint8_t>(i), 100u + i};
  const uint8_t bytes[4] = {1, 2, 3, 4};
  from.am_header = bytes;
  from.am_header_size = 2;
  from.payload = bytes + 2;
  from.payload_size = 2;
  ChunkView to;
  std::memset(static_cast<void*>(&to), 0xa5, sizeof to);
  CopyView(from, &to);
  CHECK(to.kind == from.kind);
  CHECK(to.session == 1);
  CHECK(to.seq == 2);
  CHECK(to.tag == 3);
  CHECK(to.flags == 4);
  CHECK(to.handler == 5);
  CHECK(to.msg_size == 6);
  CHECK(to.rdv_id == 7);
  CHECK(to.accepted == 8);
  REQUIRE(to.nparts == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(to.parts[i].rail == i);
    CHECK(to.parts[i].bytes == 100u + i);
  }
  CHECK(to.am_header == bytes);
  CHECK(to.am_header_size == 2);
  CHECK(to.payload == bytes + 2);
  CHECK(to.payload_size == 2);
}

TEST_CASE("CopyPayload copies exactly n bytes at every small size") {
  uint8_t src[64];
  for (int i = 0; i < 64; ++i) src[i] = static_cast<uint8_t>(i + 1);
  for (size_t n = 0; n <= 40; ++n) {
    for (size_t at = 0; at < 3; ++at) {  // unaligned sources and targets
      uint8_t dst[64 + 8];
      std::memset(dst, 0xee, sizeof dst);
      CopyPayload(dst + 4 + at, src + at, n);
      INFO("n = " << n << ", offset " << at);
      for (size_t i = 0; i < sizeof dst; ++i) {
        const bool inside = i >= 4 + at && i < 4 + at + n;
        const uint8_t want =
            inside ? static_cast<uint8_t>(at + (i - 4 - at) + 1) : 0xee;
        if (dst[i] != want) FAIL_CHECK("byte " << i << " is " << int(dst[i]));
      }
    }
  }
}

TEST_CASE("malformed short packets are refused with a reason") {
  uint8_t p[kShortHeaderSize];
  ChunkView c;
  std::string why;
  WriteShortHeader(p, 1, 2, 3);
  CHECK_FALSE(DecodeShort(p, kShortHeaderSize - 1, &c, &why));
  CHECK(why.find("shorter") != std::string::npos);
  CHECK_FALSE(DecodeShort(nullptr, 0, &c, &why));
  uint8_t flags[kShortHeaderSize];
  std::memcpy(flags, p, sizeof p);
  flags[2] = 1;  // the reserved flags
  CHECK_FALSE(DecodeShort(flags, sizeof flags, &c, &why));
  CHECK(why.find("flags") != std::string::npos);
  WriteShortHeader(p, 1, 2, -5);
  CHECK_FALSE(DecodeShort(p, sizeof p, &c, &why));
  CHECK(why.find("negative tag") != std::string::npos);
  uint8_t bad_magic[kShortHeaderSize] = {0};
  CHECK_FALSE(DecodeShort(bad_magic, sizeof bad_magic, &c, &why));
  CHECK(why == "bad magic number");
}

}  // namespace
}  // namespace rondo::nmad::wire
