// MatchQueues: MPI matching for one session, as a pure data structure.
//
// Posted receives and unexpected messages, with MPI's ordering rules:
//   * a message is matched by the EARLIEST posted receive whose source and
//     tag match it (each may be a wildcard);
//   * a receive is matched by the EARLIEST arrived unexpected message it
//     matches (messages from one source arrive in their send order, which
//     the caller guarantees by sequence numbers before calling Arrive).
// Exact (source, tag) receives and unexpected messages sit in per-key FIFO
// "bins", so matching costs one hash lookup however many are outstanding;
// wildcard receives sit in one FIFO that only wildcard users pay for; every
// unexpected message is also on one list in arrival order (for wildcard
// receives and probes).
//
// Everything is intrusive: a receive is a PostedReceive the caller embeds
// in its own operation, a message an UnexpectedMessage; no allocation once
// a key's bin exists. A bin that empties is kept (the same peers and tags
// over and over find it again) and is also put on an idle list: a new key
// takes the oldest idle bin (its hash node re-keyed, no allocation), so
// keys that change all the time (collectives number their tags) do not
// allocate either, and the map never holds more bins than the most keys
// ever in use at once. Reserve(n) makes n idle bins up front (and the
// map's buckets for them), so that a steady state whose peak of keys in use
// at once is reached late (timing: a peer running ahead by one more call)
// allocates nothing either.
//
// No driver, no locks: the caller serializes (nmad holds the session lock).
#ifndef RONDO_NMAD_MATCH_QUEUES_H_
#define RONDO_NMAD_MATCH_QUEUES_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace rondo::nmad {

inline constexpr int kMatchAnySource = -1;
inline constexpr int kMatchAnyTag = -1;

namespace match_internal {
// An intrusive doubly linked list (head, tail) threaded through
// T::*next and T::*prev: the idle bins' and the arrival order's.
template <typename T>
inline void Append(T* n, T*& head, T*& tail, T* T::*next,
                   T* T::*prev) noexcept {
  n->*next = nullptr;
  n->*prev = tail;
  if (tail != nullptr) tail->*next = n;
  else head = n;
  tail = n;
}
template <typename T>
inline void Remove(T* n, T*& head, T*& tail, T* T::*next,
                   T* T::*prev) noexcept {
  if (n->*prev != nullptr) (n->*prev)->*next = n->*next;
  else head = n->*next;
  if (n->*next != nullptr) (n->*next)->*prev = n->*prev;
  else tail = n->*prev;
  n->*prev = n->*next = nullptr;
}
}  // namespace match_internal

struct MatchBin;

// A posted receive (embedded in the caller's receive operation).
struct PostedReceive {
  int source = kMatchAnySource;
  int tag = kMatchAnyTag;
  // Internal: posting order and the FIFO holding it (null when not posted).
  uint64_t post_seq = 0;
  PostedReceive* prev = nullptr;
  PostedReceive* next = nullptr;
  MatchBin* bin = nullptr;
};

// A message that arrived before its receive (embedded in the caller's copy).
struct UnexpectedMessage {
  int peer = -1;
  int tag = 0;
  // Internal: its key's FIFO and the arrival-order list.
  UnexpectedMessage* key_next = nullptr;
  UnexpectedMessage* arrival_prev = nullptr;
  UnexpectedMessage* arrival_next = nullptr;
  MatchBin* bin = nullptr;
};

struct MatchBin {
  uint64_t key = 0;
  // On MatchQueues' idle list while empty (a bin can be re-keyed then).
  bool idle = false;
  MatchBin* idle_prev = nullptr;
  MatchBin* idle_next = nullptr;
  PostedReceive* posted_head = nullptr;
  PostedReceive* posted_tail = nullptr;
  UnexpectedMessage* unexpected_head = nullptr;
  UnexpectedMessage* unexpected_tail = nullptr;
  bool empty() const noexcept {
    return posted_head == nullptr && unexpected_head == nullptr;
  }
};

