// The SIMD kernel of bf16_products.hpp: VDPBF16PS (AVX512_BF16), one float32 lane per output element,
// and the float32 → bf16-pair packing in AVX-512. Compiled with that instruction set only in this file;
// bf16_products.cpp calls it only when the CPU reports AVX512_BF16.
//
// A block of up to kRows rows × 32 columns of C stays in 2·kRows accumulators while the whole inner index
// runs through them in order (k = 0 … K2−1): each output is one lane's chain of VDPBF16PS steps, exactly
// the sequence dpbf16_lane models, so the emulation and this kernel agree bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <vector>
#include <type_traits>

#include "variants/cpu/bf16_c_tile_avx512.hpp"
#include "variants/cpu/bf16_register_block_avx512.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/timing.hpp"

namespace lobench::cpu::avx512_bf16 {
namespace {

// Rows of C per block: 2·kRows accumulators for 32 columns. (Zen 5, one thread, tiles of 512 × 256 × 128:
// 8 to 12 rows measured alike, within 3 %; 6 × 64 and 4 × 64 lanes slower.)
constexpr int kRows = 8;

using bf16_block::chain;
using bf16_block::rounded_to_bf16;
using bf16_block::with_rows;
using bf16_block::lanes;
using bf16_c_tile::load_c;
using bf16_c_tile::store_c;
using bf16_c_tile::transposed_index;

const uint32_t* a_rows(const Bf16Product& p, int64_t m0) { return p.a_transposed ? p.a + m0 : p.a + m0 * p.lda; }

// Rows [m0, m0 + ROWS) × columns [n0, n0 + 16·VECS) of a row-major C, the lanes past N masked off (kFull:
// none are).
template <int ROWS, int VECS, bool kFull, bool kAColumns>
void block(const Bf16Product& p, int64_t m0, int64_t n0, const __mmask16* mask) {
  // (every loop over i and v unrolled, so that the accumulators live in registers, not on the stack)
  __m512 acc[ROWS][VECS];
  float* c = p.c + m0 * p.ldc + n0;
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < VECS; ++v)
      acc[i][v] = !p.accumulate ? _mm512_setzero_ps()
                  : kFull       ? _mm512_loadu_ps(c + i * p.ldc + 16 * v)
                                : _mm512_maskz_loadu_ps(mask[v], c + i * p.ldc + 16 * v);
  chain<ROWS, VECS, kFull, kAColumns>(p.K2, a_rows(p, m0), p.lda, p.b + n0, p.ldb, mask, acc);
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < VECS; ++v) {
      if (kFull) _mm512_storeu_ps(c + i * p.ldc + 16 * v, acc[i][v]);
      else _mm512_mask_storeu_ps(c + i * p.ldc + 16 * v, mask[v], acc[i][v]);
    }
}

// The same block of a transposed C (the dE product of tile_products_bf16.hpp): read and written through
// gathers and scatters.
template <int ROWS, int VECS, bool kAColumns>
void transposed_block(const Bf16Product& p, int64_t m0, int64_t n0, const __mmask16* mask, __m512i tindex) {
  __m512 acc[ROWS][VECS];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < VECS; ++v) acc[i][v] = load_c(p, p.accumulate, m0 + i, n0 + 16 * v, mask[v], tindex);
  chain<ROWS, VECS, false, kAColumns>(p.K2, a_rows(p, m0), p.lda, p.b + n0, p.ldb, mask, acc);
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < VECS; ++v) store_c(p, m0 + i, n0 + 16 * v, mask[v], tindex, acc[i][v]);
}

