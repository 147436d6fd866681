// Every SIMD path gives the scalar path's bits: every format shape, every mode, every branch (normal
// range, subnormal range, zero, overflow, inf, NaN), unaligned lengths and index offsets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "precision_sim/detail/plan.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/stochastic.hpp"

namespace lobench::precision {
namespace {

using detail::f2u;
using detail::u2f;

std::vector<Format> formats_under_test() {
  std::vector<Format> out = formats::all_presets();
  for (const char* n : {"e5m7", "e3m2", "e6m9", "e8m3", "e2m4", "e4m3fn_sat", "e5m2_sat", "bf16_sat", "e2m1fn_sat",
                        "e4m3fnuz_sat", "fp16_sat"})
    out.push_back(parse_format(n));
  out.push_back(make_format(4, 3, 7, false, Specials::fn));
  out.push_back(make_format(5, 2, 15, false, Specials::ieee));
  out.push_back(make_format(8, 7, 127, false, Specials::ieee));  // bfloat16 without subnormals
  out.push_back(make_format(3, 4, 1, true, Specials::finite));
  out.push_back(make_format(6, 5, 40, true, Specials::fnuz, Overflow::saturate));
  return out;
}

std::vector<float> inputs(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> x;
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t e = 0; e < 256; ++e)
      for (int i = 0; i < 160; ++i) {
        uint32_t mant = rng() & 0x7FFFFF;
        if (i % 8 == 0) mant &= 0x7F0000;        // many low zero bits: ties and exact values
        if (i % 8 == 1) mant |= 0x00FFFF;        // many low one bits: carries
        x.push_back(u2f((sign << 31) | (e << 23) | mant));
      }
  std::shuffle(x.begin(), x.end(), rng);
  x.resize(x.size() - 13);  // not a multiple of 16 or 64
  return x;
}

TEST(Simd, EveryIsaMatchesScalarForEveryFormatAndMode) {
  const std::vector<float> x = inputs(1);
  for (const Format& f : formats_under_test()) {
    const Quantizer scalar(f, Isa::scalar);
    for (Rounding mode : kAllRoundings) {
      const RoundingOptions opt{.mode = mode, .sr_bits = mode == Rounding::stochastic ? 7 : 0, .seed = 0xABCDEF,
                                .stream = 3, .index_offset = 5};
      std::vector<float> want(x.size());
      scalar.round(x, want, opt);
      std::vector<uint32_t> want_codes(x.size());
      if (can_pack(f))
        for (size_t i = 0; i < x.size(); ++i)
          want_codes[i] = scalar.encode(x[i], mode, random_word(opt.seed, opt.stream, opt.index_offset + i), opt.sr_bits);
      for (Isa isa : available_isas()) {
        if (isa == Isa::scalar) continue;
        const Quantizer q(f, isa);
        std::vector<float> got(x.size());
        q.round(x, got, opt);
        int bad = 0;
        for (size_t i = 0; i < x.size(); ++i)
          if (f2u(got[i]) != f2u(want[i]) && ++bad <= 3)
            ADD_FAILURE() << f.name << " " << rounding_name(mode) << " " << isa_name(isa) << " x=" << std::hexfloat << x[i]
                          << " simd " << got[i] << " scalar " << want[i];
        if (code_bytes(f) == 1) {
          std::vector<uint8_t> c(x.size());
          q.encode(x, c, opt);
          for (size_t i = 0; i < x.size(); ++i)
            if (c[i] != want_codes[i] && ++bad <= 6)
              ADD_FAILURE() << f.name << " " << rounding_name(mode) << " " << isa_name(isa) << " encode8 x=" << x[i];
        }
        if (can_pack(f)) {
          std::vector<uint16_t> c(x.size());
          q.encode(x, c, opt);
          for (size_t i = 0; i < x.size(); ++i)
            if (c[i] != want_codes[i] && ++bad <= 9)
              ADD_FAILURE() << f.name << " " << rounding_name(mode) << " " << isa_name(isa) << " encode16 x=" << x[i];
        }
        ASSERT_EQ(bad, 0);
      }
    }
  }
}

// The edge of overflow, where the nearest-even kernel finds a vector's special lanes with one comparison
// against the largest magnitude that still rounds into range (simd_kernels.hpp): each float32 within a few
// ulps of the largest finite value, of the tie halfway to the next step above it, and of inf, both signs,
// in every mode, against the scalar path. Each value fills 16 lanes, so that a whole vector holds it alone
// (a lane beside it that is special anyway would send the vector down the exact path).
TEST(Simd, EveryIsaMatchesScalarAtTheEdgeOfOverflow) {
  for (const Format& f : formats_under_test()) {
    if (f.mantissa_bits >= 23) continue;
    const uint32_t max_bits = f2u(float(f.max_finite())), half = uint32_t(1) << (22 - f.mantissa_bits);
    std::vector<float> x;
    for (uint32_t centre : {max_bits, max_bits + half, max_bits + 2 * half, 0x7F800000u})
      for (int d = -3; d <= 3; ++d)
        for (uint32_t sign : {0u, 0x80000000u}) x.insert(x.end(), 16, u2f(sign | uint32_t(int64_t(centre) + d)));
    const Quantizer scalar(f, Isa::scalar);
    for (Rounding mode : kAllRoundings) {
      const RoundingOptions opt{.mode = mode, .sr_bits = mode == Rounding::stochastic ? 7 : 0, .seed = 7};
      std::vector<float> want(x.size());
      scalar.round(x, want, opt);
      for (Isa isa : available_isas()) {
        if (isa == Isa::scalar) continue;
        std::vector<float> got(x.size());
        Quantizer(f, isa).round(x, got, opt);
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_EQ(f2u(got[i]), f2u(want[i])) << f.name << " " << rounding_name(mode) << " " << isa_name(isa)
                                               << " x bits " << std::hex << f2u(x[i]);
      }
    }
  }
}

TEST(Simd, InPlaceAndShortArrays) {
  for (Isa isa : available_isas()) {
    const Quantizer q(formats::float8_e4m3fn(), isa);
    for (size_t n : {0, 1, 15, 16, 17, 63, 64, 65, 200}) {
      std::vector<float> x(n);
      for (size_t i = 0; i < n; ++i) x[i] = 0.37f * static_cast<float>(i) - 20.0f;
      std::vector<float> out(n);
      q.round(x, out, {.mode = Rounding::stochastic, .seed = 1, .index_offset = 3});
      q.round(x, x, {.mode = Rounding::stochastic, .seed = 1, .index_offset = 3});  // in place
      EXPECT_EQ(x, out) << isa_name(isa) << " n=" << n;
    }
  }
}

TEST(Simd, LargeUnalignedArraysGiveTheSameBits) {
  // Large enough (>= 24 MiB in + out) for the non-temporal store path, and offset by one element so
  // the kernels must align their stores themselves.
  constexpr size_t n = 5'000'000;
  std::vector<float> x(n + 1);
  std::mt19937 rng(9);
  for (float& v : x) v = u2f(rng());
  const std::span<const float> in(x.data() + 1, n);
  for (const char* name : {"e4m3fn", "bf16"}) {
    const Format f = parse_format(name);
    const Quantizer scalar(f, Isa::scalar);
    std::vector<float> want(n);
    scalar.round(in, want, {}, 2);
    for (Isa isa : available_isas()) {
      const Quantizer q(f, isa);
      std::vector<float> got(n + 1);
      q.round(in, std::span<float>(got.data() + 1, n), {}, 2);
      EXPECT_EQ(std::memcmp(want.data(), got.data() + 1, n * sizeof(float)), 0) << name << " " << isa_name(isa);  // bits: NaNs too
      std::vector<uint16_t> c16(n + 1);
      q.encode(in, std::span<uint16_t>(c16.data() + 1, n), {}, 2);
      std::vector<uint8_t> c8(n + 3);
      if (code_bytes(f) == 1) q.encode(in, std::span<uint8_t>(c8.data() + 3, n), {}, 2);
      for (size_t i = 0; i < n; i += 7) {
        const uint32_t c = scalar.encode(in[i]);
        ASSERT_EQ(c16[i + 1], c) << name << " " << isa_name(isa) << " " << i;
        if (code_bytes(f) == 1) {
          ASSERT_EQ(c8[i + 3], c) << name << " " << isa_name(isa) << " " << i;
        }
      }
    }
  }
}

TEST(Simd, DefaultIsaIsTheBestAvailable) {
  const auto isas = available_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::scalar);
  if (!std::getenv("LOBENCH_ISA")) {
    EXPECT_EQ(default_isa(), isas.back());
  }
}

}  // namespace
}  // namespace lobench::precision
