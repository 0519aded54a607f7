// Tests of nmad/mpi datatypes: the predefined table against the C types of
// x86_64 gcc, the bounds of every constructor worked out by hand from the
// MPI-3.1 rules (§4.1.6-4.1.7: lb = lowest displacement, ub = highest data
// end rounded up to the largest alignment, sticky bounds after
// MPI_Type_create_resized), envelopes, errors, and pack/unpack against a
// hand-written type map: whole, segmented, truncated, count 0.
#include "nmad/mpi/datatype.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

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
  REQUIRE(r.type != nullptr);
  return r.type;
}

struct Bounds {
  int64_t size, lb, extent, true_lb, true_extent;
};

void CheckBounds(const Datatype& t, Bounds b) {
  CHECK(t.size() == b.size);
  CHECK(t.lb() == b.lb);
  CHECK(t.extent() == b.extent);
  CHECK(t.ub() == b.lb + b.extent);
  CHECK(t.true_lb() == b.true_lb);
  CHECK(t.true_extent() == b.true_extent);
  CHECK(t.true_ub() == b.true_lb + b.true_extent);
}

// One contiguous piece of an item's type map: `bytes` bytes at `offset`.
struct Piece {
  int64_t offset;
  int64_t bytes;
};

// Checks Pack/Unpack/PackRange/UnpackRange of `count` items of `type`
// against `map`, the type map of one item written out by hand (pieces in
// type-map order, i.e. packed order). The user buffer has guard bytes on
// both sides; every byte the type map does not name must stay untouched.
void CheckRoundTrip(const Datatype& type, const std::vector<Piece>& map,
                    int64_t count) {
  int64_t size = 0;
  for (const Piece& p : map) size += p.bytes;
  REQUIRE(type.size() == size);
  const int64_t span = type.SpanBytes(count);
  const int64_t lo = std::min<int64_t>(0, type.true_lb());
  const int64_t hi = std::max<int64_t>(0, type.true_lb() + span);
  const int64_t guard = 16;
  const int64_t mem_bytes = hi - lo + 2 * guard;
  const int64_t origin = guard - lo;  // index of buf in the vectors

  // Stream byte k lives at mem index where[k].
  std::vector<int64_t> where;
  for (int64_t i = 0; i < count; ++i) {
    for (const Piece& p : map) {
      for (int64_t b = 0; b < p.bytes; ++b) {
        where.push_back(origin + i * type.extent() + p.offset + b);
      }
    }
  }
  const int64_t total = count * size;
  REQUIRE(static_cast<int64_t>(where.size()) == total);
  for (int64_t w : where) {
    REQUIRE(w >= guard);
    REQUIRE(w < mem_bytes - guard);
  }

  std::vector<unsigned char> src(static_cast<size_t>(mem_bytes));
  for (size_t i = 0; i < src.size(); ++i) {
    src[i] = static_cast<unsigned char>(i * 7 + 3);
  }
  std::vector<unsigned char> expected(static_cast<size_t>(total));
  for (int64_t k = 0; k < total; ++k) expected[k] = src[where[k]];

  // Pack, with a guard after the stream.
  std::vector<unsigned char> packed(static_cast<size_t>(total + guard), 0xAB);
  type.Pack(src.data() + origin, count, packed.data());
  CHECK(std::vector<unsigned char>(packed.begin(), packed.begin() + total) ==
        expected);
  for (int64_t k = total; k < total + guard; ++k) CHECK(packed[k] == 0xAB);

  // Segmented packing gives the same stream.
  for (int64_t seg : {1, 5, 7, 64}) {
    std::vector<unsigned char> pieces(static_cast<size_t>(total), 0);
    for (int64_t first = 0; first < total; first += seg) {
      type.PackRange(src.data() + origin, first, std::min(seg, total - first),
                     pieces.data() + first);
    }
    CHECK(pieces == expected);
  }

  // Unpack of the first `bytes` bytes: those land where the map says,
  // nothing else is written.
  auto check_unpacked = [&](const std::vector<unsigned char>& dst,
                            int64_t bytes) {
    std::vector<unsigned char> want(static_cast<size_t>(mem_bytes), 0xEE);
    for (int64_t k = 0; k < bytes; ++k) want[where[k]] = expected[k];
    CHECK(dst == want);
  };
  std::vector<int64_t> lengths = {total, total / 2, total / 2 + 1, 1, 0};
  if (size > 1) lengths.push_back(total - 1);
  for (int64_t bytes : lengths) {
    if (bytes < 0 || bytes > total) continue;
    INFO("unpacking " << bytes << " of " << total << " bytes");
    std::vector<unsigned char> dst(static_cast<size_t>(mem_bytes), 0xEE);
    type.Unpack(expected.data(), bytes, dst.data() + origin, count);
    check_unpacked(dst, bytes);
  }
  for (int64_t seg : {1, 3, 5, 64}) {
    std::vector<unsigned char> dst(static_cast<size_t>(mem_bytes), 0xEE);
    for (int64_t first = 0; first < total; first += seg) {
      type.UnpackRange(expected.data() + first, first,
                       std::min(seg, total - first), dst.data() + origin);
    }
    check_unpacked(dst, total);
  }
}

