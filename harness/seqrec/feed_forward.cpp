#include "harness/seqrec/feed_forward.hpp"

#include <cmath>
#include <stdexcept>

namespace lobench::seqrec {

float gelu_tanh(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

float gelu_tanh_grad(float x) {
  const float k = 0.7978845608028654f;
  const float t = std::tanh(k * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * 0.044715f * x * x);
}

FeedForward::FeedForward(ParameterSet& params, const std::string& name, int64_t D, int64_t hidden, int64_t max_rows,
                         int threads)
    : hidden_(hidden), max_rows_(max_rows), threads_(threads), fc_(params, name + ".fc", D, hidden),
      out_(params, name + ".out", hidden, D) {}

void FeedForward::allocate(CountingAllocator& alloc) {
  pre_ = Buffer<float>(alloc, max_rows_ * hidden_);
  act_ = Buffer<float>(alloc, max_rows_ * hidden_);
  dact_ = Buffer<float>(alloc, max_rows_ * hidden_);
}

void FeedForward::init(ParameterSet& params, uint64_t seed, uint64_t stream, float std, float out_std) const {
  fc_.init(params, seed, stream, std);
  out_.init(params, seed, stream + 1, out_std);
}

void FeedForward::forward(const ParameterSet& params, const float* x, int64_t rows, float* y) {
  if (rows > max_rows_) throw std::invalid_argument("feed-forward: more rows than allocated");
  fc_.forward(params, x, rows, pre_.data(), threads_);
  const int64_t n = rows * hidden_;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t i = 0; i < n; ++i) act_[i] = gelu_tanh(pre_[i]);
  out_.forward(params, act_.data(), rows, y, threads_);
}

void FeedForward::backward(ParameterSet& params, const float* x, const float* dy, int64_t rows, float* dx) {
  out_.backward(params, act_.data(), dy, rows, dact_.data(), threads_);
  const int64_t n = rows * hidden_;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t i = 0; i < n; ++i) dact_[i] *= gelu_tanh_grad(pre_[i]);
  fc_.backward(params, x, dact_.data(), rows, dx, threads_);
}

}  // namespace lobench::seqrec
