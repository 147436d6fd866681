// Scalar rounding, encoding and decoding of one float32, and the random word of one element, usable
// from host code and from CUDA device code alike. This is THE scalar implementation of the library:
// Quantizer's one-value calls and the portable array kernels (simd_scalar.cpp) call round_bits below,
// and the AVX2/AVX-512 kernels are tested bit for bit against it. A CUDA kernel that calls round_hd /
// encode_hd with the same DevicePlan, mode, random word and sr_bits therefore gives exactly what the
// CPU library gives.
//
//   DevicePlan p = make_device_plan(parse_format("e4m3fn"));      // host: once per format
//   // in a kernel (pass p by value):
//   uint32_t w = random_word_hd(seed, stream, index_offset + i);   // == random_word(), stochastic.hpp
//   float y = round_hd(x[i], p, mode, w, k);                       // k: resolved sr_bits, 1..31
//   uint32_t c = encode_hd(x[i], p, mode, w, k);  float z = decode_hd(c, p);
//
// Only integer and bit operations are used (no float arithmetic at all), so the result does not depend
// on the compiler's floating-point flags (-ftz, --use_fast_math, -ffast-math). The header includes no
// CUDA header: under nvcc LOBENCH_HD is __host__ __device__ and the device pass uses the CUDA
// intrinsics nvcc declares implicitly (__float_as_uint, __clz); elsewhere it is empty.
#pragma once

#include <cstdint>
#include <cstring>

#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"

#ifndef LOBENCH_HD
#if defined(__CUDACC__)
#define LOBENCH_HD __host__ __device__
#else
#define LOBENCH_HD
#endif
#endif

