// Rondo's logger: the library's one voice on stderr (UCX's ucs_log with
// UCX_LOG_LEVEL; abseil's LOG). Library code never calls fprintf(stderr);
// it writes
//
//   RONDO_LOG_WARN("dropped a bad packet of {} bytes from rank {}", len, peer);
//
// and the line reads "rondo[host:rank] warning: dropped ..." once the job's
// identity is known (SetJobIdentity, called by nmad and MadMPI at start-up),
// "rondo: warning: ..." before. Tools and benchmarks keep printing to their
// users as they like.
//
// Levels: RONDO_LOG_LEVEL = error|warn|info|debug|trace (default warn).
// Sink: stderr, or the file RONDO_LOG_FILE (opened for appending on the
// first printed line; every line is one write(2), so ranks sharing a file
// do not interleave within a line).
//
// Cost: a message below the level costs one relaxed atomic load and a
// compare; its arguments are not formatted and nothing is allocated. A
// printed message is formatted with fmt into a stack buffer (500 bytes
// before fmt allocates) and written with one write(2) under a mutex.
//
// The one instance: the level, the sink and the job identity are process
// state (as UCX's ucs_global_opts), documented here as this package's
// second exception to "no global mutable state" besides the configuration
// registry (config_registry.h). All functions are thread-safe.
#ifndef RONDO_TOPOLOGY_BASE_LOG_H_
#define RONDO_TOPOLOGY_BASE_LOG_H_

#include <fmt/format.h>

#include <atomic>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

namespace rondo::base {

enum class LogLevel : int { kError = 0, kWarn, kInfo, kDebug, kTrace };

// "error", "warning", "info", "debug", "trace".
std::string_view LogLevelName(LogLevel level);

namespace internal {
// -1 until the first use reads RONDO_LOG_LEVEL.
extern std::atomic<int> log_level;
int InitLogLevel();
void LogWrite(LogLevel level, std::string_view message);
}  // namespace internal

// Whether a message at `level` is printed. One relaxed load.
inline bool LogEnabled(LogLevel level) {
  int current = internal::log_level.load(std::memory_order_relaxed);
  if (__builtin_expect(current < 0, 0)) current = internal::InitLogLevel();
  return static_cast<int>(level) <= current;
}

// Overrides RONDO_LOG_LEVEL (tests, tools).
void SetLogLevel(LogLevel level);
// Parses "error|warn|info|debug|trace"; throws std::invalid_argument
// "Invalid value for RONDO_LOG_LEVEL: ...".
LogLevel ParseLogLevel(std::string_view text);
// Sends lines to `path` (appending), or to stderr when empty. Returns false
// (and keeps the current sink) when the file cannot be opened.
bool SetLogFile(const std::string& path);
// The prefix "rondo[host:rank]" from now on. Called once the job's rank is
// known (nmad/node.cc's NodeEngineOptions: MadMPI's MPI_Init, rondo-info
// in a job). A negative rank goes back to the plain "rondo" prefix.
void SetJobIdentity(int rank, std::string_view host);

namespace internal {
template <typename... Args>
void LogFormat(LogLevel level, fmt::format_string<Args...> format,
               Args&&... args) {
  fmt::memory_buffer buffer;
  fmt::format_to(std::back_inserter(buffer), format,
                 std::forward<Args>(args)...);
  LogWrite(level, std::string_view(buffer.data(), buffer.size()));
}
}  // namespace internal

// Once per process: one warning for each RONDO_* variable set in the
// environment that nothing linked into this program declares, naming the
// nearest declared one ("RONDO_QUEUEE ... did you mean RONDO_QUEUE?").
// Called at engine, nmad and MadMPI start-up; returns how many it warned
// about on the first call, 0 afterwards.
int WarnUnknownVariablesOnce();

// Prints and then aborts (for contract violations found at run time).
[[noreturn]] void LogFatalAndAbort(std::string_view message);

}  // namespace rondo::base

#define RONDO_LOG(level, ...)                                   \
  do {                                                          \
    if (::rondo::base::LogEnabled(level))                       \
      ::rondo::base::internal::LogFormat(level, __VA_ARGS__);   \
  } while (0)

#define RONDO_LOG_ERROR(...) RONDO_LOG(::rondo::base::LogLevel::kError, __VA_ARGS__)
#define RONDO_LOG_WARN(...) RONDO_LOG(::rondo::base::LogLevel::kWarn, __VA_ARGS__)
#define RONDO_LOG_INFO(...) RONDO_LOG(::rondo::base::LogLevel::kInfo, __VA_ARGS__)
#define RONDO_LOG_DEBUG(...) RONDO_LOG(::rondo::base::LogLevel::kDebug, __VA_ARGS__)
#define RONDO_LOG_TRACE(...) RONDO_LOG(::rondo::base::LogLevel::kTrace, __VA_ARGS__)

// Formats (even below the level), prints as an error, and aborts.
#define RONDO_LOG_FATAL(...) \
  ::rondo::base::LogFatalAndAbort(::fmt::format(__VA_ARGS__))

#endif  // RONDO_TOPOLOGY_BASE_LOG_H_
