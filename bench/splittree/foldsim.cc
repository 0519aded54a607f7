// The folded-collective simulator (see foldsim.h for what is modelled).
//
// Structure: one event queue ordered by (time, creation order). A core that
// is not running a slice is "dispatched": it picks a runnable thread
// (round-robin, quantum) and starts one slice of that thread's oldest step
// that can progress; the slice's end is an event, where its effects are
// applied (bytes moved, steps done, steps made ready, threads notified) and
// the affected cores are dispatched again. The only other events are
// "visible" notifications (a message's first chunk reaching its receiver
// after latency_ns). Nothing polls, so an empty queue with unfinished ranks
// is a deadlock.
#include "bench/splittree/foldsim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace rondo::nmad::coll {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kMaxStuckLines = 32;
// A guard against a simulator bug, far above any sane run (every event
// moves at least one slice of work forward, so runs are finite).
constexpr int64_t kMaxEvents = 2'000'000'000;

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

enum class ItemKind : uint8_t {
  kLocal,    // copy or reduce: CPU work in chunk slices
  kSendIn,   // two-copy send: copy chunks into the bounce buffer
  kPost,     // single-copy send: post (step_ns), then wait for the receiver
  kRecvOut,  // receive: copy chunks out (two-copy) or from the sender
  kCompute,  // the application's computation, in quantum slices
};

enum class Phase : uint8_t { kStart, kCompute, kWait, kDone };

struct Message {
  int send_rank = -1, send_step = -1;
  int recv_rank = -1, recv_step = -1;
  uint64_t len = 0;
  int slices = 1;  // max(1, ceil(len / chunk)): an empty message is a header
  int in_started = 0, in_done = 0;    // sender's slices (two-copy)
  int out_started = 0, out_done = 0;  // receiver's slices
  bool posted = false;                // single copy: the sender posted
  double visible_ns = kInf;           // receiver may start from then
};

struct StepState {
  int deps_left = 0;
  std::vector<uint32_t> dependents;
  bool ready = false;
  bool done = false;
  int msg = -1;
  int thread = -1;
  StepPlace place = StepPlace::kComm;
};

struct Item {
  int rank = -1;
  int step = -1;  // -1 for kCompute
  ItemKind kind = ItemKind::kLocal;
  int slices = 1;
  int slices_done = 0;
  uint64_t len = 0;        // kLocal: bytes
  double ns_per_byte = 0;  // kLocal
  double compute_left = 0;
  // kRecvOut: the receive has been posted (its step_ns paid, in a slice of
  // its own, as soon as the step is ready: the engine task posts it).
  bool posted = false;
};

struct Thread {
  int rank = -1;
  bool app = false;
  int core = -1;
  std::vector<int> items;  // in the order they became ready
};

struct RankState {
  int app_thread = -1;
  int progress_thread = -1;  // -1: placement none
  Phase phase = Phase::kStart;
  int app_start_left = 0;
  int steps_left = 0;
  bool done = false;
};

struct CoreState {
  std::vector<int> ring;  // threads placed on this core, in creation order
  int last = -1;          // ring index of the thread that ran last
  bool busy = false;
  bool idle = true;
  double idle_since = 0;
  double tenure_start = 0;
};

struct Event {
  double time;
  int64_t seq;
  int core;    // kSliceEnd: the core; kVisible: -1
  int thread;  // kSliceEnd: the thread; kVisible: the thread to notify
  int item;    // kSliceEnd: the item; kVisible: -1
  bool operator>(const Event& o) const {
    return std::tie(time, seq) > std::tie(o.time, o.seq);
  }
};

class Simulator {
 public:
  Simulator(const std::vector<Schedule>& schedules,
            const std::vector<std::vector<StepPlace>>& places,
            const engine::NodePlacement& placement, int num_cores,
            double compute_ns, uint64_t unit_bytes, const CostModel& cost)
      : schedules_(schedules),
        cost_(cost),
        compute_ns_(compute_ns),
        nranks_(static_cast<int>(schedules.size())) {
    bounce_slices_ = std::max<int64_t>(
        1, static_cast<int64_t>(cost.bounce_bytes / cost.chunk_bytes));
    copy_ns_per_byte_ = 1.0 / cost.copy_bytes_per_ns;
    result_.unit_ns = unit_bytes == 0 ? 0 : cost.CopyNs(unit_bytes);
    result_.ranks.resize(nranks_);
    result_.cores.resize(num_cores);
    cores_.resize(num_cores);
    ranks_.resize(nranks_);
    steps_.resize(nranks_);
    pending_flag_.assign(num_cores, false);
    CreateThreads(placement, num_cores);
    for (int r = 0; r < nranks_; ++r) IndexSteps(r, places[r]);
    MatchMessages();
  }

