// The epilogue precisions (variants/epilogue.hpp): the rounding each operation gets, the kernels built on
// it, and the variants that take them, against precision_sim's rounding and the float64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/epilogue.hpp"
#include "variants/tests/ragged_cases.hpp"
#include "variants/tests/reference_checks.hpp"

namespace lobench {
namespace {

float from_bits(uint32_t w) {
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}
uint32_t bits(float f) {
  uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  return w;
}

struct Grid {
  const char* format;  // precision_sim's name
  void (*round)(const float*, int64_t, float*);
  int mantissa_bits;
};
const Grid kGrids[] = {{"bfloat16", cpu::round_to_bf16_grid, 7}, {"float16", cpu::round_to_fp16_grid, 10}};

// Every float32 class the rounding meets: random bit patterns (all exponents, both signs), and around
// each power of two from 2^-150 to 2^128 the values one, two and half a format ulp apart (ties), the
// largest finite values and their neighbours, zeros, infinities, NaN.
std::vector<float> edge_and_random_floats(int mantissa_bits) {
  std::vector<float> x;
  std::mt19937 rng(44);
  for (int i = 0; i < 200000; ++i) x.push_back(from_bits(uint32_t(rng())));
  for (int e = -150; e <= 127; ++e) {
    const float p = std::ldexp(1.0f, e);
    for (int k = -3; k <= 3; ++k) {
      const float step = std::ldexp(1.0f, e - mantissa_bits - 1);  // half a format ulp at p
      for (float v : {p + float(k) * step, p - float(k) * step * 0.5f, std::nextafter(p + float(k) * step, 0.0f),
                      std::nextafter(p + float(k) * step, INFINITY)})
        if (std::isfinite(v)) x.insert(x.end(), {v, -v});
    }
  }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, std::numeric_limits<float>::quiet_NaN(), 65504.0f, 65519.0f,
                  65520.0f, 65536.0f, 3.3895314e38f, std::numeric_limits<float>::max(), 5.9604645e-8f, 2.9802322e-8f,
                  2.9802326e-8f, 6.097555e-5f, 6.1035156e-5f, 1e-45f})
    x.insert(x.end(), {v, -v});
  return x;
}

// The rounding of each operation equals precision_sim's nearest-even rounding (the ml_dtypes-exact one)
// bit for bit, NaN for NaN, over every class of input.
TEST(EpilogueRounding, EqualsPrecisionSimsNearestEvenBitForBit) {
  for (const Grid& g : kGrids) {
    const std::vector<float> x = edge_and_random_floats(g.mantissa_bits);
    std::vector<float> ours(x.size()), theirs(x.size());
    g.round(x.data(), int64_t(x.size()), ours.data());
    precision::Quantizer(precision::parse_format(g.format)).round(x, theirs);
    int64_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const bool same = std::isnan(theirs[i]) ? std::isnan(ours[i]) : bits(ours[i]) == bits(theirs[i]);
      if (!same && differ++ < 5)
        ADD_FAILURE() << g.format << ": " << x[i] << " (0x" << std::hex << bits(x[i]) << ") gives 0x" << bits(ours[i])
                      << ", precision_sim 0x" << bits(theirs[i]) << std::dec;
    }
    EXPECT_EQ(differ, 0) << g.format << " over " << x.size() << " inputs";
  }
}

// The multiply-add of the rounded kernels is the float64 value a·b + c rounded once to the format: against
// a scalar model (round to odd at float32 by nextafter, then precision_sim's nearest-even rounding) on
// operands of the format's grid, including exact results, ties of the format, signs and cancellation.
TEST(EpilogueRounding, MultiplyAddIsRoundedOnceFromFloat64) {
  for (const auto& [e, format] : {std::pair{Epilogue::bf16, "bfloat16"}, std::pair{Epilogue::fp16, "float16"}}) {
    const precision::Quantizer q(precision::parse_format(format));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(-12, 12);
    std::vector<float> a, b, c;
    for (int i = 0; i < 100000; ++i) {
      a.push_back(q.round(std::ldexp(mantissa(rng), exponent(rng))));
      b.push_back(q.round(std::ldexp(mantissa(rng), exponent(rng))));
      c.push_back(i % 4 == 0 ? -a.back() * b.back() : q.round(std::ldexp(mantissa(rng), exponent(rng))));
    }
    std::vector<float> ours(a.size());
    cpu::epilogue_fma(e, a.data(), b.data(), c.data(), int64_t(a.size()), ours.data());
    int64_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const double exact = double(a[i]) * double(b[i]) + double(c[i]);
      float f = float(exact);
      if (double(f) != exact) {
        if (std::fabs(double(f)) > std::fabs(exact)) f = std::nextafter(f, 0.0f);
        f = from_bits(bits(f) | 1u);
      }
      const float model = q.round(f);
      if (bits(model) != bits(ours[i]) && differ++ < 5)
        ADD_FAILURE() << format << ": " << a[i] << "·" << b[i] << " + " << c[i] << " gives " << ours[i] << ", model " << model;
    }
    EXPECT_EQ(differ, 0) << format;
  }
}

