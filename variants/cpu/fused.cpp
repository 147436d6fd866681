// Variant `fused`: loss, dA, dE and the cut metrics from ONE pass over the logits. BCE has no row
// normaliser, so the logit gradient s·w·(σ(x) − y) is known as soon as the logit is: each tile's logits
// are made (A·E_bᵀ), turned into loss terms, counts and gradients in place by one element-wise sweep,
// and used at once for dE_b += Gᵀ·A and dA += G·E_b. Work: 6·P·V·D flops, against chunked's 8·P·V·D.
// Schedule and working memory: tile_scan.hpp (O(threads·block_p·(block_v + D)), independent of V).
#include "variants/cpu/tile_scan.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {
namespace {

class FusedVariant final : public TiledVariant {
 public:
  std::string name() const override { return "fused"; }
  std::string description() const override {
    return "one pass: logits, loss, counts and gradients per cache-sized tile, 6PVD flops, O(threads*block_p*(block_v+D)) workspace";
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    TiledRun run(in, out, ctx);
    run.scan(kLossAndCounts | kInputGradient, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      const float* E_rows = run.make_logits(w, v0, n, p0, rows);
      run.add_target_terms(w, v0, n, p0, rows);  // while the tile still holds logits
      // Background: Σ softplus, predicted count, and x ← s·w·σ(x).
      run.kernels.softplus_and_sigmoid(w.tile, rows, n, run.blocks.ld, w.loss, w.predicted, run.row_scale.data() + p0);
      run.add_gradients(w, E_rows, v0, n, p0, rows, out);  // −s·w at the targets, then dE and dA
    });
    finish_losses_and_counts(in, run.targets, out);
    require_finite_outputs(in, out, name());
  }
};

LOBENCH_REGISTER_VARIANT(FusedVariant);

}  // namespace
}  // namespace lobench::cpu
