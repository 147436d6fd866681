#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "harness/measure.hpp"
#include "harness/meters/fma_peak.hpp"
#include "harness/meters/machine_limits.hpp"
#include "harness/meters/peak_rss.hpp"
#include "harness/meters/run_queue_wait.hpp"
#include "harness/meters/sgemm_rate.hpp"
#include "harness/meters/shape_gemm.hpp"
#include "variants/cpu/bf16_dot.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/cpu/tile_blocks.hpp"

namespace lobench::meters {
namespace {

// Seconds of wall time spinning on this thread; returns the share of it this process's threads spent
// waiting for a CPU.
double spin_and_measure_wait(double seconds) {
  const double waited0 = run_queue_wait_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  volatile double sink = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) sink = sink + 1;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run_queue_wait_fraction(run_queue_wait_seconds() - waited0, wall, 1);
}

// issue 43: a step timed while other processes held every core waited for a CPU, and the meter says so
// (the load injected here: three spinning processes per core).
TEST(RunQueueWait, AnInjectedLoadOfOtherProcessesMakesTheStepWait) {
  if (std::isnan(run_queue_wait_seconds())) GTEST_SKIP() << "this kernel keeps no /proc/self/task/*/schedstat";
  std::vector<pid_t> load;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < 3 * cores; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      volatile unsigned long x = 0;
      for (;;) x = x + 1;  // until killed
    }
    load.push_back(pid);
  }
  const double loaded = spin_and_measure_wait(0.6);
  for (pid_t pid : load) kill(pid, SIGKILL);
  for (pid_t pid : load) waitpid(pid, nullptr, 0);
  EXPECT_GT(loaded, 0.3) << "one thread among " << 3 * cores << " spinning processes on " << cores << " cores";
  EXPECT_LE(loaded, 1.0);
}

TEST(RunQueueWait, FractionIsWaitOverThreadTime) {
  EXPECT_DOUBLE_EQ(run_queue_wait_fraction(0.3, 1.0, 2), 0.15);
  EXPECT_TRUE(std::isnan(run_queue_wait_fraction(std::nan(""), 1.0, 2)));
  EXPECT_TRUE(std::isnan(run_queue_wait_fraction(0.1, 0.0, 2)));
}

// No SGEMM runs faster than the FMA units: every library's rate lies below the register-only peak
// (measured as the fastest of its runs, so a busy moment lowers SGEMM more than the peak).
TEST(Meters, SgemmOfEveryLibraryIsBelowTheFmaPeak) {
  const MachineLimits m = measure_machine_limits(1, 256);
  ASSERT_GT(m.fma.gflops, 0.0) << m.fma.isa;
  EXPECT_FALSE(m.fma.isa.empty());
  ASSERT_GT(m.eigen.gflops, 0.0);
  EXPECT_EQ(m.eigen.n, 256);
  EXPECT_GE(m.eigen.samples, 3);
  EXPECT_LT(m.eigen.gflops, m.fma.gflops);
  // CI installs libopenblas0-pthread (scripts/install_deps.sh); elsewhere it may be absent, with a reason.
  if (std::isnan(m.openblas.gflops)) {
    EXPECT_FALSE(m.openblas.why.empty());
  } else {
    EXPECT_LT(m.openblas.gflops, m.fma.gflops);
    EXPECT_NE(m.openblas.library.find("OpenBLAS"), std::string::npos);
  }
  // Our own kernels where the CPU runs them (AVX-512), the reason where not.
  if (std::isnan(m.own.gflops)) {
    EXPECT_NE(m.own.why.find("AVX-512"), std::string::npos) << m.own.why;
  } else {
    EXPECT_LT(m.own.gflops, m.fma.gflops);
    EXPECT_EQ(m.own.n, 256);
    EXPECT_GE(m.own.samples, 3);
  }
  // oneDNN where the build found it (CI installs libdnnl-dev), the reason where not.
  if (auto why = cpu::onednn_unavailable()) {
    EXPECT_TRUE(std::isnan(m.onednn.gflops));
    EXPECT_EQ(m.onednn.why, *why);
  } else {
    EXPECT_LT(m.onednn.gflops, m.fma.gflops);
    EXPECT_EQ(m.onednn.n, 256);
    EXPECT_GE(m.onednn.samples, 3);
    EXPECT_EQ(m.onednn.library.rfind("oneDNN ", 0), 0u) << m.onednn.library;
    EXPECT_GE(m.best_sgemm_gflops(), m.onednn.gflops);
  }
  EXPECT_GE(m.best_sgemm_gflops(), m.eigen.gflops);
  if (!std::isnan(m.own.gflops)) {
    EXPECT_GE(m.best_sgemm_gflops(), m.own.gflops);
  }
  EXPECT_EQ(m.yardstick_gflops("fp32"), m.best_sgemm_gflops());
}

