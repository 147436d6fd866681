// The fused tile's products on AVX-512 (fused_tile.hpp): register blocks of kRows broadcast rows × 32
// vector lanes, each output a chain of VFMADD231PS in increasing inner index. Compiled with its own flags
// (variants/CMakeLists.txt) and only ever called after the CPU reported AVX-512 (own_tile_kernels()).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "variants/bce/bce_math.hpp"
#include "variants/cpu/fused_tile.hpp"

namespace lobench::cpu {
namespace {

#include "variants/bce/bce_simd_avx512.hpp"

// Broadcast rows per register block: kRows × 2 accumulators (28 of the 32 registers), two vectors of the
// streamed operand, one broadcast. (12 rows measured 2–8 % slower on the Xeon, family 6 model 167.)
constexpr int kRows = kTransposedBlockRows;
// Inner-loop unrolling: 4 measured up to 10 % faster than none on the dA product, level elsewhere.
constexpr int kUnroll = 4;
constexpr int kNV = 2;  // vectors per register block row: 32 lanes (kTransposedPanel)
static_assert(kNV * 16 == kTransposedPanel);

__mmask16 first_lanes(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u); }

// The lanes of the NV vectors of a 16·NV-lane block of which `width` are in the matrix.
template <int NV>
struct Lanes {
  __mmask16 m[NV];
  explicit Lanes(int64_t width) {
    for (int v = 0; v < NV; ++v) m[v] = first_lanes(width - 16 * v);
  }
  bool all() const {
    for (int v = 0; v < NV; ++v)
      if (m[v] != 0xFFFF) return false;
    return true;
  }
};

// acc[i][v] = (init ? c[i·ldc + 16v …] : 0), then for k < K: acc[i][v] = fma(a(i, k), b[k·ldb + 16v …], acc[i][v]),
// where a(i, k) = a[k·lda + i] (kAColumns: broadcasts down a's columns) or a[i·lda + k] (along a's rows).
// Lanes outside `lanes` read 0 and are never stored. done(acc) gets the block.
template <int MR, int NV, bool kAColumns, class Done>
inline void register_block(int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, const float* c,
                           int64_t ldc, bool init, const Lanes<NV>& lanes, Done&& done) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = init ? _mm512_maskz_loadu_ps(lanes.m[v], c + i * ldc + 16 * v) : _mm512_setzero_ps();
  const float* row[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) row[i] = a + (kAColumns ? i : i * lda);
  // (Unmasked loads when every lane is in the matrix: the masks then stay out of the inner loop.)
  auto chain = [&](auto all_lanes) {
#pragma GCC unroll kUnroll
    for (int64_t k = 0; k < K; ++k) {
      __m512 bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        bv[v] = decltype(all_lanes)::value ? _mm512_loadu_ps(b + k * ldb + 16 * v)
                                           : _mm512_maskz_loadu_ps(lanes.m[v], b + k * ldb + 16 * v);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const __m512 ai = _mm512_set1_ps(kAColumns ? row[0][k * lda + i] : row[i][k]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
      }
    }
  };
  if (lanes.all()) chain(std::true_type{});
  else chain(std::false_type{});
  done(acc);
}

template <int MR, int NV>
inline void store_block(__m512 (&acc)[MR][NV], float* c, int64_t ldc, const Lanes<NV>& lanes) {
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(c + i * ldc + 16 * v, lanes.m[v], acc[i][v]);
}

// c += acc, each element one rounded addition (a block's partial sums added into the output).
template <int MR, int NV>
inline void add_block(__m512 (&acc)[MR][NV], float* c, int64_t ldc, const Lanes<NV>& lanes) {
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* at = c + i * ldc + 16 * v;
      _mm512_mask_storeu_ps(at, lanes.m[v], _mm512_add_ps(_mm512_maskz_loadu_ps(lanes.m[v], at), acc[i][v]));
    }
}

