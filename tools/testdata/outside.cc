// A program outside the Bazel tree, built against an installed Rondo:
//   g++ outside.cc $(pkg-config --cflags --libs rondo)
// Runs an engine task, then sends messages to itself through an nmad Session
// over the singleton bootstrap (eager and rendezvous sizes) and checks them.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "nmad/core.h"

using rondo::engine::Engine;
using rondo::engine::Status;
using rondo::engine::StatusName;
using rondo::engine::Task;
using rondo::engine::TaskOptions;
using rondo::engine::TaskResult;

namespace {

int Fail(const char* what, Status s, const std::string& detail = "") {
  std::fprintf(stderr, "outside: %s: %s %s\n", what,
               std::string(StatusName(s)).c_str(), detail.c_str());
  return 1;
}

struct Counter {
  Task task;
  int polls = 0;
};

TaskResult Poll(void* arg) noexcept {
  auto* c = static_cast<Counter*>(arg);
  return ++c->polls == 3 ? TaskResult::kDone : TaskResult::kIdle;
}

// Sends `len` bytes to this rank itself and checks what arrives.
int SelfMessage(rondo::nmad::Core& core, rondo::nmad::Session& session,
                int tag, size_t len) {
  std::vector<unsigned char> out(len), in(len, 0);
  for (size_t i = 0; i < len; ++i) out[i] = static_cast<unsigned char>(i * 7 + tag);
  rondo::nmad::Request recv, send;
  Status s = session.Irecv(core.rank(), tag, in.data(), in.size(), recv);
  if (s != Status::kOk) return Fail("Irecv", s);
  s = session.Isend(core.rank(), tag, out.data(), out.size(), send);
  if (s != Status::kOk) return Fail("Isend", s);
  if ((s = core.Wait(send)) != Status::kOk) return Fail("Wait(send)", s);
  if ((s = core.Wait(recv)) != Status::kOk) return Fail("Wait(recv)", s);
  const rondo::nmad::RecvInfo& info = recv.info();
  if (info.source != core.rank() || info.tag != tag || info.size != len ||
      info.received != len || in != out) {
    std::fprintf(stderr, "outside: message %d of %zu bytes came back wrong\n",
                 tag, len);
    return 1;
  }
  std::printf("outside: message tag %d, %zu bytes: ok\n", tag, len);
  return 0;
}

}  // namespace

int main() {
  setenv("RONDO_PROGRESS", "none", 1);  // no progress thread: poll from here
  Engine engine;

  Counter counter;
  counter.task.Init(&Poll, &counter, {0}, TaskOptions{.repeat = true, .name = "outside"});
  Status s = engine.Submit(counter.task);
  if (s != Status::kOk) return Fail("Submit", s, engine.SubmitError(counter.task));
  if ((s = engine.Wait(counter.task)) != Status::kOk) return Fail("Wait", s);
  std::printf("outside: engine task polled %d times\n", counter.polls);

  std::string error;
  auto bootstrap = rondo::drivers::bootstrap::BootstrapFromEnvironment(&error);
  if (!bootstrap.ok()) return Fail("bootstrap", bootstrap.status(), error);
  auto core = rondo::nmad::Core::Create(
      engine, std::move(bootstrap).value(),
      rondo::nmad::NmadOptions::FromEnvironment(), &error);
  if (!core.ok()) return Fail("Core::Create", core.status(), error);
  rondo::nmad::Core& c = *core.value();
  std::printf("outside: rank %d of %d, %s bootstrap\n", c.rank(), c.size(),
              std::string(c.bootstrap().name()).c_str());

  auto session = c.OpenSession("outside", {}, &error);
  if (!session.ok()) return Fail("OpenSession", session.status(), error);
  if (SelfMessage(c, *session.value(), 1, 64) != 0) return 1;
  if (SelfMessage(c, *session.value(), 2, 256 * 1024) != 0) return 1;  // rendezvous
  std::printf("outside: ok\n");
  return 0;
}
