#include "variants/cpu/sgemm.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <stdexcept>

#include "variants/cpu/eigen_maps.hpp"
#include <omp.h>

#include "variants/cpu/onednn.hpp"
#include "variants/cpu/openblas.hpp"

namespace lobench::cpu {
namespace {

GemmLibrary choose_library() {
  const char* forced = std::getenv("LOBENCH_GEMM");
  const std::string name = forced ? forced : "";
  // (an OpenBLAS loaded before lobench with other kernels, of which no private copy could be made, is not
  // the library lobench measures elsewhere: Eigen then, the same whatever front end runs)
  if (name.empty()) return openblas() && !openblas()->other_kernels ? GemmLibrary::openblas : GemmLibrary::eigen;
  if (name == "eigen") return GemmLibrary::eigen;
  if (name == "openblas") {
    if (!openblas()) throw std::runtime_error("LOBENCH_GEMM=openblas, but " + openblas_unavailable());
    return GemmLibrary::openblas;
  }
  if (name == "onednn") {
    if (auto why = onednn_unavailable()) throw std::runtime_error("LOBENCH_GEMM=onednn, but " + *why);
    return GemmLibrary::onednn;
  }
  throw std::runtime_error("LOBENCH_GEMM=" + name + " is not a GEMM library lobench knows (eigen, openblas, onednn)");
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

void eigen_sgemm(Op opA, Op opB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
                 int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  auto c = mat(C, M, N, ldc);
  auto product = [&](const auto& a, const auto& b) {
    if (accumulate) c.noalias() += a * b;
    else c.noalias() = a * b;
  };
  const auto a = cmat(A, M, K, lda);
  const auto at = cmat(A, K, M, lda);
  const auto b = cmat(B, K, N, ldb);
  const auto bt = cmat(B, N, K, ldb);
  if (opA == Op::none && opB == Op::none) product(a, b);
  else if (opA == Op::none) product(a, bt.transpose());
  else if (opB == Op::none) product(at.transpose(), b);
  else product(at.transpose(), bt.transpose());
}

}  // namespace

GemmLibrary sgemm_library() {
  static const GemmLibrary library = choose_library();
  return library;
}

std::string gemm_library_name(GemmLibrary library) {
  if (library == GemmLibrary::openblas && openblas()) return fmt::format("{} (cblas_sgemm, 1 thread per call)", openblas()->config);
  if (library == GemmLibrary::onednn) return onednn_name() + " (dnnl_sgemm, 1 thread per call)";
  const std::string eigen = fmt::format("Eigen {}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  if (const OpenBlas* blas = openblas(); blas && blas->other_kernels) return eigen + " (not OpenBLAS: " + blas->note + ")";
  return eigen;
}

std::string sgemm_library_name() { return gemm_library_name(sgemm_library()); }

namespace {
// -1: sgemm_library(); otherwise a GemmLibrary.
std::atomic<int> tile_library_override{-1};
}  // namespace

bool onednn_is_another_library() { return !onednn_unavailable() && sgemm_library() != GemmLibrary::onednn; }

GemmLibrary tile_products_library() {
  const int v = tile_library_override.load(std::memory_order_relaxed);
  return v < 0 ? sgemm_library() : GemmLibrary(v);
}

void set_tile_products_library(std::optional<GemmLibrary> library) {
  tile_library_override.store(library ? int(*library) : -1, std::memory_order_relaxed);
}

void sgemm(Op opA, Op opB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
           float* C, int64_t ldc, bool accumulate) {
  sgemm_using(sgemm_library(), opA, opB, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

void sgemm_using(GemmLibrary library, Op opA, Op opB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return;
  const bool ints = fits_int(M) && fits_int(N) && fits_int(K) && fits_int(lda) && fits_int(ldb) && fits_int(ldc);
  if (library == GemmLibrary::openblas && ints && K > 0) {
    if (!openblas()) throw std::runtime_error("OpenBLAS asked for, but " + openblas_unavailable());
    constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
    openblas()->sgemm(kRowMajor, opA == Op::none ? kNoTrans : kTrans, opB == Op::none ? kNoTrans : kTrans, int(M),
                      int(N), int(K), 1.0f, A, int(lda), B, int(ldb), accumulate ? 1.0f : 0.0f, C, int(ldc));
    return;
  }
  if (library == GemmLibrary::onednn && K > 0) {  // (K = 0, C = 0 or C itself, is Eigen's below: oneDNN refuses it)
    // Inside an active team (omp_in_parallel) oneDNN runs on the calling thread; outside one, a team of
    // one thread included, it would take omp_get_max_threads() threads and split the sums by their
    // number: held to one there.
    std::optional<OmpMaxThreads> one;
    if (!omp_in_parallel()) one.emplace(1);
    onednn_sgemm(opA == Op::transpose, opB == Op::transpose, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
    return;
  }
  // (a dimension past int: Eigen's indices are 64-bit)
  eigen_sgemm(opA, opB, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

ProductsOnCallingThread::ProductsOnCallingThread() : saved_eigen_(Eigen::nbThreads()) {
  // The library is chosen here, before any product: a bad LOBENCH_GEMM throws on the caller's thread,
  // not inside the OpenMP region that makes the products (where an exception would terminate).
  sgemm_library();
  Eigen::setNbThreads(1);
  if (const OpenBlas* blas = openblas()) {
    saved_openblas_ = blas->get_num_threads();
    blas->set_num_threads(1);
  }
}

ProductsOnCallingThread::~ProductsOnCallingThread() {
  Eigen::setNbThreads(saved_eigen_);
  if (const OpenBlas* blas = openblas(); blas && saved_openblas_ > 0) blas->set_num_threads(saved_openblas_);
}

}  // namespace lobench::cpu
