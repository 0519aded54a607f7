#include "topology/base/config_registry.h"

#include <cstdlib>
#include <stdexcept>

#include <catch2/catch.hpp>

namespace rondo::base {
namespace {

std::vector<ConfigDecl> TestDeclarations() {
  return {
      {"RONDO_QUEUE", "engine", "choice", "spin", "spin|lockfree",
       "queue implementation"},
      {"RONDO_QUEUE_CAPACITY", "engine", "integer", "1024",
       "an integer in 1..1048576", "preallocated nodes"},
      {"RONDO_BIND", "engine", "boolean", "1", "1|0", "bind threads"},
      {"RONDO_EAGER_LIMIT", "nmad", "integer", "16384",
       "an integer in 0..65472", "eager limit"},
  };
}

std::vector<ConfigDecl> Duplicate() {
  return {{"RONDO_QUEUE", "other", "string", "", "anything", "again"}};
}

std::string Message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST_CASE("declarations are listed sorted by component then name") {
  ConfigRegistry r({TestDeclarations});
  auto all = r.All();
  REQUIRE(all.size() == 4);
  CHECK(all[0].name == "RONDO_BIND");
  CHECK(all[1].name == "RONDO_QUEUE");
  CHECK(all[2].name == "RONDO_QUEUE_CAPACITY");
  CHECK(all[3].component == "nmad");
  CHECK(r.Find("RONDO_QUEUE")->allowed == "spin|lockfree");
  CHECK(!r.Find("RONDO_NOPE"));
}

TEST_CASE("a name declared twice is a bug") {
  ConfigRegistry r({TestDeclarations, Duplicate});
  CHECK_THROWS_AS(r.All(), std::logic_error);
}

TEST_CASE("reading an undeclared variable is a bug") {
  ConfigRegistry r({TestDeclarations});
  CHECK_THROWS_AS(r.GetString("RONDO_NOT_DECLARED"), std::logic_error);
  CHECK_THROWS_AS(ForeignEnv("RONDO_QUEUE"), std::logic_error);
  setenv("RONDO_TEST_FOREIGN_CONTRAST", "1", 1);
  CHECK_THROWS_AS(ForeignEnv("RONDO_TEST_FOREIGN_CONTRAST"), std::logic_error);
  unsetenv("RONDO_TEST_FOREIGN_CONTRAST");
  setenv("NOT_RONDO_TEST_VARIABLE", "/x", 1);
  CHECK(std::string(ForeignEnv("NOT_RONDO_TEST_VARIABLE")) == "/x");
  unsetenv("NOT_RONDO_TEST_VARIABLE");
}

TEST_CASE("unset variables give the declared default") {
  ConfigRegistry r({TestDeclarations});
  unsetenv("RONDO_QUEUE");
  unsetenv("RONDO_QUEUE_CAPACITY");
  unsetenv("RONDO_BIND");
  CHECK(r.GetChoice("RONDO_QUEUE") == "spin");
  CHECK(r.GetInt("RONDO_QUEUE_CAPACITY", 1, 1 << 20) == 1024);
  CHECK(r.GetBool("RONDO_BIND"));
  CHECK(!r.IsSet("RONDO_QUEUE"));
  CHECK(!r.Raw("RONDO_QUEUE"));
}

TEST_CASE("set variables are parsed strictly") {
  ConfigRegistry r({TestDeclarations});
  setenv("RONDO_QUEUE", "lockfree", 1);
  setenv("RONDO_QUEUE_CAPACITY", "64", 1);
  setenv("RONDO_BIND", "off", 1);
  CHECK(r.GetChoice("RONDO_QUEUE") == "lockfree");
  CHECK(r.GetInt("RONDO_QUEUE_CAPACITY", 1, 1 << 20) == 64);
  CHECK(!r.GetBool("RONDO_BIND"));
  CHECK(r.IsSet("RONDO_QUEUE"));
  unsetenv("RONDO_QUEUE");
  unsetenv("RONDO_QUEUE_CAPACITY");
  unsetenv("RONDO_BIND");
}

TEST_CASE("a bad value is refused naming the variable, value and allowed") {
  ConfigRegistry r({TestDeclarations});
  setenv("RONDO_QUEUE", "fast", 1);
  CHECK(Message([&] { r.GetChoice("RONDO_QUEUE"); }) ==
        "Invalid value for RONDO_QUEUE: 'fast'. Expected: spin|lockfree");
  setenv("RONDO_QUEUE_CAPACITY", "12x", 1);
  CHECK(Message([&] { r.GetInt("RONDO_QUEUE_CAPACITY", 1, 1 << 20); }) ==
        "Invalid value for RONDO_QUEUE_CAPACITY: '12x'. Expected: an integer "
        "in 1..1048576 (not an integer)");
  setenv("RONDO_QUEUE_CAPACITY", "0", 1);
  CHECK(Message([&] { r.GetInt("RONDO_QUEUE_CAPACITY", 1, 1 << 20); }) ==
        "Invalid value for RONDO_QUEUE_CAPACITY: '0'. Expected: an integer "
        "in 1..1048576 (out of range 1..1048576)");
  setenv("RONDO_BIND", "maybe", 1);
  CHECK(Message([&] { r.GetBool("RONDO_BIND"); })
            .starts_with("Invalid value for RONDO_BIND: 'maybe'. Expected: 1|0"));
  unsetenv("RONDO_QUEUE");
  unsetenv("RONDO_QUEUE_CAPACITY");
  unsetenv("RONDO_BIND");
}

TEST_CASE("an unknown RONDO_ variable is reported with the nearest name") {
  ConfigRegistry r({TestDeclarations});
  setenv("RONDO_QUEUEE", "spin", 1);
  setenv("RONDO_EAGER_LIMT", "1", 1);
  setenv("RONDO_QUEUE", "spin", 1);  // known: not reported
  auto unknown = r.UnknownVariables();
  unsetenv("RONDO_QUEUEE");
  unsetenv("RONDO_EAGER_LIMT");
  unsetenv("RONDO_QUEUE");
  REQUIRE(unknown.size() == 2);
  std::sort(unknown.begin(), unknown.end(),
            [](auto& a, auto& b) { return a.name < b.name; });
  CHECK(unknown[0].name == "RONDO_EAGER_LIMT");
  CHECK(unknown[0].nearest == "RONDO_EAGER_LIMIT");
  CHECK(unknown[1].name == "RONDO_QUEUEE");
  CHECK(unknown[1].nearest == "RONDO_QUEUE");
}

TEST_CASE("edit distance and nearest name") {
  CHECK(EditDistance("", "") == 0);
  CHECK(EditDistance("abc", "abc") == 0);
  CHECK(EditDistance("RONDO_QUEUEE", "RONDO_QUEUE") == 1);
  CHECK(EditDistance("kitten", "sitting") == 3);
  CHECK(NearestName("RONDO_BINF", {"RONDO_QUEUE", "RONDO_BIND"}) ==
        "RONDO_BIND");
  CHECK(NearestName("X", {}).empty());
}

TEST_CASE("types derived from allowed values") {
  CHECK(TypeFromAllowed("an integer in 1..5") == "integer");
  CHECK(TypeFromAllowed("1|0 (also true/false)") == "boolean");
  CHECK(TypeFromAllowed("spin|lockfree") == "choice");
  CHECK(TypeFromAllowed("a file path") == "string");
}

}  // namespace
}  // namespace rondo::base
