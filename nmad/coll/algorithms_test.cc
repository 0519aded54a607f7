// Tests of the collective algorithms: every (collective, algorithm) over
// many communicator sizes, roots, message sizes, operators and the
// MPI_IN_PLACE forms, run by the simulator on real bytes and compared with a
// straightforward reference; argument checks; Choose; names; tag wrapping;
// and the simulator's own ability to catch broken schedules.
#include "nmad/coll/algorithms.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "nmad/coll/schedule.h"
#include "nmad/coll/testing/simulator.h"

namespace rondo::nmad::coll {
namespace {

using testing::ReduceCallback;
using testing::SimOptions;
using testing::SimRank;
using testing::Simulate;
using Bytes = std::vector<uint8_t>;

constexpr Collective kAllCollectives[] = {
    Collective::kBarrier,       Collective::kBcast,
    Collective::kReduce,        Collective::kAllreduce,
    Collective::kGather,        Collective::kGatherv,
    Collective::kScatter,       Collective::kScatterv,
    Collective::kAllgather,     Collective::kAllgatherv,
    Collective::kAlltoall,      Collective::kAlltoallv,
    Collective::kReduceScatter, Collective::kReduceScatterBlock,
    Collective::kScan,          Collective::kExscan,
};

// ---- reduction operators ----

enum class Op { kNone, kSum32, kMat2 };

uint64_t ElemSize(Op op) {
  return op == Op::kSum32 ? 4 : op == Op::kMat2 ? 16 : 1;
}

// inout = in op inout, elementwise.
void Apply(Op op, const uint8_t* in, uint8_t* inout, size_t count) {
  for (size_t e = 0; e < count; ++e) {
    if (op == Op::kSum32) {
      uint32_t a, b;
      std::memcpy(&a, in + 4 * e, 4);
      std::memcpy(&b, inout + 4 * e, 4);
      b += a;
      std::memcpy(inout + 4 * e, &b, 4);
    } else if (op == Op::kMat2) {  // 2x2 matrix product mod 2^32
      uint32_t a[4], b[4], c[4];
      std::memcpy(a, in + 16 * e, 16);
      std::memcpy(b, inout + 16 * e, 16);
      c[0] = a[0] * b[0] + a[1] * b[2];
      c[1] = a[0] * b[1] + a[1] * b[3];
      c[2] = a[2] * b[0] + a[3] * b[2];
      c[3] = a[2] * b[1] + a[3] * b[3];
      std::memcpy(inout + 16 * e, c, 16);
    }
  }
}

ReduceCallback Callback(Op op) {
  return [op](const void* in, void* inout, size_t count) {
    Apply(op, static_cast<const uint8_t*>(in), static_cast<uint8_t*>(inout),
          count);
  };
}

// x[first] op ... op x[end - 1] over the bytes [off, off + len) of each.
Bytes Fold(Op op, const std::vector<Bytes>& x, int first, int end,
           uint64_t off, uint64_t len) {
  Bytes acc(x[end - 1].begin() + off, x[end - 1].begin() + off + len);
  for (int i = end - 2; i >= first; --i) {
    Apply(op, x[i].data() + off, acc.data(), len / ElemSize(op));
  }
  return acc;
}

// ---- one case ----

struct Case {
  Collective c = Collective::kBarrier;
  Algorithm alg = Algorithm::kAuto;
  int n = 1;
  int root = 0;
  Op op = Op::kNone;
  int size_class = 0;  // 0: empty, 1: small, 2: over a pipeline segment
  bool in_place = false;
  uint64_t seed = 1;
  bool eager = false;
  int radix = 2;
  uint64_t segment_bytes = 24;
  // Forces this many bytes (or elements' bytes) instead of size_class.
  uint64_t force_bytes = ~uint64_t{0};
};

std::string Describe(const Case& k) {
  static const char* kOps[] = {"none", "sum32", "mat2"};
  return std::string(CollectiveName(k.c)) + "/" +
         std::string(AlgorithmName(k.alg)) + " n=" + std::to_string(k.n) +
         " root=" + std::to_string(k.root) + " op=" +
         kOps[static_cast<int>(k.op)] + " size_class=" +
         std::to_string(k.size_class) + (k.in_place ? " in_place" : "") +
         " seed=" + std::to_string(k.seed) + (k.eager ? " eager" : "") +
         " radix=" + std::to_string(k.radix);
}

Bytes Random(std::mt19937_64& rng, uint64_t len) {
  Bytes b(len);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// Random block counts (multiples of elem) and a scattered layout with gaps
// in a random rank order; displs of zero-length blocks are arbitrary.
void RandomLayout(std::mt19937_64& rng, int n, int size_class, uint64_t elem,
                  std::vector<uint64_t>* counts,
                  std::vector<uint64_t>* displs) {
  const uint64_t max_elems = size_class == 0 ? 0 : size_class == 1 ? 3 : 14;
  counts->assign(n, 0);
  for (auto& c : *counts) c = (rng() % (max_elems + 1)) * elem;
  if (size_class > 0 && n > 1) (*counts)[rng() % n] = 0;  // always a zero
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  displs->assign(n, 0);
  uint64_t pos = rng() % 3;
  for (int i : order) {
    (*displs)[i] = pos;
    pos += (*counts)[i] + rng() % 3;
  }
}

uint64_t Extent(const std::vector<uint64_t>& c,
                const std::vector<uint64_t>& d) {
  uint64_t e = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] > 0) e = std::max(e, d[i] + c[i]);
  }
  return e;
}

void Put(Bytes* dst, uint64_t off, const uint8_t* src, uint64_t len) {
  if (len > 0) std::memcpy(dst->data() + off, src, len);
}

bool InPlaceAllowed(Collective c) {
  return c != Collective::kBarrier && c != Collective::kBcast;
}

bool IsReductionCollective(Collective c) {
  return c == Collective::kReduce || c == Collective::kAllreduce ||
         c == Collective::kReduceScatter ||
         c == Collective::kReduceScatterBlock || c == Collective::kScan ||
         c == Collective::kExscan;
}

