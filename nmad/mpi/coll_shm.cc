// Node-aware small collectives: see internal/coll_shm.h for the protocol.
#include "nmad/mpi/internal/coll_shm.h"

#include <fcntl.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "nmad/coll/algorithms.h"
#include "nmad/node.h"
#include "nmad/mpi/internal/requests.h"

namespace rondo::nmad::mpi {

namespace {
constexpr int kOff = 1;
constexpr int kReady = 2;
constexpr size_t kFlagStride = 128;  // one flag per adjacent-line pair

inline void CpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

// One communicator's segment and this rank's view of the epochs.
struct CollShm {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  int n = 0;
  int rank = 0;
  size_t slot_bytes = 0;  // RONDO_COLL_SHM_BYTES rounded up to 64
  uint64_t epoch = 0;     // the last epoch this rank started
  uint64_t seen_all = 0;  // every arrive[q] >= seen_all, observed
  // The root of the last call on this path when it was a bcast or
  // scatter, else -1: the rank that leads the next barrier (ShmBarrier).
  // The same on every rank (every rank makes the same calls on the path).
  int barrier_leader = -1;
  // Packed reductions of non-contiguous types accumulate here.
  std::vector<uint8_t> scratch;
  // The large allreduce's regions (ShmAllreduceLarge), mapped by its first
  // call: per rank two (epoch parity) of `big_chunk` bytes each.
  uint8_t* big = nullptr;
  size_t big_chunk = 0;
  bool big_failed = false;  // the mapping failed: the message path

  ~CollShm() {
    if (base != nullptr) munmap(base, bytes);
    if (big != nullptr) munmap(big, BigBytes(n, big_chunk));
  }
  std::atomic_ref<uint64_t> Arrive(int r) const noexcept {
    return std::atomic_ref<uint64_t>(
        *reinterpret_cast<uint64_t*>(base + kFlagStride * r));
  }
  // Rank r's doorbell, on the second line of its stride: 1 while r may
  // sleep on it (a futex word), set back to 0 by whoever wakes it.
  uint32_t* BellWord(int r) const noexcept {
    return reinterpret_cast<uint32_t*>(base + kFlagStride * r + 64);
  }
  std::atomic_ref<uint32_t> Doorbell(int r) const noexcept {
    return std::atomic_ref<uint32_t>(*BellWord(r));
  }
  // The last epoch whose barrier a leader released (n > 2, after a bcast
  // or scatter: ShmBarrier), after the flags.
  std::atomic_ref<uint64_t> Release() const noexcept {
    return std::atomic_ref<uint64_t>(
        *reinterpret_cast<uint64_t*>(base + kFlagStride * n));
  }
  uint8_t* Slot(int r, uint64_t e) const noexcept {
    return base + kFlagStride * (n + 1) +
           (2 * static_cast<size_t>(r) + (e & 1)) * slot_bytes;
  }
  static size_t Bytes(int n, size_t slot) {
    return kFlagStride * (n + 1) + 2 * static_cast<size_t>(n) * slot;
  }
  uint8_t* BigSlot(int r, uint64_t e) const noexcept {
    return big + (2 * static_cast<size_t>(r) + (e & 1)) * big_chunk;
  }
  static size_t BigBytes(int n, size_t chunk) {
    return 2 * static_cast<size_t>(n) * chunk;
  }
  // Stores `e` into `flag` and wakes the ranks asleep on their doorbells
  // (Dekker with Sleep: the flag, a fence, then the doorbells).
  void Publish(std::atomic_ref<uint64_t> flag, uint64_t e) const noexcept {
    flag.store(e, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int q = 0; q < n; ++q) {
      std::atomic_ref<uint32_t> bell = Doorbell(q);
      if (bell.load(std::memory_order_relaxed) != 0 &&
          bell.exchange(0, std::memory_order_relaxed) != 0)
        syscall(SYS_futex, BellWord(q), FUTEX_WAKE, 1, nullptr, nullptr, 0);
    }
  }
};

void* MapCommSegment(MPI_Comm comm, int rank, size_t total,
                     const char* prefix) {
  char name[64] = {};
  int fd = -1;
  int ok = 1;
  if (rank == 0) {
    // A random name (jobs in other pid namespaces share /dev/shm), another
    // on a collision.
    std::random_device random;
    for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
      std::snprintf(name, sizeof name, "/%.16s-%d-%08x%08x", prefix,
                    static_cast<int>(getpid()), random(), random());
      fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
      if (fd < 0 && errno != EEXIST) break;
    }
    ok = fd >= 0 && ftruncate(fd, static_cast<off_t>(total)) == 0;
    if (fd >= 0 && !ok) {
      shm_unlink(name);
      close(fd);
      fd = -1;
    }
  }
  // The name and whether it exists, in one broadcast.
  name[sizeof name - 1] = static_cast<char>(ok);
  if (PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm) != MPI_SUCCESS)
    ok = 0;
  else
    ok = name[sizeof name - 1];
  name[sizeof name - 1] = 0;
  if (ok && rank != 0) fd = shm_open(name, O_RDWR, 0600);
  void* seg = fd >= 0 ? mmap(nullptr, total, PROT_READ | PROT_WRITE,
                             MAP_SHARED, fd, 0)
                      : MAP_FAILED;
  if (fd >= 0) close(fd);
  int mapped = seg != MAP_FAILED, all_mapped = 0;
  if (PMPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_LAND, comm) !=
      MPI_SUCCESS)
    all_mapped = 0;
  if (rank == 0 && ok) shm_unlink(name);
  if (!all_mapped) {
    if (seg != MAP_FAILED) munmap(seg, total);
    return nullptr;
  }
  return seg;
}

