#include "topology/cpuset.h"

#include <cctype>
#include <charconv>
#include <stdexcept>
#include <string_view>

#include "topology/check.h"
#include "topology/internal/text.h"

namespace rondo::topology {
namespace {

// Builds the message of every Parse() failure: the offending text, what was
// wrong with it and the accepted form, so a user who mistyped a RONDO_*
// variable can fix it without reading the source.
[[noreturn]] void ThrowParseError(const std::string& text,
                                  const std::string& reason) {
  throw std::invalid_argument(
      "invalid cpuset '" + text + "': " + reason +
      "; expected a list of core numbers and ranges such as '0-3,6' (cores 0.." +
      std::to_string(CpuSet::kMaxCores - 1) + ")");
}

using internal::Trim;

// Parses one core number (digits only: a sign or a stray character is a
// typo, not something to guess around).
int ParseCore(const std::string& text, std::string_view item) {
  item = Trim(item);
  if (item.empty()) ThrowParseError(text, "missing core number");
  for (char c : item) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      ThrowParseError(text, "'" + std::string(item) + "' is not a core number");
  }
  int core = 0;
  auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), core);
  if (ec != std::errc() || end != item.data() + item.size() ||
      core >= CpuSet::kMaxCores) {
    ThrowParseError(text, "core " + std::string(item) + " is out of range");
  }
  return core;
}

}  // namespace

void CpuSet::Set(int core) {
  // A bad index here is a programming error (user input is validated by
  // Parse() and the Topology), and silently dropping it would run tasks on
  // the wrong cores.
  RONDO_CHECK(core >= 0 && core < kMaxCores, "CpuSet::Set: core out of range");
  words_[core / 64] |= uint64_t{1} << (core % 64);
}

void CpuSet::Clear(int core) {
  // Like Test(): a core outside the capacity cannot be in the set, so
  // clearing it is already done.
  if (core < 0 || core >= kMaxCores) return;
  words_[core / 64] &= ~(uint64_t{1} << (core % 64));
}

int CpuSet::Next(int core) const {
  int from = core < 0 ? 0 : core + 1;
  if (from >= kMaxCores) return -1;
  // Mask off the bits at or below `core` in the first word, then scan whole
  // words: this is on scheduling paths, so no per-bit loop.
  int word = from / 64;
  uint64_t bits = words_[word] & (~uint64_t{0} << (from % 64));
  while (true) {
    if (bits != 0) return word * 64 + std::countr_zero(bits);
    if (++word == kWords) return -1;
    bits = words_[word];
  }
}

std::string CpuSet::ToString() const {
  std::string out = "{";
  bool first_item = true;
  for (int c = First(); c >= 0;) {
    // Extend the run of consecutive cores starting at c.
    int last = c;
    int next = Next(c);
    while (next == last + 1) {
      last = next;
      next = Next(next);
    }
    if (!first_item) out += ',';
    first_item = false;
    out += std::to_string(c);
    if (last != c) out += '-' + std::to_string(last);
    c = next;
  }
  out += '}';
  return out;
}

CpuSet CpuSet::Parse(const std::string& text) {
  std::string_view body = Trim(text);
  // Braces are optional so that both ToString() output and the shorter
  // shell-friendly form are accepted; they must come as a pair.
  if (!body.empty() && body.front() == '{') {
    if (body.back() != '}') ThrowParseError(text, "missing closing '}'");
    body = Trim(body.substr(1, body.size() - 2));
  } else if (!body.empty() && body.back() == '}') {
    ThrowParseError(text, "missing opening '{'");
  }

  CpuSet set;
  // "" and "{}" are the empty set, so that Parse(s.ToString()) == s for
  // every set; an empty item between commas is a typo and is refused.
  if (body.empty()) return set;
  while (true) {
    size_t comma = body.find(',');
    std::string_view item = Trim(body.substr(0, comma));
    if (item.empty()) ThrowParseError(text, "empty item");
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      set.Set(ParseCore(text, item));
    } else {
      int first = ParseCore(text, item.substr(0, dash));
      int last = ParseCore(text, item.substr(dash + 1));
      if (last < first) {
        ThrowParseError(text, "range " + std::string(item) + " is reversed");
      }
      for (int c = first; c <= last; ++c) set.Set(c);
    }
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return set;
}

}  // namespace rondo::topology
