// Timing: warm-up, repeats, every sample kept; and the machine's own SGEMM rate as the yardstick.
#pragma once

#include <functional>
#include <vector>

namespace lobench {

struct Samples {
  std::vector<double> seconds;  // every timed repeat, in order
  double median() const;
  double min() const;
  double max() const;
  double cv() const;  // coefficient of variation (sample standard deviation / mean); NaN below 2 samples
};

// Runs `fn` warmup times untimed, then reps times timed with a steady clock.
Samples time_repeats(const std::function<void()>& fn, int warmup, int reps);

// Effective single-precision GEMM rate (GFLOP/s) of Eigen for [P×D]·[D×block] products, `threads`
// threads each computing their own: the product shape and threading every tiled variant is built from. Median of 5 samples of
// about 0.05 s each (calibrated per shape).
double measure_sgemm_gflops(int64_t P, int64_t D, int64_t block, int threads);

}  // namespace lobench
