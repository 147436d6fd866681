// The conformance checks of an fp32 variant's outputs against the float64 reference
// (docs/method.md#accuracy), shared by every test that holds a CPU variant to them.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "variants/accuracy.hpp"
#include "variants/counting_allocator.hpp"
#include "variants/reference.hpp"
#include "variants/variant.hpp"

namespace lobench::testing {

constexpr double kLossTol = 1e-6;  // relative: loss; relative L2: per-position loss
constexpr double kGradTol = 1e-5;  // relative L2: dA, dE

// Loss, per-position loss, dA and dE within the tolerances, and the counts equal to the reference's
// wherever a logit is not within its near-zero band. `where` names the variant and the case.
inline void expect_matches_reference(const StepOutputs& out, const cpu::ReferenceResult& ref, const StepInputs& in,
                                     const std::string& where) {
  EXPECT_LE(relative_error(out.loss, ref.loss), kLossTol) << where << " loss " << out.loss << " vs " << ref.loss;
  EXPECT_LE(relative_l2_error(out.per_position_loss.data(), ref.per_position_loss.data(), in.P), kLossTol) << where;
  EXPECT_LE(relative_l2_error(out.dA.data(), ref.dA.data(), in.P * in.D), kGradTol) << where;
  EXPECT_LE(relative_l2_error(out.dE.data(), ref.dE.data(), in.V * in.D), kGradTol) << where;
  EXPECT_EQ(count_mismatches(out.counts.data(), ref.counts.data(), ref.near_zero.data(), in.P), 0) << where;
}

// The bf16 rule (the GPU rows', docs/method.md "bf16 operands on the CPU"): `in` holds the operands as the
// products read them (rounded to bf16, or fp8 values with their scales, exact in bf16); what is left is the
// rounding of the gradient tile G to bf16 (unit roundoff 2^-9) in dA and dE, and float32 sums: loss 1e-5,
// gradients 4e-3, counts exact outside the near-zero band.
inline void expect_bf16_rule(const StepOutputs& out, const StepInputs& in, const std::string& where) {
  CountingAllocator alloc;
  cpu::ReferenceResult ref;
  cpu::reference_step(in, ref, alloc, 2);
  EXPECT_LE(relative_error(out.loss, ref.loss), 1e-5) << where << " loss " << out.loss << " vs " << ref.loss;
  EXPECT_LE(relative_l2_error(out.per_position_loss.data(), ref.per_position_loss.data(), in.P), 1e-5) << where;
  EXPECT_LE(relative_l2_error(out.dA.data(), ref.dA.data(), in.P * in.D), 4e-3) << where << " dA";
  EXPECT_LE(relative_l2_error(out.dE.data(), ref.dE.data(), in.V * in.D), 4e-3) << where << " dE";
  EXPECT_EQ(count_mismatches(out.counts.data(), ref.counts.data(), ref.near_zero.data(), in.P), 0) << where;
}

// The float64 reference of a case's inputs (2 threads), what every conformance check compares with. It
// owns the allocator its buffers came from (declared first, so it outlives them).
struct Reference {
  CountingAllocator alloc;
  cpu::ReferenceResult result;
  explicit Reference(const StepInputs& in) { cpu::reference_step(in, result, alloc, 2); }
};

// One step of variant v on `in` with options o, its working memory counted by `alloc`.
inline StepOutputs run_step(const Variant& v, const StepInputs& in, const RunOptions& o, CountingAllocator& alloc) {
  StepOutputs out;
  out.resize(in.P, in.V, in.D);
  RunContext ctx{alloc, o};
  v.run(in, out, ctx);
  return out;
}

}  // namespace lobench::testing