// Runs one case; "" if the results match the reference, "refused: ..." if
// Build refused the algorithm for a non-commutative op, else the failure.
std::string RunCase(const Case& k,
                    std::vector<Schedule>* keep_schedules = nullptr,
                    bool break_one_reduce = false) {
  using C = Collective;
  const int n = k.n;
  const uint64_t es = ElemSize(k.op);
  std::mt19937_64 rng(k.seed * 1000003 + static_cast<uint64_t>(k.c) * 7919 +
                      static_cast<uint64_t>(n) * 131 + k.root * 17 +
                      k.size_class);
  // Uniform bytes.
  uint64_t bytes;
  if (k.force_bytes != ~uint64_t{0}) {
    bytes = k.force_bytes;
  } else if (k.size_class == 0) {
    bytes = 0;
  } else if (k.op == Op::kNone) {
    bytes = k.size_class == 1 ? 3 : 53;
  } else if (k.op == Op::kSum32) {
    bytes = (k.size_class == 1 ? 3 : 13) * es;
  } else {
    bytes = (k.size_class == 1 ? 1 : 5) * es;
  }

  std::vector<CollArgs> args(n);
  for (int r = 0; r < n; ++r) {
    CollArgs& a = args[r];
    a.collective = k.c;
    a.rank = r;
    a.size = n;
    a.root = k.root;
    a.bytes = bytes;
    a.elem_size = es;
    a.commutative = k.op != Op::kMat2;
    a.segment_bytes = k.segment_bytes;
    a.radix = k.radix;
    // Half of the cases without MPI_IN_PLACE promise disjoint buffers.
    a.buffers_disjoint = !k.in_place && k.seed % 2 == 0;
  }
  // Layouts of the v-forms.
  std::vector<uint64_t> counts, displs;
  std::vector<std::vector<uint64_t>> m;  // alltoallv: bytes from i to j
  std::vector<std::vector<uint64_t>> sdispls(n), rdispls(n);
  if (k.c == C::kGatherv || k.c == C::kScatterv || k.c == C::kAllgatherv) {
    RandomLayout(rng, n, k.size_class, 1, &counts, &displs);
    const bool root_only = k.seed % 2 == 1;  // MPI style: counts at the root
    for (int r = 0; r < n; ++r) {
      args[r].bytes = counts[r];
      if (k.c == C::kAllgatherv || r == k.root || !root_only) {
        args[r].counts = counts;
        args[r].displs = displs;
      }
    }
  } else if (k.c == C::kReduceScatter) {
    std::vector<uint64_t> unused;
    RandomLayout(rng, n, k.size_class, es, &counts, &unused);
    for (auto& a : args) a.counts = counts;
  } else if (k.c == C::kAlltoallv) {
    const uint64_t max = k.size_class == 0 ? 0 : k.size_class == 1 ? 3 : 20;
    m.assign(n, std::vector<uint64_t>(n, 0));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        m[i][j] = (k.in_place && j < i) ? m[j][i] : rng() % (max + 1);
      }
    }
    for (int r = 0; r < n; ++r) {
      std::vector<uint64_t> sc(n), rc(n);
      for (int j = 0; j < n; ++j) {
        sc[j] = m[r][j];
        rc[j] = m[j][r];
      }
      // Random rank order, small gaps.
      auto layout = [&](const std::vector<uint64_t>& c,
                        std::vector<uint64_t>* d) {
        std::vector<int> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        d->assign(n, 0);
        uint64_t pos = rng() % 2;
        for (int i : order) {
          (*d)[i] = pos;
          pos += c[i] + rng() % 2;
        }
      };
      layout(rc, &rdispls[r]);
      if (k.in_place) {
        sdispls[r] = rdispls[r];
      } else {
        layout(sc, &sdispls[r]);
      }
      args[r].send_counts = sc;
      args[r].send_displs = sdispls[r];
      args[r].counts = rc;
      args[r].displs = rdispls[r];
    }
  }

  // Buffers, inputs and expected outputs.
  std::vector<SimRank> ranks(n);
  std::vector<Bytes> x(n);         // each rank's input (buffer 0 contents)
  std::vector<Bytes> want_recv(n);  // expected buffer 1
  std::vector<uint64_t> send_len(n), recv_len(n);
  const uint64_t nb = static_cast<uint64_t>(n) * bytes;
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  for (int r = 0; r < n; ++r) {
    const bool root = r == k.root;
    uint64_t s = 0, v = 0;
    switch (k.c) {
      case C::kBarrier: break;
      case C::kBcast: v = bytes; break;
      case C::kReduce: s = bytes; v = root ? bytes : 0; break;
      case C::kAllreduce: case C::kScan: case C::kExscan:
        s = v = bytes; break;
      case C::kGather: s = bytes; v = root ? nb : 0; break;
      case C::kGatherv: s = counts[r]; v = root ? Extent(counts, displs) : 0; break;
      case C::kScatter: s = root ? nb : 0; v = bytes; break;
      case C::kScatterv: s = root ? Extent(counts, displs) : 0; v = counts[r]; break;
      case C::kAllgather: s = bytes; v = nb; break;
      case C::kAllgatherv: s = counts[r]; v = Extent(counts, displs); break;
      case C::kAlltoall: s = v = nb; break;
      case C::kAlltoallv:
        s = Extent(args[r].send_counts, sdispls[r]);
        v = Extent(args[r].counts, rdispls[r]);
        break;
      case C::kReduceScatter: s = total; v = counts[r]; break;
      case C::kReduceScatterBlock: s = nb; v = bytes; break;
    }
    send_len[r] = s;
    recv_len[r] = v;
    const BufferBytes bb = BufferBytesFor(args[r]);
    if (bb.send != s || bb.recv != v) {
      return "BufferBytesFor(rank " + std::to_string(r) + ") = {" +
             std::to_string(bb.send) + ", " + std::to_string(bb.recv) +
             "}, expected {" + std::to_string(s) + ", " + std::to_string(v) +
             "}";
    }
    x[r] = Random(rng, s);
    ranks[r].send = x[r];
    ranks[r].recv = Random(rng, v);
  }
  if (k.c == C::kBcast) ranks[k.root].recv = Random(rng, bytes);

  // The in-place windows.
  for (int r = 0; r < n && k.in_place; ++r) {
    const bool root = r == k.root;
    SimRank& s = ranks[r];
    // A zero-length window may sit anywhere; put it inside the buffer.
    auto send_in_recv = [&](uint64_t off, uint64_t len) {
      if (len == 0) off = 0;
      s.alias = SimRank::Alias::kSendInRecv;
      s.alias_offset = off;
      s.alias_len = len;
      Put(&s.recv, off, x[r].data(), len);
      s.send.clear();
    };
    auto recv_in_send = [&](uint64_t off, uint64_t len) {
      if (len == 0) off = 0;
      s.alias = SimRank::Alias::kRecvInSend;
      s.alias_offset = off;
      s.alias_len = len;
      s.recv.clear();
    };
    switch (k.c) {
      case C::kReduce: if (root) send_in_recv(0, bytes); break;
      case C::kAllreduce: case C::kScan: case C::kExscan:
        send_in_recv(0, bytes); break;
      case C::kGather: if (root) send_in_recv(r * bytes, bytes); break;
      case C::kGatherv: if (root) send_in_recv(displs[r], counts[r]); break;
      case C::kScatter: if (root) recv_in_send(r * bytes, bytes); break;
      case C::kScatterv: if (root) recv_in_send(displs[r], counts[r]); break;
      case C::kAllgather: send_in_recv(r * bytes, bytes); break;
      case C::kAllgatherv: send_in_recv(displs[r], counts[r]); break;
      case C::kAlltoall: send_in_recv(0, nb); break;
      case C::kAlltoallv: send_in_recv(0, send_len[r]); break;
      case C::kReduceScatter: recv_in_send(0, counts[r]); break;
      case C::kReduceScatterBlock: recv_in_send(0, bytes); break;
      default: break;
    }
  }
  // Expected buffer 1 (from its initial contents).
  for (int r = 0; r < n; ++r) {
    const SimRank& s = ranks[r];
    want_recv[r] = s.alias == SimRank::Alias::kRecvInSend
                       ? Bytes(s.send.begin() + s.alias_offset,
                               s.send.begin() + s.alias_offset + s.alias_len)
                       : s.recv;
  }
  for (int r = 0; r < n; ++r) {
    Bytes& w = want_recv[r];
    const bool root = r == k.root;
    switch (k.c) {
      case C::kBarrier: break;
      case C::kBcast: w = ranks[k.root].recv; break;
      case C::kReduce:
        if (root && bytes > 0) w = Fold(k.op, x, 0, n, 0, bytes);
        break;
      case C::kAllreduce:
        if (bytes > 0) w = Fold(k.op, x, 0, n, 0, bytes);
        break;
      case C::kScan:
        if (bytes > 0) w = Fold(k.op, x, 0, r + 1, 0, bytes);
        break;
      case C::kExscan:
        if (bytes > 0 && r > 0) w = Fold(k.op, x, 0, r, 0, bytes);
        break;
      case C::kGather:
        if (root) for (int i = 0; i < n; ++i) Put(&w, i * bytes, x[i].data(), bytes);
        break;
      case C::kGatherv:
        if (root) for (int i = 0; i < n; ++i) Put(&w, displs[i], x[i].data(), counts[i]);
        break;
      case C::kScatter:
        Put(&w, 0, x[k.root].data() + r * bytes, bytes);
        break;
      case C::kScatterv:
        Put(&w, 0, x[k.root].data() + displs[r], counts[r]);
        break;
      case C::kAllgather:
        for (int i = 0; i < n; ++i) Put(&w, i * bytes, x[i].data(), bytes);
        break;
      case C::kAllgatherv:
        for (int i = 0; i < n; ++i) Put(&w, displs[i], x[i].data(), counts[i]);
        break;
      case C::kAlltoall:
        for (int j = 0; j < n; ++j) Put(&w, j * bytes, x[j].data() + r * bytes, bytes);
        break;
      case C::kAlltoallv:
        for (int j = 0; j < n; ++j) {
          Put(&w, rdispls[r][j], x[j].data() + sdispls[j][r], m[j][r]);
        }
        break;
      case C::kReduceScatter: {
        uint64_t off = 0;
        for (int i = 0; i < r; ++i) off += counts[i];
        if (counts[r] > 0) w = Fold(k.op, x, 0, n, off, counts[r]);
        break;
      }
      case C::kReduceScatterBlock:
        if (bytes > 0) w = Fold(k.op, x, 0, n, r * bytes, bytes);
        break;
    }
  }

  std::vector<Schedule> schedules(n);
  for (int r = 0; r < n; ++r) {
    const std::string err = Build(k.alg, args[r], &schedules[r]);
    if (!err.empty()) {
      if (k.op == Op::kMat2 && k.alg == Algorithm::kRing &&
          err.find("commutative") != std::string::npos) {
        return "refused: " + err;
      }
      return "Build(rank " + std::to_string(r) + "): " + err;
    }
  }
  if (k.size_class == 0 && k.c != C::kBarrier &&
      k.force_bytes == ~uint64_t{0}) {  // no data: nothing to do
    for (int r = 0; r < n; ++r) {
      if (!schedules[r].steps.empty() || !schedules[r].tmp_bytes.empty()) {
        return "rank " + std::to_string(r) + ": " +
               std::to_string(schedules[r].steps.size()) + " steps and " +
               std::to_string(schedules[r].tmp_bytes.size()) +
               " temporaries without data";
      }
    }
  }
  if (break_one_reduce) {  // make one reduce a no-op copy onto itself
    for (auto& s : schedules) {
      for (auto& st : s.steps) {
        if (st.kind == StepKind::kReduce) {
          st.kind = StepKind::kCopy;
          st.src = st.dst;
          break_one_reduce = false;
          break;
        }
      }
      if (!break_one_reduce) break;
    }
  }
  SimOptions opt;
  opt.seed = k.seed;
  opt.eager = k.eager;
  const std::string err =
      Simulate(schedules, ranks, Callback(k.op), es, opt);
  if (!err.empty()) return "simulation: " + err;
  for (int r = 0; r < n; ++r) {
    const SimRank& s = ranks[r];
    Bytes got_recv = s.recv, want_send = x[r];
    if (s.alias == SimRank::Alias::kRecvInSend) {
      got_recv = Bytes(s.send.begin() + s.alias_offset,
                       s.send.begin() + s.alias_offset + s.alias_len);
      std::copy(want_recv[r].begin(), want_recv[r].end(),
                want_send.begin() + s.alias_offset);
      if (s.send != want_send) {
        return "rank " + std::to_string(r) + ": input outside the window changed";
      }
    } else if (s.alias == SimRank::Alias::kNone && s.send != x[r]) {
      return "rank " + std::to_string(r) + ": buffer 0 changed";
    }
    if (got_recv != want_recv[r]) {
      size_t at = 0;
      while (at < got_recv.size() && got_recv[at] == want_recv[r][at]) ++at;
      return "rank " + std::to_string(r) + ": buffer 1 differs from the "
             "reference at byte " + std::to_string(at) + " of " +
             std::to_string(want_recv[r].size());
    }
  }
  if (keep_schedules != nullptr) *keep_schedules = std::move(schedules);
  return "";
}

