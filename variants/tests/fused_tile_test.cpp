// The fused tile's products of our own (variants/cpu/fused_tile.hpp) against their scalar model, bit for
// bit, on ragged shapes: every edge of the register blocks (14 broadcast rows, 32 lanes) and of the dE
// product's inner-index blocks (512), operands at offsets inside larger matrices as the variant passes
// them. The model is the header's: one fused multiply-add chain per output in increasing inner index (for dE,
// per block of 512 positions, each block's sum added into the output),
// σ of the element-wise tile kernels, the loss of each register block from one logarithm (bce_math.hpp,
// evaluated here on single floats), summed in float64 per 32-position panel; the accuracy of that loss
// against float64 math is tested here too.
// Skipped, saying why, where the kernels do not run (no AVX-512, or a lower path forced); the variants
// through them against the float64 reference are in simd_paths_test.cpp and conformance_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "variants/bce/bce_math.hpp"
#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/fused_tile.hpp"

namespace lobench {
namespace {

using cpu::TransposedTile;

#define LOBENCH_REQUIRE_OWN_KERNELS()                                                                   \
  do {                                                                                                  \
    if (cpu::own_tile_kernels() == nullptr)                                                             \
      GTEST_SKIP() << "the fused tile kernels of our own need AVX-512 and the avx512 tile path (active: " \
                   << cpu::to_string(cpu::active_bce_tile_kernels().path) << ")";                      \
  } while (0)

std::vector<float> random_floats(int64_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// bce_math's vector operations on one float, each rounded once as the kernels' instructions round (this
// file is compiled with -ffp-contract=off, variants/CMakeLists.txt): the scalar model of the epilogue's
// exponential and of its per-block logarithm. min and max return b when either is NaN, as on x86;
// exponent and mantissa are AVX-512's getexp and getmant (interval [1, 2)) for the u ≥ 1 they get here.
struct Scalar {
  using F = float;
  using M = bool;
  static F set1(float v) { return v; }
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F mul(F a, F b) { return a * b; }
  static F div(F a, F b) { return a / b; }
  static F fma(F a, F b, F c) { return __builtin_fmaf(a, b, c); }
  static F negative_abs(F a) { return -std::fabs(a); }
  static F min(F a, F b) { return a < b ? a : b; }
  static F max(F a, F b) { return a > b ? a : b; }
  static F round(F a) { return std::nearbyint(a); }
  static F ldexp(F p, F n) { return std::isnan(n) ? n : std::ldexp(p, int(n)); }
  static F exponent(F u) { return std::isnan(u) ? u : F(std::ilogb(u)); }
  static F mantissa(F u) { return std::isnan(u) ? u : std::scalbn(u, -std::ilogb(u)); }
  static M greater(F a, F b) { return a > b; }
  static F select(M m, F a, F b) { return m ? a : b; }
};

// The loss of one register block of logits as the kernels make it (fused_tile.hpp): the float sum of the
// positive logits in increasing j from +0, plus log1p(q) of the running q with 1 + q = Π (1 + e^−|x|).
struct BlockLossModel {
  float positive_sum = 0.0f, q = 0.0f;
  void add(float x) {
    if (x > 0.0f) positive_sum += x;
    q = cpu::bce_math::log1p_product_step<Scalar>(q, cpu::bce_math::exp_neg_abs<Scalar>(x));
  }
  float total() const { return positive_sum + cpu::bce_math::log1p_nonnegative<Scalar>(q); }
};

// A tile at an offset inside larger operands, the way the fused variant hands them over: its positions
// start at column `p0` of Aᵀ (made for P = p0 + rows + 5 positions), its tile has spare columns.
struct Case {
  int64_t rows, n, D;
  int64_t p0 = 3;
  std::vector<float> A_all, At, E, Gt;
  TransposedTile t;

  Case(int64_t rows_, int64_t n_, int64_t D_, std::mt19937& rng) : rows(rows_), n(n_), D(D_) {
    const int64_t P = p0 + rows + 5, ldat = cpu::transposed_ld(P);
    A_all = random_floats(P * D, rng, 1.0f);
    At.assign(size_t(D * ldat), std::numeric_limits<float>::quiet_NaN());
    cpu::transpose_rows(A_all.data(), P, D, At.data(), ldat);
    E = random_floats(n * D, rng, 0.5f);
    t.rows = rows, t.n = n, t.D = D;
    t.At = At.data() + p0, t.ldat = ldat;
    t.A = A_all.data() + p0 * D;
    t.E = E.data();
    t.ldt = cpu::transposed_ld(rows);
    Gt.assign(size_t(n * t.ldt), std::numeric_limits<float>::quiet_NaN());  // spare columns must stay NaN
    t.Gt = Gt.data();
  }
  float model_logit(int64_t j, int64_t r) const { return cpu::logit_chain(E.data() + j * D, t.A + r * D, D); }
  void expect_spare_columns_untouched(const char* what) const {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t r = rows; r < t.ldt; ++r) ASSERT_TRUE(std::isnan(Gt[size_t(j * t.ldt + r)])) << what << " wrote column " << r;
  }
};

const std::vector<int64_t> kRows = {1, 5, 16, 31, 32, 33, 70};
const std::vector<int64_t> kEntries = {1, 7, 13, 14, 15, 29, 40};
const std::vector<int64_t> kWidths = {1, 3, 16, 17, 32, 45, 70};

TEST(FusedTileKernels, TransposeRowsIsATranspose) {
  std::mt19937 rng(5);
  const int64_t P = 37, D = 41, ld = cpu::transposed_ld(P);
  const auto A = random_floats(P * D, rng, 1.0f);
  std::vector<float> At(size_t(D * ld), -7.0f);
  cpu::transpose_rows(A.data(), P, D, At.data(), ld);
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t p = 0; p < P; ++p) ASSERT_EQ(At[size_t(d * ld + p)], A[size_t(p * D + d)]);
    for (int64_t p = P; p < ld; ++p) ASSERT_EQ(At[size_t(d * ld + p)], -7.0f);
  }
}

