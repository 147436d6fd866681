// Variant `reference`: float64, the oracle (see reference.hpp).
#include "variants/reference.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "variants/cpu/eigen_maps.hpp"
#include "variants/cpu/fixed_panels.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {
namespace {

constexpr int64_t kBlockV = 512;

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
double sigmoid(double x) {
  const double e = std::exp(-std::abs(x));
  return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

}  // namespace

int64_t reference_workspace_bytes(int64_t P, int64_t V, int64_t D) {
  const int64_t bv = std::min(kBlockV, V);
  return P * D * 8 + bv * D * 8 + P * bv * 8 + P * bv * 1 + P * 8;
}

void reference_step(const StepInputs& in, ReferenceResult& out, CountingAllocator& alloc, int threads) {
  const int64_t P = in.P, V = in.V, D = in.D, L = in.L;
  const int64_t bv = std::min(kBlockV, V);
  EigenOnCallingThread eigen_sequential;  // products in fixed panels: results independent of threads

  out.per_position_loss = Buffer<double>(alloc, P);
  out.dA = Buffer<double>(alloc, P * D);
  out.dE = Buffer<double>(alloc, V * D);
  out.counts = Buffer<int64_t>(alloc, P * 4);
  out.near_zero = Buffer<int64_t>(alloc, P);

  Buffer<double> A(alloc, P * D), Eb(alloc, bv * D), X(alloc, P * bv), row_sum(alloc, P);
  Buffer<uint8_t> Y(alloc, P * bv);
  for (int64_t i = 0; i < P * D; ++i) A[i] = in.A[i];
  std::fill_n(out.dA.data(), P * D, 0.0);
  std::fill_n(out.counts.data(), P * 4, int64_t(0));
  std::fill_n(out.near_zero.data(), P, int64_t(0));
  std::fill_n(row_sum.data(), P, 0.0);

  const double s = in.gradient_scale();
  auto Am = mat(A.data(), P, D, D);
  for (int64_t v0 = 0; v0 < V; v0 += bv) {
    const int64_t n = std::min(bv, V - v0);
    for (int64_t i = 0; i < n * D; ++i) Eb[i] = in.E[v0 * D + i];
    auto Ebm = mat(Eb.data(), n, D, D);
    auto Xm = mat(X.data(), P, n, bv);
    for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {
      mat(X.data() + p0 * bv, rows, n, bv).noalias() = Am.middleRows(p0, rows) * Ebm.transpose();
    });

    // y[p, v] = 1 iff v is among row p's ids; padding ids fall outside [v0, v0+n) and duplicates
    // simply set the same entry twice.
    std::fill_n(Y.data(), P * bv, uint8_t(0));
    for (int64_t p = 0; p < P; ++p)
      for (int64_t l = 0; l < L; ++l) {
        const int64_t t = in.targets[p * L + l];
        if (t >= v0 && t < v0 + n) Y[p * bv + (t - v0)] = 1;
      }

#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < P; ++p) {
      const double gw = s * in.weight(p);
      for (int64_t j = 0; j < n; ++j) {
        const double x = X[p * bv + j];
        const double y = Y[p * bv + j];
        row_sum[p] += softplus(x) - y * x;
        const bool pred = x > 0;
        out.counts[p * 4 + (y ? (pred ? kTP : kFN) : (pred ? kFP : kTN))] += 1;
        if (std::abs(x) < ReferenceResult::near_zero_band) out.near_zero[p] += 1;
        X[p * bv + j] = gw * (sigmoid(x) - y);  // the logit gradient g
      }
    }
    for_each_fixed_panel(n, threads, [&](int64_t j0, int64_t rows) {
      mat(out.dE.data() + (v0 + j0) * D, rows, D, D).noalias() = Xm.middleCols(j0, rows).transpose() * Am;
    });
    for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {
      mat(out.dA.data() + p0 * D, rows, D, D).noalias() += Xm.middleRows(p0, rows) * Ebm;
    });
  }

  const double V_div = in.reduction == Reduction::mean ? double(in.mean_V()) : 1.0;
  double weighted = 0.0;
  for (int64_t p = 0; p < P; ++p) {
    out.per_position_loss[p] = row_sum[p] / V_div;
    weighted += double(in.weight(p)) * out.per_position_loss[p];
  }
  if (in.reduction == Reduction::mean) {
    const double ws = in.weight_sum();
    out.loss = ws == 0.0 ? 0.0 : weighted / ws;
  } else {
    out.loss = weighted;
  }
}

namespace {

class ReferenceVariant final : public Variant {
 public:
  std::string name() const override { return "reference"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override {
    return "float64 oracle: float64 GEMMs per vocabulary block, plain element-wise loops";
  }
  std::string supports() const override { return "reductions mean|sum, weights, padding, duplicates; float64"; }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions&) const override {
    return ReferenceResult::bytes(s.P(), s.V, s.D) + reference_workspace_bytes(s.P(), s.V, s.D);
  }
  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    ReferenceResult r;
    reference_step(in, r, ctx.alloc, ctx.options.threads);
    out.loss = r.loss;
    std::copy_n(r.per_position_loss.data(), in.P, out.per_position_loss.begin());
    std::copy_n(r.dA.data(), in.P * in.D, out.dA.begin());
    std::copy_n(r.dE.data(), in.V * in.D, out.dE.begin());
    std::copy_n(r.counts.data(), in.P * 4, out.counts.begin());
  }
};

LOBENCH_REGISTER_VARIANT(ReferenceVariant);

}  // namespace
}  // namespace lobench::cpu