  FoldResult Run() {
    for (int r = 0; r < nranks_; ++r) {
      for (size_t i = 0; i < steps_[r].size(); ++i) {
        if (steps_[r][i].deps_left == 0) MakeReady(r, static_cast<int>(i), 0);
      }
      AdvanceApp(r, 0);
    }
    DispatchPending(0);
    // All events of one instant are applied before any core picks its next
    // slice, so that a tie (a chunk copied in exactly when the previous one
    // is copied out) never makes a thread look blocked.
    while (!events_.empty()) {
      const double now = events_.top().time;
      while (!events_.empty() && events_.top().time == now) {
        if (++result_.events > kMaxEvents) {
          throw std::runtime_error(
              "foldsim: more than " + std::to_string(kMaxEvents) +
              " events; the simulation does not converge (a simulator bug)");
        }
        const Event e = events_.top();
        events_.pop();
        if (e.core < 0) {
          Notify(e.thread);
        } else {
          EndSlice(e);
        }
      }
      DispatchPending(now);
    }
    Finish();
    return std::move(result_);
  }

 private:
  // ---- set-up ----

  int NewThread(int rank, bool app, int core) {
    Thread t;
    t.rank = rank;
    t.app = app;
    t.core = core;
    threads_.push_back(std::move(t));
    const int id = static_cast<int>(threads_.size() - 1);
    cores_[core].ring.push_back(id);
    return id;
  }

  void CreateThreads(const engine::NodePlacement& placement, int num_cores) {
    auto check_core = [&](int core, int rank, const char* what) {
      if (core < 0 || core >= num_cores) {
        throw std::invalid_argument(
            std::string("foldsim: ") + what + " of rank " +
            std::to_string(rank) + " is core " + std::to_string(core) +
            "; expected a core from 0 to " + std::to_string(num_cores - 1));
      }
    };
    for (int r = 0; r < nranks_; ++r) {
      check_core(placement.app_cores[r], r, "application core");
      ranks_[r].app_thread = NewThread(r, true, placement.app_cores[r]);
      if (!placement.progress_cores[r].empty()) {
        const int pc = placement.progress_cores[r][0];
        check_core(pc, r, "progress core");
        ranks_[r].progress_thread = NewThread(r, false, pc);
      }
    }
  }

