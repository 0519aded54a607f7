// bench/apps/starpu_cholesky: a real tiled Cholesky on StarPU 1.3 with Rondo as
// its communication backend (bench/apps/starpu_cholesky.c, nmad/starpu), naive
// point-to-point sends against dynamic broadcasts in the same job, on the
// emulated cluster of bench/cluster (one rank per host, rate-limited links,
// UCX over TCP) and in shared memory; plus the two questions of issue 19
// about progress: StarPU's idle workers (the progression hook, the
// default) against a Rondo progress thread, and the hook's cost on a
// compute-only run. See docs/starpu.md.
//
//   bazel run -c opt //bench/apps:starpu_cholesky -- [--json FILE]
//       [--hosts 4,9] [--shm 4] [--n 8192] [--tile 512] [--rate 1gbit]
//       [--reps 3] [--warmup 1] [--progress-compare HOSTS] [--overhead]
//       [--overhead-n N] [--trace-dir DIR] [--no-check] [--timeout S]
//
// Jobs, one at a time:
//   cluster  for each --hosts H: H emulated hosts (cluster.sh run H --rate),
//            rondo-run -n H with each rank in its host; modes naive and
//            dynamic alternate in the job (ABBA). --hosts 0 skips them.
//   shm      --shm R ranks on this machine (0 skips), same modes.
//   progress --progress-compare H: H hosts, dynamic mode, once with Rondo's
//            defaults (StarPU's idle workers run Rondo's progress; quiet
//            progress covers the rest) and once with RONDO_PROGRESS=bind (a
//            Rondo progress thread always on, on the rank's core).
//   overhead --overhead: one rank, every core a StarPU worker, no
//            communication: StarPU alone (--backend none) against StarPU
//            with rondo_starpu and its hook, alternating, --reps each.
// Every job runs with OPENBLAS_NUM_THREADS=1, STARPU_SCHED=prio and
// STARPU_SILENT=1; cluster hosts get STARPU_NCPU = their cores.
//
// Output: a table per job, and with --json FILE the schema of
// bench/common/report.h:
//   starpu_cholesky:<naive|dynamic>:<H|shm>  median_ns, min_ns, p99_ns,
//       gflops (median), wait_ns (median of the mean worker wait), residual,
//       ratio_vs_naive (dynamic), broadcasts, bcast_recipients,
//       single_sends, missed, hook_calls, hook_work, n, tile, tiles, ranks,
//       grid, workers, samples_ns, emulated_cluster, link_rate;
//   starpu_progress:<hook|thread>:<H>  the same fields, ratio (thread: hook
//       time over thread time);
//   starpu_hook_overhead:<none|rondo>:1  median_ns, gflops, overhead_ratio
//       (rondo over none).
// Exit status 1 if a job failed, a residual is over 1e-12 or a transfer
// failed; 2 on bad arguments.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/common/plot.h"
#include "bench/common/report.h"

