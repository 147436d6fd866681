// The SIMD kernel of bf16_products.hpp: VDPBF16PS (AVX512_BF16), one float32 lane per output element,
// and the float32 → bf16-pair packing in AVX-512. Compiled with that instruction set only in this file;
// bf16_products.cpp calls it only when the CPU reports AVX512_BF16.
//
// A block of up to kRows rows × 32 columns of C stays in 2·kRows accumulators while the whole inner index
// runs through them in order (k = 0 … K2−1): each output is one lane's chain of VDPBF16PS steps, exactly
// the sequence dpbf16_lane models, so the emulation and this kernel agree bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <chrono>

#include "variants/cpu/bf16_c_tile_avx512.hpp"
#include "variants/cpu/bf16_products.hpp"

namespace lobench::cpu::avx512_bf16 {
namespace {

constexpr int kRows = 8;  // rows of C per block: 16 accumulators for 32 columns

using bf16_c_tile::lanes;
using bf16_c_tile::load_c;
using bf16_c_tile::store_c;
using bf16_c_tile::transposed_index;

// Rows [m0, m0 + ROWS) × columns [n0, n0 + 16·VECS), the lanes past N masked off.
template <int ROWS, int VECS>
void block(const Bf16Product& p, int64_t m0, int64_t n0, const __mmask16 (&mask)[2], __m512i tindex) {
  // (every loop over i and v unrolled, so that the accumulators live in registers, not on the stack)
  __m512 acc[ROWS][VECS];
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < VECS; ++v) acc[i][v] = load_c(p, p.accumulate, m0 + i, n0 + 16 * v, mask[v], tindex);
  const uint32_t* a = p.a + m0 * p.lda;
  const uint32_t* b = p.b + n0;
  for (int64_t k = 0; k < p.K2; ++k, b += p.ldb) {
    __m512bh bv[VECS];
#pragma GCC unroll 2
    for (int v = 0; v < VECS; ++v) bv[v] = (__m512bh)_mm512_maskz_loadu_epi32(mask[v], b + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < ROWS; ++i) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(int(a[i * p.lda + k]));
#pragma GCC unroll 2
      for (int v = 0; v < VECS; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], ai, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < VECS; ++v) store_c(p, m0 + i, n0 + 16 * v, mask[v], tindex, acc[i][v]);
}

template <int VECS>
void rows_block(const Bf16Product& p, int64_t m0, int64_t rows, int64_t n0, const __mmask16 (&mask)[2],
                __m512i tindex) {
  switch (rows) {
    case 8: return block<8, VECS>(p, m0, n0, mask, tindex);
    case 7: return block<7, VECS>(p, m0, n0, mask, tindex);
    case 6: return block<6, VECS>(p, m0, n0, mask, tindex);
    case 5: return block<5, VECS>(p, m0, n0, mask, tindex);
    case 4: return block<4, VECS>(p, m0, n0, mask, tindex);
    case 3: return block<3, VECS>(p, m0, n0, mask, tindex);
    case 2: return block<2, VECS>(p, m0, n0, mask, tindex);
    default: return block<1, VECS>(p, m0, n0, mask, tindex);
  }
}

// The same rounding as bf16_nearest_even, on 16 floats at once: each lane's top 16 bits are the bf16.
__m512i rounded_to_bf16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1)));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_or_epi32(_mm512_add_epi32(u, bias), nan, u, _mm512_set1_epi32(0x00400000));
}

// One instruction's throughput over `steps` × 24 instructions: 24 independent accumulator chains (more
// than latency × issue width on any AVX-512 core), the operands kept opaque to the compiler so that no
// iteration is folded away. GFLOP/s of wall time.
template <bool kBf16>
double burst_gflops(int64_t steps) {
  constexpr int kChains = 24;
  __m512 acc[kChains];
#pragma GCC unroll 24
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(float(j));  // distinct: no chains merged
  __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(1e-30f);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t r = 0; r < steps; ++r) {
#pragma GCC unroll 24
    for (int j = 0; j < kChains; ++j) {
      if constexpr (kBf16) acc[j] = _mm512_dpbf16_ps(acc[j], (__m512bh)x, (__m512bh)y);
      else acc[j] = _mm512_fmadd_ps(x, y, acc[j]);
    }
    __asm__ volatile("" : "+v"(x), "+v"(y));
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __m512 sum = _mm512_setzero_ps();
  for (const auto& a : acc) sum = _mm512_add_ps(sum, a);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return double(steps) * kChains * (kBf16 ? 64 : 32) / elapsed / 1e9;
}

}  // namespace

