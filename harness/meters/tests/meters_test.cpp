#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "harness/meters/fma_peak.hpp"
#include "harness/meters/machine_limits.hpp"
#include "harness/meters/peak_rss.hpp"
#include "harness/meters/sgemm_rate.hpp"

namespace lobench::meters {
namespace {

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
