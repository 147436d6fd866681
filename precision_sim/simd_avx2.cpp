// AVX2 kernels (8 lanes): detail/simd_kernels.hpp over vector masks instead of mask registers. AVX2
// has no unsigned compares; every quantity `gt`/`ge` compare is below 2^31 where the result matters
// (mag of inf/NaN lanes may pass it, but those lanes take the NaN/inf constants), and the random word
// and threshold of stochastic_exact (`ult`) are compared after flipping their top bits. A 64-element
// Philox group is two 8-lane Philox calls (blocks 0-7 and 8-15 of the group).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "precision_sim/detail/kernels.hpp"
#include "precision_sim/philox.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
// GCC 12's AVX-512 headers build results from a self-initialised "undefined" vector, which
// -Wmaybe-uninitialized reports once inlined here; it is a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC target("avx2,fma")

namespace lobench::precision::detail {
namespace {

// The vector operations of detail/simd_kernels.hpp for AVX2. Masks are vectors, all-ones lanes where true.
struct Avx2 {
  using V = __m256i;
  using M = __m256i;
  using F = __m256;
  static constexpr int width = 8;

  static V set1(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
  static F set1f(float v) { return _mm256_set1_ps(v); }
  static V zero() { return _mm256_setzero_si256(); }
  static V lane_index() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
  static V load(const float* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  template <bool STREAM>
  static void store(float* p, V v) {
    if constexpr (STREAM) _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  template <bool STREAM>
  static void store(uint8_t* p, V code) {
    // Byte 0 of each 32-bit lane to the front of its 128-bit half, then the two halves together.
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(code, pick), _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
    if constexpr (STREAM) _mm_stream_si64(reinterpret_cast<long long*>(p), _mm_cvtsi128_si64(_mm256_castsi256_si128(packed)));
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  template <bool STREAM>
  static void store(uint16_t* p, V code) {
    const __m256i pick = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                          0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(code, pick), _mm256_setr_epi32(0, 1, 4, 5, 2, 2, 2, 2));
    if constexpr (STREAM) _mm_stream_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  static void fence() { _mm_sfence(); }

  static V and_(V a, V b) { return _mm256_and_si256(a, b); }
  static V or_(V a, V b) { return _mm256_or_si256(a, b); }
  static V xor3(V a, V b, V c) { return _mm256_xor_si256(_mm256_xor_si256(a, b), c); }
  static V add(V a, V b) { return _mm256_add_epi32(a, b); }
  static V sub(V a, V b) { return _mm256_sub_epi32(a, b); }
  static V srl(V a, V n) { return _mm256_srlv_epi32(a, n); }
  static V sll(V a, V n) { return _mm256_sllv_epi32(a, n); }
  template <int N>
  static V srli(V a) { return _mm256_srli_epi32(a, N); }
  static V min_u(V a, V b) { return _mm256_min_epu32(a, b); }
  static V max_u(V a, V b) { return _mm256_max_epu32(a, b); }
  static V to_float_times(V n, F step) { return _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(n), step)); }

  static V mul_epu32(V a, V b) { return _mm256_mul_epu32(a, b); }
  static V srli64_32(V a) { return _mm256_srli_epi64(a, 32); }
  static V slli64_32(V a) { return _mm256_slli_epi64(a, 32); }
  static V blend_odd(V even, V odd) { return _mm256_blend_epi32(even, odd, 0xAA); }

  static M sign(V x) { return _mm256_srai_epi32(x, 31); }
  static M eq(V a, V b) { return _mm256_cmpeq_epi32(a, b); }
  static M gt(V a, V b) { return _mm256_cmpgt_epi32(a, b); }  // signed; operands < 2^31
  static M ge(V a, V b) { return m_not(gt(b, a)); }
  // Unsigned a < b for full-range 32-bit values.
  static M ult(V a, V b) {
    const V flip = set1(0x80000000u);
    return _mm256_cmpgt_epi32(_mm256_xor_si256(b, flip), _mm256_xor_si256(a, flip));
  }
  static M nonzero(V a) { return m_not(_mm256_cmpeq_epi32(a, zero())); }
  static M bit_set(V a, V bit) { return _mm256_cmpeq_epi32(_mm256_and_si256(a, bit), bit); }
  static M m_and(M a, M b) { return _mm256_and_si256(a, b); }
  static M m_or(M a, M b) { return _mm256_or_si256(a, b); }
  static M m_andnot(M a, M b) { return _mm256_andnot_si256(a, b); }
  static M m_not(M a) { return _mm256_xor_si256(a, m_all()); }
  static M m_none() { return _mm256_setzero_si256(); }
  static M m_all() { return _mm256_set1_epi32(-1); }
  static bool any(M m) { return !_mm256_testz_si256(m, m); }

  static V sel(M m, V if_false, V if_true) { return _mm256_blendv_epi8(if_false, if_true, m); }
  static V keep(M m, V v) { return _mm256_and_si256(m, v); }
  static V keep_not(M m, V v) { return _mm256_andnot_si256(m, v); }
  static V or_where(M m, V a, V v) { return _mm256_or_si256(a, _mm256_and_si256(m, v)); }
  static V add_where(M m, V a, V v) { return _mm256_add_epi32(a, _mm256_and_si256(m, v)); }
};

}  // namespace
}  // namespace lobench::precision::detail

#include "precision_sim/detail/simd_kernels.hpp"  // inside the target region: compiled for AVX2

#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace lobench::precision::detail {
const KernelTable* avx2_kernels() {
  static const KernelTable table{"avx2", simd::kernel<Avx2, float>, simd::kernel<Avx2, uint8_t>,
                                 simd::kernel<Avx2, uint16_t>};
  return &table;
}
}  // namespace lobench::precision::detail

#else

namespace lobench::precision::detail {
const KernelTable* avx2_kernels() { return nullptr; }
}  // namespace lobench::precision::detail

#endif
