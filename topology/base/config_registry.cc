#include "topology/base/config_registry.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

extern char** environ;

namespace rondo::base {

namespace {

const char* RawEnv(const std::string& name) {
  return std::getenv(name.c_str());  // the registry's one reader
}

std::vector<std::string> SplitChoices(std::string_view allowed) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t bar = allowed.find('|', start);
    out.emplace_back(allowed.substr(
        start, bar == std::string_view::npos ? std::string_view::npos
                                             : bar - start));
    if (bar == std::string_view::npos) return out;
    start = bar + 1;
  }
}

}  // namespace

ConfigRegistration::ConfigRegistration(ConfigDeclarations declarations) {
  ConfigRegistry::Mutable().sources_.push_back(declarations);
}

ConfigRegistry::ConfigRegistry(std::vector<ConfigDeclarations> sources)
    : sources_(std::move(sources)) {}

ConfigRegistry& ConfigRegistry::Mutable() {
  // Constructed on first use, so that registrations in any translation
  // unit's static initialisation find it.
  static ConfigRegistry registry{std::vector<ConfigDeclarations>{}};
  return registry;
}

const ConfigRegistry& ConfigRegistry::Global() { return Mutable(); }

std::vector<ConfigDecl> ConfigRegistry::All() const {
  std::vector<ConfigDecl> all;
  for (ConfigDeclarations source : sources_)
    for (ConfigDecl& d : source()) all.push_back(std::move(d));
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.component != b.component ? a.component < b.component
                                      : a.name < b.name;
  });
  std::vector<std::string> names;
  for (const auto& d : all) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  if (auto dup = std::adjacent_find(names.begin(), names.end());
      dup != names.end())
    throw std::logic_error(*dup + " is declared twice in the configuration "
                                  "registry");
  return all;
}

std::optional<ConfigDecl> ConfigRegistry::Find(std::string_view name) const {
  for (ConfigDeclarations source : sources_)
    for (ConfigDecl& d : source())
      if (d.name == name) return std::move(d);
  return std::nullopt;
}

namespace {

ConfigDecl Declared(const ConfigRegistry& registry, std::string_view name) {
  std::optional<ConfigDecl> d = registry.Find(name);
  if (!d)
    throw std::logic_error(std::string(name) +
                           " is read but not declared in the configuration "
                           "registry (topology/base/config_registry.h)");
  return std::move(*d);
}

}  // namespace

std::optional<std::string> ConfigRegistry::Raw(std::string_view name) const {
  const ConfigDecl d = Declared(*this, name);
  if (const char* v = RawEnv(d.name); v != nullptr) return std::string(v);
  return std::nullopt;
}

bool ConfigRegistry::IsSet(std::string_view name) const {
  std::optional<std::string> v = Raw(name);
  return v && !v->empty();
}

std::string ConfigRegistry::GetString(std::string_view name) const {
  const ConfigDecl d = Declared(*this, name);
  const char* v = RawEnv(d.name);
  return v != nullptr && *v != 0 ? std::string(v) : d.default_value;
}

int64_t ConfigRegistry::GetInt(std::string_view name, int64_t min,
                               int64_t max) const {
  const ConfigDecl d = Declared(*this, name);
  const std::string v = GetString(name);
  try {
    return ParseIntText(v, min, max);
  } catch (const std::invalid_argument& e) {
    ThrowInvalidValue(d.name, v, d.allowed, e.what());
  }
}

bool ConfigRegistry::GetBool(std::string_view name) const {
  const ConfigDecl d = Declared(*this, name);
  const std::string v = GetString(name);
  try {
    return ParseBoolText(v);
  } catch (const std::invalid_argument& e) {
    ThrowInvalidValue(d.name, v, d.allowed, e.what());
  }
}

std::string ConfigRegistry::GetChoice(std::string_view name) const {
  const ConfigDecl d = Declared(*this, name);
  const std::string v = GetString(name);
  for (const std::string& c : SplitChoices(d.allowed))
    if (c == v) return v;
  ThrowInvalidValue(d.name, v, d.allowed);
}

std::vector<ConfigRegistry::Unknown> ConfigRegistry::UnknownVariables()
    const {
  std::vector<std::string> known;
  for (const ConfigDecl& d : All()) known.push_back(d.name);
  std::vector<Unknown> unknown;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.substr(0, 6) != "RONDO_") continue;
    std::string name(entry.substr(0, entry.find('=')));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    unknown.push_back({name, NearestName(name, known)});
  }
  return unknown;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // Levenshtein distance, one row at a time.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string NearestName(std::string_view name,
                        const std::vector<std::string>& known) {
  std::vector<std::string> sorted = known;
  std::sort(sorted.begin(), sorted.end());
  std::string best;
  size_t best_distance = 0;
  for (const std::string& k : sorted) {
    const size_t d = EditDistance(name, k);
    if (best.empty() || d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

void ThrowInvalidValue(std::string_view name, std::string_view value,
                       std::string_view allowed, std::string_view detail) {
  std::string msg = "Invalid value for " + std::string(name) + ": '" +
                    std::string(value) + "'. Expected: " +
                    std::string(allowed);
  if (!detail.empty()) msg += " (" + std::string(detail) + ")";
  throw std::invalid_argument(msg);
}

const char* ForeignEnv(const char* name) {
  if (std::string_view(name).substr(0, 6) == "RONDO_")
    throw std::logic_error(std::string(name) +
                           " is Rondo's: read it through the configuration "
                           "registry");
  return RawEnv(name);
}

const char* EnvLookup(const char* name) {
  if (std::string_view(name).substr(0, 6) != "RONDO_") return ForeignEnv(name);
  return RawEnv(Declared(ConfigRegistry::Global(), name).name);
}

bool ParseBoolText(std::string_view text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on")
    return true;
  if (text == "0" || text == "false" || text == "no" || text == "off")
    return false;
  throw std::invalid_argument("not a boolean (1/0, true/false, yes/no, on/off)");
}

int64_t ParseIntText(std::string_view text, int64_t min, int64_t max) {
  if (text.empty()) throw std::invalid_argument("empty number");
  const std::string s(text);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0')
    throw std::invalid_argument("not an integer");
  if (v < min || v > max)
    throw std::invalid_argument("out of range " + std::to_string(min) + ".." +
                                std::to_string(max));
  return v;
}

std::string TypeFromAllowed(std::string_view allowed) {
  if (allowed.substr(0, 10) == "an integer") return "integer";
  if (allowed.substr(0, 3) == "1|0") return "boolean";
  if (allowed.find('|') != std::string_view::npos &&
      allowed.find_first_of("<( ,") == std::string_view::npos)
    return "choice";
  return "string";
}

}  // namespace rondo::base
