// Test helper: an independent reference for rounding, written with doubles (frexp/ldexp on the value,
// not bit manipulation), stratified float32 inputs for a format, and the formats the rounding tests
// cover. Shared by rounding_test.cpp (the library's scalar path) and device_rounding_test.cpp.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "precision_sim/device_rounding.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::precision::testing_ref {

using detail::u2f;

// The value x rounds to in format f (NaN for a NaN result), from the value's neighbours on the grid.
inline double ref_round(float xf, const Format& f, Rounding mode, uint32_t word, int k) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double maxv = f.max_finite();
  const bool sat = f.overflow == Overflow::saturate;
  const double x = xf;
  const bool neg = std::signbit(xf);
  const double sgn = neg ? -1.0 : 1.0;
  if (std::isnan(x)) return f.specials == Specials::finite ? (neg ? 0.0 : -0.0) : nan;
  if (std::isinf(x)) return f.has_inf() ? x : (f.has_nan() ? nan : sgn * maxv);
  if (x == 0) {
    if (!f.has_zero) return sat ? f.min_positive() : nan;
    return f.has_negative_zero() ? x : 0.0;
  }
  if (!f.is_signed && neg) return sat ? (f.has_zero ? 0.0 : f.min_positive()) : nan;
  const double ax = std::fabs(x);
  // No zero (e8m0fnu): nothing lies below the smallest value, so every mode gives it for |x| <= it.
  if (!f.has_zero && ax <= f.min_positive()) return sgn * f.min_positive();
  // Grid spacing at |x| (unbounded above).
  double ulp;
  const double min_normal = std::ldexp(1.0, f.emin());
  if (!f.has_zero && ax < min_normal) {
    ulp = f.min_positive();  // the binade [2^-bias, 2^(1-bias)): neighbours 2^-bias and 2^(1-bias)
  } else if (ax < min_normal) {
    ulp = f.subnormals ? std::ldexp(1.0, f.emin() - f.mantissa_bits) : min_normal;
  } else {
    int e;
    std::frexp(ax, &e);  // ax in [2^(e-1), 2^e)
    ulp = std::ldexp(1.0, e - 1 - f.mantissa_bits);
  }
  const double lo = std::floor(ax / ulp) * ulp;
  const double frac = (ax - lo) / ulp;  // exact
  bool up = false;
  switch (mode) {
    case Rounding::nearest_even: {
      const double q = lo / ulp;
      up = frac > 0.5 || (frac == 0.5 && std::fmod(q, 2.0) == 1.0);
      break;
    }
    case Rounding::nearest_away: up = frac >= 0.5; break;
    case Rounding::toward_zero: up = false; break;
    case Rounding::up: up = frac > 0 && !neg; break;
    case Rounding::down: up = frac > 0 && neg; break;
    case Rounding::stochastic: {
      const double r = std::floor(std::ldexp(frac, k));
      up = r + static_cast<double>(word & ((1u << k) - 1)) >= std::ldexp(1.0, k);
      break;
    }
    case Rounding::stochastic_exact: up = static_cast<double>(word) < std::floor(std::ldexp(frac, 32)); break;
  }
  double r = up ? lo + ulp : lo;
  if (r > maxv) {
    const bool away = mode == Rounding::toward_zero ? false
                      : mode == Rounding::up        ? !neg
                      : mode == Rounding::down      ? neg
                                                    : true;
    if (!away || sat || f.specials == Specials::finite) return sgn * maxv;
    return f.has_inf() ? sgn * inf : nan;
  }
  if (r == 0) return f.has_negative_zero() ? sgn * 0.0 : 0.0;  // formats without zero returned above
  return sgn * r;
}

// Whether got is the reference value (NaN matches any NaN; zeros must agree in sign).
inline bool same(double ref, float got) {
  if (std::isnan(ref)) return std::isnan(got);
  return ref == static_cast<double>(got) && std::signbit(ref) == std::signbit(got);
}

// Random mantissas in every binade of both signs; for formats of at most 16 bits, the grid values,
// midpoints and their float32 neighbours; the overflow boundary, ±0, ±inf, NaN, float32 subnormals.
inline std::vector<float> stratified_inputs(const Format& f, size_t per_binade, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> xs;
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t e = 0; e < 256; ++e)
      for (size_t i = 0; i < per_binade; ++i) xs.push_back(u2f((sign << 31) | (e << 23) | (rng() & 0x7FFFFF)));
  // Values of the format, midpoints and their neighbours.
  const Quantizer q(f, Isa::scalar);
  if (f.bits() <= 16) {
    for (uint32_t c = 0; c < (1u << f.bits()); c += (f.bits() > 12 ? 7 : 1)) {
      const float v = q.decode(c);
      if (!std::isfinite(v)) continue;
      const float w = q.decode(c + 1);
      for (float y : {v, std::nextafter(v, INFINITY), std::nextafter(v, 0.0f)}) xs.push_back(y);
      if (std::isfinite(w) && std::fabs(w) > std::fabs(v)) {
        const float mid = static_cast<float>((static_cast<double>(v) + w) / 2);
        for (float y : {mid, std::nextafter(mid, INFINITY), std::nextafter(mid, 0.0f)}) xs.push_back(y);
      }
    }
  }
  const float mx = static_cast<float>(f.max_finite());
  for (float y : {mx, std::nextafter(mx, INFINITY), mx * 1.03125f, mx * 1.0625f, mx * 1.5f, mx * 2, FLT_MAX, 0.0f,
                  INFINITY, NAN, 1e-45f, 1e-40f})
    for (float s : {1.0f, -1.0f}) xs.push_back(s * y);
  return xs;
}

// Every preset, custom eXmY, saturating variants, no subnormals, unusual biases.
inline std::vector<Format> formats_under_test() {
  std::vector<Format> out = formats::all_presets();
  for (const char* n : {"e5m7", "e3m2", "e2m5", "e6m9", "e4m3fn_sat", "e5m2_sat", "bf16_sat", "e2m1fn_sat",
                        "e8m0fnu_sat", "e4m3fnuz_sat"})
    out.push_back(parse_format(n));
  out.push_back(make_format(4, 3, 7, false, Specials::fn));        // e4m3fn without subnormals
  out.push_back(make_format(5, 2, 15, false, Specials::ieee));     // e5m2 without subnormals
  out.push_back(make_format(3, 4, 1, true, Specials::finite));     // unusual bias
  out.push_back(make_format(6, 5, 40, true, Specials::fnuz, Overflow::saturate));
  return out;
}

}  // namespace lobench::precision::testing_ref
