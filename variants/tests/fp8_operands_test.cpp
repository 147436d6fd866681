// fp8 operands on the CPU (`--operand e4m3|e5m2`, variants/fp8_scaling.hpp):
//   - every E4M3 (e4m3fn) and E5M2 value, and every such value times the powers of two a scale can bring,
//     is exact in bfloat16 wherever it is a normal float: the bf16 products read fp8 operands exactly;
//   - the scale: the largest power of two that keeps max |x| at or below the format's largest finite value;
//     the rounding with it equals round(x·2^s)·2^-s through the unscaled format (ml_dtypes-exact);
//   - a product chain on the scaled values equals 2^-(sA+sE) times the chain on the fp8 values themselves,
//     bit for bit (the inverse scales applied to the float32 results), through both scalar models;
//   - fused, chunked and dense with e4m3 and e5m2: bit for bit the same variant's bf16 step on the inputs
//     rounded with their scales (through the emulations on every CPU, and each kernel this CPU runs), and
//     against the float64 reference on those inputs by the bf16 rule (the operands are exact, so only G's
//     rounding to bf16 and float32 sums remain: loss 1e-5, gradients 4e-3, counts exact), on ragged random
//     problems; independent of the thread count; memory predicted exactly; skipped with the reason where the
//     CPU lacks AVX512_BF16.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "precision_sim/cpu_dispatch.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/accuracy.hpp"
#include "variants/cpu/bf16_dot.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/fp8_scaling.hpp"
#include "variants/reference.hpp"
#include "variants/tests/bf16_test_kernels.hpp"
#include "variants/tests/ragged_cases.hpp"
#include "variants/tests/reference_checks.hpp"
#include "variants/tests/scoped_env.hpp"

