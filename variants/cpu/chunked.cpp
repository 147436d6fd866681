// Variant `chunked`: Cut BCE on the CPU. A forward scan over vocabulary blocks accumulates the loss and
// the cut metrics; the backward scan recomputes each block's logits and accumulates dA and dE. Only A,
// E and the sparse targets are kept: the workspace is one [block_p, block_v] logit tile per thread,
// never a [P, V] buffer. Threads take vocabulary blocks, so each dE row has one owner; dA is summed from
// per-thread buffers. Work: 8·P·V·D flops (the logits are computed twice).
#include <omp.h>

#include <algorithm>

#include "bce_tile.hpp"
#include "chunked_blocks.hpp"
#include "eigen_maps.hpp"
#include "sparse_targets.hpp"
#include "variant.hpp"

namespace lobench::cpu {
namespace {

class ChunkedVariant final : public Variant {
 public:
  std::string name() const override { return "chunked"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override {
    return "Cut BCE: vocabulary-block forward scan + recomputing backward, O(P*block_v) workspace";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    const TileBlocks b = choose_blocks(s.P(), s.V, o);
    const int64_t P = s.P();
    return SparseTargets::bytes(P, s.L) + b.threads * b.block_p * b.block_v * 4  // logit tiles
           + b.threads * P * 3 * 8                                                // loss, predicted, TP
           + P * 4                                                                // row scale s·w
           + (b.threads - 1) * P * s.D * 4;                                       // dA partials
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    const int64_t P = in.P, V = in.V, D = in.D;
    const TileBlocks b = choose_blocks(P, V, ctx.options);
    const int64_t bv = b.block_v, bp = b.block_p;
    const int T = b.threads;
    const int64_t n_vblocks = (V + bv - 1) / bv;

    SparseTargets targets(in, ctx.alloc);
    Buffer<float> tiles(ctx.alloc, T * bp * bv);
    Buffer<double> loss_acc(ctx.alloc, T * P);
    Buffer<int64_t> predicted(ctx.alloc, T * P), true_pos(ctx.alloc, T * P);
    Buffer<float> row_scale(ctx.alloc, P);
    Buffer<float> dA_partial(ctx.alloc, (T - 1) * P * D);
    std::fill_n(loss_acc.data(), T * P, 0.0);
    std::fill_n(predicted.data(), T * P, int64_t(0));
    std::fill_n(true_pos.data(), T * P, int64_t(0));
    std::fill_n(dA_partial.data(), (T - 1) * P * D, 0.0f);
    std::fill(out.dA.begin(), out.dA.end(), 0.0f);
    const double s = in.gradient_scale();
    for (int64_t p = 0; p < P; ++p) row_scale[p] = float(s * in.weight(p));

    // ---- forward scan: loss and cut metrics ----
#pragma omp parallel num_threads(T)
    {
      const int t = omp_get_thread_num();
      float* X = tiles.data() + t * bp * bv;
      double* loss = loss_acc.data() + t * P;
      int64_t* pred = predicted.data() + t * P;
      int64_t* tp = true_pos.data() + t * P;
#pragma omp for schedule(dynamic, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        const int64_t v0 = vb * bv, n = std::min(bv, V - v0);
        const auto [pair_lo, pair_hi] = targets.pairs_in(v0, v0 + n);
        auto Eb = cmat(in.E + v0 * D, n, D, D);
        for (int64_t p0 = 0; p0 < P; p0 += bp) {
          const int64_t rows = std::min(bp, P - p0);
          mat(X, rows, n, bv).noalias() = cmat(in.A + p0 * D, rows, D, D) * Eb.transpose();
          tile_softplus_rows(X, rows, n, bv, loss + p0, pred + p0);
          for (int64_t i = pair_lo; i < pair_hi; ++i) {  // sparse correction at the targets: −x
            const int64_t p = targets.pair_pos(i);
            if (p < p0 || p >= p0 + rows) continue;
            const float x = X[(p - p0) * bv + (targets.pair_id(i) - v0)];
            loss[p] -= x;
            tp[p] += x > 0.0f;
          }
        }
      }
    }

    // ---- backward scan: recompute the logits, g = s·w·(σ(x) − y), accumulate dA and dE ----
#pragma omp parallel num_threads(T)
    {
      const int t = omp_get_thread_num();
      float* X = tiles.data() + t * bp * bv;
      float* dA = t == 0 ? out.dA.data() : dA_partial.data() + (t - 1) * P * D;
#pragma omp for schedule(dynamic, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        const int64_t v0 = vb * bv, n = std::min(bv, V - v0);
        const auto [pair_lo, pair_hi] = targets.pairs_in(v0, v0 + n);
        auto Eb = cmat(in.E + v0 * D, n, D, D);
        auto dEb = mat(out.dE.data() + v0 * D, n, D, D);
        for (int64_t p0 = 0; p0 < P; p0 += bp) {
          const int64_t rows = std::min(bp, P - p0);
          auto Ab = cmat(in.A + p0 * D, rows, D, D);
          auto Xm = mat(X, rows, n, bv);
          Xm.noalias() = Ab * Eb.transpose();
          tile_sigmoid_scaled(X, rows, n, bv, row_scale.data() + p0);
          for (int64_t i = pair_lo; i < pair_hi; ++i) {  // sparse correction at the targets: −s·w
            const int64_t p = targets.pair_pos(i);
            if (p >= p0 && p < p0 + rows) X[(p - p0) * bv + (targets.pair_id(i) - v0)] -= row_scale[p];
          }
          if (p0 == 0) dEb.noalias() = Xm.transpose() * Ab;
          else dEb.noalias() += Xm.transpose() * Ab;
          mat(dA + p0 * D, rows, D, D).noalias() += Xm * Eb;
        }
      }
    }

    // ---- reductions over threads ----
    for (int u = 1; u < T; ++u) {
      const float* part = dA_partial.data() + (u - 1) * P * D;
      for (int64_t i = 0; i < P * D; ++i) out.dA[i] += part[i];
    }
    const double V_div = in.reduction == Reduction::mean ? double(V) : 1.0;
    for (int64_t p = 0; p < P; ++p) {
      double l = 0.0;
      int64_t pr = 0, tp = 0;
      for (int u = 0; u < T; ++u) {
        l += loss_acc[u * P + p];
        pr += predicted[u * P + p];
        tp += true_pos[u * P + p];
      }
      const int64_t pos = targets.positives(p);
      out.per_position_loss[p] = l / V_div;
      out.counts[p * 4 + kTP] = tp;
      out.counts[p * 4 + kFP] = pr - tp;
      out.counts[p * 4 + kFN] = pos - tp;
      out.counts[p * 4 + kTN] = V - pr - (pos - tp);
    }
    out.reduce_loss(in);
  }
};

LOBENCH_REGISTER_VARIANT(ChunkedVariant);

}  // namespace
}  // namespace lobench::cpu
