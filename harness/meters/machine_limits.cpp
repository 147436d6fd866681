#include "harness/meters/machine_limits.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "variants/operand.hpp"

namespace lobench::meters {

namespace {

double fastest(std::initializer_list<const SgemmRate*> rates) {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (const SgemmRate* r : rates)
    if (!std::isnan(r->gflops) && !(r->gflops <= best)) best = r->gflops;
  return best;
}

}  // namespace

double MachineLimits::best_sgemm_gflops() const { return fastest({&eigen, &openblas, &onednn, &own}); }

double MachineLimits::best_bf16_gflops() const { return fastest({&bf16, &bf16_onednn}); }

double MachineLimits::yardstick_gflops(const std::string& operand) const {
  // (fp8 operands run through the same bf16 products: the best product this CPU has for them)
  if (products_in_bf16(parse_operand(operand)) && std::isfinite(best_bf16_gflops())) return best_bf16_gflops();
  return best_sgemm_gflops();
}

MachineLimits measure_machine_limits(int threads, int64_t sgemm_n) {
  MachineLimits m;
  m.threads = threads;
  // The FMA peak's window (runs of 2 ms) follows the SGEMM's size, which the sweep's work sets
  // (run_sweep.cpp, auto_sgemm_n): 60 ms from 4096³ up; 20 ms below, e.g. at 512³ for a sweep of seconds (a
  // test's), where three 60 ms windows were most of a small run's time.
  const int runs = sgemm_n >= 4096 ? 30 : 10;
  // OpenBLAS last: its thread pool is the one thing here that outlives its measurement.
  m.fma = fma_peak(threads, runs);
  m.eigen = eigen_square_sgemm(sgemm_n, threads);
  m.own = own_square_sgemm(sgemm_n, threads);
  m.onednn = onednn_square_sgemm(sgemm_n, threads);
  m.openblas = openblas_square_sgemm(sgemm_n, threads);
  // The FMA peak is a ceiling, the fastest moment: measured again after the products and kept at its
  // highest, and while it is below an SGEMM rate (impossible on quiet cores: its window fell on a
  // busy moment) up to three times more.
  for (int again = 0; again < 4; ++again) {
    const FmaPeak p = fma_peak(threads, runs);
    if (p.gflops > m.fma.gflops) m.fma = p;
    if (again >= 1 && !(m.fma.gflops < m.best_sgemm_gflops())) break;
  }
  return m;
}

}  // namespace lobench::meters
