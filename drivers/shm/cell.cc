#include "drivers/shm/cell.h"

#include <cstdio>
#include <cstring>

namespace rondo::drivers::shm {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string Explain(const uint8_t* ring, uint32_t ring_bytes, uint32_t head,
                    uint32_t max_len) {
  const uint64_t h = LoadHeader(ring, ring_bytes, head);
  const uint32_t off = head & (ring_bytes - 1);
  const uint32_t len = static_cast<uint32_t>(h >> 32) & 0xffffffu;
  const auto type = static_cast<uint8_t>(h >> 56);
  const std::string at = "frame at byte " + std::to_string(head) + ": ";
  if (h == 0) return at + "nothing published (not corrupt)";
  if (static_cast<uint32_t>(h) != Tag(head))
    return at + "header " + Hex(h) + " does not carry the tag " +
           Hex(Tag(head)) + " of its position (expected that tag, or 0)";
  if (type < 1 || type > 6)
    return at + "unknown frame type " + std::to_string(type) +
           " (expected 1..6)";
  if (FrameBytes(len) > ring_bytes - off)
    return at + "a frame of " + std::to_string(FrameBytes(len)) +
           " bytes at offset " + std::to_string(off) +
           " runs past the ring's end (" + std::to_string(ring_bytes) +
           " bytes)";
  if (static_cast<FrameType>(type) == FrameType::kSkip)
    return at + "a skip of " + std::to_string(len) +
           " bytes that starts a lap or does not end at the ring's end";
  if (len > max_len)
    return at + "frame length " + std::to_string(len) + " above the limit " +
           std::to_string(max_len);
  return at + "frame type " + std::to_string(type) + " with a payload of " +
         std::to_string(len) + " bytes";
}

uint32_t WriteFrame(uint8_t* ring, uint32_t ring_bytes, uint32_t tail,
                    FrameType type, const iovec* iov, int iovcnt,
                    uint32_t len) noexcept {
  return WriteFrameAt(ring, ring_bytes, tail, Place(ring_bytes, tail, len).at,
                      type, iov, iovcnt, len);
}

uint32_t WriteFrameAt(uint8_t* ring, uint32_t ring_bytes, uint32_t tail,
                      uint32_t at, FrameType type, const iovec* iov,
                      int iovcnt, uint32_t len) noexcept {
  // Contiguous: each iov entry is one copy.
  uint8_t* dst = FramePayload(ring, ring_bytes, at);
  uint32_t left = len;
  for (int i = 0; i < iovcnt && left > 0; ++i) {
    const size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;
    std::memcpy(dst, iov[i].iov_base, k);
    dst += k;
    left -= static_cast<uint32_t>(k);
  }
  return PublishFrame(ring, ring_bytes, tail, at, type, len);
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
