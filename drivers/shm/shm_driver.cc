#include "drivers/shm/shm_driver.h"

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "drivers/shm/fence.h"

namespace rondo::drivers::shm {
namespace {

constexpr int kDrainBudget = 64;  // frames per peer per Poll

// Writes the doorbell name into `buf` (NUL-terminated) and returns its
// length. Allocates nothing: RingDoorbell calls it on the message path,
// whenever the peer sleeps.
int FormatDoorbellName(char* buf, size_t size, uint64_t nonce,
                       int local) noexcept {
  const int n = std::snprintf(buf, size, "rondo-shm-%016llx-%d",
                              static_cast<unsigned long long>(nonce), local);
  return std::clamp(n, 0, static_cast<int>(size) - 1);
}

sockaddr_un DoorbellAddress(uint64_t nonce, int local,
                            socklen_t* len) noexcept {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  // Abstract namespace: a leading NUL, no file, gone with the socket.
  const int n = FormatDoorbellName(a.sun_path + 1, sizeof a.sun_path - 1,
                                   nonce, local);
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return a;
}

int PidfdOpen(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

namespace {
// The ring bytes that take any frame of up to `max_len` bytes once empty
// (cell.h: a frame never wraps, a skip may precede it).
size_t RingBytesFor(size_t max_len) {
  return 2 * size_t{FrameBytes(static_cast<uint32_t>(max_len))};
}
}  // namespace

uint32_t RingCellsFor(size_t max_packet) {
  const size_t need = RingBytesFor(max_packet + kDataHeaderBytes);
  uint32_t cells = kDefaultRingCells;
  while (size_t{cells} * kCellBytes < need) cells *= 2;
  return cells;
}

std::string DoorbellName(uint64_t nonce, int local) {
  char buf[64];
  const int n = FormatDoorbellName(buf, sizeof buf, nonce, local);
  return std::string(buf, n);
}

ShmDriver::ShmDriver(std::shared_ptr<ShmSegment> segment,
                     const ShmDriverOptions& options)
    : segment_(std::move(segment)), options_(options) {}

Result<std::unique_ptr<ShmDriver>> ShmDriver::Create(
    std::shared_ptr<ShmSegment> segment, const ShmDriverOptions& options,
    std::string* error) {
  auto bad = [error](std::string what) {
    if (error) *error = "shm: " + std::move(what);
    return Status::kInvalidArgument;
  };
  if (segment == nullptr) return bad("no segment");
  if (options.self < 0 || options.self >= 65536)
    return bad("invalid self " + std::to_string(options.self) +
               ". Expected: 0 <= self < 65536");
  if (options.local < 0 || options.local >= segment->local_size())
    return bad("invalid local index " + std::to_string(options.local) +
               ". Expected: 0.." + std::to_string(segment->local_size() - 1));
  if (options.max_packet < 1 || options.max_packet > kMaxPacket)
    return bad("invalid max_packet " + std::to_string(options.max_packet) +
               ". Expected: 1.." + std::to_string(kMaxPacket));
  if (options.copy_chunk < 1 || options.copy_chunk > (64u << 10))
    return bad("invalid copy_chunk " + std::to_string(options.copy_chunk) +
               ". Expected: 1..65536");
  const size_t need = RingBytesFor(
      std::max(options.max_packet, options.copy_chunk + kDataHeaderBytes));
  const size_t have = size_t{segment->ring_cells()} * kCellBytes;
  if (need > have)
    return bad("a FIFO for frames of max_packet " +
               std::to_string(options.max_packet) + " bytes needs " +
               std::to_string(need) + " bytes, more than the ring's " +
               std::to_string(have) + " (RingCellsFor(max_packet) cells)");
  if (options.liveness_polls < 1)
    return bad("invalid liveness_polls " +
               std::to_string(options.liveness_polls) + ". Expected: >= 1");
  RankSlot& slot = segment->slot(options.local);
  if (slot.pid.load(std::memory_order_acquire) != 0)
    return bad("local index " + std::to_string(options.local) +
               " is already attached (by rank " +
               std::to_string(slot.rank.load()) + ")");
  std::unique_ptr<ShmDriver> d(new ShmDriver(std::move(segment), options));
  if (Status s = d->Init(error); s != Status::kOk) return s;
  return d;
}

Status ShmDriver::Init(std::string* error) {
  caps_.name = "shm";
  caps_.max_packet = options_.max_packet;
  caps_.rendezvous = true;
  caps_.zero_copy = false;  // one copy (CMA), not zero
  caps_.bandwidth_bytes_per_s = 10e9;
  caps_.latency_ns = 200;
  ring_bytes_ = segment_->ring_cells() * static_cast<uint32_t>(kCellBytes);
  max_frame_ = static_cast<uint32_t>(
      std::max(options_.max_packet, options_.copy_chunk + kDataHeaderBytes));
  const int n = segment_->local_size();
  by_local_.assign(static_cast<size_t>(n), nullptr);
  watch_ = std::make_unique<std::atomic<const Peer*>[]>(static_cast<size_t>(n));
  nwatch_ = static_cast<size_t>(n);
  my_doorbell_ = &segment_->slot(options_.local).doorbell;
  ready_.reserve(64);
  delivering_.reserve(64);
  if (options_.wakeup) {
    wakeup_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    sockaddr_un a = DoorbellAddress(segment_->nonce(), options_.local, &len);
    if (wakeup_fd_ < 0 ||
        bind(wakeup_fd_, reinterpret_cast<sockaddr*>(&a), len) != 0) {
      if (error)
        *error = std::string("shm: cannot bind the doorbell socket: ") +
                 std::strerror(errno);
      if (wakeup_fd_ >= 0) close(wakeup_fd_);
      wakeup_fd_ = -1;
      return Status::kInternal;
    }
    caps_.wakeup_fd = true;
    // Peers' pidfds join the set as they connect (Connect).
    wake_set_fd_ = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0;  // the doorbell; a peer is its rank + 1
    if (wake_set_fd_ >= 0 &&
        epoll_ctl(wake_set_fd_, EPOLL_CTL_ADD, wakeup_fd_, &ev) != 0) {
      close(wake_set_fd_);
      wake_set_fd_ = -1;
    }
  }
  PrefaultRings();
  // Nodes for the rendezvous tables up front: an RTS that arrives before
  // its receive for the first time, late in a job, allocates nothing.
  try {
    send_nodes_.Prime(sends_, 16);
    recv_nodes_.Prime(recvs_, 16);
    rts_nodes_.Prime(unexpected_, 16);
  } catch (const std::bad_alloc&) {
  }  // they are made on demand then
  light_fence_ = options_.asymmetric_fence && RegisterHeavyBarrier();
  RankSlot& slot = segment_->slot(options_.local);
  slot.rank.store(options_.self, std::memory_order_relaxed);
  slot.doorbell.store(0, std::memory_order_relaxed);
  slot.light_fence.store(light_fence_ ? 1 : 0, std::memory_order_relaxed);
  slot.pid.store(options_.pid != 0 ? options_.pid : getpid(),
                 std::memory_order_release);
  return Status::kOk;
}

void ShmDriver::PrefaultRings() noexcept {
#ifdef MADV_POPULATE_WRITE
  // The rings this rank writes and reads are mapped now rather than page
  // by page as the FIFOs first go round (a steady state whose resident
  // memory grows over its first thousand messages looks like a leak:
  // tests/mpi/pcoll_check's RSS bound). MADV_POPULATE_WRITE faults the
  // pages in without touching their contents, so a peer already writing
  // is not disturbed; kernels before 5.14 refuse it and keep the lazy
  // faults.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = ring_bytes_;
  auto populate = [&](Cell* ring) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(ring) & ~(page - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(ring) + bytes;
    (void)madvise(reinterpret_cast<void*>(begin), end - begin,
                  MADV_POPULATE_WRITE);
  };
  for (int j = 0; j < segment_->local_size(); ++j) {
    if (j == options_.local) continue;
    populate(segment_->ring(options_.local, j));
    populate(segment_->ring(j, options_.local));
  }
#endif
}

ShmDriver::~ShmDriver() {
  Close(0);
  for (auto& p : peers_)
    if (p && p->pidfd >= 0) close(p->pidfd);
  if (wakeup_fd_ >= 0) close(wakeup_fd_);
  if (wake_set_fd_ >= 0) close(wake_set_fd_);
}

void ShmDriver::SetSink(PacketSink* sink, int rail) {
  sink_ = sink;
  rail_ = rail;
}

Result<std::vector<uint8_t>> ShmDriver::LocalAddress() {
  std::vector<uint8_t> a(20);
  const uint64_t nonce = segment_->nonce();
  const int32_t local = options_.local, rank = options_.self;
  std::memcpy(a.data(), "shm1", 4);
  std::memcpy(a.data() + 4, &nonce, 8);
  std::memcpy(a.data() + 12, &local, 4);
  std::memcpy(a.data() + 16, &rank, 4);
  return a;
}

Status ShmDriver::Connect(int peer, std::span<const uint8_t> address) {
  if (closed_) return Status::kCanceled;
  if (peer < 0 || peer >= 65536 || address.size() != 20 ||
      std::memcmp(address.data(), "shm1", 4) != 0)
    return Status::kInvalidArgument;
  uint64_t nonce;
  int32_t local, rank;
  std::memcpy(&nonce, address.data() + 4, 8);
  std::memcpy(&local, address.data() + 12, 4);
  std::memcpy(&rank, address.data() + 16, 4);
  if (nonce != segment_->nonce() || local < 0 ||
      local >= segment_->local_size() || local == options_.local ||
      rank != peer)
    return Status::kInvalidArgument;
  RankSlot& slot = segment_->slot(local);
  const int pid = slot.pid.load(std::memory_order_acquire);
  if (pid == 0 || slot.rank.load(std::memory_order_relaxed) != peer)
    return Status::kInvalidArgument;
  if (by_local_[static_cast<size_t>(local)] != nullptr &&
      by_local_[static_cast<size_t>(local)]->rank != peer)
    return Status::kInvalidArgument;
  if (static_cast<size_t>(peer) >= peers_.size())
    peers_.resize(static_cast<size_t>(peer) + 1);
  auto& p = peers_[static_cast<size_t>(peer)];
  if (p != nullptr && p->connected) return Status::kInvalidArgument;
  if (p == nullptr) {
    p = std::make_unique<Peer>();
    p->rank = peer;
    p->local = local;
    p->pid = pid;
    p->pidfd = PidfdOpen(pid);
    if (wake_set_fd_ >= 0 && p->pidfd >= 0) {
      epoll_event ev{};
      ev.events = EPOLLIN;  // readable once the process has exited
      ev.data.u64 = static_cast<uint64_t>(peer) + 1;
      (void)epoll_ctl(wake_set_fd_, EPOLL_CTL_ADD, p->pidfd, &ev);
    }
    // What was already written or read by an earlier instance is ours now.
    p->head = segment_->control(local, options_.local)
                  .head.load(std::memory_order_acquire);
    p->published = p->head;
    p->head_cache = segment_->control(options_.local, local)
                        .head.load(std::memory_order_acquire);
    p->tail = p->head_cache;
  }
  p->in = segment_->ring(local, options_.local)->bytes;
  p->out = segment_->ring(options_.local, local)->bytes;
  p->published_head = &segment_->control(local, options_.local).head;
  p->connected = true;
  by_local_[static_cast<size_t>(local)] = p.get();
  watch_[static_cast<size_t>(local)].store(p.get(), std::memory_order_release);
  return Status::kOk;
}

ShmDriver::Peer* ShmDriver::PeerOf(int peer) noexcept {
  if (peer < 0 || static_cast<size_t>(peer) >= peers_.size()) return nullptr;
  Peer* p = peers_[static_cast<size_t>(peer)].get();
  return p != nullptr && p->connected ? p : nullptr;
}

// ---- sending ----

bool ShmDriver::HasRoom(Peer& p, uint32_t need) noexcept {
  if (p.tail - p.head_cache + need <= ring_bytes_) [[likely]]
    return true;
  p.head_cache = segment_->control(options_.local, p.local)
                     .head.load(std::memory_order_acquire);
  if (p.tail - p.head_cache + need <= ring_bytes_) return true;
  ++fifo_full_;
  return false;
}

Placement ShmDriver::PlaceFrame(Peer& p, uint32_t len) noexcept {
  // A receiver that keeps up reads each frame as it is published; walking
  // the whole ring (128 KiB by default) then writes lines neither core has
  // touched for a lap, where the first few KiB would still be in both
  // L1s. Past that hot part, at most once per hot_ring_bytes written (the
  // head is a line the receiver writes: a cross-core read), look whether
  // it has read everything, and if so start the next lap now. A receiver
  // that lags (a stream) keeps the whole ring.
  const uint32_t hot = options_.hot_ring_bytes;
  if (hot != 0 && static_cast<int32_t>(p.tail - p.wrap_check) >= 0) {
    p.wrap_check = p.tail + hot;
    if ((p.tail & (ring_bytes_ - 1)) >= hot) {
      p.head_cache = segment_->control(options_.local, p.local)
                         .head.load(std::memory_order_acquire);
      if (p.head_cache == p.tail) {
        const Placement wrapped = Place(ring_bytes_, p.tail, len, true);
        if (wrapped.need <= ring_bytes_) {
          p.wrap_check = wrapped.at + hot;
          return wrapped;
        }
      }
    }
  }
  return Place(ring_bytes_, p.tail, len);
}

Status ShmDriver::TryWrite(Peer& p, FrameType type, const iovec* iov,
                           int iovcnt, uint32_t len) noexcept {
  const Placement at = PlaceFrame(p, len);
  if (!HasRoom(p, at.need)) return Status::kNoResource;
  p.tail = WriteFrameAt(p.out, ring_bytes_, p.tail, at.at, type, iov, iovcnt,
                        len);
  RingDoorbell(p);
  return Status::kOk;
}

uint8_t* ShmDriver::ReservePacket(int peer, size_t len) noexcept {
  if (len > caps_.max_packet || closed_) return nullptr;
  Peer* p = PeerOf(peer);
  if (p == nullptr || p->failed) return nullptr;
  const Placement at = PlaceFrame(*p, static_cast<uint32_t>(len));
  if (!HasRoom(*p, at.need)) return nullptr;
  p->reserved_at = at.at;
  return FramePayload(p->out, ring_bytes_, at.at);
}

void ShmDriver::CommitPacket(int peer, size_t len) noexcept {
  Peer& p = *peers_[static_cast<size_t>(peer)];  // reserved: connected
  p.tail = PublishFrame(p.out, ring_bytes_, p.tail, p.reserved_at,
                        FrameType::kPacket, static_cast<uint32_t>(len));
  RingDoorbell(p);
}

void ShmDriver::RingDoorbell(Peer& p) noexcept {
  RankSlot& slot = segment_->slot(p.local);
  // Dekker with Arm(): our frame store, then their doorbell load; they
  // store the doorbell, then load our frame. A full fence on each side
  // makes at least one of them see the other; with the light half
  // (drivers/shm/fence.h) the sleeper's HeavyBarrier() stands for ours.
  if (light_fence_)
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
  if (slot.doorbell.load(std::memory_order_relaxed) == 0) return;
  if (slot.doorbell.exchange(0, std::memory_order_acq_rel) == 0) return;
  ++doorbells_;
  socklen_t len = 0;
  sockaddr_un a = DoorbellAddress(segment_->nonce(), p.local, &len);
  const char byte = 1;
  // A driver without a socket of its own (options.wakeup false) still
  // wakes its peers, through a socket made for the occasion.
  const int fd = wakeup_fd_ >= 0
                     ? wakeup_fd_
                     : socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  // A full socket buffer already wakes the receiver: EAGAIN is fine.
  (void)sendto(fd, &byte, 1, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&a),
               len);
  if (fd != wakeup_fd_) close(fd);
}

Status ShmDriver::PostPacket(int peer, const iovec* iov, int iovcnt,
                             Completion* done) noexcept {
  if (closed_) return Status::kCanceled;
  Peer* p = PeerOf(peer);
  if (p == nullptr || iovcnt < 0 || (iovcnt > 0 && iov == nullptr))
    return Status::kInvalidArgument;
  if (p->failed) return Status::kPeerFailed;
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  if (total > caps_.max_packet) return Status::kInvalidArgument;
  Status s = TryWrite(*p, FrameType::kPacket, iov, iovcnt,
                      static_cast<uint32_t>(total));
  if (s == Status::kNoResource && ++p->full_count % 256 == 0 && !Alive(*p))
    return Status::kPeerFailed;  // reported by the next Poll
  return s;  // kOk: copied, the buffers are free (`done` not called)
}

void ShmDriver::SendControl(Peer& p, FrameType type, const void* data,
                            uint32_t len) noexcept {
  if (p.controls.empty()) {
    iovec iov{const_cast<void*>(data), len};
    if (TryWrite(p, type, &iov, 1, len) == Status::kOk) return;
  }
  try {
    Control c{type, len, {}};
    std::memcpy(c.bytes, data, len);
    p.controls.push_back(c);
    deferred_.store(true, std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {
    Fail(p, Status::kNoResource, "shm: out of memory queueing a control");
  }
}

int ShmDriver::FlushControls(Peer& p) noexcept {
  int n = 0;
  while (!p.controls.empty()) {
    Control& c = p.controls.front();
    iovec iov{c.bytes, c.len};
    if (TryWrite(p, c.type, &iov, 1, c.len) != Status::kOk) break;
    p.controls.pop_front();
    ++n;
  }
  return n;
}

Status ShmDriver::PostRdvSend(int peer, uint64_t key, const void* buf,
                              size_t len, Completion* done) noexcept {
  if (closed_) return Status::kCanceled;
  Peer* p = PeerOf(peer);
  if (p == nullptr || key >= kMaxRdvKey || done == nullptr ||
      (buf == nullptr && len > 0))
    return Status::kInvalidArgument;
  if (p->failed) return Status::kPeerFailed;
  try {
    send_nodes_.Insert(sends_, Id(peer, key),
                       SendOp{static_cast<const uint8_t*>(buf), len, done});
  } catch (const std::bad_alloc&) {
    return Status::kNoResource;
  }
  RtsFrame rts{key, reinterpret_cast<uintptr_t>(buf), len};
  SendControl(*p, FrameType::kRts, &rts, kRtsBytes);
  return Status::kInProgress;
}

Status ShmDriver::PostRdvRecv(int peer, uint64_t key, void* buf, size_t len,
                              Completion* done) noexcept {
  if (closed_) return Status::kCanceled;
  Peer* p = PeerOf(peer);
  if (p == nullptr || key >= kMaxRdvKey || done == nullptr ||
      (buf == nullptr && len > 0))
    return Status::kInvalidArgument;
  if (p->failed) return Status::kPeerFailed;
  const uint64_t id = Id(peer, key);
  if (recvs_.contains(id)) return Status::kInvalidArgument;
  try {
    auto it = recv_nodes_.Insert(
        recvs_, id, RecvOp{static_cast<uint8_t*>(buf), len, done});
    if (auto u = unexpected_.lower_bound(id);
        u != unexpected_.end() && u->first == id) {
      Rts rts = u->second;
      rts_nodes_.Erase(unexpected_, u);
      StartRecv(*p, key, it->second, rts);
    }
  } catch (const std::bad_alloc&) {
    return Status::kNoResource;
  }
  return Status::kInProgress;
}

// ---- receiving ----

void ShmDriver::StartRecv(Peer& p, uint64_t key, RecvOp& op,
                          const Rts& rts) noexcept {
  const uint64_t id = Id(p.rank, key);
  const uint64_t n = std::min<uint64_t>(rts.len, op.len);
  const Status done_status =
      rts.len > op.len ? Status::kTruncated : Status::kOk;
  if (n > 0 && cma_ok_ && options_.cma) {
    uint64_t got = 0;
    while (got < n) {
      iovec local{op.buf + got, n - got};
      iovec remote{reinterpret_cast<void*>(rts.addr + got), n - got};
      ssize_t r = process_vm_readv(p.pid, &local, 1, &remote, 1, 0);
      if (r <= 0) break;
      got += static_cast<uint64_t>(r);
    }
    if (got == n) {
      ++cma_reads_;
      FinFrame fin{key, 0};
      uint8_t bytes[kFinBytes];
      std::memcpy(bytes, &fin.key, 8);
      bytes[8] = 0;
      SendControl(p, FrameType::kFin, bytes, kFinBytes);
      ready_.push_back({op.done, done_status, n});
      deferred_.store(true, std::memory_order_relaxed);
      EraseRecv(id);
      return;
    }
    if (errno == ESRCH) {
      Fail(p, Status::kPeerFailed,
           "shm: rank " + std::to_string(p.rank) + " (pid " +
               std::to_string(p.pid) + ") is gone");
      return;
    }
    // EPERM (ptrace scope), ENOSYS, ...: copy through the FIFO from now on.
    cma_ok_ = false;
  }
  if (n == 0) {
    uint8_t bytes[kFinBytes] = {};
    std::memcpy(bytes, &key, 8);
    SendControl(p, FrameType::kFin, bytes, kFinBytes);
    ready_.push_back({op.done, done_status, 0});
    deferred_.store(true, std::memory_order_relaxed);
    EraseRecv(id);
    return;
  }
  op.copying = true;
  op.total = rts.len;
  op.want = n;
  op.got = 0;
  ++copied_rdv_;
  CtsFrame cts{key, n};
  SendControl(p, FrameType::kCts, &cts, kCtsBytes);
}

void ShmDriver::EraseRecv(uint64_t id) noexcept {
  if (auto it = recvs_.find(id); it != recvs_.end())
    recv_nodes_.Erase(recvs_, it);
}

void ShmDriver::FinishSend(uint64_t id, Status status) noexcept {
  // The oldest send with this id that was announced (all are).
  auto it = sends_.find(id);
  if (it == sends_.end()) return;
  ready_.push_back({it->second.done, status, it->second.len});
  deferred_.store(true, std::memory_order_relaxed);
  send_nodes_.Erase(sends_, it);
}

int ShmDriver::Stream(Peer& p) noexcept {
  int n = 0;
  while (!p.streams.empty()) {
    auto it = sends_.find(p.streams.front());
    if (it == sends_.end() || !it->second.streaming) {
      p.streams.pop_front();
      continue;
    }
    SendOp& op = it->second;
    while (op.sent < op.want) {
      const uint64_t chunk =
          std::min<uint64_t>(options_.copy_chunk, op.want - op.sent);
      DataHeader h{it->first & (kMaxRdvKey - 1), op.sent};
      iovec iov[2] = {{&h, kDataHeaderBytes},
                      {const_cast<uint8_t*>(op.buf) + op.sent, chunk}};
      if (TryWrite(p, FrameType::kData, iov, 2,
                   static_cast<uint32_t>(kDataHeaderBytes + chunk)) !=
          Status::kOk)
        return n;
      op.sent += chunk;
      ++n;
    }
    p.streams.pop_front();
    ready_.push_back({op.done, Status::kOk, op.len});
    deferred_.store(true, std::memory_order_relaxed);
    send_nodes_.Erase(sends_, it);
  }
  return n;
}

void ShmDriver::Handle(Peer& p, FrameType type, const uint8_t* data,
                       uint32_t len) noexcept {
  switch (type) {
    case FrameType::kSkip:  // Drain steps over them
      return;
    case FrameType::kPacket:
      if (sink_ != nullptr) sink_->OnPacket(p.rank, rail_, data, len);
      return;
    case FrameType::kRts: {
      RtsFrame f;
      if (!DecodeRts(data, len, &f) || f.key >= kMaxRdvKey)
        return Corrupt(p, "RTS with a key at or above 2^48");
      const uint64_t id = Id(p.rank, f.key);
      if (auto it = recvs_.find(id);
          it != recvs_.end() && !it->second.copying) {
        StartRecv(p, f.key, it->second, {f.addr, f.len});
        return;
      }
      try {
        rts_nodes_.Insert(unexpected_, id, Rts{f.addr, f.len});
      } catch (const std::bad_alloc&) {
        Fail(p, Status::kNoResource, "shm: out of memory for an RTS");
      }
      return;
    }
    case FrameType::kCts: {
      CtsFrame f;
      if (!DecodeCts(data, len, &f) || f.key >= kMaxRdvKey)
        return Corrupt(p, "CTS with a key at or above 2^48");
      const uint64_t id = Id(p.rank, f.key);
      auto [lo, hi] = sends_.equal_range(id);
      for (auto it = lo; it != hi; ++it) {
        if (it->second.streaming) continue;
        if (f.want > it->second.len)
          return Corrupt(p, "CTS asks for " + std::to_string(f.want) +
                                " bytes of a " +
                                std::to_string(it->second.len) + "-byte send");
        it->second.streaming = true;
        it->second.want = f.want;
        try {
          p.streams.push_back(id);
          deferred_.store(true, std::memory_order_relaxed);
        } catch (const std::bad_alloc&) {
          Fail(p, Status::kNoResource, "shm: out of memory for a CTS");
        }
        return;
      }
      return Corrupt(p, "CTS for key " + std::to_string(f.key) +
                            " that has no send waiting");
    }
    case FrameType::kData: {
      DataHeader h;
      if (!DecodeData(data, len, &h) || h.key >= kMaxRdvKey)
        return Corrupt(p, "DATA with a key at or above 2^48");
      const uint64_t id = Id(p.rank, h.key);
      auto it = recvs_.find(id);
      const uint64_t n = len - kDataHeaderBytes;
      if (it == recvs_.end() || !it->second.copying ||
          h.offset != it->second.got || n > it->second.want - h.offset)
        return Corrupt(p, "DATA for key " + std::to_string(h.key) +
                              " at offset " + std::to_string(h.offset) +
                              " that no receive expects");
      RecvOp& op = it->second;
      std::memcpy(op.buf + op.got, data + kDataHeaderBytes, n);
      op.got += n;
      if (op.got == op.want) {
        ready_.push_back({op.done,
                          op.total > op.len ? Status::kTruncated : Status::kOk,
                          op.want});
        deferred_.store(true, std::memory_order_relaxed);
        recv_nodes_.Erase(recvs_, it);
      }
      return;
    }
    case FrameType::kFin: {
      FinFrame f;
      if (!DecodeFin(data, len, &f) || f.key >= kMaxRdvKey)
        return Corrupt(p, "FIN with a key at or above 2^48");
      const uint64_t id = Id(p.rank, f.key);
      if (!sends_.contains(id))
        return Corrupt(p, "FIN for key " + std::to_string(f.key) +
                              " that has no send");
      FinishSend(id, f.status == 0 ? Status::kOk : Status::kPeerFailed);
      return;
    }
  }
}

int ShmDriver::Drain(Peer& p, bool after_death) noexcept {
  const uint32_t max_len = max_frame_;
  int n = 0;
  while (n < kDrainBudget && (!p.failed || after_death) && !p.corrupt) {
    // Every frame is read in place: its bytes stay ours until the head is
    // published below, after its handler (which cannot poll this driver
    // again: the rail is held). Its header was read once; a packet's
    // reader validates the packet's bytes, as it does any packet's.
    Frame f;
    const Peek k = PeekFrame(p.in, ring_bytes_, p.head, max_len, &f);
    if (k == Peek::kEmpty) break;
    if (k == Peek::kCorrupt) [[unlikely]] {
      CorruptAtHead(p);
      break;
    }
    p.head += f.bytes;
    // The next header may start a line the producer wrote last (it zeroed
    // it): ask for it now, so that the look after this frame's handler
    // does not stall the handler's caller behind a cross-core fetch.
    __builtin_prefetch(p.in + (p.head & (ring_bytes_ - 1)));
    if (f.type == FrameType::kPacket) [[likely]] {
      if (sink_ != nullptr) sink_->OnPacket(p.rank, rail_, f.data, f.len);
    } else if (f.type == FrameType::kSkip) {
      continue;
    } else {
      Handle(p, f.type, f.data, f.len);
    }
    ++n;
  }
  if (p.head != p.published) {
    p.published_head->store(p.head, std::memory_order_release);
    p.published = p.head;
  }
  return n;
}

// ---- failures ----

void ShmDriver::CorruptAtHead(Peer& p) noexcept {
  Corrupt(p, Explain(p.in, ring_bytes_, p.head, max_frame_));
}

void ShmDriver::Corrupt(Peer& p, const std::string& why) noexcept {
  ++corrupt_frames_;
  p.corrupt = true;
  Fail(p, Status::kPeerFailed,
       "shm: corrupt frame from rank " + std::to_string(p.rank) +
           " refused: " + why);
}

bool ShmDriver::Alive(Peer& p) noexcept {
  if (p.failed) return false;
  bool dead;
  if (p.pidfd >= 0) {
    pollfd pfd{p.pidfd, POLLIN, 0};
    dead = poll(&pfd, 1, 0) > 0;  // readable: the process has exited
  } else {
    dead = kill(p.pid, 0) != 0 && errno == ESRCH;
  }
  if (!dead) return true;
  // What it wrote before dying is delivered first (Poll drains it).
  Fail(p, Status::kPeerFailed,
       "shm: rank " + std::to_string(p.rank) + " (pid " +
           std::to_string(p.pid) + ") on this node has exited");
  return false;
}

void ShmDriver::Fail(Peer& p, Status status, const std::string& what) noexcept {
  if (p.failed) return;
  p.failed = true;
  // A dead peer's pidfd stays readable: it must not keep waking sleepers.
  if (wake_set_fd_ >= 0 && p.pidfd >= 0)
    (void)epoll_ctl(wake_set_fd_, EPOLL_CTL_DEL, p.pidfd, nullptr);
  try {
    failures_.push_back({p.rank, status, what});
    deferred_.store(true, std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {
  }
}

int ShmDriver::DeliverReady() noexcept {
  int n = 0;
  // Failures first: their operations complete with kPeerFailed.
  while (!failures_.empty()) {
    PendingFailure f = std::move(failures_.back());
    failures_.pop_back();
    const uint64_t lo = Id(f.rank, 0), hi = Id(f.rank + 1, 0);
    for (auto it = sends_.lower_bound(lo); it != sends_.end() && it->first < hi;
         it = sends_.erase(it))
      ready_.push_back({it->second.done, Status::kPeerFailed, 0});
    for (auto it = recvs_.begin(); it != recvs_.end();) {
      if (it->first >= lo && it->first < hi) {
        ready_.push_back({it->second.done, Status::kPeerFailed, 0});
        it = recvs_.erase(it);
      } else {
        ++it;
      }
    }
    unexpected_.erase(unexpected_.lower_bound(lo), unexpected_.lower_bound(hi));
    if (Peer* p = PeerOf(f.rank)) {
      p->controls.clear();
      p->streams.clear();
    }
    if (sink_ != nullptr) sink_->OnPeerFailure(f.rank, rail_, f.status, f.what);
    ++n;
  }
  delivering_.swap(ready_);
  for (const Ready& r : delivering_) r.done->fn(r.done, r.status, r.bytes);
  n += static_cast<int>(delivering_.size());
  delivering_.clear();
  return n;
}

int ShmDriver::Poll() noexcept {
  if (closed_) return 0;
  // Awake: senders need not ring (a plain load first, the line stays
  // shared while nobody sleeps).
  if (wakeup_fd_ >= 0 && my_doorbell_->load(std::memory_order_relaxed) != 0)
    segment_->slot(options_.local).doorbell.store(0, std::memory_order_relaxed);
  int n = 0;
  if (!deferred_.load(std::memory_order_relaxed)) [[likely]] {
    // Nothing queued (every push to ready_, failures_, controls or
    // streams sets deferred_): only frames to read, and the handlers may
    // queue something (an RTS's receive, a failure), delivered at once.
    // The message path of a waiter: no other walk over the peers.
    for (Peer* p : by_local_)
      if (p != nullptr && !p->failed &&
          LoadHeader(p->in, ring_bytes_, p->head) != 0)
        n += Drain(*p);
    if (deferred_.load(std::memory_order_relaxed)) {
      n += DeliverReady();
      UpdateDeferred();
    }
    if (n > 0) {
      idle_polls_ = 0;
      return n;
    }
    return IdlePoll();
  }
  if (!HasFrames()) {
    // Nothing to read, write or deliver: deferred_ was stale.
    deferred_.store(false, std::memory_order_relaxed);
    return IdlePoll();
  }
  for (size_t j = 0; j < by_local_.size(); ++j) {
    Peer* p = by_local_[j];
    if (p == nullptr) continue;
    if (!p->failed) {
      n += FlushControls(*p);
      n += Stream(*p);
    }
    n += Drain(*p);
  }
  if (n == 0 && ++idle_polls_ >= options_.liveness_polls) n = CheckLiveness();
  if (n > 0) idle_polls_ = 0;
  n += DeliverReady();
  UpdateDeferred();
  return n;
}

int ShmDriver::IdlePoll() noexcept {
  // The liveness count (or the turn HasWork gave, counting the passes it
  // answered alone).
  if (liveness_due_.load(std::memory_order_relaxed)) {
    liveness_due_.store(false, std::memory_order_relaxed);
  } else if (++idle_polls_ < options_.liveness_polls) {
    return 0;
  }
  int n = CheckLiveness();
  n += DeliverReady();
  UpdateDeferred();
  return n;
}

void ShmDriver::UpdateDeferred() noexcept {
  bool more = !ready_.empty() || !failures_.empty();
  for (size_t j = 0; !more && j < by_local_.size(); ++j) {
    const Peer* p = by_local_[j];
    more = p != nullptr && !p->failed &&
           (!p->controls.empty() || !p->streams.empty());
  }
  deferred_.store(more, std::memory_order_relaxed);
}

bool ShmDriver::HasWork() const noexcept {
  if (deferred_.load(std::memory_order_relaxed) ||
      my_doorbell_->load(std::memory_order_relaxed) != 0)
    return true;
  for (size_t j = 0; j < nwatch_; ++j) {
    const Peer* p = watch_[j].load(std::memory_order_acquire);
    if (p == nullptr) continue;
    // The head this rank last published: behind `head` only while another
    // thread drains this ring (then "work" is only a wasted Poll).
    const uint32_t h = p->published_head->load(std::memory_order_relaxed);
    // Zero until a frame is published there (a corrupt word is work too:
    // Poll reports it).
    if (LoadHeader(p->in, ring_bytes_, h) != 0) return true;
  }
  // Idle. Every liveness_polls such answers, Poll gets a turn to check
  // that the peers live (plain load and store: a lost count between
  // threads only moves the turn).
  const int k = idle_checks_.load(std::memory_order_relaxed) + 1;
  if (k < options_.liveness_polls) {
    idle_checks_.store(k, std::memory_order_relaxed);
    return false;
  }
  idle_checks_.store(0, std::memory_order_relaxed);
  liveness_due_.store(true, std::memory_order_relaxed);
  return true;
}

bool ShmDriver::HasFrames() const noexcept {
  if (!ready_.empty() || !failures_.empty()) return true;
  // A failed peer (a corrupt one is failed too) is neither read nor
  // written any more (Poll), so it has no work to announce.
  for (const Peer* p : by_local_) {
    if (p == nullptr || p->failed) continue;
    if (LoadHeader(p->in, ring_bytes_, p->head) != 0 ||
        !p->controls.empty() || !p->streams.empty())
      return true;
  }
  return false;
}

int ShmDriver::CheckLiveness() noexcept {
  idle_polls_ = 0;
  int n = 0;
  for (Peer* p : by_local_)
    if (p != nullptr && !p->failed) (void)Alive(*p);
  // Frames a dead peer wrote before dying go before its failure.
  for (const PendingFailure& f : failures_)
    if (Peer* p = PeerOf(f.rank)) n += Drain(*p, /*after_death=*/true);
  return n;
}

bool ShmDriver::PeerTakesLightFence() const noexcept {
  // Every rank attached to the segment, connected or not yet (one that
  // connects while this rank sleeps may send at once).
  for (int i = 0; i < segment_->local_size(); ++i) {
    const RankSlot& s = segment_->slot(i);
    if (i != options_.local && s.pid.load(std::memory_order_acquire) != 0 &&
        s.light_fence.load(std::memory_order_relaxed) != 0)
      return true;
  }
  return false;
}

Status ShmDriver::Arm() noexcept {
  if (wakeup_fd_ < 0) return Status::kUnsupported;
  char buf[64];
  while (recv(wakeup_fd_, buf, sizeof buf, MSG_DONTWAIT) > 0) {
  }
  // A local peer that has exited (its pidfd is ready in the set): fail it
  // now rather than sleep.
  if (wake_set_fd_ >= 0) {
    epoll_event ev[8];
    const int n = epoll_wait(wake_set_fd_, ev, 8, 0);
    for (int i = 0; i < n; ++i)
      if (ev[i].data.u64 != 0)
        if (Peer* p = PeerOf(static_cast<int>(ev[i].data.u64 - 1)))
          (void)Alive(*p);
  }
  if (!ready_.empty() || !failures_.empty()) return Status::kBusy;
  RankSlot& slot = segment_->slot(options_.local);
  slot.doorbell.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // A sender that took the light half orders nothing itself: the heavy
  // barrier does it for every such sender (fence.h). If it fails, sleeping
  // could miss a frame: refuse.
  if (PeerTakesLightFence() && !HeavyBarrier()) {
    slot.doorbell.store(0, std::memory_order_relaxed);
    return Status::kBusy;
  }
  if (HasFrames()) {
    slot.doorbell.store(0, std::memory_order_relaxed);
    return Status::kBusy;
  }
  return Status::kOk;
}

void ShmDriver::Close(int timeout_ms) noexcept {
  if (closed_) return;
  closed_ = true;
  for (auto& [id, op] : sends_) ready_.push_back({op.done, Status::kCanceled, 0});
  for (auto& [id, op] : recvs_) ready_.push_back({op.done, Status::kCanceled, 0});
  sends_.clear();
  recvs_.clear();
  unexpected_.clear();
  failures_.clear();
  delivering_.swap(ready_);
  for (const Ready& r : delivering_) r.done->fn(r.done, r.status, r.bytes);
  delivering_.clear();
}

}  // namespace rondo::drivers::shm
