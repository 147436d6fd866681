// `cuda_dense`: the framework baseline on the GPU. The whole [P, V] logit matrix is materialised by one
// cuBLAS GEMM, turned into the gradient in place by the element-wise kernel (loss and counts on the
// way), and the two gradient GEMMs read it back. Working memory is P·V·4 bytes (plus P·V·2 for the
// bf16 copy of the gradient when the operands are bf16): what runs out first as V grows.
#include "cuda_check.hpp"
#include "cuda_variant.cuh"

namespace lobench::cuda {
namespace {

class DenseStep final : public CudaStep {
 public:
  void allocate(const DeviceProblem& pb, DeviceAllocator& alloc) override {
    logits_ = DeviceBuffer<float>(alloc, pb.P * pb.V);
    if (pb.operand == Operand::bf16) g16_ = DeviceBuffer<__nv_bfloat16>(alloc, pb.P * pb.V);
    tgt_ = DeviceBuffer<int32_t>(alloc, pb.P * pb.L);
    if (pb.e_storage == EStorage::codes8) {
      if (pb.operand == Operand::bf16) e16_ = DeviceBuffer<__nv_bfloat16>(alloc, pb.V * pb.D);
      else e32_ = DeviceBuffer<float>(alloc, pb.V * pb.D);
    }
  }

  void step(DeviceProblem& pb, cudaStream_t s, cublasHandle_t blas) override {
    const int64_t P = pb.P, V = pb.V, D = pb.D;
    launch_unique_targets(pb.targets.data(), tgt_.data(), P, pb.L, V, s);
    const void* A = pb.operand == Operand::bf16 ? static_cast<const void*>(pb.A16.data()) : pb.A32.data();
    const void* E = nullptr;
    if (pb.e_storage == EStorage::codes8) {
      if (pb.operand == Operand::bf16) {
        launch_widen_codes(pb.Ecodes.data(), pb.e_table.data(), e16_.data(), V * D, s);
        E = e16_.data();
      } else {
        launch_widen_codes(pb.Ecodes.data(), pb.e_table.data(), e32_.data(), V * D, s);
        E = e32_.data();
      }
    } else {
      E = pb.operand == Operand::bf16 ? static_cast<const void*>(pb.E16.data()) : pb.E32.data();
    }
    // Row-major X[P, V] = A·Eᵀ is column-major Xᶜ[V, P] = (Eᶜ)ᵀ·Aᶜ with Eᶜ = E as [D, V], Aᶜ = A as [D, P].
    gemm(blas, pb.operand, CUBLAS_OP_T, CUBLAS_OP_N, V, P, D, E, D, A, D, 0.0f, logits_.data(), V);

    const BceRowsArgs a = bce_rows_args(pb, tgt_.data(), logits_.data(), V, 0);
    const void* G = nullptr;
    if (pb.operand == Operand::bf16) {
      launch_bce_rows(a, g16_.data(), V, s);
      G = g16_.data();
    } else {
      launch_bce_rows(a, logits_.data(), V, s);  // in place
      G = logits_.data();
    }
    // dA[P, D] = G·E: column-major dAᶜ[D, P] = Eᶜ[D, V]·Gᶜ[V, P].
    gemm(blas, pb.operand, CUBLAS_OP_N, CUBLAS_OP_N, D, P, V, E, D, G, V, 0.0f, pb.dA.data(), D);
    // dE[V, D] = Gᵀ·A: column-major dEᶜ[D, V] = Aᶜ[D, P]·(Gᶜ)ᵀ[P, V].
    gemm(blas, pb.operand, CUBLAS_OP_N, CUBLAS_OP_T, D, V, P, A, D, G, V, 0.0f, pb.dE.data(), D);
    launch_finish_loss(pb, s);
  }

 private:
  DeviceBuffer<float> logits_, e32_;
  DeviceBuffer<__nv_bfloat16> g16_, e16_;
  DeviceBuffer<int32_t> tgt_;
};

class CudaDense final : public CudaVariant {
 public:
  std::string name() const override { return "cuda_dense"; }
  std::string description() const override {
    return "GPU baseline: cuBLAS logits [P,V] in memory, element-wise loss/counts/gradient, cuBLAS dA and dE";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    const Operand op = parse_operand(o.operand);
    const int64_t P = s.P(), V = s.V;
    int64_t b = P * V * 4 + P * s.L * 4 + kCublasWorkspaceBytes;
    if (op == Operand::bf16) b += P * V * 2;
    if (planned_e_storage(o) == EStorage::codes8) b += V * s.D * operand_size(op);  // codes widened to the operand type
    return b;
  }

 protected:
  std::unique_ptr<CudaStep> make_step(const StepInputs&, const RunOptions&) const override {
    return std::make_unique<DenseStep>();
  }
};

LOBENCH_REGISTER_VARIANT(CudaDense);

}  // namespace
}  // namespace lobench::cuda
