// Measure: one variant's step on one point's inputs, warm-up then timed repeats, every sample kept,
// with the peak working memory its allocator (or device session) counted; and the timing columns of a
// row from its samples.
#pragma once

#include <vector>

#include "harness/io/result_row.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace lobench::sweep {

struct Measurement {
  std::vector<double> samples;  // seconds, every timed repeat in order
  double peak_bytes = io::kNotMeasured;
  double peak_device_bytes = io::kNotMeasured;
};

// Runs `v` on `in` (CPU: steady clock around run(); GPU: a device session timed by CUDA events with the
// inputs resident) and leaves the last repeat's outputs in `out`.
Measurement measure_row(const Variant& v, const StepInputs& in, const RunOptions& options, int warmup, int reps,
                        StepOutputs& out);

// time_median_s, time_min_s, time_max_s, time_cv, effective_gflops and gemm_fraction from the samples
// (row.flops and row.gemm_gflops already set).
void fill_timing(io::ResultRow& row, const std::vector<double>& samples);

}  // namespace lobench::sweep