namespace lobench {
namespace {

using cpu::Bf16Kernel;
using lobench::testing::ForcedBf16Kernel;

const Operand kFp8[] = {Operand::e4m3, Operand::e5m2};

// The scale exponents the clamp allows (fp8_scaling.hpp).
std::pair<int, int> scale_range(Operand op) { return op == Operand::e4m3 ? std::pair{-119, 120} : std::pair{-112, 112}; }

bool exact_in_bf16(float v) { return cpu::float_bits(cpu::bf16_value(cpu::bf16_nearest_even(v))) == cpu::float_bits(v); }

TEST(Fp8Operands, EveryCodeIsExactInBf16AndStaysSoUnderEveryScale) {
  for (Operand op : kFp8) {
    const precision::Quantizer q(fp8_format(op));
    const auto [lo, hi] = scale_range(op);
    int values = 0;
    for (uint32_t code = 0; code < 256; ++code) {
      const float v = q.decode(code);
      if (std::isnan(v)) continue;
      ++values;
      EXPECT_TRUE(exact_in_bf16(v)) << to_string(op) << " code " << code << " = " << v;
      for (int s = lo; s <= hi; ++s) {
        const float scaled = std::ldexp(v, -s);
        // (ldexp itself exact: the value stays a normal float, or is zero or infinite)
        if (v == 0.0f || std::isinf(v) || std::fpclassify(scaled) != FP_NORMAL) continue;
        ASSERT_EQ(double(scaled), std::ldexp(double(v), -s));
        EXPECT_TRUE(exact_in_bf16(scaled)) << to_string(op) << " code " << code << " · 2^" << -s;
      }
    }
    EXPECT_EQ(values, op == Operand::e4m3 ? 254 : 250);  // e4m3fn: 2 NaN codes; e5m2: 6 NaN codes (and ±inf)
  }
}

TEST(Fp8Operands, TheScaleIsTheLargestPowerOfTwoThatKeepsTheMaximumInRange) {
  const precision::Format e4m3 = fp8_format(Operand::e4m3), e5m2 = fp8_format(Operand::e5m2);
  EXPECT_EQ(e4m3.max_finite(), 448.0);
  EXPECT_EQ(e5m2.max_finite(), 57344.0);
  EXPECT_EQ(fp8_scale_exponent(e4m3, 448.0f), 0);
  EXPECT_EQ(fp8_scale_exponent(e4m3, 448.00003f), -1);
  EXPECT_EQ(fp8_scale_exponent(e4m3, 224.0f), 1);
  EXPECT_EQ(fp8_scale_exponent(e4m3, 1.0f), 8);  // 256 ≤ 448 < 512
  EXPECT_EQ(fp8_scale_exponent(e4m3, 0.875f), 9);  // 448 exactly
  EXPECT_EQ(fp8_scale_exponent(e5m2, 1.0f), 15);
  EXPECT_EQ(fp8_scale_exponent(e4m3, 0.0f), 0);
  EXPECT_EQ(fp8_scale_exponent(e4m3, INFINITY), 0);
  EXPECT_EQ(fp8_scale_exponent(e4m3, NAN), 0);
  EXPECT_EQ(fp8_scale_exponent(e4m3, FLT_MIN / 1024), 120);  // clamped
  EXPECT_EQ(fp8_scale_exponent(e4m3, FLT_MAX), -119);
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const float amax = std::ldexp(std::uniform_real_distribution<float>(0.5f, 1.0f)(rng), int(rng() % 180) - 90);  // (inside the clamp)
    for (const precision::Format& f : {e4m3, e5m2}) {
      const int s = fp8_scale_exponent(f, amax);
      EXPECT_LE(std::ldexp(double(amax), s), f.max_finite()) << amax;
      EXPECT_GT(std::ldexp(double(amax), s + 1), f.max_finite()) << amax;
    }
  }
  const std::vector<float> x = {0.5f, -3.0f, NAN, 2.0f};
  EXPECT_TRUE(std::isnan(max_abs(x.data(), 4)));
  EXPECT_EQ(max_abs(x.data(), 2), 3.0f);
  const std::vector<float> y = {1.0f, -INFINITY, 7.0f};
  EXPECT_EQ(max_abs(y.data(), 3, 2), INFINITY);
}

// max_abs over lengths that leave every remainder of its lanes and pieces, the largest magnitude (or an
// inf, or a NaN) at every kind of position, on 1 to 3 threads: the value a plain loop finds.
void expect_max_abs_equals_a_plain_loop() {
  std::mt19937 rng(11);
  for (int64_t n : {int64_t(1), int64_t(31), int64_t(32), int64_t(33), int64_t(1000), int64_t(16384), int64_t(16385),
                    int64_t(70001)}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = std::ldexp(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng), int(rng() % 40) - 20);
    for (float special : {0.0f, -3e20f, INFINITY, -INFINITY, NAN}) {
      for (int64_t at : {int64_t(0), n / 2, n - 1, int64_t(rng() % uint64_t(n))}) {
        std::vector<float> z = x;
        if (special != 0.0f) z[size_t(at)] = special;  // (0: none; a NaN compares unequal)
        float expect = 0.0f;
        bool nan = false;
        for (float v : z) nan = nan || std::isnan(v), expect = std::max(expect, std::fabs(v));
        for (int threads : {1, 2, 3}) {
          const float got = max_abs(z.data(), n, threads);
          if (nan) EXPECT_TRUE(std::isnan(got)) << "n " << n << " at " << at << " threads " << threads;
          else EXPECT_EQ(got, expect) << "n " << n << " special " << special << " at " << at << " threads " << threads;
        }
      }
    }
  }
}

// ... on each instruction-set path this CPU runs (LOBENCH_ISA picks it, as for every dispatched kernel).
TEST(Fp8Operands, TheLargestMagnitudeIsFoundWhereverItIsOnEveryPath) {
  int paths = 0;
  for (cpu_dispatch::Isa isa : {cpu_dispatch::Isa::portable, cpu_dispatch::Isa::avx2, cpu_dispatch::Isa::avx512}) {
    if (!cpu_dispatch::cpu_supports(isa)) continue;
    const std::string name(cpu_dispatch::name(isa));
    const testing::ScopedEnv forced("LOBENCH_ISA", name.c_str());
    SCOPED_TRACE(name);
    expect_max_abs_equals_a_plain_loop();
    ++paths;
  }
  EXPECT_GE(paths, 1);
}

