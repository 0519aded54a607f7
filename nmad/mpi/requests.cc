// MadMPI request calls: MPI_Wait*, MPI_Test*, MPI_Request_free,
// MPI_Cancel. A request is a core Request (point-to-point) or a running
// collective (nmad/coll Operation); completing one unpacks a derived
// datatype's staging buffer and fills the MPI_Status.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/requests.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {

bool IsDone(const MpiRequest& r) {
  switch (r.kind) {
    case MpiRequest::Kind::kSend:
    case MpiRequest::Kind::kRecv:
      return r.req.done();
    case MpiRequest::Kind::kColl:
      // A split collective's last levels run on the thread that waits or
      // tests (MPI_Waitall, MPI_Testany, ... all come through here).
      (void)r.op->RunReadyAppSteps();
      return r.op->done();
    case MpiRequest::Kind::kDone:
      return true;
    case MpiRequest::Kind::kSendrecv:
      return IsDone((*r.halves)[0]) && IsDone((*r.halves)[1]);
    case MpiRequest::Kind::kRma:
      return r.rma_done();
  }
  return true;
}

int ProgressPass(State& st, bool engine_too) {
  // The rails first: that is where point-to-point completions come from
  // (and the core polls the engine now and then itself, as in Core::Wait).
  int n = st.core().Progress();
  // The engine's queue tree always holds the rails' repeat polling tasks, so
  // "anything queued" says nothing; a collective's steps are engine tasks,
  // so a pass that waits for one walks the tree every time, others every
  // 16th pass: MPI's progress rule (a call progresses everything, e.g. a
  // collective this rank started and is not waiting for) at 1/16 the cost.
  thread_local uint32_t pass = 0;
  if (engine_too || (++pass & 15) == 0) n += st.engine().Poll();
  return n;
}

int StatusError(const Comm* comm, Status s, const char* fn,
                const std::string& what, int peer) {
  State* st = Mpi();
  switch (s) {
    case Status::kPeerFailed: {
      std::string text;
      if (st && comm && peer >= 0 && peer < comm->size)
        text = st->core().FailureText(comm->world[peer]);
      return RaiseError(comm, MPIX_ERR_PROC_FAILED, fn,
                        what + ": the peer process failed" +
                            (text.empty() ? "" : " (" + text + ")"));
    }
    case Status::kShutdown:
      return RaiseError(comm, MPI_ERR_OTHER, fn,
                        what + ": MPI is shutting down");
    case Status::kTruncated:
      return RaiseError(comm, MPI_ERR_TRUNCATE, fn, what);
    case Status::kInvalidArgument:
      return RaiseError(comm, MPI_ERR_ARG, fn, what + ": invalid argument");
    default:
      return RaiseError(comm, MPI_ERR_INTERN, fn,
                        what + ": " + std::string(engine::StatusName(s)));
  }
}

namespace {

// The status of a completed point-to-point request, as far as the core's
// request tells it (Finish adds the errors; FinishInto has none).
void FillStatus(State& st, MpiRequest& r, Status s) {
  if (r.kind == MpiRequest::Kind::kSend) {
    r.status = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return;
  }
  const RecvInfo& info = r.req.info();
  r.status.MPI_SOURCE = info.source >= 0 && info.source < st.world_size()
                            ? r.comm->from_world[info.source]
                            : MPI_ANY_SOURCE;
  r.status.MPI_TAG = info.tag;
  r.status.rondo_bytes = static_cast<long long>(info.received);
  r.status.rondo_cancelled = s == Status::kCanceled;
}

}  // namespace

