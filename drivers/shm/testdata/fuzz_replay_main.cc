// Stand-in for libFuzzer's driver, so that cell_fuzzer.cc also runs as an
// ordinary gcc test (//drivers/shm:cell_fuzzer_replay_test): valid rings
// written with WriteFrame (several frames, some after a skip), then
// deterministic random mutations of them (bytes flipped, words and lengths
// replaced), each passed in an exact-size heap copy.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "drivers/shm/cell.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

using namespace rondo::drivers::shm;

namespace {

std::vector<uint8_t> Seed(std::mt19937& rng) {
  constexpr uint32_t kRingBytes = 4096;
  std::vector<Cell> ring(kRingBytes / kCellBytes, Cell{});
  const uint32_t start = (rng() % 100000) * 8;
  uint32_t tail = start;
  std::vector<uint8_t> payload(600);
  for (auto& b : payload) b = static_cast<uint8_t>(rng());
  for (int i = 0; i < 12; ++i) {
    const auto type = static_cast<FrameType>(1 + rng() % 5);
    uint32_t len = rng() % 600;
    if (type == FrameType::kRts) len = kRtsBytes;
    if (type == FrameType::kCts) len = kCtsBytes;
    if (type == FrameType::kFin) len = kFinBytes;
    if (type == FrameType::kData) len = kDataHeaderBytes + 1 + rng() % 200;
    if (tail - start + Place(kRingBytes, tail, len).need > kRingBytes) break;
    iovec iov{payload.data(), len};
    tail = WriteFrame(ring[0].bytes, kRingBytes, tail, type, &iov, 1, len);
  }
  std::vector<uint8_t> in(4 + kRingBytes);
  std::memcpy(in.data(), &start, 4);
  std::memcpy(in.data() + 4, ring[0].bytes, kRingBytes);
  return in;
}

void Run(const std::vector<uint8_t>& in) {
  auto copy = std::make_unique<uint8_t[]>(in.size());
  std::memcpy(copy.get(), in.data(), in.size());
  LLVMFuzzerTestOneInput(copy.get(), in.size());
}

}  // namespace

int main() {
  std::mt19937 rng(28);
  int runs = 0;
  for (int s = 0; s < 200; ++s) {
    std::vector<uint8_t> seed = Seed(rng);
    Run(seed);
    ++runs;
    for (int m = 0; m < 100; ++m) {
      std::vector<uint8_t> in = seed;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const size_t at = rng() % in.size();
        switch (rng() % 3) {
          case 0:
            in[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
            break;
          case 1:
            in[at] = static_cast<uint8_t>(rng());
            break;
          default:
            in.resize(at);  // a short input
            break;
        }
        if (in.empty()) break;
      }
      Run(in);
      ++runs;
    }
  }
  std::printf("cell_fuzzer_replay: %d inputs, no failure\n", runs);
  return 0;
}
