// Simulator: static checks, then a randomised run (see simulator.h).
#include "nmad/coll/testing/simulator.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <tuple>
#include <utility>

namespace rondo::nmad::coll::testing {
namespace {

std::string RefText(const BufRef& r) {
  return "buf " + std::to_string(r.buf) + " [" + std::to_string(r.offset) +
         ", +" + std::to_string(r.len) + ")";
}

// Memory of one rank: base and length of every buffer.
struct Memory {
  std::vector<uint8_t*> base;
  std::vector<uint64_t> len;
  std::vector<std::vector<uint8_t>> tmps;
  uint8_t* At(const BufRef& r) const { return base[r.buf] + r.offset; }
};

std::string SetUpMemory(SimRank& rank, const Schedule& s, std::mt19937_64& rng,
                        Memory* m) {
  uint8_t* b0 = rank.send.data();
  uint64_t l0 = rank.send.size();
  uint8_t* b1 = rank.recv.data();
  uint64_t l1 = rank.recv.size();
  switch (rank.alias) {
    case SimRank::Alias::kNone:
      break;
    case SimRank::Alias::kSendInRecv:
      if (rank.alias_offset > l1 || rank.alias_len > l1 - rank.alias_offset) {
        return "alias window outside the receive buffer";
      }
      b0 = b1 + rank.alias_offset;
      l0 = rank.alias_len;
      break;
    case SimRank::Alias::kRecvInSend:
      if (rank.alias_offset > l0 || rank.alias_len > l0 - rank.alias_offset) {
        return "alias window outside the send buffer";
      }
      b1 = b0 + rank.alias_offset;
      l1 = rank.alias_len;
      break;
  }
  m->base = {b0, b1};
  m->len = {l0, l1};
  m->tmps.resize(s.tmp_bytes.size());
  for (size_t i = 0; i < s.tmp_bytes.size(); ++i) {
    m->tmps[i].resize(s.tmp_bytes[i]);
    for (auto& byte : m->tmps[i]) byte = static_cast<uint8_t>(rng());
    m->base.push_back(m->tmps[i].data());
    m->len.push_back(s.tmp_bytes[i]);
  }
  return "";
}

// Whether step a (earlier) is an ancestor of step b through dependencies.
class Order {
 public:
  Order(const Schedule& s, size_t bitset_steps) : s_(s) {
    const size_t n = s.steps.size();
    if (n > bitset_steps) return;
    words_ = (n + 63) / 64;
    bits_.assign(n * words_, 0);
    for (size_t j = 0; j < n; ++j) {
      uint64_t* row = &bits_[j * words_];
      for (uint32_t d : s.steps[j].deps) {
        const uint64_t* drow = &bits_[d * words_];
        for (size_t w = 0; w < words_; ++w) row[w] |= drow[w];
        row[d / 64] |= uint64_t{1} << (d % 64);
      }
    }
  }
  bool Before(uint32_t a, uint32_t b) {
    if (a > b) std::swap(a, b);
    if (a == b) return true;
    if (words_ > 0) return (bits_[b * words_ + a / 64] >> (a % 64)) & 1;
    const auto& direct = s_.steps[b].deps;
    if (std::find(direct.begin(), direct.end(), a) != direct.end()) return true;
    // Depth-first search from b over steps >= a.
    if (seen_.size() != s_.steps.size()) seen_.assign(s_.steps.size(), 0);
    ++stamp_;
    std::vector<uint32_t> stack = {b};
    while (!stack.empty()) {
      const uint32_t x = stack.back();
      stack.pop_back();
      for (uint32_t d : s_.steps[x].deps) {
        if (d == a) return true;
        if (d < a || seen_[d] == stamp_) continue;
        seen_[d] = stamp_;
        stack.push_back(d);
      }
    }
    return false;
  }

