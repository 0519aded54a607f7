// Tree and chain shaped schedules: barrier, bcast, reduce, gather, scatter
// and the chain scans. Rooted collectives work on ranks relative to the
// root (v = (rank - root) mod size), except reductions of non-commutative
// operators, whose trees and chains run on absolute ranks towards rank 0
// (so every partial result covers consecutive ranks in order) and then hop
// to the root.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "nmad/coll/internal/builders.h"
#include "topology/check.h"

namespace rondo::nmad::coll::internal {
namespace {

const BufRef kNoSendData = Ref(kSendBuf, 0, 0);
const BufRef kNoRecvData = Ref(kRecvBuf, 0, 0);

int Rel(int rank, int root, int n) { return (rank - root + n) % n; }
int Abs(int64_t v, int root, int n) {
  return static_cast<int>((v + root) % n);
}

// Temporaries of one size for received partial results: up to `cap`
// distinct buffers (so that that many receives can be posted at once), then
// the least recently released one is reused (the Builder orders the reuse
// after its last reader).
class TmpPool {
 public:
  TmpPool(Builder& b, uint64_t len, int cap) : b_(b), len_(len), cap_(cap) {}
  BufRef Get() {
    if (created_ < cap_ || free_.empty()) {
      ++created_;
      return Ref(b_.Tmp(len_), 0, len_);
    }
    BufRef r = free_.front();
    free_.pop_front();
    return r;
  }
  void Put(const BufRef& r) { free_.push_back(r); }

 private:
  Builder& b_;
  uint64_t len_;
  int cap_;
  int created_ = 0;
  std::deque<BufRef> free_;
};

// Pipeline segments of `len` bytes: nseg of `seg` bytes, the last shorter.
struct Segments {
  Segments(uint64_t total, uint64_t segment) : len(total), seg(segment) {
    count = seg == 0 ? 0 : (len + seg - 1) / seg;
  }
  uint64_t Offset(uint64_t i) const { return i * seg; }
  uint64_t Len(uint64_t i) const { return std::min(seg, len - i * seg); }
  uint64_t len, seg, count;
};

// A window of pipeline slots in one temporary: segment i uses slot i % W.
struct Slots {
  Slots(Builder& b, const Segments& s) : seg(s.seg) {
    window = std::min<uint64_t>(s.count, 8);
    buf = b.Tmp(window * seg);
  }
  BufRef At(uint64_t i, uint64_t len) const {
    return Ref(buf, (i % window) * seg, len);
  }
  uint64_t seg, window;
  uint16_t buf;
};

// Tree level (from the leaves, 1-based) of an edge between relative ranks
// `distance` apart in a k-nomial tree: the edge j * radix^e is at level e+1.
int EdgeLevel(int64_t distance, int radix) {
  int level = 1;
  for (int64_t m = radix; m <= distance; m *= radix) ++level;
  return level;
}

// Levels of a k-nomial tree over n ranks: ceil(log_radix n).
int TreeLevels(int64_t n, int radix) {
  int levels = 0;
  for (int64_t m = 1; m < n; m *= radix) ++levels;
  return levels;
}

// Annotates the steps added while it lives with a tree flow and level
// (Builder::SetTree), and stops annotating when it goes out of scope.
class TreeScope {
 public:
  TreeScope(Builder& b, TreeFlow flow) : b_(b), flow_(flow) {}
  ~TreeScope() { b_.SetTree(TreeFlow::kNone, 0); }
  void Level(int level) { b_.SetTree(flow_, level); }

