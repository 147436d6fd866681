// Formats: preset limits, name parsing (including the e4m3 ambiguity), validation.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"

namespace lobench::precision {
namespace {

struct Limits {
  const char* name;
  int bits;
  double max;
  double min_normal;
  double min_positive;
  bool inf;
  bool nan;
};

TEST(Format, PresetLimitsMatchTheirDefinitions) {
  const Limits table[] = {
      {"float32", 32, 3.4028234663852886e38, std::ldexp(1.0, -126), std::ldexp(1.0, -149), true, true},
      {"tf32", 19, std::ldexp(2.0 - std::ldexp(1.0, -10), 127), std::ldexp(1.0, -126), std::ldexp(1.0, -136), true, true},
      {"bfloat16", 16, std::ldexp(2.0 - std::ldexp(1.0, -7), 127), std::ldexp(1.0, -126), std::ldexp(1.0, -133), true, true},
      {"float16", 16, 65504, std::ldexp(1.0, -14), std::ldexp(1.0, -24), true, true},
      {"float8_e3m4", 8, 15.5, 0.25, std::ldexp(1.0, -6), true, true},
      {"float8_e4m3", 8, 240, std::ldexp(1.0, -6), std::ldexp(1.0, -9), true, true},
      {"float8_e4m3fn", 8, 448, std::ldexp(1.0, -6), std::ldexp(1.0, -9), false, true},
      {"float8_e4m3fnuz", 8, 240, std::ldexp(1.0, -7), std::ldexp(1.0, -10), false, true},
      {"float8_e4m3b11fnuz", 8, 30, std::ldexp(1.0, -10), std::ldexp(1.0, -13), false, true},
      {"float8_e5m2", 8, 57344, std::ldexp(1.0, -14), std::ldexp(1.0, -16), true, true},
      {"float8_e5m2fnuz", 8, 57344, std::ldexp(1.0, -15), std::ldexp(1.0, -17), false, true},
      {"float8_e5m3fnu", 8, 114688, std::ldexp(1.0, -14), std::ldexp(1.0, -17), false, true},
      {"float8_e8m0fnu", 8, std::ldexp(1.0, 127), std::ldexp(1.0, -127), std::ldexp(1.0, -127), false, true},
      {"float6_e2m3fn", 6, 7.5, 1.0, 0.125, false, false},
      {"float6_e3m2fn", 6, 28, 0.25, 0.0625, false, false},
      {"float4_e2m1fn", 4, 6, 1.0, 0.5, false, false},
  };
  for (const auto& t : table) {
    SCOPED_TRACE(t.name);
    const Format f = parse_format(t.name);
    EXPECT_EQ(f.name, t.name);
    EXPECT_EQ(f.bits(), t.bits);
    EXPECT_EQ(f.max_finite(), t.max);
    EXPECT_EQ(f.min_normal(), t.min_normal);
    EXPECT_EQ(f.min_positive(), t.min_positive);
    EXPECT_EQ(f.has_inf(), t.inf);
    EXPECT_EQ(f.has_nan(), t.nan);
  }
  EXPECT_EQ(formats::all_presets().size(), 16u);
  EXPECT_EQ(formats::ml_dtypes_presets().size(), 14u);
  EXPECT_FALSE(parse_format("float8_e5m3fnu").is_signed);
}

TEST(Format, AliasesAndCase) {
  EXPECT_EQ(parse_format("bf16").name, "bfloat16");
  EXPECT_EQ(parse_format("BF16").name, "bfloat16");
  EXPECT_EQ(parse_format("fp16").name, "float16");
  EXPECT_EQ(parse_format("half").name, "float16");
  EXPECT_EQ(parse_format("fp32").name, "float32");
  EXPECT_EQ(parse_format("e4m3fn").name, "float8_e4m3fn");
  EXPECT_EQ(parse_format("e8m0fnu").name, "float8_e8m0fnu");
  EXPECT_EQ(parse_format("E5M3FNU").name, "float8_e5m3fnu");
  EXPECT_EQ(parse_format("e5m3fnu_sat").name, "float8_e5m3fnu_sat");
  EXPECT_EQ(parse_format("e2m1fn").name, "float4_e2m1fn");
  EXPECT_EQ(parse_format("fp6_e3m2").name, "float6_e3m2fn");
}

TEST(Format, E4m3IsAmbiguousAndResolvedAsDocumented) {
  // OCP / PyTorch / NVIDIA "fp8 e4m3" is e4m3fn (max 448); a bare eXmY is IEEE-like (ml_dtypes'
  // float8_e4m3, max 240, with inf).
  EXPECT_EQ(parse_format("fp8_e4m3").name, "float8_e4m3fn");
  EXPECT_EQ(parse_format("fp8_e4m3").max_finite(), 448);
  EXPECT_EQ(parse_format("e4m3").name, "float8_e4m3");
  EXPECT_EQ(parse_format("e4m3").max_finite(), 240);
  EXPECT_TRUE(parse_format("e4m3").has_inf());
}

TEST(Format, GenericEXmYIsIeeeLikeAndCanonicalised) {
  const Format f = parse_format("e5m7");
  EXPECT_EQ(f.name, "e5m7");
  EXPECT_EQ(f.bias, 15);
  EXPECT_TRUE(f.subnormals);
  EXPECT_EQ(f.specials, Specials::ieee);
  EXPECT_EQ(f.max_finite(), std::ldexp(2.0 - std::ldexp(1.0, -7), 15));
  EXPECT_EQ(f.min_positive(), std::ldexp(1.0, -14 - 7));
  EXPECT_EQ(parse_format("e3m4").name, "float8_e3m4");  // same encoding as the preset
  EXPECT_EQ(parse_format("e5m2").name, "float8_e5m2");
  EXPECT_EQ(parse_format("e8m7").name, "bfloat16");
  EXPECT_EQ(parse_format("e5m10").name, "float16");
  EXPECT_EQ(parse_format("e8m10").name, "tf32");
  EXPECT_EQ(parse_format("e2m1").max_finite(), 3.0);  // IEEE-like (top exponent is inf/NaN), not the MX fp4 (max 6)
}

TEST(Format, SaturatingSuffix) {
  const Format f = parse_format("e4m3fn_sat");
  EXPECT_EQ(f.name, "float8_e4m3fn_sat");
  EXPECT_EQ(f.overflow, Overflow::saturate);
  EXPECT_TRUE(f.same_encoding(make_format(4, 3, 7, true, Specials::fn, Overflow::saturate)));
  EXPECT_EQ(parse_format("e5m7_sat").overflow, Overflow::saturate);
}

TEST(Format, UnknownNamesListTheValidOnes) {
  for (const char* bad : {"bogus", "e9m3", "e4m0", "e4m24", "float8", "e4m3_", ""}) {
    SCOPED_TRACE(bad);
    try {
      (void)parse_format(bad);
      FAIL() << "accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("float8_e4m3fn"), std::string::npos) << msg;
      EXPECT_NE(msg.find("eXmY"), std::string::npos) << msg;
    }
  }
  try {
    (void)parse_format("e8m0");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("e8m0fnu"), std::string::npos) << e.what();
  }
}

TEST(Format, ValidationRejectsFormatsFloat32CannotHold) {
  EXPECT_THROW(make_format(0, 3, 0, true, Specials::ieee), std::invalid_argument);
  EXPECT_THROW(make_format(4, 24, 7, true, Specials::ieee), std::invalid_argument);
  EXPECT_THROW(make_format(8, 3, 128, true, Specials::fn), std::invalid_argument);  // min normal 2^-127
  EXPECT_THROW(make_format(8, 3, 127, true, Specials::fn), std::invalid_argument);  // max binade 2^128
  EXPECT_THROW(make_format(4, 3, 7, true, Specials::ieee, Overflow::special, /*is_signed=*/false), std::invalid_argument);
  EXPECT_THROW(make_format(5, 0, 15, true, Specials::ieee), std::invalid_argument);  // no NaN code
  EXPECT_NO_THROW(make_format(3, 2, 3, false, Specials::finite));
  EXPECT_EQ(make_format(3, 2, 3, false, Specials::finite).name, "e3m2finite_nosub");
  EXPECT_EQ(make_format(4, 3, 11, true, Specials::fnuz).name, "e4m3b11fnuz");
}

TEST(Format, PackingWidths) {
  EXPECT_EQ(code_bytes(formats::float4_e2m1fn()), 1);
  EXPECT_EQ(code_bytes(formats::float8_e4m3fn()), 1);
  EXPECT_EQ(code_bytes(formats::bfloat16()), 2);
  EXPECT_EQ(code_bytes(parse_format("e5m7")), 2);
  EXPECT_EQ(code_bytes(formats::tf32()), 0);
  EXPECT_FALSE(can_pack(formats::float32()));
  EXPECT_FALSE(can_pack(formats::tf32()));
  EXPECT_TRUE(can_pack(formats::float16()));
}

TEST(Format, DescribeNamesTheFormat) {
  const std::string d = describe(formats::float8_e4m3fn());
  EXPECT_NE(d.find("float8_e4m3fn"), std::string::npos);
  EXPECT_NE(d.find("448"), std::string::npos);
}

}  // namespace
}  // namespace lobench::precision
