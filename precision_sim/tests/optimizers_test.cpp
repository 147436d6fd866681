// SGD with stochastic rounding into a format (ELMO's classifier update) and Adam with a Kahan
// compensation buffer in bf16 (ELMO's encoder optimizer, optimi style).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "precision_sim/detail/plan.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/optimizers.hpp"
#include "precision_sim/stochastic.hpp"

namespace lobench::precision {
namespace {

using detail::f2u;

TEST(Sgd, StochasticRoundingKeepsSmallUpdatesNearestLosesThem) {
  // 1000 steps of -1e-4 on weights at 1.0 in bf16 (spacing 2^-7 just below 1 is 2^-8 ~ 0.0039).
  const Quantizer q(formats::bfloat16());
  constexpr size_t n = 4096;
  std::vector<float> w_sr(n, 1.0f), w_rne(n, 1.0f), g(n, 1.0f);
  for (int step = 0; step < 1000; ++step) {
    sgd_step(w_sr, g, 1e-4f, q, {.mode = Rounding::stochastic, .seed = 1, .stream = static_cast<uint64_t>(step)});
    sgd_step(w_rne, g, 1e-4f, q, {.mode = Rounding::nearest_even});
  }
  double mean = 0;
  for (float v : w_sr) mean += v;
  mean /= n;
  EXPECT_NEAR(mean, 0.9, 0.002);
  for (float v : w_rne) ASSERT_EQ(v, 1.0f);
  for (float v : w_sr) ASSERT_EQ(q.round(v), v);  // on the grid
}

TEST(Sgd, MatchesElmosBf16UpdateBitForBit) {
  // ELMO: W - lr*grad in fp32, then (bits + (r & 0xFFFF)) & 0xFFFF0000 with Philox word r.
  const Quantizer q(formats::bfloat16());
  std::mt19937 rng(3);
  std::vector<float> w(1000), g(1000);
  for (auto& v : w) v = q.round(std::normal_distribution<float>(0, 0.02f)(rng));
  for (auto& v : g) v = std::normal_distribution<float>(0, 1)(rng);
  const float lr = 0.05f;
  const RoundingOptions opt{.mode = Rounding::stochastic, .sr_bits = 16, .seed = 42, .stream = 9};
  std::vector<float> expect(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const uint32_t r = random_word(42, 9, i);
    expect[i] = detail::u2f((f2u(std::fma(-lr, g[i], w[i])) + (r & 0xFFFF)) & 0xFFFF0000u);
  }
  std::vector<float> one_by_one(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    one_by_one[i] = sgd_update(w[i], g[i], lr, q, Rounding::stochastic, random_word(42, 9, i), 16);
  sgd_step(w, g, lr, q, opt);
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_EQ(f2u(w[i]), f2u(expect[i])) << i;
    ASSERT_EQ(f2u(one_by_one[i]), f2u(expect[i])) << i;
  }
}

TEST(Sgd, PackedWeightsMatchFloatContainersAndThreadCountsAgree) {
  const Quantizer q(formats::float8_e4m3fn());
  std::mt19937 rng(5);
  constexpr size_t n = 100'003;
  std::vector<float> w(n), g(n);
  for (auto& v : w) v = q.round(std::normal_distribution<float>(0, 1)(rng));
  for (auto& v : g) v = std::normal_distribution<float>(0, 1)(rng);
  std::vector<uint8_t> codes(n);
  q.encode(w, codes);
  std::vector<float> w2 = w;
  const RoundingOptions opt{.mode = Rounding::stochastic, .seed = 8, .stream = 1};
  sgd_step(w, g, 0.01f, q, opt, 1);
  sgd_step(w2, g, 0.01f, q, opt, 2);
  sgd_step(codes, g, 0.01f, q, opt, 2);
  EXPECT_EQ(w, w2);
  std::vector<float> decoded(n);
  q.decode(codes, decoded);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(f2u(decoded[i]), f2u(w[i])) << i;
}

TEST(AdamKahan, Bf16WithCompensationTracksFloat32Adam) {
  const Quantizer bf16(formats::bfloat16());
  constexpr size_t n = 2048;
  std::mt19937 rng(11);
  std::vector<float> target(n), p(n), p32(n), p_naive(n);
  for (size_t i = 0; i < n; ++i) {
    target[i] = 1.0f + std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
    p[i] = p32[i] = p_naive[i] = bf16.round(target[i] + 0.3f);
  }
  const AdamOptions opt{.lr = 1e-4f};
  KahanAdamState st(n), naive(n);
  std::vector<float> m32(n, 0), v32(n, 0);
  std::vector<float> g(n), gn(n);
  for (int step = 1; step <= 300; ++step) {
    for (size_t i = 0; i < n; ++i) {
      g[i] = p[i] - target[i];
      gn[i] = p_naive[i] - target[i];
    }
    adam_kahan_step(p, g, st, opt, bf16, 2);
    // naive bf16 Adam: same state rounding, but p = round(p + update) without compensation.
    adam_kahan_step(p_naive, gn, naive, opt, bf16, 1);
    std::fill(naive.comp.begin(), naive.comp.end(), 0.0f);  // drop the carried error every step
    // float32 Adam with the same debiased-beta form.
    const double b1 = opt.beta1 * (1 - std::pow(opt.beta1, step - 1)) / (1 - std::pow(opt.beta1, step));
    const double b2 = opt.beta2 * (1 - std::pow(opt.beta2, step - 1)) / (1 - std::pow(opt.beta2, step));
    for (size_t i = 0; i < n; ++i) {
      const float gi = p32[i] - target[i];
      m32[i] = static_cast<float>(m32[i] + (1 - b1) * (gi - m32[i]));
      v32[i] = static_cast<float>(b2 * v32[i] + (1 - b2) * gi * gi);
      p32[i] -= opt.lr * m32[i] / (std::sqrt(v32[i]) + opt.eps);
    }
  }
  double err_kahan = 0, err_naive = 0;
  for (size_t i = 0; i < n; ++i) {
    err_kahan += std::fabs(p[i] - p32[i]);
    err_naive += std::fabs(p_naive[i] - p32[i]);
    ASSERT_EQ(bf16.round(p[i]), p[i]);
    ASSERT_EQ(bf16.round(st.m[i]), st.m[i]);
    ASSERT_EQ(bf16.round(st.comp[i]), st.comp[i]);
  }
  EXPECT_EQ(st.step, 300);
  // 300 steps of ~1e-4 = 0.03 of movement, below half a bf16 ulp per step: the naive optimizer stays
  // put, the compensated one follows float32 to within about an ulp.
  EXPECT_LT(err_kahan / n, 0.004);
  EXPECT_GT(err_naive / n, 5 * err_kahan / n);
}

TEST(AdamKahan, ThreadCountDoesNotChangeResults) {
  const Quantizer bf16(formats::bfloat16());
  constexpr size_t n = 50'000;
  std::vector<float> p1(n), g(n);
  std::mt19937 rng(2);
  for (size_t i = 0; i < n; ++i) {
    p1[i] = bf16.round(std::normal_distribution<float>(0, 1)(rng));
    g[i] = std::normal_distribution<float>(0, 1)(rng);
  }
  std::vector<float> p2 = p1;
  KahanAdamState s1(n), s2(n);
  const AdamOptions opt{.lr = 1e-3f, .weight_decay = 0.01f};
  for (int i = 0; i < 3; ++i) {
    adam_kahan_step(p1, g, s1, opt, bf16, 1);
    adam_kahan_step(p2, g, s2, opt, bf16, 2);
  }
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(s1.comp, s2.comp);
}

}  // namespace
}  // namespace lobench::precision
