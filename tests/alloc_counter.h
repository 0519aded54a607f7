// AllocCounter: counts the process's heap allocations (malloc, calloc,
// realloc, the aligned forms, and operator new, which calls malloc).
//
// Why: the steady-state message path must not allocate (issue 17). Linking
// //tests:alloc_counter into a binary counts through //tests:alloc_hook:
// malloc and friends replaced in a plain build, the allocator's hooks under
// AddressSanitizer, so the counts are the same in both; off under
// ThreadSanitizer (Supported() is false).
//
// Thread-safety: the counter is a relaxed atomic; readers see every
// allocation that happened-before the read.
#ifndef RONDO_TESTS_ALLOC_COUNTER_H_
#define RONDO_TESTS_ALLOC_COUNTER_H_

#include <cstdint>

namespace rondo::testing {

// True when allocations are counted in this build.
bool AllocCountingSupported() noexcept;
// Allocations since the binary was loaded (0 when unsupported).
uint64_t AllocCount() noexcept;

}  // namespace rondo::testing

#endif  // RONDO_TESTS_ALLOC_COUNTER_H_
