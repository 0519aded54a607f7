// Datatype construction (flattening the type map, MPI bounds), the
// predefined table, and the pack/unpack loops.
#include "nmad/mpi/datatype.h"

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <limits>
#include <utility>

#include "topology/base/log.h"

namespace rondo::nmad::mpi {
namespace {

// A contract violation by the caller (never user input): abort with a
// message through the logger.
[[noreturn]] void Die(const char* what) {
  RONDO_LOG_FATAL("nmad/mpi/datatype: {}", what);
}

bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// Copies n bytes; the common element sizes become single moves.
inline void CopyBytes(char* dst, const char* src, int64_t n) {
  switch (n) {
    case 1:
      std::memcpy(dst, src, 1);
      break;
    case 2:
      std::memcpy(dst, src, 2);
      break;
    case 4:
      std::memcpy(dst, src, 4);
      break;
    case 8:
      std::memcpy(dst, src, 8);
      break;
    case 12:
      std::memcpy(dst, src, 12);
      break;
    case 16:
      std::memcpy(dst, src, 16);
      break;
    default:
      std::memcpy(dst, src, static_cast<size_t>(n));
      break;
  }
}

// The C structs behind the pair types (MPI-3.1 §5.9.4).
template <typename V>
struct Pair {
  V value;
  int index;
};

// MPI_DATATYPE_NULL marks "no basic type seen yet"; kMixed "several".
constexpr MPI_Datatype kMixed = -1;

MPI_Datatype MergeBasic(MPI_Datatype have, MPI_Datatype add) {
  if (have == MPI_DATATYPE_NULL) return add;
  if (add == MPI_DATATYPE_NULL) return have;
  return have == add ? have : kMixed;
}

}  // namespace

namespace internal {

// Accumulates the type map of a new type as copies of old types, then
// computes its bounds and publishes it. Used by every constructor and by
// the predefined table.
class TypeBuilder {
 public:
  explicit TypeBuilder(const char* function) : function_(function) {}

  // Appends n consecutive copies of `old` (copy k at disp + k * extent).
  // On failure sets error_class()/error() and returns false.
  bool Add(const Datatype& old, int64_t disp, int64_t n) {
    // The type map holds no entry of old when n == 0, but old still says
    // which basic type a zero-count type is "of" (uniform_basic()).
    types_basic_ = MergeBasic(
        types_basic_,
        old.uniform_basic_ == MPI_DATATYPE_NULL ? kMixed : old.uniform_basic_);
    if (n == 0) return true;
    const int64_t ext = old.extent();
    int64_t span = 0;
    int64_t last = 0;
    if (!CheckedMul(n - 1, ext, &span) || !CheckedAdd(disp, span, &last)) {
      return Overflow();
    }
    if (old.explicit_bounds_) {
      int64_t lo = 0;
      int64_t hi = 0;
      if (!CheckedAdd(disp, old.lb_, &lo) || !CheckedAdd(last, old.ub_, &hi)) {
        return Overflow();
      }
      marker_lb_ = explicit_bounds_ ? std::min(marker_lb_, lo) : lo;
      marker_ub_ = explicit_bounds_ ? std::max(marker_ub_, hi) : hi;
      explicit_bounds_ = true;
    }
    if (old.size_ == 0) return true;

    int64_t lo = 0;
    int64_t hi = 0;
    int64_t add_size = 0;
    int64_t add_elements = 0;
    if (!CheckedAdd(disp, old.true_lb_, &lo) ||
        !CheckedAdd(last, old.true_ub_, &hi) ||
        !CheckedMul(n, old.size_, &add_size) ||
        !CheckedAdd(size_, add_size, &size_) ||
        !CheckedMul(n, old.element_count_, &add_elements) ||
        !CheckedAdd(element_count_, add_elements, &element_count_)) {
      return Overflow();
    }
    true_lb_ = has_data_ ? std::min(true_lb_, lo) : lo;
    true_ub_ = has_data_ ? std::max(true_ub_, hi) : hi;
    has_data_ = true;
    alignment_ = std::max(alignment_, old.alignment_);
    data_basic_ = MergeBasic(
        data_basic_,
        old.uniform_basic_ == MPI_DATATYPE_NULL ? kMixed : old.uniform_basic_);

    const std::vector<TypeBlock>& old_blocks = *old.blocks_;
    if (old.contiguous_ && old_blocks.size() == 1) {
      // n copies of one contiguous block are one block.
      if (static_cast<int64_t>(blocks_.size()) + 1 > kMaxBlocks) {
        return TooManyBlocks();
      }
      Append({lo, add_size, old_blocks[0].basic});
      return true;
    }
    const int64_t per_copy = static_cast<int64_t>(old_blocks.size());
    int64_t added = 0;
    if (!CheckedMul(n, per_copy, &added) ||
        static_cast<int64_t>(blocks_.size()) + added > kMaxBlocks) {
      return TooManyBlocks();
    }
    int64_t base = disp;
    for (int64_t k = 0; k < n; ++k, base += ext) {
      for (const TypeBlock& b : old_blocks) {
        Append({base + b.offset, b.bytes, b.basic});
      }
    }
    return true;
  }

