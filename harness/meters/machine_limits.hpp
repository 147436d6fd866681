// The machine's limits on a number of threads, measured once per run and thread count: the best SGEMM
// (Eigen, OpenBLAS, oneDNN and our own micro-kernels at a large square size), the FMA peak, and for runs
// with bf16 rows the best bf16 product's rate at that size (ours and oneDNN's).
// A CPU row's %GEMM is against yardstick_gflops(its operand): the best SGEMM, or the best bf16 rate for
// bf16 rows; the FMA peak is shown beside it as the physical ceiling.
#pragma once

#include <cstdint>
#include <string>

#include "harness/meters/fma_peak.hpp"
#include "harness/meters/sgemm_rate.hpp"

namespace lobench::meters {

struct MachineLimits {
  int threads = 0;
  SgemmRate eigen, openblas, onednn, own;
  // The bf16 products at the same size (bf16_square_gemm) and oneDNN's (onednn_bf16_square_gemm),
  // measured only for runs with bf16 rows (the sweep asks for them before the first one); n = 0 until
  // then, NaN with `why` where they cannot run.
  SgemmRate bf16, bf16_onednn;
  FmaPeak fma;
  // The fastest of Eigen, OpenBLAS, oneDNN and our own (of those measured).
  double best_sgemm_gflops() const;
  // The faster of the two bf16 rates (of those measured); NaN where neither was.
  double best_bf16_gflops() const;
  // A row's yardstick: the best bf16 rate for --operand bf16, e4m3 or e5m2 (the bf16 products compute
  // them all) where one was measured, else the best SGEMM.
  double yardstick_gflops(const std::string& operand) const;
};

// About 15 s at n = 4096 on two cores (the FMA peak, Eigen, our own, oneDNN, then OpenBLAS); bf16 left
// unmeasured.
MachineLimits measure_machine_limits(int threads, int64_t sgemm_n);

}  // namespace lobench::meters
