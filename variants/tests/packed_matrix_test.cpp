// Low-precision E: the tiled variants read E from packed codes and must match the float64 reference on
// the decoded values as closely as on float32 E (the kernel adds no error beyond the format's), with
// the packed bytes really smaller and the working memory exactly as predicted.
#include "variants/packed_matrix.hpp"

#include <gtest/gtest.h>

#include "variants/accuracy.hpp"
#include "variants/cpu/tile_scan.hpp"
#include "variants/reference.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

TEST(StoredMatrix, PacksIntoOneOrTwoBytesAndDecodesRows) {
  const std::vector<float> x = {1.0f, 1.0625f, -3.3f, 448.0f, 1e-3f, 0.0f};
  precision::RoundingOptions ro;
  PackedMatrix fp8(x.data(), 2, 3, "float8_e4m3fn", ro, 1);
  PackedMatrix bf16(x.data(), 2, 3, "bfloat16", ro, 1);
  PackedMatrix tf32(x.data(), 2, 3, "tf32", ro, 1);
  EXPECT_EQ(fp8.stored_bytes(), 6);
  EXPECT_EQ(bf16.stored_bytes(), 12);
  EXPECT_EQ(tf32.stored_bytes(), 24);  // 19 bits: kept as float32 values on the grid
  std::vector<float> row(3);
  fp8.decode_rows(1, 1, row.data());
  EXPECT_EQ(row[0], 448.0f);
  EXPECT_EQ(row[2], 0.0f);
  EXPECT_NE(row[1], 1e-3f);  // 1e-3 is not on e4m3fn's grid
  const auto all = bf16.decode_all();
  EXPECT_EQ(all[0], 1.0f);
  EXPECT_EQ(all[1], 1.0625f);  // exact in bfloat16
  EXPECT_THROW(PackedMatrix(x.data(), 2, 3, "no_such_format", ro, 1), std::exception);
}

TEST(StoredMatrix, TiledVariantsOnStoredEMatchTheReferenceOnItsDecodedValues) {
  const Shape s{1, 45, 1537, 24, 5, Reduction::mean, true};
  SyntheticSpec spec;
  spec.seed = 5;
  spec.pad_fraction = 0.2;
  spec.dup_fraction = 0.2;
  const StepData d = make_synthetic(s, spec);
  for (const char* format : {"bfloat16", "float8_e4m3fn", "float8_e5m2", "e3m4", "e5m7"})
    for (const char* rounding : {"nearest_even", "stochastic"}) {
      precision::RoundingOptions ro;
      ro.mode = precision::parse_rounding(rounding);
      ro.seed = 11;
      PackedMatrix stored(d.E.data(), d.V, d.D, format, ro, 2);
      const std::vector<float> Eq = stored.decode_all();
      StepInputs in_q = d.view();
      in_q.E = Eq.data();
      CountingAllocator ref_alloc;
      cpu::ReferenceResult ref;
      cpu::reference_step(in_q, ref, ref_alloc, 2);

      StepInputs in = d.view();
      in.E = nullptr;  // the variant must read the stored E only
      in.E_stored = &stored;
      for (const char* name : {"fused", "chunked"}) {
        const Variant* v = Registry::instance().find(name);
        ASSERT_NE(v, nullptr);
        const RunOptions o{2, 100, 16, format};
        ASSERT_FALSE(v->skip_reason(s, o).has_value());
        StepOutputs out;
        out.resize(in.P, in.V, in.D);
        CountingAllocator alloc;
        RunContext ctx{alloc, o};
        v->run(in, out, ctx);
        const std::string where = std::string(name) + " E " + format + " " + rounding;
        EXPECT_LE(relative_error(out.loss, ref.loss), 1e-6) << where;
        EXPECT_LE(relative_l2_error(out.dA.data(), ref.dA.data(), in.P * in.D), 1e-5) << where;
        EXPECT_LE(relative_l2_error(out.dE.data(), ref.dE.data(), in.V * in.D), 1e-5) << where;
        EXPECT_EQ(count_mismatches(out.counts.data(), ref.counts.data(), ref.near_zero.data(), in.P), 0) << where;
        EXPECT_EQ(alloc.peak_bytes(), v->predicted_working_bytes(s, o)) << where;
      }
    }
  // With bf16 and fp8 operands, where fused runs its bf16 tiles (which decode and round E strip by strip):
  // the bits of the same run on the decoded E as float32, and the predicted working bytes; tiles of 100
  // columns (strips of 16, 16, ..., 4; the last block 37) and of 10 (one piece per block).
  for (int64_t block_v : {100, 10})
    for (const char* operand : {"bf16", "e4m3"})
      for (const char* format : {"bfloat16", "float8_e5m2", "e3m4"}) {
        PackedMatrix stored(d.E.data(), d.V, d.D, format, precision::RoundingOptions{}, 2);
        const std::vector<float> Eq = stored.decode_all();
        StepInputs in_q = d.view();
        in_q.E = Eq.data();
        StepInputs in = d.view();
        in.E = nullptr;
        in.E_stored = &stored;
        const Variant* v = Registry::instance().find("fused");
        RunOptions o{2, block_v, 16, format};
        o.operand = operand;
        const std::string where = std::string("fused ") + operand + " E " + format + " block_v " + std::to_string(block_v);
        if (v->skip_reason(s, o) || !cpu::TiledRun::fused_bf16_tiles(o, true)) {
          GTEST_LOG_(INFO) << where << ": no fused bf16 tiles on this CPU, not checked";
          continue;
        }
        auto run = [&](const StepInputs& input, RunOptions opts) {
          StepOutputs out;
          out.resize(input.P, input.V, input.D);
          CountingAllocator alloc;
          RunContext ctx{alloc, opts};
          v->run(input, out, ctx);
          EXPECT_EQ(alloc.peak_bytes(), v->predicted_working_bytes(s, opts)) << where;
          return out;
        };
        const StepOutputs stored_run = run(in, o);
        RunOptions float_e = o;
        float_e.e_format = "";
        const StepOutputs float_run = run(in_q, float_e);
        EXPECT_EQ(stored_run.loss, float_run.loss) << where;
        EXPECT_EQ(stored_run.dA, float_run.dA) << where;
        EXPECT_EQ(stored_run.dE, float_run.dE) << where;
        EXPECT_EQ(stored_run.counts, float_run.counts) << where;
      }
  // Variants that read only float32 E say so instead of running.
  EXPECT_TRUE(Registry::instance().find("dense")->skip_reason(s, RunOptions{2, 0, 0, "bfloat16"}).has_value());
}

}  // namespace
}  // namespace lobench
