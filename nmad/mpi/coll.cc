// MadMPI collectives: the 17 MPI-3 collectives, blocking and nonblocking,
// as nmad/coll schedules run by engine tasks (nmad/coll/executor.h).
//
// Each call checks its arguments, bumps the communicator's collective
// sequence number (on every rank, whatever the rank's role), turns (count,
// datatype) into bytes — packing derived datatypes into staging buffers and
// registering their unpacking for when the schedule completes — builds the
// schedule (algorithm by size and process count, or RONDO_COLL_<NAME>) and
// starts it. A blocking call then waits; a nonblocking one returns a
// request, and its steps progress in the background.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <numeric>

#include "nmad/coll/algorithms.h"
#include "nmad/coll/executor.h"
#include "nmad/mpi/config.h"
#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/coll.h"
#include "nmad/mpi/internal/coll_shm.h"
#include "nmad/mpi/internal/requests.h"
#include "nmad/mpi/internal/state.h"
#include "topology/base/log.h"

namespace rondo::nmad::mpi {
namespace {

using coll::Collective;
using coll::CollArgs;

struct ReduceCtx {
  std::shared_ptr<const Op> op;
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  TypePtr type;  // the element type the schedule's elements are made of
  // The schedule's element pointers are this many bytes past the address
  // the type map is relative to (true_lb for a contiguous type in the
  // user's buffer, lb in an extent-layout copy).
  int64_t shift = 0;
};

// Clears what a collective call left in a request, keeping its Operation
// (restartable once done) and the vectors' storage.
void Recycle(MpiRequest& r) {
  r.kind = MpiRequest::Kind::kDone;
  r.comm.reset();
  r.type.reset();
  r.more_types.clear();
  r.stagings.clear();
  if (r.reduce_ctx) {
    // Kept for the thread's next reduction (only this file sets it, always
    // to a ReduceCtx); the operator and type references go now.
    *static_cast<ReduceCtx*>(r.reduce_ctx.get()) = ReduceCtx{};
  }
  r.on_complete.clear();
  r.completed = false;
  r.status = MPI_Status{};
  r.error = MPI_SUCCESS;
  r.fn = "";
}

using Mode = CollMode;

// The request of a collective call. A blocking call completes before it
// returns, so each thread reuses one request, and with it the Operation and
// its step states, temporaries and lists: the cached-schedule path of a
// blocking collective allocates nothing once warm. A request still
// referenced elsewhere (a blocking collective started from inside another
// call's completion, which MPI does not allow but costs nothing to survive)
// is not reused.
}  // namespace

ReqPtr NewCollRequest(CollMode mode) {
  if (mode.kind == Mode::kInit) {
    auto r = std::make_shared<MpiRequest>();
    r->persistent = std::make_unique<PersistentOp>();
    return r;
  }
  if (!mode.blocking()) return std::make_shared<MpiRequest>();
  thread_local ReqPtr cached;
  if (!cached) {
    cached = std::make_shared<MpiRequest>();
    return cached;
  }
  if (cached.use_count() != 1) return std::make_shared<MpiRequest>();
  Recycle(*cached);  // after an error return, a call may have left things
  return cached;
}

namespace {

ReqPtr NewRequest(Mode mode) { return NewCollRequest(mode); }


// `count` items of `t` at `buf` as contiguous bytes for a schedule.
const uint8_t* InBytes(MpiRequest& r, const void* buf, int64_t count,
                       const Datatype& t) {
  const size_t bytes = static_cast<size_t>(count) * t.size();
  if (bytes == 0) return nullptr;
  if (t.is_contiguous()) return static_cast<const uint8_t*>(buf) + t.true_lb();
  uint8_t* s = Stage(r, bytes);
  PackInput(r, [t = t.shared_from_this(), buf, count, s] {
    t->Pack(buf, count, s);
  });
  return s;
}

// Where a schedule writes `count` items of `t` for `buf`: the buffer itself
// for contiguous types, else a staging buffer unpacked at completion.
// `prefill` packs the current contents first (in-place forms).
uint8_t* OutBytes(MpiRequest& r, void* buf, int64_t count, const TypePtr& t,
                  bool prefill = false) {
  const size_t bytes = static_cast<size_t>(count) * t->size();
  if (bytes == 0) return nullptr;
  if (t->is_contiguous()) return static_cast<uint8_t*>(buf) + t->true_lb();
  uint8_t* s = Stage(r, bytes);
  if (prefill) PackInput(r, [t, buf, count, s] { t->Pack(buf, count, s); });
  r.on_complete.push_back([s, buf, count, t, bytes] {
    t->Unpack(s, static_cast<int64_t>(bytes), buf, count);
  });
  return s;
}


void ReduceTrampoline(const void* in, void* inout, uint64_t count,
                      void* ctx) noexcept {
  auto* c = static_cast<ReduceCtx*>(ctx);
  Apply(*c->op, c->handle, *c->type, static_cast<const uint8_t*>(in) - c->shift,
        static_cast<uint8_t*>(inout) - c->shift, static_cast<int64_t>(count));
}

// Reduction buffers: the schedule sees `elem_size`-byte elements.
//  - contiguous types: the user's buffers, elements of the type's size;
//  - predefined ops on derived types: packed basic elements;
//  - user ops on derived types: an "extent layout" copy (element i at
//    i * extent), since the user function indexes by extent.
struct ReduceBufs {
  const uint8_t* send = nullptr;
  uint8_t* recv = nullptr;
  uint64_t elem_size = 1;
  uint64_t bytes = 0;
  std::string error;  // non-empty: the reduction cannot be set up
};

ReduceBufs SetupReduce(MpiRequest& r, const void* sendbuf, void* recvbuf,
                       int count, MPI_Datatype handle, const TypePtr& type,
                       const std::shared_ptr<const Op>& op, bool in_place,
                       bool has_output, coll::ReduceFn* fn) {
  // A recycled request (a blocking call's) brings its context along.
  std::shared_ptr<ReduceCtx> ctx =
      r.reduce_ctx ? std::static_pointer_cast<ReduceCtx>(r.reduce_ctx)
                   : std::make_shared<ReduceCtx>();
  *ctx = ReduceCtx{};
  ctx->op = op;
  ReduceBufs b;
  const void* input = in_place ? recvbuf : sendbuf;
  if (type->is_contiguous() || count == 0) {
    ctx->handle = handle;
    ctx->type = type;
    ctx->shift = type->true_lb();
    b.elem_size = type->size() ? type->size() : 1;
    b.bytes = static_cast<uint64_t>(count) * type->size();
    b.send = b.bytes ? static_cast<const uint8_t*>(input) + type->true_lb()
                     : nullptr;
    b.recv = has_output && b.bytes
                 ? static_cast<uint8_t*>(recvbuf) + type->true_lb()
                 : nullptr;
  } else if (op->predefined && type->uniform_basic() != MPI_DATATYPE_NULL &&
             Predefined(type->uniform_basic())->is_contiguous()) {
    const MPI_Datatype basic = type->uniform_basic();
    ctx->handle = basic;
    ctx->type = std::shared_ptr<const Datatype>(type, Predefined(basic));
    b.elem_size = Predefined(basic)->size();
    b.bytes = static_cast<uint64_t>(count) * type->size();
    b.send = InBytes(r, input, count, *type);
    if (has_output) b.recv = OutBytes(r, recvbuf, count, type);
  } else {
    ctx->handle = handle;
    ctx->type = type;
    ctx->shift = type->lb();
    const int64_t ext = type->extent();
    if (type->true_lb() < type->lb() ||
        type->true_lb() - type->lb() + type->SpanBytes(count) >
            static_cast<int64_t>(count) * ext) {
      b.error = "a user op on a datatype whose data lies outside its "
                "[lb, lb + extent) is not supported (resize it to cover its "
                "data)";
      return b;
    }
    b.elem_size = static_cast<uint64_t>(ext);
    b.bytes = static_cast<uint64_t>(count) * ext;
    // Staging base B stands for user address buf + lb.
    auto copy_in = [&](const void* buf) {
      uint8_t* s = Stage(r, b.bytes);
      const size_t bytes = b.bytes;
      const int64_t at = type->true_lb() - type->lb();
      const uint8_t* from = static_cast<const uint8_t*>(buf) + type->true_lb();
      const size_t span = static_cast<size_t>(type->SpanBytes(count));
      PackInput(r, [s, bytes, at, from, span] {
        std::memset(s, 0, bytes);
        std::memcpy(s + at, from, span);
      });
      return s;
    };
    b.send = copy_in(input);
    if (has_output) {
      uint8_t* s = Stage(r, b.bytes);
      b.recv = s;
      const int64_t packed = static_cast<int64_t>(count) * type->size();
      r.on_complete.push_back([s, recvbuf, count, type, packed] {
        // Only the type's data goes back: the holes stay untouched.
        std::vector<uint8_t> tmp(static_cast<size_t>(packed));
        type->Pack(s - type->lb(), count, tmp.data());
        type->Unpack(tmp.data(), packed, recvbuf, count);
      });
    }
  }
  fn->fn = &ReduceTrampoline;
  fn->ctx = ctx.get();
  fn->elem_size = b.elem_size;
  r.reduce_ctx = ctx;
  return b;
}

void OnCollDone(coll::Operation& op, void* arg) noexcept {
  auto* r = static_cast<MpiRequest*>(arg);
  if (op.error().empty())
    for (auto& f : r->on_complete) f();
}

// The split-tree algorithm of a collective (split.h): binomial trees, and
// reduce + bcast for allreduce.
coll::Algorithm TreeAlgorithm(coll::Collective c) {
  return c == coll::Collective::kAllreduce ? coll::Algorithm::kReduceBcast
                                           : coll::Algorithm::kBinomial;
}

}  // namespace

int ResolveCommSplit(State& st, const Comm& comm, bool doubling) {
  const int mode = comm.split.load(std::memory_order_relaxed);
  if (mode == MPIX_SPLIT_OFF) return MPIX_SPLIT_OFF;
  coll::SplitOptions o = st.split_options;
  if (mode >= 0) {
    o.automatic = false;
    o.fixed_s = mode;
  } else if (mode == MPIX_SPLIT_AUTO) {
    o.automatic = true;
  }
  // P: the node's dedicated communication cores (RONDO_COMM_CORES, or the
  // free cores numa/odd-even placement uses). Without any, the model has
  // nowhere to fold the tree: auto keeps the unsplit algorithms.
  const int p =
      static_cast<int>(st.engine().node_placement().comm_cores.size());
  if (o.automatic && p == 0) return MPIX_SPLIT_OFF;
  coll::SplitTreeParams params;
  params.n = comm.size;
  params.nproc = comm.size + p;
  params.op = doubling ? coll::SplitOp::kDoubling : coll::SplitOp::kConstant;
  return coll::ResolveSplit(o, params);
}

namespace {

// The split level of this call, or -1: only nonblocking bcast, reduce,
// gather, scatter and allreduce split, and not when RONDO_COLL_<NAME>
// forces another algorithm.
int SplitLevel(State& st, const Comm& comm, coll::Collective c,
               bool blocking) {
  using C = coll::Collective;
  if (blocking) return -1;
  bool doubling = false;
  switch (c) {
    case C::kBcast: case C::kReduce: case C::kAllreduce: break;
    case C::kGather: case C::kScatter: doubling = true; break;
    default: return -1;
  }
  const coll::Algorithm forced = st.forced[static_cast<int>(c)];
  if (forced != coll::Algorithm::kAuto && forced != TreeAlgorithm(c))
    return -1;
  const int s = ResolveCommSplit(st, comm, doubling);
  return s >= 0 ? s : -1;
}

// Starts a persistent collective's prepared schedule on `r` (MPI_Start).
int StartPrepared(State& st, MpiRequest& r, const void* send, void* recv,
                  coll::ReduceFn reduce) {
  const Comm& comm = *r.comm;
  r.kind = MpiRequest::Kind::kColl;
  coll::CommView view{&st.core(), comm.coll, comm.world.data(), comm.size,
                      &st.engine().progress_cpuset()};
  Status s = r.op->Start(view, r.persistent->prepared, send, recv,
                         r.persistent->tag_base, reduce, &OnCollDone, &r,
                         /*caller_waits=*/false);
  if (s != Status::kOk) {
    r.kind = MpiRequest::Kind::kDone;
    return RaiseError(r.comm.get(), MPI_ERR_INTERN, r.fn,
                      "cannot start the collective: " + r.op->error());
  }
  return MPI_SUCCESS;
}

// Builds and starts the schedule; waits when blocking. A persistent init
// prepares it and registers the inactive request.
int Launch(State& st, const CommPtr& comm, ReqPtr r, CollArgs args,
           const void* send, void* recv, coll::ReduceFn reduce,
           Mode mode, MPI_Request* out, const char* fn) {
  const bool blocking = mode.blocking();
  args.rank = comm->rank;
  args.size = comm->size;
  args.segment_bytes = st.segment_bytes;
  args.radix = st.radix;
  // Job-wide facts, the same on every rank: the whole job on this node
  // (its local size is the job's size), and that node short of cores.
  const engine::Engine& engine = st.engine();
  args.single_node = engine.options().local_size == st.world_size();
  args.oversubscribed = args.single_node && engine.oversubscribed();
  args.elem_size = reduce.fn ? reduce.elem_size : 1;
  const uint64_t seq = comm->coll_seq.fetch_add(1, std::memory_order_relaxed);
  // A persistent collective is nonblocking at every start.
  int split = SplitLevel(st, *comm, args.collective, blocking);
  const coll::Algorithm forced =
      split >= 0 ? TreeAlgorithm(args.collective)
                 : st.forced[static_cast<int>(args.collective)];
  // Collectives without per-rank counts reuse their prepared schedule.
  const bool cacheable = args.counts.empty() && args.send_counts.empty();
  // Allreduce and alltoall have no root: the key's root slot tells their
  // disjoint-buffer schedules (no MPI_IN_PLACE) from the in-place ones.
  const int key_root =
      (args.collective == Collective::kAllreduce ||
       args.collective == Collective::kAlltoall) &&
              args.buffers_disjoint
          ? -1
          : args.root;
  const ScheduleKey key{static_cast<int>(args.collective),
                        static_cast<int>(forced), key_root, args.bytes,
                        args.elem_size, args.commutative, split};
  std::shared_ptr<const coll::PreparedSchedule> prepared;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(comm->schedules_mu);
    auto it = comm->schedules.find(key);
    if (it != comm->schedules.end()) prepared = it->second;
  }
  if (!prepared) {
    coll::Schedule sched;
    std::string e = coll::Build(forced, args, &sched);
    if (!e.empty() && forced != coll::Algorithm::kAuto) {
      // e.g. a forced ring allreduce with a non-commutative user op.
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        RONDO_LOG_WARN(
            "{}={} cannot run a call ({}); using the default algorithm",
            CollVariable(args.collective), coll::AlgorithmName(forced), e);
      sched = {};
      split = -1;
      e = coll::Build(coll::Algorithm::kAuto, args, &sched);
    }
    if (!e.empty()) return RaiseError(comm.get(), MPI_ERR_ARG, fn, e);
    prepared = coll::Prepare(std::move(sched), comm->size, &e, split);
    if (!prepared) return RaiseError(comm.get(), MPI_ERR_INTERN, fn, e);
    if (cacheable) {
      std::lock_guard<std::mutex> lock(comm->schedules_mu);
      if (comm->schedules.size() >= 256) comm->schedules.clear();
      comm->schedules.emplace(key, prepared);
    }
  }
  return RunSchedule(st, comm, std::move(r), std::move(prepared), seq, send,
                     recv, reduce, mode, out, fn);
}

}  // namespace

