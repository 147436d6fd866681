// bf16 operands on the CPU (variants/cpu/bf16_dot.hpp, bf16_products.hpp, tile_products_bf16.hpp):
//   - the scalar model of VDPBF16PS against the instruction's documented definition (order of the two
//     steps, one rounding per step, denormals read as zero and flushed), and the rounding to bf16
//     against precision_sim's bfloat16 (the ml_dtypes oracle);
//   - the SIMD kernel and packing against the emulation, bit for bit, on random and denormal-laden
//     operands (skipped, saying why, on a CPU without AVX512_BF16);
//   - fused, chunked and dense with --operand bf16 against the float64 reference on the bf16-rounded inputs,
//     through the emulation on every CPU and through the SIMD kernel where it runs, with the GPU rows'
//     tolerances (cuda_conformance_test.cpp: loss 1e-5, gradients 4e-3, counts exact);
//   - results independent of the thread count; SIMD and emulated steps identical; the skip reason;
//   - the AMX kernel (TDPBF16PS) against its own model, bit for bit, the model against probes of the
//     instruction's rounding, and the variants through both (skipped, saying why, without AMX-BF16).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/accuracy.hpp"
#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/bf16_dot.hpp"
#include "variants/cpu/bf16_fused_tile.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/finite_outputs.hpp"
#include "variants/cpu/tile_scan.hpp"
#include "variants/tests/bf16_test_kernels.hpp"
#include "variants/tests/forced_simd_path.hpp"
#include "variants/reference.hpp"
#include "variants/tests/ragged_cases.hpp"
#include "variants/tests/reference_checks.hpp"
#include "variants/tests/scoped_env.hpp"

namespace lobench {
namespace {

using cpu::Bf16Kernel;
using lobench::testing::ForcedBf16Kernel;
using lobench::testing::ForcedSimdPath;
using lobench::testing::bf16_kernels_to_test;
using lobench::testing::rounded_bf16;


#define LOBENCH_REQUIRE_BF16_SIMD()                                               \
  do {                                                                            \
    if (auto why = cpu::bf16_simd_unavailable()) GTEST_SKIP() << *why;            \
  } while (0)

#define LOBENCH_REQUIRE_BF16_AMX()                                                \
  do {                                                                            \
    if (auto why = cpu::bf16_amx_unavailable()) GTEST_SKIP() << *why;             \
  } while (0)

uint32_t pair_bits(uint16_t low, uint16_t high) { return uint32_t(low) | (uint32_t(high) << 16); }
uint16_t bf(float x) { return cpu::bf16_nearest_even(x); }

// ---- the model against the instruction's definition ----

TEST(Bf16Dot, TheHighPairIsAddedFirstAndEachStepRoundsOnce) {
  // acc = 2^24 (float spacing 2 there); high product 1, low product 2. High first: 2^24 + 1 ties to the
  // even 2^24, then + 2 = 2^24 + 2. Low first would give 2^24 + 2 + 1 → 2^24 + 4; the exact sum is 2^24 + 3.
  const float acc = 16777216.0f;
  const uint32_t a = pair_bits(bf(2.0f), bf(1.0f)), b = pair_bits(bf(1.0f), bf(1.0f));
  EXPECT_EQ(cpu::dpbf16_lane(acc, a, b), 16777218.0f);
  EXPECT_EQ(cpu::dpbf16_lane(0.0f, pair_bits(bf(3.0f), bf(-0.5f)), pair_bits(bf(0.25f), bf(8.0f))), 0.75f - 4.0f);
}

TEST(Bf16Dot, DenormalsAreReadAsZeroAndFlushed) {
  const float tiny = FLT_MIN / 4;  // a float32 denormal, and a bf16 one (bf16 keeps float32's exponents)
  ASSERT_EQ(std::fpclassify(cpu::bf16_value(bf(tiny))), FP_SUBNORMAL);
  // A denormal operand contributes nothing, even against a huge partner.
  EXPECT_EQ(cpu::dpbf16_lane(1.0f, pair_bits(bf(tiny), 0), pair_bits(bf(1e30f), 0)), 1.0f);
  // A denormal accumulator is read as zero.
  EXPECT_EQ(cpu::dpbf16_lane(tiny, 0, 0), 0.0f);
  // A result in the denormal range (+0 + 2^-70 · −2^-70, the second step) is flushed to zero, keeping its
  // sign; in the first step the second one's +0·+0 product would turn that −0 into +0 again.
  const float r = cpu::dpbf16_lane(0.0f, pair_bits(bf(std::ldexp(1.0f, -70)), 0), pair_bits(bf(-std::ldexp(1.0f, -70)), 0));
  EXPECT_EQ(r, 0.0f);
  EXPECT_TRUE(std::signbit(r));
  EXPECT_FALSE(std::signbit(cpu::dpbf16_lane(0.0f, pair_bits(0, bf(std::ldexp(1.0f, -70))), pair_bits(0, bf(-std::ldexp(1.0f, -70))))));
  // A normal product is exact: 2^-60 · 2^-60 = 2^-120 is kept.
  EXPECT_EQ(cpu::dpbf16_lane(0.0f, pair_bits(0, bf(std::ldexp(1.0f, -60))), pair_bits(0, bf(std::ldexp(1.0f, -60)))),
            std::ldexp(1.0f, -120));
}

TEST(Bf16Dot, RoundingToBf16MatchesPrecisionSimsBfloat16) {
  const precision::Quantizer q(precision::parse_format("bfloat16"));
  std::mt19937 rng(7);
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, 1.00390625f /* tie, odd kept bit */, 1.01171875f /* tie, even */,
                           FLT_MIN / 3, -FLT_MIN / 5, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, 3.3895314e38f};
  for (int i = 0; i < 20000; ++i) xs.push_back(cpu::bits_float(uint32_t(rng())));
  for (float x : xs) {
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(cpu::bf16_value(bf(x))));
      continue;
    }
    EXPECT_EQ(cpu::float_bits(cpu::bf16_value(bf(x))), cpu::float_bits(q.round(x))) << "x = " << x;
  }
}

