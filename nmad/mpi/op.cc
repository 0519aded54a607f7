// The predefined reductions: the validity table, one kernel per (op, C
// type), and the walk over a derived type's blocks.
#include "nmad/mpi/op.h"

#include <climits>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "topology/base/log.h"

namespace rondo::nmad::mpi {
namespace {

// A caller bug (CheckOp was skipped): abort with a message.
[[noreturn]] void Die(const char* what) {
  RONDO_LOG_FATAL("nmad/mpi/op: {}", what);
}

// ---- The validity table (MPI-3.1 §5.9.2) ----

enum class Category {
  kNone,      // MPI_WCHAR, MPI_PACKED: no arithmetic
  kCInteger,  // char, signed/unsigned char, short, int, long, long long, intN_t
  kFloating,  // float, double, long double
  kComplex,   // MPI_C_*COMPLEX
  kLogical,   // MPI_C_BOOL
  kByte,      // MPI_BYTE
  kMulti,     // MPI_AINT, MPI_OFFSET, MPI_COUNT
  kPair,      // MPI_FLOAT_INT .. MPI_LONG_DOUBLE_INT
};

Category CategoryOf(MPI_Datatype basic) {
  switch (basic) {
    // MPI_CHAR is text for the standard, but Open MPI and MPICH reduce it as
    // the C type char with every op of the C integers, and benchmark suites
    // (OSU's) reduce it by default: an extension (docs/mpi.md).
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_UNSIGNED_CHAR:
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT:
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_LONG:
    case MPI_UNSIGNED_LONG:
    case MPI_LONG_LONG_INT:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT8_T:
    case MPI_INT16_T:
    case MPI_INT32_T:
    case MPI_INT64_T:
    case MPI_UINT8_T:
    case MPI_UINT16_T:
    case MPI_UINT32_T:
    case MPI_UINT64_T:
      return Category::kCInteger;
    case MPI_FLOAT:
    case MPI_DOUBLE:
    case MPI_LONG_DOUBLE:
      return Category::kFloating;
    case MPI_C_FLOAT_COMPLEX:
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_C_LONG_DOUBLE_COMPLEX:
      return Category::kComplex;
    case MPI_C_BOOL:
      return Category::kLogical;
    case MPI_BYTE:
      return Category::kByte;
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
      return Category::kMulti;
    case MPI_FLOAT_INT:
    case MPI_DOUBLE_INT:
    case MPI_LONG_INT:
    case MPI_2INT:
    case MPI_SHORT_INT:
    case MPI_LONG_DOUBLE_INT:
      return Category::kPair;
    default:
      return Category::kNone;
  }
}

bool Allowed(MPI_Op op, Category c) {
  switch (op) {
    case MPI_MAX:
    case MPI_MIN:
      return c == Category::kCInteger || c == Category::kFloating ||
             c == Category::kMulti;
    case MPI_SUM:
    case MPI_PROD:
      return c == Category::kCInteger || c == Category::kFloating ||
             c == Category::kComplex || c == Category::kMulti;
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
      return c == Category::kCInteger || c == Category::kLogical;
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR:
      return c == Category::kCInteger || c == Category::kByte ||
             c == Category::kMulti;
    case MPI_MAXLOC:
    case MPI_MINLOC:
      return c == Category::kPair;
    case MPI_REPLACE:
    case MPI_NO_OP:
      return true;
    default:
      return false;
  }
}

const char* AllowedText(MPI_Op op) {
  switch (op) {
    case MPI_MAX:
    case MPI_MIN:
      return "C integer (MPI_CHAR included), floating point and "
             "multi-language (MPI_AINT, MPI_OFFSET, MPI_COUNT) types";
    case MPI_SUM:
    case MPI_PROD:
      return "C integer (MPI_CHAR included), floating point, complex and "
             "multi-language (MPI_AINT, MPI_OFFSET, MPI_COUNT) types";
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
      return "C integer (MPI_CHAR included) and logical (MPI_C_BOOL) types";
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR:
      return "C integer (MPI_CHAR included), byte and multi-language "
             "(MPI_AINT, MPI_OFFSET, MPI_COUNT) types";
    case MPI_MAXLOC:
    case MPI_MINLOC:
      return "the pair types MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, "
             "MPI_2INT, MPI_SHORT_INT and MPI_LONG_DOUBLE_INT";
    default:
      return "any datatype";
  }
}

std::string Describe(const Datatype& type) {
  if (type.is_predefined()) return type.name();
  std::string s = "a derived datatype";
  if (!type.name().empty()) s += " '" + type.name() + "'";
  const Datatype* basic = Predefined(type.uniform_basic());
  if (basic != nullptr) {
    s += " of " + basic->name() + " elements";
  } else {
    s += " whose elements mix several basic types";
  }
  return s;
}

// ---- Element operations: b = a (op) b, a from in, b from inout ----

// Wrapping integer arithmetic: in an unsigned type at least as wide as int
// (so neither promotion nor signed overflow is involved).
template <typename T>
using Wide = std::make_unsigned_t<std::common_type_t<T, unsigned>>;

template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;

struct MaxF {
  template <typename T>
  static T Do(T a, T b) {
    return b < a ? a : b;
  }
};
struct MinF {
  template <typename T>
  static T Do(T a, T b) {
    return a < b ? a : b;
  }
};
struct SumF {
  template <typename T>
  static T Do(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
    } else {
      return a + b;
    }
  }
};
struct ProdF {
  template <typename T>
  static T Do(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
    } else {
      return a * b;
    }
  }
};
struct LandF {
  template <typename T>
  static T Do(T a, T b) {
    return static_cast<T>((a != 0) & (b != 0));
  }
};
struct LorF {
  template <typename T>
  static T Do(T a, T b) {
    return static_cast<T>((a != 0) | (b != 0));
  }
};
struct LxorF {
  template <typename T>
  static T Do(T a, T b) {
    return static_cast<T>((a != 0) != (b != 0));
  }
};
struct BandF {
  template <typename T>
  static T Do(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct BorF {
  template <typename T>
  static T Do(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct BxorF {
  template <typename T>
  static T Do(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};

// n elements of T packed back to back (a block of a type's map, or a
// contiguous buffer). memcpy keeps unaligned blocks (hindexed types) legal;
// for aligned data it compiles to plain, vectorisable loads and stores.
using Kernel = void (*)(const char* in, char* inout, int64_t n);

template <typename T, typename F>
inline void Element(const char* __restrict in, char* __restrict inout,
                    int64_t i) {
  constexpr int64_t kSize = sizeof(T);
  T a;
  T b;
  std::memcpy(&a, in + i * kSize, sizeof(T));
  std::memcpy(&b, inout + i * kSize, sizeof(T));
  b = F::Do(a, b);
  std::memcpy(inout + i * kSize, &b, sizeof(T));
}

// Chunks of a fixed element count: at -O2 gcc vectorises only loops whose
// trip count is a known multiple of the vector width, so the body is a
// 64-byte chunk and the tail is scalar.
template <typename T, typename F>
void Run(const char* __restrict in, char* __restrict inout, int64_t n) {
  constexpr int64_t kChunk = sizeof(T) >= 64 ? 1 : 64 / sizeof(T);
  int64_t i = 0;
  for (; i + kChunk <= n; i += kChunk) {
    for (int64_t j = 0; j < kChunk; ++j) Element<T, F>(in, inout, i + j);
  }
  for (; i < n; ++i) Element<T, F>(in, inout, i);
}

template <typename T>
Kernel KernelFor(MPI_Op op) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case MPI_MAX:
        return &Run<T, MaxF>;
      case MPI_MIN:
        return &Run<T, MinF>;
      case MPI_SUM:
        return &Run<T, SumF>;
      case MPI_PROD:
        return &Run<T, ProdF>;
      case MPI_LAND:
        return &Run<T, LandF>;
      case MPI_LOR:
        return &Run<T, LorF>;
      case MPI_LXOR:
        return &Run<T, LxorF>;
      case MPI_BAND:
        return &Run<T, BandF>;
      case MPI_BOR:
        return &Run<T, BorF>;
      case MPI_BXOR:
        return &Run<T, BxorF>;
      default:
        return nullptr;
    }
  } else if constexpr (kIsComplex<T>) {
    switch (op) {
      case MPI_SUM:
        return &Run<T, SumF>;
      case MPI_PROD:
        return &Run<T, ProdF>;
      default:
        return nullptr;
    }
  } else {
    switch (op) {
      case MPI_MAX:
        return &Run<T, MaxF>;
      case MPI_MIN:
        return &Run<T, MinF>;
      case MPI_SUM:
        return &Run<T, SumF>;
      case MPI_PROD:
        return &Run<T, ProdF>;
      default:
        return nullptr;
    }
  }
}

// The kernel of a scalar basic type, or nullptr.
Kernel ScalarKernel(MPI_Op op, MPI_Datatype basic) {
  switch (basic) {
    // The platform's char: signed on x86-64, unsigned on AArch64, as the C
    // compilers of Open MPI and MPICH see it.
    case MPI_CHAR:
      return KernelFor<char>(op);
    case MPI_SIGNED_CHAR:
      return KernelFor<signed char>(op);
    // MPI_C_BOOL is read as a byte: a bool object holding anything but 0
    // or 1 must not be loaded as bool.
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_C_BOOL:
      return KernelFor<unsigned char>(op);
    case MPI_SHORT:
      return KernelFor<short>(op);
    case MPI_UNSIGNED_SHORT:
      return KernelFor<unsigned short>(op);
    case MPI_INT:
      return KernelFor<int>(op);
    case MPI_UNSIGNED:
      return KernelFor<unsigned>(op);
    case MPI_LONG:
      return KernelFor<long>(op);
    case MPI_UNSIGNED_LONG:
      return KernelFor<unsigned long>(op);
    case MPI_LONG_LONG_INT:
      return KernelFor<long long>(op);
    case MPI_UNSIGNED_LONG_LONG:
      return KernelFor<unsigned long long>(op);
    case MPI_FLOAT:
      return KernelFor<float>(op);
    case MPI_DOUBLE:
      return KernelFor<double>(op);
    case MPI_LONG_DOUBLE:
      return KernelFor<long double>(op);
    case MPI_INT8_T:
      return KernelFor<int8_t>(op);
    case MPI_INT16_T:
      return KernelFor<int16_t>(op);
    case MPI_INT32_T:
      return KernelFor<int32_t>(op);
    case MPI_INT64_T:
      return KernelFor<int64_t>(op);
    case MPI_UINT8_T:
      return KernelFor<uint8_t>(op);
    case MPI_UINT16_T:
      return KernelFor<uint16_t>(op);
    case MPI_UINT32_T:
      return KernelFor<uint32_t>(op);
    case MPI_UINT64_T:
      return KernelFor<uint64_t>(op);
    case MPI_AINT:
      return KernelFor<MPI_Aint>(op);
    case MPI_OFFSET:
      return KernelFor<MPI_Offset>(op);
    case MPI_COUNT:
      return KernelFor<MPI_Count>(op);
    case MPI_C_FLOAT_COMPLEX:
      return KernelFor<std::complex<float>>(op);
    case MPI_C_DOUBLE_COMPLEX:
      return KernelFor<std::complex<double>>(op);
    case MPI_C_LONG_DOUBLE_COMPLEX:
      return KernelFor<std::complex<long double>>(op);
    default:
      return nullptr;
  }
}

// ---- MAXLOC / MINLOC ----

// One pair: value and index addresses in `in` and `inout`. The standard's
// rule: the better value wins with its index; on equal values the lower
// index wins.
template <typename V>
void PairStep(bool is_max, const char* in_v, const char* in_i, char* io_v,
              char* io_i) {
  V a;
  V b;
  int ia;
  int ib;
  std::memcpy(&a, in_v, sizeof(V));
  std::memcpy(&b, io_v, sizeof(V));
  std::memcpy(&ia, in_i, sizeof(int));
  std::memcpy(&ib, io_i, sizeof(int));
  const bool in_wins = is_max ? b < a : a < b;
  if (in_wins) {
    std::memcpy(io_v, &a, sizeof(V));
    std::memcpy(io_i, &ia, sizeof(int));
  } else if (a == b && ia < ib) {
    std::memcpy(io_i, &ia, sizeof(int));
  }
}

// The C struct of a pair type (MPI-3.1 §5.9.4).
template <typename V>
struct Pair {
  V value;
  int index;
};

// Pairs every `stride` bytes, the index `index_at` bytes after the value:
// consecutive C structs (a predefined pair buffer) or a packed stream.
template <typename V>
void PairArray(bool is_max, const char* in, char* inout, int64_t n,
               int64_t stride, int64_t index_at) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = i * stride;
    PairStep<V>(is_max, in + at, in + at + index_at, inout + at,
                inout + at + index_at);
  }
}

