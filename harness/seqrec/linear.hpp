// A fully connected layer y = x·W + b on rows: x [R, in], W [in, out], b [out], y [R, out].
// Used by the attention (QKV and output projections) and the feed-forward layer.
#pragma once

#include <string>

#include "harness/seqrec/parameters.hpp"

namespace lobench::seqrec {

class Linear {
 public:
  Linear() = default;
  Linear(ParameterSet& params, const std::string& name, int64_t in, int64_t out);

  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  ParamRef weight() const { return W_; }
  ParamRef bias() const { return b_; }
  // W ~ N(0, std²) drawn from (seed, stream), b = 0.
  void init(ParameterSet& params, uint64_t seed, uint64_t stream, float std) const;

  void forward(const ParameterSet& params, const float* x, int64_t rows, float* y, int threads) const;
  // From dy [R, out] and the forward's input x: dW += xᵀ·dy, db += Σ_r dy, and dx = dy·Wᵀ (when dx is
  // not null; overwritten).
  void backward(ParameterSet& params, const float* x, const float* dy, int64_t rows, float* dx, int threads) const;

 private:
  int64_t in_ = 0, out_ = 0;
  ParamRef W_, b_;
};

// Fills `out` with N(0, std²) values from (seed, stream): element i depends only on (seed, stream, i).
void fill_normal(float* out, int64_t n, uint64_t seed, uint64_t stream, float std);

}  // namespace lobench::seqrec
