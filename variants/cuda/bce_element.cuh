// The element-wise part of the BCE step on the GPU, shared by every CUDA kernel that consumes logits.
//
// Per logit x, with e = exp(−|x|) ∈ (0, 1] (the same stable form as the CPU kernels, bce_math.hpp):
//   softplus(x) = max(x, 0) + log1p(e),   σ(x) = 1/(1+e) for x > 0, else e/(1+e)
// and the element loss is softplus(x) − y·x, the gradient s·w·(σ(x) − y).
//
// Costs matter here: at D = 128 a 64×64 tile takes about as long in these element-wise functions as in
// its tensor-core products. So: e from one hardware ex2 (ex2.approx.ftz of −|x|·log2 e: the argument's
// rounding gives a relative error of up to ≈ |x|·2^-24·ln 2 plus 2 ulp, ≈ 1e-6 at |x| = 20 where e is
// 2e-9 and moves neither σ nor the loss measurably; results below 2^-126 flush to 0, which changes
// them by less than 1e-38), 1/(1+e) from the hardware reciprocal (__fdividef: one MUFU.RCP, 1+e ∈ [1, 2]),
// and log1p(e) for e ∈ [0, 1] from the CPU kernels' own polynomial (bce_math.hpp, relative error
// 1.1e-7 in float): multiply-adds on the FMA pipe instead of a library call. A float simulation with a
// systematic 2-ulp ex2 bias keeps the loss within 1e-7 relative (tests allow 1e-6).
#pragma once

#include <cuda_runtime.h>

#include "variants/bce/bce_math.hpp"

namespace lobench::cuda {

struct SoftplusSigmoid {
  float softplus;
  float sigmoid;
};

__device__ __forceinline__ float log1p_unit(float e) {
  namespace m = cpu::bce_math;  // the coefficients as immediates (a device function cannot read host arrays)
  constexpr float c[9] = {m::kLog1pCoeffs[0], m::kLog1pCoeffs[1], m::kLog1pCoeffs[2],
                          m::kLog1pCoeffs[3], m::kLog1pCoeffs[4], m::kLog1pCoeffs[5],
                          m::kLog1pCoeffs[6], m::kLog1pCoeffs[7], m::kLog1pCoeffs[8]};
  static_assert(sizeof(m::kLog1pCoeffs) == sizeof(c));
  float acc = c[8];
#pragma unroll
  for (int k = 7; k >= 0; --k) acc = fmaf(acc, e, c[k]);
  return e * acc;
}

// e^{−|x|}: one MUFU.EX2 (__expf would add three instructions to keep subnormal results).
__device__ __forceinline__ float exp_neg_abs(float x) {
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(fabsf(x) * -1.44269504088896341f));
  return e;
}

__device__ __forceinline__ SoftplusSigmoid softplus_sigmoid(float x) {
  const float e = exp_neg_abs(x);
  const float r = __fdividef(1.0f, 1.0f + e);
  return {fmaxf(x, 0.0f) + log1p_unit(e), x > 0.0f ? r : e * r};
}

__device__ __forceinline__ float sigmoid(float x) {
  const float e = exp_neg_abs(x);
  const float r = __fdividef(1.0f, 1.0f + e);
  return x > 0.0f ? r : e * r;
}

}  // namespace lobench::cuda
