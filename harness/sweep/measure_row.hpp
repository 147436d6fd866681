// Measure: one variant's step on one point's inputs, warm-up then timed repeats as the policy says,
// every sample kept, with the peak working memory its allocator (or device session) counted and, for
// CPU steps, the process's resident-set growth as an independent meter; and the timing columns and
// trust flags of a row from its samples.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/io/result_row.hpp"
#include "harness/measure.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace lobench::sweep {

struct Measurement {
  std::vector<double> samples;  // seconds, every timed repeat in order
  double peak_bytes = io::kNotMeasured;
  double peak_device_bytes = io::kNotMeasured;
  double rss_growth_bytes = io::kNotMeasured;  // CPU steps: meters::PeakRssMeter over the timed runs
  // CPU steps: the share of the timed steps' thread time spent waiting for a CPU (meters/run_queue_wait)
  double cpu_wait_fraction = io::kNotMeasured;
  std::string timing_source;  // the row's columns of the same names (results/SCHEMA.md)
  std::string memory_meter;
};

// Runs `v` on `in` (CPU: steady clock around run(); GPU: a device session timed by CUDA events with the
// inputs resident) and leaves the last repeat's outputs in `out`.
Measurement measure_row(const Variant& v, const StepInputs& in, const RunOptions& options, int warmup,
                        const RepPolicy& reps, StepOutputs& out);

// reps, time_median_s, time_min_s, time_max_s, time_cv, effective_gflops and gemm_fraction from the
// samples (row.flops and row.gemm_gflops already set).
void fill_timing(io::ResultRow& row, const std::vector<double>& samples);

// What makes a measured row untrustworthy, as the `flags` column lists it.
// busy: the local yardstick moved by more than this across the point, or the step's threads waited for a
// CPU more than this share of their time (a machine loaded all along: before and after alike).
inline constexpr double kBusyThreshold = 0.10;
inline constexpr double kNoisyCv = 0.05;
// What a variant's memory must stay within: its own prediction (predicted_bytes), exactly for the
// counting allocator; for the resident set's growth (a plug-in's or Python variant's allocations need not
// go through lobench's allocator) the prediction plus the outputs plus max(kRssMargin, 25 %).
inline constexpr int64_t kRssMargin = int64_t(16) << 20;
// Why the row's measured memory exceeds its prediction (flagged `mem`), or nothing.
std::optional<std::string> memory_over_prediction(const io::ResultRow& row);
// inaccurate: an error against the float64 reference on the inputs the products read (the *_kernel
// columns) above this, which no number format here explains (the committed runs' largest, 611 rows on
// 2026-12-07: 0.16 %, dE with a bf16 epilogue; tf32 rounds to about 0.1 %). A wrong result, not a
// rounding: a plug-in's bug, say. (Counts are not judged: their near-zero band is float32's at small D,
// and tf32 or a large D flips the sign of logits outside it in correct rows.)
inline constexpr double kInaccurate = 0.01;
// Why the row is flagged `inaccurate` ("dA 100 % from the float64 reference"), or nothing.
std::optional<std::string> inaccurate_outputs(const io::ResultRow& row);
// `inaccurate`, `busy`, `noisy`, `above_yardstick`, `mem` from the row's columns and the measurement's cpu_wait_fraction
// (empty when none applies).
std::string trust_flags(const io::ResultRow& row, double cpu_wait_fraction = io::kNotMeasured);
// The note a row measured while its threads waited for a CPU gets: "waited for a CPU 38 % of the time".
std::string cpu_wait_note(double cpu_wait_fraction);
// The note of a row whose local yardstick moved by more than kBusyThreshold across it (the other reason
// for `busy`): both rates; empty where it did not.
std::string yardstick_drift_note(const io::ResultRow& row);

}  // namespace lobench::sweep
