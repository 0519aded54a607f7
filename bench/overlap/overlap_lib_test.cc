// Unit tests of the overlap methodology's pure parts: the metrics (paper
// Section 3), the global clock (Section 4.2) on simulated clocks, and the
// calibration search (Sections 4.3, 5.1) on synthetic cost functions.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "bench/overlap/overlap_calibrate.h"
#include "bench/overlap/overlap_clock.h"
#include "bench/overlap/overlap_metrics.h"

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------- metrics

TEST_CASE("overhead ratio on hand-computed cases", "[overlap][metrics]") {
  // comp 10, comm 4: ideal 10, serialized 14, min 4.
  CHECK(ov_overhead_ratio(10.0, 10.0, 4.0) == 0.0);   // perfect overlap
  CHECK(ov_overhead_ratio(14.0, 10.0, 4.0) == 1.0);   // serialized
  CHECK(ov_overhead_ratio(16.0, 10.0, 4.0) == 1.5);   // slower than serial
  CHECK(ov_overhead_ratio(9.0, 10.0, 4.0) == -0.25);  // faster than ideal
  CHECK(ov_overhead_ratio(12.0, 10.0, 4.0) == 0.5);
  // The roles are symmetric: communication the longer one.
  CHECK(ov_overhead_ratio(10.0, 4.0, 10.0) == 0.0);
  CHECK(ov_overhead_ratio(16.0, 4.0, 10.0) == 1.5);
  CHECK(ov_overhead_ratio(0.75, 0.5, 0.5) == 0.5);
}

TEST_CASE("ratios of Eqs. 2-4 on hand-computed cases", "[overlap][metrics]") {
  CHECK(ov_comp_slowdown_ratio(12.0, 10.0) == Approx(1.2).epsilon(1e-15));
  CHECK(ov_comp_slowdown_ratio(10.0, 10.0) == 1.0);
  CHECK(ov_comm_ratio(1.0, 3.0, 8.0) == 0.5);
  CHECK(ov_comm_ratio(2.0, 10.0, 8.0) == 1.5);
  CHECK(ov_mpi_impact_ratio(10.5, 10.0) == Approx(1.05).epsilon(1e-15));
  CHECK(ov_mpi_impact_ratio(10.0, 10.0) == 1.0);
}

TEST_CASE("handled bytes and CPU per MiB on hand-computed cases",
          "[overlap][metrics]") {
  const double mib = 1048576.0;
  // 2 ranks: a broadcast sends B once and receives it once.
  CHECK(ov_handled_bytes(OV_IBCAST, mib, 2) == 2 * mib);
  CHECK(ov_handled_bytes(OV_IREDUCE, mib, 2) == 2 * mib);
  // Each of the 2 ranks sends and receives B.
  CHECK(ov_handled_bytes(OV_IALLREDUCE, mib, 2) == 4 * mib);
  CHECK(ov_handled_bytes(OV_IALLGATHER, mib, 2) == 4 * mib);
  CHECK(ov_handled_bytes(OV_IALLTOALL, mib, 2) == 4 * mib);
  // 4 ranks: 3 copies of the block for a broadcast, 12 blocks for an
  // alltoall, each counted at both ends.
  CHECK(ov_handled_bytes(OV_IBCAST, 100.0, 4) == 600.0);
  CHECK(ov_handled_bytes(OV_IALLREDUCE, 100.0, 4) == 1200.0);
  CHECK(ov_handled_bytes(OV_IALLTOALL, 100.0, 4) == 2400.0);
  CHECK(ov_handled_bytes(OV_IALLGATHER, 100.0, 1) == 0.0);
  CHECK(std::isnan(ov_handled_bytes(OV_IBCAST, -1.0, 2)));
  CHECK(std::isnan(ov_handled_bytes(OV_IBCAST, kNaN, 2)));
  CHECK(std::isnan(ov_handled_bytes(OV_IBCAST, 8.0, 0)));
  // 2 ms of CPU for 4 MiB: 0.5 ms per MiB.
  CHECK(ov_ns_per_mib(2e-3, 4 * mib) == Approx(5e5).epsilon(1e-12));
  CHECK(ov_ns_per_mib(0.0, mib) == 0.0);
  CHECK(std::isnan(ov_ns_per_mib(1.0, 0.0)));
  CHECK(std::isnan(ov_ns_per_mib(kInf, mib)));
  CHECK(std::isnan(ov_ns_per_mib(1.0, kNaN)));
}

