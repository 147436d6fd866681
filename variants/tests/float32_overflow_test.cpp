// Finite inputs whose logits overflow float32 (issue 11, class 7): the float64 reference gives a finite
// loss; dense, chunked and fused must not return a silent NaN but refuse with a message naming the
// overflow. Inputs just inside the range still run and match the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "variants/cpu/finite_outputs.hpp"
#include "variants/packed_matrix.hpp"
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

// detail::all_finite, the check every float32 variant's outputs pass through: one non-finite value
// anywhere (either side of its blocks' edges, the last value of a ragged length) is found; the largest
// finite values, subnormals and −0 are finite.
TEST(Float32Overflow, AllFiniteFindsOneNonFiniteValueAnywhere) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float finite_edges[] = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::denorm_min(), -0.0f, 0.0f, 1.0f};
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(17), int64_t(1023), int64_t(1024), int64_t(1025), int64_t(3000)}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = finite_edges[i % 6];
    EXPECT_TRUE(cpu::detail::all_finite(x.data(), n)) << "n " << n;
    for (int64_t at : {int64_t(0), n / 2, int64_t(1023), int64_t(1024), n - 1}) {
      if (at < 0 || at >= n) continue;
      for (float bad : {inf, -inf, nan, -nan}) {
        std::vector<float> y = x;
        y[size_t(at)] = bad;
        EXPECT_FALSE(cpu::detail::all_finite(y.data(), n)) << "n " << n << " at " << at << " value " << bad;
      }
    }
  }
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

// E finite in float32 but beyond a narrow format's largest value (e2m3: 3.75) is inf as stored: the
// tiled variants reading the codes refuse, naming the format's overflow rather than float32's.
TEST(Float32Overflow, EStoredInANarrowFormatThatOverflowsIsNamed) {
  StepData d = make_synthetic(Shape{1, 5, 40, 4, 2, Reduction::mean, false}, SyntheticSpec{});
  d.E[7] = 100.0f;
  const PackedMatrix stored(d.E.data(), d.V, d.D, "e2m3", precision::RoundingOptions{}, 1);
  StepInputs in = d.view();
  in.E_stored = &stored;
  for (const char* name : {"chunked", "fused"}) {
    StepOutputs out;
    out.resize(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, RunOptions{1, 0, 0}};
    try {
      Registry::instance().find(name)->run(in, out, ctx);
      ADD_FAILURE() << name << " returned loss " << out.loss << " instead of refusing";
    } catch (const cpu::Float32Overflow& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("E as stored holds inf or NaN"), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace lobench
