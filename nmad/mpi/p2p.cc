// MadMPI point-to-point and request calls: MPI_Send ... MPI_Testsome,
// MPI_Cancel, MPI_Request_free. Messages go to the communicator's p2p
// session of the nmad core; derived datatypes are packed into a staging
// buffer (send) or unpacked from one at completion (receive).
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/requests.h"
#include "nmad/mpi/internal/state.h"
#include "topology/base/log.h"

namespace rondo::nmad::mpi {

namespace {

enum class SendMode { kStandard, kSynchronous };

// The bytes a send of (buf, count, type) puts on the wire: the user's buffer
// for a contiguous type, else its packing into r.staging (r keeps the type
// alive while in flight).
const void* SendBytes(const void* buf, int count, const TypeRef& type,
                      MpiRequest& r) {
  const size_t bytes = static_cast<size_t>(count) * type->size();
  if (type->is_contiguous() || bytes == 0)
    return bytes ? static_cast<const uint8_t*>(buf) + type->true_lb() : buf;
  r.staging.resize(bytes);
  type->Pack(buf, count, r.staging.data());
  r.type = type;
  return r.staging.data();
}

// MPI_DATATYPE_NULL describes no data: with a count of 0 there is nothing
// to describe, and MPICH (and the test suites written against it) accept
// it in point-to-point calls; Open MPI refuses it (MPI_ERR_TYPE). Rondo
// follows MPICH: such a message is a message of 0 bytes. With a count > 0
// it is still refused with MPI_ERR_TYPE.
MPI_Datatype ZeroCountType(MPI_Datatype dt, int count) {
  return dt == MPI_DATATYPE_NULL && count == 0 ? MPI_BYTE : dt;
}

// The checks every send-like call makes, in order: communicator, type,
// count, buffer, the destination (when `dest` is given), tag. False with
// `*err` set (and the error raised) on the first that fails.
bool CheckSendArgs(State& st, const void* buf, int count, MPI_Datatype dt,
                   const int* dest, int tag, MPI_Comm ch, const char* fn,
                   int* err, CommRef* comm, TypeRef* type) {
  *comm = CheckCommRef(st, ch, fn, err);
  if (!*comm) return false;
  *type = CheckTypeRef(st, ZeroCountType(dt, count), comm->get(), fn, err);
  if (!*type) return false;
  return CheckCount(count, comm->get(), fn, err) &&
         CheckBuffer(buf, count, **type, comm->get(), fn, err) &&
         (dest == nullptr ||
          CheckRank(*dest, **comm, false, fn, err, "dest")) &&
         CheckTag(tag, false, **comm, fn, err);
}

// Posts a send of `bytes` bytes at `data` (contiguous, staying valid until
// the send is done) into `r`, which holds its communicator (r.comm).
int PostSendBytes(const void* data, size_t bytes, int dest, int tag,
                  SendMode mode, MpiRequest& r, const char* fn) {
  r.fn = fn;
  if (dest == MPI_PROC_NULL) {
    r.kind = MpiRequest::Kind::kDone;
    r.status = {MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return MPI_SUCCESS;
  }
  r.kind = MpiRequest::Kind::kSend;
  r.peer = dest;
  Comm& c = *r.comm;
  Status s = mode == SendMode::kSynchronous
                 ? c.p2p->Issend(c.world[dest], tag, data, bytes, r.req)
                 : c.p2p->Isend(c.world[dest], tag, data, bytes, r.req);
  if (s != Status::kOk) {
    r.kind = MpiRequest::Kind::kDone;
    return StatusError(&c, s, fn, "send to rank " + std::to_string(dest),
                       dest);
  }
  return MPI_SUCCESS;
}

// Posts a checked send into `r`, which holds its communicator (r.comm).
int PostSend(const void* buf, int count, const TypeRef& type, int dest,
             int tag, SendMode mode, MpiRequest& r, const char* fn) {
  if (dest == MPI_PROC_NULL)
    return PostSendBytes(buf, 0, dest, tag, mode, r, fn);
  const size_t bytes = static_cast<size_t>(count) * type->size();
  const void* data = SendBytes(buf, count, type, r);
  return PostSendBytes(data, bytes, dest, tag, mode, r, fn);
}

// The small-message path of MPI_Send and MPI_Isend (checked arguments):
// a contiguous message that leaves at once (Session::TrySendNow: written in
// the peer's FIFO cell, or copied out by the driver) needs no request.
// False: nothing was sent, take the ordinary path.
bool SendNow(const Comm& c, const Datatype& t, const void* buf, int count,
             int dest, int tag) noexcept {
  if (dest < 0 || !t.is_contiguous()) return false;  // MPI_PROC_NULL
  const size_t bytes = static_cast<size_t>(count) * t.size();
  const void* data =
      bytes ? static_cast<const uint8_t*>(buf) + t.true_lb() : buf;
  return c.p2p->TrySendNow(c.world[dest], tag, data, bytes) == Status::kOk;
}

// The checks of MPI_Send and MPI_Isend, then SendNow for a standard-mode
// send: MPI_SUCCESS with *sent when the message left, else with *c and
// *type set for the ordinary path; the error code of a bad argument.
int CheckThenSendNow(State& st, const void* buf, int count, MPI_Datatype dt,
                     int dest, int tag, MPI_Comm comm, SendMode mode,
                     const char* fn, CommRef* c, TypeRef* type, bool* sent) {
  int err = MPI_SUCCESS;
  *sent = false;
  if (!CheckSendArgs(st, buf, count, dt, &dest, tag, comm, fn, &err, c, type))
    return err;
  *sent = mode == SendMode::kStandard &&
          SendNow(**c, **type, buf, count, dest, tag);
  return MPI_SUCCESS;
}

// Starts a send into `r` (not yet in the request table).
int StartSend(State& st, const void* buf, int count, MPI_Datatype dt,
              int dest, int tag, MPI_Comm ch, SendMode mode, MpiRequest& r,
              const char* fn) {
  int err = MPI_SUCCESS;
  CommRef comm;
  TypeRef type;
  if (!CheckSendArgs(st, buf, count, dt, &dest, tag, ch, fn, &err, &comm,
                     &type))
    return err;
  r.comm = std::move(comm);
  return PostSend(buf, count, type, dest, tag, mode, r, fn);
}

// The checks every receive-like call makes, in order: communicator, type,
// count, buffer, source, tag.
bool CheckRecvArgs(State& st, void* buf, int count, MPI_Datatype dt,
                   int source, int tag, MPI_Comm ch, const char* fn,
                   int* err, CommRef* comm, TypeRef* type) {
  *comm = CheckCommRef(st, ch, fn, err);
  if (!*comm) return false;
  *type = CheckTypeRef(st, ZeroCountType(dt, count), comm->get(), fn, err);
  if (!*type) return false;
  return CheckCount(count, comm->get(), fn, err) &&
         CheckBuffer(buf, count, **type, comm->get(), fn, err) &&
         CheckRank(source, **comm, true, fn, err, "source") &&
         CheckTag(tag, true, **comm, fn, err);
}

// Posts a checked receive into `r` (r.comm and r.type set).
int PostRecv(void* buf, int count, int source, int tag, MpiRequest& r,
             const char* fn, Session::MatchedMessage* matched = nullptr) {
  r.fn = fn;
  const Comm& c = *r.comm;
  const Datatype& t = *r.type;
  r.user_buf = buf;
  r.count = count;
  if (source == MPI_PROC_NULL) {
    r.kind = MpiRequest::Kind::kDone;
    r.status = {MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return MPI_SUCCESS;
  }
  const size_t bytes = static_cast<size_t>(count) * t.size();
  void* data;
  if (t.is_contiguous() || bytes == 0) {
    data = bytes ? static_cast<uint8_t*>(buf) + t.true_lb() : buf;
  } else {
    r.staging.resize(bytes);
    r.unpack_on_done = true;
    data = r.staging.data();
  }
  r.kind = MpiRequest::Kind::kRecv;
  r.peer = source;  // may be MPI_ANY_SOURCE (negative)
  const int src = source == MPI_ANY_SOURCE ? kAnySource : c.world[source];
  Status s = matched != nullptr
                 ? c.p2p->Mrecv(*matched, data, bytes, r.req)
                 : c.p2p->Irecv(src, tag == MPI_ANY_TAG ? kAnyTag : tag, data,
                                bytes, r.req);
  if (s != Status::kOk) {
    r.kind = MpiRequest::Kind::kDone;
    return StatusError(&c, s, fn,
                       "receive from rank " + std::to_string(source), source);
  }
  return MPI_SUCCESS;
}

int StartRecv(State& st, void* buf, int count, MPI_Datatype dt, int source,
              int tag, MPI_Comm ch, MpiRequest& r, const char* fn,
              Session::MatchedMessage* matched = nullptr) {
  int err = MPI_SUCCESS;
  CommRef comm;
  TypeRef type;
  if (!CheckRecvArgs(st, buf, count, dt, source, tag, ch, fn, &err, &comm,
                     &type))
    return err;
  r.comm = std::move(comm);
  r.type = std::move(type);
  return PostRecv(buf, count, source, tag, r, fn, matched);
}

// MPI_Isendrecv (replace = false) and MPI_Isendrecv_replace (replace: the
// send and receive arguments are the same buffer): checks the send's
// arguments, then the receive's, and posts the receive and the send into
// the halves of `r` (not yet in the request table). The replace form sends
// a packed copy of the buffer made now, owned by the send half, so the
// receive may land in the buffer at once.
int StartSendrecv(State& st, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm ch, bool replace, MpiRequest& r,
                  const char* fn) {
  int err = MPI_SUCCESS;
  CommRef send_comm, recv_comm;
  TypeRef send_type, recv_type;
  if (!CheckSendArgs(st, sendbuf, sendcount, sendtype, &dest, sendtag, ch,
                     fn, &err, &send_comm, &send_type) ||
      !CheckRecvArgs(st, recvbuf, recvcount, recvtype, source, recvtag, ch,
                     fn, &err, &recv_comm, &recv_type))
    return err;
  r.fn = fn;
  r.comm = send_comm;
  r.halves = std::make_unique<std::array<MpiRequest, 2>>();
  MpiRequest& send = (*r.halves)[0];
  MpiRequest& recv = (*r.halves)[1];
  send.comm = std::move(send_comm);
  recv.comm = std::move(recv_comm);
  recv.type = std::move(recv_type);
  const size_t bytes = static_cast<size_t>(sendcount) * send_type->size();
  if (replace && dest != MPI_PROC_NULL && bytes > 0) {
    send.staging.resize(bytes);
    send_type->Pack(sendbuf, sendcount, send.staging.data());
  }
  err = PostRecv(recvbuf, recvcount, source, recvtag, recv, fn);
  if (err == MPI_SUCCESS) {
    err = replace ? PostSendBytes(send.staging.data(), bytes, dest, sendtag,
                                  SendMode::kStandard, send, fn)
                  : PostSend(sendbuf, sendcount, send_type, dest, sendtag,
                             SendMode::kStandard, send, fn);
    if (err != MPI_SUCCESS) (void)CancelOrWait(st, recv);
  }
  if (err != MPI_SUCCESS) {
    r.halves.reset();
    return err;
  }
  r.kind = MpiRequest::Kind::kSendrecv;
  return MPI_SUCCESS;
}

// MPIX_Dynamic_bcast: a send-like request to n recipients (nmad's
// Session::DynamicBroadcast on the communicator's point-to-point session).
int StartDynamicBcast(State& st, const void* buf, int count, MPI_Datatype dt,
                      int tag, const int* ranks, const int* priorities, int n,
                      MPI_Comm ch, MpiRequest& r, const char* fn) {
  int err = MPI_SUCCESS;
  CommRef comm;
  TypeRef type;
  if (!CheckSendArgs(st, buf, count, dt, nullptr, tag, ch, fn, &err, &comm,
                     &type))
    return err;
  if (n < 1 || ranks == nullptr)
    return RaiseError(comm.get(), MPI_ERR_ARG, fn,
                      "the recipient list is empty (n = " + std::to_string(n) +
                          (ranks == nullptr ? ", ranks = NULL" : "") +
                          "): a broadcast needs at least one recipient");
  std::vector<BroadcastTarget> targets(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (!CheckRank(ranks[i], *comm, false, fn, &err, "ranks[i]")) return err;
    if (ranks[i] == MPI_PROC_NULL)
      return RaiseError(comm.get(), MPI_ERR_RANK, fn,
                        "ranks[" + std::to_string(i) +
                            "] is MPI_PROC_NULL; list real ranks only");
    targets[i] = {comm->world[ranks[i]],
                  priorities == nullptr ? 0 : priorities[i]};
  }
  // Duplicates and the root itself, named in communicator ranks.
  for (int i = 0; i < n; ++i) {
    if (ranks[i] == comm->rank)
      return RaiseError(comm.get(), MPI_ERR_RANK, fn,
                        "ranks[" + std::to_string(i) + "] = " +
                            std::to_string(ranks[i]) +
                            " is the calling rank (the root); list only the "
                            "recipients");
    for (int j = 0; j < i; ++j)
      if (ranks[j] == ranks[i])
        return RaiseError(comm.get(), MPI_ERR_RANK, fn,
                          "rank " + std::to_string(ranks[i]) +
                              " is listed twice (ranks[" + std::to_string(j) +
                              "] and ranks[" + std::to_string(i) + "])");
  }
  r.comm = comm;
  r.fn = fn;
  const size_t bytes = static_cast<size_t>(count) * type->size();
  const void* data = SendBytes(buf, count, type, r);
  r.kind = MpiRequest::Kind::kSend;
  std::string why;
  Status s = comm->p2p->DynamicBroadcast(data, bytes, tag, targets, r.req,
                                         &why);
  if (s != Status::kOk) {
    r.kind = MpiRequest::Kind::kDone;
    if (s == Status::kInvalidArgument)
      return RaiseError(comm.get(), MPI_ERR_ARG, fn, why);
    return StatusError(comm.get(), s, fn, "dynamic broadcast", -1);
  }
  return MPI_SUCCESS;
}

// A request of the pool for a nonblocking call: *r and its handle, or 0
// with the error raised (2^20 requests in flight).
int NewRequest(State& st, MpiRequest** r, const char* fn, int* err) {
  const int h = st.requests.Acquire(r);
  if (h == 0)
    *err = RaiseError(nullptr, MPI_ERR_NO_MEM, fn,
                      "too many requests in flight (" +
                          std::to_string(RequestTable::kMaxSlots) +
                          "): complete some (MPI_Wait, MPI_Test) before "
                          "starting more");
  return h;
}

// Hands the started request `h` to the caller, or gives it back to the pool
// when starting failed.
int Register(State& st, int h, int err, MPI_Request* out) {
  if (err != MPI_SUCCESS) {
    (void)st.requests.Release(h);
    return err;
  }
  *out = h;
  return MPI_SUCCESS;
}

int CheckRequestOut(MPI_Request* request, const char* fn) {
  if (request == nullptr)
    return RaiseError(nullptr, MPI_ERR_REQUEST, fn,
                      "request is NULL (pass the address of an MPI_Request)");
  return MPI_SUCCESS;
}

// MPI_Send / MPI_Ssend.
int BlockingSend(const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, SendMode mode, const char* fn) {
  RONDO_MPI_ENTER(fn);
  CommRef c;
  TypeRef type;
  bool sent;
  int err = CheckThenSendNow(*st, buf, count, datatype, dest, tag, comm,
                             mode, kFn, &c, &type, &sent);
  if (err != MPI_SUCCESS || sent) return err;
  MpiRequest r;
  r.comm = std::move(c);
  err = PostSend(buf, count, type, dest, tag, mode, r, kFn);
  if (err != MPI_SUCCESS) return err;
  return WaitOne(*st, r, MPI_STATUS_IGNORE, kFn);
}

// MPI_Isend / MPI_Issend.
int NonblockingSend(const void* buf, int count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Request* request,
                    SendMode mode, const char* fn) {
  RONDO_MPI_ENTER(fn);
  if (int e = CheckRequestOut(request, kFn)) return e;
  CommRef c;
  TypeRef type;
  bool sent;
  int err = CheckThenSendNow(*st, buf, count, datatype, dest, tag, comm,
                             mode, kFn, &c, &type, &sent);
  if (err != MPI_SUCCESS) return err;
  if (sent) {
    *request = kSentRequest;
    return MPI_SUCCESS;
  }
  MpiRequest* r;
  const int h = NewRequest(*st, &r, kFn, &err);
  if (h == 0) return err;
  r->comm = std::move(c);
  err = PostSend(buf, count, type, dest, tag, mode, *r, kFn);
  return Register(*st, h, err, request);
}

// ---- Matched probe (MPI_Improbe, MPI_Mprobe, MPI_Mrecv, MPI_Imrecv) ----

// Takes the message `*message` names out of the table (MPI_MESSAGE_NULL
// after), or says why it cannot. MPI_MESSAGE_NO_PROC gives *no_proc.
int TakeMessage(State& st, MPI_Message* message, const char* fn,
                State::ProbedMessage* out, bool* no_proc) {
  *no_proc = false;
  if (message == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, fn,
                      "message is NULL (pass the address of an MPI_Message)");
  if (*message == MPI_MESSAGE_NO_PROC) {
    *no_proc = true;
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(st.messages_mu);
  auto it = st.messages.find(*message);
  if (it == st.messages.end())
    return RaiseError(nullptr, MPI_ERR_REQUEST, fn,
                      "message = " + std::to_string(*message) +
                          " is not a message of MPI_Mprobe/MPI_Improbe "
                          "(MPI_MESSAGE_NULL, already received, or never "
                          "probed)");
  *out = std::move(it->second);
  st.messages.erase(it);
  *message = MPI_MESSAGE_NULL;
  return MPI_SUCCESS;
}

// Starts the receive of a probed message into `r`; `c` is its
// communicator (its CommRef keeps it alive).
int StartMatchedRecv(State& st, void* buf, int count, MPI_Datatype dt,
                     MPI_Message* message, MpiRequest& r, const char* fn) {
  State::ProbedMessage pm;
  bool no_proc = false;
  if (int e = TakeMessage(st, message, fn, &pm, &no_proc)) return e;
  if (no_proc) {
    r.kind = MpiRequest::Kind::kDone;
    r.fn = fn;
    r.status = {MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return MPI_SUCCESS;
  }
  // The handle of the probed message's communicator: the table holds it.
  const MPI_Comm ch = pm.comm->handle;
  int err = StartRecv(st, buf, count, dt, MPI_ANY_SOURCE, MPI_ANY_TAG, ch, r,
                      fn, &pm.msg);
  if (err != MPI_SUCCESS && pm.msg.impl != nullptr) {
    // Refused before the core took it (bad buffer or type): it stays
    // probed, under a new number in *message, for a correct MPI_Mrecv.
    std::lock_guard<std::mutex> lock(st.messages_mu);
    const int h = st.next_message++;
    st.messages.emplace(h, std::move(pm));
    *message = h;
  }
  return err;
}

// ---- Buffered sends (MPI_Buffer_attach, MPI_Bsend, MPI_Ibsend) ----

// Gives back the space of the buffered sends that are done. bsend_mu held.
void ReclaimBufferedSends(State& st) {
  auto& v = st.bsends;
  for (auto it = v.begin(); it != v.end();) {
    MpiRequest& r = *it->req;
    if (!IsDone(r)) {
      ++it;
      continue;
    }
    // Its caller has long returned: a failure can only be reported here.
    if (int e = Finish(st, r, r.fn); e != MPI_SUCCESS)
      RONDO_LOG_ERROR(
          "a buffered send ({}) failed after it returned: MPI error {}", r.fn,
          e);
    it = v.erase(it);
  }
}

// The first gap of `need` bytes in the attached buffer, or SIZE_MAX.
// bsend_mu held; segments are kept in offset order.
size_t FindBufferSpace(const State& st, size_t need, size_t* free_bytes) {
  size_t at = 0, best = SIZE_MAX, used = 0;
  for (const auto& b : st.bsends) {
    used += b.bytes;
    if (best == SIZE_MAX && b.offset - at >= need) best = at;
    at = b.offset + b.bytes;
  }
  if (best == SIZE_MAX && st.bsend_size >= at && st.bsend_size - at >= need)
    best = at;
  *free_bytes = st.bsend_size - used;
  return best;
}

// Copies the message into the attached buffer and starts its send; returns
// at once (MPI's buffered mode). MPI_ERR_BUFFER when no buffer is attached
// or the message does not fit: nothing is sent then, and the messages
// already accepted are not affected.
int PostBufferedSend(State& st, const void* buf, int count,
                     const TypeRef& type, const CommRef& comm, int dest,
                     int tag, const char* fn) {
  int err = MPI_SUCCESS;
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  const size_t bytes = static_cast<size_t>(count) * type->size();
  // 8-byte aligned segments, the overhead in front of each.
  const size_t need = (MPI_BSEND_OVERHEAD + bytes + 7) & ~size_t{7};
  std::lock_guard<std::mutex> lock(st.bsend_mu);
  if (!st.bsend_attached)
    return RaiseError(comm.get(), MPI_ERR_BUFFER, fn,
                      "no buffer is attached (call MPI_Buffer_attach with "
                      "room for each message plus MPI_BSEND_OVERHEAD)");
  ReclaimBufferedSends(st);
  size_t free_bytes = 0;
  const size_t at = FindBufferSpace(st, need, &free_bytes);
  if (at == SIZE_MAX)
    return RaiseError(
        comm.get(), MPI_ERR_BUFFER, fn,
        "a message of " + std::to_string(bytes) + " bytes needs " +
            std::to_string(need) + " bytes of the attached buffer (with " +
            "MPI_BSEND_OVERHEAD = " + std::to_string(MPI_BSEND_OVERHEAD) +
            "), and " + std::to_string(free_bytes) + " of its " +
            std::to_string(st.bsend_size) +
            " bytes are free (in one piece: less); messages already "
            "buffered are still sent");
  uint8_t* copy = st.bsend_buf + at + MPI_BSEND_OVERHEAD;
  if (bytes > 0) type->Pack(buf, count, copy);
  auto req = std::make_unique<MpiRequest>();
  req->comm = comm;
  err = PostSend(copy, static_cast<int>(bytes),
                 TypeRef::Borrowed(Predefined(MPI_BYTE)), dest, tag,
                 SendMode::kStandard, *req, fn);
  if (err != MPI_SUCCESS) return err;
  State::BufferedSend b;
  b.offset = at;
  b.bytes = need;
  b.req = std::move(req);
  auto pos = std::lower_bound(
      st.bsends.begin(), st.bsends.end(), at,
      [](const State::BufferedSend& x, size_t off) { return x.offset < off; });
  st.bsends.insert(pos, std::move(b));
  return MPI_SUCCESS;
}

int BufferedSend(State& st, const void* buf, int count, MPI_Datatype dt,
                 int dest, int tag, MPI_Comm ch, const char* fn) {
  int err = MPI_SUCCESS;
  CommRef comm;
  TypeRef type;
  if (!CheckSendArgs(st, buf, count, dt, &dest, tag, ch, fn, &err, &comm,
                     &type))
    return err;
  return PostBufferedSend(st, buf, count, type, comm, dest, tag, fn);
}

// ---- Persistent point-to-point (MPI_Send_init ... MPI_Recv_init) ----

enum class PersistentKind { kSend, kSsend, kBsend, kRecv };

// Checks the arguments once and makes an inactive persistent request whose
// start posts the operation (MPI_Start, MPI_Startall in requests.cc). The
// request holds its communicator and datatype, so freeing their handles
// meanwhile does not affect it.
int InitPersistent(State& st, PersistentKind kind, void* buf, int count,
                   MPI_Datatype dt, int peer, int tag, MPI_Comm ch,
                   MPI_Request* request, const char* fn) {
  if (int e = CheckRequestOut(request, fn)) return e;
  int err = MPI_SUCCESS;
  CommRef comm;
  TypeRef type;
  const bool ok =
      kind == PersistentKind::kRecv
          ? CheckRecvArgs(st, buf, count, dt, peer, tag, ch, fn, &err, &comm,
                          &type)
          : CheckSendArgs(st, buf, count, dt, &peer, tag, ch, fn, &err,
                          &comm, &type);
  if (!ok) return err;
  MpiRequest* r;
  const int h = NewRequest(st, &r, fn, &err);
  if (h == 0) return err;
  r->kind = MpiRequest::Kind::kDone;
  r->fn = fn;
  r->comm = comm;
  r->persistent = std::make_unique<PersistentOp>();
  switch (kind) {
    case PersistentKind::kRecv:
      r->persistent->start = [buf, count, peer, tag, type, fn](
                                 State&, MpiRequest& q) {
        q.type = type;
        return PostRecv(buf, count, peer, tag, q, fn);
      };
      break;
    case PersistentKind::kBsend:
      // Buffered mode copies at each start: the request completes at once
      // (or the start fails with MPI_ERR_BUFFER and stays inactive).
      r->persistent->start = [buf, count, peer, tag, type, comm, fn](
                                 State& s, MpiRequest& q) {
        const int e = PostBufferedSend(s, buf, count, type, comm, peer, tag,
                                       fn);
        if (e == MPI_SUCCESS) {
          q.kind = MpiRequest::Kind::kDone;
          q.status = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
        }
        return e;
      };
      break;
    case PersistentKind::kSend:
    case PersistentKind::kSsend: {
      const SendMode mode = kind == PersistentKind::kSsend
                                ? SendMode::kSynchronous
                                : SendMode::kStandard;
      r->persistent->start = [buf, count, peer, tag, type, mode, fn](
                                 State&, MpiRequest& q) {
        return PostSend(buf, count, type, peer, tag, mode, q, fn);
      };
      break;
    }
  }
  *request = h;
  return MPI_SUCCESS;
}

}  // namespace

// Waits for every buffered send to be sent (MPI_Buffer_detach, and
// MPI_Finalize, which behaves as if the buffer were detached).
void DrainBufferedSends(State& st) {
  IdleBackoff backoff(st.core());
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(st.bsend_mu);
      ReclaimBufferedSends(st);
      if (st.bsends.empty()) return;
    }
    backoff.Pass(ProgressPass(st, /*engine_too=*/false));
  }
}

}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation
using rondo::nmad::RecvInfo;
using rondo::nmad::kAnySource;
using rondo::nmad::kAnyTag;
using rondo::engine::Status;

extern "C" {

// The message path's entry points are flattened: GCC inlines every call
// they make into this file's helpers (checks, SendNow, PostRecv, request
// pool), which -O2 leaves as calls. Measured with tools/mpi_icount.py:
// MPI_Isend 711 -> 468 instructions, MPI_Irecv 608 -> 408, for 17% more
// library text (docs/performance.md, "Flattened entry points").
[[gnu::flatten]]
int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest,
             int tag, MPI_Comm comm) {
  return BlockingSend(buf, count, datatype, dest, tag, comm,
                      SendMode::kStandard, "MPI_Send");
}

int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm) {
  return BlockingSend(buf, count, datatype, dest, tag, comm,
                      SendMode::kSynchronous, "MPI_Ssend");
}

// Ready mode is a standard send (its receive is posted by contract).
int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm) {
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm) {
  RONDO_MPI_ENTER("MPI_Bsend");
  return BufferedSend(*st, buf, count, datatype, dest, tag, comm, kFn);
}