 private:
  Builder& b_;
  TreeFlow flow_;
};

uint64_t ChainSegment(uint64_t segment, uint64_t len) {
  // segment 0: the whole message as one segment.
  return segment == 0 ? std::max<uint64_t>(len, 1) : segment;
}

}  // namespace

TreeNode KnomialNode(int64_t v, int64_t n, int64_t radix) {
  TreeNode t;
  int64_t mask = 1;
  while (mask < n) {
    if (v % (radix * mask) != 0) {
      t.parent = v - v % (radix * mask);
      break;
    }
    mask *= radix;
  }
  t.span = std::min(v + mask, n) - v;
  for (int64_t m = mask / radix; m >= 1; m /= radix) {
    for (int64_t j = 1; j < radix; ++j) {
      const int64_t c = v + j * m;
      if (c >= n) break;
      t.children.push_back({c, std::min(c + m, n) - c});
    }
  }
  return t;
}

// ---- barrier ----

void BarrierDissemination(Builder& b) {
  const int n = b.size(), r = b.rank();
  b.KeepEmptyMessages();
  std::vector<uint32_t> received;  // a round's token carries all before it
  uint32_t round = 0;
  for (int64_t k = 1; k < n; k <<= 1, ++round) {
    b.Send(static_cast<int>((r + k) % n), round, kNoSendData, received);
    received.push_back(
        b.Recv(static_cast<int>((r - k % n + n) % n), round, kNoRecvData));
  }
}

void BarrierBinomial(Builder& b) {
  const int n = b.size(), r = b.rank();
  b.KeepEmptyMessages();
  const TreeNode t = KnomialNode(r, n, 2);
  std::vector<uint32_t> arrived;
  for (const auto& c : t.children) {
    arrived.push_back(b.Recv(static_cast<int>(c.node), 0, kNoRecvData));
  }
  std::vector<uint32_t> release = arrived;
  if (t.parent >= 0) {
    const int parent = static_cast<int>(t.parent);
    b.Send(parent, 0, kNoSendData, arrived);
    release = {b.Recv(parent, 1, kNoRecvData)};
  }
  for (const auto& c : t.children) {
    b.Send(static_cast<int>(c.node), 1, kNoSendData, release);
  }
}

void BarrierRecursiveDoubling(Builder& b) {
  const int n = b.size(), r = b.rank();
  b.KeepEmptyMessages();
  int pof2 = 1;
  while (pof2 * 2 <= n) pof2 *= 2;
  const int rem = n - pof2;
  if (r < 2 * rem && r % 2 == 0) {  // folded into r + 1
    b.Send(r + 1, 0, kNoSendData);
    b.Recv(r + 1, 1, kNoRecvData);
    return;
  }
  std::vector<uint32_t> received;
  int newrank;
  if (r < 2 * rem) {
    received.push_back(b.Recv(r - 1, 0, kNoRecvData));
    newrank = r / 2;
  } else {
    newrank = r - rem;
  }
  uint32_t round = 2;
  for (int mask = 1; mask < pof2; mask <<= 1, ++round) {
    const int nd = newrank ^ mask;
    const int d = nd < rem ? 2 * nd + 1 : nd + rem;
    b.Send(d, round, kNoSendData, received);
    received.push_back(b.Recv(d, round, kNoRecvData));
  }
  if (r < 2 * rem) b.Send(r - 1, 1, kNoSendData, received);
}

// ---- bcast ----

void BcastKnomial(Builder& b, const Plan& p, int radix, const BufRef& data) {
  const int n = b.size();
  const int64_t v = Rel(b.rank(), p.root, n);
  const TreeNode t = KnomialNode(v, n, radix);
  TreeScope tree(b, TreeFlow::kDown);
  if (t.parent >= 0) {
    tree.Level(EdgeLevel(v - t.parent, radix));
    b.Recv(Abs(t.parent, p.root, n), 0, data);
  }
  // A large message goes to the children one after another, largest
  // subtree first, so that each transfer has the sender's link to itself
  // and the first child starts forwarding after one transfer time (the
  // classic binomial schedule: ceil(log2 n) transfer times when bandwidth
  // bound; sent all at once they would share the link and the first child
  // would wait for all of them). Below one pipeline segment latency rules:
  // all at once.
  const bool one_by_one = data.len >= p.segment;
  uint32_t prev = kNoStep;
  for (const auto& c : t.children) {
    tree.Level(EdgeLevel(c.node - v, radix));
    const uint32_t s = b.Send(Abs(c.node, p.root, n), 0, data,
                              one_by_one ? std::vector<uint32_t>{prev}
                                         : std::vector<uint32_t>{});
    if (s != kNoStep) prev = s;
  }
}

void BcastLinear(Builder& b, const Plan& p, const BufRef& data) {
  const int n = b.size(), r = b.rank();
  if (r != p.root) {
    b.Recv(p.root, 0, data);
    return;
  }
  for (int k = 1; k < n; ++k) b.Send((r + k) % n, 0, data);
}

void BcastChain(Builder& b, const Plan& p, uint64_t segment,
                const BufRef& data) {
  const int n = b.size();
  const int v = Rel(b.rank(), p.root, n);
  const int prev = v > 0 ? Abs(v - 1, p.root, n) : -1;
  const int next = v + 1 < n ? Abs(v + 1, p.root, n) : -1;
  const Segments segs(data.len, ChainSegment(segment, data.len));
  for (uint64_t i = 0; i < segs.count; ++i) {
    const BufRef d = Sub(data, segs.Offset(i), segs.Len(i));
    if (prev >= 0) b.Recv(prev, WrapTag(i), d);
    if (next >= 0) b.Send(next, WrapTag(i), d);
  }
}

// ---- reduce ----

void ReduceKnomial(Builder& b, const Plan& p, int radix, const BufRef& in,
                   const BufRef& out, int root, uint32_t tag) {
  const int n = b.size(), r = b.rank();
  if (in.len == 0) return;
  if (n == 1) {
    b.Copy(in, out);
    return;
  }
  // Commutative: a tree rooted at the root. Otherwise a tree of absolute
  // ranks rooted at 0, whose result hops to the root.
  const int top = p.commutative ? root : 0;
  const int64_t v = Rel(r, top, n);
  const TreeNode t = KnomialNode(v, n, radix);
  const bool is_top = t.parent < 0;
  TreeScope tree(b, TreeFlow::kUp);
  const int height = TreeLevels(n, radix);
  // Children combine from the smallest level up, in rank order: the
  // accumulator covers [v, v + m) and child j at level m covers the next
  // consecutive ranks, so acc = acc op child keeps the order. Lower levels
  // have smaller nodes, so that order is by node.
  std::vector<TreeNode::Child> order = t.children;
  std::sort(order.begin(), order.end(),
            [](const auto& x, const auto& y) { return x.node < y.node; });
  TmpPool pool(b, in.len, radix + 1);
  BufRef acc = in;
  bool acc_is_in = true;
  for (size_t i = 0; i < order.size(); ++i) {
    // The last partial result at the root may land in `out` directly once
    // `in` (which may alias it) has been consumed.
    const bool into_out =
        is_top && r == root && i + 1 == order.size() && !acc_is_in;
    const BufRef dst = into_out ? out : pool.Get();
    tree.Level(EdgeLevel(order[i].node - v, radix));
    b.Recv(Abs(order[i].node, top, n), tag, dst);
    b.Reduce(acc, dst);  // dst = acc op child
    if (!acc_is_in) pool.Put(acc);
    acc = dst;
    acc_is_in = false;
  }
  // The result's copy into `out` and the extra hop from the top (rank 0) to
  // a root that is not the top belong to the last level.
  if (!is_top) {
    tree.Level(EdgeLevel(v - t.parent, radix));
    b.Send(Abs(t.parent, top, n), tag, acc);
  } else if (r == root) {
    tree.Level(height);
    b.Copy(acc, out);
  } else {
    tree.Level(height);
    b.Send(root, tag + 1, acc);
  }
  if (r == root && !is_top) {
    tree.Level(height);
    b.Recv(top, tag + 1, out);
  }
}

void ReduceChain(Builder& b, const Plan& p, uint64_t segment,
                 const BufRef& in, const BufRef& out) {
  const int n = b.size(), r = b.rank(), root = p.root;
  if (n == 1) {
    b.Copy(in, out);
    return;
  }
  // The chain runs from v = n-1 down to v = 0 at `end`; partial results
  // cover ranks v..n-1 of the chain, so x_v op partial keeps the order
  // when the chain is in absolute ranks (end 0).
  const int end = p.commutative ? root : 0;
  const int v = Rel(r, end, n);
  const int child = v + 1 < n ? Abs(v + 1, end, n) : -1;
  const int parent = v > 0 ? Abs(v - 1, end, n) : -1;
  const Segments segs(in.len, ChainSegment(segment, in.len));
  if (segs.count == 0) return;
  std::optional<Slots> slots;
  if (child >= 0) slots.emplace(b, segs);
  for (uint64_t i = 0; i < segs.count; ++i) {
    const uint64_t off = segs.Offset(i), len = segs.Len(i);
    const uint32_t tag = WrapTag(i);
    BufRef acc = Sub(in, off, len);
    if (child >= 0) {
      const BufRef t = slots->At(i, len);
      b.Recv(child, tag, t);
      b.Reduce(acc, t);  // t = x_v op (x_{v+1} ... x_{n-1})
      acc = t;
    }
    if (parent >= 0) {
      b.Send(parent, tag, acc);
    } else if (r == root) {
      b.Copy(acc, Sub(out, off, len));
    } else {
      b.Send(root, tag, acc);  // the hop from rank 0 to the root
    }
    if (r == root && parent >= 0) b.Recv(end, tag, Sub(out, off, len));
  }
}

// ---- gather / scatter ----

void GatherBinomial(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank(), root = p.root;
  const uint64_t B = p.bytes;
  if (B == 0) return;
  const BufRef in = Ref(kSendBuf, 0, B);
  const TreeNode t = KnomialNode(Rel(r, root, n), n, 2);
  const int64_t v = Rel(r, root, n);
  TreeScope tree(b, TreeFlow::kUp);
  tree.Level(1);
  if (r == root) {
    b.Copy(in, Ref(kRecvBuf, uint64_t(root) * B, B));
    for (const auto& c : t.children) {
      const int first = Abs(c.node, root, n);
      const uint64_t len = uint64_t(c.span) * B;
      tree.Level(EdgeLevel(c.node, 2));
      if (first + c.span <= n) {  // the subtree's blocks are contiguous
        b.Recv(first, 0, Ref(kRecvBuf, uint64_t(first) * B, len));
        continue;
      }
      const uint16_t tmp = b.Tmp(len);
      b.Recv(first, 0, Ref(tmp, 0, len));
      const uint64_t head = uint64_t(n - first) * B;
      b.Copy(Ref(tmp, 0, head), Ref(kRecvBuf, uint64_t(first) * B, head));
      b.Copy(Ref(tmp, head, len - head), Ref(kRecvBuf, 0, len - head));
    }
    return;
  }
  const int parent = Abs(t.parent, root, n);
  const int up = EdgeLevel(v - t.parent, 2);
  if (t.children.empty()) {
    tree.Level(up);
    b.Send(parent, 0, in);
    return;
  }
  // The subtree's blocks in relative order.
  const uint16_t w = b.Tmp(uint64_t(t.span) * B);
  b.Copy(in, Ref(w, 0, B));
  for (const auto& c : t.children) {
    tree.Level(EdgeLevel(c.node - v, 2));
    b.Recv(Abs(c.node, root, n), 0,
           Ref(w, uint64_t(c.node - v) * B, uint64_t(c.span) * B));
  }
  tree.Level(up);
  b.Send(parent, 0, Ref(w, 0, uint64_t(t.span) * B));
}

void GatherLinear(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank(), root = p.root;
  const BufRef in = Ref(kSendBuf, 0, p.own);
  if (r != root) {
    b.Send(root, 0, in);
    return;
  }
  b.Copy(in, Ref(kRecvBuf, p.displs[root], p.counts[root]));
  for (int k = 1; k < n; ++k) {
    const int src = (root + k) % n;
    b.Recv(src, 0, Ref(kRecvBuf, p.displs[src], p.counts[src]));
  }
}

void ScatterBinomial(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank(), root = p.root;
  const uint64_t B = p.bytes;
  if (B == 0) return;
  const BufRef out = Ref(kRecvBuf, 0, B);
  const TreeNode t = KnomialNode(Rel(r, root, n), n, 2);
  const int64_t v = Rel(r, root, n);
  TreeScope tree(b, TreeFlow::kDown);
  if (r == root) {
    for (const auto& c : t.children) {
      const int first = Abs(c.node, root, n);
      const uint64_t len = uint64_t(c.span) * B;
      tree.Level(EdgeLevel(c.node, 2));
      if (first + c.span <= n) {
        b.Send(first, 0, Ref(kSendBuf, uint64_t(first) * B, len));
        continue;
      }
      const uint16_t tmp = b.Tmp(len);
      const uint64_t head = uint64_t(n - first) * B;
      b.Copy(Ref(kSendBuf, uint64_t(first) * B, head), Ref(tmp, 0, head));
      b.Copy(Ref(kSendBuf, 0, len - head), Ref(tmp, head, len - head));
      b.Send(first, 0, Ref(tmp, 0, len));
    }
    tree.Level(1);
    b.Copy(Ref(kSendBuf, uint64_t(root) * B, B), out);
    return;
  }
  const int parent = Abs(t.parent, root, n);
  tree.Level(EdgeLevel(v - t.parent, 2));
  if (t.children.empty()) {
    b.Recv(parent, 0, out);
    return;
  }
  const uint16_t w = b.Tmp(uint64_t(t.span) * B);
  b.Recv(parent, 0, Ref(w, 0, uint64_t(t.span) * B));
  for (const auto& c : t.children) {
    tree.Level(EdgeLevel(c.node - v, 2));
    b.Send(Abs(c.node, root, n), 0,
           Ref(w, uint64_t(c.node - v) * B, uint64_t(c.span) * B));
  }
  tree.Level(1);
  b.Copy(Ref(w, 0, B), out);
}

void ScatterLinear(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank(), root = p.root;
  const BufRef out = Ref(kRecvBuf, 0, p.own);
  if (r != root) {
    b.Recv(root, 0, out);
    return;
  }
  for (int k = 1; k < n; ++k) {
    const int dst = (root + k) % n;
    b.Send(dst, 0, Ref(kSendBuf, p.displs[dst], p.counts[dst]));
  }
  b.Copy(Ref(kSendBuf, p.displs[root], p.counts[root]), out);
}

void ScatterBlocksFromZero(Builder& b, const Plan& p, const BufRef& src,
                           const BufRef& out, uint32_t tag) {
  const int n = b.size(), r = b.rank();
  std::vector<uint64_t> off(n + 1, 0);  // block i at off[i] in rank order
  for (int i = 0; i < n; ++i) off[i + 1] = off[i] + p.counts[i];
  const TreeNode t = KnomialNode(r, n, 2);
  auto range = [&](int64_t first, int64_t span) {
    return std::pair<uint64_t, uint64_t>(off[first],
                                         off[first + span] - off[first]);
  };
  if (r == 0) {
    for (const auto& c : t.children) {
      const auto [o, len] = range(c.node, c.span);
      b.Send(static_cast<int>(c.node), tag, Sub(src, o, len));
    }
    b.Copy(Sub(src, 0, p.counts[0]), out);
    return;
  }
  if (t.children.empty()) {
    b.Recv(static_cast<int>(t.parent), tag, out);
    return;
  }
  const auto [base, len] = range(r, t.span);
  const uint16_t w = b.Tmp(len);
  b.Recv(static_cast<int>(t.parent), tag, Ref(w, 0, len));
  for (const auto& c : t.children) {
    const auto [o, clen] = range(c.node, c.span);
    b.Send(static_cast<int>(c.node), tag, Ref(w, o - base, clen));
  }
  b.Copy(Ref(w, 0, p.counts[r]), out);
}

// ---- scans ----

void ScanChain(Builder& b, const Plan& p, uint64_t segment, bool exclusive) {
  const int n = b.size(), r = b.rank();
  const BufRef in = Ref(kSendBuf, 0, p.bytes);
  const BufRef out = Ref(kRecvBuf, 0, p.bytes);
  const Segments segs(p.bytes, ChainSegment(segment, p.bytes));
  if (segs.count == 0) return;
  const bool has_prev = r > 0, has_next = r + 1 < n;
  std::optional<Slots> slots;
  if (has_prev && (!exclusive || has_next)) slots.emplace(b, segs);
  for (uint64_t i = 0; i < segs.count; ++i) {
    const uint64_t off = segs.Offset(i), len = segs.Len(i);
    const uint32_t tag = WrapTag(i);
    const BufRef in_i = Sub(in, off, len), out_i = Sub(out, off, len);
    if (!exclusive) {
      b.Copy(in_i, out_i);
      if (has_prev) {
        const BufRef t = slots->At(i, len);
        b.Recv(r - 1, tag, t);
        b.Reduce(t, out_i);  // out = (x_0 ... x_{r-1}) op x_r
      }
      if (has_next) b.Send(r + 1, tag, out_i);
      continue;
    }
    if (!has_prev) {
      if (has_next) b.Send(r + 1, tag, in_i);
      continue;
    }
    BufRef t;
    if (has_next) {  // x_r, read before out (which may alias in) is written
      t = slots->At(i, len);
      b.Copy(in_i, t);
    }
    b.Recv(r - 1, tag, out_i);
    if (has_next) {
      b.Reduce(out_i, t);  // t = (x_0 ... x_{r-1}) op x_r
      b.Send(r + 1, tag, t);
    }
  }
}

}  // namespace rondo::nmad::coll::internal