namespace {

// The communicator's segment when `c` may take the shared-memory path (any
// size), else null. The first call on a communicator sets it up: a
// collective step every rank takes at the same call (the choice depends
// only on what every rank agrees on), with nested collectives that see
// kOff and take the existing path.
CollShm* Segment(State& st, Comm& comm, coll::Collective c) {
  int state = comm.coll_shm_state.load(std::memory_order_acquire);
  if (state == 0) {
    comm.coll_shm_state.store(kOff, std::memory_order_relaxed);
    if (comm.size < 2) return nullptr;  // the same on every rank
    // Agree: everybody wants it, one node (hash of nmad's NodeKey, as
    // MPI_COMM_TYPE_SHARED), the smallest size limit.
    uint32_t h = 2166136261u;
    for (char ch : NodeKey()) {
      h ^= static_cast<uint8_t>(ch);
      h *= 16777619u;
    }
    const int host = static_cast<int>(h & 0x7fffffff);
    const bool want = st.coll_shm && st.coll_shm_bytes > 0 &&
                      comm.size <= kCollShmMaxRanks;
    int v[4] = {want ? 1 : 0, host, -host,
                static_cast<int>(st.coll_shm_bytes)};
    if (PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MIN, comm.handle) !=
            MPI_SUCCESS ||
        v[0] == 0 || v[1] != -v[2] || v[3] <= 0)
      return nullptr;
    auto shm = std::make_shared<CollShm>();
    shm->n = comm.size;
    shm->rank = comm.rank;
    shm->slot_bytes = (static_cast<size_t>(v[3]) + 63) / 64 * 64;
    shm->bytes = CollShm::Bytes(comm.size, shm->slot_bytes);
    shm->base = static_cast<uint8_t*>(
        MapCommSegment(comm.handle, comm.rank, shm->bytes, "rondo-coll"));
    if (shm->base == nullptr) return nullptr;
    shm->scratch.resize(shm->slot_bytes);
    comm.coll_shm = std::move(shm);
    comm.coll_shm_state.store(kReady, std::memory_order_release);
    state = kReady;
  }
  if (state != kReady || st.forced[static_cast<int>(c)] != coll::Algorithm::kAuto)
    return nullptr;
  return comm.coll_shm.get();
}

// The segment when `bytes` fit a slot of `c`'s shared-memory path.
CollShm* Ready(State& st, Comm& comm, coll::Collective c, uint64_t bytes) {
  CollShm* shm = Segment(st, comm, c);
  return shm != nullptr && bytes <= shm->slot_bytes ? shm : nullptr;
}

