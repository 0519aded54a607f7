// RawUcx: the raw-UCX peer of bench/p2p/pingpong. It is the reference Rondo is
// compared with, so it is the thinnest correct use of UCP: its own
// ucp_context and ucp_worker (same UCX_* environment as nmad's rail, read
// with ucp_config_read(nullptr)), tagged send/receive (ucp_tag_send_nbx /
// ucp_tag_recv_nbx, full tag mask) and busy polling with
// ucp_worker_progress(). Endpoints use UCP_ERR_HANDLING_MODE_NONE, as nmad's
// UCX rail does by default (RONDO_UCX_PEER_ERRORS=0), so both pick UCX's
// shared-memory transports on one node.
//
// This is the one place in bench/ that includes UCX (through @ucx//:ucp):
// only to measure the peer; Rondo itself is reached through nmad/core.h.
//
// Thread-safety: none (one thread uses an instance).
#ifndef RONDO_BENCH_P2P_RAW_UCX_H_
#define RONDO_BENCH_P2P_RAW_UCX_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

struct ucp_context;
struct ucp_worker;
struct ucp_ep;

namespace rondo::bench {

class RawUcx {
 public:
  // Creates context and worker; throws std::runtime_error naming the UCX
  // call on failure.
  RawUcx();
  ~RawUcx();
  RawUcx(const RawUcx&) = delete;
  RawUcx& operator=(const RawUcx&) = delete;

  std::vector<uint8_t> Address() const;
  // One endpoint to the peer's worker address.
  void Connect(std::span<const uint8_t> peer_address);

  // Handles of operations in flight (nullptr: completed at once).
  using Handle = void*;
  Handle Isend(const void* buf, size_t len, uint64_t tag);
  Handle Irecv(void* buf, size_t len, uint64_t tag);
  // Busy-polls ucp_worker_progress() until `h` completes; frees it. Throws
  // on an error status.
  void Wait(Handle h);
  // One ucp_worker_progress() pass; returns its count of events.
  int Progress();
  // True once `h` has completed (then frees it and sets it to nullptr);
  // nullptr counts as completed. Throws on an error status.
  bool Done(Handle& h);
  void Send(const void* buf, size_t len, uint64_t tag) { Wait(Isend(buf, len, tag)); }
  void Recv(void* buf, size_t len, uint64_t tag) { Wait(Irecv(buf, len, tag)); }
  // Flushes and closes the endpoint (call on both sides, then barrier).
  void Close();
  // Transports of the endpoint's lanes as UCX reports them (for the note).
  std::string Transports() const;

 private:
  ucp_context* context_ = nullptr;
  ucp_worker* worker_ = nullptr;
  ucp_ep* ep_ = nullptr;
};

}  // namespace rondo::bench

#endif  // RONDO_BENCH_P2P_RAW_UCX_H_
