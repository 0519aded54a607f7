#include "nmad/node.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>

namespace rondo::nmad {
namespace {

using topology::CpuSet;
using Status = engine::Status;

TEST_CASE("node records: encode, decode, refuse", "[node]") {
  NodeRecord r{"n01", 3, CpuSet{0, 1, 2, 8}};
  const std::string text = EncodeNodeRecord(r);
  CHECK(text == "n01|3|0-2,8");
  auto back = DecodeNodeRecord(text);
  REQUIRE(back.has_value());
  CHECK(back->host == "n01");
  CHECK(back->local_rank == 3);
  CHECK(back->cpus == r.cpus);
  for (const char* bad : {"", "n01", "n01|3", "|3|0", "n01|-1|0", "n01|x|0",
                          "n01|3|", "n01|3|0-", "n01|3 |0"}) {
    INFO(bad);
    CHECK_FALSE(DecodeNodeRecord(bad).has_value());
  }
}

TEST_CASE("node key: the host name, and the namespace when not the first",
          "[node]") {
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof(host) - 1) == 0);
  const std::string key = NodeKey();
  CHECK(key.rfind(host, 0) == 0);  // starts with the host name
  CHECK(key == NodeKey());         // stable
  CHECK(key.find('|') == std::string::npos);  // fits the record
  char own[64] = {}, init[64] = {};
  const ssize_t n = readlink("/proc/self/ns/net", own, sizeof(own) - 1);
  const ssize_t m = readlink("/proc/1/ns/net", init, sizeof(init) - 1);
  if (n > 0 && m > 0 && std::string(own, n) == std::string(init, m))
    CHECK(key == host);
  else if (n > 0)
    CHECK(key == std::string(host) + "@" + std::string(own, n));
}

TEST_CASE("node CPUs: the host's ranks in local rank order", "[node]") {
  std::vector<std::optional<NodeRecord>> all = {
      NodeRecord{"a", 1, CpuSet{1}}, NodeRecord{"b", 0, CpuSet{0}},
      NodeRecord{"a", 0, CpuSet{0}}, NodeRecord{"b", 1, CpuSet{1}}};
  auto a = NodeCpusOf(all, "a", 2);
  REQUIRE(a.size() == 2);
  CHECK(a[0] == CpuSet{0});
  CHECK(a[1] == CpuSet{1});
  CHECK(NodeCpusOf(all, "a", 3).empty());  // a rank is missing
  CHECK(NodeCpusOf(all, "c", 1).empty());
  all.push_back(NodeRecord{"a", 1, CpuSet{2}});  // local rank 1 twice
  CHECK(NodeCpusOf(all, "a", 2).empty());
  all.back() = NodeRecord{"a", 2, CpuSet{2}};  // beyond the local size
  CHECK(NodeCpusOf(all, "a", 2).empty());
  all.back() = std::nullopt;  // an unreadable record elsewhere is ignored
  CHECK(NodeCpusOf(all, "a", 2).size() == 2);
}

// A two-rank job on one host, seen from rank 0; rank 1's record is given.
class FakeBootstrap : public drivers::bootstrap::Bootstrap {
 public:
  explicit FakeBootstrap(std::string peer_record)
      : peer_(std::move(peer_record)) {}
  std::string_view name() const noexcept override { return "pmix"; }
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 2; }
  int local_rank() const noexcept override { return 0; }
  int local_size() const noexcept override { return 2; }
  Status Put(std::string_view key, std::span<const uint8_t> v) override {
    mine_[std::string(key)] = std::string(v.begin(), v.end());
    return Status::kOk;
  }
  Status Fence() override {
    ++fences;
    return fence_status;
  }
  engine::Result<std::vector<uint8_t>> Get(int rank,
                                           std::string_view key) override {
    const std::string v = rank == 0 ? mine_[std::string(key)] : peer_;
    return std::vector<uint8_t>(v.begin(), v.end());
  }
  Status Barrier() override { return Status::kOk; }
  std::vector<drivers::bootstrap::PeerFailure> PollFailures() override {
    return {};
  }
  Status Finalize() override { return Status::kOk; }
  int fences = 0;
  Status fence_status = Status::kOk;

 private:
  std::string peer_;
  std::map<std::string, std::string> mine_;
};

std::string Host() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

TEST_CASE("node engine options from the bootstrap", "[node]") {
  unsetenv("RONDO_LOCAL_RANK");
  unsetenv("RONDO_LOCAL_SIZE");
  unsetenv("RONDO_NODE_CPUS");
  SECTION("the exchange fills local rank, size and every rank's CPUs") {
    FakeBootstrap boot(Host() + "|1|1");
    std::string error;
    auto o = NodeEngineOptions(boot, &error);
    REQUIRE(o.ok());
    CHECK(boot.fences == 1);
    CHECK(o.value().local_rank == 0);
    CHECK(o.value().local_size == 2);
    CHECK(o.value().job_size == 2);
    REQUIRE(o.value().node_cpus.size() == 2);
    CHECK(o.value().node_cpus[1] == CpuSet{1});
    CHECK_FALSE(o.value().node_cpus[0].Empty());  // this process's mask
  }
  SECTION("inconsistent records leave only the own affinity") {
    FakeBootstrap boot(Host() + "|0|1");  // local rank 0 twice
    auto o = NodeEngineOptions(boot, nullptr);
    REQUIRE(o.ok());
    CHECK(o.value().node_cpus.empty());
  }
  SECTION("a failed exchange is an error") {
    FakeBootstrap boot(Host() + "|1|1");
    boot.fence_status = Status::kPeerFailed;
    std::string error;
    auto o = NodeEngineOptions(boot, &error);
    CHECK(o.status() == Status::kPeerFailed);
    CHECK_THAT(error, Catch::Contains("exchange of the node's CPUs"));
  }
  SECTION("a rank alone on its host still takes part in the exchange") {
    // Another host has two ranks and waits in the Fence for everyone.
    class Alone : public FakeBootstrap {
     public:
      using FakeBootstrap::FakeBootstrap;
      int local_size() const noexcept override { return 1; }
    } boot("otherhost|0|0");
    auto o = NodeEngineOptions(boot, nullptr);
    REQUIRE(o.ok());
    CHECK(boot.fences == 1);
    CHECK(o.value().local_size == 1);
    REQUIRE(o.value().node_cpus.size() == 1);  // its own record
  }
  SECTION("under PMIx the exchange happens even when the environment "
          "describes the node (some ranks may not have it), which wins") {
    setenv("RONDO_NODE_CPUS", "0;1", 1);
    FakeBootstrap boot(Host() + "|1|0");
    auto o = NodeEngineOptions(boot, nullptr);
    unsetenv("RONDO_NODE_CPUS");
    REQUIRE(o.ok());
    CHECK(boot.fences == 1);
    REQUIRE(o.value().node_cpus.size() == 2);
    CHECK(o.value().node_cpus[1] == CpuSet{1});
    CHECK(o.value().marks_calls);
  }
  SECTION("rondo-run describes the node: no exchange") {
    class Launcher : public FakeBootstrap {
     public:
      using FakeBootstrap::FakeBootstrap;
      std::string_view name() const noexcept override { return "rondo-run"; }
    } boot("garbage");
    setenv("RONDO_NODE_CPUS", "0;1", 1);
    auto o = NodeEngineOptions(boot, nullptr);
    unsetenv("RONDO_NODE_CPUS");
    REQUIRE(o.ok());
    CHECK(boot.fences == 0);
    CHECK(o.value().node_cpus.size() == 2);
  }
}

}  // namespace
}  // namespace rondo::nmad
