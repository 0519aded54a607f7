// ShmDriver between processes: fork()ed children attach to a named segment
// (opened by name, then unlinked while in use) or to an inherited one, and
// exchange packets and rendezvous with the parent; a child killed with
// SIGKILL is reported as a failed peer.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "drivers/shm/shm_driver.h"
#include "drivers/testing/recording_sink.h"

namespace rondo::drivers::shm {
namespace {

// Rings that take the default max_packet (RingCellsFor).
const uint32_t kTestRingCells = RingCellsFor(ShmDriverOptions{}.max_packet);

using testing::RecordingSink;
using testing::TestCompletion;

constexpr size_t kRdvLen = (8 << 20) + 5;
constexpr int kRoundTrips = 2000;

std::string UniqueName() {
  std::random_device rd;
  return "rondo-test-" + std::to_string(getpid()) + "-" +
         std::to_string(rd());
}

bool Exists(const std::string& name) {
  struct stat st;
  return stat(("/dev/shm/" + name).c_str(), &st) == 0;
}

Status Send(ShmDriver& d, int peer, const void* data, size_t n) {
  iovec iov{const_cast<void*>(data), n};
  Status s;
  while ((s = d.PostPacket(peer, &iov, 1, nullptr)) == Status::kNoResource)
    d.Poll();
  return s;
}

// Connects `d` to `peer` (local rank == rank == peer here) once the peer
// has published its pid in `seg`: its address is `d`'s own with the local
// rank and rank changed.
Status ConnectTo(ShmDriver& d, const ShmSegment& seg, int32_t peer) {
  while (seg.slot(peer).pid.load() == 0) {
  }
  auto addr = d.LocalAddress().value();
  std::memcpy(addr.data() + 12, &peer, 4);
  std::memcpy(addr.data() + 16, &peer, 4);
  return d.Connect(peer, addr);
}

// Waits for the next packet (polling), false on a failure report.
bool Next(ShmDriver& d, RecordingSink& sink, std::string* out) {
  while (sink.packets.empty()) {
    if (!sink.failures.empty()) return false;
    d.Poll();
  }
  *out = sink.packets.front().data;
  sink.packets.erase(sink.packets.begin());
  return true;
}

std::vector<uint8_t> Pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + seed);
  return v;
}

// Rank 1, in the child: echoes kRoundTrips packets, then receives one
// rendezvous and sends one back. Returns the exit code (0: all fine).
int Child(std::shared_ptr<ShmSegment> seg, const std::string& name,
          bool cma) {
  std::string error;
  if (seg == nullptr) {
    auto opened = ShmSegment::Open(name, &error);
    if (!opened.ok()) return 2;
    seg = opened.value();
  }
  auto d = ShmDriver::Create(seg, {.self = 1, .local = 1, .cma = cma}, &error);
  if (!d.ok()) return 3;
  ShmDriver& drv = *d.value();
  RecordingSink sink;
  drv.SetSink(&sink, 0);
  // The parent's address: nonce, local 0, rank 0 (known by construction).
  auto mine = drv.LocalAddress().value();
  std::vector<uint8_t> parent = mine;
  const int32_t zero = 0;
  std::memcpy(parent.data() + 12, &zero, 4);
  std::memcpy(parent.data() + 16, &zero, 4);
  while (seg->slot(0).pid.load() == 0) {
  }
  if (drv.Connect(0, parent) != Status::kOk) return 4;
  if (Send(drv, 0, "attached", 8) != Status::kOk) return 5;
  std::string msg;
  for (int i = 0; i < kRoundTrips; ++i) {
    if (!Next(drv, sink, &msg)) return 6;
    if (Send(drv, 0, msg.data(), msg.size()) != Status::kOk) return 7;
  }
  std::vector<uint8_t> in(kRdvLen);
  TestCompletion r, s;
  if (drv.PostRdvRecv(0, 77, in.data(), in.size(), &r) != Status::kInProgress)
    return 8;
  std::vector<uint8_t> out = Pattern(kRdvLen, 2);
  if (drv.PostRdvSend(0, 78, out.data(), out.size(), &s) !=
      Status::kInProgress)
    return 9;
  while (r.calls == 0 || s.calls == 0) drv.Poll();
  if (r.status != Status::kOk || s.status != Status::kOk) return 10;
  if (in != Pattern(kRdvLen, 1)) return 11;
  // Stays until the parent has its completion (its FIN came from us).
  if (!Next(drv, sink, &msg) || msg != "bye") return 12;
  return 0;
}

