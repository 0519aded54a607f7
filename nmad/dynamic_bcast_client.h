// Dynamic broadcasts run as a client of the core (issue 6): the root's
// sends down the tree, a forwarder's receive of the data, its forwarding
// and its delivery to the user session, the operations' lifetime. The
// pure parts (tree, order, header codec) are nmad/dynamic_bcast.h; what a
// broadcast needs of the core is the narrow BroadcastHost below (core.cc
// implements it; dynamic_bcast_client_test fakes it, no network).
// Internal to //nmad.
#ifndef RONDO_NMAD_DYNAMIC_BCAST_CLIENT_H_
#define RONDO_NMAD_DYNAMIC_BCAST_CLIENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "nmad/core.h"
#include "nmad/dynamic_bcast.h"

namespace rondo::nmad::internal {

struct RecvOp;  // a posted receive of the core (opaque here)

// Data of at least this size is sent to a node's children one after
// another, so that each transfer has the node's link to itself and the
// first child forwards after one transfer time (ceil(log2(m + 1)) transfer
// times in all when bandwidth bound); smaller data goes to all at once.
inline constexpr size_t kBcastOneByOneBytes = 64 * 1024;

// The active-message handler id of dynamic broadcasts on their channel.
inline constexpr uint32_t kBcastHandler = 1;

// What a dynamic broadcast needs of the core.
class BroadcastHost {
 public:
  // Reserves the next sequence number of this process's stream to `peer`
  // in session `session` (the message travels by broadcast instead).
  virtual uint32_t ReserveSeq(uint32_t session, int peer) noexcept = 0;
  // Sends an active message (kBcastHandler) on the broadcasts' channel:
  // Session::SendAm's contract.
  virtual Status SendOnChannel(int dest, std::span<const uint8_t> header,
                               const uint8_t* body, size_t len, Request& req,
                               int priority) noexcept = 0;
  // AmMessage::ReceiveBody (`m` is the channel's message being handled).
  virtual Status ReceiveBody(AmMessage& m, void* buf, size_t len,
                             Request& req) noexcept = 0;
  // The posted receive in the user session that the broadcast `h` is
  // matched to now (its message is the next one from the root, and the
  // receive has room for all the data), with its buffer in *buf; else null.
  virtual RecvOp* ClaimInPlace(const BroadcastHeader& h,
                               uint8_t** buf) noexcept = 0;
  // Completes (with `s`) and frees a receive from ClaimInPlace.
  virtual void FinishInPlace(RecvOp* r, Status s) noexcept = 0;
  // Hands `data` to session `session` as the message `seq` from `root`
  // with `tag` (matched like any message, in the root's stream order).
  virtual void DeliverData(uint32_t session, int root, uint32_t seq, int tag,
                       std::shared_ptr<std::vector<uint8_t>> data) noexcept = 0;

 protected:
  ~BroadcastHost() = default;
};

struct BcastOp;

class DynamicBroadcasts {
 public:
  // Tasks run on `task_cpus`; `rank` of `size` is this process.
  DynamicBroadcasts(BroadcastHost& host, engine::Engine& engine,
                    const topology::CpuSet& task_cpus, int rank, int size);
  ~DynamicBroadcasts();
  DynamicBroadcasts(const DynamicBroadcasts&) = delete;
  DynamicBroadcasts& operator=(const DynamicBroadcasts&) = delete;

  // Session::DynamicBroadcast on session `session` (its contract).
  Status Start(uint32_t session, const void* buf, size_t len, int tag,
               std::span<const BroadcastTarget> targets, Request& req,
               std::string* error) noexcept;
  // The channel's handler (`arg`: this): a broadcast's header and data.
  static void OnMessage(AmMessage& m, void* arg) noexcept;
  // Waits (1 s at most each) for the forwarding tasks and drops every
  // operation; once the rails are closed (nothing completes any more).
  void Shutdown() noexcept;
  // Operations kept (in flight, or finished and not yet reclaimed).
  size_t kept() const;

  struct Counters {
    std::atomic<uint64_t> sent{0}, forwarded{0}, delivered{0}, dropped{0},
        in_place{0};
  } counters;

 private:
  void Keep(std::unique_ptr<BcastOp> op);
  void SendChildren(BcastOp* op, uint32_t session, int root, int tag,
                    const std::vector<BroadcastEntry>& list) noexcept;
  void PostSends(BcastOp* op, size_t first) noexcept;
  static void SendDone(Request& req, Status st, void* arg) noexcept;
  static engine::TaskResult PostTask(void* arg) noexcept;
  static void Release(BcastOp* op, Status st) noexcept;
  static void Finish(BcastOp* op) noexcept;
  static void MarkFinished(BcastOp* op) noexcept;
  static void BodyDone(Request&, Status st, void* arg) noexcept;
  static engine::TaskResult Forward(void* arg) noexcept;

  BroadcastHost& host_;
  engine::Engine& engine_;
  const topology::CpuSet task_cpus_;
  const int rank_;
  const int size_;
  mutable std::mutex mu_;
  std::list<std::unique_ptr<BcastOp>> ops_;
};

}  // namespace rondo::nmad::internal

#endif  // RONDO_NMAD_DYNAMIC_BCAST_CLIENT_H_
