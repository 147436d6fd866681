// Access to C for the two AVX-512 kernels of bf16_products.hpp (bf16_products_avx512.cpp and
// bf16_products_fma.cpp): 16 lanes of one row of C, row-major or transposed, masked at the right edge.
// Include only from translation units compiled with AVX-512 (variants/CMakeLists.txt).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "variants/cpu/bf16_products.hpp"

namespace lobench::cpu::bf16_c_tile {

inline __mmask16 lanes(int64_t count) { return count >= 16 ? __mmask16(0xffff) : __mmask16((1u << count) - 1u); }

// C(m, j…j+15) for the lanes in `mask`: row-major, or the column c[(n0 + j)·ldc + m] when transposed.
inline __m512i transposed_index(int64_t ldc) {
  return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32(int(ldc)));
}

// C's current values where the chain continues from them (from_c), else zeros.
inline __m512 load_c(const Bf16Product& p, bool from_c, int64_t m, int64_t n0, __mmask16 mask, __m512i tindex) {
  if (!from_c || !mask) return _mm512_setzero_ps();
  if (!p.c_transposed) return _mm512_maskz_loadu_ps(mask, p.c + m * p.ldc + n0);
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, tindex, p.c + n0 * p.ldc + m, 4);
}

inline void store_c(const Bf16Product& p, int64_t m, int64_t n0, __mmask16 mask, __m512i tindex, __m512 v) {
  if (!mask) return;
  if (!p.c_transposed) return _mm512_mask_storeu_ps(p.c + m * p.ldc + n0, mask, v);
  _mm512_mask_i32scatter_ps(p.c + n0 * p.ldc + m, mask, tindex, v, 4);
}

}  // namespace lobench::cpu::bf16_c_tile