// The kernels compute in the format: with a row scale of 1 every σ they store and every softplus lies on
// its grid, and both stay within the error of the fp32 algorithm computed at that precision, per element
// against float64 on |x| ≤ 8 (σ ≥ 3e-4). The bounds follow from the algorithm, not from a run: bfloat16
// rounds Cody–Waite's ln 2 split (its high part has 9 bits) so e^{−|x|} is off by up to n·2^−9 for
// n = round(|x|·log2 e) ≤ 12, plus ten roundings of u = 2^−8: 2^−4 in all; binary16 holds the split
// exactly, leaving the roundings: 16u with u = 2^−11.
TEST(EpilogueKernels, ComputeOnTheFormatsGridWithinItsError) {
  struct Case {
    Epilogue e;
    void (*round)(const float*, int64_t, float*);
    double bound;
  };
  for (const Case& c : {Case{Epilogue::bf16, cpu::round_to_bf16_grid, 0x1p-4}, Case{Epilogue::fp16, cpu::round_to_fp16_grid, 16 * 0x1p-11}}) {
    const cpu::BceTileKernels& k = cpu::bce_tile_kernels_for(c.e);
    std::vector<float> x;
    for (int i = -8000; i <= 8000; ++i) x.push_back(float(i) / 1000.0f);
    const int64_t n = int64_t(x.size());
    std::vector<float> softplus(x.size()), sigmoid(x.size()), again(x.size());
    k.softplus_sigmoid_elements(x.data(), n, softplus.data(), sigmoid.data());
    double worst_sigmoid = 0, worst_softplus = 0;
    for (std::vector<float>* y : {&softplus, &sigmoid}) {
      c.round(y->data(), n, again.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(bits((*y)[i]), bits(again[i])) << to_string(c.e) << " off its grid at x = " << x[i];
    }
    for (int64_t i = 0; i < n; ++i) {
      const double xf = [&] { float r; c.round(&x[i], 1, &r); return double(r); }();  // the logit as read
      const double sig = 1.0 / (1.0 + std::exp(-xf)), sp = std::max(xf, 0.0) + std::log1p(std::exp(-std::abs(xf)));
      worst_sigmoid = std::max(worst_sigmoid, std::abs(sigmoid[i] - sig) / sig);
      worst_softplus = std::max(worst_softplus, std::abs(softplus[i] - sp) / sp);
    }
    EXPECT_LE(worst_sigmoid, c.bound) << to_string(c.e);
    EXPECT_LE(worst_softplus, c.bound) << to_string(c.e);
    // and the precision is not fp32's (the emulation rounds at all)
    EXPECT_GT(worst_sigmoid, 0x1p-20) << to_string(c.e);
  }
  EXPECT_EQ(&cpu::bce_tile_kernels_for(Epilogue::fp32), &cpu::active_bce_tile_kernels());
  // The predicted count is taken on the float32 logit: one that rounds to 0 in the format (2^-26 in
  // binary16, 2^-140 in bfloat16) still counts, as the true positives at the targets count it.
  for (const auto& [e, tiny] : {std::pair{Epilogue::fp16, 0x1p-26f}, std::pair{Epilogue::bf16, 0x1p-140f}}) {
    const cpu::BceTileKernels& k = cpu::bce_tile_kernels_for(e);
    std::vector<float> x(40, -1.0f);
    x[3] = tiny, x[20] = 2.0f, x[37] = tiny;  // (in a full pair of vectors and in the last, partial one)
    double loss = 0;
    int64_t predicted = 0;
    k.softplus_rows(x.data(), 1, 40, 40, &loss, &predicted);
    EXPECT_EQ(predicted, 3) << to_string(e);
    predicted = 0;
    const float scale = 1.0f;
    k.softplus_and_sigmoid(x.data(), 1, 40, 40, &loss, &predicted, &scale);
    EXPECT_EQ(predicted, 3) << to_string(e);
  }
}

// The rule for a step with an epilogue in a format of unit roundoff u: the loss, per-position loss, dA and
// dE within 2u of the float64 reference (the element errors above enter the sums averaged, and the largest
// ones, of tiny σ, weigh least), counts exact outside the near-zero band (rounding keeps a logit's sign).
void expect_epilogue_rule(const StepOutputs& out, const cpu::ReferenceResult& ref, const StepInputs& in, double u,
                          const std::string& where) {
  EXPECT_LE(relative_error(out.loss, ref.loss), 2 * u) << where << " loss " << out.loss << " vs " << ref.loss;
  EXPECT_LE(relative_l2_error(out.per_position_loss.data(), ref.per_position_loss.data(), in.P), 2 * u) << where;
  EXPECT_LE(relative_l2_error(out.dA.data(), ref.dA.data(), in.P * in.D), 2 * u) << where << " dA";
  EXPECT_LE(relative_l2_error(out.dE.data(), ref.dE.data(), in.V * in.D), 2 * u) << where << " dE";
  EXPECT_EQ(count_mismatches(out.counts.data(), ref.counts.data(), ref.near_zero.data(), in.P), 0) << where;
}

// fused, chunked and dense with a bf16 and an fp16 epilogue on the ragged cases: within the rule, and the
// same bits on 1 and 2 threads; fused and chunked, which share tiles and kernels, the same bits as each other;
// the counts those of the fp32 epilogue on the same logits (the library's products for the tiled variants,
// as the rounded epilogue takes them), so that FP = predicted − TP never goes negative.
TEST(EpilogueVariants, FusedChunkedAndDenseKeepTheRuleAndAreIndependentOfThreads) {
  for (const auto& [e, u] : {std::pair{Epilogue::bf16, 0x1p-8}, std::pair{Epilogue::fp16, 0x1p-11}}) {
    for (const auto& c : testing::ragged_cases(10)) {
      const StepData d = make_synthetic(c.shape, c.spec);
      const StepInputs in = d.view();
      const testing::Reference reference(in);
      RunOptions o = c.options;
      o.epilogue = to_string(e);
      std::vector<StepOutputs> tiled;
      for (const char* name : {"fused", "chunked", "dense"}) {
        const Variant* v = Registry::instance().find(name);
        ASSERT_NE(v, nullptr);
        ASSERT_FALSE(v->skip_reason(c.shape, o).has_value()) << name;
        const std::string where = std::string(name) + " epilogue " + to_string(e) + " on " + c.label();
        CountingAllocator a1, a2;
        RunOptions one = o, two = o;
        one.threads = 1, two.threads = 2;
        const StepOutputs out1 = testing::run_step(*v, in, one, a1), out2 = testing::run_step(*v, in, two, a2);
        expect_epilogue_rule(out2, reference.result, in, u, where);
        {
          cpu::set_own_tile_kernels_enabled(false);  // (the logits the rounded epilogue's path makes)
          CountingAllocator a3;
          RunOptions fp32 = two;
          fp32.epilogue = "fp32";
          const StepOutputs same_logits = testing::run_step(*v, in, fp32, a3);
          cpu::set_own_tile_kernels_enabled(true);
          EXPECT_EQ(out2.counts, same_logits.counts) << where;
        }
        EXPECT_EQ(out1.loss, out2.loss) << where;
        EXPECT_EQ(out1.dA, out2.dA) << where;
        EXPECT_EQ(out1.dE, out2.dE) << where;
        EXPECT_EQ(out1.counts, out2.counts) << where;
        if (std::string(name) != "dense") tiled.push_back(out2);
      }
      EXPECT_EQ(tiled[0].dE, tiled[1].dE) << c.label();
      EXPECT_EQ(tiled[0].dA, tiled[1].dA) << c.label();
      EXPECT_EQ(tiled[0].per_position_loss, tiled[1].per_position_loss) << c.label();
    }
  }
}

// Variants that compute their element-wise work themselves refuse another precision, naming it.
TEST(EpilogueVariants, OthersRefuseAnEpilogueTheyDoNotCompute) {
  RunOptions o;
  o.epilogue = "bf16";
  const Shape s{1, 4, 100, 8, 2, Reduction::mean, false};
  const auto why = Registry::instance().find("reference")->skip_reason(s, o);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("epilogue bf16"), std::string::npos) << *why;
  EXPECT_THROW(parse_epilogue("fp8"), std::invalid_argument);
  EXPECT_EQ(parse_epilogue("half"), Epilogue::fp16);
  EXPECT_EQ(parse_epilogue(""), Epilogue::fp32);
}

}  // namespace
}  // namespace lobench
