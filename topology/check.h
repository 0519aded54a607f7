// Assertion macros for internal invariants (never for user input: bad input
// is reported with a Status or an exception that names the bad value).
//
// RONDO_CHECK(cond, msg) is always on and aborts with file, line and message.
// RONDO_DCHECK(cond, msg) is the same in debug builds and free in NDEBUG ones.
// They live in the lowest layer so that every package can use them.
#ifndef RONDO_TOPOLOGY_CHECK_H_
#define RONDO_TOPOLOGY_CHECK_H_

#include "topology/base/check_failed.h"

// The message goes through the logger (topology/base/log.h).
#define RONDO_CHECK(cond, msg)                                             \
  do {                                                                     \
    if (__builtin_expect(!(cond), 0))                                      \
      ::rondo::base::internal::CheckFailed(__FILE__, __LINE__, #cond, msg); \
  } while (0)

#ifdef NDEBUG
#define RONDO_DCHECK(cond, msg) \
  do {                          \
  } while (0)
#else
#define RONDO_DCHECK(cond, msg) RONDO_CHECK(cond, msg)
#endif

#endif  // RONDO_TOPOLOGY_CHECK_H_
