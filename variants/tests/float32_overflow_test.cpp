// Finite inputs whose logits overflow float32 (issue 11, class 7): the float64 reference gives a finite
// loss; dense, chunked and fused must not return a silent NaN but refuse with a message naming the
// overflow. Inputs just inside the range still run and match the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "variants/cpu/finite_outputs.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

StepData huge_logits(float scale) {
  StepData d = make_synthetic(Shape{1, 5, 40, 4, 2, Reduction::mean, false}, SyntheticSpec{});
  for (auto& a : d.A) a = std::copysign(scale, a);
  for (auto& e : d.E) e = std::copysign(scale, e);
  return d;
}

TEST(Float32Overflow, TheFloat32VariantsRefuseInsteadOfReturningNaN) {
  const StepData d = huge_logits(1e20f);  // |a·e| up to 4e40: beyond float32, finite in float64
  StepOutputs ref;
  ref.resize(d.P, d.V, d.D);
  {
    CountingAllocator alloc;
    RunContext ctx{alloc, RunOptions{1, 0, 0}};
    Registry::instance().find("reference")->run(d.view(), ref, ctx);
  }
  ASSERT_TRUE(std::isfinite(ref.loss)) << "the float64 reference is finite here";
  EXPECT_GT(ref.loss, 1e39);
  for (const char* name : {"dense", "chunked", "fused"}) {
    StepOutputs out;
    out.resize(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, RunOptions{2, 0, 0}};
    try {
      Registry::instance().find(name)->run(d.view(), out, ctx);
      ADD_FAILURE() << name << " returned loss " << out.loss << " instead of refusing";
    } catch (const cpu::Float32Overflow& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(name), std::string::npos) << msg;
      EXPECT_NE(msg.find("overflow float32"), std::string::npos) << msg;
    }
  }
}

TEST(Float32Overflow, LargeButRepresentableLogitsStillRun) {
  const StepData d = huge_logits(1e15f);  // |a·e| up to 4e30: fine in float32
  for (const char* name : {"dense", "chunked", "fused"}) {
    StepOutputs out;
    out.resize(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, RunOptions{2, 0, 0}};
    EXPECT_NO_THROW(Registry::instance().find(name)->run(d.view(), out, ctx)) << name;
    EXPECT_TRUE(std::isfinite(out.loss)) << name;
  }
}

}  // namespace
}  // namespace lobench
