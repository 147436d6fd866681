// What every test of bf16 operands needs (variants, train-xmc's head, train-seqrec's loss): forcing one
// bf16 product kernel for a scope, the kernels to run (both scalar models on every CPU, the instructions
// this CPU has), and inputs rounded to bf16 the way the kernels round them.
#pragma once

#include <optional>
#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/cpu/bf16_products.hpp"

namespace lobench::testing {

// Forces a bf16 kernel (std::nullopt: the automatic choice) and restores the automatic one however the
// test ends. Objects that pick their kernel at construction must be built inside the scope.
struct ForcedBf16Kernel {
  explicit ForcedBf16Kernel(std::optional<cpu::Bf16Kernel> k) { cpu::set_bf16_kernel(k); }
  ~ForcedBf16Kernel() { cpu::set_bf16_kernel(std::nullopt); }
  ForcedBf16Kernel(const ForcedBf16Kernel&) = delete;
  ForcedBf16Kernel& operator=(const ForcedBf16Kernel&) = delete;
};

// The scalar models on every CPU, and the kernels this CPU runs.
inline std::vector<cpu::Bf16Kernel> bf16_kernels_to_test() {
  using cpu::Bf16Kernel;
  std::vector<Bf16Kernel> k = {Bf16Kernel::emulated, Bf16Kernel::emulated_amx};
  if (!cpu::bf16_simd_unavailable()) k.insert(k.end(), {Bf16Kernel::avx512_bf16, Bf16Kernel::avx512_fma});
  if (!cpu::bf16_amx_unavailable()) k.push_back(Bf16Kernel::amx_bf16);
  return k;
}

// x rounded to bf16 (nearest-even), kept as float32.
inline std::vector<float> rounded_bf16(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  precision::Quantizer(precision::formats::bfloat16()).round(x, out);
  return out;
}

}  // namespace lobench::testing
