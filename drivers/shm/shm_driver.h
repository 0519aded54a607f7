// ShmDriver: the Driver for the ranks of one node, over a shared segment
// (drivers/shm/segment.h) of single-producer single-consumer FIFOs of
// 8-byte-aligned frames (drivers/shm/cell.h). Open MPI's vader fast boxes,
// MPICH's posix eager queues and NewMadeleine's shm driver are the models.
//
// Mapping of the Driver contract:
//   * packets: one frame in the FIFO (this rank -> peer), its payload
//     contiguous: an 8-byte MPI message takes half a cache line. Copied in
//     by the sender (or written in place: ReservePacket), handed to
//     OnPacket in place by the receiver, whose frame header is read once
//     and checked (its payload is the packet reader's to validate), and
//     given back to the producer after the call. A full FIFO is
//     kNoResource ("retry later"), never a wait. Packets from one peer are
//     delivered in order.
//   * rendezvous: PostRdvSend writes an RTS frame {key, address, length};
//     the receiver, once PostRdvRecv matched it by (peer, key), copies the
//     data with one process_vm_readv (CMA) and answers FIN, which completes
//     the send. When CMA is refused (EPERM under a strict ptrace scope, a
//     kernel without it, or options.cma = false) the receiver answers CTS
//     instead and the sender streams DATA frames through the FIFO (chunked
//     copy), the last of which completes the receive. A control frame that
//     finds the FIFO full waits in a per-peer queue flushed by Poll().
//   * waking a sleeper: every rank's slot in the segment has a doorbell
//     word and the rank owns a datagram socket (abstract name derived from
//     the segment's nonce and the local index; no permissions needed, and
//     an eventfd could not be shared between unrelated processes without
//     passing it over a socket anyway). Arm() sets the doorbell, then looks
//     at its FIFOs once more (kBusy if anything is there); a sender reads
//     the receiver's doorbell after publishing a frame (the Dekker
//     handshake: a full fence between the two, or with membarrier(2) a
//     compiler barrier on the sender and the heavy barrier in Arm(),
//     drivers/shm/fence.h) and, when it was set, clears it and sends one
//     byte to the socket, which is WakeupFd().
//   * peer failure: each peer's pid is held as a pidfd (robust to pid
//     reuse); it is checked after options.liveness_polls empty polls and
//     whenever a FIFO to the peer is full. A dead peer's remaining frames
//     are delivered, then OnPeerFailure(kPeerFailed) names its rank, and
//     its rendezvous operations complete with kPeerFailed. A corrupt frame
//     (cell.h) is reported the same way (the FIFO cannot be trusted
//     after it) and counted in corrupt_frames().
//
// Thread-safety: none (the Driver contract). Two instances on one segment
// (distinct local indices) may be used from two threads.
// Ownership: the driver shares the segment; packet buffers are copied at
// PostPacket; rendezvous send buffers are borrowed until their completion
// (the receiver reads them with CMA), receive buffers likewise.
#ifndef RONDO_DRIVERS_SHM_SHM_DRIVER_H_
#define RONDO_DRIVERS_SHM_SHM_DRIVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "drivers/driver.h"
#include "drivers/shm/cell.h"
#include "drivers/shm/node_cache.h"
#include "drivers/shm/segment.h"

