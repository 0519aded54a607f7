// Test helpers for drivers: a PacketSink that records what arrives and a
// Completion that records how an operation ended.
#ifndef RONDO_DRIVERS_TESTING_RECORDING_SINK_H_
#define RONDO_DRIVERS_TESTING_RECORDING_SINK_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/driver.h"

namespace rondo::drivers::testing {

struct Packet {
  int peer;
  int rail;
  std::string data;  // the packet, or the failure's text
};

class RecordingSink : public PacketSink {
 public:
  void OnPacket(int peer, int rail, const void* data,
                size_t len) noexcept override {
    packets.push_back({peer, rail,
                       std::string(static_cast<const char*>(data), len)});
    if (on_packet) on_packet(packets.back());
  }
  void OnPeerFailure(int peer, int rail, Status status,
                     std::string_view what) noexcept override {
    failures.push_back({peer, rail, std::string(what)});
    failure_status = status;
  }
  std::vector<Packet> packets;
  std::vector<Packet> failures;
  Status failure_status = Status::kOk;
  std::function<void(const Packet&)> on_packet;
};

struct TestCompletion : Completion {
  TestCompletion() { fn = &Done; }
  static void Done(Completion* self, Status status, size_t bytes) noexcept {
    auto* c = static_cast<TestCompletion*>(self);
    ++c->calls;
    c->status = status;
    c->bytes = bytes;
  }
  int calls = 0;
  Status status = Status::kInternal;
  size_t bytes = 0;
};

}  // namespace rondo::drivers::testing

#endif  // RONDO_DRIVERS_TESTING_RECORDING_SINK_H_
