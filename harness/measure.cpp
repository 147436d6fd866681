#include "measure.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <chrono>

namespace lobench {

namespace {
double sorted_at(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t i = size_t(pos);
  const double f = pos - double(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}
}  // namespace

double Samples::median() const { return sorted_at(seconds, 0.5); }
double Samples::min() const { return seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end()); }
double Samples::max() const { return seconds.empty() ? 0.0 : *std::max_element(seconds.begin(), seconds.end()); }

Samples time_repeats(const std::function<void()>& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  Samples s;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    s.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  return s;
}

double measure_sgemm_gflops(int64_t P, int64_t D, int64_t block, int threads) {
  using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::setNbThreads(threads);
  const M A = M::Random(P, D), B = M::Random(block, D);
  M C(P, block);
  const double flops = 2.0 * double(P) * double(D) * double(block);
  // Calibrate: enough products per sample for about 0.05 s, whatever the shape's efficiency.
  const Samples probe = time_repeats([&] { C.noalias() = A * B.transpose(); }, 1, 3);
  const int inner = int(std::clamp(0.05 / std::max(probe.min(), 1e-9), 1.0, 1e6));
  auto once = [&] {
    for (int i = 0; i < inner; ++i) C.noalias() = A * B.transpose();
  };
  const Samples s = time_repeats(once, 1, 5);
  return flops * inner / s.median() / 1e9;
}

}  // namespace lobench
