// nmad RMA: see rma.h. The wire format of one message: a Header (the
// active message's header), then in the body the target blocks
// (RmaBlock[nblocks]), `extra` bytes (compare-and-swap's compare value),
// and the packed data. Answers (kAck) carry the op's token back, the
// stream offset of the piece, an error and, for reads, the data.
#include "nmad/rma.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

namespace rondo::nmad {
namespace internal {

enum Kind : uint32_t {
  kPut = 1,
  kGet,
  kAcc,
  kGetAcc,
  kCas,
  kLock,
  kUnlock,
  kSignal,
  kAck,
};

struct Header {
  uint32_t kind = 0;
  uint32_t a = 0;  // op / lock exclusive / signal kind
  uint32_t b = 0;  // basic type
  uint32_t error = 0;
  uint64_t token = 0;   // the origin's RmaOp
  uint64_t stream = 0;  // the piece's offset in the packed stream
  uint32_t nblocks = 0;
  uint32_t extra = 0;
};

struct RmaPiece {
  Request req;
  Header hdr;
  std::vector<uint8_t> body;
  bool used = false;
};

}  // namespace internal

namespace {
using internal::Header;
using internal::RmaPiece;

constexpr uint32_t kRmaHandler = 1;

void Dropped(AmMessage&, void*) noexcept {}

// One piece of an operation: its blocks (`count` of the flat list from
// `first`), where its data starts in the packed stream, and its bytes.
struct PieceSpan {
  size_t first = 0;
  size_t count = 0;
  uint64_t stream = 0;
  size_t bytes = 0;
};

// Splits the blocks into pieces of at most `budget` bytes of body (16 per
// block plus the data when `with_data`; data only in the answer when not),
// never splitting an element of `unit` bytes. Fills `flat` (the pieces'
// blocks back to back) and `out`, reusing their capacity.
void Split(std::span<const RmaBlock> blocks, size_t unit, size_t budget,
           bool with_data, std::vector<RmaBlock>& flat,
           std::vector<PieceSpan>& out) {
  flat.clear();
  out.clear();
  PieceSpan cur;
  size_t used = 0;
  uint64_t stream = 0;
  auto close = [&] {
    if (cur.count > 0) out.push_back(cur);
    cur = PieceSpan{};
    cur.first = flat.size();
    cur.stream = stream;
    used = 0;
  };
  for (const RmaBlock& b : blocks) {
    int64_t off = 0;
    while (off < b.bytes) {
      // Room for one more block header and at least one element?
      const size_t data_room_of = [&] {
        size_t left = budget - used;
        if (left < sizeof(RmaBlock) + unit) return size_t{0};
        left -= sizeof(RmaBlock);
        // A get's data comes back in the answer: bounded by the budget too.
        if (!with_data) left = std::min(left, budget - cur.bytes);
        return left - left % unit;
      }();
      if (data_room_of < unit) {
        close();
        continue;
      }
      const size_t take =
          std::min<size_t>(static_cast<size_t>(b.bytes - off), data_room_of);
      flat.push_back({b.offset + off, static_cast<int64_t>(take)});
      ++cur.count;
      cur.bytes += take;
      used += sizeof(RmaBlock) + (with_data ? take : 0);
      off += static_cast<int64_t>(take);
      stream += take;
    }
  }
  close();
}

// The calling thread's split of the operation it is issuing (an issue does
// not nest: handlers never issue operations).
struct SplitScratch {
  std::vector<RmaBlock> flat;
  std::vector<PieceSpan> pieces;
  std::span<const RmaBlock> Blocks(const PieceSpan& p) const {
    return std::span<const RmaBlock>(flat.data() + p.first, p.count);
  }
};
SplitScratch& Scratch() {
  thread_local SplitScratch scratch;
  return scratch;
}

}  // namespace

RmaOp::RmaOp() {
  direct_.fn = &RmaOp::OnDirectDone;
  direct_.op = this;
}

void RmaOp::OnDirectDone(drivers::Completion* c, Status status,
                         size_t) noexcept {
  RmaOp* op = static_cast<DirectDone*>(c)->op;
  if (status != Status::kOk) {
    uint32_t expect = 0;
    op->error_.compare_exchange_strong(
        expect, static_cast<uint32_t>(status == Status::kPeerFailed
                                          ? RmaError::kPeerFailed
                                          : RmaError::kTransport));
  }
  op->pending_.fetch_sub(1, std::memory_order_acq_rel);
}

void RmaOp::Posted(Status s) noexcept {
  if (s == Status::kInProgress) return;  // OnDirectDone will count it
  OnDirectDone(&direct_, s, 0);
}
RmaOp::~RmaOp() = default;

bool RmaOp::done() const noexcept {
  if (pending_.load(std::memory_order_acquire) != 0) return false;
  for (size_t i = 0; i < used_; ++i)
    if (!pieces_[i]->req.done()) return false;
  return true;
}

void RmaOp::Reset(int target, int messages) noexcept {
  used_ = 0;
  target_ = target;
  error_.store(0, std::memory_order_relaxed);
  pending_.store(messages, std::memory_order_release);
  result_ = nullptr;
}

RmaWindow::RmaWindow(Session& session, Options options)
    : session_(session), options_(options) {
  const size_t eager = session.core().options().eager_limit;
  // The header and the AM chunk's own header must fit beside the body.
  piece_bytes_ = eager > sizeof(Header) + 256 ? eager - sizeof(Header) - 128
                                              : 128;
  nranks_ = session.size();
  keys_.resize(static_cast<size_t>(nranks_));
  issued_ =
      std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(nranks_));
  flushed_ =
      std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(nranks_));
  for (int i = 0; i < nranks_; ++i) {
    issued_[i].store(0);
    flushed_[i].store(0);
  }
  signals_ = std::make_unique<std::atomic<uint64_t>[]>(
      static_cast<size_t>(kSignalKinds) * nranks_);
  for (int i = 0; i < kSignalKinds * nranks_; ++i) signals_[i].store(0);
  (void)session_.RegisterHandler(kRmaHandler, &RmaWindow::OnMessage, this);
  // Others may address this memory at any time: background work for quiet
  // progress while the window serves (it wakes on the transport's events).
  session_.core().engine().BeginBackground();
}

