// What can be checked of the GPU variants without a GPU (label cpu, so CI runs it): they are compiled
// in and registered, their memory models keep the promises the issue makes, and without a device they
// skip with a reason instead of failing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "variants/cuda/device_allocator.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

std::vector<const Variant*> gpu_variants() {
  std::vector<const Variant*> out;
  for (const Variant* v : Registry::instance().all())
    if (v->backend() == "cuda") out.push_back(v);
  return out;
}

TEST(CudaVariants, AreRegistered) {
  std::vector<std::string> names;
  for (const Variant* v : gpu_variants()) names.push_back(v->name());
  EXPECT_EQ(names, (std::vector<std::string>{"cuda_chunked", "cuda_dense", "cuda_fused"}));
}

TEST(CudaMemory, DenseNeedsLogitsChunkedAndFusedDoNot) {
  // A model check that needs no device: at B=N=32, V=1M the dense variant's working set is the
  // [P, V] logits, chunked's and fused's are at least 10× smaller.
  const Shape s{32, 32, 1000000, 128, 8, Reduction::mean, false};
  const RunOptions o;
  const auto* dense = Registry::instance().find("cuda_dense");
  const auto* chunked = Registry::instance().find("cuda_chunked");
  const auto* fused = Registry::instance().find("cuda_fused");
  ASSERT_TRUE(dense && chunked && fused);
  EXPECT_GE(dense->predicted_working_bytes(s, o), s.P() * s.V * 4);
  EXPECT_LE(10 * chunked->predicted_working_bytes(s, o), dense->predicted_working_bytes(s, o));
  EXPECT_LE(10 * fused->predicted_working_bytes(s, o), dense->predicted_working_bytes(s, o));
}

TEST(CudaVariants, SkipWithAReasonWithoutADevice) {
  std::string why;
  if (cuda::device_available(&why)) GTEST_SKIP() << "a device is present; this checks the no-device path";
  const Shape s{1, 8, 100, 16, 2, Reduction::mean, false};
  for (const Variant* v : gpu_variants()) {
    const auto reason = v->skip_reason(s, RunOptions{});
    ASSERT_TRUE(reason.has_value()) << v->name();
    EXPECT_NE(reason->find("CUDA"), std::string::npos) << *reason;
  }
}

}  // namespace
}  // namespace lobench
