#include "nmad/remote_memory.h"

#include <sched.h>

#include <new>

#include "nmad/rail.h"

namespace rondo::nmad {

using engine::Status;

template <typename Fn>
Status RemoteMemory::Held(Fn&& fn) noexcept {
  if (rail_.held()) return fn();
  // The holder only polls or posts: it lets go within one pass.
  while (!rail_.TryHold()) {
    if (internal::t_held_rail != nullptr) return Status::kBusy;
    sched_yield();
  }
  Status s = fn();
  rail_.Release();
  return s;
}

template <typename Fn>
bool RemoteMemory::HeldAnswer(Fn&& fn) noexcept {
  bool answer = false;
  (void)Held([&] {
    answer = fn();
    return Status::kOk;
  });
  return answer;
}

bool RemoteMemory::Reaches(int peer) noexcept {
  return HeldAnswer([&] { return ops_.Reaches(peer); });
}

bool RemoteMemory::Emulated(int peer) noexcept {
  return HeldAnswer([&] { return ops_.Emulated(peer); });
}

Status RemoteMemory::Map(void* base, size_t len, MemoryRegion** region,
                         std::vector<uint8_t>* packed_key) {
  return Held([&]() noexcept {
    try {
      return ops_.Map(base, len, region, packed_key);
    } catch (const std::bad_alloc&) {
      return Status::kNoResource;
    }
  });
}

void RemoteMemory::Unmap(MemoryRegion* region) noexcept {
  (void)Held([&] {
    ops_.Unmap(region);
    return Status::kOk;
  });
}

Status RemoteMemory::UnpackKey(int peer, std::span<const uint8_t> packed,
                               RemoteKey** key) {
  return Held([&]() noexcept { return ops_.UnpackKey(peer, packed, key); });
}

void RemoteMemory::ReleaseKey(RemoteKey* key) noexcept {
  (void)Held([&] {
    ops_.ReleaseKey(key);
    return Status::kOk;
  });
}

Status RemoteMemory::Put(int peer, const void* buf, size_t len,
                         uint64_t remote, RemoteKey* key,
                         drivers::Completion* done) noexcept {
  return Held([&] { return ops_.Put(peer, buf, len, remote, key, done); });
}

Status RemoteMemory::Get(int peer, void* buf, size_t len, uint64_t remote,
                         RemoteKey* key, drivers::Completion* done) noexcept {
  return Held([&] { return ops_.Get(peer, buf, len, remote, key, done); });
}

Status RemoteMemory::Atomic(int peer, AtomicOp op, size_t size,
                            const void* value, void* result, uint64_t remote,
                            RemoteKey* key,
                            drivers::Completion* done) noexcept {
  return Held([&] {
    return ops_.Atomic(peer, op, size, value, result, remote, key, done);
  });
}

Status RemoteMemory::Fence() noexcept {
  return Held([&] { return ops_.Fence(); });
}

Status RemoteMemory::Flush(int peer, drivers::Completion* done) noexcept {
  return Held([&] { return ops_.Flush(peer, done); });
}

}  // namespace rondo::nmad
