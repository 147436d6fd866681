// device_rounding.hpp compiled for the host: round_hd / encode_hd / decode_hd / random_word_hd give
// the library's results bit for bit. They are compared with paths that do not share their code: the
// SIMD array kernels (AVX2, AVX-512) with the words they draw themselves, the table decoder (built
// with doubles from the Format, not from the DevicePlan), the double-precision rounding reference of
// round_reference.hpp, Philox's std::array implementation (philox.hpp, checked against Random123),
// and documented corner values. The CUDA kernels (device/quantize.cu) call the same functions.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "precision_sim/device/quantize_device.hpp"
#include "precision_sim/device_rounding.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/philox.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/stochastic.hpp"
#include "precision_sim/tests/round_reference.hpp"

namespace lobench::precision {
namespace {

using detail::f2u;
using detail::u2f;
using testing_ref::formats_under_test;
using testing_ref::ref_round;
using testing_ref::same;
using testing_ref::stratified_inputs;

static_assert(std::is_trivially_copyable_v<DevicePlan>);
static_assert(std::is_standard_layout_v<DevicePlan>);

// stratified_inputs (every binade, grid values, midpoints, overflow, specials), plus, in every float32
// binade (subnormals included), mantissas whose discarded bits are exactly 0, a tie, a tie +- 1 ulp,
// all ones and 1 (this gives ties for formats wider than 16 bits, which stratified_inputs does not
// enumerate), and NaNs with payloads.
std::vector<float> hd_inputs(const Format& f) {
  std::vector<float> xs = stratified_inputs(f, 24, 17);
  std::mt19937 rng(29);
  const int s0 = 23 - f.mantissa_bits;
  if (s0 > 0) {
    const uint32_t low = (uint32_t{1} << s0) - 1;
    const uint32_t half = uint32_t{1} << (s0 - 1);
    for (uint32_t sign = 0; sign < 2; ++sign)
      for (uint32_t e = 0; e < 255; ++e)
        for (uint32_t pattern : {0u, half, half - 1, half + 1, low, 1u}) {
          const uint32_t mant = ((rng() & 0x7FFFFFu) & ~low) | pattern;
          xs.push_back(u2f((sign << 31) | (e << 23) | mant));
        }
  }
  for (uint32_t nan : {0x7F800001u, 0x7FFFFFFFu, 0xFFC00001u, 0x7FA00000u, 0xFF800001u}) xs.push_back(u2f(nan));
  return xs;
}

// k values to try: the default (0) for every mode, a range for `stochastic`.
std::vector<int> sr_bits_for(Rounding mode) {
  if (mode == Rounding::stochastic) return {0, 1, 2, 5, 16, 23, 31};
  return {0};
}

std::string where(const Format& f, Rounding mode, int k, float x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (0x%08X)", static_cast<double>(x), f2u(x));
  return f.name + " " + std::string(rounding_name(mode)) + " k=" + std::to_string(k) + " x=" + buf;
}

TEST(DeviceRounding, PlanDescribesTheFormat) {
  for (const Format& f : formats_under_test()) {
    const DevicePlan p = make_device_plan(f);
    EXPECT_EQ(p.bits, f.bits()) << f.name;
    EXPECT_EQ(p.exponent_bits, f.exponent_bits) << f.name;
    EXPECT_EQ(p.M, f.mantissa_bits) << f.name;
    EXPECT_EQ(p.bias, f.bias) << f.name;
    EXPECT_EQ(p.default_sr_bits, default_sr_bits(f)) << f.name;
    EXPECT_EQ(p.default_sr_bits, Quantizer(f).resolved_sr_bits(0)) << f.name;
    EXPECT_EQ(u2f(p.max_bits), static_cast<float>(f.max_finite())) << f.name;
  }
  EXPECT_THROW((void)make_device_plan(make_format(4, 3, 300, true, Specials::fn)), std::invalid_argument);
}

// Array results of every ISA's kernels (which draw their own random words) against round_hd/encode_hd
// with random_word_hd(seed, stream, index_offset + i): the word mapping and the rounding both checked.
TEST(DeviceRounding, EqualsEveryIsaArrayPathForEveryFormatAndMode) {
  const uint64_t seed = 0x0123456789ABCDEFull, stream = (uint64_t{1} << 32) + 7, offset = 1000003;
  for (const Format& f : formats_under_test()) {
    const DevicePlan p = make_device_plan(f);
    const std::vector<float> x = hd_inputs(f);
    for (Isa isa : available_isas()) {
      const Quantizer q(f, isa);
      for (Rounding mode : kAllRoundings) {
        for (int k : sr_bits_for(mode)) {
          const RoundingOptions opt{.mode = mode, .sr_bits = k, .seed = seed, .stream = stream, .index_offset = offset};
          const int kk = q.resolved_sr_bits(k);
          std::vector<float> want(x.size());
          q.round(x, want, opt);
          std::vector<uint32_t> want_code(x.size(), 0);
          if (f.bits() <= 8) {
            std::vector<uint8_t> c(x.size());
            q.encode(x, c, opt);
            want_code.assign(c.begin(), c.end());
          } else if (f.bits() <= 16) {
            std::vector<uint16_t> c(x.size());
            q.encode(x, c, opt);
            want_code.assign(c.begin(), c.end());
          }
          int bad = 0;
          for (size_t i = 0; i < x.size() && bad < 5; ++i) {
            const uint32_t w = is_stochastic(mode) ? random_word_hd(seed, stream, offset + i) : 0u;
            const float got = round_hd(x[i], p, mode, w, kk);
            const uint32_t code = encode_hd(x[i], p, mode, w, kk);
            if (f2u(got) != f2u(want[i])) {
              ++bad;
              ADD_FAILURE() << isa_name(isa) << " " << where(f, mode, kk, x[i]) << ": round_hd " << std::hex
                            << f2u(got) << " library " << f2u(want[i]);
            }
            if (f.bits() <= 16 && code != want_code[i]) {
              ++bad;
              ADD_FAILURE() << isa_name(isa) << " " << where(f, mode, kk, x[i]) << ": encode_hd " << std::hex << code
                            << " library " << want_code[i];
            }
            // float32 itself keeps NaN payloads when rounding but decodes every NaN code to the canonical
            // quiet NaN, as Quantizer does; everywhere else decode(encode(x)) == round(x).
            const bool payload_nan = p.identity && std::isnan(x[i]);
            if (!payload_nan && f2u(decode_hd(code, p)) != f2u(got)) {
              ++bad;
              ADD_FAILURE() << where(f, mode, kk, x[i]) << ": decode_hd(encode_hd) " << std::hex
                            << f2u(decode_hd(code, p)) << " != round_hd " << f2u(got);
            }
          }
        }
      }
    }
  }
}

// Against the double-precision reference, with words at the edges (0, all ones, 2^31 +- 1) and random.
TEST(DeviceRounding, EqualsTheDoubleReferenceForEveryFormatAndMode) {
  std::mt19937 rng(101);
  for (const Format& f : formats_under_test()) {
    const DevicePlan p = make_device_plan(f);
    const Quantizer q(f, Isa::scalar);
    const std::vector<float> x = hd_inputs(f);
    for (Rounding mode : kAllRoundings) {
      for (int k : sr_bits_for(mode)) {
        const int kk = q.resolved_sr_bits(k);
        int bad = 0;
        for (size_t i = 0; i < x.size() && bad < 5; ++i) {
          static constexpr uint32_t kEdgeWords[] = {0u, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, 0x80000001u};
          const uint32_t w = i % 8 < 5 ? kEdgeWords[i % 8] : static_cast<uint32_t>(rng());
          const double want = ref_round(x[i], f, mode, w, kk);
          const float got = round_hd(x[i], p, mode, w, kk);
          if (!same(want, got)) {
            ++bad;
            ADD_FAILURE() << where(f, mode, kk, x[i]) << " word=" << std::hex << w << std::dec << ": round_hd " << got
                          << " reference " << want;
          }
          // The one-value Quantizer calls agree too (they take sr_bits unresolved).
          if (f2u(got) != f2u(q.round(x[i], mode, w, k)) || encode_hd(x[i], p, mode, w, kk) != q.encode(x[i], mode, w, k)) {
            ++bad;
            ADD_FAILURE() << where(f, mode, kk, x[i]) << ": differs from Quantizer's one-value calls";
          }
        }
      }
    }
  }
}

// decode_hd against Quantizer::decode, which builds values with doubles from the Format: every code of
// formats up to 20 bits (tf32 included) with garbage above the format's width, stratified float32 codes.
TEST(DeviceRounding, DecodeEqualsQuantizerForEveryCode) {
  std::mt19937 rng(5);
  for (const Format& f : formats_under_test()) {
    const DevicePlan p = make_device_plan(f);
    const Quantizer q(f, Isa::scalar);
    std::vector<uint32_t> codes;
    if (f.bits() <= 20) {
      for (uint32_t c = 0; c < (uint32_t{1} << f.bits()); ++c) codes.push_back(c);
      for (int i = 0; i < 1000; ++i) codes.push_back(static_cast<uint32_t>(rng()));  // high bits are ignored
    } else {
      for (uint32_t sign = 0; sign < 2; ++sign)
        for (uint32_t e = 0; e < 256; ++e)
          for (uint32_t mant : {0u, 1u, 0x400000u, 0x7FFFFFu, static_cast<uint32_t>(rng()) & 0x7FFFFFu})
            codes.push_back((sign << 31) | (e << 23) | mant);
    }
    int bad = 0;
    for (uint32_t c : codes) {
      if (f2u(decode_hd(c, p)) != f2u(q.decode(c)) && ++bad <= 5)
        ADD_FAILURE() << f.name << " code 0x" << std::hex << c << ": decode_hd " << f2u(decode_hd(c, p)) << " library "
                      << f2u(q.decode(c));
    }
    if (f.bits() <= 16) {  // and the array decoder (lookup table)
      std::vector<uint16_t> c16(uint32_t{1} << f.bits());
      for (size_t i = 0; i < c16.size(); ++i) c16[i] = static_cast<uint16_t>(i);
      std::vector<float> v(c16.size());
      q.decode(c16, v);
      for (size_t i = 0; i < c16.size(); ++i) ASSERT_EQ(f2u(decode_hd(c16[i], p)), f2u(v[i])) << f.name << " " << i;
    }
  }
}

TEST(DeviceRounding, DocumentedCorners) {
  const DevicePlan e4m3fn = make_device_plan(formats::float8_e4m3fn());
  const DevicePlan e5m2 = make_device_plan(formats::float8_e5m2());
  const DevicePlan bf16 = make_device_plan(formats::bfloat16());
  const DevicePlan e8m0 = make_device_plan(formats::float8_e8m0fnu());
  const DevicePlan e2m1 = make_device_plan(formats::float4_e2m1fn());
  const auto rne = Rounding::nearest_even;
  EXPECT_EQ(encode_hd(464.0f, e4m3fn, rne, 0, 1), 0x7Eu);  // tie with the NaN code's value: to even (448)
  EXPECT_EQ(encode_hd(465.0f, e4m3fn, rne, 0, 1), 0x7Fu);  // overflow: NaN
  EXPECT_EQ(encode_hd(-INFINITY, e4m3fn, rne, 0, 1), 0xFFu);
  EXPECT_EQ(encode_hd(61440.0f, e5m2, rne, 0, 1), 0x7Cu);  // -> inf
  EXPECT_EQ(encode_hd(FLT_MAX, bf16, rne, 0, 1), 0x7F80u);
  EXPECT_EQ(encode_hd(1e-40f, bf16, rne, 0, 1), 0x0001u);
  EXPECT_EQ(encode_hd(3.0f, e8m0, rne, 0, 1), 0x81u);
  EXPECT_EQ(f2u(round_hd(1e-45f, e8m0, rne, 0, 1)), 0x00400000u);  // 2^-127, a float32 subnormal
  EXPECT_EQ(f2u(decode_hd(0x00u, e8m0)), 0x00400000u);
  // Below 2^-126 the neighbours are 2^-127 (0x00) and 2^-126 (0x01); ties (1.5 * 2^-127) round up.
  for (uint32_t b = 1; b < 0x00800000u; ++b)
    ASSERT_EQ(encode_hd(u2f(b), e8m0, rne, 0, 1), b < 0x00600000u ? 0x00u : 0x01u) << std::hex << b;
  EXPECT_EQ(encode_hd(u2f(0x00400001u), e8m0, Rounding::up, 0, 1), 0x01u);
  EXPECT_EQ(encode_hd(u2f(0x003FFFFFu), e8m0, Rounding::up, 0, 1), 0x00u);  // nothing lies below 2^-127
  EXPECT_EQ(f2u(round_hd(u2f(0x00000001u), e8m0, Rounding::stochastic, 0xFFFFFFFFu, 23)), 0x00400000u);
  EXPECT_EQ(encode_hd(NAN, e2m1, rne, 0, 1), 0x8u);  // ml_dtypes: +NaN -> -0
  EXPECT_EQ(encode_hd(100.0f, e2m1, rne, 0, 1), 0x7u);
  EXPECT_EQ(f2u(decode_hd(0x80u, make_device_plan(formats::float8_e4m3fnuz()))), 0xFFC00000u);
  // ELMO's bf16 stochastic rounding: (bits + (word & 0xFFFF)) & 0xFFFF0000 with k = 16.
  const float x = 1.2345678f;
  for (uint32_t w : {0u, 0x1234u, 0xFFFFu, 0xABCD8000u})
    EXPECT_EQ(f2u(round_hd(x, bf16, Rounding::stochastic, w, 16)), (f2u(x) + (w & 0xFFFFu)) & 0xFFFF0000u);
}

// random_word_hd (plain scalars) against random_word (std::array Philox of philox.hpp).
TEST(DeviceRounding, RandomWordEqualsTheLibrary) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0x0123456789ABCDEF}, ~uint64_t{0}})
    for (uint64_t stream : {uint64_t{0}, uint64_t{3}, (uint64_t{1} << 32) + 5, ~uint64_t{0}})
      for (uint64_t base : {uint64_t{0}, (uint64_t{1} << 32) - 100, (uint64_t{1} << 36) + 17, ~uint64_t{0} - 300})
        for (uint64_t i = base; i < base + 300; ++i)
          ASSERT_EQ(random_word_hd(seed, stream, i), random_word(seed, stream, i)) << seed << " " << stream << " " << i;
}