// ---- the SIMD kernel and packing against the emulation ----

// Floats of every kind the kernels meet: ordinary values, values whose products underflow, bf16
// denormals, exact zeros of both signs, and (for the accumulator) float32 denormals.
std::vector<float> nasty_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    switch (rng() % 8) {
      case 0: x = std::ldexp(normal(rng), -64 - int(rng() % 20)); break;  // products underflow
      case 1: x = std::ldexp(normal(rng), -128 - int(rng() % 10)); break;  // denormal
      case 2: x = (rng() & 1) ? 0.0f : -0.0f; break;
      case 3: x = std::ldexp(normal(rng), int(rng() % 40)); break;
      default: x = normal(rng);
    }
  }
  return v;
}

struct ProductCase {
  int64_t M, N, K2;
  bool transposed, accumulate;
};

const Bf16Kernel kSimdKernels[] = {Bf16Kernel::avx512_bf16, Bf16Kernel::avx512_fma};

void expect_simd_equals_emulation(Bf16Kernel kernel, const ProductCase& pc, uint32_t seed,
                                  Bf16Kernel model = Bf16Kernel::emulated) {
  const int64_t lda = pc.K2 + 3, ldb = pc.N + 5, ldc = (pc.transposed ? pc.M : pc.N) + 2;
  const std::vector<float> af = nasty_values(pc.M * lda * 2, seed), bf_ = nasty_values(pc.K2 * ldb * 2, seed + 1);
  std::vector<uint32_t> a(size_t(pc.M * lda)), b(size_t(pc.K2 * ldb));
  for (size_t i = 0; i < a.size(); ++i) a[i] = cpu::bf16_pair(af[2 * i], af[2 * i + 1]);
  for (size_t i = 0; i < b.size(); ++i) b[i] = cpu::bf16_pair(bf_[2 * i], bf_[2 * i + 1]);
  const int64_t c_rows = pc.transposed ? pc.N : pc.M;
  std::vector<float> c0 = nasty_values(c_rows * ldc, seed + 2);
  std::vector<float> c_simd = c0, c_emul = c0;
  cpu::Bf16Product p;
  p.M = pc.M, p.N = pc.N, p.K2 = pc.K2, p.a = a.data(), p.lda = lda, p.b = b.data(), p.ldb = ldb, p.ldc = ldc;
  p.c_transposed = pc.transposed, p.accumulate = pc.accumulate;
  p.c = c_simd.data();
  cpu::bf16_product(kernel, p);
  p.c = c_emul.data();
  cpu::bf16_product(model, p);
  int64_t differ = 0;
  for (size_t i = 0; i < c0.size(); ++i) differ += cpu::float_bits(c_simd[i]) != cpu::float_bits(c_emul[i]);
  EXPECT_EQ(differ, 0) << to_string(kernel) << " M " << pc.M << " N " << pc.N << " K2 " << pc.K2 << " transposed " << pc.transposed
                       << " accumulate " << pc.accumulate;
}

TEST(Bf16Products, SimdKernelEqualsTheEmulationBitForBit) {
  LOBENCH_REQUIRE_BF16_SIMD();
  // (K2 = 600 crosses the FMA kernel's chunks of 256 pairs)
  for (Bf16Kernel kernel : kSimdKernels) {
    uint32_t seed = 1;
    for (const ProductCase& pc : {ProductCase{1, 1, 1, false, false}, ProductCase{8, 32, 64, false, false},
                                  ProductCase{13, 47, 9, false, true}, ProductCase{9, 17, 33, true, true},
                                  ProductCase{64, 100, 3, true, false}, ProductCase{3, 15, 200, false, true},
                                  ProductCase{17, 33, 1, true, true}, ProductCase{16, 16, 0, false, true},
                                  ProductCase{11, 40, 600, true, true}, ProductCase{9, 35, 513, false, false}})
      expect_simd_equals_emulation(kernel, pc, seed += 10);
  }
}

const ProductCase kAmxCases[] = {
    {1, 1, 1, false, false},   {16, 16, 16, false, false}, {32, 32, 64, false, true}, {33, 47, 17, false, true},
    {9, 17, 33, true, true},   {64, 100, 3, true, false},  {17, 33, 1, true, true},   {16, 16, 0, false, true},
    {40, 70, 600, true, true}, {128, 96, 512, true, false}, {35, 128, 64, false, false}};