int RunSchedule(State& st, const CommPtr& comm, ReqPtr r,
                std::shared_ptr<const coll::PreparedSchedule> prepared,
                uint64_t seq, const void* send, void* recv,
                coll::ReduceFn reduce, CollMode mode, MPI_Request* out,
                const char* fn) {
  const bool blocking = mode.blocking();
  r->kind = MpiRequest::Kind::kColl;
  r->comm = comm;
  r->fn = fn;
  if (!r->op) r->op = std::make_unique<coll::Operation>();
  if (mode.kind == CollMode::kInit) {
    // Checked, staged and prepared once: a start packs the inputs of
    // derived datatypes again (on_start) and starts the operation.
    PersistentOp& p = *r->persistent;
    p.tag_base = coll::TagBase(seq, /*blocking=*/false);
    p.prepared = std::move(prepared);
    p.start = [send, recv, reduce](State& s, MpiRequest& q) {
      for (auto& pack : q.persistent->on_start) pack();
      return StartPrepared(s, q, send, recv, reduce);
    };
    r->kind = MpiRequest::Kind::kDone;  // inactive until MPI_Start
    *out = st.requests.Add(std::move(r));
    if (*out == MPI_REQUEST_NULL)
      return RaiseError(comm.get(), MPI_ERR_NO_MEM, fn,
                        "too many requests in flight");
    return MPI_SUCCESS;
  }
  coll::CommView view{&st.core(), comm->coll, comm->world.data(),
                      comm->size, &st.engine().progress_cpuset()};
  Status s = r->op->Start(view, std::move(prepared), send, recv,
                          coll::TagBase(seq, blocking), reduce, &OnCollDone,
                          r.get(), /*caller_waits=*/blocking);
  if (s != Status::kOk) {
    r->kind = MpiRequest::Kind::kDone;
    return RaiseError(comm.get(), MPI_ERR_INTERN, fn,
                      "cannot start the collective: " + r->op->error());
  }
  if (blocking) {
    (void)r->op->Wait();
    const int result = Finish(st, *r, fn);
    Recycle(*r);  // drops the references to the communicator and types
    return result;
  }
  *out = st.requests.Add(std::move(r));
  return MPI_SUCCESS;
}

