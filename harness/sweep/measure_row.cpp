#include "harness/sweep/measure_row.hpp"

#include <memory>

#include "harness/measure.hpp"
#include "variants/counting_allocator.hpp"

namespace lobench::sweep {

Measurement measure_row(const Variant& v, const StepInputs& in, const RunOptions& options, int warmup, int reps,
                        StepOutputs& out) {
  Measurement m;
  out.resize(in.P, in.V, in.D);
  if (std::unique_ptr<DeviceSession> session = v.open_session(in, options)) {
    // Inputs placed on the device once; each step timed on the device's clock (caches flushed before
    // it); outputs copied back after the last one.
    for (int i = 0; i < warmup; ++i) session->run_timed();
    for (int i = 0; i < reps; ++i) m.samples.push_back(session->run_timed());
    session->download(out);
    m.peak_bytes = double(session->peak_working_bytes());
    const int64_t device_peak = session->peak_device_bytes();
    m.peak_device_bytes = device_peak >= 0 ? double(device_peak) : io::kNotMeasured;
    return m;
  }
  CountingAllocator alloc;
  RunContext ctx{alloc, options};
  m.samples = time_repeats([&] { v.run(in, out, ctx); }, warmup, reps).seconds;
  m.peak_bytes = double(alloc.peak_bytes());
  return m;
}

void fill_timing(io::ResultRow& row, const std::vector<double>& samples) {
  if (samples.empty()) return;
  const Samples s{samples};
  row.time_median_s = s.median();
  row.time_min_s = s.min();
  row.time_max_s = s.max();
  row.time_cv = s.cv();
  row.effective_gflops = row.flops / row.time_median_s / 1e9;
  row.gemm_fraction = row.gemm_gflops > 0 ? row.effective_gflops / row.gemm_gflops : io::kNotMeasured;
}

}  // namespace lobench::sweep