TEST_CASE("metrics are NaN without a usable reference or input",
          "[overlap][metrics]") {
  CHECK(std::isnan(ov_overhead_ratio(14.0, 0.0, 4.0)));
  CHECK(std::isnan(ov_overhead_ratio(14.0, 10.0, 0.0)));
  CHECK(std::isnan(ov_overhead_ratio(14.0, -10.0, 4.0)));
  CHECK(std::isnan(ov_overhead_ratio(14.0, 10.0, -4.0)));
  CHECK(std::isnan(ov_overhead_ratio(kNaN, 10.0, 4.0)));
  CHECK(std::isnan(ov_overhead_ratio(kInf, 10.0, 4.0)));
  CHECK(std::isnan(ov_overhead_ratio(14.0, kInf, 4.0)));
  CHECK(std::isnan(ov_mpi_impact_ratio(10.0, 0.0)));
  CHECK(std::isnan(ov_mpi_impact_ratio(10.0, -1.0)));
  CHECK(std::isnan(ov_mpi_impact_ratio(kNaN, 10.0)));
  CHECK(std::isnan(ov_comp_slowdown_ratio(12.0, 0.0)));
  CHECK(std::isnan(ov_comp_slowdown_ratio(12.0, -10.0)));
  CHECK(std::isnan(ov_comp_slowdown_ratio(12.0, kNaN)));
  CHECK(std::isnan(ov_comm_ratio(1.0, 3.0, 0.0)));
  CHECK(std::isnan(ov_comm_ratio(1.0, 3.0, -8.0)));
  CHECK(std::isnan(ov_comm_ratio(kNaN, 3.0, 8.0)));
  CHECK(std::isnan(ov_comm_ratio(1.0, kInf, 8.0)));
}

// ------------------------------------------------------------------ clock

// xorshift64*: a fixed-seed generator so the simulation is reproducible.
class XorShift {
 public:
  explicit XorShift(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1DULL;
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }

 private:
  uint64_t state_;
};

// A local clock against the reference time T: local(T) = T (1 + d) + o.
struct SimClock {
  double offset;
  double drift;
  double Local(double t) const { return t * (1.0 + drift) + offset; }
  double Reference(double local) const {
    return (local - offset) / (1.0 + drift);
  }
};

// n round trips from reference time `start`: 2 us + exponential jitter of
// mean 3 us each way, independently, and 2% of the answers delayed by
// 1 ms more (a descheduled rank): only the fastest round trips are
// symmetric enough to be trusted.
std::vector<OvClockSample> RoundTrips(const SimClock& clock, double start,
                                      int n, XorShift* rng) {
  std::vector<OvClockSample> samples;
  double t = start;
  for (int i = 0; i < n; ++i) {
    double out = 2e-6 + rng->Exponential(3e-6);
    double back = 2e-6 + rng->Exponential(3e-6);
    if (rng->Uniform() < 0.02) back += 1e-3;
    samples.push_back({clock.Local(t), t + out, clock.Local(t + out + back)});
    t += out + back + 1e-6;
  }
  return samples;
}

OvClockPoint Phase(const SimClock& clock, double start, double keep,
                   XorShift* rng) {
  std::vector<OvClockSample> samples = RoundTrips(clock, start, 1000, rng);
  OvClockPoint point{};
  REQUIRE(ov_clock_point(samples.data(), samples.size(), keep, &point) == 0);
  return point;
}

