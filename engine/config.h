// Declarative configuration tables: {name, default, help, parser, printer}
// rows that fill a typed options struct from RONDO_* environment variables,
// in the UCX style. Callers may also set the struct's fields directly; the
// environment only provides defaults.
//
// Parsing is strict: a bad value throws std::invalid_argument
//   "Invalid value for RONDO_QUEUE: 'fast'. Expected: spin|lockfree"
// and RONDO_* variables that no table knows are reported by
// UnknownRondoVariables() so that a typo does not go unnoticed.
//
// Thread-safety: reads the process environment; call at set-up time.
#ifndef RONDO_ENGINE_CONFIG_H_
#define RONDO_ENGINE_CONFIG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rondo::engine {

template <typename Options>
struct ConfigVar {
  const char* name;           // "RONDO_QUEUE"
  const char* default_value;  // as it would be written in the environment
  const char* expected;       // "spin|lockfree", shown in errors and help
  const char* help;
  // Parses `value` into `options`; throws std::invalid_argument (any
  // message: it is wrapped into the standard one).
  std::function<void(Options&, const std::string&)> parse;
  std::function<std::string(const Options&)> print;
};

// Throws std::invalid_argument("Invalid value for NAME: 'value'. Expected:
// EXPECTED" + optional detail).
[[noreturn]] void ThrowInvalidValue(std::string_view name,
                                    std::string_view value,
                                    std::string_view expected,
                                    std::string_view detail = {});

// Applies the table: defaults first, then each variable set in the
// environment. Throws std::invalid_argument naming the variable.
template <typename Options>
void ApplyConfig(const std::vector<ConfigVar<Options>>& table,
                 Options& options, bool use_environment);

// Strict parsers shared by tables. They throw std::invalid_argument with a
// short reason.
int64_t ParseInt(const std::string& text, int64_t min, int64_t max);
bool ParseBool(const std::string& text);  // 1/0 true/false yes/no on/off

// Names of RONDO_* variables in the environment that are not in `known`.
std::vector<std::string> UnknownRondoVariables(
    const std::vector<std::string_view>& known);

// --- implementation ---------------------------------------------------------

std::string GetEnv(const char* name, bool* found);

template <typename Options>
void ApplyConfig(const std::vector<ConfigVar<Options>>& table,
                 Options& options, bool use_environment) {
  for (const auto& var : table) {
    bool found = false;
    std::string value;
    if (use_environment) value = GetEnv(var.name, &found);
    if (!found) continue;  // the struct's initialiser is the default
    try {
      var.parse(options, value);
    } catch (const std::exception& e) {
      ThrowInvalidValue(var.name, value, var.expected, e.what());
    }
  }
}

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_CONFIG_H_