  // MPI_Type_create_resized: replaces any bounds by explicit ones.
  void SetExplicitBounds(int64_t lb, int64_t ub) {
    explicit_bounds_ = true;
    marker_lb_ = lb;
    marker_ub_ = ub;
  }

  bool Fail(int error_class, std::string message) {
    error_class_ = error_class;
    error_ = std::string(function_) + ": " + std::move(message);
    return false;
  }
  TypeResult Error() const { return {nullptr, error_class_, error_}; }

  TypeResult Finish(int combiner, std::vector<int> integers,
                    std::vector<MPI_Aint> addresses,
                    std::vector<std::shared_ptr<const Datatype>> types) {
    std::shared_ptr<Datatype> t(new Datatype());
    if (!Fill(t.get())) return Error();
    auto env = std::make_shared<Datatype::Envelope>();
    env->combiner = combiner;
    env->integers = std::move(integers);
    env->addresses = std::move(addresses);
    env->datatypes = std::move(types);
    t->envelope_ = std::move(env);
    return {std::move(t), MPI_SUCCESS, {}};
  }

  // A predefined type: blocks given, bounds from the data and alignment.
  static std::shared_ptr<const Datatype> MakePredefined(
      MPI_Datatype handle, const char* name, std::vector<TypeBlock> blocks,
      int64_t alignment, int64_t expected_extent) {
    TypeBuilder b(name);
    for (const TypeBlock& block : blocks) {
      b.Append(block);
      b.size_ += block.bytes;
      b.true_ub_ = std::max(b.true_ub_, block.offset + block.bytes);
    }
    b.has_data_ = true;
    b.alignment_ = alignment;
    b.element_count_ = 1;
    b.data_basic_ = handle;
    b.types_basic_ = handle;
    std::shared_ptr<Datatype> t(new Datatype());
    if (!b.Fill(t.get()) || t->extent() != expected_extent) {
      Die("predefined datatype table is inconsistent");
    }
    t->handle_ = handle;
    t->name_ = name;
    t->envelope_ = std::make_shared<Datatype::Envelope>();
    return t;
  }

  // Helpers for Dup and WithName, which copy a layout.
  static std::shared_ptr<Datatype> Clone(const Datatype& old) {
    return old.CloneLayout();
  }
  static void SetEnvelope(Datatype* t, int combiner,
                          std::shared_ptr<const Datatype> old) {
    auto env = std::make_shared<Datatype::Envelope>();
    env->combiner = combiner;
    env->datatypes.push_back(std::move(old));
    t->envelope_ = std::move(env);
    t->handle_ = MPI_DATATYPE_NULL;
    t->name_.clear();
  }

 private:
  bool Overflow() {
    return Fail(MPI_ERR_ARG,
                "the displacements overflow 64-bit byte offsets (count, "
                "stride, displacement or extent too large)");
  }
  bool TooManyBlocks() {
    return Fail(MPI_ERR_NO_MEM, "the flattened type map would exceed " +
                                    std::to_string(kMaxBlocks) +
                                    " contiguous blocks per item (kMaxBlocks)");
  }

  void Append(const TypeBlock& b) {
    if (!blocks_.empty()) {
      TypeBlock& last = blocks_.back();
      if (last.basic == b.basic && last.offset + last.bytes == b.offset) {
        last.bytes += b.bytes;
      } else {
        blocks_.push_back(b);
      }
    } else {
      blocks_.push_back(b);
    }
    if (!runs_.empty() &&
        runs_.back().offset + runs_.back().bytes == b.offset) {
      TypeBlock& last = runs_.back();
      last.bytes += b.bytes;
      if (last.basic != b.basic) last.basic = MPI_DATATYPE_NULL;
    } else {
      runs_.push_back(b);
    }
  }

  // Computes the bounds (MPI-3.1 §4.1.6) and moves the layout into t.
  bool Fill(Datatype* t) {
    int64_t lb = 0;
    int64_t ub = 0;
    if (explicit_bounds_) {
      lb = marker_lb_;
      ub = marker_ub_;
    } else if (has_data_) {
      lb = true_lb_;
      ub = true_ub_;
      int64_t extent = 0;
      if (!CheckedAdd(ub, -lb, &extent)) return Overflow();
      const int64_t pad = (alignment_ - extent % alignment_) % alignment_;
      if (!CheckedAdd(ub, pad, &ub)) return Overflow();
    }
    int64_t extent = 0;
    if (!CheckedAdd(ub, -lb, &extent)) return Overflow();
    t->size_ = size_;
    t->lb_ = lb;
    t->ub_ = ub;
    t->true_lb_ = has_data_ ? true_lb_ : 0;
    t->true_ub_ = has_data_ ? true_ub_ : 0;
    t->alignment_ = alignment_;
    t->element_count_ = element_count_;
    t->explicit_bounds_ = explicit_bounds_;
    t->contiguous_ = size_ == 0 || (runs_.size() == 1 && extent == size_);
    const MPI_Datatype basic = has_data_ ? data_basic_ : types_basic_;
    t->uniform_basic_ = basic == kMixed ? MPI_DATATYPE_NULL : basic;
    std::vector<int64_t> starts;
    starts.reserve(runs_.size());
    int64_t pos = 0;
    for (const TypeBlock& r : runs_) {
      starts.push_back(pos);
      pos += r.bytes;
    }
    const bool same = runs_.size() == blocks_.size();
    auto blocks =
        std::make_shared<const std::vector<TypeBlock>>(std::move(blocks_));
    t->blocks_ = blocks;
    t->runs_ =
        same ? blocks
             : std::make_shared<const std::vector<TypeBlock>>(std::move(runs_));
    t->run_starts_ =
        std::make_shared<const std::vector<int64_t>>(std::move(starts));
    return true;
  }

