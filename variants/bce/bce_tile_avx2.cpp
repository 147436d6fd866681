// The tile kernels for AVX2 + FMA, 8 floats per vector. Compiled with its own flags
// (variants/CMakeLists.txt, AVX-512 explicitly off so that a -march=native build cannot slip AVX-512
// encodings in) and only ever called after the CPU reported those features; it must include nothing
// that emits code shared with other translation units (see bce_math.hpp).
#include <immintrin.h>

#include "variants/bce/bce_tile_kernels.hpp"
#include "variants/bce/bce_tile_loops.hpp"

namespace lobench::cpu {
namespace {

struct Avx2 {
  using F = __m256;
  using M = __m256;  // all-ones lanes where true
  static constexpr int width = 8;

  static F set1(float v) { return _mm256_set1_ps(v); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static __m256i first_lanes_i(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static M first_lanes(int n) { return _mm256_castsi256_ps(first_lanes_i(n)); }
  static F load_first(const float* p, int n) { return _mm256_maskload_ps(p, first_lanes_i(n)); }
  static void store_first(float* p, F v, int n) { _mm256_maskstore_ps(p, first_lanes_i(n), v); }

  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F negative_abs(F a) { return _mm256_or_ps(_mm256_set1_ps(-0.0f), a); }
  static F min(F a, F b) { return _mm256_min_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F round(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // p·2^n for integral n ∈ [−150, 0] as p·2^⌊n/2⌋·2^⌈n/2⌉: both factors are normal floats, the first
  // product is exact (p ≈ 1), so the result is rounded once, subnormals included.
  static F ldexp(F p, F n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const F s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const F s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }
  static M greater(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static F select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
  static int count(M m) { return __builtin_popcount(unsigned(_mm256_movemask_ps(m))); }

  struct Acc {
    __m256d lo, hi;
  };
  static Acc acc_zero() { return {_mm256_setzero_pd(), _mm256_setzero_pd()}; }
  static void acc_add(Acc& acc, F v) {
    acc.lo = _mm256_add_pd(acc.lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    acc.hi = _mm256_add_pd(acc.hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  static double acc_total(Acc acc) {
    const __m256d s = _mm256_add_pd(acc.lo, acc.hi);
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  }
};

}  // namespace

extern const BceTileKernels kBceTileKernelsAvx2 = bce_loops::kernel_table<Avx2>(SimdPath::avx2);

}  // namespace lobench::cpu
