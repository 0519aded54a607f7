#include "drivers/bootstrap/pmix_bootstrap.h"

#include <pmix.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "drivers/bootstrap/internal/failure_mailbox.h"
#include "drivers/bootstrap/internal/protocol.h"

namespace rondo::drivers::bootstrap {
namespace {

std::string PmixError(const char* call, pmix_status_t rc) {
  return std::string(call) + " failed: " + PMIx_Error_string(rc) + " (" +
         std::to_string(rc) + ")";
}

// A peer being gone, or our server, is kPeerFailed; anything else is a
// failure of the library.
Status ToStatus(pmix_status_t rc) {
  switch (rc) {
    case PMIX_SUCCESS: return Status::kOk;
    case PMIX_ERR_NOT_FOUND: return Status::kInvalidArgument;
    case PMIX_ERR_BAD_PARAM: return Status::kInvalidArgument;
    case PMIX_ERR_TIMEOUT: return Status::kTimedOut;
    case PMIX_ERR_UNREACH:
    case PMIX_ERR_LOST_CONNECTION:
    case PMIX_ERR_PROC_ABORTED:
    case PMIX_PROC_TERMINATED:
    case PMIX_ERR_PROC_TERM_WO_SYNC:
    case PMIX_ERR_PARTIAL_SUCCESS:
      return Status::kPeerFailed;
    default: return Status::kInternal;
  }
}

// Any PMIx integer value as an int64 (job-level keys come in several
// widths depending on the server).
std::optional<int64_t> IntegerOf(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_UINT8: return v.data.uint8;
    case PMIX_UINT16: return v.data.uint16;
    case PMIX_UINT32: return v.data.uint32;
    case PMIX_UINT64: return static_cast<int64_t>(v.data.uint64);
    case PMIX_INT: return v.data.integer;
    case PMIX_INT8: return v.data.int8;
    case PMIX_INT16: return v.data.int16;
    case PMIX_INT32: return v.data.int32;
    case PMIX_INT64: return v.data.int64;
    case PMIX_SIZE: return static_cast<int64_t>(v.data.size);
    case PMIX_PROC_RANK: return v.data.rank;
    default: return std::nullopt;
  }
}

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap() = default;
  ~PmixBootstrap() override { (void)Finalize(); }

  // PMIx_Init, job queries and the event handler; `*error` on failure.
  Status Init(std::string* error);

  std::string_view name() const noexcept override { return "pmix"; }
  int rank() const noexcept override { return static_cast<int>(self_.rank); }
  int size() const noexcept override { return size_; }
  int local_rank() const noexcept override { return local_rank_; }
  int local_size() const noexcept override { return local_size_; }

  Status Put(std::string_view key, std::span<const uint8_t> value) override;
  Status Fence() override { return FenceImpl(/*collect=*/true); }
  Result<std::vector<uint8_t>> Get(int rank, std::string_view key) override;
  Status Barrier() override { return FenceImpl(/*collect=*/false); }
  std::vector<PeerFailure> PollFailures() override;
  Status Finalize() override;

 private:
  Status FenceImpl(bool collect);
  // An integer value of `key` for the job (wildcard rank) or this process;
  // nullopt with `*rc` set to PMIx's status.
  std::optional<int64_t> JobInteger(const char* key, bool job_level,
                                    pmix_status_t* rc = nullptr);

  // Runs on PMIx's progress thread.
  static void OnEvent(size_t id, pmix_status_t status,
                      const pmix_proc_t* source, pmix_info_t info[],
                      size_t ninfo, pmix_info_t* results, size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc,
                      void* cbdata);
  void PostFailure(PeerFailure failure);

  pmix_proc_t self_{};
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::optional<size_t> handler_id_;
  std::atomic<bool> initialized_{false};

  internal::FailureMailbox failures_;  // posted by the event handler
};

