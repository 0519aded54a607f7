// libFuzzer target for the shm frame decoder (drivers/shm/cell.h).
//
// The input is a ring as a peer could have left it in shared memory (the
// first 4 bytes choose the consumer's head, rounded down to a multiple of
// 8; the rest fills a ring of 4 KiB). PeekFrame is run from that head the
// way ShmDriver::Drain does, advancing over every frame it accepts, and
// must
//   - never hand out a payload outside the ring (every accepted payload is
//     read whole: ASan sees a read past the exact-size heap block);
//   - accept only frames whose tag, type and length agree, whose size
//     suits their type, and which end inside the ring (a skip exactly at
//     its end);
//   - say why (Explain) when it refuses one.
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
  constexpr uint32_t kRingBytes = 4096;
  constexpr uint32_t kMaxLen = 2048;
  if (size < 4) return 0;
  uint32_t head;
  std::memcpy(&head, data, 4);
  head &= ~7u;
  // Exactly the ring (cache-line aligned, as in the segment), nothing
  // around it.
  auto ring = std::make_unique<Cell[]>(kRingBytes / kCellBytes);
  uint8_t* bytes = ring[0].bytes;
  std::memset(bytes, 0, kRingBytes);
  std::memcpy(bytes, data + 4, std::min<size_t>(size - 4, kRingBytes));
  for (int frames = 0; frames < 1024; ++frames) {
    Frame f;
    const Peek k = PeekFrame(bytes, kRingBytes, head, kMaxLen, &f);
    if (k == Peek::kEmpty) break;
    if (k == Peek::kCorrupt) {
      Check(!Explain(bytes, kRingBytes, head, kMaxLen).empty());
      break;
    }
    const uint32_t off = head & (kRingBytes - 1);
    Check(f.data == bytes + off + kFrameHeader);
    Check(f.bytes == FrameBytes(f.len) && off + f.bytes <= kRingBytes);
    const auto type = static_cast<uint8_t>(f.type);
    Check(type >= 1 && type <= 6);
    // Touch the whole payload (ASan: inside the ring).
    volatile uint8_t sum = 0;
    for (uint32_t i = 0; i < f.len; ++i) sum = sum + f.data[i];
    RtsFrame rts;
    CtsFrame cts;
    DataHeader dh;
    FinFrame fin;
    switch (f.type) {
      case FrameType::kRts:
        Check(DecodeRts(f.data, f.len, &rts));
        break;
      case FrameType::kCts:
        Check(DecodeCts(f.data, f.len, &cts));
        break;
      case FrameType::kData:
        Check(DecodeData(f.data, f.len, &dh));
        break;
      case FrameType::kFin:
        Check(DecodeFin(f.data, f.len, &fin));
        break;
      case FrameType::kSkip:
        Check(off != 0 && off + f.bytes == kRingBytes);
        break;
      case FrameType::kPacket:
        Check(f.len <= kMaxLen);
        break;
    }
    head += f.bytes;
  }
  return 0;
}