  const char* function_;
  int error_class_ = MPI_SUCCESS;
  std::string error_;

  std::vector<TypeBlock> blocks_;
  std::vector<TypeBlock> runs_;
  int64_t size_ = 0;
  int64_t element_count_ = 0;
  int64_t alignment_ = 1;
  bool has_data_ = false;
  int64_t true_lb_ = 0;
  int64_t true_ub_ = 0;
  bool explicit_bounds_ = false;
  int64_t marker_lb_ = 0;
  int64_t marker_ub_ = 0;
  MPI_Datatype data_basic_ = MPI_DATATYPE_NULL;
  MPI_Datatype types_basic_ = MPI_DATATYPE_NULL;
};

}  // namespace internal

namespace {

using internal::TypeBuilder;

template <typename T>
std::shared_ptr<const Datatype> Scalar(MPI_Datatype h, const char* name) {
  return TypeBuilder::MakePredefined(
      h, name, {{0, static_cast<int64_t>(sizeof(T)), h}},
      static_cast<int64_t>(alignof(T)), static_cast<int64_t>(sizeof(T)));
}

template <typename V>
std::shared_ptr<const Datatype> PairType(MPI_Datatype h, const char* name) {
  constexpr int64_t kValue = sizeof(V);
  constexpr int64_t kIndexAt = offsetof(Pair<V>, index);
  std::vector<TypeBlock> blocks;
  if (kIndexAt == kValue) {
    blocks.push_back({0, kValue + static_cast<int64_t>(sizeof(int)), h});
  } else {
    blocks.push_back({0, kValue, h});
    blocks.push_back({kIndexAt, static_cast<int64_t>(sizeof(int)), h});
  }
  return TypeBuilder::MakePredefined(h, name, std::move(blocks),
                                     static_cast<int64_t>(alignof(Pair<V>)),
                                     static_cast<int64_t>(sizeof(Pair<V>)));
}

using Table = std::array<std::shared_ptr<const Datatype>,
                         RONDO_MPI_LAST_PREDEFINED_DATATYPE + 1>;

Table* BuildTable() {
  auto* t = new Table();
  Table& p = *t;
  p[MPI_CHAR] = Scalar<char>(MPI_CHAR, "MPI_CHAR");
  p[MPI_SIGNED_CHAR] = Scalar<signed char>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR");
  p[MPI_UNSIGNED_CHAR] =
      Scalar<unsigned char>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
  p[MPI_BYTE] = Scalar<unsigned char>(MPI_BYTE, "MPI_BYTE");
  p[MPI_SHORT] = Scalar<short>(MPI_SHORT, "MPI_SHORT");
  p[MPI_UNSIGNED_SHORT] =
      Scalar<unsigned short>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT");
  p[MPI_INT] = Scalar<int>(MPI_INT, "MPI_INT");
  p[MPI_UNSIGNED] = Scalar<unsigned>(MPI_UNSIGNED, "MPI_UNSIGNED");
  p[MPI_LONG] = Scalar<long>(MPI_LONG, "MPI_LONG");
  p[MPI_UNSIGNED_LONG] =
      Scalar<unsigned long>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
  p[MPI_LONG_LONG_INT] =
      Scalar<long long>(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT");
  p[MPI_UNSIGNED_LONG_LONG] = Scalar<unsigned long long>(
      MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
  p[MPI_FLOAT] = Scalar<float>(MPI_FLOAT, "MPI_FLOAT");
  p[MPI_DOUBLE] = Scalar<double>(MPI_DOUBLE, "MPI_DOUBLE");
  p[MPI_LONG_DOUBLE] = Scalar<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE");
  p[MPI_WCHAR] = Scalar<wchar_t>(MPI_WCHAR, "MPI_WCHAR");
  p[MPI_C_BOOL] = Scalar<bool>(MPI_C_BOOL, "MPI_C_BOOL");
  p[MPI_INT8_T] = Scalar<int8_t>(MPI_INT8_T, "MPI_INT8_T");
  p[MPI_INT16_T] = Scalar<int16_t>(MPI_INT16_T, "MPI_INT16_T");
  p[MPI_INT32_T] = Scalar<int32_t>(MPI_INT32_T, "MPI_INT32_T");
  p[MPI_INT64_T] = Scalar<int64_t>(MPI_INT64_T, "MPI_INT64_T");
  p[MPI_UINT8_T] = Scalar<uint8_t>(MPI_UINT8_T, "MPI_UINT8_T");
  p[MPI_UINT16_T] = Scalar<uint16_t>(MPI_UINT16_T, "MPI_UINT16_T");
  p[MPI_UINT32_T] = Scalar<uint32_t>(MPI_UINT32_T, "MPI_UINT32_T");
  p[MPI_UINT64_T] = Scalar<uint64_t>(MPI_UINT64_T, "MPI_UINT64_T");
  p[MPI_AINT] = Scalar<MPI_Aint>(MPI_AINT, "MPI_AINT");
  p[MPI_OFFSET] = Scalar<MPI_Offset>(MPI_OFFSET, "MPI_OFFSET");
  p[MPI_COUNT] = Scalar<MPI_Count>(MPI_COUNT, "MPI_COUNT");
  p[MPI_PACKED] = Scalar<unsigned char>(MPI_PACKED, "MPI_PACKED");
  p[MPI_C_FLOAT_COMPLEX] =
      Scalar<std::complex<float>>(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX");
  p[MPI_C_DOUBLE_COMPLEX] = Scalar<std::complex<double>>(
      MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
  p[MPI_C_LONG_DOUBLE_COMPLEX] = Scalar<std::complex<long double>>(
      MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
  p[MPI_FLOAT_INT] = PairType<float>(MPI_FLOAT_INT, "MPI_FLOAT_INT");
  p[MPI_DOUBLE_INT] = PairType<double>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
  p[MPI_LONG_INT] = PairType<long>(MPI_LONG_INT, "MPI_LONG_INT");
  p[MPI_2INT] = PairType<int>(MPI_2INT, "MPI_2INT");
  p[MPI_SHORT_INT] = PairType<short>(MPI_SHORT_INT, "MPI_SHORT_INT");
  p[MPI_LONG_DOUBLE_INT] =
      PairType<long double>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
  return t;
}

// Immutable after construction; deliberately never destroyed so that
// progress threads may still use predefined types during exit.
const Table& PredefinedTable() {
  static const Table* const table = BuildTable();
  return *table;
}

std::string Value(const char* arg, int64_t v) {
  return std::string(arg) + " = " + std::to_string(v);
}

std::string Entry(const char* array, int i, int64_t v) {
  return std::string(array) + "[" + std::to_string(i) +
         "] = " + std::to_string(v);
}

// Checks the shared arguments of the array constructors.
bool CheckCount(TypeBuilder& b, int count) {
  if (count < 0) {
    return b.Fail(MPI_ERR_COUNT, Value("count", count) + " (must be >= 0)");
  }
  return true;
}

bool CheckBlocklength(TypeBuilder& b, int blocklength) {
  if (blocklength < 0) {
    return b.Fail(MPI_ERR_ARG,
                  Value("blocklength", blocklength) + " (must be >= 0)");
  }
  return true;
}

bool CheckArray(TypeBuilder& b, int count, const void* array,
                const char* name) {
  if (count > 0 && array == nullptr) {
    return b.Fail(MPI_ERR_ARG, std::string(name) + " is NULL with count = " +
                                   std::to_string(count) +
                                   " (an array of count entries is required)");
  }
  return true;
}

bool CheckBlocklengths(TypeBuilder& b, int count, const int blocklengths[]) {
  if (!CheckArray(b, count, blocklengths, "blocklengths")) return false;
  for (int i = 0; i < count; ++i) {
    if (blocklengths[i] < 0) {
      return b.Fail(MPI_ERR_ARG, Entry("blocklengths", i, blocklengths[i]) +
                                     " (must be >= 0)");
    }
  }
  return true;
}

// Displacement in bytes of `elements` items of `old`.
bool ElementsToBytes(TypeBuilder& b, int64_t elements, const Datatype& old,
                     int64_t* bytes) {
  if (!CheckedMul(elements, old.extent(), bytes)) {
    return b.Fail(MPI_ERR_ARG, "a displacement of " + std::to_string(elements) +
                                   " elements of extent " +
                                   std::to_string(old.extent()) +
                                   " overflows 64-bit byte offsets");
  }
  return true;
}

std::vector<std::shared_ptr<const Datatype>> One(const Datatype& old) {
  return {old.shared_from_this()};
}

}  // namespace

const Datatype* const* PredefinedPointers() {
  static const Datatype* const* const pointers = [] {
    const Table& t = PredefinedTable();
    auto* p = new const Datatype*[t.size()];  // never freed, as the table
    for (size_t i = 0; i < t.size(); ++i) p[i] = t[i].get();
    return p;
  }();
  return pointers;
}

// ---- Constructors ----

TypeResult Contiguous(int count, const Datatype& old) {
  TypeBuilder b("MPI_Type_contiguous");
  if (!CheckCount(b, count) || !b.Add(old, 0, count)) return b.Error();
  return b.Finish(MPI_COMBINER_CONTIGUOUS, {count}, {}, One(old));
}

TypeResult Vector(int count, int blocklength, int stride, const Datatype& old) {
  TypeBuilder b("MPI_Type_vector");
  if (!CheckCount(b, count) || !CheckBlocklength(b, blocklength)) {
    return b.Error();
  }
  int64_t stride_bytes = 0;
  if (!ElementsToBytes(b, stride, old, &stride_bytes)) return b.Error();
  for (int i = 0; i < count; ++i) {
    int64_t disp = 0;
    if (!CheckedMul(i, stride_bytes, &disp)) {
      b.Fail(MPI_ERR_ARG, "block " + std::to_string(i) + " at stride " +
                              std::to_string(stride) +
                              " overflows 64-bit byte offsets");
      return b.Error();
    }
    if (!b.Add(old, disp, blocklength)) return b.Error();
  }
  return b.Finish(MPI_COMBINER_VECTOR, {count, blocklength, stride}, {},
                  One(old));
}

TypeResult Hvector(int count, int blocklength, MPI_Aint stride,
                   const Datatype& old) {
  TypeBuilder b("MPI_Type_create_hvector");
  if (!CheckCount(b, count) || !CheckBlocklength(b, blocklength)) {
    return b.Error();
  }
  for (int i = 0; i < count; ++i) {
    int64_t disp = 0;
    if (!CheckedMul(i, stride, &disp)) {
      b.Fail(MPI_ERR_ARG, "block " + std::to_string(i) + " at stride " +
                              std::to_string(stride) +
                              " bytes overflows 64-bit byte offsets");
      return b.Error();
    }
    if (!b.Add(old, disp, blocklength)) return b.Error();
  }
  return b.Finish(MPI_COMBINER_HVECTOR, {count, blocklength}, {stride},
                  One(old));
}

TypeResult Indexed(int count, const int blocklengths[],
                   const int displacements[], const Datatype& old) {
  TypeBuilder b("MPI_Type_indexed");
  if (!CheckCount(b, count) || !CheckBlocklengths(b, count, blocklengths) ||
      !CheckArray(b, count, displacements, "displacements")) {
    return b.Error();
  }
  std::vector<int> ints;
  ints.reserve(2 * static_cast<size_t>(count) + 1);
  ints.push_back(count);
  for (int i = 0; i < count; ++i) {
    int64_t disp = 0;
    if (!ElementsToBytes(b, displacements[i], old, &disp) ||
        !b.Add(old, disp, blocklengths[i])) {
      return b.Error();
    }
    ints.push_back(blocklengths[i]);
  }
  ints.insert(ints.end(), displacements, displacements + count);
  return b.Finish(MPI_COMBINER_INDEXED, std::move(ints), {}, One(old));
}

TypeResult Hindexed(int count, const int blocklengths[],
                    const MPI_Aint displacements[], const Datatype& old) {
  TypeBuilder b("MPI_Type_create_hindexed");
  if (!CheckCount(b, count) || !CheckBlocklengths(b, count, blocklengths) ||
      !CheckArray(b, count, displacements, "displacements")) {
    return b.Error();
  }
  std::vector<int> ints;
  ints.reserve(static_cast<size_t>(count) + 1);
  ints.push_back(count);
  for (int i = 0; i < count; ++i) {
    if (!b.Add(old, displacements[i], blocklengths[i])) return b.Error();
    ints.push_back(blocklengths[i]);
  }
  return b.Finish(MPI_COMBINER_HINDEXED, std::move(ints),
                  std::vector<MPI_Aint>(displacements, displacements + count),
                  One(old));
}

TypeResult IndexedBlock(int count, int blocklength, const int displacements[],
                        const Datatype& old) {
  TypeBuilder b("MPI_Type_create_indexed_block");
  if (!CheckCount(b, count) || !CheckBlocklength(b, blocklength) ||
      !CheckArray(b, count, displacements, "displacements")) {
    return b.Error();
  }
  std::vector<int> ints;
  ints.reserve(static_cast<size_t>(count) + 2);
  ints.push_back(count);
  ints.push_back(blocklength);
  for (int i = 0; i < count; ++i) {
    int64_t disp = 0;
    if (!ElementsToBytes(b, displacements[i], old, &disp) ||
        !b.Add(old, disp, blocklength)) {
      return b.Error();
    }
    ints.push_back(displacements[i]);
  }
  return b.Finish(MPI_COMBINER_INDEXED_BLOCK, std::move(ints), {}, One(old));
}

TypeResult HindexedBlock(int count, int blocklength,
                         const MPI_Aint displacements[], const Datatype& old) {
  TypeBuilder b("MPI_Type_create_hindexed_block");
  if (!CheckCount(b, count) || !CheckBlocklength(b, blocklength) ||
      !CheckArray(b, count, displacements, "displacements")) {
    return b.Error();
  }
  for (int i = 0; i < count; ++i) {
    if (!b.Add(old, displacements[i], blocklength)) return b.Error();
  }
  return b.Finish(MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength},
                  std::vector<MPI_Aint>(displacements, displacements + count),
                  One(old));
}

TypeResult Subarray(int ndims, const int sizes[], const int subsizes[],
                    const int starts[], int order, const Datatype& old) {
  TypeBuilder b("MPI_Type_create_subarray");
  if (ndims < 1) {
    b.Fail(MPI_ERR_COUNT, Value("ndims", ndims) +
                              " (must be >= 1: the number of dimensions of "
                              "the array)");
    return b.Error();
  }
  if (!CheckArray(b, ndims, sizes, "array_of_sizes") ||
      !CheckArray(b, ndims, subsizes, "array_of_subsizes") ||
      !CheckArray(b, ndims, starts, "array_of_starts")) {
    return b.Error();
  }
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
    b.Fail(MPI_ERR_ARG, Value("order", order) +
                            " (must be MPI_ORDER_C or MPI_ORDER_FORTRAN)");
    return b.Error();
  }
  for (int i = 0; i < ndims; ++i) {
    if (sizes[i] < 1) {
      b.Fail(MPI_ERR_ARG,
             Entry("array_of_sizes", i, sizes[i]) + " (must be >= 1)");
      return b.Error();
    }
    if (subsizes[i] < 1 || subsizes[i] > sizes[i]) {
      b.Fail(MPI_ERR_ARG, Entry("array_of_subsizes", i, subsizes[i]) +
                              " (must be 1..array_of_sizes[" +
                              std::to_string(i) +
                              "] = " + std::to_string(sizes[i]) + ")");
      return b.Error();
    }
    if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i]) {
      b.Fail(MPI_ERR_ARG,
             Entry("array_of_starts", i, starts[i]) + " (must be 0.." +
                 std::to_string(sizes[i] - subsizes[i]) +
                 ": the subarray of " + std::to_string(subsizes[i]) +
                 " elements must fit in the " + std::to_string(sizes[i]) +
                 " of dimension " + std::to_string(i) + ")");
      return b.Error();
    }
  }
  // Dimensions from the slowest to the fastest varying, and the byte
  // stride of each (in the array of sizes[] old items).
  std::vector<int> dims(static_cast<size_t>(ndims));
  for (int k = 0; k < ndims; ++k) {
    dims[k] = order == MPI_ORDER_C ? k : ndims - 1 - k;
  }
  std::vector<int64_t> stride(static_cast<size_t>(ndims));
  int64_t elements = 1;  // of the whole array
  for (int k = ndims - 1; k >= 0; --k) {
    const int d = dims[k];
    if (!CheckedMul(elements, old.extent(), &stride[d]) ||
        !CheckedMul(elements, sizes[d], &elements)) {
      b.Fail(MPI_ERR_ARG, "the array of " + std::to_string(ndims) +
                              " dimensions overflows 64-bit byte offsets");
      return b.Error();
    }
  }
  int64_t array_bytes = 0;
  if (!ElementsToBytes(b, elements, old, &array_bytes)) return b.Error();
  // One run of subsizes[fastest] items per index of the other dimensions,
  // in array order (an odometer over the slower dimensions).
  const int fastest = dims[ndims - 1];
  std::vector<int> index(static_cast<size_t>(ndims), 0);
  for (;;) {
    int64_t disp = 0;
    for (int d = 0; d < ndims; ++d) {
      disp += static_cast<int64_t>(starts[d] + index[d]) * stride[d];
    }
    if (!b.Add(old, disp, subsizes[fastest])) return b.Error();
    int k = ndims - 2;
    for (; k >= 0; --k) {
      const int d = dims[k];
      if (++index[d] < subsizes[d]) break;
      index[d] = 0;
    }
    if (k < 0) break;
  }
  b.SetExplicitBounds(0, array_bytes);
  std::vector<int> ints;
  ints.reserve(3 * static_cast<size_t>(ndims) + 2);
  ints.push_back(ndims);
  ints.insert(ints.end(), sizes, sizes + ndims);
  ints.insert(ints.end(), subsizes, subsizes + ndims);
  ints.insert(ints.end(), starts, starts + ndims);
  ints.push_back(order);
  return b.Finish(MPI_COMBINER_SUBARRAY, std::move(ints), {}, One(old));
}

TypeResult Struct(int count, const int blocklengths[],
                  const MPI_Aint displacements[],
                  const Datatype* const types[]) {
  TypeBuilder b("MPI_Type_create_struct");
  if (!CheckCount(b, count) || !CheckBlocklengths(b, count, blocklengths) ||
      !CheckArray(b, count, displacements, "displacements") ||
      !CheckArray(b, count, types, "types")) {
    return b.Error();
  }
  for (int i = 0; i < count; ++i) {
    if (types[i] == nullptr) {
      b.Fail(MPI_ERR_TYPE, "types[" + std::to_string(i) +
                               "] = MPI_DATATYPE_NULL (must be a valid "
                               "datatype)");
      return b.Error();
    }
  }
  std::vector<int> ints;
  ints.reserve(static_cast<size_t>(count) + 1);
  ints.push_back(count);
  std::vector<std::shared_ptr<const Datatype>> olds;
  olds.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (!b.Add(*types[i], displacements[i], blocklengths[i])) {
      return b.Error();
    }
    ints.push_back(blocklengths[i]);
    olds.push_back(types[i]->shared_from_this());
  }
  return b.Finish(MPI_COMBINER_STRUCT, std::move(ints),
                  std::vector<MPI_Aint>(displacements, displacements + count),
                  std::move(olds));
}

TypeResult Resized(const Datatype& old, MPI_Aint lb, MPI_Aint extent) {
  TypeBuilder b("MPI_Type_create_resized");
  if (extent < 0) {
    b.Fail(MPI_ERR_ARG, Value("extent", extent) + " (must be >= 0)");
    return b.Error();
  }
  int64_t ub = 0;
  if (!CheckedAdd(lb, extent, &ub)) {
    b.Fail(MPI_ERR_ARG, "lb + extent = " + std::to_string(lb) + " + " +
                            std::to_string(extent) +
                            " overflows 64-bit byte offsets");
    return b.Error();
  }
  if (!b.Add(old, 0, 1)) return b.Error();
  b.SetExplicitBounds(lb, ub);
  return b.Finish(MPI_COMBINER_RESIZED, {}, {lb, extent}, One(old));
}

TypeResult Dup(const Datatype& old) {
  std::shared_ptr<Datatype> t = TypeBuilder::Clone(old);
  TypeBuilder::SetEnvelope(t.get(), MPI_COMBINER_DUP, old.shared_from_this());
  return {std::move(t), MPI_SUCCESS, {}};
}

// ---- Datatype members ----

std::shared_ptr<Datatype> Datatype::CloneLayout() const {
  std::shared_ptr<Datatype> t(new Datatype());
  t->size_ = size_;
  t->lb_ = lb_;
  t->ub_ = ub_;
  t->true_lb_ = true_lb_;
  t->true_ub_ = true_ub_;
  t->alignment_ = alignment_;
  t->element_count_ = element_count_;
  t->explicit_bounds_ = explicit_bounds_;
  t->contiguous_ = contiguous_;
  t->uniform_basic_ = uniform_basic_;
  t->handle_ = handle_;
  t->name_ = name_;
  t->blocks_ = blocks_;
  t->runs_ = runs_;
  t->run_starts_ = run_starts_;
  t->envelope_ = envelope_;
  return t;
}

std::shared_ptr<const Datatype> Datatype::WithName(
    std::string_view name) const {
  std::shared_ptr<Datatype> t = CloneLayout();
  t->name_ = std::string(name.substr(0, MPI_MAX_OBJECT_NAME - 1));
  return t;
}

int64_t Datatype::SpanBytes(int64_t count) const {
  if (count <= 0 || size_ == 0) return 0;
  return (count - 1) * extent() + true_extent();
}

namespace {

// Copies whole items of a type made of one run of N bytes.
template <bool kPack, int N>
void SingleRunItems(char* mem, char* stream, int64_t extent, int64_t items) {
  for (int64_t i = 0; i < items; ++i) {
    if constexpr (kPack) {
      std::memcpy(stream, mem, N);
    } else {
      std::memcpy(mem, stream, N);
    }
    mem += extent;
    stream += N;
  }
}

}  // namespace

template <bool kPack>
void Datatype::Transfer(char* mem, char* stream, int64_t first,
                        int64_t bytes) const {
  if (bytes <= 0) return;
  auto copy = [](char* m, char* s, int64_t n) {
    if constexpr (kPack) {
      CopyBytes(s, m, n);
    } else {
      CopyBytes(m, s, n);
    }
  };
  if (contiguous_) {
    char* m = mem + (true_lb_ + first);
    if constexpr (kPack) {
      std::memcpy(stream, m, static_cast<size_t>(bytes));
    } else {
      std::memcpy(m, stream, static_cast<size_t>(bytes));
    }
    return;
  }
  const std::vector<TypeBlock>& runs = *runs_;
  const std::vector<int64_t>& starts = *run_starts_;
  const size_t nruns = runs.size();
  const int64_t ext = extent();
  int64_t base = (first / size_) * ext;  // offset of the current item
  const int64_t r = first % size_;

  // A leading partial item (a segment starting mid-item, or shorter than
  // one item).
  if (r != 0 || bytes < size_) {
    size_t idx = static_cast<size_t>(
        std::upper_bound(starts.begin(), starts.end(), r) - starts.begin() - 1);
    int64_t in_run = r - starts[idx];
    while (bytes > 0) {
      const TypeBlock& run = runs[idx];
      const int64_t n = std::min(run.bytes - in_run, bytes);
      copy(mem + (base + run.offset + in_run), stream, n);
      stream += n;
      bytes -= n;
      in_run = 0;
      if (++idx == nruns) {
        base += ext;
        break;
      }
    }
  }
  // Whole items.
  const int64_t items = bytes / size_;
  if (items > 0) {
    if (nruns == 1) {
      char* m = mem + (base + runs[0].offset);
      switch (runs[0].bytes) {
        case 4:
          SingleRunItems<kPack, 4>(m, stream, ext, items);
          break;
        case 8:
          SingleRunItems<kPack, 8>(m, stream, ext, items);
          break;
        case 12:
          SingleRunItems<kPack, 12>(m, stream, ext, items);
          break;
        case 16:
          SingleRunItems<kPack, 16>(m, stream, ext, items);
          break;
        default:
          for (int64_t i = 0; i < items; ++i) {
            copy(mem + (base + i * ext + runs[0].offset), stream + i * size_,
                 runs[0].bytes);
          }
          break;
      }
      stream += items * size_;
      base += items * ext;
    } else {
      for (int64_t i = 0; i < items; ++i, base += ext) {
        for (const TypeBlock& run : runs) {
          copy(mem + (base + run.offset), stream, run.bytes);
          stream += run.bytes;
        }
      }
    }
    bytes -= items * size_;
  }
  // A trailing partial item.
  for (size_t idx = 0; bytes > 0; ++idx) {
    const TypeBlock& run = runs[idx];
    const int64_t n = std::min(run.bytes, bytes);
    copy(mem + (base + run.offset), stream, n);
    stream += n;
    bytes -= n;
  }
}

void Datatype::Pack(const void* buf, int64_t count, void* out) const {
  if (count < 0) Die("Pack: count < 0");
  PackRange(buf, 0, count * size_, out);
}

void Datatype::Unpack(const void* in, int64_t bytes, void* buf,
                      int64_t count) const {
  int64_t total = 0;
  if (count < 0 || bytes < 0 || !CheckedMul(count, size_, &total) ||
      bytes > total) {
    Die("Unpack: bytes must be in [0, count * size()]");
  }
  UnpackRange(in, 0, bytes, buf);
}

void Datatype::PackRange(const void* buf, int64_t first, int64_t bytes,
                         void* out) const {
  if (first < 0 || bytes < 0) Die("PackRange: negative range");
  Transfer<true>(const_cast<char*>(static_cast<const char*>(buf)),
                 static_cast<char*>(out), first, bytes);
}

void Datatype::UnpackRange(const void* in, int64_t first, int64_t bytes,
                           void* buf) const {
  if (first < 0 || bytes < 0) Die("UnpackRange: negative range");
  Transfer<false>(static_cast<char*>(buf),
                  const_cast<char*>(static_cast<const char*>(in)), first,
                  bytes);
}

int64_t Datatype::ElementBytes(int64_t elements) const {
  if (elements <= 0 || size_ == 0 || element_count_ == 0) return 0;
  if (uniform_basic_ != MPI_DATATYPE_NULL)
    return elements * Predefined(uniform_basic_)->size();
  int64_t bytes = (elements / element_count_) * size_;
  int64_t rest = elements % element_count_;
  // Whole elements group by group, as CountElements reads them.
  const std::vector<TypeBlock>& blocks = *blocks_;
  size_t i = 0;
  while (rest > 0 && i < blocks.size()) {
    const MPI_Datatype basic = blocks[i].basic;
    int64_t group = 0;
    for (; i < blocks.size() && blocks[i].basic == basic; ++i)
      group += blocks[i].bytes;
    const int64_t esize = Predefined(basic)->size();
    const int64_t take = std::min(group / esize, rest);
    bytes += take * esize;
    rest -= take;
  }
  return bytes;
}

int64_t Datatype::CountElements(int64_t bytes) const {
  if (bytes <= 0 || size_ == 0) return 0;
  if (uniform_basic_ != MPI_DATATYPE_NULL) {
    const int64_t esize = Predefined(uniform_basic_)->size();
    return bytes % esize == 0 ? bytes / esize : -1;
  }
  int64_t n = (bytes / size_) * element_count_;
  int64_t rest = bytes % size_;
  // The stream of one item is a sequence of groups of consecutive blocks of
  // one basic type; each group holds whole elements.
  const std::vector<TypeBlock>& blocks = *blocks_;
  size_t i = 0;
  while (rest > 0 && i < blocks.size()) {
    const MPI_Datatype basic = blocks[i].basic;
    int64_t group = 0;
    for (; i < blocks.size() && blocks[i].basic == basic; ++i) {
      group += blocks[i].bytes;
    }
    const int64_t esize = Predefined(basic)->size();
    const int64_t take = std::min(group, rest);
    if (take % esize != 0) return -1;
    n += take / esize;
    rest -= take;
  }
  return n;
}

}  // namespace rondo::nmad::mpi
