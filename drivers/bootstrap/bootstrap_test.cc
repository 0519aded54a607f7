// Unit tests of the singleton, of the rondo-run client's environment
// parsing, and of the client against an in-test fake rondo-run.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"
#include "drivers/bootstrap/launcher_bootstrap.h"
#include "drivers/bootstrap/singleton_bootstrap.h"

namespace rondo::drivers::bootstrap {
namespace {

using internal::Message;
using internal::MessageType;

const std::string kKey(64, 'c');

TEST_CASE("singleton: rank 0 of 1, local put/get", "[bootstrap]") {
  SingletonBootstrap b;
  CHECK(b.name() == "singleton");
  CHECK(b.rank() == 0);
  CHECK(b.size() == 1);
  const std::vector<uint8_t> v = {1, 2, 3};
  CHECK(b.Put("addr", v) == Status::kOk);
  CHECK(b.Fence() == Status::kOk);
  auto got = b.Get(0, "addr");
  REQUIRE(got.ok());
  CHECK(got.value() == v);
  CHECK(b.Get(1, "addr").status() == Status::kInvalidArgument);
  CHECK(b.Get(0, "other").status() == Status::kInvalidArgument);
  CHECK(b.Put("bad key", v) == Status::kInvalidArgument);
  CHECK(b.Put("big", std::vector<uint8_t>((1 << 20) + 1)) ==
        Status::kInvalidArgument);
  CHECK(b.Barrier() == Status::kOk);
  CHECK(b.PollFailures().empty());
  CHECK(b.Finalize() == Status::kOk);
  CHECK(b.Finalize() == Status::kOk);
}

TEST_CASE("no launcher variables: the singleton is chosen", "[bootstrap]") {
  REQUIRE(std::getenv("PMIX_NAMESPACE") == nullptr);
  REQUIRE(std::getenv("RONDO_RUN_SOCKET") == nullptr);
  std::string error;
  auto b = BootstrapFromEnvironment(&error);
  REQUIRE(b.ok());
  CHECK(b.value()->name() == "singleton");
}

// A fake environment for UnsupportedLauncher.
std::map<std::string, std::string> g_env;
const char* FakeEnv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST_CASE("srun without --mpi=pmix and PMI-1 launchers are named",
          "[bootstrap]") {
  g_env = {};
  CHECK(UnsupportedLauncher(&FakeEnv) == "");
  // One task, or a step with PMIx: fine.
  g_env = {{"SLURM_STEP_NUM_TASKS", "1"}, {"SLURM_STEP_ID", "0"}};
  CHECK(UnsupportedLauncher(&FakeEnv) == "");
  g_env = {{"SLURM_STEP_NUM_TASKS", "4"},
           {"PMIX_NAMESPACE", "slurm.pmix.7.0"}};
  CHECK(UnsupportedLauncher(&FakeEnv) == "");
  // srun -n 4 without --mpi=pmix.
  g_env = {{"SLURM_STEP_NUM_TASKS", "4"},
           {"SLURM_STEP_ID", "0"},
           {"SLURM_JOB_ID", "7"},
           {"SLURM_MPI_TYPE", "none"}};
  std::string why = UnsupportedLauncher(&FakeEnv);
  CHECK_THAT(why, Catch::Contains("one of 4 tasks of a Slurm job step (7.0)"));
  CHECK_THAT(why, Catch::Contains("--mpi=pmix"));
  CHECK_THAT(why, Catch::Contains("SLURM_MPI_TYPE=none"));
  // Hydra (PMI-1).
  g_env = {{"PMI_SIZE", "3"}, {"PMI_RANK", "1"}};
  why = UnsupportedLauncher(&FakeEnv);
  CHECK_THAT(why, Catch::Contains("PMI-1"));
  CHECK_THAT(why, Catch::Contains("rondo-run"));
  // Garbage counts are not launchers.
  g_env = {{"SLURM_STEP_NUM_TASKS", "x4"}, {"PMI_SIZE", "-2"}};
  CHECK(UnsupportedLauncher(&FakeEnv) == "");
}

std::optional<LauncherEnvironment> Parse(
    const std::map<std::string, std::string>& vars, std::string* error) {
  return ParseLauncherEnvironment(
      [&](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      },
      error);
}

TEST_CASE("rondo-run environment is validated", "[bootstrap]") {
  std::map<std::string, std::string> vars = {
      {"RONDO_RUN_SOCKET", "/tmp/x/socket"},
      {"RONDO_RUN_KEY", kKey},
      {"RONDO_RANK", "2"},
      {"RONDO_SIZE", "4"},
  };
  std::string error;
  auto env = Parse(vars, &error);
  REQUIRE(env.has_value());
  CHECK(env->rank == 2);
  CHECK(env->size == 4);
  CHECK(env->local_rank == 2);  // defaults when RONDO_LOCAL_* are unset
  CHECK(env->local_size == 4);

  auto rejects = [&](const std::string& name, const char* value,
                     const std::string& message) {
    auto bad = vars;
    if (value == nullptr)
      bad.erase(name);
    else
      bad[name] = value;
    std::string why;
    CHECK_FALSE(Parse(bad, &why).has_value());
    CHECK_THAT(why, Catch::Contains(message));
  };
  rejects("RONDO_RANK", "4", "Invalid value for RONDO_RANK: '4'. Expected: an integer in 0..3");
  rejects("RONDO_RANK", "-1", "RONDO_RANK");
  rejects("RONDO_RANK", "1x", "RONDO_RANK: '1x'");
  rejects("RONDO_RANK", nullptr, "RONDO_RANK is not set");
  rejects("RONDO_SIZE", "0", "an integer in 1..4096");
  rejects("RONDO_SIZE", "5000", "RONDO_SIZE");
  rejects("RONDO_RUN_KEY", "abc", "Expected: 64 hex digits");
  rejects("RONDO_RUN_KEY", std::string(64, 'g').c_str(), "64 hex digits");
  rejects("RONDO_RUN_SOCKET", "", "RONDO_RUN_SOCKET");
  rejects("RONDO_RUN_SOCKET", std::string(200, 'p').c_str(), "1..107");
  rejects("RONDO_LOCAL_RANK", "4", "RONDO_LOCAL_RANK");
}

TEST_CASE("connecting to a missing socket fails with the path",
          "[bootstrap]") {
  LauncherEnvironment env;
  env.socket_path = "/nonexistent-rondo-dir/socket";
  env.key_hex = kKey;
  std::string error;
  auto b = LauncherBootstrap::Connect(env, &error);
  CHECK(b.status() == Status::kPeerFailed);
  CHECK_THAT(error, Catch::Contains("/nonexistent-rondo-dir/socket"));
}

// A one-connection fake rondo-run on a socket in a private /tmp directory.
// Its methods run on a server thread, so they use no Catch2 assertion
// (Catch2 is not thread-safe): a failure is recorded in error() and closes
// the client connection, so the client never waits forever.
class FakeLauncher {
 public:
  FakeLauncher() {
    char tmpl[] = "/tmp/rondo-bootstrap-test.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/socket";
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    REQUIRE(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr),
                 sizeof(addr)) == 0);
    REQUIRE(listen(listen_fd_, 4) == 0);
  }
  ~FakeLauncher() {
    if (fd_ >= 0) close(fd_);
    close(listen_fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  LauncherEnvironment Environment() const {
    LauncherEnvironment env;
    env.socket_path = path_;
    env.key_hex = kKey;
    env.rank = 0;
    env.size = 2;
    return env;
  }
  // Accepts one client and reads frames until `type` arrives.
  Message Expect(MessageType type) {
    if (fd_ < 0) fd_ = accept(listen_fd_, nullptr, nullptr);
    Message m;
    while (error_.empty()) {
      auto r = reader_.Next(&m);
      if (r == internal::FrameReader::Result::kFrame) {
        if (m.type == type) return m;
        continue;
      }
      if (r == internal::FrameReader::Result::kMalformed) {
        Error("malformed frame from the client: " + reader_.error());
        break;
      }
      uint8_t buf[4096];
      ssize_t n = fd_ < 0 ? -1 : recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        Error("connection ended while waiting for " +
              std::string(internal::MessageTypeName(type)));
        break;
      }
      reader_.Append({buf, static_cast<size_t>(n)});
    }
    return Message{};
  }
  void SendBytes(const std::vector<uint8_t>& bytes) {
    if (fd_ < 0 || send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
                       static_cast<ssize_t>(bytes.size()))
      Error("send failed");
  }
  void Send(const Message& m) { SendBytes(internal::EncodeFrame(m)); }
  void CloseClient() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  // Empty unless the server thread saw something wrong (read after join).
  const std::string& error() const { return error_; }

 private:
  std::string dir_, path_;
  int listen_fd_ = -1, fd_ = -1;
  internal::FrameReader reader_;
  std::string error_;

  void Error(const std::string& what) {
    if (error_.empty()) error_ = what;
    CloseClient();
  }
};

Message Make(MessageType type) {
  Message m;
  m.type = type;
  return m;
}

TEST_CASE("client: fence delivers values, failures are polled once",
          "[bootstrap]") {
  FakeLauncher server;
  std::thread serve([&] {
    Message hello = server.Expect(MessageType::kHello);
    if (hello.key != kKey || hello.rank != 0) return server.CloseClient();
    server.Send(Make(MessageType::kWelcome));
    Message put = server.Expect(MessageType::kPut);
    server.Expect(MessageType::kFence);
    Message kv = Make(MessageType::kKeyValue);
    kv.rank = 1;
    kv.key = put.key;
    kv.value = {9, 9};
    server.Send(kv);
    Message done = Make(MessageType::kFenceDone);
    done.ok = true;
    server.Send(done);
    server.Expect(MessageType::kBarrier);
    Message failure = Make(MessageType::kFailure);
    failure.rank = 1;
    failure.text = "rank 1 was killed by signal 9 (Killed)";
    server.Send(failure);
    Message bd = Make(MessageType::kBarrierDone);
    bd.ok = false;
    server.Send(bd);
    server.Expect(MessageType::kFini);
  });
  std::string error;
  auto created = LauncherBootstrap::Connect(server.Environment(), &error);
  REQUIRE(created.ok());
  LauncherBootstrap& b = *created.value();
  CHECK(b.name() == "rondo-run");
  CHECK(b.PollFailures().empty());
  CHECK(b.Put("addr", std::vector<uint8_t>{1}) == Status::kOk);
  CHECK(b.Fence() == Status::kOk);
  auto got = b.Get(1, "addr");
  REQUIRE(got.ok());
  CHECK(got.value() == std::vector<uint8_t>{9, 9});
  CHECK(b.Get(2, "addr").status() == Status::kInvalidArgument);
  CHECK(b.Barrier() == Status::kPeerFailed);
  auto failures = b.PollFailures();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].rank == 1);
  CHECK(failures[0].what == "rank 1 was killed by signal 9 (Killed)");
  CHECK(b.PollFailures().empty());
  CHECK(b.Finalize() == Status::kOk);
  CHECK(b.Finalize() == Status::kOk);  // idempotent: one FINI
  serve.join();
  CHECK(server.error() == "");
}

