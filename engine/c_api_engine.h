// The engine behind the C API (engine/rondo_engine.h), for the layers above
// the engine that offer C APIs of their own over the same process-wide
// instance (nmad/rondo_nmad.h): they create the engine with options only
// they know (the node's placement, learnt through the job's bootstrap) and
// hand it over, so that rondo_engine_run_once(), rondo_task_submit() and
// the traces act on it. rondo_engine_finalize() destroys it.
#ifndef RONDO_ENGINE_C_API_ENGINE_H_
#define RONDO_ENGINE_C_API_ENGINE_H_

#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/status.h"

namespace rondo::engine::capi {

// The C API's engine, or null before rondo_engine_init() / Install().
Engine* Get() noexcept;

// Makes `engine` the C API's engine. kBusy (with *error) when one exists,
// kInvalidArgument for null.
Status Install(std::unique_ptr<Engine> engine, std::string* error = nullptr);

// The C APIs' RONDO_* code for `s` (rondo_engine.h), shared by every C API
// built over the engine so that one Status always maps to one code.
int Code(Status s) noexcept;

}  // namespace rondo::engine::capi

#endif  // RONDO_ENGINE_C_API_ENGINE_H_