TEST(Bf16Products, AmxKernelEqualsItsModelBitForBit) {
  LOBENCH_REQUIRE_BF16_AMX();
  uint32_t seed = 3;
  for (const ProductCase& pc : kAmxCases) expect_simd_equals_emulation(Bf16Kernel::amx_bf16, pc, seed += 10, Bf16Kernel::emulated_amx);
}

// One output of the model over a single block: pairs (low, high) of a and b.
float tile_element(float acc, std::vector<std::pair<float, float>> a, std::vector<std::pair<float, float>> b) {
  std::vector<uint32_t> aw, bw;
  for (auto [lo, hi] : a) aw.push_back(cpu::bf16_pair(lo, hi));
  for (auto [lo, hi] : b) bw.push_back(cpu::bf16_pair(lo, hi));
  return cpu::tdpbf16_element(acc, aw.data(), bw.data(), 1, int64_t(aw.size()));
}

TEST(Bf16Dot, TheTileModelSumsLowAndHighHalvesApartThenAddsThemToTheAccumulator) {
  // acc = 2^24 (spacing 2), products 1 (low) and 1 (high): low + high = 2 exactly, then 2^24 + 2. The
  // lane chain would round 2^24 + 1 to 2^24 twice.
  EXPECT_EQ(tile_element(16777216.0f, {{1, 1}}, {{1, 1}}), 16777218.0f);
  // Low products 2^20 then 2^-20 (two pairs): the low sum rounds the small one away, the high one cancels
  // the big one: 0, where an exact sum gives 2^-20.
  EXPECT_EQ(tile_element(0.0f, {{1, 1}, {1.0f / 1024, 0}}, {{1048576.0f, -1048576.0f}, {1.0f / 1024, 0}}), 0.0f);
  // acc = 1, products 1.5·2^-24 (low and high): their sum 3·2^-24 is exact, then 1 + 3·2^-24 rounds once
  // to 1 + 2^-22. Adding them one at a time to acc gives 1 + 2^-23.
  EXPECT_EQ(tile_element(1.0f, {{1.5f / 4096, 1.5f / 4096}}, {{1.0f / 4096, 1.0f / 4096}}), 1.0f + std::ldexp(1.0f, -22));
  // Sixteen products 2^-25 into acc = 1: summed apart first (2^-21), so they count.
  std::vector<std::pair<float, float>> a16(16, {std::ldexp(1.0f, -12), 0.0f}), b16(16, {std::ldexp(1.0f, -13), 0.0f});
  EXPECT_EQ(tile_element(1.0f, a16, b16), 1.0f + std::ldexp(1.0f, -21));
  // Denormal products flush; a denormal accumulator reads as zero.
  EXPECT_EQ(tile_element(0.0f, {{std::ldexp(1.0f, -70), 0}}, {{std::ldexp(1.0f, -70), 0}}), 0.0f);
  EXPECT_EQ(tile_element(FLT_MIN / 4, {{0, 0}}, {{0, 0}}), 0.0f);
}

TEST(Bf16Products, TheAmxInstructionAgreesWithTheModelsCorners) {
  LOBENCH_REQUIRE_BF16_AMX();
  const float tiny = FLT_MIN / 4, t70 = std::ldexp(1.0f, -70);
  struct Corner {
    float acc;
    uint32_t a, b;
  };
  const Corner corners[] = {
      {16777216.0f, pair_bits(bf(1.0f), bf(1.0f)), pair_bits(bf(1.0f), bf(1.0f))},
      {1.0f, pair_bits(bf(1.5f / 4096), bf(1.5f / 4096)), pair_bits(bf(1.0f / 4096), bf(1.0f / 4096))},
      {16777216.0f, pair_bits(bf(2.0f), bf(1.0f)), pair_bits(bf(1.0f), bf(1.0f))},
      {1.0f, pair_bits(bf(tiny), 0), pair_bits(bf(1e30f), 0)},
      {tiny, 0, 0},
      {0.0f, pair_bits(bf(t70), 0), pair_bits(bf(-t70), 0)},
      {-0.0f, pair_bits(bf(-1.0f), 0), pair_bits(0, 0)},
      {-0.0f, 0, 0},
      {FLT_MIN, pair_bits(bf(-FLT_MIN), 0), pair_bits(bf(1.0f), 0)}};
  for (const Corner& c : corners) {
    float out = c.acc;
    cpu::Bf16Product p{1, 1, 1, &c.a, 1, &c.b, 1, &out, 1, false, true};
    cpu::bf16_product(Bf16Kernel::amx_bf16, p);
    EXPECT_EQ(cpu::float_bits(out), cpu::float_bits(cpu::tdpbf16_element(c.acc, &c.a, &c.b, 1, 1)))
        << "acc " << c.acc << " a " << std::hex << c.a << " b " << c.b;
  }
}

