// Catch2 2.13's main(), compiled once for all unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

// ThreadSanitizer suppressions for the unit tests. boost::lockfree's node
// free-list (Boost 1.74) reuses a node's storage for its `next` link with
// plain writes while another thread may still read the node through the
// queue's atomic tagged pointer; the algorithm tolerates it by re-checking
// the tag, but TSan reports it. Only Boost's internals are suppressed: races
// in Rondo's own code, including LockFreeQueue, are still reported.
extern "C" const char* __tsan_default_suppressions() {
  return "race:boost::lockfree::detail::\n";
}