TEST(FusedTileKernels, LogitsEqualTheirChainBitForBit) {
  LOBENCH_REQUIRE_OWN_KERNELS();
  std::mt19937 rng(11);
  for (int64_t rows : kRows)
    for (int64_t n : kEntries)
      for (int64_t D : kWidths) {
        Case c(rows, n, D, rng);
        cpu::own_tile_kernels()->logits(c.t);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_TRUE(same_bits(c.Gt[size_t(j * c.t.ldt + r)], c.model_logit(j, r)))
                << "rows " << rows << " n " << n << " D " << D << " at (" << j << ", " << r << ")";
        c.expect_spare_columns_untouched("logits");
      }
}

TEST(FusedTileKernels, EpilogueEqualsTheElementwiseKernelsBitForBit) {
  LOBENCH_REQUIRE_OWN_KERNELS();
  const cpu::BceTileKernels& elementwise = cpu::bce_tile_kernels(cpu::SimdPath::avx512);
  std::mt19937 rng(12);
  for (int64_t rows : kRows)
    for (int64_t n : kEntries)
      for (int64_t D : {int64_t(1), int64_t(17), int64_t(64)}) {
        Case c(rows, n, D, rng);
        const auto scale = random_floats(rows, rng, 2.0f);
        std::vector<double> loss(static_cast<size_t>(rows)), model_loss(static_cast<size_t>(rows));
        std::vector<int64_t> predicted(static_cast<size_t>(rows)), model_predicted(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) loss[size_t(r)] = model_loss[size_t(r)] = 0.25 * double(r), predicted[size_t(r)] = model_predicted[size_t(r)] = r;
        cpu::own_tile_kernels()->logits_sigmoid(c.t, scale.data(), loss.data(), predicted.data());
        c.expect_spare_columns_untouched("logits_sigmoid");
        for (int64_t r = 0; r < rows; ++r) {
          // The model: each position's loss per block of kTransposedBlockRows entries (BlockLossModel), the
          // block sums in float64, then added into its loss; σ the element-wise kernels' bit for bit.
          double panel_sum = 0.0;
          BlockLossModel block;
          for (int64_t j = 0; j < n; ++j) {
            const float x = c.model_logit(j, r);
            float softplus = 0, sigmoid = 0;
            elementwise.softplus_sigmoid_elements(&x, 1, &softplus, &sigmoid);
            block.add(x);
            if ((j + 1) % cpu::kTransposedBlockRows == 0 || j + 1 == n) panel_sum += double(block.total()), block = {};
            model_predicted[size_t(r)] += x > 0.0f;
            ASSERT_TRUE(same_bits(c.Gt[size_t(j * c.t.ldt + r)], scale[size_t(r)] * sigmoid))
                << "rows " << rows << " n " << n << " D " << D << " at (" << j << ", " << r << ")";
          }
          model_loss[size_t(r)] += panel_sum;
          ASSERT_EQ(loss[size_t(r)], model_loss[size_t(r)]) << "rows " << rows << " n " << n << " D " << D << " r " << r;
          ASSERT_EQ(predicted[size_t(r)], model_predicted[size_t(r)]) << "rows " << rows << " n " << n << " r " << r;
        }
      }
}

