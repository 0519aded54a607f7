// Neighbourhood exchanges (see neighbor.h).
#include "nmad/coll/neighbor.h"

#include <algorithm>
#include <map>
#include <utility>

#include "nmad/coll/internal/builder.h"

namespace rondo::nmad::coll {
namespace {

std::string Where(const char* side, size_t i) {
  return std::string(side) + "[" + std::to_string(i) + "]";
}

std::string CheckEdges(const char* side, const std::vector<NeighborEdge>& e,
                       int size) {
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i].peer >= size) {
      return Where(side, i) + ": peer " + std::to_string(e[i].peer) +
             " is not in [0, " + std::to_string(size) + ")";
    }
    if (e[i].tag > kMaxStepTag) {
      return Where(side, i) + ": tag " + std::to_string(e[i].tag) +
             " is over " + std::to_string(kMaxStepTag);
    }
    if (e[i].offset + e[i].len < e[i].offset) {
      return Where(side, i) + ": offset + len overflows";
    }
  }
  return "";
}

}  // namespace

std::string BuildNeighborExchange(int rank, int size,
                                  const std::vector<NeighborEdge>& sends,
                                  const std::vector<NeighborEdge>& recvs,
                                  Schedule* out) {
  if (out == nullptr) return "out is null";
  if (size < 1 || rank < 0 || rank >= size) {
    return "rank " + std::to_string(rank) + " is not in [0, " +
           std::to_string(size) + ")";
  }
  std::string err = CheckEdges("sends", sends, size);
  if (err.empty()) err = CheckEdges("recvs", recvs, size);
  if (!err.empty()) return err;

  // Receive blocks must not overlap: two messages cannot land in one place.
  std::vector<std::pair<uint64_t, size_t>> starts;
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (recvs[i].peer >= 0 && recvs[i].len > 0)
      starts.emplace_back(recvs[i].offset, i);
  }
  std::sort(starts.begin(), starts.end());
  for (size_t k = 1; k < starts.size(); ++k) {
    const NeighborEdge& a = recvs[starts[k - 1].second];
    if (a.offset + a.len > starts[k].first) {
      return Where("recvs", starts[k - 1].second) + " and " +
             Where("recvs", starts[k].second) +
             " overlap in the receive buffer";
    }
  }

  Schedule schedule;
  internal::Builder b(&schedule, rank, size);
  // Self edges: the k-th self receive with tag t takes the k-th self send
  // with tag t.
  std::map<uint32_t, std::vector<size_t>> self_sends;
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i].peer == rank) self_sends[sends[i].tag].push_back(i);
  }
  std::map<uint32_t, size_t> self_taken;
  // Receives first: a message finds its receive posted.
  for (size_t i = 0; i < recvs.size(); ++i) {
    const NeighborEdge& e = recvs[i];
    if (e.peer < 0) continue;
    const BufRef dst = internal::Ref(kRecvBuf, e.offset, e.len);
    if (e.peer != rank) {
      b.Recv(e.peer, e.tag, dst);
      continue;
    }
    size_t& k = self_taken[e.tag];
    auto it = self_sends.find(e.tag);
    if (it == self_sends.end() || k >= it->second.size()) {
      return Where("recvs", i) + ": a receive from this rank itself (tag " +
             std::to_string(e.tag) + ") has no matching send to itself";
    }
    const NeighborEdge& s = sends[it->second[k++]];
    if (s.len != e.len) {
      return Where("recvs", i) + ": receives " + std::to_string(e.len) +
             " bytes from this rank itself, which sends " +
             std::to_string(s.len);
    }
    b.Copy(internal::Ref(kSendBuf, s.offset, s.len), dst);
  }
  for (const auto& [tag, list] : self_sends) {
    if (self_taken[tag] != list.size()) {
      return "a send to this rank itself (tag " + std::to_string(tag) +
             ") has no matching receive from itself";
    }
  }
  for (const NeighborEdge& e : sends) {
    if (e.peer < 0 || e.peer == rank) continue;
    b.Send(e.peer, e.tag, internal::Ref(kSendBuf, e.offset, e.len));
  }
  *out = std::move(schedule);
  return "";
}

}  // namespace rondo::nmad::coll
