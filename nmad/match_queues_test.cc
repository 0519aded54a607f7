// MatchQueues against MPI's ordering rules, and against a naive model on
// random sequences of posts, arrivals, probes and cancels.
#include "nmad/match_queues.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <deque>
#include <memory>
#include <random>
#include <vector>

namespace rondo::nmad {
namespace {

struct Recv : PostedReceive {
  int id = 0;
};
struct Msg : UnexpectedMessage {
  int id = 0;
};

Recv* MakeRecv(std::vector<std::unique_ptr<Recv>>& pool, int source, int tag,
               int id) {
  pool.push_back(std::make_unique<Recv>());
  Recv* r = pool.back().get();
  r->source = source;
  r->tag = tag;
  r->id = id;
  return r;
}

Msg* MakeMsg(std::vector<std::unique_ptr<Msg>>& pool, int peer, int tag,
             int id) {
  pool.push_back(std::make_unique<Msg>());
  Msg* m = pool.back().get();
  m->peer = peer;
  m->tag = tag;
  m->id = id;
  return m;
}

int IdOf(PostedReceive* r) { return r ? static_cast<Recv*>(r)->id : -1; }
int IdOf(UnexpectedMessage* m) { return m ? static_cast<Msg*>(m)->id : -1; }

TEST_CASE("exact receives of one key match in posting order") {
  MatchQueues q;
  std::vector<std::unique_ptr<Recv>> rs;
  for (int i = 0; i < 5; ++i) q.Post(MakeRecv(rs, 1, 7, i));
  CHECK(q.posted() == 5);
  CHECK(IdOf(q.MatchMessage(1, 8)) == -1);  // other tag
  CHECK(IdOf(q.MatchMessage(2, 7)) == -1);  // other source
  for (int i = 0; i < 5; ++i) CHECK(IdOf(q.MatchMessage(1, 7)) == i);
  CHECK(q.MatchMessage(1, 7) == nullptr);
  CHECK(q.posted() == 0);
}

TEST_CASE("the earliest posted receive wins between exact and wildcard") {
  MatchQueues q;
  std::vector<std::unique_ptr<Recv>> rs;
  q.Post(MakeRecv(rs, 0, 5, 1));
  q.Post(MakeRecv(rs, kMatchAnySource, kMatchAnyTag, 2));
  q.Post(MakeRecv(rs, 0, 5, 3));
  CHECK(IdOf(q.MatchMessage(0, 5)) == 1);
  CHECK(IdOf(q.MatchMessage(0, 5)) == 2);  // posted before 3
  CHECK(IdOf(q.MatchMessage(0, 5)) == 3);
  // Wildcard on one field only.
  q.Post(MakeRecv(rs, kMatchAnySource, 9, 4));
  q.Post(MakeRecv(rs, 3, kMatchAnyTag, 5));
  CHECK(IdOf(q.MatchMessage(3, 1)) == 5);
  CHECK(IdOf(q.MatchMessage(3, 9)) == 4);
  CHECK(q.posted() == 0);
}

TEST_CASE("peek leaves the receive posted") {
  MatchQueues q;
  std::vector<std::unique_ptr<Recv>> rs;
  q.Post(MakeRecv(rs, 2, 2, 1));
  CHECK(IdOf(q.MatchMessage(2, 2, /*peek=*/true)) == 1);
  CHECK(q.posted() == 1);
  CHECK(IdOf(q.MatchMessage(2, 2)) == 1);
}

TEST_CASE("unexpected messages match receives in arrival order") {
  MatchQueues q;
  std::vector<std::unique_ptr<Msg>> ms;
  q.Arrive(MakeMsg(ms, 1, 4, 10));
  q.Arrive(MakeMsg(ms, 0, 4, 11));
  q.Arrive(MakeMsg(ms, 1, 4, 12));
  q.Arrive(MakeMsg(ms, 1, 6, 13));
  CHECK(q.unexpected() == 4);
  CHECK(IdOf(q.MatchReceive(1, 6, /*take=*/false)) == 13);
  CHECK(q.unexpected() == 4);
  CHECK(IdOf(q.MatchReceive(kMatchAnySource, kMatchAnyTag, true)) == 10);
  CHECK(IdOf(q.MatchReceive(1, kMatchAnyTag, true)) == 12);
  CHECK(IdOf(q.MatchReceive(kMatchAnySource, 4, true)) == 11);
  CHECK(IdOf(q.MatchReceive(1, 4, true)) == -1);
  CHECK(IdOf(q.MatchReceive(1, 6, true)) == 13);
  CHECK(q.unexpected() == 0);
}

TEST_CASE("cancel removes a posted receive once") {
  MatchQueues q;
  std::vector<std::unique_ptr<Recv>> rs;
  Recv* a = MakeRecv(rs, 1, 1, 1);
  Recv* b = MakeRecv(rs, kMatchAnySource, 1, 2);
  Recv* c = MakeRecv(rs, 1, 1, 3);
  q.Post(a);
  q.Post(b);
  q.Post(c);
  CHECK(q.Cancel(b));
  CHECK_FALSE(q.Cancel(b));
  CHECK(q.Cancel(a));
  CHECK(IdOf(q.MatchMessage(1, 1)) == 3);
  CHECK_FALSE(q.Cancel(c));  // matched already
  CHECK(q.posted() == 0);
}

TEST_CASE("RemovePostedIf takes a failed peer's and wildcard receives") {
  MatchQueues q;
  std::vector<std::unique_ptr<Recv>> rs;
  q.Post(MakeRecv(rs, 1, 1, 1));
  q.Post(MakeRecv(rs, 2, 1, 2));
  q.Post(MakeRecv(rs, kMatchAnySource, 1, 3));
  q.Post(MakeRecv(rs, 1, 5, 4));
  std::vector<int> removed;
  q.RemovePostedIf(
      [](const PostedReceive& r) {
        return r.source == 1 || r.source == kMatchAnySource;
      },
      [&](PostedReceive* r) { removed.push_back(IdOf(r)); });
  std::sort(removed.begin(), removed.end());
  CHECK(removed == std::vector<int>{1, 3, 4});
  CHECK(q.posted() == 1);
  CHECK(IdOf(q.MatchMessage(2, 1)) == 2);
}

TEST_CASE("steady state keeps its bin; new keys re-key idle bins") {
  MatchQueues q;
  std::vector<std::unique_ptr<Recv>> rs;
  std::vector<std::unique_ptr<Msg>> ms;
  Recv* r = MakeRecv(rs, 0, 3, 1);
  for (int i = 0; i < 1000; ++i) {
    q.Post(r);
    REQUIRE(q.MatchMessage(0, 3) == r);
  }
  CHECK(q.bins() == 1);
  CHECK(q.idle_bins() == 1);
  // Tags that change every time (a collective's per-call tags): the one
  // idle bin is re-keyed, the map does not grow.
  for (int tag = 0; tag < 20000; ++tag) {
    r->tag = tag;
    q.Post(r);
    REQUIRE(q.MatchMessage(0, tag) == r);
  }
  CHECK(q.bins() == 1);
  // Unexpected messages on changing keys too.
  Msg* m = MakeMsg(ms, 2, 0, 7);
  for (int tag = 0; tag < 1000; ++tag) {
    m->tag = tag;
    q.Arrive(m);
    REQUIRE(q.MatchReceive(2, tag, true) == m);
  }
  CHECK(q.bins() == 1);
  // Three keys in use at once need three bins; once done, all idle.
  Recv* a = MakeRecv(rs, 1, 1, 2);
  Recv* b = MakeRecv(rs, 1, 2, 3);
  Recv* c = MakeRecv(rs, 1, 3, 4);
  q.Post(a);
  q.Post(b);
  q.Post(c);
  CHECK(q.bins() == 3);
  CHECK(q.idle_bins() == 0);
  CHECK(q.MatchMessage(1, 2) == b);
  CHECK(q.MatchMessage(1, 1) == a);
  CHECK(q.MatchMessage(1, 3) == c);
  CHECK(q.idle_bins() == 3);
  CHECK(q.posted() == 0);
}

TEST_CASE("reserved bins are re-keyed: no growth up to the reserve") {
  MatchQueues q;
  q.Reserve(8);
  CHECK(q.bins() == 8);
  CHECK(q.idle_bins() == 8);
  q.Reserve(4);  // already more: nothing
  CHECK(q.bins() == 8);
  std::vector<std::unique_ptr<Recv>> rs;
  std::vector<std::unique_ptr<Msg>> ms;
  std::vector<Recv*> live;
  // Eight keys in use at once (posted receives and unexpected messages
  // alike) fit in the reserve, over and over with new tags.
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 4; ++i) {
      live.push_back(MakeRecv(rs, i, round * 8 + i, i));
      q.Post(live.back());
    }
    std::vector<Msg*> arrived;
    for (int i = 4; i < 8; ++i) {
      arrived.push_back(MakeMsg(ms, i, round * 8 + i, i));
      q.Arrive(arrived.back());
    }
    CHECK(q.bins() == 8);
    CHECK(q.idle_bins() == 0);
    for (int i = 0; i < 4; ++i)
      REQUIRE(q.MatchMessage(i, round * 8 + i) == live[i]);
    for (int i = 4; i < 8; ++i)
      REQUIRE(q.MatchReceive(i, round * 8 + i, true) == arrived[i - 4]);
    live.clear();
    CHECK(q.idle_bins() == 8);
  }
  CHECK(q.bins() == 8);
  // A ninth key at once grows the map by one bin.
  for (int i = 0; i < 9; ++i) q.Post(MakeRecv(rs, 1, 5000 + i, i));
  CHECK(q.bins() == 9);
  CHECK(q.posted() == 9);
}

