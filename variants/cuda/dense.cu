// `cuda_dense`: the framework baseline on the GPU. The whole [P, V] logit matrix is materialised by one
// cuBLAS GEMM, turned into the gradient in place by the element-wise kernel (loss and counts on the
// way), and the two gradient GEMMs read it back. Working memory is P·V·4 bytes (plus P·V·2 for the
// bf16 copy of the gradient when the operands are bf16): what runs out first as V grows. The step is
// gemm_blocks_step.cuh's with a single block of V embeddings.
#include "variants/cuda/gemm_blocks_step.cuh"

namespace lobench::cuda {
namespace {

class CudaDense final : public CudaVariant {
 public:
  std::string name() const override { return "cuda_dense"; }
  std::string description() const override {
    return "GPU baseline: cuBLAS logits [P,V] in memory, element-wise loss/counts/gradient, cuBLAS dA and dE";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    return GemmBlocksStep::working_bytes(s, o, s.V);
  }

 protected:
  std::unique_ptr<CudaStep> make_step(const StepInputs& in, const RunOptions&) const override {
    return std::make_unique<GemmBlocksStep>(in.V);  // one block: the whole vocabulary
  }
};

LOBENCH_REGISTER_VARIANT(CudaDense);

}  // namespace
}  // namespace lobench::cuda
