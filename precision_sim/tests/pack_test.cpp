// Packing: every code of every packable format survives decode -> encode; width and size checks.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "precision_sim/detail/plan.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::precision {
namespace {

std::vector<Format> packable() {
  std::vector<Format> out;
  for (const Format& f : formats::all_presets())
    if (can_pack(f)) out.push_back(f);
  for (const char* n : {"e5m7", "e3m2", "e6m9", "e4m3fn_sat"}) out.push_back(parse_format(n));
  out.push_back(make_format(4, 3, 7, false, Specials::fn));
  return out;
}

// A code decodes to a value that encodes back to the same code, except the codes that are not the
// canonical encoding of their value: extra NaN codes (ieee NaN payloads), and codes with a zero
// exponent field and a non-zero mantissa when subnormals are off (read as zero).
TEST(Pack, EveryCanonicalCodeRoundTrips) {
  for (const Format& f : packable()) {
    const Quantizer q(f);
    const uint32_t count = 1u << f.bits();
    int round_trips = 0;
    for (uint32_t c = 0; c < count; ++c) {
      const float v = q.decode(c);
      const uint32_t back = q.encode(v);
      if (std::isnan(v)) {
        EXPECT_TRUE(q.is_nan_code(back)) << f.name << " " << c;
        continue;
      }
      const uint32_t field = (c >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
      const uint32_t mant = c & ((1u << f.mantissa_bits) - 1);
      if (!f.subnormals && field == 0 && mant != 0) continue;
      EXPECT_EQ(back, c) << f.name << " code " << c << " value " << v;
      ++round_trips;
    }
    EXPECT_GT(round_trips, static_cast<int>(count / 2)) << f.name;
  }
}

TEST(Pack, ArrayEncodeDecodeAgreeWithScalar) {
  for (const Format& f : packable()) {
    const Quantizer q(f);
    std::vector<float> x;
    for (int i = -3000; i <= 3000; ++i) x.push_back(static_cast<float>(i) * static_cast<float>(f.max_finite()) / 2000.0f);
    x.push_back(NAN);
    x.push_back(-INFINITY);
    std::vector<float> back(x.size());
    if (code_bytes(f) == 1) {
      std::vector<uint8_t> codes(x.size());
      encode(x, codes, f, {}, 2);
      decode(codes, back, f, 2);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(codes[i], q.encode(x[i])) << f.name << " " << x[i];
    } else {
      std::vector<uint16_t> codes(x.size());
      encode(x, codes, f, {}, 2);
      decode(codes, back, f, 2);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(codes[i], q.encode(x[i])) << f.name << " " << x[i];
    }
    std::vector<float> rounded(x.size());
    round_to_format(x, rounded, f);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(detail::f2u(back[i]), detail::f2u(rounded[i])) << f.name << " " << x[i];
  }
}

TEST(Pack, WidthAndSizeAreChecked) {
  std::vector<float> x(10, 1.0f);
  std::vector<uint8_t> c8(10), c8_short(9);
  std::vector<uint16_t> c16(10);
  EXPECT_THROW(encode(x, c8, formats::bfloat16()), std::invalid_argument);
  EXPECT_THROW(encode(x, c16, formats::tf32()), std::invalid_argument);
  EXPECT_THROW(encode(x, c8_short, formats::float8_e4m3fn()), std::invalid_argument);
  EXPECT_NO_THROW(encode(x, c16, formats::float8_e4m3fn()));  // 8-bit codes fit 16 bits too
  EXPECT_EQ(c16[0], 0x38u);
}

TEST(Pack, UpperCodeBitsAreIgnoredByDecode) {
  const Quantizer q(formats::float4_e2m1fn());
  std::vector<uint8_t> codes = {0x02, 0xF2, 0x1F};
  std::vector<float> v(3);
  q.decode(codes, v);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 1.0f);
  EXPECT_EQ(v[2], -6.0f);
}

}  // namespace
}  // namespace lobench::precision