int Finish(State& st, MpiRequest& r, const char* fn) {
  if (r.completed) return r.error;
  r.completed = true;
  switch (r.kind) {
    case MpiRequest::Kind::kDone:
      break;
    case MpiRequest::Kind::kSend: {
      Status s = r.req.status();
      FillStatus(st, r, s);
      if (s != Status::kOk)
        r.error = StatusError(
            r.comm.get(), s, fn,
            r.peer >= 0 ? "send to rank " + std::to_string(r.peer) : "send",
            r.peer);
      break;
    }
    case MpiRequest::Kind::kRecv: {
      const RecvInfo& info = r.req.info();
      Status s = r.req.status();
      FillStatus(st, r, s);
      if (r.unpack_on_done && info.received > 0)
        r.type->Unpack(r.staging.data(), static_cast<int64_t>(info.received),
                       r.user_buf, r.count);
      if (s == Status::kTruncated) {
        r.error = RaiseError(
            r.comm.get(), MPI_ERR_TRUNCATE, fn,
            "a message of " + std::to_string(info.size) + " bytes from rank " +
                std::to_string(r.status.MPI_SOURCE) + " (tag " +
                std::to_string(info.tag) + ") does not fit the receive "
                "buffer of " + std::to_string(r.count) + " x " +
                std::to_string(r.type->size()) + " bytes; " +
                std::to_string(info.received) + " bytes were delivered");
      } else if (s != Status::kOk && s != Status::kCanceled) {
        const int from =
            r.status.MPI_SOURCE >= 0 ? r.status.MPI_SOURCE : r.peer;
        r.error = StatusError(
            r.comm.get(), s, fn,
            from >= 0 ? "receive from rank " + std::to_string(from)
                      : "receive",
            from);
      }
      break;
    }
    case MpiRequest::Kind::kSendrecv: {
      // Both halves report their own errors; the receive's comes first.
      const int send_error = Finish(st, (*r.halves)[0], fn);
      const int recv_error = Finish(st, (*r.halves)[1], fn);
      r.status = (*r.halves)[1].status;
      r.error = recv_error != MPI_SUCCESS ? recv_error : send_error;
      break;
    }
    case MpiRequest::Kind::kRma:
      r.status = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
      r.error = r.rma_finish();
      break;
    case MpiRequest::Kind::kColl: {
      r.status = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
      Status s = r.op->status();
      if (s != Status::kOk) {
        r.error = RaiseError(
            r.comm.get(),
            s == Status::kPeerFailed  ? MPIX_ERR_PROC_FAILED
            : s == Status::kTruncated ? MPI_ERR_TRUNCATE
                                      : MPI_ERR_OTHER,
            r.fn, r.op->error());
      }
      break;
    }
  }
  r.status.MPI_ERROR = r.error;
  return r.error;
}

void WaitUntilDone(State& st, MpiRequest& r) {
  switch (r.kind) {
    case MpiRequest::Kind::kSend:
    case MpiRequest::Kind::kRecv:
      if (!r.req.done()) (void)st.core().Wait(r.req);
      break;
    case MpiRequest::Kind::kColl:
      (void)r.op->Wait();
      break;
    case MpiRequest::Kind::kSendrecv:
      WaitUntilDone(st, (*r.halves)[0]);
      WaitUntilDone(st, (*r.halves)[1]);
      break;
    case MpiRequest::Kind::kRma: {
      IdleBackoff backoff(st.core());
      while (!r.rma_done()) backoff.Pass(ProgressPass(st, true));
      break;
    }
    case MpiRequest::Kind::kDone:
      break;
  }
}

namespace {

// Whether `r` is a send or receive that went well and needs no unpacking:
// what FinishInto completes inline, and lets skip when the status is ignored.
[[gnu::always_inline]] inline bool PlainSuccess(const MpiRequest& r) {
  return (r.kind == MpiRequest::Kind::kSend ||
          r.kind == MpiRequest::Kind::kRecv) &&
         !r.completed && r.error == MPI_SUCCESS && !r.unpack_on_done &&
         r.req.status() == Status::kOk;
}

// Finish, then the status handed out (unless ignored): inline for a
// PlainSuccess request that is not persistent, whose status is only filled
// when asked for. Finish's frame is sized for its error paths (the strings
// they build, under the stack protector): 74 instructions of MPI_Recv
// where the status's fields take about 20. A request left unfinished this
// way is not read again (its caller's stack, or the pool's reset).
[[gnu::always_inline]] inline int FinishInto(State& st, MpiRequest& r,
                                             MPI_Status* status,
                                             const char* fn) {
  int err = MPI_SUCCESS;
  if (PlainSuccess(r) && !r.persistent) {
    if (status == MPI_STATUS_IGNORE) return MPI_SUCCESS;
    r.completed = true;
    FillStatus(st, r, Status::kOk);
    r.status.MPI_ERROR = MPI_SUCCESS;
  } else {
    err = Finish(st, r, fn);
  }
  if (status != MPI_STATUS_IGNORE) *status = r.status;
  return err;
}

}  // namespace

