#include "nmad/active_messages.h"

#include <mutex>

namespace rondo::nmad::internal {

Status AmHandlers::Register(uint32_t id, AmHandler fn, void* arg) {
  if (id > kMaxAmHandler || fn == nullptr) return Status::kInvalidArgument;
  std::unique_lock<std::shared_mutex> lock(mu_);
  map_[id] = {fn, arg};
  return Status::kOk;
}

bool AmHandlers::Find(uint32_t id, AmHandler* fn, void** arg) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = map_.find(id);
  if (it == map_.end()) return false;
  *fn = it->second.first;
  *arg = it->second.second;
  return true;
}

Status CheckAmSend(uint32_t id, const void* header, size_t header_len,
                   const void* body, size_t body_len, size_t max_packet) {
  if (id > kMaxAmHandler || (header == nullptr && header_len > 0) ||
      (body == nullptr && body_len > 0) ||
      header_len +
              wire::ChunkHeaderSize(wire::ChunkKind::kAmRts, wire::kMaxParts) +
              wire::kPacketHeaderSize >
          max_packet)
    return Status::kInvalidArgument;
  return Status::kOk;
}

AmOutcome AmDispatch::Run(const AmHandlers& handlers, CoreImpl* core,
                          int peer, uint32_t session,
                          const wire::ChunkView& c) noexcept {
  AmHandler fn = nullptr;
  void* arg = nullptr;
  if (!handlers.Find(c.handler, &fn, &arg)) return AmOutcome::kNoHandler;
  AmMessage m;
  m.core_ = core;
  m.source_ = peer;
  m.session_ = session;
  m.handler_ = c.handler;
  m.header_ = {c.am_header, c.am_header_size};
  m.body_size_ = c.msg_size;
  m.body_inline_ = c.kind == wire::ChunkKind::kAm;
  if (m.body_inline_) m.body_ = {c.payload, c.payload_size};
  m.rdv_id_ = c.rdv_id;
  m.nparts_ = c.nparts;
  m.parts_ = c.parts;
  fn(m, arg);
  if (!m.body_inline_ && !m.body_taken_) return AmOutcome::kBodyDeclined;
  return AmOutcome::kDelivered;
}

}  // namespace rondo::nmad::internal
