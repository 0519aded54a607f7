// The configuration registry: every RONDO_* environment variable that any
// part of Rondo reads is declared once, in the component that owns it, with
// its type, default, allowed values and one line of help (UCX's ucs_config
// tables and `ucx_info -c`; abseil's flags registry).
//
// Declaring. A component declares its variables in the .cc file that reads
// them, with a namespace-scope registration object:
//
//   const rondo::base::ConfigRegistration kNmadConfig(NmadDeclarations);
//
// where NmadDeclarations() returns the component's ConfigDecl list. The
// registration only stores the function pointer (constant data); the list
// is built when somebody asks (rondo-info, the unknown-variable check, a
// read). Components with typed tables (engine::ConfigVar, nmad's options)
// derive their declarations from those tables, so a variable's default and
// allowed values are written once.
//
// Why static-init registration and not explicit per-component calls: the
// lowest layer must warn about a variable that nothing in the program
// declares, and it cannot call into the layers above it. As with abseil's
// flags, what a program links is what it declares; `rondo-info --config`
// links every component, so it lists them all.
//
// The one instance. ConfigRegistry::Global() is the process's registry: the
// one documented piece of global state of this package besides the logger's
// (log.h). It is written only during static initialisation (registrations,
// before main) and read afterwards; reading it is thread-safe.
//
// Reading. Library code reads a RONDO_* variable through the registry
// (GetString, GetInt, GetBool, GetChoice), never with a bare getenv: the
// name must be declared (std::logic_error otherwise: a bug in Rondo, not in
// the user's environment), the parse is strict, and a
// bad value throws std::invalid_argument
//   "Invalid value for RONDO_X: 'v'. Expected: <allowed>"
// Other variables (PMIX_*, SLURM_*, TMPDIR) are read with ForeignEnv(),
// which refuses RONDO_* names.
#ifndef RONDO_TOPOLOGY_BASE_CONFIG_REGISTRY_H_
#define RONDO_TOPOLOGY_BASE_CONFIG_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rondo::base {

// One declared variable. Strings are owned (a component may build names,
// e.g. one RONDO_COLL_<NAME> per collective).
struct ConfigDecl {
  std::string name;           // "RONDO_QUEUE"
  std::string component;      // "engine", "nmad", "mpi", "bootstrap", ...
  std::string type;           // "string", "integer", "boolean", "choice", "list"
  std::string default_value;  // as written in the environment; "" = unset
  std::string allowed;        // "spin|lockfree", shown in errors and help
  std::string help;           // one line
};

using ConfigDeclarations = std::vector<ConfigDecl> (*)();

// A namespace-scope object that registers a component's declarations.
class ConfigRegistration {
 public:
  explicit ConfigRegistration(ConfigDeclarations declarations);
};

class ConfigRegistry {
 public:
  // The process's registry (see the banner). Any thread after main starts.
  static const ConfigRegistry& Global();

  // Every declaration, sorted by component then name. A name declared
  // twice is a bug: std::logic_error.
  std::vector<ConfigDecl> All() const;
  // The declaration of `name`, or nullopt.
  std::optional<ConfigDecl> Find(std::string_view name) const;

  // The raw value of the declared variable `name`, or nullopt when it is
  // unset. std::logic_error when `name` is not declared.
  std::optional<std::string> Raw(std::string_view name) const;
  // Set and not empty.
  bool IsSet(std::string_view name) const;
  // The value, or the declared default when unset or empty.
  std::string GetString(std::string_view name) const;
  // Strict parses of the value (or of the default when unset or empty);
  // throw std::invalid_argument naming the variable, the value and the
  // declared allowed values.
  int64_t GetInt(std::string_view name, int64_t min, int64_t max) const;
  bool GetBool(std::string_view name) const;
  // One of the '|'-separated words of the declaration's `allowed`.
  std::string GetChoice(std::string_view name) const;

  // Names of RONDO_* variables set in the environment that nothing
  // declares, each with the nearest declared name (edit distance).
  struct Unknown {
    std::string name;
    std::string nearest;
  };
  std::vector<Unknown> UnknownVariables() const;

  // For tests: a registry over explicit declaration functions.
  explicit ConfigRegistry(std::vector<ConfigDeclarations> sources);

 private:
  friend class ConfigRegistration;
  static ConfigRegistry& Mutable();
  std::vector<ConfigDeclarations> sources_;
};

// The declared name nearest to `name` by edit distance (ties: the first in
// sorted order), or "" when `known` is empty.
std::string NearestName(std::string_view name,
                        const std::vector<std::string>& known);
size_t EditDistance(std::string_view a, std::string_view b);

// "Invalid value for NAME: 'value'. Expected: ALLOWED" (+ " (detail)").
[[noreturn]] void ThrowInvalidValue(std::string_view name,
                                    std::string_view value,
                                    std::string_view allowed,
                                    std::string_view detail = {});

// A variable that is not Rondo's (PMIX_RANK, SLURM_JOB_ID, TMPDIR), or
// nullptr. std::logic_error when `name` starts with RONDO_ (those are read
// through the registry).
const char* ForeignEnv(const char* name);

// Any variable by name, for code that takes a lookup function (the
// launcher's environment parser): RONDO_* names go through the registry
// (declared, else std::logic_error), others through ForeignEnv. The pointer
// is the environment's, valid until the environment changes.
const char* EnvLookup(const char* name);

// 1/0 true/false yes/no on/off; throws std::invalid_argument otherwise.
bool ParseBoolText(std::string_view text);
// A decimal integer in min..max; throws std::invalid_argument otherwise.
int64_t ParseIntText(std::string_view text, int64_t min, int64_t max);

// The type word of a declaration derived from its allowed-values text
// (for tables that do not state one): "integer" for "an integer ...",
// "boolean" for "1|0 ...", "choice" for words separated by '|', else
// "string".
std::string TypeFromAllowed(std::string_view allowed);

}  // namespace rondo::base

#endif  // RONDO_TOPOLOGY_BASE_CONFIG_REGISTRY_H_
