// bench/p2p/pingpong: point-to-point latency and bandwidth of nmad between two
// ranks, against raw UCX measured in the same binary and the same run.
//
//   bazel run -c opt //bench/p2p:pingpong -- [--json FILE] [--quick]
//       [--iterations N] [--progress none|bind|numa|cores:L] [--timer-us US]
//
// Started without a launcher, the binary re-executes itself as
// `rondo-run -n 2 --bind core <itself> ARGS` (rondo-run is a data
// dependency, found in the runfiles: see bench/p2p/nmad_bench.h). Rank 0 prints
// the table and writes the JSON; rank 1 only answers.
//
// Cases, for sizes 0 B .. 4 MiB:
//   pingpong:rondo:<bytes>  Session::Send then Session::Recv, the peer
//                           Recv then Send; one sample = half a round trip.
//   pingpong:ucx:<bytes>    the same with ucp_tag_send_nbx/ucp_tag_recv_nbx
//                           and ucp_worker_progress() busy polling on a
//                           separate ucp_context/worker (bench/p2p/raw_ucx.h).
//   bw:rondo:<bytes>, bw:ucx:<bytes>  a window of 16 back-to-back Isends
//                           (the peer pre-posts 16 Irecvs), waits, then a
//                           4-byte ack; one sample = one window; bytes_per_s
//                           = 16 * bytes / median window time.
// For each size the two implementations alternate in 5 blocks of samples,
// so that other load on the machine affects both alike.
// Rondo rows carry `ratio` = rondo / ucx (latency for pingpong rows,
// bandwidth for bw rows) and `delta_ns` (pingpong: rondo - ucx median).
//
// Engine settings: RONDO_PROGRESS=none and RONDO_TIMER_US=0 unless
// --progress / --timer-us say otherwise (two ranks already occupy the two
// cores of the reference machine; progress threads would oversubscribe).
// Both sides use UCX with peer-error handling off (nmad's default), so UCX
// picks its shared-memory transports for both.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/report.h"
#include "bench/p2p/nmad_bench.h"
#include "bench/p2p/raw_ucx.h"

namespace rondo::bench {
namespace {

using engine::Status;
using nmad::Request;

struct Args {
  int iterations = 0;  // 0: adaptive per size
  std::string json;
  bool quick = false;
  std::string progress = "none";
  int timer_us = 0;
  int window = 16;
};

constexpr size_t kSizes[] = {0,         8,          64,        512,
                             4 << 10,   32 << 10,   256 << 10, 1 << 20,
                             4 << 20};
constexpr int kTagPing = 1, kTagBw = 2, kTagAck = 3;
// Rondo and raw UCX alternate in this many blocks per size.
constexpr int kRounds = 5;

int PingIterations(const Args& a, size_t n) {
  int it = a.iterations > 0 ? a.iterations
           : n <= 4096      ? 2000
           : n <= 32768     ? 1000
           : n <= 262144    ? 300
           : n <= 1048576   ? 100
                            : 50;
  return a.quick ? std::max(10, it / 20) : it;
}

int BwWindows(const Args& a, size_t n) {
  int it = a.iterations > 0 ? std::max(5, a.iterations / 10)
           : n <= 4096      ? 200
           : n <= 262144    ? 100
           : n <= 1048576   ? 40
                            : 20;
  return a.quick ? std::max(5, it / 10) : it;
}

std::string SizeName(size_t n) {
  if (n >= (1 << 20) && n % (1 << 20) == 0)
    return std::to_string(n >> 20) + " MiB";
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " B";
}

void Check(Status s, const char* what) {
  if (s != Status::kOk) {
    std::fprintf(stderr, "pingpong: %s failed: %s\n", what,
                 std::string(engine::StatusName(s)).c_str());
    std::exit(1);
  }
}

// The transport under test: Rondo or raw UCX, with one interface.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void Send(const void* b, size_t n, int tag) = 0;
  virtual void Recv(void* b, size_t n, int tag) = 0;
  // Window: `w` sends of `n` bytes of `b` (or receives into `b`), then wait.
  virtual void SendWindow(const void* b, size_t n, int w, int tag) = 0;
  virtual void RecvWindow(void* b, size_t n, int w, int tag) = 0;
};

class RondoTransport final : public Transport {
 public:
  RondoTransport(RankSetup& r) : r_(r), peer_(1 - r.rank) {}
  void Send(const void* b, size_t n, int tag) override {
    Check(r_.session->Send(peer_, tag, b, n), "Session::Send");
  }
  void Recv(void* b, size_t n, int tag) override {
    Check(r_.session->Recv(peer_, tag, b, n), "Session::Recv");
  }
  void SendWindow(const void* b, size_t n, int w, int tag) override {
    Grow(w);
    for (int i = 0; i < w; ++i)
      Check(r_.session->Isend(peer_, tag, b, n, reqs_[i]), "Session::Isend");
    for (int i = 0; i < w; ++i) Check(r_.core->Wait(reqs_[i]), "Core::Wait");
  }
  void RecvWindow(void* b, size_t n, int w, int tag) override {
    Grow(w);
    for (int i = 0; i < w; ++i)
      Check(r_.session->Irecv(peer_, tag, b, n, reqs_[i]), "Session::Irecv");
    for (int i = 0; i < w; ++i) Check(r_.core->Wait(reqs_[i]), "Core::Wait");
  }

