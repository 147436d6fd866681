// Every GPU variant against the float64 CPU reference (docs/method.md#accuracy), on the same random
// ragged problems as the CPU variants, for every operand precision and for E read as fp8 codes.
// Label `gpu`: without a CUDA device every test here skips and says why.
//
// Tolerances, by operand precision (relative; L2 for vectors), and why:
//   fp32  loss 1e-6, grads 1e-5, counts exact outside the reference's near-zero band: the CPU rules.
//   tf32  loss 2e-3, grads 5e-3 against the reference on the original inputs. TF32 keeps 10 mantissa
//         bits of every product operand, the gradient tile included: unit roundoff 2^-11 ≈ 4.9e-4 when
//         rounded to nearest (the fused kernels), 2^-10 when cuBLAS lets the tensor cores truncate —
//         a biased error that does not average out. A float64 simulation of the 28 ragged cases gives
//         at most 8.1e-4 (loss) and 1.5e-3 (grads) with truncation. Counts are not compared (logits move
//         by ≈ 1e-3·|x|).
//   bf16  loss 1e-5, grads 4e-3, counts exact, against the reference on A and E rounded to bfloat16
//         (what the kernel costs). The products of bf16 values are exact in float32 and accumulate in
//         float32, so logits and loss keep float32 accuracy; the gradient tile is rounded to bf16 (unit
//         roundoff 2^-9 ≈ 2e-3) before the gradient products, which bounds each term's relative error
//         by 2e-3 (RMS ≈ 1.1e-3 for uniformly distributed rounding errors).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "variants/accuracy.hpp"
#include "variants/cuda/device_allocator.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "variants/tests/ragged_cases.hpp"
#include "variants/reference.hpp"
#include "variants/packed_matrix.hpp"

