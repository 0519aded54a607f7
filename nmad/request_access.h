// RequestAccess: the core's modules' way to a Request's private state
// (claiming it for an operation, completing it, its RecvInfo). Internal to
// //nmad.
#ifndef RONDO_NMAD_REQUEST_ACCESS_H_
#define RONDO_NMAD_REQUEST_ACCESS_H_

#include "engine/engine.h"
#include "nmad/core.h"

namespace rondo::nmad::internal {

struct RequestAccess {
  // Marks `req` pending for a new operation; false if it is still in use.
  // Every claimed request completes (Complete), which ends the background
  // work counted here on `engine`: a request in flight is what a quiet
  // progress thread progresses while the application computes.
  // With `background` false the request is not counted (a receive that
  // only eager data can complete: see CoreImpl::Irecv); Background() counts
  // it later if it turns out to need progress.
  static bool Claim(Request& req, engine::Engine& engine,
                    bool background = true) noexcept {
    uint32_t v = req.state_.load(std::memory_order_acquire);
    if (v == Request::kPending) return false;
    req.state_.store(Request::kPending, std::memory_order_relaxed);
    req.status_ = Status::kOk;
    req.info_ = RecvInfo{};
    req.background_ = nullptr;
    if (background) Background(req, engine);
    return true;
  }
  // Counts a pending request as background work, once.
  static void Background(Request& req, engine::Engine& engine) noexcept {
    if (req.background_ != nullptr) return;
    req.background_ = &engine;
    engine.BeginBackground();
  }
  static void Complete(Request& req, Status s) noexcept { req.Complete(s); }
  static RecvInfo& Info(Request& req) noexcept { return req.info_; }
  // Started and not yet done.
  static bool Pending(const Request& req) noexcept {
    return req.state_.load(std::memory_order_acquire) == Request::kPending;
  }
  // Never started.
  static bool Idle(const Request& req) noexcept {
    return req.state_.load(std::memory_order_acquire) == Request::kIdle;
  }
};

}  // namespace rondo::nmad::internal

#endif  // RONDO_NMAD_REQUEST_ACCESS_H_
