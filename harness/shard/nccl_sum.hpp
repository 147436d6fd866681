// The fixed-order sum of device vectors over the ranks of an MPI communicator, with NCCL: what the
// sharded step's collectives become when each rank's step runs on its own GPU. Compiled where CUDA and
// NCCL are found (LOBENCH_HAS_NCCL); UNTESTED beyond one rank — no multi-GPU machine has run it (NCCL
// refuses two ranks on one GPU, so this machine's single H200 can only run R = 1).
//
// The algorithm is ordered_sum's (collectives.hpp), for the same reason: ncclAllReduce's summation order
// depends on the ring/tree NCCL picks for the topology and message size. Here: pad n to R·s, an
// all-to-all (grouped ncclSend/ncclRecv, NCCL's documented all-to-all) gives rank k segment k of every
// rank's vector, a kernel sums it in rank order, ncclAllGather returns every segment to every rank.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <string>

namespace lobench::shard {

// One NCCL communicator over the ranks of an MPI communicator: rank 0 makes the unique id and
// MPI_Bcast shares it; each rank uses GPU (local rank) modulo the devices it sees.
class NcclComm {
 public:
  explicit NcclComm(MPI_Comm comm);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ncclComm_t get() const { return comm_; }
  int ranks() const { return ranks_; }
  int rank() const { return rank_; }
  int device() const { return device_; }

 private:
  ncclComm_t comm_ = nullptr;
  int ranks_ = 1, rank_ = 0, device_ = 0;
};

// Device bytes nccl_ordered_sum allocates (cudaMalloc, freed before it returns) for n floats.
int64_t nccl_ordered_sum_bytes(int64_t n, int ranks);

// x[0 .. n) (device memory) ← Σ over the ranks in rank order, on every rank, bit-identical everywhere.
// Synchronises `stream` before returning. Throws std::runtime_error naming the failing NCCL/CUDA call.
void nccl_ordered_sum(const NcclComm& comm, float* x, int64_t n, cudaStream_t stream);

std::string nccl_version();  // e.g. "NCCL 2.28.9"

}  // namespace lobench::shard