// The epilogue's logarithm against float64 log1p, over the whole range its q can take (1 + q ≤ 2^14
// for a block of 14 entries), and at the small q of very negative logits.
TEST(FusedTileEpilogue, Log1pOfNonnegativeArguments) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> exponent(-40.0, std::log10(16384.0));
  std::uniform_real_distribution<float> unit(0.0f, 2.0f);
  double worst = 0.0;
  float at = 0.0f;
  for (int i = 0; i < 400000; ++i) {
    const float q = i % 2 ? float(std::pow(10.0, exponent(rng))) : unit(rng);
    const double want = std::log1p(double(q));
    const double err = want == 0.0 ? std::fabs(double(cpu::bce_math::log1p_nonnegative<Scalar>(q)))
                                   : std::fabs(double(cpu::bce_math::log1p_nonnegative<Scalar>(q)) - want) / want;
    if (err > worst) worst = err, at = q;
  }
  // (measured: 8.0e-8, 1.3 ulp)
  EXPECT_LE(worst, 2e-7) << "at q = " << at;
  EXPECT_EQ(cpu::bce_math::log1p_nonnegative<Scalar>(0.0f), 0.0f);
  EXPECT_EQ(cpu::bce_math::log1p_nonnegative<Scalar>(1e-30f), 1e-30f);
  EXPECT_TRUE(std::isnan(cpu::bce_math::log1p_nonnegative<Scalar>(std::numeric_limits<float>::quiet_NaN())));
}

// A block's loss from one logarithm against Σ softplus in float64, in the regimes that are hostile to it:
// mixed logits, all very negative (e ≈ 1e-9, 1e-30: the terms a float 1 + q would drop), all large, and
// blocks of every length up to kTransposedBlockRows; infinities and NaN as the per-logit softplus has them.
TEST(FusedTileEpilogue, BlockLossMatchesFloat64Softplus) {
  std::mt19937 rng(22);
  auto softplus64 = [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); };
  const std::pair<float, float> regimes[] = {{-30.0f, 30.0f}, {-3.0f, 3.0f}, {-21.5f, -20.0f}, {-70.0f, -68.0f},
                                             {-87.0f, -40.0f}, {20.0f, 1e6f}, {0.0f, 1e-6f}};
  double worst = 0.0;
  for (const auto& [lo, hi] : regimes) {
    std::uniform_real_distribution<float> u(lo, hi);
    for (int trial = 0; trial < 20000; ++trial) {
      const int len = 1 + trial % cpu::kTransposedBlockRows;
      BlockLossModel block;
      double want = 0.0;
      for (int j = 0; j < len; ++j) {
        const float x = u(rng);
        block.add(x);
        want += softplus64(double(x));
      }
      const double err = std::fabs(double(block.total()) - want) / want;
      worst = std::max(worst, err);
      ASSERT_LE(err, 1e-6) << "logits in [" << lo << ", " << hi << "], " << len << " of them";
    }
  }
  std::printf("[ info     ] block loss from one logarithm: worst relative error %.3g\n", worst);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  BlockLossModel with_inf, with_minus_inf, with_nan;
  for (float x : {1.0f, inf, -2.0f}) with_inf.add(x);
  for (float x : {1.0f, -inf, -2.0f}) with_minus_inf.add(x);
  for (float x : {1.0f, nan, -2.0f}) with_nan.add(x);
  EXPECT_EQ(with_inf.total(), inf);
  EXPECT_NEAR(with_minus_inf.total(), softplus64(1.0) + softplus64(-2.0), 1e-6);
  EXPECT_TRUE(std::isnan(with_nan.total())) << "a NaN logit must poison the loss";
}