int WaitOne(State& st, MpiRequest& r, MPI_Status* status, const char* fn) {
  // A send or a receive (MPI_Recv, MPI_Wait on one): WaitUntilDone's case
  // inline, one call fewer between the arrival and the caller.
  if (r.kind == MpiRequest::Kind::kSend || r.kind == MpiRequest::Kind::kRecv) {
    if (!r.req.done()) (void)st.core().Wait(r.req);
  } else {
    WaitUntilDone(st, r);
  }
  return FinishInto(st, r, status, fn);
}

int CancelOrWait(State& st, MpiRequest& r) {
  if (r.kind == MpiRequest::Kind::kRecv)
    (void)r.comm->p2p->CancelRecv(r.req);
  MPI_Status ignored;
  return WaitOne(st, r, &ignored, "MPI_Cancel");
}

namespace {

// The request behind `h`, or null. MPI_REQUEST_NULL gives null with
// *err == MPI_SUCCESS; a handle that is not active (completed, freed,
// stale, garbage) raises MPI_ERR_REQUEST. No lock (handle_pool.h).
MpiRequest* Lookup(State& st, MPI_Request h, const char* fn, int* err,
                   const char* arg = "request") {
  *err = MPI_SUCCESS;
  if (h == MPI_REQUEST_NULL) return nullptr;
  // Read only, like every kSentRequest use below (Finish returns at once).
  if (h == kSentRequest) return const_cast<MpiRequest*>(&st.sent_request());
  MpiRequest* r = st.requests.Get(h);
  if (r == nullptr)
    *err = RaiseError(nullptr, MPI_ERR_REQUEST, fn,
                      std::string(arg) + " = " + std::to_string(h) +
                          " is not an active request (already completed, "
                          "freed, or never started)");
  return r;
}

const MPI_Status kEmptyStatus = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0,
                                 0};

// Completes the request at *h (done), releases its handle; a persistent
// request becomes inactive instead and keeps its handle.
int Release(State& st, MPI_Request* h, MpiRequest& r, MPI_Status* status,
            const char* fn) {
  const bool p2p = r.kind == MpiRequest::Kind::kSend ||
                   r.kind == MpiRequest::Kind::kRecv;
  // An ordinary send or receive that went well, its status ignored (the
  // window of a message-rate loop, MPI_Waitall(..., MPI_STATUSES_IGNORE)),
  // skips Finish: FinishInto.
  const int err = FinishInto(st, r, status, fn);
  if (r.persistent) {
    r.persistent->active = false;
    r.kind = MpiRequest::Kind::kDone;
    return err;
  }
  if (p2p)
    (void)st.requests.Release(*h,
                              [](MpiRequest& o) { o.ResetPointToPoint(); });
  else
    (void)st.requests.Release(*h);
  *h = MPI_REQUEST_NULL;
  return err;
}

// The wait and test calls on an inactive persistent request: done at once,
// with an empty status; the handle stays.
int Inactive(MPI_Status* status) {
  if (status != MPI_STATUS_IGNORE) *status = kEmptyStatus;
  return MPI_SUCCESS;
}

