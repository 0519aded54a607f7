// ChunkQueue: the FIFO of chunks at a gate (std::deque with an allocator
// that keeps a few freed blocks for reuse).
//
// A std::deque whose length goes 0, 1, 0, 1 ... (a gate's queue on the
// steady-state message path) still walks through its storage: libstdc++
// allocates a new 512-byte node every 64 pushes and frees the old one. The
// allocator hands such blocks to a BlockCache its owner provides (a gate:
// used under the gate's lock, whichever thread pushes or pops) and takes
// them back from it, so that walk allocates nothing once warm (issue 29:
// 0.125 allocations per RMA put+get pair came from there). Without a cache
// (default-constructed) and for other sizes it is operator new.
#ifndef RONDO_NMAD_STRATEGIES_CHUNK_QUEUE_H_
#define RONDO_NMAD_STRATEGIES_CHUNK_QUEUE_H_

#include <cstddef>
#include <deque>
#include <new>

namespace rondo::nmad::strategies {

// Up to kKept freed blocks of kBlockBytes (libstdc++'s deque node). Not
// thread-safe: its owner's lock covers it. Frees them when destroyed, so it
// must outlive the deques that use it.
class BlockCache {
 public:
  static constexpr size_t kBlockBytes = 512;
  static constexpr int kKept = 16;
  BlockCache() = default;
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache() {
    for (int i = 0; i < n_; ++i) ::operator delete(blocks_[i]);
  }
  // A kept block, else a new one.
  void* Take() {
    return n_ > 0 ? blocks_[--n_] : ::operator new(kBlockBytes);
  }
  // Adds a spare block (while fewer than kKept are kept). Each deque using
  // the cache needs one at hand for its first step into a new node (made
  // before its first node is freed): its owner reserves one per deque once
  // the deque exists, so that the steady state never allocates.
  void Reserve() {
    if (n_ < kKept) blocks_[n_++] = ::operator new(kBlockBytes);
  }
  bool Keep(void* p) noexcept {
    if (n_ == kKept) return false;
    blocks_[n_++] = p;
    return true;
  }

 private:
  void* blocks_[kKept] = {};
  int n_ = 0;
};

template <typename T>
struct ReuseAllocator {
  using value_type = T;
  ReuseAllocator() noexcept = default;
  explicit ReuseAllocator(BlockCache* cache) noexcept : cache(cache) {}
  template <typename U>
  ReuseAllocator(const ReuseAllocator<U>& o) noexcept : cache(o.cache) {}
  T* allocate(size_t n) {
    if (cache != nullptr && n * sizeof(T) == BlockCache::kBlockBytes)
      return static_cast<T*>(cache->Take());
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (cache != nullptr && n * sizeof(T) == BlockCache::kBlockBytes &&
        cache->Keep(p))
      return;
    ::operator delete(p);
  }
  template <typename U>
  bool operator==(const ReuseAllocator<U>& o) const noexcept {
    return cache == o.cache;
  }
  BlockCache* cache = nullptr;
};

template <typename T>
using ReuseDeque = std::deque<T, ReuseAllocator<T>>;

struct PendingChunk;
using ChunkQueue = ReuseDeque<PendingChunk*>;

}  // namespace rondo::nmad::strategies

#endif  // RONDO_NMAD_STRATEGIES_CHUNK_QUEUE_H_
