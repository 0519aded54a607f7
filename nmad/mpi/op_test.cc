// Tests of nmad/mpi reductions: the MPI-3.1 §5.9.2 validity table for every
// (predefined op, predefined type), every valid pair computed against a
// reference written here, MAXLOC/MINLOC tie rules, derived types with
// predefined ops (gaps untouched, unaligned blocks, split pairs), and a
// non-commutative user op (operand order, len and datatype arguments).
#include "nmad/mpi/op.h"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nmad/mpi/datatype.h"

namespace rondo::nmad::mpi {
namespace {

const Datatype& P(MPI_Datatype h) {
  const Datatype* t = Predefined(h);
  REQUIRE(t != nullptr);
  return *t;
}

std::shared_ptr<const Datatype> Ok(TypeResult r) {
  INFO(r.error);
  REQUIRE(r.ok());
  return r.type;
}

// ---- The standard's table, written out independently of op.cc ----

const std::set<MPI_Datatype> kCInteger = {
    MPI_INT,           MPI_LONG,
    MPI_SHORT,         MPI_UNSIGNED_SHORT,
    MPI_UNSIGNED,      MPI_UNSIGNED_LONG,
    MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG,
    MPI_SIGNED_CHAR,   MPI_UNSIGNED_CHAR,
    MPI_INT8_T,        MPI_INT16_T,
    MPI_INT32_T,       MPI_INT64_T,
    MPI_UINT8_T,       MPI_UINT16_T,
    MPI_UINT32_T,      MPI_UINT64_T};
// Rondo's extension, as Open MPI 4.1.4 and MPICH 4.0: MPI_CHAR reduces
// as a C integer (the platform's char).
const std::set<MPI_Datatype> kCharExtension = {MPI_CHAR};
const std::set<MPI_Datatype> kFloating = {MPI_FLOAT, MPI_DOUBLE,
                                          MPI_LONG_DOUBLE};
const std::set<MPI_Datatype> kComplex = {
    MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX};
const std::set<MPI_Datatype> kLogical = {MPI_C_BOOL};
const std::set<MPI_Datatype> kByte = {MPI_BYTE};
const std::set<MPI_Datatype> kMulti = {MPI_AINT, MPI_OFFSET, MPI_COUNT};
const std::set<MPI_Datatype> kPairs = {MPI_FLOAT_INT, MPI_DOUBLE_INT,
                                       MPI_LONG_INT,  MPI_2INT,
                                       MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};

bool StandardAllows(MPI_Op op, MPI_Datatype t) {
  auto in = [t](std::initializer_list<const std::set<MPI_Datatype>*> groups) {
    for (const auto* g : groups) {
      if (g->count(t)) return true;
    }
    return false;
  };
  switch (op) {
    case MPI_MAX:
    case MPI_MIN:
      return in({&kCInteger, &kCharExtension, &kFloating, &kMulti});
    case MPI_SUM:
    case MPI_PROD:
      return in({&kCInteger, &kCharExtension, &kFloating, &kComplex, &kMulti});
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
      return in({&kCInteger, &kCharExtension, &kLogical});
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR:
      return in({&kCInteger, &kCharExtension, &kByte, &kMulti});
    case MPI_MAXLOC:
    case MPI_MINLOC:
      return in({&kPairs});
    case MPI_REPLACE:
    case MPI_NO_OP:
      return true;
  }
  return false;
}

TEST_CASE("CheckOp follows the MPI-3.1 table for every predefined pair",
          "[op]") {
  int allowed = 0;
  for (MPI_Op op = MPI_MAX; op <= MPI_NO_OP; ++op) {
    for (MPI_Datatype t = 1; t <= RONDO_MPI_LAST_PREDEFINED_DATATYPE; ++t) {
      INFO(OpName(op) << " on " << P(t).name());
      std::string error;
      const int rc = CheckOp(op, P(t), &error);
      if (StandardAllows(op, t)) {
        ++allowed;
        CHECK(rc == MPI_SUCCESS);
        CHECK(error.empty());
      } else {
        CHECK(rc == MPI_ERR_OP);
        CHECK(error.find(OpName(op)) != std::string::npos);
        CHECK(error.find(P(t).name()) != std::string::npos);
        CHECK(error.find("allowed types") != std::string::npos);
      }
    }
  }
  // Counted by hand from the groups (18 C integer and MPI_CHAR, 3 floating,
  // 3 complex, 1 logical, 1 byte, 3 multi-language, 6 pair types): MAX/MIN
  // 25 each, SUM/PROD 28 each, LAND/LOR/LXOR 20 each, BAND/BOR/BXOR 23 each,
  // MAXLOC/MINLOC 6 each, REPLACE/NO_OP 38 each.
  CHECK(allowed == 2 * 25 + 2 * 28 + 3 * 20 + 3 * 23 + 2 * 6 + 2 * 38);

  std::string error;
  CHECK(CheckOp(MPI_BAND, P(MPI_FLOAT), &error) == MPI_ERR_OP);
  CHECK(error.rfind("MPI_BAND is not defined for MPI_FLOAT; allowed types: ",
                    0) == 0);
  CHECK(error.find("byte") != std::string::npos);
  CHECK(CheckOp(MPI_MAXLOC, P(MPI_INT), &error) == MPI_ERR_OP);
  CHECK(error.find("MPI_2INT") != std::string::npos);
  CHECK(CheckOp(MPI_SUM, P(MPI_WCHAR), &error) == MPI_ERR_OP);
  CHECK(error.rfind("MPI_SUM is not defined for MPI_WCHAR; allowed types: ",
                    0) == 0);
  CHECK(error.find("MPI_CHAR included") != std::string::npos);
  // MPI_CHAR is a C integer for the extension, not a pair (Open MPI and
  // MPICH refuse MAXLOC/MINLOC on it too).
  CHECK(CheckOp(MPI_SUM, P(MPI_CHAR), nullptr) == MPI_SUCCESS);
  CHECK(CheckOp(MPI_MAXLOC, P(MPI_CHAR), &error) == MPI_ERR_OP);
  CHECK(error.rfind("MPI_MAXLOC is not defined for MPI_CHAR; ", 0) == 0);
  CHECK(CheckOp(MPI_MINLOC, P(MPI_UNSIGNED_CHAR), &error) == MPI_ERR_OP);
  CHECK(error.rfind("MPI_MINLOC is not defined for MPI_UNSIGNED_CHAR; ", 0) ==
        0);
  CHECK(CheckOp(99, P(MPI_INT), &error) == MPI_ERR_OP);
  CHECK(error.find("99") != std::string::npos);
  CHECK(CheckOp(MPI_OP_NULL, P(MPI_INT), &error) == MPI_ERR_OP);
}

TEST_CASE("op names and commutativity", "[op]") {
  const std::map<MPI_Op, std::string> names = {
      {MPI_MAX, "MPI_MAX"},         {MPI_MIN, "MPI_MIN"},
      {MPI_SUM, "MPI_SUM"},         {MPI_PROD, "MPI_PROD"},
      {MPI_LAND, "MPI_LAND"},       {MPI_BAND, "MPI_BAND"},
      {MPI_LOR, "MPI_LOR"},         {MPI_BOR, "MPI_BOR"},
      {MPI_LXOR, "MPI_LXOR"},       {MPI_BXOR, "MPI_BXOR"},
      {MPI_MAXLOC, "MPI_MAXLOC"},   {MPI_MINLOC, "MPI_MINLOC"},
      {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"}};
  for (const auto& [op, name] : names) {
    CHECK(OpName(op) == name);
    CHECK(IsPredefinedOp(op));
    CHECK(IsCommutative(op));
    const Op o = PredefinedOp(op);
    CHECK(o.predefined);
    CHECK(o.commutative);
    CHECK(o.handle == op);
  }
  CHECK(std::string(OpName(MPI_OP_NULL)) == "MPI_OP_NULL");
  CHECK_FALSE(IsPredefinedOp(MPI_OP_NULL));
  CHECK_FALSE(IsPredefinedOp(15));
  CHECK_FALSE(IsCommutative(15));
}

// ---- Every valid (op, scalar type) against a reference ----

template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;

// Small values so that sums and products are exact and never overflow
// (wrapping is tested separately); zeros included for the logical ops.
template <typename T>
T Gen(int i, int seed) {
  const int k = (i * 7 + seed * 5) % 23;
  if constexpr (std::is_same_v<T, bool>) {
    return k % 3 == 0;
  } else if constexpr (kIsComplex<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(k - 11) / 2, static_cast<R>((k * 3) % 7 - 3));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(k - 11) / 2;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(k - 11);
  } else {
    return static_cast<T>(k % 12);
  }
}

template <typename T>
T Reference(MPI_Op op, T a, T b) {  // a from in, b from inout
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case MPI_LAND:
        return a && b;
      case MPI_LOR:
        return a || b;
      case MPI_LXOR:
        return a != b;
      case MPI_REPLACE:
        return a;
      default:
        return b;  // MPI_NO_OP
    }
  } else if constexpr (kIsComplex<T>) {
    switch (op) {
      case MPI_SUM:
        return T(a.real() + b.real(), a.imag() + b.imag());
      case MPI_PROD:
        return T(a.real() * b.real() - a.imag() * b.imag(),
                 a.real() * b.imag() + a.imag() * b.real());
      case MPI_REPLACE:
        return a;
      default:
        return b;
    }
  } else {
    switch (op) {
      case MPI_MAX:
        return a > b ? a : b;
      case MPI_MIN:
        return a < b ? a : b;
      case MPI_SUM:
        return static_cast<T>(a + b);
      case MPI_PROD:
        return static_cast<T>(a * b);
      case MPI_REPLACE:
        return a;
      case MPI_NO_OP:
        return b;
      default:
        break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case MPI_LAND:
          return (a != 0 && b != 0) ? 1 : 0;
        case MPI_LOR:
          return (a != 0 || b != 0) ? 1 : 0;
        case MPI_LXOR:
          return ((a != 0) != (b != 0)) ? 1 : 0;
        case MPI_BAND:
          return static_cast<T>(a & b);
        case MPI_BOR:
          return static_cast<T>(a | b);
        case MPI_BXOR:
          return static_cast<T>(a ^ b);
        default:
          break;
      }
    }
    FAIL("no reference for op " << op);
    return b;
  }
}

