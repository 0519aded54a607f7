// Stand-in for libFuzzer's driver, so that wire_fuzzer.cc also runs as an
// ordinary gcc test (//nmad:wire_fuzzer_replay_test) under the default, asan
// and tsan configurations.
//
//   fuzz_replay CORPUS_DIR [ITERATIONS]
//       Runs LLVMFuzzerTestOneInput over every file of CORPUS_DIR, then over
//       ITERATIONS (default 20000) deterministic random mutations of them.
//       Files named valid_* must decode (keeps the corpus meaningful).
//   fuzz_replay --write-seeds DIR
//       Writes the seed corpus (nmad/testdata/wire_corpus/) to DIR.
//
// Every input is passed in an exact-size heap copy so that ASan reports a read
// one byte past the end.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nmad/testdata/packet_builder.h"
#include "nmad/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;
using namespace rondo::nmad::wire;

// ---- seeds -----------------------------------------------------------------

using testing::Am;
using testing::AmRts;
using testing::Encode;
using testing::Rtr;
using testing::Rts;
using Chunk = testing::ChunkSpec;

Chunk Data(uint32_t session, uint32_t seq, int32_t tag, size_t n) {
  return testing::Data(session, seq, tag, n, static_cast<uint8_t>(seq));
}

std::vector<std::pair<std::string, std::vector<uint8_t>>> Seeds() {
  std::vector<Chunk> aggreg;
  for (uint32_t i = 0; i < 10; ++i) aggreg.push_back(Data(1, i, 7, 3 * i));
  std::vector<uint8_t> trailing = Encode({Data(1, 1, 1, 4)});
  trailing.push_back(0);
  WritePacketHeader(trailing.data(), 1, static_cast<uint32_t>(trailing.size()));
  return {
      {"valid_01_data", Encode({Data(1, 1, 5, 16)})},
      {"valid_02_data_empty", Encode({Data(0, 0, 0, 0)})},
      {"valid_03_rts", Encode({Rts(2, 3, 4, 77, {{0, 300000}, {1, 100000},
                                                 {2, 70000}})})},
      {"valid_04_rtr", Encode({Rtr(77, 400000)})},
      {"valid_05_am", Encode({Am(3, 12, 8, 24)})},
      {"valid_06_am_rts", Encode({AmRts(3, 13, 16, 78, {{0, 1 << 20},
                                                        {1, 1 << 18}})})},
      {"valid_07_mixed",
       Encode({Rtr(5, 5), Data(1, 2, 3, 9), Rts(1, 3, 3, 6, {{0, 1 << 17}}),
               Am(2, 1, 4, 4), AmRts(2, 2, 3, 7, {{1, 1 << 16}}),
               Am(2, 3, 0, 0)})},
      {"valid_08_aggreg", Encode(aggreg)},
      {"valid_09_rts_max_parts",
       Encode({Rts(1, 1, 0x7fffffff, ~uint64_t{0},
                   {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7},
                    {7, uint64_t{1} << 48}})})},
      {"valid_10_rtr_data", Encode({Rtr(9, 0), Data(4, 4, 4, 40)})},
      {"invalid_11_trailing_byte", trailing},
  };
}

int WriteSeeds(const fs::path& dir) {
  fs::create_directories(dir);
  for (const auto& [name, bytes] : Seeds()) {
    std::ofstream out(dir / (name + ".bin"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
      return 1;
    }
  }
  std::printf("wrote %zu seeds to %s\n", Seeds().size(), dir.c_str());
  return 0;
}

// ---- replay ------------------------------------------------------------------

// splitmix64: deterministic across platforms.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n ? static_cast<size_t>(Next() % n) : 0; }
};

int Run(const uint8_t* data, size_t size) {
  // Exact-size copy: ASan catches a read of data[size].
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size ? size : 1]);
  if (size) std::memcpy(copy.get(), data, size);
  return LLVMFuzzerTestOneInput(size ? copy.get() : nullptr, size);
}

bool Decodes(const std::vector<uint8_t>& b) {
  ChunkView v[kMaxChunksPerPacket];
  return DecodePacket(b.data(), b.size(), v, kMaxChunksPerPacket, nullptr) > 0;
}

template <typename T>
void Put(std::vector<uint8_t>& b, size_t off, T v) {
  if (off + sizeof(T) <= b.size()) std::memcpy(b.data() + off, &v, sizeof(T));
}

