// SetupNodeSegment and LocalityDriver with ranks as threads: an in-process
// bootstrap, node keys given by the test (two "hosts"), and a second shm
// segment over all ranks standing in for the remote driver (UCX).
#include <sys/stat.h>

#include <cstdio>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "drivers/bootstrap/in_process_bootstrap.h"
#include "drivers/shm/locality_driver.h"
#include "drivers/shm/node_segment.h"
#include "drivers/shm/shm_driver.h"
#include "drivers/testing/recording_sink.h"

namespace rondo::drivers::shm {
namespace {

// Rings that take the default max_packet (RingCellsFor).
const uint32_t kTestRingCells = RingCellsFor(ShmDriverOptions{}.max_packet);

using bootstrap::InProcessBootstrap;
using testing::RecordingSink;

constexpr int kRanks = 4;
const char* const kHosts[kRanks] = {"hostA", "hostA", "hostB", "hostA"};

struct RankResult {
  NodeSegment node;
  std::string error;
  std::vector<int> local_peers;
  std::vector<std::string> packets;
  uint64_t nonce = 0;
  bool ok = false;
};

void RankImpl(bootstrap::Bootstrap& boot, std::shared_ptr<ShmSegment> global,
          RankResult& out) {
  const int me = boot.rank();
  auto node = SetupNodeSegment(boot, kHosts[me], kTestRingCells, &out.error);
  if (!node.ok()) return;
  out.node = node.value();
  std::unique_ptr<Driver> local;
  if (out.node.segment) {
    out.nonce = out.node.segment->nonce();
    auto d = ShmDriver::Create(out.node.segment,
                               {.self = me, .local = out.node.local},
                               &out.error);
    if (!d.ok()) return;
    local = std::move(d).value();
  }
  auto remote = ShmDriver::Create(global, {.self = me, .local = me},
                                  &out.error);
  if (!remote.ok()) return;
  auto ld = LocalityDriver::Create(std::move(local), std::move(remote).value(),
                                   &out.error);
  if (!ld.ok()) return;
  LocalityDriver& d = *ld.value();
  RecordingSink sink;
  d.SetSink(&sink, 0);
  auto addr = d.LocalAddress();
  if (!addr.ok()) {
    out.error = "no address";
    return;
  }
  if (boot.Put("addr", addr.value()) != Status::kOk ||
      boot.Fence() != Status::kOk) {
    out.error = "Put or Fence failed";
    return;
  }
  for (int p = 0; p < kRanks; ++p) {
    if (p == me) continue;
    auto a = boot.Get(p, "addr");
    if (!a.ok()) {
      out.error = "no address of " + std::to_string(p);
      return;
    }
    if (d.Connect(p, a.value()) != Status::kOk) {
      out.error = "cannot connect to " + std::to_string(p);
      return;
    }
    if (d.IsLocal(p)) out.local_peers.push_back(p);
  }
  for (int p = 0; p < kRanks; ++p) {
    if (p == me) continue;
    std::string s = "from " + std::to_string(me);
    iovec iov{s.data(), s.size()};
    while (d.PostPacket(p, &iov, 1, nullptr) == Status::kNoResource) d.Poll();
  }
  while (sink.packets.size() < kRanks - 1) d.Poll();
  for (auto& pk : sink.packets) out.packets.push_back(pk.data);
  out.ok = boot.Barrier() == Status::kOk;
}

// A rank that fails says why at once (the others then wait in a
// collective call until the test's timeout).
void Rank(bootstrap::Bootstrap& boot, std::shared_ptr<ShmSegment> global,
          RankResult& out) {
  RankImpl(boot, std::move(global), out);
  if (!out.ok)
    std::fprintf(stderr, "rank %d failed: %s\n", boot.rank(),
                 out.error.c_str());
}

TEST_CASE("node segment: one per host, unlinked, shm inside, other across",
          "[shm]") {
  auto boots = InProcessBootstrap::MakeGroup(kRanks);
  std::string error;
  auto global = ShmSegment::CreateAnonymous(kRanks, kTestRingCells, &error);
  REQUIRE(global.ok());
  std::vector<RankResult> results(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back(
        [&, r] { Rank(*boots[static_cast<size_t>(r)], global.value(),
                      results[static_cast<size_t>(r)]); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    const RankResult& res = results[static_cast<size_t>(r)];
    INFO("rank " << r << ": " << res.error);
    REQUIRE(res.ok);
    CHECK(res.packets.size() == kRanks - 1);
  }
  // hostA: ranks 0, 1, 3 share one segment; hostB: rank 2 alone.
  CHECK(results[0].node.ranks == std::vector<int>{0, 1, 3});
  CHECK(results[3].node.local == 2);
  CHECK(results[0].nonce == results[1].nonce);
  CHECK(results[0].nonce == results[3].nonce);
  CHECK(results[2].node.segment == nullptr);
  CHECK(results[2].node.why_none == "no other rank on this node");
  CHECK(results[0].local_peers == std::vector<int>{1, 3});
  CHECK(results[1].local_peers == std::vector<int>{0, 3});
  CHECK(results[2].local_peers.empty());
  // The name is gone once everybody mapped it.
  struct stat st;
  CHECK(stat(("/dev/shm/" + results[0].node.segment->name()).c_str(), &st) !=
        0);
}

}  // namespace
}  // namespace rondo::drivers::shm
