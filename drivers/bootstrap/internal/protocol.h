// The wire protocol between rondo-run and its ranks (launcher_bootstrap).
//
// Why a protocol of our own: rondo-run is a small launcher for machines
// without a resource manager; it needs only a key/value exchange, a barrier
// and failure notices, so a handful of length-prefixed frames over a private
// Unix socket is enough and keeps PMIx out of the launcher.
//
// A frame is `u32 length | u8 type | payload` (little-endian; `length`
// counts the type byte and the payload). Strings are `u16 length | bytes`,
// byte blobs `u32 length | bytes`. Conversation:
//
//   client                              rondo-run
//   HELLO{key, rank}            ->      (wrong key/rank: connection closed)
//                               <-      WELCOME
//   PUT{key, value}*            ->      (kept per rank until the next fence)
//   FENCE                       ->      (when all ranks have sent FENCE:)
//                               <-      KV{rank, key, value}* FENCE_DONE{ok}
//   BARRIER                     ->      BARRIER_DONE{ok, text}
//                               <-      FAILURE{rank, text} (any time)
//   FINI                        ->      (the rank's exit is now clean)
//
// Decoding is bounds-checked everywhere: a frame longer than
// kMaxFrameLength, of an unknown type, or whose payload does not match its
// type exactly is malformed; the receiver closes the connection.
//
// Thread-safety: plain value types and pure functions; a FrameReader is
// used by one thread at a time.
#ifndef RONDO_DRIVERS_BOOTSTRAP_INTERNAL_PROTOCOL_H_
#define RONDO_DRIVERS_BOOTSTRAP_INTERNAL_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rondo::drivers::bootstrap::internal {

// Limits shared by every bootstrap (see Bootstrap::Put).
inline constexpr size_t kMaxKeyLength = 63;
inline constexpr size_t kMaxValueLength = size_t{1} << 20;  // 1 MiB
// Largest frame: a KV frame with the biggest key and value, plus headers.
inline constexpr size_t kMaxFrameLength = kMaxValueLength + 4096;
// The per-job key: 32 random bytes, written as 64 lower-case hex digits.
inline constexpr size_t kJobKeyBytes = 32;
inline constexpr size_t kJobKeyHexLength = 2 * kJobKeyBytes;
// Largest job rondo-run starts.
inline constexpr int kMaxRanks = 4096;

enum class MessageType : uint8_t {
  kHello = 1,
  kWelcome = 2,
  kPut = 3,
  kFence = 4,
  kKeyValue = 5,
  kFenceDone = 6,
  kBarrier = 7,
  kBarrierDone = 8,
  kFailure = 9,
  kFini = 10,
};

// "HELLO", "PUT", ... (for messages); "?" for an unknown value.
std::string_view MessageTypeName(MessageType type) noexcept;

// One decoded frame. Which fields are meaningful depends on `type`:
//   kHello: key (job key, hex), rank     kPut: key, value
//   kKeyValue: rank, key, value          kFenceDone/kBarrierDone: ok, text
//   kFailure: rank, text                 others: nothing
struct Message {
  MessageType type = MessageType::kWelcome;
  int32_t rank = -1;
  bool ok = false;
  std::string key;
  std::vector<uint8_t> value;
  std::string text;

  bool operator==(const Message&) const = default;
};

// Appends `message`, framed, to `out`. Never fails for messages that respect
// the limits above (keys/texts up to 65535 bytes, values up to
// kMaxValueLength); callers validate user input first.
void AppendFrame(const Message& message, std::vector<uint8_t>& out);
std::vector<uint8_t> EncodeFrame(const Message& message);

// Decodes a frame body (type byte + payload, without the length prefix).
// nullopt if the type is unknown or the payload does not match it exactly.
std::optional<Message> DecodeBody(std::span<const uint8_t> body);

// Reassembles frames from a byte stream.
class FrameReader {
 public:
  enum class Result { kFrame, kNeedMore, kMalformed };

  // Appends bytes read from the stream.
  void Append(std::span<const uint8_t> bytes);
  // Takes the next complete frame into `*message`. kMalformed is sticky:
  // the stream cannot be resynchronised, close the connection.
  Result Next(Message* message);
  // Why the stream was rejected (after kMalformed).
  const std::string& error() const { return error_; }

 private:
  std::vector<uint8_t> buffer_;
  size_t consumed_ = 0;  // bytes of buffer_ already returned as frames
  std::string error_;
};

// Keys: 1-63 characters of [A-Za-z0-9_.:-]. Empty string when valid, else
// what is wrong and what is allowed.
std::string CheckKey(std::string_view key);
// Values: up to kMaxValueLength bytes.
std::string CheckValue(std::span<const uint8_t> value);

// Lower-case hex of `bytes`, and its inverse (nullopt unless `hex` is an
// even number of hex digits).
std::string ToHex(std::span<const uint8_t> bytes);
std::optional<std::vector<uint8_t>> FromHex(std::string_view hex);

// Compares two job keys without an early exit (no timing side channel).
bool ConstantTimeEquals(std::string_view a, std::string_view b) noexcept;

}  // namespace rondo::drivers::bootstrap::internal

#endif  // RONDO_DRIVERS_BOOTSTRAP_INTERNAL_PROTOCOL_H_
