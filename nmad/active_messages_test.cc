// Active messages alone (nmad/active_messages.h): the handler registry,
// the send checks, dispatching a chunk to its handler (no core: the
// handlers here do not receive rendezvous bodies).
#include "nmad/active_messages.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace rondo::nmad::internal {
namespace {

struct Seen {
  int calls = 0;
  int source = -1;
  uint32_t handler = 0;
  std::string header, body;
  size_t body_size = 0;
  bool inline_body = false;
};

void Record(AmMessage& m, void* arg) noexcept {
  auto* s = static_cast<Seen*>(arg);
  ++s->calls;
  s->source = m.source();
  s->handler = m.handler_id();
  s->header.assign(reinterpret_cast<const char*>(m.header().data()),
                   m.header().size());
  s->body.assign(reinterpret_cast<const char*>(m.body().data()),
                 m.body().size());
  s->body_size = m.body_size();
  s->inline_body = m.body_inline();
}

void Other(AmMessage&, void* arg) noexcept { ++*static_cast<int*>(arg); }

TEST_CASE("active messages: registry") {
  AmHandlers h;
  Seen seen;
  AmHandler fn = nullptr;
  void* arg = nullptr;
  CHECK_FALSE(h.Find(3, &fn, &arg));
  CHECK(h.Register(3, &Record, &seen) == Status::kOk);
  REQUIRE(h.Find(3, &fn, &arg));
  CHECK(fn == &Record);
  CHECK(arg == &seen);
  int n = 0;
  CHECK(h.Register(3, &Other, &n) == Status::kOk);  // replaces
  REQUIRE(h.Find(3, &fn, &arg));
  CHECK(fn == &Other);
  CHECK(h.Register(kMaxAmHandler, &Other, &n) == Status::kOk);
  CHECK(h.Register(kMaxAmHandler + 1, &Other, &n) == Status::kInvalidArgument);
  CHECK(h.Register(4, nullptr, &n) == Status::kInvalidArgument);
  CHECK_FALSE(h.Find(4, &fn, &arg));
}

TEST_CASE("active messages: send checks") {
  const char hdr[4] = {};
  CHECK(CheckAmSend(1, hdr, 4, nullptr, 0, 65536) == Status::kOk);
  CHECK(CheckAmSend(1, nullptr, 0, hdr, 4, 65536) == Status::kOk);
  CHECK(CheckAmSend(70000, hdr, 4, nullptr, 0, 65536) ==
        Status::kInvalidArgument);
  CHECK(CheckAmSend(1, nullptr, 4, nullptr, 0, 65536) ==
        Status::kInvalidArgument);
  CHECK(CheckAmSend(1, hdr, 4, nullptr, 9, 65536) == Status::kInvalidArgument);
  // The header must leave room for the largest AM chunk header.
  const size_t room = 1024 - wire::kPacketHeaderSize -
                      wire::ChunkHeaderSize(wire::ChunkKind::kAmRts,
                                            wire::kMaxParts);
  std::vector<char> big(room + 1);
  CHECK(CheckAmSend(1, big.data(), room, nullptr, 0, 1024) == Status::kOk);
  CHECK(CheckAmSend(1, big.data(), room + 1, nullptr, 0, 1024) ==
        Status::kInvalidArgument);
}

TEST_CASE("active messages: dispatch") {
  AmHandlers h;
  Seen seen;
  REQUIRE(h.Register(9, &Record, &seen) == Status::kOk);
  const std::string hdr = "head", body = "the body";
  wire::ChunkView c;
  c.kind = wire::ChunkKind::kAm;
  c.handler = 9;
  c.am_header = reinterpret_cast<const uint8_t*>(hdr.data());
  c.am_header_size = static_cast<uint32_t>(hdr.size());
  c.payload = reinterpret_cast<const uint8_t*>(body.data());
  c.payload_size = body.size();
  c.msg_size = body.size();
  CHECK(AmDispatch::Run(h, nullptr, 4, 1, c) == AmOutcome::kDelivered);
  CHECK(seen.calls == 1);
  CHECK(seen.source == 4);
  CHECK(seen.handler == 9);
  CHECK(seen.header == hdr);
  CHECK(seen.body == body);
  CHECK(seen.inline_body);
  // A body by rendezvous that the handler does not take is declined.
  wire::ChunkView r = c;
  r.kind = wire::ChunkKind::kAmRts;
  r.payload = nullptr;
  r.payload_size = 0;
  r.msg_size = 1 << 20;
  CHECK(AmDispatch::Run(h, nullptr, 4, 1, r) == AmOutcome::kBodyDeclined);
  CHECK(seen.calls == 2);
  CHECK_FALSE(seen.inline_body);
  CHECK(seen.body_size == (1u << 20));
  CHECK(seen.body.empty());
  // No handler: nothing runs.
  c.handler = 10;
  CHECK(AmDispatch::Run(h, nullptr, 4, 1, c) == AmOutcome::kNoHandler);
  CHECK(seen.calls == 2);
}

}  // namespace
}  // namespace rondo::nmad::internal