// Pairs of a derived type: the value and the index are consecutive parts
// of the item's data in type-map order (a part never straddles blocks).
template <typename V>
void PairDerived(bool is_max, const Datatype& type, const char* in, char* inout,
                 int64_t count) {
  const std::vector<TypeBlock>& blocks = type.blocks();
  const int64_t ext = type.extent();
  for (int64_t item = 0; item < count; ++item) {
    const int64_t base = item * ext;
    size_t bi = 0;
    int64_t pos = blocks[0].offset;
    int64_t left = blocks[0].bytes;
    auto take = [&](int64_t n) {
      if (left == 0) {
        ++bi;
        pos = blocks[bi].offset;
        left = blocks[bi].bytes;
      }
      if (left < n) Die("a pair straddles two blocks of a derived type");
      const int64_t at = base + pos;
      pos += n;
      left -= n;
      return at;
    };
    for (int64_t e = 0; e < type.element_count(); ++e) {
      const int64_t v = take(sizeof(V));
      const int64_t ix = take(sizeof(int));
      PairStep<V>(is_max, in + v, in + ix, inout + v, inout + ix);
    }
  }
}

// `type` is null for a packed stream of `count` pairs.
template <typename V>
void ApplyPair(bool is_max, const Datatype* type, const char* in, char* inout,
               int64_t count) {
  if (type == nullptr) {
    constexpr int64_t kPacked = sizeof(V) + sizeof(int);
    PairArray<V>(is_max, in, inout, count, kPacked, sizeof(V));
  } else if (type->is_predefined()) {
    PairArray<V>(is_max, in, inout, count, type->extent(),
                 offsetof(Pair<V>, index));
  } else {
    PairDerived<V>(is_max, *type, in, inout, count);
  }
}