using Covered = std::set<std::pair<MPI_Op, MPI_Datatype>>;

template <typename T>
void CheckScalarOps(MPI_Datatype h, Covered* covered) {
  const Datatype& type = P(h);
  REQUIRE(type.size() == static_cast<int64_t>(sizeof(T)));
  constexpr int kN = 37;  // not a multiple of any vector width
  for (MPI_Op op = MPI_MAX; op <= MPI_NO_OP; ++op) {
    if (CheckOp(op, type, nullptr) != MPI_SUCCESS) continue;
    INFO(OpName(op) << " on " << type.name());
    std::array<T, kN> in;  // not std::vector: vector<bool> has no data()
    std::array<T, kN> inout;
    std::array<T, kN> want;
    for (int i = 0; i < kN; ++i) {
      in[i] = Gen<T>(i, 1);
      inout[i] = Gen<T>(i, 4);
      want[i] = Reference<T>(op, in[i], inout[i]);
    }
    const std::array<T, kN> in_before = in;
    ApplyPredefined(op, type, in.data(), inout.data(), kN);
    for (int i = 0; i < kN; ++i) {
      INFO("element " << i);
      CHECK(inout[i] == want[i]);
    }
    CHECK(in == in_before);
    covered->insert({op, h});
  }
}

template <typename V>
struct PairOf {
  V value;
  int index;
};

