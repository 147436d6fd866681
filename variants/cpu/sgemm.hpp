// One single-precision product C = op(A)·op(B) (+ C) on the calling thread, through the fastest library
// at hand: OpenBLAS's cblas_sgemm when libopenblas.so.0 loads (variants/cpu/openblas.hpp), else Eigen;
// oneDNN's dnnl_sgemm (variants/cpu/onednn.hpp, where the build found it) when asked for.
//
// Why not always Eigen: on the Zen 3 machines lobench runs on, Eigen 3.4's float micro-kernel reaches
// 59–74 % of OpenBLAS's rate (results/cpu/table2.md), and the tiled variants spend almost all their
// time in products; a framework's dense BCE calls a BLAS too. LOBENCH_GEMM=eigen|openblas|onednn forces one
// library (an unavailable forced library is an error); the choice is made once per process and every
// run file records it (sgemm_library_name()).
//
// Results stay independent of the thread count: every call is one single-threaded product whose
// shapes the caller fixes (tiles, fixed panels), and neither library splits a dot product's sum by
// anything but the shapes when it runs on one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lobench::cpu {

enum class Op { none, transpose };

// C[M, N] (= or +=) op(A)·op(B), every matrix row-major: op(A) is [M, K], stored as A [M, K] (none) or
// [K, M] (transpose) with rows lda floats apart; op(B) is [K, N], stored as B [K, N] or [N, K] with
// rows ldb apart; C's rows are ldc apart. Runs on the calling thread (inside ProductsOnCallingThread).
void sgemm(Op opA, Op opB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
           float* C, int64_t ldc, bool accumulate);

enum class GemmLibrary { eigen, openblas, onednn };

// The same product through a given library (tests compare them; OpenBLAS must be loadable, oneDNN built in).
void sgemm_using(GemmLibrary library, Op opA, Op opB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate);

// The library sgemm() uses: LOBENCH_GEMM if set (throws std::runtime_error naming the problem when it
// is no library lobench knows, OpenBLAS cannot be loaded, or oneDNN is not built in), else OpenBLAS when
// it loads with the kernels lobench chose (openblas.hpp: not OpenBlas::other_kernels), else Eigen.
GemmLibrary sgemm_library();
// "OpenBLAS 0.3.21 DYNAMIC_ARCH ... (cblas_sgemm, 1 thread per call)", "oneDNN 2.6.3 (...) (dnnl_sgemm, 1
// thread per call)" or "Eigen 3.4.0".
std::string sgemm_library_name();
// The same for any library (what ran, where it is not the process's).
std::string gemm_library_name(GemmLibrary library);

// Whether oneDNN is a library beside the process's: built in, and not sgemm_library() already (the
// yardsticks and the products choice time it as a path of its own then).
bool onednn_is_another_library();

// The library the tiled variants' products take on their library path (tile_products.hpp):
// sgemm_library(), unless the fp32 products choice (harness/meters/products_choice.hpp) set another for
// the step being run. Set outside any parallel region, never while a variant runs; nullopt restores it.
GemmLibrary tile_products_library();
void set_tile_products_library(std::optional<GemmLibrary> library);

// For its lifetime, Eigen and OpenBLAS run every product on the calling thread (and the library is chosen
// on construction: a bad LOBENCH_GEMM throws here; oneDNN is held to the calling thread by sgemm_using): Eigen splits a product
// over its own threads whenever the caller's team has one thread (it checks only omp_get_num_threads()),
// and OpenBLAS over its pool; either would nest parallelism under the caller's, make a one-thread run
// use every core, and (Eigen) choose its blocking, and so its sums' order, from the thread count.
class ProductsOnCallingThread {
 public:
  ProductsOnCallingThread();
  ~ProductsOnCallingThread();
  ProductsOnCallingThread(const ProductsOnCallingThread&) = delete;
  ProductsOnCallingThread& operator=(const ProductsOnCallingThread&) = delete;

 private:
  int saved_eigen_ = 1, saved_openblas_ = 0;
};

}  // namespace lobench::cpu
