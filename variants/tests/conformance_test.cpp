// Every registered CPU variant against the float64 reference on random ragged problems
// (docs/method.md#accuracy, the rules for fp32 variants).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/tests/ragged_cases.hpp"
#include "variants/tests/reference_checks.hpp"

namespace lobench {
namespace {

std::vector<const Variant*> cpu_variants_under_test() {
  std::vector<const Variant*> out;
  for (const Variant* v : Registry::instance().all())
    if (v->backend() == "cpu" && v->name() != "reference") out.push_back(v);
  return out;
}

TEST(Conformance, EveryCpuVariantMatchesTheReferenceOnRaggedCases) {
  const auto variants = cpu_variants_under_test();
  ASSERT_GE(variants.size(), 2u);
  const auto cases = testing::ragged_cases();
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const StepData d = make_synthetic(c.shape, c.spec);
    const StepInputs in = d.view();
    const testing::Reference reference(in);
    const cpu::ReferenceResult& ref = reference.result;
    for (const Variant* v : variants) {
      if (v->skip_reason(c.shape, c.options)) continue;
      CountingAllocator alloc;
      const StepOutputs out = testing::run_step(*v, in, c.options, alloc);
      const std::string where = v->name() + " on " + c.label();
      testing::expect_matches_reference(out, ref, in, where);
      for (int64_t p = 0; p < in.P; ++p) {
        int64_t sum = 0;
        for (int k = 0; k < 4; ++k) sum += out.counts[p * 4 + k];
        ASSERT_EQ(sum, in.V) << where << " position " << p;
      }
      EXPECT_LE(alloc.peak_bytes(), v->predicted_working_bytes(c.shape, c.options)) << where;
    }
  }
}

// fused and chunked with their tile products through the library instead of the micro-kernels of our own
// (the choice harness/meters/products_choice.hpp makes per CPU), the process's library and oneDNN where
// built in: the same accuracy rules. (Where the micro-kernels run, the test above holds them to the rules;
// elsewhere both tests take the library.)
void expect_library_products_match_the_reference(std::optional<cpu::GemmLibrary> library) {
  const auto cases = testing::ragged_cases();
  // Off for this test only, even when an assertion ends it early: later tests expect the micro-kernels.
  struct LibraryProducts {
    explicit LibraryProducts(std::optional<cpu::GemmLibrary> l) {
      cpu::set_own_tile_kernels_enabled(false);
      cpu::set_tile_products_library(l);
    }
    ~LibraryProducts() {
      cpu::set_own_tile_kernels_enabled(true);
      cpu::set_tile_products_library(std::nullopt);
    }
  } library_products(library);
  for (const auto& c : cases) {
    const StepData d = make_synthetic(c.shape, c.spec);
    const StepInputs in = d.view();
    const testing::Reference reference(in);
    const cpu::ReferenceResult& ref = reference.result;
    for (const char* name : {"fused", "chunked"}) {
      const Variant* v = Registry::instance().find(name);
      ASSERT_NE(v, nullptr) << name;
      if (v->skip_reason(c.shape, c.options)) continue;
      CountingAllocator alloc;
      const StepOutputs out = testing::run_step(*v, in, c.options, alloc);
      testing::expect_matches_reference(out, ref, in,
                                        std::string(name) + " (" + cpu::gemm_library_name(cpu::tile_products_library()) +
                                            " products) on " + c.label());
    }
  }
}

TEST(Conformance, TiledVariantsMatchTheReferenceThroughTheLibraryProducts) {
  expect_library_products_match_the_reference(std::nullopt);
}

TEST(Conformance, TiledVariantsMatchTheReferenceThroughOnednnProducts) {
  if (auto why = cpu::onednn_unavailable()) GTEST_SKIP() << *why;
  expect_library_products_match_the_reference(cpu::GemmLibrary::onednn);
}

TEST(Conformance, AllZeroLogitsGiveLn2InEveryVariant) {
  Shape s{3, 5, 1000, 8, 8, Reduction::mean, false};
  StepData d = make_synthetic(s, SyntheticSpec{});
  std::fill(d.E.begin(), d.E.end(), 0.0f);
  for (const Variant* v : cpu_variants_under_test()) {
    StepOutputs out;
    out.resize(d.P, d.V, d.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, RunOptions{2, 64, 0}};
    v->run(d.view(), out, ctx);
    EXPECT_NEAR(out.loss, std::log(2.0), 1e-7) << v->name();
  }
}

}  // namespace
}  // namespace lobench

namespace lobench {
namespace {

// The same inputs and thread count give bit-identical outputs, run after run (no timing-dependent
// work split).
TEST(Conformance, RepeatedRunsAreBitIdentical) {
  const Shape s{2, 40, 3001, 24, 4, Reduction::mean, true};
  const StepData d = make_synthetic(s, SyntheticSpec{});
  for (const Variant* v : cpu_variants_under_test()) {
    std::vector<StepOutputs> outs(4);
    for (auto& out : outs) {
      out.resize(d.P, d.V, d.D);
      CountingAllocator alloc;
      RunContext ctx{alloc, RunOptions{2, 128, 16}};
      v->run(d.view(), out, ctx);
    }
    for (size_t i = 1; i < outs.size(); ++i) {
      EXPECT_EQ(outs[i].loss, outs[0].loss) << v->name();
      EXPECT_EQ(outs[i].dA, outs[0].dA) << v->name();
      EXPECT_EQ(outs[i].dE, outs[0].dE) << v->name();
      EXPECT_EQ(outs[i].counts, outs[0].counts) << v->name();
    }
  }
}

}  // namespace
}  // namespace lobench