// The copy is made before it returns: its request is complete at once.
int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Ibsend");
  if (int e = CheckRequestOut(request, kFn)) return e;
  int err = BufferedSend(*st, buf, count, datatype, dest, tag, comm, kFn);
  if (err != MPI_SUCCESS) return err;
  MpiRequest* r;
  const int h = NewRequest(*st, &r, kFn, &err);
  if (h == 0) return err;
  r->kind = MpiRequest::Kind::kDone;
  r->fn = kFn;
  r->status = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
  return Register(*st, h, MPI_SUCCESS, request);
}

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype,
                  int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Send_init");
  return InitPersistent(*st, PersistentKind::kSend, const_cast<void*>(buf),
                        count, datatype, dest, tag, comm, request, kFn);
}

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Ssend_init");
  return InitPersistent(*st, PersistentKind::kSsend, const_cast<void*>(buf),
                        count, datatype, dest, tag, comm, request, kFn);
}

// Ready mode is standard mode (as MPI_Rsend).
int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Rsend_init");
  return InitPersistent(*st, PersistentKind::kSend, const_cast<void*>(buf),
                        count, datatype, dest, tag, comm, request, kFn);
}

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Bsend_init");
  return InitPersistent(*st, PersistentKind::kBsend, const_cast<void*>(buf),
                        count, datatype, dest, tag, comm, request, kFn);
}

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source,
                  int tag, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Recv_init");
  return InitPersistent(*st, PersistentKind::kRecv, buf, count, datatype,
                        source, tag, comm, request, kFn);
}