TEST(Bf16Products, TheInstructionAgreesWithTheModelsCorners) {
  LOBENCH_REQUIRE_BF16_SIMD();
  const float tiny = FLT_MIN / 4, t70 = std::ldexp(1.0f, -70);
  struct Corner {
    float acc;
    uint32_t a, b;
  };
  const Corner corners[] = {
      {16777216.0f, pair_bits(bf(2.0f), bf(1.0f)), pair_bits(bf(1.0f), bf(1.0f))},  // order of the two steps
      {1.0f, pair_bits(bf(tiny), 0), pair_bits(bf(1e30f), 0)},                    // denormal operand
      {tiny, 0, 0},                                                                // denormal accumulator
      {0.0f, pair_bits(bf(t70), 0), pair_bits(bf(-t70), 0)},                       // flushed result, sign kept
      {0.0f, pair_bits(0, bf(t70)), pair_bits(0, bf(-t70))},                       // then +0·+0 → +0
      {-0.0f, 0, 0},
      {FLT_MIN, pair_bits(bf(-FLT_MIN), 0), pair_bits(bf(1.0f), 0)}};
  for (Bf16Kernel kernel : kSimdKernels)
    for (const Corner& c : corners) {
      float out = c.acc;
      cpu::Bf16Product p{1, 1, 1, &c.a, 1, &c.b, 1, &out, 1, false, true};
      cpu::bf16_product(kernel, p);
      EXPECT_EQ(cpu::float_bits(out), cpu::float_bits(cpu::dpbf16_lane(c.acc, c.a, c.b)))
          << to_string(kernel) << " acc " << c.acc << " a " << std::hex << c.a << " b " << c.b;
    }
}

TEST(Bf16Products, SimdPackingEqualsTheScalarRounding) {
  LOBENCH_REQUIRE_BF16_SIMD();
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {5, 33}, {16, 64}, {7, 47}, {2, 100}, {37, 70}, {33, 16}}) {
    const int64_t ld = cols + 3;
    std::vector<float> src = nasty_values(rows * ld, uint32_t(rows * 100 + cols));
    src[0] = NAN;
    const int64_t cw = (cols + 1) / 2, rw = (rows + 1) / 2;
    std::vector<uint32_t> by_col(size_t(rows * cw)), by_row(size_t(rw * cols)), by_col_t(size_t(cw * (rows + 3)), 7u);
    cpu::pair_columns(src.data(), ld, rows, cols, by_col.data(), cw);
    cpu::pair_columns_transposed(src.data(), ld, rows, cols, by_col_t.data(), rows + 3);
    cpu::pair_rows(src.data(), ld, rows, cols, by_row.data(), cols);
    auto at = [&](int64_t r, int64_t c) { return r < rows && c < cols ? src[size_t(r * ld + c)] : 0.0f; };
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cw; ++k)
        ASSERT_EQ(by_col[size_t(r * cw + k)], cpu::bf16_pair(at(r, 2 * k), at(r, 2 * k + 1))) << rows << "x" << cols;
    for (int64_t k = 0; k < cw; ++k)
      for (int64_t r = 0; r < rows + 3; ++r)  // (the 3 words past each row are left alone)
        ASSERT_EQ(by_col_t[size_t(k * (rows + 3) + r)], r < rows ? by_col[size_t(r * cw + k)] : 7u) << rows << "x" << cols;
    for (int64_t k = 0; k < rw; ++k)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(by_row[size_t(k * cols + c)], cpu::bf16_pair(at(2 * k, c), at(2 * k + 1, c))) << rows << "x" << cols;
    // Both at once: the same words (and the words past each row of the transposed layout left alone).
    std::vector<uint32_t> both_t(size_t(cw * (rows + 3)), 7u), both_rows(size_t(rw * (cols + 1)), 7u);
    cpu::pair_columns_transposed_and_rows(src.data(), ld, rows, cols, both_t.data(), rows + 3, both_rows.data(), cols + 1);
    EXPECT_EQ(both_t, by_col_t) << rows << "x" << cols;
    for (int64_t k = 0; k < rw; ++k)
      for (int64_t c = 0; c <= cols; ++c)
        ASSERT_EQ(both_rows[size_t(k * (cols + 1) + c)], c < cols ? by_row[size_t(k * cols + c)] : 7u) << rows << "x" << cols;
  }
}

TEST(Bf16Products, EmulatedProductMatchesAFloat64Product) {
  // Ordinary values: the float32 chain of exact products stays within K·2^-24 of the exact sum.
  const int64_t M = 5, N = 7, K2 = 40;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> af(size_t(M * 2 * K2)), bf_(size_t(2 * K2 * N));
  for (auto& x : af) x = normal(rng);
  for (auto& x : bf_) x = normal(rng);
  std::vector<uint32_t> a(size_t(M * K2)), b(size_t(K2 * N));
  cpu::pair_columns(af.data(), 2 * K2, M, 2 * K2, a.data(), K2);  // a[m][k] pairs along the inner index
  cpu::pair_rows(bf_.data(), N, 2 * K2, N, b.data(), N);           // b[k][n] pairs along the inner index
  std::vector<float> c(size_t(M * N), 0.0f);
  cpu::Bf16Product p{M, N, K2, a.data(), K2, b.data(), N, c.data(), N, false, false};
  cpu::bf16_product(Bf16Kernel::emulated, p);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double exact = 0, size = 0;
      for (int64_t k = 0; k < 2 * K2; ++k) {
        const double t = double(cpu::bf16_value(bf(af[size_t(m * 2 * K2 + k)]))) * cpu::bf16_value(bf(bf_[size_t(k * N + n)]));
        exact += t;
        size += std::abs(t);
      }
      EXPECT_NEAR(c[size_t(m * N + n)], exact, 2 * K2 * std::ldexp(size, -23)) << m << "," << n;
    }
}

