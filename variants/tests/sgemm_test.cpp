// cpu::sgemm (variants/cpu/sgemm.hpp) against a float64 product, for every layout of the operands,
// with and without accumulation, through every library; and the run guard that keeps them on the
// calling thread.
#include "variants/cpu/sgemm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <Eigen/Core>
#include <cmath>
#include <random>
#include <vector>

#include "variants/cpu/bf16_dot.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/openblas.hpp"

namespace lobench::cpu {
namespace {

struct Case {
  int64_t M, N, K;
  Op opA, opB;
  bool accumulate;
};

// Row-major operands with padded leading dimensions, so that a stride mix-up cannot pass.
struct Operands {
  Operands(const Case& c, uint32_t seed)
      : lda((c.opA == Op::none ? c.K : c.M) + 3), ldb((c.opB == Op::none ? c.N : c.K) + 5), ldc(c.N + 7) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    A.resize(size_t((c.opA == Op::none ? c.M : c.K) * lda));
    B.resize(size_t((c.opB == Op::none ? c.K : c.N) * ldb));
    C.resize(size_t(c.M * ldc));
    for (float& x : A) x = u(rng);
    for (float& x : B) x = u(rng);
    for (float& x : C) x = u(rng);
  }
  float a(const Case& c, int64_t i, int64_t k) const { return c.opA == Op::none ? A[i * lda + k] : A[k * lda + i]; }
  float b(const Case& c, int64_t k, int64_t j) const { return c.opB == Op::none ? B[k * ldb + j] : B[j * ldb + k]; }
  int64_t lda, ldb, ldc;
  std::vector<float> A, B, C;
};

void expect_product(GemmLibrary library, const Case& c) {
  Operands o(c, uint32_t(c.M * 131 + c.N * 7 + c.K));
  std::vector<float> out = o.C;
  sgemm_using(library, c.opA, c.opB, c.M, c.N, c.K, o.A.data(), o.lda, o.B.data(), o.ldb, out.data(), o.ldc,
              c.accumulate);
  for (int64_t i = 0; i < c.M; ++i) {
    for (int64_t j = 0; j < c.N; ++j) {
      double want = c.accumulate ? double(o.C[i * o.ldc + j]) : 0.0, scale = std::fabs(want);
      for (int64_t k = 0; k < c.K; ++k) {
        want += double(o.a(c, i, k)) * double(o.b(c, k, j));
        scale += std::fabs(double(o.a(c, i, k)) * double(o.b(c, k, j)));
      }
      // float32 accumulation of K + 1 terms: |error| ≤ (K + 1)·u·Σ|terms| with u = 2⁻²⁴ (Higham).
      const double bound = double(c.K + 1) * std::ldexp(1.0, -24) * scale + 1e-30;
      ASSERT_LE(std::fabs(double(out[i * o.ldc + j]) - want), bound)
          << "M " << c.M << " N " << c.N << " K " << c.K << " at (" << i << ", " << j << ")";
    }
    // Padding between rows of C is never written.
    for (int64_t j = c.N; j < o.ldc; ++j) ASSERT_EQ(out[i * o.ldc + j], o.C[i * o.ldc + j]);
  }
}

std::vector<Case> ragged_cases() {
  std::vector<Case> cases;
  for (Op opA : {Op::none, Op::transpose})
    for (Op opB : {Op::none, Op::transpose})
      for (bool acc : {false, true})
        for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 13, 5}, {65, 33, 129}, {3, 300, 17},
                               {256, 128, 256}, {1, 97, 64}, {50, 1, 200}, {9, 9, 0}})
          cases.push_back({M, N, K, opA, opB, acc});
  return cases;
}

TEST(Sgemm, EigenMatchesFloat64OnRaggedShapes) {
  for (const Case& c : ragged_cases()) expect_product(GemmLibrary::eigen, c);
}

TEST(Sgemm, OpenBlasMatchesFloat64OnRaggedShapes) {
  if (!openblas()) GTEST_SKIP() << openblas_unavailable();
  ProductsOnCallingThread guard;
  for (const Case& c : ragged_cases()) expect_product(GemmLibrary::openblas, c);
}