// Every algorithm of `c` over sizes, roots, byte sizes, ops, in-place forms
// and seeds. Returns the failures.
struct SweepResult {
  std::vector<std::string> failures;
  int passed = 0;   // cases run and matching the reference
  int refused = 0;  // ring with a non-commutative op
};

SweepResult Sweep(Collective c, const std::vector<int>& sizes, int seeds) {
  SweepResult result;
  std::vector<std::string>& failures = result.failures;
  const bool rooted = c == Collective::kBcast || c == Collective::kReduce ||
                      c == Collective::kGather ||
                      c == Collective::kGatherv ||
                      c == Collective::kScatter || c == Collective::kScatterv;
  std::vector<Op> ops = {Op::kNone};
  if (IsReductionCollective(c)) ops = {Op::kSum32, Op::kMat2};
  for (Algorithm alg : AlgorithmsFor(c)) {
    for (int n : sizes) {
      std::set<int> roots = {0};
      if (rooted) roots = {0, n - 1, n / 2};
      for (int root : roots) {
        for (Op op : ops) {
          for (int size_class = 0; size_class < 3; ++size_class) {
            for (int in_place = 0; in_place < (InPlaceAllowed(c) ? 2 : 1);
                 ++in_place) {
              for (int seed = 1; seed <= seeds; ++seed) {
                Case k;
                k.c = c;
                k.alg = alg;
                k.n = n;
                k.root = root;
                k.op = op;
                k.size_class = size_class;
                k.in_place = in_place == 1;
                k.seed = static_cast<uint64_t>(seed);
                k.eager = seed == 3;
                k.radix = seed % 3 == 1 ? 3 : seed % 3 == 2 ? 2 : 5;
                k.segment_bytes = op == Op::kMat2 ? 40 : 24;
                const std::string err = RunCase(k);
                if (err.empty()) {
                  ++result.passed;
                } else if (err.rfind("refused: ", 0) == 0) {
                  ++result.refused;
                } else {
                  failures.push_back(Describe(k) + ": " + err);
                }
              }
            }
          }
        }
      }
    }
  }
  return result;
}

