// The sweep's scoring rule for rows whose variant rounds its inputs (issue 30, fix 8): a bf16 row's
// kernel error and count mismatches are judged against the float64 reference on A and E rounded to
// bfloat16 (as the GPU conformance tests do), its format cost against the reference on the original
// inputs. A variant that computes exactly on the rounded inputs must then score zero count mismatches
// and a float32-sized kernel error, while its format cost stays visible.
#include <gtest/gtest.h>

#include <vector>

#include "harness/sweep/point_inputs.hpp"
#include "harness/sweep/score.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/accuracy.hpp"

namespace lobench::sweep {
namespace {

StepPoint point(const std::string& operand, const std::string& e_format) {
  StepPoint pt;
  pt.variant = "cuda_fused";
  pt.shape = Shape{2, 64, 5000, 64, 4, Reduction::mean, true};
  pt.options.operand = operand;
  pt.options.e_format = e_format;
  pt.options.threads = 2;
  pt.e_rounding = e_format == "fp32" ? "" : "nearest_even";
  pt.seed = 7;
  return pt;
}

// What an exact bf16 kernel returns: the float64 step on the inputs as it reads them (A and E decoded,
// then rounded to bfloat16), stored in the outputs' own types.
StepOutputs exact_kernel_outputs(const StepInputs& in, bool bf16_operands) {
  const int64_t P = in.P, V = in.V, D = in.D;
  std::vector<float> A(in.A, in.A + P * D), E(V * D);
  if (in.E_stored) in.E_stored->decode_rows(0, V, E.data());
  else std::copy_n(in.E, V * D, E.data());
  if (bf16_operands) {
    const precision::Quantizer bf16(precision::parse_format("bfloat16"));
    bf16.round(A, A);
    bf16.round(E, E);
  }
  StepInputs k = in;
  k.A = A.data();
  k.E = E.data();
  k.E_stored = nullptr;
  CountingAllocator alloc;
  cpu::ReferenceResult r;
  cpu::reference_step(k, r, alloc, 2);
  StepOutputs out;
  out.resize(P, V, D);
  out.loss = r.loss;
  for (int64_t i = 0; i < P; ++i) out.per_position_loss[i] = r.per_position_loss[i];
  for (int64_t i = 0; i < P * D; ++i) out.dA[i] = float(r.dA[i]);
  for (int64_t i = 0; i < V * D; ++i) out.dE[i] = float(r.dE[i]);
  for (int64_t i = 0; i < P * 4; ++i) out.counts[i] = r.counts[i];
  return out;
}

TEST(KernelReference, Bf16RowsAreJudgedOnTheRoundedInputsAndCostedOnTheOriginals) {
  for (const char* e_format : {"fp32", "float8_e4m3fn"}) {
    const StepPoint pt = point("bf16", e_format);
    PointInputs inputs;
    inputs.prepare(pt, SyntheticSpec{}, /*want_reference=*/true);
    const StepInputs in = inputs.inputs();
    ASSERT_NE(inputs.kernel_reference(), nullptr);
    ASSERT_NE(inputs.kernel_reference(), inputs.reference()) << e_format;

    const StepOutputs out = exact_kernel_outputs(in, true);
    // The test can fail: on the original inputs, bf16 rounding flips logits outside the near-zero band.
    const cpu::ReferenceResult& orig = *inputs.reference();
    EXPECT_GT(count_mismatches(out.counts.data(), orig.counts.data(), orig.near_zero.data(), in.P), 0) << e_format;

    io::ResultRow row;
    score_row(row, out, in, inputs.reference(), inputs.kernel_reference());
    EXPECT_EQ(row.counts_mismatch, 0.0) << e_format;
    EXPECT_LE(row.rel_loss_err_kernel, 1e-12) << e_format;
    EXPECT_LE(row.rel_dA_err_kernel, 1e-6) << e_format;  // float32 storage of the outputs
    EXPECT_LE(row.rel_dE_err_kernel, 1e-6) << e_format;
    // The format cost (bf16 operands, and float8 E) stays in the plain columns.
    EXPECT_GT(row.rel_dE_err, 1e-4) << e_format;
    EXPECT_GT(row.rel_dA_err, 1e-4) << e_format;
  }
}

TEST(KernelReference, UnroundedOperandsShareTheOriginalReference) {
  for (const char* operand : {"fp32", "tf32"}) {
    PointInputs inputs;
    inputs.prepare(point(operand, "fp32"), SyntheticSpec{}, true);
    EXPECT_EQ(inputs.kernel_reference(), inputs.reference()) << operand;
  }
  // The same inputs switched from bf16 to fp32 and back: each point gets its own kernel reference.
  PointInputs inputs;
  inputs.prepare(point("bf16", "fp32"), SyntheticSpec{}, true);
  const double bf16_loss = inputs.kernel_reference()->loss;
  inputs.prepare(point("fp32", "fp32"), SyntheticSpec{}, true);
  EXPECT_EQ(inputs.kernel_reference(), inputs.reference());
  inputs.prepare(point("bf16", "fp32"), SyntheticSpec{}, true);
  EXPECT_EQ(inputs.kernel_reference()->loss, bf16_loss);
  EXPECT_NE(bf16_loss, inputs.reference()->loss);
}

}  // namespace
}  // namespace lobench::sweep
