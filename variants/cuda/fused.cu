// `cuda_fused`: the BCE step with no logits in device memory. Logit tiles are computed on chip from
// operand tiles in shared memory (tensor cores for bf16 and tf32, CUDA cores for exact fp32) and
// consumed there: loss, counts, σ − y and both gradient products.
//
// Why two kernels. A single pass over the P×V tile grid must sum dA over vocabulary tiles and dE over
// position tiles; one of the two then needs either atomics into device memory (P·D·V/64 or V·D·P/64
// float additions, in an order that changes run to run) or a [P, V]-sized exchange. BCE has no row
// normaliser, so each tile's gradient depends on its own logits only, and the step splits cleanly:
//   rows kernel  a block owns 64 positions: loss, counts and dA, over the vocabulary tiles of its split
//   cols kernel  a block owns 64 embeddings: dE, over every position tile
// Each recomputes the logits it consumes (8·P·V·D flops in all, against 6·P·V·D counted as useful work),
// every sum has a fixed order (the results repeat bit for bit), and nothing of size P·V is ever stored.
// The rows kernel splits the vocabulary when there are too few position blocks to fill the GPU; the
// splits' partial sums go through a small workspace ([splits, P, D + 5]) and are added in split order.
#include <algorithm>
#include <stdexcept>

#include "variants/cuda/cuda_check.hpp"
#include "variants/cuda/cuda_variant.cuh"
#include "variants/cuda/fused_launch.cuh"

namespace lobench::cuda {
namespace {

using fused::choose_splits;
using fused::launch_fused;
using fused::padded_d;
using fused::smem_bytes;

class FusedStep final : public CudaStep {
 public:
  explicit FusedStep(int64_t splits) : splits_(splits) {}
  bool uses_cublas() const override { return false; }

  void allocate(const DeviceProblem& pb, DeviceAllocator& alloc) override {
    tgt_ = DeviceBuffer<int32_t>(alloc, pb.P * pb.L);
    dA_part_ = DeviceBuffer<float>(alloc, splits_ * pb.P * pb.D);
    loss_part_ = DeviceBuffer<double>(alloc, splits_ * pb.P);
    counts_part_ = DeviceBuffer<long long>(alloc, splits_ * pb.P * 4);
  }

  void step(DeviceProblem& pb, cudaStream_t s, cublasHandle_t) override {
    launch_unique_targets(pb.targets.data(), tgt_.data(), pb.P, pb.L, pb.V, s);
    switch (pb.operand) {
      case Operand::bf16:
        launch_fused<fused::OpsBf16>(pb, tgt_.data(), splits_, dA_part_.data(), loss_part_.data(), counts_part_.data(),
                                 fused::StoreGradientRows{pb.dE.data()}, s);
        break;
      case Operand::tf32:
        launch_fused<fused::OpsTf32>(pb, tgt_.data(), splits_, dA_part_.data(), loss_part_.data(), counts_part_.data(),
                                 fused::StoreGradientRows{pb.dE.data()}, s);
        break;
      case Operand::fp32:
        launch_fused<fused::OpsF32>(pb, tgt_.data(), splits_, dA_part_.data(), loss_part_.data(), counts_part_.data(),
                                 fused::StoreGradientRows{pb.dE.data()}, s);
        break;
      case Operand::e4m3:
      case Operand::e5m2:  // (refused by common_skip_reason)
        throw std::logic_error("the CUDA fused variant has no fp8 operands");
    }
    launch_finish_loss(pb, s);
  }

 private:
  int64_t splits_;
  DeviceBuffer<int32_t> tgt_;
  DeviceBuffer<float> dA_part_;
  DeviceBuffer<double> loss_part_;
  DeviceBuffer<long long> counts_part_;
};

class CudaFused final : public CudaVariant {
 public:
  std::string name() const override { return "cuda_fused"; }
  std::string description() const override {
    return "GPU fused: logit tiles on chip (tensor cores for bf16/tf32), loss/counts/gradients consumed there; no "
           "logits in device memory";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions&) const override {
    const int64_t P = s.P(), splits = choose_splits(P, s.V);
    return P * s.L * 4 + splits * P * (s.D * 4 + 8 + 32);
  }

 protected:
  std::optional<std::string> variant_skip_reason(const Shape& s, const RunOptions& o) const override {
    if (s.D > fused::kMaxDp) return "D > " + std::to_string(fused::kMaxDp) + " not supported by the fused kernels";
    int device = 0, limit = 0;
    LOBENCH_CUDA_CHECK(cudaGetDevice(&device));
    LOBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const int need = smem_bytes(parse_operand(o.operand), padded_d(s.D), int(s.L));
    if (need > limit)
      return "needs " + std::to_string(need) + " B of shared memory per block, the device allows " +
             std::to_string(limit) + " (smaller D or L, or operand bf16)";
    return std::nullopt;
  }
  std::unique_ptr<CudaStep> make_step(const StepInputs& in, const RunOptions&) const override {
    return std::make_unique<FusedStep>(choose_splits(in.P, in.V));
  }
};

LOBENCH_REGISTER_VARIANT(CudaFused);

}  // namespace
}  // namespace lobench::cuda
