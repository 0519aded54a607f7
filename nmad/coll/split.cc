#include "nmad/coll/split.h"

#include <array>
#include <string>

namespace rondo::nmad::coll {

std::string_view StepPlaceName(StepPlace place) {
  switch (place) {
    case StepPlace::kComm: return "comm";
    case StepPlace::kAppStart: return "app-start";
    case StepPlace::kAppWait: return "app-wait";
  }
  return "?";
}

std::vector<StepPlace> SplitPlaces(const Schedule& schedule, int s) {
  const auto& steps = schedule.steps;
  std::vector<StepPlace> places(steps.size(), StepPlace::kComm);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    if (step.flow == TreeFlow::kNone || step.level == 0 || step.level > s)
      continue;
    StepPlace place = step.flow == TreeFlow::kUp ? StepPlace::kAppStart
                                                 : StepPlace::kAppWait;
    // The nonblocking call must be able to finish its part without the
    // progress threads or its own Wait: a step that needs anything else
    // waits for Wait (dependencies are on earlier steps, already placed).
    if (place == StepPlace::kAppStart)
      for (uint32_t d : step.deps)
        if (places[d] != StepPlace::kAppStart) place = StepPlace::kAppWait;
    places[i] = place;
  }
  return places;
}

const char* StepTraceName(const Step& step) {
  constexpr int kLevels = 64;
  static const std::array<std::string, 2 * kLevels> names = [] {
    std::array<std::string, 2 * kLevels> n;
    for (int l = 0; l < kLevels; ++l) {
      n[l] = "coll.up.L" + std::to_string(l);
      n[kLevels + l] = "coll.down.L" + std::to_string(l);
    }
    return n;
  }();
  if (step.flow == TreeFlow::kNone || step.level >= kLevels) return "coll.step";
  return names[(step.flow == TreeFlow::kDown ? kLevels : 0) + step.level]
      .c_str();
}

}  // namespace rondo::nmad::coll
