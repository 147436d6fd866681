// The element-wise tile kernels of every instruction-set path this CPU runs, held to float64 math:
// softplus and σ over the whole float range, the tile loops on ragged tiles, long-row loss sums, and
// the paths against each other.
#include "variants/bce/bce_tile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

namespace lobench {
namespace {

using cpu::BceTileKernels;
using cpu::SimdPath;

double softplus_f64(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
double sigmoid_f64(double x) {
  const double e = std::exp(-std::abs(x));
  return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

// |got − want| in units of the last place of float at `want` (subnormal spacing below the normals).
double ulps(float got, double want) {
  const double a = std::abs(want);
  const double spacing =
      a < double(std::numeric_limits<float>::min()) ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::ilogb(a) - 23);
  return std::abs(double(got) - want) / spacing;
}

// Every 4093rd float bit pattern (about a million values over all exponents and both signs) plus the
// points where the approximations change regime.
std::vector<float> float_range_sample() {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 4093) {
    const float x = std::bit_cast<float>(uint32_t(bits));
    if (std::isfinite(x)) xs.push_back(x);
  }
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.34657359f, -0.34657359f, 1.0f, -1.0f, 15.9424f, -15.9424f,
                  87.0f, -87.0f, 88.7f, -88.7f, 103.2789f, -103.2789f, 103.98f, -103.98f, 104.0f, -104.0f,
                  104.1f, -104.1f, 1e30f, -1e30f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()})
    xs.push_back(x);
  for (int i = -20000; i <= 20000; ++i) xs.push_back(float(i) * 0.0061f);  // dense where logits live
  return xs;
}

struct Elements {
  std::vector<float> softplus, sigmoid;
};

Elements evaluate(const BceTileKernels& k, const std::vector<float>& xs) {
  Elements e{std::vector<float>(xs.size()), std::vector<float>(xs.size())};
  k.softplus_sigmoid_elements(xs.data(), int64_t(xs.size()), e.softplus.data(), e.sigmoid.data());
  return e;
}

// Measured on this file's sample: softplus ≤ 2.31 ulps and σ ≤ 2.27 (AVX2, AVX-512), ≤ 2.62 and ≤ 2.35
// (portable); the bound leaves room for other compilers.
constexpr double kMaxUlps = 4.0;

TEST(BceTile, ThisCpuRunsTheBestCompiledPath) {
  const auto paths = cpu::available_simd_paths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), SimdPath::portable);
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), SimdPath::avx2), paths.end()) << "AVX2 path missing";
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
    EXPECT_EQ(paths.front(), SimdPath::avx512) << "AVX-512 CPU, AVX-512 path not chosen";
  }
#endif
  if (const char* env = std::getenv("LOBENCH_ISA"); !env || !*env) {
    EXPECT_EQ(cpu::active_bce_tile_kernels().path, paths.front());
  }
}

TEST(BceTile, SoftplusAndSigmoidMatchFloat64OverTheFloatRange) {
  const std::vector<float> xs = float_range_sample();
  for (SimdPath path : cpu::available_simd_paths()) {
    const Elements e = evaluate(cpu::bce_tile_kernels(path), xs);
    double worst_sp = 0, worst_sig = 0;
    float at_sp = 0, at_sig = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double sp = ulps(e.softplus[i], softplus_f64(xs[i])), sig = ulps(e.sigmoid[i], sigmoid_f64(xs[i]));
      if (sp > worst_sp) {
        worst_sp = sp;
        at_sp = xs[i];
      }
      if (sig > worst_sig) {
        worst_sig = sig;
        at_sig = xs[i];
      }
    }
    EXPECT_LE(worst_sp, kMaxUlps) << to_string(path) << " softplus at x = " << at_sp;
    EXPECT_LE(worst_sig, kMaxUlps) << to_string(path) << " sigmoid at x = " << at_sig;
    std::printf("[ info     ] %s: worst softplus %.2f ulp (x = %g), worst sigmoid %.2f ulp (x = %g), %zu values\n",
                to_string(path).c_str(), worst_sp, at_sp, worst_sig, at_sig, xs.size());
  }
}

TEST(BceTile, InfinitiesAndNaNBehave) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {inf, -inf, nan, -nan};
  for (SimdPath path : cpu::available_simd_paths()) {
    const Elements e = evaluate(cpu::bce_tile_kernels(path), xs);
    EXPECT_EQ(e.softplus[0], inf) << to_string(path);
    EXPECT_EQ(e.sigmoid[0], 1.0f) << to_string(path);
    EXPECT_EQ(e.softplus[1], 0.0f) << to_string(path);
    EXPECT_EQ(e.sigmoid[1], 0.0f) << to_string(path);
    for (int i : {2, 3}) {
      EXPECT_TRUE(std::isnan(e.softplus[i])) << to_string(path) << ": a NaN logit must poison the loss";
      EXPECT_TRUE(std::isnan(e.sigmoid[i])) << to_string(path);
    }
  }
}