int PMPI_Buffer_attach(void* buffer, int size) {
  RONDO_MPI_ENTER("MPI_Buffer_attach");
  if (size < 0)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "size = " + std::to_string(size) + " (must be >= 0)");
  if (buffer == nullptr && size > 0)
    return RaiseError(nullptr, MPI_ERR_BUFFER, kFn,
                      "buffer is NULL with size " + std::to_string(size));
  std::lock_guard<std::mutex> lock(st->bsend_mu);
  if (st->bsend_attached)
    return RaiseError(nullptr, MPI_ERR_BUFFER, kFn,
                      "a buffer of " + std::to_string(st->bsend_size) +
                          " bytes is already attached (MPI_Buffer_detach "
                          "it first)");
  st->bsend_buf = static_cast<uint8_t*>(buffer);
  st->bsend_size = static_cast<size_t>(size);
  st->bsend_attached = true;
  return MPI_SUCCESS;
}

// Waits until every buffered message has been sent, then gives the buffer
// back: *(void**)buffer_addr and *size. With none attached: NULL and 0.
int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  RONDO_MPI_ENTER("MPI_Buffer_detach");
  if (buffer_addr == nullptr || size == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "buffer_addr and size must not be NULL");
  DrainBufferedSends(*st);
  std::lock_guard<std::mutex> lock(st->bsend_mu);
  *static_cast<void**>(buffer_addr) = st->bsend_buf;
  *size = static_cast<int>(st->bsend_size);
  st->bsend_buf = nullptr;
  st->bsend_size = 0;
  st->bsend_attached = false;
  return MPI_SUCCESS;
}