// Waits until `ready` holds, progressing the engine; looks for failed
// ranks now and then. -1 once ready, else the failed comm rank.
//
// Backing off, as IdleBackoff does for the other MadMPI waits: after
// Core::idle_passes_before_yield() empty passes (every pass on an
// oversubscribed node) the waiter yields the core; on an oversubscribed
// node, once it found nothing for RONDO_WAIT_SPIN_US, it sleeps on its
// doorbell in the segment (a futex: every flag store wakes the sleepers)
// for at most 1 ms at a time, then progresses the engine again (traffic
// that the rails announce meanwhile waits for the end of the slice).
constexpr int64_t kSleepSliceNs = 1000000;

int64_t NowNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Sleeps on this rank's doorbell unless `ready` holds once armed.
template <typename F>
void Sleep(const CollShm& shm, F ready) {
  std::atomic_ref<uint32_t> bell = shm.Doorbell(shm.rank);
  bell.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!ready()) {
    timespec slice{0, kSleepSliceNs};
    syscall(SYS_futex, shm.BellWord(shm.rank), FUTEX_WAIT, 1, &slice,
            nullptr, 0);
  }
  bell.store(0, std::memory_order_relaxed);
}

template <typename F>
int Wait(State& st, const Comm& comm, const CollShm& shm, F ready) {
  // Spinning on the flag helps only when its writer has a core of its own.
  const uint32_t yield_after = st.core().idle_passes_before_yield();
  const bool may_sleep = st.core().sleep_when_idle();
  const int64_t spin_ns = st.engine().options().wait_spin_us * 1000;
  const int spins = yield_after > 1 ? 16 : 1;
  for (int i = 0; i < 4 * spins; ++i) {
    if (ready()) return -1;
    CpuRelax();
  }
  uint32_t passes = 0, idle = 0;
  int64_t idle_since = -1;
  for (;;) {
    const int worked = ProgressPass(st, false);
    for (int i = 0; i < spins; ++i) {
      if (ready()) return -1;
      CpuRelax();
    }
    if (worked > 0) {
      idle = 0;
      idle_since = -1;
    } else if (++idle >= yield_after) {
      idle = 0;
      if (may_sleep) {
        const int64_t now = NowNs();
        if (idle_since < 0) idle_since = now;
        if (now - idle_since >= spin_ns) {
          Sleep(shm, ready);
        } else {
          sched_yield();
        }
      } else {
        sched_yield();
      }
    }
    if ((++passes & 1023) == 0)
      for (int r = 0; r < comm.size; ++r)
        if (!st.core().FailureText(comm.world[r]).empty()) return r;
  }
}

// Until every arrive[q] >= e.
int WaitAll(State& st, const Comm& comm, CollShm& shm, uint64_t e) {
  if (shm.seen_all >= e) return -1;
  int q = 0;
  const int failed = Wait(st, comm, shm, [&] {
    for (; q < shm.n; ++q)
      if (shm.Arrive(q).load(std::memory_order_acquire) < e) return false;
    return true;
  });
  if (failed < 0) shm.seen_all = e;
  return failed;
}

// The error of a call that met the failed rank `failed`; the communicator
// leaves the shared-memory path (its flags no longer agree).
int Failed(State& st, Comm& comm, int failed, const char* fn) {
  comm.coll_shm_state.store(kOff, std::memory_order_release);
  return RaiseError(&comm, MPIX_ERR_PROC_FAILED, fn,
                    "rank " + std::to_string(failed) +
                        " of the communicator failed during the collective "
                        "(shared-memory path): " +
                        st.core().FailureText(comm.world[failed]));
}

// Starts epoch e as a writer of slot(rank, e): -1, or a failed rank.
int BeginWrite(State& st, const Comm& comm, CollShm& shm, uint64_t e) {
  return e >= 2 ? WaitAll(st, comm, shm, e - 1) : -1;
}

// Maps the large regions at the first call that needs them: a collective
// step at the same call on every rank (its nested collectives take the
// slots). False on every rank when the mapping failed, then and after.
bool MapLarge(const Comm& comm, CollShm& shm) {
  if (shm.big != nullptr) return true;
  if (shm.big_failed) return false;
  const size_t chunk = kCollShmLargeChunk;
  shm.big = static_cast<uint8_t*>(
      MapCommSegment(comm.handle, comm.rank, CollShm::BigBytes(shm.n, chunk),
                     "rondo-collbig"));
  shm.big_failed = shm.big == nullptr;
  if (shm.big != nullptr) shm.big_chunk = chunk;
  return shm.big != nullptr;
}

