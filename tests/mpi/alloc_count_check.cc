// alloc_count_check: counts heap allocations on the steady-state eager path
// of MadMPI (Rondo's fast-path rule: no allocation per message). Ranks 0 and
// 1 exchange 8-byte messages: MPI_Irecv, MPI_Isend, MPI_Wait (send), MPI_Wait
// (receive), 1,000 warm-up pairs, then 10,000 counted ones. Every allocation
// of every thread of the rank is seen through //tests:alloc_hook (malloc and
// friends replaced in a plain build, AddressSanitizer's allocator hooks
// under ASan: the same count in both). Expects 0. Under ThreadSanitizer
// nothing is counted and the program fails saying so.
//
// --bytes N: the messages are N bytes (8 by default); 65536 takes the
// rendezvous (on one node: the shared-memory driver's RTS, one
// process_vm_readv, FIN), whose tables and rendezvous plan allocated for
// every message before issue 28's rendezvous work.
//
// --rma: the same count over one-sided operations instead (issue 29): an
// 8-byte MPI_Put and an 8-byte MPI_Get, each followed by MPI_Win_flush, in
// a lock_all epoch (each rank is origin and, served by its engine, target).
//
// On failure it prints the allocations per message and every distinct call
// stack with its count, each classified by its innermost Rondo frame:
// MadMPI's own (rondo::nmad::mpi, MPI_*) or below it ("core": the nmad
// core, engine, drivers). Run with --stacks to print them on success too.
#include <execinfo.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/alloc_hook.h"

namespace {

constexpr int kWarmup = 1000;
constexpr int kCounted = 10000;
constexpr int kMaxStacks = 256;  // distinct call stacks kept
constexpr int kDepth = 24;

std::atomic<bool> g_counting{false};
std::atomic<long> g_count{0};
// Every counted allocation's call stack, folded into distinct stacks with
// their counts (a stack that does not fit is counted in g_unrecorded).
struct Stack {
  void* frames[kDepth];
  int depth;
  long count;
};
Stack g_stacks[kMaxStacks];
int g_nstacks = 0;
long g_unrecorded = 0;
std::atomic_flag g_stacks_lock = ATOMIC_FLAG_INIT;
thread_local bool t_in_hook = false;

void Note() {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  g_count.fetch_add(1, std::memory_order_relaxed);
  if (t_in_hook) return;
  t_in_hook = true;
  void* frames[kDepth];
  const int depth = backtrace(frames, kDepth);
  while (g_stacks_lock.test_and_set(std::memory_order_acquire)) {
  }
  int i = 0;
  for (; i < g_nstacks; ++i)
    if (g_stacks[i].depth == depth &&
        std::memcmp(g_stacks[i].frames, frames, sizeof(void*) * depth) == 0)
      break;
  if (i < g_nstacks) {
    ++g_stacks[i].count;
  } else if (g_nstacks < kMaxStacks) {
    std::memcpy(g_stacks[i].frames, frames, sizeof(void*) * depth);
    g_stacks[i].depth = depth;
    g_stacks[i].count = 1;
    ++g_nstacks;
  } else {
    ++g_unrecorded;
  }
  g_stacks_lock.clear(std::memory_order_release);
  t_in_hook = false;
}

}  // namespace