template <typename V>
void CheckPairOps(MPI_Datatype h, Covered* covered) {
  const Datatype& type = P(h);
  REQUIRE(type.extent() == static_cast<int64_t>(sizeof(PairOf<V>)));
  constexpr int kN = 24;
  for (MPI_Op op : {MPI_MAXLOC, MPI_MINLOC}) {
    INFO(OpName(op) << " on " << type.name());
    std::vector<PairOf<V>> in(kN);
    std::vector<PairOf<V>> inout(kN);
    for (int i = 0; i < kN; ++i) {
      in[i] = {static_cast<V>(i % 4), 10 + i % 5};
      inout[i] = {static_cast<V>((i / 2) % 4), 12 - i % 3};
    }
    std::vector<PairOf<V>> want = inout;
    for (int i = 0; i < kN; ++i) {
      const PairOf<V>& a = in[i];
      const PairOf<V>& b = inout[i];
      const bool a_better =
          op == MPI_MAXLOC ? a.value > b.value : a.value < b.value;
      if (a_better) {
        want[i] = a;
      } else if (a.value == b.value) {
        want[i].index = std::min(a.index, b.index);
      }
    }
    ApplyPredefined(op, type, in.data(), inout.data(), kN);
    for (int i = 0; i < kN; ++i) {
      INFO("pair " << i);
      CHECK(inout[i].value == want[i].value);
      CHECK(inout[i].index == want[i].index);
    }
    covered->insert({op, h});
  }
}

TEST_CASE("every predefined op on every valid type", "[op]") {
  Covered covered;
  CheckScalarOps<signed char>(MPI_SIGNED_CHAR, &covered);
  CheckScalarOps<unsigned char>(MPI_UNSIGNED_CHAR, &covered);
  CheckScalarOps<unsigned char>(MPI_BYTE, &covered);
  CheckScalarOps<char>(MPI_CHAR, &covered);
  CheckScalarOps<unsigned char>(MPI_PACKED, &covered);
  CheckScalarOps<wchar_t>(MPI_WCHAR, &covered);
  CheckScalarOps<short>(MPI_SHORT, &covered);
  CheckScalarOps<unsigned short>(MPI_UNSIGNED_SHORT, &covered);
  CheckScalarOps<int>(MPI_INT, &covered);
  CheckScalarOps<unsigned>(MPI_UNSIGNED, &covered);
  CheckScalarOps<long>(MPI_LONG, &covered);
  CheckScalarOps<unsigned long>(MPI_UNSIGNED_LONG, &covered);
  CheckScalarOps<long long>(MPI_LONG_LONG_INT, &covered);
  CheckScalarOps<unsigned long long>(MPI_UNSIGNED_LONG_LONG, &covered);
  CheckScalarOps<float>(MPI_FLOAT, &covered);
  CheckScalarOps<double>(MPI_DOUBLE, &covered);
  CheckScalarOps<long double>(MPI_LONG_DOUBLE, &covered);
  CheckScalarOps<bool>(MPI_C_BOOL, &covered);
  CheckScalarOps<int8_t>(MPI_INT8_T, &covered);
  CheckScalarOps<int16_t>(MPI_INT16_T, &covered);
  CheckScalarOps<int32_t>(MPI_INT32_T, &covered);
  CheckScalarOps<int64_t>(MPI_INT64_T, &covered);
  CheckScalarOps<uint8_t>(MPI_UINT8_T, &covered);
  CheckScalarOps<uint16_t>(MPI_UINT16_T, &covered);
  CheckScalarOps<uint32_t>(MPI_UINT32_T, &covered);
  CheckScalarOps<uint64_t>(MPI_UINT64_T, &covered);
  CheckScalarOps<MPI_Aint>(MPI_AINT, &covered);
  CheckScalarOps<MPI_Offset>(MPI_OFFSET, &covered);
  CheckScalarOps<MPI_Count>(MPI_COUNT, &covered);
  CheckScalarOps<std::complex<float>>(MPI_C_FLOAT_COMPLEX, &covered);
  CheckScalarOps<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, &covered);
  CheckScalarOps<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX,
                                            &covered);
  CheckPairOps<float>(MPI_FLOAT_INT, &covered);
  CheckPairOps<double>(MPI_DOUBLE_INT, &covered);
  CheckPairOps<long>(MPI_LONG_INT, &covered);
  CheckPairOps<int>(MPI_2INT, &covered);
  CheckPairOps<short>(MPI_SHORT_INT, &covered);
  CheckPairOps<long double>(MPI_LONG_DOUBLE_INT, &covered);
  // Every valid combination ran, except REPLACE/NO_OP on the pair types
  // (next test case).
  for (MPI_Op op = MPI_MAX; op <= MPI_NO_OP; ++op) {
    for (MPI_Datatype t = 1; t <= RONDO_MPI_LAST_PREDEFINED_DATATYPE; ++t) {
      if (!StandardAllows(op, t)) continue;
      if (kPairs.count(t) && (op == MPI_REPLACE || op == MPI_NO_OP)) continue;
      INFO(OpName(op) << " on " << P(t).name());
      CHECK(covered.count({op, t}) == 1);
    }
  }
}