// Whether an allreduce of `bytes` (above a slot) of a contiguous `type`
// takes ShmAllreduceLarge: the same answer on every rank. On 2 ranks from
// 512 KiB the message path's recursive doubling (one rendezvous each way,
// received straight into the output) copies less (measured 1 MiB: 162 us
// against 337 us; 64 and 256 KiB: 33 / 99 us against 19 / 71 us, docs/mpi.md).
bool UseLargeAllreduce(const CollShm& shm, const Datatype& type,
                       uint64_t bytes) {
  return (shm.n > 2 || bytes < kCollShmLargeTwoRanks) && type.size() > 0 &&
         static_cast<uint64_t>(type.size()) <= kCollShmLargeChunk;
}

// The large allreduce (bytes above a slot, contiguous types): the vector
// runs in rounds of up to kCollShmLargeChunk bytes, each a reduce-scatter
// and an allgather through this rank's two regions of the large segment.
// Round of items [base, base + m), this rank's portion [lo, hi) of them:
//  - epoch e1: copy the round's input into BigSlot(me, e1), store, wait
//    for every rank; reduce portion [lo, hi) of every rank's region in rank
//    order (x[n-1], then x[r] op acc: non-commutative ops too) straight
//    into the output;
//  - epoch e2: copy the reduced portion into BigSlot(me, e2), store, wait
//    for every rank, copy the other ranks' portions out of their regions.
// Two flag hops per round wherever the message algorithms (reduce + bcast
// when oversubscribed) make every rank wait for 2 (n - 1) messages in
// sequence. Reuse as the slots': region (me, e) is written once every
// rank stored e - 1, and every rank reads epoch e's regions before it
// stores e + 1. False when the caller takes the message path (the
// mapping failed: the same answer on every rank).
bool ShmAllreduceLarge(State& st, Comm& comm, CollShm& shm,
                       const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype handle, const Datatype& type, const Op& op,
                       const char* fn, int* result) {
  if (!MapLarge(comm, shm)) return false;
  shm.barrier_leader = -1;
  const int n = shm.n, me = shm.rank;
  const int64_t size = type.size();
  const int64_t per_round = static_cast<int64_t>(shm.big_chunk) / size;
  // Portions of whole cache lines where items tile them.
  const int64_t align = size < 64 && 64 % size == 0 ? 64 / size : 1;
  const auto* in = static_cast<const uint8_t*>(
                       sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf) +
                   type.true_lb();
  auto* out = static_cast<uint8_t*>(recvbuf) + type.true_lb();
  int failed = -1;
  for (int64_t base = 0; base < count && failed < 0; base += per_round) {
    const int64_t m = std::min<int64_t>(per_round, count - base);
    const int64_t portion = ((m + n - 1) / n + align - 1) / align * align;
    auto lo_of = [&](int r) { return std::min<int64_t>(m, r * portion); };
    const int64_t lo = lo_of(me), hi = lo_of(me + 1);
    uint8_t* dst = out + (base + lo) * size;
    // Reduce-scatter.
    const uint64_t e1 = ++shm.epoch;
    failed = BeginWrite(st, comm, shm, e1);
    if (failed >= 0) break;
    std::memcpy(shm.BigSlot(me, e1), in + base * size,
                static_cast<size_t>(m * size));
    shm.Publish(shm.Arrive(me), e1);
    failed = WaitAll(st, comm, shm, e1);
    if (failed >= 0) break;
    if (hi > lo) {
      std::memcpy(dst, shm.BigSlot(n - 1, e1) + lo * size,
                  static_cast<size_t>((hi - lo) * size));
      for (int r = n - 2; r >= 0; --r)
        Apply(op, handle, type,
              shm.BigSlot(r, e1) + lo * size - type.true_lb(),
              dst - type.true_lb(), hi - lo);
    }
    // Allgather (region (me, e2) is free: every rank stored e1 above).
    const uint64_t e2 = ++shm.epoch;
    if (hi > lo)
      std::memcpy(shm.BigSlot(me, e2) + lo * size, dst,
                  static_cast<size_t>((hi - lo) * size));
    shm.Publish(shm.Arrive(me), e2);
    failed = WaitAll(st, comm, shm, e2);
    if (failed >= 0) break;
    for (int q = 0; q < n; ++q) {
      const int64_t qlo = lo_of(q), qhi = lo_of(q + 1);
      if (q != me && qhi > qlo)
        std::memcpy(out + (base + qlo) * size, shm.BigSlot(q, e2) + qlo * size,
                    static_cast<size_t>((qhi - qlo) * size));
    }
  }
  *result = failed < 0 ? MPI_SUCCESS : Failed(st, comm, failed, fn);
  return true;
}

}  // namespace

