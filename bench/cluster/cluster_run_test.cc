#include "bench/cluster/cluster_run.h"

#include <catch2/catch.hpp>

namespace rondo::bench::cluster {
namespace {

TEST_CASE("RateBits reads tc's units", "[cluster_run]") {
  CHECK(RateBits("1gbit") == 1e9);
  CHECK(RateBits("250mbit") == 250e6);
  CHECK(RateBits("125MBPS") == 1e9);
  CHECK(RateBits("10kbit") == 1e4);
  CHECK(RateBits("gbit") == 0);
  CHECK(RateBits("1.5") == 0);
  CHECK(RateBits("-1gbit") == 0);
  CHECK(RateBits("fast") == 0);
}

// A cluster.sh that is never run: Parse only looks at it for `check`, which
// the cases below never reach (bad arguments are refused first, and 0 asks
// for no cluster).
ClusterArgs Args(std::string cluster) {
  ClusterArgs a;
  a.cluster = std::move(cluster);
  a.cluster_sh = "/nonexistent/cluster.sh";
  return a;
}

TEST_CASE("ClusterPlan::Parse refuses bad arguments, naming them",
          "[cluster_run]") {
  ClusterPlan plan("test", "/nonexistent/test");
  std::string message;

  ClusterArgs a = Args("0");
  REQUIRE(plan.Parse(a, &message) == 0);
  CHECK(plan.hosts() == 0);
  CHECK(message.empty());

  a = Args("1");
  CHECK(plan.Parse(a, &message) == 2);
  CHECK(message.find("--cluster: '1' is not allowed") != std::string::npos);
  CHECK(message.find("2..") != std::string::npos);

  a = Args("two");
  CHECK(plan.Parse(a, &message) == 2);
  CHECK(message.find("'two'") != std::string::npos);

  a = Args("0");
  a.launcher = "ssh";
  CHECK(plan.Parse(a, &message) == 2);
  CHECK(message.find("--launcher: 'ssh'") != std::string::npos);
  CHECK(message.find("mpirun or srun") != std::string::npos);

  a = Args("0");
  a.launcher = "srun";
  CHECK(plan.Parse(a, &message) == 2);
  CHECK(message.find("only allowed with --cluster K") != std::string::npos);

  a = Args("2");
  a.rate = "fast";
  a.inside = true;
  CHECK(plan.Parse(a, &message) == 2);
  CHECK(message.find("--rate: 'fast'") != std::string::npos);
}

TEST_CASE("ClusterPlan::Parse inside checks that it is inside",
          "[cluster_run]") {
  ClusterPlan plan("test", "/nonexistent/test");
  std::string message;
  ClusterArgs a = Args("2");
  a.inside = true;
  unsetenv("CLUSTER_SH");
  CHECK(plan.Parse(a, &message) == 2);
  CHECK(message.find("not inside `cluster.sh run 2`") != std::string::npos);
  setenv("CLUSTER_SH", "/nonexistent/cluster.sh", 1);
  setenv("CLUSTER_HOSTS", "2", 1);
  REQUIRE(plan.Parse(a, &message) == 0);
  CHECK(plan.hosts() == 2);
  CHECK(plan.rate_bits() == 1e9);
  CHECK(plan.JobLauncher() == Launcher::kClusterOpenMpi);
  a.launcher = "srun";
  CHECK(plan.Parse(a, &message) == 2);
  CHECK(message.find("slurm run") != std::string::npos);
}

}  // namespace
}  // namespace rondo::bench::cluster
