// Memory claims are exact: the counting allocator's peak against each variant's analytic prediction,
// and chunked's working set against dense's at the Cut BCE benchmark shape.
#include <gtest/gtest.h>

#include "variants/variant.hpp"

namespace lobench {
namespace {

int64_t measured_peak(const Variant& v, const Shape& s, const RunOptions& o) {
  const StepData d = make_synthetic(s, SyntheticSpec{});
  StepOutputs out;
  out.resize(d.P, d.V, d.D);
  CountingAllocator alloc;
  RunContext ctx{alloc, o};
  v.run(d.view(), out, ctx);
  EXPECT_EQ(alloc.current_bytes(), 0) << v.name() << " leaked working memory";
  return alloc.peak_bytes();
}

TEST(Memory, PredictionsAreExactForRaggedShapes) {
  for (const Variant* v : Registry::instance().all()) {
    if (v->backend() != "cpu") continue;
    for (const Shape& s : {Shape{1, 37, 1001, 24, 5, Reduction::mean, true}, Shape{2, 3, 70, 3, 1, Reduction::sum, false}})
      for (int threads : {1, 2}) {
        const RunOptions o{threads, 64, 16};
        EXPECT_EQ(measured_peak(*v, s, o), v->predicted_working_bytes(s, o)) << v->name() << " threads " << threads;
      }
  }
}

TEST(Memory, ChunkedNeedsUnderATenthOfDenseAtTheCutBceBenchmarkShape) {
  const Shape s{32, 32, 100000, 128, 8, Reduction::mean, false};
  const RunOptions o{2, 0, 0};
  const Variant* chunked = Registry::instance().find("chunked");
  const Variant* dense = Registry::instance().find("dense");
  ASSERT_TRUE(chunked && dense);
  const int64_t c = measured_peak(*chunked, s, o);
  const int64_t d = measured_peak(*dense, s, o);
  EXPECT_LE(c, chunked->predicted_working_bytes(s, o));
  EXPECT_EQ(d, dense->predicted_working_bytes(s, o));
  EXPECT_LE(10 * c, d) << "chunked " << c << " B, dense " << d << " B";
}

// The tiled variants' working memory depends on P and the tiles, never on V: a 100× larger vocabulary
// costs nothing more (the outputs, dE among them, are the caller's).
TEST(Memory, TiledVariantsWorkspaceIsIndependentOfTheVocabulary) {
  for (const char* name : {"chunked", "fused"}) {
    const Variant* v = Registry::instance().find(name);
    ASSERT_NE(v, nullptr) << name;
    const RunOptions o{2, 0, 0};
    const int64_t at_100k = v->predicted_working_bytes(Shape{32, 32, 100000, 128, 8, Reduction::mean, false}, o);
    const int64_t at_10m = v->predicted_working_bytes(Shape{32, 32, 10000000, 128, 8, Reduction::mean, false}, o);
    EXPECT_EQ(at_100k, at_10m) << name;
    EXPECT_LT(at_10m, int64_t(8) << 20) << name << ": a few tiles, not a [P, V] buffer";
  }
}

}  // namespace
}  // namespace lobench
