#include "harness/sweep/row_measurer.hpp"

#include <fmt/format.h>

#include <new>
#include <optional>
#include <stdexcept>

#include "harness/meters/products_choice.hpp"
#include "harness/sweep/check_outputs.hpp"
#include "harness/sweep/measure_row.hpp"
#include "harness/sweep/score.hpp"
#include "harness/system_memory.hpp"

namespace lobench::sweep {

std::vector<double> RowMeasurer::measure(const PlannedRow& plan, io::ResultRow& row) {
  cpu_wait_ = io::kNotMeasured;
  try {
    return measure_checked(plan, row);
  } catch (const std::bad_alloc&) {
    row.status.set("failed");
    row.reason.set("out of memory: an allocation failed (an isolated row may map at most --mem-limit + 1 GiB beyond what its process mapped at its start)");
  } catch (const std::exception& e) {
    row.status.set("failed");
    row.reason.set(e.what());
  } catch (...) {  // a plug-in's own exception type: its row fails, the sweep goes on
    row.status.set("failed");
    row.reason.set("the variant threw an exception that is not a std::exception");
  }
  return {};
}

std::vector<double> RowMeasurer::measure_checked(const PlannedRow& plan, io::ResultRow& row) {
  inputs_.prepare(plan.point, syn_, plan.want_reference);
  if (!inputs_.storage_overflow().empty()) {
    row.status.set("skipped");
    row.reason.set(inputs_.storage_overflow());
    return {};
  }
  const StepInputs in = inputs_.inputs();
  row.e_stored_bytes = inputs_.e_stored_bytes();
  row.input_bytes += row.e_stored_bytes;
  const uint64_t digest = inputs_digest(in);
  StepOutputs out;
  Measurement m;
  try {
    // The row's fp32 CPU tiles through the products chosen for its D (meters/products_choice.hpp), only
    // around its step: the yardsticks measure our own kernels as well. (In an isolated row's child the
    // choice is this machine's cache, which the parent filled before its first row.)
    std::optional<meters::Fp32ProductsForD> products;
    if (plan.variant->backend() == "cpu" && plan.point.options.operand_is_fp32()) products.emplace(plan.point.shape.D);
    m = measure_row(*plan.variant, in, plan.point.options, warmup_, reps_, out);
  } catch (...) {
    if (inputs_digest(in) != digest) inputs_.discard();  // a later row must not read what it wrote
    throw;
  }
  if (inputs_digest(in) != digest) {
    inputs_.discard();
    throw std::runtime_error("it wrote into its inputs (A, E, targets or weights, handed to it as const): its results "
                             "are not trusted; the inputs are made again for the next row");
  }
  row.peak_bytes = m.peak_bytes;
  row.peak_device_bytes = m.peak_device_bytes;
  row.rss_growth_bytes = m.rss_growth_bytes;
  row.timing_source.set(m.timing_source);
  row.memory_meter.set(m.memory_meter);
  if (const auto why = invalid_outputs(out, in)) throw std::runtime_error(*why);
  score_row(row, out, in, inputs_.reference(), inputs_.kernel_reference());
  if (accuracy_ && !inputs_.reference()) row.reason.set("reference does not fit the memory limit: accuracy not computed");
  cpu_wait_ = m.cpu_wait_fraction;
  if (const std::string waited = cpu_wait_note(m.cpu_wait_fraction); !waited.empty()) row.reason.add(waited, /*first=*/true);
  if (const std::string scales = inputs_.fp8_scales_note(plan.point); !scales.empty()) row.reason.add(scales);
  row.status.set("ok");
  return m.samples;
}

void copy_measured_columns(const io::ResultRow& from, io::ResultRow& to) {
  to.status = from.status;
  to.reason = from.reason;
  to.e_stored_bytes = from.e_stored_bytes;
  to.input_bytes += from.e_stored_bytes;
  to.peak_bytes = from.peak_bytes;
  to.peak_device_bytes = from.peak_device_bytes;
  to.rss_growth_bytes = from.rss_growth_bytes;
  to.timing_source = from.timing_source;
  to.memory_meter = from.memory_meter;
  to.loss = from.loss;
  to.ref_loss = from.ref_loss;
  to.rel_loss_err = from.rel_loss_err;
  to.rel_dA_err = from.rel_dA_err;
  to.rel_dE_err = from.rel_dE_err;
  to.rel_loss_err_kernel = from.rel_loss_err_kernel;
  to.rel_dA_err_kernel = from.rel_dA_err_kernel;
  to.rel_dE_err_kernel = from.rel_dE_err_kernel;
  to.counts_mismatch = from.counts_mismatch;
}

}  // namespace lobench::sweep
