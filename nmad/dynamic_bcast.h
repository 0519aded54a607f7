// Dynamic broadcasts (Denis, Jeannot, Swartvagher, Thibault, "Using Dynamic
// Broadcasts to improve Task-Based Runtime Performances", Euro-Par 2020).
//
// A task runtime often knows, at the root only, which ranks need a piece of
// data; the recipients just post an ordinary receive from the root. A
// dynamic broadcast still moves the data along a binomial tree: the root
// sends self-contained active messages whose header carries the original
// root, the tag, and the list of (rank, priority) each receiver must forward
// to, trimmed at every hop. Session::DynamicBroadcast (nmad/core.h) runs it;
// this header holds the pure parts: the tree, the priority order, the wire
// header and its validating decoder, and the detection helper for runtimes.
//
// The tree: the m recipients take positions 1..m of a binomial tree rooted
// at position 0 (the root). A node whose list holds s entries (positions
// 1..s of its subtree, itself at 0) sends, largest subtree first, to the
// positions 2^j <= s, each with the sub-list (2^j, min(2^(j+1), s+1)). With
// 6 recipients (the paper's Figure 1) the root sends to 4 (list {5, 6}),
// then 2 ({3}), then 1; 4 sends to 6, then 5. Recipients are placed by
// priority: the higher the priority, the earlier its position receives
// (fewer sends before it), ties in the caller's order.
//
// Ordering: the root reserves, for every recipient, the next sequence number
// of its point-to-point stream to that recipient in the session, and the
// header carries it; the recipient injects the data as the message with
// that number. So a dynamic broadcast and plain sends from the same root
// match receives in the root's posting order (MPI's non-overtaking rule),
// whichever way the data travelled.
//
// Thread-safety: the functions are pure; BroadcastDetector is internally
// synchronised.
#ifndef RONDO_NMAD_DYNAMIC_BCAST_H_
#define RONDO_NMAD_DYNAMIC_BCAST_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace rondo::nmad {

struct BroadcastTarget {
  int rank = -1;
  int priority = 0;  // higher first, as for Session::Isend
};

// One entry of a forwarding list: a recipient, its priority, and the
// sequence number the root reserved for it.
struct BroadcastEntry {
  int32_t rank = -1;
  int32_t priority = 0;
  uint32_t seq = 0;
  bool operator==(const BroadcastEntry&) const = default;
};

// "" if `targets` is a valid recipient list for a broadcast from `root` in
// a job of `size` ranks, else what is wrong: empty, a rank outside
// 0..size-1, the root itself, a duplicate (naming the rank and both
// positions).
std::string CheckTargets(std::span<const BroadcastTarget> targets, int root,
                         int size);

// The targets in tree-position order (position p = index p - 1): higher
// priorities at positions that receive earlier. Stable for equal
// priorities.
std::vector<BroadcastTarget> OrderForTree(
    std::span<const BroadcastTarget> targets);

// The children of a node whose list has `s` entries, in sending order: for
// each, the list index of the child (its entry) and the [first, last) list
// indices of its own sub-list.
struct BroadcastChild {
  size_t entry;
  size_t first, last;
};
std::vector<BroadcastChild> TreeChildren(size_t s);

// The send step (1-based) at which each of positions 1..m receives when
// every node sends to its children one after another: the tree's depth in
// time, for tests and for OrderForTree.
std::vector<int> ReceiveSteps(size_t m);

// ---- wire header (carried in the active message's header) ----
//
//   u32 magic "RDB1" | u32 session | i32 root | i32 tag | u64 length |
//   u32 self seq | i32 self priority | u32 count | count x (i32 rank,
//   i32 priority, u32 seq)
// little-endian, packed.
struct BroadcastHeader {
  uint32_t session = 0;  // the point-to-point session the data belongs to
  int32_t root = -1;
  int32_t tag = 0;
  uint64_t length = 0;   // bytes of data (the active message's body)
  uint32_t self_seq = 0;       // the receiver's reserved sequence number
  int32_t self_priority = 0;   // the receiver's priority (for forwarding)
  std::vector<BroadcastEntry> forward;  // the receiver's sub-list
};

inline constexpr size_t kBroadcastHeaderFixed = 36;
inline constexpr size_t kBroadcastEntrySize = 12;

std::vector<uint8_t> EncodeBroadcastHeader(const BroadcastHeader& h);
// Decodes and validates a header received by rank `self` of a job of `size`
// ranks, whose active message carried `body_size` bytes of data. False (and
// *why) for anything that does not add up: short or oversized buffer, bad
// magic, a count that does not match the length, a length that does not
// match the body, ranks out of range, the root or the receiver in the list,
// duplicates, a negative tag. Never reads outside `data`.
bool DecodeBroadcastHeader(const uint8_t* data, size_t len, int self,
                           int size, uint64_t body_size, BroadcastHeader* out,
                           std::string* why);

// ---- detection (the paper's Section 3.1) ----
//
// A runtime registers each send of a piece of data (buffer, tag) to a rank
// as soon as it knows it, usually long before the data is ready; when the
// data is ready it calls Ready(), which hands back one plan: the
// recipients merged so far. Sends registered after Ready() for the same
// (buffer, tag) are "missed": they go as plain sends (Register returns
// false) and are counted.
class BroadcastDetector {
 public:
  // Registers a future send of (buf, tag) to `target`. True: merged into
  // the pending broadcast of (buf, tag) (the data is not ready yet). False:
  // (buf, tag) is not pending (never registered, or already handed out by
  // Ready): send it yourself, it counts as missed if it was handed out.
  // A rank registered twice for the same data is kept once.
  bool Register(const void* buf, int tag, BroadcastTarget target);
  // The data of (buf, tag) is ready: returns the merged recipients (in
  // registration order; empty if none) and forgets them.
  std::vector<BroadcastTarget> Ready(const void* buf, int tag);
  // The runtime reuses `buf` for new data under `tag`: later Register calls
  // start a new pending broadcast instead of counting as missed.
  void Forget(const void* buf, int tag);

  struct Stats {
    uint64_t registered = 0;   // Register calls merged into a pending send
    uint64_t broadcasts = 0;   // Ready calls with two or more recipients
    uint64_t single = 0;       // Ready calls with one recipient
    uint64_t merged = 0;       // recipients served by broadcasts
    uint64_t missed = 0;       // sends registered after their data was ready
    uint64_t duplicates = 0;   // registrations of a rank already pending
  };
  Stats stats() const;

 private:
  struct Key {
    const void* buf;
    int tag;
    bool operator<(const Key& o) const {
      return buf != o.buf ? buf < o.buf : tag < o.tag;
    }
  };
  mutable std::mutex mu_;
  std::map<Key, std::vector<BroadcastTarget>> pending_;
  std::map<Key, bool> done_;  // handed out by Ready (for the missed count)
  Stats stats_;
};

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_DYNAMIC_BCAST_H_
