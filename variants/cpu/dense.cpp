// Variant `dense`: what frameworks do. Materialise the [P, V] logits, a dense multi-hot target tensor
// and the [P, V] logit gradient, then two GEMMs for dA and dE. It needs 3·P·V·4 bytes of working
// memory: the baseline that runs out of memory.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>

#include "variants/cpu/eigen_maps.hpp"
#include "variants/cpu/finite_outputs.hpp"
#include "variants/cpu/fixed_panels.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {
namespace {

class DenseVariant final : public Variant {
 public:
  std::string name() const override { return "dense"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override {
    return "materialized [P,V] logits, multi-hot targets and logit gradient; Eigen GEMMs";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions&) const override {
    return 3 * s.P() * s.V * int64_t(sizeof(float));
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    const int64_t P = in.P, V = in.V, D = in.D, L = in.L;
    const int threads = ctx.options.threads;
    EigenOnCallingThread eigen_sequential;  // products in fixed panels: results independent of threads
    Buffer<float> logits(ctx.alloc, P * V), multi_hot(ctx.alloc, P * V), grad(ctx.alloc, P * V);

    auto Em = cmat(in.E, V, D, D);
    for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {
      mat(logits.data() + p0 * V, rows, V, V).noalias() = cmat(in.A + p0 * D, rows, D, D) * Em.transpose();
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

    const double s = in.gradient_scale();
    const double V_div = in.reduction == Reduction::mean ? double(in.mean_V()) : 1.0;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < P; ++p) {
      Eigen::Map<const Eigen::ArrayXf> x(logits.data() + p * V, V), y(multi_hot.data() + p * V, V);
      Eigen::Map<Eigen::ArrayXf> g(grad.data() + p * V, V);
      // Element loss softplus(x) − y·x, summed per position in float64.
      const auto element_loss = x.max(0.0f) + (-x.abs()).exp().log1p() - y * x;
      out.per_position_loss[p] = element_loss.cast<double>().sum() / V_div;
      const float gw = float(s * in.weight(p));
      g = gw * ((1.0f + (-x).exp()).inverse() - y);
      const auto pred = (x > 0.0f);
      const int64_t tp = (pred && (y > 0.5f)).count();
      const int64_t pos = (y > 0.5f).count();
      const int64_t predicted = pred.count();
      out.counts[p * 4 + kTP] = tp;
      out.counts[p * 4 + kFP] = predicted - tp;
      out.counts[p * 4 + kFN] = pos - tp;
      out.counts[p * 4 + kTN] = V - predicted - (pos - tp);
    }
    out.reduce_loss(in);

    auto Gm = cmat(grad.data(), P, V, V);
    auto Am = cmat(in.A, P, D, D);
    for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {
      mat(out.dA.data() + p0 * D, rows, D, D).noalias() = cmat(grad.data() + p0 * V, rows, V, V) * Em;
    });
    for_each_fixed_panel(V, threads, [&](int64_t v0, int64_t rows) {
      mat(out.dE.data() + v0 * D, rows, D, D).noalias() = Gm.middleCols(v0, rows).transpose() * Am;
    }, /*panel_rows=*/256);
    require_finite_outputs(in, out, name());
  }
};

LOBENCH_REGISTER_VARIANT(DenseVariant);

}  // namespace
}  // namespace lobench::cpu
