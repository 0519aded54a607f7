#include "topology/base/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "topology/base/check_failed.h"
#include "topology/base/config_registry.h"
#include "topology/base/log_c.h"

namespace rondo::base {

namespace {

std::vector<ConfigDecl> LogDeclarations() {
  return {
      {"RONDO_LOG_LEVEL", "log", "choice", "warn",
       "error|warn|info|debug|trace",
       "least severe message the library prints"},
      {"RONDO_LOG_FILE", "log", "string", "",
       "a file path, or empty for stderr",
       "file the library's messages are appended to"},
  };
}

const ConfigRegistration kLogConfig(LogDeclarations);

// The logger's state (the documented instance of log.h's banner). The mutex
// orders lines and guards the sink and the prefix; it is only taken to
// print.
struct Sink {
  std::mutex mu;
  int fd = 2;             // stderr, or RONDO_LOG_FILE
  bool file_read = false; // RONDO_LOG_FILE looked at
  char prefix[128] = "rondo";
};

Sink& TheSink() {
  static Sink* sink = new Sink;  // never destroyed: logging works at exit
  return *sink;
}

void WriteAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    const ssize_t n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
}

int OpenLogFile(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

namespace internal {

constinit std::atomic<int> log_level{-1};

int InitLogLevel() {
  int level = static_cast<int>(LogLevel::kWarn);
  try {
    level = static_cast<int>(ParseLogLevel(
        ConfigRegistry::Global().GetString("RONDO_LOG_LEVEL")));
  } catch (const std::invalid_argument& e) {
    // The logger cannot refuse to start: say so at the default level.
    log_level.store(level, std::memory_order_relaxed);
    LogWrite(LogLevel::kError, e.what());
    return level;
  }
  int expected = -1;
  // SetLogLevel may have raced ahead: its word wins.
  if (!log_level.compare_exchange_strong(expected, level,
                                         std::memory_order_relaxed))
    return expected;
  return level;
}

void LogWrite(LogLevel level, std::string_view message) {
  Sink& sink = TheSink();
  std::lock_guard<std::mutex> lock(sink.mu);
  if (!sink.file_read) {
    sink.file_read = true;
    const std::string path =
        ConfigRegistry::Global().GetString("RONDO_LOG_FILE");
    if (!path.empty()) {
      if (const int fd = OpenLogFile(path); fd >= 0) sink.fd = fd;
    }
  }
  fmt::memory_buffer line;
  const std::string_view prefix(sink.prefix);
  fmt::format_to(std::back_inserter(line), "{}{} {}: {}", prefix,
                 prefix == "rondo" ? ":" : "", LogLevelName(level), message);
  if (message.empty() || message.back() != '\n') line.push_back('\n');
  WriteAll(sink.fd, line.data(), line.size());
}

void CheckFailed(const char* file, int line, const char* condition,
                 const char* message) {
  LogFatalAndAbort(fmt::format("{}:{}: check failed: {}: {}", file, line,
                               condition, message));
}

}  // namespace internal

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kTrace: return "trace";
  }
  return "?";
}

LogLevel ParseLogLevel(std::string_view text) {
  constexpr std::string_view kNames[] = {"error", "warn", "info", "debug",
                                         "trace"};
  for (int i = 0; i < 5; ++i)
    if (text == kNames[i]) return static_cast<LogLevel>(i);
  ThrowInvalidValue("RONDO_LOG_LEVEL", text, "error|warn|info|debug|trace");
}

void SetLogLevel(LogLevel level) {
  internal::log_level.store(static_cast<int>(level),
                            std::memory_order_relaxed);
}

bool SetLogFile(const std::string& path) {
  Sink& sink = TheSink();
  const int fd = path.empty() ? 2 : OpenLogFile(path);
  if (fd < 0) return false;
  std::lock_guard<std::mutex> lock(sink.mu);
  if (sink.fd != 2) ::close(sink.fd);
  sink.fd = fd;
  sink.file_read = true;
  return true;
}

void SetJobIdentity(int rank, std::string_view host) {
  Sink& sink = TheSink();
  std::lock_guard<std::mutex> lock(sink.mu);
  if (rank < 0) {
    std::snprintf(sink.prefix, sizeof(sink.prefix), "rondo");
    return;
  }
  auto end = fmt::format_to_n(sink.prefix, sizeof(sink.prefix) - 1,
                              "rondo[{}:{}]", host, rank);
  *end.out = '\0';
}

int WarnUnknownVariablesOnce() {
  static std::once_flag once;
  int warned = 0;
  std::call_once(once, [&] {
    for (const auto& u : ConfigRegistry::Global().UnknownVariables()) {
      RONDO_LOG_WARN(
          "{} is set but nothing in this program reads it; did you mean {}? "
          "(rondo-info --config lists every variable)",
          u.name, u.nearest.empty() ? "(none declared)" : u.nearest);
      ++warned;
    }
  });
  return warned;
}

void LogFatalAndAbort(std::string_view message) {
  internal::LogWrite(LogLevel::kError, message);
  std::abort();
}

}  // namespace rondo::base

extern "C" int rondo_log_enabled(int level) {
  return rondo::base::LogEnabled(static_cast<rondo::base::LogLevel>(level));
}

extern "C" void rondo_log_message(int level, const char* message) {
  if (rondo::base::LogEnabled(static_cast<rondo::base::LogLevel>(level)))
    rondo::base::internal::LogWrite(static_cast<rondo::base::LogLevel>(level),
                                    message);
}