[[gnu::flatten]]
int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Recv");
  MpiRequest r;
  int err = StartRecv(*st, buf, count, datatype, source, tag, comm, r, kFn);
  if (err != MPI_SUCCESS) return err;
  return WaitOne(*st, r, status, kFn);
}

int PMPIX_Dynamic_bcast(const void* buf, int count, MPI_Datatype datatype,
                       int tag, const int ranks[], const int priorities[],
                       int n, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPIX_Dynamic_bcast");
  if (int e = CheckRequestOut(request, kFn)) return e;
  MpiRequest* r;
  int err = MPI_SUCCESS;
  const int h = NewRequest(*st, &r, kFn, &err);
  if (h == 0) return err;
  err = StartDynamicBcast(*st, buf, count, datatype, tag, ranks, priorities,
                          n, comm, *r, kFn);
  return Register(*st, h, err, request);
}

[[gnu::flatten]]
int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm, MPI_Request* request) {
  return NonblockingSend(buf, count, datatype, dest, tag, comm, request,
                         SendMode::kStandard, "MPI_Isend");
}

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request) {
  return NonblockingSend(buf, count, datatype, dest, tag, comm, request,
                         SendMode::kSynchronous, "MPI_Issend");
}

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request) {
  return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

[[gnu::flatten]]
int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source,
              int tag, MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Irecv");
  if (int e = CheckRequestOut(request, kFn)) return e;
  MpiRequest* r;
  int err = MPI_SUCCESS;
  const int h = NewRequest(*st, &r, kFn, &err);
  if (h == 0) return err;
  err = StartRecv(*st, buf, count, datatype, source, tag, comm, *r, kFn);
  return Register(*st, h, err, request);
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Sendrecv");
  MpiRequest rr, sr;
  int err = StartRecv(*st, recvbuf, recvcount, recvtype, source, recvtag,
                      comm, rr, kFn);
  if (err != MPI_SUCCESS) return err;
  err = StartSend(*st, sendbuf, sendcount, sendtype, dest, sendtag, comm,
                  SendMode::kStandard, sr, kFn);
  if (err != MPI_SUCCESS) {
    (void)CancelOrWait(*st, rr);
    return err;
  }
  int e1 = WaitOne(*st, sr, MPI_STATUS_IGNORE, kFn);
  int e2 = WaitOne(*st, rr, status, kFn);
  return e2 != MPI_SUCCESS ? e2 : e1;
}

