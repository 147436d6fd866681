// The fused bf16 tile with its element-wise math in binary16 on AVX512-FP16 (`--epilogue fp16`): the
// kernel of bf16_fused_tile_avx512.cpp compiled again with LOBENCH_FP16_EPILOGUE_TILE, into namespace
// avx512_fp16_epilogue (bf16_fused_tile.hpp). Compiled with AVX512-FP16 flags (variants/CMakeLists.txt)
// and called only where the CPU reports AVX512-FP16 (fp16_epilogue_tile_unavailable()).
#define LOBENCH_FP16_EPILOGUE_TILE 1
#include "variants/cpu/bf16_fused_tile_avx512.cpp"