TEST_CASE("arithmetic edge cases: wrapping, complex, logical 0/1", "[op]") {
  int a[2] = {INT_MAX, INT_MIN};
  int b[2] = {1, -1};
  ApplyPredefined(MPI_SUM, P(MPI_INT), a, b, 2);
  CHECK(b[0] == INT_MIN);
  CHECK(b[1] == INT_MAX);
  unsigned short us_a = 65535;
  unsigned short us_b = 65535;
  ApplyPredefined(MPI_PROD, P(MPI_UNSIGNED_SHORT), &us_a, &us_b, 1);
  CHECK(us_b == 1);
  int8_t i8_a = 100;
  int8_t i8_b = 3;
  ApplyPredefined(MPI_PROD, P(MPI_INT8_T), &i8_a, &i8_b, 1);
  CHECK(i8_b == 44);  // 300 mod 256

  std::complex<double> ca(1, 2);
  std::complex<double> cb(3, -1);
  ApplyPredefined(MPI_PROD, P(MPI_C_DOUBLE_COMPLEX), &ca, &cb, 1);
  CHECK(cb == std::complex<double>(5, 5));

  long l_a[3] = {5, 0, -7};
  long l_b[3] = {-3, 9, 0};
  ApplyPredefined(MPI_LAND, P(MPI_LONG), l_a, l_b, 3);
  CHECK(l_b[0] == 1);
  CHECK(l_b[1] == 0);
  CHECK(l_b[2] == 0);
}

TEST_CASE("MAXLOC and MINLOC keep the lower index on ties", "[op]") {
  struct TwoInt {
    int value;
    int index;
  };
  TwoInt in[4] = {{5, 7}, {5, 2}, {6, 9}, {4, 9}};
  TwoInt io[4] = {{5, 3}, {5, 3}, {6, 1}, {6, 1}};
  ApplyPredefined(MPI_MAXLOC, P(MPI_2INT), in, io, 4);
  CHECK((io[0].value == 5 && io[0].index == 3));
  CHECK((io[1].value == 5 && io[1].index == 2));
  CHECK((io[2].value == 6 && io[2].index == 1));
  CHECK((io[3].value == 6 && io[3].index == 1));
  TwoInt mi[2] = {{5, 8}, {4, 9}};
  TwoInt mo[2] = {{5, 3}, {6, 1}};
  ApplyPredefined(MPI_MINLOC, P(MPI_2INT), mi, mo, 2);
  CHECK((mo[0].value == 5 && mo[0].index == 3));
  CHECK((mo[1].value == 4 && mo[1].index == 9));

  // REPLACE and NO_OP on a pair type with a hole: the hole stays.
  struct ShortInt {
    short value;
    int index;
  };
  ShortInt src[2];
  ShortInt dst[2];
  std::memset(src, 0x11, sizeof(src));
  std::memset(dst, 0x22, sizeof(dst));
  src[0] = {1, 2};
  src[1] = {3, 4};
  ApplyPredefined(MPI_NO_OP, P(MPI_SHORT_INT), src, dst, 2);
  CHECK(dst[1].index == 0x22222222);
  ApplyPredefined(MPI_REPLACE, P(MPI_SHORT_INT), src, dst, 2);
  CHECK((dst[0].value == 1 && dst[0].index == 2));
  CHECK((dst[1].value == 3 && dst[1].index == 4));
  const unsigned char* raw = reinterpret_cast<const unsigned char*>(dst);
  CHECK(raw[2] == 0x22);  // the hole between short and int
  CHECK(raw[3] == 0x22);
}

