// The split-tree performance model: see splittree_model.h.
#include "nmad/coll/splittree_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "topology/base/config_registry.h"

namespace rondo::nmad::coll {
namespace {

constexpr int kMaxNproc = 1 << 30;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

[[noreturn]] void Invalid(std::string_view name, const std::string& value,
                          std::string_view expected) {
  throw std::invalid_argument("Invalid value for " + std::string(name) +
                              ": '" + value + "'. Expected: " +
                              std::string(expected));
}

void CheckN(int n) {
  if (n < 1) Invalid("N (application ranks)", std::to_string(n), ">= 1");
}

void CheckS(int s) {
  if (s < 0) Invalid("S (split point)", std::to_string(s), ">= 0");
}

void CheckP(int p) {
  if (p < 0) Invalid("P (communication cores)", std::to_string(p), ">= 0");
}

// 2^(i-1), the weight of level i of a size-doubling operation.
double LevelWeight(SplitOp op, int i) {
  return op == SplitOp::kConstant ? 1.0 : std::ldexp(1.0, i - 1);
}

double TOverlappedOf(SplitOp op, int s, int n, int p, double computation,
                     LevelCountFormula formula) {
  CheckS(s);
  CheckN(n);
  CheckP(p);
  const int h = TreeHeight(n);
  const double first = op == SplitOp::kConstant
                           ? std::min<double>(s, h)
                           : std::min(WeightUpTo(std::min(s, 62)),
                                      TBlockingVar(n));
  return first + std::max(computation, FoldedTime(n, p, s, op, formula));
}

}  // namespace

std::string_view SplitOpName(SplitOp op) {
  return op == SplitOp::kConstant ? "constant" : "doubling";
}

void ValidateSplitTreeParams(const SplitTreeParams& params) {
  if (params.nproc < 1 || params.nproc > kMaxNproc) {
    Invalid("N_proc (machine cores)", std::to_string(params.nproc),
            "an integer from 1 to 2^30");
  }
  if (params.n < 1 || params.n > params.nproc) {
    Invalid("N (application ranks)", std::to_string(params.n),
            "an integer from 1 to N_proc = " + std::to_string(params.nproc));
  }
  if (!(params.unit_ns > 0) || !std::isfinite(params.unit_ns)) {
    Invalid("unit_ns", std::to_string(params.unit_ns), "a finite number > 0");
  }
  if (!std::isfinite(params.compute_at_nproc)) {
    Invalid("compute_at_nproc", std::to_string(params.compute_at_nproc),
            "a finite number (negative: T_blocking(N_proc))");
  }
}

int TreeHeight(int n) {
  CheckN(n);
  int h = 0;
  while ((int64_t{1} << h) < n) ++h;
  return h;
}

int CommCores(int nproc, int n) {
  CheckN(n);
  if (nproc < n) {
    Invalid("N_proc (machine cores)", std::to_string(nproc),
            ">= N = " + std::to_string(n));
  }
  return nproc - n;
}

double TBlocking(int n) { return TreeHeight(n); }

double TBlockingVar(int n) { return WeightUpTo(TreeHeight(n)); }

double Computation(int nproc, int n, double compute_at_nproc) {
  CommCores(nproc, n);  // validates 1 <= n <= nproc
  // Strong scaling: the global workload N_proc * C(N_proc) is fixed, so each
  // of the N ranks does N_proc / N times the work it does on N_proc ranks.
  return static_cast<double>(nproc) / n * compute_at_nproc;
}

double Computation(const SplitTreeParams& params) {
  ValidateSplitTreeParams(params);
  double at_nproc = params.compute_at_nproc;
  if (at_nproc < 0) {
    at_nproc = params.op == SplitOp::kConstant ? TBlocking(params.nproc)
                                               : TBlockingVar(params.nproc);
  }
  return Computation(params.nproc, params.n, at_nproc);
}

int64_t LevelCommunications(int n, int i, LevelCountFormula formula) {
  const int h = TreeHeight(n);
  if (i < 1 || i > h) {
    Invalid("i (tree level)", std::to_string(i),
            "an integer from 1 to H(N) = " + std::to_string(h));
  }
  const int64_t big_n = n;
  if (formula == LevelCountFormula::kText) {
    // floor(N / 2^i + 1/2) = floor((N + 2^(i-1)) / 2^i).
    return (big_n + (int64_t{1} << (i - 1))) >> i;
  }
  // ceil(N / 2^i + 1/2) = ceil((2N + 2^i) / 2^(i+1)).
  const int64_t den = int64_t{1} << (i + 1);
  return (2 * big_n + (int64_t{1} << i) + den - 1) / den;
}

double WeightUpTo(int s) {
  if (s < 0 || s > 62) {
    Invalid("S (split point)", std::to_string(s), "an integer from 0 to 62");
  }
  return static_cast<double>((int64_t{1} << s) - 1);
}

double FoldedTime(int n, int p, int s, SplitOp op, LevelCountFormula formula) {
  CheckN(n);
  CheckP(p);
  CheckS(s);
  const int h = TreeHeight(n);
  if (s >= h) return 0.0;
  if (p == 0) return kInfinity;
  double total = 0.0;
  for (int i = s + 1; i <= h; ++i) {
    const int64_t f = LevelCommunications(n, i, formula);
    const int64_t rounds = (f + p - 1) / p;  // ceil(F(N, i) / P(N))
    total += static_cast<double>(rounds) * LevelWeight(op, i);
  }
  return total;
}

double TNonBlocking(int s, int n, int p, LevelCountFormula formula) {
  CheckS(s);
  return std::min(s, TreeHeight(n)) +
         FoldedTime(n, p, s, SplitOp::kConstant, formula);
}

double TOverlapped(int s, int n, int p, double computation,
                   LevelCountFormula formula) {
  return TOverlappedOf(SplitOp::kConstant, s, n, p, computation, formula);
}

double TNonBlockingVar(int s, int n, int p, LevelCountFormula formula) {
  CheckS(s);
  return std::min(WeightUpTo(std::min(s, 62)), TBlockingVar(n)) +
         FoldedTime(n, p, s, SplitOp::kDoubling, formula);
}

double TOverlappedVar(int s, int n, int p, double computation,
                      LevelCountFormula formula) {
  return TOverlappedOf(SplitOp::kDoubling, s, n, p, computation, formula);
}

double ModelTime(const SplitTreeParams& params, int s) {
  ValidateSplitTreeParams(params);
  CheckS(s);
  return TOverlappedOf(params.op, s, params.n,
                       CommCores(params.nproc, params.n), Computation(params),
                       params.level_count);
}

double ModelTimeNs(const SplitTreeParams& params, int s) {
  return ModelTime(params, s) * params.unit_ns;
}

std::vector<double> ModelTimes(const SplitTreeParams& params) {
  ValidateSplitTreeParams(params);
  const int h = TreeHeight(params.n);
  std::vector<double> times;
  times.reserve(h + 1);
  for (int s = 0; s <= h; ++s) times.push_back(ModelTime(params, s));
  return times;
}

int ChooseSplit(const SplitTreeParams& params) {
  const std::vector<double> times = ModelTimes(params);
  int best = 0;
  for (int s = 1; s < static_cast<int>(times.size()); ++s) {
    if (times[s] < times[best]) best = s;  // strict: ties keep the smaller S
  }
  return best;
}

SplitOptions ParseSplitOptions(std::string_view value) {
  const std::string expected =
      "auto or an integer from 0 to " + std::to_string(kMaxFixedSplit);
  if (value == "auto") return SplitOptions{};
  if (value.empty() || value.size() > 2 ||
      !std::all_of(value.begin(), value.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    Invalid(kSplitSEnvVar, std::string(value), expected);
  }
  int s = 0;
  for (char c : value) s = s * 10 + (c - '0');
  if (s > kMaxFixedSplit) Invalid(kSplitSEnvVar, std::string(value), expected);
  SplitOptions options;
  options.automatic = false;
  options.fixed_s = s;
  return options;
}

namespace {

std::vector<base::ConfigDecl> CollDeclarations() {
  return {{std::string(kSplitSEnvVar), "coll", "integer", "auto",
           "auto or an integer from 0 to " + std::to_string(kMaxFixedSplit),
           "split-tree collectives' S (levels split in two): auto lets "
           "the model choose"}};
}

const base::ConfigRegistration kCollConfig(CollDeclarations);

}  // namespace

SplitOptions SplitOptionsFromEnv() {
  const std::optional<std::string> value =
      base::ConfigRegistry::Global().Raw(kSplitSEnvVar);
  if (!value) return SplitOptions{};
  return ParseSplitOptions(*value);
}

int ResolveSplit(const SplitOptions& options, const SplitTreeParams& params) {
  ValidateSplitTreeParams(params);
  if (options.automatic) return ChooseSplit(params);
  if (options.fixed_s < 0 || options.fixed_s > kMaxFixedSplit) {
    Invalid("SplitOptions::fixed_s", std::to_string(options.fixed_s),
            "an integer from 0 to " + std::to_string(kMaxFixedSplit));
  }
  return std::min(options.fixed_s, TreeHeight(params.n));
}

}  // namespace rondo::nmad::coll