namespace rondo::drivers::shm {

struct ShmDriverOptions {
  int self = -1;      // this process's job rank (0 <= self < 65536)
  int local = -1;     // its local index in the segment
  int rail_id = 0;    // only reported
  size_t max_packet = 64 * 1024;  // 1 .. kMaxPacket (1 MiB)
  bool cma = true;    // try process_vm_readv for rendezvous data
  size_t copy_chunk = 16 * 1024;  // DATA frame payload on the copy path
  bool wakeup = true;             // WakeupFd()/Arm() usable
  // The sender's half of the doorbell handshake without a fence when the
  // kernel lets the sleeper take the whole cost (drivers/shm/fence.h);
  // false: a full fence on every send (tests of both halves).
  bool asymmetric_fence = true;
  // The part of a ring a sender keeps to while its receiver keeps up:
  // past this offset in a lap, at most once per this many bytes, it asks
  // whether the receiver has read everything and, if so, starts the next
  // lap at once (a skip frame) instead of walking the whole ring, so the
  // lines it writes are still in both cores' L1 (docs/shm.md, "The hot
  // part of the ring"). 0: walk the whole ring.
  uint32_t hot_ring_bytes = 8 * 1024;
  // Empty polls between two liveness checks of the peers.
  int liveness_polls = 4096;
  // Pid recorded in the slot (tests attach a stand-in process); 0: getpid().
  int pid = 0;
};

class ShmDriver final : public Driver {
 public:
  // Attaches local index options.local of `segment`. kInvalidArgument with
  // *error naming the bad field, or the socket's error.
  static Result<std::unique_ptr<ShmDriver>> Create(
      std::shared_ptr<ShmSegment> segment, const ShmDriverOptions& options,
      std::string* error);
  ~ShmDriver() override;

  ShmDriver(const ShmDriver&) = delete;
  ShmDriver& operator=(const ShmDriver&) = delete;

  const DriverCaps& caps() const noexcept override { return caps_; }
  void SetSink(PacketSink* sink, int rail) override;
  // {segment nonce, local index, rank} (20 bytes).
  Result<std::vector<uint8_t>> LocalAddress() override;
  // kInvalidArgument for a bad peer id, an address of another segment (the
  // peer is on another node), or a local index whose slot names another
  // rank.
  Status Connect(int peer, std::span<const uint8_t> address) override;
  void Close(int timeout_ms) noexcept override;

  Status PostPacket(int peer, const iovec* iov, int iovcnt,
                    Completion* done) noexcept override;
  // Any packet up to max_packet, written in place in the FIFO (a frame's
  // payload is contiguous: drivers/shm/cell.h).
  uint8_t* ReservePacket(int peer, size_t len) noexcept override;
  void CommitPacket(int peer, size_t len) noexcept override;
  // max_packet: a packet is refused only while the FIFO is full.
  size_t ImmediateMax(int peer) const noexcept override {
    (void)peer;
    return caps_.max_packet;
  }
  Status PostRdvSend(int peer, uint64_t key, const void* buf, size_t len,
                     Completion* done) noexcept override;
  Status PostRdvRecv(int peer, uint64_t key, void* buf, size_t len,
                     Completion* done) noexcept override;
  int Poll() noexcept override;
  // False when a Poll would certainly do nothing now: no frame at any
  // peer's ring head, nothing deferred by the last driver call, no
  // doorbell to clear, and not yet the liveness check's turn (a waiter
  // that skips idle Polls must still find a dead peer). Any thread, without
  // the rail: it reads atomics only (docs/shm.md, "The idle pass").
  bool HasWork() const noexcept override;
  // An epoll set of the doorbell socket and every local peer's pidfd: a
  // peer that exits wakes a sleeper as a doorbell does (its requests then
  // fail with kPeerFailed). The socket alone where epoll is unavailable.
  int WakeupFd() const noexcept override {
    return wake_set_fd_ >= 0 ? wake_set_fd_ : wakeup_fd_;
  }
  Status Arm() noexcept override;

  // Statistics for tests and rondo-info.
  uint64_t corrupt_frames() const noexcept { return corrupt_frames_; }
  uint64_t cma_reads() const noexcept { return cma_reads_; }
  uint64_t copied_rendezvous() const noexcept { return copied_rdv_; }
  uint64_t fifo_full() const noexcept { return fifo_full_; }
  uint64_t doorbells() const noexcept { return doorbells_; }
  // This rank's sends take the light half of the doorbell handshake
  // (drivers/shm/fence.h; options.asymmetric_fence and the kernel).
  bool light_fence() const noexcept { return light_fence_; }

