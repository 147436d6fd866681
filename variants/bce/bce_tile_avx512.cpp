// The tile kernels for AVX-512 (F + DQ), 16 floats per vector. Compiled with its own flags
// (variants/CMakeLists.txt) and only ever called after the CPU reported those features, so it must
// include nothing that emits code shared with other translation units (see bce_math.hpp).
#include <immintrin.h>

#include "variants/bce/bce_tile_kernels.hpp"
#include "variants/bce/bce_tile_loops.hpp"

namespace lobench::cpu {
namespace {

#include "variants/bce/bce_simd_avx512.hpp"

}  // namespace

extern const BceTileKernels kBceTileKernelsAvx512 = bce_loops::kernel_table<Avx512>(SimdPath::avx512);

}  // namespace lobench::cpu
