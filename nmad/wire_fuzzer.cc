// libFuzzer target for the nmad wire decoder (nmad/wire.h).
//
// Feeds arbitrary bytes to DecodePacket() and checks, for every packet it
// accepts:
//   - every returned pointer + size lies inside the input;
//   - the decoded chunks are self-consistent (part counts and sums, payload
//     sizes per kind, non-negative tags) and their payloads appear in order
//     without overlapping;
//   - decoding with max_chunks = n succeeds and with n - 1 fails;
//   - re-encoding the decoded chunks the way nmad/core.cc does gives a packet
//     of the same length that decodes to the same chunks.
// The short-packet decoder (DecodeShort) on the input as it is and with the
// short magic written over its first two bytes. And the dynamic-broadcast
// header decoder (nmad/dynamic_bcast.h), on the
// whole input and on every active message's header: an accepted header has
// its ranks in range and distinct, and re-encodes to the same bytes.
// Out-of-bounds reads are left to the sanitizers (ASan/UBSan).
//
// Built three ways:
//   //nmad:wire_fuzzer                 clang + -fsanitize=fuzzer (manual tag)
//   //nmad:wire_fuzzer_replay_test     gcc, with testdata/fuzz_replay_main.cc
//   nmad/fuzz.sh                       clang++ directly, runs N seconds
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nmad/dynamic_bcast.h"
#include "nmad/wire.h"

