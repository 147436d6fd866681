// Variant `chunked`: Cut BCE on the CPU. A forward scan over the tiles accumulates the loss and the cut
// metrics; the backward scan recomputes each tile's logits and accumulates dA and dE. Only A, E and the
// sparse targets are kept, never a [P, V] buffer. Work: 8·P·V·D flops (the logits are computed twice).
// It shares the schedule, tile sizes and element-wise kernels with `fused` (tile_scan.hpp,
// tile_blocks.hpp, bce_tile.hpp), so the two differ only in the algorithm.
#include <algorithm>

#include "bce_tile.hpp"
#include "eigen_maps.hpp"
#include "sparse_targets.hpp"
#include "tile_scan.hpp"
#include "variant.hpp"

namespace lobench::cpu {
namespace {

class ChunkedVariant final : public TiledVariant {
 public:
  std::string name() const override { return "chunked"; }
  std::string description() const override {
    return "Cut BCE: forward scan for loss and counts, recomputing backward scan, 8PVD flops, O(threads*block_p*(block_v+D)) workspace";
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

    // ---- forward scan: loss and cut metrics ----
    scan_tiles(in, b, ws, kLossAndCounts, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      mat(w.tile, rows, n, b.ld).noalias() = cmat(in.A + p0 * D, rows, D, D) * cmat(E_blocks.block(w.index, v0, n), n, D, D).transpose();
      for_each_target_in_tile(targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {  // −x at the targets
        const float x = w.tile[r * b.ld + j];
        w.loss[r] -= x;
        w.true_pos[r] += x > 0.0f;
      });
      kernels.softplus_rows(w.tile, rows, n, b.ld, w.loss, w.predicted);
    });
    finish_losses_and_counts(in, targets, out);

    // ---- backward scan: recompute the logits, g = s·w·(σ(x) − y), accumulate dA and dE ----
    scan_tiles(in, b, ws, kInputGradient, out, [&](TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
      auto Ab = cmat(in.A + p0 * D, rows, D, D);
      auto Eb = cmat(E_blocks.block(w.index, v0, n), n, D, D);
      auto X = mat(w.tile, rows, n, b.ld);
      X.noalias() = Ab * Eb.transpose();
      kernels.sigmoid_scaled(w.tile, rows, n, b.ld, row_scale.data() + p0);
      for_each_target_in_tile(targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {  // −s·w at the targets
        w.tile[r * b.ld + j] -= row_scale[p0 + r];
      });
      auto dEb = mat(out.dE.data() + v0 * D, n, D, D);
      if (p0 == 0) dEb.noalias() = X.transpose() * Ab;
      else dEb.noalias() += X.transpose() * Ab;
      mat(w.dA, rows, D, D).noalias() += X * Eb;
    });
  }
};

LOBENCH_REGISTER_VARIANT(ChunkedVariant);

}  // namespace
}  // namespace lobench::cpu
