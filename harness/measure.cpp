#include "harness/measure.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <chrono>
#include <vector>

#include <omp.h>
#include <time.h>

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
double Samples::cv() const {
  const size_t n = seconds.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  double mean = 0;
  for (double x : seconds) mean += x / double(n);
  double var = 0;
  for (double x : seconds) var += (x - mean) * (x - mean) / double(n - 1);
  return std::sqrt(var) / mean;
}

double seconds_of(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool RepPolicy::enough(const Samples& s) const {
  const int n = int(s.seconds.size());
  if (fixed_reps > 0) return n >= fixed_reps;
  if (n < min_reps) return false;
  if (n >= max_reps) return true;
  double total = 0;
  for (double x : s.seconds) total += x;
  if (total >= max_time_s) return true;
  return total >= min_time_s && !(s.cv() > cv_target);
}

Samples collect_samples(const std::function<double()>& timed_run, int warmup, const RepPolicy& policy) {
  for (int i = 0; i < warmup; ++i) timed_run();
  Samples s;
  while (!policy.enough(s)) s.seconds.push_back(timed_run());
  return s;
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

void time_interleaved(std::vector<Contender>& contenders, int warmup, const RepPolicy& policy) {
  int round = 0;
  collect_samples(
      [&] {
        const bool timed = round++ >= warmup;
        double total = 0;
        for (Contender& c : contenders) {
          const double c0 = process_cpu_seconds();
          const double w = seconds_of(c.run);
          const double cpu = process_cpu_seconds() - c0;
          total += w;
          if (timed) {
            c.wall.seconds.push_back(w);
            c.cpu.seconds.push_back(cpu);
          }
        }
        return total;
      },
      warmup, policy);
}

double measure_sgemm_gflops(int64_t P, int64_t D, int64_t block, int threads) {
  // The product the tiled variants are built from, [P×D]·[D×block], run the way they run it: each of
  // `threads` threads computes its own products on its own core (Eigen single-threaded inside), so the
  // ratio variant/yardstick isolates the algorithm, not Eigen's threading of one small product.
  using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int saved = Eigen::nbThreads();
  Eigen::setNbThreads(1);
  const M A = M::Random(P, D), B = M::Random(block, D);
  std::vector<M> C(size_t(threads), M(P, block));
  const double flops = 2.0 * double(P) * double(D) * double(block);
  auto products = [&](int per_thread) {
#pragma omp parallel num_threads(threads)
    {
      M& c = C[size_t(omp_get_thread_num())];
      for (int i = 0; i < per_thread; ++i) c.noalias() = A * B.transpose();
    }
  };
  // Calibrate: enough products per thread for about 0.03 s, whatever the shape's efficiency (measured
  // before and after every point, so kept short).
  const Samples probe = collect_samples([&] { return seconds_of([&] { products(1); }); }, 1, RepPolicy::fixed(2));
  const int inner = int(std::clamp(0.03 / std::max(probe.min(), 1e-9), 1.0, 1e6));
  const Samples s = collect_samples([&] { return seconds_of([&] { products(inner); }); }, 1, RepPolicy::fixed(5));
  Eigen::setNbThreads(saved);
  return flops * inner * threads / s.median() / 1e9;
}

}  // namespace lobench
