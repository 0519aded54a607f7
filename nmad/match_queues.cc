#include "nmad/match_queues.h"

#include <algorithm>
#include <iterator>

namespace rondo::nmad {

namespace {

bool Matches(int want_source, int want_tag, int peer, int tag) noexcept {
  return (want_source == kMatchAnySource || want_source == peer) &&
         (want_tag == kMatchAnyTag || want_tag == tag);
}

}  // namespace

void MatchQueues::AfterRemove(MatchBin* b) noexcept {
  if (b == &wild_ || b->idle || !b->empty()) return;
  b->idle = true;
  b->idle_next = nullptr;
  b->idle_prev = idle_tail_;
  if (idle_tail_ != nullptr) idle_tail_->idle_next = b;
  else idle_head_ = b;
  idle_tail_ = b;
  ++idle_count_;
}

void MatchQueues::BeforeAdd(MatchBin* b) noexcept {
  if (!b->idle) return;
  b->idle = false;
  if (b->idle_prev != nullptr) b->idle_prev->idle_next = b->idle_next;
  else idle_head_ = b->idle_next;
  if (b->idle_next != nullptr) b->idle_next->idle_prev = b->idle_prev;
  else idle_tail_ = b->idle_prev;
  b->idle_prev = b->idle_next = nullptr;
  --idle_count_;
}

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

MatchBin* MatchQueues::BinFor(int source, int tag) {
  const uint64_t key = Key(source, tag);
  if (last_bin_ != nullptr && last_key_ == key) return last_bin_;
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

MatchBin* MatchQueues::FindBin(int source, int tag) noexcept {
  if (bins_.empty()) return nullptr;
  const uint64_t key = Key(source, tag);
  if (last_bin_ != nullptr && last_key_ == key) return last_bin_;
  auto it = bins_.find(key);
  if (it == bins_.end()) return nullptr;
  last_key_ = key;
  return last_bin_ = &it->second;
}

void MatchQueues::Unlink(PostedReceive* r) noexcept {
  MatchBin* b = r->bin;
  if (r->prev != nullptr) r->prev->next = r->next;
  else b->posted_head = r->next;
  if (r->next != nullptr) r->next->prev = r->prev;
  else b->posted_tail = r->prev;
  r->prev = r->next = nullptr;
  r->bin = nullptr;
}

void MatchQueues::Post(PostedReceive* r) {
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

PostedReceive* MatchQueues::MatchMessage(int peer, int tag,
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
  m->arrival_next = nullptr;
  m->arrival_prev = arrival_tail_;
  if (arrival_tail_ != nullptr) arrival_tail_->arrival_next = m;
  else arrival_head_ = m;
  arrival_tail_ = m;
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
  if (m->arrival_prev != nullptr) m->arrival_prev->arrival_next = m->arrival_next;
  else arrival_head_ = m->arrival_next;
  if (m->arrival_next != nullptr) m->arrival_next->arrival_prev = m->arrival_prev;
  else arrival_tail_ = m->arrival_prev;
  m->key_next = m->arrival_prev = m->arrival_next = nullptr;
  m->bin = nullptr;
  --unexpected_;
  AfterRemove(b);
}

UnexpectedMessage* MatchQueues::MatchReceive(int source, int tag,
                                             bool take) noexcept {
  if (unexpected_ == 0) return nullptr;
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
