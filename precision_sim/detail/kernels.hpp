// Internal: the array kernels (round to float32, round and encode to 8- or 16-bit codes) and one
// table of them per instruction set. Every table computes exactly what detail::round_bits (device_rounding.hpp) computes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "precision_sim/detail/plan.hpp"

namespace lobench::precision::detail {

struct KernelArgs {
  const Plan* plan;
  Rounding mode;
  int sr_bits;           // resolved k (1..31)
  uint64_t seed;
  uint64_t stream;
  uint64_t first_index;  // global index of in[0] (selects the random words)
  // Output much larger than the caches: use non-temporal stores (no read-for-ownership of the output
  // lines, ~1/3 less memory traffic for float32 -> bf16). Deterministic modes only; never changes results.
  bool streaming = false;
};

using RoundKernel = void (*)(const float* in, float* out, size_t n, const KernelArgs& args);
using Encode8Kernel = void (*)(const float* in, uint8_t* out, size_t n, const KernelArgs& args);
using Encode16Kernel = void (*)(const float* in, uint16_t* out, size_t n, const KernelArgs& args);

struct KernelTable {
  const char* isa;
  RoundKernel round;
  Encode8Kernel encode8;
  Encode16Kernel encode16;
};

const KernelTable& scalar_kernels();
// nullptr when the compiler cannot target that ISA (non-x86 builds). Whether the CPU can run it is
// checked separately (simd.hpp).
const KernelTable* avx2_kernels();
const KernelTable* avx512_kernels();

// Scalar loops over [i, i + n) used for heads and tails by every ISA (so they agree by construction).
void scalar_round(const float* in, float* out, size_t n, const KernelArgs& args);
void scalar_encode8(const float* in, uint8_t* out, size_t n, const KernelArgs& args);
void scalar_encode16(const float* in, uint16_t* out, size_t n, const KernelArgs& args);

}  // namespace lobench::precision::detail