// Largest |estimated global time of local(T) - T| for T in [from, to].
double MaxError(const SimClock& clock, const OvClockModel& model,
                double from, double to) {
  double worst = 0.0;
  for (int i = 0; i <= 1000; ++i) {
    double t = from + (to - from) * i / 1000.0;
    double estimate = ov_clock_to_global(&model, clock.Local(t));
    worst = std::max(worst, std::fabs(estimate - t));
  }
  return worst;
}

TEST_CASE("clock point keeps the round trips with the smallest rtt",
          "[overlap][clock]") {
  // rtt 2, 1, 4, 3; midpoints 1, 10.5, 22, 31.5; offsets 10, 10, 8, 13.5.
  const OvClockSample samples[] = {
      {0.0, 11.0, 2.0}, {10.0, 20.5, 11.0}, {20.0, 30.0, 24.0},
      {30.0, 45.0, 33.0}};
  OvClockPoint p{};
  REQUIRE(ov_clock_point(samples, 4, 0.5, &p) == 0);
  CHECK(p.samples == 2);
  CHECK(p.rtt == 1.0);
  CHECK(p.at == 5.75);
  CHECK(p.offset == 10.0);

  REQUIRE(ov_clock_point(samples, 4, 0.75, &p) == 0);  // 3.5 rounds to 3
  CHECK(p.samples == 3);
  CHECK(p.at == Approx(43.0 / 3.0).epsilon(1e-15));
  CHECK(p.offset == Approx(33.5 / 3.0).epsilon(1e-15));

  REQUIRE(ov_clock_point(samples, 4, 0.1, &p) == 0);  // at least one
  CHECK(p.samples == 1);
  CHECK(p.at == 10.5);
  CHECK(p.offset == 10.0);

  REQUIRE(ov_clock_point(samples, 4, 1.0, &p) == 0);
  CHECK(p.samples == 4);
  CHECK(p.at == 16.25);
  CHECK(p.offset == 10.375);
}

TEST_CASE("clock point rejects bad input and leaves the point untouched",
          "[overlap][clock]") {
  const OvClockSample good[] = {{0.0, 11.0, 2.0}, {10.0, 20.5, 11.0}};
  const OvClockSample backwards[] = {{0.0, 11.0, 2.0}, {10.0, 20.5, 9.0}};
  const OvClockPoint sentinel{-1.0, -2.0, -3.0, -4};
  OvClockPoint p = sentinel;
  auto untouched = [&] {
    return p.at == sentinel.at && p.offset == sentinel.offset &&
           p.rtt == sentinel.rtt && p.samples == sentinel.samples;
  };
  CHECK(ov_clock_point(good, 0, 0.5, &p) == -1);
  CHECK(untouched());
  CHECK(ov_clock_point(backwards, 2, 0.5, &p) == -1);
  CHECK(untouched());
  CHECK(ov_clock_point(good, 2, 0.0, &p) == -1);
  CHECK(ov_clock_point(good, 2, -0.5, &p) == -1);
  CHECK(ov_clock_point(good, 2, 1.5, &p) == -1);
  CHECK(ov_clock_point(good, 2, kNaN, &p) == -1);
  CHECK(untouched());
}

TEST_CASE("clock model through two points", "[overlap][clock]") {
  const OvClockPoint a{1.0, 10.0, 1e-6, 10};
  const OvClockPoint b{11.0, 10.001, 1e-6, 10};
  OvClockModel m = ov_clock_model(&a, &b);
  CHECK(m.at == 1.0);
  CHECK(m.offset == 10.0);
  CHECK(m.drift == Approx(1e-4).epsilon(1e-9));
  CHECK(ov_clock_to_global(&m, 6.0) == Approx(16.0005).epsilon(1e-15));
  CHECK(ov_clock_to_local(&m, 16.0005) == Approx(6.0).epsilon(1e-15));

  // No second point, or one not after the first: offset only.
  OvClockModel single = ov_clock_model(&a, nullptr);
  CHECK(single.drift == 0.0);
  CHECK(ov_clock_to_global(&single, 6.0) == 16.0);
  OvClockModel reversed = ov_clock_model(&b, &a);
  CHECK(reversed.drift == 0.0);
  CHECK(reversed.offset == 10.001);
  OvClockModel same = ov_clock_model(&a, &a);
  CHECK(same.drift == 0.0);
}