// ---- The three char types, as Open MPI 4.1.4 and MPICH 4.0.2 reduce them ----

// Six pairs (in, inout) that exercise wrap-around (100 + 100, 16 * 16), a
// negative signed value (0xfd is -3), zero for the logical ops, bit
// patterns, and the signed extremes (0x80 is -128 or 128).
constexpr unsigned char kCharIn[6] = {100, 0xfd, 0, 0x0f, 16, 0x80};
constexpr unsigned char kCharInout[6] = {100, 5, 7, 0x3c, 16, 0x7f};

struct CharCase {
  MPI_Op op;
  int as_signed[6];    // the result read as signed char
  int as_unsigned[6];  // the result read as unsigned char
};

// The results Open MPI 4.1.4 printed for these values (MPI_Allreduce and
// MPI_Reduce_local, 2 ranks, x86-64), the same for MPI_CHAR and
// MPI_SIGNED_CHAR. MPICH 4.0.2 agrees except MAX/MIN on MPI_UNSIGNED_CHAR,
// which it compares as signed (pmodels/mpich#6083, a bug fixed later).
constexpr CharCase kCharCases[] = {
    {MPI_MAX, {100, 5, 7, 60, 16, 127}, {100, 253, 7, 60, 16, 128}},
    {MPI_MIN, {100, -3, 0, 15, 16, -128}, {100, 5, 0, 15, 16, 127}},
    {MPI_SUM, {-56, 2, 7, 75, 32, -1}, {200, 2, 7, 75, 32, 255}},
    {MPI_PROD, {16, -15, 0, -124, 0, -128}, {16, 241, 0, 132, 0, 128}},
    {MPI_LAND, {1, 1, 0, 1, 1, 1}, {1, 1, 0, 1, 1, 1}},
    {MPI_LOR, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}},
    {MPI_LXOR, {0, 0, 1, 0, 0, 0}, {0, 0, 1, 0, 0, 0}},
    {MPI_BAND, {100, 5, 0, 12, 16, 0}, {100, 5, 0, 12, 16, 0}},
    {MPI_BOR, {100, -3, 7, 63, 16, -1}, {100, 253, 7, 63, 16, 255}},
    {MPI_BXOR, {0, -8, 7, 51, 0, -1}, {0, 248, 7, 51, 0, 255}},
};

// `reps` copies of the six pairs back to back: past 64 bytes the kernel
// runs its vectorisable chunks, below it the scalar tail only.
void CheckCharType(MPI_Datatype h, bool is_signed, int reps) {
  INFO(P(h).name() << ", " << 6 * reps << " elements");
  for (const CharCase& c : kCharCases) {
    INFO(OpName(c.op));
    std::string error;
    REQUIRE(CheckOp(c.op, P(h), &error) == MPI_SUCCESS);
    CHECK(error.empty());
    std::vector<unsigned char> in(6 * reps);
    std::vector<unsigned char> io(6 * reps);
    for (int i = 0; i < 6 * reps; ++i) {
      in[i] = kCharIn[i % 6];
      io[i] = kCharInout[i % 6];
    }
    std::vector<unsigned char> packed_io = io;
    ApplyPredefined(c.op, P(h), in.data(), io.data(), 6 * reps);
    ApplyPredefinedPacked(c.op, h, in.data(), packed_io.data(), 6 * reps);
    CHECK(packed_io == io);
    for (int i = 0; i < 6 * reps; ++i) {
      INFO("element " << i);
      if (is_signed) {
        CHECK(static_cast<signed char>(io[i]) == c.as_signed[i % 6]);
      } else {
        CHECK(io[i] == c.as_unsigned[i % 6]);
      }
    }
  }
}

TEST_CASE("MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR reduce as Open MPI",
          "[op]") {
  for (int reps : {1, 3, 40}) {
    CheckCharType(MPI_SIGNED_CHAR, true, reps);
    CheckCharType(MPI_UNSIGNED_CHAR, false, reps);
    // MPI_CHAR is the platform's char: signed on x86-64, unsigned on
    // AArch64 and POWER.
    CheckCharType(MPI_CHAR, std::is_signed_v<char>, reps);
  }
  for (MPI_Datatype h : {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR}) {
    for (MPI_Op op : {MPI_MAXLOC, MPI_MINLOC}) {
      INFO(OpName(op) << " on " << P(h).name());
      std::string error;
      CHECK(CheckOp(op, P(h), &error) == MPI_ERR_OP);
      CHECK(error.find(OpName(op)) != std::string::npos);
      CHECK(error.find(P(h).name()) != std::string::npos);
    }
  }

  // A derived type of MPI_CHAR (every other char of 8): SUM wraps in the
  // data, the gaps stay.
  auto vec = Ok(Vector(4, 1, 2, P(MPI_CHAR)));
  REQUIRE(vec->uniform_basic() == MPI_CHAR);
  REQUIRE(CheckOp(MPI_SUM, *vec, nullptr) == MPI_SUCCESS);
  char in[14];
  char io[14];
  std::memset(in, 120, sizeof(in));
  std::memset(io, 10, sizeof(io));
  ApplyPredefined(MPI_SUM, *vec, in, io, 2);  // items at 0 and 7 (extent 7)
  for (int i = 0; i < 14; ++i) {
    INFO("char " << i);
    const bool data = (i < 7 ? i : i - 7) % 2 == 0;
    CHECK(static_cast<unsigned char>(io[i]) == (data ? 130 : 10));
  }
}