bool ShmBarrier(State& st, Comm& comm, const char* fn, int* result) {
  CollShm* shm = Ready(st, comm, coll::Collective::kBarrier, 0);
  if (shm == nullptr) return false;
  const uint64_t e = ++shm->epoch;
  const int leader = shm->n > 2 ? shm->barrier_leader : -1;
  shm->barrier_leader = -1;
  shm->Publish(shm->Arrive(shm->rank), e);
  int failed = -1;
  if (leader < 0 || shm->rank == leader) {
    // Every rank leaves once it sees every arrival: the last to arrive
    // leaves at once and each of the others at its next look, so that on
    // an oversubscribed node no rank waits for another to be scheduled
    // after the last arrival. After a bcast or scatter, its root gathers
    // the arrivals and releases the others (MPICH's release/gather), so
    // that it leaves first and a repeat of that call finds its leaves
    // still leaving (their wait is in the barrier, not in the next call).
    failed = WaitAll(st, comm, *shm, e);
    if (failed < 0 && leader >= 0) shm->Publish(shm->Release(), e);
  } else {
    std::atomic_ref<uint64_t> release = shm->Release();
    failed = Wait(st, comm, *shm, [&] {
      return release.load(std::memory_order_acquire) >= e;
    });
    // The leader released after it saw every arrival.
    if (failed < 0) shm->seen_all = e;
  }
  *result = failed < 0 ? MPI_SUCCESS : Failed(st, comm, failed, fn);
  return true;
}

bool ShmBcast(State& st, Comm& comm, void* buf, int count,
              const Datatype& type, int root, const char* fn, int* result) {
  const uint64_t bytes = static_cast<uint64_t>(count) * type.size();
  CollShm* shm = Ready(st, comm, coll::Collective::kBcast, bytes);
  if (shm == nullptr) return false;
  const uint64_t e = ++shm->epoch;
  shm->barrier_leader = root;
  const bool contiguous = type.is_contiguous();
  auto* data = static_cast<uint8_t*>(buf) + (contiguous ? type.true_lb() : 0);
  int failed = -1;
  if (comm.rank == root) {
    failed = BeginWrite(st, comm, *shm, e);
    if (failed < 0) {
      uint8_t* slot = shm->Slot(root, e);
      if (bytes == 0) {
      } else if (contiguous) {
        std::memcpy(slot, data, bytes);
      } else {
        type.Pack(buf, count, slot);
      }
      shm->Publish(shm->Arrive(root), e);
    }
  } else {
    std::atomic_ref<uint64_t> from = shm->Arrive(root);
    failed = Wait(st, comm, *shm, [&] {
      return from.load(std::memory_order_acquire) >= e;
    });
    if (failed < 0) {
      const uint8_t* slot = shm->Slot(root, e);
      if (bytes == 0) {
      } else if (contiguous) {
        std::memcpy(data, slot, bytes);
      } else {
        type.Unpack(slot, static_cast<int64_t>(bytes), buf, count);
      }
      shm->Publish(shm->Arrive(comm.rank), e);
    }
  }
  *result = failed < 0 ? MPI_SUCCESS : Failed(st, comm, failed, fn);
  return true;
}