namespace rondo::bench {
namespace {

using nlohmann::json;

struct Args {
  std::string json_path, hosts = "4,9", rate = "1gbit", trace_dir;
  int shm = 4, n = 8192, tile = 512, reps = 3, warmup = 1, timeout = 3600;
  int progress_hosts = 0, overhead_n = 4096;
  bool overhead = false, no_check = false;
};

std::vector<int> ParseList(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) v.push_back(std::stoi(item));
  return v;
}

struct Job {
  int ranks = 1;
  bool cluster = false;
  std::vector<std::string> env;   // NAME=VALUE for the ranks
  std::vector<std::string> args;  // the program's
};

// The job's shell command; the program writes its JSON lines to `out`.
std::string Command(const char* argv0, const Args& a, const Job& j,
                    const std::string& out) {
  const std::string rondo_run =
      FindProgram(argv0, "drivers/bootstrap/rondo-run");
  const std::string prog =
      FindProgram(argv0, "bench/apps/starpu_cholesky_prog");
  std::ostringstream cmd;
  if (j.cluster) {
    // cluster.sh run exports RONDO_RUN_RANK_WRAPPER: each rank starts in
    // its host's network namespace and cpuset (`cluster.sh exec`).
    const std::string prefix = "rsc" + std::to_string(getpid() % 100000);
    cmd << "bash " << ShellQuote(FindProgram(argv0, "bench/cluster/cluster.sh"))
        << " run " << j.ranks << " --rate " << ShellQuote(a.rate)
        << " --prefix " << prefix << " -- ";
  }
  cmd << "env UCX_MEM_MMAP_HOOK_MODE=none OPENBLAS_NUM_THREADS=1 "
         "STARPU_SCHED=prio STARPU_SILENT=1 ";
  if (j.cluster) cmd << "UCX_TLS=tcp UCX_NET_DEVICES=rc0 ";
  for (const std::string& e : j.env) cmd << ShellQuote(e) << " ";
  cmd << ShellQuote(rondo_run) << " -n " << j.ranks << " --timeout "
      << a.timeout;
  cmd << " " << ShellQuote(prog);
  for (const std::string& arg : j.args) cmd << " " << ShellQuote(arg);
  cmd << " --out " << ShellQuote(out);
  return cmd.str();
}

// Runs the job; its JSON lines, or none if it failed (reported).
std::vector<json> RunJob(const char* argv0, const Args& a, const Job& j,
                         const std::string& what, int* failed,
                         std::string* command) {
  const std::string out =
      (std::filesystem::temp_directory_path() /
       ("rondo_starpu_cholesky_" + std::to_string(getpid()) + ".jsonl"))
          .string();
  std::filesystem::remove(out);
  *command = Command(argv0, a, j, out);
  std::printf("\n== %s\n%s\n", what.c_str(), command->c_str());
  std::fflush(stdout);
  const int rc = std::system(command->c_str());
  std::vector<json> lines = ReadJsonLines(out, "starpu_cholesky");
  std::filesystem::remove(out);
  if (rc != 0 || lines.empty()) {
    std::fprintf(stderr, "starpu_cholesky: %s: the job exited with status %d%s\n",
                 what.c_str(), rc, lines.empty() ? " and wrote no result" : "");
    ++*failed;
  }
  return lines;
}

double Median(const json& values) {
  std::vector<double> v;
  for (const auto& x : values) v.push_back(x.get<double>());
  if (v.empty()) return 0;
  return Summarize(v).median_ns;
}

// One result line as a report case.
CaseResult ToCase(const std::string& name, const json& j, bool cluster,
                  const Args& a) {
  std::vector<double> s;
  for (const auto& v : j["samples_ns"]) s.push_back(v.get<double>());
  CaseResult c{name, Summarize(s), "", json::object()};
  c.extra = {{"gflops", Median(j["gflops"])},
             {"wait_ns", Median(j["wait_ns"])},
             {"residual", j["residual"]},
             {"broadcasts", j["broadcasts"]},
             {"bcast_recipients", j["bcast_recipients"]},
             {"single_sends", j["single_sends"]},
             {"missed", j["missed"]},
             {"hook_calls", j["hook_calls"]},
             {"hook_work", j["hook_work"]},
             {"errors", j["errors"]},
             {"n", j["n"]},
             {"tile", j["tile"]},
             {"tiles", j["tiles"]},
             {"ranks", j["ranks"]},
             {"grid", j["grid"]},
             {"workers", j["workers"]},
             {"backend", j["backend"]},
             {"samples_ns", j["samples_ns"]},
             {"emulated_cluster", cluster},
             {"link_rate", cluster ? a.rate : ""}};
  return c;
}

void PrintHeader() {
  std::printf("%-34s %10s %9s %8s %10s %10s %6s %6s %6s\n", "case",
              "median ms", "min ms", "GFlop/s", "wait ms", "residual", "bcast",
              "single", "ratio");
}

void PrintCase(const CaseResult& c, const char* ratio_key) {
  char r[16] = "";
  if (c.extra.contains(ratio_key))
    std::snprintf(r, sizeof r, "%.3f", c.extra[ratio_key].get<double>());
  char res[16] = "-";
  if (c.extra["residual"].is_number())
    std::snprintf(res, sizeof res, "%.1e", c.extra["residual"].get<double>());
  std::printf("%-34s %10.1f %9.1f %8.2f %10.1f %10s %6lld %6lld %6s\n",
              c.name.c_str(), c.stats.median_ns / 1e6, c.stats.min_ns / 1e6,
              c.extra["gflops"].get<double>(),
              c.extra["wait_ns"].get<double>() / 1e6, res,
              c.extra["broadcasts"].get<long long>(),
              c.extra["single_sends"].get<long long>(), r);
}

int Run(const char* argv0, const Args& a) {
  Report report("starpu_cholesky");
  json commands = json::array();
  int failed = 0, bad = 0;
  const std::vector<std::string> base = {
      "--n", std::to_string(a.n), "--tile", std::to_string(a.tile), "--reps",
      std::to_string(a.reps), "--warmup", std::to_string(a.warmup),
      "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> v = base;
    if (a.no_check) v.push_back("--no-check");
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  auto trace_env = [&](const std::string& tag) -> std::vector<std::string> {
    if (a.trace_dir.empty()) return {};
    std::filesystem::create_directories(UserPath(a.trace_dir));
    return {"RONDO_TRACE=" + UserPath(a.trace_dir) + "/" + tag + "-%g.json"};
  };
  auto check = [&](const json& j) {
    if (j["errors"].get<long>() != 0) ++bad;
    if (j["residual"].is_number() && !(j["residual"].get<double>() < 1e-12))
      ++bad;
  };

  // Naive against dynamic: cluster sizes, then shared memory.
  std::vector<std::pair<std::string, Job>> jobs;
  for (int h : ParseList(a.hosts)) {
    if (h <= 0) continue;
    Job j;
    j.ranks = h;
    j.cluster = true;
    j.args = with({"--modes", "naive,dynamic"});
    j.env = trace_env("hosts" + std::to_string(h));
    jobs.push_back({std::to_string(h), j});
  }
  if (a.shm > 0) {
    Job j;
    j.ranks = a.shm;
    j.args = with({"--modes", "naive,dynamic"});
    j.env = {"STARPU_WORKERS_NOBIND=1",
             "STARPU_NCPU=" + std::to_string(std::max(
                                  1, static_cast<int>(sysconf(
                                         _SC_NPROCESSORS_ONLN)) /
                                         a.shm))};
    for (auto& e : trace_env("shm")) j.env.push_back(e);
    jobs.push_back({"shm", j});
  }
  for (auto& [label, job] : jobs) {
    std::string cmd;
    const auto lines = RunJob(argv0, a, job,
                              label == "shm" ? "shared memory, " +
                                                   std::to_string(job.ranks) +
                                                   " ranks"
                                             : label + " emulated hosts",
                              &failed, &cmd);
    commands.push_back(cmd);
    std::map<std::string, CaseResult> by_mode;
    for (const json& j : lines) {
      if (j.value("type", "") != "case") continue;
      check(j);
      const std::string mode = j["mode"];
      by_mode[mode] = ToCase("starpu_cholesky:" + mode + ":" + label, j,
                             job.cluster, a);
    }
    if (by_mode.count("naive") && by_mode.count("dynamic"))
      by_mode["dynamic"].extra["ratio_vs_naive"] =
          by_mode["dynamic"].stats.median_ns / by_mode["naive"].stats.median_ns;
    PrintHeader();
    for (const char* mode : {"naive", "dynamic"})
      if (by_mode.count(mode)) {
        PrintCase(by_mode[mode], "ratio_vs_naive");
        report.Add(by_mode[mode]);
      }
  }

  // StarPU's idle workers against a Rondo progress thread.
  if (a.progress_hosts > 0) {
    std::map<std::string, CaseResult> by_config;
    for (const std::string config : {"hook", "thread"}) {
      Job j;
      j.ranks = a.progress_hosts;
      j.cluster = true;
      j.args = with({"--modes", "dynamic"});
      if (config == "thread") j.env.push_back("RONDO_PROGRESS=bind");
      std::string cmd;
      const auto lines = RunJob(
          argv0, a, j,
          "progress: " + config + ", " + std::to_string(j.ranks) + " hosts",
          &failed, &cmd);
      commands.push_back(cmd);
      for (const json& line : lines) {
        if (line.value("type", "") != "case") continue;
        check(line);
        by_config[config] =
            ToCase("starpu_progress:" + config + ":" +
                       std::to_string(a.progress_hosts),
                   line, true, a);
        by_config[config].extra["config"] =
            config == "hook" ? "defaults: StarPU's idle workers (hook), "
                               "quiet progress"
                             : "RONDO_PROGRESS=bind: a progress thread always "
                               "on, on the rank's core";
      }
    }
    if (by_config.count("hook") && by_config.count("thread"))
      by_config["hook"].extra["ratio"] =
          by_config["hook"].stats.median_ns / by_config["thread"].stats.median_ns;
    PrintHeader();
    for (const char* c : {"hook", "thread"})
      if (by_config.count(c)) {
        PrintCase(by_config[c], "ratio");
        report.Add(by_config[c]);
      }
  }

  // The hook's cost when there is nothing to communicate.
  if (a.overhead) {
    const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    std::map<std::string, std::vector<double>> samples, gflops;
    // Alternate the two, one run per job, so drift hits both alike.
    for (int rep = 0; rep < a.reps; ++rep)
      for (const std::string& backend :
           rep % 2 == 0 ? std::vector<std::string>{"none", "rondo"}
                        : std::vector<std::string>{"rondo", "none"}) {
        Job j;
        j.ranks = 1;
        j.env = {"STARPU_NCPU=" + std::to_string(cores)};
        j.args = {"--n", std::to_string(a.overhead_n), "--tile",
                  std::to_string(a.tile), "--reps", "1", "--warmup", "1",
                  "--modes", "dynamic", "--backend", backend, "--quiet"};
        if (a.no_check || rep > 0) j.args.push_back("--no-check");
        std::string cmd;
        const auto lines =
            RunJob(argv0, a, j, "overhead: " + backend, &failed, &cmd);
        if (rep == 0) commands.push_back(cmd);
        for (const json& line : lines) {
          if (line.value("type", "") != "case") continue;
          check(line);
          for (const auto& v : line["samples_ns"])
            samples[backend].push_back(v.get<double>());
          for (const auto& v : line["gflops"])
            gflops[backend].push_back(v.get<double>());
        }
      }
    std::printf("\n%-34s %10s %9s %8s %9s\n", "case", "median ms", "min ms",
                "GFlop/s", "overhead");
    Stats none_stats;
    for (const std::string backend : {"none", "rondo"}) {
      if (samples[backend].empty()) continue;
      std::vector<double> g = gflops[backend];
      CaseResult c{"starpu_hook_overhead:" + backend + ":1",
                   Summarize(samples[backend]), "", json::object()};
      c.extra = {{"gflops", Summarize(g).median_ns},
                 {"backend", backend},
                 {"n", a.overhead_n},
                 {"tile", a.tile},
                 {"workers", cores},
                 {"samples_ns", samples[backend]}};
      char ov[16] = "";
      if (backend == "none") {
        none_stats = c.stats;
      } else if (none_stats.median_ns > 0) {
        const double r = c.stats.median_ns / none_stats.median_ns;
        c.extra["overhead_ratio"] = r;
        std::snprintf(ov, sizeof ov, "%.4f", r);
      }
      std::printf("%-34s %10.1f %9.1f %8.2f %9s\n", c.name.c_str(),
                  c.stats.median_ns / 1e6, c.stats.min_ns / 1e6,
                  c.extra["gflops"].get<double>(), ov);
      report.Add(c);
    }
  }

  if (!a.json_path.empty()) {
    json machine = {{"commands", commands},
                    {"link_rate", a.rate},
                    {"n", a.n},
                    {"tile", a.tile}};
    report.WriteJson(UserPath(a.json_path), machine);
    std::printf("\nwrote %s\n", UserPath(a.json_path).c_str());
  }
  if (bad)
    std::printf("\n%d result(s) with a residual over 1e-12 or failed "
                "transfers\n", bad);
  return failed || bad ? 1 : 0;
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args a;
  CLI::App app{
      "bench/apps/starpu_cholesky: tiled Cholesky on StarPU over Rondo, naive "
      "sends vs dynamic broadcasts"};
  app.add_option("--json", a.json_path, "write the report here");
  app.add_option("--hosts", a.hosts,
                 "emulated cluster sizes, a comma list (0: none)");
  app.add_option("--shm", a.shm, "ranks of the shared-memory job (0: none)")
      ->check(CLI::Range(0, 64));
  app.add_option("--n", a.n, "matrix order N")->check(CLI::Range(2, 65536));
  app.add_option("--tile", a.tile, "tile order b (N must be a multiple)")
      ->check(CLI::Range(2, 8192));
  app.add_option("--rate", a.rate, "link rate of the emulated cluster (tc)");
  app.add_option("--reps", a.reps, "measured runs per mode")
      ->check(CLI::Range(1, 100));
  app.add_option("--warmup", a.warmup, "unmeasured runs per mode")
      ->check(CLI::Range(0, 100));
  app.add_option("--progress-compare", a.progress_hosts,
                 "hosts of the hook-vs-progress-thread job (0: none)")
      ->check(CLI::Range(0, 64));
  app.add_flag("--overhead", a.overhead,
               "measure the hook's cost on a compute-only run (one rank)");
  app.add_option("--overhead-n", a.overhead_n, "matrix order of --overhead")
      ->check(CLI::Range(2, 65536));
  app.add_option("--trace-dir", a.trace_dir,
                 "write Rondo traces (RONDO_TRACE) with the kernels here");
  app.add_flag("--no-check", a.no_check, "skip the residual");
  app.add_option("--timeout", a.timeout, "seconds before a job is killed")
      ->check(CLI::Range(10, 86400));
  CLI11_PARSE(app, argc, argv);
  if (!std::regex_match(a.hosts, std::regex("[0-9]+(,[0-9]+)*"))) {
    std::fprintf(stderr,
                 "starpu_cholesky: --hosts: '%s' is not allowed; expected a "
                 "host count or a comma list (4,9)\n",
                 a.hosts.c_str());
    return 2;
  }
  if (a.n % a.tile != 0 || (a.overhead && a.overhead_n % a.tile != 0)) {
    std::fprintf(stderr,
                 "starpu_cholesky: --n %d (and --overhead-n %d) must be "
                 "multiples of --tile %d\n",
                 a.n, a.overhead_n, a.tile);
    return 2;
  }
  try {
    return rondo::bench::Run(argv[0], a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "starpu_cholesky: %s\n", e.what());
    return 1;
  }
}