namespace lobench::precision {

// Results for one non-finite or out-of-range situation: float32 bits and code, indexed by the
// input's sign (0 = positive, 1 = negative).
struct DeviceSignedResult {
  uint32_t f[2];
  uint32_t code[2];
};

// Everything the scalar path needs, derived from a Format by make_device_plan (host). Trivially
// copyable: pass it to a kernel by value or copy it to constant memory.
struct DevicePlan {
  bool identity;            // float32 itself: nothing to round
  bool is_signed;
  bool has_zero;
  bool signed_zero;         // false for fnuz and unsigned formats: zero results are +0
  bool subnormals;          // exponent field 0 holds subnormals (else those codes decode to zero)
  Specials specials;
  int32_t exponent_bits;    // E
  int32_t M;                // mantissa bits
  int32_t bias;
  int32_t bits;             // total bits (sign + E + M), at most 32
  int32_t default_sr_bits;  // k for `stochastic` when the caller passes 0: 23 - M (at least 1)
  int32_t s0;               // 23 - M: bits float32 drops in the format's normal range
  uint32_t lowmask;         // 2^s0 - 1
  uint32_t emin_f;          // float32 biased exponent of the smallest normal, 1 - bias + 127 (>= 1)
  int32_t s_sub_base;       // below the smallest normal the shift is s_sub_base - max(Ef, 1)
  int32_t sub_exp;          // grid spacing below the smallest normal: 2^sub_exp (emin - M, or emin w/o subnormals)
  uint32_t sub_code_shift;  // 0, or M without subnormals (n * 2^emin has code n << M)
  uint32_t code_offset;     // code = (bits >> s0) - code_offset in the normal range: (127 - bias) << M (mod 2^32)
  uint32_t code_sign;       // the code's sign bit (0 for unsigned)
  uint32_t mag_mask;        // 2^(E + M) - 1: the code's magnitude bits
  uint32_t code_mask;       // 2^bits - 1
  uint32_t max_bits;        // float32 bits of the largest finite value
  uint32_t max_code;        // its code (magnitude)
  uint32_t min_bits;        // float32 bits of the smallest value 2^-bias (formats without zero)
  DeviceSignedResult nan_in;       // NaN input
  DeviceSignedResult inf_in;       // ±inf input
  DeviceSignedResult overflow;     // finite overflow rounded away from zero (policy applied)
  DeviceSignedResult max_signed;   // ±max, for overflow rounded toward zero
  DeviceSignedResult zero_in;      // ±0 input
  DeviceSignedResult negative_in;  // negative input of an unsigned format
};

// Host only (defined in detail/plan.cpp, from the same constants Quantizer uses). Throws
// std::invalid_argument for an invalid format.
DevicePlan make_device_plan(const Format& f);

namespace detail {

LOBENCH_HD inline uint32_t f2u(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

LOBENCH_HD inline float u2f(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// Index of the highest set bit of n > 0.
LOBENCH_HD inline int highest_bit(uint32_t n) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(static_cast<int>(n));
#elif defined(__GNUC__) || defined(__clang__)
  return 31 - __builtin_clz(n);
#else
  int b = 0;
  while (n >>= 1) ++b;
  return b;
#endif
}

// Float32 bits of n * 2^e, which must be exactly representable (normal or subnormal); 0 for n = 0.
LOBENCH_HD inline uint32_t scaled_bits(uint32_t n, int e) {
  if (n == 0) return 0;
  const int p = highest_bit(n);
  const int E = p + e;  // unbiased exponent of the value
  if (E >= -126) {
    const uint32_t sig = p <= 23 ? (n << (23 - p)) : (n >> (p - 23));  // exact: the value is representable
    return (static_cast<uint32_t>(E + 127) << 23) | (sig & 0x7FFFFFu);
  }
  const int sh = e + 149;  // float32 subnormal: bits = n * 2^(e + 149)
  return sh >= 0 ? (n << sh) : (n >> -sh);
}

struct Rounded {
  uint32_t bits;  // float32 result
  uint32_t code;  // its code in the format
};

// Whether a rounding direction increases the magnitude when the result overflows.
LOBENCH_HD inline bool overflow_away(Rounding mode, uint32_t negative) {
  switch (mode) {
    case Rounding::toward_zero: return false;
    case Rounding::up: return !negative;
    case Rounding::down: return negative;
    default: return true;
  }
}

// Decides whether to round the magnitude up given the kept integer q = floor(sig / 2^s), the
// discarded remainder r = sig mod 2^s (s may exceed 31: then q = 0 and r = sig < 2^24).
LOBENCH_HD inline uint32_t round_up_decision(Rounding mode, uint32_t q, uint32_t r, int s, uint32_t negative,
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

// Formats without zero (exponent-only, e8m0fnu), |x| = a below 2^(1-bias): the smallest value 2^-bias
// has no neighbour below (there is no zero), so every a <= 2^-bias gives it in every mode (toward
// zero / down have nothing smaller to go to, stochastic has one candidate); above it the binade
// [2^-bias, 2^(1-bias)) is an ordinary one whose significand is the implicit 1 alone, so ties round up
// as in the normal range. For bias 127 that binade is float32 subnormals 0x00400000..0x007FFFFF: the
// kept bit is bit 22, 22 bits are discarded. (Rounding on the grid {0, 2^(1-bias)} and reading 0 as
// 2^-bias, as ml_dtypes 0.6 did, sent (2^-127, 1.5 * 2^-127) to 2^-126 instead of its nearest 2^-127.)
LOBENCH_HD inline Rounded round_below_smallest_binade(uint32_t a, const DevicePlan& p, Rounding mode,
                                                      uint32_t neg, uint32_t word, int k) {
  const uint32_t sign_code = neg ? p.code_sign : 0;
  if (a <= p.min_bits) return {p.min_bits | (neg << 31), sign_code};
  const int s = p.min_bits >= 0x800000u ? 23 : 22;  // bits below the kept one: normal or subnormal float32
  const uint32_t up = round_up_decision(mode, 1u, a - p.min_bits, s, neg, word, k);
  const uint32_t mag = up ? (p.emin_f << 23) : p.min_bits;  // 2^(1-bias) (code 1) or 2^-bias (code 0)
  return {mag | (neg << 31), up | sign_code};
}

// The scalar reference: rounds float32 bits x into the format. `word` is the element's random word
// (ignored by deterministic modes), k the stochastic bit count (1..31).
LOBENCH_HD inline Rounded round_bits(uint32_t x, const DevicePlan& p, Rounding mode, uint32_t word, int k) {
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
  } else if (!p.has_zero) {
    return round_below_smallest_binade(a, p, mode, neg, word, k);
  } else {
    // Below the smallest normal the grid spacing is fixed (2^sub_exp), so the shift depends on |x|'s
    // own exponent. sig is the significand with its implicit bit; value = sig * 2^(E - 150).
    const uint32_t e = ef ? ef : 1;
    const uint32_t sig = ef ? ((a & 0x7FFFFFu) | 0x800000u) : a;
    const int s = p.s_sub_base - static_cast<int>(e);
    const uint32_t q = s >= 32 ? 0 : sig >> s;
    const uint32_t r = s >= 32 ? sig : sig & ((1u << s) - 1);
    const uint32_t n = q + round_up_decision(mode, q, r, s, neg, word, k);
    mag = scaled_bits(n, p.sub_exp);  // n <= 2^24 and n * 2^sub_exp is on float32's grid
    code_mag = n << p.sub_code_shift;
  }
  if (mag > p.max_bits) {
    return overflow_away(mode, neg) ? Rounded{p.overflow.f[neg], p.overflow.code[neg]}
                                    : Rounded{p.max_signed.f[neg], p.max_signed.code[neg]};
  }
  if (mag == 0 && !p.signed_zero) return {0, 0};  // formats without zero never get here (above)
  return {mag | (neg << 31), code_mag | (neg ? p.code_sign : 0)};
}

// Float32 bits of a code (bits above the format's width are ignored). NaN codes give the quiet NaN
// 0x7FC00000 with the code's sign, as Quantizer::decode (float32 too: payloads are not kept).
LOBENCH_HD inline uint32_t decode_code_bits(uint32_t code, const DevicePlan& p) {
  code &= p.code_mask;
  const uint32_t neg = (code & p.code_sign) ? 1u : 0u;
  const uint32_t mag = code & p.mag_mask;
  const uint32_t sign = neg << 31;
  const uint32_t top_field = p.mag_mask & ~((uint32_t{1} << p.M) - 1);  // the all-ones exponent field
  switch (p.specials) {
    case Specials::ieee:
      if (mag >= top_field) return sign | (mag == top_field ? 0x7F800000u : 0x7FC00000u);
      break;
    case Specials::fn:
      if (mag == p.mag_mask) return sign | 0x7FC00000u;
      break;
    case Specials::fnuz:
      if (neg && mag == 0) return 0xFFC00000u;
      break;
    case Specials::finite: break;
  }
  if (!p.has_zero && mag == 0) return p.min_bits;  // exponent-only: field 0 is 2^-bias
  if ((mag >> p.M) == 0) {                          // exponent field 0: zero or subnormal
    return sign | (p.subnormals ? scaled_bits(mag, p.sub_exp) : 0u);
  }
  // Normal: the code's magnitude is float32's bit pattern shifted right by s0, exponent rebiased.
  return sign | ((mag + p.code_offset) << p.s0);
}

// --- Philox-4x32-10 with the element -> word mapping of stochastic.hpp, in plain scalars.

// The 4 output words of Philox block `block` (elements 64 floor(block / 16) + block mod 16 + 16 w, w = 0..3).
LOBENCH_HD inline void philox_block_words(uint64_t seed, uint64_t stream, uint64_t block, uint32_t out[4]) {
  uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32);
  uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * c0;
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

}  // namespace detail

// Rounds x onto the format's grid (float32 result). sr_bits: the resolved k (1..31) for `stochastic`,
// ignored by the other modes; word: the element's random word for the stochastic modes.
LOBENCH_HD inline float round_hd(float x, const DevicePlan& p, Rounding mode, uint32_t word, int sr_bits) {
  return detail::u2f(detail::round_bits(detail::f2u(x), p, mode, word, sr_bits).bits);
}

// The code of round_hd(x, ...): sign, exponent and mantissa fields in the low p.bits bits.
LOBENCH_HD inline uint32_t encode_hd(float x, const DevicePlan& p, Rounding mode, uint32_t word, int sr_bits) {
  return detail::round_bits(detail::f2u(x), p, mode, word, sr_bits).code;
}

// The value of a code (bits above p.bits are ignored); decode_hd(encode_hd(x)) == round_hd(x) bit for bit.
LOBENCH_HD inline float decode_hd(uint32_t code, const DevicePlan& p) {
  return detail::u2f(detail::decode_code_bits(code, p));
}

// The random word of element `index` of (seed, stream): equal to random_word() in stochastic.hpp.
LOBENCH_HD inline uint32_t random_word_hd(uint64_t seed, uint64_t stream, uint64_t index) {
  uint32_t w[4];
  detail::philox_block_words(seed, stream, (index / 64) * 16 + index % 16, w);
  return w[(index % 64) / 16];
}

}  // namespace lobench::precision