 private:
  void Grow(int w) {
    if (w > nreqs_) {
      reqs_ = std::make_unique<Request[]>(w);
      nreqs_ = w;
    }
  }
  RankSetup& r_;
  int peer_;
  std::unique_ptr<Request[]> reqs_;
  int nreqs_ = 0;
};

class UcxTransport final : public Transport {
 public:
  explicit UcxTransport(RawUcx& u) : u_(u) {}
  void Send(const void* b, size_t n, int tag) override { u_.Send(b, n, tag); }
  void Recv(void* b, size_t n, int tag) override { u_.Recv(b, n, tag); }
  void SendWindow(const void* b, size_t n, int w, int tag) override {
    hs_.resize(w);
    for (int i = 0; i < w; ++i) hs_[i] = u_.Isend(b, n, tag);
    for (int i = 0; i < w; ++i) u_.Wait(hs_[i]);
  }
  void RecvWindow(void* b, size_t n, int w, int tag) override {
    hs_.resize(w);
    for (int i = 0; i < w; ++i) hs_[i] = u_.Irecv(b, n, tag);
    for (int i = 0; i < w; ++i) u_.Wait(hs_[i]);
  }

 private:
  RawUcx& u_;
  std::vector<RawUcx::Handle> hs_;
};

// Half round trips, measured on rank 0 (rank 1 returns an empty vector).
std::vector<double> PingPong(Transport& t, int rank, uint8_t* buf, size_t n,
                             int iterations, int warmup) {
  std::vector<double> samples;
  samples.reserve(iterations);
  for (int i = 0; i < warmup + iterations; ++i) {
    if (rank == 0) {
      int64_t t0 = NowNs();
      t.Send(buf, n, kTagPing);
      t.Recv(buf, n, kTagPing);
      if (i >= warmup) samples.push_back(static_cast<double>(NowNs() - t0) / 2);
    } else {
      t.Recv(buf, n, kTagPing);
      t.Send(buf, n, kTagPing);
    }
  }
  return samples;
}

// Window times, measured on rank 0.
std::vector<double> Bandwidth(Transport& t, int rank, uint8_t* buf, size_t n,
                              int windows, int w, int warmup) {
  std::vector<double> samples;
  uint32_t ack = 0;
  for (int i = 0; i < warmup + windows; ++i) {
    if (rank == 0) {
      int64_t t0 = NowNs();
      t.SendWindow(buf, n, w, kTagBw);
      t.Recv(&ack, sizeof ack, kTagAck);
      if (i >= warmup) samples.push_back(static_cast<double>(NowNs() - t0));
    } else {
      t.RecvWindow(buf, n, w, kTagBw);
      t.Send(&ack, sizeof ack, kTagAck);
    }
  }
  return samples;
}

void Target(const char* what, bool ok, const std::string& detail) {
  std::printf("  [%s] %s: %s\n", ok ? "met" : "MISSED", what, detail.c_str());
}

int Run(const Args& args) {
  setenv("RONDO_PROGRESS", args.progress.c_str(), 1);
  setenv("RONDO_TIMER_US", std::to_string(args.timer_us).c_str(), 1);
  RankSetup r = SetupRank("pingpong");
  const int rank = r.rank;
  auto& bs = r.core->bootstrap();

  // Raw UCX peer: its worker address goes through the same bootstrap.
  RawUcx ucx;
  {
    std::vector<uint8_t> addr = ucx.Address();
    Check(bs.Put("bench.raw_ucx", addr), "bootstrap Put");
    Check(bs.Fence(), "bootstrap Fence");
    auto peer = bs.Get(1 - rank, "bench.raw_ucx");
    if (!peer.ok()) Check(peer.status(), "bootstrap Get");
    ucx.Connect(peer.value());
  }
  RondoTransport rondo(r);
  UcxTransport raw(ucx);

  const size_t max_size = 4 << 20;
  std::vector<uint8_t> buf(max_size);
  std::memset(buf.data(), rank + 1, buf.size());

  Report report("pingpong");
  if (rank == 0)
    std::printf("pingpong: 2 ranks, RONDO_PROGRESS=%s RONDO_TIMER_US=%d%s\n",
                args.progress.c_str(), args.timer_us,
                args.quick ? " (quick)" : "");
  // Latency: rondo then UCX for each size.
  for (size_t n : kSizes) {
    const int it = PingIterations(args, n);
    double med[2] = {0, 0};
    const char* names[2] = {"rondo", "ucx"};
    Transport* ts[2] = {&rondo, &raw};
    CaseResult rows[2];
    // Rondo and UCX alternate in kRounds blocks, so that load from other
    // processes on the machine hits both alike.
    std::vector<double> s[2];
    for (int round = 0; round < kRounds; ++round) {
      for (int k = 0; k < 2; ++k) {
        Check(r.core->Barrier(), "barrier");
        std::vector<double> part =
            PingPong(*ts[k], rank, buf.data(), n, (it + kRounds - 1) / kRounds,
                     round == 0 ? std::max(10, it / 10) : 5);
        s[k].insert(s[k].end(), part.begin(), part.end());
      }
    }
    for (int k = 0; k < 2; ++k) {
      if (rank != 0) continue;
      rows[k].name = std::string("pingpong:") + names[k] + ":" +
                     std::to_string(n);
      rows[k].stats = Summarize(s[k]);
      med[k] = rows[k].stats.median_ns;
      rows[k].extra = {{"bytes", n}, {"iterations", it}};
      rows[k].note = SizeName(n) + " one-way";
    }
    if (rank != 0) continue;
    rows[0].extra["ratio"] = med[1] > 0 ? med[0] / med[1] : 0.0;
    rows[0].extra["delta_ns"] = med[0] - med[1];
    char note[96];
    std::snprintf(note, sizeof note, "%s one-way, %+.0f ns vs ucx (x%.2f)",
                  SizeName(n).c_str(), med[0] - med[1],
                  med[1] > 0 ? med[0] / med[1] : 0.0);
    rows[0].note = note;
    report.Add(rows[0]);
    report.Add(rows[1]);
  }
  // Bandwidth.
  for (size_t n : kSizes) {
    if (n == 0) continue;
    const int windows = BwWindows(args, n);
    double bw[2] = {0, 0};
    const char* names[2] = {"rondo", "ucx"};
    Transport* ts[2] = {&rondo, &raw};
    CaseResult rows[2];
    std::vector<double> s[2];
    for (int round = 0; round < kRounds; ++round) {
      for (int k = 0; k < 2; ++k) {
        Check(r.core->Barrier(), "barrier");
        std::vector<double> part = Bandwidth(
            *ts[k], rank, buf.data(), n, (windows + kRounds - 1) / kRounds,
            args.window, round == 0 ? std::max(3, windows / 10) : 1);
        s[k].insert(s[k].end(), part.begin(), part.end());
      }
    }
    for (int k = 0; k < 2; ++k) {
      if (rank != 0) continue;
      rows[k].name = std::string("bw:") + names[k] + ":" + std::to_string(n);
      rows[k].stats = Summarize(s[k]);
      bw[k] = static_cast<double>(n) * args.window * 1e9 /
              rows[k].stats.median_ns;
      rows[k].extra = {{"bytes", n},
                       {"bytes_per_s", bw[k]},
                       {"window", args.window},
                       {"windows", windows}};
      char note[96];
      std::snprintf(note, sizeof note, "%s x%d: %.1f MB/s", SizeName(n).c_str(),
                    args.window, bw[k] / 1e6);
      rows[k].note = note;
    }
    if (rank != 0) continue;
    rows[0].extra["ratio"] = bw[1] > 0 ? bw[0] / bw[1] : 0.0;
    rows[0].note += " (" + std::to_string(static_cast<int>(
                               100 * (bw[1] > 0 ? bw[0] / bw[1] : 0) + 0.5)) +
                    "% of ucx)";
    report.Add(rows[0]);
    report.Add(rows[1]);
  }
  Check(r.core->Barrier(), "barrier");
  const std::string lanes = ucx.Transports();
  ucx.Close();
  Check(r.core->Barrier(), "barrier");

  if (rank == 0) {
    std::printf("raw UCX lanes: %s\n", lanes.c_str());
    report.PrintTable();
    std::printf("\nTargets (this machine):\n");
    for (size_t n : {size_t{0}, size_t{8}, size_t{64}, size_t{512}}) {
      const CaseResult* a = report.Find("pingpong:rondo:" + std::to_string(n));
      const CaseResult* b = report.Find("pingpong:ucx:" + std::to_string(n));
      if (!a || !b) continue;
      char d[128];
      std::snprintf(d, sizeof d, "rondo %.0f ns vs ucx %.0f ns (%+.0f ns)",
                    a->stats.median_ns, b->stats.median_ns,
                    a->stats.median_ns - b->stats.median_ns);
      Target(("latency " + SizeName(n) + " <= raw UCX + 0.15 us").c_str(),
             a->stats.median_ns <= b->stats.median_ns + 150, d);
    }
    if (const CaseResult* a = report.Find("bw:rondo:1048576")) {
      double ratio = a->extra.value("ratio", 0.0);
      char d[96];
      std::snprintf(d, sizeof d, "%.1f%% of raw UCX", 100 * ratio);
      Target("1 MiB bandwidth >= 95% of raw UCX", ratio >= 0.95, d);
    }
    WriteUserJson(report, args.json,
                  {{"ranks", 2},
                   {"RONDO_PROGRESS", args.progress},
                   {"RONDO_TIMER_US", args.timer_us},
                   {"raw_ucx_lanes", lanes}});
  }
  return 0;
}

}  // namespace
}  // namespace rondo::bench

int main(int argc, char** argv) {
  rondo::bench::Args args;
  CLI::App app{"nmad ping-pong latency and bandwidth vs raw UCX (2 ranks)"};
  app.add_option("--iterations,-n", args.iterations,
                 "round trips per size (default: adaptive, 2000 for small "
                 "messages down to 50 for 4 MiB); windows = this / 10")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--json", args.json, "write results as JSON to this file");
  app.add_flag("--quick", args.quick, "few samples (smoke test)");
  app.add_option("--progress", args.progress,
                 "RONDO_PROGRESS for both ranks (default none)");
  app.add_option("--timer-us", args.timer_us,
                 "RONDO_TIMER_US for both ranks (default 0: off)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--window", args.window, "sends per bandwidth window")
      ->check(CLI::Range(1, 1024));
  CLI11_PARSE(app, argc, argv);
  if (!rondo::bench::UnderLauncher())
    return rondo::bench::ExecUnderLauncher(argc, argv);
  try {
    return rondo::bench::Run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pingpong: %s\n", e.what());
    return 1;
  }
}