TEST_CASE("client: a malformed frame or a closed socket fails the fence",
          "[bootstrap]") {
  const bool malformed = GENERATE(true, false);
  FakeLauncher server;
  std::thread serve([&] {
    server.Expect(MessageType::kHello);
    server.Send(Make(MessageType::kWelcome));
    server.Expect(MessageType::kFence);
    if (malformed)
      server.SendBytes({0xff, 0xff, 0xff, 0x7f, 1});  // absurd length
    else
      server.CloseClient();
  });
  std::string error;
  auto created = LauncherBootstrap::Connect(server.Environment(), &error);
  REQUIRE(created.ok());
  LauncherBootstrap& b = *created.value();
  CHECK(b.Fence() == Status::kPeerFailed);
  auto failures = b.PollFailures();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].rank == -1);
  CHECK_THAT(failures[0].what,
             Catch::Contains(malformed ? "malformed" : "closed"));
  CHECK(b.Barrier() == Status::kPeerFailed);  // and never hangs afterwards
  serve.join();
  CHECK(server.error() == "");
}

TEST_CASE("client: a refused HELLO is reported", "[bootstrap]") {
  FakeLauncher server;
  std::thread serve([&] {
    server.Expect(MessageType::kHello);
    server.CloseClient();
  });
  std::string error;
  auto created = LauncherBootstrap::Connect(server.Environment(), &error);
  CHECK(created.status() == Status::kPeerFailed);
  CHECK_THAT(error, Catch::Contains("refused the connection of rank 0"));
  serve.join();
  CHECK(server.error() == "");
}

}  // namespace
}  // namespace rondo::drivers::bootstrap