class MatchQueues {
 public:
  MatchQueues() = default;
  MatchQueues(const MatchQueues&) = delete;
  MatchQueues& operator=(const MatchQueues&) = delete;

  // Makes idle bins until the map holds at least `n`, and buckets for `n`
  // keys: the first `n` keys in use at once then allocate nothing. Set-up
  // time (allocates; std::bad_alloc).
  void Reserve(size_t n);

  // Appends `r` (source >= 0 or kMatchAnySource, tag >= 0 or kMatchAnyTag)
  // to the posted receives. May allocate a bin for a new (source, tag)
  // when no idle bin is left.
  void Post(PostedReceive* r);
  // The earliest posted receive matching a message from `peer` with `tag`
  // (both >= 0), removed unless `peek`; null when none matches.
  PostedReceive* MatchMessage(int peer, int tag, bool peek = false) noexcept;
  // Removes `r` if it is posted; false when it is not.
  bool Cancel(PostedReceive* r) noexcept;

  // Appends a message (peer >= 0, tag >= 0) that matched no posted receive.
  void Arrive(UnexpectedMessage* m);
  // The earliest unexpected message that a receive (or probe) from `source`
  // with `tag` (wildcards allowed) matches, removed when `take`; null when
  // none.
  UnexpectedMessage* MatchReceive(int source, int tag, bool take) noexcept;

  // Removes and passes to `fn` every posted receive for which `pred` is
  // true (peer failure: receives from that peer and wildcard ones).
  template <typename Pred, typename Fn>
  void RemovePostedIf(Pred&& pred, Fn&& fn);
  // Removes and passes to `fn` every posted receive / unexpected message
  // (shutdown), in no particular order.
  template <typename Fn>
  void DrainPosted(Fn&& fn);
  template <typename Fn>
  void DrainUnexpected(Fn&& fn);

  size_t posted() const noexcept { return posted_; }
  size_t unexpected() const noexcept { return unexpected_; }
  size_t bins() const noexcept { return bins_.size(); }
  size_t idle_bins() const noexcept { return idle_count_; }

 private:
  static uint64_t Key(int source, int tag) noexcept {
    return (static_cast<uint64_t>(static_cast<uint32_t>(source)) << 32) |
           static_cast<uint32_t>(tag);
  }
  static bool Matches(int want_source, int want_tag, int peer,
                      int tag) noexcept {
    return (want_source == kMatchAnySource || want_source == peer) &&
           (want_tag == kMatchAnyTag || want_tag == tag);
  }
  // The bin of (source, tag), made when missing / null when missing. The
  // bin used last is found inline, the map is searched out of line.
  MatchBin* BinFor(int source, int tag) {
    const uint64_t key = Key(source, tag);
    if (last_bin_ != nullptr && last_key_ == key) return last_bin_;
    return BinForSlow(key);
  }
  MatchBin* FindBin(int source, int tag) noexcept {
    const uint64_t key = Key(source, tag);
    if (last_bin_ != nullptr && last_key_ == key) return last_bin_;
    return FindBinSlow(key);
  }
  MatchBin* BinForSlow(uint64_t key);
  MatchBin* FindBinSlow(uint64_t key) noexcept;
  UnexpectedMessage* MatchReceiveSlow(int source, int tag, bool take) noexcept;
  static void Unlink(PostedReceive* r) noexcept;
  void UnlinkUnexpected(UnexpectedMessage* m) noexcept;
  // Idle-list bookkeeping: after a removal from `b`, before an addition.
  void AfterRemove(MatchBin* b) noexcept;
  void BeforeAdd(MatchBin* b) noexcept;

  std::unordered_map<uint64_t, MatchBin> bins_;
  // Wildcard receives (source or tag a wildcard), posting order.
  MatchBin wild_;
  // Every unexpected message, arrival order.
  UnexpectedMessage* arrival_head_ = nullptr;
  UnexpectedMessage* arrival_tail_ = nullptr;
  uint64_t next_post_ = 0;
  size_t posted_ = 0;
  size_t unexpected_ = 0;
  // Empty bins, oldest first.
  MatchBin* idle_head_ = nullptr;
  MatchBin* idle_tail_ = nullptr;
  size_t idle_count_ = 0;
  // The bin used last (pointers into the map stay valid until a sweep).
  uint64_t last_key_ = 0;
  MatchBin* last_bin_ = nullptr;
};

