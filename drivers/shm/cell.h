// The shared-memory FIFO's cells ("fast boxes") and its frame decoder.
//
// A FIFO carries frames from one producer (the sending rank) to one
// consumer (the receiving rank) in a ring of 64-byte cells, one cache line
// each. A frame starts with a header cell (the readiness word, the frame's
// type, flags, cell count and payload length, then up to kHeadPayload bytes
// of payload) and continues over consecutive cells, each a word and
// kTailPayload bytes of payload, wrapping at the ring's end. An 8-byte
// packet therefore travels in one line.
//
// Readiness without a shared tail index: the first word of every cell is
// the tag of the absolute cell index it was written at (Tag(), bit 30 set,
// bit 31 set on continuation cells). The producer writes the continuation
// cells, then the header word with a release store; the consumer reads the
// word at its head with an acquire load. A word equal to Tag(head) is a
// ready header; zero (a never written cell) or the tag of the previous lap
// (Tag(head - ring_cells), header or continuation) is "nothing yet"; any
// other word, and any header whose fields disagree (unknown type, a length
// above the limit, a cell count that does not match the length, a
// continuation cell with the wrong tag), is a corrupt frame: refused, never
// trusted (ReadFrame reports why).
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

inline constexpr size_t kCellBytes = 64;
inline constexpr size_t kHeadBytes = 12;  // word, type, flags, ncells, len
inline constexpr size_t kHeadPayload = kCellBytes - kHeadBytes;  // 52
inline constexpr size_t kTailPayload = kCellBytes - 4;           // 60
// The largest packet, and frame payload (a packet plus a data frame's
// header): nmad's largest max_packet.
inline constexpr uint32_t kMaxPacket = 1u << 20;
inline constexpr uint32_t kMaxFramePayload = kMaxPacket + 16;

struct alignas(kCellBytes) Cell {
  uint32_t word;  // Tag(index) | kContinuation on continuation cells
  uint8_t body[kCellBytes - 4];
};
static_assert(sizeof(Cell) == kCellBytes);

inline constexpr uint32_t kTagBit = uint32_t{1} << 30;
inline constexpr uint32_t kContinuation = uint32_t{1} << 31;
inline constexpr uint32_t Tag(uint32_t index) noexcept {
  return kTagBit | (index & (kTagBit - 1));
}

enum class FrameType : uint8_t {
  kPacket = 1,  // a driver packet, delivered to PacketSink::OnPacket
  kRts = 2,     // rendezvous announced: key, sender address, length
  kCts = 3,     // CMA refused: send `want` bytes through the FIFO
  kData = 4,    // key, offset, then payload (the copy path)
  kFin = 5,     // the receiver has read the data (CMA path): key, status
};

// Cells a frame of `len` payload bytes takes.
inline constexpr uint32_t CellsFor(uint32_t len) noexcept {
  return len <= kHeadPayload
             ? 1
             : 1 + static_cast<uint32_t>((len - kHeadPayload + kTailPayload -
                                          1) /
                                         kTailPayload);
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

struct FrameRead {
  enum Kind { kEmpty, kFrame, kCorrupt } kind = kEmpty;
  FrameType type = FrameType::kPacket;
  uint32_t len = 0;     // payload bytes, copied to the caller's bounce buffer
  uint32_t ncells = 0;  // cells to advance the head by
  std::string why;      // kCorrupt: what was wrong
};

// Reads the frame at absolute index `head` of `ring` (`ring_cells` cells, a
// power of two), copying its payload to `bounce` (at least `max_len`
// bytes). Frames longer than `max_len` or whose control payload has the
// wrong size are corrupt. Never reads outside ring[0, ring_cells) nor
// writes outside bounce[0, max_len).
FrameRead ReadFrame(const Cell* ring, uint32_t ring_cells, uint32_t head,
                    uint32_t max_len, uint8_t* bounce);

// Writes a frame of `len` bytes gathered from `iov` at absolute index
// `tail` (the caller made sure CellsFor(len) cells are free): continuation
// cells first, the header word last with a release store. Returns the
// cells used.
uint32_t WriteFrame(Cell* ring, uint32_t ring_cells, uint32_t tail,
                    FrameType type, const iovec* iov, int iovcnt,
                    uint32_t len) noexcept;

// A one-cell frame written in place: its payload (len <= kHeadPayload
// bytes) is at HeadPayload(c); PublishHead writes the header and then, with
// a release store, the word of absolute index `index`.
inline uint8_t* HeadPayload(Cell& c) noexcept {
  return c.body + (kHeadBytes - 4);
}
inline const uint8_t* HeadPayload(const Cell& c) noexcept {
  return c.body + (kHeadBytes - 4);
}
inline void PublishHead(Cell& c, uint32_t index, FrameType type,
                        uint32_t len) noexcept {
  // The header cell.cc reads: type, flags 0, ncells 1 (16-bit), len.
  uint8_t h[kHeadBytes - 4] = {static_cast<uint8_t>(type), 0, 1, 0};
  std::memcpy(h + 4, &len, 4);
  std::memcpy(c.body, h, sizeof h);
  std::atomic_ref<uint32_t>(c.word).store(Tag(index),
                                          std::memory_order_release);
}

// Control payload decoders: false when `len` is not the frame's size.
bool DecodeRts(const uint8_t* p, uint32_t len, RtsFrame* out) noexcept;
bool DecodeCts(const uint8_t* p, uint32_t len, CtsFrame* out) noexcept;
bool DecodeData(const uint8_t* p, uint32_t len, DataHeader* out) noexcept;
bool DecodeFin(const uint8_t* p, uint32_t len, FinFrame* out) noexcept;

// Loads and stores of a cell's word, shared between processes.
inline uint32_t LoadWord(const Cell& c) noexcept {
  // atomic_ref needs a mutable object; this only loads.
  return std::atomic_ref<uint32_t>(const_cast<uint32_t&>(c.word))
      .load(std::memory_order_acquire);
}

// A ready one-cell packet frame at absolute index `head` (the common small
// message): its payload length in *len (<= kHeadPayload), read once, so a
// consumer may hand HeadPayload(c) to the packet's reader in place, without
// the copy ReadFrame makes. False for anything else (not ready, another
// type, several cells, a corrupt header): ReadFrame then says which.
inline bool PeekPacketCell(const Cell& c, uint32_t head,
                           uint32_t* len) noexcept {
  if (LoadWord(c) != Tag(head)) return false;
  uint8_t h[kHeadBytes - 4];
  std::memcpy(h, c.body, sizeof h);
  uint32_t n;
  std::memcpy(&n, h + 4, 4);
  if (h[0] != static_cast<uint8_t>(FrameType::kPacket) || h[1] != 0 ||
      h[2] != 1 || h[3] != 0 || n > kHeadPayload)
    return false;
  *len = n;
  return true;
}

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_CELL_H_
