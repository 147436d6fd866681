#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness/measure.hpp"
#include "harness/meters/fma_peak.hpp"
#include "harness/meters/machine_limits.hpp"
#include "harness/meters/peak_rss.hpp"
#include "harness/meters/sgemm_rate.hpp"

namespace lobench::meters {
namespace {

// The benches' interleaved timing follows the one repetition rule: warm-up rounds dropped, then rounds
// until the policy has enough; every round runs each contender once, in order; wall and CPU samples kept.
TEST(Meters, InterleavedContendersFollowTheRepetitionRule) {
  std::string order;
  volatile double sink = 0;
  auto spin = [&sink] {
    for (int i = 0; i < 200000; ++i) sink = sink + 1e-9 * i;
  };
  std::vector<Contender> cs = {{"a", [&] { order += 'a'; spin(); }, {}, {}},
                               {"b", [&] { order += 'b'; }, {}, {}}};
  RepPolicy fixed;
  fixed.fixed_reps = 3;
  time_interleaved(cs, 2, fixed);
  EXPECT_EQ(order, "ababababab");  // 2 warm-up rounds and 3 timed, interleaved
  for (const Contender& c : cs) {
    EXPECT_EQ(c.wall.seconds.size(), 3u) << c.name;
    EXPECT_EQ(c.cpu.seconds.size(), 3u) << c.name;
  }
  EXPECT_GT(cs[0].cpu.min(), 0.0);  // the spinning contender used CPU time
  RepPolicy adaptive;
  adaptive.min_reps = 2;
  adaptive.max_reps = 4;
  adaptive.min_time_s = 1e9;  // never enough time: stops at max_reps
  std::vector<Contender> one = {{"a", [] {}, {}, {}}};
  time_interleaved(one, 0, adaptive);
  EXPECT_EQ(one[0].wall.seconds.size(), 4u);
}

// No SGEMM runs faster than the FMA units: both libraries' rates lie below the register-only peak
// (measured as the fastest of its runs, so a busy moment lowers SGEMM more than the peak).
TEST(Meters, SgemmOfBothLibrariesIsBelowTheFmaPeak) {
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
  EXPECT_GE(m.best_sgemm_gflops(), m.eigen.gflops);
  EXPECT_EQ(m.yardstick_gflops("fp32"), m.best_sgemm_gflops());
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