  void IndexSteps(int r, const std::vector<StepPlace>& places) {
    const Schedule& s = schedules_[r];
    std::vector<StepState>& st = steps_[r];
    st.resize(s.steps.size());
    RankState& rs = ranks_[r];
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const Step& step = s.steps[i];
      StepState& state = st[i];
      state.place = places[i];
      const bool on_app = state.place != StepPlace::kComm ||
                          rs.progress_thread < 0;
      state.thread = on_app ? rs.app_thread : rs.progress_thread;
      state.deps_left = static_cast<int>(step.deps.size());
      for (uint32_t d : step.deps) {
        if (d >= i) {
          throw std::invalid_argument(
              "foldsim: rank " + std::to_string(r) + " step " +
              std::to_string(i) + " depends on step " + std::to_string(d) +
              "; a step may only depend on earlier steps");
        }
        st[d].dependents.push_back(static_cast<uint32_t>(i));
      }
      if ((step.kind == StepKind::kSend || step.kind == StepKind::kRecv) &&
          (step.peer < 0 || step.peer >= nranks_)) {
        throw std::invalid_argument(
            "foldsim: rank " + std::to_string(r) + " step " +
            std::to_string(i) + " has peer " + std::to_string(step.peer) +
            "; expected a rank from 0 to " + std::to_string(nranks_ - 1));
      }
      if (state.place == StepPlace::kAppStart) ++rs.app_start_left;
    }
    rs.steps_left = static_cast<int>(s.steps.size());
  }

  int Slices(uint64_t len) const {
    return len == 0 ? 1
                    : static_cast<int>((len + cost_.chunk_bytes - 1) /
                                       cost_.chunk_bytes);
  }

  // The k-th send from a to b with tag t matches the k-th receive at b from
  // a with tag t, in step order (the order the schedule contract fixes).
  void MatchMessages() {
    using Key = std::tuple<int, int, uint32_t>;  // sender, receiver, tag
    std::map<Key, std::vector<int>> sends, recvs;
    for (int r = 0; r < nranks_; ++r) {
      const auto& steps = schedules_[r].steps;
      for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].kind == StepKind::kSend)
          sends[{r, steps[i].peer, steps[i].tag}].push_back(static_cast<int>(i));
        if (steps[i].kind == StepKind::kRecv)
          recvs[{steps[i].peer, r, steps[i].tag}].push_back(static_cast<int>(i));
      }
    }
    for (auto& [key, list] : sends) {
      const auto& [from, to, tag] = key;
      const auto it = recvs.find(key);
      for (size_t k = 0; k < list.size(); ++k) {
        Message m;
        m.send_rank = from;
        m.send_step = list[k];
        m.len = schedules_[from].steps[list[k]].src.len;
        if (it != recvs.end() && k < it->second.size()) {
          m.recv_rank = to;
          m.recv_step = it->second[k];
          const uint64_t want = schedules_[to].steps[m.recv_step].dst.len;
          if (want != m.len) {
            throw std::invalid_argument(
                "foldsim: rank " + std::to_string(from) + " step " +
                std::to_string(m.send_step) + " sends " +
                std::to_string(m.len) + " bytes to rank " + std::to_string(to) +
                " tag " + std::to_string(tag) + ", whose matching receive (step " +
                std::to_string(m.recv_step) + ") expects " +
                std::to_string(want) + " bytes; lengths must be equal");
          }
          steps_[to][m.recv_step].msg = static_cast<int>(messages_.size());
        }
        m.slices = Slices(m.len);
        steps_[from][m.send_step].msg = static_cast<int>(messages_.size());
        messages_.push_back(m);
      }
    }
    result_.messages = static_cast<int64_t>(messages_.size());
  }

  // ---- steps and phases ----

  int NewItem(Item item) {
    items_.push_back(item);
    return static_cast<int>(items_.size() - 1);
  }

  void AddItem(int thread, int item) {
    threads_[thread].items.push_back(item);
    Notify(thread);
  }

  void MakeReady(int r, int i, double /*now*/) {
    StepState& st = steps_[r][i];
    st.ready = true;
    const Step& step = schedules_[r].steps[i];
    Item item;
    item.rank = r;
    item.step = i;
    switch (step.kind) {
      case StepKind::kCopy:
      case StepKind::kReduce:
        item.kind = ItemKind::kLocal;
        // A copy onto itself is skipped, as the executor does.
        item.len = step.kind == StepKind::kCopy &&
                           step.src.buf == step.dst.buf &&
                           step.src.offset == step.dst.offset
                       ? 0
                       : step.dst.len;
        item.slices = Slices(item.len);
        item.ns_per_byte =
            copy_ns_per_byte_ *
            (step.kind == StepKind::kReduce ? cost_.reduce_factor : 1.0);
        break;
      case StepKind::kSend:
        if (cost_.protocol == Protocol::kTwoCopy) {
          item.kind = ItemKind::kSendIn;
          item.slices = messages_[st.msg].slices;
        } else {
          item.kind = ItemKind::kPost;
          item.slices = 1;
        }
        break;
      case StepKind::kRecv:
        item.kind = ItemKind::kRecvOut;
        item.slices = st.msg >= 0 ? messages_[st.msg].slices : 1;
        break;
    }
    AddItem(st.thread, NewItem(item));
  }

  void CompleteStep(int r, int i, double now) {
    StepState& st = steps_[r][i];
    st.done = true;
    for (uint32_t d : st.dependents) {
      if (--steps_[r][d].deps_left == 0) MakeReady(r, static_cast<int>(d), now);
    }
    RankState& rs = ranks_[r];
    if (st.place == StepPlace::kAppStart) --rs.app_start_left;
    --rs.steps_left;
    AdvanceApp(r, now);
  }

  void AdvanceApp(int r, double now) {
    RankState& rs = ranks_[r];
    RankTimes& t = result_.ranks[r];
    bool changed = false;
    for (;;) {
      if (rs.phase == Phase::kStart && rs.app_start_left == 0) {
        t.call_return_ns = now;
        if (compute_ns_ > 0) {
          rs.phase = Phase::kCompute;
          Item c;
          c.rank = r;
          c.kind = ItemKind::kCompute;
          c.compute_left = compute_ns_;
          c.slices = std::numeric_limits<int>::max();
          threads_[rs.app_thread].items.push_back(NewItem(c));
        } else {
          t.compute_end_ns = now;
          rs.phase = Phase::kWait;
        }
        changed = true;
        continue;
      }
      if (rs.phase == Phase::kWait && rs.steps_left == 0) {
        t.end_ns = now;
        rs.phase = Phase::kDone;
        rs.done = true;
        changed = true;
      }
      break;
    }
    if (changed) Notify(rs.app_thread);
  }

  // ---- what can run ----

  bool Eligible(const Thread& th, const Item& it) const {
    if (!th.app) return true;  // a progress thread runs only kComm steps
    const RankState& rs = ranks_[th.rank];
    if (it.kind == ItemKind::kCompute) return rs.phase == Phase::kCompute;
    const StepPlace place = steps_[it.rank][it.step].place;
    switch (rs.phase) {
      case Phase::kStart:
        return place == StepPlace::kAppStart || place == StepPlace::kComm;
      case Phase::kWait:
        return place == StepPlace::kAppWait || place == StepPlace::kComm;
      default:
        return false;
    }
  }

  bool CanProgress(const Item& it, double now) const {
    switch (it.kind) {
      case ItemKind::kLocal:
      case ItemKind::kPost:
      case ItemKind::kCompute:
        return true;
      case ItemKind::kSendIn: {
        const Message& m = messages_[steps_[it.rank][it.step].msg];
        return m.in_started < m.slices &&
               m.in_started - m.out_done < bounce_slices_;
      }
      case ItemKind::kRecvOut: {
        if (!it.posted) return true;
        const int mi = steps_[it.rank][it.step].msg;
        if (mi < 0) return false;  // no matching send: never
        const Message& m = messages_[mi];
        if (m.out_started >= m.slices || now < m.visible_ns) return false;
        return cost_.protocol == Protocol::kTwoCopy ? m.in_done > m.out_started
                                                    : m.posted;
      }
    }
    return false;
  }

  // The item this thread would work on now, or -1.
  int NextItem(int thread, double now) const {
    const Thread& th = threads_[thread];
    if (th.app && ranks_[th.rank].phase == Phase::kDone) return -1;
    for (int id : th.items) {
      const Item& it = items_[id];
      if (Eligible(th, it) && CanProgress(it, now)) return id;
    }
    return -1;
  }

  // ---- cores ----

  void Notify(int thread) {
    const int core = threads_[thread].core;
    if (!cores_[core].busy && !pending_flag_[core]) {
      pending_flag_[core] = true;
      pending_.push_back(core);
    }
  }

  void DispatchPending(double now) {
    // Dispatching only starts slices (never completes anything), so it
    // cannot add to the list; sort for a deterministic, readable order.
    std::sort(pending_.begin(), pending_.end());
    for (int core : pending_) {
      pending_flag_[core] = false;
      Dispatch(core, now);
    }
    pending_.clear();
  }

  void Dispatch(int core, double now) {
    CoreState& c = cores_[core];
    if (c.busy) return;
    const int n = static_cast<int>(c.ring.size());
    if (n == 0) return;
    int pick = -1, item = -1;
    if (c.last >= 0 && !c.idle && now - c.tenure_start < cost_.quantum_ns) {
      item = NextItem(c.ring[c.last], now);
      if (item >= 0) pick = c.last;
    }
    if (pick < 0) {
      // Round-robin from the thread after the last one; the last one itself
      // comes last (it keeps the core when nobody else wants it).
      for (int k = 1; k <= n; ++k) {
        const int idx = ((c.last < 0 ? -1 : c.last) + k + n) % n;
        item = NextItem(c.ring[idx], now);
        if (item >= 0) {
          pick = idx;
          break;
        }
      }
    }
    if (pick < 0) {
      if (!c.idle) {
        c.idle = true;
        c.idle_since = now;
      }
      return;
    }
    double overhead = 0;
    CoreStats& stats = result_.cores[core];
    if (c.idle) {
      // The last thread blocked alone on this core: it spun for spin_ns,
      // then slept (the core with it). An application thread that
      // returned from Wait does not spin.
      const bool spinning =
          c.last >= 0 && now - c.idle_since <= cost_.spin_ns &&
          !(threads_[c.ring[c.last]].app &&
            ranks_[threads_[c.ring[c.last]].rank].done);
      if (!spinning) {
        overhead = cost_.wake_ns;
        ++stats.wakeups;
      } else if (pick != c.last) {
        overhead = cost_.switch_ns;
        ++stats.switches;
      }
      c.tenure_start = now;
    } else if (pick != c.last) {
      overhead = cost_.switch_ns;
      ++stats.switches;
      c.tenure_start = now;
    } else if (now - c.tenure_start >= cost_.quantum_ns) {
      c.tenure_start = now;  // quantum over, nobody else wants the core
    }
    c.idle = false;
    c.last = pick;
    c.busy = true;
    StartSlice(core, c.ring[pick], item, now, overhead);
  }

  void StartSlice(int core, int thread, int item_id, double now,
                  double overhead) {
    Item& it = items_[item_id];
    double work = 0;
    if (it.kind == ItemKind::kCompute) {
      work = std::min(it.compute_left, cost_.quantum_ns);
      it.compute_left -= work;
    } else if (it.kind == ItemKind::kRecvOut && !it.posted) {
      work = cost_.step_ns;
    } else {
      if (it.slices_done == 0 && it.kind != ItemKind::kRecvOut)
        work += cost_.step_ns;
      switch (it.kind) {
        case ItemKind::kLocal: {
          const uint64_t off = uint64_t(it.slices_done) * cost_.chunk_bytes;
          const uint64_t bytes =
              it.len > off ? std::min(cost_.chunk_bytes, it.len - off) : 0;
          work += double(bytes) * it.ns_per_byte;
          break;
        }
        case ItemKind::kSendIn: {
          Message& m = messages_[steps_[it.rank][it.step].msg];
          work += SliceBytes(m, m.in_started) * copy_ns_per_byte_;
          ++m.in_started;
          break;
        }
        case ItemKind::kRecvOut: {
          Message& m = messages_[steps_[it.rank][it.step].msg];
          work += SliceBytes(m, m.out_started) * copy_ns_per_byte_;
          ++m.out_started;
          break;
        }
        default:
          break;
      }
    }
    CoreStats& stats = result_.cores[core];
    stats.busy_ns += work;
    stats.overhead_ns += overhead;
    events_.push(Event{now + overhead + work, seq_++, core, thread, item_id});
  }

  double SliceBytes(const Message& m, int slice) const {
    const uint64_t off = uint64_t(slice) * cost_.chunk_bytes;
    return m.len > off ? double(std::min(cost_.chunk_bytes, m.len - off)) : 0;
  }

  void EndSlice(const Event& e) {
    const double now = e.time;
    cores_[e.core].busy = false;
    Notify(e.thread);  // dispatches this core again
    Item& it = items_[e.item];
    if (it.kind == ItemKind::kRecvOut && !it.posted) {
      it.posted = true;
      return;
    }
    ++it.slices_done;
    // Completing a step may add items (and reallocate items_): use copies.
    const int rank = it.rank, step = it.step;
    switch (it.kind) {
      case ItemKind::kCompute:
        if (it.compute_left <= 0) {
          RemoveItem(e.thread, e.item);
          RankState& rs = ranks_[rank];
          result_.ranks[rank].compute_end_ns = now;
          rs.phase = Phase::kWait;
          AdvanceApp(rank, now);
          Notify(rs.app_thread);
        }
        return;
      case ItemKind::kLocal:
        if (it.slices_done == it.slices) {
          RemoveItem(e.thread, e.item);
          CompleteStep(rank, step, now);
        }
        return;
      case ItemKind::kSendIn: {
        Message& m = messages_[steps_[rank][step].msg];
        ++m.in_done;
        if (m.recv_rank >= 0) {
          const int rt = steps_[m.recv_rank][m.recv_step].thread;
          if (m.in_done == 1) {
            m.visible_ns = now + cost_.latency_ns;
            if (cost_.latency_ns > 0) {
              events_.push(Event{m.visible_ns, seq_++, -1, rt, -1});
            } else {
              Notify(rt);
            }
          } else {
            Notify(rt);
          }
        }
        if (m.in_done == m.slices) {
          RemoveItem(e.thread, e.item);
          CompleteStep(rank, step, now);
        }
        return;
      }
      case ItemKind::kPost: {
        Message& m = messages_[steps_[rank][step].msg];
        m.posted = true;
        m.visible_ns = now + cost_.latency_ns;
        RemoveItem(e.thread, e.item);
        if (m.recv_rank >= 0) {
          const int rt = steps_[m.recv_rank][m.recv_step].thread;
          if (cost_.latency_ns > 0) {
            events_.push(Event{m.visible_ns, seq_++, -1, rt, -1});
          } else {
            Notify(rt);
          }
        }
        return;
      }
      case ItemKind::kRecvOut: {
        Message& m = messages_[steps_[rank][step].msg];
        ++m.out_done;
        if (cost_.protocol == Protocol::kTwoCopy) {
          Notify(steps_[m.send_rank][m.send_step].thread);  // bounce space
        }
        if (m.out_done == m.slices) {
          RemoveItem(e.thread, e.item);
          CompleteStep(rank, step, now);
          if (cost_.protocol == Protocol::kSingleCopy) {
            CompleteStep(m.send_rank, m.send_step, now);
          }
        }
        return;
      }
    }
  }

  void RemoveItem(int thread, int item) {
    auto& v = threads_[thread].items;
    v.erase(std::find(v.begin(), v.end(), item));
  }

  // ---- the end ----

  std::string Describe(int r, int i) const {
    const Step& s = schedules_[r].steps[i];
    std::string d = "rank " + std::to_string(r) + " step " + std::to_string(i) +
                    " " + std::string(StepKindName(s.kind));
    if (s.kind == StepKind::kSend) d += " to " + std::to_string(s.peer);
    if (s.kind == StepKind::kRecv) d += " from " + std::to_string(s.peer);
    if (s.kind == StepKind::kSend || s.kind == StepKind::kRecv)
      d += " tag " + std::to_string(s.tag);
    d += " (" + std::string(StepPlaceName(steps_[r][i].place)) + ")";
    return d;
  }

  std::string Reason(int r, int i) const {
    const StepState& st = steps_[r][i];
    const Step& s = schedules_[r].steps[i];
    if (!st.ready) {
      std::string w = "waits for step";
      int count = 0;
      for (uint32_t d : s.deps) {
        if (!steps_[r][d].done) {
          w += (count++ == 0 ? " " : ", ") + std::to_string(d);
        }
      }
      return w;
    }
    if (st.place == StepPlace::kAppWait && ranks_[r].phase == Phase::kStart) {
      return "placed in Wait, but the application thread is still in its "
             "nonblocking call";
    }
    if (s.kind == StepKind::kRecv) {
      if (st.msg < 0) {
        return "no matching send from rank " + std::to_string(s.peer) +
               " tag " + std::to_string(s.tag);
      }
      const Message& m = messages_[st.msg];
      if (!steps_[m.send_rank][m.send_step].ready) {
        return "its send (rank " + std::to_string(m.send_rank) + " step " +
               std::to_string(m.send_step) + ") never started";
      }
      return "waiting for data";
    }
    if (s.kind == StepKind::kSend) {
      const Message& m = messages_[st.msg];
      if (m.recv_rank < 0) {
        return "no matching receive at rank " + std::to_string(s.peer) +
               " tag " + std::to_string(s.tag) + " (bounce buffer full)";
      }
      if (!steps_[m.recv_rank][m.recv_step].ready) {
        return "bounce buffer full; its receive (rank " +
               std::to_string(m.recv_rank) + " step " +
               std::to_string(m.recv_step) + ") never started";
      }
      return "waiting for its receive";
    }
    return "runnable but never ran";
  }

  void Finish() {
    double end = 0;
    int unfinished = 0;
    for (int r = 0; r < nranks_; ++r) {
      if (ranks_[r].done) {
        end = std::max(end, result_.ranks[r].end_ns);
      } else {
        ++unfinished;
      }
    }
    result_.time_ns = end;  // every rank starts at 0
    if (unfinished == 0) return;
    result_.deadlock = true;
    size_t total = 0;
    for (int r = 0; r < nranks_; ++r) {
      for (size_t i = 0; i < steps_[r].size(); ++i) {
        if (steps_[r][i].done) continue;
        if (++total <= kMaxStuckLines) {
          result_.stuck.push_back(Describe(r, static_cast<int>(i)) + ": " +
                                  Reason(r, static_cast<int>(i)));
        }
      }
      if (steps_[r].empty() && !ranks_[r].done) {
        result_.stuck.push_back("rank " + std::to_string(r) +
                                " never finished its computation");
      }
    }
    if (total > kMaxStuckLines) {
      result_.stuck.push_back("... and " +
                              std::to_string(total - kMaxStuckLines) +
                              " more unfinished steps");
    }
  }

  const std::vector<Schedule>& schedules_;
  const CostModel cost_;
  const double compute_ns_;
  const int nranks_;
  int64_t bounce_slices_ = 1;
  double copy_ns_per_byte_ = 0;
  FoldResult result_;
  std::vector<CoreState> cores_;
  std::vector<RankState> ranks_;
  std::vector<std::vector<StepState>> steps_;
  std::vector<Thread> threads_;
  std::vector<Item> items_;
  std::vector<Message> messages_;
  std::vector<int> pending_;
  std::vector<bool> pending_flag_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  int64_t seq_ = 0;
};

