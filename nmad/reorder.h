// ReorderWindow: the receiver's half of MPI's non-overtaking rule for one
// (source, session): messages carry consecutive sequence numbers from the
// sender (nmad/send_queue.h), whatever order the rails or the strategy put
// them on the wire in; one that arrives ahead of the next expected number
// waits here until those before it have been matched. A pure data
// structure (the caller serializes: nmad holds the session lock); T is the
// caller's kept chunk. Internal to //nmad.
#ifndef RONDO_NMAD_REORDER_H_
#define RONDO_NMAD_REORDER_H_

#include <cstddef>
#include <cstdint>
#include <map>

namespace rondo::nmad::internal {

template <typename T>
class ReorderWindow {
 public:
  // `first`: the first sequence number expected (0 in nmad).
  explicit ReorderWindow(uint32_t first = 0) noexcept : expected_(first) {}

  // The sequence number to match next.
  uint32_t expected() const noexcept { return expected_; }
  bool is_next(uint32_t seq) const noexcept { return seq == expected_; }
  // For a chunk that is not next: true when it is behind the window or
  // already kept (a duplicate, to drop). Sequence numbers wrap around.
  bool IsDuplicate(uint32_t seq) const {
    return static_cast<int32_t>(seq - expected_) < 0 || early_.count(seq) != 0;
  }
  // Keeps a chunk that came ahead of its turn (not next, not a duplicate).
  void Keep(uint32_t seq, T* item) { early_[seq] = item; }
  // The next one was matched.
  void Advance() noexcept { ++expected_; }
  // The kept chunk that is next now, removed from the window (match it,
  // then Advance), or null.
  T* TakeNext() {
    if (early_.empty()) return nullptr;
    auto it = early_.find(expected_);
    if (it == early_.end()) return nullptr;
    T* item = it->second;
    early_.erase(it);
    return item;
  }
  size_t kept() const noexcept { return early_.size(); }
  // Removes and passes to `fn` every kept chunk (shutdown).
  template <typename Fn>
  void Drain(Fn&& fn) {
    for (auto& [seq, item] : early_) fn(item);
    early_.clear();
  }

 private:
  uint32_t expected_;
  std::map<uint32_t, T*> early_;
};

}  // namespace rondo::nmad::internal

#endif  // RONDO_NMAD_REORDER_H_