const std::vector<int> kSizes = {1, 2, 3, 4, 5, 6, 7, 8, 12};

// Every case passed (at least `min_passed` of them; the others refused).
void RequireNoFailures(const SweepResult& r, int min_passed = 100) {
  for (size_t i = 0; i < r.failures.size() && i < 8; ++i) {
    UNSCOPED_INFO(r.failures[i]);
  }
  REQUIRE(r.failures.size() == 0);
  REQUIRE(r.passed >= min_passed);
}

TEST_CASE("every collective has algorithms") {
  for (Collective c : kAllCollectives) {
    INFO(CollectiveName(c));
    REQUIRE_FALSE(AlgorithmsFor(c).empty());
    for (Algorithm a : AlgorithmsFor(c)) REQUIRE(a != Algorithm::kAuto);
  }
}

TEST_CASE("barrier and bcast match the reference") {
  RequireNoFailures(Sweep(Collective::kBarrier, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kBcast, kSizes, 3));
}

TEST_CASE("reduce and allreduce match the reference in rank order") {
  RequireNoFailures(Sweep(Collective::kReduce, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kAllreduce, kSizes, 3));
}

TEST_CASE("gather(v) and scatter(v) match the reference") {
  RequireNoFailures(Sweep(Collective::kGather, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kGatherv, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kScatter, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kScatterv, kSizes, 3));
}

TEST_CASE("allgather(v) match the reference") {
  RequireNoFailures(Sweep(Collective::kAllgather, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kAllgatherv, kSizes, 3));
}

TEST_CASE("alltoall(v) match the reference") {
  RequireNoFailures(Sweep(Collective::kAlltoall, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kAlltoallv, kSizes, 3));
}

TEST_CASE("reduce_scatter(_block) match the reference") {
  RequireNoFailures(Sweep(Collective::kReduceScatter, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kReduceScatterBlock, kSizes, 3));
}

TEST_CASE("scan and exscan match the reference") {
  RequireNoFailures(Sweep(Collective::kScan, kSizes, 3));
  RequireNoFailures(Sweep(Collective::kExscan, kSizes, 3));
}

TEST_CASE("larger communicators (16 and 33 ranks), one seed") {
  for (Collective c : kAllCollectives) {
    RequireNoFailures(Sweep(c, {16, 33}, 1), 3);
  }
}

// Hidden (run with "[exhaustive]"): every size up to 24, more seeds.
TEST_CASE("exhaustive sweep", "[.][exhaustive]") {
  std::vector<int> sizes(24);
  std::iota(sizes.begin(), sizes.end(), 1);
  for (Collective c : kAllCollectives) {
    INFO(CollectiveName(c));
    RequireNoFailures(Sweep(c, sizes, 6));
  }
}

