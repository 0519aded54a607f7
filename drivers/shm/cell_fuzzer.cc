// libFuzzer target for the shm cell decoder (drivers/shm/cell.h).
//
// The input is a ring of cells as a peer could have left it in shared
// memory (the first 4 bytes choose the consumer's head, the rest fills a
// ring of 64 cells). ReadFrame is run from that head the way the driver
// does, advancing over every frame it accepts, and must
//   - never read outside the ring nor write outside the bounce buffer
//     (left to ASan: both are exact-size heap blocks);
//   - accept only frames whose type, length and cell count agree, whose
//     continuation cells carry the right tags, and which fit the ring;
//   - say why when it refuses one.
// The control decoders run on every accepted frame.
//
// Built as //drivers/shm:cell_fuzzer (clang, manual), by
// drivers/shm/fuzz.sh, and as //drivers/shm:cell_fuzzer_replay_test (gcc).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "drivers/shm/cell.h"

using namespace rondo::drivers::shm;

namespace {
void Check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr uint32_t kRing = 64;
  constexpr uint32_t kMaxLen = 2048;
  if (size < 4) return 0;
  uint32_t head;
  std::memcpy(&head, data, 4);
  auto ring = std::make_unique<Cell[]>(kRing);
  std::memset(ring.get(), 0, kRing * sizeof(Cell));
  std::memcpy(ring.get(), data + 4,
              std::min<size_t>(size - 4, kRing * sizeof(Cell)));
  auto bounce = std::make_unique<uint8_t[]>(kMaxLen);
  for (int frames = 0; frames < 2 * static_cast<int>(kRing); ++frames) {
    // The in-place reading of a one-cell packet (ShmDriver::Drain) accepts
    // only what ReadFrame accepts, with the same length and payload.
    uint32_t peek_len = 0;
    const bool peeked =
        PeekPacketCell(ring[head & (kRing - 1)], head, &peek_len);
    FrameRead r = ReadFrame(ring.get(), kRing, head, kMaxLen, bounce.get());
    if (peeked) {
      Check(r.kind == FrameRead::kFrame && r.type == FrameType::kPacket &&
            r.ncells == 1 && r.len == peek_len &&
            std::memcmp(bounce.get(), HeadPayload(ring[head & (kRing - 1)]),
                        peek_len) == 0);
    }
    if (r.kind == FrameRead::kEmpty) break;
    if (r.kind == FrameRead::kCorrupt) {
      Check(!r.why.empty());
      break;
    }
    Check(r.len <= kMaxLen);
    Check(r.ncells == CellsFor(r.len) && r.ncells <= kRing);
    const auto type = static_cast<uint8_t>(r.type);
    Check(type >= 1 && type <= 5);
    RtsFrame rts;
    CtsFrame cts;
    DataHeader dh;
    FinFrame fin;
    switch (r.type) {
      case FrameType::kRts:
        Check(DecodeRts(bounce.get(), r.len, &rts));
        break;
      case FrameType::kCts:
        Check(DecodeCts(bounce.get(), r.len, &cts));
        break;
      case FrameType::kData:
        Check(DecodeData(bounce.get(), r.len, &dh));
        break;
      case FrameType::kFin:
        Check(DecodeFin(bounce.get(), r.len, &fin));
        break;
      case FrameType::kPacket:
        break;
    }
    head += r.ncells;
  }
  return 0;
}
