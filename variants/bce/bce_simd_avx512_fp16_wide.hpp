// bce_math.hpp's `S` in IEEE binary16 on AVX512-FP16: F is N vectors of 32 half-precision lanes, every
// operation one instruction per vector, each result rounded once to binary16 (nearest even; AVX512-FP16
// ignores MXCSR's flush-to-zero, so subnormal results are kept). That is what the binary16 emulation of
// bce_tile_rounded.cpp computes operation by operation (`--epilogue fp16`, variants/epilogue.hpp): a
// float32 +, −, ×, ÷ rounded to binary16 is the correctly rounded binary16 operation (24 ≥ 2·11 + 2 bits),
// its multiply-add is rounded once where the product and the addend are within 2^30 of each other (every
// multiply-add of bce_math's exponential and log1p stays within about 2^25), its ldexp rounds once, and
// constants are rounded to nearest. So a
// kernel on this S gives the emulation's bits at 32 lanes per instruction, where the emulation takes
// dozens of scalar-ish operations per value. N independent vectors per call interleave their chains, as
// Avx512Wide does for float32 (bce_simd_avx512_wide.hpp). Include it only inside an anonymous namespace
// of a translation unit compiled with -mavx512fp16 (bf16_fused_tile_fp16.cpp), and mark callers
// `flatten`.
#pragma once

template <int N>
struct Avx512Fp16Wide {
  struct F {
    __m512h v[N];
  };
  struct M {
    __mmask32 m[N];
  };

#define LOBENCH_WIDE_LANEWISE(expr)   \
  F r;                                \
  _Pragma("GCC unroll 16") for (int i = 0; i < N; ++i) r.v[i] = (expr); \
  return r;

  static F set1(float x) { LOBENCH_WIDE_LANEWISE(_mm512_set1_ph(static_cast<_Float16>(x))) }
  static F add(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_add_ph(a.v[i], b.v[i])) }
  static F sub(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_sub_ph(a.v[i], b.v[i])) }
  static F mul(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_mul_ph(a.v[i], b.v[i])) }
  static F div(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_div_ph(a.v[i], b.v[i])) }
  static F fma(F a, F b, F c) { LOBENCH_WIDE_LANEWISE(_mm512_fmadd_ph(a.v[i], b.v[i], c.v[i])) }
  static F negative_abs(F a) {
    LOBENCH_WIDE_LANEWISE(_mm512_castsi512_ph(_mm512_or_si512(_mm512_castph_si512(a.v[i]), _mm512_set1_epi16(short(0x8000)))))
  }
  // (x86 semantics, as every S: the second operand where either is NaN)
  static F min(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_min_ph(a.v[i], b.v[i])) }
  static F max(F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_max_ph(a.v[i], b.v[i])) }
  static F round(F a) { LOBENCH_WIDE_LANEWISE(_mm512_roundscale_ph(a.v[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)) }
  static F ldexp(F p, F n) { LOBENCH_WIDE_LANEWISE(_mm512_scalef_ph(p.v[i], n.v[i])) }
  static F select(M m, F a, F b) { LOBENCH_WIDE_LANEWISE(_mm512_mask_blend_ph(m.m[i], b.v[i], a.v[i])) }
  static M greater(F a, F b) {
    M r;
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) r.m[i] = _mm512_cmp_ph_mask(a.v[i], b.v[i], _CMP_GT_OQ);
    return r;
  }
#undef LOBENCH_WIDE_LANEWISE
};
