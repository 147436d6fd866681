// The CUDA device path (device/quantize_device.hpp) against Quantizer, bit for bit: every preset format
// (the 13 ml_dtypes formats, float32, tf32) and a few custom eXmY, every rounding mode, stochastic ones
// with the same seed/stream/index_offset and a range of sr_bits, on ~2^20 stratified float32 inputs
// per format; decode of every code. Label gpu: skipped (GTEST_SKIP, with the reason) where no CUDA
// device can run this build's kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision_sim/device/quantize_device.hpp"
#include "precision_sim/device_rounding.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/tests/round_reference.hpp"

namespace lobench::precision {
namespace {

using detail::f2u;
using detail::u2f;

#define SKIP_WITHOUT_DEVICE()                                          \
  do {                                                                 \
    std::string why;                                                   \
    if (!precision_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why; \
  } while (0)

std::vector<Format> device_formats() {
  std::vector<Format> out = formats::all_presets();
  for (const char* n : {"e5m7", "e3m2", "e6m9", "e4m3fn_sat", "e8m0fnu_sat"}) out.push_back(parse_format(n));
  out.push_back(make_format(5, 2, 15, false, Specials::ieee));  // no subnormals
  return out;
}

// 2048 random mantissas in each of the 512 binades (2^20 values: every exponent, both signs, float32
// subnormals), one in 8 with the format's discarded bits set to a tie, a tie +- 1 or all ones; then the
// format's grid values, midpoints and neighbours (up to 16 bits), the overflow boundary, ±0, ±inf, NaNs.
std::vector<float> device_inputs(const Format& f) {
  std::vector<float> xs = testing_ref::stratified_inputs(f, 2048, 23);
  std::mt19937 rng(31);
  const int s0 = 23 - f.mantissa_bits;
  if (s0 > 0) {
    const uint32_t low = (uint32_t{1} << s0) - 1;
    const uint32_t half = uint32_t{1} << (s0 - 1);
    const uint32_t patterns[] = {half, half - 1, half + 1, low, 0u};
    for (size_t i = 0; i < xs.size(); i += 8) {
      const uint32_t b = f2u(xs[i]);
      if ((b & 0x7F800000u) == 0x7F800000u) continue;
      xs[i] = u2f((b & ~low) | patterns[rng() % 5]);
    }
  }
  for (uint32_t nan : {0x7F800001u, 0xFFC00001u, 0x7FA00000u}) xs.push_back(u2f(nan));
  return xs;
}

std::vector<RoundingOptions> options_for(Rounding mode) {
  std::vector<RoundingOptions> out;
  const std::vector<int> ks = mode == Rounding::stochastic ? std::vector<int>{0, 1, 16, 31} : std::vector<int>{0};
  for (int k : ks)
    for (uint64_t offset : {uint64_t{0}, uint64_t{12345}, (uint64_t{1} << 32) - 77})
      out.push_back({.mode = mode, .sr_bits = k, .seed = 0x5EED0123456789ABull, .stream = 11, .index_offset = offset});
  return out;
}

std::string describe(const Format& f, const RoundingOptions& o) {
  return f.name + " " + std::string(rounding_name(o.mode)) + " sr_bits=" + std::to_string(o.sr_bits) +
         " offset=" + std::to_string(o.index_offset);
}

TEST(PrecisionDevice, RoundAndEncodeEqualQuantizerForEveryFormatAndMode) {
  SKIP_WITHOUT_DEVICE();
  for (const Format& f : device_formats()) {
    const Quantizer q(f);
    const std::vector<float> x = device_inputs(f);
    for (Rounding mode : kAllRoundings) {
      for (const RoundingOptions& opt : options_for(mode)) {
        std::vector<float> want(x.size());
        q.round(x, want, opt, 0);
        const std::vector<float> got = round_on_device(x, f, opt);
        ASSERT_EQ(got.size(), x.size());
        size_t bad = 0;
        for (size_t i = 0; i < x.size(); ++i)
          if (f2u(got[i]) != f2u(want[i]) && ++bad <= 5)
            ADD_FAILURE() << describe(f, opt) << " i=" << i << " x=0x" << std::hex << f2u(x[i]) << ": device 0x"
                          << f2u(got[i]) << " library 0x" << f2u(want[i]);
        EXPECT_EQ(bad, 0u) << describe(f, opt) << ": round mismatches";
        if (f.bits() > 16) continue;

        std::vector<uint32_t> want_code(x.size());
        if (f.bits() <= 8) {
          std::vector<uint8_t> c(x.size());
          q.encode(x, c, opt, 0);
          want_code.assign(c.begin(), c.end());
        } else {
          std::vector<uint16_t> c(x.size());
          q.encode(x, c, opt, 0);
          want_code.assign(c.begin(), c.end());
        }
        const std::vector<uint16_t> code = encode_on_device(x, f, opt);
        ASSERT_EQ(code.size(), x.size());
        bad = 0;
        for (size_t i = 0; i < x.size(); ++i)
          if (code[i] != want_code[i] && ++bad <= 5)
            ADD_FAILURE() << describe(f, opt) << " i=" << i << " x=0x" << std::hex << f2u(x[i]) << ": device code 0x"
                          << code[i] << " library 0x" << want_code[i];
        EXPECT_EQ(bad, 0u) << describe(f, opt) << ": encode mismatches";
      }
    }
  }
}

TEST(PrecisionDevice, DecodeEqualsQuantizerForEveryCode) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(9);
  for (const Format& f : device_formats()) {
    if (f.bits() > 16) continue;
    std::vector<uint16_t> codes;
    for (uint32_t c = 0; c < (uint32_t{1} << f.bits()); ++c) codes.push_back(static_cast<uint16_t>(c));
    for (int i = 0; i < 4096; ++i) codes.push_back(static_cast<uint16_t>(rng()));  // bits above the format: ignored
    std::vector<float> want(codes.size());
    Quantizer(f).decode(codes, want);
    const std::vector<float> got = decode_on_device(codes, f);
    ASSERT_EQ(got.size(), codes.size());
    for (size_t i = 0; i < codes.size(); ++i)
      ASSERT_EQ(f2u(got[i]), f2u(want[i])) << f.name << " code 0x" << std::hex << codes[i];
  }
}

TEST(PrecisionDevice, RoundTripOfDeviceCodesIsTheDeviceRounding) {
  SKIP_WITHOUT_DEVICE();
  const Format f = formats::float8_e4m3fn();
  const std::vector<float> x = device_inputs(f);
  const RoundingOptions opt{.mode = Rounding::stochastic, .seed = 77, .stream = 5};
  const std::vector<float> rounded = round_on_device(x, f, opt);
  const std::vector<float> back = decode_on_device(encode_on_device(x, f, opt), f);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(f2u(back[i]), f2u(rounded[i])) << i;
}

// Argument checks come before any device work, so they hold with or without a device (in a CUDA build).
TEST(PrecisionDevice, RejectsWhatTheLibraryRejects) {
  const std::vector<float> x(10, 1.0f);
  EXPECT_THROW((void)encode_on_device(x, formats::float32(), {}), std::invalid_argument);
  EXPECT_THROW((void)encode_on_device(x, formats::tf32(), {}), std::invalid_argument);
  EXPECT_THROW((void)round_on_device(x, formats::bfloat16(), {.mode = Rounding::stochastic, .sr_bits = 32}),
               std::invalid_argument);
  EXPECT_THROW((void)decode_on_device(std::vector<uint16_t>(3), formats::float32()), std::invalid_argument);
  EXPECT_TRUE(round_on_device({}, formats::bfloat16(), {}).empty());
  std::string why;
  if (!precision_device_available(&why)) {
    EXPECT_FALSE(why.empty());
    EXPECT_THROW((void)round_on_device(x, formats::bfloat16(), {}), std::runtime_error);
  }
}

}  // namespace
}  // namespace lobench::precision
