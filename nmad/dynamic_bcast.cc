#include "nmad/dynamic_bcast.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <unordered_map>

namespace rondo::nmad {
namespace {

constexpr uint32_t kMagic = 0x31424452;  // "RDB1" little-endian

void Put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Put64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}
uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

std::string CheckTargets(std::span<const BroadcastTarget> targets, int root,
                         int size) {
  if (targets.empty())
    return "the recipient list is empty (a broadcast needs at least one "
           "recipient)";
  std::unordered_map<int, size_t> seen;
  for (size_t i = 0; i < targets.size(); ++i) {
    const int r = targets[i].rank;
    if (r < 0 || r >= size)
      return "recipient " + std::to_string(i) + " is rank " +
             std::to_string(r) + ", outside 0.." + std::to_string(size - 1);
    if (r == root)
      return "recipient " + std::to_string(i) + " is the root itself (rank " +
             std::to_string(r) + "); list only the other ranks";
    auto [it, fresh] = seen.emplace(r, i);
    if (!fresh)
      return "rank " + std::to_string(r) + " is listed twice (recipients " +
             std::to_string(it->second) + " and " + std::to_string(i) + ")";
  }
  return "";
}

std::vector<BroadcastChild> TreeChildren(size_t s) {
  std::vector<BroadcastChild> out;
  size_t top = 1;
  while (top * 2 <= s) top *= 2;
  for (size_t p = top; p >= 1; p /= 2) {
    // Position p (list index p - 1) with the positions (p, min(2p, s + 1)).
    const size_t end = std::min(2 * p, s + 1);
    out.push_back({p - 1, p, end - 1});
    if (p == 1) break;
  }
  if (s == 0) out.clear();
  return out;
}

std::vector<int> ReceiveSteps(size_t m) {
  std::vector<int> step(m + 1, 0);  // by position; the root at 0, step 0
  // Walk the tree: a node's list covers positions (base, base + s].
  struct Node {
    size_t base, s;
  };
  std::vector<Node> stack{{0, m}};
  while (!stack.empty()) {
    Node n = stack.back();
    stack.pop_back();
    int t = step[n.base];
    for (const BroadcastChild& c : TreeChildren(n.s)) {
      const size_t pos = n.base + c.entry + 1;
      step[pos] = ++t;
      stack.push_back({pos, c.last - c.first});
    }
  }
  return std::vector<int>(step.begin() + 1, step.end());
}

std::vector<BroadcastTarget> OrderForTree(
    std::span<const BroadcastTarget> targets) {
  const size_t m = targets.size();
  const std::vector<int> steps = ReceiveSteps(m);
  // Positions from the earliest to the latest receiver.
  std::vector<size_t> positions(m);
  std::iota(positions.begin(), positions.end(), 0);
  std::stable_sort(positions.begin(), positions.end(),
                   [&](size_t a, size_t b) { return steps[a] < steps[b]; });
  // Targets from the highest priority down (stable).
  std::vector<size_t> by_prio(m);
  std::iota(by_prio.begin(), by_prio.end(), 0);
  std::stable_sort(by_prio.begin(), by_prio.end(), [&](size_t a, size_t b) {
    return targets[a].priority > targets[b].priority;
  });
  std::vector<BroadcastTarget> out(m);
  for (size_t i = 0; i < m; ++i) out[positions[i]] = targets[by_prio[i]];
  return out;
}

std::vector<uint8_t> EncodeBroadcastHeader(const BroadcastHeader& h) {
  std::vector<uint8_t> out;
  out.reserve(kBroadcastHeaderFixed + kBroadcastEntrySize * h.forward.size());
  Put32(out, kMagic);
  Put32(out, h.session);
  Put32(out, static_cast<uint32_t>(h.root));
  Put32(out, static_cast<uint32_t>(h.tag));
  Put64(out, h.length);
  Put32(out, h.self_seq);
  Put32(out, static_cast<uint32_t>(h.self_priority));
  Put32(out, static_cast<uint32_t>(h.forward.size()));
  for (const BroadcastEntry& e : h.forward) {
    Put32(out, static_cast<uint32_t>(e.rank));
    Put32(out, static_cast<uint32_t>(e.priority));
    Put32(out, e.seq);
  }
  return out;
}

bool DecodeBroadcastHeader(const uint8_t* data, size_t len, int self,
                           int size, uint64_t body_size, BroadcastHeader* out,
                           std::string* why) {
  auto fail = [why](std::string what) {
    if (why) *why = std::move(what);
    return false;
  };
  if (data == nullptr || len < kBroadcastHeaderFixed)
    return fail("header of " + std::to_string(len) + " bytes, shorter than " +
                std::to_string(kBroadcastHeaderFixed));
  if (Get32(data) != kMagic) return fail("bad magic");
  BroadcastHeader h;
  h.session = Get32(data + 4);
  h.root = static_cast<int32_t>(Get32(data + 8));
  h.tag = static_cast<int32_t>(Get32(data + 12));
  h.length = Get64(data + 16);
  h.self_seq = Get32(data + 24);
  h.self_priority = static_cast<int32_t>(Get32(data + 28));
  const uint32_t count = Get32(data + 32);
  if ((len - kBroadcastHeaderFixed) % kBroadcastEntrySize != 0 ||
      (len - kBroadcastHeaderFixed) / kBroadcastEntrySize != count)
    return fail("the list holds " + std::to_string(count) +
                " entries but the header has room for " +
                std::to_string((len - kBroadcastHeaderFixed) /
                               kBroadcastEntrySize) +
                " (" + std::to_string(len) + " bytes)");
  if (h.root < 0 || h.root >= size)
    return fail("root " + std::to_string(h.root) + " out of range");
  if (h.root == self) return fail("the receiver is the root");
  if (h.tag < 0) return fail("negative tag " + std::to_string(h.tag));
  if (h.length != body_size)
    return fail("the header announces " + std::to_string(h.length) +
                " bytes but the message carries " + std::to_string(body_size));
  if (count >= static_cast<uint32_t>(size))
    return fail("a list of " + std::to_string(count) + " entries in a job of " +
                std::to_string(size) + " ranks");
  h.forward.resize(count);
  std::vector<bool> seen(static_cast<size_t>(size), false);
  seen[h.root] = true;
  seen[self] = true;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = data + kBroadcastHeaderFixed + i * kBroadcastEntrySize;
    BroadcastEntry& x = h.forward[i];
    x.rank = static_cast<int32_t>(Get32(e));
    x.priority = static_cast<int32_t>(Get32(e + 4));
    x.seq = Get32(e + 8);
    if (x.rank < 0 || x.rank >= size)
      return fail("entry " + std::to_string(i) + " names rank " +
                  std::to_string(x.rank) + ", out of range");
    if (seen[x.rank])
      return fail("entry " + std::to_string(i) + " names rank " +
                  std::to_string(x.rank) +
                  " again (or the root or the receiver)");
    seen[x.rank] = true;
  }
  *out = std::move(h);
  return true;
}