// ---- Derived types with predefined ops ----

TEST_CASE("derived types reduce element by element", "[op]") {
  // Contiguous(3, MPI_INT) with MPI_SUM over 4 items.
  auto triple = Ok(Contiguous(3, P(MPI_INT)));
  CHECK(CheckOp(MPI_SUM, *triple, nullptr) == MPI_SUCCESS);
  std::vector<int> in(12);
  std::vector<int> io(12);
  for (int i = 0; i < 12; ++i) {
    in[i] = i;
    io[i] = 100 * i;
  }
  ApplyPredefined(MPI_SUM, *triple, in.data(), io.data(), 4);
  for (int i = 0; i < 12; ++i) CHECK(io[i] == 101 * i);

  // A vector of doubles with MAX: the gaps are not touched.
  auto vec = Ok(Vector(3, 1, 2, P(MPI_DOUBLE)));  // doubles 0, 2, 4; ext 40
  REQUIRE(vec->extent() == 40);
  std::vector<double> vin(10);
  std::vector<double> vio(10, -1.0);
  for (int i = 0; i < 10; ++i) {
    vin[i] = i % 3 == 0 ? 50.0 + i : -50.0;
  }
  ApplyPredefined(MPI_MAX, *vec, vin.data(), vio.data(), 2);
  for (int i = 0; i < 10; ++i) {
    INFO("double " << i);
    // Item 0 covers doubles 0, 2, 4; item 1 (at 40 bytes) 5, 7, 9.
    const bool data = i == 0 || i == 2 || i == 4 || i == 5 || i == 7 || i == 9;
    CHECK(vio[i] == (data ? std::max(vin[i], -1.0) : -1.0));
  }

  // Unaligned doubles at bytes 1 and 13 (hindexed), MPI_SUM.
  const int bl[] = {1, 1};
  const MPI_Aint disp[] = {1, 13};
  auto odd = Ok(Hindexed(2, bl, disp, P(MPI_DOUBLE)));
  unsigned char uin[2 * 24] = {};
  unsigned char uio[2 * 24] = {};
  for (int item = 0; item < 2; ++item) {
    for (MPI_Aint d : disp) {
      const double x = 1.5 + item + static_cast<double>(d);
      const double y = 10.0 * (item + 1);
      std::memcpy(uin + item * 24 + d, &x, sizeof(x));
      std::memcpy(uio + item * 24 + d, &y, sizeof(y));
    }
  }
  ApplyPredefined(MPI_SUM, *odd, uin, uio, 2);
  for (int item = 0; item < 2; ++item) {
    for (MPI_Aint d : disp) {
      double got;
      std::memcpy(&got, uio + item * 24 + d, sizeof(got));
      CHECK(got == 1.5 + item + static_cast<double>(d) + 10.0 * (item + 1));
    }
  }
  CHECK(uio[0] == 0);   // before the first double
  CHECK(uio[9] == 0);   // between the doubles
  CHECK(uio[21] == 0);  // after the second (extent 24)
}

TEST_CASE("derived pair types: MAXLOC sees whole pairs", "[op]") {
  struct TwoInt {
    int value;
    int index;
  };
  // Contiguous(2, MPI_2INT): merged into one block, walked pair by pair.
  auto two = Ok(Contiguous(2, P(MPI_2INT)));
  CHECK(two->uniform_basic() == MPI_2INT);
  CHECK(CheckOp(MPI_MAXLOC, *two, nullptr) == MPI_SUCCESS);
  TwoInt in[6] = {{1, 0}, {9, 1}, {3, 2}, {3, 3}, {7, 4}, {0, 5}};
  TwoInt io[6] = {{2, 6}, {9, 0}, {3, 9}, {1, 1}, {7, 5}, {1, 2}};
  ApplyPredefined(MPI_MAXLOC, *two, in, io, 3);
  const TwoInt want[6] = {{2, 6}, {9, 0}, {3, 2}, {3, 3}, {7, 4}, {1, 2}};
  for (int i = 0; i < 6; ++i) {
    INFO("pair " << i);
    CHECK(io[i].value == want[i].value);
    CHECK(io[i].index == want[i].index);
  }

  // A vector of MPI_SHORT_INT (two blocks per pair, hole between): pairs
  // 0, 1 and 3, 4 of each 5-pair item.
  struct ShortInt {
    short value;
    int index;
  };
  auto sv = Ok(Vector(2, 2, 3, P(MPI_SHORT_INT)));
  REQUIRE(sv->extent() == 5 * 8);
  ShortInt sin[10];
  ShortInt sio[10];
  for (int i = 0; i < 10; ++i) {
    sin[i] = {static_cast<short>(i % 3), i};
    sio[i] = {1, 20 - i};
  }
  ApplyPredefined(MPI_MINLOC, *sv, sin, sio, 2);
  for (int i = 0; i < 10; ++i) {
    INFO("pair " << i);
    const bool data = i % 5 == 0 || i % 5 == 1 || i % 5 == 3 || i % 5 == 4;
    ShortInt w = {1, 20 - i};
    if (data) {
      if (sin[i].value < 1) {
        w = sin[i];
      } else if (sin[i].value == 1) {
        w.index = std::min(sin[i].index, 20 - i);
      }
    }
    CHECK(sio[i].value == w.value);
    CHECK(sio[i].index == w.index);
  }
}