 private:
  struct SendOp {
    const uint8_t* buf;
    size_t len;
    Completion* done;
    bool streaming = false;
    uint64_t want = 0, sent = 0;
  };
  struct RecvOp {
    uint8_t* buf;
    size_t len;
    Completion* done;
    bool copying = false;  // waiting for DATA frames
    uint64_t total = 0, want = 0, got = 0;
  };
  struct Rts {
    uint64_t addr, len;
  };
  struct Ready {
    Completion* done;
    Status status;
    size_t bytes;
  };
  struct Control {
    FrameType type;
    uint32_t len;
    uint8_t bytes[kRtsBytes];
  };
  struct Peer {
    int rank = -1;
    int local = -1;
    bool connected = false;
    bool failed = false;   // reported or about to be: no more traffic
    bool corrupt = false;  // its FIFO is not read any more
    int pid = 0;
    int pidfd = -1;
    // Absolute byte positions in the rings (drivers/shm/cell.h).
    uint32_t tail = 0;         // producer: bytes written (this -> peer)
    uint32_t head_cache = 0;   // producer: last head seen
    uint32_t reserved_at = 0;  // producer: the frame ReservePacket placed
    // producer: the tail from which the next early-wrap check may run
    uint32_t wrap_check = 0;
    uint32_t head = 0;         // consumer: bytes read (peer -> this)
    uint32_t published = 0;    // consumer: last head stored
    const uint8_t* in = nullptr;  // consumer: the ring peer -> this
    // consumer: where `published` is stored (Drain writes it, HasWork and
    // the producer read it)
    std::atomic<uint32_t>* published_head = nullptr;
    uint8_t* out = nullptr;    // producer: the ring this -> peer
    int full_count = 0;
    std::deque<Control> controls;  // waiting for FIFO space
    std::deque<uint64_t> streams;  // sends in the copy path, in CTS order
  };

  ShmDriver(std::shared_ptr<ShmSegment> segment,
            const ShmDriverOptions& options);
  Status Init(std::string* error);
  // Maps the pages of the rings to and from every other local rank.
  void PrefaultRings() noexcept;
  Peer* PeerOf(int peer) noexcept;
  // Writes one frame to `p` if the FIFO has room (kOk) else kNoResource.
  Status TryWrite(Peer& p, FrameType type, const iovec* iov, int iovcnt,
                  uint32_t len) noexcept;
  // Whether `need` more bytes fit in the FIFO to `p` (reloads the
  // consumer's head when the cached one says no).
  bool HasRoom(Peer& p, uint32_t need) noexcept;
  // Where a frame of `len` bytes to `p` goes: the tail, or the next lap's
  // start when the receiver has read everything and the tail is past the
  // hot part of the ring (options_.hot_ring_bytes).
  Placement PlaceFrame(Peer& p, uint32_t len) noexcept;
  void RingDoorbell(Peer& p) noexcept;
  void SendControl(Peer& p, FrameType type, const void* data,
                   uint32_t len) noexcept;
  int FlushControls(Peer& p) noexcept;
  int Stream(Peer& p) noexcept;
  // Reads up to a budget of frames from `p` (a peer found dead is read
  // once more, `after_death`, before its failure is reported).
  int Drain(Peer& p, bool after_death = false) noexcept;
  // Whether a Poll has anything to do: a frame at some peer's ring head,
  // controls or streams waiting for room, completions or failures to
  // deliver. One load per peer's ring; writes nothing.
  bool HasFrames() const noexcept;
  // The check every `liveness_polls` empty polls: peers found dead are
  // failed after the frames they wrote are read. Returns frames read.
  int CheckLiveness() noexcept;
  // Out of Drain's frame (the control frames and the refusals build
  // strings; inline, they gave every delivery a stack guard).
  [[gnu::noinline]] void Handle(Peer& p, FrameType type, const uint8_t* data,
                                uint32_t len) noexcept;
  [[gnu::noinline]] void CorruptAtHead(Peer& p) noexcept;
  void StartRecv(Peer& p, uint64_t key, RecvOp& op, const Rts& rts) noexcept;
  void EraseRecv(uint64_t id) noexcept;
  void Corrupt(Peer& p, const std::string& why) noexcept;
  bool Alive(Peer& p) noexcept;
  void Fail(Peer& p, Status status, const std::string& what) noexcept;
  void FinishSend(uint64_t id, Status status) noexcept;
  int DeliverReady() noexcept;
  static uint64_t Id(int peer, uint64_t key) noexcept {
    return (static_cast<uint64_t>(peer) << 48) | key;
  }

