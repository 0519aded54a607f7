#include "drivers/ucx/ucx_driver.h"

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "topology/base/log.h"

namespace rondo::drivers::ucx {

namespace {

constexpr int kMaxPeers = 65536;
constexpr int kMaxProgressRounds = 64;
constexpr int kPeerShift = 48;

// The UCX tag of a rendezvous: the peer that sends it in the upper 16
// bits, the caller's key (< kMaxRdvKey) below, so equal keys from two
// senders never match each other's receives.
uint64_t RdvTag(int peer, uint64_t key) noexcept {
  return (static_cast<uint64_t>(peer) << kPeerShift) | key;
}

std::string UcxError(const char* call, ucs_status_t status) {
  return std::string("UcxDriver: ") + call + " failed: " +
         ucs_status_string(status);
}

}  // namespace

Status FromUcsStatus(int ucs_status) noexcept {
  switch (static_cast<ucs_status_t>(ucs_status)) {
    case UCS_OK:
      return Status::kOk;
    case UCS_INPROGRESS:
      return Status::kInProgress;
    case UCS_ERR_NO_RESOURCE:
      return Status::kNoResource;
    case UCS_ERR_MESSAGE_TRUNCATED:
      return Status::kTruncated;
    case UCS_ERR_CANCELED:
      return Status::kCanceled;
    case UCS_ERR_BUSY:
      return Status::kBusy;
    case UCS_ERR_UNSUPPORTED:
      return Status::kUnsupported;
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR:
      return Status::kInvalidArgument;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_TIMED_OUT:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
      return Status::kPeerFailed;
    default:
      return Status::kInternal;
  }
}

struct UcxDriver::Op {
  enum class Kind { kPacket, kRdvSend, kRdvRecv };
  UcxDriver* driver = nullptr;
  Completion* done = nullptr;
  Kind kind = Kind::kPacket;
  int peer = -1;
  size_t len = 0;           // bytes a send moves
  void* request = nullptr;  // the UCX request while in flight
  bool tracked = false;     // in the outstanding list
  bool finished = false;    // queued in finished_ (or abandoned by Close)
  bool peer_failed = false;
  Status status = Status::kInternal;
  size_t bytes = 0;
  Op* prev = nullptr;
  Op* next = nullptr;
  uint32_t am_header = 0;  // the sender id; UCX reads it until completion
  ucp_tag_recv_info_t recv_info{};
  ucp_dt_iov_t iov[kMaxIov];  // UCX reads the iov array until completion
};

struct UcxDriver::Peer {
  UcxDriver* driver = nullptr;
  int id = -1;
  ucp_ep_h ep = nullptr;
  bool failed = false;
  // Emulated(): -1 not read yet, else 0/1 (the endpoint's lanes are fixed
  // once it is connected).
  mutable int8_t rma_emulated = -1;
};

namespace {

// True when ucp_ep_print_info's lanes that carry one-sided operations
// ("rma#", "rma_bw#", "amo#") are all UCX's tcp transport, e.g.
//   lane[0]:  0:tcp/rc0.0 md[0]  -> md[0]/tcp/sysdev[255] rma_bw#0 am ...
// False when there is no such lane or the text cannot be read.
bool OneSidedLanesAreTcp(ucp_ep_h ep) noexcept {
  char* text = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  if (f == nullptr) return false;
  ucp_ep_print_info(ep, f);
  std::fclose(f);
  if (text == nullptr) return false;
  int one_sided = 0, tcp = 0;
  for (char* line = text; line != nullptr && *line != '\0';) {
    char* end = std::strchr(line, '\n');
    if (end != nullptr) *end = '\0';
    const char* lane = std::strstr(line, "lane[");
    if (lane != nullptr && (std::strstr(line, " rma#") != nullptr ||
                            std::strstr(line, " rma_bw#") != nullptr ||
                            std::strstr(line, " amo#") != nullptr)) {
      ++one_sided;
      // "lane[N]:  R:TRANSPORT/DEVICE ...": the transport follows the
      // first ':' after the lane's own.
      const char* colon = std::strchr(lane, ':');
      const char* rsc = colon ? std::strchr(colon + 1, ':') : nullptr;
      if (rsc != nullptr && std::strncmp(rsc + 1, "tcp/", 4) == 0) ++tcp;
    }
    line = end ? end + 1 : nullptr;
  }
  std::free(text);
  return one_sided > 0 && tcp == one_sided;
}

}  // namespace

// The UCX callbacks: run inside ucp_worker_progress() (i.e. inside Poll or
// Close), or synchronously inside ucp_request_cancel(). They only queue.
struct UcxCallbacks {
  static Status OpStatus(const UcxDriver::Op* op, ucs_status_t status) {
    if (status == UCS_OK) return Status::kOk;
    if (op->peer_failed && status != UCS_ERR_MESSAGE_TRUNCATED) {
      return Status::kPeerFailed;
    }
    if (op->driver->closed_ && status != UCS_ERR_MESSAGE_TRUNCATED) {
      return Status::kCanceled;
    }
    return FromUcsStatus(status);
  }