TEST_CASE("mixed derived types: only REPLACE and NO_OP", "[op]") {
  // struct {int at 0; double at 8}, extent 16.
  const int bl[] = {1, 1};
  const MPI_Aint disp[] = {0, 8};
  const Datatype* types[] = {&P(MPI_INT), &P(MPI_DOUBLE)};
  auto s = Ok(Struct(2, bl, disp, types));
  std::string error;
  CHECK(CheckOp(MPI_SUM, *s, &error) == MPI_ERR_OP);
  CHECK(error.find("MPI_SUM") != std::string::npos);
  CHECK(error.find("mix") != std::string::npos);
  CHECK(CheckOp(MPI_REPLACE, *s, nullptr) == MPI_SUCCESS);
  CHECK(CheckOp(MPI_NO_OP, *s, nullptr) == MPI_SUCCESS);

  unsigned char src[32];
  unsigned char dst[32];
  std::memset(src, 0x11, sizeof(src));
  std::memset(dst, 0x22, sizeof(dst));
  ApplyPredefined(MPI_NO_OP, *s, src, dst, 2);
  CHECK(dst[0] == 0x22);
  ApplyPredefined(MPI_REPLACE, *s, src, dst, 2);
  for (int i = 0; i < 32; ++i) {
    INFO("byte " << i);
    const int r = i % 16;
    CHECK(dst[i] == (r < 4 || r >= 8 ? 0x11 : 0x22));  // hole at 4..8
  }

  // A named derived type of floats: the message names it and its elements.
  auto f = Ok(Contiguous(2, P(MPI_FLOAT)))->WithName("halo");
  CHECK(CheckOp(MPI_BAND, *f, &error) == MPI_ERR_OP);
  CHECK(error.find("'halo'") != std::string::npos);
  CHECK(error.find("MPI_FLOAT elements") != std::string::npos);
  CHECK(CheckOp(MPI_MAX, *f, nullptr) == MPI_SUCCESS);
}

// Reducing packed streams (ApplyPredefinedPacked) must give what reducing
// the user layout gives (ApplyPredefined), for scalars and for pairs whose
// packed form drops the C struct's padding.
template <typename V>
void CheckPackedMatchesInPlace(MPI_Op op, const Datatype& type,
                               MPI_Datatype basic, int64_t count) {
  INFO(OpName(op) << " on a derived type of " << P(basic).name());
  const int64_t span = type.SpanBytes(count);
  REQUIRE(type.true_lb() == 0);
  std::vector<unsigned char> in(static_cast<size_t>(span));
  std::vector<unsigned char> io(static_cast<size_t>(span));
  // Values that make ties likely, written through the type map so that
  // every element is valid.
  const int64_t n = count * type.element_count();
  const int64_t esize = P(basic).size();
  std::vector<unsigned char> packed_in(static_cast<size_t>(n * esize));
  std::vector<unsigned char> packed_io(static_cast<size_t>(n * esize));
  for (int64_t e = 0; e < n; ++e) {
    const V a = static_cast<V>(e % 3);
    const V b = static_cast<V>((e / 2) % 3);
    const int ia = static_cast<int>(e);
    const int ib = static_cast<int>(100 - e);
    std::memcpy(&packed_in[e * esize], &a, sizeof(V));
    std::memcpy(&packed_io[e * esize], &b, sizeof(V));
    if (esize > static_cast<int64_t>(sizeof(V))) {  // a pair
      std::memcpy(&packed_in[e * esize + sizeof(V)], &ia, sizeof(int));
      std::memcpy(&packed_io[e * esize + sizeof(V)], &ib, sizeof(int));
    }
  }
  type.Unpack(packed_in.data(), n * esize, in.data(), count);
  type.Unpack(packed_io.data(), n * esize, io.data(), count);

  ApplyPredefined(op, type, in.data(), io.data(), count);
  ApplyPredefinedPacked(op, basic, packed_in.data(), packed_io.data(), n);
  std::vector<unsigned char> repacked(packed_io.size());
  type.Pack(io.data(), count, repacked.data());
  CHECK(repacked == packed_io);
}

