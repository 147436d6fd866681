#include "harness/sweep/plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "harness/sweep/point_inputs.hpp"
#include "harness/sweep/run_axes.hpp"
#include "harness/sweep/yardstick.hpp"
#include "harness/system_memory.hpp"

namespace lobench::sweep {
namespace {

bool is_gpu(const Variant& v) { return v.backend() == "cuda"; }

std::string oom_reason(int64_t working, int64_t io, int64_t reference, int64_t limit, const char* where) {
  return fmt::format("OOM predicted: {} working + {} inputs/outputs{} > {}limit {}", format_bytes(double(working)),
                     format_bytes(double(io)),
                     reference > 0 ? fmt::format(" + {} reference", format_bytes(double(reference))) : "", where,
                     format_bytes(double(limit)));
}

// a + b for byte counts (both >= 0), INT64_MAX instead of wrapping: a prediction of INT64_MAX bytes must
// exceed every limit, not wrap to a negative sum that fits all of them.
int64_t saturating_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

// Why the planned row cannot run: an epilogue precision other than fp32 for a variant that is not built in
// (the axis is the built-in CPU variants' emulation, variants/epilogue.hpp; a plug-in's own skip_reason
// may accept options it does not compute, and would record fp32 work under the other label), the
// variant's own skip reason, or its memory over a limit. Host memory
// holds the inputs, the outputs and the reference, and a CPU variant's working set; a GPU variant's
// working set and its own copy of the inputs and outputs are on the device.
std::optional<std::string> skip_or_oom(const PlannedRow& r, const StepPoint& pt, const MemoryLimits& limits) {
  const Shape& s = pt.shape;
  const bool on_gpu = is_gpu(*r.variant);
  const int64_t host_working = on_gpu ? 0 : r.row.predicted_bytes;
  const int64_t ref = r.want_reference ? reference_bytes(s) : 0;
  std::optional<std::string> why;
  if (!pt.options.epilogue_is_fp32() && Registry::instance().origin(*r.variant) != "built-in")
    why = "computes its element-wise work itself (epilogue " + pt.options.epilogue +
          " is the built-in CPU variants' emulation)";
  if (!why) why = r.variant->skip_reason(s, pt.options);
  if (!why && saturating_add(saturating_add(host_working, io_bytes(s)), ref) > limits.host_bytes)
    why = oom_reason(host_working, io_bytes(s), ref, limits.host_bytes, "");
  if (!why && on_gpu && limits.gpu_bytes > 0 && saturating_add(r.row.predicted_bytes, io_bytes(s)) > limits.gpu_bytes)
    why = oom_reason(r.row.predicted_bytes, io_bytes(s), 0, limits.gpu_bytes, "GPU ");
  return why;
}

}  // namespace

int64_t default_gpu_memory_limit() {
  if (const auto m = gpu_memory())
    return std::max<int64_t>(0, m->first - std::max<int64_t>(int64_t(1) << 30, m->second / 20));
  return 0;
}

static_assert(io::Text32::capacity - 1 == kMaxVariantNameBytes,
              "a variant name the registry accepts must fit the run file's variant column whole");

io::ResultRow identity_row(const StepPoint& pt, const Variant& v) {
  io::ResultRow row;
  row.backend.set(v.backend());
  row.origin.set(Registry::instance().origin(v));
  row.P = pt.shape.P();
  row.weighted = pt.shape.weighted;
  // Every axis's canonical value into its column (sweep/run_axes.cpp names the column).
  for (const RunAxis& axis : run_axes())
    for (const auto& [name, value] : pt.axis_values)
      if (name == axis.name) io::set_column_text(row, io::result_column(axis.column), value);
  return row;
}

std::vector<PlannedRow> plan_rows(const std::vector<StepPoint>& points, const MemoryLimits& limits, bool accuracy,
                                  int warmup, int reps) {
  std::vector<PlannedRow> rows;
  rows.reserve(points.size());
  for (const StepPoint& pt : points) {
    PlannedRow r;
    r.point = pt;
    r.variant = Registry::instance().find(pt.variant);
    const Shape& s = pt.shape;
    r.row = identity_row(pt, *r.variant);
    r.row.warmup = warmup, r.row.reps = reps;
    r.row.flops = s.flops_fused();
    r.row.input_bytes = input_bytes(s);
    r.row.output_bytes = StepOutputs::bytes(s.P(), s.V, s.D);
    r.work = double(s.P()) * double(s.V) * double(s.D);
    r.want_reference = accuracy && io_bytes(s) + reference_bytes(s) <= limits.host_bytes;
    predict_memory(r, limits);
    rows.push_back(std::move(r));
  }
  return rows;
}

void predict_memory(PlannedRow& r, const MemoryLimits& limits) {
  std::string failure;
  std::optional<std::string> why;
  try {  // a plug-in's or Python variant's own code: what it throws fails its row, not the sweep
    r.row.predicted_bytes = r.variant->predicted_working_bytes(r.point.shape, r.point.options);
    if (r.row.predicted_bytes < 0)
      failure = fmt::format("its predicted working memory is {} bytes (negative): the row is not run",
                            r.row.predicted_bytes);
    else
      why = skip_or_oom(r, r.point, limits);
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "the variant threw an exception that is not a std::exception while planning";
  }
  r.skipped = !failure.empty() || why.has_value();
  if (!failure.empty()) {
    r.row.status.set("failed");
    r.row.reason.set(failure);
  } else if (why) {
    r.row.status.set("skipped");
    r.row.reason.set(*why);
  }
}

}  // namespace lobench::sweep
