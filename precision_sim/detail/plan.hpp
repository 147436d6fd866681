// Internal: the constants every rounding kernel needs, derived once from a Format, and the scalar
// reference implementation of rounding one float32 (the SIMD kernels must match it bit for bit).
//
// The SIMD translation units include this before they switch their target ISA, so these inline
// functions are compiled for the baseline ISA everywhere (no AVX-512 copy can leak into portable code).
#pragma once

#include <cstdint>
#include <cstring>

#include "precision_sim/rounding.hpp"

namespace lobench::precision::detail {

inline uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Results for one non-finite or out-of-range situation: float32 bits and code, indexed by the
// input's sign (0 = positive, 1 = negative).
struct SignedResult {
  uint32_t f[2];
  uint32_t code[2];
};

struct Plan {
  bool identity;            // float32 itself: nothing to round
  bool simd;                // the SIMD kernels handle this format (signed, with zero)
  bool pattern_everywhere;  // target subnormals = float32 subnormals (bfloat16-like): one fixed shift
  bool is_signed;
  bool has_zero;
  bool signed_zero;         // false for fnuz and unsigned formats: zero results are +0
  int32_t M;                // mantissa bits
  int32_t s0;               // 23 - M: bits float32 drops in the format's normal range
  uint32_t lowmask;         // 2^s0 - 1
  uint32_t emin_f;          // float32 biased exponent of the smallest normal, 1 - bias + 127 (>= 1)
  uint32_t min_normal_bits; // emin_f << 23
  int32_t s_sub_base;       // below the smallest normal the shift is s_sub_base - max(Ef, 1)
  float sub_step;           // grid spacing below the smallest normal (2^(emin-M), or 2^emin w/o subnormals)
  uint32_t sub_code_shift;  // 0, or M without subnormals (n * 2^emin has code n << M)
  uint32_t code_offset;     // code = (bits >> s0) - code_offset in the normal range: (127 - bias) << M
  uint32_t code_sign;       // the code's sign bit (0 for unsigned)
  uint32_t max_bits;        // float32 bits of the largest finite value
  uint32_t max_code;        // its code (magnitude)
  uint32_t code_mask;       // 2^bits - 1
  uint32_t min_bits;        // float32 bits of the smallest value 2^-bias (formats without zero)
  SignedResult nan_in;      // NaN input
  SignedResult inf_in;      // ±inf input
  SignedResult overflow;    // finite overflow rounded away from zero (policy applied)
  SignedResult max_signed;  // ±max, for overflow rounded toward zero
  SignedResult zero_in;     // ±0 input
  SignedResult negative_in; // negative input of an unsigned format
  int default_sr_bits;
};

struct Rounded {
  uint32_t bits;  // float32 result
  uint32_t code;  // its code in the format
};

// Whether a rounding direction increases the magnitude when the result overflows.
inline bool overflow_away(Rounding mode, uint32_t negative) {
  switch (mode) {
    case Rounding::toward_zero: return false;
    case Rounding::up: return !negative;
    case Rounding::down: return negative;
    default: return true;
  }
}

// Decides whether to round the magnitude up given the kept integer q = floor(sig / 2^s), the
// discarded remainder r = sig mod 2^s (s may exceed 31: then q = 0 and r = sig < 2^24).
inline uint32_t round_up_decision(Rounding mode, uint32_t q, uint32_t r, int s, uint32_t negative,
                                  uint32_t word, int k) {
  if (s == 0) return 0;
  const uint64_t r64 = r;
  switch (mode) {
    case Rounding::nearest_even: {
      if (s > 32) return 0;  // half = 2^(s-1) > 2^24 > r
      const uint64_t half = uint64_t{1} << (s - 1);
      return (r64 > half || (r64 == half && (q & 1))) ? 1 : 0;
    }
    case Rounding::nearest_away: {
      if (s > 32) return 0;
      return r64 >= (uint64_t{1} << (s - 1)) ? 1 : 0;
    }
    case Rounding::toward_zero: return 0;
    case Rounding::up: return (r != 0 && !negative) ? 1 : 0;
    case Rounding::down: return (r != 0 && negative) ? 1 : 0;
    case Rounding::stochastic: {
      // Add k random bits just below the kept bits: bits of r below them cannot carry, so only
      // floor(r / 2^(s-k)) matters. With more random bits than discarded bits (k > s) the top s are used.
      const int kk = k < s ? k : s;
      const uint64_t rnd = (word & ((k >= 32) ? 0xFFFFFFFFu : ((1u << k) - 1))) >> (k - kk);
      const int t = s - kk;
      const uint64_t top = t >= 64 ? 0 : (r64 >> t);
      return static_cast<uint32_t>((top + rnd) >> kk);
    }
    case Rounding::stochastic_exact: {
      const uint64_t thr = s <= 32 ? (r64 << (32 - s)) : (s - 32 >= 64 ? 0 : (r64 >> (s - 32)));
      return uint64_t{word} < thr ? 1 : 0;
    }
  }
  return 0;
}

// Scalar reference: rounds float32 bits x into the format. `word` is the element's random word
// (ignored by deterministic modes), k the stochastic bit count (1..31).
inline Rounded round_one(uint32_t x, const Plan& p, Rounding mode, uint32_t word, int k) {
  if (p.identity) return {x, x};
  const uint32_t neg = x >> 31;
  const uint32_t a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return {p.nan_in.f[neg], p.nan_in.code[neg]};
  if (a == 0x7F800000u) return {p.inf_in.f[neg], p.inf_in.code[neg]};
  if (a == 0) return {p.zero_in.f[neg], p.zero_in.code[neg]};
  if (!p.is_signed && neg) return {p.negative_in.f[1], p.negative_in.code[1]};

  const uint32_t ef = a >> 23;
  uint32_t mag;
  uint32_t code_mag;
  if (ef >= p.emin_f) {
    // Normal range of the format: rounding the float32 bit pattern at a fixed position is exact, and
    // a carry out of the mantissa correctly bumps the exponent.
    // The parity for ties-to-even is the last kept significand bit. With no mantissa bits that is the
    // implicit 1, so ties round up (as ml_dtypes does for e8m0fnu: 3.0 -> 4.0).
    const uint32_t q = p.M == 0 ? 1u : (a >> p.s0);
    const uint32_t r = a & p.lowmask;
    const uint32_t up = round_up_decision(mode, q, r, p.s0, neg, word, k);
    mag = (a & ~p.lowmask) + (up << p.s0);
    code_mag = (mag >> p.s0) - p.code_offset;
  } else {
    // Below the smallest normal the grid spacing is fixed (sub_step), so the shift depends on |x|'s
    // own exponent. sig is the significand with its implicit bit; value = sig * 2^(E - 150).
    const uint32_t e = ef ? ef : 1;
    const uint32_t sig = ef ? ((a & 0x7FFFFFu) | 0x800000u) : a;
    const int s = p.s_sub_base - static_cast<int>(e);
    const uint32_t q = s >= 32 ? 0 : sig >> s;
    const uint32_t r = s >= 32 ? sig : sig & ((1u << s) - 1);
    const uint32_t n = q + round_up_decision(mode, q, r, s, neg, word, k);
    mag = f2u(static_cast<float>(n) * p.sub_step);  // exact: n < 2^25 and the product is on float32's grid
    code_mag = n << p.sub_code_shift;
  }
  if (mag > p.max_bits) {
    return overflow_away(mode, neg) ? Rounded{p.overflow.f[neg], p.overflow.code[neg]}
                                    : Rounded{p.max_signed.f[neg], p.max_signed.code[neg]};
  }
  if (mag == 0) {
    if (!p.has_zero) return {p.min_bits, 0};
    if (!p.signed_zero) return {0, 0};
  }
  return {mag | (neg << 31), code_mag | (neg ? p.code_sign : 0)};
}

}  // namespace lobench::precision::detail