void RequireFinite(double v, double lo, const char* name, bool strict) {
  if (!std::isfinite(v) || v < lo || (strict && v <= lo)) {
    throw std::invalid_argument(std::string("Invalid cost parameter ") + name +
                                ": " + Num(v) + ". Expected a finite number " +
                                (strict ? "> " : ">= ") + Num(lo));
  }
}

uint64_t ElemSize(uint64_t bytes) { return bytes % 8 == 0 ? 8 : 1; }

}  // namespace

std::string_view ProtocolName(Protocol p) {
  return p == Protocol::kTwoCopy ? "two-copy" : "single-copy";
}

Protocol ParseProtocol(std::string_view text) {
  if (text == "two-copy") return Protocol::kTwoCopy;
  if (text == "single-copy") return Protocol::kSingleCopy;
  throw std::invalid_argument("Invalid protocol: '" + std::string(text) +
                              "'. Expected: two-copy or single-copy");
}

CostModel CostModel::Unit() {
  CostModel c;
  c.latency_ns = 0;
  c.step_ns = 0;
  c.switch_ns = 0;
  c.wake_ns = 0;
  return c;
}

void CostModel::Validate() const {
  RequireFinite(copy_bytes_per_ns, 0, "copy_bytes_per_ns", true);
  RequireFinite(reduce_factor, 0, "reduce_factor", false);
  RequireFinite(latency_ns, 0, "latency_ns", false);
  RequireFinite(step_ns, 0, "step_ns", false);
  RequireFinite(switch_ns, 0, "switch_ns", false);
  RequireFinite(wake_ns, 0, "wake_ns", false);
  RequireFinite(spin_ns, 0, "spin_ns", false);
  RequireFinite(quantum_ns, 0, "quantum_ns", true);
  if (chunk_bytes < 64 || chunk_bytes > (uint64_t(1) << 30)) {
    throw std::invalid_argument("Invalid cost parameter chunk_bytes: " +
                                std::to_string(chunk_bytes) +
                                ". Expected 64 to 2^30 bytes");
  }
  if (bounce_bytes < chunk_bytes) {
    throw std::invalid_argument(
        "Invalid cost parameter bounce_bytes: " + std::to_string(bounce_bytes) +
        ". Expected at least chunk_bytes (" + std::to_string(chunk_bytes) + ")");
  }
}

