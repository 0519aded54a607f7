// bench/overlap/overlap_kernel: the kernel floor's exchange between two
// handles over loopback, in both directions at once and one way, and its
// errors as messages.
#include "bench/overlap/overlap_kernel.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Pair {
  OvKernel* listener = nullptr;  // rank 1
  OvKernel* connector = nullptr;  // rank 0
  ~Pair() {
    if (listener) ov_kernel_free(listener);
    if (connector) ov_kernel_free(connector);
  }
};

void Connect(Pair* p) {
  char address[4096], err[256] = "";
  p->listener = ov_kernel_listen(address, sizeof address, err, sizeof err);
  REQUIRE(p->listener != nullptr);
  REQUIRE(std::string(address).find(';') != std::string::npos);
  std::thread t([&] {
    char e[256];
    p->connector = ov_kernel_connect(address, e, sizeof e);
  });
  const int rc = ov_kernel_accept(p->listener, err, sizeof err);
  t.join();
  REQUIRE(rc == 0);
  REQUIRE(p->connector != nullptr);
}

std::vector<uint8_t> Pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed);
  return v;
}

TEST_CASE("both ranks send and receive 8 MiB at once without deadlock",
          "[overlap_kernel]") {
  Pair p;
  Connect(&p);
  // Larger than the socket buffers: each direction needs its own helper.
  constexpr size_t kBytes = 8 << 20;
  const std::vector<uint8_t> out0 = Pattern(kBytes, 1), out1 = Pattern(kBytes, 2);
  for (int round = 0; round < 2; ++round) {
    std::vector<uint8_t> in0(kBytes, 0), in1(kBytes, 0);
    char err[256];
    REQUIRE(ov_kernel_start(p.connector, out0.data(), in0.data(), kBytes, err,
                            sizeof err) == 0);
    REQUIRE(ov_kernel_start(p.listener, out1.data(), in1.data(), kBytes, err,
                            sizeof err) == 0);
    REQUIRE(ov_kernel_wait(p.connector, err, sizeof err) == 0);
    REQUIRE(ov_kernel_wait(p.listener, err, sizeof err) == 0);
    CHECK(in0 == out1);
    CHECK(in1 == out0);
  }
}

TEST_CASE("one way, either direction, and a second start is refused",
          "[overlap_kernel]") {
  Pair p;
  Connect(&p);
  const std::vector<uint8_t> out = Pattern(1 << 20, 5);
  std::vector<uint8_t> in(1 << 20, 0);
  char err[256];
  REQUIRE(ov_kernel_start(p.listener, out.data(), nullptr, out.size(), err,
                          sizeof err) == 0);
  REQUIRE(ov_kernel_start(p.connector, nullptr, in.data(), in.size(), err,
                          sizeof err) == 0);
  CHECK(ov_kernel_start(p.connector, nullptr, in.data(), in.size(), err,
                        sizeof err) == -1);
  CHECK(std::string(err).find("already started") != std::string::npos);
  REQUIRE(ov_kernel_wait(p.connector, err, sizeof err) == 0);
  REQUIRE(ov_kernel_wait(p.listener, err, sizeof err) == 0);
  CHECK(in == out);
  // And back the other way on the other connection.
  std::fill(in.begin(), in.end(), 0);
  REQUIRE(ov_kernel_start(p.connector, out.data(), nullptr, out.size(), err,
                          sizeof err) == 0);
  REQUIRE(ov_kernel_start(p.listener, nullptr, in.data(), in.size(), err,
                          sizeof err) == 0);
  REQUIRE(ov_kernel_wait(p.listener, err, sizeof err) == 0);
  REQUIRE(ov_kernel_wait(p.connector, err, sizeof err) == 0);
  CHECK(in == out);
}

TEST_CASE("bad addresses and a closed peer are messages, not crashes",
          "[overlap_kernel]") {
  char err[256] = "";
  CHECK(ov_kernel_connect("127.0.0.1:1", err, sizeof err) == nullptr);
  CHECK(std::string(err).find("two addresses") != std::string::npos);
  CHECK(ov_kernel_connect("127.0.0.1:1;127.0.0.1:1", err, sizeof err) ==
        nullptr);
  CHECK(std::string(err).find("accepts a connection") != std::string::npos);
  char tiny[4];
  CHECK(ov_kernel_listen(tiny, sizeof tiny, err, sizeof err) == nullptr);
  CHECK(std::string(err).find("more than the 4 allowed") != std::string::npos);

  Pair p;
  Connect(&p);
  std::vector<uint8_t> in(4096);
  REQUIRE(ov_kernel_start(p.listener, nullptr, in.data(), in.size(), err,
                          sizeof err) == 0);
  ov_kernel_free(p.connector);  // closes both connections
  p.connector = nullptr;
  CHECK(ov_kernel_wait(p.listener, err, sizeof err) == -1);
  CHECK(std::string(err).find("closed") != std::string::npos);
}

}  // namespace
