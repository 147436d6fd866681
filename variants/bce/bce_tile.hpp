// The element-wise part of the BCE step on one logit tile, shared by the chunked and fused CPU variants
// so that they differ only in how they schedule the products around it.
//
// A tile is row-major: `rows` positions × `cols` vocabulary entries, rows `ld` floats apart. Only the
// dense "every label negative" background is handled here; the sparse correction at the targets
// (−x in the loss, −s·w in the gradient, the TP count) is applied by the caller from SparseTargets.
//
// On a fused CPU kernel this part, not the products, decides the speed (references.md), so it is
// vectorised by hand: one translation unit per instruction set, each compiled with its own flags from
// the same templates (bce_math.hpp, bce_tile_loops.hpp), and the best one this CPU runs is chosen at
// run time. The build's own -march does not matter: the AVX-512 path is used on an AVX-512 CPU even
// in a generic build, and never on a CPU without it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "variants/bce/bce_tile_kernels.hpp"
#include "variants/epilogue.hpp"

namespace lobench::cpu {

std::string to_string(SimdPath p);
std::optional<SimdPath> parse_simd_path(const std::string& s);

// Paths compiled into this binary that this CPU can run, best first (portable is always there).
std::vector<SimdPath> available_simd_paths();

// The kernels of one path; throws std::invalid_argument if it is not available here.
const BceTileKernels& bce_tile_kernels(SimdPath path);

// The kernels the variants use: the best available path, unless the environment variable
// LOBENCH_ISA forces one (portable, avx2, avx512; precision_sim/cpu_dispatch.hpp) or set_active_simd_path chose one.
const BceTileKernels& active_bce_tile_kernels();

// The kernels of an epilogue precision (variants/epilogue.hpp): active_bce_tile_kernels() for fp32, the
// rounded kernels of bce_tile_rounded.cpp for bf16 and fp16.
const BceTileKernels& bce_tile_kernels_for(Epilogue e);

// in rounded to the grid of bfloat16 or binary16 (nearest even; overflow to ±inf), as the rounded kernels
// round each operation (their tests compare this with precision_sim's rounding).
void round_to_bf16_grid(const float* in, int64_t n, float* out);
void round_to_fp16_grid(const float* in, int64_t n, float* out);
// out[i] = a[i]·b[i] + c[i] as the rounded kernels compute a multiply-add in epilogue e (fp32: std::fma),
// for their tests.
void epilogue_fma(Epilogue e, const float* a, const float* b, const float* c, int64_t n, float* out);

// Forces a path for every later run in this process (tests and benchmarks compare the paths);
// std::nullopt returns to the automatic choice. Throws if the path is not available. Not for use while
// a variant is running.
void set_active_simd_path(std::optional<SimdPath> path);

}  // namespace lobench::cpu