double CostModel::CopyNs(uint64_t bytes) const {
  return double(bytes) / copy_bytes_per_ns;
}

FoldResult SimulateSchedules(const std::vector<Schedule>& schedules,
                             const std::vector<std::vector<StepPlace>>& places,
                             const engine::NodePlacement& placement,
                             int num_cores, double compute_ns,
                             uint64_t unit_bytes, const CostModel& cost) {
  cost.Validate();
  const size_t n = schedules.size();
  if (n == 0) {
    throw std::invalid_argument(
        "foldsim: no schedule; expected one schedule per rank (>= 1)");
  }
  if (places.size() != n || placement.app_cores.size() != n ||
      placement.progress_cores.size() != n) {
    throw std::invalid_argument(
        "foldsim: " + std::to_string(n) + " schedules but " +
        std::to_string(places.size()) + " place lists, " +
        std::to_string(placement.app_cores.size()) + " application cores and " +
        std::to_string(placement.progress_cores.size()) +
        " progress-core lists; expected one of each per rank");
  }
  for (size_t r = 0; r < n; ++r) {
    if (places[r].size() != schedules[r].steps.size()) {
      throw std::invalid_argument(
          "foldsim: rank " + std::to_string(r) + " has " +
          std::to_string(schedules[r].steps.size()) + " steps but " +
          std::to_string(places[r].size()) + " places; expected one per step");
    }
  }
  if (num_cores < 1) {
    throw std::invalid_argument("foldsim: num_cores is " +
                                std::to_string(num_cores) +
                                "; expected at least 1");
  }
  if (!std::isfinite(compute_ns) || compute_ns < 0) {
    throw std::invalid_argument("foldsim: compute_ns is " + Num(compute_ns) +
                                "; expected a finite number >= 0");
  }
  Simulator sim(schedules, places, placement, num_cores, compute_ns,
                unit_bytes, cost);
  FoldResult r = sim.Run();
  r.placement = placement;
  std::map<int, int> ranks_on_core;
  for (int c : placement.app_cores) ++ranks_on_core[c];
  for (int c : placement.app_cores)
    if (ranks_on_core[c] > 1) ++r.shared_app_core_ranks;
  return r;
}