int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   int dest, int sendtag, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Isendrecv");
  if (int e = CheckRequestOut(request, kFn)) return e;
  MpiRequest* r;
  int err = MPI_SUCCESS;
  const int h = NewRequest(*st, &r, kFn, &err);
  if (h == 0) return err;
  err = StartSendrecv(*st, sendbuf, sendcount, sendtype, dest, sendtag,
                      recvbuf, recvcount, recvtype, source, recvtag, comm,
                      /*replace=*/false, *r, kFn);
  return Register(*st, h, err, request);
}

int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                           int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Isendrecv_replace");
  if (int e = CheckRequestOut(request, kFn)) return e;
  MpiRequest* r;
  int err = MPI_SUCCESS;
  const int h = NewRequest(*st, &r, kFn, &err);
  if (h == 0) return err;
  err = StartSendrecv(*st, buf, count, datatype, dest, sendtag, buf, count,
                      datatype, source, recvtag, comm, /*replace=*/true, *r,
                      kFn);
  return Register(*st, h, err, request);
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                         int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  RONDO_MPI_ENTER_COMM("MPI_Sendrecv_replace", comm);
  TypePtr type = CheckType(*st, datatype, c.get(), kFn, &err);
  if (!type) return err;
  if (!CheckCount(count, c.get(), kFn, &err) ||
      !CheckBuffer(buf, count, *type, c.get(), kFn, &err))
    return err;
  // Send a packed copy, receive into the buffer.
  std::vector<uint8_t> copy(static_cast<size_t>(count) * type->size());
  if (!copy.empty()) type->Pack(buf, count, copy.data());
  MpiRequest rr, sr;
  err = StartRecv(*st, buf, count, datatype, source, recvtag, comm, rr, kFn);
  if (err != MPI_SUCCESS) return err;
  err = StartSend(*st, copy.data(), static_cast<int>(copy.size()), MPI_BYTE,
                  dest, sendtag, comm, SendMode::kStandard, sr, kFn);
  if (err != MPI_SUCCESS) {
    (void)CancelOrWait(*st, rr);
    return err;
  }
  int e1 = WaitOne(*st, sr, MPI_STATUS_IGNORE, kFn);
  int e2 = WaitOne(*st, rr, status, kFn);
  return e2 != MPI_SUCCESS ? e2 : e1;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
               MPI_Status* status) {
  RONDO_MPI_ENTER_COMM("MPI_Iprobe", comm);
  if (!CheckRank(source, *c, true, kFn, &err, "source") ||
      !CheckTag(tag, true, *c, kFn, &err))
    return err;
  if (flag == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "flag is NULL");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    if (status) *status = {MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return MPI_SUCCESS;
  }
  bool found = false;
  RecvInfo info;
  Status s = c->p2p->Iprobe(
      source == MPI_ANY_SOURCE ? kAnySource : c->world[source],
      tag == MPI_ANY_TAG ? kAnyTag : tag, &found, &info);
  if (s != Status::kOk) return StatusError(c.get(), s, kFn, "probe", source);
  *flag = found;
  if (found && status) {
    status->MPI_SOURCE = c->from_world[info.source];
    status->MPI_TAG = info.tag;
    status->MPI_ERROR = MPI_SUCCESS;
    status->rondo_cancelled = 0;
    status->rondo_bytes = static_cast<long long>(info.size);
  }
  if (!found) sched_yield();  // a polling loop lets the sender run
  return MPI_SUCCESS;
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                MPI_Message* message, MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Improbe");
  int err = MPI_SUCCESS;
  CommRef c = CheckCommRef(*st, comm, kFn, &err);
  if (!c) return err;
  if (!CheckRank(source, *c, true, kFn, &err, "source") ||
      !CheckTag(tag, true, *c, kFn, &err))
    return err;
  if (flag == nullptr || message == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "flag and message must not be NULL");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    if (status) *status = {MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return MPI_SUCCESS;
  }
  bool found = false;
  RecvInfo info;
  rondo::nmad::Session::MatchedMessage msg;
  Status s = c->p2p->Improbe(
      source == MPI_ANY_SOURCE ? kAnySource : c->world[source],
      tag == MPI_ANY_TAG ? kAnyTag : tag, &found, &info, &msg);
  if (s != Status::kOk)
    return StatusError(c.get(), s, kFn, "matched probe", source);
  *flag = found;
  if (!found) {
    sched_yield();  // a polling loop lets the sender run
    return MPI_SUCCESS;
  }
  if (status) {
    status->MPI_SOURCE = c->from_world[info.source];
    status->MPI_TAG = info.tag;
    status->MPI_ERROR = MPI_SUCCESS;
    status->rondo_cancelled = 0;
    status->rondo_bytes = static_cast<long long>(info.size);
  }
  std::lock_guard<std::mutex> lock(st->messages_mu);
  const int h = st->next_message++;
  st->messages.emplace(h, State::ProbedMessage{std::move(c), msg});
  *message = h;
  return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
               MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Mprobe");
  (void)kFn;
  int flag = 0;
  for (;;) {
    int err = PMPI_Improbe(source, tag, comm, &flag, message, status);
    if (err != MPI_SUCCESS || flag) return err;
    (void)st->engine().Poll();
  }
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype,
              MPI_Message* message, MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Mrecv");
  MpiRequest r;
  int err = StartMatchedRecv(*st, buf, count, datatype, message, r, kFn);
  if (err != MPI_SUCCESS) return err;
  return WaitOne(*st, r, status, kFn);
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype,
               MPI_Message* message, MPI_Request* request) {
  RONDO_MPI_ENTER("MPI_Imrecv");
  if (int e = CheckRequestOut(request, kFn)) return e;
  MpiRequest* r;
  int err = MPI_SUCCESS;
  const int h = NewRequest(*st, &r, kFn, &err);
  if (h == 0) return err;
  err = StartMatchedRecv(*st, buf, count, datatype, message, *r, kFn);
  return Register(*st, h, err, request);
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  RONDO_MPI_ENTER("MPI_Probe");
  int flag = 0;
  for (;;) {
    int err = PMPI_Iprobe(source, tag, comm, &flag, status);
    if (err != MPI_SUCCESS || flag) return err;
    (void)kFn;
    (void)st->engine().Poll();
  }
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype,
                  int* count) {
  RONDO_MPI_ENTER("MPI_Get_count");
  int err = MPI_SUCCESS;
  if (status == nullptr || count == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "status and count must not be NULL");
  TypePtr type = CheckType(*st, datatype, nullptr, kFn, &err, "datatype",
                           false);
  if (!type) return err;
  const long long bytes = status->rondo_bytes;
  const int64_t size = type->size();
  if (size == 0) *count = bytes == 0 ? 0 : MPI_UNDEFINED;
  else if (bytes % size != 0) *count = MPI_UNDEFINED;
  else *count = static_cast<int>(bytes / size);
  return MPI_SUCCESS;
}

