// An example lobench plug-in: the variant `naive_loop`, the BCE step written as the contract reads
// (docs/method.md#what-every-variant-computes), one logit at a time, on one thread. Slow on purpose and obviously correct: a model for
// a plug-in's shape, not a kernel to measure. Build it with lobench_add_plugin (CMakeLists.txt beside
// this file) and run it with `lobench run --plugin naive_loop.so --variants naive_loop,fused ...`.
#include <algorithm>
#include <cmath>
#include <memory>

#include "variants/plugin_api.hpp"
#include "variants/variant.hpp"

namespace {

using lobench::Buffer;

class NaiveLoop final : public lobench::Variant {
 public:
  std::string name() const override { return "naive_loop"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override { return "example plug-in: one logit at a time, one thread"; }
  // Working memory: one byte per vocabulary entry (row p's target flags), allocated through the
  // context's counting allocator, which the engine holds to this prediction.
  int64_t predicted_working_bytes(const lobench::Shape& s, const lobench::RunOptions&) const override { return s.V; }
  void run(const lobench::StepInputs& in, lobench::StepOutputs& out, lobench::RunContext& ctx) const override {
    const int64_t V = in.V, D = in.D, L = in.L;
    Buffer<uint8_t> is_target(ctx.alloc, V);
    std::fill_n(is_target.data(), V, uint8_t(0));
    std::fill(out.dA.begin(), out.dA.end(), 0.0f);
    std::fill(out.dE.begin(), out.dE.end(), 0.0f);
    const double scale = in.gradient_scale();
    const double per_position_divisor = in.reduction == lobench::Reduction::mean ? double(in.mean_V()) : 1.0;
    for (int64_t p = 0; p < in.P; ++p) {
      const int32_t* ids = in.targets + p * L;
      for (int64_t l = 0; l < L; ++l)
        if (ids[l] >= 0 && ids[l] < V) is_target[ids[l]] = 1;  // others are padding; repeats count once
      const float* a = in.A + p * D;
      const double gw = scale * in.weight(p);
      double row_loss = 0.0;
      int64_t* counts = out.counts.data() + p * 4;
      std::fill_n(counts, 4, int64_t(0));
      for (int64_t v = 0; v < V; ++v) {
        const float* e = in.E + v * D;
        float x = 0.0f;
        for (int64_t k = 0; k < D; ++k) x += a[k] * e[k];
        const bool y = is_target[v] != 0, predicted = x > 0.0f;
        row_loss += std::max(double(x), 0.0) + std::log1p(std::exp(-std::abs(double(x)))) - (y ? double(x) : 0.0);
        counts[y ? (predicted ? lobench::kTP : lobench::kFN) : (predicted ? lobench::kFP : lobench::kTN)] += 1;
        const float g = float(gw * (1.0 / (1.0 + std::exp(-double(x))) - (y ? 1.0 : 0.0)));
        for (int64_t k = 0; k < D; ++k) {
          out.dA[p * D + k] += g * e[k];
          out.dE[v * D + k] += g * a[k];
        }
      }
      out.per_position_loss[p] = row_loss / per_position_divisor;
      for (int64_t l = 0; l < L; ++l)
        if (ids[l] >= 0 && ids[l] < V) is_target[ids[l]] = 0;
    }
    out.reduce_loss(in);  // the position-weighted mean or sum of per_position_loss
  }
  // Reads E in float32 (no storage formats): the default skip_reason says so for other formats.
};

}  // namespace

LOBENCH_PLUGIN(registry) { registry.add(std::make_unique<NaiveLoop>()); }
