// Reduction operations: which predefined MPI_Op applies to which datatype,
// the predefined reductions themselves, and calls into user operations.
//
// Why: every reduction step of a collective (nmad/coll kReduce steps) and
// MPI_Reduce_local ends here. The validity table (CheckOp) is checked once at
// the MPI call, so the data path (ApplyPredefined / Apply) only dispatches:
// one switch per call, then a tight loop per block of elements that the
// compiler can vectorise.
//
// Semantics: every function computes inout[i] = in[i] (op) inout[i] over
// `count` items of `type` laid out with its extent (item i at
// buf + i * type.extent(), only the type's data bytes are read or written).
// `in` is the left operand (MPI's invec): for a non-commutative user op the
// caller passes the operand of the lower ranks as `in`. Derived types are
// reduced element by element through their flattened type map
// (Datatype::blocks()); a predefined op accepts a derived type whose
// elements all have one basic type (Datatype::uniform_basic()) valid for
// the op. Signed integer arithmetic wraps (two's complement), logical ops
// yield 0 or 1, MAXLOC/MINLOC keep the lower index on ties (MPI-3.1
// §5.9.4), complex PROD uses the C99 Annex G product.
//
// Thread safety: no state; every function may be called from any thread
// (progress threads, callbacks) concurrently, on distinct inout buffers.
#ifndef RONDO_NMAD_MPI_OP_H_
#define RONDO_NMAD_MPI_OP_H_

#include <mpi.h>

#include <cstdint>
#include <string>

#include "nmad/mpi/datatype.h"

namespace rondo::nmad::mpi {

// An operation as the MPI layer's handle table stores it: either a
// predefined op (`handle` in MPI_MAX .. MPI_NO_OP, fn unused) or a user
// function from MPI_Op_create.
struct Op {
  MPI_User_function* fn = nullptr;
  bool commutative = true;
  bool predefined = false;
  MPI_Op handle = MPI_OP_NULL;
};

// True for MPI_MAX .. MPI_NO_OP.
bool IsPredefinedOp(MPI_Op op);
// The Op record of a predefined op (predefined, commutative).
Op PredefinedOp(MPI_Op op);
// MPI_Op_commutative for predefined ops: all of them are commutative.
// False for any other handle (the handle table knows about user ops).
bool IsCommutative(MPI_Op op);
// "MPI_SUM", ...; "MPI_OP_NULL" for MPI_OP_NULL and "a user-defined op" for
// any other handle. Static storage.
const char* OpName(MPI_Op op);

// Validity of a predefined op on a datatype (MPI-3.1 §5.9.2):
//   MPI_MAX, MPI_MIN        C integer, floating point, multi-language
//                           (MPI_AINT, MPI_OFFSET, MPI_COUNT)
//   MPI_SUM, MPI_PROD       the same and complex
//   MPI_LAND, LOR, LXOR     C integer and logical (MPI_C_BOOL)
//   MPI_BAND, BOR, BXOR     C integer, byte, multi-language
//   MPI_MAXLOC, MPI_MINLOC  the pair types (MPI_2INT, MPI_DOUBLE_INT, ...)
//   MPI_REPLACE, MPI_NO_OP  any type, including mixed derived types
// C integer means signed/unsigned char, short, int, long, long long and the
// intN_t/uintN_t types; MPI_WCHAR and MPI_PACKED are not numbers. Extension:
// MPI_CHAR counts as a C integer (the platform's char, wrapping), because
// Open MPI and MPICH reduce it so and benchmark suites rely on it; MAXLOC and
// MINLOC stay refused on it, as in both.
// A derived type is checked through its uniform_basic(). Returns
// MPI_SUCCESS, or MPI_ERR_OP and sets *error (if non-null) to a message
// naming the op, the type and the allowed types, e.g. "MPI_BAND is not
// defined for MPI_FLOAT; allowed types: C integer (MPI_CHAR included), byte
// and multi-language (MPI_AINT, MPI_OFFSET, MPI_COUNT) types". Any thread.
int CheckOp(MPI_Op op, const Datatype& type, std::string* error);

// Applies a predefined op; CheckOp(op, type) must have succeeded (aborts
// otherwise, as a caller bug). `in` and `inout` must not partially overlap
// (MPI_REPLACE tolerates in == inout). Any thread; no allocation.
void ApplyPredefined(MPI_Op op, const Datatype& type, const void* in,
                     void* inout, int64_t count);

// The same on packed data (Datatype::Pack() output): `elements` elements
// of the predefined type `basic` back to back, size() bytes each; a pair is
// its value immediately followed by its int (MPI_DOUBLE_INT: 12 bytes, not
// the 16 of its C struct). This is how a reduction of a derived type whose
// uniform_basic() is `basic` runs on packed buffers: for a pair type, do not
// use ApplyPredefined(op, *Predefined(basic), ...) on packed data, which
// expects C structs at the extent. Same preconditions and threading.
void ApplyPredefinedPacked(MPI_Op op, MPI_Datatype basic, const void* in,
                           void* inout, int64_t elements);

// Applies `op`: predefined ones through ApplyPredefined, user functions as
// fn(in, inout, &len, &type_handle) in calls of at most INT_MAX items
// (type_handle is the user's handle of `type`, passed through untouched).
// Runs the user function on the calling thread.
void Apply(const Op& op, MPI_Datatype type_handle, const Datatype& type,
           const void* in, void* inout, int64_t count);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_OP_H_