  static void Send(void* request, ucs_status_t status,
                   void* user_data) noexcept {
    auto* op = static_cast<UcxDriver::Op*>(user_data);
    ucp_request_free(request);
    op->request = nullptr;
    if (op->finished) return;  // abandoned by Close
    op->driver->Finish(op, OpStatus(op, status),
                       status == UCS_OK ? op->len : 0);
  }

  static void Recv(void* request, ucs_status_t status,
                   const ucp_tag_recv_info_t* info, void* user_data) noexcept {
    auto* op = static_cast<UcxDriver::Op*>(user_data);
    ucp_request_free(request);
    op->request = nullptr;
    if (op->finished) return;
    // A truncated receive delivers no data in UCX 1.13 (see the header).
    op->driver->Finish(op, OpStatus(op, status),
                       status == UCS_OK ? info->length : 0);
  }

  static void EpError(void* arg, ucp_ep_h ep, ucs_status_t status) noexcept {
    auto* peer = static_cast<UcxDriver::Peer*>(arg);
    UcxDriver* d = peer->driver;
    std::lock_guard<std::mutex> lock(d->failures_mutex_);
    try {
      d->failures_.push_back({peer->id, static_cast<int>(status)});
      d->has_failures_.store(true, std::memory_order_release);
    } catch (...) {
      // Out of memory in an error path: the failure still shows up as
      // failed operations to this peer.
    }
  }

  // A one-sided operation or flush finished: `done` straight away (it only
  // records; see remote_memory.h).
  static void Rma(void* request, ucs_status_t status,
                  void* user_data) noexcept {
    ucp_request_free(request);
    auto* done = static_cast<Completion*>(user_data);
    if (done != nullptr) done->fn(done, FromUcsStatus(status), 0);
  }

  static ucs_status_t Am(void* arg, const void* header, size_t header_length,
                         void* data, size_t length,
                         const ucp_am_recv_param_t* param) noexcept {
    auto* d = static_cast<UcxDriver*>(arg);
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
      // Our senders force eager; refuse, the sender gets this status.
      ++d->packets_dropped_;
      return UCS_ERR_UNSUPPORTED;
    }
    uint32_t sender;
    if (header_length != sizeof(sender) || d->sink_ == nullptr) {
      ++d->packets_dropped_;
      return UCS_OK;
    }
    std::memcpy(&sender, header, sizeof(sender));
    ++d->packets_received_;
    d->sink_->OnPacket(static_cast<int>(sender), d->rail_, data, length);
    return UCS_OK;
  }
};

std::string ValidateOptions(const UcxDriverOptions& o) {
  if (o.self < 0 || o.self >= kMaxPeers) {
    return "UcxDriverOptions: invalid self " + std::to_string(o.self) +
           ". Expected: 0 <= self < 65536 (this process's peer id)";
  }
  if (o.rail_id < 0) {
    return "UcxDriverOptions: invalid rail_id " + std::to_string(o.rail_id) +
           ". Expected: >= 0";
  }
  if (o.max_packet == 0 || o.max_packet > kMaxPacketLimit) {
    return "UcxDriverOptions: invalid max_packet " +
           std::to_string(o.max_packet) + ". Expected: 1.." +
           std::to_string(kMaxPacketLimit);
  }
  if (!(o.bandwidth_bytes_per_s > 0) || !(o.latency_ns >= 0)) {
    return "UcxDriverOptions: invalid estimates bandwidth_bytes_per_s=" +
           std::to_string(o.bandwidth_bytes_per_s) +
           " latency_ns=" + std::to_string(o.latency_ns) +
           ". Expected: bandwidth > 0, latency >= 0";
  }
  return "";
}

UcxDriver::UcxDriver(const UcxDriverOptions& options)
    : options_(options), self_header_(static_cast<uint32_t>(options.self)) {
  caps_.name = "ucx";
  caps_.max_packet = options.max_packet;
  caps_.rendezvous = true;
  caps_.zero_copy = true;
  caps_.bandwidth_bytes_per_s = options.bandwidth_bytes_per_s;
  caps_.latency_ns = options.latency_ns;
  caps_.wakeup_fd = options.wakeup;
  rail_ = options.rail_id;
}