RmaWindow::~RmaWindow() {
  Close();
  (void)session_.RegisterHandler(kRmaHandler, &Dropped, nullptr);
  if (remote_ != nullptr) {
    // The keys of failed targets stay: operations abandoned to them may
    // still be in the transport, which reads their key until it ends them.
    for (int t = 0; t < nranks_; ++t)
      if (keys_[t].key != nullptr && !session_.core().PeerFailed(t))
        remote_->ReleaseKey(keys_[t].key);
    if (region_ != nullptr) remote_->Unmap(region_);
  }
  // Answers still being sent keep their buffers until done.
  for (;;) {
    bool all = true;
    {
      std::lock_guard<std::mutex> lock(reply_mu_);
      for (const auto& r : replies_)
        if (r->used && !r->req.done()) all = false;
    }
    if (all) break;
    session_.core().Progress();
  }
}

void RmaWindow::Expose(void* base, size_t size) noexcept {
  std::unique_lock<std::shared_mutex> lock(mem_mu_);
  base_ = static_cast<uint8_t*>(base);
  size_ = size;
}

Status RmaWindow::Attach(void* base, size_t size) noexcept {
  auto* p = static_cast<uint8_t*>(base);
  std::unique_lock<std::shared_mutex> lock(mem_mu_);
  for (const auto& [b, n] : regions_)
    if (p < b + n && b < p + size) return Status::kInvalidArgument;
  regions_.emplace_back(p, size);
  return Status::kOk;
}

Status RmaWindow::Detach(void* base) noexcept {
  std::unique_lock<std::shared_mutex> lock(mem_mu_);
  for (auto it = regions_.begin(); it != regions_.end(); ++it)
    if (it->first == base) {
      regions_.erase(it);
      return Status::kOk;
    }
  return Status::kInvalidArgument;
}

