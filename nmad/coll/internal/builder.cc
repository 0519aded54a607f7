// Builder: dependency tracking over byte intervals (see builder.h).
#include "nmad/coll/internal/builder.h"

#include <algorithm>
#include <utility>

#include "topology/check.h"

namespace rondo::nmad::coll::internal {

Builder::Builder(Schedule* out, int rank, int size)
    : out_(out), rank_(rank), size_(size) {
  RONDO_CHECK(out != nullptr, "Builder needs a schedule");
}

void Builder::AssumeAlias(int64_t buf0_minus_buf1) {
  RONDO_CHECK(out_->steps.empty(), "AssumeAlias before the first step");
  alias_ = true;
  alias_delta_ = buf0_minus_buf1;
}

Builder::Addr Builder::AddrOf(const BufRef& r) const {
  Addr a{r.buf, static_cast<int64_t>(r.offset),
         static_cast<int64_t>(r.offset + r.len)};
  if (alias_ && r.buf == kSendBuf) {
    a.space = kRecvBuf;
    a.lo += alias_delta_;
    a.hi += alias_delta_;
  }
  return a;
}

Builder::Space& Builder::SpaceFor(uint32_t space) {
  if (space >= spaces_.size()) spaces_.resize(space + 1);
  return spaces_[space];
}

bool Builder::MayOverlap(const BufRef& a, const BufRef& b) const {
  if (a.len == 0 || b.len == 0) return false;
  const Addr x = AddrOf(a), y = AddrOf(b);
  return x.space == y.space && x.lo < y.hi && y.lo < x.hi;
}

void Builder::Split(Space& m, int64_t at) {
  auto it = m.upper_bound(at);
  if (it == m.begin()) return;
  --it;
  if (it->first < at && it->second.end > at) {
    Interval right = it->second;
    it->second.end = at;
    m.emplace_hint(std::next(it), at, std::move(right));
  }
}

void Builder::Collect(const Addr& a, bool write, std::vector<uint32_t>* deps) {
  if (a.lo >= a.hi) return;
  Space& m = SpaceFor(a.space);
  auto it = m.upper_bound(a.lo);
  if (it != m.begin() && std::prev(it)->second.end > a.lo) --it;
  for (; it != m.end() && it->first < a.hi; ++it) {
    const Interval& iv = it->second;
    if (iv.writer != kNoStep) deps->push_back(iv.writer);
    if (write) deps->insert(deps->end(), iv.readers.begin(), iv.readers.end());
  }
}

void Builder::Record(const Addr& a, bool write, uint32_t step) {
  if (a.lo >= a.hi) return;
  Space& m = SpaceFor(a.space);
  Split(m, a.lo);
  Split(m, a.hi);
  if (write) {
    m.erase(m.lower_bound(a.lo), m.lower_bound(a.hi));
    m.emplace(a.lo, Interval{a.hi, step, {}});
    return;
  }
  // A read: fill the gaps with fresh intervals, then add the reader.
  int64_t pos = a.lo;
  auto it = m.lower_bound(a.lo);
  while (pos < a.hi) {
    if (it == m.end() || it->first > pos) {
      const int64_t gap_end = it == m.end() ? a.hi : std::min(it->first, a.hi);
      it = m.emplace_hint(it, pos, Interval{gap_end, kNoStep, {}});
    }
    it->second.readers.push_back(step);
    pos = it->second.end;
    ++it;
  }
}

uint32_t Builder::AddStep(Step step, const std::vector<BufRef>& reads,
                          const BufRef* write,
                          const std::vector<uint32_t>& after) {
  const uint32_t index = static_cast<uint32_t>(out_->steps.size());
  step.flow = flow_;
  step.level = level_;
  std::vector<uint32_t>& deps = step.deps;
  for (uint32_t d : after) {
    if (d != kNoStep) deps.push_back(d);
  }
  for (const BufRef& r : reads) Collect(AddrOf(r), false, &deps);
  if (write != nullptr) Collect(AddrOf(*write), true, &deps);
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  for (const BufRef& r : reads) Record(AddrOf(r), false, index);
  if (write != nullptr) Record(AddrOf(*write), true, index);
  return out_->Add(std::move(step));
}

uint32_t Builder::Message(StepKind kind, int peer, uint32_t tag,
                          const BufRef& ref,
                          const std::vector<uint32_t>& after) {
  RONDO_CHECK(peer >= 0 && peer < size_ && peer != rank_,
              "message peer out of range or self");
  RONDO_CHECK(tag <= kMaxStepTag, "step tag over kMaxStepTag");
  if (ref.len == 0 && !keep_empty_) return kNoStep;
  const uint64_t key = (uint64_t{kind == StepKind::kSend} << 62) |
                       (static_cast<uint64_t>(peer) << 16) | tag;
  std::vector<uint32_t> deps = after;
  auto [it, fresh] = last_message_.try_emplace(key, kNoStep);
  if (!fresh) deps.push_back(it->second);
  Step s;
  s.kind = kind;
  s.peer = peer;
  s.tag = tag;
  uint32_t index;
  if (kind == StepKind::kSend) {
    s.src = ref;
    index = AddStep(std::move(s), {ref}, nullptr, deps);
  } else {
    s.dst = ref;
    index = AddStep(std::move(s), {}, &ref, deps);
  }
  it->second = index;
  return index;
}

uint32_t Builder::Send(int peer, uint32_t tag, const BufRef& src,
                       const std::vector<uint32_t>& after) {
  return Message(StepKind::kSend, peer, tag, src, after);
}

uint32_t Builder::Recv(int peer, uint32_t tag, const BufRef& dst,
                       const std::vector<uint32_t>& after) {
  RONDO_CHECK(dst.buf != kSendBuf, "receive into buffer 0");
  return Message(StepKind::kRecv, peer, tag, dst, after);
}

uint32_t Builder::Reduce(const BufRef& src, const BufRef& dst) {
  RONDO_CHECK(src.len == dst.len, "reduce lengths differ");
  RONDO_CHECK(dst.buf != kSendBuf, "reduce into buffer 0");
  RONDO_CHECK(!MayOverlap(src, dst), "reduce operands overlap");
  if (src.len == 0) return kNoStep;
  Step s;
  s.kind = StepKind::kReduce;
  s.src = src;
  s.dst = dst;
  return AddStep(std::move(s), {src, dst}, &dst, {});
}

uint32_t Builder::Copy(const BufRef& src, const BufRef& dst) {
  RONDO_CHECK(src.len == dst.len, "copy lengths differ");
  RONDO_CHECK(dst.buf != kSendBuf, "copy into buffer 0");
  if (src.len == 0 || SameRef(src, dst)) return kNoStep;
  Step s;
  s.kind = StepKind::kCopy;
  s.src = src;
  s.dst = dst;
  const Addr from = AddrOf(src), to = AddrOf(dst);
  if (!alias_ || from.space != to.space || from.lo != to.lo ||
      from.hi != to.hi || Written(to))
    return AddStep(std::move(s), {src}, &dst, {});
  // The input onto its place in the output (a rank's own block), bytes that
  // nothing wrote yet: a no-op when the buffers alias (the executor skips a
  // copy onto itself), and otherwise a write of output bytes that no
  // earlier step can meaningfully read (they are the caller's garbage) while
  // the earlier readers of the input read the other buffer. So it need not
  // wait for them: a send of the input can run beside it. Later steps
  // order after it as after any write, and later writers also after those
  // earlier readers (they may be reading the aliased input).
  std::vector<uint32_t> readers;
  Space& m = SpaceFor(to.space);
  auto it = m.upper_bound(to.lo);
  if (it != m.begin() && std::prev(it)->second.end > to.lo) --it;
  for (; it != m.end() && it->first < to.hi; ++it)
    readers.insert(readers.end(), it->second.readers.begin(),
                   it->second.readers.end());
  const uint32_t index = AddStep(std::move(s), {src}, nullptr, {});
  Record(to, true, index);
  auto& kept = m.find(to.lo)->second.readers;
  kept.insert(kept.end(), readers.begin(), readers.end());
  return index;
}

bool Builder::Written(const Addr& a) {
  Space& m = SpaceFor(a.space);
  auto it = m.upper_bound(a.lo);
  if (it != m.begin() && std::prev(it)->second.end > a.lo) --it;
  for (; it != m.end() && it->first < a.hi; ++it)
    if (it->second.writer != kNoStep) return true;
  return false;
}

}  // namespace rondo::nmad::coll::internal