// ---- The predefined table ----

struct PredefinedRow {
  MPI_Datatype handle;
  const char* name;
  int64_t size;
  int64_t extent;
  int64_t true_extent;
  int64_t alignment;
  bool contiguous;
};

// x86_64 gcc: long double is 16 bytes aligned to 16; the pair types are
// the C structs {V value; int index;} (MPI-3.1 §5.9.4).
const PredefinedRow kRows[] = {
    {MPI_CHAR, "MPI_CHAR", 1, 1, 1, 1, true},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, 1, 1, true},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, 1, 1, true},
    {MPI_BYTE, "MPI_BYTE", 1, 1, 1, 1, true},
    {MPI_SHORT, "MPI_SHORT", 2, 2, 2, 2, true},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, 2, 2, 2, true},
    {MPI_INT, "MPI_INT", 4, 4, 4, 4, true},
    {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4, 4, 4, true},
    {MPI_LONG, "MPI_LONG", 8, 8, 8, 8, true},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, 8, 8, 8, true},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8, 8, 8, 8, true},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8, 8, 8, true},
    {MPI_FLOAT, "MPI_FLOAT", 4, 4, 4, 4, true},
    {MPI_DOUBLE, "MPI_DOUBLE", 8, 8, 8, 8, true},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16, 16, 16, 16, true},
    {MPI_WCHAR, "MPI_WCHAR", 4, 4, 4, 4, true},
    {MPI_C_BOOL, "MPI_C_BOOL", 1, 1, 1, 1, true},
    {MPI_INT8_T, "MPI_INT8_T", 1, 1, 1, 1, true},
    {MPI_INT16_T, "MPI_INT16_T", 2, 2, 2, 2, true},
    {MPI_INT32_T, "MPI_INT32_T", 4, 4, 4, 4, true},
    {MPI_INT64_T, "MPI_INT64_T", 8, 8, 8, 8, true},
    {MPI_UINT8_T, "MPI_UINT8_T", 1, 1, 1, 1, true},
    {MPI_UINT16_T, "MPI_UINT16_T", 2, 2, 2, 2, true},
    {MPI_UINT32_T, "MPI_UINT32_T", 4, 4, 4, 4, true},
    {MPI_UINT64_T, "MPI_UINT64_T", 8, 8, 8, 8, true},
    {MPI_AINT, "MPI_AINT", 8, 8, 8, 8, true},
    {MPI_OFFSET, "MPI_OFFSET", 8, 8, 8, 8, true},
    {MPI_COUNT, "MPI_COUNT", 8, 8, 8, 8, true},
    {MPI_PACKED, "MPI_PACKED", 1, 1, 1, 1, true},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 8, 8, 4, true},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 16, 16, 8, true},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 32, 32, 16,
     true},
    // {float; int}: no padding.
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, 8, 8, 4, true},
    // {double; int}: 12 bytes of data, 4 of tail padding.
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 16, 12, 8, false},
    {MPI_LONG_INT, "MPI_LONG_INT", 12, 16, 12, 8, false},
    {MPI_2INT, "MPI_2INT", 8, 8, 8, 4, true},
    // {short; int}: the int at offset 4, a 2-byte hole.
    {MPI_SHORT_INT, "MPI_SHORT_INT", 6, 8, 8, 4, false},
    // {long double; int}: 20 bytes of data, extent 32.
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 20, 32, 20, 16, false},
};

TEST_CASE("every predefined datatype has the x86_64 gcc layout", "[datatype]") {
  static_assert(sizeof(long double) == 16 && alignof(long double) == 16);
  struct LongDoubleInt {
    long double v;
    int i;
  };
  static_assert(sizeof(LongDoubleInt) == 32);
  struct ShortInt {
    short v;
    int i;
  };
  static_assert(sizeof(ShortInt) == 8 && offsetof(ShortInt, i) == 4);

  REQUIRE(std::size(kRows) == RONDO_MPI_LAST_PREDEFINED_DATATYPE);
  for (const PredefinedRow& row : kRows) {
    INFO(row.name);
    const Datatype& t = P(row.handle);
    CHECK(t.name() == row.name);
    CHECK(t.is_predefined());
    CHECK(t.handle() == row.handle);
    CheckBounds(t, {row.size, 0, row.extent, 0, row.true_extent});
    CHECK(t.alignment() == row.alignment);
    CHECK(t.is_contiguous() == row.contiguous);
    CHECK_FALSE(t.explicit_bounds());
    CHECK(t.uniform_basic() == row.handle);
    CHECK(t.element_count() == 1);
    CHECK(t.combiner() == MPI_COMBINER_NAMED);
    CHECK(t.num_integers() == 0);
    CHECK(t.num_addresses() == 0);
    CHECK(t.num_datatypes() == 0);
    for (const TypeBlock& b : t.blocks()) CHECK(b.basic == row.handle);
    // The table is built once: the same object every time.
    CHECK(Predefined(row.handle) == &t);
  }
  CHECK(P(MPI_LONG_LONG).name() == "MPI_LONG_LONG_INT");
  CHECK(P(MPI_SHORT_INT).blocks() ==
        std::vector<TypeBlock>{{0, 2, MPI_SHORT_INT}, {4, 4, MPI_SHORT_INT}});
  CHECK(P(MPI_DOUBLE_INT).blocks() ==
        std::vector<TypeBlock>{{0, 12, MPI_DOUBLE_INT}});
  CHECK(Predefined(MPI_DATATYPE_NULL) == nullptr);
  CHECK(Predefined(RONDO_MPI_LAST_PREDEFINED_DATATYPE + 1) == nullptr);
  CHECK(Predefined(-1) == nullptr);
  // Shared ownership works on predefined types too.
  std::shared_ptr<const Datatype> shared = P(MPI_INT).shared_from_this();
  CHECK(shared.get() == Predefined(MPI_INT));
}

