// Builder: appends steps to a Schedule and derives their dependencies from
// the bytes they touch, so that the algorithms are written as sequential
// programs and the schedule keeps exactly the orderings that program needs.
//
// Each step declares what it reads and writes; the builder makes it depend
// on the last earlier writer of every byte it reads (read after write) and,
// when it writes, on every earlier reader and writer of those bytes (write
// after read, write after write). Buffers 0 and 1 are tracked in one
// address space when the collective allows MPI_IN_PLACE aliasing
// (AssumeAlias), so the orderings hold whether or not they alias at run
// time; the algorithm still has to read an aliased input before, in program
// order, it writes the output bytes sharing it.
//
// Messages: two sends (or two receives) with the same peer and tag are
// always chained by a dependency, which makes reusing a tag safe as long as
// both ranks enumerate their messages to each other in the same order.
// Zero-length messages, copies and reductions are dropped (and return
// kNoStep) unless KeepEmptyMessages() was called (barrier tokens).
//
// Not thread-safe; one Builder per schedule being built.
#ifndef RONDO_NMAD_COLL_INTERNAL_BUILDER_H_
#define RONDO_NMAD_COLL_INTERNAL_BUILDER_H_

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "nmad/coll/schedule.h"

namespace rondo::nmad::coll::internal {

inline constexpr uint32_t kNoStep = 0xffffffffu;
inline constexpr uint64_t kNumTags = uint64_t{kMaxStepTag} + 1;

// The tag of the i-th message of a phase that may send more messages to one
// peer than there are tags (the builder's chaining keeps wrapping safe).
inline uint32_t WrapTag(uint64_t i) {
  return static_cast<uint32_t>(i % kNumTags);
}

inline BufRef Ref(uint16_t buf, uint64_t offset, uint64_t len) {
  return BufRef{buf, offset, len};
}
// The part [offset, offset + len) of `r`.
inline BufRef Sub(const BufRef& r, uint64_t offset, uint64_t len) {
  return BufRef{r.buf, r.offset + offset, len};
}
inline bool SameRef(const BufRef& a, const BufRef& b) {
  return a.buf == b.buf && a.offset == b.offset && a.len == b.len;
}

class Builder {
 public:
  Builder(Schedule* out, int rank, int size);
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Buffer 0 may start `buf0_minus_buf1` bytes after buffer 1 (negative:
  // before): accesses to both are tracked in one address space.
  void AssumeAlias(int64_t buf0_minus_buf1);
  void KeepEmptyMessages() { keep_empty_ = true; }
  // Tree annotations (Step::flow, Step::level) given to the steps added
  // from now on; (kNone, 0) outside trees.
  void SetTree(TreeFlow flow, int level) {
    flow_ = flow;
    level_ = static_cast<uint8_t>(level);
  }

  // A new temporary buffer of `bytes`.
  uint16_t Tmp(uint64_t bytes) { return out_->AddTmp(bytes); }

  // Each returns the new step's index, or kNoStep when nothing was added.
  // `after`: extra dependencies (kNoStep entries are ignored), for orderings
  // that no byte carries (barrier tokens).
  uint32_t Send(int peer, uint32_t tag, const BufRef& src,
                const std::vector<uint32_t>& after = {});
  uint32_t Recv(int peer, uint32_t tag, const BufRef& dst,
                const std::vector<uint32_t>& after = {});
  uint32_t Reduce(const BufRef& src, const BufRef& dst);  // dst = src op dst
  // A copy of the input onto its own place in the output (the same bytes
  // under AssumeAlias, none of them written yet) does not wait for the
  // earlier readers of the input: write the sends of the input first and
  // they run beside it.
  uint32_t Copy(const BufRef& src, const BufRef& dst);

  // Whether a and b may share bytes (same buffer, or buffers 0 and 1 under
  // AssumeAlias).
  bool MayOverlap(const BufRef& a, const BufRef& b) const;

 private:
  struct Interval {
    int64_t end = 0;
    uint32_t writer = kNoStep;
    std::vector<uint32_t> readers;  // since the last write
  };
  using Space = std::map<int64_t, Interval>;  // by start; disjoint

  struct Addr {
    uint32_t space;
    int64_t lo, hi;
  };
  Addr AddrOf(const BufRef& r) const;
  Space& SpaceFor(uint32_t space);
  static void Split(Space& m, int64_t at);
  // Collects the dependencies of an access to [lo, hi).
  void Collect(const Addr& a, bool write, std::vector<uint32_t>* deps);
  // Whether an earlier step wrote any byte of [lo, hi).
  bool Written(const Addr& a);
  // Records that `step` accessed [lo, hi).
  void Record(const Addr& a, bool write, uint32_t step);
  uint32_t AddStep(Step step, const std::vector<BufRef>& reads,
                   const BufRef* write, const std::vector<uint32_t>& after);
  uint32_t Message(StepKind kind, int peer, uint32_t tag, const BufRef& ref,
                   const std::vector<uint32_t>& after);

  Schedule* out_;
  int rank_, size_;
  bool alias_ = false;
  int64_t alias_delta_ = 0;
  bool keep_empty_ = false;
  TreeFlow flow_ = TreeFlow::kNone;
  uint8_t level_ = 0;
  std::vector<Space> spaces_;  // by buffer index (buffer 0 may map to 1)
  std::unordered_map<uint64_t, uint32_t> last_message_;  // (kind,peer,tag)
};

}  // namespace rondo::nmad::coll::internal

#endif  // RONDO_NMAD_COLL_INTERNAL_BUILDER_H_