  std::shared_ptr<ShmSegment> segment_;
  ShmDriverOptions options_;
  DriverCaps caps_;
  uint32_t ring_bytes_ = 0;  // each ring's size (a power of two)
  uint32_t max_frame_ = 0;   // the longest frame payload a peer may send
  PacketSink* sink_ = nullptr;
  int rail_ = 0;
  bool closed_ = false;
  bool cma_ok_ = true;
  bool light_fence_ = false;
  int wakeup_fd_ = -1;
  int wake_set_fd_ = -1;  // epoll: wakeup_fd_ + the live peers' pidfds
  int idle_polls_ = 0;
  // For HasWork, which runs without the rail: the connected peers by
  // local index (published once by Connect), work left in ready_,
  // failures_, controls or streams (set after each push, recomputed by
  // Poll), this rank's doorbell word, and the idle passes since Poll last
  // checked liveness (liveness_due_: HasWork gave Poll that turn).
  std::unique_ptr<std::atomic<const Peer*>[]> watch_;
  size_t nwatch_ = 0;
  std::atomic<bool> deferred_{false};
  const std::atomic<uint32_t>* my_doorbell_ = nullptr;
  mutable std::atomic<int> idle_checks_{0};
  mutable std::atomic<bool> liveness_due_{false};
  // Whether another rank of the segment sends with the light half of the
  // doorbell handshake (Arm must then call HeavyBarrier).
  bool PeerTakesLightFence() const noexcept;
  // Recomputes deferred_ (rail held).
  void UpdateDeferred() noexcept;
  // The end of a poll that found nothing to do: every liveness_polls such
  // polls (or at HasWork's turn), checks the peers and delivers what that
  // found.
  int IdlePoll() noexcept;
  std::vector<std::unique_ptr<Peer>> peers_;  // by job rank
  std::vector<Peer*> by_local_;               // by local index
  std::multimap<uint64_t, SendOp> sends_;        // by Id(peer, key)
  std::unordered_map<uint64_t, RecvOp> recvs_;   // by Id(peer, key)
  std::multimap<uint64_t, Rts> unexpected_;      // RTS before the receive
  // Their erased nodes, for the next rendezvous: no allocation per large
  // message once the tables reached their peak.
  NodeCache<decltype(sends_)> send_nodes_;
  NodeCache<decltype(recvs_)> recv_nodes_;
  NodeCache<decltype(unexpected_)> rts_nodes_;
  std::vector<Ready> ready_, delivering_;
  struct PendingFailure {
    int rank;
    Status status;
    std::string what;
  };
  std::vector<PendingFailure> failures_;

  uint64_t corrupt_frames_ = 0, cma_reads_ = 0, copied_rdv_ = 0,
           fifo_full_ = 0, doorbells_ = 0;
};

// The ring (in 64-byte cells) that takes a frame of `max_packet` bytes
// plus a data frame's header whenever it is empty, wherever its head is
// (2 * FrameBytes bytes), and at least kDefaultRingCells cells.
uint32_t RingCellsFor(size_t max_packet);

// The abstract socket name of local index `local` of segment `nonce`.
std::string DoorbellName(uint64_t nonce, int local);

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_SHM_DRIVER_H_
