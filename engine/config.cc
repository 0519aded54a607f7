#include "engine/config.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

extern char** environ;

namespace rondo::engine {

void ThrowInvalidValue(std::string_view name, std::string_view value,
                       std::string_view expected, std::string_view detail) {
  std::string msg = "Invalid value for " + std::string(name) + ": '" +
                    std::string(value) + "'. Expected: " +
                    std::string(expected);
  if (!detail.empty()) msg += " (" + std::string(detail) + ")";
  throw std::invalid_argument(msg);
}

std::string GetEnv(const char* name, bool* found) {
  const char* v = std::getenv(name);
  *found = v != nullptr;
  return v ? std::string(v) : std::string();
}

int64_t ParseInt(const std::string& text, int64_t min, int64_t max) {
  if (text.empty()) throw std::invalid_argument("empty number");
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0')
    throw std::invalid_argument("not an integer");
  if (v < min || v > max)
    throw std::invalid_argument("out of range " + std::to_string(min) + ".." +
                                std::to_string(max));
  return v;
}

bool ParseBool(const std::string& text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on")
    return true;
  if (text == "0" || text == "false" || text == "no" || text == "off")
    return false;
  throw std::invalid_argument("not a boolean (1/0, true/false, yes/no, on/off)");
}

std::vector<std::string> UnknownRondoVariables(
    const std::vector<std::string_view>& known) {
  std::vector<std::string> unknown;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.substr(0, 6) != "RONDO_") continue;
    std::string_view name = entry.substr(0, entry.find('='));
    bool is_known = false;
    for (auto k : known) is_known |= (k == name);
    if (!is_known) unknown.emplace_back(name);
  }
  return unknown;
}

}  // namespace rondo::engine
