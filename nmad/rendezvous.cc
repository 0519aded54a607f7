#include "nmad/rendezvous.h"

#include <algorithm>
#include <vector>

namespace rondo::nmad::internal {

uint64_t RdvKey(uint64_t rdv_id, int part) {
  return ((rdv_id & ((uint64_t{1} << 40) - 1)) << 8) |
         static_cast<uint64_t>(part);
}

int TrimParts(const wire::RdvPart* in, int n, uint64_t accepted,
              wire::RdvPart* out) {
  int k = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t b = std::min<uint64_t>(in[i].bytes, accepted);
    accepted -= b;
    out[i] = {in[i].rail, b};
    if (b) ++k;
  }
  return k;
}

int PlanParts(uint64_t len, bool to_self, int loopback_rail,
              std::span<const strategies::RailInfo> rails,
              const strategies::Strategy& strategy, wire::RdvPart* out) {
  if (to_self) {
    out[0] = {static_cast<uint8_t>(loopback_rail), len};
    return 1;
  }
  static_assert(static_cast<int>(strategies::kMaxRdvParts) == wire::kMaxParts);
  strategies::RdvPart plan[strategies::kMaxRdvParts];
  const int n = std::clamp(strategy.SplitRendezvousInto(len, rails, plan), 0,
                           wire::kMaxParts);
  uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    out[i] = {static_cast<uint8_t>(plan[i].rail), plan[i].bytes};
    sum += plan[i].bytes;
  }
  if (sum != len) {  // a strategy bug: fall back to one part
    out[0] = {0, len};
    return 1;
  }
  return n;
}

bool PartsOnValidRails(const wire::RdvPart* parts, int n, bool from_self,
                       int loopback_rail) {
  for (int i = 0; i < n; ++i) {
    const int rail = parts[i].rail;
    const bool ok = from_self ? rail == loopback_rail : rail < loopback_rail;
    if (!ok && parts[i].bytes) return false;
  }
  return true;
}

}  // namespace rondo::nmad::internal
