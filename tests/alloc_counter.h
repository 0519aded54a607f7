// AllocCounter: counts the process's heap allocations (malloc, calloc,
// realloc, the aligned forms, and operator new, which calls malloc).
//
// Why: the steady-state message path must not allocate (issue 17). Linking
// //tests:alloc_counter into a binary replaces malloc and friends with thin
// wrappers over glibc's __libc_* functions that bump one relaxed counter;
// under AddressSanitizer or ThreadSanitizer (which own malloc) nothing is
// replaced and Supported() is false.
//
// Thread-safety: the counter is a relaxed atomic; readers see every
// allocation that happened-before the read.
#ifndef RONDO_TESTS_ALLOC_COUNTER_H_
#define RONDO_TESTS_ALLOC_COUNTER_H_

#include <cstdint>

namespace rondo::testing {

// True when allocations are counted in this build.
bool AllocCountingSupported() noexcept;
// Allocations since the process started (0 when unsupported).
uint64_t AllocCount() noexcept;

}  // namespace rondo::testing

#endif  // RONDO_TESTS_ALLOC_COUNTER_H_
