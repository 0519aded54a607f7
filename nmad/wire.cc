#include "nmad/wire.h"

#include <cstring>
#include <new>

namespace rondo::nmad::wire {
namespace {

// Common part of every chunk header.
//   u8 kind, u8 nparts, u16 header_size, u32 payload_size
constexpr size_t kCommon = 8;
constexpr size_t kPartSize = 16;  // u64 bytes, u8 rail, 7 pad

template <typename T>
void Put(uint8_t*& p, T v) {
  std::memcpy(p, &v, sizeof(T));
  p += sizeof(T);
}

template <typename T>
T Get(const uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

size_t FixedSize(ChunkKind kind) {
  switch (kind) {
    case ChunkKind::kData: return kCommon + 16;
    case ChunkKind::kRts: return kCommon + 32;
    case ChunkKind::kRtr: return kCommon + 16;
    case ChunkKind::kAm: return kCommon + 24;
    case ChunkKind::kAmRts: return kCommon + 32;
  }
  return 0;
}

bool HasParts(ChunkKind kind) {
  return kind == ChunkKind::kRts || kind == ChunkKind::kAmRts;
}

}  // namespace

// "chunk I: ", the start of a decoding error (built only on errors).
static std::string At(int i) { return "chunk " + std::to_string(i) + ": "; }

size_t ChunkHeaderSize(ChunkKind kind, int nparts) {
  return FixedSize(kind) + (HasParts(kind) ? kPartSize * nparts : 0);
}

void WritePacketHeader(uint8_t* out, int nchunks, uint32_t total) {
  uint8_t* p = out;
  Put<uint16_t>(p, kMagic);
  Put<uint8_t>(p, kVersion);
  Put<uint8_t>(p, static_cast<uint8_t>(nchunks));
  Put<uint32_t>(p, total);
}

size_t WriteChunkHeader(uint8_t* out, const ChunkView& c,
                        uint64_t payload_size) {
  const int nparts = HasParts(c.kind) ? c.nparts : 0;
  const size_t size = ChunkHeaderSize(c.kind, nparts);
  uint8_t* p = out;
  Put<uint8_t>(p, static_cast<uint8_t>(c.kind));
  Put<uint8_t>(p, static_cast<uint8_t>(nparts));
  Put<uint16_t>(p, static_cast<uint16_t>(size));
  Put<uint32_t>(p, static_cast<uint32_t>(payload_size));
  switch (c.kind) {
    case ChunkKind::kData:
      Put<uint32_t>(p, c.session);
      Put<uint32_t>(p, c.seq);
      Put<int32_t>(p, c.tag);
      Put<uint32_t>(p, 0);
      break;
    case ChunkKind::kRts:
      Put<uint32_t>(p, c.session);
      Put<uint32_t>(p, c.seq);
      Put<int32_t>(p, c.tag);
      Put<uint32_t>(p, c.flags);
      Put<uint64_t>(p, c.msg_size);
      Put<uint64_t>(p, c.rdv_id);
      break;
    case ChunkKind::kRtr:
      Put<uint64_t>(p, c.rdv_id);
      Put<uint64_t>(p, c.accepted);
      break;
    case ChunkKind::kAm:
      Put<uint32_t>(p, c.session);
      Put<uint32_t>(p, c.handler);
      Put<uint32_t>(p, c.am_header_size);
      Put<uint32_t>(p, 0);
      Put<uint64_t>(p, c.msg_size);
      break;
    case ChunkKind::kAmRts:
      Put<uint32_t>(p, c.session);
      Put<uint32_t>(p, c.handler);
      Put<uint32_t>(p, c.am_header_size);
      Put<uint32_t>(p, 0);
      Put<uint64_t>(p, c.msg_size);
      Put<uint64_t>(p, c.rdv_id);
      break;
  }
  for (int i = 0; i < nparts; ++i) {
    Put<uint64_t>(p, c.parts[i].bytes);
    Put<uint8_t>(p, c.parts[i].rail);
    std::memset(p, 0, 7);
    p += 7;
  }
  return size;
}

int DecodePacket(const void* data, size_t len, ChunkView* out, int max_chunks,
                 std::string* why) {
  auto fail = [why](std::string reason) {
    if (why) *why = std::move(reason);
    return -1;
  };
  if (data == nullptr || len < kPacketHeaderSize)
    return fail("packet of " + std::to_string(len) +
                " bytes is shorter than its 8-byte header");
  const uint8_t* base = static_cast<const uint8_t*>(data);
  const uint8_t* p = base;
  const uint16_t magic = Get<uint16_t>(p);
  const uint8_t version = Get<uint8_t>(p);
  const int nchunks = Get<uint8_t>(p);
  const uint32_t total = Get<uint32_t>(p);
  if (magic != kMagic) return fail("bad magic number");
  if (version != kVersion)
    return fail("wire version " + std::to_string(version) + ", expected " +
                std::to_string(kVersion));
  if (total != len)
    return fail("header says " + std::to_string(total) +
                " bytes, packet has " + std::to_string(len));
  if (nchunks < 1 || nchunks > max_chunks || nchunks > kMaxChunksPerPacket)
    return fail("chunk count " + std::to_string(nchunks) +
                " is outside 1.." + std::to_string(max_chunks));
  const uint8_t* end = base + len;
  for (int i = 0; i < nchunks; ++i) {
    if (static_cast<size_t>(end - p) < kCommon)
      return fail(At(i) + "truncated chunk header");
    const uint8_t* chunk = p;
    const uint8_t kind_raw = Get<uint8_t>(p);
    const int nparts = Get<uint8_t>(p);
    const uint16_t header_size = Get<uint16_t>(p);
    const uint32_t payload_size = Get<uint32_t>(p);
    if (kind_raw < 1 || kind_raw > 5)
      return fail(At(i) + "unknown kind " + std::to_string(kind_raw));
    const ChunkKind kind = static_cast<ChunkKind>(kind_raw);
    if (HasParts(kind) ? (nparts < 1 || nparts > kMaxParts) : nparts != 0)
      return fail(At(i) + "bad part count " + std::to_string(nparts));
    if (header_size != ChunkHeaderSize(kind, nparts))
      return fail(At(i) + "header size " + std::to_string(header_size) +
                  " does not match its kind");
    if (static_cast<size_t>(end - chunk) < header_size)
      return fail(At(i) + "truncated chunk header");
    if (static_cast<size_t>(end - chunk) - header_size < payload_size)
      return fail(At(i) + "payload of " + std::to_string(payload_size) +
                  " bytes runs past the packet");
    ChunkView& c = *new (&out[i]) ChunkView{};
    c.kind = kind;
    c.nparts = HasParts(kind) ? nparts : 0;
    switch (kind) {
      case ChunkKind::kData:
        c.session = Get<uint32_t>(p);
        c.seq = Get<uint32_t>(p);
        c.tag = Get<int32_t>(p);
        p += 4;
        c.msg_size = payload_size;
        break;
      case ChunkKind::kRts:
        c.session = Get<uint32_t>(p);
        c.seq = Get<uint32_t>(p);
        c.tag = Get<int32_t>(p);
        c.flags = Get<uint32_t>(p);
        c.msg_size = Get<uint64_t>(p);
        c.rdv_id = Get<uint64_t>(p);
        break;
      case ChunkKind::kRtr:
        c.rdv_id = Get<uint64_t>(p);
        c.accepted = Get<uint64_t>(p);
        break;
      case ChunkKind::kAm:
      case ChunkKind::kAmRts:
        c.session = Get<uint32_t>(p);
        c.handler = Get<uint32_t>(p);
        c.am_header_size = Get<uint32_t>(p);
        p += 4;
        c.msg_size = Get<uint64_t>(p);
        if (kind == ChunkKind::kAmRts) c.rdv_id = Get<uint64_t>(p);
        break;
    }
    if ((kind == ChunkKind::kData || kind == ChunkKind::kRts) && c.tag < 0)
      return fail(At(i) + "negative tag " + std::to_string(c.tag));
    if (kind == ChunkKind::kRts && (c.flags & ~kRtsKnownFlags) != 0)
      return fail(At(i) + "unknown request-to-send flags " +
                  std::to_string(c.flags));
    if ((kind == ChunkKind::kRtr || kind == ChunkKind::kRts) &&
        payload_size != 0)
      return fail(At(i) + "control chunk with a payload");
    uint64_t sum = 0;
    for (int k = 0; k < c.nparts; ++k) {
      c.parts[k].bytes = Get<uint64_t>(p);
      c.parts[k].rail = Get<uint8_t>(p);
      p += 7;
      if (c.parts[k].bytes > (uint64_t{1} << 48))
        return fail(At(i) + "part larger than 2^48 bytes");
      sum += c.parts[k].bytes;
    }
    if (HasParts(kind) && sum != c.msg_size)
      return fail(At(i) + "parts add up to " + std::to_string(sum) +
                  " bytes, message is " + std::to_string(c.msg_size));
    const uint8_t* payload = chunk + header_size;
    if (kind == ChunkKind::kAm || kind == ChunkKind::kAmRts) {
      if (c.am_header_size > payload_size)
        return fail(At(i) + "active-message header larger than the payload");
      c.am_header = payload;
      const uint64_t body_inline = payload_size - c.am_header_size;
      if (kind == ChunkKind::kAm && body_inline != c.msg_size)
        return fail(At(i) + "active-message body size does not match");
      if (kind == ChunkKind::kAmRts && body_inline != 0)
        return fail(At(i) + "rendezvous active message with an inline body");
      c.payload = payload + c.am_header_size;
      c.payload_size = body_inline;
    } else {
      c.payload = payload;
      c.payload_size = payload_size;
    }
    p = payload + payload_size;
  }
  if (p != end)
    return fail(std::to_string(end - p) + " trailing bytes after the chunks");
  return nchunks;
}

}  // namespace rondo::nmad::wire
