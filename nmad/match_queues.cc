#include "nmad/match_queues.h"

#include <algorithm>
#include <iterator>

namespace rondo::nmad {

void MatchQueues::Reserve(size_t n) {
  bins_.reserve(n);
  // Placeholder keys have the top bit set: a real key's source is >= 0, so
  // they never collide with one, and a new key re-keys them like any idle
  // bin.
  for (uint64_t i = 0; bins_.size() < n; ++i) {
    const uint64_t key = (uint64_t{1} << 63) | i;
    auto [it, inserted] = bins_.try_emplace(key);
    if (!inserted) continue;
    it->second.key = key;
    AfterRemove(&it->second);
  }
}

MatchBin* MatchQueues::BinForSlow(uint64_t key) {
  MatchBin* b;
  if (auto it = bins_.find(key); it != bins_.end()) {
    b = &it->second;
  } else if (idle_head_ != nullptr) {
    // Re-key the oldest idle bin: the node (and the bin in it) stays where
    // it is, nothing is allocated.
    MatchBin* old = idle_head_;
    BeforeAdd(old);
    auto node = bins_.extract(old->key);
    node.key() = key;
    b = &bins_.insert(std::move(node)).position->second;
    b->key = key;
  } else {
    b = &bins_[key];
    b->key = key;
  }
  last_key_ = key;
  return last_bin_ = b;
}

MatchBin* MatchQueues::FindBinSlow(uint64_t key) noexcept {
  if (bins_.empty()) return nullptr;
  auto it = bins_.find(key);
  if (it == bins_.end()) return nullptr;
  last_key_ = key;
  return last_bin_ = &it->second;
}

bool MatchQueues::Cancel(PostedReceive* r) noexcept {
  if (r == nullptr || r->bin == nullptr) return false;
  MatchBin* b = r->bin;
  Unlink(r);
  --posted_;
  AfterRemove(b);
  return true;
}

void MatchQueues::Arrive(UnexpectedMessage* m) {
  MatchBin* b = BinFor(m->peer, m->tag);
  BeforeAdd(b);
  m->bin = b;
  m->key_next = nullptr;
  if (b->unexpected_tail != nullptr) b->unexpected_tail->key_next = m;
  else b->unexpected_head = m;
  b->unexpected_tail = m;
  match_internal::Append(m, arrival_head_, arrival_tail_,
                         &UnexpectedMessage::arrival_next,
                         &UnexpectedMessage::arrival_prev);
  ++unexpected_;
}

void MatchQueues::UnlinkUnexpected(UnexpectedMessage* m) noexcept {
  // The earliest match of any receive is the head of its own key's FIFO
  // (messages of one key are matched in arrival order).
  MatchBin* b = m->bin;
  if (b->unexpected_head == m) {
    b->unexpected_head = m->key_next;
    if (b->unexpected_head == nullptr) b->unexpected_tail = nullptr;
  } else {  // only DrainUnexpected takes from the middle: walk
    UnexpectedMessage* p = b->unexpected_head;
    while (p != nullptr && p->key_next != m) p = p->key_next;
    if (p != nullptr) {
      p->key_next = m->key_next;
      if (b->unexpected_tail == m) b->unexpected_tail = p;
    }
  }
  match_internal::Remove(m, arrival_head_, arrival_tail_,
                         &UnexpectedMessage::arrival_next,
                         &UnexpectedMessage::arrival_prev);
  m->key_next = nullptr;
  m->bin = nullptr;
  --unexpected_;
  AfterRemove(b);
}

UnexpectedMessage* MatchQueues::MatchReceiveSlow(int source, int tag,
                                                 bool take) noexcept {
  UnexpectedMessage* m = nullptr;
  if (source != kMatchAnySource && tag != kMatchAnyTag) {
    if (MatchBin* b = FindBin(source, tag)) m = b->unexpected_head;
  } else {
    for (UnexpectedMessage* u = arrival_head_; u != nullptr;
         u = u->arrival_next)
      if (Matches(source, tag, u->peer, u->tag)) {
        m = u;
        break;
      }
  }
  if (m != nullptr && take) UnlinkUnexpected(m);
  return m;
}

}  // namespace rondo::nmad
