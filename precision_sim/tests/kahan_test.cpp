// Kahan summation and the compensated update of a low-precision value.
#include <gtest/gtest.h>

#include <cmath>

#include "precision_sim/format.hpp"
#include "precision_sim/kahan.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::precision {
namespace {

TEST(Kahan, SumOfManySmallTermsIsAccurate) {
  constexpr int n = 10'000'000;
  KahanSum<float> k;
  float naive = 0;
  double exact = 0;
  for (int i = 0; i < n; ++i) {
    const float x = 0.1f + static_cast<float>(i % 7) * 1e-3f;
    k += x;
    naive += x;
    exact += x;
  }
  EXPECT_LT(std::fabs(k.value() - exact), 1.0);     // a few float32 ulps of ~1e6
  EXPECT_GT(std::fabs(naive - exact), 1000.0);      // the naive float sum drifts by thousands
}

TEST(Kahan, CompensatedUpdateKeepsUpdatesBelowHalfAnUlp) {
  // bf16 has 8 significant bits: at 1.0 the spacing is 2^-7, so adding 1e-3 rounds away every time.
  const Quantizer q(formats::bfloat16());
  auto rne = [&](float v) { return q.round(v); };
  float p_naive = 1.0f, p = 1.0f, c = 0.0f;
  for (int i = 0; i < 1000; ++i) {
    p_naive = rne(p_naive + 1e-3f);
    p = kahan_update(p, c, 1e-3f, rne);
  }
  EXPECT_EQ(p_naive, 1.0f);
  EXPECT_NEAR(p + c, 2.0f, 0.02f);  // value + pending compensation ~ exact sum
  EXPECT_NEAR(p, 2.0f, 0.02f);
  EXPECT_EQ(q.round(p), p);  // p stays on the bf16 grid
  EXPECT_EQ(q.round(c), c);
}

}  // namespace
}  // namespace lobench::precision
