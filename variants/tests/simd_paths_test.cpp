// The tiled variants on every instruction-set path this CPU runs, each forced in turn, against the
// float64 reference with the conformance test's tolerances (the automatic choice alone would leave the
// other paths untested on this machine).
#include <gtest/gtest.h>

#include "variants/bce/bce_tile.hpp"
#include "variants/tests/forced_simd_path.hpp"
#include "variants/tests/ragged_cases.hpp"
#include "variants/tests/reference_checks.hpp"

namespace lobench {
namespace {

using testing::ForcedSimdPath;

TEST(SimdPaths, FusedAndChunkedMatchTheReferenceOnEveryPath) {
  const auto cases = testing::ragged_cases(12);
  for (cpu::SimdPath path : cpu::available_simd_paths()) {
    ForcedSimdPath forced(path);
    ASSERT_EQ(cpu::active_bce_tile_kernels().path, path);
    for (const auto& c : cases) {
      const StepData d = make_synthetic(c.shape, c.spec);
      const StepInputs in = d.view();
      const testing::Reference reference(in);
      const cpu::ReferenceResult& ref = reference.result;
      for (const char* name : {"fused", "chunked"}) {
        const Variant* v = Registry::instance().find(name);
        ASSERT_NE(v, nullptr) << name;
        CountingAllocator alloc;
        const StepOutputs out = testing::run_step(*v, in, c.options, alloc);
        const std::string where = std::string(name) + " [" + to_string(path) + "] on " + c.label();
        testing::expect_matches_reference(out, ref, in, where);
      }
    }
  }
}

// One realistic shape per path, with P spanning several position chunks and V several blocks per thread.
TEST(SimdPaths, FusedMatchesTheReferenceAcrossPositionChunks) {
  const Shape s{4, 100, 5003, 64, 8, Reduction::mean, true};
  SyntheticSpec spec;
  spec.pad_fraction = 0.1;
  spec.dup_fraction = 0.1;
  spec.scale_A = 0.3f;
  const StepData d = make_synthetic(s, spec);
  const StepInputs in = d.view();
  CountingAllocator ref_alloc;
  cpu::ReferenceResult ref;
  cpu::reference_step(in, ref, ref_alloc, 2);
  for (cpu::SimdPath path : cpu::available_simd_paths()) {
    ForcedSimdPath forced(path);
    for (const char* name : {"fused", "chunked"}) {
      StepOutputs out;
      out.resize(in.P, in.V, in.D);
      CountingAllocator alloc;
      RunContext ctx{alloc, RunOptions{2, 256, 96}};
      Registry::instance().find(name)->run(in, out, ctx);
      const std::string where = std::string(name) + " [" + to_string(path) + "]";
      testing::expect_matches_reference(out, ref, in, where);
    }
  }
}

}  // namespace
}  // namespace lobench