TEST(Sgemm, OnednnMatchesFloat64OnRaggedShapes) {
  if (auto why = onednn_unavailable()) GTEST_SKIP() << *why;
  for (const Case& c : ragged_cases()) expect_product(GemmLibrary::onednn, c);
}

// oneDNN's products are the same bits whatever the threads around the call: inside a team of 2 (each
// thread its own product, as the tiled variants call it), in a team of one, and outside any team with 2
// threads allowed (held to one: oneDNN would otherwise split the inner index by the thread count), as on
// one thread. The
// shapes have inner indices that oneDNN splits on two threads (K = 4096, measured).
TEST(Sgemm, OnednnProductsDoNotDependOnTheThreads) {
  if (auto why = onednn_unavailable()) GTEST_SKIP() << *why;
  for (const Case& c : {Case{512, 256, 4096, Op::none, Op::transpose, false}, Case{37, 300, 5000, Op::transpose, Op::none, true},
                        Case{14, 2000, 256, Op::none, Op::none, false}}) {
    const Operands o(c, 11);
    auto product = [&](std::vector<float>& out) {
      sgemm_using(GemmLibrary::onednn, c.opA, c.opB, c.M, c.N, c.K, o.A.data(), o.lda, o.B.data(), o.ldb, out.data(),
                  o.ldc, c.accumulate);
    };
    const int saved = omp_get_max_threads();
    std::vector<float> one = o.C, outside = o.C, team0 = o.C, team1 = o.C, team_of_one = o.C;
    omp_set_num_threads(1);
    product(one);
    omp_set_num_threads(2);
    product(outside);
    EXPECT_EQ(omp_get_max_threads(), 2) << "the caller's thread count is restored";
#pragma omp parallel num_threads(2)
    product(omp_get_thread_num() == 0 ? team0 : team1);
    // (a team of one thread is not active: a --threads 1 run's tiles call from one)
#pragma omp parallel num_threads(1)
    product(team_of_one);
    omp_set_num_threads(saved);
    EXPECT_EQ(one, outside) << c.M << "x" << c.N << "x" << c.K;
    EXPECT_EQ(one, team0) << c.M << "x" << c.N << "x" << c.K;
    EXPECT_EQ(one, team1) << c.M << "x" << c.N << "x" << c.K;
    EXPECT_EQ(one, team_of_one) << c.M << "x" << c.N << "x" << c.K;
  }
}

// oneDNN's bf16 tile logits (the yardstick's oneDNN path for bf16 rows): C = A·Eᵀ of the bf16 operands,
// float32 accumulation, on ragged tiles with C's rows ldc apart (the padding never written), from both
// threads of a team at once.
TEST(Sgemm, OnednnBf16TileLogitsAreTheProductOfTheBf16Operands) {
  if (auto why = onednn_unavailable()) GTEST_SKIP() << *why;
  const int64_t D = 37, ldc = 40;
  OnednnBf16TileLogits logits(D);
  for (auto [rows, n] : {std::pair<int64_t, int64_t>{1, 1}, {33, 29}, {64, 40}}) {
    std::mt19937 rng(uint32_t(rows * 100 + n));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<uint16_t> a(size_t(rows * D)), e(size_t(n * D));
    for (auto& x : a) x = bf16_nearest_even(u(rng));
    for (auto& x : e) x = bf16_nearest_even(u(rng));
    try {
      logits.prepare(rows, n, ldc);
    } catch (const std::runtime_error& refused) {
      GTEST_SKIP() << refused.what();  // (a CPU oneDNN computes no bf16 on)
    }
    std::vector<float> c0(size_t(rows * ldc), -7.0f), c1 = c0;
#pragma omp parallel num_threads(2)
    logits(a.data(), rows, e.data(), n, omp_get_thread_num() == 0 ? c0.data() : c1.data(), ldc);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, scale = 0;
        for (int64_t k = 0; k < D; ++k) {
          const double t = double(bf16_value(a[size_t(i * D + k)])) * double(bf16_value(e[size_t(j * D + k)]));
          want += t, scale += std::fabs(t);
        }
        ASSERT_NEAR(c0[size_t(i * ldc + j)], want, double(D) * 0x1p-24 * scale + 1e-30) << rows << "x" << n << " at " << i << "," << j;
        ASSERT_EQ(c0[size_t(i * ldc + j)], c1[size_t(i * ldc + j)]);
      }
      for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c0[size_t(i * ldc + j)], -7.0f);
    }
  }
}