void ApplyLoc(MPI_Op op, MPI_Datatype basic, const Datatype* type,
              const char* in, char* inout, int64_t count) {
  const bool is_max = op == MPI_MAXLOC;
  switch (basic) {
    case MPI_FLOAT_INT:
      return ApplyPair<float>(is_max, type, in, inout, count);
    case MPI_DOUBLE_INT:
      return ApplyPair<double>(is_max, type, in, inout, count);
    case MPI_LONG_INT:
      return ApplyPair<long>(is_max, type, in, inout, count);
    case MPI_2INT:
      return ApplyPair<int>(is_max, type, in, inout, count);
    case MPI_SHORT_INT:
      return ApplyPair<short>(is_max, type, in, inout, count);
    case MPI_LONG_DOUBLE_INT:
      return ApplyPair<long double>(is_max, type, in, inout, count);
    default:
      Die("MAXLOC/MINLOC on a non-pair type");
  }
}

}  // namespace

bool IsPredefinedOp(MPI_Op op) { return op >= MPI_MAX && op <= MPI_NO_OP; }

Op PredefinedOp(MPI_Op op) {
  Op o;
  o.commutative = true;
  o.predefined = true;
  o.handle = op;
  return o;
}

bool IsCommutative(MPI_Op op) { return IsPredefinedOp(op); }

