// Status and Result<T> as the engine and the layers above name them
// (engine::Status, engine::Result): forwarding names for the base package,
// topology/base/status.h, which every layer uses.
#ifndef RONDO_ENGINE_STATUS_H_
#define RONDO_ENGINE_STATUS_H_

#include "topology/base/status.h"

namespace rondo::engine {

using base::IsError;
using base::Result;
using base::Status;
using base::StatusName;

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_STATUS_H_