CommPtr EnterColl(State& st, MPI_Comm c, CollMode mode, MPI_Request* request,
                  const char* fn, int* err) {
  CommPtr comm = CheckComm(st, c, fn, err);
  if (!comm) return nullptr;
  if (!mode.blocking() && request == nullptr) {
    *err = RaiseError(comm.get(), MPI_ERR_REQUEST, fn,
                      "request is NULL (pass the address of an MPI_Request)");
    return nullptr;
  }
  return comm;
}

bool CheckCounts(const int* counts, const int* displs, int n,
                 const Comm& comm, const char* fn, const char* cname,
                 const char* dname, int* err) {
  if (counts == nullptr || (dname != nullptr && displs == nullptr)) {
    *err = RaiseError(&comm, MPI_ERR_ARG, fn,
                      std::string(cname) + " or " + (dname ? dname : "") +
                          " is NULL");
    return false;
  }
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0) {
      *err = RaiseError(&comm, MPI_ERR_COUNT, fn,
                        std::string(cname) + "[" + std::to_string(i) +
                            "] = " + std::to_string(counts[i]) +
                            " (must be >= 0)");
      return false;
    }
  return true;
}

namespace {

CommPtr Enter(State& st, MPI_Comm c, Mode mode, MPI_Request* request,
              const char* fn, int* err) {
  return EnterColl(st, c, mode, request, fn, err);
}

// ---- the collectives ----

int Barrier(MPI_Comm c, Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  if (mode.blocking() && ShmBarrier(*st, *comm, kFn, &err)) return err;
  CollArgs a;
  a.collective = Collective::kBarrier;
  return Launch(*st, comm, NewRequest(mode), a, nullptr,
                nullptr, {}, mode, req, kFn);
}

int Bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm c,
          Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  TypePtr type = CheckType(*st, dt, comm.get(), kFn, &err);
  if (!type) return err;
  if (!CheckCount(count, comm.get(), kFn, &err) ||
      !CheckRoot(root, *comm, kFn, &err) ||
      !CheckBuffer(buf, count, *type, comm.get(), kFn, &err, "buffer"))
    return err;
  if (mode.blocking() &&
      ShmBcast(*st, *comm, buf, count, *type, root, kFn, &err))
    return err;
  auto r = NewRequest(mode);
  r->type = type;
  CollArgs a;
  a.collective = Collective::kBcast;
  a.root = root;
  a.bytes = static_cast<uint64_t>(count) * type->size();
  uint8_t* data = comm->rank == root
                      ? const_cast<uint8_t*>(InBytes(*r, buf, count, *type))
                      : OutBytes(*r, buf, count, type);
  return Launch(*st, comm, r, a, nullptr, data, {}, mode, req, kFn);
}

// Reduce, Allreduce, Scan, Exscan: one vector per rank.
int ReduceLike(Collective kind, const void* sendbuf, void* recvbuf,
               int count, MPI_Datatype dt, MPI_Op o, int root, MPI_Comm c,
               Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  TypePtr type = CheckType(*st, dt, comm.get(), kFn, &err);
  if (!type) return err;
  if (!CheckCount(count, comm.get(), kFn, &err)) return err;
  auto op = CheckOpArg(*st, o, *type, comm.get(), kFn, &err);
  if (!op) return err;
  const bool is_root = kind != Collective::kReduce || comm->rank == root;
  if (kind == Collective::kReduce && !CheckRoot(root, *comm, kFn, &err))
    return err;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root)
    return RaiseError(comm.get(), MPI_ERR_BUFFER, kFn,
                      "sendbuf = MPI_IN_PLACE is only allowed at the root");
  if ((!in_place &&
       !CheckBuffer(sendbuf, count, *type, comm.get(), kFn, &err,
                    "sendbuf")) ||
      (is_root && !CheckBuffer(recvbuf, count, *type, comm.get(), kFn, &err,
                               "recvbuf")))
    return err;
  if (mode.blocking() &&
      (kind == Collective::kReduce || kind == Collective::kAllreduce) &&
      ShmReduce(*st, *comm, sendbuf, recvbuf, count, dt, *type, *op,
                kind == Collective::kReduce ? root : -1, kFn, &err))
    return err;
  auto r = NewRequest(mode);
  r->type = type;
  coll::ReduceFn fn_ctx;
  // Exscan's rank 0 output is undefined: the schedule leaves it alone.
  ReduceBufs b = SetupReduce(*r, sendbuf, recvbuf, count, dt, type, op,
                             in_place, is_root, &fn_ctx);
  if (!b.error.empty())
    return RaiseError(comm.get(), MPI_ERR_TYPE, kFn, "datatype: " + b.error);
  CollArgs a;
  a.collective = kind;
  a.root = root;
  a.bytes = b.bytes;
  a.commutative = op->commutative;
  // MPI forbids overlapping send and receive buffers outside MPI_IN_PLACE
  // (and staged copies never overlap).
  a.buffers_disjoint = kind == Collective::kAllreduce && !in_place;
  return Launch(*st, comm, r, a, b.send, b.recv, fn_ctx, mode, req, kFn);
}

