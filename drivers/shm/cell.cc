#include "drivers/shm/cell.h"

#include <cstdio>
#include <cstring>

namespace rondo::drivers::shm {
namespace {

struct Header {
  FrameType type;
  uint8_t flags;
  uint16_t ncells_low;  // ncells & 0xffff (a frame takes < 65536 cells)
  uint32_t len;
};
static_assert(sizeof(Header) == kHeadBytes - 4);

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

bool ControlSizeOk(FrameType type, uint32_t len) {
  switch (type) {
    case FrameType::kPacket:
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

[[gnu::cold, gnu::noinline]] std::string ContinuationError(uint32_t head,
                                                       uint32_t i,
                                                       uint32_t word,
                                                       uint32_t want) {
  return "cell " + std::to_string(head + i) + " of the frame at " +
         std::to_string(head) + " holds word " + Hex(word) + ", expected " +
         Hex(want);
}

}  // namespace

FrameRead ReadFrame(const Cell* ring, uint32_t ring_cells, uint32_t head,
                    uint32_t max_len, uint8_t* bounce) {
  FrameRead r;
  const uint32_t mask = ring_cells - 1;
  const Cell& c0 = ring[head & mask];
  const uint32_t word = LoadWord(c0);
  if (word != Tag(head)) {
    if (word == 0 || (word & ~kContinuation) == Tag(head - ring_cells))
      return r;  // not written yet (this lap)
    r.kind = FrameRead::kCorrupt;
    r.why = "cell " + std::to_string(head) + " holds word " + Hex(word) +
            ", expected " + Hex(Tag(head)) + " (ready) or " +
            Hex(Tag(head - ring_cells)) + " (not yet written)";
    return r;
  }
  Header h;
  std::memcpy(&h, c0.body, sizeof h);
  r.kind = FrameRead::kCorrupt;
  const auto type = static_cast<uint8_t>(h.type);
  if (type < 1 || type > 5) {
    r.why = "cell " + std::to_string(head) + ": unknown frame type " +
            std::to_string(type) + " (expected 1..5)";
    return r;
  }
  if (h.len > max_len) {
    r.why = "cell " + std::to_string(head) + ": frame length " +
            std::to_string(h.len) + " above the limit " +
            std::to_string(max_len);
    return r;
  }
  const uint32_t ncells = CellsFor(h.len);
  if (h.ncells_low != (ncells & 0xffff) || ncells > ring_cells) {
    r.why = "cell " + std::to_string(head) + ": " +
            std::to_string(h.ncells_low) + " cells for " +
            std::to_string(h.len) + " bytes (expected " +
            std::to_string(ncells) + ", ring of " +
            std::to_string(ring_cells) + ")";
    return r;
  }
  if (!ControlSizeOk(h.type, h.len)) {
    r.why = "cell " + std::to_string(head) + ": frame type " +
            std::to_string(type) + " with a payload of " +
            std::to_string(h.len) + " bytes";
    return r;
  }
  size_t n = h.len < kHeadPayload ? h.len : kHeadPayload;
  std::memcpy(bounce, c0.body + (kHeadBytes - 4), n);
  // The continuation cells: a word check and a constant-size copy each (a
  // tight loop: 1 KiB is 17 cells), the last cell's rest, and the reason
  // out of line when a word is wrong.
  uint8_t* out = bounce + n;
  const uint32_t last = ncells - 1;  // cells 1..last
  for (uint32_t i = 1; i <= last; ++i) {
    const Cell& c = ring[(head + i) & mask];
    const uint32_t want = Tag(head + i) | kContinuation;
    if (LoadWord(c) != want) [[unlikely]] {
      r.why = ContinuationError(head, i, LoadWord(c), want);
      return r;
    }
    if (i < last) {
      std::memcpy(out, c.body, kTailPayload);
      out += kTailPayload;
    } else {
      std::memcpy(out, c.body, h.len - static_cast<uint32_t>(out - bounce));
    }
  }
  r.kind = FrameRead::kFrame;
  r.type = h.type;
  r.len = h.len;
  r.ncells = ncells;
  return r;
}

uint32_t WriteFrame(Cell* ring, uint32_t ring_cells, uint32_t tail,
                    FrameType type, const iovec* iov, int iovcnt,
                    uint32_t len) noexcept {
  const uint32_t mask = ring_cells - 1;
  const uint32_t ncells = CellsFor(len);
  // Gathers the iov into consecutive cell bodies.
  int vi = 0;
  size_t voff = 0;
  auto gather = [&](uint8_t* dst, size_t n) {
    // A whole cell from within one iov entry: a constant-size copy (inline
    // moves, not a call to memcpy per 60 bytes).
    if (n == kTailPayload && vi < iovcnt &&
        iov[vi].iov_len - voff >= kTailPayload) {
      std::memcpy(dst, static_cast<const uint8_t*>(iov[vi].iov_base) + voff,
                  kTailPayload);
      voff += kTailPayload;
      return;
    }
    while (n > 0) {
      const size_t avail = iov[vi].iov_len - voff;
      if (avail == 0) {
        ++vi;
        voff = 0;
        continue;
      }
      const size_t k = avail < n ? avail : n;
      std::memcpy(dst, static_cast<const uint8_t*>(iov[vi].iov_base) + voff,
                  k);
      dst += k;
      n -= k;
      voff += k;
    }
  };
  Cell& c0 = ring[tail & mask];
  Header h{type, 0, static_cast<uint16_t>(ncells & 0xffff), len};
  std::memcpy(c0.body, &h, sizeof h);
  size_t n = len < kHeadPayload ? len : kHeadPayload;
  gather(c0.body + (kHeadBytes - 4), n);
  size_t done = n;
  while (vi < iovcnt && voff == iov[vi].iov_len) {
    ++vi;
    voff = 0;
  }
  uint32_t i = 1;
  if (vi < iovcnt && iov[vi].iov_len - voff >= len - done) {
    // The rest lies in one iov entry (a packet's payload after its
    // header): a tight loop of constant-size copies, the last cell's rest.
    const uint8_t* src = static_cast<const uint8_t*>(iov[vi].iov_base) + voff;
    for (; i < ncells; ++i) {
      Cell& c = ring[(tail + i) & mask];
      const size_t k = len - done;
      if (k >= kTailPayload) {
        std::memcpy(c.body, src, kTailPayload);
        src += kTailPayload;
        done += kTailPayload;
      } else {
        std::memcpy(c.body, src, k);
        done += k;
      }
      std::atomic_ref<uint32_t>(c.word).store(Tag(tail + i) | kContinuation,
                                              std::memory_order_relaxed);
    }
  }
  for (; i < ncells; ++i) {
    Cell& c = ring[(tail + i) & mask];
    n = len - done < kTailPayload ? len - done : kTailPayload;
    gather(c.body, n);
    done += n;
    std::atomic_ref<uint32_t>(c.word).store(Tag(tail + i) | kContinuation,
                                            std::memory_order_relaxed);
  }
  // Last: the header word publishes the whole frame.
  std::atomic_ref<uint32_t>(c0.word).store(Tag(tail),
                                           std::memory_order_release);
  return ncells;
}

namespace {
template <typename T>
bool DecodeFixed(const uint8_t* p, uint32_t len, uint32_t want, T* out) {
  if (len != want) return false;
  std::memcpy(out, p, want);
  return true;
}
}  // namespace

bool DecodeRts(const uint8_t* p, uint32_t len, RtsFrame* out) noexcept {
  return DecodeFixed(p, len, kRtsBytes, out);
}
bool DecodeCts(const uint8_t* p, uint32_t len, CtsFrame* out) noexcept {
  return DecodeFixed(p, len, kCtsBytes, out);
}
bool DecodeData(const uint8_t* p, uint32_t len, DataHeader* out) noexcept {
  if (len <= kDataHeaderBytes) return false;
  std::memcpy(out, p, kDataHeaderBytes);
  return true;
}
bool DecodeFin(const uint8_t* p, uint32_t len, FinFrame* out) noexcept {
  if (len != kFinBytes) return false;
  std::memcpy(&out->key, p, 8);
  out->status = p[8];
  return true;
}

}  // namespace rondo::drivers::shm