FoldResult Simulate(const FoldConfig& config) {
  if (config.topology == nullptr) {
    throw std::invalid_argument("FoldConfig.topology is null; expected a "
                                "loaded topology::Topology");
  }
  if (config.ranks < 1) {
    throw std::invalid_argument("FoldConfig.ranks is " +
                                std::to_string(config.ranks) +
                                "; expected at least 1");
  }
  if (config.split_s < 0) {
    throw std::invalid_argument("FoldConfig.split_s is " +
                                std::to_string(config.split_s) +
                                "; expected S >= 0");
  }
  config.cost.Validate();
  const engine::NodePlacement placement = engine::PlaceNode(
      *config.topology, config.placement, config.comm_cores, config.ranks);
  std::vector<Schedule> schedules(config.ranks);
  std::vector<std::vector<StepPlace>> places(config.ranks);
  for (int r = 0; r < config.ranks; ++r) {
    CollArgs a = config.args;
    a.rank = r;
    a.size = config.ranks;
    const std::string err = Build(config.algorithm, a, &schedules[r]);
    if (!err.empty()) {
      throw std::invalid_argument(
          "FoldConfig: Build(" + std::string(AlgorithmName(config.algorithm)) +
          ", " + std::string(CollectiveName(a.collective)) + ", rank " +
          std::to_string(r) + " of " + std::to_string(config.ranks) +
          ") refused the arguments: " + err);
    }
    const BufferBytes bb = BufferBytesFor(a);
    const std::string bad =
        schedules[r].Validate(a.size, bb.send, bb.recv, a.elem_size);
    if (!bad.empty()) {
      throw std::invalid_argument("FoldConfig: the schedule of rank " +
                                  std::to_string(r) + " is malformed: " + bad);
    }
    if (config.mode == FoldMode::kBlocking) {
      places[r].assign(schedules[r].steps.size(), StepPlace::kAppStart);
    } else {
      places[r] = SplitPlaces(schedules[r], config.split_s);
    }
  }
  return SimulateSchedules(schedules, places, placement,
                           config.topology->NumCores(), config.compute_ns,
                           config.args.bytes, config.cost);
}

