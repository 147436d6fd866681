#include "variants/cuda/bce_rows.cuh"

#include "variants/cuda/bce_element.cuh"
#include "variants/cuda/cuda_check.hpp"
#include "variants/cuda/operand_type.cuh"

namespace lobench::cuda {
namespace {

constexpr int kThreads = 256;

template <typename TG>
__global__ void __launch_bounds__(kThreads) bce_rows_kernel(BceRowsArgs a, TG* G, int64_t ldg) {
  extern __shared__ unsigned char smem_raw[];
  float* target_logit = reinterpret_cast<float*>(smem_raw);               // [L]
  int* target_col = reinterpret_cast<int*>(smem_raw + a.L * sizeof(float));  // [L], −1: not in this block
  __shared__ double loss_part[kThreads];
  __shared__ int pos_part[kThreads], tp_part[kThreads], fn_part[kThreads];

  const int64_t row = blockIdx.x;
  const float* z = a.logits + row * a.ld;
  TG* g = G + row * ldg;
  const float sw = a.scale * a.weights[row];

  // 1. The row's positives inside this block, read before the logits may be overwritten in place.
  for (int64_t l = threadIdx.x; l < a.L; l += blockDim.x) {
    const int32_t id = a.tgt[row * a.L + l];
    const bool here = id >= a.v0 && id < a.v0 + a.cols;
    target_col[l] = here ? int(id - a.v0) : -1;
    target_logit[l] = here ? z[id - a.v0] : 0.0f;
  }
  __syncthreads();

  // 2. Every column as a negative (y = 0).
  double loss = 0.0;
  int pos = 0;
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
    const float x = z[c];
    const SoftplusSigmoid f = softplus_sigmoid(x);
    loss += double(f.softplus);
    pos += x > 0.0f;
    g[c] = to_operand<TG>(sw * f.sigmoid);
  }
  __syncthreads();  // the negatives' writes are done before the positives overwrite theirs

  // 3. The positives: y = 1 changes the element loss by −x and the gradient to s·w·(σ(x) − 1).
  int tp = 0, fn = 0;
  for (int64_t l = threadIdx.x; l < a.L; l += blockDim.x) {
    const int c = target_col[l];
    if (c < 0) continue;
    const float x = target_logit[l];
    g[c] = to_operand<TG>(-sw * sigmoid(-x));  // σ(x) − 1 = −σ(−x), without cancellation
    loss -= double(x);
    tp += x > 0.0f;
    fn += !(x > 0.0f);
  }

  loss_part[threadIdx.x] = loss;
  pos_part[threadIdx.x] = pos;
  tp_part[threadIdx.x] = tp;
  fn_part[threadIdx.x] = fn;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (int(threadIdx.x) < s) {
      loss_part[threadIdx.x] += loss_part[threadIdx.x + s];
      pos_part[threadIdx.x] += pos_part[threadIdx.x + s];
      tp_part[threadIdx.x] += tp_part[threadIdx.x + s];
      fn_part[threadIdx.x] += fn_part[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const long long P_ = pos_part[0], TP = tp_part[0], FN = fn_part[0];
    const long long c4[4] = {TP, P_ - TP, FN, (long long)a.cols - P_ - FN};
    long long* cnt = a.counts + row * 4;
    if (a.first) {
      a.per_position_loss[row] = loss_part[0];
      for (int k = 0; k < 4; ++k) cnt[k] = c4[k];
    } else {
      a.per_position_loss[row] += loss_part[0];
      for (int k = 0; k < 4; ++k) cnt[k] += c4[k];
    }
  }
}

template <typename TG>
void launch(const BceRowsArgs& a, TG* G, int64_t ldg, cudaStream_t s) {
  if (a.P == 0) return;
  const size_t smem = size_t(a.L) * (sizeof(float) + sizeof(int));
  bce_rows_kernel<TG><<<unsigned(a.P), kThreads, smem, s>>>(a, G, ldg);
  LOBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_bce_rows(const BceRowsArgs& a, float* G, int64_t ldg, cudaStream_t s) { launch(a, G, ldg, s); }
void launch_bce_rows(const BceRowsArgs& a, __nv_bfloat16* G, int64_t ldg, cudaStream_t s) { launch(a, G, ldg, s); }

}  // namespace lobench::cuda