TEST_CASE("predefined pair types pack without their holes", "[datatype]") {
  CheckRoundTrip(P(MPI_SHORT_INT), {{0, 2}, {4, 4}}, 3);
  CheckRoundTrip(P(MPI_DOUBLE_INT), {{0, 12}}, 3);
  CheckRoundTrip(P(MPI_LONG_DOUBLE_INT), {{0, 20}}, 2);
  CheckRoundTrip(P(MPI_DOUBLE), {{0, 8}}, 5);
}

// ---- Constructors: bounds, blocks, envelopes ----

TEST_CASE("contiguous types are one block and pack as one run", "[datatype]") {
  auto t = Ok(Contiguous(1000, P(MPI_INT)));
  CheckBounds(*t, {4000, 0, 4000, 0, 4000});
  CHECK(t->blocks() == std::vector<TypeBlock>{{0, 4000, MPI_INT}});
  CHECK(t->is_contiguous());
  CHECK(t->uniform_basic() == MPI_INT);
  CHECK(t->element_count() == 1000);
  CHECK(t->combiner() == MPI_COMBINER_CONTIGUOUS);
  CHECK(t->integers() == std::vector<int>{1000});
  CHECK(t->num_addresses() == 0);
  REQUIRE(t->num_datatypes() == 1);
  CHECK(t->datatypes()[0].get() == Predefined(MPI_INT));
  CHECK_FALSE(t->is_predefined());
  CHECK(t->handle() == MPI_DATATYPE_NULL);
  CHECK(t->name().empty());
  CheckRoundTrip(*t, {{0, 4000}}, 3);

  // Nesting keeps one block; so does a vector whose stride is its block.
  auto nested = Ok(Contiguous(4, *Ok(Contiguous(250, P(MPI_INT)))));
  CHECK(nested->blocks() == std::vector<TypeBlock>{{0, 4000, MPI_INT}});
  auto dense = Ok(Vector(4, 2, 2, P(MPI_DOUBLE)));
  CHECK(dense->blocks() == std::vector<TypeBlock>{{0, 64, MPI_DOUBLE}});
  CHECK(dense->is_contiguous());

  // A struct {int; float} without holes: two blocks (two basic types), but
  // contiguous data, packed as one run.
  const int bl[] = {1, 1};
  const MPI_Aint disp[] = {0, 4};
  const Datatype* types[] = {&P(MPI_INT), &P(MPI_FLOAT)};
  auto mixed = Ok(Struct(2, bl, disp, types));
  CHECK(mixed->blocks().size() == 2);
  CHECK(mixed->is_contiguous());
  CHECK(mixed->uniform_basic() == MPI_DATATYPE_NULL);
  CheckRoundTrip(*mixed, {{0, 8}}, 4);
}

TEST_CASE("vector bounds, including negative strides", "[datatype]") {
  // 3 blocks of 2 doubles, stride 4 doubles: data at 0, 32, 64 (16 bytes
  // each); ub = 64 + 16 = 80, already a multiple of 8.
  auto t = Ok(Vector(3, 2, 4, P(MPI_DOUBLE)));
  CheckBounds(*t, {48, 0, 80, 0, 80});
  CHECK(t->blocks() == std::vector<TypeBlock>{{0, 16, MPI_DOUBLE},
                                              {32, 16, MPI_DOUBLE},
                                              {64, 16, MPI_DOUBLE}});
  CHECK_FALSE(t->is_contiguous());
  CHECK(t->element_count() == 6);
  CHECK(t->integers() == std::vector<int>{3, 2, 4});
  CHECK(t->combiner() == MPI_COMBINER_VECTOR);
  CHECK(t->SpanBytes(0) == 0);
  CHECK(t->SpanBytes(1) == 80);
  CHECK(t->SpanBytes(2) == 160);
  CheckRoundTrip(*t, {{0, 16}, {32, 16}, {64, 16}}, 3);

  // Stride -2 ints: the second block lies before the first; lb = -8,
  // ub = 4, and the packed order stays the type-map order.
  auto back = Ok(Vector(2, 1, -2, P(MPI_INT)));
  CheckBounds(*back, {8, -8, 12, -8, 12});
  CHECK(back->blocks() ==
        std::vector<TypeBlock>{{0, 4, MPI_INT}, {-8, 4, MPI_INT}});
  CheckRoundTrip(*back, {{0, 4}, {-8, 4}}, 3);
}

