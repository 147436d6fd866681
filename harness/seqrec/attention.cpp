#include "harness/seqrec/attention.hpp"

#include <omp.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "variants/cpu/sgemm.hpp"

namespace lobench::seqrec {

namespace {
using cpu::Op;
using cpu::sgemm;

bool key_visible(const int32_t* ids, int64_t i, int64_t j) { return j <= i && (ids[j] != 0 || j == i); }
}  // namespace

CausalSelfAttention::CausalSelfAttention(ParameterSet& params, const std::string& name, int64_t D, int64_t heads,
                                         int64_t max_batch, int64_t N, int threads)
    : D_(D), H_(heads), dh_(heads > 0 ? D / heads : 0), max_batch_(max_batch), N_(N), threads_(threads),
      qkv_(params, name + ".qkv", D, 3 * D), proj_(params, name + ".proj", D, D) {
  if (heads <= 0 || D % heads != 0) throw std::invalid_argument("attention: D must be a multiple of the head count");
}

int64_t CausalSelfAttention::activation_bytes(int64_t D, int64_t heads, int64_t max_batch, int64_t N, int threads) {
  const int64_t R = max_batch * N;
  return 4 * (2 * R * 3 * D + max_batch * heads * N * N + 2 * R * D + int64_t(threads) * N * N);
}

void CausalSelfAttention::allocate(CountingAllocator& alloc) {
  const int64_t R = max_batch_ * N_;
  qkv_buf_ = Buffer<float>(alloc, R * 3 * D_);
  probs_ = Buffer<float>(alloc, max_batch_ * H_ * N_ * N_);
  ctx_ = Buffer<float>(alloc, R * D_);
  dqkv_ = Buffer<float>(alloc, R * 3 * D_);
  dctx_ = Buffer<float>(alloc, R * D_);
  dscore_ = Buffer<float>(alloc, int64_t(threads_) * N_ * N_);
}

void CausalSelfAttention::init(ParameterSet& params, uint64_t seed, uint64_t stream, float std, float out_std) const {
  qkv_.init(params, seed, stream, std);
  proj_.init(params, seed, stream + 1, out_std);
}

void CausalSelfAttention::forward(const ParameterSet& params, const float* x, const int32_t* ids, int64_t B, float* y) {
  if (B > max_batch_) throw std::invalid_argument("attention: batch larger than allocated");
  const int64_t N = N_, D = D_, dh = dh_, R = B * N;
  qkv_.forward(params, x, R, qkv_buf_.data(), threads_);
  const float scale = 1.0f / std::sqrt(float(dh));
  const cpu::ProductsOnCallingThread products_on_calling_thread;  // one head's products per thread
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t bh = 0; bh < B * H_; ++bh) {
    const int64_t b = bh / H_, h = bh % H_;
    const float* base = qkv_buf_.data() + b * N * 3 * D;  // rows of [q | k | v], 3D floats apart
    const float *Q = base + h * dh, *K = base + D + h * dh, *Vh = base + 2 * D + h * dh;
    const int32_t* id = ids + b * N;
    float* P = probs_.data() + bh * N * N;
    sgemm(Op::none, Op::transpose, N, N, dh, Q, 3 * D, K, 3 * D, P, N, false);  // scores Q·Kᵀ
    for (int64_t i = 0; i < N; ++i) {
      float* p = P + i * N;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j <= i; ++j)
        if (key_visible(id, i, j)) mx = std::max(mx, p[j] * scale);
      double sum = 0.0;
      for (int64_t j = 0; j < N; ++j) {
        const float e = key_visible(id, i, j) ? std::exp(p[j] * scale - mx) : 0.0f;
        p[j] = e;
        sum += e;
      }
      const float inv = float(1.0 / sum);
      for (int64_t j = 0; j <= i; ++j) p[j] *= inv;
    }
    sgemm(Op::none, Op::none, N, dh, N, P, N, Vh, 3 * D, ctx_.data() + b * N * D + h * dh, D, false);  // P·V
  }
  proj_.forward(params, ctx_.data(), R, y, threads_);
}

void CausalSelfAttention::backward(ParameterSet& params, const float* x, const int32_t* /*ids: the mask is in P*/, int64_t B,
                                   const float* dy, float* dx) {
  const int64_t N = N_, D = D_, dh = dh_, R = B * N;
  proj_.backward(params, ctx_.data(), dy, R, dctx_.data(), threads_);
  const float scale = 1.0f / std::sqrt(float(dh));
  const cpu::ProductsOnCallingThread products_on_calling_thread;  // one head's products per thread
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t bh = 0; bh < B * H_; ++bh) {
    const int64_t b = bh / H_, h = bh % H_;
    const float* base = qkv_buf_.data() + b * N * 3 * D;  // rows of [q | k | v], 3D floats apart
    float* dbase = dqkv_.data() + b * N * 3 * D;
    const float *Q = base + h * dh, *K = base + D + h * dh, *Vh = base + 2 * D + h * dh;
    float *dQ = dbase + h * dh, *dK = dbase + D + h * dh, *dV = dbase + 2 * D + h * dh;
    const float* dO = dctx_.data() + b * N * D + h * dh;  // rows D floats apart
    const float* P = probs_.data() + bh * N * N;
    float* dS = dscore_.data() + int64_t(omp_get_thread_num()) * N * N;
    sgemm(Op::transpose, Op::none, N, dh, N, P, N, dO, D, dV, 3 * D, false);  // dV = Pᵀ·dO
    sgemm(Op::none, Op::transpose, N, N, dh, dO, D, Vh, 3 * D, dS, N, false);  // dP = dO·Vᵀ
    // Softmax backward: dS = P ⊙ (dP − Σ_j dP ⊙ P), then the 1/sqrt(d_h) of the scores.
    for (int64_t i = 0; i < N; ++i) {
      const float* p = P + i * N;
      float* ds = dS + i * N;
      double dot = 0.0;
      for (int64_t j = 0; j <= i; ++j) dot += double(ds[j]) * p[j];
      for (int64_t j = 0; j < N; ++j) ds[j] = p[j] * (ds[j] - float(dot)) * scale;
    }
    sgemm(Op::none, Op::none, N, dh, N, dS, N, K, 3 * D, dQ, 3 * D, false);       // dQ = dS·K
    sgemm(Op::transpose, Op::none, N, dh, N, dS, N, Q, 3 * D, dK, 3 * D, false);  // dK = dSᵀ·Q
  }
  qkv_.backward(params, x, dqkv_.data(), R, dx, threads_);
}

}  // namespace lobench::seqrec