void Mutate(std::vector<uint8_t>& b, const std::vector<uint8_t>& other,
            Rng& rng) {
  static const uint64_t kInteresting[] = {
      0, 1, 2, 7, 8, 16, 24, 32, 40, 56, 0x7f, 0x80, 0xff, 0x100, 0x7fff,
      0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000ull, 0xffffffffull,
      (1ull << 48), (1ull << 48) + 1, ~0ull};
  const size_t n = 1 + rng.Below(4);
  for (size_t k = 0; k < n; ++k) {
    switch (rng.Below(9)) {
      case 0:  // flip a bit
        if (!b.empty()) b[rng.Below(b.size())] ^= uint8_t(1u << rng.Below(8));
        break;
      case 1:  // random byte
        if (!b.empty()) b[rng.Below(b.size())] = uint8_t(rng.Next());
        break;
      case 2: {  // interesting integer of 1, 2, 4 or 8 bytes
        const uint64_t v = kInteresting[rng.Below(std::size(kInteresting))] +
                           (rng.Below(4) == 0 ? b.size() : 0);
        const size_t off = rng.Below(b.size());
        switch (rng.Below(4)) {
          case 0: Put<uint8_t>(b, off, uint8_t(v)); break;
          case 1: Put<uint16_t>(b, off, uint16_t(v)); break;
          case 2: Put<uint32_t>(b, off, uint32_t(v)); break;
          default: Put<uint64_t>(b, off, v); break;
        }
        break;
      }
      case 3:  // truncate
        b.resize(rng.Below(b.size() + 1));
        break;
      case 4: {  // insert random bytes
        const size_t at = rng.Below(b.size() + 1);
        const size_t len = 1 + rng.Below(16);
        std::vector<uint8_t> ins(len);
        for (uint8_t& x : ins) x = uint8_t(rng.Next());
        b.insert(b.begin() + at, ins.begin(), ins.end());
        break;
      }
      case 5: {  // erase a range
        if (b.empty()) break;
        const size_t at = rng.Below(b.size());
        const size_t len = 1 + rng.Below(std::min<size_t>(32, b.size() - at));
        b.erase(b.begin() + at, b.begin() + at + len);
        break;
      }
      case 6: {  // splice: append the tail of another seed's chunks
        if (other.size() <= kPacketHeaderSize) break;
        const size_t from =
            kPacketHeaderSize + rng.Below(other.size() - kPacketHeaderSize);
        b.insert(b.end(), other.begin() + from, other.end());
        break;
      }
      case 7:  // bump the chunk count
        if (b.size() > 3) b[3] = uint8_t(b[3] + 1 + rng.Below(3));
        break;
      default: {  // payload_size of the first chunk +- small
        if (b.size() >= 16) {
          uint32_t ps;
          std::memcpy(&ps, b.data() + 12, 4);
          ps += static_cast<uint32_t>(rng.Below(9)) - 4;
          Put<uint32_t>(b, 12, ps);
        }
        break;
      }
    }
  }
  // Most of the time keep the packet header plausible so that mutations reach
  // the chunk walk instead of stopping at the length check.
  if (b.size() >= kPacketHeaderSize && rng.Below(4) != 0) {
    Put<uint16_t>(b, 0, kMagic);
    Put<uint8_t>(b, 2, kVersion);
    Put<uint32_t>(b, 4, static_cast<uint32_t>(b.size()));
  }
}

int Replay(const fs::path& dir, long iterations) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> corpus;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    corpus.emplace_back(e.path().filename().string(), std::move(bytes));
  }
  if (ec || corpus.empty()) {
    std::fprintf(stderr, "no corpus in %s: %s\n", dir.c_str(),
                 ec ? ec.message().c_str() : "empty");
    return 1;
  }
  std::sort(corpus.begin(), corpus.end());  // deterministic order
  int failures = 0;
  size_t valid = 0;
  for (const auto& [name, bytes] : corpus) {
    Run(bytes.data(), bytes.size());
    if (name.rfind("valid_", 0) == 0) {
      ++valid;
      if (!Decodes(bytes)) {
        std::fprintf(stderr, "seed %s does not decode\n", name.c_str());
        ++failures;
      }
    }
  }
  // The checked-in corpus must match what --write-seeds produces, so that the
  // seeds keep exercising every chunk kind when the format evolves.
  for (const auto& seed : Seeds()) {
    const std::string& name = seed.first;
    auto it = std::find_if(corpus.begin(), corpus.end(), [&](const auto& c) {
      return c.first == name + ".bin";
    });
    if (it == corpus.end() || it->second != seed.second) {
      std::fprintf(stderr,
                   "seed %s.bin is missing or stale; regenerate with "
                   "--write-seeds\n",
                   name.c_str());
      ++failures;
    }
  }
  Rng rng{0x6e6d6164ull};  // "nmad"
  long accepted = 0;
  for (long i = 0; i < iterations; ++i) {
    std::vector<uint8_t> b = corpus[rng.Below(corpus.size())].second;
    const std::vector<uint8_t>& other = corpus[rng.Below(corpus.size())].second;
    Mutate(b, other, rng);
    Run(b.data(), b.size());
    accepted += Decodes(b);
  }
  std::printf("replayed %zu seeds (%zu valid) and %ld mutations, %ld of them "
              "decoded\n",
              corpus.size(), valid, iterations, accepted);
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write-seeds")
    return WriteSeeds(argv[2]);
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr,
                 "usage: %s CORPUS_DIR [ITERATIONS] | --write-seeds DIR\n",
                 argv[0]);
    return 2;
  }
  const long iterations = argc == 3 ? std::atol(argv[2]) : 20000;
  return Replay(argv[1], iterations);
}
