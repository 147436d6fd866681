// The fused bf16 tile's kernel (bf16_fused_tile.hpp): VDPBF16PS register blocks of kRows positions × 32
// vocabulary entries, each block turned into loss terms, counts and the bf16 pairs of G in registers.
// Compiled with AVX512_BF16 (and DQ, for the element-wise math) in this file only; called only where the
// CPU has AVX512_BF16 (fused_logits: where the avx512_bf16 kernel makes the products; epilogue_of_tile on
// logits any bf16 kernel made). -ffp-contract=off, as the element-wise kernels: no multiply-add is fused
// that bce_math does not ask for, so e^{−|x|} and σ are the element-wise kernels' values bit for bit (the
// loss is summed its own way: bf16_fused_tile.hpp).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "variants/bce/bce_math.hpp"
#include "variants/cpu/bf16_fused_tile.hpp"
#include "variants/cpu/bf16_register_block_avx512.hpp"

// Compiled twice: here, with the element-wise math in float32 (namespace avx512_bf16), and by
// bf16_fused_tile_fp16.cpp with LOBENCH_FP16_EPILOGUE_TILE defined and AVX512-FP16 flags, with the math in
// binary16 (namespace avx512_fp16_epilogue: `--epilogue fp16`, the bits of its emulation).
#if defined(LOBENCH_FP16_EPILOGUE_TILE)
#define LOBENCH_TILE_NAMESPACE avx512_fp16_epilogue
#else
#define LOBENCH_TILE_NAMESPACE avx512_bf16
#endif

