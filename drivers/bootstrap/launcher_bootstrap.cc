#include "drivers/bootstrap/launcher_bootstrap.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

namespace rondo::drivers::bootstrap {
namespace {

using internal::FrameReader;
using internal::Message;
using internal::MessageType;

// Parses an integer in [lo, hi] from variable `name`; false with `*error`.
bool ParseIntVar(const char* name, const char* text, int lo, int hi, int* out,
                 std::string* error) {
  std::string_view s(text);
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo ||
      v > hi) {
    *error = std::string("Invalid value for ") + name + ": '" + text +
             "'. Expected: an integer in " + std::to_string(lo) + ".." +
             std::to_string(hi);
    return false;
  }
  *out = v;
  return true;
}

// Sends all of `bytes`; false on any error (the peer is gone).
bool SendAll(int fd, const std::vector<uint8_t>& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent,
                       MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string Errno(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

std::optional<LauncherEnvironment> ParseLauncherEnvironment(
    const EnvironmentLookup& lookup, std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  LauncherEnvironment env;
  const char* socket = lookup("RONDO_RUN_SOCKET");
  if (socket == nullptr || *socket == '\0' ||
      std::strlen(socket) >= sizeof(sockaddr_un::sun_path)) {
    *error = std::string("Invalid value for RONDO_RUN_SOCKET: '") +
             (socket ? socket : "") + "'. Expected: a Unix socket path of 1.." +
             std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
             " characters (set by rondo-run)";
    return std::nullopt;
  }
  env.socket_path = socket;
  const char* key = lookup("RONDO_RUN_KEY");
  if (key == nullptr || std::strlen(key) != internal::kJobKeyHexLength ||
      !internal::FromHex(key)) {
    // The key is a secret: do not echo it.
    *error = std::string("Invalid value for RONDO_RUN_KEY (") +
             (key ? std::to_string(std::strlen(key)) + " characters"
                  : std::string("unset")) +
             "). Expected: " + std::to_string(internal::kJobKeyHexLength) +
             " hex digits (set by rondo-run)";
    return std::nullopt;
  }
  env.key_hex = key;
  const char* size = lookup("RONDO_SIZE");
  const char* rank = lookup("RONDO_RANK");
  if (size == nullptr || rank == nullptr) {
    *error = std::string(size == nullptr ? "RONDO_SIZE" : "RONDO_RANK") +
             " is not set. Expected: set by rondo-run with RONDO_RUN_SOCKET";
    return std::nullopt;
  }
  if (!ParseIntVar("RONDO_SIZE", size, 1, internal::kMaxRanks, &env.size,
                   error) ||
      !ParseIntVar("RONDO_RANK", rank, 0, env.size - 1, &env.rank, error))
    return std::nullopt;
  env.local_rank = env.rank;
  env.local_size = env.size;
  if (const char* ls = lookup("RONDO_LOCAL_SIZE");
      ls != nullptr &&
      !ParseIntVar("RONDO_LOCAL_SIZE", ls, 1, env.size, &env.local_size, error))
    return std::nullopt;
  if (const char* lr = lookup("RONDO_LOCAL_RANK");
      lr != nullptr && !ParseIntVar("RONDO_LOCAL_RANK", lr, 0,
                                    env.local_size - 1, &env.local_rank, error))
    return std::nullopt;
  return env;
}

Result<std::unique_ptr<LauncherBootstrap>> LauncherBootstrap::Connect(
    const LauncherEnvironment& env, std::string* error, int timeout_ms) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (env.socket_path.empty() ||
      env.socket_path.size() >= sizeof(addr.sun_path)) {
    *error = "rondo-run socket path '" + env.socket_path +
             "' is empty or longer than " +
             std::to_string(sizeof(addr.sun_path) - 1) + " characters";
    return Status::kInvalidArgument;
  }
  std::memcpy(addr.sun_path, env.socket_path.c_str(),
              env.socket_path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = Errno("socket");
    return Status::kInternal;
  }
  auto fail = [&](std::string why) -> Status {
    ::close(fd);
    *error = std::move(why);
    return Status::kPeerFailed;
  };
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0)
    return fail(Errno(("cannot connect to rondo-run at " + env.socket_path)
                          .c_str()));
  Message hello;
  hello.type = MessageType::kHello;
  hello.key = env.key_hex;
  hello.rank = env.rank;
  if (!SendAll(fd, internal::EncodeFrame(hello)))
    return fail(Errno("cannot send HELLO to rondo-run"));

  // Wait for WELCOME; rondo-run closes the connection on a wrong key/rank.
  FrameReader reader;
  Message reply;
  for (;;) {
    FrameReader::Result r = reader.Next(&reply);
    if (r == FrameReader::Result::kFrame) break;
    if (r == FrameReader::Result::kMalformed)
      return fail("malformed answer from rondo-run: " + reader.error());
    pollfd pfd{fd, POLLIN, 0};
    int n = ::poll(&pfd, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0)
      return fail("rondo-run did not answer HELLO within " +
                  std::to_string(timeout_ms) + " ms");
    uint8_t buf[256];
    ssize_t got = ::recv(fd, buf, sizeof(buf), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return fail("rondo-run refused the connection of rank " +
                  std::to_string(env.rank) +
                  " (wrong RONDO_RUN_KEY or RONDO_RANK, or the rank is "
                  "already connected)");
    reader.Append({buf, static_cast<size_t>(got)});
  }
  if (reply.type != MessageType::kWelcome)
    return fail("rondo-run answered HELLO with " +
                std::string(internal::MessageTypeName(reply.type)) +
                ", expected WELCOME");
  return std::unique_ptr<LauncherBootstrap>(new LauncherBootstrap(env, fd));
}

LauncherBootstrap::LauncherBootstrap(LauncherEnvironment env, int fd)
    : env_(std::move(env)), fd_(fd), reader_([this] { ReadLoop(); }) {}

LauncherBootstrap::~LauncherBootstrap() {
  // Wakes the reader out of recv(); it then sees EOF and exits.
  ::shutdown(fd_, SHUT_RDWR);
  reader_.join();
  ::close(fd_);
}

Status LauncherBootstrap::Send(const Message& message) {
  std::vector<uint8_t> frame = internal::EncodeFrame(message);
  std::lock_guard lock(send_mutex_);
  return SendAll(fd_, frame) ? Status::kOk : Status::kPeerFailed;
}

Status LauncherBootstrap::Put(std::string_view key,
                              std::span<const uint8_t> value) {
  if (!internal::CheckKey(key).empty() || !internal::CheckValue(value).empty())
    return Status::kInvalidArgument;
  Message put;
  put.type = MessageType::kPut;
  put.key = std::string(key);
  put.value.assign(value.begin(), value.end());
  return Send(put);
}

Status LauncherBootstrap::Collective(MessageType request, MessageType done) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return Status::kPeerFailed;
    reply_.reset();
  }
  Message m;
  m.type = request;
  if (Send(m) != Status::kOk) return Status::kPeerFailed;
  std::unique_lock lock(mutex_);
  reply_ready_.wait(lock, [&] { return reply_.has_value() || closed_; });
  if (!reply_.has_value()) return Status::kPeerFailed;
  Message reply = std::move(*reply_);
  reply_.reset();
  if (reply.type != done) return Status::kInternal;
  return reply.ok ? Status::kOk : Status::kPeerFailed;
}