// The message path's calls are inline (every receive posts and every
// arrival matches: docs/performance.md, "Flattened entry points").

inline void MatchQueues::AfterRemove(MatchBin* b) noexcept {
  if (b == &wild_ || b->idle || !b->empty()) return;
  b->idle = true;
  match_internal::Append(b, idle_head_, idle_tail_, &MatchBin::idle_next,
                         &MatchBin::idle_prev);
  ++idle_count_;
}

inline void MatchQueues::BeforeAdd(MatchBin* b) noexcept {
  if (!b->idle) return;
  b->idle = false;
  match_internal::Remove(b, idle_head_, idle_tail_, &MatchBin::idle_next,
                         &MatchBin::idle_prev);
  --idle_count_;
}

inline void MatchQueues::Unlink(PostedReceive* r) noexcept {
  MatchBin* b = r->bin;
  if (r->prev != nullptr) r->prev->next = r->next;
  else b->posted_head = r->next;
  if (r->next != nullptr) r->next->prev = r->prev;
  else b->posted_tail = r->prev;
  r->prev = r->next = nullptr;
  r->bin = nullptr;
}

inline void MatchQueues::Post(PostedReceive* r) {
  const bool wild = r->source == kMatchAnySource || r->tag == kMatchAnyTag;
  MatchBin* b = wild ? &wild_ : BinFor(r->source, r->tag);
  BeforeAdd(b);
  r->post_seq = next_post_++;
  r->bin = b;
  r->next = nullptr;
  r->prev = b->posted_tail;
  if (b->posted_tail != nullptr) b->posted_tail->next = r;
  else b->posted_head = r;
  b->posted_tail = r;
  ++posted_;
}

inline PostedReceive* MatchQueues::MatchMessage(int peer, int tag,
                                                bool peek) noexcept {
  if (posted_ == 0) return nullptr;
  PostedReceive* exact = nullptr;
  if (MatchBin* b = FindBin(peer, tag)) exact = b->posted_head;
  PostedReceive* wild = wild_.posted_head;
  while (wild != nullptr && !Matches(wild->source, wild->tag, peer, tag))
    wild = wild->next;
  PostedReceive* r = exact;
  if (wild != nullptr && (exact == nullptr || wild->post_seq < exact->post_seq))
    r = wild;
  if (r != nullptr && !peek) {
    MatchBin* b = r->bin;
    Unlink(r);
    --posted_;
    AfterRemove(b);
  }
  return r;
}

inline UnexpectedMessage* MatchQueues::MatchReceive(int source, int tag,
                                                    bool take) noexcept {
  if (unexpected_ == 0) return nullptr;
  return MatchReceiveSlow(source, tag, take);
}

template <typename Pred, typename Fn>
void MatchQueues::RemovePostedIf(Pred&& pred, Fn&& fn) {
  auto sweep = [&](MatchBin& b) {
    for (PostedReceive* r = b.posted_head; r != nullptr;) {
      PostedReceive* next = r->next;
      if (pred(*r)) {
        Unlink(r);
        --posted_;
        AfterRemove(&b);
        fn(r);
      }
      r = next;
    }
  };
  sweep(wild_);
  for (auto& [key, b] : bins_) sweep(b);
}

template <typename Fn>
void MatchQueues::DrainPosted(Fn&& fn) {
  RemovePostedIf([](const PostedReceive&) { return true; },
                 std::forward<Fn>(fn));
}

template <typename Fn>
void MatchQueues::DrainUnexpected(Fn&& fn) {
  while (arrival_head_ != nullptr) {
    UnexpectedMessage* m = arrival_head_;
    UnlinkUnexpected(m);
    fn(m);
  }
}

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_MATCH_QUEUES_H_