// Calls f(std::integral_constant<int, m>) for the rows of a block: kRows, or the m < kRows left at an edge.
template <class F>
inline void with_rows(int64_t m, F&& f) {
  switch (m) {
#define LOBENCH_ROWS_CASE(M) \
  case M: f(std::integral_constant<int, M>{}); break;
    LOBENCH_ROWS_CASE(1) LOBENCH_ROWS_CASE(2) LOBENCH_ROWS_CASE(3) LOBENCH_ROWS_CASE(4) LOBENCH_ROWS_CASE(5)
    LOBENCH_ROWS_CASE(6) LOBENCH_ROWS_CASE(7) LOBENCH_ROWS_CASE(8) LOBENCH_ROWS_CASE(9) LOBENCH_ROWS_CASE(10)
    LOBENCH_ROWS_CASE(11) LOBENCH_ROWS_CASE(12) LOBENCH_ROWS_CASE(13) LOBENCH_ROWS_CASE(14)
#undef LOBENCH_ROWS_CASE
    default: break;
  }
}
static_assert(kRows == 14, "with_rows lists the block heights up to kRows");

// The per-panel state of the logits' epilogue: float64 loss sums and int32 counts per lane, and the blocks
// whose loss is not yet summed. A block's loss needs one logarithm (bce_math::log1p_nonnegative), a chain
// of some 25 dependent operations: taken at the end of each block, its latency stalled the next block (the
// epilogue ran 0.5 ns per 16 logits slower on Zen 5, family 26). The blocks' (positive sum, q) are kept
// and their logarithms taken kPendingBlocks at a time, independent of each other, then added into the
// float64 sums in increasing j0 as before: the same operations in the same order, bit for bit.
struct PanelSums {
  static constexpr int kPendingBlocks = 8;
  __m512d loss[2 * kNV];
  __m512i positive[kNV];
  __m512 pending_positive_sum[kPendingBlocks][kNV], pending_q[kPendingBlocks][kNV];
  int pending = 0;
  PanelSums() {
    for (auto& l : loss) l = _mm512_setzero_pd();
    for (auto& p : positive) p = _mm512_setzero_si512();
  }
  // The block's Σ max(x, 0) and q (1 + q = Π (1 + e)) of each vector v of its lanes.
  [[gnu::always_inline]] void add_block(const __m512 (&positive_sum)[kNV], const __m512 (&q)[kNV]) {
    for (int v = 0; v < kNV; ++v) pending_positive_sum[pending][v] = positive_sum[v], pending_q[pending][v] = q[v];
    if (++pending == kPendingBlocks) settle();
  }
  // Each pending block's loss, Σ max(x, 0) + log1p(q), added into the float64 sums in block order.
  void settle() {
    for (int b = 0; b < pending; ++b)
      for (int v = 0; v < kNV; ++v) {
        const __m512 block_sum = _mm512_add_ps(pending_positive_sum[b][v], bce_math::log1p_nonnegative<Avx512>(pending_q[b][v]));
        loss[2 * v] = _mm512_add_pd(loss[2 * v], _mm512_cvtps_pd(_mm512_castps512_ps256(block_sum)));
        loss[2 * v + 1] = _mm512_add_pd(loss[2 * v + 1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(block_sum, 1)));
      }
    pending = 0;
  }
  // loss[r0 + lane] += sums; predicted[r0 + lane] += counts, for the lanes in the matrix.
  void add_into(double* loss_out, int64_t* predicted_out, int64_t width) {
    settle();
    for (int h = 0; h < 2 * kNV; ++h) {
      const __mmask8 m = __mmask8(first_lanes(width - 8 * h) & 0xFF);
      const __m512d old = _mm512_maskz_loadu_pd(m, loss_out + 8 * h);
      _mm512_mask_storeu_pd(loss_out + 8 * h, m, _mm512_add_pd(old, loss[h]));
      const __m256i half = h % 2 ? _mm512_extracti64x4_epi64(positive[h / 2], 1) : _mm512_castsi512_si256(positive[h / 2]);
      const __m512i old_count = _mm512_maskz_loadu_epi64(m, predicted_out + 8 * h);
      _mm512_mask_storeu_epi64(predicted_out + 8 * h, m, _mm512_add_epi64(old_count, _mm512_cvtepi32_epi64(half)));
    }
  }
};

