// Variant `fused`: loss, dA, dE and the cut metrics from ONE pass over the logits. BCE has no row
// normaliser, so the logit gradient s·w·(σ(x) − y) is known as soon as the logit is: each tile's logits
// are made (A·E_bᵀ), turned into loss terms, counts and gradients in place by one element-wise sweep,
// and used at once for dE_b += Gᵀ·A and dA += G·E_b. Work: 6·P·V·D flops, against chunked's 8·P·V·D.
// Schedule and working memory: tile_scan.hpp (O(threads·block_p·(block_v + D)), independent of V).
//
// Two ways to make a tile's products: with fp32 operands on an AVX-512 CPU, micro-kernels of our own on
// a transposed tile, the element-wise sweep in the logit product's epilogue (fused_tile.hpp); otherwise
// (bf16 operands, CPUs without AVX-512, LOBENCH_ISA below avx512) three library products per tile
// (tile_products.hpp) and a separate sweep.
#include <atomic>

#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/tile_scan.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {
namespace {

// The kernels of our own when this run uses them, else nullptr.
const OwnTileKernels* own_products(const RunOptions& o) { return TiledRun::uses_bf16(o) ? nullptr : own_tile_kernels(); }

class FusedVariant final : public TiledVariant {
 public:
  std::string name() const override { return "fused"; }
  std::string description() const override {
    return "one pass: logits, loss, counts and gradients per cache-sized tile, 6PVD flops, O(threads*block_p*(block_v+D)) workspace";
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    bool dE_known_finite = false;
    if (const OwnTileKernels* own = own_products(ctx.options)) dE_known_finite = run_transposed(*own, in, out, ctx);
    else run_library(in, out, ctx);
    require_finite_outputs(in, out, name(), dE_known_finite);
  }

  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    return TiledRun::bytes(s, o, /*transposed=*/own_products(o) != nullptr);
  }

 private:
  static void run_library(const StepInputs& in, StepOutputs& out, RunContext& ctx) {
    TiledRun run(in, out, ctx);
    run.scan(kLossAndCounts | kInputGradient, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      const float* E_rows = run.make_logits(w, v0, n, p0, rows);
      run.add_target_terms(w, v0, n, p0, rows);  // while the tile still holds logits
      // Background: Σ softplus, predicted count, and x ← s·w·σ(x).
      run.kernels.softplus_and_sigmoid(w.tile, rows, n, run.blocks.ld, w.loss, w.predicted, run.row_scale.data() + p0);
      run.add_gradients(w, E_rows, v0, n, p0, rows, out);  // −s·w at the targets, then dE and dA
    });
    finish_losses_and_counts(in, run.targets, out);
  }

  // Returns whether every value of dE was found finite as its block was finished (in cache).
  static bool run_transposed(const OwnTileKernels& own, const StepInputs& in, StepOutputs& out, RunContext& ctx) {
    TiledRun run(in, out, ctx, /*transposed=*/true);
    const int64_t D = in.D;
    std::atomic<bool> dE_finite{true};
    const unsigned sums = kLossAndCounts | kInputGradient | kFirstTileWritesGradient;
    run.scan(sums, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      TransposedTile t;
      t.rows = rows, t.n = n, t.D = D;
      t.At = run.At.data() + p0, t.ldat = run.ldat;
      t.A = in.A + p0 * D;
      t.E = run.E_blocks.block(w.index, v0, n);
      t.Gt = w.tile, t.ldt = transposed_ld(rows);
      // Background terms of every logit, and Gᵀ ← s·w·σ(x), in the logit product's epilogue.
      own.logits_sigmoid(t, run.row_scale.data() + p0, w.loss, w.predicted);
      // The targets: their logits again from the kernel's own chain (the same bits), loss −x, the true
      // positives, and −s·w in the gradient.
      for_each_target_in_tile(run.targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {
        const float x = logit_chain(t.E + j * D, t.A + r * D, D);
        w.loss[r] -= x;
        w.true_pos[r] += x > 0.0f;
        t.Gt[j * t.ldt + r] -= run.row_scale[p0 + r];
      });
      own.grad_E(t, out.dE.data() + v0 * D, /*accumulate=*/p0 != 0);
      if (p0 + rows == in.P && !detail::all_finite(out.dE.data() + v0 * D, n * D)) dE_finite = false;
      own.grad_A(t, w.dA, /*accumulate=*/!w.first_of_group);
    });
    finish_losses_and_counts(in, run.targets, out);
    return dE_finite;
  }
};

LOBENCH_REGISTER_VARIANT(FusedVariant);

}  // namespace
}  // namespace lobench::cpu