// chunked's halves of the epilogue: the loss and counts alone (nothing stored), s·σ alone (no sums).
TEST(FusedTileKernels, EpilogueHalvesEqualTheWholeBitForBit) {
  LOBENCH_REQUIRE_OWN_KERNELS();
  const cpu::OwnTileKernels& k = *cpu::own_tile_kernels();
  std::mt19937 rng(14);
  for (int64_t rows : kRows)
    for (int64_t n : kEntries) {
      const int64_t D = 19;
      Case whole(rows, n, D, rng);
      const auto scale = random_floats(rows, rng, 2.0f);
      std::vector<double> loss(static_cast<size_t>(rows), 1.5), loss_half(static_cast<size_t>(rows), 1.5);
      std::vector<int64_t> predicted(static_cast<size_t>(rows), 2), predicted_half(static_cast<size_t>(rows), 2);
      k.logits_sigmoid(whole.t, scale.data(), loss.data(), predicted.data());
      k.logits_softplus(whole.t, loss_half.data(), predicted_half.data());  // must leave Gt as it is
      EXPECT_EQ(loss_half, loss) << "rows " << rows << " n " << n;
      EXPECT_EQ(predicted_half, predicted) << "rows " << rows << " n " << n;
      const std::vector<float> expected = whole.Gt;
      std::fill(whole.Gt.begin(), whole.Gt.end(), std::numeric_limits<float>::quiet_NaN());
      k.logits_softplus(whole.t, loss_half.data(), predicted_half.data());
      for (float g : whole.Gt) ASSERT_TRUE(std::isnan(g)) << "logits_softplus wrote the tile";
      k.logits_scaled_sigmoid(whole.t, scale.data());
      for (size_t i = 0; i < expected.size(); ++i)
        ASSERT_TRUE(same_bits(whole.Gt[i], expected[i]) || (std::isnan(whole.Gt[i]) && std::isnan(expected[i])))
            << "rows " << rows << " n " << n << " at " << i;
    }
}

