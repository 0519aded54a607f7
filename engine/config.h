// Declarative configuration tables: {name, default, help, parser, printer}
// rows that fill a typed options struct from RONDO_* environment variables,
// in the UCX style. Callers may also set the struct's fields directly; the
// environment only provides defaults.
//
// A table is also its component's declaration in the process's
// configuration registry (topology/base/config_registry.h): the component
// registers DeclarationsOf(table, "component"), so `rondo-info --config`
// lists it and the variables are read through the registry.
//
// Parsing is strict: a bad value throws std::invalid_argument
//   "Invalid value for RONDO_QUEUE: 'fast'. Expected: spin|lockfree"
//
// Thread-safety: reads the process environment; call at set-up time.
#ifndef RONDO_ENGINE_CONFIG_H_
#define RONDO_ENGINE_CONFIG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/base/config_registry.h"

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
using base::ThrowInvalidValue;

// Applies the table: each variable set in the environment (read through
// the configuration registry, where the table must be declared). Throws
// std::invalid_argument naming the variable.
template <typename Options>
void ApplyConfig(const std::vector<ConfigVar<Options>>& table,
                 Options& options, bool use_environment);

// The table's rows as registry declarations of `component`.
template <typename Options>
std::vector<base::ConfigDecl> DeclarationsOf(
    const std::vector<ConfigVar<Options>>& table, const char* component);

// Strict parsers shared by tables. They throw std::invalid_argument with a
// short reason.
int64_t ParseInt(const std::string& text, int64_t min, int64_t max);
bool ParseBool(const std::string& text);  // 1/0 true/false yes/no on/off

// --- implementation ---------------------------------------------------------

template <typename Options>
void ApplyConfig(const std::vector<ConfigVar<Options>>& table,
                 Options& options, bool use_environment) {
  if (!use_environment) return;  // the struct's initialisers are the defaults
  const base::ConfigRegistry& registry = base::ConfigRegistry::Global();
  for (const auto& var : table) {
    std::optional<std::string> value = registry.Raw(var.name);
    if (!value) continue;
    try {
      var.parse(options, *value);
    } catch (const std::exception& e) {
      ThrowInvalidValue(var.name, *value, var.expected, e.what());
    }
  }
}

template <typename Options>
std::vector<base::ConfigDecl> DeclarationsOf(
    const std::vector<ConfigVar<Options>>& table, const char* component) {
  std::vector<base::ConfigDecl> out;
  for (const auto& var : table)
    out.push_back({var.name, component, base::TypeFromAllowed(var.expected),
                   var.default_value, var.expected, var.help});
  return out;
}

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_CONFIG_H_