bool ShmReduce(State& st, Comm& comm, const void* sendbuf, void* recvbuf,
               int count, MPI_Datatype handle, const Datatype& type,
               const Op& op, int root, const char* fn, int* result) {
  const bool all = root < 0;
  const bool contiguous = type.is_contiguous();
  // Non-contiguous types: predefined ops on packed basic elements, as the
  // message path does; the rest (user ops, pair types) takes that path.
  // The datatype and op are the same on every rank, so is the choice.
  const MPI_Datatype basic = type.uniform_basic();
  if (!contiguous &&
      (!op.predefined || basic == MPI_DATATYPE_NULL ||
       !Predefined(basic)->is_contiguous()))
    return false;
  const uint64_t bytes = static_cast<uint64_t>(count) * type.size();
  CollShm* shm = Segment(st, comm,
                         all ? coll::Collective::kAllreduce
                             : coll::Collective::kReduce);
  if (shm == nullptr) return false;
  if (bytes > shm->slot_bytes)
    return all && contiguous && UseLargeAllreduce(*shm, type, bytes) &&
           ShmAllreduceLarge(st, comm, *shm, sendbuf, recvbuf, count, handle,
                             type, op, fn, result);
  const uint64_t e = ++shm->epoch;
  shm->barrier_leader = -1;
  int failed = BeginWrite(st, comm, *shm, e);
  if (failed >= 0) {
    *result = Failed(st, comm, failed, fn);
    return true;
  }
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  uint8_t* mine = shm->Slot(comm.rank, e);
  if (bytes == 0) {
  } else if (contiguous) {
    std::memcpy(mine, static_cast<const uint8_t*>(input) + type.true_lb(),
                bytes);
  } else {
    type.Pack(input, count, mine);
  }
  shm->Publish(shm->Arrive(comm.rank), e);
  if (!all && comm.rank != root) {
    *result = MPI_SUCCESS;
    return true;
  }
  failed = WaitAll(st, comm, *shm, e);
  if (failed >= 0) {
    *result = Failed(st, comm, failed, fn);
    return true;
  }
  if (bytes != 0) {
    // In rank order: acc = x[n-1], then acc = x[r] op acc down to r = 0.
    const int n = shm->n;
    if (contiguous) {
      auto* out = static_cast<uint8_t*>(recvbuf);
      std::memcpy(out + type.true_lb(), shm->Slot(n - 1, e), bytes);
      for (int r = n - 2; r >= 0; --r)
        Apply(op, handle, type, shm->Slot(r, e) - type.true_lb(), out,
              count);
    } else {
      const Datatype& elem = *Predefined(basic);
      const int64_t elements = static_cast<int64_t>(bytes / elem.size());
      uint8_t* acc = shm->scratch.data();
      std::memcpy(acc, shm->Slot(n - 1, e), bytes);
      for (int r = n - 2; r >= 0; --r)
        Apply(op, basic, elem, shm->Slot(r, e), acc, elements);
      type.Unpack(acc, static_cast<int64_t>(bytes), recvbuf, count);
    }
  }
  *result = MPI_SUCCESS;
  return true;
}


namespace {

// Item `first` of a buffer of `t`'s items (MPI's layout: item i at
// buf + i * extent).
const uint8_t* Item(const Datatype& t, const void* buf, int64_t first) {
  return static_cast<const uint8_t*>(buf) + first * t.extent();
}

// Packs `count` items of `t` from item `first` of `buf` to `out`.
void CopyIn(const Datatype& t, const void* buf, int64_t first, int64_t count,
            uint8_t* out) {
  const int64_t bytes = count * t.size();
  if (bytes == 0) return;
  if (t.is_contiguous())
    std::memcpy(out, Item(t, buf, first) + t.true_lb(),
                static_cast<size_t>(bytes));
  else
    t.Pack(Item(t, buf, first), count, out);
}

// Unpacks `count` packed items of `t` from `in` to item `first` of `buf`.
void CopyOut(const Datatype& t, const uint8_t* in, void* buf, int64_t first,
             int64_t count) {
  const int64_t bytes = count * t.size();
  if (bytes == 0) return;
  auto* at = const_cast<uint8_t*>(Item(t, buf, first));
  if (t.is_contiguous())
    std::memcpy(at + t.true_lb(), in, static_cast<size_t>(bytes));
  else
    t.Unpack(in, bytes, at, count);
}

// A rank's own block from its send buffer straight to its place in its
// receive buffer (through a packed copy when either type is not
// contiguous; `tmp` holds one block).
void CopyOwn(const Datatype& stype, const void* sendbuf, int scount,
             const Datatype& rtype, void* recvbuf, int64_t rfirst,
             int rcount, uint8_t* tmp) {
  if (stype.is_contiguous()) {
    CopyOut(rtype, Item(stype, sendbuf, 0) + stype.true_lb(), recvbuf,
            rfirst, rcount);
  } else {
    CopyIn(stype, sendbuf, 0, scount, tmp);
    CopyOut(rtype, tmp, recvbuf, rfirst, rcount);
  }
}

// The end of a call on the shared-memory path: *result, and true.
bool Done(State& st, Comm& comm, int failed, const char* fn, int* result) {
  *result = failed < 0 ? MPI_SUCCESS : Failed(st, comm, failed, fn);
  return true;
}

}  // namespace