int Gather(const void* sendbuf, int scount, MPI_Datatype stype,
           void* recvbuf, int rcount, MPI_Datatype rtype, int root,
           MPI_Comm c, bool all, Mode mode, MPI_Request* req,
           const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  if (!all && !CheckRoot(root, *comm, kFn, &err)) return err;
  const bool is_root = all || comm->rank == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root)
    return RaiseError(comm.get(), MPI_ERR_BUFFER, kFn,
                      "sendbuf = MPI_IN_PLACE is only allowed at the root");
  TypePtr st_type, rt_type;
  if (!in_place) {
    st_type = CheckData(*st, sendbuf, scount, stype, comm.get(), kFn, &err,
                     "send");
    if (!st_type) return err;
  }
  if (is_root) {
    rt_type = CheckData(*st, recvbuf, rcount, rtype, comm.get(), kFn, &err,
                     "recv");
    if (!rt_type) return err;
  }
  const uint64_t block =
      in_place || (!st_type)
          ? static_cast<uint64_t>(rcount) * rt_type->size()
          : static_cast<uint64_t>(scount) * st_type->size();
  if (is_root && static_cast<uint64_t>(rcount) * rt_type->size() != block)
    return RaiseError(comm.get(), MPI_ERR_TRUNCATE, kFn,
                      "sendcount x sendtype (" + std::to_string(block) +
                          " bytes) differs from recvcount x recvtype (" +
                          std::to_string(rcount * rt_type->size()) +
                          " bytes) at the root");
  if (mode.blocking() &&
      ShmGather(*st, *comm, sendbuf, scount, st_type.get(), recvbuf, rcount,
                rt_type.get(), all ? -1 : root, kFn, &err))
    return err;
  auto r = NewRequest(mode);
  r->type = st_type ? st_type : rt_type;
  r->more_types = {rt_type};
  uint8_t* out = nullptr;
  if (is_root)
    out = OutBytes(*r, recvbuf, static_cast<int64_t>(rcount) * comm->size,
                   rt_type, /*prefill=*/in_place);
  const uint8_t* in = in_place ? (out ? out + comm->rank * block : nullptr)
                               : InBytes(*r, sendbuf, scount, *st_type);
  CollArgs a;
  a.collective = all ? Collective::kAllgather : Collective::kGather;
  a.root = root;
  a.bytes = block;
  return Launch(*st, comm, r, a, in, out, {}, mode, req, kFn);
}

int Scatter(const void* sendbuf, int scount, MPI_Datatype stype,
            void* recvbuf, int rcount, MPI_Datatype rtype, int root,
            MPI_Comm c, Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  if (!CheckRoot(root, *comm, kFn, &err)) return err;
  const bool is_root = comm->rank == root;
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (in_place && !is_root)
    return RaiseError(comm.get(), MPI_ERR_BUFFER, kFn,
                      "recvbuf = MPI_IN_PLACE is only allowed at the root");
  TypePtr st_type, rt_type;
  if (is_root) {
    st_type = CheckData(*st, sendbuf, scount, stype, comm.get(), kFn, &err,
                     "send");
    if (!st_type) return err;
  }
  if (!in_place) {
    rt_type = CheckData(*st, recvbuf, rcount, rtype, comm.get(), kFn, &err,
                     "recv");
    if (!rt_type) return err;
  }
  const uint64_t block =
      st_type ? static_cast<uint64_t>(scount) * st_type->size()
              : static_cast<uint64_t>(rcount) * rt_type->size();
  if (is_root && !in_place &&
      static_cast<uint64_t>(rcount) * rt_type->size() != block)
    return RaiseError(comm.get(), MPI_ERR_TRUNCATE, kFn,
                      "sendcount x sendtype differs from recvcount x "
                      "recvtype at the root");
  if (mode.blocking() &&
      ShmScatter(*st, *comm, sendbuf, scount, st_type.get(), recvbuf, rcount,
                 rt_type.get(), root, kFn, &err))
    return err;
  auto r = NewRequest(mode);
  r->type = rt_type ? rt_type : st_type;
  r->more_types = {st_type};
  const uint8_t* in =
      is_root ? InBytes(*r, sendbuf, static_cast<int64_t>(scount) * comm->size,
                        *st_type)
              : nullptr;
  uint8_t* out = in_place ? const_cast<uint8_t*>(in ? in + root * block
                                                    : nullptr)
                          : OutBytes(*r, recvbuf, rcount, rt_type);
  CollArgs a;
  a.collective = Collective::kScatter;
  a.root = root;
  a.bytes = block;
  return Launch(*st, comm, r, a, in, out, {}, mode, req, kFn);
}

// Gatherv / Allgatherv. Derived receive types use a packed staging layout
// (blocks back to back) and unpack each block at its displacement.
int Gatherv(const void* sendbuf, int scount, MPI_Datatype stype,
            void* recvbuf, const int* rcounts, const int* displs,
            MPI_Datatype rtype, int root, MPI_Comm c, bool all,
            Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  if (!all && !CheckRoot(root, *comm, kFn, &err)) return err;
  const bool is_root = all || comm->rank == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root)
    return RaiseError(comm.get(), MPI_ERR_BUFFER, kFn,
                      "sendbuf = MPI_IN_PLACE is only allowed at the root");
  TypePtr st_type, rt_type;
  if (!in_place) {
    st_type = CheckData(*st, sendbuf, scount, stype, comm.get(), kFn, &err,
                     "send");
    if (!st_type) return err;
  }
  const int n = comm->size;
  if (is_root) {
    rt_type = CheckType(*st, rtype, comm.get(), kFn, &err, "recvtype");
    if (!rt_type ||
        !CheckCounts(rcounts, displs, n, *comm, kFn, "recvcounts", "displs",
                     &err))
      return err;
  }
  auto r = NewRequest(mode);
  r->type = st_type ? st_type : rt_type;
  r->more_types = {rt_type};
  CollArgs a;
  a.collective = all ? Collective::kAllgatherv : Collective::kGatherv;
  a.root = root;
  uint8_t* out = nullptr;
  if (is_root) {
    a.counts.resize(n);
    a.displs.resize(n);
    const int64_t sz = rt_type->size();
    if (rt_type->is_contiguous()) {
      for (int i = 0; i < n; ++i) {
        a.counts[i] = static_cast<uint64_t>(rcounts[i]) * sz;
        a.displs[i] = static_cast<uint64_t>(displs[i]) * rt_type->extent();
      }
      out = static_cast<uint8_t*>(recvbuf) + rt_type->true_lb();
    } else {
      uint64_t total = 0;
      for (int i = 0; i < n; ++i) {
        a.counts[i] = static_cast<uint64_t>(rcounts[i]) * sz;
        a.displs[i] = total;
        total += a.counts[i];
      }
      out = Stage(*r, total);
      std::vector<int> cs(rcounts, rcounts + n), ds(displs, displs + n);
      std::vector<uint64_t> at = a.displs;
      const int64_t ext = rt_type->extent();
      TypePtr t = rt_type;
      if (in_place) {
        const uint8_t* from =
            static_cast<uint8_t*>(recvbuf) + ds[comm->rank] * ext;
        PackInput(*r, [t, from, c = cs[comm->rank],
                       to = out + at[comm->rank]] { t->Pack(from, c, to); });
      }
      r->on_complete.push_back([t, out, recvbuf, cs, ds, at, ext] {
        for (size_t i = 0; i < cs.size(); ++i)
          t->Unpack(out + at[i], cs[i] * t->size(),
                    static_cast<uint8_t*>(recvbuf) + ds[i] * ext, cs[i]);
      });
    }
    for (int i = 0; i < n; ++i)
      if (rcounts[i] < 0)
        return RaiseError(comm.get(), MPI_ERR_COUNT, kFn, "recvcounts < 0");
  }
  const uint64_t mine =
      in_place ? a.counts[comm->rank]
               : static_cast<uint64_t>(scount) * st_type->size();
  if (is_root && mine != a.counts[comm->rank])
    return RaiseError(comm.get(), MPI_ERR_TRUNCATE, kFn,
                      "sendcount x sendtype differs from recvcounts[rank] x "
                      "recvtype");
  a.bytes = mine;
  const uint8_t* in = in_place ? out + a.displs[comm->rank]
                               : InBytes(*r, sendbuf, scount, *st_type);
  if (!all && !is_root) {
    a.counts.assign(n, 0);  // only the root's matter; kept for the builder
    a.displs.assign(n, 0);
    a.counts[comm->rank] = mine;
  }
  return Launch(*st, comm, r, a, in, out, {}, mode, req, kFn);
}

