#include "tests/alloc_counter.h"

#include <atomic>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RONDO_ALLOC_COUNTER_OFF 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RONDO_ALLOC_COUNTER_OFF 1
#endif
#endif

namespace {
std::atomic<uint64_t> g_allocs{0};
}  // namespace

namespace rondo::testing {
#ifdef RONDO_ALLOC_COUNTER_OFF
bool AllocCountingSupported() noexcept { return false; }
uint64_t AllocCount() noexcept { return 0; }
#else
bool AllocCountingSupported() noexcept { return true; }
uint64_t AllocCount() noexcept {
  return g_allocs.load(std::memory_order_relaxed);
}
#endif
}  // namespace rondo::testing

#ifndef RONDO_ALLOC_COUNTER_OFF
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

void* malloc(size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void** out, size_t a, size_t n) {
  void* p = memalign(a, n);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }
}
#endif