bool ShmGather(State& st, Comm& comm, const void* sendbuf, int scount,
               const Datatype* stype, void* recvbuf, int rcount,
               const Datatype* rtype, int root, const char* fn, int* result) {
  const bool all = root < 0;
  const bool receiver = all || comm.rank == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const uint64_t block =
      in_place ? static_cast<uint64_t>(rcount) * rtype->size()
               : static_cast<uint64_t>(scount) * stype->size();
  CollShm* shm = Ready(
      st, comm, all ? coll::Collective::kAllgather : coll::Collective::kGather,
      block);
  if (shm == nullptr) return false;
  const uint64_t e = ++shm->epoch;
  shm->barrier_leader = -1;
  const int me = comm.rank;
  int failed = -1;
  if (all || !receiver) {
    // A writer of slot(me, e): allgather ranks and gather leaves.
    failed = BeginWrite(st, comm, *shm, e);
    if (failed >= 0) return Done(st, comm, failed, fn, result);
    if (in_place)
      CopyIn(*rtype, recvbuf, static_cast<int64_t>(me) * rcount, rcount,
             shm->Slot(me, e));
    else
      CopyIn(*stype, sendbuf, 0, scount, shm->Slot(me, e));
  }
  // A gather root writes no slot: it has read epoch e - 1's already.
  shm->Publish(shm->Arrive(me), e);
  if (!receiver) return Done(st, comm, -1, fn, result);
  if (!in_place) {
    if (all)  // its block is in its slot already
      CopyOut(*rtype, shm->Slot(me, e), recvbuf,
              static_cast<int64_t>(me) * rcount, rcount);
    else
      CopyOwn(*stype, sendbuf, scount, *rtype, recvbuf,
              static_cast<int64_t>(me) * rcount, rcount,
              shm->scratch.data());
  }
  failed = WaitAll(st, comm, *shm, e);
  if (failed >= 0) return Done(st, comm, failed, fn, result);
  for (int q = 0; q < shm->n; ++q)
    if (q != me)
      CopyOut(*rtype, shm->Slot(q, e), recvbuf,
              static_cast<int64_t>(q) * rcount, rcount);
  return Done(st, comm, -1, fn, result);
}

// Blocks of `block` bytes that one slot holds, at most n (all of them at
// 0 bytes).
int BlocksPerSlot(const CollShm& shm, uint64_t block) {
  if (block == 0) return shm.n;
  return static_cast<int>(
      std::min<uint64_t>(static_cast<uint64_t>(shm.n), shm.slot_bytes / block));
}

