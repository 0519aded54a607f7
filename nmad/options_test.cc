// Tests of NmadOptions: defaults, each RONDO_* variable of its table, strict
// error messages, Validate(), and that the engine knows every nmad variable
// (so EngineOptions::FromEnvironment does not warn about them).
#include "nmad/options.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/options.h"

namespace rondo::nmad {
namespace {

// Sets RONDO_* variables for one test and restores the previous environment
// (every nmad variable, set or not) when it goes out of scope.
class Env {
 public:
  Env() {
    for (std::string_view n : NmadVariableNames()) {
      const std::string name(n);
      const char* v = std::getenv(name.c_str());
      saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
      unsetenv(name.c_str());
    }
  }
  ~Env() {
    for (const auto& [name, value] : saved_) {
      if (value) setenv(name.c_str(), value->c_str(), 1);
      else unsetenv(name.c_str());
    }
  }
  Env& Set(const char* name, const std::string& value) {
    REQUIRE(saved_.count(name) == 1);  // only nmad variables
    setenv(name, value.c_str(), 1);
    return *this;
  }
  Env& Unset(const char* name) {
    unsetenv(name);
    return *this;
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

const engine::ConfigVar<NmadOptions>& Var(std::string_view name) {
  for (const auto& v : NmadOptions::Table())
    if (name == v.name) return v;
  FAIL("no variable " << name);
  throw 0;
}

// FromEnvironment() with `name` = `value` must throw the standard message.
void ExpectInvalid(const char* name, const std::string& value) {
  Env env;
  env.Set(name, value);
  INFO(name << "='" << value << "'");
  try {
    NmadOptions::FromEnvironment();
    FAIL_CHECK("accepted");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::StartsWith("Invalid value for " +
                                      std::string(name) + ": '" + value +
                                      "'. Expected: " +
                                      std::string(Var(name).expected)));
  }
}

void ExpectValidateError(const NmadOptions& o, const std::string& part) {
  try {
    o.Validate();
    FAIL_CHECK("Validate() accepted the options");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains(part));
  }
}

TEST_CASE("Defaults", "[options]") {
  NmadOptions o;
  CHECK(o.strategy == "default");
  CHECK(o.eager_limit == 16 * 1024);
  CHECK(o.max_packet == 64 * 1024);
  CHECK(o.rails == std::vector<std::string>{"ucx"});
  CHECK(o.rail_bandwidth_mbps.empty());
  CHECK_FALSE(o.ucx_peer_errors);
  CHECK(o.shm);  // Rondo's shared memory for the node's ranks (issue 28)
  CHECK(o.close_timeout_ms == 2000);
  CHECK_NOTHROW(o.Validate());

  Env env;  // nothing set
  NmadOptions e = NmadOptions::FromEnvironment();
  CHECK(e.Describe() == o.Describe());
}

TEST_CASE("Table defaults match the struct's initialisers", "[options]") {
  const NmadOptions defaults;
  for (const auto& v : NmadOptions::Table()) {
    INFO(v.name);
    CHECK(v.print(defaults) == v.default_value);
    NmadOptions o;
    v.parse(o, v.default_value);
    CHECK(o.Describe() == defaults.Describe());
    CHECK(std::string(v.expected).size() > 0);
    CHECK(std::string(v.help).size() > 0);
  }
}

TEST_CASE("Describe lists every variable with its value", "[options]") {
  NmadOptions o;
  o.strategy = "prio";
  o.rails = {"ucx", "ucx"};
  o.rail_bandwidth_mbps = {1000, 3000};
  const std::string d = o.Describe();
  for (std::string_view n : NmadVariableNames())
    CHECK_THAT(d, Catch::Contains(std::string(n) + "="));
  CHECK_THAT(d, Catch::Contains("RONDO_STRATEGY=prio"));
  CHECK_THAT(d, Catch::Contains("RONDO_RAILS=ucx,ucx"));
  CHECK_THAT(d, Catch::Contains("RONDO_RAIL_BW=1000,3000"));
  CHECK_THAT(d, Catch::Contains("RONDO_EAGER_LIMIT=16384"));
}

TEST_CASE("RONDO_STRATEGY", "[options]") {
  for (const char* name : {"default", "aggreg", "prio", "split_balance"}) {
    Env env;
    env.Set("RONDO_STRATEGY", name);
    CHECK(NmadOptions::FromEnvironment().strategy == name);
  }
  for (const char* bad : {"", "fast", "Default", "prio "}) {
    ExpectInvalid("RONDO_STRATEGY", bad);
  }
  Env env;
  env.Set("RONDO_STRATEGY", "fast");
  CHECK_THROWS_WITH(NmadOptions::FromEnvironment(),
                    Catch::Contains("default|aggreg|prio|split_balance") &&
                        Catch::Contains("Unknown strategy 'fast'"));
}

TEST_CASE("RONDO_EAGER_LIMIT", "[options]") {
  {
    Env env;
    env.Set("RONDO_EAGER_LIMIT", "0");
    CHECK(NmadOptions::FromEnvironment().eager_limit == 0);
  }
  {
    Env env;
    env.Set("RONDO_EAGER_LIMIT", "65472");  // default max_packet - 64
    CHECK(NmadOptions::FromEnvironment().eager_limit == 65472);
  }
  {
    Env env;
    env.Set("RONDO_EAGER_LIMIT", "1048512").Set("RONDO_MAX_PACKET", "1048576");
    NmadOptions o = NmadOptions::FromEnvironment();
    CHECK(o.eager_limit == 1048512);
    CHECK(o.max_packet == 1048576);
  }
  for (const char* bad : {"", "abc", "-1", "1048513", "16k", "1e4", "12 "})
    ExpectInvalid("RONDO_EAGER_LIMIT", bad);
  {
    // Above the default packet: the packet grows to fit it (64-byte steps).
    Env env;
    env.Set("RONDO_EAGER_LIMIT", "65536");
    NmadOptions o = NmadOptions::FromEnvironment();
    CHECK(o.eager_limit == 65536);
    CHECK(o.max_packet == 65600);
    CHECK(o.NetEagerLimit() == 65536);
    env.Set("RONDO_EAGER_LIMIT", "65473");
    CHECK(NmadOptions::FromEnvironment().max_packet == 65600);
    env.Set("RONDO_EAGER_LIMIT", "1048512");
    CHECK(NmadOptions::FromEnvironment().max_packet == 1048576);
    env.Set("RONDO_EAGER_LIMIT", "100").Set("RONDO_NET_EAGER_LIMIT", "70000");
    o = NmadOptions::FromEnvironment();
    CHECK(o.max_packet == 70080);
    CHECK(o.NetEagerLimit() == 70000);
  }
  {
    // Too large for a packet size that was set too: Validate names both.
    Env env;
    env.Set("RONDO_EAGER_LIMIT", "65473").Set("RONDO_MAX_PACKET", "65536");
    CHECK_THROWS_WITH(NmadOptions::FromEnvironment(),
                      Catch::Contains("eager_limit 65473") &&
                          Catch::Contains("max_packet - 64 = 65472") &&
                          Catch::Contains("RONDO_MAX_PACKET"));
  }
}

TEST_CASE("RONDO_NET_EAGER_LIMIT", "[options]") {
  {
    // auto: 64 KiB - 64 to other nodes while the node's limit is the default.
    Env env;
    NmadOptions o = NmadOptions::FromEnvironment();
    CHECK(o.net_eager_limit == NmadOptions::kAutoNetEager);
    CHECK(o.eager_limit == 16384);
    CHECK(o.NetEagerLimit() == 65472);
  }
  {
    // auto follows a RONDO_EAGER_LIMIT that was set (0 forces rendezvous
    // everywhere), and is capped by a smaller packet.
    Env env;
    env.Set("RONDO_EAGER_LIMIT", "0");
    CHECK(NmadOptions::FromEnvironment().NetEagerLimit() == 0);
  }
  {
    Env env;
    env.Set("RONDO_MAX_PACKET", "8192");
    env.Set("RONDO_EAGER_LIMIT", "4096");
    CHECK(NmadOptions::FromEnvironment().NetEagerLimit() == 4096);
  }
  {
    NmadOptions o;
    o.max_packet = 8192;
    CHECK(o.NetEagerLimit() == 8128);
  }
  {
    Env env;
    env.Set("RONDO_NET_EAGER_LIMIT", "32768").Set("RONDO_EAGER_LIMIT", "0");
    NmadOptions o = NmadOptions::FromEnvironment();
    CHECK(o.NetEagerLimit() == 32768);
    CHECK(o.eager_limit == 0);
  }
  {
    Env env;
    env.Set("RONDO_NET_EAGER_LIMIT", "auto");
    CHECK(NmadOptions::FromEnvironment().NetEagerLimit() == 65472);
  }
  for (const char* bad : {"", "Auto", "-1", "1048513", "64k"})
    ExpectInvalid("RONDO_NET_EAGER_LIMIT", bad);
  {
    Env env;
    env.Set("RONDO_NET_EAGER_LIMIT", "65473");
    CHECK(NmadOptions::FromEnvironment().max_packet == 65600);
    env.Set("RONDO_MAX_PACKET", "65536");
    CHECK_THROWS_WITH(NmadOptions::FromEnvironment(),
                      Catch::Contains("net_eager_limit 65473") &&
                          Catch::Contains("max_packet - 64 = 65472") &&
                          Catch::Contains("RONDO_NET_EAGER_LIMIT"));
  }
}

TEST_CASE("RONDO_MAX_PACKET", "[options]") {
  {
    Env env;
    env.Set("RONDO_MAX_PACKET", "1024").Set("RONDO_EAGER_LIMIT", "960");
    NmadOptions o = NmadOptions::FromEnvironment();
    CHECK(o.max_packet == 1024);
    CHECK(o.eager_limit == 960);
  }
  {
    Env env;
    env.Set("RONDO_MAX_PACKET", "1048576");
    CHECK(NmadOptions::FromEnvironment().max_packet == 1048576);
  }
  {
    // Smaller than the default eager limit allows.
    Env env;
    env.Set("RONDO_MAX_PACKET", "1024");
    CHECK_THROWS_WITH(NmadOptions::FromEnvironment(),
                      Catch::Contains("eager_limit"));
  }
  for (const char* bad : {"", "1023", "1048577", "64k", "0x10000", "-65536"})
    ExpectInvalid("RONDO_MAX_PACKET", bad);
}

TEST_CASE("RONDO_RAILS", "[options]") {
  {
    Env env;
    env.Set("RONDO_RAILS", "ucx");
    CHECK(NmadOptions::FromEnvironment().rails ==
          std::vector<std::string>{"ucx"});
  }
  {
    Env env;
    env.Set("RONDO_RAILS", "ucx,ucx");
    CHECK(NmadOptions::FromEnvironment().rails ==
          std::vector<std::string>{"ucx", "ucx"});
  }
  {
    Env env;
    env.Set("RONDO_RAILS", "ucx,ucx,ucx,ucx,ucx,ucx,ucx,ucx");
    CHECK(NmadOptions::FromEnvironment().rails.size() == 8);
  }
  for (const char* bad : {"", "tcp", "ucx,tcp", "UCX", ",ucx", "ucx,,ucx",
                          "ucx,ucx,ucx,ucx,ucx,ucx,ucx,ucx,ucx"})
    ExpectInvalid("RONDO_RAILS", bad);
}

// Regression: SplitList once used std::getline, which drops a trailing empty
// item, so "ucx," was accepted as one rail while ",ucx" was rejected.
TEST_CASE("A trailing comma in a list is rejected", "[options]") {
  ExpectInvalid("RONDO_RAILS", "ucx,");
  ExpectInvalid("RONDO_RAIL_BW", "1000,");
}

TEST_CASE("RONDO_RAIL_BW", "[options]") {
  {
    Env env;
    env.Set("RONDO_RAIL_BW", "");
    CHECK(NmadOptions::FromEnvironment().rail_bandwidth_mbps.empty());
  }
  {
    Env env;
    env.Set("RONDO_RAIL_BW", "12500");
    CHECK(NmadOptions::FromEnvironment().rail_bandwidth_mbps ==
          std::vector<double>{12500});
  }
  {
    Env env;
    env.Set("RONDO_RAILS", "ucx,ucx").Set("RONDO_RAIL_BW", "1000,3000");
    NmadOptions o = NmadOptions::FromEnvironment();
    CHECK(o.rail_bandwidth_mbps == std::vector<double>{1000, 3000});
    CHECK(o.rails.size() == 2);
  }
  {
    // One value for two rails: rejected by Validate.
    Env env;
    env.Set("RONDO_RAILS", "ucx,ucx").Set("RONDO_RAIL_BW", "1000");
    CHECK_THROWS_WITH(NmadOptions::FromEnvironment(),
                      Catch::Contains("rail_bandwidth_mbps has 1 values for 2 rails"));
  }
  for (const char* bad : {"abc", "0", "-5", "1.5", "100000001", "1000,,2000",
                          ",1000", "1000;2000"})
    ExpectInvalid("RONDO_RAIL_BW", bad);
}

TEST_CASE("RONDO_UCX_PEER_ERRORS", "[options]") {
  for (const char* on : {"1", "true", "yes", "on"}) {
    Env env;
    env.Set("RONDO_UCX_PEER_ERRORS", on);
    CHECK(NmadOptions::FromEnvironment().ucx_peer_errors);
  }
  for (const char* off : {"0", "false", "no", "off"}) {
    Env env;
    env.Set("RONDO_UCX_PEER_ERRORS", off);
    CHECK_FALSE(NmadOptions::FromEnvironment().ucx_peer_errors);
  }
  for (const char* bad : {"", "2", "maybe", "TRUE ", "enabled"})
    ExpectInvalid("RONDO_UCX_PEER_ERRORS", bad);
}

TEST_CASE("RONDO_SHM", "[options]") {
  {
    Env env;
    env.Unset("RONDO_SHM");
    CHECK(NmadOptions::FromEnvironment().shm);  // the default
  }
  for (const char* on : {"1", "true", "yes", "on"}) {
    Env env;
    env.Set("RONDO_SHM", on);
    CHECK(NmadOptions::FromEnvironment().shm);
  }
  for (const char* off : {"0", "false", "no", "off"}) {
    Env env;
    env.Set("RONDO_SHM", off);
    CHECK_FALSE(NmadOptions::FromEnvironment().shm);
  }
  for (const char* bad : {"", "2", "shm"}) ExpectInvalid("RONDO_SHM", bad);
}

TEST_CASE("RONDO_CLOSE_TIMEOUT_MS", "[options]") {
  for (int ms : {0, 1, 2000, 600000}) {
    Env env;
    env.Set("RONDO_CLOSE_TIMEOUT_MS", std::to_string(ms));
    CHECK(NmadOptions::FromEnvironment().close_timeout_ms == ms);
  }
  for (const char* bad : {"", "-1", "600001", "1s", "2.5", "99999999999999999999"})
    ExpectInvalid("RONDO_CLOSE_TIMEOUT_MS", bad);
}

TEST_CASE("RONDO_RDV_EARLY_DATA", "[options]") {
  CHECK(NmadOptions{}.rdv_early_data);
  for (const char* off : {"0", "false", "no", "off"}) {
    Env env;
    env.Set("RONDO_RDV_EARLY_DATA", off);
    CHECK_FALSE(NmadOptions::FromEnvironment().rdv_early_data);
  }
  for (const char* bad : {"", "2", "later"})
    ExpectInvalid("RONDO_RDV_EARLY_DATA", bad);
}

TEST_CASE("The error message names the variable, value and expected forms",
          "[options]") {
  Env env;
  env.Set("RONDO_CLOSE_TIMEOUT_MS", "1s");
  CHECK_THROWS_WITH(NmadOptions::FromEnvironment(),
                    "Invalid value for RONDO_CLOSE_TIMEOUT_MS: '1s'. Expected: "
                    "an integer in 0..600000 (not an integer)");
  env.Unset("RONDO_CLOSE_TIMEOUT_MS").Set("RONDO_EAGER_LIMIT", "2000000");
  CHECK_THROWS_WITH(NmadOptions::FromEnvironment(),
                    "Invalid value for RONDO_EAGER_LIMIT: '2000000'. Expected: "
                    "an integer in 0..1048512 (out of range 0..1048512)");
}

TEST_CASE("Validate", "[options]") {
  SECTION("eager_limit up to max_packet - 64") {
    NmadOptions o;
    o.eager_limit = o.max_packet - 64;
    CHECK_NOTHROW(o.Validate());
    o.eager_limit = o.max_packet - 63;
    ExpectValidateError(o, "NmadOptions::eager_limit 65473 must be at most "
                           "max_packet - 64 = 65472");
    o.max_packet = 1024;
    o.eager_limit = 961;
    ExpectValidateError(o, "max_packet - 64 = 960");
  }
  SECTION("max_packet range") {
    NmadOptions o;
    o.eager_limit = 0;
    o.max_packet = 1023;
    ExpectValidateError(o, "max_packet 1023 is outside 1024..1048576");
    o.max_packet = (1 << 20) + 1;
    ExpectValidateError(o, "is outside 1024..1048576");
    o.max_packet = 1024;
    CHECK_NOTHROW(o.Validate());
  }
  SECTION("rails") {
    NmadOptions o;
    o.rails.clear();
    ExpectValidateError(o, "rails must list 1 to 8 rails");
    o.rails.assign(9, "ucx");
    ExpectValidateError(o, "rails must list 1 to 8 rails");
    o.rails.assign(8, "ucx");
    CHECK_NOTHROW(o.Validate());
    o.rails = {"ucx", "tcp"};
    ExpectValidateError(o, "unknown driver 'tcp'");
  }
  SECTION("rail_bandwidth_mbps count") {
    NmadOptions o;
    o.rails = {"ucx", "ucx"};
    o.rail_bandwidth_mbps = {1000};
    ExpectValidateError(o, "rail_bandwidth_mbps has 1 values for 2 rails");
    o.rail_bandwidth_mbps = {1000, 2000, 3000};
    ExpectValidateError(o, "has 3 values for 2 rails");
    o.rail_bandwidth_mbps = {1000, 2000};
    CHECK_NOTHROW(o.Validate());
    o.rail_bandwidth_mbps.clear();
    CHECK_NOTHROW(o.Validate());
  }
  SECTION("strategy") {
    NmadOptions o;
    o.strategy = "fastest";
    ExpectValidateError(o, "Unknown strategy 'fastest'");
  }
}

// Regression: Validate once checked `eager_limit + 64 > max_packet`, which
// wraps around for a huge eager_limit set directly by a caller (SIZE_MAX, or
// (size_t)-1 from a negative int); every message would then go eager.
TEST_CASE("Validate rejects a huge eager_limit", "[options]") {
  NmadOptions o;
  o.eager_limit = std::numeric_limits<size_t>::max();
  ExpectValidateError(o, "eager_limit");
  o.eager_limit = std::numeric_limits<size_t>::max() - 63;
  ExpectValidateError(o, "eager_limit");
}

TEST_CASE("The registry declares every nmad variable", "[options]") {
  const auto& registry = base::ConfigRegistry::Global();
  const std::vector<std::string_view> nmad = NmadVariableNames();
  REQUIRE(nmad.size() == NmadOptions::Table().size());
  REQUIRE(nmad.size() == 10);
  for (std::string_view name : nmad) {
    INFO(name);
    CHECK(name.substr(0, 6) == "RONDO_");
    auto d = registry.Find(name);
    REQUIRE(d);
    CHECK(d->component == "nmad");
  }
  // And through the start-up check: with every nmad variable set (to
  // valid values), none is reported as unknown.
  Env env;
  for (const auto& v : NmadOptions::Table())
    setenv(v.name, v.default_value, 1);
  for (const auto& u : registry.UnknownVariables())
    CHECK(std::find(nmad.begin(), nmad.end(), u.name) == nmad.end());
  CHECK_NOTHROW(NmadOptions::FromEnvironment());
}

}  // namespace
}  // namespace rondo::nmad
