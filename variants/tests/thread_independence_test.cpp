// Results that do not depend on the thread count (issue 11, class "results differ between 1 and 2
// threads"): every CPU variant, the reference included, gives bit-identical loss, per-position loss, dA,
// dE and counts for 1, 2, 3 and 5 threads, with automatic and explicit block sizes, on ragged shapes
// whose vocabulary spans many blocks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>

#include <string>
#include <vector>

#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

StepOutputs run_with(const Variant& v, const StepData& d, int threads, int64_t block_v, int64_t block_p) {
  StepOutputs out;
  out.resize(d.P, d.V, d.D);
  CountingAllocator alloc;
  RunContext ctx{alloc, RunOptions{threads, block_v, block_p}};
  v.run(d.view(), out, ctx);
  return out;
}

TEST(ThreadIndependence, EveryCpuVariantIsBitIdenticalForAnyThreadCount) {
  struct Case {
    Shape shape;
    int64_t block_v, block_p;
  };
  const Case cases[] = {
      {{2, 40, 3001, 24, 4, Reduction::mean, true}, 0, 0},
      {{1, 77, 5000, 33, 3, Reduction::sum, false}, 0, 0},
      {{3, 11, 1537, 16, 2, Reduction::mean, false}, 100, 16},
  };
  for (const Case& c : cases) {
    SyntheticSpec spec;
    spec.pad_fraction = 0.1;
    spec.dup_fraction = 0.1;
    const StepData d = make_synthetic(c.shape, spec);
    for (const char* name : {"reference", "dense", "chunked", "fused"}) {
      const Variant* v = Registry::instance().find(name);
      ASSERT_NE(v, nullptr) << name;
      // The tiled variants through every products path (harness/meters/products_choice.hpp picks one
      // per CPU: ours, the library's, oneDNN's where built in): each on its own is independent of the
      // thread count.
      const bool tiled = std::string(name) == "chunked" || std::string(name) == "fused";
      std::vector<std::optional<cpu::GemmLibrary>> paths{std::nullopt};  // nullopt: our own kernels
      if (tiled) paths.push_back(cpu::sgemm_library());
      if (tiled && cpu::onednn_is_another_library()) paths.push_back(cpu::GemmLibrary::onednn);
      for (const std::optional<cpu::GemmLibrary>& library : paths) {
        cpu::set_own_tile_kernels_enabled(!library);
        cpu::set_tile_products_library(library);
        const StepOutputs one = run_with(*v, d, 1, c.block_v, c.block_p);
        for (int threads : {2, 3, 5}) {
          const StepOutputs many = run_with(*v, d, threads, c.block_v, c.block_p);
          const std::string what = fmt::format("{} ({} products) with {} threads, V = {}", name,
                                               library ? cpu::gemm_library_name(*library) : "own", threads, d.V);
          EXPECT_EQ(many.loss, one.loss) << what;
          EXPECT_EQ(many.per_position_loss, one.per_position_loss) << what;
          EXPECT_EQ(many.dA, one.dA) << what;
          EXPECT_EQ(many.dE, one.dE) << what;
          EXPECT_EQ(many.counts, one.counts) << what;
        }
      }
      cpu::set_own_tile_kernels_enabled(true);
      cpu::set_tile_products_library(std::nullopt);
    }
  }
}

}  // namespace
}  // namespace lobench
