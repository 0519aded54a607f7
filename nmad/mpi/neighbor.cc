// MadMPI neighbourhood collectives (MPI-3), blocking, nonblocking and
// persistent (MPI-4 _init): MPI_Neighbor_allgather(v) and
// MPI_Neighbor_alltoall(v,w) on cartesian, graph and distributed graph
// communicators.
//
// Each call checks its arguments, turns its blocks into the edges of the
// communicator's neighbourhood (Comm::neighbors, set with the topology in
// topo.cc) — the user's buffers for contiguous types, staging buffers packed
// and unpacked per block otherwise — builds a one-round schedule
// (nmad/coll/neighbor.h) and runs it like every other collective
// (RunSchedule): engine tasks that progress in the background for the
// nonblocking and persistent forms. Uniform calls (allgather, alltoall) on
// contiguous types reuse their prepared schedule from the communicator's
// cache, as the other collectives do, and once it is there skip the
// per-edge work altogether (CachedUniform).
#include <mpi.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "nmad/coll/executor.h"
#include "nmad/coll/neighbor.h"
#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/coll.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {
namespace {

// Cache keys of the neighbourhood schedules sit above coll::Collective's.
enum class NeighborKind : int {
  kAllgather = 1000,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
};

// One side of the exchange, one entry per edge: `counts[i]` items of
// `types[i]` at byte displacement `displs[i]` from `buf`.
struct Side {
  const void* buf = nullptr;
  std::vector<int> counts;
  std::vector<int64_t> displs;
  std::vector<TypePtr> types;
  // Every edge sends the same block (allgather's send side).
  bool shared = false;
};

// Uniform calls on contiguous types: the schedule depends on the block
// lengths and strides only.
struct Uniform {
  bool cacheable = false;
  uint64_t send_len = 0, send_stride = 0, recv_len = 0, recv_stride = 0;
};

uint64_t Len(const Side& s, size_t i) {
  return static_cast<uint64_t>(s.counts[i]) *
         static_cast<uint64_t>(s.types[i]->size());
}

bool AllContiguous(const Side& s) {
  return std::all_of(s.types.begin(), s.types.end(),
                     [](const TypePtr& t) { return t->is_contiguous(); });
}

// Edges of a contiguous side straight in the user's buffer: the base is the
// lowest block's first byte.
template <typename Buf>
Buf Direct(const Side& s, const std::vector<int>& peers,
           const std::vector<uint32_t>& tags,
           std::vector<coll::NeighborEdge>* edges) {
  int64_t lowest = 0;
  bool any = false;
  for (size_t i = 0; i < peers.size(); ++i) {
    if (peers[i] == MPI_PROC_NULL || Len(s, i) == 0) continue;
    const int64_t at = s.displs[i] + s.types[i]->true_lb();
    lowest = any ? std::min(lowest, at) : at;
    any = true;
  }
  for (size_t i = 0; i < peers.size(); ++i) {
    const int64_t at = s.displs[i] + s.types[i]->true_lb();
    const bool used = peers[i] != MPI_PROC_NULL && Len(s, i) > 0;
    edges->push_back({peers[i] == MPI_PROC_NULL ? -1 : peers[i], tags[i],
                      used ? static_cast<uint64_t>(at - lowest) : 0,
                      used ? Len(s, i) : 0});
  }
  auto* base = static_cast<uint8_t*>(const_cast<void*>(s.buf));
  return any ? static_cast<Buf>(base + lowest) : static_cast<Buf>(base);
}

ScheduleKey CacheKey(NeighborKind kind, const Uniform& u) {
  return {static_cast<int>(kind), 0, 0, u.recv_len, u.send_len, true, -1,
          u.send_stride, u.recv_stride};
}

// Where Direct() puts the base of a uniform contiguous side (block i at
// i * stride): the first byte of the lowest block that moves data, else
// the buffer itself.
template <typename Buf>
Buf UniformBase(Buf buf, const std::vector<int>& peers, uint64_t len,
                int64_t stride, int64_t true_lb) {
  if (len == 0) return buf;
  for (size_t i = 0; i < peers.size(); ++i)
    if (peers[i] != MPI_PROC_NULL) {
      auto* base = static_cast<uint8_t*>(const_cast<void*>(
          static_cast<const void*>(buf)));
      return static_cast<Buf>(base + static_cast<int64_t>(i) * stride +
                              true_lb);
    }
  return buf;
}

// The fast path of a uniform call on contiguous types whose schedule an
// earlier call prepared: no per-edge vectors, no schedule build (perf: the
// per-edge vectors and their frees were ~15% of a blocking 8-byte
// MPI_Neighbor_alltoall). False when the general path must run (not
// cached yet, a NULL buffer to report, a negative stride); true with *rc
// set otherwise.
bool CachedUniform(State& st, const CommPtr& comm, const void* sendbuf,
                   void* recvbuf, const TypePtr& stt, const TypePtr& rtt,
                   const Uniform& u, int64_t sstride, int64_t rstride,
                   NeighborKind kind, CollMode mode, MPI_Request* req,
                   const char* fn, int* rc) {
  if (!stt->is_contiguous() || !rtt->is_contiguous() || sstride < 0 ||
      rstride < 0 || (u.send_len > 0 && sendbuf == nullptr) ||
      (u.recv_len > 0 && recvbuf == nullptr))
    return false;
  const ScheduleKey key = CacheKey(kind, u);
  std::shared_ptr<const coll::PreparedSchedule> prepared;
  {
    std::lock_guard<std::mutex> lock(comm->schedules_mu);
    auto it = comm->schedules.find(key);
    if (it == comm->schedules.end()) return false;
    prepared = it->second;
  }
  const Neighborhood& nb = comm->neighbors;
  const void* in =
      UniformBase(sendbuf, nb.out, u.send_len, sstride, stt->true_lb());
  void* out =
      UniformBase(recvbuf, nb.in, u.recv_len, rstride, rtt->true_lb());
  auto r = NewCollRequest(mode);
  r->more_types.push_back(stt);
  r->more_types.push_back(rtt);
  const uint64_t seq = comm->coll_seq.fetch_add(1, std::memory_order_relaxed);
  *rc = RunSchedule(st, comm, std::move(r), std::move(prepared), seq, in, out,
                    {}, mode, req, fn);
  return true;
}

int Exchange(State& st, const CommPtr& comm, const Side& send,
             const Side& recv, const Uniform& uniform, NeighborKind kind,
             CollMode mode, MPI_Request* req, const char* fn) {
  const Neighborhood& nb = comm->neighbors;
  // Buffers may be NULL only where they hold no data.
  for (const auto* side : {&send, &recv}) {
    if (side->buf != nullptr) continue;
    const std::vector<int>& peers = side == &send ? nb.out : nb.in;
    for (size_t i = 0; i < peers.size(); ++i)
      if (Len(*side, i) > 0)
        return RaiseError(
            comm.get(), MPI_ERR_BUFFER, fn,
            std::string(side == &send ? "sendbuf" : "recvbuf") +
                " is NULL but the block of neighbour " + std::to_string(i) +
                " holds " + std::to_string(Len(*side, i)) + " bytes");
  }
  auto r = NewCollRequest(mode);
  r->more_types = send.types;
  r->more_types.insert(r->more_types.end(), recv.types.begin(),
                       recv.types.end());
  std::vector<coll::NeighborEdge> sends, recvs;
  const void* in = nullptr;
  void* out = nullptr;
  if (AllContiguous(send)) {
    in = Direct<const void*>(send, nb.out, nb.out_tags, &sends);
  } else {
    // Packed back to back (the shared block once), at every start.
    uint64_t total = 0;
    std::vector<uint64_t> at(nb.out.size());
    for (size_t i = 0; i < nb.out.size(); ++i) {
      at[i] = send.shared ? 0 : total;
      if (!send.shared || i == 0) total += Len(send, i);
      sends.push_back({nb.out[i] == MPI_PROC_NULL ? -1 : nb.out[i],
                       nb.out_tags[i], at[i], Len(send, i)});
    }
    uint8_t* s = Stage(*r, total);
    PackInput(*r, [types = send.types, buf = send.buf, counts = send.counts,
                   displs = send.displs, at, shared = send.shared, s] {
      for (size_t i = 0; i < types.size() && !(shared && i > 0); ++i)
        types[i]->Pack(static_cast<const uint8_t*>(buf) + displs[i],
                       counts[i], s + at[i]);
    });
    in = s;
  }
  if (AllContiguous(recv)) {
    out = Direct<void*>(recv, nb.in, nb.in_tags, &recvs);
  } else {
    uint64_t total = 0;
    std::vector<uint64_t> at(nb.in.size());
    for (size_t i = 0; i < nb.in.size(); ++i) {
      at[i] = total;
      total += Len(recv, i);
      recvs.push_back({nb.in[i] == MPI_PROC_NULL ? -1 : nb.in[i],
                       nb.in_tags[i], at[i], Len(recv, i)});
    }
    uint8_t* s = Stage(*r, total);
    std::vector<bool> live(nb.in.size());
    for (size_t i = 0; i < nb.in.size(); ++i)
      live[i] = nb.in[i] != MPI_PROC_NULL;
    r->on_complete.push_back([types = recv.types, buf = recv.buf,
                              counts = recv.counts, displs = recv.displs, at,
                              live, s] {
      // A block without a neighbour (MPI_PROC_NULL) stays untouched.
      for (size_t i = 0; i < types.size(); ++i)
        if (live[i])
          types[i]->Unpack(s + at[i], counts[i] * types[i]->size(),
                           static_cast<uint8_t*>(const_cast<void*>(buf)) +
                               displs[i],
                           counts[i]);
    });
    out = s;
  }

  const uint64_t seq = comm->coll_seq.fetch_add(1, std::memory_order_relaxed);
  const ScheduleKey key = CacheKey(kind, uniform);
  const bool cached = uniform.cacheable && AllContiguous(send) &&
                      AllContiguous(recv);
  std::shared_ptr<const coll::PreparedSchedule> prepared;
  if (cached) {
    std::lock_guard<std::mutex> lock(comm->schedules_mu);
    auto it = comm->schedules.find(key);
    if (it != comm->schedules.end()) prepared = it->second;
  }
  if (!prepared) {
    coll::Schedule schedule;
    std::string e = coll::BuildNeighborExchange(comm->rank, comm->size, sends,
                                                recvs, &schedule);
    if (!e.empty())
      return RaiseError(comm.get(),
                        e.find("overlap") != std::string::npos
                            ? MPI_ERR_BUFFER
                            : MPI_ERR_ARG,
                        fn, e);
    prepared = coll::Prepare(std::move(schedule), comm->size, &e);
    if (!prepared) return RaiseError(comm.get(), MPI_ERR_INTERN, fn, e);
    if (cached) {
      std::lock_guard<std::mutex> lock(comm->schedules_mu);
      if (comm->schedules.size() >= 256) comm->schedules.clear();
      comm->schedules.emplace(key, prepared);
    }
  }
  return RunSchedule(st, comm, std::move(r), std::move(prepared), seq, in, out,
                     {}, mode, req, fn);
}

// The communicator of a neighbourhood collective: it must have a topology.
CommPtr EnterNeighbor(State& st, MPI_Comm c, const void* sendbuf,
                      const void* recvbuf, CollMode mode, MPI_Request* req,
                      const char* fn, int* err) {
  CommPtr comm = EnterColl(st, c, mode, req, fn, err);
  if (!comm) return nullptr;
  if (comm->topo != MPI_CART && comm->topo != MPI_GRAPH &&
      comm->topo != MPI_DIST_GRAPH) {
    *err = RaiseError(comm.get(), MPI_ERR_TOPOLOGY, fn,
                      "comm has no process topology (make one with "
                      "MPI_Cart_create, MPI_Graph_create or "
                      "MPI_Dist_graph_create(_adjacent))");
    return nullptr;
  }
  if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE) {
    *err = RaiseError(comm.get(), MPI_ERR_BUFFER, fn,
                      std::string(sendbuf == MPI_IN_PLACE ? "sendbuf"
                                                          : "recvbuf") +
                          " = MPI_IN_PLACE is not allowed in a neighbourhood "
                          "collective");
    return nullptr;
  }
  return comm;
}

