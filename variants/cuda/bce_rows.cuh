// The element-wise BCE kernel over a materialised logit block (the `dense` and `chunked` GPU variants):
// for rows p < P and the block's columns v0 .. v0+cols−1 of the vocabulary,
//   G[p, c]              = s·w_p·(σ(x) − y)          (written in place over the logits, or to a bf16 copy)
//   per_position_loss[p] += Σ_c softplus(x) − y·x     (float64; the mean's 1/V comes at the end)
//   counts[p]            += TP, FP, FN, TN at x > 0
// One block of threads per row; every sum is a fixed tree, so results are the same run after run.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace lobench::cuda {

struct BceRowsArgs {
  const float* logits = nullptr;  // [P, ld] block of logits (column c = vocabulary id v0 + c)
  int64_t ld = 0;
  int64_t P = 0, cols = 0, v0 = 0;
  const int32_t* tgt = nullptr;  // [P, L] unique valid ids, −1 elsewhere (launch_unique_targets)
  int64_t L = 0;
  const float* weights = nullptr;  // [P]
  float scale = 0.0f;              // s
  double* per_position_loss = nullptr;
  long long* counts = nullptr;  // [P, 4]
  bool first = false;           // the first block of the step: overwrite the sums instead of adding
};

// G may alias `logits` (same pointer and ld) when it is float.
void launch_bce_rows(const BceRowsArgs& a, float* G, int64_t ldg, cudaStream_t s);
void launch_bce_rows(const BceRowsArgs& a, __nv_bfloat16* G, int64_t ldg, cudaStream_t s);

// The most positive slots per position the kernel takes (its shared-memory table).
constexpr int64_t kMaxTargetsPerPosition = 4096;

}  // namespace lobench::cuda