TEST_CASE("ring refuses a non-commutative op; others keep the order") {
  for (Collective c : kAllCollectives) {
    if (!IsReductionCollective(c)) continue;
    for (Algorithm a : AlgorithmsFor(c)) {
      Case k;
      k.c = c;
      k.alg = a;
      k.n = 5;
      k.op = Op::kMat2;
      k.size_class = 2;
      k.segment_bytes = 40;
      const std::string err = RunCase(k);
      INFO(Describe(k) + ": " + err);
      if (a == Algorithm::kRing) {
        REQUIRE(err.rfind("refused: ", 0) == 0);
      } else {
        REQUIRE(err.empty());
      }
    }
  }
}

TEST_CASE("pipelined chains wrap their tags past kMaxStepTag") {
  // 5000 one-element segments: tags wrap once; chaining keeps them apart.
  for (Collective c : {Collective::kBcast, Collective::kReduce,
                       Collective::kScan, Collective::kExscan}) {
    for (Op op : {Op::kNone, Op::kSum32, Op::kMat2}) {
      if ((op == Op::kNone) != (c == Collective::kBcast)) continue;
      Case k;
      k.c = c;
      k.alg = Algorithm::kPipelinedChain;
      k.n = 3;
      k.root = 1;
      k.op = op;
      k.segment_bytes = ElemSize(op);
      k.force_bytes = 5000 * ElemSize(op);
      k.in_place = c != Collective::kBcast;
      std::vector<Schedule> schedules;
      const std::string err = RunCase(k, &schedules);
      INFO(Describe(k) + ": " + err);
      REQUIRE(err.empty());
      uint32_t max_tag = 0;
      for (const auto& s : schedules) {
        for (const auto& st : s.steps) max_tag = std::max(max_tag, st.tag);
      }
      REQUIRE(max_tag == kMaxStepTag);
    }
  }
}

// ---- argument checks ----

CollArgs Args(Collective c, int size, int rank = 0) {
  CollArgs a;
  a.collective = c;
  a.size = size;
  a.rank = rank;
  return a;
}

std::string BuildError(Algorithm alg, const CollArgs& a) {
  Schedule s;
  return Build(alg, a, &s);
}

TEST_CASE("Build refuses bad arguments with a message") {
  CollArgs a = Args(Collective::kBcast, 4);
  a.root = 4;
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("root 4 is not in [0, 4)"));
  a.root = -1;
  REQUIRE_THAT(BuildError(Algorithm::kBinomial, a), Catch::Contains("root -1"));

  a = Args(Collective::kAllreduce, 4, 4);
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("rank 4 is not in [0, 4)"));
  a = Args(Collective::kAllreduce, 0, 0);
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("size 0 must be >= 1"));

  a = Args(Collective::kAllreduce, 4);
  a.elem_size = 4;
  a.bytes = 10;
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("bytes 10 is not a multiple of elem_size 4"));
  a.elem_size = 0;
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a), Catch::Contains("elem_size 0"));

  a = Args(Collective::kAllgatherv, 3);
  a.counts = {1, 2};
  a.displs = {0, 1, 3};
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("counts has 2 entries; expected size = 3"));
  a = Args(Collective::kAlltoallv, 3);
  a.send_counts = a.counts = {1, 1, 1};
  a.send_displs = {0, 1, 2};
  a.displs = {0, 1};
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("displs has 2 entries"));
  a.displs = {0, 1, 2};
  a.send_counts = {2, 1, 1};
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("send_counts[rank] = 2 differs"));
  a = Args(Collective::kReduceScatter, 2);
  a.elem_size = 4;
  a.counts = {4, 6};
  REQUIRE_THAT(BuildError(Algorithm::kAuto, a),
               Catch::Contains("counts[1] = 6 is not a multiple"));
  a = Args(Collective::kGatherv, 3, 0);  // the root needs the layout
  REQUIRE_THAT(BuildError(Algorithm::kLinear, a),
               Catch::Contains("counts has 0 entries"));
  a = Args(Collective::kGatherv, 3, 1);  // elsewhere it is optional
  a.bytes = 5;
  REQUIRE(BuildError(Algorithm::kLinear, a).empty());
  a.counts = {1, 2, 3};
  a.displs = {0, 1, 3};
  REQUIRE_THAT(BuildError(Algorithm::kLinear, a),
               Catch::Contains("bytes 5 differs from counts[rank] = 2"));

  a = Args(Collective::kBarrier, 4);
  REQUIRE_THAT(BuildError(Algorithm::kRing, a),
               Catch::Contains("algorithm 'ring'") &&
                   Catch::Contains("available: dissemination"));
  a = Args(Collective::kAlltoallv, 2);
  a.send_counts = a.counts = {1, 1};
  a.send_displs = a.displs = {0, 1};
  REQUIRE(BuildError(Algorithm::kPairwise, a).empty());
  REQUIRE_THAT(BuildError(Algorithm::kBruck, a),
               Catch::Contains("does not implement"));
  a = Args(Collective::kAllreduce, 4);
  a.commutative = false;
  REQUIRE_THAT(BuildError(Algorithm::kRing, a),
               Catch::Contains("needs a commutative operator"));
  a = Args(Collective::kBcast, 4);
  a.radix = 1;
  REQUIRE_THAT(BuildError(Algorithm::kKnomial, a),
               Catch::Contains("radix 1 must be >= 2"));
  REQUIRE(Build(Algorithm::kAuto, a, nullptr) == "out is null");
}

TEST_CASE("Choose never picks an algorithm Build refuses") {
  int checked = 0;
  for (Collective c : kAllCollectives) {
    for (int n : {1, 2, 3, 4, 7, 8, 16, 100, 1024}) {
      for (uint64_t elems : {0ull, 1ull, 7ull, 1000ull, 100000ull, 1000000ull}) {
        for (uint64_t es : {1ull, 4ull, 16ull}) {
          for (int where = 0; where < 6; ++where) {
            const bool commutative = where % 2 == 0;
            CollArgs a = Args(c, n, n - 1);
            a.single_node = where >= 2;
            a.oversubscribed = where >= 4;
            a.root = n / 2;
            a.elem_size = es;
            a.commutative = commutative;
            // Keep the all-to-all forms' total size reasonable.
            a.bytes = (c == Collective::kAlltoall || c == Collective::kAlltoallv)
                          ? std::min<uint64_t>(elems, 1000) * es
                          : elems * es;
            std::vector<uint64_t> counts(n, a.bytes), displs(n);
            for (int i = 0; i < n; ++i) displs[i] = i * a.bytes;
            if (c == Collective::kGatherv || c == Collective::kScatterv ||
                c == Collective::kAllgatherv || c == Collective::kReduceScatter ||
                c == Collective::kAlltoallv) {
              a.counts = counts;
              a.displs = displs;
              a.send_counts = counts;
              a.send_displs = displs;
            }
            const Algorithm chosen = Choose(a);
            INFO(CollectiveName(c) << " n=" << n << " bytes=" << a.bytes
                                   << " commutative=" << commutative
                                   << " single_node=" << a.single_node
                                   << " oversubscribed=" << a.oversubscribed
                                   << " chose " << AlgorithmName(chosen));
            Schedule s;
            REQUIRE(Build(chosen, a, &s) == "");
            REQUIRE(s.Validate(n, BufferBytesFor(a).send, BufferBytesFor(a).recv,
                               es) == "");
            ++checked;
          }
        }
      }
    }
  }
  REQUIRE(checked > 0);
}

