#include "harness/shard/nccl_sum.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lobench::shard {
namespace {

void cuda_check(cudaError_t e, const char* what) {
  // (std::string, not fmt: fmt's compile-time format checks do not compile under nvcc)
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(e));
}
void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + " failed: " + ncclGetErrorString(r));
}

// out[i] = ((recv[0·s + i] + recv[1·s + i]) + ...) in rank order.
__global__ void sum_in_rank_order(const float* __restrict__ recv, int64_t s, int ranks, float* __restrict__ out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < s; i += int64_t(gridDim.x) * blockDim.x) {
    float acc = recv[i];
    for (int j = 1; j < ranks; ++j) acc += recv[int64_t(j) * s + i];
    out[i] = acc;
  }
}

// A device buffer freed on every exit path.
struct DeviceFloats {
  explicit DeviceFloats(int64_t n) { cuda_check(cudaMalloc(&p, size_t(n) * sizeof(float)), "cudaMalloc"); }
  ~DeviceFloats() { cudaFree(p); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* p = nullptr;
};

}  // namespace

NcclComm::NcclComm(MPI_Comm comm) {
  MPI_Comm_size(comm, &ranks_);
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  int local_rank = 0, devices = 0;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  cuda_check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices < 1) throw std::runtime_error("NcclComm: no CUDA device");
  device_ = local_rank % devices;
  cuda_check(cudaSetDevice(device_), "cudaSetDevice");
  ncclUniqueId id;
  if (rank_ == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  nccl_check(ncclCommInitRank(&comm_, ranks_, id, rank_), "ncclCommInitRank");
}

NcclComm::~NcclComm() {
  if (comm_) ncclCommDestroy(comm_);
}

int64_t nccl_ordered_sum_bytes(int64_t n, int ranks) {
  if (ranks <= 1 || n == 0) return 0;
  const int64_t s = (n + ranks - 1) / ranks;
  return 2 * s * ranks * int64_t(sizeof(float));  // padded send/gather buffer + receive buffer
}

void nccl_ordered_sum(const NcclComm& comm, float* x, int64_t n, cudaStream_t stream) {
  const int R = comm.ranks(), me = comm.rank();
  if (R == 1 || n == 0) return;
  const int64_t s = (n + R - 1) / R;  // equal segments: ncclAllGather needs them
  DeviceFloats padded(s * R), recv(s * R);
  cuda_check(cudaMemsetAsync(padded.p, 0, size_t(s * R) * sizeof(float), stream), "cudaMemsetAsync");
  cuda_check(cudaMemcpyAsync(padded.p, x, size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (int k = 0; k < R; ++k) {
    nccl_check(ncclSend(padded.p + int64_t(k) * s, size_t(s), ncclFloat, k, comm.get(), stream), "ncclSend");
    nccl_check(ncclRecv(recv.p + int64_t(k) * s, size_t(s), ncclFloat, k, comm.get(), stream), "ncclRecv");
  }
  nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((s + threads - 1) / threads, 4096);
  sum_in_rank_order<<<unsigned(blocks), threads, 0, stream>>>(recv.p, s, R, padded.p + int64_t(me) * s);
  cuda_check(cudaGetLastError(), "sum_in_rank_order launch");
  nccl_check(ncclAllGather(padded.p + int64_t(me) * s, padded.p, size_t(s), ncclFloat, comm.get(), stream), "ncclAllGather");
  cuda_check(cudaMemcpyAsync(x, padded.p, size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

std::string nccl_version() {
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

}  // namespace lobench::shard