Result<std::unique_ptr<UcxDriver>> UcxDriver::Create(
    const UcxDriverOptions& options, std::string* error) {
  std::string message = ValidateOptions(options);
  if (!message.empty()) {
    if (error != nullptr) *error = std::move(message);
    return Status::kInvalidArgument;
  }
  std::unique_ptr<UcxDriver> driver(new UcxDriver(options));
  if (Status s = driver->Init(error); s != Status::kOk) {
    return s == Status::kOk ? Status::kInternal : s;
  }
  return driver;
}

Status UcxDriver::Init(std::string* error) {
  auto fail = [&](const char* call, ucs_status_t status) {
    if (error != nullptr) *error = UcxError(call, status);
    Status s = FromUcsStatus(status);
    return IsError(s) ? s : Status::kInternal;
  };
  ucp_config_t* config = nullptr;
  // nullptr prefix: the standard UCX_* variables (UCX_TLS, ...) apply.
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) return fail("ucp_config_read", st);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_TAG;
  if (options_.rma)
    params.features |= UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64;
  if (options_.wakeup) params.features |= UCP_FEATURE_WAKEUP;
  params.name = "rondo";
  st = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (st != UCS_OK) {
    context_ = nullptr;
    return fail("ucp_init", st);
  }
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  st = ucp_worker_create(context_, &worker_params, &worker_);
  if (st != UCS_OK) {
    worker_ = nullptr;
    return fail("ucp_worker_create", st);
  }
  if (options_.wakeup) {
    st = ucp_worker_get_efd(worker_, &wakeup_fd_);
    if (st != UCS_OK) {
      wakeup_fd_ = -1;
      return fail("ucp_worker_get_efd", st);
    }
  }
  ucp_am_handler_param_t am{};
  am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                  UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                  UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  am.id = kAmId;
  am.flags = UCP_AM_FLAG_WHOLE_MSG;
  am.cb = &UcxCallbacks::Am;
  am.arg = this;
  st = ucp_worker_set_am_recv_handler(worker_, &am);
  if (st != UCS_OK) return fail("ucp_worker_set_am_recv_handler", st);
  return Status::kOk;
}

UcxDriver::~UcxDriver() {
  if (worker_ != nullptr) {
    if (!closed_) Close(0);
    ucp_worker_destroy(worker_);
  }
  if (context_ != nullptr) ucp_cleanup(context_);
}

void UcxDriver::SetSink(PacketSink* sink, int rail) {
  sink_ = sink;
  rail_ = rail;
}

Result<std::vector<uint8_t>> UcxDriver::LocalAddress() {
  ucp_address_t* address = nullptr;
  size_t length = 0;
  ucs_status_t st = ucp_worker_get_address(worker_, &address, &length);
  if (st != UCS_OK) return FromUcsStatus(st);
  const auto* bytes = reinterpret_cast<const uint8_t*>(address);
  std::vector<uint8_t> result(bytes, bytes + length);
  ucp_worker_release_address(worker_, address);
  return result;
}

Status UcxDriver::Connect(int peer, std::span<const uint8_t> address) {
  if (closed_) return Status::kCanceled;
  if (peer < 0 || peer >= kMaxPeers || address.empty()) {
    return Status::kInvalidArgument;
  }
  if (peers_.size() <= static_cast<size_t>(peer)) peers_.resize(peer + 1);
  if (peers_[peer] != nullptr) return Status::kInvalidArgument;
  auto p = std::make_unique<Peer>();
  p->driver = this;
  p->id = peer;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  if (options_.error_handling) {
    params.field_mask |=
        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &UcxCallbacks::EpError;
    params.err_handler.arg = p.get();
  }
  ucs_status_t st = ucp_ep_create(worker_, &params, &p->ep);
  if (st != UCS_OK) return FromUcsStatus(st);
  if (!perf_evaluated_) {
    // UCX's model of the lanes it selected. Both calls must succeed and be
    // increasing, else the options' estimates stay.
    perf_evaluated_ = true;
    constexpr size_t kSmall = 8, kLarge = size_t{1} << 20;
    ucp_ep_evaluate_perf_param_t q{};
    q.field_mask = UCP_EP_PERF_PARAM_FIELD_MESSAGE_SIZE;
    ucp_ep_evaluate_perf_attr_t small{}, large{};
    small.field_mask = large.field_mask = UCP_EP_PERF_ATTR_FIELD_ESTIMATED_TIME;
    q.message_size = kSmall;
    ucs_status_t s1 = ucp_ep_evaluate_perf(p->ep, &q, &small);
    q.message_size = kLarge;
    ucs_status_t s2 = ucp_ep_evaluate_perf(p->ep, &q, &large);
    if (s1 == UCS_OK && s2 == UCS_OK && small.estimated_time > 0 &&
        large.estimated_time > small.estimated_time) {
      caps_.latency_ns = small.estimated_time * 1e9;
      caps_.bandwidth_bytes_per_s =
          (kLarge - kSmall) / (large.estimated_time - small.estimated_time);
    }
  }
  peers_[peer] = std::move(p);
  return Status::kOk;
}