// The fused bf16 tile's loss (bf16_fused_tile.hpp: one logarithm per 16 logits of a lane, Σ max(x, 0) +
// log1p(Π(1 + e) − 1)) against the float64 softplus sum of the same logits: within 64 float32 ulps of the
// row's sum (the product's 16 steps add ≲ 2 roundings each to q, the logarithm and the float sums a few
// more), on rows of every width's remainder, logits from near 0 to ±200 (e^{−|x|} underflows), exact zeros
// and ±inf; and the counts #{x > 0}. Through the epilogue on logits already made (what the AMX path runs).
TEST(Bf16FusedTile, RowLossMatchesFloat64Softplus) {
#if defined(__x86_64__) && defined(__GNUC__)
  LOBENCH_REQUIRE_BF16_SIMD();
  std::mt19937 rng(71);
  for (int64_t n : {1, 17, 31, 33, 255, 256, 300, 1000}) {
    const int64_t rows = 13, ldx = n + 5, words = (n + 31) / 32, ld_targets = 16;
    std::vector<float> X(size_t(rows * ldx)), row_scale(size_t(rows), 1.0f);
    for (int64_t r = 0; r < rows; ++r) {
      std::normal_distribution<float> logit(0.0f, r % 4 == 0 ? 0.1f : r % 4 == 1 ? 3.0f : r % 4 == 2 ? 30.0f : 120.0f);
      for (int64_t j = 0; j < n; ++j) X[size_t(r * ldx + j)] = logit(rng);
    }
    X[0] = 0.0f, X[size_t(ldx + n / 2)] = INFINITY, X[size_t(2 * ldx + n - 1)] = -INFINITY;
    std::vector<uint32_t> targets(size_t(words * ld_targets), 0u), G_pos(size_t((rows + 1) / 2 * n)), G_voc(size_t(rows * ((n + 1) / 2)));
    std::vector<double> row_sums(size_t(rows * cpu::kBf16RowSumDoubles)), loss(size_t(rows), 0.0);
    std::vector<int64_t> predicted(size_t(rows), 0);
    cpu::Bf16FusedTile t;
    t.rows = rows, t.n = n;
    t.row_scale = row_scale.data();
    t.targets = targets.data(), t.ld_targets = ld_targets;
    t.X = X.data(), t.ldx = ldx;
    t.row_sums = row_sums.data();
    t.predicted = predicted.data();
    t.G_by_pos = G_pos.data(), t.ld_gpos = n;
    t.G_by_voc = G_voc.data(), t.ld_gvoc = (n + 1) / 2;
    cpu::bf16_fused_tile(t, /*logits_in_x=*/true, /*fp16_epilogue=*/false);
    cpu::bf16_fused_tile_row_sums(row_sums.data(), rows, loss.data(), false);
    for (int64_t r = 0; r < rows; ++r) {
      double exact = 0;
      int64_t positive = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double x = X[size_t(r * ldx + j)];
        exact += std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
        positive += x > 0;
      }
      const std::string where = "n " + std::to_string(n) + " row " + std::to_string(r);
      EXPECT_EQ(predicted[size_t(r)], positive) << where;
      if (std::isinf(exact)) EXPECT_EQ(loss[size_t(r)], exact) << where;
      else EXPECT_NEAR(loss[size_t(r)], exact, 64 * 0x1p-24 * exact) << where;
    }
  }
#else
  GTEST_SKIP() << "x86-64 only";
#endif
}

// ---- the variants with bf16 operands ----

RunOptions threads_and_blocks(int threads, int64_t block_v, int64_t block_p) {
  RunOptions o;
  o.threads = threads, o.block_v = block_v, o.block_p = block_p;
  return o;
}


StepOutputs run_variant(const std::string& name, const StepInputs& in, RunOptions o) {
  const Variant* v = Registry::instance().find(name);
  EXPECT_NE(v, nullptr) << name;
  o.operand = "bf16";
  StepOutputs out;
  out.resize(in.P, in.V, in.D);
  std::fill(out.dE.begin(), out.dE.end(), std::nanf(""));
  if (auto why = v->skip_reason(Shape{1, in.P, in.V, in.D, in.L, in.reduction, false}, o)) {
    ADD_FAILURE() << name << " skipped: " << *why;
    return out;
  }
  CountingAllocator alloc;
  RunContext ctx{alloc, o};
  v->run(in, out, ctx);
  EXPECT_EQ(alloc.current_bytes(), 0) << name;
  return out;
}

// The GPU rows' rule (testing::expect_bf16_rule) against the reference on the inputs rounded to bf16.
void expect_bf16_conformance(const StepOutputs& out, const StepData& d, const std::string& where) {
  StepData r = d;
  r.A = rounded_bf16(d.A);
  r.E = rounded_bf16(d.E);
  testing::expect_bf16_rule(out, r.view(), where);
}

