#include "drivers/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace rondo::drivers::shm {
namespace {

size_t FifoBytes(uint32_t ring_cells) {
  return sizeof(FifoControl) + size_t{ring_cells} * kCellBytes;
}

bool NameOk(const std::string& name) {
  if (name.empty() || name.size() > 200 || name == "." || name == "..")
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

std::string ShapeError(int local_size, uint32_t ring_cells) {
  if (local_size < 1 || local_size > kMaxLocalRanks)
    return "invalid local_size " + std::to_string(local_size) +
           ". Expected: 1.." + std::to_string(kMaxLocalRanks);
  if (ring_cells < kMinRingCells || ring_cells > kMaxRingCells ||
      (ring_cells & (ring_cells - 1)) != 0)
    return "invalid ring_cells " + std::to_string(ring_cells) +
           ". Expected: a power of two in " + std::to_string(kMinRingCells) +
           ".." + std::to_string(kMaxRingCells);
  return "";
}

Status Fail(std::string* error, Status s, std::string what) {
  if (error) *error = std::move(what);
  return s;
}

std::string Errno(const char* call) {
  return std::string(call) + ": " + std::strerror(errno);
}

}  // namespace

size_t SegmentBytes(int local_size, uint32_t ring_cells) {
  const size_t n = static_cast<size_t>(local_size);
  return sizeof(SegmentHeader) + n * sizeof(RankSlot) +
         n * n * FifoBytes(ring_cells);
}

size_t ShmSegment::FifoOffset(int from, int to) const noexcept {
  const size_t n = static_cast<size_t>(local_size_);
  return sizeof(SegmentHeader) + n * sizeof(RankSlot) +
         (static_cast<size_t>(from) * n + static_cast<size_t>(to)) *
             FifoBytes(ring_cells_);
}

RankSlot& ShmSegment::slot(int local) const noexcept {
  return reinterpret_cast<RankSlot*>(static_cast<char*>(base_) +
                                     sizeof(SegmentHeader))[local];
}

FifoControl& ShmSegment::control(int from, int to) const noexcept {
  return *reinterpret_cast<FifoControl*>(static_cast<char*>(base_) +
                                         FifoOffset(from, to));
}

Cell* ShmSegment::ring(int from, int to) const noexcept {
  return reinterpret_cast<Cell*>(static_cast<char*>(base_) +
                                 FifoOffset(from, to) + sizeof(FifoControl));
}

Result<std::shared_ptr<ShmSegment>> ShmSegment::Map(
    int fd, std::string name, bool create, int local_size,
    uint32_t ring_cells, std::string* error) {
  size_t bytes = 0;
  if (create) {
    bytes = SegmentBytes(local_size, ring_cells);
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      std::string why = Errno("ftruncate");
      close(fd);
      return Fail(error, Status::kNoResource,
                  "shm: cannot size the segment to " + std::to_string(bytes) +
                      " bytes: " + why);
    }
  } else {
    struct stat st;
    if (fstat(fd, &st) != 0 ||
        static_cast<size_t>(st.st_size) < sizeof(SegmentHeader)) {
      close(fd);
      return Fail(error, Status::kInvalidArgument,
                  "shm: segment '" + name + "' is too small to be one");
    }
    bytes = static_cast<size_t>(st.st_size);
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  std::string why = base == MAP_FAILED ? Errno("mmap") : "";
  close(fd);  // the mapping keeps the pages
  if (base == MAP_FAILED)
    return Fail(error, Status::kNoResource, "shm: " + why);
  std::shared_ptr<ShmSegment> seg(new ShmSegment);
  seg->name_ = std::move(name);
  seg->base_ = base;
  seg->bytes_ = bytes;
  auto* h = static_cast<SegmentHeader*>(base);
  if (create) {
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
      nonce = static_cast<uint64_t>(getpid()) << 32 ^
              reinterpret_cast<uintptr_t>(base);
    h->version = kSegmentVersion;
    h->local_size = static_cast<uint32_t>(local_size);
    h->ring_cells = ring_cells;
    h->nonce = nonce;
    h->total_bytes = bytes;
    std::atomic_ref<uint64_t>(h->magic).store(kSegmentMagic,
                                              std::memory_order_release);
  } else {
    const uint64_t magic =
        std::atomic_ref<uint64_t>(h->magic).load(std::memory_order_acquire);
    std::string bad;
    if (magic != kSegmentMagic)
      bad = "not a Rondo shm segment (bad magic)";
    else if (h->version != kSegmentVersion)
      bad = "version " + std::to_string(h->version) + ", expected " +
            std::to_string(kSegmentVersion);
    else if (std::string s = ShapeError(static_cast<int>(h->local_size),
                                        h->ring_cells);
             !s.empty())
      bad = s;
    else if (h->total_bytes != bytes ||
             SegmentBytes(static_cast<int>(h->local_size), h->ring_cells) !=
                 bytes)
      bad = "size " + std::to_string(bytes) + " does not match its header";
    if (!bad.empty())
      return Fail(error, Status::kInvalidArgument,
                  "shm: segment '" + seg->name_ + "' refused: " + bad);
  }
  seg->local_size_ = static_cast<int>(h->local_size);
  seg->ring_cells_ = h->ring_cells;
  return seg;
}

Result<std::shared_ptr<ShmSegment>> ShmSegment::Create(
    const std::string& name, int local_size, uint32_t ring_cells,
    std::string* error) {
  if (!NameOk(name))
    return Fail(error, Status::kInvalidArgument,
                "shm: invalid segment name '" + name +
                    "'. Expected: 1-200 characters [A-Za-z0-9_.-]");
  if (std::string s = ShapeError(local_size, ring_cells); !s.empty())
    return Fail(error, Status::kInvalidArgument, "shm: " + s);
  const std::string path = "/dev/shm/" + name;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      return Fail(error, Status::kBusy,
                  "shm: " + path +
                      " exists (another job's segment, or a stale one from "
                      "a crashed job: remove it if no job uses it)");
    return Fail(error, Status::kInternal, "shm: " + Errno("open") + " " + path);
  }
  auto seg = Map(fd, name, true, local_size, ring_cells, error);
  if (!seg.ok()) unlink(path.c_str());
  return seg;
}