TEST_CASE("hvector pads the extent to the alignment", "[datatype]") {
  // Doubles at 0 and 12: data ends at 20; the extent 20 is rounded up to a
  // multiple of alignof(double) = 8, so 24 (MPI-3.1 §4.1.6, epsilon).
  auto t = Ok(Hvector(2, 1, 12, P(MPI_DOUBLE)));
  CheckBounds(*t, {16, 0, 24, 0, 20});
  CHECK(t->combiner() == MPI_COMBINER_HVECTOR);
  CHECK(t->integers() == std::vector<int>{2, 1});
  CHECK(t->addresses() == std::vector<MPI_Aint>{12});
  CheckRoundTrip(*t, {{0, 8}, {12, 8}}, 3);
  // Chars need no padding.
  auto c = Ok(Hvector(3, 2, 5, P(MPI_CHAR)));
  CheckBounds(*c, {6, 0, 12, 0, 12});
  CheckRoundTrip(*c, {{0, 2}, {5, 2}, {10, 2}}, 2);
}

TEST_CASE("indexed, hindexed and indexed_block", "[datatype]") {
  const int bl[] = {2, 1, 3};
  const int disp[] = {5, 0, 10};
  // ints at 20..28, 0..4, 40..52: lb 0, ub 52.
  auto t = Ok(Indexed(3, bl, disp, P(MPI_INT)));
  CheckBounds(*t, {24, 0, 52, 0, 52});
  CHECK(t->blocks() == std::vector<TypeBlock>{{20, 8, MPI_INT},
                                              {0, 4, MPI_INT},
                                              {40, 12, MPI_INT}});
  CHECK(t->element_count() == 6);
  CHECK(t->combiner() == MPI_COMBINER_INDEXED);
  CHECK(t->integers() == std::vector<int>{3, 2, 1, 3, 5, 0, 10});
  CheckRoundTrip(*t, {{20, 8}, {0, 4}, {40, 12}}, 2);

  // Byte displacements, the lowest first-block not at 0: lb = 6.
  const int hbl[] = {1, 2};
  const MPI_Aint hdisp[] = {6, 16};
  auto h = Ok(Hindexed(2, hbl, hdisp, P(MPI_SHORT)));
  CheckBounds(*h, {6, 6, 14, 6, 14});
  CHECK(h->combiner() == MPI_COMBINER_HINDEXED);
  CHECK(h->integers() == std::vector<int>{2, 1, 2});
  CHECK(h->addresses() == std::vector<MPI_Aint>{6, 16});
  CheckRoundTrip(*h, {{6, 2}, {16, 4}}, 3);

  // Unaligned doubles at bytes 1 and 13: true extent 20, extent 24.
  const int ubl[] = {1, 1};
  const MPI_Aint udisp[] = {1, 13};
  auto u = Ok(Hindexed(2, ubl, udisp, P(MPI_DOUBLE)));
  CheckBounds(*u, {16, 1, 24, 1, 20});
  CheckRoundTrip(*u, {{1, 8}, {13, 8}}, 3);

  const int bdisp[] = {3, 0};
  auto b = Ok(IndexedBlock(2, 2, bdisp, P(MPI_FLOAT)));
  CheckBounds(*b, {16, 0, 20, 0, 20});
  CHECK(b->combiner() == MPI_COMBINER_INDEXED_BLOCK);
  CHECK(b->integers() == std::vector<int>{2, 2, 3, 0});
  CheckRoundTrip(*b, {{12, 8}, {0, 8}}, 2);
}

TEST_CASE("hindexed_block: byte displacements, one block length",
          "[datatype]") {
  const MPI_Aint disp[] = {16, 0};
  auto t = Ok(HindexedBlock(2, 2, disp, P(MPI_SHORT)));
  CheckBounds(*t, {8, 0, 20, 0, 20});
  CHECK(t->blocks() ==
        std::vector<TypeBlock>{{16, 4, MPI_SHORT}, {0, 4, MPI_SHORT}});
  CHECK(t->combiner() == MPI_COMBINER_HINDEXED_BLOCK);
  CHECK(t->integers() == std::vector<int>{2, 2});
  CHECK(t->addresses() == std::vector<MPI_Aint>{16, 0});
  REQUIRE(t->datatypes().size() == 1);
  CHECK(t->datatypes()[0]->handle() == MPI_SHORT);
  CheckRoundTrip(*t, {{16, 4}, {0, 4}}, 3);
  // Blocks of a derived type: each is its whole type map.
  const int vdisp[] = {0};
  auto pair = Ok(IndexedBlock(1, 1, vdisp, P(MPI_2INT)));
  const MPI_Aint pdisp[] = {0, 24};
  auto p = Ok(HindexedBlock(2, 1, pdisp, *pair));
  CheckBounds(*p, {16, 0, 32, 0, 32});
  CheckRoundTrip(*p, {{0, 8}, {24, 8}}, 2);
  auto empty = Ok(HindexedBlock(0, 3, nullptr, P(MPI_INT)));
  CheckBounds(*empty, {0, 0, 0, 0, 0});
}

