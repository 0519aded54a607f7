// The shared-memory FIFO's frames ("fast boxes") and their decoder.
//
// A FIFO carries frames from one producer (the sending rank) to one
// consumer (the receiving rank) in a ring of bytes (ring_bytes, a power of
// two, made of 64-byte cache lines: Cell). A frame is an 8-byte header and
// its payload, contiguous, padded to 8 bytes: FrameBytes(len). An 8-byte
// MPI message (a 16-byte nmad header and its 8 bytes) takes 32 bytes, so
// two travel in one cache line, as in Open MPI's vader fast boxes; a
// frame's payload is one contiguous run of bytes that the consumer hands
// on in place, without copying it out of the ring first.
//
// The header is one 64-bit word: the tag of the frame's absolute byte
// position (Tag(), bit 30 set) in its low half, its type and payload
// length in the high half. The producer writes the payload, zeroes the
// header word of the frame that will follow, then stores this frame's
// header with a release store; the consumer loads the header at its head
// with an acquire load. So the word at the consumer's head is always zero
// ("nothing yet") until the frame there is published: stale bytes of an
// earlier lap (a payload, which may hold anything) are never at a header
// position unless a header was published there. Any other word, and any
// header whose fields disagree (unknown type, a length above the limit or
// the wrong size for a control frame, a frame running past the ring's
// end), is a corrupt frame: refused, never trusted (Explain says why).
//
// A frame never wraps: when it does not fit before the ring's end, a skip
// frame fills the rest of the lap and the frame starts the next one
// (Place). A ring of at least 2 * FrameBytes(max) bytes therefore
// takes any frame up to `max` bytes once it is empty.
//
// Thread-safety: none inside one FIFO side; one producer and one consumer
// per ring, in any two threads or processes.
#ifndef RONDO_DRIVERS_SHM_CELL_H_
#define RONDO_DRIVERS_SHM_CELL_H_

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace rondo::drivers::shm {

// One cache line of a ring: the unit the segment sizes rings in.
inline constexpr size_t kCellBytes = 64;
struct alignas(kCellBytes) Cell {
  uint8_t bytes[kCellBytes];
};
static_assert(sizeof(Cell) == kCellBytes);

inline constexpr uint32_t kFrameHeader = 8;
// The largest packet, and frame payload (a packet plus a data frame's
// header): nmad's largest max_packet.
inline constexpr uint32_t kMaxPacket = 1u << 20;
inline constexpr uint32_t kMaxFramePayload = kMaxPacket + 16;

// The ring bytes a frame of `len` payload bytes takes (header, payload,
// padding to 8 bytes).
inline constexpr uint32_t FrameBytes(uint32_t len) noexcept {
  return kFrameHeader + ((len + 7u) & ~7u);
}

inline constexpr uint32_t kTagBit = uint32_t{1} << 30;
// The tag of the header at absolute byte position `pos` (a multiple of 8).
inline constexpr uint32_t Tag(uint32_t pos) noexcept {
  return kTagBit | ((pos >> 3) & (kTagBit - 1));
}

enum class FrameType : uint8_t {
  kPacket = 1,  // a driver packet, delivered to PacketSink::OnPacket
  kRts = 2,     // rendezvous announced: key, sender address, length
  kCts = 3,     // CMA refused: send `want` bytes through the FIFO
  kData = 4,    // key, offset, then payload (the copy path)
  kFin = 5,     // the receiver has read the data (CMA path): key, status
  kSkip = 6,    // the rest of the lap is unused: go to the next one
};

inline constexpr uint64_t HeaderWord(uint32_t pos, FrameType type,
                                     uint32_t len) noexcept {
  return uint64_t{Tag(pos)} | (uint64_t{len} << 32) |
         (uint64_t{static_cast<uint8_t>(type)} << 56);
}

// The control frames' payloads (little-endian host order: both ends are
// processes of one node).
struct RtsFrame {
  uint64_t key, addr, len;
};
struct CtsFrame {
  uint64_t key, want;
};
struct DataHeader {
  uint64_t key, offset;
};
struct FinFrame {
  uint64_t key;
  uint8_t status;  // 0: read; else the receiver could not read it
};
inline constexpr size_t kRtsBytes = 24, kCtsBytes = 16, kDataHeaderBytes = 16,
                        kFinBytes = 9;

// Whether a frame of this type may carry `len` payload bytes.
inline constexpr bool FrameSizeOk(FrameType type, uint32_t len) noexcept {
  switch (type) {
    case FrameType::kPacket:
    case FrameType::kSkip:
      return true;
    case FrameType::kRts:
      return len == kRtsBytes;
    case FrameType::kCts:
      return len == kCtsBytes;
    case FrameType::kData:
      return len > kDataHeaderBytes;
    case FrameType::kFin:
      return len == kFinBytes;
  }
  return false;
}

inline uint64_t LoadHeader(const uint8_t* ring, uint32_t ring_bytes,
                           uint32_t pos) noexcept {
  // atomic_ref needs a mutable object; this only loads.
  auto* w = reinterpret_cast<uint64_t*>(
      const_cast<uint8_t*>(ring + (pos & (ring_bytes - 1))));
  return std::atomic_ref<uint64_t>(*w).load(std::memory_order_acquire);
}

// A frame found at the consumer's head: its type, payload (in the ring, at
// `data`, 8-byte aligned) and the ring bytes to advance by (a skip frame's
// `bytes` reaches the next lap). Filled whatever PeekFrame answers; only a
// kFrame's is meaningful.
struct Frame {
  FrameType type;
  uint32_t len;
  uint32_t bytes;
  const uint8_t* data;
};
enum class Peek : uint8_t { kEmpty, kFrame, kCorrupt };

// Looks at absolute position `head` (a multiple of 8) of `ring` (`ring_bytes`
// bytes, a power of two): kEmpty when nothing is published there yet, kFrame
// (with *f) for a well-formed frame of at most `max_len` bytes, kCorrupt
// otherwise (Explain says why). Reads the header word once: the payload's bytes
// are the peer's to get right (a packet's reader validates them), its length
// and place are not. Never points outside ring[0, ring_bytes).
inline Peek PeekFrame(const uint8_t* ring, uint32_t ring_bytes, uint32_t head,
                      uint32_t max_len, Frame* f) noexcept {
  const uint64_t h = LoadHeader(ring, ring_bytes, head);
  if (h == 0) return Peek::kEmpty;
  const uint32_t off = head & (ring_bytes - 1);
  const uint32_t len = static_cast<uint32_t>(h >> 32) & 0xffffffu;
  const auto type = static_cast<FrameType>(h >> 56);
  const uint32_t bytes = FrameBytes(len);
  f->type = type;
  f->len = len;
  f->bytes = bytes;
  f->data = ring + off + kFrameHeader;
  // The common case first: a packet (any length fits its type).
  if (static_cast<uint32_t>(h) == Tag(head) && type == FrameType::kPacket &&
      len <= max_len && bytes <= ring_bytes - off) [[likely]]
    return Peek::kFrame;
  if (static_cast<uint32_t>(h) != Tag(head) || bytes > ring_bytes - off)
    return Peek::kCorrupt;
  if (type == FrameType::kSkip)
    return off != 0 && off + bytes == ring_bytes ? Peek::kFrame
                                                 : Peek::kCorrupt;
  return len <= max_len && static_cast<uint8_t>(type) >= 1 &&
                 static_cast<uint8_t>(type) <= 5 && FrameSizeOk(type, len)
             ? Peek::kFrame
             : Peek::kCorrupt;
}

// Why the frame at `head` is refused (PeekFrame said kCorrupt).
std::string Explain(const uint8_t* ring, uint32_t ring_bytes, uint32_t head,
                    uint32_t max_len);

// Where a frame of `len` bytes goes when the producer's tail is `tail`:
// at `at` (tail, or the next lap's start after a skip frame), taking
// `need` ring bytes counted from tail (the skip, the frame, and the next
// header word it zeroes), which must be free. `next_lap`: start the next
// lap even if the frame fits before the ring's end (a tail at a lap's
// start stays where it is).
struct Placement {
  uint32_t at;
  uint32_t need;
};
inline Placement Place(uint32_t ring_bytes, uint32_t tail, uint32_t len,
                       bool next_lap = false) noexcept {
  const uint32_t off = tail & (ring_bytes - 1);
  const uint32_t bytes = FrameBytes(len);
  if (bytes <= ring_bytes - off && (!next_lap || off == 0))
    return {tail, bytes + kFrameHeader};
  const uint32_t skip = ring_bytes - off;
  return {tail + skip, skip + bytes + kFrameHeader};
}

// The payload of the frame placed at `at`.
inline uint8_t* FramePayload(uint8_t* ring, uint32_t ring_bytes,
                             uint32_t at) noexcept {
  return ring + (at & (ring_bytes - 1)) + kFrameHeader;
}

// Publishes the frame whose payload is written at FramePayload(at): zeroes
// the next frame's header word, stores this header (release), then the
// skip frame at `tail` when the frame starts the next lap. Returns the new
// tail.
inline uint32_t PublishFrame(uint8_t* ring, uint32_t ring_bytes, uint32_t tail,
                             uint32_t at, FrameType type,
                             uint32_t len) noexcept {
  const uint32_t mask = ring_bytes - 1;
  const uint32_t next = at + FrameBytes(len);
  auto word = [&](uint32_t pos) -> std::atomic_ref<uint64_t> {
    return std::atomic_ref<uint64_t>(
        *reinterpret_cast<uint64_t*>(ring + (pos & mask)));
  };
  word(next).store(0, std::memory_order_relaxed);
  word(at).store(HeaderWord(at, type, len), std::memory_order_release);
  if (at != tail)
    word(tail).store(
        HeaderWord(tail, FrameType::kSkip, at - tail - kFrameHeader),
        std::memory_order_release);
#if defined(__x86_64__)
  // The next frame's own next header often starts the following line,
  // last read by the consumer a lap ago: ask for it now, so that zeroing
  // it does not hold the next frame's publication behind a cross-core
  // fetch (PREFETCHW; a no-op on CPUs without it).
  asm volatile("prefetchw %0" : : "m"(ring[(next + kCellBytes) & mask]));
#endif
  return next;
}

// Writes a frame of `len` bytes gathered from `iov` where Place(ring_bytes,
// tail, len) puts it (the caller made sure its `need` bytes are free) and
// publishes it. Returns the new tail.
uint32_t WriteFrame(uint8_t* ring, uint32_t ring_bytes, uint32_t tail,
                    FrameType type, const iovec* iov, int iovcnt,
                    uint32_t len) noexcept;
// The same at `at`, a placement of Place(ring_bytes, tail, len, next_lap)
// for either `next_lap`.
uint32_t WriteFrameAt(uint8_t* ring, uint32_t ring_bytes, uint32_t tail,
                      uint32_t at, FrameType type, const iovec* iov,
                      int iovcnt, uint32_t len) noexcept;

// Control payload decoders: false when `len` is not the frame's size.
bool DecodeRts(const uint8_t* p, uint32_t len, RtsFrame* out) noexcept;
bool DecodeCts(const uint8_t* p, uint32_t len, CtsFrame* out) noexcept;
bool DecodeData(const uint8_t* p, uint32_t len, DataHeader* out) noexcept;
bool DecodeFin(const uint8_t* p, uint32_t len, FinFrame* out) noexcept;

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_CELL_H_