void check_variants_on_ragged_cases(int count) {
  for (const auto& c : testing::ragged_cases(count)) {
    const StepData d = make_synthetic(c.shape, c.spec);
    for (const char* name : {"fused", "chunked", "dense"}) {
      const StepOutputs out = run_variant(name, d.view(), c.options);
      expect_bf16_conformance(out, d, std::string(name) + " bf16 [" + to_string(cpu::active_bf16_kernel()) + "] on " + c.label());
    }
  }
}

TEST(Bf16Variants, MatchTheReferenceOnRoundedInputsThroughTheEmulation) {
  ForcedBf16Kernel emulated(Bf16Kernel::emulated);
  check_variants_on_ragged_cases(10);
}

TEST(Bf16Variants, MatchTheReferenceOnRoundedInputsThroughTheAmxModel) {
  ForcedBf16Kernel emulated(Bf16Kernel::emulated_amx);
  check_variants_on_ragged_cases(6);  // (the scalar model is slow; the kernel below equals it bit for bit)
}

TEST(Bf16Variants, MatchTheReferenceOnRoundedInputsThroughTheAmxKernel) {
  LOBENCH_REQUIRE_BF16_AMX();
  ForcedBf16Kernel forced(Bf16Kernel::amx_bf16);
  check_variants_on_ragged_cases(10);
}

TEST(Bf16Variants, MatchTheReferenceOnRoundedInputsThroughEachSimdKernel) {
  LOBENCH_REQUIRE_BF16_SIMD();
  for (Bf16Kernel kernel : kSimdKernels) {
    ForcedBf16Kernel forced(kernel);
    check_variants_on_ragged_cases(24);
  }
}

TEST(Bf16Variants, AreFarFromFp32OnlyByWhatTheFormatCosts) {
  // Against the reference on the original inputs, a bf16 step is off by the inputs' rounding (relative
  // 2^-9 per value): well above fp32's 1e-5, well below 5 %. A kernel that ignored the operand setting
  // would fail the lower bound.
  const Shape s{2, 40, 3001, 64, 4, Reduction::mean, true};
  const StepData d = make_synthetic(s, SyntheticSpec{});
  ForcedBf16Kernel emulated(Bf16Kernel::emulated);
  const StepOutputs out = run_variant("fused", d.view(), threads_and_blocks(2, 0, 0));
  CountingAllocator alloc;
  cpu::ReferenceResult ref;
  cpu::reference_step(d.view(), ref, alloc, 2);
  const double err = relative_l2_error(out.dE.data(), ref.dE.data(), d.V * d.D);
  EXPECT_GT(err, 1e-4);
  EXPECT_LT(err, 5e-2);
}

// Each instruction family (bf16_products.hpp): its model and its kernels give the same bits at any thread
// count.
void expect_bit_identical_across_threads_and(const std::vector<Bf16Kernel>& kernels) {
  const Shape s{2, 40, 3001, 24, 4, Reduction::mean, true};
  SyntheticSpec spec;
  spec.pad_fraction = 0.1;
  spec.dup_fraction = 0.1;
  const StepData d = make_synthetic(s, spec);
  for (const char* name : {"fused", "chunked", "dense"}) {
    std::optional<StepOutputs> first;
    for (Bf16Kernel k : kernels) {
      ForcedBf16Kernel forced(k);
      for (int threads : {1, 2, 3}) {
        const StepOutputs out = run_variant(name, d.view(), threads_and_blocks(threads, 100, 32));
        if (!first) {
          first = out;
          continue;
        }
        const std::string what = std::string(name) + " " + to_string(k) + " threads " + std::to_string(threads);
        EXPECT_EQ(out.loss, first->loss) << what;
        EXPECT_EQ(out.per_position_loss, first->per_position_loss) << what;
        EXPECT_EQ(out.dA, first->dA) << what;
        EXPECT_EQ(out.dE, first->dE) << what;
        EXPECT_EQ(out.counts, first->counts) << what;
      }
    }
  }
}

TEST(Bf16Variants, AreBitIdenticalForAnyThreadCountAndEitherLaneKernel) {
  std::vector<Bf16Kernel> kernels = {Bf16Kernel::emulated};
  if (!cpu::bf16_simd_unavailable()) kernels.insert(kernels.end(), std::begin(kSimdKernels), std::end(kSimdKernels));
  expect_bit_identical_across_threads_and(kernels);
}

TEST(Bf16Variants, AreBitIdenticalForAnyThreadCountThroughTheAmxKernelAndItsModel) {
  std::vector<Bf16Kernel> kernels = {Bf16Kernel::emulated_amx};
  if (!cpu::bf16_amx_unavailable()) kernels.push_back(Bf16Kernel::amx_bf16);
  expect_bit_identical_across_threads_and(kernels);
}