TEST(BceTile, PathsAgreeWithEachOther) {
  const std::vector<float> xs = float_range_sample();
  const auto paths = cpu::available_simd_paths();
  const Elements best = evaluate(cpu::bce_tile_kernels(paths.front()), xs);
  for (SimdPath path : paths) {
    const Elements e = evaluate(cpu::bce_tile_kernels(path), xs);
    double worst = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      worst = std::max(worst, ulps(e.softplus[i], best.softplus[i]));
      worst = std::max(worst, ulps(e.sigmoid[i], best.sigmoid[i]));
    }
    // The same polynomials in the same order: the FMA paths agree bit for bit (scalef and the two-step
    // ldexp round alike); the portable path multiplies and adds separately, a few ulps away.
    if (path == SimdPath::portable) EXPECT_LE(worst, kMaxUlps) << "portable against " << to_string(paths.front());
    else EXPECT_EQ(worst, 0.0) << to_string(path) << " against " << to_string(paths.front());
  }
}

// Random tiles of ragged widths: every kernel against float64, padding columns between cols and ld
// untouched, and the sums added to (not stored over) what the accumulators held.
TEST(BceTile, TileKernelsMatchFloat64OnRaggedTiles) {
  std::mt19937 rng(7);
  std::normal_distribution<float> logit(0.0f, 6.0f);
  std::uniform_real_distribution<float> scale(0.0f, 2.0f);
  constexpr float kCanary = 12345.0f;
  for (SimdPath path : cpu::available_simd_paths()) {
    const BceTileKernels& k = cpu::bce_tile_kernels(path);
    for (int64_t cols : {1, 5, 15, 16, 17, 31, 32, 33, 64, 100, 513}) {
      const int64_t rows = 3, ld = (cols + 15) / 16 * 16 + 16;
      std::vector<float> x(size_t(rows * ld), kCanary), scales(rows);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j) x[size_t(r * ld + j)] = logit(rng);
      for (auto& s : scales) s = scale(rng);

      std::vector<double> loss_a(rows, 1.5), loss_b(rows, 1.5);
      std::vector<int64_t> pred_a(rows, 2), pred_b(rows, 2);
      std::vector<float> y = x, z = x;
      k.softplus_rows(x.data(), rows, cols, ld, loss_a.data(), pred_a.data());
      k.sigmoid_scaled(y.data(), rows, cols, ld, scales.data());
      k.softplus_and_sigmoid(z.data(), rows, cols, ld, loss_b.data(), pred_b.data(), scales.data());
      for (int64_t r = 0; r < rows; ++r) {
        double want_loss = 1.5;
        int64_t want_pred = 2;
        for (int64_t j = 0; j < cols; ++j) {
          const double xv = x[size_t(r * ld + j)];
          want_loss += softplus_f64(xv);
          want_pred += xv > 0;
          const double g = double(scales[size_t(r)]) * sigmoid_f64(xv);
          EXPECT_LE(std::abs(y[size_t(r * ld + j)] - g), 3e-7 * std::abs(g) + 1e-38) << to_string(path);
          EXPECT_EQ(y[size_t(r * ld + j)], z[size_t(r * ld + j)]) << to_string(path) << ": fused and separate differ";
        }
        for (int64_t j = cols; j < ld; ++j) {
          EXPECT_EQ(y[size_t(r * ld + j)], kCanary) << to_string(path) << " wrote past cols " << cols;
          EXPECT_EQ(z[size_t(r * ld + j)], kCanary) << to_string(path) << " wrote past cols " << cols;
        }
        EXPECT_NEAR(loss_a[size_t(r)], want_loss, 3e-7 * want_loss) << to_string(path) << " cols " << cols;
        EXPECT_EQ(loss_a[size_t(r)], loss_b[size_t(r)]) << to_string(path);
        EXPECT_EQ(pred_a[size_t(r)], want_pred) << to_string(path);
        EXPECT_EQ(pred_b[size_t(r)], want_pred) << to_string(path);
      }
    }
  }
}

// A row as long as a large vocabulary, with most logits far below 0 (a trained model's regime, where
// each softplus is tiny and a float sum would lose them): the row sum stays within 1e-6 relative.
TEST(BceTile, LongRowLossSumsStayAccurate) {
  const int64_t cols = 1 << 22;
  std::mt19937 rng(11);
  std::normal_distribution<float> logit(-12.0f, 3.0f);
  std::vector<float> x(static_cast<size_t>(cols));
  for (auto& v : x) v = logit(rng);
  double want = 0;
  for (float v : x) want += softplus_f64(v);
  for (SimdPath path : cpu::available_simd_paths()) {
    double loss = 0;
    int64_t pred = 0;
    cpu::bce_tile_kernels(path).softplus_rows(x.data(), 1, cols, cols, &loss, &pred);
    EXPECT_LE(std::abs(loss - want) / want, 1e-6) << to_string(path);
  }
}

TEST(BceTile, PathNamesRoundTrip) {
  for (SimdPath p : {SimdPath::portable, SimdPath::avx2, SimdPath::avx512})
    EXPECT_EQ(cpu::parse_simd_path(to_string(p)), p);
  EXPECT_FALSE(cpu::parse_simd_path("sse9").has_value());
}

}  // namespace
}  // namespace lobench