TEST_CASE("Choose follows message size and process count") {
  CollArgs a = Args(Collective::kBcast, 64);
  a.bytes = 1024;
  REQUIRE(Choose(a) == Algorithm::kBinomial);
  a.bytes = 4 << 20;
  REQUIRE(Choose(a) == Algorithm::kPipelinedChain);
  a.bytes = 64 * 1024;  // below a pipeline, above MPICH's short message
  REQUIRE(Choose(a) == Algorithm::kBinomial);
  a = Args(Collective::kBcast, 4);
  a.bytes = 4 << 20;
  REQUIRE(Choose(a) == Algorithm::kBinomial);  // fewer than 8 ranks
  a.single_node = true;
  REQUIRE(Choose(a) == Algorithm::kLinear);
  a.bytes = 8;
  REQUIRE(Choose(a) == Algorithm::kLinear);
  a = Args(Collective::kBcast, 16);
  a.single_node = true;
  a.bytes = 8;
  REQUIRE(Choose(a) == Algorithm::kBinomial);
  a = Args(Collective::kAllreduce, 64);
  a.elem_size = 4;
  a.bytes = 64;
  REQUIRE(Choose(a) == Algorithm::kRecursiveDoubling);
  a.bytes = 4 << 20;
  REQUIRE(Choose(a) == Algorithm::kRabenseifner);
  a.commutative = false;
  REQUIRE(Choose(a) == Algorithm::kRabenseifner);
  a = Args(Collective::kAllreduce, 6);
  a.elem_size = 4;
  a.bytes = 4 << 20;
  REQUIRE(Choose(a) == Algorithm::kRing);  // no folding of extra ranks
  a.commutative = false;
  REQUIRE(Choose(a) == Algorithm::kRabenseifner);
  a = Args(Collective::kAllreduce, 4);
  a.elem_size = 4;
  a.bytes = 16 * 1024;
  REQUIRE(Choose(a) == Algorithm::kRecursiveDoubling);  // few ranks: 64 KiB
  a.bytes = 1 << 20;
  REQUIRE(Choose(a) == Algorithm::kRabenseifner);
  a.single_node = a.oversubscribed = true;
  REQUIRE(Choose(a) == Algorithm::kReduceBcast);
  a.bytes = 8;
  REQUIRE(Choose(a) == Algorithm::kRecursiveDoubling);
  a = Args(Collective::kAllreduce, 64);
  a.elem_size = 4;
  a.bytes = 4096;  // over MPICH's 2 KiB with many ranks
  REQUIRE(Choose(a) == Algorithm::kRabenseifner);
  a.bytes = 4 * 32;  // fewer elements than the power of two
  REQUIRE(Choose(a) == Algorithm::kRecursiveDoubling);
  a = Args(Collective::kAllreduce, 2);
  a.elem_size = 4;
  a.bytes = 256 * 1024;
  REQUIRE(Choose(a) == Algorithm::kRabenseifner);
  a.bytes = 1 << 20;  // two ranks: one rendezvous each way
  REQUIRE(Choose(a) == Algorithm::kRecursiveDoubling);
  a = Args(Collective::kAlltoall, 64);
  a.bytes = 8;
  REQUIRE(Choose(a) == Algorithm::kBruck);
  a.bytes = 64 * 1024;
  REQUIRE(Choose(a) == Algorithm::kPairwise);
  REQUIRE(Choose(Args(Collective::kBarrier, 9)) == Algorithm::kDissemination);
  // Gather: linear on one node up to 4 ranks (the root pulls each block
  // once), binomial otherwise; scatter stays binomial.
  for (int n : {2, 4, 5}) {
    a = Args(Collective::kGather, n);
    a.bytes = 1 << 20;
    REQUIRE(Choose(a) == Algorithm::kBinomial);
    a.single_node = true;
    REQUIRE(Choose(a) == (n <= 4 ? Algorithm::kLinear : Algorithm::kBinomial));
    a.collective = Collective::kScatter;
    REQUIRE(Choose(a) == Algorithm::kBinomial);
  }
}

TEST_CASE("allgather sends the own block beside its copy") {
  // Ring and linear: the own block leaves from the input at once, and its
  // copy to its place in the output waits for no message (before, the
  // ring's first send waited for the copy: copy, then the peer's pull, in
  // sequence). The builder assumes MPI_IN_PLACE aliasing for allgather, so
  // this also checks that the copy onto the (aliased) input drops only the
  // ordering after the input's readers.
  for (Algorithm alg : {Algorithm::kRing, Algorithm::kLinear}) {
    for (int n : {2, 3, 5}) {
      for (int r = 0; r < n; ++r) {
        CAPTURE(AlgorithmName(alg), n, r);
        CollArgs a = Args(Collective::kAllgather, n, r);
        a.bytes = 1 << 20;
        Schedule s;
        REQUIRE(Build(alg, a, &s).empty());
        int copies = 0, input_sends = 0;
        for (const Step& st : s.steps) {
          if (st.kind == StepKind::kCopy) {
            ++copies;
            REQUIRE(st.src.buf == kSendBuf);
            REQUIRE(st.deps.empty());
          }
          if (st.kind == StepKind::kSend && st.src.buf == kSendBuf) {
            ++input_sends;
            REQUIRE(st.deps.empty());
          }
        }
        REQUIRE(copies == 1);
        REQUIRE(input_sends == (alg == Algorithm::kRing ? 1 : n - 1));
        // Later writers of the own block would still order after the
        // sends (none here: nothing else touches it).
        for (const Step& st : s.steps)
          if (st.kind == StepKind::kRecv)
            REQUIRE(st.dst.offset != static_cast<uint64_t>(r) * a.bytes);
      }
    }
  }
}

