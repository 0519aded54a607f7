#include "nmad/rail.h"

namespace rondo::nmad::internal {

Rail::~Rail() {
  for (PacketBuf* b : free_bufs) delete b;
}

bool Rail::Arm() noexcept {
  if (!mu.try_lock()) return false;
  const bool armed = !has_ops.load(std::memory_order_acquire) &&
                     !has_dirty.load(std::memory_order_acquire) &&
                     driver->Arm() == engine::Status::kOk;
  mu.unlock();
  return armed;
}

void Rail::DrainSlow() noexcept {
  bool posted = false;
  if (has_ops.load(std::memory_order_acquire)) {
    posted = true;
    {
      std::lock_guard<std::mutex> g(ops_mu);
      ops_run.swap(ops);
      has_ops.store(false, std::memory_order_relaxed);
    }
    for (auto& op : ops_run) op();
    ops_run.clear();
  }
  // Once per call: a target the driver refused (kNoResource) goes back on
  // the list and waits for the next pass, after the driver has polled.
  if (has_dirty.load(std::memory_order_acquire)) {
    posted = true;
    {
      std::lock_guard<std::mutex> g(dirty_mu);
      dirty_run.swap(dirty);
      has_dirty.store(false, std::memory_order_relaxed);
    }
    for (FlushTarget* t : dirty_run) {
      t->dirty.store(false, std::memory_order_release);
      client->Flush(*this, *t);
    }
    dirty_run.clear();
  }
  if (posted && notify_after_post) Notify();
}

PacketBuf* Rail::NewBuf() {
  auto* b = new PacketBuf;
  b->rail = this;
  b->header.resize(buf_bytes);
  b->c.fn = packet_done;
  return b;
}

}  // namespace rondo::nmad::internal
