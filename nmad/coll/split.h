// Split-tree placement of a schedule's steps (Denis, Jaeger, Jeannot,
// Pérache, Taboada, IJHPCA 2019, Sections 6.1 and 6.3).
//
// A binomial-tree collective has H(N) levels; its lowest levels are the
// widest (level 1 has about N/2 messages). Folded on the few communication
// cores, they are serialised; run on the application cores they cannot
// overlap computation. The split-tree algorithm runs the levels 1..S on the
// application threads and the levels S+1..H(N) on the progress threads of
// the communication cores:
//   all-to-one flow (TreeFlow::kUp: reduce, gather, allreduce's reduce half):
//     levels 1..S run in the nonblocking call itself, before it returns
//     (StepPlace::kAppStart); the rest is handed to the progress threads.
//   one-to-all flow (TreeFlow::kDown: bcast, scatter, allreduce's bcast
//     half): levels S+1..H(N) run on the progress threads first, levels
//     1..S inside MPI_Wait/MPI_Test on the application thread
//     (StepPlace::kAppWait).
// S = 0 runs everything on the communication cores; S >= H(N) everything on
// the application threads. Steps outside the tree (TreeFlow::kNone) always
// run on the communication cores. The schedule itself (messages, tags,
// dependencies) does not change with S, so neither do the results.
//
// Pure functions; thread-safe.
#ifndef RONDO_NMAD_COLL_SPLIT_H_
#define RONDO_NMAD_COLL_SPLIT_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "nmad/coll/schedule.h"

namespace rondo::nmad::coll {

enum class StepPlace : uint8_t {
  kComm,      // an engine task on the communication (progress) cores
  kAppStart,  // the application thread, inside the nonblocking call
  kAppWait,   // the application thread, inside Wait/Test
};

std::string_view StepPlaceName(StepPlace place);  // "comm", "app-start", ...

// The place of every step of `schedule` split at `s` (s >= 0). Each
// kAppStart step depends (transitively) only on kAppStart steps, so the
// nonblocking call never waits for its own Wait.
std::vector<StepPlace> SplitPlaces(const Schedule& schedule, int s);

// Trace name of a step: "coll.up.L3", "coll.down.L1", or "coll.step" outside
// trees (static storage; for engine::TaskOptions::name).
const char* StepTraceName(const Step& step);

}  // namespace rondo::nmad::coll

#endif  // RONDO_NMAD_COLL_SPLIT_H_
