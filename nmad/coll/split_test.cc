// Tests of the split-tree placement (split.h): the tree levels the builders
// give binomial steps, where SplitPlaces puts each step for every S, and an
// execution of all ranks under the split rules (the application thread runs
// its kAppStart steps inside the call, kAppWait steps only once it waits,
// the progress thread everything else) proving that no S can deadlock, for
// every N from 1 to 33 and every root.
#include "nmad/coll/split.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "nmad/coll/algorithms.h"
#include "nmad/coll/schedule.h"
#include "nmad/coll/splittree_model.h"

namespace rondo::nmad::coll {
namespace {

struct TreeCase {
  Collective collective;
  Algorithm algorithm;
  TreeFlow flow;  // of its message steps (allreduce: both)
};

constexpr TreeCase kTreeCases[] = {
    {Collective::kBcast, Algorithm::kBinomial, TreeFlow::kDown},
    {Collective::kReduce, Algorithm::kBinomial, TreeFlow::kUp},
    {Collective::kGather, Algorithm::kBinomial, TreeFlow::kUp},
    {Collective::kScatter, Algorithm::kBinomial, TreeFlow::kDown},
    {Collective::kAllreduce, Algorithm::kReduceBcast, TreeFlow::kNone},
};

std::vector<Schedule> BuildAll(const TreeCase& tc, int n, int root,
                               bool commutative = true) {
  std::vector<Schedule> out(n);
  for (int r = 0; r < n; ++r) {
    CollArgs a;
    a.collective = tc.collective;
    a.rank = r;
    a.size = n;
    a.root = root;
    a.bytes = 8;
    a.elem_size = 4;
    a.commutative = commutative;
    std::string e = Build(tc.algorithm, a, &out[r]);
    INFO(CollectiveName(tc.collective) << " n=" << n << " root=" << root
                                       << " rank=" << r);
    REQUIRE(e.empty());
  }
  return out;
}

// floor(log2(d)) + 1: the level of an edge between relative ranks d apart.
int LevelOfDistance(int d) {
  int l = 0;
  while (d > 0) {
    ++l;
    d >>= 1;
  }
  return l;
}

TEST_CASE("binomial steps carry the level of their tree edge", "[split]") {
  for (const TreeCase& tc : kTreeCases) {
    for (int n = 1; n <= 33; ++n) {
      const int height = TreeHeight(n);
      for (int root = 0; root < n; ++root) {
        // Allreduce (reduce + bcast) trees are rooted at 0.
        const int top = tc.collective == Collective::kAllreduce ? 0 : root;
        std::vector<Schedule> all = BuildAll(tc, n, root);
        std::vector<int> sends_per_level(height + 2, 0);
        if (n == 1) continue;  // a local copy at most: no tree
        for (int r = 0; r < n; ++r) {
          for (const Step& s : all[r].steps) {
            INFO(CollectiveName(tc.collective) << " n=" << n << " root="
                                               << root << " rank=" << r);
            if (tc.flow != TreeFlow::kNone) CHECK(s.flow == tc.flow);
            CHECK(s.flow != TreeFlow::kNone);
            CHECK(s.level >= 1);
            CHECK(s.level <= height);
            if (s.kind != StepKind::kSend && s.kind != StepKind::kRecv)
              continue;
            const int vr = (r - top + n) % n, vq = (s.peer - top + n) % n;
            const int d = vr > vq ? vr - vq : vq - vr;
            CHECK(s.level == LevelOfDistance(d));
            if (s.kind == StepKind::kSend) ++sends_per_level[s.level];
          }
        }
        // Level i of a binomial tree over n ranks has one edge per relative
        // rank v < n with v = 2^(i-1) mod 2^i: ceil((n - 2^(i-1)) / 2^i).
        const int trees = tc.collective == Collective::kAllreduce ? 2 : 1;
        for (int i = 1; i <= height; ++i) {
          const int half = 1 << (i - 1);
          const int edges = (n - half + (1 << i) - 1) >> i;
          INFO(CollectiveName(tc.collective) << " n=" << n << " level " << i);
          CHECK(sends_per_level[i] == trees * edges);
        }
      }
    }
  }
}

TEST_CASE("SplitPlaces puts levels 1..S on the application thread",
          "[split]") {
  for (const TreeCase& tc : kTreeCases) {
    for (int n : {1, 2, 5, 16, 23, 33}) {
      const int height = TreeHeight(n);
      for (int root : {0, n / 2, n - 1}) {
        std::vector<Schedule> all = BuildAll(tc, n, root);
        for (int s = 0; s <= height + 1; ++s) {
          for (int r = 0; r < n; ++r) {
            const Schedule& sc = all[r];
            std::vector<StepPlace> places = SplitPlaces(sc, s);
            REQUIRE(places.size() == sc.steps.size());
            for (size_t i = 0; i < sc.steps.size(); ++i) {
              const Step& st = sc.steps[i];
              INFO(CollectiveName(tc.collective) << " n=" << n << " S=" << s
                                                 << " rank=" << r << " step "
                                                 << i);
              if (st.flow == TreeFlow::kNone || st.level == 0 ||
                  st.level > s) {
                CHECK(places[i] == StepPlace::kComm);
              } else if (st.flow == TreeFlow::kUp) {
                CHECK(places[i] == StepPlace::kAppStart);
              } else {
                CHECK(places[i] == StepPlace::kAppWait);
              }
              // The call never waits for its own Wait or the progress
              // threads.
              if (places[i] == StepPlace::kAppStart)
                for (uint32_t d : st.deps)
                  CHECK(places[d] == StepPlace::kAppStart);
            }
          }
        }
      }
    }
  }
  // Steps outside trees stay on the communication cores.
  Schedule chain;
  CollArgs a;
  a.collective = Collective::kScan;
  a.rank = 1;
  a.size = 3;
  a.bytes = 8;
  a.elem_size = 4;
  REQUIRE(Build(Algorithm::kChain, a, &chain).empty());
  for (StepPlace p : SplitPlaces(chain, 5)) CHECK(p == StepPlace::kComm);
  CHECK(std::string(StepTraceName(chain.steps[0])) == "coll.step");
  Step up;
  up.flow = TreeFlow::kUp;
  up.level = 3;
  CHECK(std::string(StepTraceName(up)) == "coll.up.L3");
  up.flow = TreeFlow::kDown;
  CHECK(std::string(StepTraceName(up)) == "coll.down.L3");
  CHECK(StepPlaceName(StepPlace::kAppWait) == "app-wait");
}

// Runs all ranks' schedules under the split rules, with rendezvous messages
// (a send and its receive complete together once both are posted): each
// rank's application thread first runs its kAppStart steps (the
// nonblocking call), then computes, then waits (kAppWait steps); its
// progress thread runs kComm steps at any time. Returns "" or what is stuck.
// Also counts which thread ran each level.
struct ThreadCount {
  std::map<std::tuple<int, TreeFlow, StepPlace>, int> runs;  // (level,...)
};

std::string RunSplit(const std::vector<Schedule>& all, int s,
                     ThreadCount* count) {
  const int n = static_cast<int>(all.size());
  struct RankState {
    std::vector<StepPlace> places;
    std::vector<int> remaining;
    std::vector<bool> done, posted;
    int app_start_left = 0;
    size_t left = 0;
  };
  std::vector<RankState> rs(n);
  for (int r = 0; r < n; ++r) {
    RankState& x = rs[r];
    x.places = SplitPlaces(all[r], s);
    x.remaining.resize(all[r].steps.size());
    x.done.assign(all[r].steps.size(), false);
    x.posted.assign(all[r].steps.size(), false);
    x.left = all[r].steps.size();
    for (size_t i = 0; i < all[r].steps.size(); ++i) {
      x.remaining[i] = static_cast<int>(all[r].steps[i].deps.size());
      if (x.places[i] == StepPlace::kAppStart) ++x.app_start_left;
    }
  }
  // A rank waits once its call returned: all kAppStart steps done.
  auto may_run = [&](int r, size_t i) {
    const RankState& x = rs[r];
    if (x.done[i] || x.posted[i] || x.remaining[i] > 0) return false;
    return x.places[i] != StepPlace::kAppWait || x.app_start_left == 0;
  };
  auto finish = [&](int r, size_t i) {
    RankState& x = rs[r];
    x.done[i] = true;
    --x.left;
    if (x.places[i] == StepPlace::kAppStart) --x.app_start_left;
    const Step& st = all[r].steps[i];
    ++count->runs[{st.level, st.flow, x.places[i]}];
    for (size_t j = i + 1; j < all[r].steps.size(); ++j)
      for (uint32_t d : all[r].steps[j].deps)
        if (d == i) --x.remaining[j];
  };
  // Posted messages per (src, dst, tag) in posting order.
  std::map<std::tuple<int, int, uint32_t>, std::vector<size_t>> sends, recvs;
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < all[r].steps.size(); ++i) {
        if (!may_run(r, i)) continue;
        const Step& st = all[r].steps[i];
        progress = true;
        if (st.kind == StepKind::kSend) {
          rs[r].posted[i] = true;
          sends[{r, st.peer, st.tag}].push_back(i);
        } else if (st.kind == StepKind::kRecv) {
          rs[r].posted[i] = true;
          recvs[{st.peer, r, st.tag}].push_back(i);
        } else {
          finish(r, i);
        }
      }
    }
    for (auto& [key, sv] : sends) {
      auto& rv = recvs[key];
      while (!sv.empty() && !rv.empty()) {
        const auto [src, dst, tag] = key;
        finish(src, sv.front());
        finish(dst, rv.front());
        sv.erase(sv.begin());
        rv.erase(rv.begin());
        progress = true;
      }
    }
  }
  for (int r = 0; r < n; ++r)
    if (rs[r].left != 0)
      return "rank " + std::to_string(r) + " is stuck with " +
             std::to_string(rs[r].left) + " steps left";
  return "";
}

TEST_CASE("every S completes for N = 1..33 and every root", "[split]") {
  for (const TreeCase& tc : kTreeCases) {
    for (int n = 1; n <= 33; ++n) {
      const int height = TreeHeight(n);
      for (int root = 0; root < n; ++root) {
        for (bool commutative : {true, false}) {
          if (!commutative && tc.collective != Collective::kReduce) continue;
          std::vector<Schedule> all = BuildAll(tc, n, root, commutative);
          for (int s = 0; s <= height; ++s) {
            ThreadCount count;
            INFO(CollectiveName(tc.collective) << " n=" << n << " root="
                                               << root << " S=" << s);
            REQUIRE(RunSplit(all, s, &count) == "");
            // Each level ran on the thread the split gives it.
            for (const auto& [key, runs] : count.runs) {
              const auto [level, flow, place] = key;
              if (flow == TreeFlow::kNone || level == 0 || level > s)
                CHECK(place == StepPlace::kComm);
              else
                CHECK(place == (flow == TreeFlow::kUp ? StepPlace::kAppStart
                                                      : StepPlace::kAppWait));
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace rondo::nmad::coll
