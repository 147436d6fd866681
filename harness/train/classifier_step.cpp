// The XMC head's training step (Classifier::step) on the tiled variants' machinery: the schedule of
// variants/cpu/tile_scan.hpp (label blocks dealt to the threads, each block's loss and dH share added in
// block order), the products of head_products.hpp (fp32: one single-threaded sgemm each, OpenBLAS when it
// loads, else Eigen; bf16: the CPU's bf16 products, float32 accumulation) and the element-wise BCE kernel
// of the fused variant (variants/bce). What the step adds is its update hook: right after a tile's weight gradient dW_t = G_tᵀ·H exists, the fused update
// rounds W_t − lr·dW_t into the storage format (nearest, stochastic, ELMO's SR), so the [V, D] gradient
// never exists; the separate update keeps the label chunk's dW and applies it once the chunk is done.
//
// One pass per label chunk: each tile's logits are made, turned into the logit gradient in place and
// used at once for dH += G_t·W_t and dW_t; the tile's weights are updated only after that, and no other
// tile reads them, so dH sees the pre-update weights. A batch is one position chunk (block_p = B).
// Every floating-point sum has an order fixed by the data and the tile size: dH and the loss are
// added in label-block order (BlockOrderedSums), each dW row and logit is one sgemm of fixed shapes;
// results are bit-identical for any thread count.
#include <omp.h>

#include <algorithm>

#include "harness/train/classifier_impl.hpp"
#include "variants/cpu/sgemm.hpp"

namespace lobench::train {
namespace {

// One tile of labels [v0, v0+n) by the batch's B rows: logits Z = H·W_tᵀ into w.tile ([B, ld]); the
// loss (Σ softplus − Σ_positives z, per row, into w.loss); G = σ(Z) − Y in place, rounded into the
// gradient format (the identity for fp32; the observer sees G as used); dW [n, D] = Gᵀ·H and
// w.dA [B, D] += G·W_t with the weights as they were before the step.
void bce_tile(Classifier::Impl& m, cpu::TileThread& w, int64_t ld, int64_t B, int64_t v0, int64_t n, float* dW,
              uint64_t step, const LogitGradientObserver& logit_observer) {
  const float* W = m.products->operand_rows(w.index, m.rows(w.index, v0, n), n);  // (fp8: rounded with W's scale)
  m.products->logits(w.index, W, n, B, w.tile, ld);
  const auto [lo, hi] = m.pairs_in(v0, v0 + n);
  for (int64_t i = lo; i < hi; ++i) {  // −z at the positives, while the tile still holds logits
    const int64_t j = (m.pairs[i] >> 32) - v0, b = m.pairs[i] & 0xffffffff;
    const float z = w.tile[b * ld + j];
    w.loss[b] -= z;
    w.true_pos[b] += z > 0.0f;
  }
  m.kernels->softplus_and_sigmoid(w.tile, B, n, ld, w.loss, w.predicted, m.ones.data());
  for (int64_t i = lo; i < hi; ++i) {
    const int64_t j = (m.pairs[i] >> 32) - v0, b = m.pairs[i] & 0xffffffff;
    w.tile[b * ld + j] -= 1.0f;
  }
  m.round_logit_gradient(w.tile, ld, B, v0, n, step);  // --grad-format: G as dH and dW will use it
  if (logit_observer) logit_observer(w.index, v0, n, B, w.tile, ld);
  m.products->gradients(w.index, w.tile, ld, W, n, B, dW, w.dA);
}

// Separate mode: the chunk's stored gradient rows [c0, c1) applied tile by tile.
void apply_chunk_update(Classifier::Impl& m, int threads, int64_t c0, int64_t c1, float lr, uint64_t step) {
  const int64_t n_tiles = ceil_div(c1 - c0, m.tile), D = m.cfg.D;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int64_t it = 0; it < n_tiles; ++it) {
    const int64_t v0 = c0 + it * m.tile, n = std::min(m.tile, c1 - v0);
    m.apply_update(omp_get_thread_num(), v0, n, m.grad_chunk.data() + (v0 - c0) * D, lr, step);
  }
}

}  // namespace

StepResult Classifier::step(const float* H, int64_t B, const BatchLabels& labels, float lr, uint64_t step,
                            float* dH, const GradientObserver& observer, const LogitGradientObserver& logit_observer) {
  auto& m = *impl_;
  const int64_t V = cfg_.V, D = cfg_.D;
  if (B < 1 || B > cfg_.max_batch) throw std::invalid_argument("Classifier::step: B must be in [1, max_batch]");
  m.load_pairs(labels, B);
  std::fill_n(dH, B * D, 0.0f);
  std::fill_n(m.row_loss.data(), B, 0.0);
  std::fill_n(m.row_counts.data(), B * 4, int64_t(0));
  cpu::ProductsOnCallingThread products_on_calling_thread;
  m.products->start_step(H, B, is_fp8(cfg_.operand) ? m.max_abs_weights() : 0.0f);
  const bool fused = cfg_.mode == UpdateMode::fused;
  const cpu::TileScanTargets sums{m.row_loss.data(), dH, m.row_counts.data()};

  for (int64_t c0 = 0; c0 < V; c0 += m.chunk_rows) {
    const int64_t c1 = std::min(V, c0 + m.chunk_rows);
    cpu::TileBlocks blocks = Impl::scan_blocks(cfg_, m.tile, B);
    blocks.threads = int(std::min<int64_t>(blocks.threads, ceil_div(c1 - c0, m.tile)));
    cpu::scan_tiles(B, c1 - c0, D, blocks, *m.scan, cpu::kLossAndCounts | cpu::kInputGradient, sums,
                    [&](cpu::TileThread& w, int64_t j0, int64_t n, int64_t /*p0 = 0*/, int64_t rows) {
                      const int64_t v0 = c0 + j0;
                      float* dW = fused ? m.grad_tiles.data() + int64_t(w.index) * m.tile * D
                                        : m.grad_chunk.data() + j0 * D;
                      bce_tile(m, w, blocks.ld, rows, v0, n, dW, step, logit_observer);
                      if (observer) observer(w.index, v0, n, dW);
                      if (fused) m.apply_update(w.index, v0, n, dW, lr, step);  // the update hook
                    });
    if (!fused) apply_chunk_update(m, blocks.threads, c0, c1, lr, step);
  }
  StepResult r;
  for (int64_t b = 0; b < B; ++b) r.loss += m.row_loss[b];
  return r;
}

}  // namespace lobench::train
