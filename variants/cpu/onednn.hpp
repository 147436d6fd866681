// oneDNN (Intel's oneAPI Deep Neural Network Library: Debian's libdnnl, the library PyTorch's CPU matmul
// runs on), where the build found it (libdnnl-dev): one more product for the yardsticks, because the
// yardstick is the best product this CPU has, not ours (issue 44). On a Xeon with AMX its bf16 matmul
// read 453–532 GFLOP/s at 4096³ where our AMX products read 380; on the Zen 5 (family 26) its sgemm read
// 5–8 % faster than our own micro-kernels at 4096³ on 2 threads, and OpenBLAS 0.3.21 (held to Haswell
// kernels) at half that (results/cpu/performance.md, "oneDNN in the yardsticks").
//
// Two uses: single-precision products on the calling thread (cpu::sgemm with LOBENCH_GEMM=onednn, and a
// path of the yardstick at a row's shape), and square products on a number of threads (the machine's
// limits, fp32 and bf16). Called inside an active OpenMP team (omp_in_parallel), oneDNN runs on the calling
// thread alone and its result does not depend on the team's size (tested); its multithreaded products
// split sums by the thread count, which only the meters use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace lobench::cpu {

// omp_get_max_threads() set to `threads` for its lifetime, on the calling thread (oneDNN's threads outside
// an active team: its products split their sums by that count).
class OmpMaxThreads {
 public:
  explicit OmpMaxThreads(int threads);
  ~OmpMaxThreads();
  OmpMaxThreads(const OmpMaxThreads&) = delete;
  OmpMaxThreads& operator=(const OmpMaxThreads&) = delete;

 private:
  int saved_;
};

// Why oneDNN cannot run here ("lobench was built without oneDNN (...)"), or nothing.
std::optional<std::string> onednn_unavailable();

// "oneDNN 2.6.3 (ISA ...)": the version and the instruction set its kernels run.
std::string onednn_name();

// C[M, N] = op(A)·op(B) (+ C with accumulate), row-major, through dnnl_sgemm; op(A) [M, K] is A [M, K]
// or, transposed, A [K, M] (rows lda apart), op(B) likewise. On the calling thread inside an active OpenMP
// team, on omp_get_max_threads() threads outside one (cpu::sgemm_using holds it to one there). Throws std::runtime_error where oneDNN is unavailable or
// refuses the call.
void onednn_sgemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate);

// The n×n·n×n product of bf16 operands (the 16-bit patterns of a and b, row-major, which must outlive
// it) into float32 C, through oneDNN's matmul primitive, made once: each call runs it on
// omp_get_max_threads() threads (set when it is made and when it runs). Throws std::runtime_error where
// oneDNN is unavailable or refuses the product.
class OnednnBf16SquareProduct {
 public:
  OnednnBf16SquareProduct(int64_t n, const uint16_t* a, const uint16_t* b);
  ~OnednnBf16SquareProduct();
  OnednnBf16SquareProduct(const OnednnBf16SquareProduct&) = delete;
  OnednnBf16SquareProduct& operator=(const OnednnBf16SquareProduct&) = delete;
  void operator()();
  // The implementation oneDNN chose, e.g. "brg:avx512_core_amx" or "brg:avx512_core_bf16".
  std::string implementation() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Logit tiles of bf16 operands through oneDNN's matmul primitive (the product at a bf16 row's shape,
// harness/meters/shape_gemm.hpp): C[rows, n] (rows ldc floats apart) = A_rows[rows, D]·E_rows[n, D]ᵀ, with A
// and E the bf16 patterns, row-major, D apart, and float32 C. One primitive per tile shape, made on its
// first call (thread-safe); each call runs on the calling thread inside an active OpenMP team. Throws
// std::runtime_error where oneDNN is unavailable or refuses the product.
class OnednnBf16TileLogits {
 public:
  explicit OnednnBf16TileLogits(int64_t D);
  ~OnednnBf16TileLogits();
  OnednnBf16TileLogits(const OnednnBf16TileLogits&) = delete;
  OnednnBf16TileLogits& operator=(const OnednnBf16TileLogits&) = delete;
  void operator()(const uint16_t* A_rows, int64_t rows, const uint16_t* E_rows, int64_t n, float* C, int64_t ldc);
  // Makes the primitive of a tile shape now (outside any parallel region, where a refusal can be caught).
  void prepare(int64_t rows, int64_t n, int64_t ldc);
  // The implementation oneDNN chose for the last shape made ("" before any).
  std::string implementation() const;

  struct State;  // (oneDNN's objects; defined in onednn.cpp only)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace lobench::cpu
