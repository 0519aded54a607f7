#include "topology/cpuset.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace rondo::topology {
namespace {

std::vector<int> Members(const CpuSet& s) {
  std::vector<int> out;
  for (int c = s.First(); c >= 0; c = s.Next(c)) out.push_back(c);
  return out;
}

// Returns the message of the std::invalid_argument thrown by Parse(text).
std::string ParseError(const std::string& text) {
  try {
    CpuSet::Parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  FAIL("Parse('" << text << "') did not throw");
  return "";
}

TEST_CASE("CpuSet starts empty", "[cpuset]") {
  CpuSet s;
  CHECK(s.Empty());
  CHECK(s.Count() == 0);
  CHECK(s.First() == -1);
  CHECK(s.Last() == -1);
  CHECK(s.Next(-1) == -1);
  CHECK(s.ToString() == "{}");
}

TEST_CASE("CpuSet Set, Clear and Test", "[cpuset]") {
  CpuSet s;
  s.Set(0);
  s.Set(63);
  s.Set(64);
  s.Set(CpuSet::kMaxCores - 1);
  CHECK(s.Count() == 4);
  CHECK(s.Test(63));
  CHECK(s.Test(64));
  CHECK_FALSE(s.Test(1));
  CHECK_FALSE(s.Test(-1));
  CHECK_FALSE(s.Test(CpuSet::kMaxCores));
  CHECK(s.First() == 0);
  CHECK(s.Last() == CpuSet::kMaxCores - 1);

  s.Clear(63);
  CHECK_FALSE(s.Test(63));
  CHECK(s.Count() == 3);
  // Out-of-range clears are no-ops rather than errors.
  s.Clear(-5);
  s.Clear(CpuSet::kMaxCores);
  CHECK(s.Count() == 3);
}

TEST_CASE("CpuSet Next walks across words", "[cpuset]") {
  CpuSet s{1, 63, 64, 200, 511};
  CHECK(Members(s) == std::vector<int>{1, 63, 64, 200, 511});
  CHECK(s.Next(-1) == 1);
  CHECK(s.Next(1) == 63);
  CHECK(s.Next(63) == 64);
  CHECK(s.Next(64) == 200);
  CHECK(s.Next(65) == 200);
  CHECK(s.Next(511) == -1);
  CHECK(s.Next(CpuSet::kMaxCores + 10) == -1);
}

TEST_CASE("CpuSet Single and Range", "[cpuset]") {
  CHECK(Members(CpuSet::Single(7)) == std::vector<int>{7});
  CHECK(Members(CpuSet::Range(62, 66)) ==
        std::vector<int>{62, 63, 64, 65, 66});
  CHECK(CpuSet::Range(5, 4).Empty());
  CHECK(CpuSet::Range(0, CpuSet::kMaxCores - 1).Count() == CpuSet::kMaxCores);
}

TEST_CASE("CpuSet set operations", "[cpuset]") {
  CpuSet a = CpuSet::Range(0, 7);
  CpuSet b{6, 7, 8, 100};
  CHECK((a | b) == (CpuSet::Range(0, 8) | CpuSet::Single(100)));
  CHECK((a & b) == CpuSet{6, 7});
  CHECK(a.Intersects(b));
  CHECK_FALSE(a.Intersects(CpuSet{8, 9}));
  CHECK(a.Contains(CpuSet{0, 7}));
  CHECK(a.Contains(CpuSet{}));
  CHECK_FALSE(a.Contains(b));
  CHECK(a == CpuSet::Range(0, 7));
  CHECK_FALSE(a == b);
}

TEST_CASE("CpuSet ToString merges runs", "[cpuset]") {
  CHECK(CpuSet{0, 1, 2, 3, 6}.ToString() == "{0-3,6}");
  CHECK(CpuSet{5}.ToString() == "{5}");
  CHECK(CpuSet{0, 1}.ToString() == "{0-1}");
  CHECK(CpuSet{0, 2, 4}.ToString() == "{0,2,4}");
  CHECK((CpuSet::Range(60, 70) | CpuSet::Single(511)).ToString() ==
        "{60-70,511}");
}

TEST_CASE("CpuSet Parse accepts lists and ranges", "[cpuset]") {
  CHECK(CpuSet::Parse("0-3,6") == CpuSet{0, 1, 2, 3, 6});
  CHECK(CpuSet::Parse("{0-3,6}") == CpuSet{0, 1, 2, 3, 6});
  CHECK(CpuSet::Parse(" { 0 - 3 , 6 } ") == CpuSet{0, 1, 2, 3, 6});
  CHECK(CpuSet::Parse("7") == CpuSet{7});
  CHECK(CpuSet::Parse("4-4") == CpuSet{4});
  CHECK(CpuSet::Parse("3,1,3") == CpuSet{1, 3});
  CHECK(CpuSet::Parse("511") == CpuSet{511});
  CHECK(CpuSet::Parse("").Empty());
  CHECK(CpuSet::Parse("{}").Empty());
  CHECK(CpuSet::Parse(" { } ").Empty());
}

TEST_CASE("CpuSet Parse round-trips ToString", "[cpuset]") {
  for (const CpuSet& s :
       {CpuSet{}, CpuSet{0}, CpuSet{0, 1, 2, 3, 6}, CpuSet{1, 63, 64, 511},
        CpuSet::Range(0, CpuSet::kMaxCores - 1)}) {
    CHECK(CpuSet::Parse(s.ToString()) == s);
  }
}

TEST_CASE("CpuSet Parse rejects bad input with a helpful message",
          "[cpuset]") {
  std::string msg = ParseError("3-x");
  CHECK_THAT(msg, Catch::Contains("invalid cpuset '3-x'"));
  CHECK_THAT(msg, Catch::Contains("'x' is not a core number"));
  CHECK_THAT(msg, Catch::Contains("such as '0-3,6'"));
  CHECK_THAT(msg, Catch::Contains("(cores 0..511)"));

  CHECK_THAT(ParseError("5-3"), Catch::Contains("range 5-3 is reversed"));
  CHECK_THAT(ParseError("512"), Catch::Contains("core 512 is out of range"));
  CHECK_THAT(ParseError("0-99999999999"),
             Catch::Contains("core 99999999999 is out of range"));
  CHECK_THAT(ParseError("0,,1"), Catch::Contains("empty item"));
  CHECK_THAT(ParseError("0,"), Catch::Contains("empty item"));
  CHECK_THAT(ParseError(",0"), Catch::Contains("empty item"));
  CHECK_THAT(ParseError("-3"), Catch::Contains("missing core number"));
  CHECK_THAT(ParseError("2-"), Catch::Contains("missing core number"));
  CHECK_THAT(ParseError("1-2-3"), Catch::Contains("'2-3' is not a core"));
  CHECK_THAT(ParseError("+1"), Catch::Contains("'+1' is not a core number"));
  CHECK_THAT(ParseError("0 1"), Catch::Contains("'0 1' is not a core number"));
  CHECK_THAT(ParseError("{0-3"), Catch::Contains("missing closing '}'"));
  CHECK_THAT(ParseError("0-3}"), Catch::Contains("missing opening '{'"));
  CHECK_THAT(ParseError("all"), Catch::Contains("invalid cpuset 'all'"));
}

}  // namespace
}  // namespace rondo::topology
