// Training runs do not depend on the thread count (issue 11): with 1, 2 and 3 threads, every epoch's
// train loss, test loss and ranking metrics are bit-identical, for both update modes, fp32 and a
// stochastically rounded bf16 head, fp32 and bf16 operands (--operand), one and several label chunks. (Before, 2 threads drifted from 1
// thread in the first epoch: the classifier summed its tiles' loss and dH per thread.)
#include <gtest/gtest.h>

#include <vector>

#include "harness/train/tests/tiny_data.hpp"
#include "harness/train/trainer.hpp"
#include "variants/cpu/bf16_products.hpp"

namespace lobench::train {
namespace {

TEST(TrainThreadIndependence, EpochRecordsAreBitIdenticalForAnyThreadCount) {
  const data::TrainTest d = testing::tiny_xmc(600, 200, 300);
  // Where this CPU has no bf16 products, the bf16-operand runs go through the emulation.
  const bool emulate = cpu::bf16_products_unavailable().has_value();
  if (emulate) cpu::set_bf16_kernel(cpu::Bf16Kernel::emulated);
  for (const char* mode : {"fused", "separate"})
    for (const char* fmt : {"fp32", "bf16"})
      for (const char* operand : {"fp32", "bf16"})
        for (int64_t chunks : {1, 3}) {
          TrainConfig c;
          c.D = 32;
          c.batch = 48;
          c.epochs = 2;
          c.dropout = 0.2f;
          c.clf_format = fmt;
          c.clf_rounding = "sr";
          c.mode = parse_update_mode(mode);
          c.chunks = chunks;
          c.tile = 64;
          c.operand = operand;
          std::vector<EpochRecord> one;
          for (int threads : {1, 2, 3}) {
            c.threads = threads;
            const RunOutcome o = train_xmc(d, c);
            if (threads == 1) {
              one = o.epochs;
              continue;
            }
            ASSERT_EQ(o.epochs.size(), one.size());
            for (size_t e = 0; e < one.size(); ++e) {
              SCOPED_TRACE(::testing::Message() << mode << " " << fmt << " operand " << operand << " k=" << chunks
                                                << " threads " << threads << " epoch " << e);
              EXPECT_EQ(o.epochs[e].train_loss, one[e].train_loss);
              EXPECT_EQ(o.epochs[e].test_loss, one[e].test_loss);
              for (int i = 0; i < 3; ++i) {
                EXPECT_EQ(o.epochs[e].p[i], one[e].p[i]);
                EXPECT_EQ(o.epochs[e].ndcg[i], one[e].ndcg[i]);
                EXPECT_EQ(o.epochs[e].psp[i], one[e].psp[i]);
              }
              EXPECT_EQ(o.epochs[e].weight_mean_abs, one[e].weight_mean_abs);
            }
          }
        }
  if (emulate) cpu::set_bf16_kernel(std::nullopt);
}

}  // namespace
}  // namespace lobench::train
