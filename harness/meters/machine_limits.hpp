// The machine's limits on a number of threads, measured once per run and thread count: the best SGEMM
// (Eigen and OpenBLAS at a large square size) and the FMA peak. A CPU row's %GEMM is against
// best_sgemm_gflops(); the FMA peak is shown beside it as the physical ceiling.
#pragma once

#include <cstdint>

#include "harness/meters/fma_peak.hpp"
#include "harness/meters/sgemm_rate.hpp"

namespace lobench::meters {

struct MachineLimits {
  int threads = 0;
  SgemmRate eigen, openblas;
  FmaPeak fma;
  // The faster of Eigen and OpenBLAS (whichever was measured).
  double best_sgemm_gflops() const;
};

// About 10 s at n = 4096 on two cores (the FMA peak, Eigen, then OpenBLAS).
MachineLimits measure_machine_limits(int threads, int64_t sgemm_n);

}  // namespace lobench::meters
