// ShmSegment: the shared-memory segment of one node's ranks.
//
// One mapping holds, for `local_size` ranks with local indices
// 0..local_size-1: a header (magic, version, sizes, a random 64-bit nonce
// naming the segment), one slot per rank (its pid, its job rank and its
// doorbell word, each slot on its own cache line) and one FIFO per ordered
// pair (from, to), from != to: the consumer's head index on its own line,
// then `ring_cells` cells (drivers/shm/cell.h).
//
// Lifetime: Create() makes the file under /dev/shm with O_EXCL (a name that
// exists is refused: two jobs never share a segment, and a stale one from a
// crashed job is named in the error), Open() maps an existing one and
// checks its header, Unlink() removes the name once every rank has mapped
// it, so nothing is left behind even after kill -9 (the pages live as long
// as a mapping does). CreateAnonymous() uses a memfd (no name at all): for
// one process and its forked children, as in tests.
//
// Thread-safety: the object is immutable after creation; the shared memory
// it maps is used by the FIFO protocol (one producer, one consumer per
// ring) and by atomics.
#ifndef RONDO_DRIVERS_SHM_SEGMENT_H_
#define RONDO_DRIVERS_SHM_SEGMENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "drivers/driver.h"
#include "drivers/shm/cell.h"

namespace rondo::drivers::shm {

inline constexpr uint64_t kSegmentMagic = 0x52444f4e444f5348ull;  // "HSODNODR"
// 2: rings of 8-byte-aligned frames (drivers/shm/cell.h), not of cells.
inline constexpr uint32_t kSegmentVersion = 2;
inline constexpr int kMaxLocalRanks = 1024;
inline constexpr uint32_t kMinRingCells = 64;
inline constexpr uint32_t kMaxRingCells = uint32_t{1} << 20;
// Default: 2048 cells (128 KiB) per ordered pair, enough for two 64 KiB
// packets in flight.
inline constexpr uint32_t kDefaultRingCells = 2048;

struct alignas(kCellBytes) SegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t local_size;
  uint32_t ring_cells;
  uint32_t reserved;
  uint64_t nonce;
  uint64_t total_bytes;
};

struct alignas(kCellBytes) RankSlot {
  std::atomic<int32_t> pid;   // 0 until the rank attached
  std::atomic<int32_t> rank;  // the job rank
  // 1 while the rank may sleep on its wake-up fd (ShmDriver::Arm).
  std::atomic<uint32_t> doorbell;
  // 1 when the rank's sends order their frame and this doorbell's load
  // for the compiler only: a sleeper must call HeavyBarrier()
  // (drivers/shm/fence.h). Written before `pid`.
  std::atomic<uint32_t> light_fence;
};

struct alignas(kCellBytes) FifoControl {
  std::atomic<uint32_t> head;  // bytes consumed (written by the consumer)
};

// The bytes a segment of this shape takes.
size_t SegmentBytes(int local_size, uint32_t ring_cells);

class ShmSegment {
 public:
  // `name`: 1-200 characters [A-Za-z0-9_.-], the file /dev/shm/NAME.
  // kInvalidArgument for a bad name, size or ring (power of two in
  // [kMinRingCells, kMaxRingCells]); kBusy when the name exists (a live or
  // stale segment: refused, the error names the file); else kInternal with
  // the failing call and errno text. *error explains.
  static Result<std::shared_ptr<ShmSegment>> Create(
      const std::string& name, int local_size, uint32_t ring_cells,
      std::string* error);
  static Result<std::shared_ptr<ShmSegment>> Open(const std::string& name,
                                                  std::string* error);
  static Result<std::shared_ptr<ShmSegment>> CreateAnonymous(
      int local_size, uint32_t ring_cells, std::string* error);
  ~ShmSegment();

  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Removes the file (idempotent; nothing for an anonymous segment).
  Status Unlink();

  const std::string& name() const noexcept { return name_; }
  int local_size() const noexcept { return local_size_; }
  uint32_t ring_cells() const noexcept { return ring_cells_; }
  uint64_t nonce() const noexcept { return header()->nonce; }

  SegmentHeader* header() const noexcept {
    return static_cast<SegmentHeader*>(base_);
  }
  RankSlot& slot(int local) const noexcept;
  FifoControl& control(int from, int to) const noexcept;
  Cell* ring(int from, int to) const noexcept;

 private:
  ShmSegment() = default;
  static Result<std::shared_ptr<ShmSegment>> Map(int fd, std::string name,
                                                 bool create, int local_size,
                                                 uint32_t ring_cells,
                                                 std::string* error);
  size_t FifoOffset(int from, int to) const noexcept;

  std::string name_;  // "" for an anonymous segment
  bool unlinked_ = false;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  int local_size_ = 0;
  uint32_t ring_cells_ = 0;
};

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_SEGMENT_H_
