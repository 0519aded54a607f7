// Packets built from queued chunks (nmad/packet_builder.h), decoded back
// with the wire's validating decoder: headers, inline and gathered
// payloads, what completes with the packet, announced rendezvous.
#include "nmad/packet_builder.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "nmad/wire.h"

namespace rondo::nmad::internal {
namespace {

using wire::ChunkKind;
using wire::ChunkView;

std::vector<uint8_t> Flatten(const PacketBuf& b) {
  std::vector<uint8_t> out;
  for (const iovec& v : b.iov) {
    auto* p = static_cast<const uint8_t*>(v.iov_base);
    out.insert(out.end(), p, p + v.iov_len);
  }
  return out;
}

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i);
  return v;
}

TEST_CASE("packet builder: data, AM and RTS chunks round-trip the decoder") {
  PacketBuf b;
  b.header.resize(PacketBufBytes());
  Gate g;
  const auto small = Bytes(20, 1);
  const auto large = Bytes(kInlineCopy + 100, 2);  // own iovec entry
  const auto amh = Bytes(8, 3);
  SendOp d1, d2, am, rts;
  d1.kind = ChunkKind::kData;
  d1.session = 7;
  d1.seq = 3;
  d1.tag = 11;
  d1.data = small.data();
  d1.len = small.size();

  d2.kind = ChunkKind::kData;
  d2.session = 7;
  d2.seq = 4;
  d2.tag = 12;
  d2.data = large.data();
  d2.len = large.size();
  am.kind = ChunkKind::kAm;
  am.session = 7;
  am.handler = 5;
  am.am_header = amh.data();
  am.am_header_size = 8;
  am.data = small.data();
  am.len = small.size();
  rts.kind = ChunkKind::kRts;
  rts.session = 7;
  rts.seq = 5;
  rts.tag = 13;
  rts.len = 1 << 20;
  rts.rdv_id = 99;
  rts.nparts = 2;
  rts.parts[0] = {0, 1 << 19};
  rts.parts[1] = {1, 1 << 19};
  std::vector<strategies::PendingChunk*> chunks = {&d1, &d2, &am, &rts};
  const uint64_t total = BuildPacket(b, g, chunks);

  // Data larger than kInlineCopy is borrowed from the sender, not copied.
  bool borrowed = false;
  for (const iovec& v : b.iov) borrowed |= v.iov_base == large.data();
  CHECK(borrowed);
  CHECK(b.iov.size() == 3);  // headers, large data, the rest
  const auto packet = Flatten(b);
  CHECK(packet.size() == total);
  ChunkView views[wire::kMaxChunksPerPacket];
  std::string why;
  const int n = wire::DecodePacket(packet.data(), packet.size(), views,
                                   wire::kMaxChunksPerPacket, &why);
  INFO(why);
  REQUIRE(n == 4);
  CHECK(views[0].kind == ChunkKind::kData);
  CHECK(views[0].seq == 3);
  CHECK(views[0].tag == 11);
  CHECK(std::vector<uint8_t>(views[0].payload,
                             views[0].payload + views[0].payload_size) ==
        small);
  CHECK(std::vector<uint8_t>(views[1].payload,
                             views[1].payload + views[1].payload_size) ==
        large);
  CHECK(views[2].kind == ChunkKind::kAm);
  CHECK(views[2].handler == 5);
  CHECK(std::vector<uint8_t>(views[2].am_header,
                             views[2].am_header + 8) == amh);
  CHECK(views[2].payload_size == small.size());
  CHECK(views[3].kind == ChunkKind::kRts);
  CHECK(views[3].rdv_id == 99);
  CHECK(views[3].msg_size == (1u << 20));
  CHECK(views[3].nparts == 2);
  CHECK(views[3].parts[1].rail == 1);
  // The eager chunks complete with the packet; the RTS waits for its RTR.
  CHECK(b.ops == std::vector<SendOp*>{&d1, &d2, &am});
  CHECK(b.rts_ids == std::vector<uint64_t>{99});
  CHECK(g.rdv_waiting.at(99) == &rts);
}

TEST_CASE("packet builder: short packets decode to their message") {
  uint8_t buf[wire::kShortHeaderSize + kShortMax];
  const auto msg = Bytes(kShortMax, 9);
  const size_t n = WriteShortPacket(buf, 42, 17, 3, msg.data(), msg.size());
  CHECK(n == wire::kShortHeaderSize + kShortMax);
  REQUIRE(wire::IsShortPacket(buf, n));
  ChunkView c;
  std::string why;
  REQUIRE(wire::DecodeShort(buf, n, &c, &why));
  CHECK(c.session == 42);
  CHECK(c.seq == 17);
  CHECK(c.tag == 3);
  CHECK(std::vector<uint8_t>(c.payload, c.payload + c.payload_size) == msg);
  CHECK(WriteShortPacket(buf, 1, 0, 0, nullptr, 0) == wire::kShortHeaderSize);
}

TEST_CASE("packet builder: buffer room for the largest packet") {
  CHECK(PacketBufBytes() >= kHeaderRoom);
  CHECK(PacketBufBytes() >= wire::kShortHeaderSize + kShortMax);
  CHECK(kFirstImmediate >= kMinImmediate);
}

}  // namespace
}  // namespace rondo::nmad::internal
