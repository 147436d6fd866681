// nccl_ordered_sum under mpirun, one GPU per rank: the rank-order sum, the same bits on every rank.
// Skips (exit 0, saying why) without a CUDA device. UNTESTED at R > 1 (no multi-GPU machine yet).
#include <cuda_runtime.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "harness/shard/mpi_session.hpp"
#include "harness/shard/nccl_sum.hpp"

int main(int argc, char** argv) {
  const lobench::shard::MpiSession mpi(&argc, &argv);  // MPI_Finalize when main returns
  int rank = 0, R = 1, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    if (rank == 0) std::printf("nccl_sum_test: skipped: no CUDA device\n");
    return 0;
  }
  int bad = 0;
  {
    lobench::shard::NcclComm comm(MPI_COMM_WORLD);
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000), int64_t(1) << 20}) {
      std::vector<float> h(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) h[size_t(i)] = std::ldexp(1.0f + 0.1f * float(i % 97), 20 * (rank % 2)) + 0.3f * float(rank);
      float* d = nullptr;
      cudaMalloc(&d, size_t(n) * sizeof(float));
      cudaMemcpy(d, h.data(), size_t(n) * sizeof(float), cudaMemcpyHostToDevice);
      lobench::shard::nccl_ordered_sum(comm, d, n, nullptr);
      cudaMemcpy(h.data(), d, size_t(n) * sizeof(float), cudaMemcpyDeviceToHost);
      cudaFree(d);
      for (int64_t i = 0; i < n; ++i) {
        float want = 0.0f;
        for (int r = 0; r < R; ++r) {
          const float v = std::ldexp(1.0f + 0.1f * float(i % 97), 20 * (r % 2)) + 0.3f * float(r);
          want = r == 0 ? v : want + v;
        }
        if (h[size_t(i)] != want) ++bad;
      }
    }
    if (rank == 0) std::printf("nccl_sum_test: %s, %d ranks on %d device(s): %d mismatches\n",
                               lobench::shard::nccl_version().c_str(), R, devices, bad);
  }
  int worst = 0;
  MPI_Allreduce(&bad, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst == 0 ? 0 : 1;
}