// The best SGEMM is the fastest of those measured, whichever library that is; unmeasured ones (NaN) are
// passed over.
TEST(Meters, BestSgemmIsTheFastestMeasured) {
  MachineLimits m;
  m.eigen.gflops = 100.0, m.openblas.gflops = std::nan(""), m.own.gflops = 300.0;
  EXPECT_EQ(m.best_sgemm_gflops(), 300.0);
  m.own.gflops = std::nan("");
  EXPECT_EQ(m.best_sgemm_gflops(), 100.0);
  m.openblas.gflops = 150.0;
  EXPECT_EQ(m.best_sgemm_gflops(), 150.0);
  m.onednn.gflops = 160.0;
  EXPECT_EQ(m.best_sgemm_gflops(), 160.0);
  // bf16 rows: the faster of our bf16 products and oneDNN's, whichever was measured; the best SGEMM
  // where neither was
  EXPECT_TRUE(std::isnan(m.best_bf16_gflops()));
  EXPECT_EQ(m.yardstick_gflops("bf16"), 160.0);
  m.bf16.gflops = 800.0, m.bf16_onednn.gflops = 850.0;
  EXPECT_EQ(m.yardstick_gflops("bf16"), 850.0);
  EXPECT_EQ(m.yardstick_gflops("e4m3"), 850.0);
  m.bf16_onednn.gflops = std::nan("");
  EXPECT_EQ(m.yardstick_gflops("bf16"), 800.0);
  EXPECT_EQ(m.yardstick_gflops("fp32"), 160.0);
}

// The product at a row's shape: the fastest of the paths the operands have (fp32: the library's and our
// own where they run; bf16: the bf16 products), on whole vocabulary blocks of fused's tiles, sized from the
// shape's own rate to about longest_sample_s (at least two blocks per thread, never more than V nor
// kShapeOperandBytes of E).
TEST(Meters, ShapeGemmIsTheFastestPathOnWholeBlocksOfTheShape) {
  const int64_t P = 64, V = 50000, D = 32;
  RunOptions o;
  o.threads = 2;
  const cpu::TileBlocks b = cpu::choose_blocks(P, V, D, o);
  const int64_t unit = b.block_v * b.threads;
  const ShapeGemmRate r = measure_shape_gemm(P, V, D, 2, ShapeProducts::fp32, 1e-9);
  const bool onednn_path = cpu::onednn_is_another_library();
  ASSERT_EQ(r.paths.size(), 1u + (cpu::own_tile_kernels() ? 1u : 0u) + (onednn_path ? 1u : 0u));
  EXPECT_EQ(r.paths[0].first, cpu::sgemm_library_name());
  if (onednn_path) {
    EXPECT_EQ(r.paths[1].first, cpu::gemm_library_name(cpu::GemmLibrary::onednn));
  }
  double fastest = 0;
  for (const auto& [name, gflops] : r.paths) {
    EXPECT_GT(gflops, 0.0) << name;
    fastest = std::max(fastest, gflops);
    if (gflops == r.gflops) {
      EXPECT_EQ(r.fastest, name);
    }
  }
  EXPECT_EQ(r.gflops, fastest);
  // a sample shorter than any product: two blocks per thread
  EXPECT_EQ(r.timed_v, 2 * unit);
  // a sample longer than all of V: all of V
  EXPECT_EQ(measure_shape_gemm(P, 3000, D, 2, ShapeProducts::fp32, 1e3).timed_v, 3000);
  // otherwise whole blocks, more than the fewest for a sample of 4 ms
  const ShapeGemmRate longer = measure_shape_gemm(P, 1000000, D, 2, ShapeProducts::fp32, 0.004);
  EXPECT_EQ(longer.timed_v % unit, 0);
  EXPECT_GT(longer.timed_v, 2 * unit);
  EXPECT_LE(longer.timed_v, 1000000);
  // never more than kShapeOperandBytes of E (here 2^21 rows of D = 32)
  EXPECT_LE(measure_shape_gemm(P, int64_t(1) << 24, D, 2, ShapeProducts::fp32, 1e3).timed_v * D * 4, kShapeOperandBytes);
  // bf16 operands: the bf16 products' path, where they run
  if (cpu::bf16_products_unavailable()) return;
  // (and oneDNN's bf16 matmul on the same tiles where it is built in and computes bf16 on this CPU)
  bool onednn_bf16 = !cpu::onednn_unavailable();
  if (onednn_bf16) try {
      cpu::OnednnBf16TileLogits(D).prepare(P, 16, 16);
    } catch (const std::runtime_error&) {
      onednn_bf16 = false;
    }
  const ShapeGemmRate bf16 = measure_shape_gemm(P, 3000, D, 2, ShapeProducts::bf16, 1e3);
  ASSERT_EQ(bf16.paths.size(), onednn_bf16 ? 2u : 1u);
  EXPECT_EQ(bf16.paths[0].first.rfind("bf16 products (", 0), 0u) << bf16.paths[0].first;
  if (onednn_bf16) {
    EXPECT_EQ(bf16.paths[1].first.rfind(cpu::onednn_name() + " bf16 matmul (", 0), 0u) << bf16.paths[1].first;
  }
  EXPECT_GT(bf16.gflops, 0.0);
}