// The naive model: two vectors in order, linear scans.
struct Model {
  struct R {
    int source, tag, id;
  };
  struct M {
    int peer, tag, id;
  };
  std::deque<R> posted;
  std::deque<M> unexpected;
  static bool Match(int s, int t, int peer, int tag) {
    return (s == kMatchAnySource || s == peer) &&
           (t == kMatchAnyTag || t == tag);
  }
};

TEST_CASE("random sequences agree with the naive model") {
  std::mt19937 rng(12345);
  for (int round = 0; round < 50; ++round) {
    MatchQueues q;
    Model model;
    std::vector<std::unique_ptr<Recv>> rs;
    std::vector<std::unique_ptr<Msg>> ms;
    std::vector<Recv*> live;
    int next_id = 0;
    for (int step = 0; step < 2000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      const int peer = static_cast<int>(rng() % 3);
      const int tag = static_cast<int>(rng() % 12);  // bins re-keyed often
      if (op < 4) {  // a receive is posted (maybe a wildcard)
        const int s = rng() % 4 == 0 ? kMatchAnySource : peer;
        const int t = rng() % 4 == 0 ? kMatchAnyTag : tag;
        const int id = next_id++;
        // MPI: an unexpected message is taken first.
        int expect = -1;
        for (auto it = model.unexpected.begin(); it != model.unexpected.end();
             ++it)
          if (Model::Match(s, t, it->peer, it->tag)) {
            expect = it->id;
            model.unexpected.erase(it);
            break;
          }
        REQUIRE(IdOf(q.MatchReceive(s, t, true)) == expect);
        if (expect < 0) {
          Recv* r = MakeRecv(rs, s, t, id);
          q.Post(r);
          live.push_back(r);
          model.posted.push_back({s, t, id});
        }
      } else if (op < 8) {  // a message arrives
        const int id = next_id++;
        int expect = -1;
        for (auto it = model.posted.begin(); it != model.posted.end(); ++it)
          if (Model::Match(it->source, it->tag, peer, tag)) {
            expect = it->id;
            model.posted.erase(it);
            break;
          }
        REQUIRE(IdOf(q.MatchMessage(peer, tag)) == expect);
        if (expect < 0) {
          q.Arrive(MakeMsg(ms, peer, tag, id));
          model.unexpected.push_back({peer, tag, id});
        }
      } else if (op == 8) {  // a probe
        const int s = rng() % 2 ? kMatchAnySource : peer;
        const int t = rng() % 2 ? kMatchAnyTag : tag;
        int expect = -1;
        for (auto& m : model.unexpected)
          if (Model::Match(s, t, m.peer, m.tag)) {
            expect = m.id;
            break;
          }
        REQUIRE(IdOf(q.MatchReceive(s, t, false)) == expect);
      } else if (!live.empty()) {  // cancel a random receive
        Recv* r = live[rng() % live.size()];
        bool in_model = false;
        for (auto it = model.posted.begin(); it != model.posted.end(); ++it)
          if (it->id == r->id) {
            model.posted.erase(it);
            in_model = true;
            break;
          }
        REQUIRE(q.Cancel(r) == in_model);
      }
      REQUIRE(q.posted() == model.posted.size());
      REQUIRE(q.unexpected() == model.unexpected.size());
    }
  }
}

}  // namespace
}  // namespace rondo::nmad