// MPI_Get_elements and _x: the basic elements `status` holds (-1: it ends
// inside one).
static int Elements(const MPI_Status* status, MPI_Datatype datatype,
                    const void* count, int64_t* n, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  if (status == nullptr || count == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn,
                      "status and count must not be NULL");
  TypePtr type = CheckType(*st, datatype, nullptr, kFn, &err, "datatype",
                           false);
  if (!type) return err;
  *n = type->size() == 0 ? 0 : type->CountElements(status->rondo_bytes);
  return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype,
                     int* count) {
  int64_t n = 0;
  if (int e = Elements(status, datatype, count, &n, "MPI_Get_elements"))
    return e;
  *count = n < 0 || n > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                       MPI_Count* count) {
  int64_t n = 0;
  if (int e = Elements(status, datatype, count, &n, "MPI_Get_elements_x"))
    return e;
  *count = n < 0 ? MPI_UNDEFINED : n;
  return MPI_SUCCESS;
}

// MPI_Status_set_elements(_x): a status that MPI_Get_elements then reads
// as `count` basic elements of `datatype` (generalized requests, layered
// libraries).
static int SetElements(MPI_Status* status, MPI_Datatype datatype,
                       int64_t count, const char* fn) {
  RONDO_MPI_ENTER(fn);
  int err = MPI_SUCCESS;
  if (status == nullptr)
    return RaiseError(nullptr, MPI_ERR_ARG, kFn, "status must not be NULL");
  if (count < 0)
    return RaiseError(nullptr, MPI_ERR_COUNT, kFn,
                      "count = " + std::to_string(count) + " (must be >= 0)");
  TypePtr type = CheckType(*st, datatype, nullptr, kFn, &err, "datatype",
                           false);
  if (!type) return err;
  status->rondo_bytes = type->ElementBytes(count);
  return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype,
                            int count) {
  return SetElements(status, datatype, count, "MPI_Status_set_elements");
}

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                              MPI_Count count) {
  return SetElements(status, datatype, count, "MPI_Status_set_elements_x");
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Send = PMPI_Send
#pragma weak MPI_Ssend = PMPI_Ssend
#pragma weak MPI_Rsend = PMPI_Rsend
#pragma weak MPI_Bsend = PMPI_Bsend
#pragma weak MPI_Ibsend = PMPI_Ibsend
#pragma weak MPI_Send_init = PMPI_Send_init
#pragma weak MPI_Ssend_init = PMPI_Ssend_init
#pragma weak MPI_Rsend_init = PMPI_Rsend_init
#pragma weak MPI_Bsend_init = PMPI_Bsend_init
#pragma weak MPI_Recv_init = PMPI_Recv_init
#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
#pragma weak MPI_Recv = PMPI_Recv
#pragma weak MPIX_Dynamic_bcast = PMPIX_Dynamic_bcast
#pragma weak MPI_Isend = PMPI_Isend
#pragma weak MPI_Issend = PMPI_Issend
#pragma weak MPI_Irsend = PMPI_Irsend
#pragma weak MPI_Irecv = PMPI_Irecv
#pragma weak MPI_Sendrecv = PMPI_Sendrecv
#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
#pragma weak MPI_Isendrecv = PMPI_Isendrecv
#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace
#pragma weak MPI_Iprobe = PMPI_Iprobe
#pragma weak MPI_Improbe = PMPI_Improbe
#pragma weak MPI_Mprobe = PMPI_Mprobe
#pragma weak MPI_Mrecv = PMPI_Mrecv
#pragma weak MPI_Imrecv = PMPI_Imrecv
#pragma weak MPI_Probe = PMPI_Probe
#pragma weak MPI_Get_count = PMPI_Get_count
#pragma weak MPI_Get_elements = PMPI_Get_elements
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
