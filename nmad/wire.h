// Wire format of nmad packets, and its validating decoder.
//
// A packet is what one Driver::PostPacket carries: a packet header followed
// by chunks, each a chunk header (kind-specific size) and its payload:
//
//   [PacketHeader 8B][ChunkHeader|fields][payload][ChunkHeader|fields]...
//
// All integers are little-endian and read with memcpy (no alignment
// assumption). Kinds:
//   kData    an eager message: session, seq, tag; payload = the message.
//   kRts     rendezvous request-to-send: session, seq, tag, flags, message
//            size, rendezvous id and the sender's split plan (rail, bytes) x
//            parts. Flag kRtsDataPosted: the sender posted every part with
//            the RTS and expects no kRtr; the receiver posts a receive for
//            every non-empty part (trimmed to what it accepts, 0 bytes to
//            drain a part it does not take).
//   kRtr     ready-to-receive: rendezvous id and the bytes the receiver takes
//            (less than the message size when its buffer is smaller).
//   kAm      active message: session, handler id, header and body inline.
//   kAmRts   active message whose body comes by rendezvous: payload = header.
//
// Short data packets carry one small eager message with no chunk framing,
// so that an 8-byte message and its envelope fit one 64-byte cache line of a
// shared-memory FIFO (the sender's fast path, nmad/core.cc):
//
//   [u16 kShortMagic][u16 flags = 0][u32 session][u32 seq][i32 tag][payload]
//
// The payload is the rest of the packet (IsShortPacket tells the two apart
// by the magic number).
//
// DecodePacket() validates the whole packet before anything is used: magic,
// version, lengths, kinds, part plans. A packet that fails is dropped whole;
// nothing is read outside [data, data + len).
#ifndef RONDO_NMAD_WIRE_H_
#define RONDO_NMAD_WIRE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace rondo::nmad::wire {

inline constexpr uint16_t kMagic = 0x4e52;  // "RN"
inline constexpr uint16_t kShortMagic = 0x5352;  // "RS"
inline constexpr size_t kShortHeaderSize = 16;
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kPacketHeaderSize = 8;
inline constexpr int kMaxChunksPerPacket = 64;
inline constexpr int kMaxParts = 8;

enum class ChunkKind : uint8_t {
  kData = 1,
  kRts = 2,
  kRtr = 3,
  kAm = 4,
  kAmRts = 5,
};

// kRts flags (ChunkView::flags).
inline constexpr uint32_t kRtsDataPosted = 1;
inline constexpr uint32_t kRtsKnownFlags = kRtsDataPosted;

// No member initializers: a default-initialized ChunkView leaves its parts
// as they are (only the first `nparts` mean anything), so decoding a short
// packet writes a few words instead of clearing all eight parts (a 216-byte
// `rep stos` on every small message; docs/performance.md). `RdvPart{}` and
// `ChunkView{}` still zero them.
struct RdvPart {
  uint8_t rail;
  uint64_t bytes;
};

// One decoded chunk; pointers refer into the packet. `parts` past `nparts`
// are not initialized by default-initialization (`ChunkView c;`).
struct ChunkView {
  ChunkKind kind = ChunkKind::kData;
  uint32_t session = 0;
  uint32_t seq = 0;
  int32_t tag = 0;          // kData, kRts
  uint32_t flags = 0;       // kRts: kRtsDataPosted
  uint32_t handler = 0;     // kAm, kAmRts
  uint64_t msg_size = 0;    // kData: payload size; kRts: message; kAm*: body
  uint64_t rdv_id = 0;      // kRts, kRtr, kAmRts
  uint64_t accepted = 0;    // kRtr
  int nparts = 0;           // kRts, kAmRts
  RdvPart parts[kMaxParts];
  const uint8_t* am_header = nullptr;  // kAm, kAmRts
  uint32_t am_header_size = 0;
  const uint8_t* payload = nullptr;    // kData: message; kAm: body
  uint64_t payload_size = 0;
};

// Copies what `from` holds into `*to`: its parts up to nparts, not all
// eight. A stashed chunk (an unexpected message) was copied whole, a
// 216-byte `rep movs` per message (docs/performance.md).
inline void CopyView(const ChunkView& from, ChunkView* to) noexcept {
  static_assert(sizeof(ChunkView) == 216,
                "a member was added to ChunkView: copy it in CopyView");
  to->kind = from.kind;
  to->session = from.session;
  to->seq = from.seq;
  to->tag = from.tag;
  to->flags = from.flags;
  to->handler = from.handler;
  to->msg_size = from.msg_size;
  to->rdv_id = from.rdv_id;
  to->accepted = from.accepted;
  to->nparts = from.nparts;
  for (int i = 0; i < from.nparts && i < kMaxParts; ++i)
    to->parts[i] = from.parts[i];
  to->am_header = from.am_header;
  to->am_header_size = from.am_header_size;
  to->payload = from.payload;
  to->payload_size = from.payload_size;
}

