#include "harness/meters/sgemm_rate.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <cstdlib>
#include <stdexcept>
#include <limits>
#include <functional>
#include <vector>

#include <omp.h>

#include <algorithm>

#include "harness/measure.hpp"
#include "variants/cpu/bf16_dot.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/openblas.hpp"
#include "variants/cpu/sgemm.hpp"

namespace lobench::meters {

AlignedVector<float> fixed_operand(int64_t n, uint32_t step) {
  AlignedVector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(int64_t(i * step % 2000) - 1000) / 1000.0f;
  return v;
}

namespace {

// One untimed product, then timed ones until at least 3 and 1 s of them, at most 20 (no CV target:
// a machine limit is a rate, and its median over 1 s is what is asked).
Samples time_products(const std::function<void()>& product) {
  RepPolicy policy;
  policy.cv_target = std::numeric_limits<double>::infinity();
  return collect_samples([&] { return seconds_of(product); }, 1, policy);
}

// The n×n operands of the OpenBLAS, own and bf16 products, the same for every library so that none is
// timed on easier numbers.
struct SquareOperands {
  AlignedVector<float> a, b;
  explicit SquareOperands(int64_t n) : a(fixed_operand(n * n, kOperandStepA)), b(fixed_operand(n * n, kOperandStepB)) {}
};

// A rate that was not measured, with the reason.
SgemmRate not_measured(int64_t n, std::string why) {
  SgemmRate r;
  r.n = n;
  r.why = std::move(why);
  return r;
}

SgemmRate rate_of(const Samples& s, int64_t n, std::string library) {
  SgemmRate r;
  r.n = n;
  r.samples = int(s.seconds.size());
  r.gflops = 2.0 * double(n) * double(n) * double(n) / s.median() / 1e9;
  r.library = std::move(library);
  return r;
}

}  // namespace

SgemmRate eigen_square_sgemm(int64_t n, int threads) {
  using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;
  const int saved = Eigen::nbThreads();
  Eigen::setNbThreads(threads);
  const M a = M::Random(n, n), b = M::Random(n, n);
  M c(n, n);
  const Samples s = time_products([&] { c.noalias() = a * b; });
  Eigen::setNbThreads(saved);
  return rate_of(s, n, fmt::format("Eigen {}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION));
}

SgemmRate openblas_square_sgemm(int64_t n, int threads) {
  const cpu::OpenBlas* blas = cpu::openblas();
  if (!blas) return not_measured(n, cpu::openblas_unavailable());
  blas->set_num_threads(threads);
  const SquareOperands x(n);
  AlignedVector<float> c(size_t(n * n));
  // (sgemm_using runs OpenBLAS on its pool's `threads` threads here: no ProductsOnCallingThread around it)
  const Samples s = time_products([&] {
    cpu::sgemm_using(cpu::GemmLibrary::openblas, cpu::Op::none, cpu::Op::none, n, n, n, x.a.data(), n, x.b.data(), n,
                     c.data(), n, false);
  });
  blas->set_num_threads(1);  // its pool goes idle while the variants run
  SgemmRate r = rate_of(s, n, fmt::format("OpenBLAS ({})", blas->config));
  r.note = blas->note;
  r.kernels = blas->kernels;
  r.loaded = blas->loaded;
  return r;
}

SgemmRate onednn_square_sgemm(int64_t n, int threads) {
  if (auto why = cpu::onednn_unavailable()) return not_measured(n, *why);
  const SquareOperands x(n);
  AlignedVector<float> c(size_t(n * n));
  const cpu::OmpMaxThreads on(threads);
  const Samples s = time_products([&] {
    cpu::onednn_sgemm(false, false, n, n, n, x.a.data(), n, x.b.data(), n, c.data(), n, /*accumulate=*/false);
  });
  return rate_of(s, n, cpu::onednn_name() + " (dnnl_sgemm)");
}

SgemmRate onednn_bf16_square_gemm(int64_t n, int threads) {
  if (auto why = cpu::onednn_unavailable()) return not_measured(n, *why);
  const SquareOperands x(n);
  // (the same values as the other products, rounded to bf16 nearest-even)
  const AlignedVector<uint16_t> a = cpu::bf16_nearest_even(x.a.data(), x.a.size()),
                                b = cpu::bf16_nearest_even(x.b.data(), x.b.size());
  const cpu::OmpMaxThreads on(threads);
  try {
    cpu::OnednnBf16SquareProduct product(n, a.data(), b.data());
    const Samples s = time_products([&] { product(); });
    return rate_of(s, n, cpu::onednn_name() + " matmul (" + product.implementation() + ")");
  } catch (const std::runtime_error& e) {
    return not_measured(n, e.what());
  }
}

// The own kernels' product is their dE product, C[j, d] = Σ_r Gᵀ[j, r]·A[r, d], with C's rows Gᵀ's
// rows (A's here) and A's rows B's. Its rows must be D floats apart, so B is cut into panels of
// kPanel = 32 columns (one register block wide, each panel contiguous: a panel's rows 128 bytes apart
// share no L1 set the way the 16 KiB rows of a 4096-wide B do), and A's rows are copied transposed_ld(K)
// floats apart for the same reason. A task is kRows rows of C × one panel, its block of C written into a
// contiguous scratch and copied out.
bool own_sgemm(int64_t M, int64_t N, int64_t K, const float* A, const float* B, float* C, int threads,
               OwnSgemmCopies& copies) {
  const cpu::OwnTileKernels* own = cpu::own_tile_kernels();
  if (!own) return false;
  constexpr int64_t kPanel = 32, kRows = 448;  // 32 register blocks of 14 rows per task
  const int64_t lda = cpu::transposed_ld(K), panels = (N + kPanel - 1) / kPanel;
  AlignedVector<float>&a = copies.a, &b = copies.b;
  a.resize(size_t(M * lda));
  b.resize(size_t(panels * K * kPanel));
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (int64_t i = 0; i < M; ++i) std::copy(A + i * K, A + (i + 1) * K, a.data() + i * lda);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t k = 0; k < K; ++k) {
        const int64_t w = std::min(kPanel, N - p * kPanel);
        float* row = b.data() + (p * K + k) * kPanel;
        std::copy(B + k * N + p * kPanel, B + k * N + p * kPanel + w, row);
        std::fill(row + w, row + kPanel, 0.0f);  // a ragged last panel's columns beyond N
      }
    AlignedVector<float> block(size_t(kRows * kPanel));
    const int64_t row_blocks = (M + kRows - 1) / kRows;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int64_t rb = 0; rb < row_blocks; ++rb)
      for (int64_t p = 0; p < panels; ++p) {
        cpu::TransposedTile t;
        t.n = std::min(kRows, M - rb * kRows), t.rows = K, t.D = kPanel;
        t.Gt = a.data() + rb * kRows * lda, t.ldt = lda;
        t.A = b.data() + p * K * kPanel;
        own->grad_E(t, block.data(), /*accumulate=*/false);
        const int64_t w = std::min(kPanel, N - p * kPanel);
        for (int64_t i = 0; i < t.n; ++i)
          std::copy(block.data() + i * kPanel, block.data() + i * kPanel + w, C + (rb * kRows + i) * N + p * kPanel);
      }
  }
  return true;
}

