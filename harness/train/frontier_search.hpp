// The search of the precision frontier along one line (a tensor, a rounding, an exponent width): the
// fewest mantissa bits m in [lo, hi] whose metric stays within a tolerance of fp32's. Independent of
// training: the metric of a cell (m, seed) comes from a function, so the search is tested on planted
// metrics (tests/frontier_search_test.cpp) and run on train-xmc's runs (frontier_sweep.hpp).
//
// The metric is noisy and not strictly monotone in m, so the search is bisection plus checks:
//   1. probe hi on the first seed, and hi − 1 when hi fails (a blip); if both fail there is no frontier
//      in [lo, hi];
//   2. bisect [lo, the passing probe] on the first seed, assuming monotonicity: the candidate c is the
//      smallest m that passes;
//   3. confirm c on every seed (pass: the seeds' mean >= threshold); while it fails, c moves up one bit
//      (confirmed the same way); past hi there is no frontier;
//   4. look below: c − 1 and then c − 2 on every seed; the first that passes becomes c and step 4
//      repeats. A single failing bit (a blip) between passing ones therefore does not hide the frontier,
//      and a lucky pass of one seed below it is not taken (it must pass on the mean of all seeds).
// The frontier is the final c; the table reports the metric at c and at c − 1 (over every seed).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace lobench::train {

// fp32's metric over the seeds and the tolerance derived from it: max(k · std, floor).
struct FrontierBaseline {
  double mean = 0, std = 0;  // std: sample standard deviation (0 for one seed)
  int64_t seeds = 0;
  double tolerance = 0;
  double threshold() const { return mean - tolerance; }  // a cell passes when its mean metric >= this
};
// Throws std::invalid_argument when `metrics` is empty or holds a non-finite value (fp32 must train).
FrontierBaseline frontier_baseline(const std::vector<double>& metrics, double k, double floor);

// The metric of one training run: mantissa bits m, seed.
using CellMetric = std::function<double(int m, uint64_t seed)>;

struct LineSearch {
  int frontier = -1;  // the fewest mantissa bits; -1: none in [lo, hi]
  double metric_at = 0, std_at = 0;        // mean and std over the seeds at the frontier (NaN: none)
  double metric_below = 0, std_below = 0;  // at frontier − 1 (NaN: below lo, or no frontier)
  int64_t seeds_at = 0, seeds_below = 0;
  std::map<int, std::map<uint64_t, double>> cells;  // every cell the search asked for: m -> seed -> metric
  int64_t runs() const;
};

// The search described above. seeds: the first one probes; all of them confirm. A non-finite metric
// fails. Throws std::invalid_argument for lo > hi or no seeds.
LineSearch search_line(const CellMetric& metric, int lo, int hi, const std::vector<uint64_t>& seeds, double threshold);

// The number of runs a line is expected to take (for --dry-run and the ETA): the probe of hi, the
// bisection's ceil(log2(hi − lo + 1)) probes, and the confirmation of c, c − 1, c − 2 on every seed less
// the first seed's runs already made there.
int64_t predicted_line_runs(int lo, int hi, int64_t seeds);

// The mean and sample std of values (std 0 for one value; NaN mean for none).
std::pair<double, double> mean_and_std(const std::vector<double>& values);

}  // namespace lobench::train
