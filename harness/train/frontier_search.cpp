#include "harness/train/frontier_search.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace lobench::train {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The search's state: the metric, asked at most once per cell, and the pass rule.
class LineSearcher {
 public:
  LineSearcher(const CellMetric& metric, const std::vector<uint64_t>& seeds, double threshold, LineSearch& out)
      : metric_(metric), seeds_(seeds), threshold_(threshold), out_(out) {}

  double cell(int m, uint64_t seed) {
    auto& by_seed = out_.cells[m];
    if (auto it = by_seed.find(seed); it != by_seed.end()) return it->second;
    return by_seed[seed] = metric_(m, seed);
  }
  // On the first seed alone (the bisection's probes).
  bool probe(int m) { return passes(cell(m, seeds_.front())); }
  // On the mean over every seed.
  bool confirmed(int m) { return passes(stats(m).first); }
  std::pair<double, double> stats(int m) {
    std::vector<double> v;
    for (uint64_t s : seeds_) v.push_back(cell(m, s));
    return mean_and_std(v);
  }

 private:
  bool passes(double x) const { return std::isfinite(x) && x >= threshold_; }
  const CellMetric& metric_;
  const std::vector<uint64_t>& seeds_;
  double threshold_;
  LineSearch& out_;
};

}  // namespace

std::pair<double, double> mean_and_std(const std::vector<double>& v) {
  if (v.empty()) return {kNaN, kNaN};
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / double(v.size());
  if (v.size() == 1) return {mean, 0.0};
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, std::sqrt(ss / double(v.size() - 1))};
}

FrontierBaseline frontier_baseline(const std::vector<double>& metrics, double k, double floor) {
  if (metrics.empty()) throw std::invalid_argument("the frontier needs at least one fp32 run");
  for (double x : metrics)
    if (!std::isfinite(x))
      throw std::invalid_argument(fmt::format("an fp32 run's metric is {}: the baseline did not train", x));
  FrontierBaseline b;
  std::tie(b.mean, b.std) = mean_and_std(metrics);
  b.seeds = int64_t(metrics.size());
  b.tolerance = std::max(k * b.std, floor);
  return b;
}

int64_t LineSearch::runs() const {
  int64_t n = 0;
  for (const auto& [m, by_seed] : cells) n += int64_t(by_seed.size());
  return n;
}

LineSearch search_line(const CellMetric& metric, int lo, int hi, const std::vector<uint64_t>& seeds, double threshold) {
  if (lo > hi) throw std::invalid_argument(fmt::format("the mantissa range {}-{} is empty", lo, hi));
  if (seeds.empty()) throw std::invalid_argument("the frontier search needs at least one seed");
  LineSearch out;
  LineSearcher s(metric, seeds, threshold, out);
  out.metric_at = out.std_at = out.metric_below = out.std_below = kNaN;
  int fail = lo - 1, pass = hi;  // 1. the widest mantissa, or one below it (a blip at hi)
  if (!s.probe(hi)) {
    if (hi - 1 < lo || !s.probe(hi - 1)) return out;
    pass = hi - 1;
  }
  while (pass - fail > 1) {  // 2. bisection on the first seed: fail < frontier <= pass
    const int mid = fail + (pass - fail) / 2;
    (s.probe(mid) ? pass : fail) = mid;
  }
  int c = pass;  // 3. confirmed on every seed, moving up while it is not
  while (c <= hi && !s.confirmed(c)) ++c;
  if (c > hi) return out;
  for (bool moved = true; moved;) {  // 4. the two bits below, on every seed
    moved = false;
    for (int d = 1; d <= 2 && c - d >= lo; ++d) {
      if (s.confirmed(c - d)) {
        c -= d;
        moved = true;
        break;
      }
    }
  }
  out.frontier = c;
  std::tie(out.metric_at, out.std_at) = s.stats(c);
  out.seeds_at = int64_t(seeds.size());
  if (c - 1 >= lo) {
    std::tie(out.metric_below, out.std_below) = s.stats(c - 1);
    out.seeds_below = int64_t(seeds.size());
  }
  return out;
}

int64_t predicted_line_runs(int lo, int hi, int64_t seeds) {
  int64_t bisection = 0;
  for (int64_t span = int64_t(hi - lo + 1); span > 1; span = (span + 1) / 2) ++bisection;
  const int64_t boundary = std::min<int64_t>(3, hi - lo + 1);  // c, c − 1, c − 2
  return 1 + bisection + boundary * (seeds - 1) + (boundary > 1 ? 1 : 0);
}

}  // namespace lobench::train