TEST(Bf16Variants, AreBitIdenticalWhereTheGradientTileHoldsDenormals) {
  // Position weights 2^-120 … 2^-131 (sum reduction: s = 1) put the logit gradient s·w·(σ(x) − y) around
  // FLT_MIN = 2^-126: the gradient tile holds float32 denormals, which the rounding to bf16 keeps, or
  // rounds up to FLT_MIN just below it, and normal values beside them. The fused tile's epilogue rounds
  // G itself (bf16_fused_tile_avx512.cpp), and must do so as the packing of the library path does.
  const Shape s{2, 40, 3001, 24, 4, Reduction::sum, false};
  StepData d = make_synthetic(s, SyntheticSpec{});
  d.weights.resize(size_t(d.P));
  for (int64_t p = 0; p < d.P; ++p) d.weights[size_t(p)] = std::ldexp(1.0f, -120 - int(p % 12));
  std::vector<Bf16Kernel> kernels = {Bf16Kernel::emulated};
  if (!cpu::bf16_simd_unavailable()) kernels.push_back(Bf16Kernel::avx512_bf16);
  std::optional<StepOutputs> first;
  for (Bf16Kernel k : kernels) {
    ForcedBf16Kernel forced(k);
    for (int threads : {1, 2}) {
      const StepOutputs out = run_variant("fused", d.view(), threads_and_blocks(threads, 100, 32));
      if (!first) {
        first = out;
        continue;
      }
      const std::string what = std::string(to_string(k)) + " threads " + std::to_string(threads);
      EXPECT_EQ(out.loss, first->loss) << what;
      EXPECT_EQ(out.dA, first->dA) << what;
      EXPECT_EQ(out.dE, first->dE) << what;
      EXPECT_EQ(out.counts, first->counts) << what;
    }
  }
  // (and the gradients are not all flushed away: dE holds normal values)
  EXPECT_GT(std::count_if(first->dE.begin(), first->dE.end(), [](float x) { return std::abs(x) >= FLT_MIN; }), 100);
}

// The fused tile with its element-wise math in binary16 (`--epilogue fp16` on AVX512-FP16,
// bf16_fused_tile.hpp) gives the bits of the library path, whose element-wise kernels are the binary16
// emulation (bce_tile_rounded.cpp): loss, per-position losses, dA, dE and counts, through the kernel that
// makes the logits in the epilogue's own kernel (avx512_bf16) and those that make them into X first. The
// tiles' widths leave every remainder of their last 32 columns (the emulation pairs columns l and 8 + l
// of each 16 and adds a last part 8 at a time); one case has logits up to ±2e4, where binary16's spacing
// is 16 and e^{−|x|} underflows.
TEST(Bf16Variants, TheBinary16EpilogueTileEqualsTheEmulatedKernelsBitForBit) {
  if (auto why = cpu::fp16_epilogue_tile_unavailable()) GTEST_SKIP() << *why;
  struct Case {
    StepData d;
    RunOptions o;
    std::string label;
  };
  std::vector<Case> cases;
  for (const auto& c : testing::ragged_cases(8)) cases.push_back({make_synthetic(c.shape, c.spec), c.options, c.label()});
  const Shape s{2, 19, 1000, 24, 4, Reduction::mean, true};
  for (int64_t block_v : {7, 13, 20, 29, 32, 61}) {
    SyntheticSpec spec;
    spec.seed = uint64_t(block_v);
    cases.push_back({make_synthetic(s, spec), threads_and_blocks(2, block_v, 16), "block_v " + std::to_string(block_v)});
  }
  {  // logits up to ±2e4 (binary16's spacing there is 16; e^{-|x|} underflows)
    Case big{make_synthetic(Shape{1, 9, 300, 16, 2, Reduction::sum, false}, SyntheticSpec{}), threads_and_blocks(1, 0, 0),
             "logits up to ±2e4"};
    for (float& a : big.d.A) a *= 800.0f;
    cases.push_back(std::move(big));
  }
  std::vector<Bf16Kernel> kernels = {Bf16Kernel::avx512_bf16, Bf16Kernel::emulated};
  if (!cpu::bf16_amx_unavailable()) kernels.push_back(Bf16Kernel::amx_bf16);
  double largest_loss = 0;
  for (Bf16Kernel k : kernels) {
    ForcedBf16Kernel forced(k);
    for (const Case& c : cases) {
      RunOptions o = c.o;
      o.epilogue = "fp16";
      o.operand = "bf16";
      ASSERT_TRUE(cpu::TiledRun::fused_bf16_tiles(o, true)) << "the binary16 tile would not run: " << c.label;
      const StepOutputs tile = run_variant("fused", c.d.view(), o);
      const StepOutputs library = [&] {
        ForcedSimdPath portable(cpu::SimdPath::portable);  // (the library path, with the same emulated kernels)
        EXPECT_FALSE(cpu::TiledRun::fused_bf16_tiles(o, true)) << "the library path would not run: " << c.label;
        return run_variant("fused", c.d.view(), o);
      }();
      const std::string what = std::string(to_string(k)) + " on " + c.label;
      EXPECT_EQ(tile.loss, library.loss) << what;
      EXPECT_EQ(tile.per_position_loss, library.per_position_loss) << what;
      EXPECT_EQ(tile.dA, library.dA) << what;
      EXPECT_EQ(tile.dE, library.dE) << what;
      EXPECT_EQ(tile.counts, library.counts) << what;
      largest_loss = std::max(largest_loss, std::abs(tile.loss));
    }
  }
  EXPECT_GT(largest_loss, 1e4) << "the large logits did not reach the loss";
}