TEST(DeviceRounding, PhiloxKnownAnswerVectors) {
  // Random123 kat_vectors "philox4x32 10": counter (c0, c1, c2, c3) = (block, stream), key = seed.
  struct Kat {
    uint64_t block, stream, seed;
    uint32_t out[4];
  };
  const Kat kats[] = {
      {0, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {0x85a308d3243f6a88ull, 0x0370734413198a2eull, 0x299f31d0a4093822ull, {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    uint32_t w[4];
    detail::philox_block_words(k.seed, k.stream, k.block, w);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(w[i], k.out[i]) << i;
  }
}

// The device entry points link in every build; without CUDA (or without a device) they say why.
TEST(DeviceRounding, DeviceAvailabilityComesWithAReason) {
  std::string why;
  const bool available = precision_device_available(&why);
  if (!available) {
    EXPECT_FALSE(why.empty());
  }
#ifndef LOBENCH_PRECISION_HAS_CUDA
  EXPECT_FALSE(available);
  EXPECT_NE(why.find("without CUDA"), std::string::npos) << why;
  const std::vector<float> x(4, 1.0f);
  EXPECT_THROW((void)round_on_device(x, formats::bfloat16(), {}), std::runtime_error);
#endif
}

}  // namespace
}  // namespace lobench::precision
