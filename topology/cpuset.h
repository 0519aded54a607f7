// CpuSet: a fixed-capacity set of *core* indices (logical core numbers
// 0..num_cores-1 of a Topology, not OS processor numbers).
//
// Rondo schedules on cores: a task's cpuset says which cores may run it, and
// the queue tree has one leaf per core. The set has a fixed capacity so that
// it can be embedded in tasks with no allocation; a topology with more cores
// than kMaxCores is refused at load time with a clear error.
//
// Thread-safety: a value type; concurrent reads are safe.
#ifndef RONDO_TOPOLOGY_CPUSET_H_
#define RONDO_TOPOLOGY_CPUSET_H_

#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace rondo::topology {

class CpuSet {
 public:
  static constexpr int kMaxCores = 512;

  constexpr CpuSet() = default;
  CpuSet(std::initializer_list<int> cores) {
    for (int c : cores) Set(c);
  }
  // The set {core}. `core` must be in [0, kMaxCores) (checked by Set()).
  static CpuSet Single(int core) {
    CpuSet s;
    s.Set(core);
    return s;
  }
  // The set {first, ..., last}; empty when last < first.
  static CpuSet Range(int first, int last) {
    CpuSet s;
    for (int c = first; c <= last; ++c) s.Set(c);
    return s;
  }

  // Out-of-range indices are ignored by Test() and refused by Set() (abort:
  // callers validate user input before building sets).
  void Set(int core);
  void Clear(int core);
  bool Test(int core) const {
    return core >= 0 && core < kMaxCores &&
           ((words_[core / 64] >> (core % 64)) & 1u) != 0;
  }

  bool Empty() const {
    for (uint64_t w : words_)
      if (w != 0) return false;
    return true;
  }
  int Count() const {
    int n = 0;
    for (uint64_t w : words_) n += std::popcount(w);
    return n;
  }
  // Lowest core in the set, or -1 when empty.
  int First() const {
    for (int i = 0; i < kWords; ++i)
      if (words_[i] != 0) return i * 64 + std::countr_zero(words_[i]);
    return -1;
  }
  // Next core after `core`, or -1.
  int Next(int core) const;
  // Highest core in the set, or -1 when empty.
  int Last() const {
    for (int i = kWords - 1; i >= 0; --i)
      if (words_[i] != 0) return i * 64 + 63 - std::countl_zero(words_[i]);
    return -1;
  }

  // True when every core of `other` is in this set.
  bool Contains(const CpuSet& other) const {
    for (int i = 0; i < kWords; ++i)
      if ((other.words_[i] & ~words_[i]) != 0) return false;
    return true;
  }
  bool Intersects(const CpuSet& other) const {
    for (int i = 0; i < kWords; ++i)
      if ((other.words_[i] & words_[i]) != 0) return true;
    return false;
  }
  CpuSet operator|(const CpuSet& o) const {
    CpuSet r;
    for (int i = 0; i < kWords; ++i) r.words_[i] = words_[i] | o.words_[i];
    return r;
  }
  CpuSet operator&(const CpuSet& o) const {
    CpuSet r;
    for (int i = 0; i < kWords; ++i) r.words_[i] = words_[i] & o.words_[i];
    return r;
  }
  bool operator==(const CpuSet& o) const = default;

  // "{0-3,6}" style, "{}" when empty.
  std::string ToString() const;
  // Parses "0-3,6" (braces optional, whitespace allowed; "" and "{}" give
  // the empty set, so Parse(s.ToString()) == s). Throws
  // std::invalid_argument naming the bad text and the allowed form.
  static CpuSet Parse(const std::string& text);

 private:
  static constexpr int kWords = kMaxCores / 64;
  std::array<uint64_t, kWords> words_{};
};

}  // namespace rondo::topology

#endif  // RONDO_TOPOLOGY_CPUSET_H_
