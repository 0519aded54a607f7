// Small text helpers shared by the topology package's parsers.
#ifndef RONDO_TOPOLOGY_INTERNAL_TEXT_H_
#define RONDO_TOPOLOGY_INTERNAL_TEXT_H_

#include <cctype>
#include <string_view>

namespace rondo::topology::internal {

// `s` without leading and trailing white space.
inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

}  // namespace rondo::topology::internal

#endif  // RONDO_TOPOLOGY_INTERNAL_TEXT_H_
