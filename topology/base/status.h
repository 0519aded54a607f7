// Status and Result<T>: how Rondo's data path reports outcomes, in every
// layer (topology/base is below all of them; engine/status.h forwards to it
// for the code that names them engine::Status and engine::Result).
//
// As in UCX, "in progress" and "retry later" are outcomes, not errors. Data
// path calls (submit, poll, wait, progress) return a Status and never throw;
// set-up calls (building an engine, parsing options) throw
// std::invalid_argument naming the bad value and what is allowed.
#ifndef RONDO_TOPOLOGY_BASE_STATUS_H_
#define RONDO_TOPOLOGY_BASE_STATUS_H_

#include <string_view>
#include <utility>
#include <variant>

namespace rondo::base {

enum class [[nodiscard]] Status {
  kOk = 0,
  kInProgress,       // started, not finished: poll or wait
  kNoResource,       // temporarily out of a resource: retry later
  kInvalidArgument,  // the call's arguments are wrong (nothing was done)
  kBusy,             // the object is in use (e.g. a task already queued)
  kTruncated,        // data did not fit; what fits was delivered
  kPeerFailed,       // a peer process died or became unreachable
  kCanceled,         // the operation was canceled (e.g. engine shut down)
  kShutdown,         // the engine no longer accepts work
  kTimedOut,         // a bounded wait expired
  kUnsupported,      // not available in this build or configuration
  kInternal,         // a bug or a failure of a lower library
};

// "ok", "in progress", ... : a short lower-case description.
std::string_view StatusName(Status status) noexcept;

inline bool IsError(Status s) noexcept {
  return s != Status::kOk && s != Status::kInProgress;
}

// A value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(status) {}      // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::kOk : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rondo::base

#endif  // RONDO_TOPOLOGY_BASE_STATUS_H_