// The own-kernel SGEMM behind the yardstick computes C = A·B: against a float64 product on ragged shapes
// (edges of the 32-column panels, the 14-row register blocks, the 448-row tasks and the dE kernel's inner
// blocks), and bit-identical on 1 and 2 threads.
TEST(Meters, OwnSgemmIsAProductIndependentOfThreads) {
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {15, 33, 7}, {450, 70, 300}, {29, 31, 513}}) {
    std::vector<float> a(size_t(M * K)), b(size_t(K * N)), c1(size_t(M * N), -7.0f), c2(size_t(M * N), -7.0f);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int64_t(i * 2654435761u % 2001) - 1000) / 997.0f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(int64_t(i * 40503u % 2001) - 1000) / 991.0f;
    OwnSgemmCopies copies;
    if (!own_sgemm(M, N, K, a.data(), b.data(), c1.data(), 1, copies)) GTEST_SKIP() << "our own kernels need AVX-512";
    ASSERT_TRUE(own_sgemm(M, N, K, a.data(), b.data(), c2.data(), 2, copies));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          ref += double(a[i * K + k]) * double(b[k * N + j]);
          mag += std::abs(double(a[i * K + k]) * double(b[k * N + j]));
        }
        // (the rounding bound of a K-term chain)
        ASSERT_NEAR(c1[i * N + j], ref, double(K) * 0x1p-24 * mag) << M << "x" << N << "x" << K << " at " << i << "," << j;
        ASSERT_EQ(c1[i * N + j], c2[i * N + j]) << "threads changed a bit at " << i << "," << j;
      }
  }
}

// The bf16 yardstick: a rate where the bf16 products run (the products themselves are tested in
// variants/tests/bf16_products_test.cpp), the reason where they do not; bf16 rows are compared with it.
TEST(Meters, Bf16YardstickIsMeasuredWhereTheProductsRunAndNamedWhereNot) {
  const SgemmRate r = bf16_square_gemm(300, 2);  // (300: ragged against the panels and tiles)
  EXPECT_EQ(r.n, 300);
  if (std::isnan(r.gflops)) {
    EXPECT_FALSE(r.why.empty());
    return;
  }
  EXPECT_GT(r.gflops, 0.0);
  EXPECT_GE(r.samples, 3);
  EXPECT_NE(r.library.find("bf16"), std::string::npos) << r.library;
  MachineLimits m;
  m.bf16 = r;
  m.eigen.gflops = 1.0;
  EXPECT_EQ(m.yardstick_gflops("bf16"), r.gflops);
  EXPECT_EQ(m.yardstick_gflops("fp32"), 1.0);
}