// Sizes of chunk headers (without payload), by kind.
size_t ChunkHeaderSize(ChunkKind kind, int nparts = 0);

// Writes a packet header for `nchunks` chunks and `total` bytes in all.
void WritePacketHeader(uint8_t* out, int nchunks, uint32_t total);
// Writes the chunk header of `c` (payload not included) into `out`, which has
// room for ChunkHeaderSize(c.kind, c.nparts) bytes; `payload_size` is the
// number of payload bytes that follow it on the wire (for kAm/kAmRts the
// active-message header is part of the payload). Returns bytes written.
size_t WriteChunkHeader(uint8_t* out, const ChunkView& c,
                        uint64_t payload_size);

// True when `data` (`len` bytes) starts with the short packet's magic.
// Inline, as DecodeShort: every small message that arrives goes through
// both (docs/performance.md, "Flattened entry points").
inline bool IsShortPacket(const void* data, size_t len) noexcept {
  if (data == nullptr || len < 2) return false;
  uint16_t magic;
  std::memcpy(&magic, data, sizeof magic);
  return magic == kShortMagic;
}
// Copies `n` bytes of a payload out of a packet (non-overlapping). Up to 16
// bytes it is two loads and two stores, inline: an 8-byte MPI message
// otherwise paid a call through the PLT to libc's memcpy (about 20
// instructions, docs/performance.md); larger copies are memcpy's.
inline void CopyPayload(void* dst, const void* src, size_t n) noexcept {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  if (n > 16) {
    std::memcpy(d, s, n);
  } else if (n >= 8) {  // two 8-byte words, overlapping when n < 16
    uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else if (n > 0) {  // 1 to 3 bytes: first, middle, last
    const uint8_t a = s[0], b = s[n / 2], c = s[n - 1];
    d[0] = a;
    d[n / 2] = b;
    d[n - 1] = c;
  }
}

// Writes a short packet header (kShortHeaderSize bytes) into `out`: the
// magic, 16 bits of flags (0), session, seq and tag, in host order. Inline:
// the small-message path writes it straight into a shared-memory FIFO.
inline void WriteShortHeader(uint8_t* out, uint32_t session, uint32_t seq,
                             int32_t tag) noexcept {
  static_assert(std::endian::native == std::endian::little);
  const uint32_t h[4] = {kShortMagic, session, seq,
                         static_cast<uint32_t>(tag)};
  std::memcpy(out, h, sizeof h);
}
// Validates and decodes a short packet into `*out` (a kData chunk whose
// payload points into the packet). Returns false with `*why` set when it
// is malformed (too short, flags set, negative tag).
inline bool DecodeShort(const void* data, size_t len, ChunkView* out,
                        std::string* why) {
  auto fail = [why](const char* reason) {
    if (why) *why = reason;
    return false;
  };
  if (data == nullptr || len < kShortHeaderSize)
    return fail("short packet shorter than its 16-byte header");
  static_assert(std::endian::native == std::endian::little);
  uint32_t h[4];  // magic | flags << 16, session, seq, tag
  std::memcpy(h, data, sizeof h);
  if ((h[0] & 0xffff) != kShortMagic) return fail("bad magic number");
  if ((h[0] >> 16) != 0) return fail("short packet with flags set");
  const int32_t tag = static_cast<int32_t>(h[3]);
  if (tag < 0) return fail("short packet with a negative tag");
  // Default-initialized: the members' initializers, parts left alone.
  ChunkView* c = new (out) ChunkView;
  c->kind = ChunkKind::kData;
  c->session = h[1];
  c->seq = h[2];
  c->tag = tag;
  c->payload = static_cast<const uint8_t*>(data) + kShortHeaderSize;
  c->payload_size = len - kShortHeaderSize;
  c->msg_size = c->payload_size;
  return true;
}

// Validates and decodes a packet. Returns the number of chunks (>= 1), or -1
// with `*why` set when the packet is malformed. `out` may be uninitialized
// storage for `max_chunks` views: only the chunks found are constructed.
int DecodePacket(const void* data, size_t len, ChunkView* out, int max_chunks,
                 std::string* why);

}  // namespace rondo::nmad::wire

#endif  // RONDO_NMAD_WIRE_H_
