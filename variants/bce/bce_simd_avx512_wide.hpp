// The AVX-512 vector operations of bce_simd_avx512.hpp on N vectors at once: the `S` of bce_math.hpp
// whose F is N __m512 and every operation the same instruction applied to each. Lane for lane the same
// values as Avx512 (the same instructions, in the same order per vector), but one call to bce_math on
// Avx512Wide<N> interleaves N independent chains instruction by instruction: on Zen 5 (family 26, one
// thread, an L1-resident loop) softplus_sigmoid costs 14.6 cycles per 16 floats on Avx512Wide<8> against
// 21.9 on Avx512, whose long dependent chains (two polynomials, a division) fill the scheduler before
// the next vector's independent work is reached (out-of-order execution alone does not find it; 6 and 16
// vectors measured 15.8 and 18.1 cycles). Include it, like bce_simd_avx512.hpp, only inside an anonymous
// namespace of a translation unit compiled with AVX-512 F + DQ flags, and mark the caller `flatten`
// (bce_math's functions on N vectors are too large for GCC's inliner to take them otherwise).
#pragma once

template <int N>
struct Avx512Wide {
  struct F {
    __m512 v[N];
  };
  struct M {
    __mmask16 m[N];
  };

#define LOBENCH_WIDE_LANEWISE(expr)   \
  F r;                                \
  _Pragma("GCC unroll 16") for (int i = 0; i < N; ++i) r.v[i] = (expr); \
  return r;

  static F set1(float x) { LOBENCH_WIDE_LANEWISE(_mm512_set1_ps(x)) }
  static F add(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_add_ps(a.v[i], b.v[i])) }
  static F sub(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_sub_ps(a.v[i], b.v[i])) }
  static F mul(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_mul_ps(a.v[i], b.v[i])) }
  static F div(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_div_ps(a.v[i], b.v[i])) }
  static F fma(F a, F b, F c) { LOBENCH_WIDE_LANEWISE(_mm512_fmadd_ps(a.v[i], b.v[i], c.v[i])) }
  static F negative_abs(F a) { LOBENCH_WIDE_LANEWISE(_mm512_or_ps(a.v[i], _mm512_set1_ps(-0.0f))) }
  static F min(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_min_ps(a.v[i], b.v[i])) }
  static F max(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_max_ps(a.v[i], b.v[i])) }
  static F round(F a) { LOBENCH_WIDE_LANEWISE(_mm512_roundscale_ps(a.v[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)) }
  static F ldexp(F p, F n) { LOBENCH_WIDE_LANEWISE(_mm512_scalef_ps(p.v[i], n.v[i])) }
  static F select(M m, F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_mask_blend_ps(m.m[i], b.v[i], a.v[i])) }
  // (Avx512's, for bce_math::log1p_nonnegative)
  static F exponent(F a) { LOBENCH_WIDE_LANEWISE(_mm512_getexp_ps(a.v[i])) }
  static F mantissa(F a) { LOBENCH_WIDE_LANEWISE(_mm512_getmant_ps(a.v[i], _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src)) }
  static M greater(F a, F b) {
    M r;
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) r.m[i] = _mm512_cmp_ps_mask(a.v[i], b.v[i], _CMP_GT_OQ);
    return r;
  }
#undef LOBENCH_WIDE_LANEWISE
};