// Short bursts of each instruction in turn, the best of each kept: on a machine shared with other jobs a
// burst that ran alone on its core shows the instruction's rate, and interleaving exposes both to the
// same conditions.
PeakRates peak_rates(double seconds) {
  PeakRates best;
  const auto t0 = std::chrono::steady_clock::now();
  do {
    best.fp32_fma = std::max(best.fp32_fma, burst_gflops<false>(20000));
    best.bf16_dot = std::max(best.bf16_dot, burst_gflops<true>(5000));
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds);
  return best;
}

void product(const Bf16Product& p) {
  const __m512i tindex = transposed_index(p.ldc);
  for (int64_t n0 = 0; n0 < p.N; n0 += 32) {
    const __mmask16 mask[2] = {lanes(p.N - n0), lanes(std::max<int64_t>(0, p.N - n0 - 16))};
    for (int64_t m0 = 0; m0 < p.M; m0 += kRows) {
      const int64_t rows = std::min<int64_t>(kRows, p.M - m0);
      if (mask[1]) rows_block<2>(p, m0, rows, n0, mask, tindex);
      else rows_block<1>(p, m0, rows, n0, mask, tindex);
    }
  }
}

namespace {
// Floats [c, c+32) of a row of `cols` (zeros past it) as 16 bf16 pairs of neighbours: output 16-bit word
// j of 32 is the bf16 of input float j, the high half of 32-bit lane j.
__m512i pairs_of_32(const float* s, int64_t c, int64_t cols) {
  alignas(64) static const uint16_t high_halves[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21,
                                                       23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43,
                                                       45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  const __m512 lo = _mm512_maskz_loadu_ps(lanes(cols - c), s + c);
  const __m512 hi = _mm512_maskz_loadu_ps(lanes(std::max<int64_t>(0, cols - c - 16)), s + c + 16);
  return _mm512_permutex2var_epi16(rounded_to_bf16(lo), _mm512_load_si512(high_halves), rounded_to_bf16(hi));
}
}  // namespace

void pair_columns(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst) {
  const int64_t words = (cols + 1) / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * ld_src;
    uint32_t* d = dst + r * ld_dst;
    for (int64_t c = 0; c < cols; c += 32) _mm512_mask_storeu_epi32(d + c / 2, lanes(words - c / 2), pairs_of_32(s, c, cols));
  }
}

// The same words, word k of row r stored at dst[k·ld_dst + r]: scattered 16 at a time.
void pair_columns_transposed(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst,
                             int64_t ld_dst) {
  const int64_t words = (cols + 1) / 2;
  const __m512i step = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32(int(ld_dst)));
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * ld_src;
    for (int64_t c = 0; c < cols; c += 32)
      _mm512_mask_i32scatter_epi32(dst + (c / 2) * ld_dst + r, lanes(words - c / 2), step, pairs_of_32(s, c, cols), 4);
  }
}

void pair_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst) {
  const __m512i high = _mm512_set1_epi32(int(0xffff0000u));
  for (int64_t k = 0; 2 * k < rows; ++k) {
    const float* lo = src + 2 * k * ld_src;
    const bool has_hi = 2 * k + 1 < rows;
    uint32_t* d = dst + k * ld_dst;
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 m = lanes(cols - c);
      const __m512i l = _mm512_srli_epi32(rounded_to_bf16(_mm512_maskz_loadu_ps(m, lo + c)), 16);
      const __m512i h = has_hi ? _mm512_and_si512(rounded_to_bf16(_mm512_maskz_loadu_ps(m, lo + ld_src + c)), high)
                               : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(d + c, m, _mm512_or_si512(l, h));
    }
  }
}

}  // namespace lobench::cpu::avx512_bf16