// Starts a round of the persistent request behind `h` (requests[index] of
// MPI_Startall, or MPI_Start's request when index < 0).
int StartOne(State& st, MPI_Request h, const char* fn, int index) {
  MpiRequest* r = h == MPI_REQUEST_NULL ? nullptr : st.requests.Get(h);
  if (r != nullptr && r->inactive()) [[likely]] {
    r->completed = false;
    r->status = {};
    r->error = MPI_SUCCESS;
    r->cancel_requested = false;
    r->unpack_on_done = false;
    const int e = r->persistent->start(st, *r);
    if (e != MPI_SUCCESS) {
      r->kind = MpiRequest::Kind::kDone;  // stays inactive
      return e;
    }
    r->persistent->active = true;
    return MPI_SUCCESS;
  }
  // Why it cannot start, naming the argument.
  const std::string arg =
      index < 0 ? "request" : "requests[" + std::to_string(index) + "]";
  int err;
  r = Lookup(st, h, fn, &err, arg.c_str());
  if (r == nullptr) {
    if (err != MPI_SUCCESS) return err;
    return RaiseError(nullptr, MPI_ERR_REQUEST, fn,
                      arg + " is MPI_REQUEST_NULL (start a "
                      "request made by MPI_Send_init, MPI_Recv_init or an "
                      "MPI_*_init collective)");
  }
  if (!r->persistent)
    return RaiseError(r->comm.get(), MPI_ERR_REQUEST, fn,
                      arg + " = " + std::to_string(h) +
                          " is not a persistent request (only requests made "
                          "by MPI_Send_init, MPI_Recv_init, ... or an "
                          "MPI_*_init collective can be started)");
  if (r->persistent->active)
    return RaiseError(r->comm.get(), MPI_ERR_REQUEST, fn,
                      arg + " = " + std::to_string(h) +
                          " is already active: complete it (MPI_Wait, "
                          "MPI_Test, ...) before starting it again");
  return RaiseError(r->comm.get(), MPI_ERR_REQUEST, fn,
                    arg + " changed state while being started (another "
                    "thread completed or freed it)");
}

// The requests of an array call: on the stack up to 64 (no allocation on
// the common path), else on the heap.
class RequestArray {
 public:
  explicit RequestArray(int count)
      : heap_(count > kInline ? new MpiRequest*[count] : nullptr),
        data_(heap_ ? heap_.get() : inline_) {}
  MpiRequest*& operator[](int i) { return data_[i]; }
  MpiRequest* const* data() const { return data_; }

 private:
  static constexpr int kInline = 64;
  std::unique_ptr<MpiRequest*[]> heap_;
  MpiRequest* inline_[kInline];
  MpiRequest** data_;
};

// Looks up every handle of an array (MPI_REQUEST_NULL gives null);
// returns the first error. *any: at least one request is active; *coll: one
// is a collective (its progress needs the engine's queues every pass).
// `sent_null` (MPI_Waitall, MPI_Testall: every request completes or none):
// a kSentRequest gives null too, and ReleaseAll nulls its handle, with the
// empty status that is a send's.
int LookupAll(State& st, int count, const MPI_Request requests[],
              const char* fn, RequestArray& out, bool* any,
              bool* coll = nullptr, bool sent_null = false) {
  *any = false;
  bool has_coll = false;
  for (int i = 0; i < count; ++i) {
    if (sent_null && requests[i] == kSentRequest) {
      out[i] = nullptr;
      continue;
    }
    int err;
    out[i] = Lookup(st, requests[i], fn, &err);
    if (err != MPI_SUCCESS) return err;
    if (out[i] != nullptr && out[i]->inactive()) out[i] = nullptr;
    *any |= out[i] != nullptr;
    has_coll |= out[i] != nullptr && out[i]->kind == MpiRequest::Kind::kColl;
  }
  if (coll != nullptr) *coll = has_coll;
  return MPI_SUCCESS;
}

// Completes every request of the array (all done), filling statuses[i];
// MPI_ERR_IN_STATUS when one failed (its MPI_ERROR says which).
int ReleaseAll(State& st, int count, MPI_Request requests[],
               RequestArray& rs, MPI_Status statuses[], const char* fn) {
  bool any_error = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status* s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                    : &statuses[i];
    if (!rs[i]) {  // null, inactive, or a send done in its call
      if (requests[i] == kSentRequest) requests[i] = MPI_REQUEST_NULL;
      if (s != MPI_STATUS_IGNORE) *s = kEmptyStatus;
      continue;
    }
    any_error |= Release(st, &requests[i], *rs[i], s, fn) != MPI_SUCCESS;
  }
  return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