void RunPair(bool named, bool cma) {
  std::string error;
  const std::string name = named ? UniqueName() : "";
  std::shared_ptr<ShmSegment> seg;
  if (named) {
    auto created = ShmSegment::Create(name, 2, kTestRingCells, &error);
    INFO(error);
    REQUIRE(created.ok());
    seg = created.value();
    CHECK(Exists(name));
    // Two jobs never share a segment: the name is taken.
    CHECK(ShmSegment::Create(name, 2, kTestRingCells, &error).status() ==
          Status::kBusy);
    CHECK(error.find(name + " exists") != std::string::npos);
  } else {
    seg = ShmSegment::CreateAnonymous(2, kTestRingCells, &error).value();
  }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(Child(named ? nullptr : seg, name, cma));
  auto d = ShmDriver::Create(seg, {.self = 0, .local = 0, .cma = cma}, &error);
  REQUIRE(d.ok());
  ShmDriver& drv = *d.value();
  RecordingSink sink;
  drv.SetSink(&sink, 0);
  REQUIRE(ConnectTo(drv, *seg, 1) == Status::kOk);
  std::string msg;
  REQUIRE(Next(drv, sink, &msg));
  CHECK(msg == "attached");
  if (named) {
    // Both have mapped it: the name goes, the segment stays usable.
    CHECK(seg->Unlink() == Status::kOk);
    CHECK_FALSE(Exists(name));
  }
  for (int i = 0; i < kRoundTrips; ++i) {
    std::string out = std::to_string(i) + std::string(i % 200, 'q');
    REQUIRE(Send(drv, 1, out.data(), out.size()) == Status::kOk);
    REQUIRE(Next(drv, sink, &msg));
    REQUIRE(msg == out);
  }
  std::vector<uint8_t> out = Pattern(kRdvLen, 1), in(kRdvLen);
  TestCompletion s, r;
  REQUIRE(drv.PostRdvSend(1, 77, out.data(), out.size(), &s) ==
          Status::kInProgress);
  REQUIRE(drv.PostRdvRecv(1, 78, in.data(), in.size(), &r) ==
          Status::kInProgress);
  while (r.calls == 0 || s.calls == 0) drv.Poll();
  CHECK(s.status == Status::kOk);
  CHECK(r.status == Status::kOk);
  CHECK(in == Pattern(kRdvLen, 2));
  CHECK((cma ? drv.cma_reads() : drv.copied_rendezvous()) == 1);
  REQUIRE(Send(drv, 1, "bye", 3) == Status::kOk);
  int wstatus = 0;
  REQUIRE(waitpid(child, &wstatus, 0) == child);
  CHECK(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 0);
}

TEST_CASE("shm process: named segment, CMA", "[shm]") { RunPair(true, true); }
TEST_CASE("shm process: named segment, copy path", "[shm]") {
  RunPair(true, false);
}
TEST_CASE("shm process: inherited segment, CMA", "[shm]") {
  RunPair(false, true);
}