template <bool kAColumns>
void product_of(const Bf16Product& p) {
  const __m512i tindex = transposed_index(p.ldc);
  for (int64_t n0 = 0; n0 < p.N; n0 += 32) {
    const __mmask16 mask[2] = {lanes(p.N - n0), lanes(p.N - n0 - 16)};
    for (int64_t m0 = 0; m0 < p.M; m0 += kRows)
      with_rows(std::min<int64_t>(kRows, p.M - m0), [&](auto r) {
        constexpr int R = decltype(r)::value;
        if (p.c_transposed) {
          if (mask[1]) transposed_block<R, 2, kAColumns>(p, m0, n0, mask, tindex);
          else transposed_block<R, 1, kAColumns>(p, m0, n0, mask, tindex);
        } else if (mask[1] == 0xffff) {
          block<R, 2, true, kAColumns>(p, m0, n0, mask);
        } else if (mask[1]) {
          block<R, 2, false, kAColumns>(p, m0, n0, mask);
        } else {
          block<R, 1, false, kAColumns>(p, m0, n0, mask);
        }
      });
  }
}

// `steps` × 24 instructions of one kind: 24 independent accumulator chains (more than latency × issue
// width on any AVX-512 core), the operands kept opaque to the compiler so that no iteration is folded
// away. Its flops: steps × 24 × (64 for VDPBF16PS, 32 for VFMADD231PS).
template <bool kBf16>
void burst(int64_t steps) {
  constexpr int kChains = 24;
  __m512 acc[kChains];
#pragma GCC unroll 24
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(float(j));  // distinct: no chains merged
  __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(1e-30f);
  for (int64_t r = 0; r < steps; ++r) {
#pragma GCC unroll 24
    for (int j = 0; j < kChains; ++j) {
      if constexpr (kBf16) acc[j] = _mm512_dpbf16_ps(acc[j], (__m512bh)x, (__m512bh)y);
      else acc[j] = _mm512_fmadd_ps(x, y, acc[j]);
    }
    __asm__ volatile("" : "+v"(x), "+v"(y));
  }
  __m512 sum = _mm512_setzero_ps();
  for (const auto& a : acc) sum = _mm512_add_ps(sum, a);
  // (summed through memory: GCC 12's _mm512_reduce_add_ps warns of an uninitialized value inside its header)
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  volatile float sink = total;
  (void)sink;
}

}  // namespace

// Short bursts of each instruction in turn for `seconds` in all (time_interleaved with a time budget:
// the timing rule), the fastest of each kept: on a machine shared with other jobs a burst that ran alone
// on its core shows the instruction's rate, and interleaving exposes both to the same conditions.
PeakRates peak_rates(double seconds) {
  constexpr int64_t kFmaSteps = 20000, kDotSteps = 5000;
  std::vector<Contender> bursts(2);
  bursts[0].run = [] { burst<false>(kFmaSteps); };
  bursts[1].run = [] { burst<true>(kDotSteps); };
  time_interleaved(bursts, /*warmup=*/0, RepPolicy::budget(seconds));
  PeakRates best;
  best.fp32_fma = double(kFmaSteps) * 24 * 32 / bursts[0].wall.min() / 1e9;
  best.bf16_dot = double(kDotSteps) * 24 * 64 / bursts[1].wall.min() / 1e9;
  return best;
}

void product(const Bf16Product& p) {
  if (p.a_transposed) product_of<true>(p);
  else product_of<false>(p);
}

namespace {
// Floats [c, c+32) of a row of `cols` (zeros past it) as 16 bf16 pairs of neighbours: output 16-bit word
// j of 32 is the bf16 of input float j, the high half of 32-bit lane j.
__m512i pairs_of_32(const float* s, int64_t c, int64_t cols) {
  const __m512 lo = _mm512_maskz_loadu_ps(lanes(cols - c), s + c);
  const __m512 hi = _mm512_maskz_loadu_ps(lanes(std::max<int64_t>(0, cols - c - 16)), s + c + 16);
  return bf16_block::neighbour_pairs(rounded_to_bf16(lo), rounded_to_bf16(hi));
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

namespace {
// r[0..15] (rows of 16 words) transposed in place: afterwards r[c] holds column c.
inline void transpose_16x16(__m512i (&r)[16]) {
  __m512i t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  // u[4g + q]: in each 128-bit lane L, column 4L + q of rows 4g … 4g + 3
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    t[q] = _mm512_shuffle_i32x4(u[q], u[4 + q], 0x88);        // lanes 0, 2 of rows 0–7
    t[4 + q] = _mm512_shuffle_i32x4(u[q], u[4 + q], 0xdd);    // lanes 1, 3 of rows 0–7
    t[8 + q] = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0x88);
    t[12 + q] = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0xdd);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    r[q] = _mm512_shuffle_i32x4(t[q], t[8 + q], 0x88);
    r[4 + q] = _mm512_shuffle_i32x4(t[4 + q], t[12 + q], 0x88);
    r[8 + q] = _mm512_shuffle_i32x4(t[q], t[8 + q], 0xdd);
    r[12 + q] = _mm512_shuffle_i32x4(t[4 + q], t[12 + q], 0xdd);
  }
}
}  // namespace

