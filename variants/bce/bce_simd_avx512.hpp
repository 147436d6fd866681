// The vector operations of the AVX-512 (F + DQ) kernels, 16 floats per vector: the `S` of bce_math.hpp
// and bce_tile_loops.hpp for every translation unit compiled with AVX-512 flags (bce_tile_avx512.cpp,
// cpu/fused_tile_avx512.cpp). Include it only inside such a unit's anonymous namespace, so that every
// function here has internal linkage there and no caller on a CPU without AVX-512 can ever link to it
// (the unit includes <immintrin.h> first, outside any namespace).
#pragma once

struct Avx512 {
  using F = __m512;
  using M = __mmask16;
  static constexpr int width = 16;

  static F set1(float v) { return _mm512_set1_ps(v); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static M first_lanes(int n) { return M((1u << n) - 1u); }
  static F load_first(const float* p, int n) { return _mm512_maskz_loadu_ps(first_lanes(n), p); }
  static void store_first(float* p, F v, int n) { _mm512_mask_storeu_ps(p, first_lanes(n), v); }

  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F negative_abs(F a) { return _mm512_or_ps(a, _mm512_set1_ps(-0.0f)); }
  static F min(F a, F b) { return _mm512_min_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static F round(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // scalef rounds p·2^n once, subnormal results included: the same value the two-step ldexp of the
  // other paths produces.
  static F ldexp(F p, F n) { return _mm512_scalef_ps(p, n); }
  // ⌊log2 a⌋ and a·2^−⌊log2 a⌋ ∈ [1, 2) (bce_math::log1p_nonnegative; NaN passes through)
  static F exponent(F a) { return _mm512_getexp_ps(a); }
  static F mantissa(F a) { return _mm512_getmant_ps(a, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src); }
  static M greater(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static F select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
  static int count(M m) { return __builtin_popcount(unsigned(m)); }

  struct Acc {
    __m512d lo, hi;
  };
  static Acc acc_zero() { return {_mm512_setzero_pd(), _mm512_setzero_pd()}; }
  static void acc_add(Acc& acc, F v) {
    acc.lo = _mm512_add_pd(acc.lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    acc.hi = _mm512_add_pd(acc.hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
  }
  static double acc_total(Acc acc) { return _mm512_reduce_add_pd(_mm512_add_pd(acc.lo, acc.hi)); }
};

