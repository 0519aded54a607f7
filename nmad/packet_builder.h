// Packet building: turns the chunks the send queue picked (nmad/
// send_queue.h) into one packet in a rail's packet buffer (nmad/rail.h),
// in the wire format of nmad/wire.h, and writes the short packets of the
// small-message fast path. Internal to //nmad.
#ifndef RONDO_NMAD_PACKET_BUILDER_H_
#define RONDO_NMAD_PACKET_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "nmad/rail.h"
#include "nmad/send_queue.h"
#include "nmad/wire.h"

namespace rondo::nmad::internal {

constexpr int kMaxInflightPackets = 16;  // per gate
// Chunks per packet: each may take two iovec entries (header, data) and an
// active message three; drivers take at least 32 entries.
constexpr int kMaxChunks = 10;
// Payloads this small are copied next to their header instead of taking an
// iovec entry of their own: one contiguous send is cheaper than a gather.
constexpr size_t kInlineCopy = 256;
// Eager messages up to this size may take the short-packet fast path.
constexpr size_t kShortMax = 1024;
// Short packets up to Rail::immediate_max bytes are first offered to the
// driver from the stack (copied out at once, or refused); the bound starts
// here and shrinks to what the rail accepted, never below kMinImmediate.
constexpr size_t kFirstImmediate = 128;
constexpr size_t kMinImmediate = 24;
// The header room of a packet buffer: the packet header, and for every
// chunk its largest header and two inline payloads.
inline const size_t kHeaderRoom =
    wire::kPacketHeaderSize +
    kMaxChunks * (wire::ChunkHeaderSize(wire::ChunkKind::kRts, wire::kMaxParts) +
                  2 * kInlineCopy);
// What Rail::buf_bytes must be: a packet, or a short packet.
inline size_t PacketBufBytes() {
  return kHeaderRoom > wire::kShortHeaderSize + kShortMax
             ? kHeaderRoom
             : wire::kShortHeaderSize + kShortMax;
}

// Builds in `b` (header and iovec) the packet of `chunks` (SendOps) for
// gate `g`: headers and payloads up to kInlineCopy copied into b.header,
// larger payloads as their own iovec entries (borrowed from the sender).
// The eager, AM and RTR operations go to b.ops (they complete with the
// packet); a rendezvous announced (kRts, kAmRts) goes to b.rts_ids and
// waits in g.rdv_waiting for its ready-to-receive (gate lock inside),
// except a kRts with data_posted, which goes to b.data_with_rts (its parts
// start once the packet is posted).
// Returns the packet's size in bytes.
uint64_t BuildPacket(PacketBuf& b, Gate& g,
                     std::span<strategies::PendingChunk* const> chunks);

// Writes the short packet of a message of `len` <= kShortMax bytes at
// `dst` (room for wire::kShortHeaderSize + len); returns its size.
inline size_t WriteShortPacket(uint8_t* dst, uint32_t session, uint32_t seq,
                               int32_t tag, const void* buf, size_t len) {
  wire::WriteShortHeader(dst, session, seq, tag);
  wire::CopyPayload(dst + wire::kShortHeaderSize, buf, len);
  return wire::kShortHeaderSize + len;
}

}  // namespace rondo::nmad::internal

#endif  // RONDO_NMAD_PACKET_BUILDER_H_