// The same words, word k of row r stored at dst[k·ld_dst + r]: blocks of 16 rows × 16 words paired as in
// pair_columns, transposed in registers (rows past `rows` pair zeros and are not stored).
void pair_columns_transposed(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst,
                             int64_t ld_dst) {
  const int64_t words = (cols + 1) / 2;
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t in_block = std::min<int64_t>(16, rows - r0);
    const __mmask16 row_lanes = lanes(in_block);
    for (int64_t c = 0; c < cols; c += 32) {
      __m512i r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = i < in_block ? pairs_of_32(src + (r0 + i) * ld_src, c, cols) : _mm512_setzero_si512();
      transpose_16x16(r);
      const int64_t k0 = c / 2, k_in = std::min<int64_t>(16, words - k0);
      for (int k = 0; k < k_in; ++k) _mm512_mask_storeu_epi32(dst + (k0 + k) * ld_dst + r0, row_lanes, r[k]);
    }
  }
}

// pair_columns_transposed and pair_rows of the same block in one pass over it (rows paired within each
// block of 16, whose first row is even).
void pair_columns_transposed_and_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst_t,
                                      int64_t ld_t, uint32_t* dst_rows, int64_t ld_rows) {
  const int64_t words = (cols + 1) / 2;
  const __m512i high = _mm512_set1_epi32(int(0xffff0000u));
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t in_block = std::min<int64_t>(16, rows - r0);
    const __mmask16 row_lanes = lanes(in_block);
    for (int64_t c = 0; c < cols; c += 32) {
      const __mmask16 col_lanes[2] = {lanes(cols - c), lanes(cols - c - 16)};
      __m512i r[16], rounded[2][2];  // rounded[i % 2][half]: the rows of the current pair
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        if (i >= in_block) {
          r[i] = _mm512_setzero_si512();
          continue;
        }
        const float* s = src + (r0 + i) * ld_src + c;
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) rounded[i % 2][h] = rounded_to_bf16(_mm512_maskz_loadu_ps(col_lanes[h], s + 16 * h));
        r[i] = bf16_block::neighbour_pairs(rounded[i % 2][0], rounded[i % 2][1]);
        if (i % 2 == 1 || i + 1 == in_block) {  // a pair of rows (or the last row, paired with zeros)
          uint32_t* d = dst_rows + ((r0 + i) / 2) * ld_rows + c;
#pragma GCC unroll 2
          for (int h = 0; h < 2; ++h) {
            const __m512i lo = _mm512_srli_epi32(rounded[0][h], 16);
            const __m512i hi = i % 2 == 1 ? _mm512_and_si512(rounded[1][h], high) : _mm512_setzero_si512();
            _mm512_mask_storeu_epi32(d + 16 * h, col_lanes[h], _mm512_or_si512(lo, hi));
          }
        }
      }
      transpose_16x16(r);
      const int64_t k0 = c / 2, k_in = std::min<int64_t>(16, words - k0);
      for (int k = 0; k < k_in; ++k) _mm512_mask_storeu_epi32(dst_t + (k0 + k) * ld_t + r0, row_lanes, r[k]);
    }
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