bool AllDone(const RequestArray& rs, int count) {
  for (int i = 0; i < count; ++i)
    if (rs.data()[i] && !IsDone(*rs.data()[i])) return false;
  return true;
}



}  // namespace
}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Wait");
  if (request == nullptr)
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn, "request is NULL");
  int err;
  MpiRequest* r = Lookup(*st, *request, kFn, &err);
  if (!r) {
    if (err == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
      *status = kEmptyStatus;
    return err;
  }
  if (r->inactive()) return Inactive(status);
  WaitUntilDone(*st, *r);
  return Release(*st, request, *r, status, kFn);
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Test");
  if (request == nullptr || flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "request and flag must not be NULL");
  int err;
  MpiRequest* r = Lookup(*st, *request, kFn, &err);
  if (!r) {
    *flag = err == MPI_SUCCESS;
    if (err == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
      *status = kEmptyStatus;
    return err;
  }
  if (r->inactive()) {
    *flag = 1;
    return Inactive(status);
  }
  if (!IsDone(*r))
    ProgressPass(*st, r->kind == MpiRequest::Kind::kColl);
  *flag = IsDone(*r);
  if (!*flag) return MPI_SUCCESS;
  return Release(*st, request, *r, status, kFn);
}

int PMPI_Request_get_status(MPI_Request request, int* flag,
                           MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Request_get_status");
  if (flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "flag is NULL");
  int err;
  MpiRequest* r = Lookup(*st, request, kFn, &err);
  if (!r) {
    *flag = err == MPI_SUCCESS;
    if (err == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
      *status = kEmptyStatus;
    return err;
  }
  if (r->inactive()) {
    *flag = 1;
    return Inactive(status);
  }
  if (!IsDone(*r))
    ProgressPass(*st, r->kind == MpiRequest::Kind::kColl);
  *flag = IsDone(*r);
  if (*flag) {
    err = Finish(*st, *r, kFn);
    if (status != MPI_STATUS_IGNORE) *status = r->status;
    return err;
  }
  return MPI_SUCCESS;
}

// Flattened as the message path's calls in p2p.cc are: lookup, the wait
// loop's checks and the release of every request inline.
[[gnu::flatten]]
int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  RONDO_MPI_ENTER("MPI_Waitall");
  if (count < 0)
    return RaiseError(nullptr, MPI_ERR_COUNT, kFn,
                      "count = " + std::to_string(count) + " (must be >= 0)");
  if (count > 0 && requests == nullptr)
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn,
                      "requests is NULL with count > 0");
  RequestArray rs(count);
  bool any = false, coll = false;
  if (int err = LookupAll(*st, count, requests, kFn, rs, &any, &coll,
                              /*sent_null=*/true))
    return err;
  // A request once done stays done: each pass resumes at the first one
  // still pending (no rescan of a window's completed head, O(n) in all).
  int first = 0;
  auto advance = [&] {
    while (first < count && (!rs.data()[first] || IsDone(*rs.data()[first])))
      ++first;
    return first == count;
  };
  if (!advance()) {
    rondo::nmad::IdleBackoff backoff(st->core());
    while (!advance()) backoff.Pass(ProgressPass(*st, coll));
  }
  return ReleaseAll(*st, count, requests, rs, statuses, kFn);
}

int PMPI_Testall(int count, MPI_Request requests[], int* flag,
                MPI_Status statuses[]) {
  RONDO_MPI_ENTER("MPI_Testall");
  if (count < 0 || flag == nullptr || (count > 0 && requests == nullptr))
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "count must be >= 0, flag not NULL, and requests not "
                      "NULL when count > 0");
  RequestArray rs(count);
  bool any = false, coll = false;
  if (int err = LookupAll(*st, count, requests, kFn, rs, &any, &coll,
                              /*sent_null=*/true))
    return err;
  if (!AllDone(rs, count)) ProgressPass(*st, coll);
  *flag = AllDone(rs, count);
  if (!*flag) return MPI_SUCCESS;
  return ReleaseAll(*st, count, requests, rs, statuses, kFn);
}

