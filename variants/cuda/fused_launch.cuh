// Launching the fused step's kernels (fused_kernels.cuh) for one problem: the rows kernel (loss, counts,
// dA, split over the vocabulary), the cols kernel (dE, handed to an epilogue) and the reduction of the
// rows kernel's splits. Shared by `cuda_fused` (epilogue: store dE) and the fused SGD update
// (epilogue: apply it to the stored weights).
#pragma once

#include <algorithm>

#include "variants/cuda/cuda_check.hpp"
#include "variants/cuda/device_problem.cuh"
#include "variants/cuda/fused_kernels.cuh"

namespace lobench::cuda::fused {

inline int multiprocessors() {
  int device = 0, n = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 132;  // no device to ask (memory predictions on a build machine): an H100/H200
  }
  return n;
}

inline int padded_d(int64_t D) { return int((D + 15) / 16 * 16); }

// Vocabulary splits of the rows kernel: enough blocks for about four per multiprocessor.
inline int64_t choose_splits(int64_t P, int64_t V) {
  const int64_t row_blocks = (P + kTile - 1) / kTile, tiles = (V + kTile - 1) / kTile;
  const int64_t want = 4 * int64_t(multiprocessors());
  return std::clamp<int64_t>((want + row_blocks - 1) / row_blocks, 1, tiles);
}

inline int smem_bytes(Operand op, int Dp, int L) {
  switch (op) {
    case Operand::bf16: return SmemLayout::make<__nv_bfloat16>(Dp, L, true).bytes;
    case Operand::tf32: return SmemLayout::make<float>(Dp, L, true).bytes;
    case Operand::fp32: return SmemLayout::make<float>(Dp, L, false).bytes;
    case Operand::e4m3:
    case Operand::e5m2: return 0;  // (no fp8 operands on the GPU: common_skip_reason refuses them first)
  }
  return 0;
}

static __global__ void reduce_splits_kernel(const float* __restrict__ dA_part, const double* __restrict__ loss_part,
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

template <class Ops, class Epilogue>
void launch_fused(DeviceProblem& pb, const int32_t* tgt, int64_t splits, float* dA_part, double* loss_part,
                  long long* counts_part, const Epilogue& epilogue, cudaStream_t s) {
  using T = typename Ops::Operand;
  require_supported_d(pb.D, "launch_fused");  // before any launch: wider accumulators would be dropped
  const int Dp = padded_d(pb.D);
  const int bytes = SmemLayout::make<T>(Dp, int(pb.L), Ops::kRegisterAccumulators).bytes;
  MatrixSource<T> A, E;
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

  ScanArgs args;  // both kernels'
  args.P = pb.P;
  args.V = pb.V;
  args.D = int(pb.D);
  args.Dp = Dp;
  args.L = int(pb.L);
  args.scale = pb.grad_scale;
  args.tgt = tgt;
  args.weights = pb.weights.data();
  args.table = table;

  RowsArgs ra;
  static_cast<ScanArgs&>(ra) = args;
  const int64_t tiles = (pb.V + kTile - 1) / kTile;
  ra.tiles_per_split = (tiles + splits - 1) / splits;
  ra.dA_part = dA_part;
  ra.loss_part = loss_part;
  ra.counts_part = counts_part;
  auto rows = rows_kernel<Ops>;
  LOBENCH_CUDA_CHECK(cudaFuncSetAttribute(rows, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const dim3 rows_grid(unsigned((pb.P + kTile - 1) / kTile), unsigned(splits));
  rows<<<rows_grid, kThreads, bytes, s>>>(ra, A, E);
  LOBENCH_CUDA_CHECK_LAUNCH();

  auto cols = cols_kernel<Ops, Epilogue>;
  LOBENCH_CUDA_CHECK(cudaFuncSetAttribute(cols, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  cols<<<unsigned(tiles), kThreads, bytes, s>>>(args, A, E, epilogue);
  LOBENCH_CUDA_CHECK_LAUNCH();

  const int64_t n = std::max(pb.P * pb.D, pb.P);
  reduce_splits_kernel<<<unsigned((n + 255) / 256), 256, 0, s>>>(dA_part, loss_part, counts_part, splits, pb.P, pb.D,
                                                                  pb.dA.data(), pb.per_position_loss.data(),
                                                                  pb.counts.data());
  LOBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace lobench::cuda::fused
