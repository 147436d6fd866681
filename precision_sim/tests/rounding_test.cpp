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
  EXPECT_EQ(code("e8m0fnu", 1.5f), 0x80u);  // tie: even exponent field
  EXPECT_EQ(code("e8m0fnu", 3.0f), 0x81u);
  EXPECT_EQ(code("e8m0fnu", 0.0f), 0xFFu);
  EXPECT_EQ(code("e8m0fnu", -1.0f), 0xFFu);
  EXPECT_EQ(code("e8m0fnu", u2f(0x00400001u)), 0x01u);  // ml_dtypes: rounds as if 0x00 were zero
  EXPECT_EQ(code("e8m0fnu", 1e-45f), 0x00u);
  EXPECT_EQ(code("e8m0fnu", 2.5e38f), 0xFEu);  // below 1.5 * 2^127
  EXPECT_EQ(code("e8m0fnu", 2.6e38f), 0xFFu);  // above: overflow to NaN
  EXPECT_EQ(code("e8m0fnu_sat", 0.0f), 0x00u);
  EXPECT_EQ(code("e8m0fnu_sat", -1.0f), 0x00u);
  EXPECT_EQ(code("e8m0fnu_sat", 2.6e38f), 0xFEu);
  EXPECT_EQ(f2u(Quantizer(formats::float8_e8m0fnu()).round(1e-45f)), 0x00400000u);  // 2^-127
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