void RmaWindow::Close() noexcept {
  if (open_.exchange(false)) session_.core().engine().EndBackground();
}

uint64_t RmaWindow::Signals(int kind, int source) const noexcept {
  return signals_[static_cast<size_t>(kind) * nranks_ + source].load(
      std::memory_order_acquire);
}

int RmaWindow::LocksHeld() const noexcept {
  std::lock_guard<std::mutex> lock(lock_mu_);
  return shared_holders_ + (exclusive_holder_ >= 0 ? 1 : 0);
}

bool RmaWindow::Resolve(std::span<const RmaBlock> blocks,
                        std::vector<uint8_t*>* at) const noexcept {
  at->clear();
  for (const RmaBlock& b : blocks) {
    if (b.bytes < 0) return false;
    if (!options_.dynamic) {
      if (b.offset < 0 || static_cast<uint64_t>(b.offset) > size_ ||
          static_cast<uint64_t>(b.bytes) > size_ - b.offset)
        return false;
      at->push_back(base_ + b.offset);
      continue;
    }
    auto* p = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(b.offset));
    bool found = false;
    for (const auto& [base, n] : regions_)
      if (p >= base && p + b.bytes <= base + n) found = true;
    if (!found) return false;
    at->push_back(p);
  }
  return true;
}

Status RmaWindow::Send(int target, uint32_t kind, uint32_t a, uint32_t b,
                       uint64_t stream, std::span<const RmaBlock> blocks,
                       const void* data, size_t data_len, size_t extra_len,
                       const void* extra, RmaOp& op) noexcept {
  // The op's records of earlier operations are reused (the op is done).
  if (op.used_ == op.pieces_.size())
    op.pieces_.push_back(std::make_unique<RmaPiece>());
  RmaPiece* raw = op.pieces_[op.used_++].get();
  raw->hdr = Header{};
  raw->hdr.kind = kind;
  raw->hdr.a = a;
  raw->hdr.b = b;
  raw->hdr.token = reinterpret_cast<uintptr_t>(&op);
  raw->hdr.stream = stream;
  raw->hdr.nblocks = static_cast<uint32_t>(blocks.size());
  raw->hdr.extra = static_cast<uint32_t>(extra_len);
  const size_t blocks_len = blocks.size() * sizeof(RmaBlock);
  raw->body.resize(blocks_len + extra_len + data_len);
  if (blocks_len) std::memcpy(raw->body.data(), blocks.data(), blocks_len);
  if (extra_len) std::memcpy(raw->body.data() + blocks_len, extra, extra_len);
  if (data_len)
    std::memcpy(raw->body.data() + blocks_len + extra_len, data, data_len);
  Status s = session_.SendAm(target, kRmaHandler, &raw->hdr, sizeof raw->hdr,
                             raw->body.empty() ? nullptr : raw->body.data(),
                             raw->body.size(), raw->req);
  if (s != Status::kOk) {
    --op.used_;
    uint32_t expect = 0;
    op.error_.compare_exchange_strong(
        expect, static_cast<uint32_t>(RmaError::kPeerFailed));
    op.pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
  return s;
}

Status RmaWindow::Put(int target, std::span<const RmaBlock> blocks,
                      const void* packed, RmaOp& op) noexcept {
  SplitScratch& split = Scratch();
  Split(blocks, 1, piece_bytes_, true, split.flat, split.pieces);
  op.Reset(target, static_cast<int>(split.pieces.size()));
  const auto* data = static_cast<const uint8_t*>(packed);
  Status first = Status::kOk;
  for (const auto& p : split.pieces) {
    Status s = Send(target, internal::kPut, 0, 0, p.stream, split.Blocks(p),
                    data + p.stream, p.bytes, 0, nullptr, op);
    if (first == Status::kOk) first = s;
  }
  return first;
}

Status RmaWindow::Get(int target, std::span<const RmaBlock> blocks, void* out,
                      RmaOp& op) noexcept {
  SplitScratch& split = Scratch();
  Split(blocks, 1, piece_bytes_, false, split.flat, split.pieces);
  op.Reset(target, static_cast<int>(split.pieces.size()));
  op.result_ = static_cast<uint8_t*>(out);
  Status first = Status::kOk;
  for (const auto& p : split.pieces) {
    Status s = Send(target, internal::kGet, 0, 0, p.stream, split.Blocks(p),
                    nullptr, 0, 0, nullptr, op);
    if (first == Status::kOk) first = s;
  }
  return first;
}

Status RmaWindow::Accumulate(int target, std::span<const RmaBlock> blocks,
                             const void* packed, uint32_t mpi_op,
                             uint32_t basic, size_t element_bytes, void* fetch,
                             RmaOp& op) noexcept {
  if (element_bytes == 0) element_bytes = 1;
  // A get-accumulate's answer carries the old data: the same budget.
  SplitScratch& split = Scratch();
  Split(blocks, element_bytes, piece_bytes_, true, split.flat, split.pieces);
  op.Reset(target, static_cast<int>(split.pieces.size()));
  op.result_ = static_cast<uint8_t*>(fetch);
  const auto* data = static_cast<const uint8_t*>(packed);
  const uint32_t kind = fetch ? internal::kGetAcc : internal::kAcc;
  Status first = Status::kOk;
  for (const auto& p : split.pieces) {
    Status s = Send(target, kind, mpi_op, basic, p.stream, split.Blocks(p),
                    data ? data + p.stream : nullptr, data ? p.bytes : 0, 0,
                    nullptr, op);
    if (first == Status::kOk) first = s;
  }
  return first;
}

Status RmaWindow::CompareAndSwap(int target, RmaBlock at, const void* compare,
                                 const void* value, void* result,
                                 RmaOp& op) noexcept {
  op.Reset(target, 1);
  op.result_ = static_cast<uint8_t*>(result);
  return Send(target, internal::kCas, 0, 0, 0, std::span(&at, 1), value,
              static_cast<size_t>(at.bytes), static_cast<size_t>(at.bytes),
              compare, op);
}

Status RmaWindow::Lock(int target, bool exclusive, RmaOp& op) noexcept {
  op.Reset(target, 1);
  return Send(target, internal::kLock, exclusive ? 1 : 0, 0, 0, {}, nullptr, 0,
              0, nullptr, op);
}

Status RmaWindow::Unlock(int target, RmaOp& op) noexcept {
  op.Reset(target, 1);
  return Send(target, internal::kUnlock, 0, 0, 0, {}, nullptr, 0, 0, nullptr,
              op);
}

Status RmaWindow::Signal(int target, int kind, RmaOp& op) noexcept {
  if (kind < 0 || kind >= kSignalKinds) return Status::kInvalidArgument;
  op.Reset(target, 0);  // done once sent
  // Counted by the target; nothing answers.
  Status s = Send(target, internal::kSignal, static_cast<uint32_t>(kind), 0, 0,
                  {}, nullptr, 0, 0, nullptr, op);
  if (s != Status::kOk) op.pending_.fetch_add(1);  // Send decremented
  return s;
}

// ---- direct operations ----
//
// Once a direct operation is issued its failures are the op's (error()):
// what the caller gets back is kOk or an error other than the refusals
// (kInvalidArgument, kUnsupported) that mean "nothing issued".
namespace {
Status Issued(Status s) noexcept {
  if (!engine::IsError(s)) return Status::kOk;
  return s == Status::kInvalidArgument || s == Status::kUnsupported
             ? Status::kInternal
             : s;
}
}  // namespace
//
// A packed key: the exposed base address and size (u64 each), then the
// transport's key bytes (none for an empty exposure).

Result<std::vector<uint8_t>> RmaWindow::MapDirect(
    std::span<const int> members, bool* reaches_all, bool emulated_too) {
  RemoteMemory* remote = session_.core().remote_memory();
  if (remote == nullptr || options_.dynamic) return Status::kUnsupported;
  *reaches_all = true;
  emulated_too_ = emulated_too;
  for (int m : members)
    if (!remote->Reaches(m) || (!emulated_too && remote->Emulated(m)))
      *reaches_all = false;
  std::vector<uint8_t> packed(16);
  uint8_t* base = nullptr;
  size_t size = 0;
  {
    std::shared_lock<std::shared_mutex> lock(mem_mu_);
    base = base_;
    size = size_;
  }
  const uint64_t words[2] = {reinterpret_cast<uintptr_t>(base), size};
  std::memcpy(packed.data(), words, sizeof words);
  if (size > 0 && region_ == nullptr) {
    std::vector<uint8_t> key;
    if (Status s = remote->Map(base, size, &region_, &key); s != Status::kOk)
      return s;
    packed.insert(packed.end(), key.begin(), key.end());
  }
  remote_ = remote;
  return packed;
}

Status RmaWindow::SetDirectKey(int target, std::span<const uint8_t> packed) {
  if (remote_ == nullptr) return Status::kUnsupported;
  if (target < 0 || target >= nranks_ || packed.size() < 16)
    return Status::kInvalidArgument;
  DirectKey& k = keys_[static_cast<size_t>(target)];
  if (k.set) return Status::kInvalidArgument;
  if (!remote_->Reaches(target) ||
      (!emulated_too_ && remote_->Emulated(target)))
    return Status::kUnsupported;
  uint64_t words[2];
  std::memcpy(words, packed.data(), sizeof words);
  k.base = words[0];
  k.size = words[1];
  if ((k.size > 0) != (packed.size() > 16)) return Status::kInvalidArgument;
  if (k.size > 0)
    if (Status s = remote_->UnpackKey(target, packed.subspan(16), &k.key);
        s != Status::kOk)
      return s;
  k.set = true;
  return Status::kOk;
}

Status RmaWindow::DirectTargetAddress(int target, int64_t offset,
                                      size_t bytes,
                                      uint64_t* at) const noexcept {
  if (!direct(target)) return Status::kInvalidArgument;
  // A dead target's transport may never complete an operation (UCX
  // without peer error handling): refused, the caller takes the
  // active-message path, which fails it with kPeerFailed.
  if (session_.core().PeerFailed(target)) return Status::kInvalidArgument;
  const DirectKey& k = keys_[static_cast<size_t>(target)];
  if (offset < 0 || static_cast<uint64_t>(offset) > k.size ||
      bytes > k.size - static_cast<uint64_t>(offset) || k.key == nullptr)
    return Status::kInvalidArgument;
  *at = k.base + static_cast<uint64_t>(offset);
  return Status::kOk;
}

Status RmaWindow::DirectPut(int target, int64_t offset, const void* data,
                            size_t bytes, RmaOp& op) noexcept {
  uint64_t at = 0;
  if (Status s = DirectTargetAddress(target, offset, bytes, &at);
      s != Status::kOk)
    return s;
  op.Reset(target, 1);
  Status s = remote_->Put(target, data, bytes, at,
                          keys_[static_cast<size_t>(target)].key, &op.direct_);
  MarkDirty(target);
  op.Posted(s);
  return Issued(s);
}

Status RmaWindow::DirectGet(int target, int64_t offset, void* out,
                            size_t bytes, RmaOp& op) noexcept {
  uint64_t at = 0;
  if (Status s = DirectTargetAddress(target, offset, bytes, &at);
      s != Status::kOk)
    return s;
  // A get after unflushed puts to the target sees them (as on the
  // active-message path, where the target applies messages in order).
  if (Unflushed(target)) (void)remote_->Fence();
  op.Reset(target, 1);
  Status s = remote_->Get(target, out, bytes, at,
                          keys_[static_cast<size_t>(target)].key, &op.direct_);
  op.Posted(s);
  return Issued(s);
}

Status RmaWindow::DirectAtomic(int target, std::span<const RmaBlock> blocks,
                               AtomicOp aop, size_t element,
                               const void* values, const void* compare,
                               void* fetch, bool ordered,
                               RmaOp& op) noexcept {
  if (element != 4 && element != 8) return Status::kInvalidArgument;
  const bool cas = aop == AtomicOp::kCompareSwap;
  if (cas && (compare == nullptr || fetch == nullptr || values == nullptr))
    return Status::kInvalidArgument;
  // Everything is checked before anything is issued.
  size_t n = 0;
  for (const RmaBlock& b : blocks) {
    uint64_t at = 0;
    if (b.bytes < 0 || static_cast<size_t>(b.bytes) % element != 0)
      return Status::kInvalidArgument;
    if (Status s = DirectTargetAddress(target, b.offset,
                                       static_cast<size_t>(b.bytes), &at);
        s != Status::kOk)
      return s;
    if (at % element != 0) return Status::kUnsupported;
    n += static_cast<size_t>(b.bytes) / element;
  }
  if (cas && n != 1) return Status::kInvalidArgument;
  // A non-fetching swap still needs somewhere for the old values.
  uint8_t* out = static_cast<uint8_t*>(fetch);
  if (out == nullptr && aop == AtomicOp::kSwap) {
    if (op.scratch_.size() < n * element) op.scratch_.resize(n * element);
    out = op.scratch_.data();
  }
  if (cas) {
    // The transport reads the compare value until completion: a copy.
    if (op.scratch_.size() < element) op.scratch_.resize(element);
    std::memcpy(op.scratch_.data(), compare, element);
    compare = op.scratch_.data();
  }
  if (ordered) (void)remote_->Fence();
  op.Reset(target, static_cast<int>(n));
  static constexpr uint64_t kZero = 0;
  const auto* in = static_cast<const uint8_t*>(values);
  RemoteKey* key = keys_[static_cast<size_t>(target)].key;
  Status first = Status::kOk;
  size_t i = 0;
  for (const RmaBlock& b : blocks) {
    const uint64_t at0 = keys_[static_cast<size_t>(target)].base +
                         static_cast<uint64_t>(b.offset);
    for (int64_t o = 0; o < b.bytes; o += static_cast<int64_t>(element), ++i) {
      const void* value = cas ? compare
                          : in != nullptr ? in + i * element
                                          : static_cast<const void*>(&kZero);
      void* result = out != nullptr ? out + i * element : nullptr;
      if (cas) std::memcpy(result, values, element);
      const AtomicOp code = in == nullptr && !cas ? AtomicOp::kOr : aop;
      Status s = remote_->Atomic(target, code, element, value, result,
                                 at0 + static_cast<uint64_t>(o), key,
                                 &op.direct_);
      op.Posted(s);
      if (engine::IsError(s) && first == Status::kOk) first = Issued(s);
    }
  }
  if (fetch == nullptr) MarkDirty(target);
  return first;
}

Status RmaWindow::DirectFlush(int target, RmaOp& op) noexcept {
  if (remote_ == nullptr) return Status::kUnsupported;
  const int lo = target < 0 ? 0 : target;
  const int hi = target < 0 ? nranks_ : target + 1;
  op.flush_marks_.clear();
  for (int t = lo; t < hi; ++t) {
    if (!direct(t) || session_.core().PeerFailed(t)) continue;
    const uint64_t issued = issued_[t].load(std::memory_order_acquire);
    if (issued > flushed_[t].load(std::memory_order_acquire))
      op.flush_marks_.emplace_back(t, issued);  // capacity kept: nranks_
  }
  op.Reset(target, static_cast<int>(op.flush_marks_.size()));
  Status first = Status::kOk;
  for (const auto& [t, issued] : op.flush_marks_) {
    Status s = remote_->Flush(t, &op.direct_);
    op.Posted(s);
    if (engine::IsError(s) && first == Status::kOk) first = Issued(s);
  }
  return first;
}

void RmaWindow::DirectFlushed(RmaOp& op) noexcept {
  if (op.error() != RmaError::kOk) return;
  for (const auto& [t, issued] : op.flush_marks_) {
    uint64_t seen = flushed_[t].load(std::memory_order_acquire);
    while (seen < issued &&
           !flushed_[t].compare_exchange_weak(seen, issued,
                                              std::memory_order_acq_rel))
      ;
  }
  op.flush_marks_.clear();
}

void RmaWindow::Reply(int dest, uint32_t kind, uint64_t token,
                      uint64_t stream, RmaError error, const void* body,
                      size_t len) noexcept {
  RmaPiece* r = nullptr;
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    for (auto& p : replies_)
      if (!p->used || p->req.done()) {
        r = p.get();
        break;
      }
    if (r == nullptr) {
      replies_.push_back(std::make_unique<RmaPiece>());
      r = replies_.back().get();
    }
    r->used = true;
    r->hdr = Header{};
    r->hdr.kind = kind;
    r->hdr.token = token;
    r->hdr.stream = stream;
    r->hdr.error = static_cast<uint32_t>(error);
    r->body.assign(static_cast<const uint8_t*>(body),
                   static_cast<const uint8_t*>(body) + len);
    // The request is reused: a done request may start another operation.
    (void)session_.SendAm(dest, kRmaHandler, &r->hdr, sizeof r->hdr,
                          r->body.empty() ? nullptr : r->body.data(),
                          r->body.size(), r->req);
  }
}