const char* OpName(MPI_Op op) {
  switch (op) {
    case MPI_OP_NULL:
      return "MPI_OP_NULL";
    case MPI_MAX:
      return "MPI_MAX";
    case MPI_MIN:
      return "MPI_MIN";
    case MPI_SUM:
      return "MPI_SUM";
    case MPI_PROD:
      return "MPI_PROD";
    case MPI_LAND:
      return "MPI_LAND";
    case MPI_BAND:
      return "MPI_BAND";
    case MPI_LOR:
      return "MPI_LOR";
    case MPI_BOR:
      return "MPI_BOR";
    case MPI_LXOR:
      return "MPI_LXOR";
    case MPI_BXOR:
      return "MPI_BXOR";
    case MPI_MAXLOC:
      return "MPI_MAXLOC";
    case MPI_MINLOC:
      return "MPI_MINLOC";
    case MPI_REPLACE:
      return "MPI_REPLACE";
    case MPI_NO_OP:
      return "MPI_NO_OP";
    default:
      return "a user-defined op";
  }
}

int CheckOp(MPI_Op op, const Datatype& type, std::string* error) {
  if (!IsPredefinedOp(op)) {
    if (error != nullptr) {
      *error = "op " + std::to_string(op) +
               " is not a predefined operation (MPI_MAX .. MPI_NO_OP)";
    }
    return MPI_ERR_OP;
  }
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_SUCCESS;
  if (Allowed(op, CategoryOf(type.uniform_basic()))) return MPI_SUCCESS;
  if (error != nullptr) {
    *error = std::string(OpName(op)) + " is not defined for " + Describe(type) +
             "; allowed types: " + AllowedText(op);
  }
  return MPI_ERR_OP;
}

