// In-process tests of ShmDriver: two instances on one anonymous segment,
// polled by one thread or by two (ordering, full FIFO, rendezvous on both
// paths, corrupt frames, a dead peer, the doorbell).
#include "drivers/shm/shm_driver.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "drivers/shm/fence.h"
#include "drivers/testing/recording_sink.h"

namespace rondo::drivers::shm {
namespace {

// Rings that take the default max_packet (RingCellsFor).
const uint32_t kTestRingCells = RingCellsFor(ShmDriverOptions{}.max_packet);

using testing::RecordingSink;
using testing::TestCompletion;

constexpr int kRankA = 5, kRankB = 9;

struct Pair {
  explicit Pair(uint32_t ring_cells = kTestRingCells,
                ShmDriverOptions base = {}) {
    std::string error;
    auto seg = ShmSegment::CreateAnonymous(2, ring_cells, &error);
    REQUIRE(seg.ok());
    segment = seg.value();
    ShmDriverOptions oa = base, ob = base;
    oa.self = kRankA;
    oa.local = 0;
    ob.self = kRankB;
    ob.local = 1;
    auto da = ShmDriver::Create(segment, oa, &error);
    INFO(error);
    REQUIRE(da.ok());
    auto db = ShmDriver::Create(segment, ob, &error);
    REQUIRE(db.ok());
    a = std::move(da).value();
    b = std::move(db).value();
    a->SetSink(&sink_a, 0);
    b->SetSink(&sink_b, 1);
    REQUIRE(a->Connect(kRankB, b->LocalAddress().value()) == Status::kOk);
    REQUIRE(b->Connect(kRankA, a->LocalAddress().value()) == Status::kOk);
  }
  // Polls both until `done` or a generous number of rounds (no timing).
  template <typename Pred>
  bool PollUntil(Pred done) {
    for (int i = 0; i < 1000000; ++i) {
      if (done()) return true;
      a->Poll();
      b->Poll();
    }
    return done();
  }
  std::shared_ptr<ShmSegment> segment;
  std::unique_ptr<ShmDriver> a, b;
  RecordingSink sink_a, sink_b;
};

Status Send(ShmDriver& d, int peer, const std::string& s) {
  iovec iov{const_cast<char*>(s.data()), s.size()};
  return d.PostPacket(peer, &iov, 1, nullptr);
}

TEST_CASE("shm: set-up and bad arguments", "[shm]") {
  std::string error;
  auto seg = ShmSegment::CreateAnonymous(2, kTestRingCells, &error);
  REQUIRE(seg.ok());
  CHECK(ShmDriver::Create(seg.value(), {.self = 1, .local = 2}, &error)
            .status() == Status::kInvalidArgument);
  CHECK(error.find("invalid local index 2") != std::string::npos);
  CHECK(ShmDriver::Create(seg.value(), {.self = -1, .local = 0}, &error)
            .status() == Status::kInvalidArgument);
  CHECK(error.find("invalid self -1") != std::string::npos);
  CHECK(ShmDriver::Create(seg.value(),
                          {.self = 1, .local = 0, .max_packet = 200000}, &error)
            .status() == Status::kInvalidArgument);  // 2048 cells: too few
  CHECK(ShmDriver::Create(seg.value(),
                          {.self = 1, .local = 0, .max_packet = (1 << 20) + 1},
                          &error)
            .status() == Status::kInvalidArgument);
  auto small = ShmSegment::CreateAnonymous(2, 64, &error);
  REQUIRE(small.ok());
  CHECK(ShmDriver::Create(small.value(), {.self = 1, .local = 0}, &error)
            .status() == Status::kInvalidArgument);
  CHECK(error.find("more than the ring's 4096 ") != std::string::npos);
  CHECK(ShmSegment::CreateAnonymous(2, 100, &error).status() ==
        Status::kInvalidArgument);
  CHECK(error.find("invalid ring_cells 100") != std::string::npos);

  Pair p;
  CHECK(p.a->caps().name == "shm");
  CHECK(p.a->caps().rendezvous);
  CHECK(p.a->caps().wakeup_fd);
  CHECK(p.a->WakeupFd() >= 0);
  // Attached twice, another segment's address, a wrong rank.
  CHECK(ShmDriver::Create(p.segment, {.self = 3, .local = 0}, &error)
            .status() == Status::kInvalidArgument);
  CHECK(error.find("already attached") != std::string::npos);
  auto other = ShmSegment::CreateAnonymous(2, kTestRingCells, &error);
  auto stranger = ShmDriver::Create(other.value(), {.self = 7, .local = 0},
                                    &error);
  REQUIRE(stranger.ok());
  CHECK(p.a->Connect(7, stranger.value()->LocalAddress().value()) ==
        Status::kInvalidArgument);
  CHECK(p.a->Connect(kRankA + 1, p.b->LocalAddress().value()) ==
        Status::kInvalidArgument);
  CHECK(p.a->Connect(kRankB, p.b->LocalAddress().value()) ==
        Status::kInvalidArgument);  // already connected
  std::string s = "x";
  CHECK(Send(*p.a, 42, s) == Status::kInvalidArgument);
  CHECK(RingCellsFor(64 * 1024) == 2 * kDefaultRingCells);
  CHECK(RingCellsFor(1024) == kDefaultRingCells);
  CHECK(RingCellsFor(1 << 20) == 65536);
  CHECK(Send(*p.a, kRankB, std::string(64 * 1024 + 1, 'x')) ==
        Status::kInvalidArgument);
  TestCompletion c;
  CHECK(p.a->PostRdvSend(kRankB, kMaxRdvKey, s.data(), 1, &c) ==
        Status::kInvalidArgument);
}

TEST_CASE("shm: packets arrive intact and in order (two threads)", "[shm]") {
  Pair p;
  constexpr int kCount = 20000;
  auto payload = [](int i) {
    const size_t n = i % 97 == 0 ? 64 * 1024 - 4 - (i % 7)
                                 : static_cast<size_t>(i * 13 % 3000);
    std::string s(n + 4, '\0');
    std::memcpy(s.data(), &i, 4);
    for (size_t k = 4; k < s.size(); ++k) s[k] = static_cast<char>(i + k);
    return s;
  };
  std::atomic<int> received{0};
  int bad = 0;
  p.sink_b.on_packet = [&](const testing::Packet& pk) {
    const int want = received.load(std::memory_order_relaxed);
    if (pk.peer != kRankA || pk.rail != 1 || pk.data != payload(want)) ++bad;
    received.store(want + 1, std::memory_order_release);
    p.sink_b.packets.clear();
  };
  std::thread consumer([&] {
    while (received.load(std::memory_order_acquire) < kCount) p.b->Poll();
  });
  int full = 0;
  for (int i = 0; i < kCount; ++i) {
    const std::string s = payload(i);
    Status st;
    while ((st = Send(*p.a, kRankB, s)) == Status::kNoResource) {
      ++full;
      p.a->Poll();
    }
    REQUIRE(st == Status::kOk);
  }
  consumer.join();
  CHECK(bad == 0);
  CHECK(received.load() == kCount);
  CHECK(p.a->corrupt_frames() + p.b->corrupt_frames() == 0);
}

TEST_CASE("shm: a full FIFO refuses, drops nothing, and recovers", "[shm]") {
  Pair p(256, {.max_packet = 4096, .copy_chunk = 2048});
  int posted = 0;
  Status st;
  while ((st = Send(*p.a, kRankB, "packet " + std::to_string(posted) +
                                      std::string(100, '.'))) == Status::kOk)
    ++posted;
  CHECK(st == Status::kNoResource);
  CHECK(posted > 10);
  CHECK(p.a->fifo_full() == 1);
  // Still refused until the receiver reads (a smaller packet may still
  // fit the bytes left: frames take what they need).
  CHECK(Send(*p.a, kRankB, "more" + std::string(100, '.')) ==
        Status::kNoResource);
  p.b->Poll();
  CHECK(Send(*p.a, kRankB, "after") == Status::kOk);
  REQUIRE(p.PollUntil([&] {
    return p.sink_b.packets.size() == static_cast<size_t>(posted) + 1;
  }));
  for (int i = 0; i < posted; ++i)
    CHECK(p.sink_b.packets[static_cast<size_t>(i)].data.rfind(
              "packet " + std::to_string(i) + ".", 0) == 0);
  CHECK(p.sink_b.packets.back().data == "after");
  CHECK(p.sink_b.failures.empty());
}

// Sends `s` written in place (ReservePacket/CommitPacket); false when the
// driver gave no room.
bool SendInPlace(ShmDriver& d, int peer, const std::string& s) {
  uint8_t* room = d.ReservePacket(peer, s.size());
  if (room == nullptr) return false;
  std::memcpy(room, s.data(), s.size());
  d.CommitPacket(peer, s.size());
  return true;
}

TEST_CASE("shm: packets written in place, in order with posted ones",
          "[shm]") {
  Pair p(256, {.max_packet = 4096, .copy_chunk = 2048});
  // Up to max_packet, and only to a connected peer.
  CHECK(p.a->ReservePacket(kRankB, 4097) == nullptr);
  CHECK(p.a->ReservePacket(42, 8) == nullptr);
  CHECK(p.a->ReservePacket(-1, 8) == nullptr);
  std::vector<std::string> sent;
  int in_place = 0;
  for (int i = 0;; ++i) {
    // Sizes that put frames across the ring's end at many offsets, some
    // of them larger than a cache line.
    const size_t dots = static_cast<size_t>(i % 10 == 9 ? 300 + i : i % 40);
    const std::string s = "m" + std::to_string(i) + std::string(dots, '.');
    if (i % 3 == 2) {
      if (Send(*p.a, kRankB, s) != Status::kOk) break;
    } else {
      if (!SendInPlace(*p.a, kRankB, s)) break;
      ++in_place;
    }
    sent.push_back(s);
  }
  // The FIFO filled up: no room, nothing lost, room again once read.
  CHECK(sent.size() > 100);
  CHECK(in_place > 60);
  CHECK(p.a->fifo_full() >= 1);
  CHECK(p.a->ReservePacket(kRankB, 1000) == nullptr);
  p.b->Poll();
  CHECK(SendInPlace(*p.a, kRankB, "after"));
  sent.push_back("after");
  REQUIRE(p.PollUntil([&] { return p.sink_b.packets.size() == sent.size(); }));
  for (size_t i = 0; i < sent.size(); ++i)
    CHECK(p.sink_b.packets[i].data == sent[i]);
  CHECK(p.b->corrupt_frames() == 0);
  CHECK(p.sink_b.failures.empty());
}

// Whether any byte of the ring from `a` to `b` past `from` was written.
bool WrittenPast(const Pair& p, uint32_t ring_bytes, uint32_t from) {
  const uint8_t* ring = p.segment->ring(0, 1)->bytes;
  for (uint32_t i = from; i < ring_bytes; ++i)
    if (ring[i] != 0) return true;
  return false;
}

TEST_CASE("shm: a receiver that keeps up keeps the sender in the hot part",
          "[shm]") {
  // A 16 KiB ring, 100-byte packets (112-byte frames): 300 of them walk
  // the ring twice, unless each lap stops past hot_ring_bytes (2 KiB)
  // because the receiver has read everything.
  constexpr uint32_t kRing = 256 * kCellBytes;
  const uint32_t hot = GENERATE(2048u, 0u);
  CAPTURE(hot);
  Pair p(256, {.max_packet = 4096, .copy_chunk = 2048, .hot_ring_bytes = hot});
  std::vector<std::string> sent;
  for (int i = 0; i < 300; ++i) {
    std::string s(100, static_cast<char>('a' + i % 26));
    s[0] = static_cast<char>(i);
    REQUIRE((i % 2 == 0 ? Send(*p.a, kRankB, s) == Status::kOk
                        : SendInPlace(*p.a, kRankB, s)));
    sent.push_back(std::move(s));
    REQUIRE(p.PollUntil([&] { return p.sink_b.packets.size() == sent.size(); }));
  }
  for (size_t i = 0; i < sent.size(); ++i)
    REQUIRE(p.sink_b.packets[i].data == sent[i]);
  // The hot part and the frame that crosses its end, and nothing past.
  CHECK(WrittenPast(p, kRing, 4096) == (hot == 0));
  CHECK(p.b->corrupt_frames() == 0);

  // A receiver that lags: the sender walks on past the hot part, and
  // everything still arrives in order.
  if (hot != 0) {
    for (int i = 0; i < 100; ++i) {
      std::string s(100, static_cast<char>('A' + i % 26));
      REQUIRE(Send(*p.a, kRankB, s) == Status::kOk);
      sent.push_back(std::move(s));
    }
    CHECK(WrittenPast(p, kRing, 4096));
    REQUIRE(p.PollUntil([&] { return p.sink_b.packets.size() == sent.size(); }));
    for (size_t i = 0; i < sent.size(); ++i)
      REQUIRE(p.sink_b.packets[i].data == sent[i]);
    CHECK(p.b->corrupt_frames() == 0);
  }
}

TEST_CASE("shm: many laps of mixed sizes arrive whole and in order",
          "[shm]") {
  // A 16 KiB ring and packets of 0 to 4096 bytes, posted and written in
  // place: frames end at every 8-byte offset, skips fill many lap ends.
  Pair p(256, {.max_packet = 4096, .copy_chunk = 2048});
  std::vector<std::string> sent;
  uint32_t seed = 28;
  for (int i = 0; i < 3000; ++i) {
    seed = seed * 1103515245u + 12345u;
    const size_t n = (seed >> 8) % 7 == 0 ? (seed >> 12) % 4097
                                           : (seed >> 12) % 100;
    std::string s(n, '\0');
    for (size_t k = 0; k < n; ++k) s[k] = static_cast<char>(i * 7 + k);
    for (;;) {
      const bool ok = i % 2 == 0 ? Send(*p.a, kRankB, s) == Status::kOk
                                 : SendInPlace(*p.a, kRankB, s);
      if (ok) break;
      p.b->Poll();  // full: the receiver makes room
    }
    sent.push_back(std::move(s));
  }
  REQUIRE(p.PollUntil([&] { return p.sink_b.packets.size() == sent.size(); }));
  for (size_t i = 0; i < sent.size(); ++i)
    REQUIRE(p.sink_b.packets[i].data == sent[i]);
  CHECK(p.a->fifo_full() > 0);
  CHECK(p.b->corrupt_frames() == 0);
}

void RendezvousCases(bool cma) {
  Pair p(kTestRingCells, {.cma = cma});
  const size_t kLen = (4 << 20) + 123;
  std::vector<uint8_t> src(kLen);
  for (size_t i = 0; i < kLen; ++i) src[i] = static_cast<uint8_t>(i * 31 + 7);
  SECTION("receive posted first") {
    std::vector<uint8_t> dst(kLen);
    TestCompletion s, r;
    REQUIRE(p.b->PostRdvRecv(kRankA, 11, dst.data(), kLen, &r) ==
            Status::kInProgress);
    REQUIRE(p.a->PostRdvSend(kRankB, 11, src.data(), kLen, &s) ==
            Status::kInProgress);
    REQUIRE(p.PollUntil([&] { return s.calls && r.calls; }));
    CHECK(s.status == Status::kOk);
    CHECK(s.bytes == kLen);
    CHECK(r.status == Status::kOk);
    CHECK(r.bytes == kLen);
    CHECK(dst == src);
  }
  SECTION("send first, truncated receive") {
    std::vector<uint8_t> dst(1000, 0xee);
    TestCompletion s, r;
    REQUIRE(p.a->PostRdvSend(kRankB, 12, src.data(), kLen, &s) ==
            Status::kInProgress);
    REQUIRE(p.PollUntil([&] { return p.b->Poll() == 0; }));
    REQUIRE(p.b->PostRdvRecv(kRankA, 12, dst.data(), 999, &r) ==
            Status::kInProgress);
    CHECK(r.calls == 0);  // completions only from Poll
    REQUIRE(p.PollUntil([&] { return s.calls && r.calls; }));
    CHECK(s.status == Status::kOk);
    CHECK(r.status == Status::kTruncated);
    CHECK(r.bytes == 999);
    CHECK(std::equal(dst.begin(), dst.begin() + 999, src.begin()));
    CHECK(dst[999] == 0xee);
  }
  SECTION("several at once, both directions, empty ones") {
    std::vector<std::vector<uint8_t>> dst(6, std::vector<uint8_t>(kLen));
    TestCompletion s[6], r[6];
    for (int k = 0; k < 3; ++k) {
      const size_t n = k == 2 ? 0 : kLen >> k;
      REQUIRE(p.a->PostRdvSend(kRankB, 100 + k, src.data(), n, &s[k]) ==
              Status::kInProgress);
      REQUIRE(p.b->PostRdvSend(kRankA, 200 + k, src.data(), n, &s[3 + k]) ==
              Status::kInProgress);
      REQUIRE(p.b->PostRdvRecv(kRankA, 100 + k, dst[k].data(), kLen, &r[k]) ==
              Status::kInProgress);
      REQUIRE(p.a->PostRdvRecv(kRankB, 200 + k, dst[3 + k].data(), kLen,
                               &r[3 + k]) == Status::kInProgress);
    }
    REQUIRE(p.PollUntil([&] {
      for (auto& c : r)
        if (c.calls == 0) return false;
      for (auto& c : s)
        if (c.calls == 0) return false;
      return true;
    }));
    for (int k = 0; k < 6; ++k) {
      const size_t n = k % 3 == 2 ? 0 : kLen >> (k % 3);
      CHECK(r[k].status == Status::kOk);
      CHECK(r[k].bytes == n);
      CHECK(s[k].status == Status::kOk);
      CHECK(std::equal(dst[k].begin(), dst[k].begin() + n, src.begin()));
    }
  }
  if (cma) {
    CHECK(p.a->copied_rendezvous() + p.b->copied_rendezvous() == 0);
  } else {
    CHECK(p.a->cma_reads() + p.b->cma_reads() == 0);
  }
}

TEST_CASE("shm: rendezvous through CMA", "[shm]") { RendezvousCases(true); }

TEST_CASE("shm: rendezvous through the FIFO when CMA is refused", "[shm]") {
  RendezvousCases(false);
}

TEST_CASE("shm: a rendezvous interleaved with packets (two threads)",
          "[shm]") {
  Pair p(kTestRingCells, {.cma = false});
  const size_t kLen = 1 << 20;
  std::vector<uint8_t> src(kLen, 0x5a), dst(kLen);
  TestCompletion s, r;
  std::atomic<bool> stop{false};
  REQUIRE(p.b->PostRdvRecv(kRankA, 3, dst.data(), kLen, &r) ==
          Status::kInProgress);
  std::thread receiver([&] {
    while (!stop.load(std::memory_order_acquire)) p.b->Poll();
  });
  REQUIRE(p.a->PostRdvSend(kRankB, 3, src.data(), kLen, &s) ==
          Status::kInProgress);
  for (int i = 0; i < 1000; ++i)
    while (Send(*p.a, kRankB, "p" + std::to_string(i)) == Status::kNoResource)
      p.a->Poll();
  while (s.calls == 0) p.a->Poll();
  stop.store(true, std::memory_order_release);
  receiver.join();
  REQUIRE(p.PollUntil([&] { return r.calls == 1; }));
  CHECK(r.status == Status::kOk);
  CHECK(dst == src);
  REQUIRE(p.sink_b.packets.size() == 1000);
  for (int i = 0; i < 1000; ++i)
    CHECK(p.sink_b.packets[static_cast<size_t>(i)].data ==
          "p" + std::to_string(i));
}

TEST_CASE("shm: a corrupt frame is refused and reported", "[shm]") {
  Pair p;
  REQUIRE(Send(*p.a, kRankB, "good") == Status::kOk);
  REQUIRE(Send(*p.a, kRankB, std::string(300, 'x')) == Status::kOk);
  // The second frame (at byte FrameBytes(4)) is given a length above the
  // limit (max_packet), inside the ring.
  uint8_t* ring = p.segment->ring(0, 1)->bytes;
  const uint32_t len = 100000;
  std::memcpy(ring + FrameBytes(4) + 4, &len, 3);
  TestCompletion r;
  std::vector<uint8_t> dst(10);
  REQUIRE(p.b->PostRdvRecv(kRankA, 1, dst.data(), 10, &r) ==
          Status::kInProgress);
  p.b->Poll();
  REQUIRE(p.sink_b.packets.size() == 1);
  CHECK(p.sink_b.packets[0].data == "good");
  REQUIRE(p.sink_b.failures.size() == 1);
  CHECK(p.sink_b.failures[0].peer == kRankA);
  CHECK(p.sink_b.failures[0].data.find("corrupt frame from rank 5") !=
        std::string::npos);
  CHECK(p.sink_b.failures[0].data.find("frame length 100000 above the "
                                       "limit 65536") != std::string::npos);
  CHECK(p.sink_b.failure_status == Status::kPeerFailed);
  CHECK(p.b->corrupt_frames() == 1);
  CHECK(r.calls == 1);
  CHECK(r.status == Status::kPeerFailed);
  CHECK(Send(*p.b, kRankA, "x") == Status::kPeerFailed);
  // Nothing more is read from that FIFO.
  REQUIRE(Send(*p.a, kRankB, "later") == Status::kOk);
  p.b->Poll();
  CHECK(p.sink_b.packets.size() == 1);
}

TEST_CASE("shm: a forged control frame is refused", "[shm]") {
  Pair p;
  // A FIN for a send that does not exist.
  uint8_t fin[kFinBytes] = {};
  iovec iov{fin, kFinBytes};
  WriteFrame(p.segment->ring(1, 0)->bytes,
             p.segment->ring_cells() * static_cast<uint32_t>(kCellBytes), 0,
             FrameType::kFin, &iov, 1, kFinBytes);
  p.a->Poll();
  REQUIRE(p.sink_a.failures.size() == 1);
  CHECK(p.sink_a.failures[0].data.find("FIN for key 0 that has no send") !=
        std::string::npos);
}

// Rank 0 (`a`, polled by the test) and rank 1 (`b`), whose slot names a
// forked child that waits to be killed: a stand-in for a rank that dies.
struct DyingPeer {
  explicit DyingPeer(int liveness_polls) {
    REQUIRE(pipe(pipefd) == 0);
    child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      char c;
      (void)read(pipefd[0], &c, 1);  // until killed
      _exit(0);
    }
    close(pipefd[0]);
    std::string error;
    auto seg = ShmSegment::CreateAnonymous(2, kTestRingCells, &error);
    REQUIRE(seg.ok());
    a = ShmDriver::Create(seg.value(),
                          {.self = 0, .local = 0,
                           .liveness_polls = liveness_polls},
                          &error)
            .value();
    b = ShmDriver::Create(seg.value(), {.self = 1, .local = 1, .pid = child},
                          &error)
            .value();
    a->SetSink(&sink, 0);
    REQUIRE(a->Connect(1, b->LocalAddress().value()) == Status::kOk);
  }
  ~DyingPeer() { close(pipefd[1]); }
  void Kill() {
    kill(child, SIGKILL);
    int wstatus;
    REQUIRE(waitpid(child, &wstatus, 0) == child);
  }
  int pipefd[2] = {-1, -1};
  pid_t child = -1;
  std::unique_ptr<ShmDriver> a, b;
  RecordingSink sink;
};

TEST_CASE("shm: a dead peer is reported with its rank", "[shm]") {
  DyingPeer d(/*liveness_polls=*/1);
  auto& a = d.a;
  auto& b = d.b;
  auto& sink = d.sink;
  const pid_t child = d.child;
  std::vector<uint8_t> buf(100);
  TestCompletion r, s;
  REQUIRE(a->PostRdvRecv(1, 4, buf.data(), buf.size(), &r) ==
          Status::kInProgress);
  REQUIRE(a->PostRdvSend(1, 5, buf.data(), buf.size(), &s) ==
          Status::kInProgress);
  // Frames written before the death are still delivered.
  REQUIRE(b->Connect(0, a->LocalAddress().value()) == Status::kOk);
  REQUIRE(Send(*b, 0, "last words") == Status::kOk);
  a->Poll();
  CHECK(sink.failures.empty());
  REQUIRE(sink.packets.size() == 1);
  sink.packets.clear();
  REQUIRE(Send(*b, 0, "after the poll") == Status::kOk);
  d.Kill();
  for (int i = 0; i < 10 && sink.failures.empty(); ++i) a->Poll();
  REQUIRE(sink.failures.size() == 1);
  CHECK(sink.failures[0].peer == 1);
  CHECK(sink.failures[0].data.find("rank 1 (pid " + std::to_string(child) +
                                   ") on this node has exited") !=
        std::string::npos);
  REQUIRE(sink.packets.size() == 1);
  CHECK(sink.packets[0].data == "after the poll");
  CHECK(r.status == Status::kPeerFailed);
  CHECK(s.status == Status::kPeerFailed);
  CHECK(Send(*a, 1, "x") == Status::kPeerFailed);
}

TEST_CASE("shm: Arm and the doorbell wake a sleeper", "[shm]") {
  // Both halves of the handshake: a fence on every send, or membarrier's
  // heavy barrier in Arm (drivers/shm/fence.h) where the kernel has it.
  const bool asymmetric = GENERATE(false, true);
  INFO("asymmetric_fence = " << asymmetric);
  Pair p(kTestRingCells, {.asymmetric_fence = asymmetric});
  const bool light = asymmetric && RegisterHeavyBarrier();
  CHECK(p.a->light_fence() == light);
  CHECK(p.segment->slot(0).light_fence.load() == (light ? 1u : 0u));
  CHECK(p.segment->slot(1).light_fence.load() == (light ? 1u : 0u));
  CHECK(p.b->Arm() == Status::kOk);
  CHECK(p.segment->slot(1).doorbell.load() == 1);
  REQUIRE(Send(*p.a, kRankB, "wake up") == Status::kOk);
  CHECK(p.segment->slot(1).doorbell.load() == 0);
  CHECK(p.a->doorbells() == 1);
  pollfd pfd{p.b->WakeupFd(), POLLIN, 0};
  // Readable already (the byte was sent before Send returned).
  REQUIRE(poll(&pfd, 1, 60000) == 1);
  CHECK(p.b->Arm() == Status::kBusy);  // the frame is waiting
  p.b->Poll();
  REQUIRE(p.sink_b.packets.size() == 1);
  CHECK(p.b->Arm() == Status::kOk);
  pfd.revents = 0;
  CHECK(poll(&pfd, 1, 0) == 0);  // drained by Arm
  // Awake again (a Poll) means no doorbell for the next sender.
  p.b->Poll();
  REQUIRE(Send(*p.a, kRankB, "no ring") == Status::kOk);
  CHECK(p.a->doorbells() == 1);
}

TEST_CASE("shm: HasWork tells an idle driver from one with work", "[shm]") {
  Pair p(kTestRingCells, {.liveness_polls = 8});
  // Idle: false, until the liveness check's turn (every 8th answer).
  int idle = 0;
  while (!p.b->HasWork() && idle < 100) ++idle;
  CHECK(idle == 7);
  p.b->Poll();  // takes the turn (and finds the peer alive)
  CHECK_FALSE(p.b->HasWork());
  // A frame at the ring's head, posted or written in place.
  REQUIRE(Send(*p.a, kRankB, "one") == Status::kOk);
  CHECK(p.b->HasWork());
  CHECK(p.b->HasWork());  // a question, not a state change
  p.b->Poll();
  REQUIRE(p.sink_b.packets.size() == 1);
  CHECK_FALSE(p.b->HasWork());
  REQUIRE(SendInPlace(*p.a, kRankB, "two"));
  CHECK(p.b->HasWork());
  p.b->Poll();
  CHECK_FALSE(p.b->HasWork());
  // An armed doorbell is work (a Poll clears it: no ring for senders).
  REQUIRE(p.b->Arm() == Status::kOk);
  CHECK(p.b->HasWork());
  p.b->Poll();
  CHECK(p.segment->slot(1).doorbell.load() == 0);
  CHECK_FALSE(p.b->HasWork());
  // A completion waiting for delivery: a rendezvous whose RTS and data
  // both arrived completes inside Poll, and the sender's side has the FIN
  // to read; neither side is idle until both have polled.
  std::vector<uint8_t> out(300, 7), in(300);
  TestCompletion s, r;
  REQUIRE(p.a->PostRdvSend(kRankB, 3, out.data(), out.size(), &s) ==
          Status::kInProgress);
  CHECK(p.b->HasWork());  // the RTS
  REQUIRE(p.b->PostRdvRecv(kRankA, 3, in.data(), in.size(), &r) ==
          Status::kInProgress);
  REQUIRE(p.PollUntil([&] { return s.calls > 0 && r.calls > 0; }));
  CHECK(r.status == Status::kOk);
  CHECK(in == out);
  CHECK_FALSE(p.a->HasWork());
  CHECK_FALSE(p.b->HasWork());
}

TEST_CASE("shm: a waiter that only polls on HasWork finds a dead peer",
          "[shm]") {
  DyingPeer d(/*liveness_polls=*/4);
  d.Kill();
  // A waiter's loop: Poll only when HasWork says so.
  int passes = 0;
  for (; passes < 1000 && d.sink.failures.empty(); ++passes)
    if (d.a->HasWork()) d.a->Poll();
  REQUIRE(d.sink.failures.size() == 1);
  CHECK(d.sink.failures[0].peer == 1);
  CHECK(passes <= 8);
}

TEST_CASE("shm: Close cancels what is pending", "[shm]") {
  Pair p;
  std::vector<uint8_t> buf(10);
  TestCompletion r, s;
  REQUIRE(p.a->PostRdvRecv(kRankB, 1, buf.data(), 10, &r) ==
          Status::kInProgress);
  REQUIRE(p.a->PostRdvSend(kRankB, 2, buf.data(), 10, &s) ==
          Status::kInProgress);
  p.a->Close(0);
  CHECK(r.status == Status::kCanceled);
  CHECK(s.status == Status::kCanceled);
  CHECK(Send(*p.a, kRankB, "x") == Status::kCanceled);
}

}  // namespace
}  // namespace rondo::drivers::shm
