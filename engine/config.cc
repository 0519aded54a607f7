#include "engine/config.h"

namespace rondo::engine {

int64_t ParseInt(const std::string& text, int64_t min, int64_t max) {
  return base::ParseIntText(text, min, max);
}

bool ParseBool(const std::string& text) { return base::ParseBoolText(text); }

}  // namespace rondo::engine
