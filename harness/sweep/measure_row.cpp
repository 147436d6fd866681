#include "harness/sweep/measure_row.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "harness/meters/peak_rss.hpp"
#include "harness/meters/run_queue_wait.hpp"
#include "harness/system_memory.hpp"
#include "variants/counting_allocator.hpp"

namespace lobench::sweep {

Measurement measure_row(const Variant& v, const StepInputs& in, const RunOptions& options, int warmup,
                        const RepPolicy& reps, StepOutputs& out) {
  Measurement m;
  out.resize(in.P, in.V, in.D);
  if (std::unique_ptr<DeviceSession> session = v.open_session(in, options)) {
    // Inputs placed on the device once; each step timed on the device's clock (caches flushed before
    // it); outputs copied back after the last one.
    m.samples = collect_samples([&] { return session->run_timed(); }, warmup, reps).seconds;
    session->download(out);
    m.peak_bytes = double(session->peak_working_bytes());
    const int64_t device_peak = session->peak_device_bytes();
    m.peak_device_bytes = device_peak >= 0 ? double(device_peak) : io::kNotMeasured;
    m.timing_source = session->timing_source();
    m.memory_meter = session->memory_meter();
    if (m.memory_meter == "rss_growth") m.rss_growth_bytes = m.peak_bytes;  // the one meter, in its own column too
    return m;
  }
  CountingAllocator alloc;
  RunContext ctx{alloc, options};
  for (int i = 0; i < warmup; ++i) v.run(in, out, ctx);  // outputs' pages touched before the meter starts
  const meters::PeakRssMeter rss;
  const double waited_before = meters::run_queue_wait_seconds();
  m.samples = collect_samples([&] { return seconds_of([&] { v.run(in, out, ctx); }); }, 0, reps).seconds;
  double wall = 0;
  for (double t : m.samples) wall += t;
  m.cpu_wait_fraction =
      meters::run_queue_wait_fraction(meters::run_queue_wait_seconds() - waited_before, wall, options.threads);
  m.rss_growth_bytes = rss.growth_bytes();
  m.peak_bytes = double(alloc.peak_bytes());
  m.timing_source = "host_clock";
  m.memory_meter = "counting_allocator";
  return m;
}

void fill_timing(io::ResultRow& row, const std::vector<double>& samples) {
  if (samples.empty()) return;
  const Samples s{samples};
  row.reps = int32_t(samples.size());
  row.time_median_s = s.median();
  row.time_min_s = s.min();
  row.time_max_s = s.max();
  row.time_cv = s.cv();
  row.effective_gflops = row.flops / row.time_median_s / 1e9;
  row.gemm_fraction = row.gemm_gflops > 0 ? row.effective_gflops / row.gemm_gflops : io::kNotMeasured;
}

std::optional<std::string> memory_over_prediction(const io::ResultRow& row) {
  const double predicted = double(row.predicted_bytes);
  if (row.memory_meter == "counting_allocator" && row.peak_bytes > predicted)
    return fmt::format("its working memory {} exceeds its prediction {}", format_bytes(row.peak_bytes),
                       format_bytes(predicted));
  // A plug-in's or Python variant's allocations may bypass the counting allocator: held to the resident
  // set's growth, less the outputs (their pages are first touched by the first step) and a margin for the
  // runtime's own pages (thread stacks, allocator arenas).
  const double rss = row.origin == "built-in" ? io::kNotMeasured : row.rss_growth_bytes;
  const double allowed = predicted + double(row.output_bytes) + std::max(double(kRssMargin), predicted / 4);
  if (rss > allowed)  // (a Python variant's growth is counted from before its prepare(): python_variant.cpp)
    return fmt::format("the process's resident memory grew by {} during its {}, over its prediction {}",
                       format_bytes(rss),
                       row.origin.str().rfind("python", 0) == 0
                           ? "prepare() and steps (a framework's runtime and compiled code included)"
                           : "steps",
                       format_bytes(predicted));
  return std::nullopt;
}

namespace {
// Whether the local yardstick moved by more than kBusyThreshold across the point (measured both sides).
bool yardstick_drifted(const io::ResultRow& row) {
  const double before = row.local_gemm_before_gflops, after = row.local_gemm_after_gflops;
  return before > 0 && after > 0 && std::abs(after - before) > kBusyThreshold * std::max(before, after);
}
}  // namespace

std::optional<std::string> inaccurate_outputs(const io::ResultRow& row) {
  const std::pair<const char*, double> errors[] = {
      {"the loss", row.rel_loss_err_kernel}, {"dA", row.rel_dA_err_kernel}, {"dE", row.rel_dE_err_kernel}};
  for (const auto& [what, err] : errors)
    if (err > kInaccurate)  // (NaN: not measured)
      return fmt::format("{} {:.3g} % from the float64 reference, above the {:g} % no rounding explains", what, 100 * err,
                         100 * kInaccurate);
  return std::nullopt;
}

std::string trust_flags(const io::ResultRow& row, double cpu_wait_fraction) {
  std::string flags;
  auto add = [&](const char* f) {
    if (!flags.empty()) flags += ',';
    flags += f;
  };
  if (inaccurate_outputs(row)) add("inaccurate");  // (first: the column holds 31 characters)
  if (yardstick_drifted(row) || cpu_wait_fraction > kBusyThreshold) add("busy");
  if (row.time_cv > kNoisyCv) add("noisy");
  if (row.gemm_fraction > 1.0) add("above_yardstick");
  if (memory_over_prediction(row)) add("mem");
  // The column holds capacity − 1 characters: flags that do not fit are dropped whole, from the end (a cut
  // one would read as another word), so the first ones, `inaccurate` first, always stay.
  while (flags.size() > decltype(row.flags)::capacity - 1) flags.erase(flags.rfind(','));
  return flags;
}

std::string yardstick_drift_note(const io::ResultRow& row) {
  if (!yardstick_drifted(row)) return "";
  return fmt::format("busy: the local yardstick moved from {:.1f} to {:.1f} GFLOP/s across the point (the machine's "
                     "speed changed while it ran)",
                     row.local_gemm_before_gflops, row.local_gemm_after_gflops);
}

std::string cpu_wait_note(double cpu_wait_fraction) {
  if (!(cpu_wait_fraction > kBusyThreshold)) return "";
  return fmt::format("busy: the step's threads waited for a CPU {:.0f}% of the time", 100 * cpu_wait_fraction);
}

}  // namespace lobench::sweep
