// Exchange-shaped schedules, where every rank sends and receives each
// round: allreduce, allgather(v), alltoall(v), reduce_scatter(_block) and
// the recursive doubling scans.
//
// Deadlock rule kept throughout: a send may complete only once the peer
// posted the matching receive (rendezvous), so a receive never waits for
// the completion of a send when the receiving side of that send could, in
// turn, be waiting for us (e.g. a ring in which every rank receives in
// place of what it is sending). Such receives go to temporaries.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "nmad/coll/internal/builders.h"
#include "topology/check.h"

namespace rondo::nmad::coll::internal {
namespace {

int Mod(int64_t x, int n) { return static_cast<int>(((x % n) + n) % n); }

int LargestPowerOfTwoAtMost(int n) {
  int pof2 = 1;
  while (pof2 <= n / 2) pof2 *= 2;
  return pof2;
}

// Offsets of blocks laid out back to back: off[i] = sum of len(j), j < i.
template <typename LenFn>
std::vector<uint64_t> PrefixSums(int n, LenFn len) {
  std::vector<uint64_t> off(n + 1, 0);
  for (int i = 0; i < n; ++i) off[i + 1] = off[i] + len(i);
  return off;
}

// Copies blocks from packed positions of `work` to their places in buffer
// 1, merging runs that are contiguous on both sides. Block p of the work
// buffer (at wpos[p]) belongs to rank rank_of(p).
template <typename RankOf>
void Unpack(Builder& b, const Plan& p, uint16_t work,
            const std::vector<uint64_t>& wpos, RankOf rank_of) {
  uint64_t w = 0, o = 0, len = 0;
  for (int k = 0; k < p.size; ++k) {
    const int i = rank_of(k);
    const uint64_t c = p.counts[i];
    if (c == 0) continue;
    if (len > 0 && w + len == wpos[k] && o + len == p.displs[i]) {
      len += c;
      continue;
    }
    b.Copy(Ref(work, w, len), Ref(kRecvBuf, o, len));
    w = wpos[k];
    o = p.displs[i];
    len = c;
  }
  b.Copy(Ref(work, w, len), Ref(kRecvBuf, o, len));
}

// Element-aligned chunks of a vector: chunk c of n.
struct Chunks {
  Chunks(uint64_t bytes, uint64_t elem_size, int parts)
      : elem(elem_size), elems(bytes / elem_size), n(parts) {}
  uint64_t Offset(int c) const {
    return (uint64_t(c) * (elems / n) + std::min<uint64_t>(c, elems % n)) *
           elem;
  }
  uint64_t Len(int c) const { return Offset(c + 1) - Offset(c); }
  uint64_t elem, elems;
  int n;
};

}  // namespace

// ---- allreduce ----

void AllreduceRecursiveDoubling(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank();
  const uint64_t B = p.bytes;
  const BufRef in = Ref(kSendBuf, 0, B), out = Ref(kRecvBuf, 0, B);
  if (B == 0) return;
  if (n == 1) {
    b.Copy(in, out);
    return;
  }
  // MPICH's folding: the first 2 * rem ranks pair up, the even one hands
  // its vector to the odd one and gets the result back at the end.
  const int pof2 = LargestPowerOfTwoAtMost(n);
  const int rem = n - pof2;
  if (r < 2 * rem && r % 2 == 0) {
    b.Send(r + 1, 0, in);
    b.Recv(r + 1, 1, out);
    return;
  }
  int newrank = r < 2 * rem ? r / 2 : r - rem;
  auto real = [&](int nd) { return nd < rem ? 2 * nd + 1 : nd + rem; };
  // Input and output apart (the caller said so) and no fold: the first
  // round sends the input, receives the partner's vector straight into the
  // output and reduces the input into it (ours op theirs: right for a
  // commutative op, or a partner above us). No copy of the input, and with
  // two ranks no temporary.
  const int first = pof2 > 1 ? real(newrank ^ 1) : -1;
  const bool direct = r >= 2 * rem && pof2 > 1 && !b.MayOverlap(in, out) &&
                      (p.commutative || first > r);
  if (direct && pof2 == 2) {
    b.Send(first, 2, in);
    b.Recv(first, 2, out);
    b.Reduce(in, out);
    return;
  }
  const BufRef tmp = Ref(b.Tmp(B), 0, B);
  uint32_t round = 2;
  int mask = 1;
  if (direct) {
    b.Send(first, round, in);
    b.Recv(first, round, out);
    b.Reduce(in, out);
    ++round;
    mask = 2;
  } else {
    b.Copy(in, out);
    if (r < 2 * rem) {
      b.Recv(r - 1, 0, tmp);
      b.Reduce(tmp, out);  // x_{r-1} op x_r
    }
  }
  // acc covers consecutive ranks; the partner's ranks are all below or all
  // above ours, and so is its real rank.
  BufRef acc = out, spare = tmp;
  for (; mask < pof2; mask <<= 1, ++round) {
    const int nd = newrank ^ mask;
    const int d = real(nd);
    b.Send(d, round, acc);
    b.Recv(d, round, spare);
    if (p.commutative || d < r) {
      b.Reduce(spare, acc);  // acc = theirs op ours
    } else {
      b.Reduce(acc, spare);  // spare = ours op theirs
      std::swap(acc, spare);
    }
  }
  b.Copy(acc, out);
  if (r < 2 * rem) b.Send(r - 1, 1, out);
}

void AllreduceRabenseifner(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank();
  const uint64_t B = p.bytes;
  const BufRef in = Ref(kSendBuf, 0, B), out = Ref(kRecvBuf, 0, B);
  if (B == 0) return;
  if (n == 1) {
    b.Copy(in, out);
    return;
  }
  // Extra ranks fold into partners as in recursive doubling.
  const int pof2 = LargestPowerOfTwoAtMost(n);
  const int rem = n - pof2;
  if (r < 2 * rem && r % 2 == 0) {
    b.Send(r + 1, 0, in);
    b.Recv(r + 1, 1, out);
    return;
  }
  const Chunks ch(B, p.elem_size, pof2);
  auto range = [&](int lo, int hi) {
    return Sub(out, ch.Offset(lo), ch.Offset(hi) - ch.Offset(lo));
  };
  // The temporary holds the partner's copy of the half kept (the first
  // round's is the largest), or the folded partner's whole vector.
  const uint64_t half = std::max(ch.Offset(pof2 / 2), B - ch.Offset(pof2 / 2));
  const bool folded = r < 2 * rem;
  const uint16_t tmp = b.Tmp(folded ? B : half);
  int newrank;
  if (folded) {
    b.Copy(in, out);
    const BufRef t = Ref(tmp, 0, B);
    b.Recv(r - 1, 0, t);
    b.Reduce(t, out);  // x_{r-1} op x_r
    newrank = r / 2;
  } else {
    newrank = r - rem;
  }

  auto real = [&](int nd) { return nd < rem ? 2 * nd + 1 : nd + rem; };
  // Reduce-scatter by recursive halving, nearest partner first: before the
  // round of `mask` this rank's partial result covers the aligned group of
  // `mask` new ranks around it, the partner's the adjacent group, so the
  // operands keep the rank order. Afterwards the rank holds one of pof2
  // element-aligned chunks, fully reduced.
  struct Round {
    int peer, lo, mid, hi;
    bool keep_lower;
  };
  std::vector<Round> rounds;
  int lo = 0, hi = pof2;
  uint32_t tag = 2;
  for (int mask = 1; mask < pof2; mask <<= 1, ++tag) {
    const int nd = newrank ^ mask;
    const int mid = (lo + hi) / 2;
    const bool keep_lower = newrank < nd;
    const BufRef mine = keep_lower ? range(lo, mid) : range(mid, hi);
    const BufRef theirs = keep_lower ? range(mid, hi) : range(lo, mid);
    rounds.push_back({real(nd), lo, mid, hi, keep_lower});
    if (mask == 1 && !folded) {
      // Unless a fold already reduced into the output, the first round
      // sends straight from the input and copies only the half it keeps
      // (half the copy of recursive doubling); `theirs` is read before
      // `mine` of an aliased output is written (in place the copy is
      // skipped).
      b.Send(real(nd), tag, Sub(in, theirs.offset, theirs.len));
      b.Copy(Sub(in, mine.offset, mine.len), mine);
    } else {
      b.Send(real(nd), tag, theirs);
    }
    const BufRef t = Ref(tmp, 0, mine.len);
    b.Recv(real(nd), tag, t);
    if (p.commutative || nd < newrank) {
      b.Reduce(t, mine);  // theirs op ours
    } else {
      b.Reduce(mine, t);  // ours op theirs
      b.Copy(t, mine);
    }
    if (keep_lower) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  // Allgather by recursive doubling: the rounds again, farthest first.
  for (auto it = rounds.rbegin(); it != rounds.rend(); ++it, ++tag) {
    const BufRef mine =
        it->keep_lower ? range(it->lo, it->mid) : range(it->mid, it->hi);
    const BufRef theirs =
        it->keep_lower ? range(it->mid, it->hi) : range(it->lo, it->mid);
    b.Send(it->peer, tag, mine);
    b.Recv(it->peer, tag, theirs);
  }
  if (r < 2 * rem) b.Send(r - 1, 1, out);
}

void AllreduceRing(Builder& b, const Plan& p) {
  RONDO_CHECK(p.commutative, "ring allreduce needs a commutative op");
  const int n = b.size(), r = b.rank();
  const BufRef in = Ref(kSendBuf, 0, p.bytes), out = Ref(kRecvBuf, 0, p.bytes);
  b.Copy(in, out);
  if (n == 1 || p.bytes == 0) return;
  const Chunks ch(p.bytes, p.elem_size, n);
  const uint64_t max_chunk = ch.Len(0);
  const uint16_t tmp[2] = {b.Tmp(max_chunk), b.Tmp(max_chunk)};
  const int next = (r + 1) % n, prev = (r - 1 + n) % n;
  auto chunk = [&](int c) { return Sub(out, ch.Offset(c), ch.Len(c)); };
  // Reduce-scatter: afterwards this rank holds chunk r + 1 reduced.
  for (int s = 0; s + 1 < n; ++s) {
    const int sc = Mod(r - s, n), rc = Mod(r - s - 1, n);
    b.Send(next, WrapTag(s), chunk(sc));
    const BufRef t = Ref(tmp[s % 2], 0, ch.Len(rc));
    b.Recv(prev, WrapTag(s), t);
    b.Reduce(t, chunk(rc));
  }
  // Allgather of the reduced chunks.
  for (int s = 0; s + 1 < n; ++s) {
    const int sc = Mod(r + 1 - s, n), rc = Mod(r - s, n);
    b.Send(next, WrapTag(uint64_t(n) - 1 + s), chunk(sc));
    b.Recv(prev, WrapTag(uint64_t(n) - 1 + s), chunk(rc));
  }
}

void AllreduceReduceBcast(Builder& b, const Plan& p) {
  const BufRef in = Ref(kSendBuf, 0, p.bytes), out = Ref(kRecvBuf, 0, p.bytes);
  ReduceKnomial(b, p, 2, in, out, 0, 0);
  Plan bcast = p;
  bcast.root = 0;
  // Tags 0 and 1 are the reduction's; the bcast goes the other way anyway.
  BcastKnomial(b, bcast, 2, out);
}

// ---- allgather(v) ----

void AllgathervRing(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank();
  auto block = [&](int i) { return Ref(kRecvBuf, p.displs[i], p.counts[i]); };
  const BufRef in = Ref(kSendBuf, 0, p.own);
  const int next = (r + 1) % n, prev = (r - 1 + n) % n;
  // The own block goes out from the input, before and beside its copy to
  // its place (Builder::Copy): the copy is not on the critical path.
  for (int s = 0; s + 1 < n; ++s) {
    b.Send(next, WrapTag(s), s == 0 ? in : block(Mod(r - s, n)));
    b.Recv(prev, WrapTag(s), block(Mod(r - s - 1, n)));
    if (s == 0) b.Copy(in, block(r));
  }
  if (n == 1) b.Copy(in, block(r));
}

void AllgathervLinear(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank();
  const BufRef in = Ref(kSendBuf, 0, p.own);
  // Sends of the input first: its copy does not wait for them (Builder::Copy).
  for (int k = 1; k < n; ++k) b.Send((r + k) % n, 0, in);
  b.Copy(in, Ref(kRecvBuf, p.displs[r], p.counts[r]));
  for (int k = 1; k < n; ++k) {
    const int src = (r - k + n) % n;
    b.Recv(src, 0, Ref(kRecvBuf, p.displs[src], p.counts[src]));
  }
}

void AllgathervBruck(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank();
  // Position k of the work buffer holds rank r + k's block, back to back.
  const std::vector<uint64_t> pos =
      PrefixSums(n, [&](int k) { return p.counts[(r + k) % n]; });
  if (pos[n] == 0) return;
  const uint16_t w = b.Tmp(pos[n]);
  b.Copy(Ref(kSendBuf, 0, p.own), Ref(w, 0, p.own));
  uint32_t round = 0;
  for (int k = 1; k < n; k <<= 1, ++round) {
    const int cnt = std::min(k, n - k);
    // Rank r + k's positions [0, cnt) are our positions [k, k + cnt).
    b.Send(Mod(int64_t(r) - k, n), round, Ref(w, 0, pos[cnt]));
    b.Recv((r + k) % n, round, Ref(w, pos[k], pos[k + cnt] - pos[k]));
  }
  Unpack(b, p, w, pos, [&](int k) { return (r + k) % n; });
}

void AllgathervRecursiveDoubling(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank();
  const std::vector<uint64_t> pos = PrefixSums(n, [&](int i) {
    return p.counts[i];
  });
  // Work in buffer 1 when it is laid out in rank order without gaps, else
  // in a packed temporary.
  bool packed = true;
  for (int i = 0; i < n && packed; ++i) {
    packed = p.counts[i] == 0 || p.displs[i] == pos[i];
  }
  if (pos[n] == 0) return;
  const uint16_t work = packed ? kRecvBuf : b.Tmp(pos[n]);
  auto ranks = [&](int first, int end) {  // ranks [first, end)
    return Ref(work, pos[first], pos[end] - pos[first]);
  };
  const BufRef in = Ref(kSendBuf, 0, p.own);
  auto unpack = [&] {
    if (!packed) Unpack(b, p, work, pos, [](int k) { return k; });
  };
  const int pof2 = LargestPowerOfTwoAtMost(n);
  const int rem = n - pof2;
  if (r < 2 * rem && r % 2 == 0) {
    b.Send(r + 1, 0, in);
    b.Recv(r + 1, 1, ranks(0, n));
    unpack();
    return;
  }
  b.Copy(in, ranks(r, r + 1));
  int newrank;
  if (r < 2 * rem) {
    b.Recv(r - 1, 0, ranks(r - 1, r));
    newrank = r / 2;
  } else {
    newrank = r - rem;
  }
  // Group g (a new rank) holds real ranks [first(g), first(g + 1)).
  auto first = [&](int g) { return g < rem ? 2 * g : g + rem; };
  uint32_t round = 2;
  for (int mask = 1; mask < pof2; mask <<= 1, ++round) {
    const int nd = newrank ^ mask;
    const int d = nd < rem ? 2 * nd + 1 : nd + rem;
    const int mine = newrank & ~(mask - 1), theirs = nd & ~(mask - 1);
    b.Send(d, round, ranks(first(mine), first(mine + mask)));
    b.Recv(d, round, ranks(first(theirs), first(theirs + mask)));
  }
  if (r < 2 * rem) b.Send(r - 1, 1, ranks(0, n));
  unpack();
}

// ---- alltoall(v) ----

void AlltoallvPairwise(Builder& b, const Plan& p, bool may_alias) {
  const int n = b.size(), r = b.rank();
  auto send_block = [&](int i) {
    return Ref(kSendBuf, p.send_displs[i], p.send_counts[i]);
  };
  auto recv_block = [&](int i) {
    return Ref(kRecvBuf, p.displs[i], p.counts[i]);
  };
  b.Copy(send_block(r), recv_block(r));
  // Round k receives block r - k, whose input (when aliased) was sent in
  // round n - k: in place only if that round came first.
  auto direct = [&](int k) {
    return !may_alias || n - k < k || p.counts[Mod(r - k, n)] == 0;
  };
  uint64_t staged = 0;
  for (int k = 1; k < n; ++k) {
    if (!direct(k)) staged += p.counts[Mod(r - k, n)];
  }
  const uint16_t tmp = staged > 0 ? b.Tmp(staged) : 0;
  std::vector<std::pair<BufRef, BufRef>> later;
  uint64_t at = 0;
  for (int k = 1; k < n; ++k) {
    const int dst = (r + k) % n, src = Mod(r - k, n);
    b.Send(dst, 0, send_block(dst));
    if (direct(k)) {
      b.Recv(src, 0, recv_block(src));
    } else {
      const BufRef t = Ref(tmp, at, p.counts[src]);
      at += p.counts[src];
      b.Recv(src, 0, t);
      later.emplace_back(t, recv_block(src));
    }
  }
  for (const auto& [t, dst] : later) b.Copy(t, dst);
}

void AlltoallvLinear(Builder& b, const Plan& p, bool may_alias) {
  const int n = b.size(), r = b.rank();
  b.Copy(Ref(kSendBuf, p.send_displs[r], p.send_counts[r]),
         Ref(kRecvBuf, p.displs[r], p.counts[r]));
  for (int k = 1; k < n; ++k) {
    const int dst = (r + k) % n;
    b.Send(dst, 0, Ref(kSendBuf, p.send_displs[dst], p.send_counts[dst]));
  }
  uint64_t staged = 0;
  if (may_alias) {
    for (int i = 0; i < n; ++i) staged += i == r ? 0 : p.counts[i];
  }
  const uint16_t tmp = staged > 0 ? b.Tmp(staged) : 0;
  std::vector<std::pair<BufRef, BufRef>> later;
  uint64_t at = 0;
  for (int k = 1; k < n; ++k) {
    const int src = Mod(r - k, n);
    const BufRef dst = Ref(kRecvBuf, p.displs[src], p.counts[src]);
    if (!may_alias || p.counts[src] == 0) {
      b.Recv(src, 0, dst);
      continue;
    }
    const BufRef t = Ref(tmp, at, p.counts[src]);
    at += p.counts[src];
    b.Recv(src, 0, t);
    later.emplace_back(t, dst);
  }
  for (const auto& [t, dst] : later) b.Copy(t, dst);
}

void AlltoallBruck(Builder& b, const Plan& p) {
  const int n = b.size(), r = b.rank();
  const uint64_t B = p.bytes;
  if (B == 0) return;
  if (n == 1) {
    b.Copy(Ref(kSendBuf, 0, B), Ref(kRecvBuf, 0, B));
    return;
  }
  // Rotate: position i holds the block for rank r + i. All of the input is
  // read here, before any output is written.
  const uint16_t w = b.Tmp(uint64_t(n) * B);
  const uint64_t head = uint64_t(n - r) * B;
  b.Copy(Ref(kSendBuf, uint64_t(r) * B, head), Ref(w, 0, head));
  b.Copy(Ref(kSendBuf, 0, uint64_t(r) * B), Ref(w, head, uint64_t(r) * B));
  // Round k moves the positions with bit k set k ranks further.
  uint64_t max_blocks = 0;
  for (int k = 1; k < n; k <<= 1) {
    uint64_t m = 0;
    for (int s = k; s < n; s += 2 * k) m += std::min(s + k, n) - s;
    max_blocks = std::max(max_blocks, m);
  }
  int pack = -1;  // made on first use: single-run rounds send in place
  const uint16_t unpack = b.Tmp(max_blocks * B);
  uint32_t round = 0;
  for (int k = 1; k < n; k <<= 1, ++round) {
    std::vector<std::pair<uint64_t, uint64_t>> runs;  // [first, end)
    uint64_t m = 0;
    for (int s = k; s < n; s += 2 * k) {
      runs.emplace_back(s, std::min(s + k, n));
      m += runs.back().second - s;
    }
    BufRef out = Ref(w, runs[0].first * B, m * B);
    if (runs.size() > 1) {
      if (pack < 0) pack = b.Tmp(max_blocks * B);
      out = Ref(static_cast<uint16_t>(pack), 0, m * B);
      uint64_t at = 0;
      for (const auto& [f, e] : runs) {
        b.Copy(Ref(w, f * B, (e - f) * B),
               Ref(static_cast<uint16_t>(pack), at, (e - f) * B));
        at += (e - f) * B;
      }
    }
    b.Send((r + k) % n, round, out);
    b.Recv(Mod(int64_t(r) - k, n), round, Ref(unpack, 0, m * B));
    uint64_t at = 0;
    for (const auto& [f, e] : runs) {
      b.Copy(Ref(unpack, at, (e - f) * B), Ref(w, f * B, (e - f) * B));
      at += (e - f) * B;
    }
  }
  // Position i now holds the block from rank r - i.
  for (int i = 0; i < n; ++i) {
    b.Copy(Ref(w, uint64_t(i) * B, B),
           Ref(kRecvBuf, uint64_t(Mod(r - i, n)) * B, B));
  }
}

// ---- reduce_scatter ----

void ReduceScatterRing(Builder& b, const Plan& p) {
  RONDO_CHECK(p.commutative, "ring reduce_scatter needs a commutative op");
  const int n = b.size(), r = b.rank();
  const std::vector<uint64_t> off =
      PrefixSums(n, [&](int i) { return p.counts[i]; });
  auto in = [&](int i) { return Ref(kSendBuf, off[i], p.counts[i]); };
  const BufRef out = Ref(kRecvBuf, 0, p.counts[r]);
  if (n == 1) {
    b.Copy(in(0), out);
    return;
  }
  uint64_t max_block = 0;
  for (uint64_t c : p.counts) max_block = std::max(max_block, c);
  if (max_block == 0) return;
  const uint16_t tmp[2] = {b.Tmp(max_block), b.Tmp(max_block)};
  const int next = (r + 1) % n, prev = (r - 1 + n) % n;
  // Step s sends the partial sum of block r - s - 1 and receives that of
  // block r - s - 2; the last step's block is r's own.
  BufRef partial;
  for (int s = 0; s + 1 < n; ++s) {
    const int sb = Mod(r - s - 1, n), rb = Mod(r - s - 2, n);
    b.Send(next, WrapTag(s), s == 0 ? in(sb) : partial);
    const bool last = s + 2 == n;
    // Into the output directly, unless it shares bytes with the input
    // block still to be read (in place, at rank 0).
    const bool direct = last && !b.MayOverlap(out, in(rb));
    const BufRef dst = direct ? out : Ref(tmp[s % 2], 0, p.counts[rb]);
    b.Recv(prev, WrapTag(s), dst);
    b.Reduce(in(rb), dst);
    partial = dst;
  }
  b.Copy(partial, out);
}

void ReduceScatterReduceBcast(Builder& b, const Plan& p) {
  const int r = b.rank();
  uint64_t total = 0;
  for (uint64_t c : p.counts) total += c;
  if (total == 0) return;
  const BufRef in = Ref(kSendBuf, 0, total);
  const BufRef out = Ref(kRecvBuf, 0, p.counts[r]);
  // The whole vector reduced at rank 0 (in rank order), then scattered.
  const BufRef all = r == 0 ? Ref(b.Tmp(total), 0, total) : Ref(kRecvBuf, 0, 0);
  ReduceKnomial(b, p, 2, in, all, 0, 0);
  ScatterBlocksFromZero(b, p, all, out, 2);
}

// ---- scans ----

void ScanRecursiveDoubling(Builder& b, const Plan& p, bool exclusive) {
  const int n = b.size(), r = b.rank();
  const uint64_t B = p.bytes;
  if (B == 0) return;
  const BufRef in = Ref(kSendBuf, 0, B), out = Ref(kRecvBuf, 0, B);
  if (n == 1) {
    if (!exclusive) b.Copy(in, out);
    return;
  }
  // `partial` covers the aligned group of 2 * mask ranks around r (the
  // ranks seen so far); `out` the ones below r (and r, if inclusive).
  BufRef partial = Ref(b.Tmp(B), 0, B);
  BufRef spare = Ref(b.Tmp(B), 0, B);
  b.Copy(in, partial);  // before `out`, which may alias `in`, is written
  bool out_set = !exclusive;
  if (!exclusive) b.Copy(in, out);
  uint32_t round = 0;
  for (int64_t mask = 1; mask < n; mask <<= 1, ++round) {
    const int64_t d = r ^ mask;
    if (d >= n) continue;
    const int peer = static_cast<int>(d);
    b.Send(peer, round, partial);
    b.Recv(peer, round, spare);
    if (peer < r) {  // their ranks precede ours
      if (out_set) {
        b.Reduce(spare, out);
      } else {
        b.Copy(spare, out);
        out_set = true;
      }
      b.Reduce(spare, partial);
    } else if (p.commutative) {
      b.Reduce(spare, partial);
    } else {
      b.Reduce(partial, spare);  // ours op theirs
      std::swap(partial, spare);
    }
  }
}

}  // namespace rondo::nmad::coll::internal