std::optional<int64_t> PmixBootstrap::JobInteger(const char* key,
                                                 bool job_level,
                                                 pmix_status_t* rc) {
  pmix_status_t scratch;
  if (rc == nullptr) rc = &scratch;
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, self_.nspace,
                   job_level ? PMIX_RANK_WILDCARD : self_.rank);
  pmix_value_t* v = nullptr;
  *rc = PMIx_Get(&proc, key, nullptr, 0, &v);
  if (*rc != PMIX_SUCCESS || v == nullptr) return std::nullopt;
  std::optional<int64_t> r = IntegerOf(*v);
  if (!r) *rc = PMIX_ERR_TYPE_MISMATCH;
  PMIX_VALUE_RELEASE(v);
  return r;
}

Status PmixBootstrap::Init(std::string* error) {
  pmix_status_t rc = PMIx_Init(&self_, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    *error = PmixError("PMIx_Init", rc) +
             " (PMIX_NAMESPACE/PMIX_RANK are set, but the PMIx server "
             "of the launcher cannot be reached)";
    return ToStatus(rc) == Status::kPeerFailed ? Status::kPeerFailed
                                               : Status::kInternal;
  }
  initialized_.store(true);
  pmix_status_t get_rc = PMIX_SUCCESS;
  std::optional<int64_t> size = JobInteger(PMIX_JOB_SIZE, true, &get_rc);
  if (!size || *size < 1 || *size > (int64_t{1} << 30)) {
    *error = size ? "PMIx_Get(PMIX_JOB_SIZE) gave the job size " +
                        std::to_string(*size) + "; allowed: 1..2^30"
                  : PmixError("PMIx_Get(PMIX_JOB_SIZE)", get_rc);
    (void)Finalize();
    return Status::kInternal;
  }
  size_ = static_cast<int>(*size);
  // Local rank/size are optional for some servers: fall back to a
  // one-rank-per-node view, which only affects placement.
  std::optional<int64_t> lr = JobInteger(PMIX_LOCAL_RANK, false);
  std::optional<int64_t> ls = JobInteger(PMIX_LOCAL_SIZE, true);
  local_size_ = ls && *ls >= 1 && *ls <= size_ ? static_cast<int>(*ls) : 1;
  local_rank_ = lr && *lr >= 0 && *lr < local_size_ ? static_cast<int>(*lr) : 0;

  pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED, PMIX_PROC_TERMINATED,
                           PMIX_ERR_LOST_CONNECTION};
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  void* self = this;
  PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, &self, PMIX_POINTER);
  PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_NAME, "rondo-bootstrap",
                 PMIX_STRING);
  // With a null completion callback the registration is blocking and
  // returns the handler id (>= 0) or an error.
  rc = PMIx_Register_event_handler(codes, 3, info, 2, &PmixBootstrap::OnEvent,
                                   nullptr, nullptr);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  // Without the handler, Fence/Barrier still report failures through their
  // return code (the server fails the collective); PollFailures stays empty.
  if (rc >= 0) handler_id_ = static_cast<size_t>(rc);
  return Status::kOk;
}

void PmixBootstrap::OnEvent(size_t id, pmix_status_t status,
                            const pmix_proc_t* source, pmix_info_t info[],
                            size_t ninfo, pmix_info_t* results,
                            size_t nresults,
                            pmix_event_notification_cbfunc_fn_t cbfunc,
                            void* cbdata) {
  PmixBootstrap* self = nullptr;
  const pmix_proc_t* affected = nullptr;
  for (size_t i = 0; i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT))
      self = static_cast<PmixBootstrap*>(info[i].value.data.ptr);
    else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
      affected = info[i].value.data.proc;
  }
  if (affected == nullptr) affected = source;
  if (self != nullptr) {
    PeerFailure f;
    if (status == PMIX_ERR_LOST_CONNECTION) {
      f.what = "lost the connection to the PMIx server";
    } else {
      f.rank = affected != nullptr && affected->rank < PMIX_RANK_VALID
                   ? static_cast<int>(affected->rank)
                   : -1;
      f.what = "rank " + std::to_string(f.rank) + " " +
               (status == PMIX_PROC_TERMINATED ? "terminated" : "aborted") +
               " (" + PMIx_Error_string(status) + ")";
    }
    self->PostFailure(std::move(f));
  }
  if (cbfunc != nullptr)
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

