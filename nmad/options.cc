#include "nmad/options.h"

#include <sstream>
#include <stdexcept>

#include "nmad/strategies/strategy.h"
#include "topology/base/config_registry.h"

namespace rondo::nmad {
namespace {

using engine::ConfigVar;
using engine::ParseInt;
using Var = ConfigVar<NmadOptions>;

std::vector<std::string> SplitList(const std::string& v) {
  // Every item, including empty ones: "ucx," is two items, the second
  // empty, and is refused by the parsers instead of read as "ucx".
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = v.find(',', start);
    out.push_back(v.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.empty()) out.clear();
  return out;
}

template <typename T>
std::string JoinList(const std::vector<T>& items) {
  std::ostringstream out;
  for (size_t i = 0; i < items.size(); ++i) out << (i ? "," : "") << items[i];
  return out.str();
}

std::vector<Var> MakeTable() {
  return {
      {"RONDO_STRATEGY", "default", "default|aggreg|prio|split_balance",
       "packet scheduler strategy of sessions that do not choose one",
       [](NmadOptions& o, const std::string& v) {
         strategies::MakeStrategy(v);  // validates
         o.strategy = v;
       },
       [](const NmadOptions& o) { return o.strategy; }},
      {"RONDO_EAGER_LIMIT", "16384", "an integer in 0..1048512",
       "largest message sent eagerly; larger ones use rendezvous (above "
       "RONDO_MAX_PACKET - 64, an unset RONDO_MAX_PACKET grows to fit)",
       [](NmadOptions& o, const std::string& v) {
         o.eager_limit = static_cast<size_t>(ParseInt(v, 0, (1 << 20) - 64));
       },
       [](const NmadOptions& o) { return std::to_string(o.eager_limit); }},
      {"RONDO_NET_EAGER_LIMIT", "auto",
       "auto or an integer in 0..1048512 (at most RONDO_MAX_PACKET - 64)",
       "largest message sent eagerly to a rank on another node (auto: "
       "RONDO_EAGER_LIMIT if set, else 65472)",
       [](NmadOptions& o, const std::string& v) {
         o.net_eager_limit =
             v == "auto" ? NmadOptions::kAutoNetEager
                         : static_cast<size_t>(ParseInt(v, 0, (1 << 20) - 64));
       },
       [](const NmadOptions& o) {
         return o.net_eager_limit == NmadOptions::kAutoNetEager
                    ? std::string("auto")
                    : std::to_string(o.net_eager_limit);
       }},
      {"RONDO_MAX_PACKET", "65536", "an integer in 1024..1048576",
       "largest packet handed to a driver",
       [](NmadOptions& o, const std::string& v) {
         o.max_packet = static_cast<size_t>(ParseInt(v, 1024, 1 << 20));
       },
       [](const NmadOptions& o) { return std::to_string(o.max_packet); }},
      {"RONDO_RAILS", "ucx", "comma-separated list of: ucx (1 to 8 rails)",
       "drivers to remote peers, one per rail",
       [](NmadOptions& o, const std::string& v) {
         std::vector<std::string> rails = SplitList(v);
         if (rails.empty() || rails.size() > 8)
           throw std::invalid_argument("1 to 8 rails");
         for (const std::string& r : rails)
           if (r != "ucx") throw std::invalid_argument("unknown driver " + r);
         o.rails = rails;
       },
       [](const NmadOptions& o) { return JoinList(o.rails); }},
      {"RONDO_RAIL_BW", "", "empty or comma-separated MB/s, one per rail",
       "bandwidth of each rail for split_balance (empty: driver estimates)",
       [](NmadOptions& o, const std::string& v) {
         o.rail_bandwidth_mbps.clear();
         for (const std::string& s : SplitList(v))
           o.rail_bandwidth_mbps.push_back(
               static_cast<double>(ParseInt(s, 1, 100000000)));
       },
       [](const NmadOptions& o) { return JoinList(o.rail_bandwidth_mbps); }},
      {"RONDO_UCX_PEER_ERRORS", "0", "0|1",
       "UCX reports peer failures (forces TCP on one node)",
       [](NmadOptions& o, const std::string& v) {
         o.ucx_peer_errors = engine::ParseBool(v);
       },
       [](const NmadOptions& o) {
         return std::string(o.ucx_peer_errors ? "1" : "0");
       }},
      {"RONDO_SHM", "1", "0|1",
       "rail 0 reaches this node's ranks through Rondo's shared-memory "
       "driver and the other nodes' through UCX (0: UCX for every peer, "
       "its own shared memory on one node)",
       [](NmadOptions& o, const std::string& v) {
         o.shm = engine::ParseBool(v);
       },
       [](const NmadOptions& o) { return std::string(o.shm ? "1" : "0"); }},
      {"RONDO_CLOSE_TIMEOUT_MS", "2000", "an integer in 0..600000",
       "how long finalize waits for endpoints to flush",
       [](NmadOptions& o, const std::string& v) {
         o.close_timeout_ms = static_cast<int>(ParseInt(v, 0, 600000));
       },
       [](const NmadOptions& o) { return std::to_string(o.close_timeout_ms); }},
      {"RONDO_RDV_EARLY_DATA", "1", "0|1",
       "rendezvous data posted with the request-to-send (1) or after the "
       "ready-to-receive (0)",
       [](NmadOptions& o, const std::string& v) {
         o.rdv_early_data = engine::ParseBool(v);
       },
       [](const NmadOptions& o) {
         return std::string(o.rdv_early_data ? "1" : "0");
       }},
  };
}

}  // namespace

const std::vector<ConfigVar<NmadOptions>>& NmadOptions::Table() {
  static const std::vector<Var> table = MakeTable();
  return table;
}

std::vector<base::ConfigDecl> NmadDeclarations() {
  return engine::DeclarationsOf(NmadOptions::Table(), "nmad");
}

namespace {
const base::ConfigRegistration kNmadConfig(NmadDeclarations);
}  // namespace

std::vector<std::string_view> NmadVariableNames() {
  std::vector<std::string_view> names;
  for (const auto& v : NmadOptions::Table()) names.emplace_back(v.name);
  return names;
}

NmadOptions NmadOptions::FromEnvironment() {
  NmadOptions o;
  engine::ApplyConfig(Table(), o, /*use_environment=*/true);
  // An eager limit above the default packet (RONDO_EAGER_LIMIT=65536 is
  // the usual 64 KiB) raises the packet to fit it, unless RONDO_MAX_PACKET
  // was set too: then Validate refuses the pair, naming both.
  if (!base::ConfigRegistry::Global().Raw("RONDO_MAX_PACKET")) {
    size_t need = o.eager_limit;
    if (o.net_eager_limit != kAutoNetEager && o.net_eager_limit > need)
      need = o.net_eager_limit;
    if (need > o.max_packet - 64) o.max_packet = (need + 64 + 63) & ~size_t{63};
  }
  o.Validate();
  return o;
}

void NmadOptions::Validate() const {
  strategies::MakeStrategy(strategy);
  if (max_packet < 1024 || max_packet > (1 << 20))
    throw std::invalid_argument("NmadOptions::max_packet " +
                                std::to_string(max_packet) +
                                " is outside 1024..1048576");
  if (eager_limit > max_packet - 64)  // max_packet >= 1024: no wrap-around
    throw std::invalid_argument(
        "NmadOptions::eager_limit " + std::to_string(eager_limit) +
        " must be at most max_packet - 64 = " + std::to_string(max_packet - 64) +
        " (RONDO_EAGER_LIMIT and RONDO_MAX_PACKET)");
  if (net_eager_limit != kAutoNetEager && net_eager_limit > max_packet - 64)
    throw std::invalid_argument(
        "NmadOptions::net_eager_limit " + std::to_string(net_eager_limit) +
        " must be at most max_packet - 64 = " + std::to_string(max_packet - 64) +
        " (RONDO_NET_EAGER_LIMIT and RONDO_MAX_PACKET)");
  if (rails.empty() || rails.size() > 8)
    throw std::invalid_argument("NmadOptions::rails must list 1 to 8 rails");
  for (const std::string& r : rails)
    if (r != "ucx")
      throw std::invalid_argument("NmadOptions::rails: unknown driver '" + r +
                                  "'. Expected: ucx");
  if (close_timeout_ms < 0)
    throw std::invalid_argument("NmadOptions::close_timeout_ms " +
                                std::to_string(close_timeout_ms) +
                                " is negative");
  if (!rail_bandwidth_mbps.empty() &&
      rail_bandwidth_mbps.size() != rails.size())
    throw std::invalid_argument(
        "NmadOptions::rail_bandwidth_mbps has " +
        std::to_string(rail_bandwidth_mbps.size()) + " values for " +
        std::to_string(rails.size()) + " rails");
}

std::string NmadOptions::Describe() const {
  std::string out;
  for (const auto& v : Table()) {
    out += v.name;
    out += '=';
    out += v.print(*this);
    out += "    # ";
    out += v.help;
    out += '\n';
  }
  return out;
}

}  // namespace rondo::nmad
