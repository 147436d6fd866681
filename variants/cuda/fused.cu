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

#include "cuda_check.hpp"
#include "cuda_variant.cuh"
#include "fused_kernels.cuh"

namespace lobench::cuda {
namespace {

using fused::kThreads;
using fused::kTile;

int multiprocessors() {
  int device = 0, n = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 132;  // no device to ask (memory predictions on a build machine): an H100/H200
  }
  return n;
}

int padded_d(int64_t D) { return int((D + 15) / 16 * 16); }

// Vocabulary splits of the rows kernel: enough blocks for about four per multiprocessor.
int64_t choose_splits(int64_t P, int64_t V) {
  const int64_t row_blocks = (P + kTile - 1) / kTile, tiles = (V + kTile - 1) / kTile;
  const int64_t want = 4 * int64_t(multiprocessors());
  return std::clamp<int64_t>((want + row_blocks - 1) / row_blocks, 1, tiles);
}

int smem_bytes(Operand op, int Dp, int L) {
  switch (op) {
    case Operand::bf16: return fused::SmemLayout::make<__nv_bfloat16>(Dp, L, true).bytes;
    case Operand::tf32: return fused::SmemLayout::make<float>(Dp, L, true).bytes;
    case Operand::fp32: return fused::SmemLayout::make<float>(Dp, L, false).bytes;
  }
  return 0;
}

__global__ void reduce_splits_kernel(const float* __restrict__ dA_part, const double* __restrict__ loss_part,
                                     const long long* __restrict__ counts_part, int64_t splits, int64_t P, int64_t D,
                                     float* __restrict__ dA, double* __restrict__ ppl, long long* __restrict__ counts) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < P * D) {
    float s = 0.0f;
    for (int64_t k = 0; k < splits; ++k) s += dA_part[k * P * D + i];
    dA[i] = s;
  }
  if (i < P) {
    double l = 0.0;
    long long c[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < splits; ++k) {
      l += loss_part[k * P + i];
      for (int j = 0; j < 4; ++j) c[j] += counts_part[(k * P + i) * 4 + j];
    }
    ppl[i] = l;
    for (int j = 0; j < 4; ++j) counts[i * 4 + j] = c[j];
  }
}

template <class Ops>
void launch_fused(DeviceProblem& pb, const int32_t* tgt, int64_t splits, float* dA_part, double* loss_part,
                  long long* counts_part, cudaStream_t s) {
  using T = typename Ops::Operand;
  const int Dp = padded_d(pb.D);
  const int bytes = fused::SmemLayout::make<T>(Dp, int(pb.L), Ops::kRegisterAccumulators).bytes;
  fused::MatrixSource<T> A, E;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    A.values = pb.A16.data();
    E.values = pb.E16.data();
  } else {
    A.values = pb.A32.data();
    E.values = pb.E32.data();
  }
  const float* table = nullptr;
  if (pb.e_storage == EStorage::codes8) {
    E.values = nullptr;
    E.codes = pb.Ecodes.data();
    table = pb.e_table.data();
  }

  fused::RowsArgs ra;
  ra.P = pb.P;
  ra.V = pb.V;
  ra.D = int(pb.D);
  ra.Dp = Dp;
  ra.L = int(pb.L);
  const int64_t tiles = (pb.V + kTile - 1) / kTile;
  ra.tiles_per_split = (tiles + splits - 1) / splits;
  ra.scale = pb.grad_scale;
  ra.tgt = tgt;
  ra.weights = pb.weights.data();
  ra.table = table;
  ra.dA_part = dA_part;
  ra.loss_part = loss_part;
  ra.counts_part = counts_part;
  auto rows = fused::rows_kernel<Ops>;
  LOBENCH_CUDA_CHECK(cudaFuncSetAttribute(rows, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const dim3 rows_grid(unsigned((pb.P + kTile - 1) / kTile), unsigned(splits));
  rows<<<rows_grid, kThreads, bytes, s>>>(ra, A, E);
  LOBENCH_CUDA_CHECK_LAUNCH();

  fused::ColsArgs ca;
  ca.P = pb.P;
  ca.V = pb.V;
  ca.D = int(pb.D);
  ca.Dp = Dp;
  ca.L = int(pb.L);
  ca.scale = pb.grad_scale;
  ca.tgt = tgt;
  ca.weights = pb.weights.data();
  ca.table = table;
  auto cols = fused::cols_kernel<Ops, fused::StoreGradientRows>;
  LOBENCH_CUDA_CHECK(cudaFuncSetAttribute(cols, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  cols<<<unsigned(tiles), kThreads, bytes, s>>>(ca, A, E, fused::StoreGradientRows{pb.dE.data()});
  LOBENCH_CUDA_CHECK_LAUNCH();

  const int64_t n = std::max(pb.P * pb.D, pb.P);
  reduce_splits_kernel<<<unsigned((n + 255) / 256), 256, 0, s>>>(dA_part, loss_part, counts_part, splits, pb.P, pb.D,
                                                                  pb.dA.data(), pb.per_position_loss.data(),
                                                                  pb.counts.data());
  LOBENCH_CUDA_CHECK_LAUNCH();
}

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
        launch_fused<fused::OpsBf16>(pb, tgt_.data(), splits_, dA_part_.data(), loss_part_.data(), counts_part_.data(), s);
        break;
      case Operand::tf32:
        launch_fused<fused::OpsTf32>(pb, tgt_.data(), splits_, dA_part_.data(), loss_part_.data(), counts_part_.data(), s);
        break;
      case Operand::fp32:
        launch_fused<fused::OpsF32>(pb, tgt_.data(), splits_, dA_part_.data(), loss_part_.data(), counts_part_.data(), s);
        break;
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