namespace lobench {
namespace {

struct Tolerance {
  double loss, grad;
  bool counts;
};

Tolerance tolerance_for(const std::string& operand) {
  if (operand == "tf32") return {2e-3, 5e-3, false};
  if (operand == "bf16") return {1e-5, 4e-3, true};
  return {1e-6, 1e-5, true};
}

std::vector<const Variant*> gpu_variants() {
  std::vector<const Variant*> out;
  for (const Variant* v : Registry::instance().all())
    if (v->backend() == "cuda") out.push_back(v);
  return out;
}

#define LOBENCH_REQUIRE_GPU()                                           \
  do {                                                                  \
    std::string why;                                                    \
    if (!cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why; \
  } while (0)

std::vector<float> rounded(const std::vector<float>& x, const char* format) {
  std::vector<float> out(x.size());
  precision::Quantizer(precision::parse_format(format)).round(x, out);
  return out;
}

// Checks `out` against the reference computed on `ref_in`, with the operand's tolerances.
void expect_close(const StepOutputs& out, const StepInputs& ref_in, const Tolerance& tol, const std::string& where) {
  CountingAllocator alloc;
  cpu::ReferenceResult ref;
  cpu::reference_step(ref_in, ref, alloc, 2);
  const int64_t P = ref_in.P, V = ref_in.V, D = ref_in.D;
  EXPECT_FALSE(std::isnan(out.loss)) << where;
  EXPECT_LE(relative_error(out.loss, ref.loss), tol.loss) << where << " loss " << out.loss << " vs " << ref.loss;
  EXPECT_LE(relative_l2_error(out.per_position_loss.data(), ref.per_position_loss.data(), P), tol.loss) << where;
  EXPECT_LE(relative_l2_error(out.dA.data(), ref.dA.data(), P * D), tol.grad) << where << " dA";
  EXPECT_LE(relative_l2_error(out.dE.data(), ref.dE.data(), V * D), tol.grad) << where << " dE";
  if (tol.counts) {
    EXPECT_EQ(count_mismatches(out.counts.data(), ref.counts.data(), ref.near_zero.data(), P), 0) << where;
  }
  for (int64_t p = 0; p < P; ++p) {
    int64_t sum = 0;
    for (int k = 0; k < 4; ++k) sum += out.counts[p * 4 + k];
    ASSERT_EQ(sum, V) << where << " position " << p;
  }
}

// Outputs poisoned before each run, so that an element the variant never writes cannot pass.
StepOutputs poisoned(int64_t P, int64_t V, int64_t D) {
  StepOutputs out;
  out.resize(P, V, D);
  std::fill(out.dA.begin(), out.dA.end(), std::nanf(""));
  std::fill(out.dE.begin(), out.dE.end(), std::nanf(""));
  std::fill(out.per_position_loss.begin(), out.per_position_loss.end(), std::nan(""));
  std::fill(out.counts.begin(), out.counts.end(), -1);
  out.loss = std::nan("");
  return out;
}

TEST(CudaConformance, EveryGpuVariantMatchesTheReferenceOnRaggedCases) {
  LOBENCH_REQUIRE_GPU();
  const auto cases = testing::ragged_cases();
  for (const char* operand : {"fp32", "tf32", "bf16"}) {
    const Tolerance tol = tolerance_for(operand);
    for (const auto& c : cases) {
      StepData d = make_synthetic(c.shape, c.spec);
      const StepInputs in = d.view();
      // The kernel-only reference reads the inputs as the kernel does (bf16: rounded to nearest even).
      StepData d_ref = d;
      if (std::string(operand) == "bf16") {
        d_ref.A = rounded(d.A, "bfloat16");
        d_ref.E = rounded(d.E, "bfloat16");
      }
      RunOptions o = c.options;
      o.operand = operand;
      for (const Variant* v : gpu_variants()) {
        if (auto why = v->skip_reason(c.shape, o)) {
          ADD_FAILURE() << v->name() << " skipped " << c.label() << ": " << *why;
          continue;
        }
        StepOutputs out = poisoned(in.P, in.V, in.D);
        CountingAllocator alloc;
        RunContext ctx{alloc, o};
        v->run(in, out, ctx);
        expect_close(out, d_ref.view(), tol, v->name() + " " + operand + " on " + c.label());
      }
    }
  }
}

TEST(CudaConformance, EReadAsFp8CodesMatchesTheReferenceOnTheDecodedE) {
  LOBENCH_REQUIRE_GPU();
  const auto cases = testing::ragged_cases(8);
  for (const char* format : {"float8_e4m3fn", "float8_e5m2"}) {
    for (const char* operand : {"fp32", "bf16"}) {
      for (const auto& c : cases) {
        StepData d = make_synthetic(c.shape, c.spec);
        precision::RoundingOptions ro;
        const PackedMatrix stored(d.E.data(), d.V, d.D, format, ro, 1);
        StepInputs in = d.view();
        in.E = nullptr;  // the variants must read the codes
        in.E_stored = &stored;
        StepData d_ref = d;
        d_ref.E = stored.decode_all();
        if (std::string(operand) == "bf16") d_ref.A = rounded(d.A, "bfloat16");
        RunOptions o = c.options;
        o.operand = operand;
        o.e_format = format;
        for (const Variant* v : gpu_variants()) {
          ASSERT_FALSE(v->skip_reason(c.shape, o).has_value()) << v->name() << " " << format;
          StepOutputs out = poisoned(in.P, in.V, in.D);
          CountingAllocator alloc;
          RunContext ctx{alloc, o};
          v->run(in, out, ctx);
          expect_close(out, d_ref.view(), tolerance_for(operand),
                       v->name() + " E " + format + " operand " + operand + " on " + c.label());
        }
      }
    }
  }
}

// The configuration the benchmarks run (D = 128, L = 8), which the ragged cases (D ≤ 33) never reach:
// Dp = 128 fills half of each warp's accumulator fragments, L = 8 fills the target slots, and D is a
// multiple of 8 and 16, so the kernels take their vectorised tile loads (16-byte values; 8-byte codes
// for E read as float8). A few thousand V over ragged position and vocabulary tiles, per operand.
TEST(CudaConformance, ProductionConfigurationMatchesTheReference) {
  LOBENCH_REQUIRE_GPU();
  const Shape s{2, 150, 4099, 128, 8, Reduction::mean, true};  // P = 300: 5 position tiles, the last ragged
  SyntheticSpec spec;
  spec.seed = 128;
  spec.pad_fraction = 0.1;
  spec.dup_fraction = 0.2;
  const StepData d = make_synthetic(s, spec);
  struct Config {
    const char* operand;
    const char* e_format;
  };
  for (const Config c : {Config{"fp32", "fp32"}, Config{"tf32", "fp32"}, Config{"bf16", "fp32"},
                         Config{"bf16", "float8_e4m3fn"}}) {
    RunOptions o;
    o.operand = c.operand;
    o.e_format = c.e_format;
    StepInputs in = d.view();
    StepData d_ref = d;
    precision::RoundingOptions ro;
    std::unique_ptr<PackedMatrix> stored;
    if (std::string(c.e_format) != "fp32") {
      stored = std::make_unique<PackedMatrix>(d.E.data(), d.V, d.D, c.e_format, ro, 1);
      in.E = nullptr;
      in.E_stored = stored.get();
      d_ref.E = stored->decode_all();
    }
    if (std::string(c.operand) == "bf16") {
      d_ref.A = rounded(d_ref.A, "bfloat16");
      d_ref.E = rounded(d_ref.E, "bfloat16");
    }
    for (const Variant* v : gpu_variants()) {
      const std::string where = v->name() + " operand " + c.operand + " E " + c.e_format + " at D = 128, L = 8";
      ASSERT_FALSE(v->skip_reason(s, o).has_value()) << where << ": " << *v->skip_reason(s, o);
      StepOutputs out = poisoned(in.P, in.V, in.D);
      CountingAllocator alloc;
      RunContext ctx{alloc, o};
      v->run(in, out, ctx);
      expect_close(out, d_ref.view(), tolerance_for(c.operand), where);
    }
  }
}

// skip_reason declines D > 256 for cuda_fused; a caller that launches anyway is refused where the
// kernels are launched (fused_limits.hpp), not answered with silently dropped gradient columns.
TEST(CudaConformance, FusedRefusesDAbove256WhereLaunched) {
  LOBENCH_REQUIRE_GPU();
  const Variant* fused = Registry::instance().find("cuda_fused");
  ASSERT_TRUE(fused);
  const Shape s{1, 5, 200, 264, 2, Reduction::mean, false};
  const StepData d = make_synthetic(s, SyntheticSpec{});
  ASSERT_TRUE(fused->skip_reason(s, RunOptions{}).has_value());
  for (const char* operand : {"fp32", "bf16"}) {
    RunOptions o;
    o.operand = operand;
    StepOutputs out = poisoned(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, o};
    try {
      fused->run(d.view(), out, ctx);
      ADD_FAILURE() << "cuda_fused ran at D = 264 (" << operand << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("launch_fused: D = 264"), std::string::npos) << e.what();
    }
  }
}

TEST(CudaConformance, AllZeroLogitsGiveLn2) {
  LOBENCH_REQUIRE_GPU();
  Shape s{3, 5, 1000, 8, 8, Reduction::mean, false};
  StepData d = make_synthetic(s, SyntheticSpec{});
  std::fill(d.E.begin(), d.E.end(), 0.0f);
  for (const Variant* v : gpu_variants()) {
    StepOutputs out = poisoned(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, RunOptions{}};
    v->run(d.view(), out, ctx);
    EXPECT_NEAR(out.loss, std::log(2.0), 1e-7) << v->name();
  }
}

TEST(CudaConformance, RepeatedStepsAreBitIdentical) {
  LOBENCH_REQUIRE_GPU();
  const Shape s{2, 70, 3001, 40, 4, Reduction::mean, true};
  const StepData d = make_synthetic(s, SyntheticSpec{});
  for (const char* operand : {"fp32", "bf16"}) {
    RunOptions o;
    o.operand = operand;
    for (const Variant* v : gpu_variants()) {
      auto session = v->open_session(d.view(), o);
      ASSERT_TRUE(session) << v->name();
      std::vector<StepOutputs> outs(3);
      for (auto& out : outs) {
        EXPECT_GT(session->run_timed(), 0.0) << v->name();
        session->download(out);
      }
      for (size_t i = 1; i < outs.size(); ++i) {
        EXPECT_EQ(std::memcmp(&outs[i].loss, &outs[0].loss, sizeof(double)), 0) << v->name() << " " << operand;
        EXPECT_EQ(outs[i].dA, outs[0].dA) << v->name() << " " << operand;
        EXPECT_EQ(outs[i].dE, outs[0].dE) << v->name() << " " << operand;
        EXPECT_EQ(outs[i].counts, outs[0].counts) << v->name() << " " << operand;
      }
    }
  }
}

// Working memory is allocated once per session through the counting device allocator, so the model
// must be exact; and where the working set is large (≥ 64 MiB), the device's own view (cudaMemGetInfo)
// agrees to within the driver's 2 MiB pages (a few of them).
TEST(CudaMemory, PeakWorkingBytesEqualThePrediction) {
  LOBENCH_REQUIRE_GPU();
  for (const Shape s : {Shape{2, 37, 5001, 24, 3, Reduction::mean, false}, Shape{4, 256, 70000, 128, 8, Reduction::sum, true}}) {
    const StepData d = make_synthetic(s, SyntheticSpec{});
    for (const char* operand : {"fp32", "bf16"}) {
      RunOptions o;
      o.operand = operand;
      for (const Variant* v : gpu_variants()) {
        auto session = v->open_session(d.view(), o);
        session->run_timed();
        EXPECT_EQ(session->peak_working_bytes(), v->predicted_working_bytes(s, o)) << v->name() << " " << operand;
        const int64_t exact = session->peak_working_bytes(), seen = session->peak_device_bytes();
        if (exact >= (int64_t(64) << 20)) {
          EXPECT_NEAR(double(seen), double(exact), double(int64_t(8) << 20)) << v->name() << " " << operand;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lobench
