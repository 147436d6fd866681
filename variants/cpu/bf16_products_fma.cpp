// The second SIMD kernel of bf16_products.hpp: the same bf16 products, the same bits, from float32
// multiply-adds. A product of two bf16 values is exact in float32, so VDPBF16PS's lane chain (high pair
// product added with one rounding, then the low pair's) is two fused multiply-adds on the operands
// widened to float32 (a bf16 is the top half of a float32: widening is a shift or a mask), provided the
// multiply-adds read denormals as zero and flush denormal results like the instruction does: MXCSR's
// DAZ and FTZ bits, set for the duration of the product. Where VDPBF16PS runs at less than twice the
// FMA's instruction rate (Intel's cores before AMX: half the FMA's flop rate), this kernel is faster;
// bf16_products.cpp picks whichever the CPU runs faster, by measurement (both give identical results).
//
// Blocks of 8 rows × 32 columns of C in 16 accumulators, as the VDPBF16PS kernel; the rows' operand
// pairs are widened once per block and chunk of the inner index into a buffer on the stack (8 × 256 pairs,
// 16 KiB), whose high and low halves the multiply-adds broadcast from memory. A chunk boundary stores the
// accumulators into C and the next chunk continues from them: the float32 value stored is the value the
// chain holds, so the chunking changes no bit.
#include <immintrin.h>

#include <algorithm>

#include "variants/cpu/bf16_c_tile_avx512.hpp"
#include "variants/cpu/bf16_products.hpp"

namespace lobench::cpu::avx512_fma {
namespace {

constexpr int kRows = 8;
constexpr int64_t kChunk = 256;  // pairs of the inner index widened at a time

using bf16_c_tile::lanes;
using bf16_c_tile::load_c;
using bf16_c_tile::store_c;
using bf16_c_tile::transposed_index;

// The widened pairs of up to kRows rows: wide[(i·kChunk + k)·2 + 0] the high half, + 1 the low half.
struct WideRows {
  alignas(64) float v[kRows * kChunk * 2];
};

void widen_rows(const Bf16Product& p, int64_t m0, int rows, int64_t k0, int64_t kn, WideRows& w) {
  for (int i = 0; i < rows; ++i) {
    // a(m, k) = a[m·lda + k], or a[k·lda + m] (a_transposed)
    const uint32_t* a = p.a_transposed ? p.a + k0 * p.lda + m0 + i : p.a + (m0 + i) * p.lda + k0;
    const int64_t step = p.a_transposed ? p.lda : 1;
    float* out = w.v + i * kChunk * 2;
    for (int64_t k = 0; k < kn; ++k) {
      const uint32_t word = a[k * step];
      const uint32_t hi = word & 0xffff0000u, lo = word << 16;
      __builtin_memcpy(out + 2 * k, &hi, 4);
      __builtin_memcpy(out + 2 * k + 1, &lo, 4);
    }
  }
}

// Rows [m0, m0 + ROWS) × columns [n0, n0 + 16·VECS), inner pairs [k0, k0 + kn).
template <int ROWS, int VECS>
void block(const Bf16Product& p, const WideRows& w, int64_t m0, int64_t n0, int64_t k0, int64_t kn,
           const __mmask16 (&mask)[2], __m512i tindex) {
  const bool from_c = k0 > 0 || p.accumulate;
  const __m512i high = _mm512_set1_epi32(int(0xffff0000u));
  __m512 acc[ROWS][VECS];
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < VECS; ++v) acc[i][v] = load_c(p, from_c, m0 + i, n0 + 16 * v, mask[v], tindex);
  const uint32_t* b = p.b + k0 * p.ldb + n0;
  for (int64_t k = 0; k < kn; ++k, b += p.ldb) {
    __m512 b_hi[VECS], b_lo[VECS];
#pragma GCC unroll 2
    for (int v = 0; v < VECS; ++v) {
      const __m512i words = _mm512_maskz_loadu_epi32(mask[v], b + 16 * v);
      b_hi[v] = _mm512_castsi512_ps(_mm512_and_si512(words, high));
      b_lo[v] = _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
    }
#pragma GCC unroll 8
    for (int i = 0; i < ROWS; ++i) {
      const float* a = w.v + (i * kChunk + k) * 2;
      const __m512 a_hi = _mm512_set1_ps(a[0]), a_lo = _mm512_set1_ps(a[1]);
#pragma GCC unroll 2
      for (int v = 0; v < VECS; ++v) acc[i][v] = _mm512_fmadd_ps(a_lo, b_lo[v], _mm512_fmadd_ps(a_hi, b_hi[v], acc[i][v]));
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < VECS; ++v) store_c(p, m0 + i, n0 + 16 * v, mask[v], tindex, acc[i][v]);
}

template <int VECS>
void rows_block(const Bf16Product& p, const WideRows& w, int64_t m0, int rows, int64_t n0, int64_t k0, int64_t kn,
                const __mmask16 (&mask)[2], __m512i tindex) {
  switch (rows) {
    case 8: return block<8, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
    case 7: return block<7, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
    case 6: return block<6, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
    case 5: return block<5, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
    case 4: return block<4, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
    case 3: return block<3, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
    case 2: return block<2, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
    default: return block<1, VECS>(p, w, m0, n0, k0, kn, mask, tindex);
  }
}

// DAZ (bit 6) and FTZ (bit 15) for the product's duration: VDPBF16PS's treatment of denormals.
class DenormalsAsTheInstruction {
 public:
  DenormalsAsTheInstruction() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~DenormalsAsTheInstruction() { _mm_setcsr(saved_); }
  DenormalsAsTheInstruction(const DenormalsAsTheInstruction&) = delete;
  DenormalsAsTheInstruction& operator=(const DenormalsAsTheInstruction&) = delete;

 private:
  unsigned saved_;
};

}  // namespace

void product(const Bf16Product& p) {
  DenormalsAsTheInstruction daz_ftz;
  const __m512i tindex = transposed_index(p.ldc);
  WideRows w;
  if (p.K2 == 0) {  // no inner index: C = 0, or C unchanged
    for (int64_t n0 = 0; n0 < p.N; n0 += 32) {
      const __mmask16 mask[2] = {lanes(p.N - n0), lanes(std::max<int64_t>(0, p.N - n0 - 16))};
      for (int64_t m0 = 0; m0 < p.M; m0 += kRows)
        rows_block<2>(p, w, m0, int(std::min<int64_t>(kRows, p.M - m0)), n0, 0, 0, mask, tindex);
    }
    return;
  }
  for (int64_t m0 = 0; m0 < p.M; m0 += kRows) {
    const int rows = int(std::min<int64_t>(kRows, p.M - m0));
    for (int64_t k0 = 0; k0 < p.K2; k0 += kChunk) {
      const int64_t kn = std::min(kChunk, p.K2 - k0);
      widen_rows(p, m0, rows, k0, kn, w);
      for (int64_t n0 = 0; n0 < p.N; n0 += 32) {
        const __mmask16 mask[2] = {lanes(p.N - n0), lanes(std::max<int64_t>(0, p.N - n0 - 16))};
        if (mask[1]) rows_block<2>(p, w, m0, rows, n0, k0, kn, mask, tindex);
        else rows_block<1>(p, w, m0, rows, n0, k0, kn, mask, tindex);
      }
    }
  }
}

}  // namespace lobench::cpu::avx512_fma