namespace lobench::cpu {
namespace {
#include "variants/bce/bce_simd_avx512.hpp"
#include "variants/bce/bce_simd_avx512_wide.hpp"
#if defined(LOBENCH_FP16_EPILOGUE_TILE)
#include "variants/bce/bce_simd_avx512_fp16_wide.hpp"
constexpr bool kFp16Math = true;
#else
constexpr bool kFp16Math = false;
#endif
}  // namespace

namespace LOBENCH_TILE_NAMESPACE {
namespace {

// Positions per register block: 2·kRows accumulators. Even, so that a block holds whole position pairs,
// and at most kBf16TargetRowPad, so that one 256-bit load reads a block's target words.
constexpr int kRows = 8;
static_assert(kRows % 2 == 0 && kRows <= kBf16TargetRowPad);
// Rows of logits per call of the element-wise math (Avx512Wide<8>, the fastest measured: see
// bce_simd_avx512_wide.hpp). Even, so that a call covers whole position pairs.
// (The binary16 math takes the block's 8 rows in one call: one 32-lane vector per row. 4 rows per call
// measured the same in bf16_tile_bench on the Xeon model 167.)
constexpr int kMathRows = kFp16Math ? 8 : 4;
using Wide = Avx512Wide<2 * kMathRows>;
#if defined(LOBENCH_FP16_EPILOGUE_TILE)
using Half = Avx512Fp16Wide<kMathRows>;  // (32 lanes: a row of the block per vector)
#endif

using bf16_block::chain;
using bf16_block::lanes;
using bf16_block::neighbour_pairs;
using bf16_block::rounded_to_bf16;
using bf16_block::with_rows;

// G's 32 values g0 (columns n0 … n0 + 15), g1 (the next 16) rounded to bf16 by the packing's rule
// (bf16_nearest_even), word j the value of column n0 + j. VCVTNE2PS2BF16 rounds the same way except that
// it reads float32 denormals as zero: where G holds one (s·w·σ(x) < FLT_MIN), the integer rounding.
inline __m512i rounded_words(__m512 g0, __m512 g1) {
  const __mmask16 denormal = _mm512_fpclass_ps_mask(g0, 0x20) | _mm512_fpclass_ps_mask(g1, 0x20);
  if (__builtin_expect(denormal != 0, 0)) return neighbour_pairs(rounded_to_bf16(g0), rounded_to_bf16(g1));
  return (__m512i)_mm512_cvtne2ps_pbh(g1, g0);
}

// The float32 loss of a row from one logarithm per kLogBlocks blocks of 32 columns, as the fp32 tile
// does (bce_math.hpp, log1p_product_step): per lane, Σ softplus(x) = Σ max(x, 0) + log1p(q) with
// 1 + q = Π (1 + e), e = e^{−|x|}, over the lane's 2·kLogBlocks columns (1 + q ≤ 2^16: log1p_nonnegative's
// range), instead of a log1p polynomial per logit. The row's state between blocks, in t.row_sums (float32
// at double 16 of the row, bf16_fused_tile.hpp): q (16 lanes), then Σ max(x, 0) (16 lanes). The block
// sums pos + log1p(q) are added into the row's 16 float64 lanes.
constexpr int kLogBlocks = 8;

inline float* row_state(const Bf16FusedTile& t, int64_t r) {
  return reinterpret_cast<float*>(t.row_sums + r * kBf16RowSumDoubles + 16);
}

// Multiplies the row's x[v], e[v] (columns [n0 + 16v, n0 + 16v + 16), lanes outside mask[v] not in the
// tile, their x = 0; positive[v]: x > 0) into its state; a group of kLogBlocks blocks starts from q = 0, Σ = 0.
template <bool kFull>
inline void multiply_into_row(const Bf16FusedTile& t, int64_t r, int64_t n0, const __mmask16* mask, const __m512 (&x)[2],
                              const __m512 (&e)[2], const __mmask16 (&positive_lanes)[2]) {
  float* state = row_state(t, r);
  const __m512 zero = _mm512_setzero_ps();
  const bool first = (n0 / 32) % kLogBlocks == 0;
  __m512 q = first ? zero : _mm512_loadu_ps(state), positive = first ? zero : _mm512_loadu_ps(state + 16);
#pragma GCC unroll 2
  for (int v = 0; v < 2; ++v) {
    positive = _mm512_mask_add_ps(positive, positive_lanes[v], positive, x[v]);
    q = bce_math::log1p_product_step<Avx512>(q, kFull ? e[v] : _mm512_maskz_mov_ps(mask[v], e[v]));
  }
  _mm512_storeu_ps(state, q);
  _mm512_storeu_ps(state + 16, positive);
}

// Whether the block of columns from n0 ends a group (or the tile).
inline bool ends_log_group(const Bf16FusedTile& t, int64_t n0) {
  return (n0 / 32) % kLogBlocks == kLogBlocks - 1 || n0 + 32 >= t.n;
}

// Rows [m0, m0 + ROWS) at the end of a group: their logarithms together (independent chains), each block
// sum added into the row's float64 lanes (from 0 at the tile's first group).
template <int ROWS>
__attribute__((flatten)) void settle_rows(const Bf16FusedTile& t, int64_t m0, int64_t n0) {
  using Rows = Avx512Wide<ROWS>;
  typename Rows::F q;
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i) q.v[i] = _mm512_loadu_ps(row_state(t, m0 + i));
  const typename Rows::F log = bce_math::log1p_nonnegative<Rows>(q);
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i) {
    double* sums = t.row_sums + (m0 + i) * kBf16RowSumDoubles;
    Avx512::Acc acc = n0 < 32 * kLogBlocks ? Avx512::acc_zero() : Avx512::Acc{_mm512_loadu_pd(sums), _mm512_loadu_pd(sums + 8)};
    Avx512::acc_add(acc, Avx512::add(_mm512_loadu_ps(row_state(t, m0 + i) + 16), log.v[i]));
    _mm512_storeu_pd(sums, acc.lo);
    _mm512_storeu_pd(sums + 8, acc.hi);
  }
}

#if defined(LOBENCH_FP16_EPILOGUE_TILE)
// The same in binary16, in the order of the emulation's kernel (bce_tile_loops.hpp's softplus_and_sigmoid
// on the 8-lane portable vectors, every + rounded to binary16): per 16 columns the binary16 sum of columns
// l and 8 + l, widened into float64 lane l; a last part of fewer than 16 columns added 8 columns at a time,
// unpaired, lanes past the tile as +0. sp: the row's 32 binary16 softplus terms (lane j: column n0 + j);
// `valid`: the columns of the 32 in the tile. Lanes 0-7 of t.row_sums' 16 per row hold the sums.
template <bool kFull>
inline void add_softplus_terms_fp16(const Bf16FusedTile& t, int64_t r, int64_t n0, int valid, __m512h sp) {
  double* sums = t.row_sums + r * kBf16RowSumDoubles;
  __m512d acc = n0 == 0 ? _mm512_setzero_pd() : _mm512_loadu_pd(sums);
  // lane j + (the 128-bit lanes swapped in pairs) lane j ± 8: columns l and 8 + l of each 16 at lanes 0-7, 16-23
  const __m512h pairs = _mm512_add_ph(sp, _mm512_castsi512_ph(_mm512_shuffle_i32x4(
                                              _mm512_castph_si512(sp), _mm512_castph_si512(sp), 0xB1)));
  const __m512i pair_bits = _mm512_castph_si512(pairs), sp_bits = _mm512_castph_si512(sp);
  auto eight = [](__m512i v, int part) {  // fp16 lanes [8·part, 8·part + 8) widened to float64
    const __m128i q = part == 0 ? _mm512_castsi512_si128(v) : part == 1 ? _mm512_extracti32x4_epi32(v, 1)
                    : part == 2 ? _mm512_extracti32x4_epi32(v, 2) : _mm512_extracti32x4_epi32(v, 3);
    return _mm512_cvtph_pd(_mm_castsi128_ph(q));
  };
  if (kFull) {
    acc = _mm512_add_pd(acc, eight(pair_bits, 0));
    acc = _mm512_add_pd(acc, eight(pair_bits, 2));
  } else {
    const __m512i kept = _mm512_maskz_mov_epi16(valid >= 32 ? ~__mmask32(0) : (__mmask32(1) << valid) - 1u, sp_bits);
    for (int g = 0; g < 2; ++g) {
      if (16 * g + 16 <= valid) {
        acc = _mm512_add_pd(acc, eight(pair_bits, 2 * g));
      } else {
        if (16 * g < valid) acc = _mm512_add_pd(acc, eight(kept, 2 * g));
        if (16 * g + 8 < valid) acc = _mm512_add_pd(acc, eight(kept, 2 * g + 1));
      }
    }
  }
  _mm512_storeu_pd(sums, acc);
}
#endif

// One row's epilogue, with x[v] its logits of columns [n0 + 16v, n0 + 16v + 16) (lanes outside mask[v]
// are not in the tile), positive[v] their x > 0 and sig[v] their σ (the loss terms are multiply_into_row's or
// add_softplus_terms_fp16's): counts x > 0,
// stores x at the targets, writes G's pairs along the vocabulary and returns G's 32 bf16 values
// (`words`, rounded_words) for the pairs along positions.
template <bool kFull>
inline void row_epilogue(const Bf16FusedTile& t, int64_t r, int64_t n0, const __mmask16* mask, const __m512 (&x)[2],
                         const __mmask16 (&positive)[2], const __m512 (&sig)[2], uint32_t target_bits, __m512i& words) {
  t.predicted[r] += __builtin_popcount(unsigned(mask[0] & positive[0])) + __builtin_popcount(unsigned(mask[1] & positive[1]));

  // G = s·w·σ(x), and s·w·(σ(x) − 1) at the targets: the float values the library path computes.
  const __m512 c = _mm512_set1_ps(t.row_scale[r]);
  __m512 g0 = Avx512::mul(c, sig[0]), g1 = Avx512::mul(c, sig[1]);
  if (target_bits) {
    const __mmask16 t0 = __mmask16(target_bits), t1 = __mmask16(target_bits >> 16);
    g0 = _mm512_mask_sub_ps(g0, t0, g0, c);
    g1 = _mm512_mask_sub_ps(g1, t1, g1, c);
    _mm512_mask_storeu_ps(t.X + r * t.ldx + n0, t0, x[0]);
    _mm512_mask_storeu_ps(t.X + r * t.ldx + n0 + 16, t1, x[1]);
  }
  if (!kFull) {  // pairs past the tile's edge hold +0
    g0 = _mm512_maskz_mov_ps(mask[0], g0);
    g1 = _mm512_maskz_mov_ps(mask[1], g1);
  }
  words = rounded_words(g0, g1);  // (word j: column n0 + j; so word pair k: columns 2k, 2k + 1)
  uint32_t* by_voc = t.G_by_voc + r * t.ld_gvoc + n0 / 2;
  if (kFull) _mm512_storeu_si512(by_voc, words);
  else _mm512_mask_storeu_epi32(by_voc, lanes((t.n + 1) / 2 - n0 / 2), words);
}

// Rows r and r + 1 (rounded_words; `hi` all zeros past the tile's last row) as pairs along positions:
// word j of 32 is pair(lo word j, hi word j).
template <bool kFull>
inline void store_position_pairs(const Bf16FusedTile& t, int64_t r, int64_t n0, const __mmask16* mask, __m512i lo,
                                 __m512i hi) {
  alignas(64) static const uint16_t first_half[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                      8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  alignas(64) static const uint16_t second_half[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                                       24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
  const __m512i w[2] = {_mm512_permutex2var_epi16(lo, _mm512_load_si512(first_half), hi),
                        _mm512_permutex2var_epi16(lo, _mm512_load_si512(second_half), hi)};
  uint32_t* by_pos = t.G_by_pos + (r / 2) * t.ld_gpos + n0;
#pragma GCC unroll 2
  for (int v = 0; v < 2; ++v) {
    if (kFull) _mm512_storeu_si512(by_pos + 16 * v, w[v]);
    else _mm512_mask_storeu_epi32(by_pos + 16 * v, mask[v], w[v]);
  }
}

// Positions [m0, m0 + ROWS) × entries [n0, n0 + 32) (kFull: all 32 in the tile). The element-wise math
// runs on kMathRows rows (Avx512Wide: 2·kMathRows vectors) at a time. (flatten: see bce_simd_avx512_wide.hpp)
// kFromX: the logits are not made but read from t.X (epilogue_of_tile).
template <int ROWS, bool kFull, bool kFromX = false>
__attribute__((flatten)) void block(const Bf16FusedTile& t, int64_t m0, int64_t n0, const __mmask16* mask) {
  __m512 acc[ROWS][2];
  if constexpr (kFromX) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
      for (int v = 0; v < 2; ++v) acc[i][v] = _mm512_maskz_loadu_ps(mask[v], t.X + (m0 + i) * t.ldx + n0 + 16 * v);
  } else {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    chain<ROWS, 2, kFull, false>(t.Dw, t.A + m0 * t.Dw, t.Dw, t.Et + n0, t.ld_et, mask, acc);
  }

  // x > 0 of the block's float32 logits, once: the loss's Σ max(x, 0) and the counts read it
  __mmask16 positive[ROWS][2];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) positive[i][v] = _mm512_cmp_ps_mask(acc[i][v], _mm512_setzero_ps(), _CMP_GT_OQ);

  const uint32_t* target_words = t.targets + (n0 / kBf16TargetBits) * t.ld_targets + m0;
  const __m256i tw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(target_words));
  const bool any_target = !_mm256_testz_si256(tw, tw);
#pragma GCC unroll 4
  for (int h = 0; h < ROWS; h += kMathRows) {
    // σ of the kMathRows rows from h, two vectors per row; their softplus terms added into the row sums
    __m512 sig[kMathRows][2];
    if constexpr (kFp16Math) {
#if defined(LOBENCH_FP16_EPILOGUE_TILE)
      typename Half::F x;  // one vector of 32 binary16 lanes per row: the logits rounded to nearest even
#pragma GCC unroll 8
      for (int q = 0; q < kMathRows; ++q) {
        const int i = std::min(h + q, ROWS - 1);
        const __m256i lo = _mm512_cvtps_ph(acc[i][0], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256i hi = _mm512_cvtps_ph(acc[i][1], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        x.v[q] = _mm512_castsi512_ph(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
      }
      const auto e = bce_math::softplus_sigmoid<Half>(x);
      const int valid = int(std::min<int64_t>(32, t.n - n0));
#pragma GCC unroll 8
      for (int q = 0; q < kMathRows; ++q) {
        if (h + q >= ROWS) break;
        add_softplus_terms_fp16<kFull>(t, m0 + h + q, n0, valid, e.softplus.v[q]);
        const __m512i bits = _mm512_castph_si512(e.sigmoid.v[q]);
        sig[q][0] = _mm512_cvtph_ps(_mm512_castsi512_si256(bits));
        sig[q][1] = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(bits, 1));
      }
#endif
    } else {
      typename Wide::F x;
#pragma GCC unroll 8
      for (int q = 0; q < kMathRows; ++q)
#pragma GCC unroll 2
        for (int v = 0; v < 2; ++v) x.v[2 * q + v] = h + q < ROWS ? acc[std::min(h + q, ROWS - 1)][v] : _mm512_setzero_ps();
      const typename Wide::F e = bce_math::exp_neg_abs<Wide>(x);
      const typename Wide::F sigmoid = bce_math::sigmoid_from<Wide>(x, e);
#pragma GCC unroll 8
      for (int q = 0; q < kMathRows; ++q) {
        if (h + q >= ROWS) break;
        multiply_into_row<kFull>(t, m0 + h + q, n0, mask, {x.v[2 * q], x.v[2 * q + 1]}, {e.v[2 * q], e.v[2 * q + 1]},
                                 positive[h + q]);
        sig[q][0] = sigmoid.v[2 * q], sig[q][1] = sigmoid.v[2 * q + 1];
      }
    }
#pragma GCC unroll 4
    for (int q = 0; q < kMathRows; q += 2) {
      if (h + q >= ROWS) break;  // (inside, not in the condition: GCC unrolls only a loop of constant bounds)
      const int i = h + q;
      __m512i lo, hi = _mm512_setzero_si512();
      row_epilogue<kFull>(t, m0 + i, n0, mask, acc[i], positive[i], sig[q], any_target ? target_words[i] : 0u, lo);
      if (i + 1 < ROWS)
        row_epilogue<kFull>(t, m0 + i + 1, n0, mask, acc[i + 1], positive[i + 1], sig[q + 1],
                            any_target ? target_words[i + 1] : 0u, hi);
      store_position_pairs<kFull>(t, m0 + i, n0, mask, lo, hi);
    }
  }
  if constexpr (!kFp16Math)
    if (ends_log_group(t, n0)) settle_rows<ROWS>(t, m0, n0);
}

}  // namespace

namespace {
// The cache lines of t.prefetch[] spread over the tile's blocks: block b asks for its share.
class Prefetcher {
 public:
  explicit Prefetcher(const Bf16FusedTile& t) : t_(t) {
    const int64_t blocks = ((t.rows + kRows - 1) / kRows) * ((t.n + 31) / 32);
    for (int i = 0; i < 2; ++i) per_block_[i] = (t.prefetch[i].bytes / 64 + blocks) / blocks;
  }
  void block(int64_t b) const {
    for (int i = 0; i < 2; ++i) {
      const char* p = static_cast<const char*>(t_.prefetch[i].start);
      for (int64_t l = b * per_block_[i]; l < (b + 1) * per_block_[i] && 64 * l < t_.prefetch[i].bytes; ++l) {
        // (asm volatile: GCC 12 deletes __builtin_prefetch in these loops, which have no other effect)
        if (t_.prefetch[i].for_writing) __asm__ volatile("prefetchw %0" ::"m"(p[64 * l]));
        else __asm__ volatile("prefetcht1 %0" ::"m"(p[64 * l]));
      }
    }
  }