TEST_CASE("subarray in C and Fortran order", "[datatype]") {
  const int sizes[] = {4, 5};
  const int subsizes[] = {2, 3};
  const int starts[] = {1, 1};
  // C: rows of 5 ints; rows 1..2, columns 1..3. The extent is the whole
  // 4 x 5 array (lb 0), as Open MPI and MPICH give it.
  auto c = Ok(Subarray(2, sizes, subsizes, starts, MPI_ORDER_C, P(MPI_INT)));
  CheckBounds(*c, {24, 0, 80, 24, 32});
  CHECK(c->explicit_bounds());
  CHECK(c->blocks() ==
        std::vector<TypeBlock>{{24, 12, MPI_INT}, {44, 12, MPI_INT}});
  CHECK(c->combiner() == MPI_COMBINER_SUBARRAY);
  CHECK(c->integers() ==
        std::vector<int>{2, 4, 5, 2, 3, 1, 1, MPI_ORDER_C});
  CHECK(c->num_addresses() == 0);
  REQUIRE(c->datatypes().size() == 1);
  CHECK(c->datatypes()[0]->handle() == MPI_INT);
  CheckRoundTrip(*c, {{24, 12}, {44, 12}}, 3);

  // Fortran: columns of 4 ints (the first index fastest).
  auto f = Ok(Subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN,
                       P(MPI_INT)));
  CheckBounds(*f, {24, 0, 80, 20, 40});
  CHECK(f->blocks() == std::vector<TypeBlock>{{20, 8, MPI_INT},
                                              {36, 8, MPI_INT},
                                              {52, 8, MPI_INT}});
  CHECK(f->integers().back() == MPI_ORDER_FORTRAN);
  CheckRoundTrip(*f, {{20, 8}, {36, 8}, {52, 8}}, 2);

  // Three dimensions, C order: ((a * 4 + b) * 5 + c) doubles.
  const int s3[] = {3, 4, 5};
  const int sub3[] = {2, 2, 2};
  const int st3[] = {1, 2, 3};
  auto d = Ok(Subarray(3, s3, sub3, st3, MPI_ORDER_C, P(MPI_DOUBLE)));
  CheckBounds(*d, {64, 0, 480, 264, 216});
  CheckRoundTrip(*d, {{264, 16}, {304, 16}, {424, 16}, {464, 16}}, 2);

  // The whole array is one contiguous run.
  const int whole[] = {3, 4};
  const int zero[] = {0, 0};
  auto all = Ok(Subarray(2, whole, whole, zero, MPI_ORDER_C, P(MPI_INT)));
  CheckBounds(*all, {48, 0, 48, 0, 48});
  CHECK(all->is_contiguous());
}

TEST_CASE("subarray of a resized type: lb 0 and the whole array's extent",
          "[datatype]") {
  // ints in 12-byte cells whose lb is -4: the subarray's bounds are 0 and
  // 20 cells, not the old type's (Open MPI and MPICH agree: lb 0, extent
  // 240, true lb 60, true extent 112).
  auto cell = Ok(Resized(P(MPI_INT), -4, 12));
  const int sizes[] = {4, 5};
  const int subsizes[] = {2, 3};
  const int starts[] = {1, 1};
  auto f = Ok(Subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, *cell));
  CheckBounds(*f, {24, 0, 240, 60, 112});
  CheckRoundTrip(*f,
                 {{60, 4}, {72, 4}, {108, 4}, {120, 4}, {156, 4}, {168, 4}},
                 2);
  // Built on again, the bounds stay sticky.
  auto two = Ok(Contiguous(2, *f));
  CheckBounds(*two, {48, 0, 480, 60, 352});
}

