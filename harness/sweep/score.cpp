#include "harness/sweep/score.hpp"

#include "variants/accuracy.hpp"

namespace lobench::sweep {

void score_row(io::ResultRow& row, const StepOutputs& out, const StepInputs& in, const cpu::ReferenceResult* ref,
               const cpu::ReferenceResult* kernel_ref) {
  row.loss = out.loss;
  if (!ref || !kernel_ref) return;
  row.ref_loss = ref->loss;
  row.rel_loss_err = relative_error(out.loss, ref->loss);
  row.rel_dA_err = relative_l2_error(out.dA.data(), ref->dA.data(), in.P * in.D);
  row.rel_dE_err = relative_l2_error(out.dE.data(), ref->dE.data(), in.V * in.D);
  row.counts_mismatch =  // no counts (a Python variant may leave them out): not measured, not all wrong
      out.counts.empty() ? io::kNotMeasured
                         : double(count_mismatches(out.counts.data(), kernel_ref->counts.data(), kernel_ref->near_zero.data(), in.P));
  row.rel_loss_err_kernel = relative_error(out.loss, kernel_ref->loss);
  row.rel_dA_err_kernel = relative_l2_error(out.dA.data(), kernel_ref->dA.data(), in.P * in.D);
  row.rel_dE_err_kernel = relative_l2_error(out.dE.data(), kernel_ref->dE.data(), in.V * in.D);
}

}  // namespace lobench::sweep