// The epilogue alone (step_bench's `epilogue` row) on the logits `logits` stored does what logits_sigmoid
// does with them in registers: the same tile, loss and counts, bit for bit, spare columns untouched.
TEST(FusedTileKernels, EpilogueAloneEqualsTheEpilogueInTheProductBitForBit) {
  LOBENCH_REQUIRE_OWN_KERNELS();
  const cpu::OwnTileKernels& k = *cpu::own_tile_kernels();
  std::mt19937 rng(15);
  for (int64_t rows : kRows)
    for (int64_t n : kEntries) {
      Case in_product(rows, n, 23, rng), alone = in_product;
      alone.t.At = alone.At.data() + alone.p0, alone.t.A = alone.A_all.data() + alone.p0 * alone.D;
      alone.t.E = alone.E.data(), alone.t.Gt = alone.Gt.data();
      const auto scale = random_floats(rows, rng, 2.0f);
      std::vector<double> loss(static_cast<size_t>(rows), 0.25), loss_alone = loss;
      std::vector<int64_t> predicted(static_cast<size_t>(rows), 3), predicted_alone = predicted;
      k.logits_sigmoid(in_product.t, scale.data(), loss.data(), predicted.data());
      k.logits(alone.t);
      k.sigmoid_epilogue(alone.t, scale.data(), loss_alone.data(), predicted_alone.data());
      alone.expect_spare_columns_untouched("sigmoid_epilogue");
      EXPECT_EQ(loss_alone, loss) << "rows " << rows << " n " << n;
      EXPECT_EQ(predicted_alone, predicted) << "rows " << rows << " n " << n;
      for (size_t i = 0; i < in_product.Gt.size(); ++i)
        ASSERT_TRUE(same_bits(alone.Gt[i], in_product.Gt[i]) || (std::isnan(alone.Gt[i]) && std::isnan(in_product.Gt[i])))
            << "rows " << rows << " n " << n << " at " << i;
    }
}

TEST(FusedTileKernels, GradientProductsEqualTheirChainsBitForBit) {
  LOBENCH_REQUIRE_OWN_KERNELS();
  std::mt19937 rng(13);
  std::vector<int64_t> rows_list = kRows;
  rows_list.push_back(300);
  rows_list.push_back(513);   // crosses the dE product's inner-index block (512)
  rows_list.push_back(1100);  // two whole blocks and a part
  std::vector<int64_t> entries = kEntries;
  entries.push_back(270);  // crosses the dA product's strip block (256)
  for (int64_t rows : rows_list)
    for (int64_t n : entries)
      for (int64_t D : kWidths) {
        if ((rows > 100 || n > 100) && D > 20) continue;  // (the long inner indices at small widths are enough)
        Case c(rows, n, D, rng);
        const auto G = random_floats(n * c.t.ldt, rng, 0.1f);
        std::copy(G.begin(), G.end(), c.Gt.begin());
        for (bool accumulate : {false, true}) {
          const auto dE0 = random_floats(n * D, rng, 1.0f);
          auto dE = dE0;
          cpu::own_tile_kernels()->grad_E(c.t, dE.data(), accumulate);
          for (int64_t j = 0; j < n; ++j)
            for (int64_t d = 0; d < D; ++d) {
              // (blocks of kGradEInnerBlock positions, each chain from 0, its sum added into the output)
              float out = dE0[size_t(j * D + d)];
              for (int64_t r0 = 0; r0 < rows; r0 += cpu::kGradEInnerBlock) {
                float acc = 0.0f;
                for (int64_t r = r0; r < std::min(rows, r0 + cpu::kGradEInnerBlock); ++r)
                  acc = __builtin_fmaf(c.Gt[size_t(j * c.t.ldt + r)], c.t.A[r * D + d], acc);
                out = accumulate || r0 > 0 ? out + acc : acc;
              }
              ASSERT_TRUE(same_bits(dE[size_t(j * D + d)], out))
                  << "dE rows " << rows << " n " << n << " D " << D << " accumulate " << accumulate << " at (" << j << ", " << d << ")";
            }
        }
        for (bool accumulate : {false, true}) {
          const auto dA0 = random_floats(rows * D, rng, 1.0f);
          auto dA = dA0;
          cpu::own_tile_kernels()->grad_A(c.t, dA.data(), accumulate);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t d = 0; d < D; ++d) {
              float acc = accumulate ? dA0[size_t(r * D + d)] : 0.0f;
              for (int64_t j = 0; j < n; ++j) acc = __builtin_fmaf(c.Gt[size_t(j * c.t.ldt + r)], c.E[size_t(j * D + d)], acc);
              ASSERT_TRUE(same_bits(dA[size_t(r * D + d)], acc))
                  << "dA rows " << rows << " n " << n << " D " << D << " accumulate " << accumulate << " at (" << r << ", " << d << ")";
            }
        }
      }
}

}  // namespace
}  // namespace lobench
