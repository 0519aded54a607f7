// Rendezvous planning (both sides of a large message): how a message is
// split into parts over the rails, the parts the receiver accepts, the
// drivers' key of each part, and the receiver's check of a sender's plan.
// Pure functions; the protocol's steps (RTS, RTR, the drivers' rendezvous
// per part) run in core.cc. Internal to //nmad.
#ifndef RONDO_NMAD_RENDEZVOUS_H_
#define RONDO_NMAD_RENDEZVOUS_H_

#include <cstdint>
#include <span>

#include "nmad/strategies/strategy.h"
#include "nmad/wire.h"

namespace rondo::nmad::internal {

// The drivers' rendezvous key of one part (< drivers::kMaxRdvKey): the low
// 40 bits of the sender's rendezvous id and the part (8 bits). Drivers tell
// senders apart (UCX: the sender's rank in the tag's top bits).
uint64_t RdvKey(uint64_t rdv_id, int part);

// Trims a split plan of `n` parts to its `accepted` first bytes (both sides
// do the same); `out` gets all `n` parts, some possibly empty. Returns the
// number of non-empty parts.
int TrimParts(const wire::RdvPart* in, int n, uint64_t accepted,
              wire::RdvPart* out);

// The plan of a message of `len` bytes: one part on the loopback rail to
// this process itself, else `strategy`'s split over the remote `rails`
// (non-empty), at most wire::kMaxParts parts; a plan whose parts do not add
// up to `len` (a strategy bug) becomes one part on rail 0. Returns the
// number of parts written to `out` (room for wire::kMaxParts).
int PlanParts(uint64_t len, bool to_self, int loopback_rail,
              std::span<const strategies::RailInfo> rails,
              const strategies::Strategy& strategy, wire::RdvPart* out);

// The receiver's check of a (trimmed) plan: every non-empty part is on the
// loopback rail when the sender is this process, else on a remote rail
// (< loopback_rail). A bad plan is refused whole.
bool PartsOnValidRails(const wire::RdvPart* parts, int n, bool from_self,
                       int loopback_rail);

}  // namespace rondo::nmad::internal

#endif  // RONDO_NMAD_RENDEZVOUS_H_
