// The raw-UCX peer of bench/p2p/pingpong (see raw_ucx.h). Includes UCX: this is
// a benchmark peer, not part of Rondo.
#include "bench/p2p/raw_ucx.h"

#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace rondo::bench {
namespace {

[[noreturn]] void Fail(const char* call, ucs_status_t st) {
  throw std::runtime_error(std::string("raw UCX: ") + call + ": " +
                           ucs_status_string(st));
}

}  // namespace

RawUcx::RawUcx() {
  ucp_config_t* config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) Fail("ucp_config_read", st);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_TAG;
  params.name = "rondo-bench-raw";
  st = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (st != UCS_OK) Fail("ucp_init", st);
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // as nmad's rail
  st = ucp_worker_create(context_, &wp, &worker_);
  if (st != UCS_OK) Fail("ucp_worker_create", st);
}

RawUcx::~RawUcx() {
  if (ep_ != nullptr) Close();
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

std::vector<uint8_t> RawUcx::Address() const {
  ucp_address_t* addr = nullptr;
  size_t len = 0;
  ucs_status_t st = ucp_worker_get_address(worker_, &addr, &len);
  if (st != UCS_OK) Fail("ucp_worker_get_address", st);
  const auto* p = reinterpret_cast<const uint8_t*>(addr);
  std::vector<uint8_t> out(p, p + len);
  ucp_worker_release_address(worker_, addr);
  return out;
}

void RawUcx::Connect(std::span<const uint8_t> peer_address) {
  ucp_ep_params_t params{};
  params.field_mask =
      UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(peer_address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
  ucs_status_t st = ucp_ep_create(worker_, &params, &ep_);
  if (st != UCS_OK) Fail("ucp_ep_create", st);
}

RawUcx::Handle RawUcx::Isend(const void* buf, size_t len, uint64_t tag) {
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  p.datatype = ucp_dt_make_contig(1);
  ucs_status_ptr_t r = ucp_tag_send_nbx(ep_, buf, len, tag, &p);
  if (UCS_PTR_IS_ERR(r)) Fail("ucp_tag_send_nbx", UCS_PTR_STATUS(r));
  return r;  // nullptr: done at once
}

RawUcx::Handle RawUcx::Irecv(void* buf, size_t len, uint64_t tag) {
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  p.datatype = ucp_dt_make_contig(1);
  ucs_status_ptr_t r =
      ucp_tag_recv_nbx(worker_, buf, len, tag, ~uint64_t{0}, &p);
  if (UCS_PTR_IS_ERR(r)) Fail("ucp_tag_recv_nbx", UCS_PTR_STATUS(r));
  return r;
}

void RawUcx::Wait(Handle h) {
  if (h == nullptr) return;
  ucs_status_t st;
  while ((st = ucp_request_check_status(h)) == UCS_INPROGRESS)
    ucp_worker_progress(worker_);
  ucp_request_free(h);
  if (st != UCS_OK) Fail("request", st);
}

int RawUcx::Progress() {
  return static_cast<int>(ucp_worker_progress(worker_));
}

bool RawUcx::Done(Handle& h) {
  if (h == nullptr) return true;
  ucs_status_t st = ucp_request_check_status(h);
  if (st == UCS_INPROGRESS) return false;
  ucp_request_free(h);
  h = nullptr;
  if (st != UCS_OK) Fail("request", st);
  return true;
}

void RawUcx::Close() {
  if (ep_ == nullptr) return;
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t r = ucp_ep_close_nbx(ep_, &p);
  if (r != nullptr && !UCS_PTR_IS_ERR(r)) {
    while (ucp_request_check_status(r) == UCS_INPROGRESS)
      ucp_worker_progress(worker_);
    ucp_request_free(r);
  }
  ep_ = nullptr;
}

std::string RawUcx::Transports() const {
  if (ep_ == nullptr) return "";
  char* data = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&data, &size);
  if (f == nullptr) return "";
  ucp_ep_print_info(ep_, f);
  std::fclose(f);
  std::string text(data, size);
  std::free(data);
  // Keep the lane lines ("lane[0]:  2:sysv/memory.0 md1/sysv ..."), trimmed.
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t pos = line.find("lane[");
    if (pos == std::string::npos) continue;
    line = line.substr(pos);
    size_t end = line.find("  ", line.find(':') + 3);
    if (!out.empty()) out += "; ";
    out += line.substr(0, std::min(end, size_t{80}));
  }
  return out;
}

}  // namespace rondo::bench
