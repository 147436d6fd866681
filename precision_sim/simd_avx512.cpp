// AVX-512 kernels (16 lanes): detail/simd_kernels.hpp (the algorithm) over mask registers and
// unsigned compares. A 64-element Philox group is one 16-lane Philox call.
//
// The file is compiled with the project's flags; the functions below get AVX-512 through
// `#pragma GCC target`, so a portable build still links and the dispatcher only calls them on CPUs
// that have AVX-512F/BW/VL/DQ. Headers are included before the pragma so that their inline functions
// stay baseline code.
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
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")

namespace lobench::precision::detail {
namespace {

// The vector operations of detail/simd_kernels.hpp for AVX-512: one mask bit per lane.
struct Avx512 {
  using V = __m512i;
  using M = __mmask16;
  using F = __m512;
  static constexpr int width = 16;

  static V set1(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }
  static F set1f(float v) { return _mm512_set1_ps(v); }
  static V zero() { return _mm512_setzero_si512(); }
  static V lane_index() { return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
  static V load(const float* p) { return _mm512_loadu_si512(p); }
  template <bool STREAM>
  static void store(float* p, V v) {
    if constexpr (STREAM) _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
    else _mm512_storeu_si512(p, v);
  }
  template <bool STREAM>
  static void store(uint8_t* p, V code) {
    if constexpr (STREAM) _mm_stream_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(code));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(code));
  }
  template <bool STREAM>
  static void store(uint16_t* p, V code) {
    if constexpr (STREAM) _mm256_stream_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(code));
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(code));
  }
  static void fence() { _mm_sfence(); }

  static V and_(V a, V b) { return _mm512_and_si512(a, b); }
  static V or_(V a, V b) { return _mm512_or_si512(a, b); }
  static V xor3(V a, V b, V c) { return _mm512_ternarylogic_epi32(a, b, c, 0x96); }  // three-way xor
  static V add(V a, V b) { return _mm512_add_epi32(a, b); }
  static V sub(V a, V b) { return _mm512_sub_epi32(a, b); }
  static V srl(V a, V n) { return _mm512_srlv_epi32(a, n); }
  static V sll(V a, V n) { return _mm512_sllv_epi32(a, n); }
  template <int N>
  static V srli(V a) { return _mm512_srli_epi32(a, N); }
  static V min_u(V a, V b) { return _mm512_min_epu32(a, b); }
  static V max_u(V a, V b) { return _mm512_max_epu32(a, b); }
  static V to_float_times(V n, F step) { return _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(n), step)); }

  static V mul_epu32(V a, V b) { return _mm512_mul_epu32(a, b); }
  static V srli64_32(V a) { return _mm512_srli_epi64(a, 32); }
  static V slli64_32(V a) { return _mm512_slli_epi64(a, 32); }
  static V blend_odd(V even, V odd) { return _mm512_mask_blend_epi32(0xAAAA, even, odd); }

  static M sign(V x) { return _mm512_movepi32_mask(x); }
  static M eq(V a, V b) { return _mm512_cmpeq_epu32_mask(a, b); }
  static M gt(V a, V b) { return _mm512_cmpgt_epu32_mask(a, b); }
  static M ge(V a, V b) { return _mm512_cmpge_epu32_mask(a, b); }
  static M ult(V a, V b) { return _mm512_cmplt_epu32_mask(a, b); }
  static M nonzero(V a) { return _mm512_test_epi32_mask(a, a); }
  static M bit_set(V a, V bit) { return _mm512_test_epi32_mask(a, bit); }
  static M m_and(M a, M b) { return a & b; }
  static M m_or(M a, M b) { return a | b; }
  static M m_andnot(M a, M b) { return static_cast<M>(~a) & b; }
  static M m_not(M a) { return static_cast<M>(~a); }
  static M m_none() { return 0; }
  static M m_all() { return 0xFFFF; }
  static bool any(M m) { return m != 0; }

  static V sel(M m, V if_false, V if_true) { return _mm512_mask_mov_epi32(if_false, m, if_true); }
  static V keep(M m, V v) { return _mm512_maskz_mov_epi32(m, v); }
  static V keep_not(M m, V v) { return _mm512_maskz_mov_epi32(static_cast<M>(~m), v); }
  static V or_where(M m, V a, V v) { return _mm512_mask_or_epi32(a, m, a, v); }
  static V add_where(M m, V a, V v) { return _mm512_mask_add_epi32(a, m, a, v); }
};

}  // namespace
}  // namespace lobench::precision::detail

#include "precision_sim/detail/simd_kernels.hpp"  // inside the target region: compiled for AVX-512

#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace lobench::precision::detail {
// Outside the target region: this accessor runs on every CPU.
const KernelTable* avx512_kernels() {
  static const KernelTable table{"avx512", simd::kernel<Avx512, float>, simd::kernel<Avx512, uint8_t>,
                                 simd::kernel<Avx512, uint16_t>};
  return &table;
}
}  // namespace lobench::precision::detail

#else

namespace lobench::precision::detail {
const KernelTable* avx512_kernels() { return nullptr; }
}  // namespace lobench::precision::detail

#endif
