#include "topology/base/status.h"

namespace rondo::base {

std::string_view StatusName(Status status) noexcept {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kInProgress: return "in progress";
    case Status::kNoResource: return "no resource (retry later)";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kBusy: return "busy";
    case Status::kTruncated: return "truncated";
    case Status::kPeerFailed: return "peer failed";
    case Status::kCanceled: return "canceled";
    case Status::kShutdown: return "engine shut down";
    case Status::kTimedOut: return "timed out";
    case Status::kUnsupported: return "unsupported";
    case Status::kInternal: return "internal error";
  }
  return "unknown status";
}

}  // namespace rondo::base
