#include "bench/common/tcp_floor.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace rondo::bench {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error("tcp floor: " + what + ": " +
                           std::strerror(errno));
}

// This host's IPv4 addresses, the loopback last.
std::vector<std::string> Ipv4Addresses() {
  std::vector<std::string> out, loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) Fail("getifaddrs");
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET ||
        (i->ifa_flags & IFF_UP) == 0)
      continue;
    char text[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) == nullptr)
      continue;
    ((i->ifa_flags & IFF_LOOPBACK) ? loopback : out).push_back(text);
  }
  freeifaddrs(list);
  out.insert(out.end(), loopback.begin(), loopback.end());
  return out;
}

void NoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

TcpFloor::TcpFloor(int fd) : fd_(fd) {}

TcpFloor::~TcpFloor() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  if (fd_ >= 0) close(fd_);
}

std::unique_ptr<TcpFloor> TcpFloor::Listen(std::string* address) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Fail("socket");
  std::unique_ptr<TcpFloor> t(new TcpFloor(fd));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) Fail("bind");
  if (listen(fd, 1) != 0) Fail("listen");
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    Fail("getsockname");
  std::string list;
  for (const std::string& ip : Ipv4Addresses())
    list += (list.empty() ? "" : ",") + ip;
  *address = list + ":" + std::to_string(ntohs(a.sin_port));
  t->listening_ = true;
  return t;
}

void TcpFloor::Accept() {
  if (!listening_) throw std::logic_error("tcp floor: Accept without Listen");
  const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) Fail("accept");
  close(fd_);
  fd_ = c;
  listening_ = false;
  NoDelay(fd_);
  Start();
}

std::unique_ptr<TcpFloor> TcpFloor::Connect(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos)
    throw std::runtime_error("tcp floor: no port in '" + address + "'");
  const int port = std::stoi(address.substr(colon + 1));
  std::stringstream ips(address.substr(0, colon));
  std::string ip;
  while (std::getline(ips, ip, ',')) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) continue;
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) Fail("socket");
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      std::unique_ptr<TcpFloor> t(new TcpFloor(fd));
      NoDelay(fd);
      t->Start();
      return t;
    }
    close(fd);
  }
  throw std::runtime_error("tcp floor: no address of '" + address +
                           "' accepts a connection");
}

void TcpFloor::Start() { thread_ = std::thread([this] { Main(); }); }

void TcpFloor::Post(void* buf, size_t n, bool send) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    buf_ = buf;
    n_ = n;
    send_ = send;
    done_ = false;
    posted_ = true;
  }
  cv_.notify_one();
}

void TcpFloor::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_; });
  if (!error_.empty()) throw std::runtime_error(error_);
}

void TcpFloor::Main() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return posted_ || stop_; });
    if (stop_) return;
    posted_ = false;
    auto* p = static_cast<char*>(buf_);
    const size_t n = n_;
    const bool send = send_;
    lock.unlock();
    std::string error;
    for (size_t done = 0; done < n;) {
      const ssize_t k = send ? ::send(fd_, p + done, n - done, MSG_NOSIGNAL)
                             : ::recv(fd_, p + done, n - done, MSG_WAITALL);
      if (k > 0) {
        done += static_cast<size_t>(k);
      } else if (k < 0 && errno == EINTR) {
        continue;
      } else {
        error = std::string("tcp floor: ") + (send ? "send" : "recv") +
                (k == 0 ? ": the peer closed the connection"
                        : std::string(": ") + std::strerror(errno));
        break;
      }
    }
    lock.lock();
    error_ = error;
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace rondo::bench