// What the bf16 yardstick times is the product: its padded, paneled layout and its blocks of the inner
// index give C bit for bit as one product of the unpadded operands through the same kernel (ragged
// against the 256-column panels and the 512-pair blocks, so that a block continues a chain).
TEST(Meters, Bf16YardstickComputesTheProductOfItsOperands) {
  if (auto why = cpu::bf16_products_unavailable()) GTEST_SKIP() << *why;
  const int64_t n = 1100, n2 = (n + 1) / 2;
  const AlignedVector<float> a = fixed_operand(n * n, kOperandStepA), b = fixed_operand(n * n, kOperandStepB);
  std::vector<float> c(size_t(n * n), NAN), expected(size_t(n * n), NAN);
  Bf16SquareGemm(n, a.data(), b.data()).multiply(c.data(), 2);
  std::vector<uint32_t> ap(size_t(n * n2)), bp(size_t(n2 * n));
  cpu::pair_columns(a.data(), n, n, n, ap.data(), n2);
  cpu::pair_rows(b.data(), n, n, n, bp.data(), n);
  cpu::bf16_product(cpu::Bf16Product{n, n, n2, ap.data(), n2, bp.data(), n, expected.data(), n, false, false});
  for (int64_t i = 0; i < n * n; ++i)
    ASSERT_EQ(cpu::float_bits(c[size_t(i)]), cpu::float_bits(expected[size_t(i)])) << "element " << i / n << ", " << i % n;
}

// The values every meter times, and their bf16 rounding, start on a cache line, as the step's working
// buffers do (a 32 MiB block comes from a fresh mmap, where std::vector's storage would start 16 bytes past
// a page and every 64-byte row an AMX tile load reads would straddle two lines). The meters' own copies are
// AlignedVector by type (sgemm_rate.hpp, logit_tile_products.hpp).
TEST(Meters, FixedOperandsAndTheirBf16RoundingStartOnACacheLine) {
  for (int64_t n : {int64_t(1000), int64_t(8) << 20}) {
    const AlignedVector<float> x = fixed_operand(n, kOperandStepA);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(x.data()) % kCacheLineBytes, 0u) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(cpu::bf16_nearest_even(x.data(), size_t(n)).data()) % kCacheLineBytes, 0u) << n;
  }
}

// oneDNN's bf16 product beside ours: a rate and the implementation oneDNN chose where it runs, the reason
// where not (built without it, or a CPU it refuses bf16 on).
TEST(Meters, OnednnBf16RateIsMeasuredOrSaysWhyNot) {
  const SgemmRate r = onednn_bf16_square_gemm(300, 2);
  EXPECT_EQ(r.n, 300);
  if (std::isnan(r.gflops)) {
    EXPECT_FALSE(r.why.empty());
    if (auto why = cpu::onednn_unavailable()) {
      EXPECT_EQ(r.why, *why);
    }
    return;
  }
  EXPECT_GT(r.gflops, 0.0);
  EXPECT_GE(r.samples, 3);
  EXPECT_EQ(r.library.rfind("oneDNN ", 0), 0u) << r.library;
  EXPECT_NE(r.library.find("matmul ("), std::string::npos) << r.library;
}

TEST(Meters, ResidentSetGrowthSeesAFreshlyTouchedBlock) {
  PeakRssMeter meter;
  const size_t bytes = size_t(64) << 20;
  {
    std::unique_ptr<char[]> block(new char[bytes]);
    std::memset(block.get(), 1, bytes);
    EXPECT_GE(meter.growth_bytes(), 0.95 * double(bytes));
  }
  // After the block went back to the kernel the peak remains, and a new meter starts from now.
  EXPECT_GE(meter.growth_bytes(), 0.95 * double(bytes));
  PeakRssMeter fresh;
  EXPECT_LT(fresh.growth_bytes(), 0.5 * double(bytes));
}

}  // namespace
}  // namespace lobench::meters
