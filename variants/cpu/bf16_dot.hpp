// bfloat16 operands as the CPU's bf16 products read them: rounding float32 to bfloat16 (nearest-even),
// two values packed in one 32-bit word (the pair a dot-product instruction takes), and a bit-faithful
// scalar model of one lane of AVX512_BF16's VDPBF16PS, the instruction the bf16 products are made of.
//
// VDPBF16PS, as Intel's manual defines it (the SDM's pseudo-code, restated in our words): for each
// 32-bit lane, the accumulator receives two fused multiply-adds in a fixed order, first the product of
// the pair's high halves (bf16 element 2j+1), then the product of the low halves (element 2j); each is
// rounded once, to nearest-even. The instruction ignores MXCSR: denormal inputs (the bf16 values and the
// accumulator) are read as zero with their sign, and a denormal result of either step is flushed to a
// zero of its sign. The model below is that definition, step by step; tests hold the SIMD kernel to it
// bit for bit on random and denormal-laden operands (variants/tests/bf16_products_test.cpp).
//
// AMX-BF16's TDPBF16PS rounds differently, and has its own model below (tdpbf16_element): within one
// instruction (16 pairs of the inner index) each output keeps two float32 partial sums, one over the
// pairs' low halves and one over the high halves, each a chain of fused multiply-adds starting from +0;
// the instruction then adds their sum to the accumulator: acc + (low_sum + high_sum), each addition
// rounded once. Intel's manual describes the two partial sums and the final horizontal add; the order
// of the final additions we measured (probes with values whose roundings tell the orders apart, on a
// Xeon with AMX: every one of 300 000 random outputs, denormals included, matches this order and
// neither of the others).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "variants/aligned_vector.hpp"

namespace lobench::cpu {

inline uint32_t float_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

inline float bits_float(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// float32 → bfloat16 bits, rounded to nearest, ties to even; NaN stays a (quiet) NaN. Denormals are
// rounded like any other value (as ml_dtypes does); the products then read them as zero.
// Written without a branch (a select), so that loops over it vectorize (the bf16 encoder's Adam).
inline uint16_t bf16_nearest_even(float x) {
  const uint32_t u = float_bits(x);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, quiet_nan = (u >> 16) | 0x0040u;
  return uint16_t((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

inline float bf16_value(uint16_t b) { return bits_float(uint32_t(b) << 16); }

// n floats as bfloat16 bits, each bf16_nearest_even (the operands the oneDNN products read), on whole
// cache lines (aligned_vector.hpp).
inline AlignedVector<uint16_t> bf16_nearest_even(const float* x, size_t n) {
  AlignedVector<uint16_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = bf16_nearest_even(x[i]);
  return out;
}

// The 32-bit word holding the pair (low, high): low in bits 0–15 (element 2j), high in bits 16–31.
inline uint32_t bf16_pair(float low, float high) {
  return uint32_t(bf16_nearest_even(low)) | (uint32_t(bf16_nearest_even(high)) << 16);
}

// A denormal read as a zero of its sign (the instruction's treatment of every input).
inline float denormal_as_zero(float x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

// One lane of VDPBF16PS: acc + a.high·b.high, rounded, then + a.low·b.low, rounded (each product
// exact, each step one fused multiply-add), inputs and results denormal-flushed.
inline float dpbf16_lane(float acc, uint32_t a_pair, uint32_t b_pair) {
  const float a_hi = denormal_as_zero(bits_float(a_pair & 0xffff0000u));
  const float b_hi = denormal_as_zero(bits_float(b_pair & 0xffff0000u));
  const float a_lo = denormal_as_zero(bits_float(a_pair << 16));
  const float b_lo = denormal_as_zero(bits_float(b_pair << 16));
  float r = denormal_as_zero(std::fma(a_hi, b_hi, denormal_as_zero(acc)));
  r = denormal_as_zero(std::fma(a_lo, b_lo, r));
  return r;
}

// Pairs per TDPBF16PS: a tile row holds 64 bytes, 16 bf16 pairs.
constexpr int kTilePairs = 16;

// One output of TDPBF16PS over up to kTilePairs pairs: a[k], b[k·b_stride] for k < count (a missing
// pair of a block shorter than 16 is a pair of +0s, as in a zero-padded tile), then acc + (low + high).
inline float tdpbf16_element(float acc, const uint32_t* a, const uint32_t* b, int64_t b_stride, int64_t count) {
  float low = 0.0f, high = 0.0f;
  for (int64_t k = 0; k < kTilePairs; ++k) {
    const uint32_t ap = k < count ? a[k] : 0u, bp = k < count ? b[k * b_stride] : 0u;
    low = denormal_as_zero(std::fma(denormal_as_zero(bits_float(ap << 16)), denormal_as_zero(bits_float(bp << 16)), low));
    high = denormal_as_zero(
        std::fma(denormal_as_zero(bits_float(ap & 0xffff0000u)), denormal_as_zero(bits_float(bp & 0xffff0000u)), high));
  }
  return denormal_as_zero(denormal_as_zero(acc) + denormal_as_zero(low + high));
}

}  // namespace lobench::cpu