int Scatterv(const void* sendbuf, const int* scounts, const int* displs,
             MPI_Datatype stype, void* recvbuf, int rcount,
             MPI_Datatype rtype, int root, MPI_Comm c, Mode mode,
             MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  if (!CheckRoot(root, *comm, kFn, &err)) return err;
  const int n = comm->size;
  const bool is_root = comm->rank == root;
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (in_place && !is_root)
    return RaiseError(comm.get(), MPI_ERR_BUFFER, kFn,
                      "recvbuf = MPI_IN_PLACE is only allowed at the root");
  TypePtr st_type, rt_type;
  if (is_root) {
    st_type = CheckType(*st, stype, comm.get(), kFn, &err, "sendtype");
    if (!st_type || !CheckCounts(scounts, displs, n, *comm, kFn,
                                 "sendcounts", "displs", &err))
      return err;
  }
  if (!in_place) {
    rt_type = CheckData(*st, recvbuf, rcount, rtype, comm.get(), kFn, &err,
                     "recv");
    if (!rt_type) return err;
  }
  auto r = NewRequest(mode);
  r->type = rt_type ? rt_type : st_type;
  r->more_types = {st_type};
  CollArgs a;
  a.collective = Collective::kScatterv;
  a.root = root;
  a.counts.assign(n, 0);
  a.displs.assign(n, 0);
  const uint8_t* in = nullptr;
  if (is_root) {
    const int64_t sz = st_type->size();
    if (st_type->is_contiguous()) {
      for (int i = 0; i < n; ++i) {
        a.counts[i] = static_cast<uint64_t>(scounts[i]) * sz;
        a.displs[i] = static_cast<uint64_t>(displs[i]) * st_type->extent();
      }
      in = static_cast<const uint8_t*>(sendbuf) + st_type->true_lb();
    } else {
      uint64_t total = 0;
      for (int i = 0; i < n; ++i) {
        a.counts[i] = static_cast<uint64_t>(scounts[i]) * sz;
        a.displs[i] = total;
        total += a.counts[i];
      }
      uint8_t* s = Stage(*r, total);
      PackInput(*r, [st_type, sendbuf, s, at = a.displs,
                     cs = std::vector<int>(scounts, scounts + n),
                     ds = std::vector<int>(displs, displs + n)] {
        for (size_t i = 0; i < cs.size(); ++i)
          st_type->Pack(static_cast<const uint8_t*>(sendbuf) +
                            ds[i] * st_type->extent(),
                        cs[i], s + at[i]);
      });
      in = s;
    }
  }
  const uint64_t mine = in_place
                            ? a.counts[comm->rank]
                            : static_cast<uint64_t>(rcount) * rt_type->size();
  if (is_root && mine != a.counts[comm->rank])
    return RaiseError(comm.get(), MPI_ERR_TRUNCATE, kFn,
                      "sendcounts[root] x sendtype differs from recvcount x "
                      "recvtype at the root");
  a.counts[comm->rank] = mine;
  a.bytes = mine;
  uint8_t* out = in_place ? const_cast<uint8_t*>(in) + a.displs[root]
                          : OutBytes(*r, recvbuf, rcount, rt_type);
  return Launch(*st, comm, r, a, in, out, {}, mode, req, kFn);
}

// Alltoall, Alltoallv and Alltoallw share one path: per-peer byte blocks.
// Non-contiguous types are packed per peer (blocks back to back).
struct PeerSide {
  const void* buf;
  const int* counts;
  const int* displs;       // elements (v) or bytes (w)
  bool displs_in_bytes;
  std::vector<TypePtr> types;  // per peer
};

int AlltoallCommon(Collective kind, PeerSide send, PeerSide recv,
                   bool in_place, const CommPtr& comm, State& st,
                   Mode mode, MPI_Request* req, const char* fn) {
  const int n = comm->size;
  auto r = NewRequest(mode);
  r->more_types = recv.types;
  for (auto& t : send.types) r->more_types.push_back(t);
  auto disp = [](const PeerSide& p, int i) -> int64_t {
    return p.displs_in_bytes ? p.displs[i]
                             : static_cast<int64_t>(p.displs[i]) *
                                   p.types[i]->extent();
  };
  bool contiguous = true;
  for (int i = 0; i < n; ++i)
    contiguous = contiguous && recv.types[i]->is_contiguous() &&
                 recv.types[i]->true_lb() == 0 &&
                 (in_place || (send.types[i]->is_contiguous() &&
                               send.types[i]->true_lb() == 0));
  CollArgs a;
  a.collective = Collective::kAlltoallv;
  a.counts.resize(n);
  a.displs.resize(n);
  a.send_counts.resize(n);
  a.send_displs.resize(n);
  const uint8_t* in;
  uint8_t* out;
  if (contiguous && !in_place) {
    for (int i = 0; i < n; ++i) {
      a.counts[i] = static_cast<uint64_t>(recv.counts[i]) * recv.types[i]->size();
      a.displs[i] = disp(recv, i);
      a.send_counts[i] =
          static_cast<uint64_t>(send.counts[i]) * send.types[i]->size();
      a.send_displs[i] = disp(send, i);
    }
    in = static_cast<const uint8_t*>(send.buf);
    out = static_cast<uint8_t*>(const_cast<void*>(recv.buf));
  } else {
    // Pack: inputs (the receive buffer itself when in place) and outputs
    // in staging, blocks back to back; unpack every block at completion.
    const PeerSide& src = in_place ? recv : send;
    uint64_t sin = 0, sout = 0;
    for (int i = 0; i < n; ++i) {
      a.send_counts[i] =
          static_cast<uint64_t>(src.counts[i]) * src.types[i]->size();
      a.send_displs[i] = sin;
      sin += a.send_counts[i];
      a.counts[i] = static_cast<uint64_t>(recv.counts[i]) * recv.types[i]->size();
      a.displs[i] = sout;
      sout += a.counts[i];
    }
    uint8_t* sbuf = Stage(*r, sin);
    {
      std::vector<int64_t> from(n);
      for (int i = 0; i < n; ++i) from[i] = disp(src, i);
      PackInput(*r, [types = src.types, buf = src.buf, from,
                     cs = std::vector<int>(src.counts, src.counts + n),
                     at = a.send_displs, sbuf] {
        for (size_t i = 0; i < cs.size(); ++i)
          types[i]->Pack(static_cast<const uint8_t*>(buf) + from[i], cs[i],
                         sbuf + at[i]);
      });
    }
    uint8_t* rbuf = Stage(*r, sout);
    std::vector<TypePtr> types = recv.types;
    std::vector<int> cs(recv.counts, recv.counts + n);
    std::vector<int64_t> ds(n);
    for (int i = 0; i < n; ++i) ds[i] = disp(recv, i);
    std::vector<uint64_t> at = a.displs;
    void* user = const_cast<void*>(recv.buf);
    r->on_complete.push_back([types, cs, ds, at, rbuf, user] {
      for (size_t i = 0; i < cs.size(); ++i)
        types[i]->Unpack(rbuf + at[i], cs[i] * types[i]->size(),
                         static_cast<uint8_t*>(user) + ds[i], cs[i]);
    });
    in = sbuf;
    out = rbuf;
  }
  (void)kind;
  return Launch(st, comm, r, a, in, out, {}, mode, req, fn);
}