int PMPI_Waitany(int count, MPI_Request requests[], int* index,
                MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Waitany");
  if (count < 0 || index == nullptr || (count > 0 && requests == nullptr))
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "count must be >= 0, index not NULL, and requests not "
                      "NULL when count > 0");
  RequestArray rs(count);
  bool any = false, coll = false;
  if (int err = LookupAll(*st, count, requests, kFn, rs, &any, &coll))
    return err;
  if (!any) {
    *index = MPI_UNDEFINED;
    if (status != MPI_STATUS_IGNORE) *status = kEmptyStatus;
    return MPI_SUCCESS;
  }
  rondo::nmad::IdleBackoff backoff(st->core());
  for (;;) {
    for (int i = 0; i < count; ++i)
      if (rs[i] && IsDone(*rs[i])) {
        *index = i;
        return Release(*st, &requests[i], *rs[i], status, kFn);
      }
    backoff.Pass(ProgressPass(*st, coll));
  }
}

int PMPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Testany");
  if (count < 0 || index == nullptr || flag == nullptr ||
      (count > 0 && requests == nullptr))
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "count must be >= 0, index and flag not NULL, and "
                      "requests not NULL when count > 0");
  RequestArray rs(count);
  bool any = false, coll = false;
  if (int err = LookupAll(*st, count, requests, kFn, rs, &any, &coll))
    return err;
  if (!any) {
    *flag = 1;
    *index = MPI_UNDEFINED;
    if (status != MPI_STATUS_IGNORE) *status = kEmptyStatus;
    return MPI_SUCCESS;
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < count; ++i)
      if (rs[i] && IsDone(*rs[i])) {
        *flag = 1;
        *index = i;
        return Release(*st, &requests[i], *rs[i], status, kFn);
      }
    if (pass == 0) ProgressPass(*st, coll);
  }
  *flag = 0;
  *index = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

static int SomeCommon(State& st, int incount, MPI_Request requests[],
                      int* outcount, int indices[], MPI_Status statuses[],
                      bool wait, const char* fn) {
  if (incount < 0 || outcount == nullptr ||
      (incount > 0 && (requests == nullptr || indices == nullptr)))
    return RaiseError(nullptr, MPI_ERR_ARG, fn,
                      "incount must be >= 0, outcount not NULL, requests "
                      "and indices not NULL when incount > 0");
  RequestArray rs(incount);
  bool any = false, coll = false;
  if (int err = LookupAll(st, incount, requests, fn, rs, &any, &coll))
    return err;
  if (!any) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  rondo::nmad::IdleBackoff backoff(st.core());
  for (int pass = 0;; ++pass) {
    int n = 0;
    bool any_error = false;
    for (int i = 0; i < incount; ++i)
      if (rs[i] && IsDone(*rs[i])) {
        MPI_Status* s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                        : &statuses[n];
        indices[n++] = i;
        any_error |= Release(st, &requests[i], *rs[i], s, fn) != MPI_SUCCESS;
      }
    if (n > 0 || (!wait && pass > 0)) {
      *outcount = n;
      return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
    }
    backoff.Pass(ProgressPass(st, coll));
  }
}

int PMPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  RONDO_MPI_ENTER("MPI_Waitsome");
  return SomeCommon(*st, incount, requests, outcount, indices, statuses, true,
                    kFn);
}

int PMPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  RONDO_MPI_ENTER("MPI_Testsome");
  return SomeCommon(*st, incount, requests, outcount, indices, statuses,
                    false, kFn);
}

