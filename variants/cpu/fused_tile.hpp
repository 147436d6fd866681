// The products of the tiled variants' tiles (fused, chunked) made by micro-kernels of our own (AVX-512), with
// the element-wise work in the logit product's epilogue and no packing of any operand per tile.
//
// Why not the BLAS: through OpenBLAS each tile costs three sgemm calls, each repacking its operands
// (A twice, E twice, the gradient tile twice), plus a zeroing of the tile for beta = 0 and a separate
// element-wise sweep over it; a perf profile on the Xeon (family 6, model 167) put these at ~20 % of
// the fused step (results/cpu/performance.md). Here the tile is held transposed, Gᵀ [n × ldt] (vocabulary
// entry j, position r), so that every product reads its operands in place:
//   logits   Xᵀ[j, r] = Σ_d E_b[j, d]·Aᵀ[d, r]   (broadcasts from E_b's rows, vectors along Aᵀ's rows)
//   dE       dE_b[j, d] (+)= Σ_r Gᵀ[j, r]·A[r, d]  (broadcasts from Gᵀ's rows, vectors along A's rows)
//   dA       dA[r, d] += Σ_j Gᵀ[j, r]·E_b[j, d]    (broadcasts down Gᵀ's columns, vectors along E_b's rows)
// Aᵀ is made once per step (P·D floats), nothing else is copied. The logits' epilogue turns each
// register block into loss terms, counts and s·σ(x) before it is stored.
//
// Summation order (what the tests hold the kernels to, bit for bit): every logit and dA element is ONE
// chain of fused multiply-adds in increasing order of the inner index, started from 0 (or from the
// output's value when accumulating): acc = fma(a_k, b_k, acc). dE's inner index (positions) is cut into
// blocks of kGradEInnerBlock: each block's chain starts from 0 and its sum is then added into the output
// (stored, for the first block when not accumulating). dE sums over every position of the step, one tile
// of positions after another: a single chain of P = 10^5 products lost 1.5e-5 relative L2 against the
// float64 reference (variants/tests/large_problem_test.cpp), blocks of 512 products added into the output
// keep each chain short. So the results depend on the shapes only, never on threads.
// The per-position loss: for each register block of kTransposedBlockRows entries (j0 = 0, 14, 28, …), the
// float sum P of the positive x in increasing j from +0, and q from +0 by q ← fma(q, e, q + e) in
// increasing j with e = e^−|x| (bce_math::exp_neg_abs, the e of σ), so that 1 + q = Π (1 + e); the block's
// loss P + log1p(q) (bce_math::log1p_nonnegative), which is Σ softplus(x) with one logarithm per block
// instead of a log1p per logit; these block sums added in increasing j0 into a float64 sum from 0; that
// added into loss[r]. (Before 2026-12-02 the block's loss was the float sum of softplus(x) per logit: the
// same value to ~1e-7 relative, other rounding.)
#pragma once

#include <cstdint>

namespace lobench::cpu {

// One tile held transposed (row j: vocabulary entry v0 + j; column r: position p0 + r).
struct TransposedTile {
  int64_t rows = 0, n = 0, D = 0;
  const float* At = nullptr;  // Aᵀ of the tile's positions: A[p0 + r][d] = At[d·ldat + r]
  int64_t ldat = 0;
  const float* A = nullptr;  // the tile's rows of A, [rows, D]
  const float* E = nullptr;  // the block's rows of E, [n, D]
  float* Gt = nullptr;       // [n, ldt]: logits, then logit gradients
  int64_t ldt = 0;
};

// Positions per panel of the products (two AVX-512 vectors), and vocabulary entries per register block
// of the logit product (whose float sums of softplus terms enter the loss).
constexpr int64_t kTransposedPanel = 32;
constexpr int kTransposedBlockRows = 14;
// Positions per block of the dE product's inner index (its partial sums start from 0; see above).
constexpr int64_t kGradEInnerBlock = 512;

// Floats between the rows of a transposed tile or of Aᵀ with `cols` columns: a multiple of 16 (64-byte
// aligned rows) plus 16, so that rows 2^k floats long do not all fall into the same L1 set.
inline int64_t transposed_ld(int64_t cols) { return (cols + 15) / 16 * 16 + 16; }

struct OwnTileKernels {
  // Gt[j, r] = x[j, r] = Σ_d E[j, d]·At[d, r] (the chain above); nothing else.
  void (*logits)(const TransposedTile& t);
  // The same x, then Gt[j, r] = row_scale[r]·σ(x[j, r]); loss[r] += Σ_j softplus(x[j, r]) (made and
  // summed as above); predicted[r] += #{j : x[j, r] > 0}. σ is bce_math's, bit for bit the value of the
  // element-wise tile kernels (bce_tile.hpp) on the same x.
  void (*logits_sigmoid)(const TransposedTile& t, const float* row_scale, double* loss, int64_t* predicted);
  // The loss and counts of logits_sigmoid alone (chunked's forward scan); Gt is not written.
  void (*logits_softplus)(const TransposedTile& t, double* loss, int64_t* predicted);
  // Gt[j, r] = row_scale[r]·σ(x[j, r]) alone (chunked's backward scan).
  void (*logits_scaled_sigmoid)(const TransposedTile& t, const float* row_scale);
  // logits_sigmoid's element-wise work alone, on the logits x[j, r] already in Gt: the same Gt, loss and
  // predicted, bit for bit, as logits_sigmoid (the epilogue's own cost: step_bench's `epilogue` row).
  void (*sigmoid_epilogue)(const TransposedTile& t, const float* row_scale, double* loss, int64_t* predicted);
  // dE[j, d] = (accumulate ? dE[j, d] : 0) + Σ_r Gt[j, r]·A[r, d] (the chain above); dE rows D apart.
  void (*grad_E)(const TransposedTile& t, float* dE, bool accumulate);
  // dA[r, d] = (accumulate ? dA[r, d] : 0) + Σ_j Gt[j, r]·E[j, d] (the chain above); dA rows D apart.
  void (*grad_A)(const TransposedTile& t, float* dA, bool accumulate);
};

// The kernels, where the build compiled them, the CPU runs AVX-512 and the tile kernels' path is avx512
// (LOBENCH_ISA or set_active_simd_path may force a lower one); nullptr otherwise: the fused variant then
// makes its products through cpu::sgemm (tile_products.hpp).
const OwnTileKernels* own_tile_kernels();

// While disabled, own_tile_kernels() returns nullptr, so that one process can time the variants both ways
// (step_bench's *_sgemm rows) and so that the harness can give them the library's products where those
// are faster on this CPU (harness/meters/products_choice.hpp). Not for use while a variant is running.
void set_own_tile_kernels_enabled(bool enabled);
// Whether own_tile_kernels() returns the kernels while enabled (the build, the CPU and LOBENCH_ISA allow them).
bool own_tile_kernels_available();

// The scalar model of one logit: the chain Σ_d E_row[d]·A_row[d] in increasing d, the kernels' order
// (A_row: the position's row of A, the values Aᵀ's column holds). The fused variant reads the logits at
// the sparse targets from it (equal to what the kernel made, bit for bit).
inline float logit_chain(const float* E_row, const float* A_row, int64_t D) {
  float acc = 0.0f;
  for (int64_t d = 0; d < D; ++d) acc = __builtin_fmaf(E_row[d], A_row[d], acc);
  return acc;
}

// Aᵀ: At[d·ldat + p] = A[p][d] for p < P (ldat ≥ P).
void transpose_rows(const float* A, int64_t P, int64_t D, float* At, int64_t ldat);

}  // namespace lobench::cpu