 private:
  const Bf16FusedTile& t_;
  int64_t per_block_[2];
};
}  // namespace

namespace {
// The tile's blocks, columns outer, each block's share of t.prefetch asked for first; kFromX: the logits
// read from t.X (epilogue_of_tile), else made in the block (fused_logits).
template <bool kFromX>
void tile_blocks(const Bf16FusedTile& t) {
  const Prefetcher prefetcher(t);
  int64_t b = 0;
  for (int64_t n0 = 0; n0 < t.n; n0 += 32) {
    const __mmask16 mask[2] = {lanes(t.n - n0), lanes(t.n - n0 - 16)};
    for (int64_t m0 = 0; m0 < t.rows; m0 += kRows) {
      prefetcher.block(b++);
      with_rows(std::min<int64_t>(kRows, t.rows - m0), [&](auto r) {
        if (mask[1] == 0xffff) block<decltype(r)::value, true, kFromX>(t, m0, n0, mask);
        else block<decltype(r)::value, false, kFromX>(t, m0, n0, mask);
      });
    }
  }
}
}  // namespace

void fused_logits(const Bf16FusedTile& t) { tile_blocks<false>(t); }

void epilogue_of_tile(const Bf16FusedTile& t) { tile_blocks<true>(t); }

void add_row_sums(const double* row_sums, int64_t rows, double* loss) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* sums = row_sums + r * kBf16RowSumDoubles;
    if constexpr (kFp16Math) {  // the emulation's total: lane by lane from 0 (the portable acc_total)
      double s = 0.0;
      for (int l = 0; l < 8; ++l) s += sums[l];
      loss[r] += s;
    } else {
      loss[r] += Avx512::acc_total(Avx512::Acc{_mm512_loadu_pd(sums), _mm512_loadu_pd(sums + 8)});
    }
  }
}

}  // namespace LOBENCH_TILE_NAMESPACE
}  // namespace lobench::cpu