int PMPI_Request_free(MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Request_free");
  if (request == nullptr)
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn, "request is NULL");
  if (*request == MPI_REQUEST_NULL)
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn,
                      "request is MPI_REQUEST_NULL");
  if (*request == kSentRequest) {  // nothing behind it
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  }
  int err;
  MpiRequest* r = Lookup(*st, *request, kFn, &err);
  if (!r) return err;
  const uint32_t slot = st->requests.Invalidate(*request);
  *request = MPI_REQUEST_NULL;
  if (slot == RequestTable::kNoSlot)  // freed by another thread meanwhile
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn,
                      "request is not an active request (freed by another "
                      "thread meanwhile)");
  std::lock_guard<std::mutex> lock(st->detached_mu);
  // Recycle the detached requests that completed meanwhile.
  std::erase_if(st->detached, [st](uint32_t d) {
    if (!IsDone(*st->requests.At(d))) return false;
    st->requests.Recycle(d);
    return true;
  });
  if (IsDone(*r)) st->requests.Recycle(slot);
  else st->detached.push_back(slot);
  return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Start");
  if (request == nullptr)
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn, "request is NULL");
  return StartOne(*st, *request, kFn, -1);
}

// Starts each request in order; stops at the first that cannot start (the
// ones before it are started, the ones after are not), as MPICH does.
int PMPI_Startall(int count, MPI_Request requests[]) {
  RONDO_MPI_ENTER("MPI_Startall");
  if (count < 0)
    return RaiseError(nullptr, MPI_ERR_COUNT, kFn,
                      "count = " + std::to_string(count) + " (must be >= 0)");
  if (count > 0 && requests == nullptr)
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn,
                      "requests is NULL with count > 0");
  for (int i = 0; i < count; ++i)
    if (int e = StartOne(*st, requests[i], kFn, i)) return e;
  return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Cancel");
  if (request == nullptr)
    return RaiseError(nullptr, MPI_ERR_REQUEST, kFn, "request is NULL");
  int err;
  MpiRequest* r = Lookup(*st, *request, kFn, &err);
  if (!r) return err;
  if (r->inactive())
    return RaiseError(r->comm.get(), MPI_ERR_REQUEST, kFn,
                      "request = " + std::to_string(*request) +
                          " is an inactive persistent request (start it "
                          "with MPI_Start before cancelling it)");
  switch (r->kind) {
    case MpiRequest::Kind::kRecv:
      (void)r->comm->p2p->CancelRecv(r->req);  // kBusy: matched already
      break;
    case MpiRequest::Kind::kSend:
      break;  // sends are not cancelled: they complete normally
    case MpiRequest::Kind::kSendrecv:
      // Its send is under way: cancelling the receive alone would leave
      // half an operation done, so the whole completes normally (a
      // cancellation that does not succeed, which MPI allows).
      break;
    case MpiRequest::Kind::kColl:
      return RaiseError(r->comm.get(), MPI_ERR_REQUEST, kFn,
                        "a nonblocking collective cannot be cancelled");
    case MpiRequest::Kind::kRma:
      break;  // under way at the target: completes normally
    case MpiRequest::Kind::kDone:
      break;
  }
  return MPI_SUCCESS;
}

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  if (status == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Status_set_cancelled",
                      "status must not be NULL");
  status->rondo_cancelled = flag != 0;
  return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  if (status == nullptr || flag == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, "MPI_Test_cancelled",
                      "status and flag must not be NULL");
  *flag = status->rondo_cancelled != 0;
  return MPI_SUCCESS;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Wait = PMPI_Wait
#pragma weak MPI_Test = PMPI_Test
#pragma weak MPI_Request_get_status = PMPI_Request_get_status
#pragma weak MPI_Waitall = PMPI_Waitall
#pragma weak MPI_Testall = PMPI_Testall
#pragma weak MPI_Waitany = PMPI_Waitany
#pragma weak MPI_Testany = PMPI_Testany
#pragma weak MPI_Waitsome = PMPI_Waitsome
#pragma weak MPI_Testsome = PMPI_Testsome
#pragma weak MPI_Request_free = PMPI_Request_free
#pragma weak MPI_Start = PMPI_Start
#pragma weak MPI_Startall = PMPI_Startall
#pragma weak MPI_Cancel = PMPI_Cancel
#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
