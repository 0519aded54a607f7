// bootstrap_check: a rank program for the bootstrap's multi-process tests.
//
//   bootstrap_check            Put/Fence/Get every rank's value/Barrier
//   bootstrap_check die        as above, then rank 1 SIGKILLs itself after
//                              the fence; the others must see kPeerFailed
//                              from Barrier and rank 1 in PollFailures
//   bootstrap_check diehang    as die, but the survivors then wait for a
//                              signal (rondo-run's --kill-grace ends them)
//   bootstrap_check wrongkey   first connects with a modified key (must be
//                              refused), then runs the normal check
//   bootstrap_check pause F    normal check, then rank 0 writes "ready" to
//                              file/fifo F and every rank waits for a signal
//
// Prints one line per rank on stdout; exits 0 when every check held, else
// 1 with a message on stderr.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/bootstrap/bootstrap.h"

namespace rondo::drivers::bootstrap {
namespace {

std::vector<uint8_t> ValueOf(int rank) {
  std::string text = "addr-of-rank-" + std::to_string(rank);
  std::vector<uint8_t> v(text.begin(), text.end());
  for (int i = 0; i <= rank % 64; ++i) v.push_back(static_cast<uint8_t>(rank * 7 + i));
  return v;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "bootstrap_check: FAILED: %s\n", what.c_str());
  return 1;
}

// Put, Fence, Get and check every rank's value.
int Exchange(Bootstrap& b) {
  const std::vector<uint8_t> mine = ValueOf(b.rank());
  if (Status s = b.Put("addr", mine); s != Status::kOk)
    return Fail("Put: " + std::string(engine::StatusName(s)));
  if (Status s = b.Fence(); s != Status::kOk)
    return Fail("Fence: " + std::string(engine::StatusName(s)));
  for (int r = 0; r < b.size(); ++r) {
    auto got = b.Get(r, "addr");
    if (!got.ok())
      return Fail("rank " + std::to_string(b.rank()) + ": Get(" +
                  std::to_string(r) + "): " +
                  std::string(engine::StatusName(got.status())));
    if (got.value() != ValueOf(r))
      return Fail("rank " + std::to_string(b.rank()) + ": Get(" +
                  std::to_string(r) + ") returned the wrong value");
  }
  if (b.Get(0, "never-put").ok()) return Fail("Get of a missing key succeeded");
  if (b.Get(b.size(), "addr").ok()) return Fail("Get of a bad rank succeeded");
  return 0;
}

int WrongKey() {
  const char* key = std::getenv("RONDO_RUN_KEY");
  if (key == nullptr) return Fail("wrongkey needs rondo-run (RONDO_RUN_KEY)");
  const std::string good = key;
  std::string bad = good;
  bad[0] = bad[0] == '0' ? '1' : '0';
  setenv("RONDO_RUN_KEY", bad.c_str(), 1);
  std::string error;
  auto b = BootstrapFromEnvironment(&error);
  setenv("RONDO_RUN_KEY", good.c_str(), 1);
  if (b.ok()) return Fail("a connection with a wrong key was accepted");
  if (b.status() != Status::kPeerFailed ||
      error.find("refused") == std::string::npos)
    return Fail("unexpected error for a wrong key: " + error);
  std::printf("bootstrap_check: wrong key refused: %s\n", error.c_str());
  return 0;
}

int Main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode != "" && mode != "die" && mode != "diehang" &&
      mode != "wrongkey" && mode != "pause")
    return Fail("unknown mode '" + std::string(mode) +
                "'; allowed: (none), die, diehang, wrongkey, pause FILE");
  if (mode == "pause" && argc < 3) return Fail("pause needs a FILE");
  if (mode == "wrongkey")
    if (int rc = WrongKey(); rc != 0) return rc;

  std::string error;
  auto created = BootstrapFromEnvironment(&error);
  if (!created.ok())
    return Fail("BootstrapFromEnvironment: " +
                std::string(engine::StatusName(created.status())) + ": " +
                error);
  Bootstrap& b = *created.value();
  std::printf("bootstrap_check: rank %d of %d via %s (local %d of %d)\n",
              b.rank(), b.size(), std::string(b.name()).c_str(),
              b.local_rank(), b.local_size());
  std::fflush(stdout);
  if (int rc = Exchange(b); rc != 0) return rc;

  if (mode == "die" || mode == "diehang") {
    if (b.size() < 2) return Fail("die needs at least 2 ranks");
    if (b.rank() == 1) raise(SIGKILL);
    if (Status s = b.Barrier(); s != Status::kPeerFailed)
      return Fail("Barrier after rank 1 died returned '" +
                  std::string(engine::StatusName(s)) + "', expected 'peer failed'");
    std::vector<PeerFailure> failures = b.PollFailures();
    bool named = false;
    for (const PeerFailure& f : failures) named = named || f.rank == 1;
    if (!named) {
      std::string got;
      for (const PeerFailure& f : failures)
        got += " [rank " + std::to_string(f.rank) + ": " + f.what + "]";
      return Fail("PollFailures did not name rank 1; got:" +
                  (got.empty() ? std::string(" nothing") : got));
    }
    if (!b.PollFailures().empty())
      return Fail("PollFailures returned the same failure twice");
    std::printf("bootstrap_check: rank %d saw the failure of rank 1: %s\n",
                b.rank(), failures.front().what.c_str());
    std::fflush(stdout);
    if (mode == "diehang")
      for (;;) pause();
    (void)b.Finalize();
    return 0;
  }

  if (Status s = b.Barrier(); s != Status::kOk)
    return Fail("Barrier: " + std::string(engine::StatusName(s)));
  if (!b.PollFailures().empty()) return Fail("PollFailures reported a failure");

  if (mode == "pause") {
    if (b.rank() == 0) {
      // Every rank is past the barrier: tell the test it may signal us.
      FILE* f = std::fopen(argv[2], "w");
      if (f == nullptr) return Fail(std::string("cannot open ") + argv[2]);
      std::fputs("ready\n", f);
      std::fclose(f);
    }
    for (;;) pause();
  }

  if (Status s = b.Finalize(); s != Status::kOk)
    return Fail("Finalize: " + std::string(engine::StatusName(s)));
  std::printf("bootstrap_check: rank %d ok\n", b.rank());
  return 0;
}

}  // namespace
}  // namespace rondo::drivers::bootstrap

// LeakSanitizer: libpmix (4.2) leaks a few bytes it strdup()s in
// pmix_rte_init and pmix_bfrops_base_value_load; only its frames are
// suppressed, leaks in Rondo's code are still reported.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpmix.so\n";
}

int main(int argc, char** argv) {
  return rondo::drivers::bootstrap::Main(argc, argv);
}