// Logits of 65520 or more (binary16 rounds them to +inf) make the fp16 epilogue's loss infinite: the run is
// refused with a message that names binary16 and the way out, through the tile and the library path alike.
TEST(Bf16Variants, ABinary16EpilogueRefusesLogitsBeyondItsRange) {
  StepData d = make_synthetic(Shape{1, 9, 300, 16, 2, Reduction::sum, false}, SyntheticSpec{});
  for (float& a : d.A) a *= 4000.0f;
  RunOptions o = threads_and_blocks(1, 0, 0);
  o.operand = "bf16", o.epilogue = "fp16";
  ForcedBf16Kernel emulated(Bf16Kernel::emulated);
  for (bool library : {false, true}) {
    std::optional<ForcedSimdPath> portable;
    if (library) portable.emplace(cpu::SimdPath::portable);
    StepOutputs out;
    out.resize(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, o};
    try {
      Registry::instance().find("fused")->run(d.view(), out, ctx);
      ADD_FAILURE() << "no refusal, loss " << out.loss;
    } catch (const cpu::Float32Overflow& e) {
      EXPECT_NE(std::string(e.what()).find("binary16 (a logit of 65520 or more"), std::string::npos) << e.what();
    }
  }
}

// fused (its fused tile where the CPU runs it) and chunked (the library path) make the same gradients
// from the same logits: dA, dE and the counts bit for bit on the ragged cases; the loss differs only in
// how the fused tile sums softplus (one logarithm per 16 logits: bf16_fused_tile.hpp), within its rows'
// bound of 64 float32 ulps.
TEST(Bf16Variants, FusedAndChunkedMakeTheSameGradients) {
  LOBENCH_REQUIRE_BF16_SIMD();
  for (const auto& c : testing::ragged_cases(8)) {
    RunOptions o = c.options;
    o.operand = "bf16";
    ASSERT_TRUE(cpu::TiledRun::fused_bf16_tiles(o, true)) << "the fused tile would not run: " << c.label();
    const StepData d = make_synthetic(c.shape, c.spec);
    const StepOutputs fused = run_variant("fused", d.view(), c.options);
    const StepOutputs chunked = run_variant("chunked", d.view(), c.options);
    EXPECT_EQ(fused.dA, chunked.dA) << c.label();
    EXPECT_EQ(fused.dE, chunked.dE) << c.label();
    EXPECT_EQ(fused.counts, chunked.counts) << c.label();
    EXPECT_NEAR(fused.loss, chunked.loss, 64 * 0x1p-24 * std::abs(chunked.loss)) << c.label();
  }
}

TEST(Bf16Variants, WorkingMemoryIsPredictedExactly) {
  ForcedBf16Kernel emulated(Bf16Kernel::emulated);
  for (const Shape& s : {Shape{1, 37, 1001, 24, 5, Reduction::mean, true}, Shape{2, 3, 70, 3, 1, Reduction::sum, false}})
    for (const char* name : {"fused", "chunked", "dense"})
      for (int threads : {1, 2}) {
        const Variant* v = Registry::instance().find(name);
        RunOptions o = threads_and_blocks(threads, 64, 17);
        o.operand = "bf16";
        const StepData d = make_synthetic(s, SyntheticSpec{});
        StepOutputs out;
        out.resize(d.P, d.V, d.D);
        CountingAllocator alloc;
        RunContext ctx{alloc, o};
        v->run(d.view(), out, ctx);
        EXPECT_EQ(alloc.peak_bytes(), v->predicted_working_bytes(s, o)) << name << " threads " << threads;
        // More than the same variant's fp32 products through the library (the packed bf16 operands);
        // fp32 fused on AVX-512 holds Aᵀ and transposed tiles instead (cpu/fused_tile.hpp), not compared.
        RunOptions fp32 = o;
        fp32.operand = "fp32";
        const int64_t fp32_library_bytes = [&] {
          ForcedSimdPath portable(cpu::SimdPath::portable);
          return v->predicted_working_bytes(s, fp32);
        }();
        EXPECT_GT(v->predicted_working_bytes(s, o), fp32_library_bytes) << name;
      }
}

TEST(Bf16Variants, SkipWithTheReasonWhereTheKernelCannotRun) {
  const Variant* fused = Registry::instance().find("fused");
  RunOptions o;
  o.operand = "bf16";
  const Shape s{1, 4, 100, 8, 2, Reduction::mean, false};
  // LOBENCH_ISA=avx2 stands for a CPU without AVX-512 (and so without AVX512_BF16).
  const auto why = [&] {
    const testing::ScopedEnv isa("LOBENCH_ISA", "avx2");
    return fused->skip_reason(s, o);
  }();
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("AVX512_BF16"), std::string::npos) << *why;
  // tf32 is a GPU format.
  o.operand = "tf32";
  ASSERT_TRUE(fused->skip_reason(s, o).has_value());
  // Where the CPU has the instruction, nothing is skipped.
  o.operand = "bf16";
  if (!cpu::bf16_simd_unavailable()) {
    EXPECT_FALSE(fused->skip_reason(s, o).has_value());
  }
}

}  // namespace
}  // namespace lobench
