// Score: a row's accuracy columns against the float64 reference, on the original E (what the format
// costs) and on E as the variant read it (what the kernel costs; docs/method.md#accuracy).
#pragma once

#include "harness/io/result_row.hpp"
#include "variants/reference.hpp"
#include "variants/step.hpp"

namespace lobench::sweep {

// Sets loss, ref_loss, the rel_*_err and rel_*_err_kernel columns and counts_mismatch (against
// `kernel_ref`: the reference on the inputs as the variant read them, PointInputs::kernel_reference();
// `ref` for fp32 E and fp32/tf32 operands). Without a reference only `loss` is set.
void score_row(io::ResultRow& row, const StepOutputs& out, const StepInputs& in, const cpu::ReferenceResult* ref,
               const cpu::ReferenceResult* kernel_ref);

}  // namespace lobench::sweep