TEST_CASE("global clock recovers an injected offset and drift within 1 us",
          "[overlap][clock]") {
  const SimClock clocks[] = {{3.7e-3, 40e-6}, {-3.7e-3, -25e-6},
                             {0.25, 80e-6}};
  for (const SimClock& clock : clocks) {
    CAPTURE(clock.offset, clock.drift);
    XorShift rng(0x9E3779B97F4A7C15ULL);
    OvClockPoint start = Phase(clock, 0.0, 0.1, &rng);
    OvClockPoint end = Phase(clock, 10.0, 0.1, &rng);
    CHECK(start.samples == 100);
    CHECK(start.rtt >= 4e-6);
    CHECK(start.rtt < 5e-6);
    // Each phase's offset is the true one at its own `at`.
    for (const OvClockPoint& p : {start, end}) {
      CHECK(std::fabs(p.offset - (clock.Reference(p.at) - p.at)) < 1e-6);
    }

    // Interpolation over the run.
    OvClockModel model = ov_clock_model(&start, &end);
    CHECK(std::fabs(model.drift - (1.0 / (1.0 + clock.drift) - 1.0)) < 1e-7);
    CHECK(MaxError(clock, model, 0.0, 10.0) < 1e-6);
    for (int i = 0; i <= 1000; ++i) {
      double t = clock.Local(i * 0.01);
      double g = ov_clock_to_global(&model, t);
      CHECK(std::fabs(ov_clock_to_local(&model, g) - t) < 1e-9);
      CHECK(std::fabs(ov_clock_to_local(&model, i * 0.01) -
                      clock.Local(i * 0.01)) < 1e-6);
    }

    // Extrapolation (the window barrier): phases at 0 s and 5 s, used at
    // 6 s.
    XorShift rng2(12345);
    OvClockPoint early = Phase(clock, 0.0, 0.1, &rng2);
    OvClockPoint later = Phase(clock, 5.0, 0.1, &rng2);
    OvClockModel ahead = ov_clock_model(&early, &later);
    CHECK(MaxError(clock, ahead, 5.9, 6.1) < 1e-6);

    // Without the drift, 10 s at tens of ppm is far more than 1 us off;
    // with every round trip kept, the delayed answers bias the offset.
    OvClockModel offset_only = ov_clock_model(&start, nullptr);
    CHECK(MaxError(clock, offset_only, 0.0, 10.0) > 1e-4);
    XorShift rng3(0x9E3779B97F4A7C15ULL);
    OvClockPoint all_start = Phase(clock, 0.0, 1.0, &rng3);
    OvClockPoint all_end = Phase(clock, 10.0, 1.0, &rng3);
    OvClockModel unfiltered = ov_clock_model(&all_start, &all_end);
    CHECK(MaxError(clock, unfiltered, 0.0, 10.0) > 1e-6);
  }
}

// ------------------------------------------------------------ calibration

// A cost function seen through the callback, which records every size.
struct Probe {
  std::function<double(size_t)> cost;
  std::vector<size_t> sizes;
};

double Measure(size_t size, void* arg) {
  Probe* probe = static_cast<Probe*>(arg);
  probe->sizes.push_back(size);
  return probe->cost(size);
}

OvCalibrateSpec Spec(double target, size_t min_size, size_t max_size,
                     size_t granule) {
  OvCalibrateSpec spec{};
  spec.target = target;
  spec.tolerance = 0.10;
  spec.min_size = min_size;
  spec.max_size = max_size;
  spec.granule = granule;
  spec.start_size = 0;
  spec.growth = 4.0;
  spec.max_iterations = 30;
  return spec;
}