TEST_CASE("shm process: a peer killed mid-stream is reported", "[shm]") {
  std::string error;
  auto seg = ShmSegment::CreateAnonymous(2, kTestRingCells, &error).value();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto d = ShmDriver::Create(seg, {.self = 1, .local = 1}, &error);
    if (!d.ok()) _exit(3);
    if (ConnectTo(*d.value(), *seg, 0) != Status::kOk) _exit(4);
    for (uint64_t i = 0;; ++i) (void)Send(*d.value(), 0, &i, sizeof i);
  }
  auto d = ShmDriver::Create(seg, {.self = 0, .local = 0, .liveness_polls = 16},
                             &error);
  REQUIRE(d.ok());
  ShmDriver& drv = *d.value();
  RecordingSink sink;
  drv.SetSink(&sink, 0);
  REQUIRE(ConnectTo(drv, *seg, 1) == Status::kOk);
  std::vector<uint8_t> buf(64);
  TestCompletion r;
  REQUIRE(drv.PostRdvRecv(1, 9, buf.data(), buf.size(), &r) ==
          Status::kInProgress);
  while (sink.packets.size() < 1000) drv.Poll();
  REQUIRE(kill(child, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(waitpid(child, &wstatus, 0) == child);
  CHECK(WIFSIGNALED(wstatus));
  while (sink.failures.empty()) drv.Poll();  // bounded: liveness_polls
  CHECK(sink.failures[0].peer == 1);
  CHECK(sink.failures[0].data.find("rank 1 (pid " + std::to_string(child)) !=
        std::string::npos);
  CHECK(sink.failure_status == Status::kPeerFailed);
  CHECK(r.status == Status::kPeerFailed);
  // Every packet it sent before dying arrived, in order.
  for (size_t i = 0; i < sink.packets.size(); ++i) {
    uint64_t v;
    REQUIRE(sink.packets[i].data.size() == sizeof v);
    std::memcpy(&v, sink.packets[i].data.data(), sizeof v);
    REQUIRE(v == i);
  }
}

// A process asleep on WakeupFd() (armed, nothing pending) is woken by a
// local peer's exit, which its pidfd announces, and the peer's requests
// fail: a waiter never sleeps through a death on its node.
TEST_CASE("shm process: a peer's exit wakes a sleeper", "[shm]") {
  std::string error;
  auto seg = ShmSegment::CreateAnonymous(2, kTestRingCells, &error).value();
  int go[2];
  REQUIRE(pipe(go) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(go[1]);
    auto d = ShmDriver::Create(seg, {.self = 1, .local = 1}, &error);
    if (!d.ok()) _exit(3);
    if (ConnectTo(*d.value(), *seg, 0) != Status::kOk) _exit(4);
    char c;
    (void)read(go[0], &c, 1);  // until the parent sleeps (EOF)
    _exit(0);
  }
  close(go[0]);
  // liveness_polls high: only the wake-up can find the death quickly.
  auto d = ShmDriver::Create(
      seg, {.self = 0, .local = 0, .liveness_polls = 1 << 30}, &error);
  REQUIRE(d.ok());
  ShmDriver& drv = *d.value();
  RecordingSink sink;
  drv.SetSink(&sink, 0);
  REQUIRE(ConnectTo(drv, *seg, 1) == Status::kOk);
  std::vector<uint8_t> buf(64);
  TestCompletion r;
  REQUIRE(drv.PostRdvRecv(1, 9, buf.data(), buf.size(), &r) ==
          Status::kInProgress);
  REQUIRE(drv.WakeupFd() >= 0);
  REQUIRE(drv.Arm() == Status::kOk);
  close(go[1]);  // the child exits
  pollfd pfd{drv.WakeupFd(), POLLIN, 0};
  // Woken by the exit: a generous bound that only a lost wake-up reaches.
  REQUIRE(poll(&pfd, 1, 60000) == 1);
  int wstatus = 0;
  REQUIRE(waitpid(child, &wstatus, 0) == child);
  CHECK(WIFEXITED(wstatus));
  CHECK(drv.Arm() == Status::kBusy);  // the death is pending delivery
  drv.Poll();
  REQUIRE(sink.failures.size() == 1);
  CHECK(sink.failures[0].peer == 1);
  CHECK(sink.failures[0].data.find("rank 1 (pid " + std::to_string(child)) !=
        std::string::npos);
  CHECK(r.status == Status::kPeerFailed);
  // The dead peer's pidfd left the set: the next sleep is not cut short.
  REQUIRE(drv.Arm() == Status::kOk);
  pfd.revents = 0;
  CHECK(poll(&pfd, 1, 0) == 0);
}

TEST_CASE("shm process: a file that is not a segment is refused", "[shm]") {
  const std::string name = UniqueName();
  const std::string path = "/dev/shm/" + name;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  std::vector<char> junk(4096, 'j');
  REQUIRE(write(fd, junk.data(), junk.size()) == 4096);
  close(fd);
  std::string error;
  CHECK(ShmSegment::Open(name, &error).status() == Status::kInvalidArgument);
  CHECK(error.find("not a Rondo shm segment") != std::string::npos);
  unlink(path.c_str());
  CHECK(ShmSegment::Open(name, &error).status() == Status::kInvalidArgument);
  CHECK(ShmSegment::Open("../etc/passwd", &error).status() ==
        Status::kInvalidArgument);
  CHECK(error.find("invalid segment name") != std::string::npos);
}

}  // namespace
}  // namespace rondo::drivers::shm
