// LayerNorm over the last axis of rows [R, D]: y = γ ⊙ (x − μ)/sqrt(σ² + ε) + β (biased variance, as
// PyTorch / GPT-2). The normalized x̂ and 1/sqrt(σ² + ε) per row are kept for the backward.
#pragma once

#include <string>

#include "variants/counting_allocator.hpp"
#include "harness/seqrec/parameters.hpp"

namespace lobench::seqrec {

class LayerNorm {
 public:
  LayerNorm() = default;
  LayerNorm(ParameterSet& params, const std::string& name, int64_t D, int64_t max_rows, float eps = 1e-5f);
  // What allocate() takes: x̂ [max_rows, D] and rstd [max_rows].
  static int64_t activation_bytes(int64_t D, int64_t max_rows) { return (max_rows * D + max_rows) * 4; }
  void allocate(CountingAllocator& alloc);
  void init(ParameterSet& params) const;  // γ = 1, β = 0

  void forward(const ParameterSet& params, const float* x, int64_t rows, float* y, int threads);
  // dx = ∂/∂x (overwritten), dγ, dβ accumulated.
  void backward(ParameterSet& params, const float* dy, int64_t rows, float* dx, int threads);

  ParamRef gain() const { return gamma_; }
  ParamRef shift() const { return beta_; }

 private:
  int64_t D_ = 0, max_rows_ = 0;
  float eps_ = 1e-5f;
  ParamRef gamma_, beta_;
  Buffer<float> xhat_, rstd_;
};

}  // namespace lobench::seqrec
