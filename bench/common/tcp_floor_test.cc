#include "bench/common/tcp_floor.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

namespace rondo::bench {
namespace {

TEST_CASE("a posted message arrives whole, in order, over loopback",
          "[tcp_floor]") {
  std::string address;
  std::unique_ptr<TcpFloor> listener = TcpFloor::Listen(&address);
  REQUIRE(address.find(':') != std::string::npos);
  REQUIRE(address.find("127.0.0.1") != std::string::npos);
  std::unique_ptr<TcpFloor> sender;
  std::thread connect([&] { sender = TcpFloor::Connect(address); });
  listener->Accept();
  connect.join();
  REQUIRE(sender);

  // Larger than the socket buffers, so both sides block in the kernel.
  constexpr size_t kBytes = 8 << 20;
  std::vector<uint8_t> out(kBytes), in(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i) out[i] = static_cast<uint8_t>(i * 7 + 3);
  for (int round = 0; round < 3; ++round) {
    std::fill(in.begin(), in.end(), 0);
    listener->Post(in.data(), kBytes, /*send=*/false);
    sender->Post(out.data(), kBytes, /*send=*/true);
    sender->Wait();
    listener->Wait();
    CHECK(in == out);
  }
  // Both directions, and a message of one byte.
  uint8_t one = 42, got = 0;
  sender->Post(&got, 1, /*send=*/false);
  listener->Post(&one, 1, /*send=*/true);
  listener->Wait();
  sender->Wait();
  CHECK(got == 42);
}

TEST_CASE("a closed peer fails the receive with a message, not a hang",
          "[tcp_floor]") {
  std::string address;
  std::unique_ptr<TcpFloor> listener = TcpFloor::Listen(&address);
  std::unique_ptr<TcpFloor> sender;
  std::thread connect([&] { sender = TcpFloor::Connect(address); });
  listener->Accept();
  connect.join();
  std::vector<uint8_t> in(1024);
  listener->Post(in.data(), in.size(), /*send=*/false);
  sender.reset();  // closes the connection
  try {
    listener->Wait();
    FAIL("Wait returned without an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("closed") != std::string::npos);
  }
}

TEST_CASE("Connect names the addresses when none answers", "[tcp_floor]") {
  CHECK_THROWS_WITH(TcpFloor::Connect("127.0.0.1:1"),
                    Catch::Contains("127.0.0.1:1"));
  CHECK_THROWS_WITH(TcpFloor::Connect("no-port"), Catch::Contains("no port"));
}

}  // namespace
}  // namespace rondo::bench