int Alltoall(const void* sendbuf, int scount, MPI_Datatype stype,
             void* recvbuf, int rcount, MPI_Datatype rtype, MPI_Comm c,
             Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const int n = comm->size;
  TypePtr rt = CheckData(*st, recvbuf, rcount, rtype, comm.get(), kFn, &err,
                   "recv");
  if (!rt) return err;
  TypePtr stt = rt;
  if (!in_place) {
    stt = CheckData(*st, sendbuf, scount, stype, comm.get(), kFn, &err,
                     "send");
    if (!stt) return err;
    if (static_cast<int64_t>(scount) * stt->size() !=
        static_cast<int64_t>(rcount) * rt->size())
      return RaiseError(comm.get(), MPI_ERR_TRUNCATE, kFn,
                        "sendcount x sendtype differs from recvcount x "
                        "recvtype");
  }
  if (mode.blocking() &&
      ShmAlltoall(*st, *comm, sendbuf, scount, in_place ? nullptr : stt.get(),
                  recvbuf, rcount, *rt, kFn, &err))
    return err;
  if (!in_place && stt->is_contiguous() && rt->is_contiguous()) {
    // The common case: the uniform schedule (Bruck or pairwise).
    auto r = NewRequest(mode);
    r->type = rt;
    CollArgs a;
    a.collective = Collective::kAlltoall;
    a.bytes = static_cast<uint64_t>(rcount) * rt->size();
    // Not MPI_IN_PLACE, and MPI forbids overlapping buffers otherwise: the
    // blocks are received straight into place.
    a.buffers_disjoint = true;
    return Launch(*st, comm, r, a,
                  static_cast<const uint8_t*>(sendbuf) + stt->true_lb(),
                  static_cast<uint8_t*>(recvbuf) + rt->true_lb(), {},
                  mode, req, kFn);
  }
  std::vector<int> sc(n, in_place ? rcount : scount), rc(n, rcount);
  std::vector<int> sd(n), rd(n);
  for (int i = 0; i < n; ++i) {
    sd[i] = i * (in_place ? rcount : scount);
    rd[i] = i * rcount;
  }
  PeerSide send{sendbuf, sc.data(), sd.data(), false,
                std::vector<TypePtr>(n, stt)};
  PeerSide recv{recvbuf, rc.data(), rd.data(), false,
                std::vector<TypePtr>(n, rt)};
  return AlltoallCommon(Collective::kAlltoall, send, recv, in_place, comm,
                        *st, mode, req, kFn);
}

int Alltoallv(const void* sendbuf, const int* scounts, const int* sdispls,
              MPI_Datatype stype, void* recvbuf, const int* rcounts,
              const int* rdispls, MPI_Datatype rtype, MPI_Comm c,
              Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  const int n = comm->size;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  TypePtr rt = CheckType(*st, rtype, comm.get(), kFn, &err, "recvtype");
  if (!rt || !CheckCounts(rcounts, rdispls, n, *comm, kFn, "recvcounts",
                          "rdispls", &err))
    return err;
  TypePtr stt = rt;
  if (!in_place) {
    stt = CheckType(*st, stype, comm.get(), kFn, &err, "sendtype");
    if (!stt || !CheckCounts(scounts, sdispls, n, *comm, kFn, "sendcounts",
                             "sdispls", &err))
      return err;
  }
  PeerSide send{sendbuf, in_place ? rcounts : scounts,
                in_place ? rdispls : sdispls, false,
                std::vector<TypePtr>(n, stt)};
  PeerSide recv{recvbuf, rcounts, rdispls, false, std::vector<TypePtr>(n, rt)};
  return AlltoallCommon(Collective::kAlltoallv, send, recv, in_place, comm,
                        *st, mode, req, kFn);
}

int Alltoallw(const void* sendbuf, const int* scounts, const int* sdispls,
              const MPI_Datatype* stypes, void* recvbuf, const int* rcounts,
              const int* rdispls, const MPI_Datatype* rtypes, MPI_Comm c,
              Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  const int n = comm->size;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (rtypes == nullptr || (!in_place && stypes == nullptr))
    return RaiseError(comm.get(), MPI_ERR_TYPE, kFn,
                      "sendtypes or recvtypes is NULL");
  if (!CheckCounts(rcounts, rdispls, n, *comm, kFn, "recvcounts", "rdispls",
                   &err))
    return err;
  if (!in_place && !CheckCounts(scounts, sdispls, n, *comm, kFn,
                                "sendcounts", "sdispls", &err))
    return err;
  std::vector<TypePtr> rts(n), sts(n);
  for (int i = 0; i < n; ++i) {
    std::string an = "recvtypes[" + std::to_string(i) + "]";
    rts[i] = CheckType(*st, rtypes[i], comm.get(), kFn, &err, an.c_str());
    if (!rts[i]) return err;
    if (in_place) {
      sts[i] = rts[i];
    } else {
      an = "sendtypes[" + std::to_string(i) + "]";
      sts[i] = CheckType(*st, stypes[i], comm.get(), kFn, &err, an.c_str());
      if (!sts[i]) return err;
    }
  }
  PeerSide send{sendbuf, in_place ? rcounts : scounts,
                in_place ? rdispls : sdispls, true, sts};
  PeerSide recv{recvbuf, rcounts, rdispls, true, rts};
  return AlltoallCommon(Collective::kAlltoallv, send, recv, in_place, comm,
                        *st, mode, req, kFn);
}

