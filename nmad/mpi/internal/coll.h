// Collective calls of the MadMPI layer, shared with the communicator code
// (which needs an allgather to split communicators) and with the
// neighbourhood collectives (neighbor.cc), which build their own schedules
// and run them through RunSchedule like every other collective.
#ifndef RONDO_NMAD_MPI_INTERNAL_COLL_H_
#define RONDO_NMAD_MPI_INTERNAL_COLL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "nmad/coll/executor.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {

using ReqPtr = std::shared_ptr<MpiRequest>;

// How a collective call runs: blocking; nonblocking (a new request); or
// the init of a persistent collective (an inactive request that MPI_Start
// starts).
struct CollMode {
  enum Kind : uint8_t { kBlocking, kNonblocking, kInit };
  Kind kind = kBlocking;
  bool blocking() const { return kind == kBlocking; }
};
inline constexpr CollMode kBlockingCall{CollMode::kBlocking};
inline constexpr CollMode kNonblockingCall{CollMode::kNonblocking};
inline constexpr CollMode kInitCall{CollMode::kInit};

// The request of a collective call: a blocking call reuses its thread's
// (no allocation once warm), a nonblocking one gets a new one, an init a
// persistent one.
ReqPtr NewCollRequest(CollMode mode);

// The communicator of a collective call, and for a nonblocking call or an
// init a request pointer that is not NULL; or null with *err set.
CommPtr EnterColl(State& st, MPI_Comm c, CollMode mode, MPI_Request* request,
                  const char* fn, int* err);

// counts[0..n) >= 0 and counts (and displs when dname is not null) not
// NULL; the error names the array and the entry.
bool CheckCounts(const int* counts, const int* displs, int n,
                 const Comm& comm, const char* fn, const char* cname,
                 const char* dname, int* err);

// A staging buffer of `bytes` owned by the request.
inline uint8_t* Stage(MpiRequest& r, size_t bytes) {
  r.stagings.push_back(std::make_unique<uint8_t[]>(bytes ? bytes : 1));
  return r.stagings.back().get();
}

// Packs input data into a staging buffer now and, for a persistent
// collective, again at every MPI_Start (the application changes the data
// between starts; the staging buffers stay). `pack` captures by value.
template <typename Pack>
void PackInput(MpiRequest& r, Pack&& pack) {
  pack();
  if (r.persistent)
    r.persistent->on_start.emplace_back(std::forward<Pack>(pack));
}

// Runs a prepared schedule as the collective call `fn` on `comm` with the
// collective sequence number `seq` (taken by the caller on every rank):
// blocking, waits and returns the result; nonblocking, starts it and
// returns the request in *out; init, registers the inactive persistent
// request in *out (MPI_Start starts it).
int RunSchedule(State& st, const CommPtr& comm, ReqPtr r,
                std::shared_ptr<const coll::PreparedSchedule> prepared,
                uint64_t seq, const void* send, void* recv,
                coll::ReduceFn reduce, CollMode mode, MPI_Request* out,
                const char* fn);

// A blocking allgather of `bytes` per rank on `comm` (recv holds size *
// bytes), through the collective engine. For communicator creation.
int InternalAllgather(State& st, const CommPtr& comm, const void* send,
                      void* recv, size_t bytes, const char* fn);

// The split-tree level (nmad/coll/split.h) the next nonblocking tree
// collective on `comm` will use, constant-size (bcast, reduce, allreduce) or
// size-doubling (gather, scatter); MPIX_SPLIT_OFF when it is not split.
// Auto mode: the model's S with N = comm.size and P = the node's dedicated
// communication cores; off when P = 0.
int ResolveCommSplit(State& st, const Comm& comm, bool doubling);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_COLL_H_
