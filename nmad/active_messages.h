// Active messages: each session's handler registry, the checks of a send,
// and the dispatch of an arrived kAm/kAmRts chunk to its handler (inside
// the polling task, no matching). The body's rendezvous (AmMessage::
// ReceiveBody) and the answers to the sender run in core.cc. Internal to
// //nmad.
#ifndef RONDO_NMAD_ACTIVE_MESSAGES_H_
#define RONDO_NMAD_ACTIVE_MESSAGES_H_

#include <cstddef>
#include <cstdint>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

#include "nmad/core.h"
#include "nmad/wire.h"

namespace rondo::nmad::internal {

inline constexpr uint32_t kMaxAmHandler = 65535;

// One session's handlers by id. Thread-safe (registering is rare: a writer
// lock; every arrival takes the reader lock).
class AmHandlers {
 public:
  // kInvalidArgument for an id above kMaxAmHandler or a null handler;
  // registering an id again replaces its handler.
  Status Register(uint32_t id, AmHandler fn, void* arg);
  // False when `id` has no handler.
  bool Find(uint32_t id, AmHandler* fn, void** arg) const;

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<uint32_t, std::pair<AmHandler, void*>> map_;
};

// The arguments of a send: kInvalidArgument for an id above kMaxAmHandler,
// a null header or body with a length, or a header that leaves no room in a
// packet of `max_packet` bytes for the largest AM chunk header.
Status CheckAmSend(uint32_t id, const void* header, size_t header_len,
                   const void* body, size_t body_len, size_t max_packet);

enum class AmOutcome {
  kNoHandler,      // dropped (the sender's rendezvous, if any, is refused)
  kDelivered,      // the handler ran; an inline body, or a body it took
  kBodyDeclined,   // the handler ran and left a rendezvous body: refuse it
};

struct AmDispatch {
  // Runs the handler of `c` (kAm or kAmRts) from `peer` in `session`, with
  // an AmMessage whose ReceiveBody goes to `core`.
  static AmOutcome Run(const AmHandlers& handlers, CoreImpl* core, int peer,
                       uint32_t session, const wire::ChunkView& c) noexcept;
};

}  // namespace rondo::nmad::internal

#endif  // RONDO_NMAD_ACTIVE_MESSAGES_H_
