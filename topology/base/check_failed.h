// The failure path of RONDO_CHECK (topology/check.h): prints the failed
// condition through the logger (log.h) and aborts. Kept apart from log.h so
// that check.h, which every header may include, does not bring fmt along.
#ifndef RONDO_TOPOLOGY_BASE_CHECK_FAILED_H_
#define RONDO_TOPOLOGY_BASE_CHECK_FAILED_H_

namespace rondo::base::internal {

[[noreturn]] void CheckFailed(const char* file, int line,
                              const char* condition, const char* message);

}  // namespace rondo::base::internal

#endif  // RONDO_TOPOLOGY_BASE_CHECK_FAILED_H_