TEST_CASE("struct bounds follow the alignment rule", "[datatype]") {
  // The standard's example: {double at 0, char at 8} has extent 16.
  {
    const int bl[] = {1, 1};
    const MPI_Aint disp[] = {0, 8};
    const Datatype* types[] = {&P(MPI_DOUBLE), &P(MPI_CHAR)};
    auto t = Ok(Struct(2, bl, disp, types));
    CheckBounds(*t, {9, 0, 16, 0, 9});
    CHECK(t->alignment() == 8);
    CHECK(t->uniform_basic() == MPI_DATATYPE_NULL);
    CheckRoundTrip(*t, {{0, 9}}, 3);
  }
  // With holes: 2 ints at 0, a double at 16, 3 chars at 24: data ends at
  // 27, extent rounded to 32; size 8 + 8 + 3 = 19.
  const int bl[] = {2, 1, 3};
  const MPI_Aint disp[] = {0, 16, 24};
  const Datatype* types[] = {&P(MPI_INT), &P(MPI_DOUBLE), &P(MPI_CHAR)};
  auto t = Ok(Struct(3, bl, disp, types));
  CheckBounds(*t, {19, 0, 32, 0, 27});
  CHECK(t->blocks() == std::vector<TypeBlock>{{0, 8, MPI_INT},
                                              {16, 8, MPI_DOUBLE},
                                              {24, 3, MPI_CHAR}});
  CHECK(t->element_count() == 6);
  CHECK_FALSE(t->is_contiguous());
  CHECK(t->combiner() == MPI_COMBINER_STRUCT);
  CHECK(t->integers() == std::vector<int>{3, 2, 1, 3});
  CHECK(t->addresses() == std::vector<MPI_Aint>{0, 16, 24});
  REQUIRE(t->num_datatypes() == 3);
  CHECK(t->datatypes()[1].get() == Predefined(MPI_DOUBLE));
  CheckRoundTrip(*t, {{0, 8}, {16, 11}}, 3);

  // Elements in a packed stream: 2 ints, 1 double, 3 chars per item.
  CHECK(t->CountElements(0) == 0);
  CHECK(t->CountElements(8) == 2);
  CHECK(t->CountElements(12) == -1);  // half a double
  CHECK(t->CountElements(16) == 3);
  CHECK(t->CountElements(19) == 6);
  CHECK(t->CountElements(19 + 8) == 8);
  // And back: the bytes of the first n elements, for every n over 3 items.
  for (int64_t n = 0; n <= 18; ++n) {
    INFO("elements " << n);
    CHECK(t->CountElements(t->ElementBytes(n)) == n);
  }
  CHECK(t->ElementBytes(2) == 8);
  CHECK(t->ElementBytes(3) == 16);
  CHECK(t->ElementBytes(7) == 19 + 4);
  CHECK(P(MPI_INT).ElementBytes(5) == 20);
  CHECK(Ok(Contiguous(3, P(MPI_SHORT_INT)))->CountElements(12) == 2);
  CHECK(P(MPI_SHORT_INT).CountElements(4) == -1);
}

TEST_CASE("a nested vector of structs", "[datatype]") {
  // struct {int at 0; double at 8}: size 12, extent 16.
  const int bl[] = {1, 1};
  const MPI_Aint disp[] = {0, 8};
  const Datatype* types[] = {&P(MPI_INT), &P(MPI_DOUBLE)};
  auto s = Ok(Struct(2, bl, disp, types));
  CheckBounds(*s, {12, 0, 16, 0, 16});
  // 3 blocks of 2 structs, stride 3 structs: structs at 0, 16, 48, 64, 96,
  // 112; the last double ends at 120.
  auto v = Ok(Vector(3, 2, 3, *s));
  CheckBounds(*v, {72, 0, 128, 0, 128});
  CHECK(v->blocks().size() == 12);  // int and double never merge
  std::vector<Piece> map;
  for (int64_t at : {0, 16, 48, 64, 96, 112}) {
    map.push_back({at, 4});
    map.push_back({at + 8, 8});
  }
  CheckRoundTrip(*v, map, 2);
  CHECK(v->element_count() == 12);
}

TEST_CASE("resized types have sticky bounds", "[datatype]") {
  // An int with lb -4 and extent 12: data at 0, items every 12 bytes.
  auto r = Ok(Resized(P(MPI_INT), -4, 12));
  CheckBounds(*r, {4, -4, 12, 0, 4});
  CHECK(r->explicit_bounds());
  CHECK_FALSE(r->is_contiguous());
  CHECK(r->combiner() == MPI_COMBINER_RESIZED);
  CHECK(r->num_integers() == 0);
  CHECK(r->addresses() == std::vector<MPI_Aint>{-4, 12});
  CHECK(r->SpanBytes(3) == 2 * 12 + 4);
  CheckRoundTrip(*r, {{0, 4}}, 4);

  // Contiguous copies inherit the explicit bounds: lb = -4, ub = 24 + 8.
  auto c = Ok(Contiguous(3, *r));
  CheckBounds(*c, {12, -4, 36, 0, 28});
  CHECK(c->explicit_bounds());

  // In a struct, only the resized copies set the bounds: the double at 100
  // does not move ub (MPI-3.1: ub is the highest ub marker).
  const int bl[] = {1, 1};
  const MPI_Aint disp[] = {0, 100};
  const Datatype* types[] = {r.get(), &P(MPI_DOUBLE)};
  auto s = Ok(Struct(2, bl, disp, types));
  CheckBounds(*s, {12, -4, 12, 0, 108});

  // Negative lb with data before the buffer pointer: ints at -8 and 0,
  // resized to lb -8, extent 16 (an 8-byte gap after each item).
  auto back = Ok(Vector(2, 1, -2, P(MPI_INT)));
  auto rb = Ok(Resized(*back, -8, 16));
  CheckBounds(*rb, {8, -8, 16, -8, 12});
  CHECK(rb->SpanBytes(3) == 2 * 16 + 12);
  CheckRoundTrip(*rb, {{0, 4}, {-8, 4}}, 3);

  // Resizing again replaces the bounds: back to a plain, contiguous int.
  auto rr = Ok(Resized(*r, 0, 4));
  CheckBounds(*rr, {4, 0, 4, 0, 4});
  CHECK(rr->is_contiguous());
  CheckRoundTrip(*rr, {{0, 4}}, 3);
}

