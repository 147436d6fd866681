#include "harness/train/encoder.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "harness/train/classifier.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/optimizers.hpp"
#include "variants/cpu/bf16_dot.hpp"
#include "harness/train/tests/test_problem.hpp"

namespace lobench::train {
namespace {

namespace lp = lobench::precision;

// A tiny sparse batch: B rows over F features, 1..3 nonzeros each, values in [0.5, 1.5).
struct Batch {
  std::vector<int64_t> off{0};
  std::vector<int32_t> idx;
  std::vector<float> val;
  SparseRows rows() const { return {off, idx, val}; }
};
Batch make_batch(int64_t B, int64_t F, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch b;
  for (int64_t r = 0; r < B; ++r) {
    std::vector<int32_t> f(static_cast<size_t>(F));
    std::iota(f.begin(), f.end(), 0);
    std::shuffle(f.begin(), f.end(), rng);
    const int n = 1 + int(rng() % 3);
    std::sort(f.begin(), f.begin() + n);
    for (int j = 0; j < n; ++j) {
      b.idx.push_back(f[size_t(j)]);
      b.val.push_back(0.5f + float(rng() % 1000) / 1000.0f);
    }
    b.off.push_back(int64_t(b.idx.size()));
  }
  return b;
}

struct Model {
  EncoderConfig ec;
  ClassifierConfig cc;
  std::vector<float> W;  // classifier weights
  testing::HeadProblem labels;
};

// The summed BCE of the model at encoder parameters p (classifier fixed: lr = 0), and the gradient the
// encoder accumulates for it.
double loss_and_grad(const Model& m, const Batch& x, const std::vector<float>& p, std::vector<float>* grad,
                     uint64_t step) {
  CountingAllocator alloc;
  Encoder enc(m.ec, alloc);
  enc.set_parameters(p);
  Classifier clf(m.cc, alloc);
  clf.set_weights(m.W);
  const int64_t B = x.rows().rows();
  const float* H = enc.forward(x.rows(), true, step);
  std::vector<float> dH(static_cast<size_t>(B * m.ec.D));
  const double loss = clf.step(H, B, m.labels.labels(), 0.0f, 0, dH.data()).loss;
  if (grad) {
    enc.backward(x.rows(), dH.data(), step);
    const auto g = enc.gradient();
    grad->assign(g.begin(), g.end());
  }
  return loss;
}

Model make_model(Activation act, float dropout) {
  Model m;
  m.ec.F = 6;
  m.ec.D = 5;
  m.ec.activation = act;
  m.ec.dropout = dropout;
  m.ec.max_batch = 4;
  m.ec.seed = 3;
  m.labels = testing::make_head_problem(4, 7, 5, 2, 99);
  m.cc.V = 7;
  m.cc.D = 5;
  m.cc.max_batch = 4;
  m.cc.max_positives = 8;
  m.W = testing::normal_weights(7, 5, 0.7, 5);
  return m;
}

void check_finite_differences(Activation act, float dropout) {
  SCOPED_TRACE(to_string(act) + " dropout " + std::to_string(dropout));
  const Model m = make_model(act, dropout);
  const Batch x = make_batch(4, m.ec.F, 17);
  std::vector<float> p0 = testing::normal_weights(m.ec.F + 1, m.ec.D, 0.8, 19);
  std::vector<float> grad;
  const uint64_t step = 5;
  loss_and_grad(m, x, p0, &grad, step);
  // pre-activations, to keep ReLU's kink out of the differences
  CountingAllocator alloc;
  Encoder enc(m.ec, alloc);
  enc.set_parameters(p0);
  const float h = 1e-2f;
  int checked = 0;
  for (size_t i = 0; i < p0.size(); ++i) {
    std::vector<float> pp = p0, pm = p0;
    pp[i] += h;
    pm[i] -= h;
    const double lp_ = loss_and_grad(m, x, pp, nullptr, step), lm = loss_and_grad(m, x, pm, nullptr, step);
    const double fd = (lp_ - lm) / (double(pp[i]) - double(pm[i]));
    if (act == Activation::relu) {
      // a kink inside [p - h, p + h] makes the one-sided slopes differ: skip those parameters
      const double l0 = loss_and_grad(m, x, p0, nullptr, step);
      const double right = (lp_ - l0) / h, left = (l0 - lm) / h;
      if (std::fabs(right - left) > 1e-2 * (1 + std::fabs(fd))) continue;
    }
    EXPECT_NEAR(grad[i], fd, 1e-3 + 1e-3 * std::fabs(fd)) << "parameter " << i;
    ++checked;
  }
  EXPECT_GT(checked, int(p0.size()) / 2);
}

TEST(TrainEncoder, GradientMatchesFiniteDifferences) {
  check_finite_differences(Activation::gelu, 0.0f);
  check_finite_differences(Activation::gelu, 0.3f);
  check_finite_differences(Activation::relu, 0.3f);
}

TEST(TrainEncoder, DropoutRateScaleAndEvalMode) {
  EncoderConfig ec;
  ec.F = 3;
  ec.D = 4096;
  ec.dropout = 0.25f;
  ec.max_batch = 2;
  ec.seed = 1;
  CountingAllocator alloc;
  Encoder enc(ec, alloc);
  std::vector<float> p(size_t((ec.F + 1) * ec.D), 0.0f);
  std::fill(p.begin() + ec.F * ec.D, p.end(), 1.0f);  // bias 1: every pre-activation is 1
  enc.set_parameters(p);
  Batch x;
  x.off = {0, 1, 1};
  x.idx = {0};
  x.val = {1.0f};
  const float* H = enc.forward(x.rows(), true, 7);
  int64_t zeros = 0;
  for (int64_t i = 0; i < 2 * ec.D; ++i) {
    EXPECT_TRUE(H[i] == 0.0f || H[i] == 1.0f / 0.75f);
    zeros += H[i] == 0.0f;
  }
  // binomial(8192, 0.25): mean 2048, sd 39
  EXPECT_NEAR(double(zeros), 2048.0, 6 * 39.2);
  std::vector<float> first(H, H + 2 * ec.D);
  H = enc.forward(x.rows(), true, 8);  // another step: another mask
  EXPECT_NE(0, std::memcmp(first.data(), H, first.size() * sizeof(float)));
  H = enc.forward(x.rows(), false, 8);  // evaluation: no dropout
  for (int64_t i = 0; i < 2 * ec.D; ++i) EXPECT_EQ(H[i], 1.0f);
}

// The bf16 encoder's Adam is precision_sim's adam_kahan_step, bit for bit, on packed storage.
TEST(TrainEncoder, Bf16AdamEqualsPrecisionSimKahanAdam) {
  EncoderConfig ec;
  ec.F = 40;
  ec.D = 48;
  ec.precision = EncoderPrecision::bf16;
  ec.adam.weight_decay = 0.01f;
  ec.max_batch = 8;
  ec.seed = 2;
  CountingAllocator alloc;
  Encoder enc(ec, alloc);
  enc.init(9);
  const lp::Quantizer bf16(lp::formats::bfloat16());
  std::vector<float> p = enc.parameters();
  const int64_t nW = ec.F * ec.D;
  lp::KahanAdamState sW{static_cast<size_t>(nW)}, sb{static_cast<size_t>(ec.D)};
  std::vector<float> pW(p.begin(), p.begin() + nW), pb(p.begin() + nW, p.end());
  const testing::HeadProblem hp = testing::make_head_problem(8, 1, ec.D, 0, 3);
  for (int step = 0; step < 4; ++step) {
    const Batch x = make_batch(8, ec.F, 100 + step);
    enc.forward(x.rows(), true, uint64_t(step));
    enc.backward(x.rows(), hp.H.data(), uint64_t(step));
    const auto g = enc.gradient();
    std::vector<float> gW(g.begin(), g.begin() + nW), gb(g.begin() + nW, g.end());
    const float lr = 1e-3f * float(step + 1);
    enc.adam_step(lr);
    lp::AdamOptions o = ec.adam;
    o.lr = lr;
    lp::adam_kahan_step(pW, gW, sW, o, bf16);
    o.weight_decay = 0.0f;  // no decay on the bias
    lp::adam_kahan_step(pb, gb, sb, o, bf16);
    const std::vector<float> got = enc.parameters();
    EXPECT_EQ(0, std::memcmp(got.data(), pW.data(), pW.size() * sizeof(float))) << "step " << step;
    EXPECT_EQ(0, std::memcmp(got.data() + nW, pb.data(), pb.size() * sizeof(float))) << "step " << step;
    for (float v : enc.gradient()) ASSERT_EQ(v, 0.0f);  // cleared
  }
}

// The bf16 encoder's Adam rounds with cpu::bf16_nearest_even in place of precision_sim's bfloat16
// quantizer: the same value for every input, ties, the largest finite values (which round to infinity),
// subnormals, zeros of both signs, infinities, and NaN (NaN either way).
TEST(TrainEncoder, Bf16RoundingEqualsPrecisionSim) {
  const lp::Quantizer bf16(lp::formats::bfloat16());
  std::vector<uint32_t> words = {0x00000000u, 0x80000000u, 0x00000001u, 0x00008000u, 0x00018000u, 0x007fffffu,
                                 0x00800000u, 0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x7f7f7fffu, 0x7f7f8000u,
                                 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                                 0xffc12345u};
  uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {  // and random words of every exponent
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    words.push_back(uint32_t(state >> 32));
  }
  std::vector<float> in(words.size()), want(words.size());
  for (size_t i = 0; i < words.size(); ++i) in[i] = std::bit_cast<float>(words[i]);
  bf16.round(in, want);
  for (size_t i = 0; i < in.size(); ++i) {
    const float got = std::bit_cast<float>(uint32_t(cpu::bf16_nearest_even(in[i])) << 16);
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << words[i];
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want[i])) << std::hex << "input 0x" << words[i];
    }
  }
}