void ApplyPredefined(MPI_Op op, const Datatype& type, const void* in,
                     void* inout, int64_t count) {
  if (op == MPI_NO_OP) return;
  if (count < 0) Die("ApplyPredefined: count < 0");
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(inout);
  if (op == MPI_REPLACE) {
    if (count == 0 || type.size() == 0 || src == dst) return;
    if (type.is_contiguous()) {
      std::memmove(dst + type.true_lb(), src + type.true_lb(),
                   static_cast<size_t>(count * type.size()));
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      const int64_t base = i * type.extent();
      for (const TypeBlock& b : type.blocks()) {
        std::memmove(dst + (base + b.offset), src + (base + b.offset),
                     static_cast<size_t>(b.bytes));
      }
    }
    return;
  }
  const MPI_Datatype basic = type.uniform_basic();
  const Category category = CategoryOf(basic);
  if (!IsPredefinedOp(op) || !Allowed(op, category)) {
    Die("ApplyPredefined: op not valid for the datatype (CheckOp skipped)");
  }
  if (count == 0 || type.size() == 0) return;
  if (category == Category::kPair) {
    ApplyLoc(op, basic, &type, src, dst, count);
    return;
  }
  const Kernel kernel = ScalarKernel(op, basic);
  if (kernel == nullptr) Die("ApplyPredefined: no kernel");
  const int64_t esize = Predefined(basic)->size();
  if (type.is_contiguous()) {
    kernel(src + type.true_lb(), dst + type.true_lb(),
           count * type.size() / esize);
    return;
  }
  const int64_t ext = type.extent();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t base = i * ext;
    for (const TypeBlock& b : type.blocks()) {
      kernel(src + (base + b.offset), dst + (base + b.offset), b.bytes / esize);
    }
  }
}

void ApplyPredefinedPacked(MPI_Op op, MPI_Datatype basic, const void* in,
                           void* inout, int64_t elements) {
  if (op == MPI_NO_OP) return;
  if (elements < 0) Die("ApplyPredefinedPacked: elements < 0");
  const Datatype* type = Predefined(basic);
  if (type == nullptr) Die("ApplyPredefinedPacked: basic is not predefined");
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(inout);
  if (elements == 0) return;
  if (op == MPI_REPLACE) {
    if (src != dst) {
      std::memmove(dst, src, static_cast<size_t>(elements * type->size()));
    }
    return;
  }
  const Category category = CategoryOf(basic);
  if (!IsPredefinedOp(op) || !Allowed(op, category)) {
    Die("ApplyPredefinedPacked: op not valid for the type (CheckOp skipped)");
  }
  if (category == Category::kPair) {
    ApplyLoc(op, basic, nullptr, src, dst, elements);
    return;
  }
  const Kernel kernel = ScalarKernel(op, basic);
  if (kernel == nullptr) Die("ApplyPredefinedPacked: no kernel");
  kernel(src, dst, elements);
}

void Apply(const Op& op, MPI_Datatype type_handle, const Datatype& type,
           const void* in, void* inout, int64_t count) {
  if (op.predefined) {
    ApplyPredefined(op.handle, type, in, inout, count);
    return;
  }
  if (op.fn == nullptr) Die("Apply: user op without a function");
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(inout);
  const int64_t ext = type.extent();
  while (count > 0) {
    const int chunk = count > INT_MAX ? INT_MAX : static_cast<int>(count);
    int len = chunk;  // the user function may write to it
    MPI_Datatype handle = type_handle;
    op.fn(const_cast<char*>(src), dst, &len, &handle);
    src += static_cast<int64_t>(chunk) * ext;
    dst += static_cast<int64_t>(chunk) * ext;
    count -= chunk;
  }
}

}  // namespace rondo::nmad::mpi
