// What can be checked of the GPU variants without a GPU (label cpu, so CI runs it): they are compiled
// in and registered, their memory models keep the promises the issue makes, and without a device they
// skip with a reason instead of failing.
#include <cublas_v2.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include <string>
#include <vector>

#include "variants/cuda/cublas_on_demand.hpp"
#include "variants/cuda/device_allocator.hpp"
#include "variants/cuda/fused_limits.hpp"
#include "variants/cuda/fused_sr_sgd.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

bool cublas_mapped() {
  void* h = dlopen(LOBENCH_TEST_CUBLAS_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != nullptr;
}

// First in the file: ctest runs each test in a process of its own, and a plain run of the binary runs this
// one before anything could have called cuBLAS.
TEST(CublasOnDemand, IsNotLoadedAtStartAndLoadsOnFirstCall) {
  EXPECT_FALSE(cublas_mapped()) << "libcublas is linked again: every process start pays ~70 ms for it";
  ASSERT_TRUE(cuda::cublas_loadable()) << cuda::cublas_load_error();
  EXPECT_TRUE(cublas_mapped());
  EXPECT_TRUE(cuda::cublas_load_error().empty());
  // Through the real library (its own name for the status; no device needed)
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  // cublasCreate without a device fails with cuBLAS's own status, not a crash (with one, it succeeds)
  cublasHandle_t handle = nullptr;
  const cublasStatus_t s = cublasCreate(&handle);
  if (s == CUBLAS_STATUS_SUCCESS) EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  else EXPECT_EQ(s, CUBLAS_STATUS_NOT_INITIALIZED) << cublasGetStatusString(s);
}

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

// The fused kernels' accumulator holds D ≤ 256 (fused_limits.hpp); wider rows would be dropped without
// an error. The check sits where the kernels are launched, before any CUDA call, so it refuses the
// shape with or without a device.
TEST(FusedLimits, DAbove256IsRefusedWithTheReason) {
  EXPECT_NO_THROW(cuda::fused::require_supported_d(1, "test"));
  EXPECT_NO_THROW(cuda::fused::require_supported_d(256, "test"));
  for (const int64_t D : {int64_t(0), int64_t(257), int64_t(272), int64_t(1024)}) {
    try {
      cuda::fused::require_supported_d(D, "test");
      ADD_FAILURE() << "D = " << D << " accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("D = " + std::to_string(D)), std::string::npos) << what;
      EXPECT_NE(what.find("256"), std::string::npos) << what;
    }
  }
}

TEST(FusedLimits, TheFusedSgdUpdateRefusesDAbove256BeforeTouchingTheDevice) {
  const Shape s{1, 3, 10, 264, 2, Reduction::mean, false};
  const StepData d = make_synthetic(s, SyntheticSpec{});
  std::vector<float> W(d.E.size(), 0.0f);
  const std::vector<float> before = W;
  StepOutputs out;
  try {
    cuda::fused_sr_sgd_step(d.view(), W, cuda::SrSgdOptions{}, 0.5f, 0, out);
    ADD_FAILURE() << "D = 264 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fused SR-SGD: D = 264"), std::string::npos) << e.what();
  }
  EXPECT_EQ(W, before);  // nothing written
}

}  // namespace
}  // namespace lobench