// What every search guarantees, whatever its status.
void CheckSearch(const OvCalibrateSpec& spec, const Probe& probe,
                 const OvCalibrateResult& r) {
  CHECK(r.iterations == static_cast<int>(probe.sizes.size()));
  CHECK(r.iterations <= spec.max_iterations);
  std::set<size_t> distinct(probe.sizes.begin(), probe.sizes.end());
  CHECK(distinct.size() == probe.sizes.size());  // no size measured twice
  for (size_t s : probe.sizes) {
    CHECK(s % spec.granule == 0);
    CHECK(s >= spec.min_size);
    CHECK(s <= spec.max_size);
  }
  CHECK(distinct.count(r.size) == 1);
  CHECK(r.time == probe.cost(r.size));
  // The best point is the closest to the target of all those measured.
  for (size_t s : probe.sizes) {
    CHECK(std::fabs(r.time - spec.target) <=
          std::fabs(probe.cost(s) - spec.target));
  }
}

void CheckConverges(const OvCalibrateSpec& spec,
                    const std::function<double(size_t)>& cost) {
  CAPTURE(spec.target, spec.start_size);
  Probe probe{cost, {}};
  OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
  CAPTURE(r.size, r.time, r.iterations);
  CHECK(r.status == OV_CALIB_CONVERGED);
  CHECK(std::fabs(r.time - spec.target) <= 0.10 * spec.target);
  CHECK(r.iterations <= 25);
  CheckSearch(spec, probe, r);
}

const double kTargets[] = {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1};

double LatencyBandwidth(size_t bytes) { return 5e-6 + bytes / 1e9; }

// A GEMM of order n (2 n^3 flops) at 200 GFlop/s.
double Gemm(size_t n) {
  double x = static_cast<double>(n);
  return 2.0 * x * x * x / 2e11;
}

