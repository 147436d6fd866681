// The element-wise part of the BCE step on the GPU, shared by every CUDA kernel that consumes logits.
//
// Per logit x, with e = exp(−|x|) ∈ (0, 1] (the same stable form as the CPU kernels, bce_math.hpp):
//   softplus(x) = max(x, 0) + log1p(e),   σ(x) = 1/(1+e) for x > 0, else e/(1+e)
// and the element loss is softplus(x) − y·x, the gradient s·w·(σ(x) − y).
//
// exp uses the hardware approximation (__expf: relative error ≲ 2^-21 over the logit range that matters,
// results below 2^-126 flushed to 0, where they change neither σ nor the loss by more than 1e-38);
// log1p is the accurate library function, because the loss is summed over up to 10^7 elements per
// position and a biased log would not average out.
#pragma once

#include <cuda_runtime.h>

namespace lobench::cuda {

struct SoftplusSigmoid {
  float softplus;
  float sigmoid;
};

__device__ __forceinline__ SoftplusSigmoid softplus_sigmoid(float x) {
  const float e = __expf(-fabsf(x));
  const float r = 1.0f / (1.0f + e);
  return {fmaxf(x, 0.0f) + log1pf(e), x > 0.0f ? r : e * r};
}

__device__ __forceinline__ float sigmoid(float x) {
  const float e = __expf(-fabsf(x));
  const float r = 1.0f / (1.0f + e);
  return x > 0.0f ? r : e * r;
}

}  // namespace lobench::cuda
