// The machine's SGEMM limit, the yardstick of every CPU row's %GEMM: the rate of a large square
// single-precision product by Eigen (with its own OpenMP threading), by OpenBLAS (Debian's libopenblas,
// loaded at run time: the BLAS NumPy, Debian's PyTorch and most frameworks call) and by lobench's own
// micro-kernels (the tiled variants' products, variants/cpu/fused_tile.hpp, where the CPU runs them), and
// by oneDNN (where the build found it: the library PyTorch's CPU matmul runs on). The
// fastest is "the best SGEMM" of docs/method.md#the-yardstick: on a CPU the libraries do not know (Debian's
// OpenBLAS 0.3.21 on AMD Zen 5, or any OpenBLAS held to older kernels by OPENBLAS_CORETYPE) our own
// products outrun them, and a yardstick below the variants' own products would put rows above 100 %.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "variants/aligned_vector.hpp"

namespace lobench::meters {

// The values every product a meter times reads: n floats in [-1, 1) on a 0.001 grid, from the index times
// `step` (kOperandStepA for the left operand, kOperandStepB for the right), as Eigen's Random but the same
// in every run and for every library. On whole cache lines, as the step's buffers are (aligned_vector.hpp
// says what std::vector's 16-byte alignment did to the bf16 yardstick).
inline constexpr uint32_t kOperandStepA = 2654435761u, kOperandStepB = 40503u;
AlignedVector<float> fixed_operand(int64_t n, uint32_t step);

struct SgemmRate {
  double gflops = std::numeric_limits<double>::quiet_NaN();  // median of the timed products
  int64_t n = 0;                                              // the product was n×n · n×n
  int samples = 0;
  std::string library;  // "Eigen 3.4.0", "OpenBLAS 0.3.21 ..." (its config string)
  std::string why;      // why it was not measured (then gflops is NaN)
  std::string note;     // what a reader of the rate should know, said beside it (OpenBLAS held to older kernels)
  std::string kernels;  // OpenBLAS: the kernels its instance ran (openblas_get_corename, e.g. "SkylakeX")
  std::string loaded;   // OpenBLAS: which instance ran (cpu::OpenBlas::loaded: the process's, or a private copy)
};

// C = A·B with A, B n×n float32, on `threads` threads: one untimed product, then at least 3 timed
// ones and until 1 s of them (at most 20).
SgemmRate eigen_square_sgemm(int64_t n, int threads);

// The same through OpenBLAS's cblas_sgemm with openblas_set_num_threads(threads); NaN with `why` set
// when libopenblas.so.0 cannot be loaded.
SgemmRate openblas_square_sgemm(int64_t n, int threads);

// The same through oneDNN's dnnl_sgemm on `threads` threads (variants/cpu/onednn.hpp); NaN with `why` set
// where lobench was built without oneDNN.
SgemmRate onednn_square_sgemm(int64_t n, int threads);

// The same through lobench's own micro-kernels (the dE product of variants/cpu/fused_tile.hpp, a general
// row-major C = A·B), with A and B first copied into the layout those kernels read (timed: OpenBLAS packs
// inside its timing too); NaN with `why` set where the kernels do not run (no AVX-512, LOBENCH_ISA).
SgemmRate own_square_sgemm(int64_t n, int threads);

// C[M×N] = A[M×K]·B[K×N] (all row-major, leading dimensions K, N, N) through our own micro-kernels on
// `threads` threads; false (C untouched) where they do not run. Each C element is one fused multiply-add
// chain in increasing k (the kernels' order), so the result does not depend on `threads`. `copies` holds
// A and B in the kernels' layout; passed in so that repeated products reuse its pages.
struct OwnSgemmCopies {
  AlignedVector<float> a, b;
};
bool own_sgemm(int64_t M, int64_t N, int64_t K, const float* A, const float* B, float* C, int threads,
               OwnSgemmCopies& copies);

// The bf16 counterpart, the yardstick of CPU rows with --operand bf16: C = A·B with A, B n×n rounded
// to bf16 and float32 accumulation, through the products the variants use (variants/cpu/
// bf16_products.hpp: AMX-BF16 where the CPU has it), on `threads` threads (256 × 256 blocks of C dealt
// out, the inner index in blocks of 512 pairs so that a block's operands stay in L2; each call continues
// the same chains, so the blocking changes no bit). The operands are rounded and packed into pairs
// (rows padded by 64 bytes: Bf16SquareGemm) untimed (OpenBLAS packs inside its timing; the bf16 rows
// pack in theirs). NaN with `why` set where the bf16 products cannot run.
SgemmRate bf16_square_gemm(int64_t n, int threads);

// What bf16_square_gemm times: A and B (n × n, row-major float32) rounded to bf16 and packed once, then
// C = A·B (n × n, row-major) as many times as asked. Its own class so that a test can check the product.
class Bf16SquareGemm {
 public:
  Bf16SquareGemm(int64_t n, const float* A, const float* B);
  void multiply(float* C, int threads) const;

 private:
  int64_t n_, n2_, panels_, lda_, ldb_;
  AlignedVector<uint32_t> a_, b_;
};

// oneDNN's bf16 product of the same operands (its matmul primitive: AMX where the CPU has it, AVX512_BF16
// otherwise), on `threads` threads, the operands rounded untimed; NaN with `why` set where lobench was
// built without oneDNN or oneDNN refuses bf16 on this CPU. `library` names the implementation oneDNN chose.
SgemmRate onednn_bf16_square_gemm(int64_t n, int threads);

}  // namespace lobench::meters