void logits(const TransposedTile& t) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += kTransposedPanel) {
    const Lanes<kNV> lanes(t.rows - r0);
    for (int64_t j0 = 0; j0 < t.n; j0 += kRows)
      with_rows(std::min<int64_t>(kRows, t.n - j0), [&](auto m) {
        float* c = t.Gt + j0 * t.ldt + r0;
        register_block<decltype(m)::value, kNV, false>(t.D, t.E + j0 * t.D, t.D, t.At + r0, t.ldat, c, t.ldt, false, lanes,
                                 [&](auto& acc) { store_block<decltype(m)::value, kNV>(acc, c, t.ldt, lanes); });
      });
  }
}

// The epilogue of one register block of logits (acc[i][v]: entry j0 + i, positions r0 + 16v …), from one
// exponential e = e^−|x| per logit: with kLoss, the block's loss Σ_i max(x, 0) + log1p(q), 1 + q = Π_i (1 + e)
// (bce_math::log1p_nonnegative: one logarithm per block, not a log1p per logit; the header's order), added
// into the panel's float64 sums, and the counts; with kSigmoid, s·σ(x) stored at c (bce_math's σ, bit for
// bit), else nothing is stored. What it reads more than once is held in locals: through the references,
// GCC reloaded and stored the counts, masks and scales around every masked store (which may alias anything).
template <int M, bool kLoss, bool kSigmoid>
[[gnu::always_inline]] inline void epilogue_block(__m512 (&acc)[M][kNV], float* c, int64_t ldc, const Lanes<kNV>& lanes,
                                                  const __m512 (&row_scale)[kNV], PanelSums& sums) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512i minus_one = _mm512_set1_epi32(-1);
  __m512 positive_sums[kNV], qs[kNV];
#pragma GCC unroll 2
  for (int v = 0; v < kNV; ++v) {
    const __mmask16 store_lanes = lanes.m[v];
    const __m512 scale = row_scale[v];
    __m512 positive_sum = zero, q = zero;
    __m512i positive = sums.positive[v];
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i) {
      const __m512 x = acc[i][v];
      const __m512 e = bce_math::exp_neg_abs<Avx512>(x);
      if constexpr (kLoss) {
        // (Σ max(x, 0) as a masked sum: adding max(x, 0) = +0 changes no sum that starts at +0)
        const __mmask16 pos = _mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ);
        positive_sum = _mm512_mask_add_ps(positive_sum, pos, positive_sum, x);
        q = bce_math::log1p_product_step<Avx512>(q, e);
        positive = _mm512_mask_sub_epi32(positive, pos, positive, minus_one);
      }
      if constexpr (kSigmoid)
        _mm512_mask_storeu_ps(c + i * ldc + 16 * v, store_lanes, _mm512_mul_ps(scale, bce_math::sigmoid_from<Avx512>(x, e)));
    }
    // (lanes outside the matrix hold x = 0: their sums and counts are dropped in add_into)
    if constexpr (kLoss) {
      sums.positive[v] = positive;
      positive_sums[v] = positive_sum, qs[v] = q;
    }
  }
  if constexpr (kLoss) sums.add_block(positive_sums, qs);
}

// The epilogue above over every register block of the tile: block(M, j0, r0, lanes, done) hands the
// block's logits, acc[M][kNV], to done(acc).
template <bool kLoss, bool kSigmoid, class Block>
[[gnu::always_inline]] inline void epilogue_panels(const TransposedTile& t, const float* row_scale, double* loss,
                                                   int64_t* predicted, Block&& block) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += kTransposedPanel) {
    const Lanes<kNV> lanes(t.rows - r0);
    __m512 scale[kNV];
    for (int v = 0; v < kNV; ++v) scale[v] = kSigmoid ? _mm512_maskz_loadu_ps(lanes.m[v], row_scale + r0 + 16 * v) : _mm512_setzero_ps();
    PanelSums sums;
    for (int64_t j0 = 0; j0 < t.n; j0 += kRows)
      with_rows(std::min<int64_t>(kRows, t.n - j0), [&](auto m) {
        constexpr int M = decltype(m)::value;
        float* c = t.Gt + j0 * t.ldt + r0;
        block(m, j0, r0, lanes, [&](auto& acc) { epilogue_block<M, kLoss, kSigmoid>(acc, c, t.ldt, lanes, scale, sums); });
      });
    if (kLoss) sums.add_into(loss + r0, predicted + r0, t.rows - r0);
  }
}

