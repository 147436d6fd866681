// The step of the cuBLAS variants (`cuda_dense`, `cuda_chunked`): the vocabulary is scanned in blocks of
// block_v embeddings; per block one GEMM gives the [P, block_v] logits, the element-wise kernel turns
// them into the gradient (loss and counts on the way), and two GEMMs consume it: dA += G·E_block and
// dE_block = Gᵀ·A. The blocks run in order on one stream, so every sum has a fixed order and the
// results repeat bit for bit. `cuda_dense` is the one-block case (block_v = V).
#pragma once

#include <algorithm>

#include "variants/cuda/cuda_variant.cuh"

namespace lobench::cuda {

class GemmBlocksStep final : public CudaStep {
 public:
  explicit GemmBlocksStep(int64_t block_v) : bv_(block_v) {}

  // Exactly what allocate() takes, plus cuBLAS's workspace: the logit block (and its bf16 gradient copy
  // when the operands are bf16), the unique targets, and the block of E widened from 8-bit codes.
  static int64_t working_bytes(const Shape& s, const RunOptions& o, int64_t block_v) {
    const Operand op = parse_operand(o.operand);
    const int64_t P = s.P();
    int64_t b = P * block_v * 4 + P * s.L * 4 + kCublasWorkspaceBytes;
    if (op == Operand::bf16) b += P * block_v * 2;
    if (planned_e_storage(o) == EStorage::codes8) b += block_v * s.D * operand_size(op);
    return b;
  }

  void allocate(const DeviceProblem& pb, DeviceAllocator& alloc) override {
    logits_ = DeviceBuffer<float>(alloc, pb.P * bv_);
    if (pb.operand == Operand::bf16) g16_ = DeviceBuffer<__nv_bfloat16>(alloc, pb.P * bv_);
    tgt_ = DeviceBuffer<int32_t>(alloc, pb.P * pb.L);
    if (pb.e_storage == EStorage::codes8) {
      if (pb.operand == Operand::bf16) e16_ = DeviceBuffer<__nv_bfloat16>(alloc, bv_ * pb.D);
      else e32_ = DeviceBuffer<float>(alloc, bv_ * pb.D);
    }
  }

  void step(DeviceProblem& pb, cudaStream_t s, cublasHandle_t blas) override {
    const int64_t P = pb.P, V = pb.V, D = pb.D;
    const bool bf16 = pb.operand == Operand::bf16;
    launch_unique_targets(pb.targets.data(), tgt_.data(), P, pb.L, V, s);
    const void* A = bf16 ? static_cast<const void*>(pb.A16.data()) : pb.A32.data();
    const int64_t esize = operand_size(pb.operand);
    for (int64_t v0 = 0; v0 < V; v0 += bv_) {
      const int64_t n = std::min(bv_, V - v0);
      const void* E = nullptr;  // rows v0 .. v0+n−1 of E in the operand type
      if (pb.e_storage == EStorage::codes8) {
        if (bf16) launch_widen_codes(pb.Ecodes.data() + v0 * D, pb.e_table.data(), e16_.data(), n * D, s);
        else launch_widen_codes(pb.Ecodes.data() + v0 * D, pb.e_table.data(), e32_.data(), n * D, s);
        E = bf16 ? static_cast<const void*>(e16_.data()) : e32_.data();
      } else {
        E = static_cast<const char*>(bf16 ? static_cast<const void*>(pb.E16.data()) : pb.E32.data()) + v0 * D * esize;
      }
      // Logits of the block, row-major [P, n] (ld n) = column-major [n, P] = (E_blockᶜ)ᵀ·Aᶜ with
      // E_blockᶜ = E_block as [D, n] and Aᶜ = A as [D, P].
      gemm(blas, pb.operand, CUBLAS_OP_T, CUBLAS_OP_N, n, P, D, E, D, A, D, 0.0f, logits_.data(), n);
      const BceRowsArgs a = bce_rows_args(pb, tgt_.data(), logits_.data(), n, v0);
      const void* G = nullptr;
      if (bf16) {
        launch_bce_rows(a, g16_.data(), n, s);
        G = g16_.data();
      } else {
        launch_bce_rows(a, logits_.data(), n, s);  // in place
        G = logits_.data();
      }
      // dA += G·E_block (column-major dAᶜ[D, P] += E_blockᶜ[D, n]·Gᶜ[n, P]); the first block overwrites.
      gemm(blas, pb.operand, CUBLAS_OP_N, CUBLAS_OP_N, D, P, n, E, D, G, n, v0 == 0 ? 0.0f : 1.0f, pb.dA.data(), D);
      // dE_block = Gᵀ·A (column-major dE_blockᶜ[D, n] = Aᶜ[D, P]·(Gᶜ)ᵀ[P, n]).
      gemm(blas, pb.operand, CUBLAS_OP_N, CUBLAS_OP_T, D, n, P, A, D, G, n, 0.0f, pb.dE.data() + v0 * D, D);
    }
    launch_finish_loss(pb, s);
  }

 private:
  int64_t bv_;
  DeviceBuffer<float> logits_, e32_;
  DeviceBuffer<__nv_bfloat16> g16_, e16_;
  DeviceBuffer<int32_t> tgt_;
};

}  // namespace lobench::cuda