// Counts and displacements of a v or w side, one per edge.
bool VectorSide(const Comm& comm, const int* counts, const void* displs,
                bool byte_displs, int n, const char* cname, const char* dname,
                const char* fn, int* err, Side* side) {
  if (n > 0 && (counts == nullptr || displs == nullptr)) {
    *err = RaiseError(&comm, MPI_ERR_ARG, fn,
                      std::string(cname) + " or " + dname + " is NULL");
    return false;
  }
  side->counts.assign(counts, counts + n);
  side->displs.resize(n);
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) {
      *err = RaiseError(&comm, MPI_ERR_COUNT, fn,
                        std::string(cname) + "[" + std::to_string(i) +
                            "] = " + std::to_string(counts[i]) +
                            " (must be >= 0)");
      return false;
    }
    side->displs[i] =
        byte_displs
            ? static_cast<int64_t>(static_cast<const MPI_Aint*>(displs)[i])
            : static_cast<int64_t>(static_cast<const int*>(displs)[i]) *
                  side->types[i]->extent();
  }
  return true;
}

bool CheckSameBytes(const Comm& comm, uint64_t send, uint64_t recv,
                    const char* fn, int* err) {
  if (send == recv) return true;
  *err = RaiseError(&comm, MPI_ERR_TRUNCATE, fn,
                    "sendcount x sendtype (" + std::to_string(send) +
                        " bytes) differs from recvcount x recvtype (" +
                        std::to_string(recv) + " bytes)");
  return false;
}

