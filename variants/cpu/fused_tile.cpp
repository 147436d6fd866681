#include "variants/cpu/fused_tile.hpp"

#include <algorithm>
#include <atomic>

#include "variants/bce/bce_tile.hpp"

namespace lobench::cpu {

#if defined(LOBENCH_SIMD_AVX512)
extern const OwnTileKernels kOwnTileKernelsAvx512;  // fused_tile_avx512.cpp
#endif

namespace {
std::atomic<bool> own_enabled{true};
}  // namespace

void set_own_tile_kernels_enabled(bool enabled) { own_enabled = enabled; }

bool own_tile_kernels_available() {
#if defined(LOBENCH_SIMD_AVX512)
  // The tile kernels' path already says what this CPU runs and what LOBENCH_ISA allows.
  return active_bce_tile_kernels().path == SimdPath::avx512;
#else
  return false;
#endif
}

const OwnTileKernels* own_tile_kernels() {
  if (!own_enabled || !own_tile_kernels_available()) return nullptr;
#if defined(LOBENCH_SIMD_AVX512)
  return &kOwnTileKernelsAvx512;
#else
  return nullptr;
#endif
}

void transpose_rows(const float* A, int64_t P, int64_t D, float* At, int64_t ldat) {
  constexpr int64_t kBlock = 32;  // a 32 × 32 block at a time: both sides stay in L1
  for (int64_t p0 = 0; p0 < P; p0 += kBlock)
    for (int64_t d0 = 0; d0 < D; d0 += kBlock)
      for (int64_t d = d0; d < std::min(D, d0 + kBlock); ++d)
        for (int64_t p = p0; p < std::min(P, p0 + kBlock); ++p) At[d * ldat + p] = A[p * D + d];
}

}  // namespace lobench::cpu