TEST(Fp8Operands, ScaledRoundingEqualsTheUnscaledFormatOnScaledValues) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (Operand op : kFp8) {
    const precision::Quantizer plain(fp8_format(op));
    for (int exp : {-90, -20, -3, 0, 4, 30, 90}) {
      std::vector<float> x(4000);
      for (float& v : x) v = std::ldexp(normal(rng), exp - int(rng() % 24));
      x[7] = 0.0f, x[8] = -0.0f, x[9] = FLT_MIN / 8;  // zeros and a float32 denormal
      const Fp8Scaling sc = Fp8Scaling::of(op, x.data(), int64_t(x.size()));
      std::vector<float> r(x.size());
      sc.round(x.data(), r.data(), int64_t(x.size()), 2);
      for (size_t i = 0; i < x.size(); ++i) {
        // (x·2^s is exact, or far below the format's smallest value, where both give zero)
        const float q = plain.round(std::ldexp(x[i], sc.exponent()));
        ASSERT_EQ(cpu::float_bits(r[i]), cpu::float_bits(std::ldexp(q, -sc.exponent())))
            << to_string(op) << " x " << x[i] << " s " << sc.exponent();
      }
      // The largest value lands in the format's top binade (at or just below its largest value).
      EXPECT_GE(std::ldexp(double(max_abs(r.data(), int64_t(r.size()))), sc.exponent()), fp8_format(op).max_finite() / 2);
    }
    // Not saturating: inf stays visible (E4M3: NaN; E5M2: inf).
    const Fp8Scaling one(op, 1.0f);
    const float inf = INFINITY;
    float out = 0.0f;
    one.round(&inf, &out, 1);
    EXPECT_TRUE(op == Operand::e4m3 ? std::isnan(out) : std::isinf(out)) << to_string(op);
  }
}

// n random finite values of the fp8 format (random codes).
std::vector<float> random_fp8(Operand op, int64_t n, uint32_t seed) {
  const precision::Quantizer q(fp8_format(op));
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    do x = q.decode(rng() & 0xffu);
    while (!std::isfinite(x));
  }
  return v;
}

TEST(Fp8Operands, ChainsOnScaledValuesAreTheScaledChainsOnTheFp8Values) {
  const int64_t M = 9, N = 13, K = 70;  // K: 35 pairs (crosses AMX's 16-pair blocks)
  for (Operand op : kFp8)
    for (Bf16Kernel kernel : testing::bf16_kernels_to_test())
      for (const auto& [sa, se] : {std::pair{8, 3}, std::pair{-5, 20}, std::pair{17, 17}}) {
        const std::vector<float> a = random_fp8(op, M * K, 1), b = random_fp8(op, K * N, 2);
        std::vector<float> a_s(a.size()), b_s(b.size());
        for (size_t i = 0; i < a.size(); ++i) a_s[i] = std::ldexp(a[i], -sa);
        for (size_t i = 0; i < b.size(); ++i) b_s[i] = std::ldexp(b[i], -se);
        auto product = [&](const std::vector<float>& af, const std::vector<float>& bf) {
          std::vector<uint32_t> ap(size_t(M * K / 2)), bp(size_t(K / 2 * N));
          cpu::pair_columns(af.data(), K, M, K, ap.data(), K / 2);
          cpu::pair_rows(bf.data(), N, K, N, bp.data(), N);
          std::vector<float> c(size_t(M * N));
          cpu::bf16_product(kernel, cpu::Bf16Product{M, N, K / 2, ap.data(), K / 2, bp.data(), N, c.data(), N, false, false});
          return c;
        };
        const std::vector<float> on_fp8 = product(a, b), on_scaled = product(a_s, b_s);
        for (size_t i = 0; i < on_fp8.size(); ++i)
          ASSERT_EQ(cpu::float_bits(on_scaled[i]), cpu::float_bits(std::ldexp(on_fp8[i], -(sa + se))))
              << to_string(op) << " " << to_string(kernel) << " sa " << sa << " se " << se << " at " << i;
      }
}

// ---- the variants ----

