#include "precision_sim/detail/plan.hpp"

#include <cmath>

#include "precision_sim/detail/plan_build.hpp"
#include "precision_sim/format.hpp"

namespace lobench::precision::detail {

namespace {

SignedResult same_for_both(uint32_t f, uint32_t code) { return SignedResult{{f, f}, {code, code}}; }

SignedResult with_sign(uint32_t f_mag, uint32_t code_mag, uint32_t code_sign) {
  return SignedResult{{f_mag, f_mag | 0x80000000u}, {code_mag, code_mag | code_sign}};
}

}  // namespace

Plan make_plan(const Format& f) {
  validate(f);
  Plan p{};
  const int E = f.exponent_bits;
  const int M = f.mantissa_bits;
  p.identity = E == 8 && M == 23 && f.bias == 127 && f.specials == Specials::ieee && f.subnormals && f.is_signed;
  p.is_signed = f.is_signed;
  p.has_zero = f.has_zero;
  p.signed_zero = f.has_negative_zero();
  p.subnormals = f.subnormals;
  p.specials = f.specials;
  p.exponent_bits = E;
  p.M = M;
  p.bias = f.bias;
  p.bits = f.bits();
  p.s0 = 23 - M;
  p.lowmask = (uint32_t{1} << p.s0) - 1;
  p.emin_f = static_cast<uint32_t>(f.emin() + 127);
  p.min_normal_bits = p.emin_f << 23;
  const int eq_sub = f.subnormals ? f.emin() - M : f.emin();
  p.s_sub_base = eq_sub + 150;
  p.sub_exp = eq_sub;
  p.sub_step = static_cast<float>(std::ldexp(1.0, eq_sub));
  p.sub_code_shift = f.subnormals ? 0 : static_cast<uint32_t>(M);
  p.code_offset = static_cast<uint32_t>(127 - f.bias) << M;
  p.code_sign = f.is_signed ? (uint32_t{1} << (E + M)) : 0;
  p.mag_mask = (uint32_t{1} << (E + M)) - 1;
  p.code_mask = f.bits() >= 32 ? 0xFFFFFFFFu : (uint32_t{1} << f.bits()) - 1;
  p.max_code = max_code_magnitude(f);
  p.max_bits = f2u(static_cast<float>(magnitude_value(f, p.max_code)));
  p.min_bits = f2u(static_cast<float>(std::ldexp(1.0, -f.bias)));
  p.pattern_everywhere = f.subnormals && p.emin_f == 1;
  p.simd = f.is_signed && f.has_zero && !p.identity && M > 0 && p.s0 > 0;  // exotic formats stay scalar
  p.default_sr_bits = default_sr_bits(f);

  const uint32_t top_field = ((uint32_t{1} << E) - 1) << M;
  const bool saturate = f.overflow == Overflow::saturate;
  p.max_signed = with_sign(p.max_bits, p.max_code, p.code_sign);

  switch (f.specials) {
    case Specials::ieee:
      p.nan_in = with_sign(0x7FC00000u, top_field | (uint32_t{1} << (M - 1)), p.code_sign);
      p.inf_in = with_sign(0x7F800000u, top_field, p.code_sign);
      p.overflow = saturate ? p.max_signed : p.inf_in;
      break;
    case Specials::fn:
      p.nan_in = f.is_signed ? with_sign(0x7FC00000u, p.mag_mask, p.code_sign)
                           : same_for_both(0x7FC00000u, p.mag_mask);  // all magnitude bits set
      p.inf_in = p.nan_in;
      p.overflow = saturate ? p.max_signed : p.nan_in;
      break;
    case Specials::fnuz:
      // One NaN, the code of "negative zero"; ml_dtypes decodes it to a float32 NaN with the sign set.
      p.nan_in = same_for_both(0xFFC00000u, p.code_sign);
      p.inf_in = p.nan_in;
      p.overflow = saturate ? p.max_signed : p.nan_in;
      break;
    case Specials::finite:
      // No NaN code: ml_dtypes' stand-in is the code 0b1000.. (-0), negated for a negative NaN.
      p.nan_in = SignedResult{{0x80000000u, 0u}, {p.code_sign, 0u}};
      p.inf_in = p.max_signed;
      p.overflow = p.max_signed;
      break;
  }

  if (f.has_zero) {
    p.zero_in = p.signed_zero ? with_sign(0, 0, p.code_sign) : same_for_both(0, 0);
  } else {
    p.zero_in = saturate ? same_for_both(p.min_bits, 0) : same_for_both(p.nan_in.f[0], p.nan_in.code[0]);
  }
  if (!f.is_signed) {
    const SignedResult lowest = f.has_zero ? same_for_both(0, 0) : same_for_both(p.min_bits, 0);
    p.negative_in = saturate ? lowest : same_for_both(p.nan_in.f[0], p.nan_in.code[0]);
  } else {
    p.negative_in = p.nan_in;  // unused
  }
  return p;
}

uint32_t decode_bits(const Format& f, uint32_t code) {
  const int E = f.exponent_bits;
  const int M = f.mantissa_bits;
  const uint32_t code_mask = f.bits() >= 32 ? 0xFFFFFFFFu : (uint32_t{1} << f.bits()) - 1;
  code &= code_mask;
  const uint32_t mag_mask = (uint32_t{1} << (E + M)) - 1;
  const uint32_t neg = f.is_signed ? (code >> (E + M)) & 1 : 0;
  const uint32_t mag = code & mag_mask;
  const uint32_t sign = neg << 31;
  const uint32_t field = mag >> M;
  const uint32_t mant = mag & ((uint32_t{1} << M) - 1);
  constexpr uint32_t kQuietNaN = 0x7FC00000u;
  switch (f.specials) {
    case Specials::ieee:
      if (field == (uint32_t{1} << E) - 1) return mant == 0 ? (sign | 0x7F800000u) : (sign | kQuietNaN);
      break;
    case Specials::fn:
      if (mag == mag_mask) return sign | kQuietNaN;
      break;
    case Specials::fnuz:
      if (neg && mag == 0) return 0x80000000u | kQuietNaN;
      break;
    case Specials::finite: break;
  }
  return f2u(static_cast<float>(magnitude_value(f, mag))) | sign;
}

}  // namespace lobench::precision::detail

namespace lobench::precision {

DevicePlan make_device_plan(const Format& f) { return detail::make_plan(f); }

}  // namespace lobench::precision
