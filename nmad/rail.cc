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
    std::vector<std::function<void()>> run;
    {
      std::lock_guard<std::mutex> g(ops_mu);
      run.swap(ops);
      has_ops.store(false, std::memory_order_relaxed);
    }
    for (auto& op : run) op();
  }
  // Once per call: a target the driver refused (kNoResource) goes back on
  // the list and waits for the next pass, after the driver has polled.
  if (has_dirty.load(std::memory_order_acquire)) {
    posted = true;
    std::vector<FlushTarget*> flush;
    flush.swap(flush_spare);  // its capacity, kept from pass to pass
    {
      std::lock_guard<std::mutex> g(dirty_mu);
      flush.swap(dirty);
      has_dirty.store(false, std::memory_order_relaxed);
    }
    for (FlushTarget* t : flush) {
      t->dirty.store(false, std::memory_order_release);
      client->Flush(*this, *t);
    }
    flush.clear();
    flush_spare.swap(flush);
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
