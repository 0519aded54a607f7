// Datatype: an immutable MPI datatype, its flattened type map, and pack and
// unpack between a user buffer and a contiguous byte stream.
//
// Why: every send, receive and collective with a derived datatype goes
// through Pack()/Unpack(), and every reduction through the element view
// (blocks(), uniform_basic()), so the type map is flattened once, when the
// type is built, into a list of byte runs in type-map order. Adjacent runs
// that touch in memory are merged, so MPI_Type_contiguous(1000, MPI_INT) is
// one block, and packing `count` items of a contiguous type is one memcpy.
//
// Ownership: a Datatype is shared through std::shared_ptr<const Datatype>.
// The MPI layer's handle table holds one reference; a request in flight
// holds another, so MPI_Type_free on a type in use is harmless. A derived
// type keeps its constructor's old types alive (for MPI_Type_get_contents).
// The predefined types live in a table built on first use and never freed;
// they are shared too (Predefined(h)->shared_from_this() works).
//
// Thread safety: a Datatype never changes after construction, so every const
// member function may be called from any thread concurrently (progress
// threads, callbacks, user threads). Names follow the same rule: a name
// change makes a renamed copy (WithName()) that the handle table swaps in.
//
// Bounds follow the MPI-3.1 rules (§4.1.6-4.1.7): without explicit bounds,
// lb is the lowest data displacement and ub the highest data end rounded up
// so that the extent is a multiple of the largest alignment of the basic
// types (x86_64 gcc alignments). MPI_Type_create_resized sets explicit
// ("sticky") bounds that every type built from it inherits: its lb is the
// lowest lb of the copies of resized types, its ub the highest ub, and no
// alignment padding applies. Types with no data and no explicit bounds have
// lb = ub = 0. true_lb/true_extent always describe the data only (0 and 0
// when there is none). Negative extents are refused (MPI_ERR_ARG), so the
// items of a buffer always follow each other at increasing addresses.
//
// Limits: the flattened type map of one item may hold at most kMaxBlocks
// blocks (MPI_ERR_NO_MEM otherwise); sizes and displacements are int64_t and
// every constructor refuses arithmetic overflow (MPI_ERR_ARG).
#ifndef RONDO_NMAD_MPI_DATATYPE_H_
#define RONDO_NMAD_MPI_DATATYPE_H_

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rondo::nmad::mpi {

namespace internal {
class TypeBuilder;
}  // namespace internal

// One contiguous run of data bytes of one item, relative to the start of the
// item (the address the user passes, so offsets may be negative). All the
// run's bytes belong to elements of one predefined type `basic`. A pair type
// (MPI_2INT, MPI_DOUBLE_INT, ...) counts as one basic element, so MAXLOC and
// MINLOC see whole pairs: its value and its int are consecutive in type-map
// order (MPI_SHORT_INT, whose C struct has a hole, gives two blocks).
struct TypeBlock {
  int64_t offset = 0;
  int64_t bytes = 0;
  MPI_Datatype basic = MPI_DATATYPE_NULL;
};

inline bool operator==(const TypeBlock& a, const TypeBlock& b) {
  return a.offset == b.offset && a.bytes == b.bytes && a.basic == b.basic;
}

// Most blocks the flattened type map of one item may have (24 bytes each).
inline constexpr int64_t kMaxBlocks = int64_t{1} << 26;

class Datatype : public std::enable_shared_from_this<Datatype> {
 public:
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

  // ---- Layout ----
  // Bytes of data of one item (MPI_Type_size).
  int64_t size() const { return size_; }
  // MPI_Type_get_extent: item i of a buffer starts at buf + i * extent().
  int64_t lb() const { return lb_; }
  int64_t extent() const { return ub_ - lb_; }
  int64_t ub() const { return ub_; }
  // MPI_Type_get_true_extent: the bytes the data of one item occupies.
  int64_t true_lb() const { return true_lb_; }
  int64_t true_extent() const { return true_ub_ - true_lb_; }
  int64_t true_ub() const { return true_ub_; }
  // Largest alignment of the basic types (1 for types without data).
  int64_t alignment() const { return alignment_; }
  // True if the bounds come from MPI_Type_create_resized (directly or from a
  // type built from a resized one) rather than from the data.
  bool explicit_bounds() const { return explicit_bounds_; }

  // True when `count` items are one contiguous run of count * size() bytes
  // starting at buf + true_lb(): size() == 0, or the data of one item is the
  // single run [true_lb, true_lb + size) and extent() == size(). Mixed basic
  // types may form that run (a struct {int; float} without holes is
  // contiguous although blocks() has two blocks).
  bool is_contiguous() const { return contiguous_; }

  // The flattened type map of one item, in type-map order (the order of the
  // packed stream); adjacent blocks of the same basic type that touch in
  // memory are merged.
  const std::vector<TypeBlock>& blocks() const { return *blocks_; }
  // The predefined type all elements share (a pair type counts as one), or
  // MPI_DATATYPE_NULL if they mix basic types. A type without data reports
  // the common basic type of its constructor's old types, so
  // Contiguous(0, MPI_INT) reports MPI_INT.
  MPI_Datatype uniform_basic() const { return uniform_basic_; }
  // Basic elements of one item (a pair counts as one element).
  int64_t element_count() const { return element_count_; }

  // ---- Identity and envelope (MPI_Type_get_envelope / get_contents) ----
  bool is_predefined() const { return handle_ != MPI_DATATYPE_NULL; }
  // The predefined handle (MPI_INT, ...), MPI_DATATYPE_NULL for derived types.
  MPI_Datatype handle() const { return handle_; }
  // MPI_Type_get_name: "MPI_INT", ... for predefined types, "" for a new
  // derived type until named.
  const std::string& name() const { return name_; }
  // MPI_COMBINER_NAMED for predefined types, else the constructor's.
  int combiner() const { return envelope_->combiner; }
  int num_integers() const {
    return static_cast<int>(envelope_->integers.size());
  }
  int num_addresses() const {
    return static_cast<int>(envelope_->addresses.size());
  }
  int num_datatypes() const {
    return static_cast<int>(envelope_->datatypes.size());
  }
  // The constructor's arguments in MPI_Type_get_contents order.
  const std::vector<int>& integers() const { return envelope_->integers; }
  const std::vector<MPI_Aint>& addresses() const {
    return envelope_->addresses;
  }
  const std::vector<std::shared_ptr<const Datatype>>& datatypes() const {
    return envelope_->datatypes;
  }

  // MPI_Type_set_name: a copy of this type (sharing its type map, envelope
  // and predefined handle) named `name`, cut to MPI_MAX_OBJECT_NAME - 1
  // characters. The handle table replaces its entry with the copy; requests
  // in flight keep the old object. Any thread.
  std::shared_ptr<const Datatype> WithName(std::string_view name) const;

  // ---- Pack and unpack ----
  // All of them: `buf` is the user's buffer (item i at buf + i * extent()),
  // the packed stream holds the items' data back to back in type-map order
  // (count * size() bytes). The caller guarantees that the buffers are
  // large enough and that the user buffer and the stream do not overlap.
  // Any thread; no allocation.

  // Writes the count * size() bytes of `count` items to `out`.
  void Pack(const void* buf, int64_t count, void* out) const;
  // Unpacks the first `bytes` bytes of a packed stream of `count` items
  // into buf; bytes < count * size() (a truncated receive) unpacks the
  // leading items and as much of the next one as the bytes cover. Aborts if
  // bytes > count * size() (the caller computes truncation).
  void Unpack(const void* in, int64_t bytes, void* buf, int64_t count) const;
  // Segmented forms, for pipelined sends and receives: pack stream bytes
  // [first, first + bytes) of the items at buf into out[0, bytes), and
  // unpack in[0, bytes) as stream bytes [first, first + bytes) into buf.
  void PackRange(const void* buf, int64_t first, int64_t bytes,
                 void* out) const;
  void UnpackRange(const void* in, int64_t first, int64_t bytes,
                   void* buf) const;

  // The memory `count` items touch: [buf + true_lb(), buf + true_lb() +
  // SpanBytes(count)), i.e. (count - 1) * extent() + true_extent(), and 0
  // when count == 0 or size() == 0. A reduction temporary of SpanBytes
  // bytes at `tmp` is used as the buffer tmp - true_lb().
  int64_t SpanBytes(int64_t count) const;

  // MPI_Get_elements: the basic elements (pairs count once) in the first
  // `bytes` bytes of a packed stream of this type, or -1 if `bytes` ends
  // inside a basic element.
  int64_t CountElements(int64_t bytes) const;
  // Its inverse (MPI_Status_set_elements): the bytes of the first
  // `elements` basic elements (>= 0) of a packed stream of this type.
  int64_t ElementBytes(int64_t elements) const;

 private:
  friend class internal::TypeBuilder;

  struct Envelope {
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> integers;
    std::vector<MPI_Aint> addresses;
    std::vector<std::shared_ptr<const Datatype>> datatypes;
  };

  Datatype() = default;
  // A copy with the same layout and envelope (shares the vectors).
  std::shared_ptr<Datatype> CloneLayout() const;

  template <bool kPack>
  void Transfer(char* mem, char* stream, int64_t first, int64_t bytes) const;

  int64_t size_ = 0;
  int64_t lb_ = 0;
  int64_t ub_ = 0;
  int64_t true_lb_ = 0;
  int64_t true_ub_ = 0;
  int64_t alignment_ = 1;
  int64_t element_count_ = 0;
  bool explicit_bounds_ = false;
  bool contiguous_ = true;
  MPI_Datatype uniform_basic_ = MPI_DATATYPE_NULL;
  MPI_Datatype handle_ = MPI_DATATYPE_NULL;
  std::string name_;
  // Per basic type (blocks_) and, for pack/unpack, merged regardless of
  // basic type (runs_, the same object as blocks_ when nothing more
  // merges), with run_starts_[i] = stream offset of runs_[i] in an item.
  std::shared_ptr<const std::vector<TypeBlock>> blocks_;
  std::shared_ptr<const std::vector<TypeBlock>> runs_;
  std::shared_ptr<const std::vector<int64_t>> run_starts_;
  std::shared_ptr<const Envelope> envelope_;
};

// The predefined types by handle (index 0, MPI_DATATYPE_NULL, is null),
// built once (thread-safe) and alive until exit.
const Datatype* const* PredefinedPointers();

// The predefined type for `handle` (MPI_CHAR .. MPI_LONG_DOUBLE_INT), or
// nullptr. Inline: every send and receive looks its type up here, and the
// call into datatype.cc (its own guard of the table's construction) was 18
// instructions of each (docs/performance.md).
inline const Datatype* Predefined(MPI_Datatype handle) {
  if (handle <= MPI_DATATYPE_NULL ||
      handle > RONDO_MPI_LAST_PREDEFINED_DATATYPE) [[unlikely]]
    return nullptr;
  static const Datatype* const* const table = PredefinedPointers();
  return table[handle];
}

// A constructor's outcome: `type` on success (error_class == MPI_SUCCESS),
// else error_class is MPI_ERR_COUNT (negative count), MPI_ERR_ARG (bad block
// length, extent, overflow, null array), MPI_ERR_TYPE (a null old type) or
// MPI_ERR_NO_MEM (more than kMaxBlocks blocks), and `error` names the MPI
// function, the argument, its value and what is allowed, e.g.
// "MPI_Type_vector: count = -1 (must be >= 0)".
struct TypeResult {
  std::shared_ptr<const Datatype> type;
  int error_class = MPI_SUCCESS;
  std::string error;

  bool ok() const { return error_class == MPI_SUCCESS; }
};

// Constructors mirroring MPI-3.1 §4.1.2 (array arguments may be null only
// when count == 0). Any thread; the new type shares ownership of `old`.
// Cost: proportional to the blocks of the new type.
TypeResult Contiguous(int count, const Datatype& old);
TypeResult Vector(int count, int blocklength, int stride, const Datatype& old);
TypeResult Hvector(int count, int blocklength, MPI_Aint stride,
                   const Datatype& old);
TypeResult Indexed(int count, const int blocklengths[],
                   const int displacements[], const Datatype& old);
TypeResult Hindexed(int count, const int blocklengths[],
                    const MPI_Aint displacements[], const Datatype& old);
TypeResult IndexedBlock(int count, int blocklength, const int displacements[],
                        const Datatype& old);
// MPI_Type_create_hindexed_block: `count` blocks of `blocklength` old items
// at byte displacements[i].
TypeResult HindexedBlock(int count, int blocklength,
                         const MPI_Aint displacements[], const Datatype& old);
// MPI_Type_create_subarray (MPI-4.0 §5.1.3): the subsizes[] block starting
// at starts[] of an ndims-dimensional array of sizes[] old items, stored in
// `order` (MPI_ORDER_C: the last dimension varies fastest; MPI_ORDER_FORTRAN:
// the first). As the standard defines it, the type is resized to the whole
// array: lb = 0 and extent = prod(sizes) * old.extent() (explicit bounds),
// whatever the old type's bounds; the type map lists the elements in array
// order. Refused: ndims < 1 (MPI_ERR_COUNT), sizes[i] < 1, subsizes[i]
// outside 1..sizes[i], starts[i] outside 0..sizes[i] - subsizes[i], another
// order, NULL arrays (MPI_ERR_ARG).
TypeResult Subarray(int ndims, const int sizes[], const int subsizes[],
                    const int starts[], int order, const Datatype& old);
TypeResult Struct(int count, const int blocklengths[],
                  const MPI_Aint displacements[],
                  const Datatype* const types[]);
TypeResult Resized(const Datatype& old, MPI_Aint lb, MPI_Aint extent);
// A new derived type with old's type map (combiner MPI_COMBINER_DUP, no
// name, not predefined even when old is).
TypeResult Dup(const Datatype& old);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_DATATYPE_H_
