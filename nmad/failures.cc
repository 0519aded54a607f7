#include "nmad/failures.h"

namespace rondo::nmad::internal {

bool FailureLog::Record(int rank, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rank < 0 || static_cast<size_t>(rank) >= text_.size()) return false;
  std::string& t = text_[static_cast<size_t>(rank)];
  if (!t.empty()) return false;
  t = what.empty() ? "rank " + std::to_string(rank) + " failed" : what;
  return true;
}

std::string FailureLog::Text(int rank) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (rank < 0 || static_cast<size_t>(rank) >= text_.size()) return "";
  return text_[static_cast<size_t>(rank)];
}

}  // namespace rondo::nmad::internal