 private:
  const Schedule& s_;
  size_t words_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
};

std::string StaticChecks(const Schedule& s, const Memory& m,
                         size_t bitset_steps) {
  Order order(s, bitset_steps);
  // Same peer and tag, same direction: must be ordered.
  std::map<std::tuple<int, int, uint32_t>, uint32_t> last;
  for (uint32_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.kind != StepKind::kSend && st.kind != StepKind::kRecv) continue;
    const auto key = std::make_tuple(static_cast<int>(st.kind), st.peer, st.tag);
    auto it = last.find(key);
    if (it != last.end() && !order.Before(it->second, i)) {
      return "steps " + std::to_string(it->second) + " and " +
             std::to_string(i) + " are " +
             (st.kind == StepKind::kSend ? "sends to" : "receives from") +
             " rank " + std::to_string(st.peer) + " with tag " +
             std::to_string(st.tag) + " but neither depends on the other";
    }
    last[key] = i;
  }
  // Data races on real memory: in step order (a topological order), every
  // access must follow the last writer of its bytes, and a write every
  // reader since; by transitivity all conflicting pairs are then ordered.
  struct Interval {
    uintptr_t end;
    uint32_t writer;  // kNone if none
    std::vector<uint32_t> readers;
  };
  constexpr uint32_t kNone = 0xffffffffu;
  std::map<uintptr_t, Interval> memory;
  auto split = [&](uintptr_t at) {
    auto it = memory.upper_bound(at);
    if (it == memory.begin()) return;
    --it;
    if (it->first < at && it->second.end > at) {
      Interval right = it->second;
      it->second.end = at;
      memory.emplace_hint(std::next(it), at, std::move(right));
    }
  };
  auto race = [&](uint32_t a, uint32_t b) {
    return "race: " + DescribeStep(s, a) + " and " + DescribeStep(s, b) +
           " touch the same bytes, one writing, and neither depends on the "
           "other";
  };
  // Checks and records one access of step i.
  auto access = [&](const BufRef& r, uint32_t i, bool write) -> std::string {
    if (r.len == 0) return "";
    const uintptr_t lo = reinterpret_cast<uintptr_t>(m.At(r));
    const uintptr_t hi = lo + r.len;
    split(lo);
    split(hi);
    uintptr_t pos = lo;
    auto it = memory.lower_bound(lo);
    while (pos < hi) {
      if (it == memory.end() || it->first > pos) {
        const uintptr_t gap_end =
            it == memory.end() ? hi : std::min<uintptr_t>(it->first, hi);
        it = memory.emplace_hint(it, pos, Interval{gap_end, kNone, {}});
      }
      Interval& iv = it->second;
      if (iv.writer != kNone && iv.writer != i && !order.Before(iv.writer, i)) {
        return race(iv.writer, i);
      }
      if (write) {
        for (uint32_t rd : iv.readers) {
          if (rd != i && !order.Before(rd, i)) return race(rd, i);
        }
        iv.readers.clear();
        iv.writer = i;
      } else {
        iv.readers.push_back(i);
      }
      pos = iv.end;
      ++it;
    }
    return "";
  };
  for (uint32_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    std::string err;
    switch (st.kind) {
      case StepKind::kSend:
        err = access(st.src, i, false);
        break;
      case StepKind::kRecv:
        err = access(st.dst, i, true);
        break;
      case StepKind::kReduce: {
        const uint8_t* a = m.At(st.src);
        const uint8_t* b = m.At(st.dst);
        if (st.src.len > 0 && a < b + st.dst.len && b < a + st.src.len) {
          return "step " + std::to_string(i) + " reduces overlapping " +
                 RefText(st.src) + " and " + RefText(st.dst);
        }
        err = access(st.src, i, false);
        if (err.empty()) err = access(st.dst, i, true);
        break;
      }
      case StepKind::kCopy:
        if (m.At(st.src) == m.At(st.dst)) break;  // skipped by executors
        err = access(st.src, i, false);
        if (err.empty()) err = access(st.dst, i, true);
        break;
    }
    if (!err.empty()) return err;
  }
  return "";
}

struct Channel {
  std::deque<uint32_t> sends, recvs;          // step indices, posting order
  std::deque<std::vector<uint8_t>> buffered;  // eager: data of each send
  bool queued = false;
};

struct Event {
  bool deliver;
  int rank;
  uint32_t step;     // start
  size_t channel;    // deliver
};

}  // namespace

