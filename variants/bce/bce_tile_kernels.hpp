// The table of tile kernels one instruction set provides (what bce_tile.hpp dispatches between).
// Kept free of anything that emits code, because the per-instruction-set translation units that
// define the tables include it under their own compiler flags.
#pragma once

#include <cstdint>

namespace lobench::cpu {

// Instruction sets the tile kernels are compiled for, worst to best.
enum class SimdPath {
  portable,  // plain C++ for the build's target: the fallback on any CPU
  avx2,      // AVX2 + FMA, 8 floats per vector
  avx512,    // AVX-512 F/DQ, 16 floats per vector
};

// The tile kernels of one instruction set.
struct BceTileKernels {
  SimdPath path;
  // loss_rows[r] += Σ_j softplus(x[r, j]) (float64 accumulation); predicted_rows[r] += #{j : x[r, j] > 0}.
  void (*softplus_rows)(const float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                        int64_t* predicted_rows);
  // x[r, j] <- row_scale[r] · σ(x[r, j]), the background logit gradient.
  void (*sigmoid_scaled)(float* X, int64_t rows, int64_t cols, int64_t ld, const float* row_scale);
  // Both at once (the fused variant): accumulates the loss and counts, then overwrites x with the
  // gradient, from one exponential per logit.
  void (*softplus_and_sigmoid)(float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                               int64_t* predicted_rows, const float* row_scale);
  // softplus(x[i]) and σ(x[i]) element by element: what the tests hold to float64 math.
  void (*softplus_sigmoid_elements)(const float* x, int64_t n, float* softplus, float* sigmoid);
};

// Defined by bce_tile_portable.cpp, and by bce_tile_avx2.cpp / bce_tile_avx512.cpp where the build
// compiles them (LOBENCH_SIMD_AVX2 / LOBENCH_SIMD_AVX512).
extern const BceTileKernels kBceTileKernelsPortable;
extern const BceTileKernels kBceTileKernelsAvx2;
extern const BceTileKernels kBceTileKernelsAvx512;
// The portable kernels with every operation rounded to bfloat16 or binary16 (bce_tile_rounded.cpp; the
// epilogue precisions of variants/epilogue.hpp).
extern const BceTileKernels kBceTileKernelsBf16Epilogue;
extern const BceTileKernels kBceTileKernelsFp16Epilogue;

}  // namespace lobench::cpu
