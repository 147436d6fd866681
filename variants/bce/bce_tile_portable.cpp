// The tile kernels for any CPU: the fallback where neither AVX2 nor AVX-512 runs, and the only path of a
// non-x86 build. Written with the GCC/Clang vector extensions (8 floats per vector), which the compiler
// lowers to whatever the build targets (SSE2, NEON, ...) or to scalar code; compiled with the build's
// own flags. Multiply-adds are not fused (a library call where the target has no FMA instruction), so
// results differ from the FMA paths by float rounding only; the tests hold every path to the same bounds.
#include <cstdint>

#include "variants/bce/bce_tile_kernels.hpp"
#include "variants/bce/bce_tile_loops.hpp"

namespace lobench::cpu {
namespace {

#include "variants/bce/bce_vectors_portable.hpp"

}  // namespace

extern const BceTileKernels kBceTileKernelsPortable = bce_loops::kernel_table<Vectors>(SimdPath::portable);

}  // namespace lobench::cpu
