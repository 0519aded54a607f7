// Status and Result<T> (topology/base/status.h), and engine/status.h's
// forwarding names: the same types, so both spellings mix freely.
#include "topology/base/status.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <type_traits>

#include "engine/status.h"

namespace rondo::base {
namespace {

TEST_CASE("status: names and errors") {
  CHECK(StatusName(Status::kOk) == "ok");
  CHECK(StatusName(Status::kPeerFailed) == "peer failed");
  CHECK(StatusName(static_cast<Status>(999)) == "unknown status");
  CHECK_FALSE(IsError(Status::kOk));
  CHECK_FALSE(IsError(Status::kInProgress));
  CHECK(IsError(Status::kNoResource));
  CHECK(IsError(Status::kTruncated));
}

TEST_CASE("status: Result holds a value or a status") {
  Result<std::string> v(std::string("x"));
  CHECK(v.ok());
  CHECK(v.status() == Status::kOk);
  CHECK(v.value() == "x");
  Result<std::unique_ptr<int>> e(Status::kUnsupported);
  CHECK_FALSE(e.ok());
  CHECK(e.status() == Status::kUnsupported);
  Result<std::unique_ptr<int>> m(std::make_unique<int>(3));
  std::unique_ptr<int> p = std::move(m).value();
  CHECK(*p == 3);
}

TEST_CASE("status: engine's names are the same types") {
  static_assert(std::is_same_v<engine::Status, Status>);
  static_assert(std::is_same_v<engine::Result<int>, Result<int>>);
  engine::Status s = Status::kBusy;
  CHECK(engine::StatusName(s) == "busy");
  CHECK(engine::IsError(s));
}

}  // namespace
}  // namespace rondo::base
