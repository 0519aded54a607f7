#include "topology/base/log.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/alloc_counter.h"
#include "topology/base/config_registry.h"
#include "topology/base/log_c.h"

namespace rondo::base {
namespace {

// A fresh log file for one test; the sink goes back to stderr after.
class LogFile {
 public:
  LogFile() {
    char tmpl[] = "/tmp/rondo_log_test_XXXXXX";
    const int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    close(fd);
    path_ = tmpl;
    REQUIRE(SetLogFile(path_));
  }
  ~LogFile() {
    SetJobIdentity(-1, "");
    SetLogFile("");
    std::remove(path_.c_str());
  }
  std::string Read() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string path_;
};

TEST_CASE("levels filter messages") {
  LogFile file;
  SetLogLevel(LogLevel::kWarn);
  RONDO_LOG_ERROR("e {}", 1);
  RONDO_LOG_WARN("w {}", 2);
  RONDO_LOG_INFO("i {}", 3);
  RONDO_LOG_DEBUG("d {}", 4);
  RONDO_LOG_TRACE("t {}", 5);
  CHECK(file.Read() == "rondo: error: e 1\nrondo: warning: w 2\n");
  SetLogLevel(LogLevel::kTrace);
  RONDO_LOG_TRACE("t {}", 6);
  SetLogLevel(LogLevel::kError);
  RONDO_LOG_WARN("w {}", 7);
  CHECK(file.Read() ==
        "rondo: error: e 1\nrondo: warning: w 2\nrondo: trace: t 6\n");
  SetLogLevel(LogLevel::kWarn);
}

TEST_CASE("a filtered message does not evaluate its formatting") {
  SetLogLevel(LogLevel::kWarn);
  int calls = 0;
  auto costly = [&] {
    ++calls;
    return 1;
  };
  RONDO_LOG_DEBUG("{}", costly());
  CHECK(calls == 0);
  CHECK(!LogEnabled(LogLevel::kDebug));
  CHECK(LogEnabled(LogLevel::kError));
}

TEST_CASE("a filtered message allocates nothing") {
  if (!testing::AllocCountingSupported()) {
    SUCCEED("allocations are not counted under a sanitizer");
    return;
  }
  SetLogLevel(LogLevel::kWarn);
  const std::string big(1000, 'x');
  const uint64_t before = testing::AllocCount();
  for (int i = 0; i < 100; ++i)
    RONDO_LOG_DEBUG("message {} with {} and {}", i, big, 3.5);
  CHECK(testing::AllocCount() - before == 0);
}

TEST_CASE("a short printed message allocates nothing either") {
  if (!testing::AllocCountingSupported()) {
    SUCCEED("allocations are not counted under a sanitizer");
    return;
  }
  LogFile file;
  SetLogLevel(LogLevel::kWarn);
  RONDO_LOG_WARN("warm {}", 0);  // the sink's first use
  const uint64_t before = testing::AllocCount();
  RONDO_LOG_WARN("dropped {} bytes from rank {}", 64, 3);
  CHECK(testing::AllocCount() - before == 0);
}

TEST_CASE("lines carry host and rank once the job has them") {
  LogFile file;
  SetLogLevel(LogLevel::kWarn);
  RONDO_LOG_WARN("before");
  SetJobIdentity(3, "node7");
  RONDO_LOG_WARN("after");
  rondo_log_message(RONDO_LOG_LEVEL_ERROR, "from C");
  rondo_log_message(RONDO_LOG_LEVEL_DEBUG, "filtered from C");
  CHECK(file.Read() ==
        "rondo: warning: before\nrondo[node7:3] warning: after\n"
        "rondo[node7:3] error: from C\n");
  CHECK(rondo_log_enabled(RONDO_LOG_LEVEL_WARN) == 1);
  CHECK(rondo_log_enabled(RONDO_LOG_LEVEL_INFO) == 0);
}

TEST_CASE("threads log whole lines while the identity changes") {
  LogFile file;
  SetLogLevel(LogLevel::kWarn);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) RONDO_LOG_WARN("thread {} line {}", t, i);
    });
  threads.emplace_back([] {
    for (int i = 0; i < 50; ++i) SetJobIdentity(i, "h");
  });
  for (auto& t : threads) t.join();
  std::istringstream lines(file.Read());
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    CHECK(line.find(" warning: thread ") != std::string::npos);
  CHECK(count == 200);
}

TEST_CASE("RONDO_LOG_LEVEL words") {
  CHECK(ParseLogLevel("error") == LogLevel::kError);
  CHECK(ParseLogLevel("warn") == LogLevel::kWarn);
  CHECK(ParseLogLevel("trace") == LogLevel::kTrace);
  try {
    ParseLogLevel("loud");
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) ==
          "Invalid value for RONDO_LOG_LEVEL: 'loud'. Expected: "
          "error|warn|info|debug|trace");
  }
}

TEST_CASE("the logger's variables are declared") {
  auto level = ConfigRegistry::Global().Find("RONDO_LOG_LEVEL");
  REQUIRE(level);
  CHECK(level->default_value == "warn");
  CHECK(ConfigRegistry::Global().Find("RONDO_LOG_FILE"));
}

TEST_CASE("an unknown variable gets one warning naming the nearest") {
  LogFile file;
  SetLogLevel(LogLevel::kWarn);
  setenv("RONDO_LOG_LEVLE", "debug", 1);
  CHECK(WarnUnknownVariablesOnce() == 1);
  CHECK(WarnUnknownVariablesOnce() == 0);  // once per process
  unsetenv("RONDO_LOG_LEVLE");
  const std::string text = file.Read();
  CHECK(text.find("RONDO_LOG_LEVLE is set but nothing in this program reads "
                  "it; did you mean RONDO_LOG_LEVEL?") != std::string::npos);
}

}  // namespace
}  // namespace rondo::base