// Neighbor_allgather (alltoall = false) and Neighbor_alltoall.
int Uniform2(const void* sendbuf, int scount, MPI_Datatype stype,
             void* recvbuf, int rcount, MPI_Datatype rtype, MPI_Comm c,
             bool alltoall, CollMode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = EnterNeighbor(*st, c, sendbuf, recvbuf, mode, req, kFn, &err);
  if (!comm) return err;
  TypePtr stt = CheckType(*st, stype, comm.get(), kFn, &err, "sendtype");
  if (!stt || !CheckCount(scount, comm.get(), kFn, &err, "sendcount"))
    return err;
  TypePtr rtt = CheckType(*st, rtype, comm.get(), kFn, &err, "recvtype");
  if (!rtt || !CheckCount(rcount, comm.get(), kFn, &err, "recvcount"))
    return err;
  const uint64_t sbytes = static_cast<uint64_t>(scount) * stt->size();
  const uint64_t rbytes = static_cast<uint64_t>(rcount) * rtt->size();
  if (!CheckSameBytes(*comm, sbytes, rbytes, kFn, &err)) return err;
  const int64_t sstride = alltoall ? int64_t{scount} * stt->extent() : 0;
  const int64_t rstride = int64_t{rcount} * rtt->extent();
  Uniform u;
  u.cacheable = true;
  u.send_len = sbytes;
  u.recv_len = rbytes;
  u.send_stride = static_cast<uint64_t>(sstride);
  u.recv_stride = static_cast<uint64_t>(rstride);
  const NeighborKind kind =
      alltoall ? NeighborKind::kAlltoall : NeighborKind::kAllgather;
  if (int rc = MPI_SUCCESS;
      CachedUniform(*st, comm, sendbuf, recvbuf, stt, rtt, u, sstride,
                    rstride, kind, mode, req, kFn, &rc))
    return rc;
  const Neighborhood& nb = comm->neighbors;
  const size_t outdeg = nb.out.size(), indeg = nb.in.size();
  Side send, recv;
  send.buf = sendbuf;
  send.counts.assign(outdeg, scount);
  send.types.assign(outdeg, stt);
  send.displs.resize(outdeg);
  send.shared = !alltoall;
  for (size_t i = 0; i < outdeg; ++i)
    send.displs[i] = static_cast<int64_t>(i) * sstride;
  recv.buf = recvbuf;
  recv.counts.assign(indeg, rcount);
  recv.types.assign(indeg, rtt);
  recv.displs.resize(indeg);
  for (size_t i = 0; i < indeg; ++i)
    recv.displs[i] = static_cast<int64_t>(i) * rstride;
  return Exchange(*st, comm, send, recv, u, kind, mode, req, kFn);
}