void RmaWindow::OnMessage(AmMessage& m, void* arg) noexcept {
  static_cast<RmaWindow*>(arg)->Serve(m);
}

void RmaWindow::Serve(AmMessage& m) noexcept {
  Header h;
  if (m.header().size() != sizeof h) return;
  std::memcpy(&h, m.header().data(), sizeof h);
  const int src = m.source();
  if (h.kind == internal::kAck) {
    auto* op = reinterpret_cast<RmaOp*>(static_cast<uintptr_t>(h.token));
    if (h.error != 0) {
      uint32_t expect = 0;
      op->error_.compare_exchange_strong(expect, h.error);
    }
    if (m.body_size() > 0 && op->result_ != nullptr && m.body_inline())
      std::memcpy(op->result_ + h.stream, m.body().data(), m.body_size());
    op->pending_.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  if (h.kind == internal::kSignal) {
    if (h.a < static_cast<uint32_t>(kSignalKinds) && src >= 0 &&
        src < nranks_)
      signals_[static_cast<size_t>(h.a) * nranks_ + src].fetch_add(
          1, std::memory_order_acq_rel);
    return;
  }
  if (h.kind == internal::kLock || h.kind == internal::kUnlock) {
    std::vector<std::pair<int, uint64_t>> grants;
    {
      std::lock_guard<std::mutex> lock(lock_mu_);
      if (h.kind == internal::kLock) {
        waiters_.push_back({src, h.a != 0, h.token});
      } else if (exclusive_holder_ == src) {
        exclusive_holder_ = -1;
      } else if (shared_holders_ > 0) {
        --shared_holders_;
      }
      // Grants in arrival order: an exclusive lock alone, shared ones
      // together.
      while (!waiters_.empty() && exclusive_holder_ < 0) {
        const Waiter w = waiters_.front();
        if (w.exclusive && shared_holders_ > 0) break;
        if (w.exclusive) {
          exclusive_holder_ = w.source;
        } else {
          ++shared_holders_;
        }
        grants.emplace_back(w.source, w.token);
        waiters_.pop_front();
      }
    }
    // Answered outside the lock (a loopback answer may run a handler).
    for (const auto& [dest, token] : grants)
      Reply(dest, internal::kAck, token, 0, RmaError::kOk, nullptr, 0);
    if (h.kind == internal::kUnlock)
      Reply(src, internal::kAck, h.token, 0, RmaError::kOk, nullptr, 0);
    return;
  }
  // Data operations: blocks, extra, data in the body (always inline: the
  // origin splits into pieces below the eager limit).
  const std::span<const uint8_t> body = m.body();
  const size_t blocks_len = static_cast<size_t>(h.nblocks) * sizeof(RmaBlock);
  if (!m.body_inline() || body.size() < blocks_len + h.extra) {
    Reply(src, internal::kAck, h.token, h.stream, RmaError::kRange, nullptr, 0);
    return;
  }
  // The handler's scratch, reused (an answer sent from here may run a
  // nested handler for an answer, which returns before using it).
  thread_local std::vector<RmaBlock> blocks;
  blocks.resize(h.nblocks);
  if (blocks_len) std::memcpy(blocks.data(), body.data(), blocks_len);
  const uint8_t* extra = body.data() + blocks_len;
  const uint8_t* data = extra + h.extra;
  const size_t data_len = body.size() - blocks_len - h.extra;
  size_t total = 0;
  for (const auto& b : blocks) total += static_cast<size_t>(b.bytes);
  thread_local std::vector<uint8_t*> at;
  thread_local std::vector<uint8_t> tmp;
  thread_local std::vector<uint8_t> old;
  std::shared_lock<std::shared_mutex> mem(mem_mu_);
  if (!open_.load()) {
    mem.unlock();
    Reply(src, internal::kAck, h.token, h.stream, RmaError::kNoWindow, nullptr,
          0);
    return;
  }
  if (!Resolve(blocks, &at) ||
      ((h.kind == internal::kPut || h.kind == internal::kAcc ||
        h.kind == internal::kGetAcc) &&
       data_len != total && !(h.kind == internal::kGetAcc && data_len == 0))) {
    mem.unlock();
    Reply(src, internal::kAck, h.token, h.stream, RmaError::kRange, nullptr, 0);
    return;
  }
  auto gather = [&](std::vector<uint8_t>& out) {
    out.resize(total);
    size_t o = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
      std::memcpy(out.data() + o, at[i], blocks[i].bytes);
      o += blocks[i].bytes;
    }
  };
  auto scatter = [&](const uint8_t* in) {
    size_t o = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
      std::memcpy(at[i], in + o, blocks[i].bytes);
      o += blocks[i].bytes;
    }
  };
  switch (h.kind) {
    case internal::kPut:
      scatter(data);
      mem.unlock();
      Reply(src, internal::kAck, h.token, h.stream, RmaError::kOk, nullptr, 0);
      return;
    case internal::kGet:
      gather(tmp);
      mem.unlock();
      Reply(src, internal::kAck, h.token, h.stream, RmaError::kOk, tmp.data(),
            tmp.size());
      return;
    case internal::kAcc:
    case internal::kGetAcc: {
      {
        std::lock_guard<std::mutex> acc(acc_mu_);
        gather(tmp);
        if (h.kind == internal::kGetAcc) old = tmp;
        if (data_len > 0 && options_.accumulate != nullptr)
          options_.accumulate(options_.accumulate_arg, h.a, h.b, data,
                              tmp.data(), total);
        scatter(tmp.data());
      }
      mem.unlock();
      if (h.kind == internal::kGetAcc) {
        Reply(src, internal::kAck, h.token, h.stream, RmaError::kOk,
              old.data(), old.size());
      } else {
        Reply(src, internal::kAck, h.token, h.stream, RmaError::kOk, nullptr,
              0);
      }
      return;
    }
    case internal::kCas: {
      if (blocks.size() != 1 || data_len != total || h.extra != total) {
        mem.unlock();
        Reply(src, internal::kAck, h.token, h.stream, RmaError::kRange,
              nullptr, 0);
        return;
      }
      {
        std::lock_guard<std::mutex> acc(acc_mu_);
        old.assign(at[0], at[0] + total);
        if (std::memcmp(at[0], extra, total) == 0)
          std::memcpy(at[0], data, total);
      }
      mem.unlock();
      Reply(src, internal::kAck, h.token, h.stream, RmaError::kOk, old.data(),
            old.size());
      return;
    }
    default:
      mem.unlock();
      return;
  }
}

}  // namespace rondo::nmad
