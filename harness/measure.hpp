// The machine's own SGEMM rate as the yardstick, measured by lobench's one timing rule (variants/timing.hpp,
// included here for the engine's files that time things).
#pragma once

#include <cstdint>

#include "variants/timing.hpp"

namespace lobench {

// Effective single-precision GEMM rate (GFLOP/s) of Eigen for [P×D]·[D×block] products, `threads`
// threads each computing their own: the product shape and threading every tiled variant is built from.
// Median of 5 samples of about `sample_s` seconds each (calibrated per shape; how long: the sweep's
// local_sample_seconds).
double measure_sgemm_gflops(int64_t P, int64_t D, int64_t block, int threads, double sample_s);

}  // namespace lobench