TEST_CASE("alltoall with disjoint buffers receives into place") {
  // buffers_disjoint (no MPI_IN_PLACE): pairwise and linear need no
  // temporary and no copy after a receive (at 2 ranks the aliasing form
  // staged the whole remote block, then copied it: 1 MiB more copying on
  // the critical path at 1 MiB). The aliasing form still stages.
  for (Algorithm alg : {Algorithm::kPairwise, Algorithm::kLinear}) {
    for (int n : {2, 3, 4}) {
      for (int r = 0; r < n; ++r) {
        CAPTURE(AlgorithmName(alg), n, r);
        CollArgs a = Args(Collective::kAlltoall, n, r);
        a.bytes = 1 << 20;
        a.buffers_disjoint = true;
        Schedule s;
        REQUIRE(Build(alg, a, &s).empty());
        REQUIRE(s.tmp_bytes.empty());
        int copies = 0;
        for (const Step& st : s.steps) {
          if (st.kind == StepKind::kRecv) REQUIRE(st.dst.buf == kRecvBuf);
          if (st.kind == StepKind::kCopy) {
            ++copies;
            REQUIRE(st.src.buf == kSendBuf);
          }
        }
        REQUIRE(copies == 1);  // the own block
        a.buffers_disjoint = false;
        Schedule aliased;
        REQUIRE(Build(alg, a, &aliased).empty());
        REQUIRE_FALSE(aliased.tmp_bytes.empty());
      }
    }
  }
}

TEST_CASE("schedules stay lean for 1024 ranks") {
  struct Bound {
    Collective c;
    Algorithm a;
    size_t max_steps;  // per rank
  };
  const Bound bounds[] = {
      {Collective::kBarrier, Algorithm::kDissemination, 20},
      {Collective::kBarrier, Algorithm::kRecursiveDoubling, 22},
      {Collective::kBcast, Algorithm::kBinomial, 11},
      {Collective::kReduce, Algorithm::kBinomial, 3 * 10 + 2},
      {Collective::kAllreduce, Algorithm::kRecursiveDoubling, 3 * 10 + 6},
      {Collective::kAllreduce, Algorithm::kRing, 5 * 1024},
      {Collective::kAllreduce, Algorithm::kRabenseifner, 5 * 10 + 6},
      {Collective::kAllgather, Algorithm::kRecursiveDoubling, 2 * 10 + 4},
      {Collective::kAllgather, Algorithm::kBruck, 2 * 10 + 4},
      {Collective::kGather, Algorithm::kBinomial, 2 * 10 + 4},
      {Collective::kScatter, Algorithm::kBinomial, 2 * 10 + 4},
      {Collective::kAlltoall, Algorithm::kBruck, 1024 + 4 * 1024},
      {Collective::kScan, Algorithm::kRecursiveDoubling, 4 * 10 + 4},
  };
  for (const Bound& b : bounds) {
    for (int rank : {0, 1, 511, 1023}) {
      CollArgs a = Args(b.c, 1024, rank);
      a.bytes = 4096;
      a.elem_size = 4;
      Schedule s;
      REQUIRE(Build(b.a, a, &s) == "");
      INFO(CollectiveName(b.c) << "/" << AlgorithmName(b.a) << " rank "
                               << rank << ": " << s.steps.size() << " steps");
      REQUIRE(s.steps.size() <= b.max_steps);
    }
  }
}

TEST_CASE("names round-trip") {
  for (Collective c : kAllCollectives) {
    REQUIRE(ParseCollective(CollectiveName(c)) == c);
  }
  for (int i = 0; i < 12; ++i) {
    const Algorithm a = static_cast<Algorithm>(i);
    REQUIRE(AlgorithmName(a) != "?");
    REQUIRE(ParseAlgorithm(AlgorithmName(a)) == a);
  }
  REQUIRE(CollectiveName(Collective::kReduceScatterBlock) ==
          "reduce_scatter_block");
  REQUIRE(AlgorithmName(Algorithm::kPipelinedChain) == "pipelined_chain");
  REQUIRE_FALSE(ParseCollective("Bcast").has_value());
  REQUIRE_FALSE(ParseAlgorithm("tree").has_value());
  REQUIRE_FALSE(ParseAlgorithm("").has_value());
}

// ---- Validate and the simulator catch broken schedules ----

Step Msg(StepKind kind, int peer, uint32_t tag, BufRef ref,
         std::vector<uint32_t> deps = {}) {
  Step s;
  s.kind = kind;
  s.peer = peer;
  s.tag = tag;
  (kind == StepKind::kSend ? s.src : s.dst) = ref;
  s.deps = std::move(deps);
  return s;
}

Step Local(StepKind kind, BufRef src, BufRef dst,
           std::vector<uint32_t> deps = {}) {
  Step s;
  s.kind = kind;
  s.src = src;
  s.dst = dst;
  s.deps = std::move(deps);
  return s;
}

