// GPT-2's position-wise feed-forward layer: y = GELU(x·W1 + b1)·W2 + b2 with a hidden width of 4·D and
// the tanh form of GELU (GPT-2's "gelu_new", PyTorch approximate='tanh').
#pragma once

#include <string>

#include "variants/counting_allocator.hpp"
#include "harness/seqrec/linear.hpp"

namespace lobench::seqrec {

// GELU (tanh form) over n values with Eigen's vectorized tanh: y = GELU(x); and its backward in
// place, dy *= GELU'(x). Element-wise, so independent of any threading of the callers.
void gelu_tanh(const float* x, float* y, int64_t n);
void gelu_tanh_backward(const float* x, float* dy, int64_t n);
// One value through the same code (for tests).
float gelu_tanh(float x);
float gelu_tanh_grad(float x);

class FeedForward {
 public:
  FeedForward() = default;
  FeedForward(ParameterSet& params, const std::string& name, int64_t D, int64_t hidden, int64_t max_rows, int threads);
  // Bytes allocate() takes: pre-activation, activation and its gradient, each [rows, hidden].
  static int64_t activation_bytes(int64_t hidden, int64_t max_rows) { return 3 * 4 * max_rows * hidden; }
  void allocate(CountingAllocator& alloc);
  void init(ParameterSet& params, uint64_t seed, uint64_t stream, float std, float out_std) const;

  // x [R, D] kept alive by the caller until backward; y [R, D].
  void forward(const ParameterSet& params, const float* x, int64_t rows, float* y);
  void backward(ParameterSet& params, const float* x, const float* dy, int64_t rows, float* dx);

 private:
  int64_t hidden_ = 0, max_rows_ = 0;
  int threads_ = 1;
  Linear fc_, out_;
  Buffer<float> pre_, act_, dact_;
};

}  // namespace lobench::seqrec