StepOutputs run_variant(const std::string& name, const StepInputs& in, RunOptions o, const std::string& operand) {
  const Variant* v = Registry::instance().find(name);
  EXPECT_NE(v, nullptr) << name;
  o.operand = operand;
  StepOutputs out;
  out.resize(in.P, in.V, in.D);
  if (auto why = v->skip_reason(Shape{1, in.P, in.V, in.D, in.L, in.reduction, false}, o)) {
    ADD_FAILURE() << name << " skipped: " << *why;
    return out;
  }
  CountingAllocator alloc;
  RunContext ctx{alloc, o};
  v->run(in, out, ctx);
  EXPECT_EQ(alloc.current_bytes(), 0) << name;
  EXPECT_EQ(alloc.peak_bytes(), v->predicted_working_bytes(Shape{1, in.P, in.V, in.D, in.L, in.reduction, false}, o))
      << name << " " << operand;
  return out;
}

// A and E rounded with their own scales: what the variants' products read.
StepData rounded_fp8(const StepData& d, Operand op) {
  StepData r = d;
  Fp8Scaling::of(op, d.A.data(), int64_t(d.A.size())).round(d.A.data(), r.A.data(), int64_t(d.A.size()));
  Fp8Scaling::of(op, d.E.data(), int64_t(d.E.size())).round(d.E.data(), r.E.data(), int64_t(d.E.size()));
  return r;
}

void expect_same_bits(const StepOutputs& a, const StepOutputs& b, const std::string& what) {
  EXPECT_EQ(a.loss, b.loss) << what;
  EXPECT_EQ(a.per_position_loss, b.per_position_loss) << what;
  EXPECT_EQ(a.dA, b.dA) << what;
  EXPECT_EQ(a.dE, b.dE) << what;
  EXPECT_EQ(a.counts, b.counts) << what;
}

// The bf16 rule on the rounded inputs: the operands are exact in bf16 (testing::expect_bf16_rule).
void expect_conformance(const StepOutputs& out, const StepData& rounded, const std::string& where) {
  testing::expect_bf16_rule(out, rounded.view(), where);
}

void check_ragged_cases(int count, bool against_reference) {
  for (const auto& c : testing::ragged_cases(count)) {
    const StepData d = make_synthetic(c.shape, c.spec);
    for (Operand op : kFp8) {
      const StepData r = rounded_fp8(d, op);
      for (const char* name : {"fused", "chunked", "dense"}) {
        const std::string where = std::string(name) + " " + to_string(op) + " [" + to_string(cpu::active_bf16_kernel()) +
                                  "] on " + c.label();
        const StepOutputs out = run_variant(name, d.view(), c.options, to_string(op));
        expect_same_bits(out, run_variant(name, r.view(), c.options, "bf16"), where + " vs bf16 on the rounded inputs");
        if (against_reference) expect_conformance(out, r, where);
      }
    }
  }
}

TEST(Fp8Variants, AreTheBf16StepOnRoundedInputsAndMatchTheReferenceThroughTheEmulation) {
  ForcedBf16Kernel emulated(Bf16Kernel::emulated);
  check_ragged_cases(10, true);
}

TEST(Fp8Variants, AreTheBf16StepOnRoundedInputsThroughTheAmxModel) {
  ForcedBf16Kernel emulated(Bf16Kernel::emulated_amx);
  check_ragged_cases(4, true);
}

TEST(Fp8Variants, AreTheBf16StepOnRoundedInputsThroughEachKernelThisCpuRuns) {
  for (Bf16Kernel kernel : testing::bf16_kernels_to_test()) {
    if (kernel == Bf16Kernel::emulated || kernel == Bf16Kernel::emulated_amx) continue;
    ForcedBf16Kernel forced(kernel);
    check_ragged_cases(16, true);
  }
}

