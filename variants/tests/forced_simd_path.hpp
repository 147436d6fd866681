// Forces the element-wise kernels' instruction-set path for a scope (cpu::set_active_simd_path) and
// restores the automatic choice however the test ends, an ASSERT leaving early included.
#pragma once

#include "variants/bce/bce_tile.hpp"

namespace lobench::testing {

struct ForcedSimdPath {
  explicit ForcedSimdPath(cpu::SimdPath p) { cpu::set_active_simd_path(p); }
  ~ForcedSimdPath() { cpu::set_active_simd_path(std::nullopt); }
  ForcedSimdPath(const ForcedSimdPath&) = delete;
  ForcedSimdPath& operator=(const ForcedSimdPath&) = delete;
};

}  // namespace lobench::testing
