// The fused SGD update on the GPU rounds exactly as precision_sim does on the CPU: given the dE that
// `cuda_fused` computes for the same inputs (the same kernel, so the same float32 values), every
// updated weight equals Quantizer::round(fma(−lr, dE, W)) with the random word of its index, bit for
// bit, for nearest-even and stochastic rounding into bfloat16 and float8_e4m3fn. Label gpu.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "variants/cuda/device_allocator.hpp"
#include "variants/cuda/fused_sr_sgd.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/stochastic.hpp"
#include "variants/packed_matrix.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

TEST(FusedSrSgd, UpdatedWeightsEqualTheCpuRoundingOfTheFusedGradient) {
  std::string why;
  if (!cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const Variant* fused = Registry::instance().find("cuda_fused");
  ASSERT_TRUE(fused);
  for (const char* format : {"bfloat16", "float8_e4m3fn"}) {
    for (const auto mode : {precision::Rounding::nearest_even, precision::Rounding::stochastic}) {
      const Shape s{2, 45, 1111, 40, 5, Reduction::sum, true};
      const StepData d = make_synthetic(s, SyntheticSpec{});
      const precision::Quantizer q(precision::parse_format(format));
      std::vector<float> W(d.E.size());
      q.round(d.E, W);  // W on the format's grid

      // dE from cuda_fused on the same values (bf16 operands, E read in the storage format).
      precision::RoundingOptions ro;
      const PackedMatrix stored(W.data(), d.V, d.D, format, ro, 1);
      StepInputs in = d.view();
      in.E = nullptr;
      in.E_stored = &stored;
      RunOptions o;
      o.operand = "bf16";
      o.e_format = format;
      StepOutputs ref;
      ref.resize(in.P, in.V, in.D);
      CountingAllocator alloc;
      RunContext ctx{alloc, o};
      fused->run(in, ref, ctx);

      cuda::SrSgdOptions so;
      so.format = format;
      so.rounding = mode;
      so.seed = 11;
      const float lr = 0.75f;
      const uint64_t step = 3;
      std::vector<float> W_new = W;
      StepOutputs out;
      cuda::fused_sr_sgd_step(d.view(), W_new, so, lr, step, out);

      const int k = q.resolved_sr_bits(0);
      int64_t changed = 0;
      for (size_t i = 0; i < W.size(); ++i) {
        const float x = std::fma(-lr, ref.dE[i], W[i]);
        const float expect = q.round(x, mode, precision::random_word(so.seed, step, i), k);
        ASSERT_EQ(std::memcmp(&W_new[i], &expect, 4), 0)
            << format << " element " << i << ": " << W_new[i] << " vs " << expect << " (w " << W[i] << ", dE "
            << ref.dE[i] << ")";
        changed += W_new[i] != W[i];
      }
      EXPECT_GT(changed, int64_t(W.size() / 100)) << format << ": the update must move some weights";
      EXPECT_EQ(out.loss, ref.loss) << format;
      EXPECT_EQ(out.dA, ref.dA) << format;
      EXPECT_EQ(out.counts, ref.counts) << format;
    }
  }
}

}  // namespace
}  // namespace lobench