TEST_CASE("packed reductions equal reductions in the user layout", "[op]") {
  auto dv = Ok(Vector(3, 2, 3, P(MPI_DOUBLE)));
  CheckPackedMatchesInPlace<double>(MPI_SUM, *dv, MPI_DOUBLE, 4);
  CheckPackedMatchesInPlace<double>(MPI_MIN, *dv, MPI_DOUBLE, 4);
  auto di = Ok(Vector(2, 2, 3, P(MPI_DOUBLE_INT)));
  CheckPackedMatchesInPlace<double>(MPI_MAXLOC, *di, MPI_DOUBLE_INT, 3);
  CheckPackedMatchesInPlace<double>(MPI_MINLOC, *di, MPI_DOUBLE_INT, 3);
  auto si = Ok(Contiguous(5, P(MPI_SHORT_INT)));
  CheckPackedMatchesInPlace<short>(MPI_MAXLOC, *si, MPI_SHORT_INT, 2);
  CheckPackedMatchesInPlace<short>(MPI_MAXLOC, P(MPI_SHORT_INT), MPI_SHORT_INT,
                                   7);
  auto ld = Ok(Contiguous(2, P(MPI_LONG_DOUBLE_INT)));
  CheckPackedMatchesInPlace<long double>(MPI_MINLOC, *ld, MPI_LONG_DOUBLE_INT,
                                         3);

  // Packed MPI_DOUBLE_INT is 12 bytes a pair: {value, index} back to back.
  unsigned char a[24];
  unsigned char b[24];
  const double va[2] = {1.0, 7.0};
  const double vb[2] = {2.0, 7.0};
  const int ia[2] = {5, 1};
  const int ib[2] = {6, 9};
  for (int i = 0; i < 2; ++i) {
    std::memcpy(a + 12 * i, &va[i], 8);
    std::memcpy(a + 12 * i + 8, &ia[i], 4);
    std::memcpy(b + 12 * i, &vb[i], 8);
    std::memcpy(b + 12 * i + 8, &ib[i], 4);
  }
  ApplyPredefinedPacked(MPI_MAXLOC, MPI_DOUBLE_INT, a, b, 2);
  double v;
  int idx;
  std::memcpy(&v, b, 8);
  std::memcpy(&idx, b + 8, 4);
  CHECK((v == 2.0 && idx == 6));
  std::memcpy(&v, b + 12, 8);
  std::memcpy(&idx, b + 20, 4);
  CHECK((v == 7.0 && idx == 1));

  int x[3] = {1, 2, 3};
  int y[3] = {0, 0, 0};
  ApplyPredefinedPacked(MPI_REPLACE, MPI_INT, x, y, 3);
  CHECK((y[0] == 1 && y[1] == 2 && y[2] == 3));
  ApplyPredefinedPacked(MPI_PROD, MPI_INT, x, y, 3);
  CHECK((y[0] == 1 && y[1] == 4 && y[2] == 9));
}

// ---- User ops ----

// A record type: a 2x2 int matrix, then the len and datatype the user
// function saw (written by the function itself, so no global state).
constexpr int kRecordInts = 6;

void MatrixProduct(void* invec, void* inoutvec, int* len,
                   MPI_Datatype* datatype) {
  const int* a = static_cast<const int*>(invec);
  int* b = static_cast<int*>(inoutvec);
  for (int k = 0; k < *len; ++k, a += kRecordInts, b += kRecordInts) {
    const int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                      a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::memcpy(b, c, sizeof(c));
    b[4] = *len;
    b[5] = *datatype;
  }
}

TEST_CASE("a non-commutative user op sees in op inout, len and datatype",
          "[op]") {
  auto record = Ok(Contiguous(kRecordInts, P(MPI_INT)));
  const Op op{&MatrixProduct, /*commutative=*/false, /*predefined=*/false,
              /*handle=*/42};
  constexpr MPI_Datatype kUserHandle = 77;
  // A = [[1, 2], [3, 4]], B = [[0, 1], [1, 0]]: A.B = [[2, 1], [4, 3]],
  // B.A = [[3, 4], [1, 2]].
  std::vector<int> in = {1, 2, 3, 4, 0, 0, 2, 0, 0, 2, 0, 0, 1, 1, 0, 1, 0, 0};
  std::vector<int> io = {0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0};
  const std::vector<int> in_before = in;
  Apply(op, kUserHandle, *record, in.data(), io.data(), 3);
  const std::vector<int> want = {
      2, 1, 4, 3, 3, kUserHandle,   // A.B
      2, 0, 0, 2, 3, kUserHandle,   // 2I.I
      1, 1, 1, 0, 3, kUserHandle};  // [[1,1],[0,1]].B
  CHECK(io == want);
  CHECK(in == in_before);

  // count 0: the function is not called.
  std::vector<int> untouched(kRecordInts, -1);
  Apply(op, kUserHandle, *record, in.data(), untouched.data(), 0);
  CHECK(untouched == std::vector<int>(kRecordInts, -1));

  // A predefined Op record goes through ApplyPredefined.
  int x[2] = {1, 2};
  int y[2] = {10, 20};
  Apply(PredefinedOp(MPI_SUM), MPI_INT, P(MPI_INT), x, y, 2);
  CHECK((y[0] == 11 && y[1] == 22));
}

}  // namespace
}  // namespace rondo::nmad::mpi
