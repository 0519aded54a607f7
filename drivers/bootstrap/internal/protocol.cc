#include "drivers/bootstrap/internal/protocol.h"

#include <cstring>

namespace rondo::drivers::bootstrap::internal {
namespace {

void PutU8(std::vector<uint8_t>& out, uint8_t v) { out.push_back(v); }

void PutU16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void PutString(std::vector<uint8_t>& out, std::string_view s) {
  PutU16(out, static_cast<uint16_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

void PutBytes(std::vector<uint8_t>& out, std::span<const uint8_t> b) {
  PutU32(out, static_cast<uint32_t>(b.size()));
  out.insert(out.end(), b.begin(), b.end());
}

// Bounds-checked cursor over a frame body; every getter fails (returns
// false) rather than read past the end.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> data) : data_(data) {}
  bool U8(uint8_t* v) {
    if (data_.size() - pos_ < 1) return false;
    *v = data_[pos_++];
    return true;
  }
  bool U16(uint16_t* v) {
    if (data_.size() - pos_ < 2) return false;
    *v = static_cast<uint16_t>(data_[pos_] | (data_[pos_ + 1] << 8));
    pos_ += 2;
    return true;
  }
  bool U32(uint32_t* v) {
    if (data_.size() - pos_ < 4) return false;
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) r |= uint32_t{data_[pos_ + i]} << (8 * i);
    pos_ += 4;
    *v = r;
    return true;
  }
  bool Rank(int32_t* rank) {
    uint32_t v;
    if (!U32(&v) || v >= static_cast<uint32_t>(kMaxRanks)) return false;
    *rank = static_cast<int32_t>(v);
    return true;
  }
  bool String(std::string* s) {
    uint16_t n;
    if (!U16(&n) || data_.size() - pos_ < n) return false;
    s->assign(reinterpret_cast<const char*>(data_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  bool Bytes(std::vector<uint8_t>* b) {
    uint32_t n;
    if (!U32(&n) || n > kMaxValueLength || data_.size() - pos_ < n)
      return false;
    b->assign(data_.begin() + pos_, data_.begin() + pos_ + n);
    pos_ += n;
    return true;
  }
  bool Bool(bool* b) {
    uint8_t v;
    if (!U8(&v) || v > 1) return false;
    *b = v == 1;
    return true;
  }
  bool AtEnd() const { return pos_ == data_.size(); }

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

}  // namespace

std::string_view MessageTypeName(MessageType type) noexcept {
  switch (type) {
    case MessageType::kHello: return "HELLO";
    case MessageType::kWelcome: return "WELCOME";
    case MessageType::kPut: return "PUT";
    case MessageType::kFence: return "FENCE";
    case MessageType::kKeyValue: return "KV";
    case MessageType::kFenceDone: return "FENCE_DONE";
    case MessageType::kBarrier: return "BARRIER";
    case MessageType::kBarrierDone: return "BARRIER_DONE";
    case MessageType::kFailure: return "FAILURE";
    case MessageType::kFini: return "FINI";
  }
  return "?";
}

void AppendFrame(const Message& m, std::vector<uint8_t>& out) {
  const size_t length_at = out.size();
  PutU32(out, 0);  // patched below
  PutU8(out, static_cast<uint8_t>(m.type));
  switch (m.type) {
    case MessageType::kHello:
      PutString(out, m.key);
      PutU32(out, static_cast<uint32_t>(m.rank));
      break;
    case MessageType::kPut:
      PutString(out, m.key);
      PutBytes(out, m.value);
      break;
    case MessageType::kKeyValue:
      PutU32(out, static_cast<uint32_t>(m.rank));
      PutString(out, m.key);
      PutBytes(out, m.value);
      break;
    case MessageType::kFenceDone:
    case MessageType::kBarrierDone:
      PutU8(out, m.ok ? 1 : 0);
      PutString(out, m.text);
      break;
    case MessageType::kFailure:
      PutU32(out, static_cast<uint32_t>(m.rank));
      PutString(out, m.text);
      break;
    case MessageType::kWelcome:
    case MessageType::kFence:
    case MessageType::kBarrier:
    case MessageType::kFini:
      break;
  }
  const uint32_t length = static_cast<uint32_t>(out.size() - length_at - 4);
  for (int i = 0; i < 4; ++i)
    out[length_at + i] = static_cast<uint8_t>(length >> (8 * i));
}

std::vector<uint8_t> EncodeFrame(const Message& message) {
  std::vector<uint8_t> out;
  AppendFrame(message, out);
  return out;
}

std::optional<Message> DecodeBody(std::span<const uint8_t> body) {
  Cursor c(body);
  uint8_t type;
  if (!c.U8(&type)) return std::nullopt;
  Message m;
  m.type = static_cast<MessageType>(type);
  bool ok = true;
  switch (m.type) {
    case MessageType::kHello:
      ok = c.String(&m.key) && c.Rank(&m.rank);
      break;
    case MessageType::kPut:
      ok = c.String(&m.key) && c.Bytes(&m.value);
      break;
    case MessageType::kKeyValue:
      ok = c.Rank(&m.rank) && c.String(&m.key) && c.Bytes(&m.value);
      break;
    case MessageType::kFenceDone:
    case MessageType::kBarrierDone:
      ok = c.Bool(&m.ok) && c.String(&m.text);
      break;
    case MessageType::kFailure:
      ok = c.Rank(&m.rank) && c.String(&m.text);
      break;
    case MessageType::kWelcome:
    case MessageType::kFence:
    case MessageType::kBarrier:
    case MessageType::kFini:
      break;
    default:
      return std::nullopt;
  }
  if (!ok || !c.AtEnd()) return std::nullopt;
  return m;
}

void FrameReader::Append(std::span<const uint8_t> bytes) {
  // Drop what was already consumed before growing, so the buffer stays
  // bounded by one frame plus one read.
  if (consumed_ > 0) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + consumed_);
    consumed_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

FrameReader::Result FrameReader::Next(Message* message) {
  if (!error_.empty()) return Result::kMalformed;
  const size_t available = buffer_.size() - consumed_;
  if (available < 4) return Result::kNeedMore;
  const uint8_t* p = buffer_.data() + consumed_;
  const uint32_t length = uint32_t{p[0]} | uint32_t{p[1]} << 8 |
                          uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  if (length == 0 || length > kMaxFrameLength) {
    error_ = "frame length " + std::to_string(length) +
             " is outside the allowed 1.." + std::to_string(kMaxFrameLength);
    return Result::kMalformed;
  }
  if (available - 4 < length) return Result::kNeedMore;
  std::optional<Message> m = DecodeBody({p + 4, length});
  if (!m) {
    error_ = "malformed frame of type " + std::to_string(p[4]) + " (" +
             std::string(MessageTypeName(static_cast<MessageType>(p[4]))) +
             "), length " + std::to_string(length);
    return Result::kMalformed;
  }
  consumed_ += 4 + length;
  *message = std::move(*m);
  return Result::kFrame;
}

std::string CheckKey(std::string_view key) {
  auto allowed = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == ':' ||
           ch == '-';
  };
  if (key.empty() || key.size() > kMaxKeyLength)
    return "key of " + std::to_string(key.size()) +
           " characters; allowed: 1-63 characters of [A-Za-z0-9_.:-]";
  for (char ch : key)
    if (!allowed(ch))
      return "key '" + std::string(key) +
             "' has a character outside [A-Za-z0-9_.:-]";
  return {};
}

std::string CheckValue(std::span<const uint8_t> value) {
  if (value.size() > kMaxValueLength)
    return "value of " + std::to_string(value.size()) +
           " bytes; allowed: up to " + std::to_string(kMaxValueLength) +
           " bytes (1 MiB)";
  return {};
}

std::string ToHex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * bytes.size());
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::optional<std::vector<uint8_t>> FromHex(std::string_view hex) {
  auto nibble = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace rondo::drivers::bootstrap::internal
