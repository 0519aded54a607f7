// Unit tests of the MPI benchmark programs' C helpers
// (bench/common/prog_util.h): order statistics, strict number parsing and the
// MPI_Finalize watchdog (a finalize that returns is passed through; one that
// never returns ends the process with status 5 after on_hang ran).
#include "bench/common/prog_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <vector>

#include <catch2/catch.hpp>

namespace {

int FinalizeReturns7() { return 7; }

int FinalizeNeverReturns() {
  for (;;) pause();
}

void WriteMarker(void* ctx) {
  const int fd = *static_cast<int*>(ctx);
  const char byte = 'h';
  (void)!write(fd, &byte, 1);
}

}  // namespace

TEST_CASE("BenchSummarize: nearest-rank order statistics") {
  std::vector<double> v = {5, 1, 4, 2, 3};
  const BenchStats s = BenchSummarize(v.data(), static_cast<int>(v.size()));
  CHECK(s.min == 1);
  CHECK(s.median == 3);
  CHECK(s.max == 5);
  CHECK(s.p99 == 5);
  CHECK(s.mean == 3);
  const BenchStats empty = BenchSummarize(nullptr, 0);
  CHECK(empty.median == 0);
}

TEST_CASE("BenchParseDouble: accepts a number in range") {
  CHECK(BenchParseDouble("t", "2.5", "--x", 0, 10) == 2.5);
}

TEST_CASE("BenchFinalizeWatched: a finalize that returns is passed through") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  CHECK(BenchFinalizeWatched(FinalizeReturns7, 1, WriteMarker, &fds[1]) == 7);
  // The watchdog did not fire: nothing was written.
  close(fds[1]);
  char byte;
  CHECK(read(fds[0], &byte, 1) == 0);
  close(fds[0]);
}

TEST_CASE("BenchFinalizeWatched: a hung finalize ends the process with 5") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    BenchFinalizeWatched(FinalizeNeverReturns, 1, WriteMarker, &fds[1]);
    _exit(0);  // not reached: the watchdog exits with 5
  }
  close(fds[1]);
  char byte = 0;
  CHECK(read(fds[0], &byte, 1) == 1);  // on_hang ran
  CHECK(byte == 'h');
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 5);
}
