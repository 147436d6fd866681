// `cuda_chunked`: Cut BCE on the GPU with cuBLAS. The vocabulary is scanned in blocks of block_v
// embeddings (the step: gemm_blocks_step.cuh), so working memory is O(P·block_v), never O(P·V).
#include <algorithm>

#include "variants/cuda/gemm_blocks_step.cuh"

namespace lobench::cuda {
namespace {

// block_v: the option if given, else the power of two that keeps the logit block near 2^25 elements
// (128 MiB in float32): large enough for the GEMMs to run at full rate, small beside P·V.
int64_t choose_block_v(int64_t P, int64_t V, const RunOptions& o) {
  if (o.block_v > 0) return std::min(o.block_v, V);
  int64_t bv = 256;
  while (bv < 65536 && P * bv * 2 <= (int64_t(1) << 25)) bv *= 2;
  return std::min(bv, V);
}

class CudaChunked final : public CudaVariant {
 public:
  std::string name() const override { return "cuda_chunked"; }
  std::string description() const override {
    return "GPU Cut BCE: per vocabulary block a cuBLAS logit GEMM, element-wise loss/counts/gradient, cuBLAS dA "
           "and dE; workspace O(P*block_v)";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    return GemmBlocksStep::working_bytes(s, o, choose_block_v(s.P(), s.V, o));
  }

 protected:
  std::unique_ptr<CudaStep> make_step(const StepInputs& in, const RunOptions& o) const override {
    return std::make_unique<GemmBlocksStep>(choose_block_v(in.P, in.V, o));
  }
};

LOBENCH_REGISTER_VARIANT(CudaChunked);

}  // namespace
}  // namespace lobench::cuda