TEST_CASE("zero-count types are legal and empty", "[datatype]") {
  auto c = Ok(Contiguous(0, P(MPI_INT)));
  CheckBounds(*c, {0, 0, 0, 0, 0});
  CHECK(c->blocks().empty());
  CHECK(c->is_contiguous());
  CHECK(c->uniform_basic() == MPI_INT);
  CHECK(c->element_count() == 0);
  CHECK(c->SpanBytes(5) == 0);
  CHECK(c->CountElements(0) == 0);
  unsigned char out[4] = {1, 2, 3, 4};
  c->Pack(out, 10, out);  // nothing is read or written
  CHECK(out[0] == 1);

  auto v = Ok(Vector(3, 0, 2, P(MPI_DOUBLE)));
  CheckBounds(*v, {0, 0, 0, 0, 0});
  auto s = Ok(Struct(0, nullptr, nullptr, nullptr));
  CheckBounds(*s, {0, 0, 0, 0, 0});
  CHECK(s->uniform_basic() == MPI_DATATYPE_NULL);
  CHECK(s->integers() == std::vector<int>{0});

  // Count 0 of a non-empty type: nothing packed, nothing unpacked.
  auto t = Ok(Vector(2, 1, 3, P(MPI_INT)));
  CheckRoundTrip(*t, {{0, 4}, {12, 4}}, 0);
}

TEST_CASE("dup and names share the type map", "[datatype]") {
  auto v = Ok(Vector(2, 1, 3, P(MPI_INT)));
  auto d = Ok(Dup(*v));
  CHECK(d->combiner() == MPI_COMBINER_DUP);
  CHECK(d->num_integers() == 0);
  REQUIRE(d->num_datatypes() == 1);
  CHECK(d->datatypes()[0] == v);
  CheckBounds(*d, {8, 0, 16, 0, 16});
  CHECK(&d->blocks() == &v->blocks());

  auto dp = Ok(Dup(P(MPI_DOUBLE)));
  CHECK_FALSE(dp->is_predefined());
  CHECK(dp->name().empty());
  CHECK(dp->uniform_basic() == MPI_DOUBLE);
  CHECK(dp->is_contiguous());

  auto named = v->WithName("halo");
  CHECK(named->name() == "halo");
  CHECK(v->name().empty());
  CHECK(&named->blocks() == &v->blocks());
  CHECK(named->combiner() == MPI_COMBINER_VECTOR);
  CHECK(v->WithName(std::string(100, 'x'))->name() ==
        std::string(MPI_MAX_OBJECT_NAME - 1, 'x'));
  auto renamed_int = P(MPI_INT).WithName("my_int");
  CHECK(renamed_int->is_predefined());
  CHECK(renamed_int->handle() == MPI_INT);
  CHECK(P(MPI_INT).name() == "MPI_INT");
}

TEST_CASE("a derived type keeps its old types alive", "[datatype]") {
  std::weak_ptr<const Datatype> weak_inner;
  std::shared_ptr<const Datatype> outer;
  {
    auto inner = Ok(Vector(2, 1, 2, P(MPI_INT)));
    weak_inner = inner;
    outer = Ok(Contiguous(2, *inner));
  }  // the user freed `inner`
  CHECK_FALSE(weak_inner.expired());
  outer.reset();
  CHECK(weak_inner.expired());
}

// ---- Errors ----

void CheckError(const TypeResult& r, int error_class,
                const std::vector<std::string>& parts) {
  CHECK(r.type == nullptr);
  CHECK(r.error_class == error_class);
  for (const std::string& part : parts) {
    INFO("message: " << r.error);
    CHECK(r.error.find(part) != std::string::npos);
  }
}

