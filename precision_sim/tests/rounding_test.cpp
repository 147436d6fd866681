// Rounding: documented corner values (ml_dtypes' and the saturating rules), and every mode against an
// independent reference written with doubles (frexp/ldexp on the value, not bit manipulation).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "precision_sim/detail/plan.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/tests/round_reference.hpp"

namespace lobench::precision {
namespace {

using detail::f2u;
using detail::u2f;

uint32_t code(const char* fmt, float x, Rounding m = Rounding::nearest_even) {
  return Quantizer(parse_format(fmt), Isa::scalar).encode(x, m);
}

TEST(Rounding, Float8E4m3fnCornersAsMlDtypes) {
  EXPECT_EQ(code("e4m3fn", 448.0f), 0x7Eu);
  EXPECT_EQ(code("e4m3fn", 464.0f), 0x7Eu);  // tie with the NaN code's value: to even (448)
  EXPECT_EQ(code("e4m3fn", 465.0f), 0x7Fu);  // overflow: NaN (no inf)
  EXPECT_EQ(code("e4m3fn", 480.0f), 0x7Fu);
  EXPECT_EQ(code("e4m3fn", 1e6f), 0x7Fu);
  EXPECT_EQ(code("e4m3fn", -1e6f), 0xFFu);
  EXPECT_EQ(code("e4m3fn", INFINITY), 0x7Fu);
  EXPECT_EQ(code("e4m3fn", -INFINITY), 0xFFu);
  EXPECT_EQ(code("e4m3fn", NAN), 0x7Fu);
  EXPECT_EQ(code("e4m3fn", -NAN), 0xFFu);
  EXPECT_EQ(code("e4m3fn", std::ldexp(1.0f, -10)), 0x00u);  // half the smallest subnormal: tie to 0
  EXPECT_EQ(code("e4m3fn", 1.5f * std::ldexp(1.0f, -10)), 0x01u);
  EXPECT_EQ(code("e4m3fn", -1e-30f), 0x80u);  // -0 exists
  EXPECT_EQ(code("e4m3fn", 1.0f), 0x38u);
}

TEST(Rounding, Float8E5m2AndBfloat16CornersAsMlDtypes) {
  EXPECT_EQ(code("e5m2", 61439.0f), 0x7Bu);
  EXPECT_EQ(code("e5m2", 61440.0f), 0x7Cu);  // tie to even -> +inf
  EXPECT_EQ(code("e5m2", -1e6f), 0xFCu);
  EXPECT_EQ(code("e5m2", NAN), 0x7Eu);
  EXPECT_EQ(code("e5m2", -NAN), 0xFEu);
  EXPECT_EQ(code("e5m2", std::ldexp(1.0f, -16)), 0x01u);
  EXPECT_EQ(code("bf16", FLT_MAX), 0x7F80u);
  EXPECT_EQ(code("bf16", 1e-40f), 0x0001u);  // subnormals kept
  EXPECT_EQ(code("bf16", 1.0f + std::ldexp(1.0f, -8)), 0x3F80u);
  EXPECT_EQ(code("bf16", 1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82u);
  EXPECT_EQ(code("bf16", NAN), 0x7FC0u);
  EXPECT_EQ(code("bf16", u2f(0xFF800001u)), 0xFFC0u);  // signalling -NaN: quiet, sign kept, payload dropped
}

TEST(Rounding, FnuzHasNoNegativeZeroAndOneNaN) {
  EXPECT_EQ(code("e4m3fnuz", -1e-30f), 0x00u);
  EXPECT_EQ(code("e4m3fnuz", -0.0f), 0x00u);
  EXPECT_EQ(code("e4m3fnuz", NAN), 0x80u);
  EXPECT_EQ(code("e4m3fnuz", -INFINITY), 0x80u);
  EXPECT_EQ(code("e4m3fnuz", 1000.0f), 0x80u);
  EXPECT_EQ(code("e4m3fnuz", -240.0f), 0xFFu);
  EXPECT_TRUE(std::isnan(Quantizer(parse_format("e5m2fnuz")).round(1e9f)));
}

TEST(Rounding, MxFormatsSaturateAndMapNaNToFlippedZero) {
  EXPECT_EQ(code("e2m1fn", 100.0f), 0x7u);
  EXPECT_EQ(code("e2m1fn", -INFINITY), 0xFu);
  EXPECT_EQ(code("e2m1fn", NAN), 0x8u);   // ml_dtypes: +NaN -> -0
  EXPECT_EQ(code("e2m1fn", -NAN), 0x0u);  // -NaN -> +0
  EXPECT_EQ(code("e3m2fn", 30.0f), 0x1Fu);
  EXPECT_EQ(code("e2m3fn", 7.75f), 0x1Fu);
  const Quantizer q(formats::float4_e2m1fn());
  EXPECT_EQ(f2u(q.round(NAN)), 0x80000000u);
}

TEST(Rounding, E8m0fnuHasNoZeroAndNoSign) {
  EXPECT_EQ(code("e8m0fnu", 1.0f), 0x7Fu);
  // Ties round up whatever the exponent field's parity (the significand is the implicit 1 alone).
  EXPECT_EQ(code("e8m0fnu", 1.5f), 0x80u);
  EXPECT_EQ(code("e8m0fnu", 3.0f), 0x81u);
  EXPECT_EQ(code("e8m0fnu", 0.0f), 0xFFu);
  EXPECT_EQ(code("e8m0fnu", -1.0f), 0xFFu);
  // 2^-127 * (1 + 2^-22) is nearer 2^-127 (code 0x00) than 2^-126 (0x01). This test used to expect
  // 0x01, written against ml_dtypes 0.6.0, which rounded as if code 0x00 were zero; ml_dtypes 0.7.0
  // gives the nearest value, and so do we (Rounding.E8m0fnuBelowTwoToMinus126 covers the whole range).
  EXPECT_EQ(code("e8m0fnu", u2f(0x00400001u)), 0x00u);
  EXPECT_EQ(code("e8m0fnu", 1e-45f), 0x00u);
  EXPECT_EQ(code("e8m0fnu", 2.5e38f), 0xFEu);  // below 1.5 * 2^127
  EXPECT_EQ(code("e8m0fnu", 2.6e38f), 0xFFu);  // above: overflow to NaN
  EXPECT_EQ(code("e8m0fnu_sat", 0.0f), 0x00u);
  EXPECT_EQ(code("e8m0fnu_sat", -1.0f), 0x00u);
  EXPECT_EQ(code("e8m0fnu_sat", 2.6e38f), 0xFEu);
  EXPECT_EQ(f2u(Quantizer(formats::float8_e8m0fnu()).round(1e-45f)), 0x00400000u);  // 2^-127
}

// float32 inputs below 2^-126 (the float32 subnormals, bits 0x00000001..0x007FFFFF) for e8m0fnu: the
// only candidates are 2^-127 (code 0x00, bits 0x00400000) and 2^-126 (code 0x01, bits 0x00800000).
// Nearest: code 0 up to 0x005FFFFF, the tie 1.5 * 2^-127 (0x00600000) and above round up (ml_dtypes
// 0.7.0 does the same). Every mode: nothing below 2^-127 (no zero), so all inputs at or below it give
// code 0; above it, only the two neighbours. Every ISA path.
TEST(Rounding, E8m0fnuBelowTwoToMinus126) {
  std::vector<float> x;
  for (uint32_t b = 1; b < 0x00800000u; ++b) x.push_back(u2f(b));
  for (Isa isa : available_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    const Quantizer q(formats::float8_e8m0fnu(), isa);
    std::vector<uint8_t> c(x.size());
    q.encode(x, c);
    size_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const uint32_t want = f2u(x[i]) < 0x00600000u ? 0x00u : 0x01u;
      if (c[i] != want && ++bad <= 5) ADD_FAILURE() << "input " << std::hex << f2u(x[i]) << ": code " << int{c[i]};
    }
    EXPECT_EQ(bad, 0u);
    for (Rounding mode : kAllRoundings) {
      RoundingOptions opt;
      opt.mode = mode;
      opt.seed = 5;
      std::vector<float> y(x.size());
      q.round(x, y, opt);
      size_t outside = 0, above_from_below = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const uint32_t b = f2u(y[i]);
        if (b != 0x00400000u && b != 0x00800000u) ++outside;
        if (f2u(x[i]) <= 0x00400000u && b != 0x00400000u) ++above_from_below;
      }
      EXPECT_EQ(outside, 0u) << rounding_name(mode);
      EXPECT_EQ(above_from_below, 0u) << rounding_name(mode) << ": an input <= 2^-127 left the smallest value";
    }
  }
  // Directed modes inside (2^-127, 2^-126): up goes to 2^-126, toward zero and down to 2^-127.
  EXPECT_EQ(code("e8m0fnu", u2f(0x00400001u), Rounding::up), 0x01u);
  EXPECT_EQ(code("e8m0fnu", u2f(0x007FFFFFu), Rounding::toward_zero), 0x00u);
  EXPECT_EQ(code("e8m0fnu", u2f(0x007FFFFFu), Rounding::down), 0x00u);
  EXPECT_EQ(code("e8m0fnu", u2f(0x00600000u), Rounding::nearest_away), 0x01u);
  EXPECT_EQ(code("e8m0fnu", u2f(0x005FFFFFu), Rounding::nearest_away), 0x00u);
}

// Stochastic rounding between 2^-127 and 2^-126 chooses 2^-126 with probability (x - 2^-127) / 2^-127.
TEST(Rounding, E8m0fnuStochasticBelowTwoToMinus126IsProportional) {
  const Quantizer q(formats::float8_e8m0fnu());
  for (uint32_t bits : {0x00500000u, 0x00700000u}) {  // 1.25 and 1.75 * 2^-127
    const double p_up = (static_cast<double>(bits) - 0x00400000) / 0x00400000;
    for (Rounding mode : {Rounding::stochastic, Rounding::stochastic_exact}) {
      const std::vector<float> x(1 << 16, u2f(bits));
      std::vector<float> y(x.size());
      RoundingOptions opt;
      opt.mode = mode;
      opt.seed = 11;
      q.round(x, y, opt);
      size_t up = 0;
      for (float v : y) up += f2u(v) == 0x00800000u;
      const double frac = static_cast<double>(up) / x.size();
      EXPECT_NEAR(frac, p_up, 0.01) << rounding_name(mode) << " at " << std::hex << bits;  // ~6 sigma
    }
  }
}

// float8_e5m3fnu (ml_dtypes 0.7.0): unsigned, bias 15, subnormals, max 114688, 0xFF NaN, no inf.
TEST(Rounding, E5m3fnuCornersAsMlDtypes) {
  EXPECT_EQ(code("e5m3fnu", 1.0f), 0x78u);
  EXPECT_EQ(code("e5m3fnu", 114688.0f), 0xFEu);
  EXPECT_EQ(code("e5m3fnu", 1e9f), 0xFFu);       // overflow: NaN
  EXPECT_EQ(code("e5m3fnu", INFINITY), 0xFFu);
  EXPECT_EQ(code("e5m3fnu", -1.0f), 0xFFu);      // negative: NaN
  EXPECT_EQ(code("e5m3fnu", -1e-30f), 0xFFu);    // even a tiny one
  EXPECT_EQ(code("e5m3fnu", -0.0f), 0x00u);      // -0 is +0
  EXPECT_EQ(code("e5m3fnu", std::ldexp(1.0f, -17)), 0x01u);  // smallest subnormal
  EXPECT_EQ(code("e5m3fnu", std::ldexp(1.0f, -18)), 0x00u);  // half of it: tie to even (0)
  EXPECT_EQ(code("e5m3fnu_sat", 1e9f), 0xFEu);
  EXPECT_EQ(code("e5m3fnu_sat", -1.0f), 0x00u);
}

TEST(Rounding, SaturatingPolicyFollowsItsRules) {
  // Finite overflow -> ±max in every mode; inf and NaN inputs keep the format's specials.
  EXPECT_EQ(code("e4m3fn_sat", 465.0f), 0x7Eu);
  EXPECT_EQ(code("e4m3fn_sat", 1e30f), 0x7Eu);
  EXPECT_EQ(code("e4m3fn_sat", -1e30f), 0xFEu);
  EXPECT_EQ(code("e4m3fn_sat", FLT_MAX, Rounding::up), 0x7Eu);
  EXPECT_EQ(code("e4m3fn_sat", 449.0f, Rounding::stochastic), 0x7Eu);
  EXPECT_EQ(code("e4m3fn_sat", INFINITY), 0x7Fu);
  EXPECT_EQ(code("e4m3fn_sat", NAN), 0x7Fu);
  EXPECT_EQ(code("e5m2_sat", 61440.0f), 0x7Bu);
  EXPECT_EQ(code("e5m2_sat", -1e9f), 0xFBu);
  EXPECT_EQ(code("e5m2_sat", INFINITY), 0x7Cu);
  EXPECT_EQ(code("bf16_sat", FLT_MAX), 0x7F7Fu);
  EXPECT_EQ(code("bf16_sat", -INFINITY), 0xFF80u);
  EXPECT_EQ(code("e4m3fnuz_sat", -1000.0f), 0xFFu);
  EXPECT_EQ(code("e4m3fnuz_sat", INFINITY), 0x80u);
  EXPECT_EQ(code("e4m3fn_sat", 1.0f), 0x38u);  // in range: unchanged
}

TEST(Rounding, DirectedModesAtOverflow) {
  EXPECT_EQ(code("e4m3fn", 1000.0f, Rounding::toward_zero), 0x7Eu);
  EXPECT_EQ(code("e4m3fn", -1000.0f, Rounding::toward_zero), 0xFEu);
  EXPECT_EQ(code("e4m3fn", 449.0f, Rounding::up), 0x7Fu);
  EXPECT_EQ(code("e4m3fn", -449.0f, Rounding::up), 0xFEu);
  EXPECT_EQ(code("e4m3fn", -449.0f, Rounding::down), 0xFFu);
  EXPECT_EQ(code("e4m3fn", 449.0f, Rounding::down), 0x7Eu);
  EXPECT_EQ(code("e5m2", 57345.0f, Rounding::up), 0x7Cu);
  EXPECT_EQ(code("e5m2", 1e9f, Rounding::toward_zero), 0x7Bu);
  EXPECT_EQ(code("e5m2", 60000.0f, Rounding::nearest_away), 0x7Bu);
  EXPECT_EQ(code("e5m2", 61440.0f, Rounding::nearest_away), 0x7Cu);
  EXPECT_EQ(code("bf16", FLT_MAX, Rounding::toward_zero), 0x7F7Fu);
  // Stochastic: the upper neighbour (480) is past the maximum, so choosing it overflows.
  const Quantizer e4m3fn(formats::float8_e4m3fn());
  EXPECT_EQ(e4m3fn.encode(449.0f, Rounding::stochastic_exact, 0xFFFFFFFFu), 0x7Eu);  // largest word: down
  EXPECT_EQ(e4m3fn.encode(449.0f, Rounding::stochastic_exact, 0u), 0x7Fu);           // smallest word: up -> NaN
  EXPECT_EQ(e4m3fn.encode(-449.0f, Rounding::stochastic, 0xFFFFFu), 0xFFu);
}

TEST(Rounding, TiesAwayVersusEven) {
  EXPECT_EQ(code("e4m3fn", 1.0625f, Rounding::nearest_even), 0x38u);  // 1 + 1/16: tie
  EXPECT_EQ(code("e4m3fn", 1.0625f, Rounding::nearest_away), 0x39u);
  EXPECT_EQ(code("e4m3fn", -1.0625f, Rounding::nearest_away), 0xB9u);
  EXPECT_EQ(code("e4m3fn", 1.1875f, Rounding::nearest_even), 0x3Au);  // 1 + 3/16: tie, to even
}

// ---------------------------------------------------------------------------------------------
// Every mode against the independent double-precision reference (round_reference.hpp).

using testing_ref::formats_under_test;
using testing_ref::ref_round;
using testing_ref::same;
using testing_ref::stratified_inputs;

TEST(Rounding, EveryModeMatchesTheDoubleReference) {
  std::mt19937 rng(7);
  for (const Format& f : formats_under_test()) {
    const Quantizer q(f, Isa::scalar);
    const std::vector<float> xs = stratified_inputs(f, 48, 11);
    for (Rounding mode : kAllRoundings) {
      for (int k : {0, 1, 3, 8, 16, 31}) {
        if (!is_stochastic(mode) && k != 0) continue;
        if (mode == Rounding::stochastic_exact && k != 0) continue;
        const int kk = q.resolved_sr_bits(k);
        int bad = 0;
        for (float x : xs) {
          const uint32_t word = rng();
          const double want = ref_round(x, f, mode, word, kk);
          const float got = q.round(x, mode, word, k);
          if (!same(want, got) && ++bad <= 5)
            ADD_FAILURE() << f.name << " " << rounding_name(mode) << " k=" << kk << " x=" << x << " ("
                          << std::hexfloat << x << ") word=" << std::hex << word << std::dec << ": got " << got
                          << " want " << want;
        }
      }
    }
  }
}

TEST(Rounding, RoundEqualsDecodeOfEncode) {
  for (const Format& f : formats_under_test()) {
    if (f.bits() > 16) continue;
    const Quantizer q(f, Isa::scalar);
    std::mt19937 rng(3);
    for (float x : stratified_inputs(f, 8, 5))
      for (Rounding mode : kAllRoundings) {
        const uint32_t w = rng();
        ASSERT_EQ(f2u(q.round(x, mode, w)), f2u(q.decode(q.encode(x, mode, w))))
            << f.name << " " << rounding_name(mode) << " " << x;
      }
  }
}

TEST(Rounding, ModeNames) {
  for (Rounding m : kAllRoundings) EXPECT_EQ(parse_rounding(rounding_name(m)), m);
  EXPECT_EQ(parse_rounding("RNE"), Rounding::nearest_even);
  EXPECT_EQ(parse_rounding("sr"), Rounding::stochastic);
  EXPECT_EQ(parse_rounding("sr-exact"), Rounding::stochastic_exact);
  EXPECT_THROW((void)parse_rounding("banker"), std::invalid_argument);
  try {
    (void)parse_rounding("banker");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stochastic"), std::string::npos);
  }
}

TEST(Rounding, SrBitsAreValidated) {
  const Quantizer q(formats::bfloat16());
  EXPECT_EQ(q.resolved_sr_bits(0), 16);
  EXPECT_EQ(Quantizer(formats::float8_e4m3fn()).resolved_sr_bits(0), 20);
  EXPECT_THROW((void)q.resolved_sr_bits(32), std::invalid_argument);
  EXPECT_THROW((void)q.resolved_sr_bits(-1), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::precision