Status LauncherBootstrap::Fence() {
  return Collective(MessageType::kFence, MessageType::kFenceDone);
}

Status LauncherBootstrap::Barrier() {
  return Collective(MessageType::kBarrier, MessageType::kBarrierDone);
}

Result<std::vector<uint8_t>> LauncherBootstrap::Get(int rank,
                                                    std::string_view key) {
  if (rank < 0 || rank >= env_.size) return Status::kInvalidArgument;
  std::optional<std::vector<uint8_t>> v = store_.Find(rank, key);
  if (!v) return Status::kInvalidArgument;
  return std::move(*v);
}

std::vector<PeerFailure> LauncherBootstrap::PollFailures() {
  return failures_.Take();
}

Status LauncherBootstrap::Finalize() {
  {
    std::lock_guard lock(mutex_);
    if (finalized_) return Status::kOk;
    finalized_ = true;
  }
  Message fini;
  fini.type = MessageType::kFini;
  return Send(fini);
}

void LauncherBootstrap::PostFailure(PeerFailure failure) {
  failures_.Post(std::move(failure));
}

void LauncherBootstrap::Dispatch(Message message) {
  switch (message.type) {
    case MessageType::kKeyValue:
      store_.Set(message.rank, std::move(message.key),
                 std::move(message.value));
      return;
    case MessageType::kFailure: {
      std::lock_guard lock(mutex_);
      PostFailure({message.rank, std::move(message.text)});
      return;
    }
    case MessageType::kFenceDone:
    case MessageType::kBarrierDone: {
      std::lock_guard lock(mutex_);
      reply_ = std::move(message);
      reply_ready_.notify_all();
      return;
    }
    default:
      return;  // nothing else is sent to a client; ignore
  }
}

void LauncherBootstrap::ReadLoop() {
  FrameReader reader;
  std::vector<uint8_t> buf(64 * 1024);
  std::string why;
  for (;;) {
    Message m;
    FrameReader::Result r = reader.Next(&m);
    if (r == FrameReader::Result::kFrame) {
      Dispatch(std::move(m));
      continue;
    }
    if (r == FrameReader::Result::kMalformed) {
      why = "malformed frame from rondo-run: " + reader.error();
      break;
    }
    ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = n == 0 ? "rondo-run closed the connection"
                   : Errno("lost the connection to rondo-run");
      break;
    }
    reader.Append({buf.data(), static_cast<size_t>(n)});
  }
  std::lock_guard lock(mutex_);
  closed_ = true;
  // After Finalize (or in the destructor) the end of the connection is
  // expected; otherwise the job can no longer make collective progress.
  if (!finalized_) PostFailure({-1, why});
  reply_ready_.notify_all();
}

}  // namespace rondo::drivers::bootstrap