TEST_CASE("Validate reports malformed schedules") {
  Schedule s;
  s.Add(Msg(StepKind::kSend, 1, 0, {kSendBuf, 0, 8}));
  REQUIRE(s.Validate(2, 8, 0, 1) == "");
  REQUIRE_THAT(s.Validate(2, 4, 0, 1), Catch::Contains("outside buffer 0"));
  REQUIRE_THAT(s.Validate(1, 8, 0, 1), Catch::Contains("peer 1"));
  s.steps[0].tag = kMaxStepTag + 1;
  REQUIRE_THAT(s.Validate(2, 8, 0, 1), Catch::Contains("tag 4096"));
  s.steps[0].tag = 0;
  s.steps[0].deps = {0};
  REQUIRE_THAT(s.Validate(2, 8, 0, 1), Catch::Contains("not an earlier step"));
  s.steps[0].deps.clear();
  const uint16_t t = s.AddTmp(6);
  s.Add(Local(StepKind::kReduce, {kSendBuf, 0, 6}, {t, 0, 6}));
  REQUIRE(s.Validate(2, 8, 0, 2) == "");
  REQUIRE_THAT(s.Validate(2, 8, 0, 4), Catch::Contains("not a multiple"));
  s.Add(Local(StepKind::kCopy, {t, 0, 4}, {kSendBuf, 0, 4}));
  REQUIRE_THAT(s.Validate(2, 8, 0, 2), Catch::Contains("read only"));
  s.steps.back().dst = {9, 0, 4};
  REQUIRE_THAT(s.Validate(2, 8, 0, 2), Catch::Contains("names buffer 9"));
}

std::vector<SimRank> TwoRanks(uint64_t send, uint64_t recv) {
  std::vector<SimRank> r(2);
  for (auto& x : r) {
    x.send.assign(send, 1);
    x.recv.assign(recv, 0);
  }
  return r;
}

TEST_CASE("the simulator reports deadlocks") {
  // Each rank receives before it sends.
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    s[r].Add(Msg(StepKind::kRecv, 1 - r, 0, {kRecvBuf, 0, 4}));
    s[r].Add(Msg(StepKind::kSend, 1 - r, 0, {kSendBuf, 0, 4}, {0}));
  }
  auto ranks = TwoRanks(4, 4);
  const std::string err = Simulate(s, ranks, nullptr, 1, 1);
  REQUIRE_THAT(err, Catch::StartsWith("deadlock") &&
                        Catch::Contains("posted, unmatched"));
}

TEST_CASE("the simulator's sends wait for their receive unless eager") {
  // Both send first, then receive after their send completed: needs
  // buffering, so it deadlocks in the strict model only.
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    s[r].Add(Msg(StepKind::kSend, 1 - r, 0, {kSendBuf, 0, 4}));
    s[r].Add(Msg(StepKind::kRecv, 1 - r, 0, {kRecvBuf, 0, 4}, {0}));
  }
  auto ranks = TwoRanks(4, 4);
  REQUIRE_THAT(Simulate(s, ranks, nullptr, 1, 1), Catch::StartsWith("deadlock"));
  SimOptions eager;
  eager.eager = true;
  ranks = TwoRanks(4, 4);
  REQUIRE(Simulate(s, ranks, nullptr, 1, eager) == "");
  REQUIRE(ranks[0].recv == Bytes(4, 1));
}

TEST_CASE("the simulator reports length mismatches and Validate errors") {
  std::vector<Schedule> s(2);
  s[0].Add(Msg(StepKind::kSend, 1, 3, {kSendBuf, 0, 4}));
  s[1].Add(Msg(StepKind::kRecv, 0, 3, {kRecvBuf, 0, 8}));
  auto ranks = TwoRanks(4, 8);
  REQUIRE_THAT(Simulate(s, ranks, nullptr, 1, 1),
               Catch::Contains("sent 4 bytes") &&
                   Catch::Contains("expects 8"));
  ranks = TwoRanks(4, 4);
  REQUIRE_THAT(Simulate(s, ranks, nullptr, 1, 1),
               Catch::StartsWith("rank 1: ") &&
                   Catch::Contains("outside buffer 1"));
}

TEST_CASE("the simulator reports missing dependencies statically") {
  // A receive into bytes a copy writes, unordered.
  std::vector<Schedule> s(2);
  s[0].Add(Msg(StepKind::kSend, 1, 0, {kSendBuf, 0, 4}));
  s[1].Add(Msg(StepKind::kRecv, 0, 0, {kRecvBuf, 0, 4}));
  s[1].Add(Local(StepKind::kCopy, {kSendBuf, 0, 4}, {kRecvBuf, 2, 4}));
  auto ranks = TwoRanks(4, 8);
  REQUIRE_THAT(Simulate(s, ranks, nullptr, 1, 1), Catch::StartsWith("rank 1: race"));
  s[1].steps[1].deps = {0};
  ranks = TwoRanks(4, 8);
  REQUIRE(Simulate(s, ranks, nullptr, 1, 1) == "");
  // Through aliasing: buffer 0 inside buffer 1.
  s[1].steps[1].deps.clear();
  s[1].steps[1].dst = {kRecvBuf, 4, 4};
  ranks = TwoRanks(4, 8);
  REQUIRE(Simulate(s, ranks, nullptr, 1, 1) == "");
  ranks = TwoRanks(4, 8);
  ranks[1].alias = SimRank::Alias::kSendInRecv;
  ranks[1].alias_offset = 2;
  ranks[1].alias_len = 4;
  REQUIRE_THAT(Simulate(s, ranks, nullptr, 1, 1), Catch::Contains("race"));
  // Two receives from one peer with one tag, unordered.
  std::vector<Schedule> t(2);
  t[0].Add(Msg(StepKind::kSend, 1, 0, {kSendBuf, 0, 2}));
  t[0].Add(Msg(StepKind::kSend, 1, 0, {kSendBuf, 2, 2}, {0}));
  t[1].Add(Msg(StepKind::kRecv, 0, 0, {kRecvBuf, 0, 2}));
  t[1].Add(Msg(StepKind::kRecv, 0, 0, {kRecvBuf, 2, 2}));
  ranks = TwoRanks(4, 4);
  REQUIRE_THAT(Simulate(t, ranks, nullptr, 1, 1),
               Catch::Contains("receives from rank 0 with tag 0 but neither"));
}

TEST_CASE("a broken algorithm fails the comparison") {
  Case k;
  k.c = Collective::kAllreduce;
  k.alg = Algorithm::kRecursiveDoubling;
  k.n = 5;
  k.op = Op::kSum32;
  k.size_class = 1;
  REQUIRE(RunCase(k) == "");
  REQUIRE_THAT(RunCase(k, nullptr, /*break_one_reduce=*/true),
               Catch::Contains("differs from the reference"));
}

}  // namespace
}  // namespace rondo::nmad::coll
