// Variant `fused`: loss, dA, dE and the cut metrics from ONE pass over the logits. BCE has no row
// normaliser, so the logit gradient s·w·(σ(x) − y) is known as soon as the logit is: each tile's logits
// are made (A·E_bᵀ), turned into loss terms, counts and gradients in place by one element-wise sweep,
// and used at once for dE_b += Gᵀ·A and dA += G·E_b. Work: 6·P·V·D flops, against chunked's 8·P·V·D.
// Schedule and working memory: tile_scan.hpp (O(threads·block_p·(block_v + D)), independent of V).
//
// Three ways to make a tile's products (TiledRun): with fp32 operands on an AVX-512 CPU, micro-kernels of
// our own on a transposed tile, the element-wise sweep in the logit product's epilogue (fused_tile.hpp);
// with bf16 or fp8 operands where the CPU has AVX512_BF16, the sweep and the pairing of the gradient tile in
// one epilogue on the tile's logits (tile_products_bf16.hpp, bf16_fused_tile.hpp): the logit product's own
// epilogue with the avx512_bf16 kernel, a pass over the logits AMX (or the emulation) made otherwise;
// otherwise (CPUs without AVX512_BF16, a bf16 epilogue, LOBENCH_ISA below avx512) three products per tile
// (tile_products.hpp, tile_products_bf16.hpp) and a separate sweep.
#include <atomic>

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

  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    return TiledRun::bytes(s, o, /*want_fused_bf16_tiles=*/true);
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    TiledRun run(in, out, ctx, /*want_fused_bf16_tiles=*/true);
    const bool dE_known_finite = run.own                ? scan_own(run, out)
                                 : run.bf16_tiles_fused ? scan_fused_bf16(run, out)
                                                        : scan_library(run, out);
    finish_losses_and_counts(in, run.targets, out);
    require_finite_outputs(in, out, name(), dE_known_finite, parse_epilogue(ctx.options.epilogue));
  }

 private:
  static bool scan_library(TiledRun& run, StepOutputs& out) {
    run.scan(kLossAndCounts | kInputGradient, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      const float* E_rows = run.make_logits(w, v0, n, p0, rows);
      run.add_target_terms(w, v0, n, p0, rows);  // while the tile still holds logits
      // Background: Σ softplus, predicted count, and x ← s·w·σ(x).
      run.kernels.softplus_and_sigmoid(w.tile, rows, n, run.blocks.ld, w.loss, w.predicted, run.row_scale.data() + p0);
      run.add_gradients(w, E_rows, v0, n, p0, rows, out);  // −s·w at the targets, then dE and dA
    });
    return false;
  }

  // The scans whose first tile of a group writes its gradient slots and whose tiles leave dE's block
  // finished at the last position tile: `tile` makes one tile; returns whether every value of dE was found
  // finite as its block was finished (in cache).
  template <class Tile>
  static bool scan_checking_dE(TiledRun& run, StepOutputs& out, Tile&& tile) {
    const int64_t P = run.in.P, D = run.in.D;
    std::atomic<bool> dE_finite{true};
    run.scan(kLossAndCounts | kInputGradient | kFirstTileWritesGradient, out,
             [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
               tile(w, v0, n, p0, rows);
               if (p0 + rows == P && !detail::all_finite(out.dE.data() + v0 * D, n * D)) dE_finite = false;
             });
    return dE_finite;
  }

  // bf16 operands, the element-wise work in the logits' epilogue (TiledRun::fused_bf16_tile).
  static bool scan_fused_bf16(TiledRun& run, StepOutputs& out) {
    return scan_checking_dE(run, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      run.fused_bf16_tile(w, v0, n, p0, rows, out);
    });
  }

  static bool scan_own(TiledRun& run, StepOutputs& out) {
    return scan_checking_dE(run, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      const TransposedTile t = run.transposed_tile(w, v0, n, p0, rows);
      // Background terms of every logit and Gᵀ ← s·w·σ(x), in the logit product's epilogue.
      run.own->logits_sigmoid(t, run.row_scale.data() + p0, w.loss, w.predicted);
      run.add_target_terms(t, w, v0, p0);
      run.add_gradients(t, w, v0, p0, out, /*first_tile_writes_dA=*/true);
    });
  }
};

LOBENCH_REGISTER_VARIANT(FusedVariant);

}  // namespace
}  // namespace lobench::cpu