void PmixBootstrap::PostFailure(PeerFailure failure) {
  failures_.Post(std::move(failure));
}

std::vector<PeerFailure> PmixBootstrap::PollFailures() {
  return failures_.Take();
}

Status PmixBootstrap::Put(std::string_view key,
                          std::span<const uint8_t> value) {
  if (!internal::CheckKey(key).empty() || !internal::CheckValue(value).empty())
    return Status::kInvalidArgument;
  if (!initialized_.load()) return Status::kShutdown;
  const std::string pmix_key = "rondo:" + std::string(key);
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  // PMIx_Put copies the value; the cast only satisfies its non-const field.
  v.data.bo.bytes =
      const_cast<char*>(reinterpret_cast<const char*>(value.data()));
  v.data.bo.size = value.size();
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, pmix_key.c_str(), &v);
  if (rc != PMIX_SUCCESS) return ToStatus(rc);
  return ToStatus(PMIx_Commit());
}

Result<std::vector<uint8_t>> PmixBootstrap::Get(int rank,
                                                std::string_view key) {
  if (rank < 0 || rank >= size_ || !internal::CheckKey(key).empty())
    return Status::kInvalidArgument;
  if (!initialized_.load()) return Status::kShutdown;
  const std::string pmix_key = "rondo:" + std::string(key);
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, self_.nspace, static_cast<pmix_rank_t>(rank));
  // After a collecting fence the data is local: do not let a missing key
  // turn into a request to the server that waits for it to appear.
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  bool optional = true;
  PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
  pmix_value_t* v = nullptr;
  pmix_status_t rc = PMIx_Get(&proc, pmix_key.c_str(), &info, 1, &v);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS || v == nullptr) {
    if (v != nullptr) PMIX_VALUE_RELEASE(v);
    return rc == PMIX_ERR_NOT_FOUND || rc == PMIX_SUCCESS
               ? Status::kInvalidArgument
               : ToStatus(rc);
  }
  Result<std::vector<uint8_t>> out = Status::kInvalidArgument;
  if (v->type == PMIX_BYTE_OBJECT) {
    const auto* p = reinterpret_cast<const uint8_t*>(v->data.bo.bytes);
    out = std::vector<uint8_t>(p, p + v->data.bo.size);
  }
  PMIX_VALUE_RELEASE(v);
  return out;
}

Status PmixBootstrap::FenceImpl(bool collect) {
  if (!initialized_.load()) return Status::kShutdown;
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  bool flag = true;
  if (collect) PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
  // No procs: the whole namespace.
  pmix_status_t rc = PMIx_Fence(nullptr, 0, collect ? &info : nullptr,
                                collect ? 1 : 0);
  PMIX_INFO_DESTRUCT(&info);
  // Open MPI 4.1's server completes a fence even when a member died during
  // it; a fence that a dead rank did not really join is not a success.
  if (rc == PMIX_SUCCESS)
    return failures_.posted() == 0
               ? Status::kOk
               : Status::kPeerFailed;
  Status s = ToStatus(rc);
  return s == Status::kInternal ? Status::kPeerFailed : s;
}

Status PmixBootstrap::Finalize() {
  if (!initialized_.exchange(false)) return Status::kOk;
  if (handler_id_) {
    (void)PMIx_Deregister_event_handler(*handler_id_, nullptr, nullptr);
    handler_id_.reset();
  }
  return ToStatus(PMIx_Finalize(nullptr, 0));
}

}  // namespace

Result<std::unique_ptr<Bootstrap>> CreatePmixBootstrap(std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  auto b = std::make_unique<PmixBootstrap>();
  Status s = b->Init(error);
  if (s != Status::kOk) return s;
  return std::unique_ptr<Bootstrap>(std::move(b));
}

}  // namespace rondo::drivers::bootstrap
