// bench/common/tcp_floor: the physical floor of a background transfer over
// the kernel's TCP, for overlap_p2p's mode `kernel`.
//
// Each rank has one helper thread blocked in the kernel on whole messages
// (send() until every byte is queued; recv(MSG_WAITALL) until every byte
// has arrived), so the kernel alone moves the bytes: no user-space
// progress, no handshake, no copy out of a library's buffers. What the
// computation loses beside it is the kernel's own work on the bytes (the
// socket copies, TCP, the emulated links' qdiscs and veths that run on the
// computing core) plus the helper's wake-ups: the least any progress
// engine over this transport can cost.
//
// Set-up: rank 1 listens on an ephemeral port of every address and gives
// rank 0 its IPv4 addresses and the port (ListenerAddress); rank 0 tries
// them in order (Connect). Thread-safety: one thread calls Post and Wait.
#ifndef RONDO_BENCH_COMMON_TCP_FLOOR_H_
#define RONDO_BENCH_COMMON_TCP_FLOOR_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace rondo::bench {

class TcpFloor {
 public:
  // Rank 1's side: a listening socket; `*address` receives what rank 0
  // passes to Connect ("a.b.c.d,e.f.g.h:port", its IPv4 addresses,
  // loopback last). Accept() then takes rank 0's connection.
  static std::unique_ptr<TcpFloor> Listen(std::string* address);
  void Accept();
  // Rank 0's side: connects to the first address of `address` that
  // answers. Throws std::runtime_error naming the addresses if none does.
  static std::unique_ptr<TcpFloor> Connect(const std::string& address);

  ~TcpFloor();
  TcpFloor(const TcpFloor&) = delete;
  TcpFloor& operator=(const TcpFloor&) = delete;

  // Hands `n` bytes of `buf` to the helper thread (send or receive) and
  // returns at once; Wait() returns when they are all sent (queued in the
  // kernel) or received. Throws std::runtime_error on a socket error.
  void Post(void* buf, size_t n, bool send);
  void Wait();

 private:
  explicit TcpFloor(int fd);
  void Start();
  void Main();

  int fd_ = -1;        // the connection (the listener before Accept)
  bool listening_ = false;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  void* buf_ = nullptr;
  size_t n_ = 0;
  bool send_ = false;
  bool posted_ = false;
  bool done_ = false;
  bool stop_ = false;
  std::string error_;
};

}  // namespace rondo::bench

#endif  // RONDO_BENCH_COMMON_TCP_FLOOR_H_