TEST(Fp8Variants, AreBitIdenticalForAnyThreadCountAndEqualTheEmulation) {
  const Shape s{2, 40, 3001, 24, 4, Reduction::mean, true};
  SyntheticSpec spec;
  spec.pad_fraction = 0.1;
  spec.dup_fraction = 0.1;
  const StepData d = make_synthetic(s, spec);
  std::vector<Bf16Kernel> lane = {Bf16Kernel::emulated};
  if (!cpu::bf16_simd_unavailable()) lane.push_back(Bf16Kernel::avx512_bf16);
  for (Operand op : kFp8)
    for (const char* name : {"fused", "chunked", "dense"}) {
      std::optional<StepOutputs> first;
      for (Bf16Kernel k : lane) {
        ForcedBf16Kernel forced(k);
        for (int threads : {1, 2, 3}) {
          RunOptions o;
          o.threads = threads, o.block_v = 100, o.block_p = 32;
          const StepOutputs out = run_variant(name, d.view(), o, to_string(op));
          if (first) expect_same_bits(out, *first, std::string(name) + " " + to_string(op) + " " + to_string(k) +
                                                         " threads " + std::to_string(threads));
          else first = out;
        }
      }
    }
}

TEST(Fp8Variants, CostTheFormatAgainstTheOriginalInputs) {
  // Against the reference on the original inputs a step is off by what rounding its inputs costs: unit
  // roundoff 2^-8 for bf16, 2^-4 for e4m3, 2^-3 for e5m2, so e5m2 > e4m3 > bf16 by about those ratios. A
  // variant that ignored the operand (or rounded to the wrong format) would fail the ordering.
  const Shape s{2, 40, 3001, 64, 4, Reduction::mean, true};
  const StepData d = make_synthetic(s, SyntheticSpec{});
  ForcedBf16Kernel emulated(Bf16Kernel::emulated);
  CountingAllocator alloc;
  cpu::ReferenceResult ref;
  cpu::reference_step(d.view(), ref, alloc, 2);
  RunOptions o;
  o.threads = 2;
  auto dE_error = [&](const char* operand) {
    const StepOutputs out = run_variant("fused", d.view(), o, operand);
    return relative_l2_error(out.dE.data(), ref.dE.data(), d.V * d.D);
  };
  const double bf16 = dE_error("bf16"), e4m3 = dE_error("e4m3"), e5m2 = dE_error("e5m2");
  EXPECT_GT(e4m3, 4 * bf16);
  EXPECT_GT(e5m2, 1.5 * e4m3);
  EXPECT_LT(e5m2, 0.3);
}

TEST(Fp8Variants, SkipWithTheReasonWhereTheKernelCannotRun) {
  const Variant* fused = Registry::instance().find("fused");
  const Variant* dense = Registry::instance().find("dense");
  RunOptions o;
  o.operand = "e4m3";
  const Shape s{1, 4, 100, 8, 2, Reduction::mean, false};
  std::optional<std::string> why, why_dense;
  {
    const testing::ScopedEnv isa("LOBENCH_ISA", "avx2");  // stands for a CPU without AVX-512 (and so without AVX512_BF16)
    why = fused->skip_reason(s, o), why_dense = dense->skip_reason(s, o);
  }
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("AVX512_BF16"), std::string::npos) << *why;
  ASSERT_TRUE(why_dense.has_value());
  EXPECT_NE(why_dense->find("AVX512_BF16"), std::string::npos) << *why_dense;
  if (!cpu::bf16_simd_unavailable()) {
    EXPECT_FALSE(fused->skip_reason(s, o).has_value());
    o.operand = "e5m2";
    EXPECT_FALSE(dense->skip_reason(s, o).has_value());
  }
}

TEST(Fp8Variants, ANonFiniteInputFailsTheStepInsteadOfSaturating) {
  const Shape s{1, 9, 300, 8, 2, Reduction::sum, false};
  StepData d = make_synthetic(s, SyntheticSpec{});
  d.E[17] = INFINITY;
  ForcedBf16Kernel emulated(Bf16Kernel::emulated);
  for (const char* name : {"fused", "chunked", "dense"}) {
    const Variant* v = Registry::instance().find(name);
    RunOptions o;
    o.operand = "e4m3";
    StepOutputs out;
    out.resize(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, o};
    EXPECT_THROW(v->run(d.view(), out, ctx), std::exception) << name;
  }
}

}  // namespace
}  // namespace lobench
