// Internal: the constants every rounding kernel needs, derived once from a Format. The scalar
// reference is the host/device implementation in device_rounding.hpp (round_bits, round_hd,
// encode_hd), which takes a Plan as its DevicePlan; the SIMD kernels must match it bit for bit.
//
// The SIMD translation units include this before they switch their target ISA, so these inline
// functions are compiled for the baseline ISA everywhere (no AVX-512 copy can leak into portable code).
#pragma once

#include <cstdint>

#include "precision_sim/device_rounding.hpp"
#include "precision_sim/rounding.hpp"

namespace lobench::precision::detail {

using SignedResult = DeviceSignedResult;

// The scalar constants (DevicePlan) and what only the host's SIMD kernels use.
struct Plan : DevicePlan {
  bool simd;                // the SIMD kernels handle this format (signed, with zero)
  bool pattern_everywhere;  // target subnormals = float32 subnormals (bfloat16-like): one fixed shift
  uint32_t min_normal_bits; // emin_f << 23
  float sub_step;           // 2^sub_exp: grid spacing below the smallest normal
};

}  // namespace lobench::precision::detail