// A deterministic pseudo-noise in [-1, 1) per size (splitmix64 finalizer).
double Noise(size_t size) {
  uint64_t z = static_cast<uint64_t>(size) + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

// Chunked transfers (10 us per 32 KiB chunk started) with +-3% noise.
double SteppedNoisy(size_t bytes) {
  double chunks = std::ceil(bytes / 32768.0);
  return (3e-6 + 1e-5 * chunks) * (1.0 + 0.03 * Noise(bytes));
}

TEST_CASE("calibration converges on a latency + bandwidth cost",
          "[overlap][calibrate]") {
  for (double target : kTargets) {
    OvCalibrateSpec spec = Spec(target, 8, size_t{1} << 30, 8);
    CheckConverges(spec, LatencyBandwidth);
    spec.start_size = size_t{1} << 29;  // from above: shrinks
    CheckConverges(spec, LatencyBandwidth);
    spec.start_size = 4096;
    spec.growth = 2.0;
    CheckConverges(spec, LatencyBandwidth);
  }
}

TEST_CASE("calibration converges on a cubic (GEMM) cost",
          "[overlap][calibrate]") {
  for (double target : kTargets) {
    OvCalibrateSpec spec = Spec(target, 1, 16384, 1);
    CheckConverges(spec, Gemm);
    spec.granule = 8;
    spec.min_size = 8;
    spec.start_size = 100;  // not a multiple: rounded to the granule
    spec.growth = 2.0;
    CheckConverges(spec, Gemm);
  }
}

TEST_CASE("calibration converges on a stepped, noisy cost",
          "[overlap][calibrate]") {
  for (double target : kTargets) {
    OvCalibrateSpec spec = Spec(target, 4096, size_t{1} << 30, 4096);
    CheckConverges(spec, SteppedNoisy);
    spec.start_size = size_t{1} << 30;
    CheckConverges(spec, SteppedNoisy);
  }
}

TEST_CASE("calibration interpolates with a quadratic", "[overlap][calibrate]") {
  // t = 1e-12 s^2 reaches 1e-6 at s = 1000. Bracketing measures 1, 4, 16,
  // 64, 256, 1024; the quadratic through 64, 256, 1024 is the cost itself,
  // so the next size is 1000 (a secant between 256 and 1024 gives 986).
  auto square = [](size_t s) {
    double x = static_cast<double>(s);
    return 1e-12 * x * x;
  };
  OvCalibrateSpec spec = Spec(1e-6, 1, 1 << 20, 1);
  spec.tolerance = 1e-9;
  Probe probe{square, {}};
  OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
  CHECK(r.status == OV_CALIB_CONVERGED);
  CHECK(r.size == 1000);
  CHECK(probe.sizes ==
        std::vector<size_t>({1, 4, 16, 64, 256, 1024, 1000}));
  CheckSearch(spec, probe, r);
}

TEST_CASE("calibration reports a target out of reach", "[overlap][calibrate]") {
  SECTION("too slow: even the smallest size is above the target") {
    OvCalibrateSpec spec = Spec(1e-6, 8, size_t{1} << 30, 8);
    for (size_t start : {size_t{0}, size_t{1} << 20}) {
      spec.start_size = start;
      Probe probe{LatencyBandwidth, {}};
      OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
      CHECK(r.status == OV_CALIB_TOO_SLOW);
      CHECK(r.size == 8);
      CHECK(r.time == LatencyBandwidth(8));
      CheckSearch(spec, probe, r);
    }
  }
  SECTION("too fast: even the largest size is below the target") {
    OvCalibrateSpec spec = Spec(10.0, 8, size_t{1} << 30, 8);
    Probe probe{LatencyBandwidth, {}};
    OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
    CHECK(r.status == OV_CALIB_TOO_FAST);
    CHECK(r.size == size_t{1} << 30);
    CHECK(r.time == LatencyBandwidth(size_t{1} << 30));
    CheckSearch(spec, probe, r);
  }
  SECTION("within the tolerance at the boundary is converged") {
    OvCalibrateSpec spec = Spec(LatencyBandwidth(8) * 0.95, 8, 1 << 20, 8);
    Probe probe{LatencyBandwidth, {}};
    OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
    CHECK(r.status == OV_CALIB_CONVERGED);
    CHECK(r.size == 8);
    CHECK(r.iterations == 1);
  }
}

TEST_CASE("calibration stops on a failed measurement",
          "[overlap][calibrate]") {
  OvCalibrateSpec spec = Spec(1e-3, 8, size_t{1} << 30, 8);
  SECTION("the first one") {
    Probe probe{[](size_t) { return -1.0; }, {}};
    OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
    CHECK(r.status == OV_CALIB_MEASURE_FAILED);
    CHECK(r.iterations == 1);
    CHECK(r.size == 0);
    CHECK(std::isnan(r.time));
  }
  SECTION("a later one: the best point before it is kept") {
    Probe probe{nullptr, {}};
    probe.cost = [&probe](size_t s) {
      return probe.sizes.size() >= 3 ? -1.0 : LatencyBandwidth(s);
    };
    OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
    CHECK(r.status == OV_CALIB_MEASURE_FAILED);
    CHECK(r.iterations == 3);
    CHECK(r.size == probe.sizes[1]);
    CHECK(r.time == LatencyBandwidth(probe.sizes[1]));
  }
}

TEST_CASE("calibration rejects a bad spec without measuring",
          "[overlap][calibrate]") {
  const OvCalibrateSpec good = Spec(1e-3, 8, 1 << 20, 8);
  std::vector<OvCalibrateSpec> bad(11, good);
  bad[0].target = 0.0;
  bad[1].target = -1e-3;
  bad[2].target = kNaN;
  bad[3].tolerance = 0.0;
  bad[4].tolerance = -0.1;
  bad[5].granule = 0;
  bad[6].min_size = 2 << 20;  // > max_size
  bad[7].growth = 1.0;
  bad[8].growth = 0.5;
  bad[9].max_iterations = 0;
  bad[10].min_size = 9;  // no multiple of the granule in [9, 15]
  bad[10].max_size = 15;
  for (size_t i = 0; i < bad.size(); ++i) {
    CAPTURE(i);
    Probe probe{LatencyBandwidth, {}};
    OvCalibrateResult r = ov_calibrate(&bad[i], Measure, &probe);
    CHECK(r.status == OV_CALIB_BAD_SPEC);
    CHECK(r.iterations == 0);
    CHECK(probe.sizes.empty());
  }
  Probe probe{LatencyBandwidth, {}};
  CHECK(ov_calibrate(&good, nullptr, &probe).status == OV_CALIB_BAD_SPEC);
  CHECK(ov_calibrate(nullptr, Measure, &probe).status == OV_CALIB_BAD_SPEC);
  CHECK(ov_calibrate(&good, Measure, &probe).status == OV_CALIB_CONVERGED);
}

TEST_CASE("calibration reports no convergence on a discontinuous cost",
          "[overlap][calibrate]") {
  const double target = 1e-3;
  const size_t jump = 100000;  // no size within 10%: 0.4x below, 2.5x above
  auto cost = [=](size_t s) { return s < jump ? 0.4 * target : 2.5 * target; };

  SECTION("the bracket closes on the jump") {
    OvCalibrateSpec spec = Spec(target, 8, size_t{1} << 30, 8);
    spec.max_iterations = 100;
    Probe probe{cost, {}};
    OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
    CHECK(r.status == OV_CALIB_NO_CONVERGENCE);
    CHECK(r.iterations < spec.max_iterations);
    CHECK(r.time == 0.4 * target);
    CHECK(r.size < jump);
    // Both neighbours of the jump were measured before it stopped.
    std::set<size_t> seen(probe.sizes.begin(), probe.sizes.end());
    CHECK(seen.count(jump - 8) == 1);
    CHECK(seen.count(jump) == 1);
    CheckSearch(spec, probe, r);
  }
  SECTION("out of iterations") {
    OvCalibrateSpec spec = Spec(target, 8, size_t{1} << 30, 8);
    spec.max_iterations = 12;
    Probe probe{cost, {}};
    OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
    CHECK(r.status == OV_CALIB_NO_CONVERGENCE);
    CHECK(r.iterations == 12);
    CHECK(r.time == 0.4 * target);
    CheckSearch(spec, probe, r);
  }
  SECTION("out of iterations while bracketing") {
    OvCalibrateSpec spec = Spec(1e-1, 8, size_t{1} << 30, 8);
    spec.max_iterations = 3;
    Probe probe{LatencyBandwidth, {}};
    OvCalibrateResult r = ov_calibrate(&spec, Measure, &probe);
    CHECK(r.status == OV_CALIB_NO_CONVERGENCE);
    CHECK(r.iterations == 3);
    CHECK(r.size == 8 * 16);  // 8, 32, 128: the largest is the closest
    CheckSearch(spec, probe, r);
  }
}

TEST_CASE("calibration status texts", "[overlap][calibrate]") {
  CHECK(std::string(ov_calibrate_status_text(OV_CALIB_CONVERGED)) ==
        "converged");
  std::set<std::string> texts;
  for (OvCalibrateStatus s :
       {OV_CALIB_CONVERGED, OV_CALIB_TOO_SLOW, OV_CALIB_TOO_FAST,
        OV_CALIB_NO_CONVERGENCE, OV_CALIB_MEASURE_FAILED,
        OV_CALIB_BAD_SPEC}) {
    const char* text = ov_calibrate_status_text(s);
    REQUIRE(text != nullptr);
    CHECK(!std::string(text).empty());
    texts.insert(text);
  }
  CHECK(texts.size() == 6);
  CHECK(std::string(ov_calibrate_status_text(OV_CALIB_TOO_SLOW)) ==
        "the smallest size already takes longer than the target");
}

}  // namespace