int Allgatherv(const void* sendbuf, int scount, MPI_Datatype stype,
               void* recvbuf, const int* rcounts, const int* displs,
               MPI_Datatype rtype, MPI_Comm c, CollMode mode,
               MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = EnterNeighbor(*st, c, sendbuf, recvbuf, mode, req, kFn, &err);
  if (!comm) return err;
  TypePtr stt = CheckType(*st, stype, comm.get(), kFn, &err, "sendtype");
  if (!stt || !CheckCount(scount, comm.get(), kFn, &err, "sendcount"))
    return err;
  TypePtr rtt = CheckType(*st, rtype, comm.get(), kFn, &err, "recvtype");
  if (!rtt) return err;
  const Neighborhood& nb = comm->neighbors;
  const int indeg = static_cast<int>(nb.in.size());
  Side send, recv;
  send.buf = sendbuf;
  send.counts.assign(nb.out.size(), scount);
  send.types.assign(nb.out.size(), stt);
  send.displs.assign(nb.out.size(), 0);
  send.shared = true;
  recv.buf = recvbuf;
  recv.types.assign(indeg, rtt);
  if (!VectorSide(*comm, rcounts, displs, false, indeg, "recvcounts",
                  "displs", kFn, &err, &recv))
    return err;
  return Exchange(*st, comm, send, recv, {}, NeighborKind::kAllgatherv, mode,
                  req, kFn);
}

