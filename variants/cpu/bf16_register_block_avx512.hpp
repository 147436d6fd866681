// The register block of the VDPBF16PS kernels (bf16_products_avx512.cpp, and the fused tile's logits with
// their element-wise epilogue, bf16_fused_tile_avx512.cpp): ROWS broadcast rows × 16·VECS lanes of C in
// ROWS·VECS accumulators, while the whole inner index runs through them in order (k = 0 … K2−1). Each
// output is one lane's chain of VDPBF16PS steps, exactly the sequence dpbf16_lane (bf16_dot.hpp) models.
// Include only from translation units compiled with AVX512_BF16 (variants/CMakeLists.txt), after
// <immintrin.h>; everything here has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

namespace lobench::cpu {
namespace {
namespace bf16_block {

inline __mmask16 lanes(int64_t count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1u);
}

// acc[i][v] += Σ_k a(i, k) · b[k·ldb + 16v …] (as chains of VDPBF16PS in increasing k), where a(i, k) is
// a[i·lda + k], or a[k·lda + i] with kAColumns (broadcasts down a's columns: a operand stored transposed).
// kFull: all 16·VECS lanes are in C, the b loads need no mask; else lanes outside mask[v] read zeros.
template <int ROWS, int VECS, bool kFull, bool kAColumns>
__attribute__((always_inline)) inline void chain(int64_t K2, const uint32_t* a, int64_t lda, const uint32_t* b, int64_t ldb, const __mmask16* mask,
                  __m512 (&acc)[ROWS][VECS]) {
  const uint32_t* row[ROWS];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i) row[i] = a + (kAColumns ? i : i * lda);
  for (int64_t k = 0; k < K2; ++k) {
    __m512bh bv[VECS];
#pragma GCC unroll 4
    for (int v = 0; v < VECS; ++v)
      bv[v] = kFull ? (__m512bh)_mm512_loadu_si512(b + k * ldb + 16 * v)
                    : (__m512bh)_mm512_maskz_loadu_epi32(mask[v], b + k * ldb + 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(int(kAColumns ? row[0][k * lda + i] : row[i][k]));
#pragma GCC unroll 4
      for (int v = 0; v < VECS; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], ai, bv[v]);
    }
  }
}

// The same rounding as bf16_nearest_even (bf16_dot.hpp), on 16 floats at once: each lane's top 16 bits are
// the bf16.
inline __m512i rounded_to_bf16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1)));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_or_epi32(_mm512_add_epi32(u, bias), nan, u, _mm512_set1_epi32(0x00400000));
}

// 32 values rounded (rounded_to_bf16: lo the first 16, hi the next) as 16 pairs of neighbours: word j is
// pair(value 2j, value 2j + 1), the low half the even one.
inline __m512i neighbour_pairs(__m512i lo, __m512i hi) {
  const __m512i high_halves = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29,
                                               27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  return _mm512_permutex2var_epi16(lo, high_halves, hi);
}

// Calls f(std::integral_constant<int, r>{}) for a block of r rows, 1 ≤ r ≤ 12.
template <class F>
inline void with_rows(int64_t r, F&& f) {
  switch (r) {
#define LOBENCH_BF16_ROWS_CASE(R) \
  case R: f(std::integral_constant<int, R>{}); break;
    LOBENCH_BF16_ROWS_CASE(1) LOBENCH_BF16_ROWS_CASE(2) LOBENCH_BF16_ROWS_CASE(3) LOBENCH_BF16_ROWS_CASE(4)
    LOBENCH_BF16_ROWS_CASE(5) LOBENCH_BF16_ROWS_CASE(6) LOBENCH_BF16_ROWS_CASE(7) LOBENCH_BF16_ROWS_CASE(8)
    LOBENCH_BF16_ROWS_CASE(9) LOBENCH_BF16_ROWS_CASE(10) LOBENCH_BF16_ROWS_CASE(11) LOBENCH_BF16_ROWS_CASE(12)
#undef LOBENCH_BF16_ROWS_CASE
    default: break;
  }
}

}  // namespace bf16_block
}  // namespace
}  // namespace lobench::cpu
