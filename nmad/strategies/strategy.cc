#include "nmad/strategies/strategy.h"

#include <algorithm>
#include <stdexcept>

namespace rondo::nmad::strategies {

int Strategy::SplitRendezvousInto(uint64_t bytes,
                                  std::span<const RailInfo> rails,
                                  std::span<RdvPart, kMaxRdvParts> out) const {
  out[0] = RdvPart{rails.front().index, bytes};
  return 1;
}

std::vector<RdvPart> Strategy::SplitRendezvous(
    uint64_t bytes, std::span<const RailInfo> rails) const {
  RdvPart parts[kMaxRdvParts];
  const int n = SplitRendezvousInto(bytes, rails, parts);
  return std::vector<RdvPart>(parts, parts + n);
}

namespace {

class DefaultStrategy : public Strategy {
 public:
  std::string_view name() const noexcept override { return "default"; }
  bool defers_sends() const noexcept override { return false; }
  void NextPacket(ChunkQueue& queue, size_t, int,
                  std::vector<PendingChunk*>& packet) const override {
    if (queue.empty()) return;
    packet.push_back(queue.front());
    queue.pop_front();
  }
};

class AggregStrategy final : public Strategy {
 public:
  std::string_view name() const noexcept override { return "aggreg"; }
  bool defers_sends() const noexcept override { return true; }
  void NextPacket(ChunkQueue& queue, size_t budget,
                  int max_chunks,
                  std::vector<PendingChunk*>& packet) const override {
    size_t used = 0;
    while (!queue.empty() && static_cast<int>(packet.size()) < max_chunks) {
      PendingChunk* c = queue.front();
      if (!packet.empty() && used + c->wire_bytes > budget) break;
      used += c->wire_bytes;
      packet.push_back(c);
      queue.pop_front();
    }
  }
};

class PrioStrategy final : public Strategy {
 public:
  std::string_view name() const noexcept override { return "prio"; }
  bool defers_sends() const noexcept override { return true; }
  // Picks the highest-priority chunk (first arrived among equals), then keeps
  // filling with the next best ones that fit: a packet never carries a lower
  // priority ahead of a higher one that was left behind.
  void NextPacket(ChunkQueue& queue, size_t budget,
                  int max_chunks,
                  std::vector<PendingChunk*>& packet) const override {
    size_t used = 0;
    while (!queue.empty() && static_cast<int>(packet.size()) < max_chunks) {
      auto best = queue.begin();
      for (auto it = queue.begin(); it != queue.end(); ++it)
        if ((*it)->priority > (*best)->priority) best = it;
      PendingChunk* c = *best;
      if (!packet.empty() && used + c->wire_bytes > budget) break;
      used += c->wire_bytes;
      packet.push_back(c);
      queue.erase(best);
    }
  }
};

// The default's packets, with rendezvous spread over the rails.
class SplitBalanceStrategy final : public DefaultStrategy {
 public:
  std::string_view name() const noexcept override { return "split_balance"; }
  // Shares in proportion to bandwidth; pieces under 64 KiB are not worth a
  // rail of their own and go to the fastest rail.
  int SplitRendezvousInto(
      uint64_t bytes, std::span<const RailInfo> rails,
      std::span<RdvPart, kMaxRdvParts> out) const override {
    constexpr uint64_t kMinPart = 64 * 1024;
    double total_bw = 0;
    for (const RailInfo& r : rails) total_bw += std::max(r.bandwidth_bytes_per_s, 1.0);
    int n_parts = 0;
    uint64_t left = bytes;
    int fastest = rails.front().index;
    double fastest_bw = 0;
    for (const RailInfo& r : rails)
      if (r.bandwidth_bytes_per_s > fastest_bw) {
        fastest_bw = r.bandwidth_bytes_per_s;
        fastest = r.index;
      }
    // At most one part per rail (rails.size() <= kMaxRdvParts), the
    // remainder added to the fastest rail's.
    for (size_t i = 0; i < rails.size() && n_parts < static_cast<int>(out.size());
         ++i) {
      const double share =
          std::max(rails[i].bandwidth_bytes_per_s, 1.0) / total_bw;
      uint64_t n = i + 1 == rails.size()
                       ? left
                       : std::min<uint64_t>(left, static_cast<uint64_t>(
                                                      share * bytes));
      if (n == 0) continue;
      if (n < kMinPart && rails[i].index != fastest) continue;
      out[n_parts++] = {rails[i].index, n};
      left -= n;
    }
    if (left > 0) {
      RdvPart* it = std::find_if(out.data(), out.data() + n_parts,
                                 [&](const RdvPart& p) { return p.rail == fastest; });
      if (it != out.data() + n_parts)
        it->bytes += left;
      else if (n_parts < static_cast<int>(out.size()))
        out[n_parts++] = {fastest, left};
      else
        out[n_parts - 1].bytes += left;  // not reached: rails <= parts
    }
    if (n_parts == 0) out[n_parts++] = {fastest, 0};
    return n_parts;
  }
};

}  // namespace

const std::vector<std::string>& StrategyNames() {
  static const std::vector<std::string> names = {"default", "aggreg", "prio",
                                                 "split_balance"};
  return names;
}

std::unique_ptr<Strategy> MakeStrategy(std::string_view name) {
  if (name == "default") return std::make_unique<DefaultStrategy>();
  if (name == "aggreg") return std::make_unique<AggregStrategy>();
  if (name == "prio") return std::make_unique<PrioStrategy>();
  if (name == "split_balance") return std::make_unique<SplitBalanceStrategy>();
  std::string allowed;
  for (const std::string& n : StrategyNames())
    allowed += (allowed.empty() ? "" : ", ") + n;
  throw std::invalid_argument("Unknown strategy '" + std::string(name) +
                              "'. Expected one of: " + allowed);
}

}  // namespace rondo::nmad::strategies
