// Packet-scheduling strategies (NewMadeleine's "strategies").
//
// nmad keeps what a session has to send to a peer in a queue; when the
// peer's track on a rail is ready, the session's strategy decides what the
// next packet holds, and how a rendezvous is split across rails. Strategies
// see sends only through PendingChunk (priority, bytes on the wire, arrival
// order), so they stay independent of the core's message machinery.
//
//   default        one message per packet, in order; rendezvous on rail 0.
//   aggreg         small messages to the same peer packed into one packet;
//                  sends wait for the next progress pass so bursts combine.
//   prio           highest priority first (ties in arrival order); sends wait
//                  for the next progress pass so priorities can act.
//   split_balance  one message per packet; a rendezvous is split across all
//                  rails in proportion to their bandwidth.
//
// Thread-safety: a Strategy is immutable after construction; its methods are
// called with the peer's queue lock held and may run on any thread.
#ifndef RONDO_NMAD_STRATEGIES_STRATEGY_H_
#define RONDO_NMAD_STRATEGIES_STRATEGY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nmad/strategies/chunk_queue.h"

namespace rondo::nmad::strategies {

// What a strategy knows of one queued send.
struct PendingChunk {
  int priority = 0;        // higher first (prio)
  size_t wire_bytes = 0;   // chunk header + inline payload
  uint64_t order = 0;      // arrival order in the queue
};

struct RailInfo {
  int index = 0;
  double bandwidth_bytes_per_s = 0;
};

struct RdvPart {
  int rail = 0;
  uint64_t bytes = 0;
};
// Rails per rendezvous, and so parts of a plan (nmad's options allow 8
// rails; the wire carries as many parts, wire::kMaxParts).
inline constexpr size_t kMaxRdvParts = 8;

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const noexcept = 0;
  // True: Isend leaves the message queued for the next progress pass, so
  // that several can share a packet or be reordered.
  virtual bool defers_sends() const noexcept = 0;
  // Moves the chunks of the next packet from `queue` into `packet`: at least
  // one when the queue is not empty, at most `max_chunks`, and together at
  // most `budget` bytes unless the first chunk alone is larger.
  virtual void NextPacket(ChunkQueue& queue, size_t budget,
                          int max_chunks,
                          std::vector<PendingChunk*>& packet) const = 0;
  // How a rendezvous of `bytes` is split over `rails` (non-empty, at most
  // kMaxRdvParts): the parts go to `out` (room for kMaxRdvParts), and their
  // number is returned. Parts are non-empty and add up to `bytes` (one part
  // of 0 bytes for an empty message). Allocates nothing: it runs for every
  // large message.
  virtual int SplitRendezvousInto(uint64_t bytes,
                                  std::span<const RailInfo> rails,
                                  std::span<RdvPart, kMaxRdvParts> out) const;
  // The same plan as a vector (tests, tools).
  std::vector<RdvPart> SplitRendezvous(uint64_t bytes,
                                       std::span<const RailInfo> rails) const;
};

// "default", "aggreg", "prio", "split_balance". Throws std::invalid_argument
// naming the bad value and the allowed ones.
std::unique_ptr<Strategy> MakeStrategy(std::string_view name);
// The allowed names, for messages and `rondo-info`.
const std::vector<std::string>& StrategyNames();

}  // namespace rondo::nmad::strategies

#endif  // RONDO_NMAD_STRATEGIES_STRATEGY_H_
