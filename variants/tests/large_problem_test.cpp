// Problems at the scale the tiled variants exist for (label `slow`, one to three minutes on 2 cores): P = 10^5
// positions and P·V = 10^9 loss terms, where the loss sum needs its float64 care and P needs many
// position chunks. Held to the conformance tolerances against the float64 reference.
#include <gtest/gtest.h>

#include <cstdio>

#include "variants/tests/reference_checks.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

TEST(LargeProblems, TiledVariantsStayAccurateAtABillionTerms) {
  // Mostly negative logits (a trained model's regime): each softplus is small, so a float running sum
  // would lose them.
  {
    const Reduction red = Reduction::mean;
    const Shape s{100, 1000, 10007, 16, 8, red, true};
    SyntheticSpec spec;
    spec.seed = 5;
    spec.pad_fraction = 0.1;
    spec.scale_A = 0.5f;
    StepData d = make_synthetic(s, spec);
    for (int64_t v = 0; v < d.V; ++v) d.E[size_t(v * d.D)] = -4.0f;  // a bias column: logits shift by −4·A[:, 0]
    for (int64_t p = 0; p < d.P; ++p) d.A[size_t(p * d.D)] = 1.0f;
    const StepInputs in = d.view();
    CountingAllocator ref_alloc;
    cpu::ReferenceResult ref;
    cpu::reference_step(in, ref, ref_alloc, 2);
    for (const char* name : {"fused", "chunked"}) {
      StepOutputs out;
      out.resize(in.P, in.V, in.D);
      CountingAllocator alloc;
      RunContext ctx{alloc, RunOptions{2, 0, 0}};
      Registry::instance().find(name)->run(in, out, ctx);
      const std::string where = std::string(name) + " " + to_string(red);
      std::printf("[ info     ] %s: relative loss error %.2e, dA %.2e, dE %.2e\n", where.c_str(),
                  relative_error(out.loss, ref.loss), relative_l2_error(out.dA.data(), ref.dA.data(), in.P * in.D),
                  relative_l2_error(out.dE.data(), ref.dE.data(), in.V * in.D));
      testing::expect_matches_reference(out, ref, in, where);
      const Variant* v = Registry::instance().find(name);
      EXPECT_EQ(alloc.peak_bytes(), v->predicted_working_bytes(s, ctx.options)) << where;
    }
  }
}

}  // namespace
}  // namespace lobench
