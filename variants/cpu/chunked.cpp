// Variant `chunked`: Cut BCE on the CPU. A forward scan over the tiles accumulates the loss and the cut
// metrics; the backward scan recomputes each tile's logits and accumulates dA and dE. Only A, E and the
// sparse targets are kept, never a [P, V] buffer. Work: 8·P·V·D flops (the logits are computed twice).
// It shares the schedule, tile sizes, element-wise kernels and products with `fused` (tile_scan.hpp,
// tile_blocks.hpp, bce_tile.hpp, fused_tile.hpp), so the two differ only in the algorithm.
#include "variants/cpu/tile_scan.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {
namespace {

class ChunkedVariant final : public TiledVariant {
 public:
  std::string name() const override { return "chunked"; }
  std::string description() const override {
    return "Cut BCE: forward scan for loss and counts, recomputing backward scan, 8PVD flops, O(threads*block_p*(block_v+D)) workspace";
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    TiledRun run(in, out, ctx);
    if (run.own) scan_own(run, out);
    else scan_library(run, out);
    require_finite_outputs(in, out, name(), false, parse_epilogue(ctx.options.epilogue));
  }

 private:
  static void scan_library(TiledRun& run, StepOutputs& out) {
    // ---- forward scan: loss and cut metrics ----
    run.scan(kLossAndCounts, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      run.make_logits(w, v0, n, p0, rows);
      run.add_target_terms(w, v0, n, p0, rows);
      run.kernels.softplus_rows(w.tile, rows, n, run.blocks.ld, w.loss, w.predicted);
    });
    finish_losses_and_counts(run.in, run.targets, out);

    // ---- backward scan: recompute the logits, g = s·w·(σ(x) − y), accumulate dA and dE ----
    run.scan(kInputGradient, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      const float* E_rows = run.make_logits(w, v0, n, p0, rows);
      run.kernels.sigmoid_scaled(w.tile, rows, n, run.blocks.ld, run.row_scale.data() + p0);
      run.add_gradients(w, E_rows, v0, n, p0, rows, out);
    });
  }

  // The same two scans on transposed tiles through the products of our own.
  static void scan_own(TiledRun& run, StepOutputs& out) {
    run.scan(kLossAndCounts, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      const TransposedTile t = run.transposed_tile(w, v0, n, p0, rows);
      run.own->logits_softplus(t, w.loss, w.predicted);
      run.add_target_terms(t, w, v0, p0);
    });
    finish_losses_and_counts(run.in, run.targets, out);

    run.scan(kInputGradient | kFirstTileWritesGradient, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      const TransposedTile t = run.transposed_tile(w, v0, n, p0, rows);
      run.own->logits_scaled_sigmoid(t, run.row_scale.data() + p0);
      run.add_gradients(t, w, v0, p0, out, /*first_tile_writes_dA=*/true);
    });
  }
};

LOBENCH_REGISTER_VARIANT(ChunkedVariant);

}  // namespace
}  // namespace lobench::cpu
