// Variant `fused`: loss, dA, dE and the cut metrics from ONE pass over the logits. BCE has no row
// normaliser, so the logit gradient s·w·(σ(x) − y) is known as soon as the logit is: each tile's logits
// are made (A·E_bᵀ), turned into loss terms, counts and gradients in place by one element-wise sweep,
// and used at once for dE_b += Gᵀ·A and dA += G·E_b. Work: 6·P·V·D flops, against chunked's 8·P·V·D.
// Schedule and working memory: tile_scan.hpp (O(threads·block_p·(block_v + D)), independent of V).
#include <algorithm>

#include "bce_tile.hpp"
#include "eigen_maps.hpp"
#include "sparse_targets.hpp"
#include "tile_scan.hpp"
#include "variant.hpp"

namespace lobench::cpu {
namespace {

class FusedVariant final : public TiledVariant {
 public:
  std::string name() const override { return "fused"; }
  std::string description() const override {
    return "one pass: logits, loss, counts and gradients per cache-sized tile, 6PVD flops, O(threads*block_p*(block_v+D)) workspace";
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    const int64_t D = in.D;
    TiledRun run(in, out, ctx);
    const TileBlocks& b = run.blocks;
    const BceTileKernels& kernels = run.kernels;
    const SparseTargets& targets = run.targets;
    const Buffer<float>& row_scale = run.row_scale;
    TileScanWorkspace& ws = run.ws;
    EmbeddingBlocks& E_blocks = run.E_blocks;

    scan_tiles(in, b, ws, kLossAndCounts | kInputGradient, out,
               [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
                 auto Ab = cmat(in.A + p0 * D, rows, D, D);
                 auto Eb = cmat(E_blocks.block(w.index, v0, n), n, D, D);
                 auto X = mat(w.tile, rows, n, b.ld);
                 X.noalias() = Ab * Eb.transpose();
                 // Targets first, while the tile still holds logits: loss −x, true positives.
                 for_each_target_in_tile(targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {
                   const float x = w.tile[r * b.ld + j];
                   w.loss[r] -= x;
                   w.true_pos[r] += x > 0.0f;
                 });
                 // Background: Σ softplus, predicted count, and x ← s·w·σ(x).
                 kernels.softplus_and_sigmoid(w.tile, rows, n, b.ld, w.loss, w.predicted, row_scale.data() + p0);
                 // Targets again: the gradient's −s·w.
                 for_each_target_in_tile(targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {
                   w.tile[r * b.ld + j] -= row_scale[p0 + r];
                 });
                 auto dEb = mat(out.dE.data() + v0 * D, n, D, D);
                 if (p0 == 0) dEb.noalias() = X.transpose() * Ab;
                 else dEb.noalias() += X.transpose() * Ab;
                 mat(w.dA, rows, D, D).noalias() += X * Eb;
               });
    finish_losses_and_counts(in, targets, out);
  }
};

LOBENCH_REGISTER_VARIANT(FusedVariant);

}  // namespace
}  // namespace lobench::cpu
