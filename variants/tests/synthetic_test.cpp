#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "variants/step.hpp"

namespace lobench {
namespace {

TEST(Synthetic, IsDeterministicAndFollowsTheProtocol) {
  Shape s;
  s.B = 4;
  s.N = 50;
  s.V = 1000;
  s.D = 16;
  s.L = 8;
  SyntheticSpec spec;
  spec.seed = 7;
  const StepData a = make_synthetic(s, spec), b = make_synthetic(s, spec);
  EXPECT_EQ(a.A, b.A);
  EXPECT_EQ(a.E, b.E);
  EXPECT_EQ(a.targets, b.targets);
  spec.seed = 8;
  EXPECT_NE(make_synthetic(s, spec).A, a.A);
  // N(0, 1): mean near 0, variance near 1 over 200·16 draws.
  double m = 0, v = 0;
  for (float x : a.A) m += x;
  m /= double(a.A.size());
  for (float x : a.A) v += (x - m) * (x - m);
  v /= double(a.A.size());
  EXPECT_NEAR(m, 0.0, 0.1);
  EXPECT_NEAR(v, 1.0, 0.1);
  for (int32_t t : a.targets) EXPECT_TRUE(t >= 0 && t < s.V);
  EXPECT_TRUE(a.weights.empty());
}

TEST(Synthetic, PaddingDuplicatesAndWeights) {
  Shape s;
  s.B = 1;
  s.N = 2000;
  s.V = 100000;
  s.D = 2;
  s.L = 8;
  s.weighted = true;
  SyntheticSpec spec;
  spec.pad_fraction = 0.25;
  spec.dup_fraction = 0.25;
  spec.zero_weight_fraction = 0.1;
  const StepData d = make_synthetic(s, spec);
  int64_t pad = 0, dup = 0;
  for (int64_t p = 0; p < d.P; ++p)
    for (int64_t l = 0; l < d.L; ++l) {
      const int32_t t = d.targets[p * d.L + l];
      if (t < 0 || t >= d.V) ++pad;
      else
        for (int64_t k = 0; k < l; ++k) dup += (d.targets[p * d.L + k] == t) ? 1 : 0;
    }
  EXPECT_NEAR(double(pad) / double(d.targets.size()), 0.25, 0.03);
  EXPECT_GT(dup, int64_t(0.1 * double(d.targets.size())));
  ASSERT_EQ(int64_t(d.weights.size()), d.P);
  int64_t zeros = 0;
  for (float w : d.weights) zeros += w == 0.0f;
  EXPECT_NEAR(double(zeros) / double(d.P), 0.1, 0.03);
  EXPECT_THROW(validate(Shape{0, 1, 1, 1, 1}), std::invalid_argument);
}

// A rank of a sharded step draws only its block (make_synthetic_slice); the values must be the
// whole problem's, bit for bit, including odd P·D (A's last normal draw leaves a cached value that the
// first draw of E consumes), padding, duplicates and zero weights.
TEST(Synthetic, SlicesHoldTheWholeProblemsValues) {
  for (const int64_t D : {3, 4}) {
    Shape s{1, 7, 23, D, 5, Reduction::mean, true};
    SyntheticSpec spec;
    spec.seed = 11;
    spec.pad_fraction = 0.2;
    spec.dup_fraction = 0.3;
    spec.zero_weight_fraction = 0.3;
    const StepData whole = make_synthetic(s, spec);
    const SyntheticSlice slices[] = {{0, 23, 0, 7}, {5, 11, 2, 6}, {22, 23, 6, 7}, {4, 4, 3, 3}, {0, 0, 0, 7}};
    for (const SyntheticSlice& c : slices) {
      const SyntheticBlock b = make_synthetic_slice(s, spec, c);
      ASSERT_EQ(b.E.size(), size_t((c.v1 - c.v0) * D));
      ASSERT_EQ(b.A.size(), size_t((c.p1 - c.p0) * D));
      ASSERT_EQ(b.targets.size(), size_t((c.p1 - c.p0) * s.L));
      ASSERT_EQ(b.weights.size(), size_t(c.p1 - c.p0));
      for (size_t i = 0; i < b.E.size(); ++i) EXPECT_EQ(b.E[i], whole.E[size_t(c.v0 * D) + i]) << i;
      for (size_t i = 0; i < b.A.size(); ++i) EXPECT_EQ(b.A[i], whole.A[size_t(c.p0 * D) + i]) << i;
      for (size_t i = 0; i < b.targets.size(); ++i) EXPECT_EQ(b.targets[i], whole.targets[size_t(c.p0 * s.L) + i]);
      for (size_t i = 0; i < b.weights.size(); ++i) EXPECT_EQ(b.weights[i], whole.weights[size_t(c.p0) + i]);
    }
  }
  Shape s{1, 4, 10, 2, 1, Reduction::mean, false};
  EXPECT_THROW(make_synthetic_slice(s, {}, SyntheticSlice{0, 11, 0, 4}), std::invalid_argument);
  EXPECT_THROW(make_synthetic_slice(s, {}, SyntheticSlice{3, 2, 0, 4}), std::invalid_argument);
  EXPECT_THROW(make_synthetic_slice(s, {}, SyntheticSlice{0, 10, 0, 5}), std::invalid_argument);
}

}  // namespace
}  // namespace lobench