SgemmRate own_square_sgemm(int64_t n, int threads) {
  if (!cpu::own_tile_kernels())
    return not_measured(n, "lobench's own micro-kernels need AVX-512 (and LOBENCH_ISA not below avx512)");
  const SquareOperands x(n);
  AlignedVector<float> c(size_t(n * n));
  OwnSgemmCopies copies;
  const Samples s = time_products([&] { own_sgemm(n, n, n, x.a.data(), x.b.data(), c.data(), threads, copies); });
  return rate_of(s, n, "lobench's own micro-kernels (avx512)");
}

// A paired along the inner index; B paired likewise and cut into panels of kPanel columns. Rows of
// either are padded by 64 bytes (kPad words): A's rows n2 words apart put every row of a 16-row tile
// load in one L1 cache set at n = 4096 (8 KiB apart; 12 ways), and the AMX product ran 1.4x slower so
// (one thread, an AMX Xeon model 167); the panels' unpadded 1 KiB rows lost 4 %.
namespace {
constexpr int64_t kPanel = 256, kBlockPairs = 512;  // kBlockPairs: a multiple of the AMX tile's 16
constexpr int64_t kPad = 16;
}  // namespace

Bf16SquareGemm::Bf16SquareGemm(int64_t n, const float* A, const float* B)
    : n_(n), n2_((n + 1) / 2), panels_((n + kPanel - 1) / kPanel), lda_(n2_ + kPad), ldb_(kPanel + kPad),
      a_(size_t(n * lda_)), b_(size_t(panels_ * n2_ * ldb_)) {
  cpu::pair_columns(A, n, n, n, a_.data(), lda_);
  for (int64_t j = 0; j < panels_; ++j)
    cpu::pair_rows(B + j * kPanel, n, n, std::min(kPanel, n - j * kPanel), b_.data() + j * n2_ * ldb_, ldb_);
}

void Bf16SquareGemm::multiply(float* C, int threads) const {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) collapse(2)
  for (int64_t mi = 0; mi < panels_; ++mi)
    for (int64_t j = 0; j < panels_; ++j) {
      const int64_t m0 = mi * kPanel;
      for (int64_t k0 = 0; k0 < n2_; k0 += kBlockPairs) {
        cpu::Bf16Product p;
        p.M = std::min(kPanel, n_ - m0), p.N = std::min(kPanel, n_ - j * kPanel), p.K2 = std::min(kBlockPairs, n2_ - k0);
        p.a = a_.data() + m0 * lda_ + k0, p.lda = lda_;
        p.b = b_.data() + j * n2_ * ldb_ + k0 * ldb_, p.ldb = ldb_;
        p.c = C + m0 * n_ + j * kPanel, p.ldc = n_;
        p.accumulate = k0 > 0;
        cpu::bf16_product(p);
      }
    }
}

SgemmRate bf16_square_gemm(int64_t n, int threads) {
  if (auto why = cpu::bf16_products_unavailable()) return not_measured(n, *why);
  const SquareOperands x(n);
  const Bf16SquareGemm gemm(n, x.a.data(), x.b.data());
  AlignedVector<float> c(size_t(n * n));
  const Samples s = time_products([&] { gemm.multiply(c.data(), threads); });
  return rate_of(s, n, std::string("lobench bf16 products (") + cpu::to_string(cpu::active_bf16_kernel()) + ")");
}

}  // namespace lobench::meters