namespace {

using rondo::nmad::wire::ChunkHeaderSize;
using rondo::nmad::wire::ChunkKind;
using rondo::nmad::wire::ChunkView;
using rondo::nmad::wire::DecodePacket;
using rondo::nmad::wire::kMaxChunksPerPacket;
using rondo::nmad::wire::kMaxParts;
using rondo::nmad::wire::kPacketHeaderSize;
using rondo::nmad::wire::WriteChunkHeader;
using rondo::nmad::wire::WritePacketHeader;

[[noreturn]] void Fail(const char* what, int chunk) {
  std::fprintf(stderr, "wire_fuzzer: invariant violated: %s (chunk %d)\n",
               what, chunk);
  std::abort();
}

#define WIRE_CHECK(cond, chunk)          \
  do {                                   \
    if (!(cond)) Fail(#cond, (chunk));   \
  } while (0)

bool Inside(const uint8_t* base, size_t len, const uint8_t* p, uint64_t n) {
  if (n == 0) return p == nullptr || (p >= base && p <= base + len);
  return p != nullptr && p >= base && p <= base + len &&
         n <= static_cast<uint64_t>(base + len - p);
}

bool HasParts(ChunkKind k) {
  return k == ChunkKind::kRts || k == ChunkKind::kAmRts;
}

uint64_t WirePayload(const ChunkView& c) {
  switch (c.kind) {
    case ChunkKind::kData: return c.payload_size;
    case ChunkKind::kAm: return c.am_header_size + c.payload_size;
    case ChunkKind::kAmRts: return c.am_header_size;
    default: return 0;
  }
}

void CheckChunk(const uint8_t* data, size_t len, const ChunkView& c, int i,
                const uint8_t** cursor) {
  WIRE_CHECK(Inside(data, len, c.payload, c.payload_size), i);
  WIRE_CHECK(Inside(data, len, c.am_header, c.am_header_size), i);
  const int kind = static_cast<int>(c.kind);
  WIRE_CHECK(kind >= 1 && kind <= 5, i);
  if (HasParts(c.kind)) {
    WIRE_CHECK(c.nparts >= 1 && c.nparts <= kMaxParts, i);
    uint64_t sum = 0;
    for (int k = 0; k < c.nparts; ++k) sum += c.parts[k].bytes;
    WIRE_CHECK(sum == c.msg_size, i);
  } else {
    WIRE_CHECK(c.nparts == 0, i);
  }
  switch (c.kind) {
    case ChunkKind::kData:
      WIRE_CHECK(c.tag >= 0, i);
      WIRE_CHECK(c.payload_size == c.msg_size, i);
      WIRE_CHECK(c.am_header == nullptr && c.am_header_size == 0, i);
      break;
    case ChunkKind::kRts:
      WIRE_CHECK(c.tag >= 0, i);
      WIRE_CHECK(c.payload_size == 0, i);
      break;
    case ChunkKind::kRtr:
      WIRE_CHECK(c.payload_size == 0, i);
      break;
    case ChunkKind::kAm:
      WIRE_CHECK(c.payload_size == c.msg_size, i);
      WIRE_CHECK(c.am_header != nullptr, i);
      WIRE_CHECK(c.payload == c.am_header + c.am_header_size, i);
      break;
    case ChunkKind::kAmRts:
      WIRE_CHECK(c.payload_size == 0, i);
      WIRE_CHECK(c.am_header != nullptr, i);
      break;
  }
  // Payload regions come in packet order and do not overlap.
  const uint8_t* first = c.am_header ? c.am_header : c.payload;
  if (first != nullptr) {
    WIRE_CHECK(first >= *cursor, i);
    *cursor = first + WirePayload(c);
  }
}

bool SameChunk(const ChunkView& a, const ChunkView& b) {
  if (a.kind != b.kind || a.session != b.session || a.seq != b.seq ||
      a.tag != b.tag || a.handler != b.handler || a.msg_size != b.msg_size ||
      a.rdv_id != b.rdv_id || a.accepted != b.accepted ||
      a.nparts != b.nparts || a.am_header_size != b.am_header_size ||
      a.payload_size != b.payload_size)
    return false;
  for (int k = 0; k < a.nparts; ++k)
    if (a.parts[k].rail != b.parts[k].rail ||
        a.parts[k].bytes != b.parts[k].bytes)
      return false;
  if (a.am_header_size &&
      std::memcmp(a.am_header, b.am_header, a.am_header_size) != 0)
    return false;
  if (a.payload_size && std::memcmp(a.payload, b.payload, a.payload_size) != 0)
    return false;
  return true;
}

// Re-encodes like core.cc's FlushGate.
std::vector<uint8_t> Encode(const ChunkView* chunks, int n) {
  std::vector<uint8_t> out(kPacketHeaderSize);
  for (int i = 0; i < n; ++i) {
    const ChunkView& c = chunks[i];
    const uint64_t payload = WirePayload(c);
    const size_t pos = out.size();
    out.resize(pos + ChunkHeaderSize(c.kind, c.nparts));
    WriteChunkHeader(out.data() + pos, c, payload);
    if (c.kind == ChunkKind::kAm || c.kind == ChunkKind::kAmRts)
      out.insert(out.end(), c.am_header, c.am_header + c.am_header_size);
    if (c.kind == ChunkKind::kData || c.kind == ChunkKind::kAm)
      out.insert(out.end(), c.payload, c.payload + c.payload_size);
  }
  WritePacketHeader(out.data(), n, static_cast<uint32_t>(out.size()));
  return out;
}

}  // namespace

// A dynamic broadcast header as rank 1 of 64 would receive it.
void CheckBroadcastHeader(const uint8_t* data, size_t size, uint64_t body) {
  rondo::nmad::BroadcastHeader h;
  std::string why;
  if (!rondo::nmad::DecodeBroadcastHeader(data, size, 1, 64, body, &h,
                                          &why)) {
    WIRE_CHECK(!why.empty(), -2);
    return;
  }
  WIRE_CHECK(h.root >= 0 && h.root < 64 && h.root != 1, -2);
  WIRE_CHECK(h.length == body, -2);
  uint64_t seen = (uint64_t{1} << h.root) | 2;
  for (const auto& e : h.forward) {
    WIRE_CHECK(e.rank >= 0 && e.rank < 64, -2);
    WIRE_CHECK((seen & (uint64_t{1} << e.rank)) == 0, -2);
    seen |= uint64_t{1} << e.rank;
  }
  std::vector<uint8_t> re = rondo::nmad::EncodeBroadcastHeader(h);
  WIRE_CHECK(re.size() == size && std::memcmp(re.data(), data, size) == 0,
             -2);
}

// The short-packet decoder (the small-message fast path's header): an
// accepted packet is a data chunk whose payload is the rest of the input
// and which re-encodes to the same bytes; a refused one says why. Inputs
// that do not start with the short magic are tried with it written over
// their first two bytes, so the fuzzer reaches the other checks.
void CheckShortOnce(const uint8_t* data, size_t size) {
  ChunkView c;
  std::string why;
  if (!rondo::nmad::wire::DecodeShort(data, size, &c, &why)) {
    WIRE_CHECK(!why.empty(), -3);
    return;
  }
  WIRE_CHECK(rondo::nmad::wire::IsShortPacket(data, size), -3);
  WIRE_CHECK(size >= rondo::nmad::wire::kShortHeaderSize, -3);
  WIRE_CHECK(c.kind == ChunkKind::kData && c.tag >= 0 && c.nparts == 0, -3);
  WIRE_CHECK(c.payload == data + rondo::nmad::wire::kShortHeaderSize, -3);
  WIRE_CHECK(c.payload_size == size - rondo::nmad::wire::kShortHeaderSize,
             -3);
  WIRE_CHECK(c.msg_size == c.payload_size, -3);
  WIRE_CHECK(Inside(data, size, c.payload, c.payload_size), -3);
  uint8_t re[rondo::nmad::wire::kShortHeaderSize];
  rondo::nmad::wire::WriteShortHeader(re, c.session, c.seq, c.tag);
  WIRE_CHECK(std::memcmp(re, data, sizeof re) == 0, -3);
}

void CheckShort(const uint8_t* data, size_t size) {
  CheckShortOnce(data, size);
  if (size < 2 || rondo::nmad::wire::IsShortPacket(data, size)) return;
  std::vector<uint8_t> copy(data, data + size);
  const uint16_t magic = rondo::nmad::wire::kShortMagic;
  std::memcpy(copy.data(), &magic, 2);  // little-endian, as the wire
  CheckShortOnce(copy.data(), copy.size());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 24) {
    uint64_t body = 0;
    std::memcpy(&body, data + 16, 8);  // the header's own length field
    CheckBroadcastHeader(data, size, body);
  }
  CheckShort(data, size);
  ChunkView chunks[kMaxChunksPerPacket];
  std::string why;
  const int n = DecodePacket(data, size, chunks, kMaxChunksPerPacket, &why);
  if (n < 0) {
    WIRE_CHECK(n == -1, -1);
    WIRE_CHECK(!why.empty(), -1);
    return 0;
  }
  WIRE_CHECK(n >= 1 && n <= kMaxChunksPerPacket, -1);
  WIRE_CHECK(size >= kPacketHeaderSize, -1);
  const uint8_t* cursor = data + kPacketHeaderSize;
  for (int i = 0; i < n; ++i) CheckChunk(data, size, chunks[i], i, &cursor);
  for (int i = 0; i < n; ++i)
    if (chunks[i].kind == ChunkKind::kAm || chunks[i].kind == ChunkKind::kAmRts)
      CheckBroadcastHeader(chunks[i].am_header, chunks[i].am_header_size,
                           chunks[i].msg_size);

  // The caller's max_chunks is honoured exactly.
  {
    ChunkView again[kMaxChunksPerPacket];
    WIRE_CHECK(DecodePacket(data, size, again, n, nullptr) == n, -1);
    if (n > 1)
      WIRE_CHECK(DecodePacket(data, size, again, n - 1, nullptr) == -1, -1);
  }

  // Re-encoding gives a packet of the same length with the same chunks.
  std::vector<uint8_t> re = Encode(chunks, n);
  WIRE_CHECK(re.size() == size, -1);
  ChunkView back[kMaxChunksPerPacket];
  std::string why2;
  WIRE_CHECK(DecodePacket(re.data(), re.size(), back, kMaxChunksPerPacket,
                          &why2) == n,
             -1);
  for (int i = 0; i < n; ++i) WIRE_CHECK(SameChunk(chunks[i], back[i]), i);
  return 0;
}