// The logits with the epilogue above on each block in registers. (Measured 20 % faster than storing the
// block and sweeping it from L1.)
template <bool kLoss, bool kSigmoid>
void logits_epilogue(const TransposedTile& t, const float* row_scale, double* loss, int64_t* predicted) {
  epilogue_panels<kLoss, kSigmoid>(t, row_scale, loss, predicted, [&](auto m, int64_t j0, int64_t r0, const Lanes<kNV>& lanes, auto&& done) {
    register_block<decltype(m)::value, kNV, false>(t.D, t.E + j0 * t.D, t.D, t.At + r0, t.ldat, t.Gt + j0 * t.ldt + r0,
                                                   t.ldt, false, lanes, done);
  });
}

// logits_sigmoid's epilogue alone, on logits already in Gt (what the step_bench row `epilogue` times).
void sigmoid_epilogue(const TransposedTile& t, const float* row_scale, double* loss, int64_t* predicted) {
  epilogue_panels<true, true>(t, row_scale, loss, predicted, [&](auto m, int64_t j0, int64_t r0, const Lanes<kNV>& lanes, auto&& done) {
    constexpr int M = decltype(m)::value;
    __m512 acc[M][kNV];
    const float* c = t.Gt + j0 * t.ldt + r0;
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) acc[i][v] = _mm512_maskz_loadu_ps(lanes.m[v], c + i * t.ldt + 16 * v);
    done(acc);
  });
}

void logits_sigmoid(const TransposedTile& t, const float* row_scale, double* loss, int64_t* predicted) {
  logits_epilogue<true, true>(t, row_scale, loss, predicted);
}
void logits_softplus(const TransposedTile& t, double* loss, int64_t* predicted) {
  logits_epilogue<true, false>(t, nullptr, loss, predicted);
}
void logits_scaled_sigmoid(const TransposedTile& t, const float* row_scale) {
  logits_epilogue<false, true>(t, row_scale, nullptr, nullptr);
}

// The gradient products' register blocks: kGradRows broadcast rows × 16·kGradNV lanes of D. (Measured
// on the Xeon against 6×64, 7×64, 8×48 and 4×64 lanes: 14×32 was the fastest for both products, by 2–55 %.)
constexpr int kGradRows = kRows;
constexpr int kGradNV = 2;
constexpr int64_t kGradPanel = 16 * kGradNV;

// Inner-index block of the dE product: the rows of A a register block streams (kInnerBlock × kGradPanel
// lanes) into accumulators started from 0, whose partial sums are then added into dE (fused_tile.hpp's
// summation order: dE's sum over all P positions is a chain of P/512 block sums, each a chain of at most
// 512 products, not one chain of P products, whose rounding error grows with its length). 512, i.e. a whole tile of up to 512 positions
// in one pass: the dE product ran 4-7 % faster than with 256 (which kept those rows of A in L1 while
// every block of rows of Gᵀ passed over them) on Zen 5 (family 26), one thread, at D = 128 and 256; the
// loop order (j outer, D panels inner) and the unrolling (2, 4, 8) measured level there.
constexpr int64_t kInnerBlock = kGradEInnerBlock;

