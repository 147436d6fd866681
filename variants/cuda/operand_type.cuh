// Converting float32 to a product operand type (float, or bfloat16 rounded to nearest even): what every
// kernel that writes operand tiles or gradient tiles uses.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace lobench::cuda {

template <typename T>
__device__ __forceinline__ T to_operand(float x);
template <>
__device__ __forceinline__ float to_operand<float>(float x) { return x; }
template <>
__device__ __forceinline__ __nv_bfloat16 to_operand<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

}  // namespace lobench::cuda