std::string DescribeStep(const Schedule& s, uint32_t index) {
  if (index >= s.steps.size()) return "step " + std::to_string(index) + " (?)";
  const Step& st = s.steps[index];
  std::string d = "step " + std::to_string(index) + " (";
  switch (st.kind) {
    case StepKind::kSend:
      d += "send " + RefText(st.src) + " to " + std::to_string(st.peer) +
           " tag " + std::to_string(st.tag);
      break;
    case StepKind::kRecv:
      d += "recv " + RefText(st.dst) + " from " + std::to_string(st.peer) +
           " tag " + std::to_string(st.tag);
      break;
    case StepKind::kReduce:
      d += "reduce " + RefText(st.src) + " into " + RefText(st.dst);
      break;
    case StepKind::kCopy:
      d += "copy " + RefText(st.src) + " to " + RefText(st.dst);
      break;
  }
  return d + ")";
}

std::string Simulate(const std::vector<Schedule>& schedules,
                     std::vector<SimRank>& ranks, const ReduceCallback& reduce,
                     uint64_t elem_size, const SimOptions& options,
                     SimStats* stats) {
  const int n = static_cast<int>(schedules.size());
  if (n == 0) return "no schedules";
  if (ranks.size() != schedules.size()) {
    return std::to_string(ranks.size()) + " ranks for " + std::to_string(n) +
           " schedules";
  }
  std::mt19937_64 rng(options.seed);
  std::vector<Memory> mem(n);
  for (int r = 0; r < n; ++r) {
    const std::string pre = "rank " + std::to_string(r) + ": ";
    std::string err = SetUpMemory(ranks[r], schedules[r], rng, &mem[r]);
    if (err.empty()) {
      err = schedules[r].Validate(n, mem[r].len[0], mem[r].len[1], elem_size);
    }
    if (err.empty()) err = StaticChecks(schedules[r], mem[r], options.bitset_steps);
    if (!err.empty()) return pre + err;
    for (const Step& st : schedules[r].steps) {
      if (st.kind == StepKind::kReduce && !reduce) {
        return pre + "a reduce step but no reduce callback";
      }
    }
  }

  // Dependency counters and reverse edges.
  std::vector<std::vector<uint32_t>> missing(n);
  std::vector<std::vector<std::vector<uint32_t>>> dependents(n);
  std::vector<std::vector<uint8_t>> state(n);  // 0 waiting, 1 started, 2 done
  std::vector<Event> ready;
  size_t remaining = 0;
  for (int r = 0; r < n; ++r) {
    const auto& steps = schedules[r].steps;
    missing[r].resize(steps.size());
    dependents[r].resize(steps.size());
    state[r].assign(steps.size(), 0);
    remaining += steps.size();
    for (uint32_t i = 0; i < steps.size(); ++i) {
      std::vector<uint32_t> deps = steps[i].deps;
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      missing[r][i] = static_cast<uint32_t>(deps.size());
      for (uint32_t d : deps) dependents[r][d].push_back(i);
      if (deps.empty()) ready.push_back({false, r, i, 0});
    }
  }
  SimStats local;
  auto complete = [&](int r, uint32_t i) {
    state[r][i] = 2;
    --remaining;
    ++local.steps;
    for (uint32_t j : dependents[r][i]) {
      if (--missing[r][j] == 0) ready.push_back({false, r, j, 0});
    }
  };

  std::map<std::tuple<int, int, uint32_t>, size_t> channel_index;
  std::vector<Channel> channels;
  std::vector<std::tuple<int, int, uint32_t>> channel_keys;
  auto channel = [&](int src, int dst, uint32_t tag) {
    auto [it, fresh] =
        channel_index.try_emplace(std::make_tuple(src, dst, tag), channels.size());
    if (fresh) {
      channels.emplace_back();
      channel_keys.push_back(it->first);
    }
    return it->second;
  };
  auto maybe_queue = [&](size_t c) {
    Channel& ch = channels[c];
    const bool has_send = !ch.sends.empty() || !ch.buffered.empty();
    if (!ch.queued && has_send && !ch.recvs.empty()) {
      ch.queued = true;
      ready.push_back({true, 0, 0, c});
    }
  };

  while (!ready.empty()) {
    const size_t pick = rng() % ready.size();
    const Event ev = ready[pick];
    ready[pick] = ready.back();
    ready.pop_back();
    if (!ev.deliver) {
      const int r = ev.rank;
      const Step& st = schedules[r].steps[ev.step];
      state[r][ev.step] = 1;
      switch (st.kind) {
        case StepKind::kCopy: {
          uint8_t* dst = mem[r].At(st.dst);
          const uint8_t* src = mem[r].At(st.src);
          if (dst != src && st.src.len > 0) std::memmove(dst, src, st.src.len);
          complete(r, ev.step);
          break;
        }
        case StepKind::kReduce:
          if (st.src.len > 0) {
            reduce(mem[r].At(st.src), mem[r].At(st.dst),
                   static_cast<size_t>(st.src.len / elem_size));
          }
          complete(r, ev.step);
          break;
        case StepKind::kSend: {
          const size_t c = channel(r, st.peer, st.tag);
          if (options.eager) {
            const uint8_t* src = mem[r].At(st.src);
            channels[c].buffered.emplace_back(src, src + st.src.len);
            complete(r, ev.step);
          } else {
            channels[c].sends.push_back(ev.step);
          }
          maybe_queue(c);
          break;
        }
        case StepKind::kRecv: {
          const size_t c = channel(st.peer, r, st.tag);
          channels[c].recvs.push_back(ev.step);
          maybe_queue(c);
          break;
        }
      }
      continue;
    }
    // Deliver the oldest message of a channel to its oldest receive.
    Channel& ch = channels[ev.channel];
    ch.queued = false;
    const auto [src, dst, tag] = channel_keys[ev.channel];
    const uint32_t rstep = ch.recvs.front();
    ch.recvs.pop_front();
    const Step& rs = schedules[dst].steps[rstep];
    std::vector<uint8_t> data;
    std::string sender;
    if (options.eager) {
      data = std::move(ch.buffered.front());
      ch.buffered.pop_front();
      sender = "a send";
    } else {
      const uint32_t sstep = ch.sends.front();
      ch.sends.pop_front();
      const Step& ss = schedules[src].steps[sstep];
      const uint8_t* p = mem[src].At(ss.src);
      data.assign(p, p + ss.src.len);
      sender = DescribeStep(schedules[src], sstep);
      complete(src, sstep);
    }
    if (data.size() != rs.dst.len) {
      return "rank " + std::to_string(src) + " sent " +
             std::to_string(data.size()) + " bytes (" + sender + ") to rank " +
             std::to_string(dst) + ", which expects " +
             std::to_string(rs.dst.len) + " in " +
             DescribeStep(schedules[dst], rstep);
    }
    if (!data.empty()) std::memcpy(mem[dst].At(rs.dst), data.data(), data.size());
    ++local.messages;
    local.bytes += data.size();
    complete(dst, rstep);
    maybe_queue(ev.channel);
  }

  if (stats != nullptr) *stats = local;
  if (remaining == 0) return "";
  std::string report = "deadlock: " + std::to_string(remaining) +
                       " steps cannot run; stuck:";
  // Posted but unmatched messages first: they are where the cycle shows.
  int shown = 0;
  for (uint8_t want : {uint8_t{1}, uint8_t{0}}) {
    for (int r = 0; r < n && shown < 16; ++r) {
      for (uint32_t i = 0; i < state[r].size() && shown < 16; ++i) {
        if (state[r][i] != want) continue;
        report += "\n  rank " + std::to_string(r) + " " +
                  DescribeStep(schedules[r], i) +
                  (want == 1 ? " posted, unmatched"
                             : " waits for " + std::to_string(missing[r][i]) +
                                   " dependencies");
        ++shown;
      }
    }
  }
  if (static_cast<size_t>(shown) < remaining) report += "\n  ...";
  return report;
}

}  // namespace rondo::nmad::coll::testing