UcxDriver::Peer* UcxDriver::ConnectedPeer(int peer) noexcept {
  if (peer < 0 || static_cast<size_t>(peer) >= peers_.size()) return nullptr;
  return peers_[peer].get();
}

UcxDriver::Op* UcxDriver::AcquireOp() noexcept {
  try {
    if (free_ops_.empty()) {
      ops_.push_back(std::make_unique<Op>());
      free_ops_.reserve(ops_.size());
      free_ops_.push_back(ops_.back().get());
    }
    // Room to queue every op as finished without allocating in callbacks.
    finished_.reserve(ops_.size());
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  Op* op = free_ops_.back();
  free_ops_.pop_back();
  // Reset what every post reads; iov and recv_info are written by the
  // posts that use them (not cleared: 0.6 KB per operation).
  op->driver = this;
  op->done = nullptr;
  op->kind = Op::Kind::kPacket;
  op->peer = -1;
  op->len = 0;
  op->request = nullptr;
  op->tracked = false;
  op->finished = false;
  op->peer_failed = false;
  op->status = Status::kInternal;
  op->bytes = 0;
  op->prev = op->next = nullptr;
  op->am_header = 0;
  return op;
}

void UcxDriver::ReleaseOp(Op* op) noexcept { free_ops_.push_back(op); }

void UcxDriver::Track(Op* op) noexcept {
  op->tracked = true;
  op->prev = nullptr;
  op->next = outstanding_;
  if (outstanding_ != nullptr) outstanding_->prev = op;
  outstanding_ = op;
}

void UcxDriver::Untrack(Op* op) noexcept {
  if (!op->tracked) return;
  op->tracked = false;
  if (op->prev != nullptr) op->prev->next = op->next;
  else outstanding_ = op->next;
  if (op->next != nullptr) op->next->prev = op->prev;
  op->prev = op->next = nullptr;
}

void UcxDriver::Finish(Op* op, Status status, size_t bytes) noexcept {
  Untrack(op);
  op->finished = true;
  op->status = status;
  op->bytes = bytes;
  finished_.push_back(op);  // capacity reserved in AcquireOp
}

Status UcxDriver::PostPacket(int peer, const iovec* iov, int iovcnt,
                             Completion* done) noexcept {
  if (iovcnt < 0 || iovcnt > kMaxIov || (iovcnt > 0 && iov == nullptr))
    return Status::kInvalidArgument;
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  if (total > caps_.max_packet) return Status::kInvalidArgument;
  if (done == nullptr) return PostPacketNow(peer, iov, iovcnt);
  Peer* p = nullptr;
  Op* op = nullptr;
  if (Status s = BeginPost(peer, done, total, &p, &op); s != Status::kOk)
    return s;
  op->kind = Op::Kind::kPacket;
  op->am_header = static_cast<uint32_t>(options_.self);

  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                       UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &UcxCallbacks::Send;
  param.user_data = op;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  const void* buffer = nullptr;
  size_t count = 0;
  if (iovcnt == 1) {
    buffer = iov[0].iov_base;
    count = iov[0].iov_len;
  } else if (iovcnt > 1) {
    for (int i = 0; i < iovcnt; ++i) {
      op->iov[i].buffer = iov[i].iov_base;
      op->iov[i].length = iov[i].iov_len;
    }
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = ucp_dt_make_iov();
    buffer = op->iov;
    count = static_cast<size_t>(iovcnt);
  }
  Track(op);
  ucs_status_ptr_t r = ucp_am_send_nbx(p->ep, kAmId, &op->am_header,
                                       sizeof(op->am_header), buffer, count,
                                       &param);
  if (r == nullptr) {  // sent (copied out): buffers reusable, no completion
    Untrack(op);
    ReleaseOp(op);
    return Status::kOk;
  }
  return EndPost(op, r);
}

// No completion wanted: UCX copies the packet out now (its short or bcopy
// eager protocols) or refuses (UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL), so no Op
// and no request: the fast path of small messages.
Status UcxDriver::PostPacketNow(int peer, const iovec* iov,
                                int iovcnt) noexcept {
  if (closed_) return Status::kCanceled;
  Peer* p = ConnectedPeer(peer);
  if (p == nullptr) return Status::kInvalidArgument;
  if (p->failed) return Status::kPeerFailed;
  ucp_request_param_t param;
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  const void* buffer = nullptr;
  size_t count = 0;
  ucp_dt_iov_t dt[kMaxIov];
  if (iovcnt == 1) {
    buffer = iov[0].iov_base;
    count = iov[0].iov_len;
  } else if (iovcnt > 1) {
    for (int i = 0; i < iovcnt; ++i) dt[i] = {iov[i].iov_base, iov[i].iov_len};
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = ucp_dt_make_iov();
    buffer = dt;
    count = static_cast<size_t>(iovcnt);
  }
  ucs_status_ptr_t r = ucp_am_send_nbx(p->ep, kAmId, &self_header_,
                                       sizeof(self_header_), buffer, count,
                                       &param);
  if (r == nullptr) return Status::kOk;
  if (UCS_PTR_IS_ERR(r)) {
    return UCS_PTR_STATUS(r) == UCS_ERR_NO_RESOURCE
               ? Status::kNoResource
               : FromUcsStatus(UCS_PTR_STATUS(r));
  }
  // UCX's contract (FORCE_IMM_CMPL): completed now or an error. A request
  // would read the caller's buffers after this returns, and progressing
  // UCX here would run our callbacks inside a post: neither is safe.
  RONDO_LOG_FATAL(
      "ucx: ucp_am_send_nbx returned a request despite "
      "UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL (UCX {}); aborting",
      ucp_get_version_string());
}

Status UcxDriver::PostRdvSend(int peer, uint64_t key, const void* buf,
                              size_t len, Completion* done) noexcept {
  if (done == nullptr || (buf == nullptr && len > 0) || key >= kMaxRdvKey)
    return Status::kInvalidArgument;
  Peer* p = nullptr;
  Op* op = nullptr;
  if (Status s = BeginPost(peer, done, len, &p, &op); s != Status::kOk)
    return s;
  op->kind = Op::Kind::kRdvSend;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &UcxCallbacks::Send;
  param.user_data = op;
  Track(op);
  ucs_status_ptr_t r =
      ucp_tag_send_nbx(p->ep, buf, len, RdvTag(options_.self, key), &param);
  if (r == nullptr) {
    Finish(op, Status::kOk, len);  // delivered by the next Poll
    return Status::kInProgress;
  }
  return EndPost(op, r);
}

Status UcxDriver::PostRdvRecv(int peer, uint64_t key, void* buf, size_t len,
                              Completion* done) noexcept {
  if (done == nullptr || (buf == nullptr && len > 0) || key >= kMaxRdvKey)
    return Status::kInvalidArgument;
  Peer* p = nullptr;
  Op* op = nullptr;
  if (Status s = BeginPost(peer, done, len, &p, &op); s != Status::kOk)
    return s;
  op->kind = Op::Kind::kRdvRecv;
  ucp_request_param_t param{};
  // NO_IMM_CMPL: UCX 1.13 leaves recv_info empty (length 0) when a receive
  // completes immediately from the unexpected queue; with this flag the
  // callback runs (inside this call; it only queues) with the real info.
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                       UCP_OP_ATTR_FIELD_USER_DATA |
                       UCP_OP_ATTR_FIELD_RECV_INFO |
                       UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &UcxCallbacks::Recv;
  param.user_data = op;
  param.recv_info.tag_info = &op->recv_info;
  Track(op);
  ucs_status_ptr_t r = ucp_tag_recv_nbx(worker_, buf, len, RdvTag(peer, key),
                                        ~uint64_t{0}, &param);
  if (r == nullptr) {  // not expected with NO_IMM_CMPL; kept for safety
    Finish(op, Status::kOk, op->recv_info.length);
    return Status::kInProgress;
  }
  if (UCS_PTR_IS_ERR(r) && UCS_PTR_STATUS(r) == UCS_ERR_MESSAGE_TRUNCATED) {
    Finish(op, Status::kTruncated, 0);  // consumed: report as completion
    return Status::kInProgress;
  }
  return EndPost(op, r);
}

Status UcxDriver::BeginPost(int peer, Completion* done, size_t len, Peer** p,
                            Op** op) noexcept {
  if (closed_) return Status::kCanceled;
  *p = ConnectedPeer(peer);
  if (*p == nullptr) return Status::kInvalidArgument;
  if ((*p)->failed) return Status::kPeerFailed;
  *op = AcquireOp();
  if (*op == nullptr) return Status::kNoResource;
  (*op)->done = done;
  (*op)->peer = peer;
  (*op)->len = len;
  return Status::kOk;
}

Status UcxDriver::EndPost(Op* op, void* r) noexcept {
  if (UCS_PTR_IS_ERR(r)) {
    Untrack(op);
    ReleaseOp(op);
    return FromUcsStatus(UCS_PTR_STATUS(r));
  }
  if (!op->finished) op->request = r;
  return Status::kInProgress;
}

int UcxDriver::DeliverFinished() noexcept {
  if (finished_.empty()) return 0;
  // Swap out: completions may post, and an immediate completion queues into
  // finished_ again (delivered by the next Poll; Arm reports kBusy until).
  std::vector<Op*> batch;
  batch.swap(finished_);
  for (Op* op : batch) {
    Completion* done = op->done;
    Status status = op->status;
    size_t bytes = op->bytes;
    ReleaseOp(op);
    if (done != nullptr) done->fn(done, status, bytes);
  }
  int n = static_cast<int>(batch.size());
  if (finished_.empty()) {
    batch.clear();
    finished_.swap(batch);  // keep the reserved capacity
  }
  try {
    finished_.reserve(ops_.size());
  } catch (const std::bad_alloc&) {
    // AcquireOp reserves again before the next op can finish.
  }
  return n;
}

int UcxDriver::DeliverFailures() noexcept {
  // Polled on every pass: no lock unless the error handler queued something.
  if (!has_failures_.load(std::memory_order_acquire)) return 0;
  std::vector<Failure> failures;
  {
    std::lock_guard<std::mutex> lock(failures_mutex_);
    has_failures_.store(false, std::memory_order_relaxed);
    if (failures_.empty()) return 0;
    failures.swap(failures_);
  }
  int n = 0;
  for (const Failure& f : failures) {
    Peer* p = ConnectedPeer(f.peer);
    if (p == nullptr || p->failed) continue;
    p->failed = true;
    ++n;
    // Operations to or from the peer complete with kPeerFailed: receives are
    // canceled here (their callback runs inside ucp_request_cancel), sends
    // fail inside UCX when the endpoint closes.
    for (Op* op = outstanding_; op != nullptr; op = op->next) {
      if (op->peer == f.peer) op->peer_failed = true;
    }
    for (Op* op = outstanding_; op != nullptr;) {
      Op* next = op->next;  // the cancel callback unlinks op
      if (op->peer == f.peer && op->kind == Op::Kind::kRdvRecv &&
          op->request != nullptr) {
        ucp_request_cancel(worker_, op->request);
      }
      op = next;
    }
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(p->ep, &param);
    if (UCS_PTR_IS_PTR(r)) ucp_request_free(r);  // UCX finishes it
    p->ep = nullptr;
    if (sink_ != nullptr) {
      std::string what = std::string("UCX endpoint error: ") +
                         ucs_status_string(static_cast<ucs_status_t>(
                             f.ucs_status));
      sink_->OnPeerFailure(f.peer, rail_, Status::kPeerFailed, what);
    }
  }
  return n;
}

int UcxDriver::Poll() noexcept {
  int events = 0;
  if (!closed_) {
    for (int i = 0; i < kMaxProgressRounds; ++i) {
      unsigned n = ucp_worker_progress(worker_);
      if (n == 0) break;
      events += static_cast<int>(n);
    }
    events += DeliverFailures();
  }
  events += DeliverFinished();
  return events;
}

Status UcxDriver::Arm() noexcept {
  if (!options_.wakeup || closed_) return Status::kUnsupported;
  if (!finished_.empty()) return Status::kBusy;
  if (has_failures_.load(std::memory_order_acquire)) return Status::kBusy;
  ucs_status_t st = ucp_worker_arm(worker_);
  if (st == UCS_OK) return Status::kOk;
  if (st == UCS_ERR_BUSY) return Status::kBusy;
  return FromUcsStatus(st);
}

void UcxDriver::Close(int timeout_ms) noexcept {
  if (closed_ || worker_ == nullptr) return;
  closed_ = true;  // from now on UCX errors on our ops read as kCanceled
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms
                                                                 : 0);
  for (Op* op = outstanding_; op != nullptr;) {
    Op* next = op->next;
    if (op->kind == Op::Kind::kRdvRecv && op->request != nullptr) {
      ucp_request_cancel(worker_, op->request);
    }
    op = next;
  }
  std::vector<void*> closing;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = timeout_ms > 0 ? 0 : UCP_EP_CLOSE_FLAG_FORCE;
  std::vector<ucp_ep_h> eps;
  for (auto& p : peers_) {
    if (p == nullptr || p->ep == nullptr) continue;
    eps.push_back(p->ep);
    p->ep = nullptr;
  }
  if (self_ep_ != nullptr) eps.push_back(self_ep_);
  self_ep_ = nullptr;
  for (ucp_ep_h ep : eps) {
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(r)) {
      try {
        closing.push_back(r);
      } catch (...) {
        ucp_request_free(r);
      }
    }
  }
  // Progress until every close is done and every op finished, or timeout.
  while (!closing.empty() || outstanding_ != nullptr) {
    ucp_worker_progress(worker_);
    for (size_t i = 0; i < closing.size();) {
      if (ucp_request_check_status(closing[i]) != UCS_INPROGRESS) {
        ucp_request_free(closing[i]);
        closing[i] = closing.back();
        closing.pop_back();
      } else {
        ++i;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  // Late closes finish inside ucp_worker_destroy; ops still outstanding are
  // abandoned: canceled now, their UCX callbacks (if any) ignore them.
  for (void* r : closing) ucp_request_free(r);
  while (outstanding_ != nullptr) {
    Op* op = outstanding_;
    Finish(op, Status::kCanceled, 0);
  }
  {
    std::lock_guard<std::mutex> lock(failures_mutex_);
    failures_.clear();
  }
  DeliverFinished();
}

// ---- one-sided operations ----

ucp_ep_h UcxDriver::RmaEp(int peer) const noexcept {
  if (closed_) return nullptr;
  if (peer == options_.self) return self_ep_;
  if (peer < 0 || static_cast<size_t>(peer) >= peers_.size() ||
      peers_[peer] == nullptr || peers_[peer]->failed)
    return nullptr;
  return peers_[peer]->ep;
}

bool UcxDriver::Emulated(int peer) const noexcept {
  if (!options_.rma || closed_ || peer == options_.self) return false;
  ucp_ep_h ep = RmaEp(peer);
  if (ep == nullptr) return false;
  Peer& p = *peers_[peer];
  if (p.rma_emulated < 0) p.rma_emulated = OneSidedLanesAreTcp(ep) ? 1 : 0;
  return p.rma_emulated == 1;
}

bool UcxDriver::Reaches(int peer) const noexcept {
  if (!options_.rma || closed_) return false;
  // Self: the endpoint is made at the first Map.
  return peer == options_.self || RmaEp(peer) != nullptr;
}

Status UcxDriver::Map(void* base, size_t len, MemoryRegion** region,
                      std::vector<uint8_t>* packed_key) {
  if (!options_.rma || closed_) return Status::kUnsupported;
  if (base == nullptr || len == 0 || region == nullptr ||
      packed_key == nullptr)
    return Status::kInvalidArgument;
  if (self_ep_ == nullptr) {
    auto address = LocalAddress();
    if (!address.ok()) return address.status();
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    params.address =
        reinterpret_cast<const ucp_address_t*>(address.value().data());
    if (options_.error_handling) {
      params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
      params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    }
    ucs_status_t st = ucp_ep_create(worker_, &params, &self_ep_);
    if (st != UCS_OK) {
      self_ep_ = nullptr;
      return FromUcsStatus(st);
    }
  }
  ucp_mem_map_params_t params{};
  params.field_mask =
      UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = base;
  params.length = len;
  ucp_mem_h memh = nullptr;
  ucs_status_t st = ucp_mem_map(context_, &params, &memh);
  if (st != UCS_OK) return FromUcsStatus(st);
  void* key = nullptr;
  size_t key_len = 0;
  st = ucp_rkey_pack(context_, memh, &key, &key_len);
  if (st != UCS_OK) {
    ucp_mem_unmap(context_, memh);
    return FromUcsStatus(st);
  }
  const auto* bytes = static_cast<const uint8_t*>(key);
  packed_key->assign(bytes, bytes + key_len);
  ucp_rkey_buffer_release(key);
  *region = reinterpret_cast<MemoryRegion*>(memh);
  return Status::kOk;
}

void UcxDriver::Unmap(MemoryRegion* region) noexcept {
  if (region != nullptr)
    ucp_mem_unmap(context_, reinterpret_cast<ucp_mem_h>(region));
}

Status UcxDriver::UnpackKey(int peer, std::span<const uint8_t> packed,
                            RemoteKey** key) {
  ucp_ep_h ep = RmaEp(peer);
  if (ep == nullptr) return Status::kInvalidArgument;
  if (packed.empty() || key == nullptr) return Status::kInvalidArgument;
  ucp_rkey_h rkey = nullptr;
  ucs_status_t st = ucp_ep_rkey_unpack(ep, packed.data(), &rkey);
  if (st != UCS_OK) return FromUcsStatus(st);
  *key = reinterpret_cast<RemoteKey*>(rkey);
  return Status::kOk;
}

void UcxDriver::ReleaseKey(RemoteKey* key) noexcept {
  if (key != nullptr) ucp_rkey_destroy(reinterpret_cast<ucp_rkey_h>(key));
}

namespace {

// The request parameters of a one-sided operation: UCX's callback with
// `done`, no Op (UCX takes the request from its pool).
ucp_request_param_t RmaParam(Completion* done) noexcept {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &UcxCallbacks::Rma;
  param.user_data = done;
  return param;
}

// What a one-sided post returned: kOk (done now), kInProgress (the
// callback will run), or the error.
Status RmaPosted(ucs_status_ptr_t r) noexcept {
  if (r == nullptr) return Status::kOk;
  if (UCS_PTR_IS_ERR(r)) {
    Status s = FromUcsStatus(UCS_PTR_STATUS(r));
    return IsError(s) ? s : Status::kInternal;
  }
  return Status::kInProgress;
}

}  // namespace

Status UcxDriver::Put(int peer, const void* buf, size_t len, uint64_t remote,
                      RemoteKey* key, Completion* done) noexcept {
  ucp_ep_h ep = RmaEp(peer);
  if (ep == nullptr || key == nullptr || (buf == nullptr && len > 0))
    return ep == nullptr ? Unreachable(peer) : Status::kInvalidArgument;
  ucp_request_param_t param = RmaParam(done);
  return RmaPosted(ucp_put_nbx(ep, buf, len, remote,
                               reinterpret_cast<ucp_rkey_h>(key), &param));
}

Status UcxDriver::Get(int peer, void* buf, size_t len, uint64_t remote,
                      RemoteKey* key, Completion* done) noexcept {
  ucp_ep_h ep = RmaEp(peer);
  if (ep == nullptr || key == nullptr || (buf == nullptr && len > 0))
    return ep == nullptr ? Unreachable(peer) : Status::kInvalidArgument;
  ucp_request_param_t param = RmaParam(done);
  return RmaPosted(ucp_get_nbx(ep, buf, len, remote,
                               reinterpret_cast<ucp_rkey_h>(key), &param));
}

Status UcxDriver::Atomic(int peer, AtomicOp op, size_t size,
                         const void* value, void* result, uint64_t remote,
                         RemoteKey* key, Completion* done) noexcept {
  ucp_ep_h ep = RmaEp(peer);
  if (ep == nullptr || key == nullptr || value == nullptr ||
      (size != 4 && size != 8) || remote % size != 0 ||
      ((op == AtomicOp::kSwap || op == AtomicOp::kCompareSwap) &&
       result == nullptr))
    return ep == nullptr ? Unreachable(peer) : Status::kInvalidArgument;
  ucp_atomic_op_t code = UCP_ATOMIC_OP_ADD;
  switch (op) {
    case AtomicOp::kAdd: code = UCP_ATOMIC_OP_ADD; break;
    case AtomicOp::kAnd: code = UCP_ATOMIC_OP_AND; break;
    case AtomicOp::kOr: code = UCP_ATOMIC_OP_OR; break;
    case AtomicOp::kXor: code = UCP_ATOMIC_OP_XOR; break;
    case AtomicOp::kSwap: code = UCP_ATOMIC_OP_SWAP; break;
    case AtomicOp::kCompareSwap: code = UCP_ATOMIC_OP_CSWAP; break;
  }
  ucp_request_param_t param = RmaParam(done);
  param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(size);
  if (result != nullptr) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    param.reply_buffer = result;
  }
  return RmaPosted(ucp_atomic_op_nbx(ep, code, value, 1, remote,
                                     reinterpret_cast<ucp_rkey_h>(key),
                                     &param));
}

Status UcxDriver::Fence() noexcept {
  if (!options_.rma || closed_) return Status::kUnsupported;
  return FromUcsStatus(ucp_worker_fence(worker_));
}

Status UcxDriver::Flush(int peer, Completion* done) noexcept {
  ucp_ep_h ep = RmaEp(peer);
  if (ep == nullptr) return Unreachable(peer);
  ucp_request_param_t param = RmaParam(done);
  return RmaPosted(ucp_ep_flush_nbx(ep, &param));
}

Status UcxDriver::Unreachable(int peer) const noexcept {
  if (closed_) return Status::kCanceled;
  const bool failed = peer >= 0 && static_cast<size_t>(peer) < peers_.size() &&
                      peers_[peer] != nullptr && peers_[peer]->failed;
  return failed ? Status::kPeerFailed : Status::kInvalidArgument;
}

}  // namespace rondo::drivers::ucx
