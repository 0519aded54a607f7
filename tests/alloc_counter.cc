#include "tests/alloc_counter.h"

#include <atomic>

#include "tests/alloc_hook.h"

namespace {

std::atomic<uint64_t> g_allocs{0};

void CountOne() { g_allocs.fetch_add(1, std::memory_order_relaxed); }

// Installed when the binary is loaded, before main.
const bool g_supported = rondo_alloc_hook_set(&CountOne) != 0;

}  // namespace

namespace rondo::testing {

bool AllocCountingSupported() noexcept { return g_supported; }

uint64_t AllocCount() noexcept {
  return g_allocs.load(std::memory_order_relaxed);
}

}  // namespace rondo::testing