// Into L1, the rows of dE the register block after (j0, d0) reads and writes (the next kGradRows entries
// of the same D panel, else the first of the next panel): in a step they come from memory (dE is V × D,
// far beyond the caches), and the block would otherwise start by waiting for them. 1-5 % faster dE
// product with dE streamed from beyond L2 (tile_bench over 100 blocks, Zen 5, one thread, 3 runs).
inline void prefetch_next_dE_block(const TransposedTile& t, const float* dE, int64_t j0, int64_t d0) {
  const bool same_panel = j0 + kGradRows < t.n;
  const int64_t nj = same_panel ? j0 + kGradRows : 0, nd = same_panel ? d0 : d0 + kGradPanel;
  if (nd >= t.D) return;
  const int64_t rows = std::min<int64_t>(kGradRows, t.n - nj);
  for (int64_t i = 0; i < rows; ++i) {
    const char* p = reinterpret_cast<const char*>(dE + (nj + i) * t.D + nd);
    _mm_prefetch(p, _MM_HINT_T0);
    _mm_prefetch(p + 64, _MM_HINT_T0);  // (32 floats of a row: two lines when 64-byte aligned)
  }
}

void grad_E(const TransposedTile& t, float* dE, bool accumulate) {
  for (int64_t k0 = 0; k0 < t.rows; k0 += kInnerBlock) {
    const int64_t K = std::min(kInnerBlock, t.rows - k0);
    const bool add_into = accumulate || k0 > 0;
    for (int64_t d0 = 0; d0 < t.D; d0 += kGradPanel) {
      const Lanes<kGradNV> lanes(t.D - d0);
      for (int64_t j0 = 0; j0 < t.n; j0 += kGradRows)
        with_rows(std::min<int64_t>(kGradRows, t.n - j0), [&](auto m) {
          constexpr int M = decltype(m)::value;
          float* c = dE + j0 * t.D + d0;
          prefetch_next_dE_block(t, dE, j0, d0);
          register_block<M, kGradNV, false>(K, t.Gt + j0 * t.ldt + k0, t.ldt, t.A + k0 * t.D + d0, t.D, c, t.D,
                                            /*init=*/false, lanes, [&](auto& acc) {
                                              if (add_into) add_block<M, kGradNV>(acc, c, t.D, lanes);
                                              else store_block<M, kGradNV>(acc, c, t.D, lanes);
                                            });
        });
    }
  }
}

// The dA product reads Gᵀ down its columns, kGradRows consecutive floats from every row (rows ldt floats
// apart). Those are first copied into a strip of 16-float rows, one cache line each, so that a block of
// broadcasts is one L1 line: 7 % faster than reading Gᵀ in place (Xeon, family 6 model 167). Blocked by
// kStripEntries entries (the strip's 16 KiB beside the rows of E_b it meets in L1).
constexpr int64_t kStripEntries = 256;
static_assert(kGradRows <= 16, "a block of broadcasts fits one strip row");

void grad_A(const TransposedTile& t, float* dA, bool accumulate) {
  alignas(64) float strip[kStripEntries * 16];
  for (int64_t k0 = 0; k0 < t.n; k0 += kStripEntries) {
    const int64_t K = std::min(kStripEntries, t.n - k0);
    const bool init = accumulate || k0 > 0;
    for (int64_t r0 = 0; r0 < t.rows; r0 += kGradRows) {
      const int64_t rows = std::min<int64_t>(kGradRows, t.rows - r0);
      for (int64_t k = 0; k < K; ++k)
        _mm512_store_ps(strip + 16 * k, _mm512_maskz_loadu_ps(first_lanes(rows), t.Gt + (k0 + k) * t.ldt + r0));
      with_rows(rows, [&](auto m) {
        for (int64_t d0 = 0; d0 < t.D; d0 += kGradPanel) {
          const Lanes<kGradNV> lanes(t.D - d0);
          float* c = dA + r0 * t.D + d0;
          register_block<decltype(m)::value, kGradNV, true>(K, strip, 16, t.E + k0 * t.D + d0, t.D, c, t.D, init, lanes,
                                                            [&](auto& acc) { store_block<decltype(m)::value, kGradNV>(acc, c, t.D, lanes); });
        }
      });
    }
  }
}

}  // namespace

extern const OwnTileKernels kOwnTileKernelsAvx512 = {logits, logits_sigmoid, logits_softplus, logits_scaled_sigmoid,
                                                     sigmoid_epilogue, grad_E, grad_A};

}  // namespace lobench::cpu
