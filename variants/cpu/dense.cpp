// Variant `dense`: what frameworks do. Materialise the [P, V] logits, a dense multi-hot target tensor
// and the [P, V] logit gradient, then two GEMMs for dA and dE. It needs 3·P·V·4 bytes of working
// memory: the baseline that runs out of memory.

#include <algorithm>
#include <cmath>

#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/finite_outputs.hpp"
#include "variants/cpu/fixed_panels.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {
namespace {

// Per position: the element loss softplus(x) − y·x summed over V (float64), the logit gradient
// s·w·(σ(x) − y) and the counts at logit > 0, from the materialised logits and multi-hot targets. The
// softplus/σ background runs in the vectorised tile kernels (bce_tile.hpp) over column chunks small
// enough for L1/L2 (copied from the logits into the gradient and overwritten there); y, zero except at
// the targets, then enters at the target ids only, each distinct id once (y holds 1 there, so a
// repeated id finds it already counted: it is marked 2 while the position is processed).
void dense_element_pass(const StepInputs& in, const float* logits, float* multi_hot, float* grad, StepOutputs& out,
                        int threads) {
  constexpr int64_t kChunk = 4096;  // 16 KiB of logits
  const int64_t V = in.V, L = in.L;
  const BceTileKernels& kernels = active_bce_tile_kernels();
  const double s = in.gradient_scale();
  const double V_div = in.reduction == Reduction::mean ? double(in.mean_V()) : 1.0;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < in.P; ++p) {
    const float* x = logits + p * V;
    float* g = grad + p * V;
    float* y = multi_hot + p * V;
    const float gw = float(s * in.weight(p));
    double loss = 0;
    int64_t predicted = 0;
    for (int64_t v0 = 0; v0 < V; v0 += kChunk) {
      const int64_t n = std::min(kChunk, V - v0);
      std::copy_n(x + v0, n, g + v0);
      kernels.softplus_and_sigmoid(g + v0, 1, n, V, &loss, &predicted, &gw);
    }
    double target_logits = 0;
    int64_t positives = 0, tp = 0;
    for (int64_t l = 0; l < L; ++l) {
      const int32_t t = in.targets[p * L + l];
      if (t < 0 || t >= V || y[t] != 1.0f) continue;  // padding, or an id already counted
      y[t] = 2.0f;
      target_logits += double(x[t]);
      g[t] -= gw;
      ++positives;
      tp += x[t] > 0.0f;
    }
    for (int64_t l = 0; l < L; ++l) {
      const int32_t t = in.targets[p * L + l];
      if (t >= 0 && t < V) y[t] = 1.0f;
    }
    out.per_position_loss[p] = (loss - target_logits) / V_div;
    out.counts[p * 4 + kTP] = tp;
    out.counts[p * 4 + kFP] = predicted - tp;
    out.counts[p * 4 + kFN] = positives - tp;
    out.counts[p * 4 + kTN] = V - predicted - (positives - tp);
  }
}

class DenseVariant final : public Variant {
 public:
  std::string name() const override { return "dense"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override {
    return "materialized [P,V] logits, multi-hot targets and logit gradient; BLAS products in fixed panels";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions&) const override {
    return 3 * s.P() * s.V * int64_t(sizeof(float));
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    const int64_t P = in.P, V = in.V, D = in.D, L = in.L;
    const int threads = ctx.options.threads;
    ProductsOnCallingThread products_on_calling_thread;  // products in fixed panels: results independent of threads
    Buffer<float> logits(ctx.alloc, P * V), multi_hot(ctx.alloc, P * V), grad(ctx.alloc, P * V);

    for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {  // logits = A·Eᵀ
      sgemm(Op::none, Op::transpose, rows, V, D, in.A + p0 * D, D, in.E, D, logits.data() + p0 * V, V, false);
    });

    // Multi-hot targets: padding ids are dropped, a repeated id sets the same 1.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < P; ++p) {
      float* y = multi_hot.data() + p * V;
      std::fill_n(y, V, 0.0f);
      for (int64_t l = 0; l < L; ++l) {
        const int32_t t = in.targets[p * L + l];
        if (t >= 0 && t < V) y[t] = 1.0f;
      }
    }

    dense_element_pass(in, logits.data(), multi_hot.data(), grad.data(), out, threads);
    out.reduce_loss(in);

    for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {  // dA = G·E
      sgemm(Op::none, Op::none, rows, D, V, grad.data() + p0 * V, V, in.E, D, out.dA.data() + p0 * D, D, false);
    });
    for_each_fixed_panel(V, threads, [&](int64_t v0, int64_t rows) {  // dE = Gᵀ·A
      sgemm(Op::transpose, Op::none, rows, D, P, grad.data() + v0, V, in.A, D, out.dE.data() + v0 * D, D, false);
    }, /*panel_rows=*/256);
    require_finite_outputs(in, out, name());
  }
};

LOBENCH_REGISTER_VARIANT(DenseVariant);

}  // namespace
}  // namespace lobench::cpu
