// Central finite differences for the layer tests.
//
// The layers compute in float32, so the checks perturb float32 values and evaluate a float64
// projection f(x) = Σ_i r_i·y_i(x) of the layer's output y onto fixed random weights r (so the
// analytic gradient is the backward of dy = r). Tolerance: the output's own rounding (a few float32
// ulps, ~1e-7 relative per element, accumulated over ~sqrt(n) terms) perturbs f by about
// 1e-7·sqrt(n)·|y| ~ 1e-5 for the sizes here, and dividing by 2h = 2e-2 turns that into ~5e-4 absolute
// noise per component, while the truncation error h²·f'''/6 is ~1e-5. Gradient components are O(1)
// in these tests, so the relative L2 error of the sampled components is held to 5e-3: ten times the
// expected noise, and far below the O(1) error any wrong term in a backward gives.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "datasets/random.hpp"

namespace lobench::seqrec::testing {

constexpr float kStep = 1e-2f;
constexpr double kTolerance = 5e-3;

inline std::vector<float> random_vector(int64_t n, uint64_t seed, float scale = 1.0f) {
  data::Rng rng(data::stream_key(seed, 7, 0));
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = float(rng.normal()) * scale;
  return v;
}

inline double project(const float* y, const std::vector<float>& r) {
  double s = 0.0;
  for (size_t i = 0; i < r.size(); ++i) s += double(y[i]) * r[i];
  return s;
}

// Compares analytic[i] with the central difference of f at up to `samples` indices of x (all when n is
// small). Returns the relative L2 error over the sampled components.
inline double fd_relative_error(float* x, int64_t n, const float* analytic, const std::function<double()>& f,
                                int64_t samples = 120, uint64_t seed = 1) {
  data::Rng rng(data::stream_key(seed, 11, 0));
  double num = 0.0, den = 0.0;
  const int64_t count = std::min(n, samples);
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = n <= samples ? k : int64_t(rng.below(uint64_t(n)));
    const float saved = x[i];
    x[i] = saved + kStep;
    const float up = x[i];
    const double fp = f();
    x[i] = saved - kStep;
    const float down = x[i];
    const double fm = f();
    x[i] = saved;
    const double numeric = (fp - fm) / (double(up) - double(down));
    num += (numeric - analytic[i]) * (numeric - analytic[i]);
    den += numeric * numeric;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace lobench::seqrec::testing