// Reduce_scatter (per-rank counts) and Reduce_scatter_block.
int ReduceScatter(const void* sendbuf, void* recvbuf, const int* rcounts,
                  int block_count, MPI_Datatype dt, MPI_Op o, MPI_Comm c,
                  Mode mode, MPI_Request* req, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  CommPtr comm = Enter(*st, c, mode, req, kFn, &err);
  if (!comm) return err;
  const int n = comm->size;
  TypePtr type = CheckType(*st, dt, comm.get(), kFn, &err);
  if (!type) return err;
  std::vector<int> counts(n, block_count);
  if (rcounts != nullptr) {
    if (!CheckCounts(rcounts, nullptr, n, *comm, kFn, "recvcounts", nullptr,
                     &err))
      return err;
    counts.assign(rcounts, rcounts + n);
  } else if (!CheckCount(block_count, comm.get(), kFn, &err, "recvcount")) {
    return err;
  }
  auto op = CheckOpArg(*st, o, *type, comm.get(), kFn, &err);
  if (!op) return err;
  const int64_t total = std::accumulate(counts.begin(), counts.end(),
                                        int64_t{0});
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (total > INT32_MAX)
    return RaiseError(comm.get(), MPI_ERR_COUNT, kFn,
                      "the sum of the counts exceeds INT_MAX");
  if ((!in_place && !CheckBuffer(sendbuf, static_cast<int>(total), *type,
                                 comm.get(), kFn, &err, "sendbuf")) ||
      !CheckBuffer(recvbuf, in_place ? static_cast<int>(total)
                                     : counts[comm->rank],
                   *type, comm.get(), kFn, &err, "recvbuf"))
    return err;
  auto r = NewRequest(mode);
  r->type = type;
  coll::ReduceFn fn_ctx;
  // The schedule reads the whole vector (buf 0) and writes this rank's
  // block (buf 1). In place, the input is the whole receive buffer: set up
  // the reduction over the whole vector, then point the output at a
  // separate staging block copied back into the buffer's start.
  ReduceBufs b = SetupReduce(*r, in_place ? recvbuf : sendbuf, nullptr,
                             static_cast<int>(total), dt, type, op,
                             /*in_place=*/false, /*has_output=*/false,
                             &fn_ctx);
  if (!b.error.empty())
    return RaiseError(comm.get(), MPI_ERR_TYPE, kFn, "datatype: " + b.error);
  const int mine = counts[comm->rank];
  const uint64_t elem = b.elem_size;
  const uint64_t per_item = total ? b.bytes / total : 0;
  uint8_t* out;
  if (in_place || !type->is_contiguous()) {
    ReduceBufs ob = SetupReduce(*r, recvbuf, recvbuf, mine, dt, type, op,
                                /*in_place=*/true, /*has_output=*/true,
                                &fn_ctx);
    if (!ob.error.empty())
      return RaiseError(comm.get(), MPI_ERR_TYPE, kFn, "datatype: " + ob.error);
    out = ob.recv;
    if (in_place && b.send == ob.send) {
      // Contiguous in place: the input must not be overwritten while read.
      uint8_t* copy = Stage(*r, b.bytes);
      if (b.bytes)
        PackInput(*r, [copy, from = b.send, bytes = b.bytes] {
          std::memcpy(copy, from, bytes);
        });
      b.send = copy;
    }
  } else {
    out = mine ? static_cast<uint8_t*>(recvbuf) + type->true_lb() : nullptr;
  }
  CollArgs a;
  a.collective = rcounts ? Collective::kReduceScatter
                         : Collective::kReduceScatterBlock;
  a.commutative = op->commutative;
  a.counts.resize(n);
  for (int i = 0; i < n; ++i) a.counts[i] = counts[i] * per_item;
  a.bytes = static_cast<uint64_t>(block_count) * per_item;
  (void)elem;
  return Launch(*st, comm, r, a, b.send, out, fn_ctx, mode, req, kFn);
}

// MPI_*_init: runs `call` (the collective's function with a Mode) as an
// init.
template <typename Call>
int InitColl(Call call, MPI_Request* request) {
  return call(Mode{Mode::kInit}, request);
}

}  // namespace

int InternalAllgather(State& st, const CommPtr& comm, const void* send,
                      void* recv, size_t bytes, const char* fn) {
  CollArgs a;
  a.collective = Collective::kAllgather;
  a.bytes = bytes;
  return Launch(st, comm, NewRequest(kBlockingCall), a, send, recv, {},
                kBlockingCall, nullptr, fn);
}

}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation
using rondo::nmad::coll::Collective;

extern "C" {

int PMPIX_Comm_set_split(MPI_Comm comm, int s) {
  RONDO_MPI_ENTER_COMM("MPIX_Comm_set_split", comm);
  if (s < MPIX_SPLIT_DEFAULT || s > rondo::nmad::coll::kMaxFixedSplit)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "s = " + std::to_string(s) +
                          " is not allowed: expected MPIX_SPLIT_DEFAULT (-3), "
                          "MPIX_SPLIT_OFF (-2), MPIX_SPLIT_AUTO (-1) or a "
                          "level from 0 to 31");
  c->split.store(s, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int PMPIX_Comm_get_split(MPI_Comm comm, int doubling, int* s) {
  RONDO_MPI_ENTER_COMM("MPIX_Comm_get_split", comm);
  if (s == nullptr) return RaiseError(c.get(), MPI_ERR_ARG, kFn, "s is NULL");
  *s = ResolveCommSplit(*st, *c, doubling != 0);
  return MPI_SUCCESS;
}

int PMPI_Barrier(MPI_Comm comm) {
  return Barrier(comm, kBlockingCall, nullptr, "MPI_Barrier");
}
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return Barrier(comm, kNonblockingCall, request, "MPI_Ibarrier");
}
int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm) {
  return Bcast(buffer, count, datatype, root, comm, kBlockingCall, nullptr,
               "MPI_Bcast");
}
int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm, MPI_Request* request) {
  return Bcast(buffer, count, datatype, root, comm, kNonblockingCall, request,
               "MPI_Ibcast");
}
int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return ReduceLike(Collective::kReduce, sendbuf, recvbuf, count, datatype,
                    op, root, comm, kBlockingCall, nullptr, "MPI_Reduce");
}
int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
  return ReduceLike(Collective::kReduce, sendbuf, recvbuf, count, datatype,
                    op, root, comm, kNonblockingCall, request, "MPI_Ireduce");
}
int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return ReduceLike(Collective::kAllreduce, sendbuf, recvbuf, count,
                    datatype, op, 0, comm, kBlockingCall, nullptr, "MPI_Allreduce");
}
int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  return ReduceLike(Collective::kAllreduce, sendbuf, recvbuf, count,
                    datatype, op, 0, comm, kNonblockingCall, request, "MPI_Iallreduce");
}
int PMPI_Scan(const void* sendbuf, void* recvbuf, int count,
             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return ReduceLike(Collective::kScan, sendbuf, recvbuf, count, datatype, op,
                    0, comm, kBlockingCall, nullptr, "MPI_Scan");
}
int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
  return ReduceLike(Collective::kScan, sendbuf, recvbuf, count, datatype, op,
                    0, comm, kNonblockingCall, request, "MPI_Iscan");
}
int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return ReduceLike(Collective::kExscan, sendbuf, recvbuf, count, datatype,
                    op, 0, comm, kBlockingCall, nullptr, "MPI_Exscan");
}
int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  return ReduceLike(Collective::kExscan, sendbuf, recvbuf, count, datatype,
                    op, 0, comm, kNonblockingCall, request, "MPI_Iexscan");
}
int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
               MPI_Comm comm) {
  return Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                root, comm, false, kBlockingCall, nullptr, "MPI_Gather");
}
int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm, MPI_Request* request) {
  return Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                root, comm, false, kNonblockingCall, request, "MPI_Igather");
}
int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm) {
  return Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                0, comm, true, kBlockingCall, nullptr, "MPI_Allgather");
}
int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request) {
  return Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                0, comm, true, kNonblockingCall, request, "MPI_Iallgather");
}
int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, const int recvcounts[], const int displs[],
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                 recvtype, root, comm, false, kBlockingCall, nullptr, "MPI_Gatherv");
}
int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  return Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                 recvtype, root, comm, false, kNonblockingCall, request, "MPI_Igatherv");
}
int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm) {
  return Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                 recvtype, 0, comm, true, kBlockingCall, nullptr, "MPI_Allgatherv");
}
int PMPI_Iallgatherv(const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                 recvtype, 0, comm, true, kNonblockingCall, request, "MPI_Iallgatherv");
}
int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                 root, comm, kBlockingCall, nullptr, "MPI_Scatter");
}
int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, MPI_Request* request) {
  return Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                 root, comm, kNonblockingCall, request, "MPI_Iscatter");
}
int PMPI_Scatterv(const void* sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  return Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                  recvtype, root, comm, kBlockingCall, nullptr, "MPI_Scatterv");
}
int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  return Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                  recvtype, root, comm, kNonblockingCall, request, "MPI_Iscatterv");
}
int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm) {
  return Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, kBlockingCall, nullptr, "MPI_Alltoall");
}
int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request* request) {
  return Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, kNonblockingCall, request, "MPI_Ialltoall");
}
int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                   recvcounts, rdispls, recvtype, comm, kBlockingCall, nullptr,
                   "MPI_Alltoallv");
}
int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                   recvcounts, rdispls, recvtype, comm, kNonblockingCall, request,
                   "MPI_Ialltoallv");
}
int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], const MPI_Datatype sendtypes[],
                  void* recvbuf, const int recvcounts[], const int rdispls[],
                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, kBlockingCall, nullptr,
                   "MPI_Alltoallw");
}
int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request* request) {
  return Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, kNonblockingCall, request,
                   "MPI_Ialltoallw");
}
int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                       const int recvcounts[], MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm) {
  if (recvcounts == nullptr) {
    RONDO_MPI_ENTER("MPI_Reduce_scatter");
    (void)st;
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "recvcounts is NULL");
  }
  return ReduceScatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                       kBlockingCall, nullptr, "MPI_Reduce_scatter");
}
int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (recvcounts == nullptr) {
    RONDO_MPI_ENTER("MPI_Ireduce_scatter");
    (void)st;
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "recvcounts is NULL");
  }
  return ReduceScatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                       kNonblockingCall, request, "MPI_Ireduce_scatter");
}
int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf,
                             int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  return ReduceScatter(sendbuf, recvbuf, nullptr, recvcount, datatype, op,
                       comm, kBlockingCall, nullptr, "MPI_Reduce_scatter_block");
}
int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf,
                              int recvcount, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  return ReduceScatter(sendbuf, recvbuf, nullptr, recvcount, datatype, op,
                       comm, kNonblockingCall, request, "MPI_Ireduce_scatter_block");
}

