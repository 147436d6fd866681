#include "harness/meters/machine_limits.hpp"

#include <algorithm>
#include <cmath>

namespace lobench::meters {

double MachineLimits::best_sgemm_gflops() const {
  const double e = eigen.gflops, o = openblas.gflops;
  if (std::isnan(e)) return o;
  if (std::isnan(o)) return e;
  return std::max(e, o);
}

MachineLimits measure_machine_limits(int threads, int64_t sgemm_n) {
  MachineLimits m;
  m.threads = threads;
  // OpenBLAS last: its thread pool is the one thing here that outlives its measurement.
  m.fma = fma_peak(threads);
  m.eigen = eigen_square_sgemm(sgemm_n, threads);
  m.openblas = openblas_square_sgemm(sgemm_n, threads);
  return m;
}

}  // namespace lobench::meters
