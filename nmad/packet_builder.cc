#include "nmad/packet_builder.h"

#include <algorithm>
#include <mutex>

namespace rondo::nmad::internal {

using strategies::PendingChunk;
using wire::ChunkKind;
using wire::ChunkView;

uint64_t BuildPacket(PacketBuf& b, Gate& g,
                     std::span<PendingChunk* const> chunks) {
  b.iov.clear();
  uint8_t* h = b.header.data();
  size_t hpos = wire::kPacketHeaderSize;
  size_t seg_start = 0;
  uint64_t total = wire::kPacketHeaderSize;
  for (PendingChunk* pc : chunks) {
    auto* op = static_cast<SendOp*>(pc);
    if (op->data_posted)
      b.data_with_rts.push_back(op);
    else if (op->announces_rendezvous())
      b.rts_ids.push_back(op->rdv_id);
    else
      b.ops.push_back(op);
    ChunkView v;
    v.kind = op->kind;
    v.session = op->session;
    v.seq = op->seq;
    v.tag = op->tag;
    v.flags = op->data_posted ? wire::kRtsDataPosted : 0;
    v.handler = op->handler;
    v.msg_size = op->len;
    v.rdv_id = op->rdv_id;
    v.accepted = op->accepted;
    v.nparts = op->nparts;
    std::copy(op->parts, op->parts + op->nparts, v.parts);
    v.am_header_size = op->am_header_size;
    uint64_t payload = 0;
    if (op->kind == ChunkKind::kData) payload = op->len;
    if (op->kind == ChunkKind::kAm) payload = op->am_header_size + op->len;
    if (op->kind == ChunkKind::kAmRts) payload = op->am_header_size;
    hpos += wire::WriteChunkHeader(h + hpos, v, payload);
    total += wire::ChunkHeaderSize(op->kind, op->nparts) + payload;
    auto add_data = [&](const uint8_t* p, size_t n) {
      if (n == 0) return;
      if (n <= kInlineCopy) {
        std::memcpy(h + hpos, p, n);
        hpos += n;
        return;
      }
      b.iov.push_back({h + seg_start, hpos - seg_start});
      b.iov.push_back({const_cast<uint8_t*>(p), n});
      seg_start = hpos;
    };
    if (op->kind == ChunkKind::kAm || op->kind == ChunkKind::kAmRts)
      add_data(op->am_header, op->am_header_size);
    if (op->kind == ChunkKind::kData || op->kind == ChunkKind::kAm)
      add_data(op->data, op->len);
    if (op->announces_rendezvous() && !op->data_posted) {
      std::lock_guard<queues::SpinLock> lock(g.mu);
      g.rdv_waiting[op->rdv_id] = op;
    }
  }
  if (hpos > seg_start) b.iov.push_back({h + seg_start, hpos - seg_start});
  wire::WritePacketHeader(h, static_cast<int>(chunks.size()),
                          static_cast<uint32_t>(total));
  return total;
}

}  // namespace rondo::nmad::internal
