// Schedule::Validate: the structural checks every schedule must pass before
// an executor (or the test simulator) runs it.
#include "nmad/coll/schedule.h"

#include <string>

namespace rondo::nmad::coll {
const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kSend:
      return "send";
    case StepKind::kRecv:
      return "recv";
    case StepKind::kReduce:
      return "reduce";
    case StepKind::kCopy:
      return "copy";
  }
  return "?";
}

namespace {

std::string StepPrefix(size_t i, const Step& s) {
  return "step " + std::to_string(i) + " (" + StepKindName(s.kind) + "): ";
}

}  // namespace

std::string Schedule::Validate(int size, uint64_t send_bytes,
                               uint64_t recv_bytes, uint64_t elem_size) const {
  if (size < 1) return "size " + std::to_string(size) + " must be >= 1";
  const size_t num_bufs = kFirstTmpBuf + tmp_bytes.size();
  if (num_bufs > 0x10000) {
    return std::to_string(tmp_bytes.size()) + " temporaries (at most " +
           std::to_string(0x10000 - kFirstTmpBuf) + ")";
  }
  auto buf_bytes = [&](uint16_t buf) -> uint64_t {
    if (buf == kSendBuf) return send_bytes;
    if (buf == kRecvBuf) return recv_bytes;
    return tmp_bytes[buf - kFirstTmpBuf];
  };
  // "" if ref lies inside its buffer.
  auto check_ref = [&](const BufRef& ref, const char* what) -> std::string {
    if (ref.buf >= num_bufs) {
      return std::string(what) + " names buffer " + std::to_string(ref.buf) +
             " but there are " + std::to_string(num_bufs) + " buffers";
    }
    const uint64_t bytes = buf_bytes(ref.buf);
    if (ref.offset > bytes || ref.len > bytes - ref.offset) {
      return std::string(what) + " [" + std::to_string(ref.offset) + ", +" +
             std::to_string(ref.len) + ") is outside buffer " +
             std::to_string(ref.buf) + " of " + std::to_string(bytes) +
             " bytes";
    }
    return "";
  };

  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const std::string at = StepPrefix(i, s);
    std::string err;
    switch (s.kind) {
      case StepKind::kSend:
      case StepKind::kRecv:
        if (s.peer < 0 || s.peer >= size) {
          return at + "peer " + std::to_string(s.peer) +
                 " is not a rank of a communicator of " +
                 std::to_string(size);
        }
        if (s.tag > kMaxStepTag) {
          return at + "tag " + std::to_string(s.tag) + " is over " +
                 std::to_string(kMaxStepTag);
        }
        err = s.kind == StepKind::kSend ? check_ref(s.src, "src")
                                        : check_ref(s.dst, "dst");
        break;
      case StepKind::kReduce:
      case StepKind::kCopy:
        err = check_ref(s.src, "src");
        if (err.empty()) err = check_ref(s.dst, "dst");
        if (err.empty() && s.src.len != s.dst.len) {
          err = "src has " + std::to_string(s.src.len) + " bytes but dst " +
                std::to_string(s.dst.len);
        }
        if (err.empty() && s.kind == StepKind::kReduce) {
          if (elem_size == 0) {
            err = "elem_size 0 (must be >= 1)";
          } else if (s.src.len % elem_size != 0) {
            err = "length " + std::to_string(s.src.len) +
                  " is not a multiple of elem_size " +
                  std::to_string(elem_size);
          }
        }
        break;
      default:
        return at + "unknown kind " +
               std::to_string(static_cast<int>(s.kind));
    }
    if (err.empty() && s.kind != StepKind::kSend && s.dst.buf == kSendBuf) {
      err = "writes buffer 0, which is read only";
    }
    if (!err.empty()) return at + err;
    for (uint32_t d : s.deps) {
      if (d >= i) {
        return at + "depends on step " + std::to_string(d) +
               ", which is not an earlier step";
      }
    }
  }
  return "";
}

}  // namespace rondo::nmad::coll
