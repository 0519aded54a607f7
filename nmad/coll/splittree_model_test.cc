// Tests of the split-tree model against values worked out by hand (in the
// comments) and against the paper's own statements about Figures 12-16 and
// Section 7 (where S switches as N grows on a 64-core KNL).
#include "nmad/coll/splittree_model.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace rondo::nmad::coll {
namespace {

SplitTreeParams Params(int nproc, int n, SplitOp op = SplitOp::kConstant) {
  SplitTreeParams p;
  p.nproc = nproc;
  p.n = n;
  p.op = op;
  return p;
}

TEST_CASE("H(N) is ceil(log2 N), so Equation 3 T_blocking(N) = H(N)",
          "[splittree_model]") {
  // 1 leaf: no level. 2 = 2^1. 3, 4 <= 2^2. 5 <= 2^3. 17 <= 2^5. 64 = 2^6.
  CHECK(TreeHeight(1) == 0);
  CHECK(TreeHeight(2) == 1);
  CHECK(TreeHeight(3) == 2);
  CHECK(TreeHeight(4) == 2);
  CHECK(TreeHeight(5) == 3);
  CHECK(TreeHeight(16) == 4);
  CHECK(TreeHeight(17) == 5);
  CHECK(TreeHeight(64) == 6);
  CHECK(TBlocking(16) == 4.0);
  CHECK(TBlocking(23) == 5.0);
  CHECK(TBlocking(64) == 6.0);
  // The doubling op's blocking time W_H(N) = 1 + 2 + ... + 2^(H-1).
  CHECK(TBlockingVar(16) == 15.0);  // 1 + 2 + 4 + 8
  CHECK(TBlockingVar(64) == 63.0);
  CHECK_THROWS_AS(TreeHeight(0), std::invalid_argument);
}

TEST_CASE("P(N) = N_proc - N", "[splittree_model]") {
  CHECK(CommCores(64, 62) == 2);
  CHECK(CommCores(18, 16) == 2);
  CHECK(CommCores(64, 64) == 0);
  CHECK_THROWS_AS(CommCores(64, 65), std::invalid_argument);
}

TEST_CASE("Equation 4 (corrected): computation is strong-scaled",
          "[splittree_model]") {
  // C(N) = N_proc / N * C(N_proc). On 64 cores, C(64) = T_blocking(64) = 6:
  // 32 ranks do twice the work each, C(32) = 12 (the printed N / N_proc
  // would give 3, i.e. less work per rank with fewer ranks).
  CHECK(Computation(64, 32, 6.0) == 12.0);
  CHECK(Computation(64, 64, 6.0) == 6.0);
  CHECK(Computation(64, 48, 6.0) == 8.0);
  // With the paper's default C(N_proc) = T_blocking(N_proc):
  CHECK(Computation(Params(64, 32)) == 12.0);
  // ... and for the doubling op, C(N_proc) = W_H(64) = 63: C(32) = 126.
  CHECK(Computation(Params(64, 32, SplitOp::kDoubling)) == 126.0);
  // An explicit amount overrides the default.
  SplitTreeParams p = Params(64, 16);
  p.compute_at_nproc = 1.0;
  CHECK(Computation(p) == 4.0);
}

TEST_CASE("Equation 5: F(N, i) communications per level", "[splittree_model]") {
  // Power of two: N / 2^i exactly, as the text says (16: 8, 4, 2, 1).
  CHECK(LevelCommunications(16, 1) == 8);
  CHECK(LevelCommunications(16, 2) == 4);
  CHECK(LevelCommunications(16, 3) == 2);
  CHECK(LevelCommunications(16, 4) == 1);
  // N = 23 (Figure 11), floor(N/2^i + 1/2):
  //   i=1: 11.5 + .5 = 12      -> 12 (11 pairs + the odd leaf's edge)
  //   i=2: 5.75 + .5 = 6.25    -> 6
  //   i=3: 2.875 + .5 = 3.375  -> 3
  //   i=4: 1.4375 + .5 = 1.94  -> 1
  //   i=5: 0.71875 + .5 = 1.22 -> 1 (the root's edge)
  CHECK(LevelCommunications(23, 1) == 12);
  CHECK(LevelCommunications(23, 2) == 6);
  CHECK(LevelCommunications(23, 3) == 3);
  CHECK(LevelCommunications(23, 4) == 1);
  CHECK(LevelCommunications(23, 5) == 1);
  // The equation as printed, ceil(N/2^i + 1/2): one more on every level
  // whose N/2^i is an integer or has a fractional part below 1/2.
  //   16: ceil(8.5)=9, ceil(4.5)=5, ceil(2.5)=3, ceil(1.5)=2
  //   23: ceil(12)=12, ceil(6.25)=7, ceil(3.375)=4, ceil(1.94)=2, ceil(1.22)=2
  constexpr auto kPrinted = LevelCountFormula::kAsPrinted;
  CHECK(LevelCommunications(16, 1, kPrinted) == 9);
  CHECK(LevelCommunications(16, 2, kPrinted) == 5);
  CHECK(LevelCommunications(16, 3, kPrinted) == 3);
  CHECK(LevelCommunications(16, 4, kPrinted) == 2);
  CHECK(LevelCommunications(23, 1, kPrinted) == 12);
  CHECK(LevelCommunications(23, 2, kPrinted) == 7);
  CHECK(LevelCommunications(23, 3, kPrinted) == 4);
  CHECK(LevelCommunications(23, 4, kPrinted) == 2);
  CHECK(LevelCommunications(23, 5, kPrinted) == 2);
  // Figure 12: "at each step the number of communications is halved".
  for (int i = 1; i < 6; ++i) {
    CHECK(LevelCommunications(64, i) == 2 * LevelCommunications(64, i + 1));
  }
  CHECK_THROWS_AS(LevelCommunications(16, 0), std::invalid_argument);
  CHECK_THROWS_AS(LevelCommunications(16, 5), std::invalid_argument);
}

TEST_CASE("Equation 6 on the example of Figures 9 and 10",
          "[splittree_model]") {
  // N = 16 on 18 cores, P = 2. F = 8, 4, 2, 1; folded rounds
  // ceil(F/2) = 4, 2, 1, 1.
  //   S=0: 4+2+1+1 = 8 ("it takes 8 rounds instead of 4")
  //   S=1: 1 + (2+1+1) = 5;  S=2: 2 + (1+1) = 4;  S=4: 4 + 0 = 4
  //   S=9: min(9, 4) = 4 (S beyond H(N) changes nothing)
  CHECK(TNonBlocking(0, 16, 2) == 8.0);
  CHECK(TNonBlocking(1, 16, 2) == 5.0);
  CHECK(TNonBlocking(2, 16, 2) == 4.0);
  CHECK(TNonBlocking(4, 16, 2) == 4.0);
  CHECK(TNonBlocking(9, 16, 2) == 4.0);
  // Folded on a single core: 8+4+2+1 = 15 steps ("15 communication tasks").
  CHECK(TNonBlocking(0, 16, 1) == 15.0);
  // Without communication cores only S >= H(N) is possible.
  CHECK(std::isinf(TNonBlocking(3, 16, 0)));
  CHECK(TNonBlocking(4, 16, 0) == 4.0);
}

TEST_CASE("Equation 7: overlapped time and the choice of S (constant)",
          "[splittree_model]") {
  // N = 16, N_proc = 18: C(18) = H(18) = 5, C(16) = 18/16 * 5 = 5.625.
  //   S=0: 0 + max(5.625, 8) = 8
  //   S=1: 1 + max(5.625, 4) = 6.625   <- best
  //   S=2: 2 + max(5.625, 2) = 7.625
  //   S=3: 3 + max(5.625, 1) = 8.625;  S=4: 4 + 5.625 = 9.625
  SplitTreeParams p = Params(18, 16);
  CHECK(TOverlapped(0, 16, 2, 5.625) == 8.0);
  CHECK(ModelTime(p, 0) == 8.0);
  CHECK(ModelTime(p, 1) == 6.625);
  CHECK(ModelTime(p, 2) == 7.625);
  CHECK(ModelTime(p, 3) == 8.625);
  CHECK(ModelTime(p, 4) == 9.625);
  CHECK(ChooseSplit(p) == 1);
  p.unit_ns = 1000.0;
  CHECK(ModelTimeNs(p, 1) == 6625.0);

  // N = 62 on 64 cores (P = 2): C = 64/62 * 6 = 6.1935...
  // F(62, i) = 31, 16, 8, 4, 2, 1; ceil(F/2) = 16, 8, 4, 2, 1, 1.
  //   S=0: 32;  S=1: 1 + 16 = 17;  S=2: 2 + 8 = 10;
  //   S=3: 3 + max(6.19, 4) = 9.19 <- best;  S=4: 4 + 6.19 = 10.19
  const double c62 = 64.0 / 62.0 * 6.0;
  p = Params(64, 62);
  CHECK(ModelTime(p, 0) == 32.0);
  CHECK(ModelTime(p, 1) == 17.0);
  CHECK(ModelTime(p, 2) == 10.0);
  CHECK(ModelTime(p, 3) == Approx(3.0 + c62));
  CHECK(ModelTime(p, 4) == Approx(4.0 + c62));
  CHECK(ChooseSplit(p) == 3);
}

TEST_CASE("Equations 8 and 9: size-doubling operations",
          "[splittree_model]") {
  // W(N, S) = 2^S - 1.
  CHECK(WeightUpTo(0) == 0.0);
  CHECK(WeightUpTo(1) == 1.0);
  CHECK(WeightUpTo(3) == 7.0);
  // N = 16, P = 2: folded rounds 4, 2, 1, 1 weighted 1, 2, 4, 8.
  //   S=0: 4*1 + 2*2 + 1*4 + 1*8 = 20
  //   S=1: W=1 + (4 + 4 + 8) = 17
  //   S=2: W=3 + (4 + 8) = 15;  S=3: 7 + 8 = 15;  S=4: 15 + 0 = 15
  CHECK(TNonBlockingVar(0, 16, 2) == 20.0);
  CHECK(TNonBlockingVar(1, 16, 2) == 17.0);
  CHECK(TNonBlockingVar(2, 16, 2) == 15.0);
  CHECK(TNonBlockingVar(3, 16, 2) == 15.0);
  CHECK(TNonBlockingVar(4, 16, 2) == 15.0);
  CHECK(TNonBlockingVar(7, 16, 2) == 15.0);  // min(W(S), W_H) caps it
  // Equation 9 with N_proc = 18: C(18) = W_H(18) = 31, C(16) = 34.875.
  //   S=0: 0 + max(34.875, 20) = 34.875 <- best;  S=1: 1 + 34.875
  SplitTreeParams p = Params(18, 16, SplitOp::kDoubling);
  CHECK(TOverlappedVar(0, 16, 2, 34.875) == 34.875);
  CHECK(ModelTime(p, 0) == 34.875);
  CHECK(ModelTime(p, 1) == 35.875);
  CHECK(ChooseSplit(p) == 0);
  // N = 60 on 64 (P = 4), C = 64/60 * 63 = 67.2.
  // F(60, i) = 30, 15, 8, 4, 2, 1; ceil(F/4) = 8, 4, 2, 1, 1, 1,
  // weighted by 1, 2, 4, 8, 16, 32: 8, 8, 8, 8, 16, 32.
  //   S=0: 80;  S=1: 1 + 72 = 73;  S=2: 3 + max(67.2, 64) = 70.2 <- best;
  //   S=3: 7 + 67.2 = 74.2
  p = Params(64, 60, SplitOp::kDoubling);
  CHECK(ModelTime(p, 0) == 80.0);
  CHECK(ModelTime(p, 1) == 73.0);
  CHECK(ModelTime(p, 2) == Approx(70.2));
  CHECK(ModelTime(p, 3) == Approx(74.2));
  CHECK(ChooseSplit(p) == 2);
}

TEST_CASE("The S choice reproduces the paper's observations on 64 cores",
          "[splittree_model]") {
  // Section 6.2: absolute minimum at S = 0, N = 51; S = 1 optimal at N = 57,
  // S = 2 at N = 60, S = 3 at N = 62. Section 7: switches from S = 0 to 1
  // at N = 52, 1 to 2 at 58, 2 to 3 at 62.
  auto choose = [](int n) { return ChooseSplit(Params(64, n)); };
  CHECK(choose(51) == 0);
  CHECK(choose(52) == 1);
  CHECK(choose(57) == 1);
  CHECK(choose(58) == 2);
  CHECK(choose(60) == 2);
  CHECK(choose(61) == 2);
  CHECK(choose(62) == 3);
  CHECK(choose(64) == 6);  // no communication core: the blocking tree
  // Figure 14: S = 0 for every N up to 51 (plenty of communication cores),
  // and S never decreases as N grows.
  int previous = 0;
  double best_time = 1e300;
  int best_n = 0;
  for (int n = 1; n <= 64; ++n) {
    const int s = choose(n);
    if (n <= 51) CHECK(s == 0);
    CHECK(s >= previous);
    previous = s;
    const double t = ModelTime(Params(64, n), s);
    if (t < best_time) {
      best_time = t;
      best_n = n;
    }
  }
  CHECK(best_n == 51);
  CHECK(best_time == Approx(64.0 / 51.0 * 6.0));
  // Figure 14: for small N a larger S only costs (S steps lose overlap).
  CHECK(ModelTime(Params(64, 16), 1) == ModelTime(Params(64, 16), 0) + 1.0);

  // Doubling ops (Figures 15-16) behave alike: S = 0 while there are enough
  // communication cores, then growing with N.
  auto choose_var = [](int n) {
    return ChooseSplit(Params(64, n, SplitOp::kDoubling));
  };
  previous = 0;
  for (int n = 1; n <= 64; ++n) {
    const int s = choose_var(n);
    CHECK(s >= previous);
    previous = s;
  }
  CHECK(choose_var(57) == 0);
  CHECK(choose_var(58) == 1);
  CHECK(choose_var(60) == 2);
  CHECK(choose_var(63) == 4);
}

TEST_CASE("The printed Equation 5 moves the paper's switch points",
          "[splittree_model]") {
  // Why kText is the default: with the printed ceil(), N = 57 already needs
  // S = 2 and the overall minimum moves to N = 50, contradicting Sec. 6.2.
  SplitTreeParams p = Params(64, 57);
  p.level_count = LevelCountFormula::kAsPrinted;
  CHECK(ChooseSplit(p) == 2);
  p.level_count = LevelCountFormula::kText;
  CHECK(ChooseSplit(p) == 1);
}

TEST_CASE("Ties go to the smaller S", "[splittree_model]") {
  // N = 2 on 4 cores: H = 1, P = 2, C = 4/2 * H(4) = 4. F(2, 1) = 1.
  //   S=0: 0 + max(4, 1) = 4;  S=1: 1 + 4 = 5.
  CHECK(ChooseSplit(Params(4, 2)) == 0);
  // Single rank: H(1) = 0, only S = 0 exists.
  CHECK(ChooseSplit(Params(64, 1)) == 0);
  CHECK(ModelTimes(Params(64, 1)).size() == 1);
  // A real tie: doubling with N = 16, P = 2 and no computation (C = 0):
  // S = 2, 3, 4 all give 15 (see Equation 8 above) and S = 2 is chosen.
  SplitTreeParams p = Params(18, 16, SplitOp::kDoubling);
  p.compute_at_nproc = 0.0;
  CHECK(ModelTime(p, 2) == 15.0);
  CHECK(ModelTime(p, 3) == 15.0);
  CHECK(ChooseSplit(p) == 2);
}

TEST_CASE("Bad model parameters are rejected with a message",
          "[splittree_model]") {
  CHECK_THROWS_WITH(ModelTime(Params(64, 65), 0),
                    Catch::Contains("N (application ranks)") &&
                        Catch::Contains("'65'"));
  CHECK_THROWS_AS(ModelTime(Params(64, 0), 0), std::invalid_argument);
  CHECK_THROWS_AS(ModelTime(Params(64, 8), -1), std::invalid_argument);
  SplitTreeParams p = Params(64, 8);
  p.unit_ns = 0;
  CHECK_THROWS_WITH(ChooseSplit(p), Catch::Contains("unit_ns"));
}

TEST_CASE("RONDO_SPLIT_S parsing", "[splittree_model]") {
  SplitOptions o = ParseSplitOptions("auto");
  CHECK(o.automatic);
  o = ParseSplitOptions("0");
  CHECK(!o.automatic);
  CHECK(o.fixed_s == 0);
  o = ParseSplitOptions("3");
  CHECK(!o.automatic);
  CHECK(o.fixed_s == 3);
  CHECK(ParseSplitOptions("31").fixed_s == 31);
  for (const char* bad : {"", "AUTO", "-1", "+2", " 3", "3 ", "3x", "32",
                          "100", "1.5", "auto "}) {
    INFO("value '" << bad << "'");
    CHECK_THROWS_AS(ParseSplitOptions(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(ParseSplitOptions("fast"),
                    "Invalid value for RONDO_SPLIT_S: 'fast'. Expected: auto "
                    "or an integer from 0 to 31");

  // Resolution: auto uses the model; a fixed S is clamped to H(N).
  CHECK(ResolveSplit(ParseSplitOptions("auto"), Params(64, 62)) == 3);
  CHECK(ResolveSplit(ParseSplitOptions("2"), Params(64, 62)) == 2);
  CHECK(ResolveSplit(ParseSplitOptions("9"), Params(64, 8)) == 3);

  // From the environment: unset is auto, set values are parsed strictly.
  ::unsetenv("RONDO_SPLIT_S");
  CHECK(SplitOptionsFromEnv().automatic);
  ::setenv("RONDO_SPLIT_S", "4", 1);
  CHECK(SplitOptionsFromEnv().fixed_s == 4);
  ::setenv("RONDO_SPLIT_S", "", 1);
  CHECK_THROWS_WITH(SplitOptionsFromEnv(),
                    Catch::StartsWith("Invalid value for RONDO_SPLIT_S: ''"));
  ::unsetenv("RONDO_SPLIT_S");
}

}  // namespace
}  // namespace rondo::nmad::coll
