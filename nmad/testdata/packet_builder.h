// Test helper: builds nmad packets the way nmad/core.cc writes them (packet
// header, then per chunk its WriteChunkHeader() and payload: the message for
// kData, the active-message header and body for kAm, the header alone for
// kAmRts). Shared by wire_test and the fuzzer's seed corpus.
#ifndef RONDO_NMAD_TESTDATA_PACKET_BUILDER_H_
#define RONDO_NMAD_TESTDATA_PACKET_BUILDER_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "nmad/wire.h"

namespace rondo::nmad::wire::testing {

// One chunk to encode: its header fields and its payload pieces.
struct ChunkSpec {
  ChunkView v;
  std::vector<uint8_t> am_header;  // kAm, kAmRts
  std::vector<uint8_t> body;       // kData, kAm
};

// `n` recognisable bytes (the corpus files depend on this pattern).
inline std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + 13 * i);
  return b;
}

inline ChunkSpec Data(uint32_t session, uint32_t seq, int32_t tag, size_t n,
                      uint8_t seed) {
  ChunkSpec c;
  c.v.kind = ChunkKind::kData;
  c.v.session = session;
  c.v.seq = seq;
  c.v.tag = tag;
  c.body = Bytes(n, seed);
  c.v.msg_size = n;
  return c;
}

inline ChunkSpec WithParts(ChunkKind kind, const std::vector<RdvPart>& parts) {
  ChunkSpec c;
  c.v.kind = kind;
  c.v.nparts = static_cast<int>(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    c.v.parts[i] = parts[i];
    c.v.msg_size += parts[i].bytes;
  }
  return c;
}

inline ChunkSpec Rts(uint32_t session, uint32_t seq, int32_t tag, uint64_t id,
                     const std::vector<RdvPart>& parts) {
  ChunkSpec c = WithParts(ChunkKind::kRts, parts);
  c.v.session = session;
  c.v.seq = seq;
  c.v.tag = tag;
  c.v.rdv_id = id;
  return c;
}

// `c` (a kRts) with these flags (wire::kRtsDataPosted).
inline ChunkSpec RtsFlags(ChunkSpec c, uint32_t flags) {
  c.v.flags = flags;
  return c;
}

inline ChunkSpec Rtr(uint64_t id, uint64_t accepted) {
  ChunkSpec c;
  c.v.kind = ChunkKind::kRtr;
  c.v.rdv_id = id;
  c.v.accepted = accepted;
  return c;
}

inline ChunkSpec Am(uint32_t session, uint32_t handler, size_t header,
                    size_t body, uint8_t header_seed = 0xa0,
                    uint8_t body_seed = 0x10) {
  ChunkSpec c;
  c.v.kind = ChunkKind::kAm;
  c.v.session = session;
  c.v.handler = handler;
  c.am_header = Bytes(header, header_seed);
  c.body = Bytes(body, body_seed);
  c.v.am_header_size = static_cast<uint32_t>(header);
  c.v.msg_size = body;
  return c;
}

inline ChunkSpec AmRts(uint32_t session, uint32_t handler, size_t header,
                       uint64_t id, const std::vector<RdvPart>& parts,
                       uint8_t header_seed = 0x55) {
  ChunkSpec c = WithParts(ChunkKind::kAmRts, parts);
  c.v.session = session;
  c.v.handler = handler;
  c.v.rdv_id = id;
  c.am_header = Bytes(header, header_seed);
  c.v.am_header_size = static_cast<uint32_t>(header);
  return c;
}

inline uint64_t PayloadSize(const ChunkSpec& c) {
  switch (c.v.kind) {
    case ChunkKind::kData: return c.body.size();
    case ChunkKind::kAm: return c.am_header.size() + c.body.size();
    case ChunkKind::kAmRts: return c.am_header.size();
    default: return 0;
  }
}

// The packet for `chunks`. Aborts if WriteChunkHeader writes another size
// than ChunkHeaderSize promises.
inline std::vector<uint8_t> Encode(const std::vector<ChunkSpec>& chunks) {
  std::vector<uint8_t> out(kPacketHeaderSize);
  for (const ChunkSpec& c : chunks) {
    const size_t pos = out.size();
    const size_t size = ChunkHeaderSize(c.v.kind, c.v.nparts);
    out.resize(pos + size);
    if (WriteChunkHeader(out.data() + pos, c.v, PayloadSize(c)) != size) {
      std::fprintf(stderr, "WriteChunkHeader wrote another size than %zu\n",
                   size);
      std::abort();
    }
    if (c.v.kind == ChunkKind::kAm || c.v.kind == ChunkKind::kAmRts)
      out.insert(out.end(), c.am_header.begin(), c.am_header.end());
    if (c.v.kind == ChunkKind::kData || c.v.kind == ChunkKind::kAm)
      out.insert(out.end(), c.body.begin(), c.body.end());
  }
  WritePacketHeader(out.data(), static_cast<int>(chunks.size()),
                    static_cast<uint32_t>(out.size()));
  return out;
}

}  // namespace rondo::nmad::wire::testing

#endif  // RONDO_NMAD_TESTDATA_PACKET_BUILDER_H_