bool ShmScatter(State& st, Comm& comm, const void* sendbuf, int scount,
                const Datatype* stype, void* recvbuf, int rcount,
                const Datatype* rtype, int root, const char* fn, int* result) {
  const int n = comm.size, me = comm.rank;
  const bool is_root = me == root;
  const uint64_t block =
      is_root ? static_cast<uint64_t>(scount) * stype->size()
              : static_cast<uint64_t>(rcount) * rtype->size();
  CollShm* shm = Ready(st, comm, coll::Collective::kScatter, block);
  if (shm == nullptr) return false;
  // One epoch per round of `per` receivers (one round up to the budget).
  const int per = BlocksPerSlot(*shm, block);
  shm->barrier_leader = root;
  int failed = -1;
  for (int first = 0; first < n && failed < 0; first += per) {
    const int last = std::min(n, first + per);
    const uint64_t e = ++shm->epoch;
    if (is_root) {
      failed = BeginWrite(st, comm, *shm, e);
      if (failed >= 0) break;
      // The round's blocks, the root's own too (one copy of the run).
      CopyIn(*stype, sendbuf, static_cast<int64_t>(first) * scount,
             static_cast<int64_t>(last - first) * scount, shm->Slot(root, e));
      shm->Publish(shm->Arrive(root), e);
      if (me >= first && me < last && recvbuf != MPI_IN_PLACE)
        CopyOut(*rtype,
                shm->Slot(root, e) + static_cast<size_t>(me - first) * block,
                recvbuf, 0, rcount);
    } else if (me >= first && me < last) {
      std::atomic_ref<uint64_t> from = shm->Arrive(root);
      failed = Wait(st, comm, *shm, [&] {
        return from.load(std::memory_order_acquire) >= e;
      });
      if (failed >= 0) break;
      CopyOut(*rtype,
              shm->Slot(root, e) + static_cast<size_t>(me - first) * block,
              recvbuf, 0, rcount);
      shm->Publish(shm->Arrive(me), e);
    } else {
      shm->Publish(shm->Arrive(me), e);  // nothing to read in this round
    }
  }
  return Done(st, comm, failed, fn, result);
}

bool ShmAlltoall(State& st, Comm& comm, const void* sendbuf, int scount,
                 const Datatype* stype, void* recvbuf, int rcount,
                 const Datatype& rtype, const char* fn, int* result) {
  const int n = comm.size, me = comm.rank;
  const uint64_t block = static_cast<uint64_t>(rcount) * rtype.size();
  CollShm* shm = Ready(st, comm, coll::Collective::kAlltoall, block);
  if (shm == nullptr) return false;
  // The n - 1 other ranks' blocks, in rounds of as many as a slot holds.
  const int per = std::min(BlocksPerSlot(*shm, block), n - 1);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  // In place, a later round's input would be overwritten by an earlier
  // round's output: one round only (MPI_IN_PLACE is given on every rank).
  if (in_place && per < n - 1) return false;
  shm->barrier_leader = -1;
  const Datatype& in_type = in_place ? rtype : *stype;
  const void* in = in_place ? recvbuf : sendbuf;
  const int in_count = in_place ? rcount : scount;
  // The own block straight to its place (in place, it is there).
  if (!in_place)
    CopyOwn(*stype, Item(*stype, sendbuf, static_cast<int64_t>(me) * scount),
            scount, rtype, recvbuf, static_cast<int64_t>(me) * rcount, rcount,
            shm->scratch.data());
  int failed = -1;
  // One epoch per round of shifts [first, last): every rank copies its
  // block for rank me + s into place s - first of its slot (in place,
  // before anything is written to the receive buffer), stores its flag,
  // waits for every flag and copies the block of rank me - s out of place
  // s - first of that rank's slot. Every rank writes and reads in every
  // round, and a slot of 16 KiB serves 2 ranks' 16 KiB blocks in one.
  for (int first = 1; first < n && failed < 0; first += per) {
    const int last = std::min(n, first + per);
    const uint64_t e = ++shm->epoch;
    failed = BeginWrite(st, comm, *shm, e);
    if (failed >= 0) break;
    uint8_t* mine = shm->Slot(me, e);
    for (int s = first; s < last; ++s)
      CopyIn(in_type, in, static_cast<int64_t>((me + s) % n) * in_count,
             in_count, mine + static_cast<size_t>(s - first) * block);
    shm->Publish(shm->Arrive(me), e);
    failed = WaitAll(st, comm, *shm, e);
    if (failed >= 0) break;
    for (int s = first; s < last; ++s) {
      const int q = (me - s + n) % n;
      CopyOut(rtype, shm->Slot(q, e) + static_cast<size_t>(s - first) * block,
              recvbuf, static_cast<int64_t>(q) * rcount, rcount);
    }
  }
  return Done(st, comm, failed, fn, result);
}

}  // namespace rondo::nmad::mpi