// The tiled variants call OpenBLAS from every thread of their team at once.
TEST(Sgemm, ConcurrentCallsGiveTheSerialResults) {
  if (!openblas()) GTEST_SKIP() << openblas_unavailable();
  ProductsOnCallingThread guard;
  const Case c{96, 80, 128, Op::none, Op::transpose, false};
  const Operands o(c, 7);
  constexpr int kCalls = 16;
  std::vector<std::vector<float>> serial(kCalls, o.C), parallel(kCalls, o.C);
  auto call = [&](std::vector<float>& out, int i) {
    sgemm_using(GemmLibrary::openblas, c.opA, c.opB, c.M - i, c.N, c.K, o.A.data() + i * o.lda, o.lda, o.B.data(),
                o.ldb, out.data(), o.ldc, false);
  };
  for (int i = 0; i < kCalls; ++i) call(serial[size_t(i)], i);
#pragma omp parallel for num_threads(4) schedule(static, 1)
  for (int i = 0; i < kCalls; ++i) call(parallel[size_t(i)], i);
  for (int i = 0; i < kCalls; ++i) EXPECT_EQ(serial[size_t(i)], parallel[size_t(i)]) << "call " << i;
}

TEST(Sgemm, GuardKeepsBothLibrariesOnTheCallingThreadAndRestoresThem) {
  const int eigen_before = Eigen::nbThreads();
  Eigen::setNbThreads(2);
  const OpenBlas* blas = openblas();
  if (blas) blas->set_num_threads(2);
  {
    ProductsOnCallingThread guard;
    EXPECT_EQ(Eigen::nbThreads(), 1);
    if (blas) {
      EXPECT_EQ(blas->get_num_threads(), 1);
    }
  }
  EXPECT_EQ(Eigen::nbThreads(), 2);
  if (blas) {
    EXPECT_EQ(blas->get_num_threads(), 2);
  }
  Eigen::setNbThreads(eigen_before);
  if (blas) blas->set_num_threads(1);
}

TEST(Sgemm, LibraryNameSaysWhichLibrary) {
  const std::string name = sgemm_library_name();
  if (sgemm_library() == GemmLibrary::openblas) EXPECT_NE(name.find("OpenBLAS"), std::string::npos) << name;
  else if (sgemm_library() == GemmLibrary::onednn) EXPECT_EQ(name.rfind("oneDNN ", 0), 0u) << name;
  else EXPECT_NE(name.find("Eigen"), std::string::npos) << name;
}

// Where oneDNN is built in, its name carries the version and the instruction set its kernels chose; where
// not, asking for it says how to get it.
TEST(Sgemm, OnednnSaysWhatItIsOrWhyNot) {
  if (auto why = onednn_unavailable()) {
    EXPECT_NE(why->find("libdnnl-dev"), std::string::npos) << *why;
    EXPECT_THROW(sgemm_using(GemmLibrary::onednn, Op::none, Op::none, 1, 1, 1, nullptr, 1, nullptr, 1, nullptr, 1, false),
                 std::runtime_error);
    return;
  }
  const std::string name = onednn_name();
  EXPECT_EQ(name.rfind("oneDNN ", 0), 0u) << name;
  EXPECT_EQ(name.find("cpu_isa_"), std::string::npos) << name;  // (the ISA's own name, not the enum's)
  EXPECT_NE(name.find('('), std::string::npos) << name;
}

}  // namespace
}  // namespace lobench::cpu