Result<std::shared_ptr<ShmSegment>> ShmSegment::Open(const std::string& name,
                                                     std::string* error) {
  if (!NameOk(name))
    return Fail(error, Status::kInvalidArgument,
                "shm: invalid segment name '" + name + "'");
  const std::string path = "/dev/shm/" + name;
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return Fail(error, Status::kInvalidArgument,
                "shm: " + Errno("open") + " " + path);
  auto seg = Map(fd, name, false, 0, 0, error);
  if (seg.ok()) seg.value()->unlinked_ = true;  // the creator unlinks
  return seg;
}

Result<std::shared_ptr<ShmSegment>> ShmSegment::CreateAnonymous(
    int local_size, uint32_t ring_cells, std::string* error) {
  if (std::string s = ShapeError(local_size, ring_cells); !s.empty())
    return Fail(error, Status::kInvalidArgument, "shm: " + s);
  int fd = memfd_create("rondo-shm", MFD_CLOEXEC);
  if (fd < 0)
    return Fail(error, Status::kInternal, "shm: " + Errno("memfd_create"));
  auto seg = Map(fd, "", true, local_size, ring_cells, error);
  if (seg.ok()) seg.value()->unlinked_ = true;
  return seg;
}

Status ShmSegment::Unlink() {
  if (unlinked_) return Status::kOk;
  unlinked_ = true;
  const std::string path = "/dev/shm/" + name_;
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return Status::kInternal;
  return Status::kOk;
}

ShmSegment::~ShmSegment() {
  (void)Unlink();
  if (base_ != nullptr) munmap(base_, bytes_);
}

}  // namespace rondo::drivers::shm