// fp32 Adam against the textbook bias-corrected Adam in float64.
TEST(TrainEncoder, Fp32AdamMatchesTextbookAdam) {
  EncoderConfig ec;
  ec.F = 5;
  ec.D = 8;
  ec.max_batch = 3;
  ec.adam.beta1 = 0.9f;
  ec.adam.beta2 = 0.99f;
  ec.adam.eps = 1e-6f;
  CountingAllocator alloc;
  Encoder enc(ec, alloc);
  enc.init(4);
  const std::vector<float> p0 = enc.parameters();
  std::vector<double> p(p0.begin(), p0.end());
  std::vector<double> m(p.size(), 0), v(p.size(), 0);
  const testing::HeadProblem hp = testing::make_head_problem(3, 1, ec.D, 0, 8);
  for (int t = 1; t <= 5; ++t) {
    const Batch x = make_batch(3, ec.F, 200 + t);
    enc.forward(x.rows(), true, uint64_t(t));
    enc.backward(x.rows(), hp.H.data(), uint64_t(t));
    const auto gs = enc.gradient();
    const std::vector<float> g(gs.begin(), gs.end());
    enc.adam_step(0.01f);
    for (size_t i = 0; i < p.size(); ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.99 * v[i] + 0.01 * double(g[i]) * g[i];
      const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.99, t));
      p[i] -= 0.01 * mh / (std::sqrt(vh) + 1e-6);
    }
    const std::vector<float> got = enc.parameters();
    for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(got[i], p[i], 1e-5 * (1 + std::fabs(p[i]))) << i;
  }
}

TEST(TrainEncoder, RejectsBadConfiguration) {
  CountingAllocator alloc;
  EncoderConfig ec;
  ec.F = 3;
  ec.D = 4;
  ec.max_batch = 2;
  ec.dropout = 1.0f;
  EXPECT_THROW(Encoder(ec, alloc), std::invalid_argument);
  EXPECT_THROW(parse_activation("tanh"), std::invalid_argument);
  EXPECT_THROW(parse_encoder_precision("fp8"), std::invalid_argument);
  ec.dropout = 0.0f;
  Encoder enc(ec, alloc);
  Batch x;
  x.off = {0, 1};
  x.idx = {3};  // feature 3 of 3
  x.val = {1.0f};
  EXPECT_THROW(enc.forward(x.rows(), true, 0), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::train