// ---- BroadcastDetector ----

bool BroadcastDetector::Register(const void* buf, int tag,
                                 BroadcastTarget target) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key k{buf, tag};
  if (done_.count(k)) {
    ++stats_.missed;
    return false;
  }
  std::vector<BroadcastTarget>& v = pending_[k];
  for (const BroadcastTarget& t : v)
    if (t.rank == target.rank) {
      ++stats_.duplicates;
      return true;
    }
  v.push_back(target);
  ++stats_.registered;
  return true;
}

std::vector<BroadcastTarget> BroadcastDetector::Ready(const void* buf,
                                                      int tag) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key k{buf, tag};
  std::vector<BroadcastTarget> out;
  auto it = pending_.find(k);
  if (it != pending_.end()) {
    out = std::move(it->second);
    pending_.erase(it);
  }
  done_[k] = true;
  if (out.size() >= 2) {
    ++stats_.broadcasts;
    stats_.merged += out.size();
  } else if (out.size() == 1) {
    ++stats_.single;
  }
  return out;
}

void BroadcastDetector::Forget(const void* buf, int tag) {
  std::lock_guard<std::mutex> lock(mu_);
  done_.erase(Key{buf, tag});
  pending_.erase(Key{buf, tag});
}

BroadcastDetector::Stats BroadcastDetector::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace rondo::nmad