TEST_CASE("bad arguments name the argument, its value and the rule",
          "[datatype]") {
  const Datatype& i = P(MPI_INT);
  CheckError(Contiguous(-1, i), MPI_ERR_COUNT,
             {"MPI_Type_contiguous", "count = -1", ">= 0"});
  CheckError(Vector(-3, 1, 1, i), MPI_ERR_COUNT,
             {"MPI_Type_vector: count = -3 (must be >= 0)"});
  CheckError(Vector(2, -1, 1, i), MPI_ERR_ARG,
             {"MPI_Type_vector", "blocklength = -1"});
  CheckError(Hvector(2, -2, 8, i), MPI_ERR_ARG,
             {"MPI_Type_create_hvector", "blocklength = -2"});
  const int bl[] = {1, -3};
  const int disp[] = {0, 4};
  CheckError(Indexed(2, bl, disp, i), MPI_ERR_ARG,
             {"MPI_Type_indexed", "blocklengths[1] = -3", ">= 0"});
  const int good_bl[] = {1, 1};
  CheckError(Indexed(2, good_bl, nullptr, i), MPI_ERR_ARG,
             {"MPI_Type_indexed", "displacements is NULL"});
  CheckError(IndexedBlock(-1, 1, disp, i), MPI_ERR_COUNT,
             {"MPI_Type_create_indexed_block", "count = -1"});
  const MPI_Aint hdisp[] = {0, 8};
  CheckError(Hindexed(2, bl, hdisp, i), MPI_ERR_ARG,
             {"MPI_Type_create_hindexed", "blocklengths[1] = -3"});
  const Datatype* types[] = {&i, nullptr};
  CheckError(Struct(2, good_bl, hdisp, types), MPI_ERR_TYPE,
             {"MPI_Type_create_struct", "types[1]", "MPI_DATATYPE_NULL"});
  CheckError(Struct(-1, good_bl, hdisp, types), MPI_ERR_COUNT,
             {"MPI_Type_create_struct", "count = -1"});
  CheckError(Resized(i, 0, -4), MPI_ERR_ARG,
             {"MPI_Type_create_resized", "extent = -4", ">= 0"});
  CheckError(HindexedBlock(-1, 1, hdisp, i), MPI_ERR_COUNT,
             {"MPI_Type_create_hindexed_block", "count = -1"});
  CheckError(HindexedBlock(2, -1, hdisp, i), MPI_ERR_ARG,
             {"MPI_Type_create_hindexed_block", "blocklength = -1"});
  CheckError(HindexedBlock(2, 1, nullptr, i), MPI_ERR_ARG,
             {"MPI_Type_create_hindexed_block", "displacements is NULL"});
  const int sizes[] = {4, 5};
  const int subs[] = {2, 3};
  const int starts[] = {1, 1};
  CheckError(Subarray(0, sizes, subs, starts, MPI_ORDER_C, i), MPI_ERR_COUNT,
             {"MPI_Type_create_subarray", "ndims = 0", ">= 1"});
  const int zero_size[] = {4, 0};
  CheckError(Subarray(2, zero_size, subs, starts, MPI_ORDER_C, i),
             MPI_ERR_ARG, {"array_of_sizes[1] = 0", ">= 1"});
  const int big_sub[] = {5, 3};
  CheckError(Subarray(2, sizes, big_sub, starts, MPI_ORDER_C, i), MPI_ERR_ARG,
             {"array_of_subsizes[0] = 5", "1..array_of_sizes[0] = 4"});
  const int zero_sub[] = {2, 0};
  CheckError(Subarray(2, sizes, zero_sub, starts, MPI_ORDER_C, i),
             MPI_ERR_ARG, {"array_of_subsizes[1] = 0"});
  const int far[] = {3, 1};
  CheckError(Subarray(2, sizes, subs, far, MPI_ORDER_C, i), MPI_ERR_ARG,
             {"array_of_starts[0] = 3", "0..2"});
  const int negative[] = {1, -1};
  CheckError(Subarray(2, sizes, subs, negative, MPI_ORDER_C, i), MPI_ERR_ARG,
             {"array_of_starts[1] = -1"});
  CheckError(Subarray(2, sizes, subs, starts, 7, i), MPI_ERR_ARG,
             {"order = 7", "MPI_ORDER_C or MPI_ORDER_FORTRAN"});
  CheckError(Subarray(2, nullptr, subs, starts, MPI_ORDER_C, i), MPI_ERR_ARG,
             {"array_of_sizes is NULL"});
  const int huge_sizes[] = {1 << 30, 1 << 30, 1 << 30};
  const int one[] = {1, 1, 1};
  const int origin[] = {0, 0, 0};
  auto row = Ok(Contiguous(64, i));
  CheckError(Subarray(3, huge_sizes, one, origin, MPI_ORDER_C, *row),
             MPI_ERR_ARG, {"MPI_Type_create_subarray", "overflow"});
  // 64-bit overflow of displacements.
  CheckError(Hvector(3, 1, INT64_MAX / 2, i), MPI_ERR_ARG,
             {"MPI_Type_create_hvector", "overflow"});
  auto huge = Ok(Resized(i, 0, INT64_MAX / 4));
  CheckError(Contiguous(8, *huge), MPI_ERR_ARG,
             {"MPI_Type_contiguous", "overflow"});
  // A flattened type map beyond kMaxBlocks is refused before allocation.
  auto sparse = Ok(Vector(128, 1, 2, i));
  CheckError(Contiguous(1 << 20, *sparse), MPI_ERR_NO_MEM,
             {"MPI_Type_contiguous", "kMaxBlocks"});
}

}  // namespace
}  // namespace rondo::nmad::mpi