namespace {

// "MadMPI", "core" (nmad, engine, drivers below MadMPI) or "other", from
// the innermost frame whose symbol is Rondo's.
std::string Classify(char** symbols, int depth) {
  for (int f = 1; f < depth; ++f) {
    const char* s = symbols[f];
    if (std::strstr(s, "_ZN5rondo4nmad3mpi") != nullptr ||
        std::strstr(s, "(MPI_") != nullptr)
      return "MadMPI";
    if (std::strstr(s, "_ZN5rondo4nmad9RmaWindow") != nullptr ||
        std::strstr(s, "_ZN5rondo4nmad5RmaOp") != nullptr)
      return "nmad/rma";
    if (std::strstr(s, "_ZN5rondo") != nullptr) return "core";
  }
  return "other";
}

// Prints every distinct stack (innermost 12 frames) with its count, and the
// counts per class (MadMPI, nmad/rma, the core below them); returns the
// count of MadMPI's own and nmad/rma's.
long PrintStacks(int rank, bool print) {
  std::map<std::string, long> per_class;
  for (int i = 0; i < g_nstacks; ++i) {
    const Stack& st = g_stacks[i];
    char** symbols = backtrace_symbols(st.frames, st.depth);
    const std::string cls = Classify(symbols, st.depth);
    per_class[cls] += st.count;
    if (print) {
      std::printf("rank %d: %ld allocations (%.2f per pair) from %s at:\n",
                  rank, st.count, static_cast<double>(st.count) / kCounted,
                  cls.c_str());
      for (int f = 1; f < st.depth && f <= 12; ++f)
        std::printf("    %s\n", symbols[f]);
    }
    std::free(symbols);
  }
  for (const auto& [cls, count] : per_class)
    std::printf("rank %d: %ld allocations (%.2f per pair) from %s\n", rank,
                count, static_cast<double>(count) / kCounted, cls.c_str());
  if (g_unrecorded > 0)
    std::printf("rank %d: %ld allocations with their stacks not kept\n", rank,
                g_unrecorded);
  return per_class["MadMPI"] + per_class["nmad/rma"];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool stacks = false, rma = false;
  long bytes = 8;
  for (int a = 1; a < argc; ++a) {
    stacks = stacks || std::strcmp(argv[a], "--stacks") == 0;
    rma = rma || std::strcmp(argv[a], "--rma") == 0;
    if (std::strcmp(argv[a], "--bytes") == 0 && a + 1 < argc)
      bytes = std::strtol(argv[++a], nullptr, 10);
  }
  if (bytes < 8 || bytes > (1 << 24)) {
    if (rank == 0)
      std::printf("alloc_count_check: --bytes takes 8 to 16777216, not %ld\n",
                  bytes);
    MPI_Finalize();
    return 1;
  }
  if (size != 2) {
    if (rank == 0) std::printf("alloc_count_check: needs exactly 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  if (rondo_alloc_hook_set(&Note) == 0) {
    if (rank == 0)
      std::printf("FAIL alloc_count_check: allocations are not seen in this "
                  "build (ThreadSanitizer); run it plain or under ASan\n");
    MPI_Finalize();
    return 1;
  }
  {
    void* warm[4];
    (void)backtrace(warm, 4);  // loads libgcc's unwinder before counting
  }
  const int peer = 1 - rank;
  uint64_t out = 0, in = 0;
  long bad_payload = 0, bad_rc = 0;
  // The messages: `bytes` long, the pair's number in their first and last
  // 8 bytes (allocated before counting).
  std::vector<unsigned char> sbuf(static_cast<size_t>(bytes)),
      rbuf(static_cast<size_t>(bytes));
  auto exchange = [&](int i) {
    MPI_Request rr, sr;
    out = (static_cast<uint64_t>(rank) << 32) | static_cast<uint32_t>(i);
    std::memcpy(sbuf.data(), &out, 8);
    std::memcpy(sbuf.data() + bytes - 8, &out, 8);
    bad_rc += MPI_Irecv(rbuf.data(), static_cast<int>(bytes), MPI_BYTE, peer,
                        3, MPI_COMM_WORLD, &rr) != 0;
    bad_rc += MPI_Isend(sbuf.data(), static_cast<int>(bytes), MPI_BYTE, peer,
                        3, MPI_COMM_WORLD, &sr) != 0;
    bad_rc += MPI_Wait(&sr, MPI_STATUS_IGNORE) != 0;
    bad_rc += MPI_Wait(&rr, MPI_STATUS_IGNORE) != 0;
    const uint64_t want =
        (static_cast<uint64_t>(peer) << 32) | static_cast<uint32_t>(i);
    uint64_t first, last;
    std::memcpy(&first, rbuf.data(), 8);
    std::memcpy(&last, rbuf.data() + bytes - 8, 8);
    bad_payload += first != want || last != want;
  };
  // --rma: one-sided operations in a lock_all epoch, each pair an 8-byte
  // MPI_Put and an 8-byte MPI_Get to the peer, each completed by
  // MPI_Win_flush (the peer's engine serves them; its counter counts that).
  uint64_t* wmem = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  auto one_sided = [&](int i) {
    out = (static_cast<uint64_t>(rank) << 32) | static_cast<uint32_t>(i);
    bad_rc += MPI_Put(&out, 1, MPI_UINT64_T, peer, rank, 1, MPI_UINT64_T,
                      win) != 0;
    bad_rc += MPI_Win_flush(peer, win) != 0;
    in = 0;
    bad_rc += MPI_Get(&in, 1, MPI_UINT64_T, peer, rank, 1, MPI_UINT64_T,
                      win) != 0;
    bad_rc += MPI_Win_flush(peer, win) != 0;
    bad_payload += in != out;
  };
  if (rma) {
    MPI_Win_allocate(2 * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &wmem, &win);
    MPI_Win_lock_all(0, win);
  }
  auto step = [&](int i) { rma ? one_sided(i) : exchange(i); };
  for (int i = 0; i < kWarmup; ++i) step(i);
  MPI_Barrier(MPI_COMM_WORLD);
  g_count.store(0);
  g_counting.store(true);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < kCounted; ++i) step(kWarmup + i);
  const double t1 = MPI_Wtime();
  g_counting.store(false);
  if (rma) {
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }
  const long count = g_count.load();
  MPI_Barrier(MPI_COMM_WORLD);
  long mine[3] = {count, bad_payload, bad_rc}, all[3] = {0, 0, 0};
  MPI_Allreduce(mine, all, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int r = 0; r < 2; ++r) {
    if (r == rank) {
      // The time is information only (counting costs a backtrace per
      // allocation): bench/ measures.
      std::printf("rank %d: %ld allocations over %d message pairs "
                  "(%.2f per pair; %.0f ns per pair with the counting)\n",
                  rank, count, kCounted, static_cast<double>(count) / kCounted,
                  (t1 - t0) * 1e9 / kCounted);
      if (count != 0 || stacks) (void)PrintStacks(rank, true);
      std::fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  const bool ok = all[0] == 0 && all[1] == 0 && all[2] == 0;
  if (rank == 0) {
    if (ok) {
      std::printf("alloc_count_check: ok (0 allocations in %d pairs x 2 "
                  "ranks)\n", kCounted);
    } else {
      std::printf("FAIL alloc_count_check: %ld allocations, %ld wrong "
                  "payloads, %ld failed calls (all expected 0)\n",
                  all[0], all[1], all[2]);
      std::printf("alloc_count_check: FAILED\n");
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