// ---- Persistent collectives (MPI-4) ----

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Barrier(comm, m, q, "MPI_Barrier_init");
      },
      request);
}
int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                   MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Bcast(buffer, count, datatype, root, comm, m, q,
                     "MPI_Bcast_init");
      },
      request);
}
int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return ReduceLike(Collective::kReduce, sendbuf, recvbuf, count,
                          datatype, op, root, comm, m, q, "MPI_Reduce_init");
      },
      request);
}
int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return ReduceLike(Collective::kAllreduce, sendbuf, recvbuf, count,
                          datatype, op, 0, comm, m, q, "MPI_Allreduce_init");
      },
      request);
}
int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info,
                  MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return ReduceLike(Collective::kScan, sendbuf, recvbuf, count,
                          datatype, op, 0, comm, m, q, "MPI_Scan_init");
      },
      request);
}
int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return ReduceLike(Collective::kExscan, sendbuf, recvbuf, count,
                          datatype, op, 0, comm, m, q, "MPI_Exscan_init");
      },
      request);
}
int PMPI_Gather_init(const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                    MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, root, comm, false, m, q, "MPI_Gather_init");
      },
      request);
}
int PMPI_Allgather_init(const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                       MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, 0, comm, true, m, q, "MPI_Allgather_init");
      },
      request);
}
int PMPI_Gatherv_init(const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                       displs, recvtype, root, comm, false, m, q,
                       "MPI_Gatherv_init");
      },
      request);
}
int PMPI_Allgatherv_init(const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                        MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                       displs, recvtype, 0, comm, true, m, q,
                       "MPI_Allgatherv_init");
      },
      request);
}
int PMPI_Scatter_init(const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                     MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, m, q, "MPI_Scatter_init");
      },
      request);
}
int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[],
                      const int displs[], MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info,
                      MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                        recvcount, recvtype, root, comm, m, q,
                        "MPI_Scatterv_init");
      },
      request);
}
int PMPI_Alltoall_init(const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                      MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, m, q, "MPI_Alltoall_init");
      },
      request);
}
int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[],
                       const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                         recvcounts, rdispls, recvtype, comm, m, q,
                         "MPI_Alltoallv_init");
      },
      request);
}
int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[],
                       const int sdispls[], const MPI_Datatype sendtypes[],
                       void* recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[],
                       MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                         recvcounts, rdispls, recvtypes, comm, m, q,
                         "MPI_Alltoallw_init");
      },
      request);
}
int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf,
                            const int recvcounts[], MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Info,
                            MPI_Request* request) {
  if (recvcounts == nullptr) {
    RONDO_MPI_ENTER("MPI_Reduce_scatter_init");
    (void)st;
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "recvcounts is NULL");
  }
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return ReduceScatter(sendbuf, recvbuf, recvcounts, 0, datatype, op,
                             comm, m, q, "MPI_Reduce_scatter_init");
      },
      request);
}
int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf,
                                  int recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, MPI_Info,
                                  MPI_Request* request) {
  return InitColl(
      [=](Mode m, MPI_Request* q) {
        return ReduceScatter(sendbuf, recvbuf, nullptr, recvcount, datatype,
                             op, comm, m, q, "MPI_Reduce_scatter_block_init");
      },
      request);
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPIX_Comm_set_split = PMPIX_Comm_set_split
#pragma weak MPIX_Comm_get_split = PMPIX_Comm_get_split
#pragma weak MPI_Barrier = PMPI_Barrier
#pragma weak MPI_Ibarrier = PMPI_Ibarrier
#pragma weak MPI_Bcast = PMPI_Bcast
#pragma weak MPI_Ibcast = PMPI_Ibcast
#pragma weak MPI_Reduce = PMPI_Reduce
#pragma weak MPI_Ireduce = PMPI_Ireduce
#pragma weak MPI_Allreduce = PMPI_Allreduce
#pragma weak MPI_Iallreduce = PMPI_Iallreduce
#pragma weak MPI_Scan = PMPI_Scan
#pragma weak MPI_Iscan = PMPI_Iscan
#pragma weak MPI_Exscan = PMPI_Exscan
#pragma weak MPI_Iexscan = PMPI_Iexscan
#pragma weak MPI_Gather = PMPI_Gather
#pragma weak MPI_Igather = PMPI_Igather
#pragma weak MPI_Allgather = PMPI_Allgather
#pragma weak MPI_Iallgather = PMPI_Iallgather
#pragma weak MPI_Gatherv = PMPI_Gatherv
#pragma weak MPI_Igatherv = PMPI_Igatherv
#pragma weak MPI_Allgatherv = PMPI_Allgatherv
#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
#pragma weak MPI_Scatter = PMPI_Scatter
#pragma weak MPI_Iscatter = PMPI_Iscatter
#pragma weak MPI_Scatterv = PMPI_Scatterv
#pragma weak MPI_Iscatterv = PMPI_Iscatterv
#pragma weak MPI_Alltoall = PMPI_Alltoall
#pragma weak MPI_Ialltoall = PMPI_Ialltoall
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
#pragma weak MPI_Barrier_init = PMPI_Barrier_init
#pragma weak MPI_Bcast_init = PMPI_Bcast_init
#pragma weak MPI_Reduce_init = PMPI_Reduce_init
#pragma weak MPI_Allreduce_init = PMPI_Allreduce_init
#pragma weak MPI_Scan_init = PMPI_Scan_init
#pragma weak MPI_Exscan_init = PMPI_Exscan_init
#pragma weak MPI_Gather_init = PMPI_Gather_init
#pragma weak MPI_Allgather_init = PMPI_Allgather_init
#pragma weak MPI_Gatherv_init = PMPI_Gatherv_init
#pragma weak MPI_Allgatherv_init = PMPI_Allgatherv_init
#pragma weak MPI_Scatter_init = PMPI_Scatter_init
#pragma weak MPI_Scatterv_init = PMPI_Scatterv_init
#pragma weak MPI_Alltoall_init = PMPI_Alltoall_init
#pragma weak MPI_Alltoallv_init = PMPI_Alltoallv_init
#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
#pragma weak MPI_Reduce_scatter_init = PMPI_Reduce_scatter_init
#pragma weak MPI_Reduce_scatter_block_init = PMPI_Reduce_scatter_block_init