int Alltoallv(const void* sendbuf, const int* scounts, const int* sdispls,
              MPI_Datatype stype, void* recvbuf, const int* rcounts,
              const int* rdispls, MPI_Datatype rtype, MPI_Comm c,
              CollMode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = EnterNeighbor(*st, c, sendbuf, recvbuf, mode, req, kFn, &err);
  if (!comm) return err;
  TypePtr stt = CheckType(*st, stype, comm.get(), kFn, &err, "sendtype");
  if (!stt) return err;
  TypePtr rtt = CheckType(*st, rtype, comm.get(), kFn, &err, "recvtype");
  if (!rtt) return err;
  const Neighborhood& nb = comm->neighbors;
  Side send, recv;
  send.buf = sendbuf;
  send.types.assign(nb.out.size(), stt);
  recv.buf = recvbuf;
  recv.types.assign(nb.in.size(), rtt);
  if (!VectorSide(*comm, scounts, sdispls, false,
                  static_cast<int>(nb.out.size()), "sendcounts", "sdispls",
                  kFn, &err, &send) ||
      !VectorSide(*comm, rcounts, rdispls, false,
                  static_cast<int>(nb.in.size()), "recvcounts", "rdispls",
                  kFn, &err, &recv))
    return err;
  return Exchange(*st, comm, send, recv, {}, NeighborKind::kAlltoallv, mode,
                  req, kFn);
}

