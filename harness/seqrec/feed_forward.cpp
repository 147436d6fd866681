#include "harness/seqrec/feed_forward.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace lobench::seqrec {

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
constexpr int64_t kChunk = 1024;  // values per vectorized pass (the backward's tanh on the stack)
}  // namespace

void gelu_tanh(const float* x, float* y, int64_t n) {
  const Eigen::Map<const Eigen::ArrayXf> X(x, n);
  Eigen::Map<Eigen::ArrayXf>(y, n) = 0.5f * X * (1.0f + (kSqrt2OverPi * (X + kCubic * X.cube())).tanh());
}

void gelu_tanh_backward(const float* x, float* dy, int64_t n) {
  float t_buf[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = std::min(kChunk, n - i0);
    const Eigen::Map<const Eigen::ArrayXf> X(x + i0, m);
    Eigen::Map<Eigen::ArrayXf> t(t_buf, m);
    t = (kSqrt2OverPi * (X + kCubic * X.cube())).tanh();
    Eigen::Map<Eigen::ArrayXf>(dy + i0, m) *=
        0.5f * (1.0f + t) + 0.5f * X * (1.0f - t.square()) * kSqrt2OverPi * (1.0f + 3.0f * kCubic * X.square());
  }
}

float gelu_tanh(float x) {
  float y = 0.0f;
  gelu_tanh(&x, &y, 1);
  return y;
}

float gelu_tanh_grad(float x) {
  float g = 1.0f;
  gelu_tanh_backward(&x, &g, 1);
  return g;
}

namespace {
// The element-wise passes in fixed chunks dealt out by OpenMP (chunk boundaries do not depend on the
// thread count).
void for_chunks(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& f) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t c = 0; c < chunks; ++c) f(c * kChunk, std::min(kChunk, n - c * kChunk));
}
}  // namespace

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
  for_chunks(n, threads_, [&](int64_t i0, int64_t m) { gelu_tanh(pre_.data() + i0, act_.data() + i0, m); });
  out_.forward(params, act_.data(), rows, y, threads_);
}

void FeedForward::backward(ParameterSet& params, const float* x, const float* dy, int64_t rows, float* dx) {
  out_.backward(params, act_.data(), dy, rows, dact_.data(), threads_);
  const int64_t n = rows * hidden_;
  for_chunks(n, threads_, [&](int64_t i0, int64_t m) { gelu_tanh_backward(pre_.data() + i0, dact_.data() + i0, m); });
  fc_.backward(params, x, dact_.data(), rows, dx, threads_);
}

}  // namespace lobench::seqrec
