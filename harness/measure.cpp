#include "harness/measure.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <vector>

#include <omp.h>

namespace lobench {

double measure_sgemm_gflops(int64_t P, int64_t D, int64_t block, int threads, double sample_s) {
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
  // Calibrate: enough products per thread for about sample_s, whatever the shape's efficiency.
  const Samples probe = collect_samples([&] { return seconds_of([&] { products(1); }); }, 1, RepPolicy::fixed(2));
  const int inner = calls_per_sample(probe.min(), sample_s, 1000000);
  const Samples s = collect_samples([&] { return seconds_of([&] { products(inner); }); }, 1, RepPolicy::fixed(5));
  Eigen::setNbThreads(saved);
  return flops * inner * threads / s.median() / 1e9;
}

}  // namespace lobench