int Alltoallw(const void* sendbuf, const int* scounts, const MPI_Aint* sdispls,
              const MPI_Datatype* stypes, void* recvbuf, const int* rcounts,
              const MPI_Aint* rdispls, const MPI_Datatype* rtypes,
              MPI_Comm c, CollMode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = EnterNeighbor(*st, c, sendbuf, recvbuf, mode, req, kFn, &err);
  if (!comm) return err;
  const Neighborhood& nb = comm->neighbors;
  Side send, recv;
  send.buf = sendbuf;
  recv.buf = recvbuf;
  for (auto [side, types, n, name] :
       {std::tuple{&send, stypes, nb.out.size(), "sendtypes"},
        std::tuple{&recv, rtypes, nb.in.size(), "recvtypes"}}) {
    if (n > 0 && types == nullptr)
      return RaiseError(comm.get(), MPI_ERR_TYPE, kFn,
                        std::string(name) + " is NULL");
    for (size_t i = 0; i < n; ++i) {
      const std::string arg = std::string(name) + "[" + std::to_string(i) + "]";
      TypePtr t = CheckType(*st, types[i], comm.get(), kFn, &err, arg.c_str());
      if (!t) return err;
      side->types.push_back(std::move(t));
    }
  }
  if (!VectorSide(*comm, scounts, sdispls, true,
                  static_cast<int>(nb.out.size()), "sendcounts", "sdispls",
                  kFn, &err, &send) ||
      !VectorSide(*comm, rcounts, rdispls, true,
                  static_cast<int>(nb.in.size()), "recvcounts", "rdispls",
                  kFn, &err, &recv))
    return err;
  return Exchange(*st, comm, send, recv, {}, NeighborKind::kAlltoallw, mode,
                  req, kFn);
}

}  // namespace
}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

extern "C" {

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm) {
  return Uniform2(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, false, kBlockingCall, nullptr,
                  "MPI_Neighbor_allgather");
}
int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request) {
  return Uniform2(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, false, kNonblockingCall, request,
                  "MPI_Ineighbor_allgather");
}
int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return Uniform2(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, false, kInitCall, request,
                  "MPI_Neighbor_allgather_init");
}

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                    recvtype, comm, kBlockingCall, nullptr,
                    "MPI_Neighbor_allgatherv");
}
int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                    recvtype, comm, kNonblockingCall, request,
                    "MPI_Ineighbor_allgatherv");
}
int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info, MPI_Request* request) {
  return Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                    recvtype, comm, kInitCall, request,
                    "MPI_Neighbor_allgatherv_init");
}

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                          MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  return Uniform2(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, true, kBlockingCall, nullptr,
                  "MPI_Neighbor_alltoall");
}
int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request* request) {
  return Uniform2(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, true, kNonblockingCall, request,
                  "MPI_Ineighbor_alltoall");
}
int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return Uniform2(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, true, kInitCall, request,
                  "MPI_Neighbor_alltoall_init");
}

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm) {
  return Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                   recvcounts, rdispls, recvtype, comm, kBlockingCall,
                   nullptr, "MPI_Neighbor_alltoallv");
}
int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request) {
  return Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                   recvcounts, rdispls, recvtype, comm, kNonblockingCall,
                   request, "MPI_Ineighbor_alltoallv");
}
int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info,
                                MPI_Request* request) {
  return Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                   recvcounts, rdispls, recvtype, comm, kInitCall, request,
                   "MPI_Neighbor_alltoallv_init");
}

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, kBlockingCall,
                   nullptr, "MPI_Neighbor_alltoallw");
}
int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  return Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, kNonblockingCall,
                   request, "MPI_Ineighbor_alltoallw");
}
int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf,
                                const int recvcounts[],
                                const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                MPI_Info, MPI_Request* request) {
  return Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, kInitCall, request,
                   "MPI_Neighbor_alltoallw_init");
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init
#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init
#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init