FoldConfig ChainScanConfig(const topology::Topology& topo, int ranks,
                           const engine::PlacementSpec& placement,
                           uint64_t bytes, const CostModel& cost) {
  FoldConfig c;
  c.topology = &topo;
  c.ranks = ranks;
  c.placement = placement;
  c.args.collective = Collective::kScan;
  c.args.bytes = bytes;
  c.args.elem_size = ElemSize(bytes);
  c.algorithm = Algorithm::kChain;
  c.mode = FoldMode::kNonblocking;
  c.split_s = 0;
  c.compute_ns = 0;
  c.cost = cost;
  return c;
}

FoldConfig SplitTreeConfig(const topology::Topology& topo, int n,
                           Collective collective, uint64_t bytes, int s,
                           double compute_ns, const CostModel& cost) {
  if (n < 1 || n > topo.NumCores()) {
    throw std::invalid_argument(
        "SplitTreeConfig: n is " + std::to_string(n) +
        "; expected 1 to the machine's " + std::to_string(topo.NumCores()) +
        " cores");
  }
  FoldConfig c;
  c.topology = &topo;
  c.ranks = n;
  c.placement = engine::PlacementSpec::Parse("numa");
  const int p = topo.NumCores() - n;
  if (p > 0) c.comm_cores.count = p;
  c.args.collective = collective;
  c.args.root = 0;
  c.args.bytes = bytes;
  c.args.elem_size = ElemSize(bytes);
  c.algorithm = collective == Collective::kAllreduce ? Algorithm::kReduceBcast
                                                      : Algorithm::kBinomial;
  c.mode = FoldMode::kNonblocking;
  c.split_s = s;
  c.compute_ns = compute_ns;
  c.cost = cost;
  return c;
}

double FullMachineBlockingNs(const topology::Topology& topo,
                             Collective collective, uint64_t bytes,
                             const CostModel& cost) {
  FoldConfig c = SplitTreeConfig(topo, topo.NumCores(), collective, bytes, 0,
                                 0, cost);
  c.mode = FoldMode::kBlocking;
  const FoldResult r = Simulate(c);
  if (r.deadlock) {
    throw std::runtime_error("foldsim: the blocking " +
                             std::string(CollectiveName(collective)) +
                             " deadlocked: " + r.stuck.front());
  }
  return r.time_ns;
}

double StrongScaledComputeNs(int nproc, int n, double compute_at_nproc_ns) {
  if (n < 1 || nproc < n) {
    throw std::invalid_argument("StrongScaledComputeNs: n is " +
                                std::to_string(n) + " with nproc " +
                                std::to_string(nproc) +
                                "; expected 1 <= n <= nproc");
  }
  return double(nproc) / double(n) * compute_at_nproc_ns;
}

}  // namespace rondo::nmad::coll
