// The collectives a sharded step uses, all plain MPI (no transport of our own), with a FIXED
// summation order so that a result is bit-identical run to run, on every rank, and independent of how
// the ranks are scheduled or which algorithm the MPI library picks.
//
// Why not MPI_Allreduce: the MPI standard only *advises* that a reduction give the same result
// whatever the process placement; the order in which Open MPI's tuned component adds the ranks'
// contributions depends on its algorithm choice (by message size and communicator size, and between
// versions), and floating-point addition is not associative. ordered_sum instead sums every element as
// ((x_0 + x_1) + x_2) + ... in rank order: a reduce-scatter written as MPI_Alltoallv (rank k receives
// segment k of every rank's vector and sums it in rank order), then MPI_Allgatherv of the summed
// segments. That moves 2·(R−1)/R·n elements per rank, the same as a bandwidth-optimal ring allreduce,
// at 2 collective latencies. Short vectors (at most kGatherSumBytes), where latency dominates, go by
// MPI_Gather to rank 0, the same rank-order sum there, and MPI_Bcast: O(log R) latencies instead of
// O(R) for the all-to-all; the sum is the same expression either way, so the bits do not depend on
// the path. Integer sums are exact whatever the order and use MPI_Allreduce.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "variants/counting_allocator.hpp"

namespace lobench::shard {

// What one rank spent communicating.
struct CommStats {
  double seconds = 0.0;     // wall time inside the collectives (MPI_Wtime)
  int64_t bytes_sent = 0;   // payload sent to other ranks (a rank's own share is not counted)
  int64_t bytes_received = 0;
  int64_t collectives = 0;  // calls made
  void add(const CommStats& o) {
    seconds += o.seconds;
    bytes_sent += o.bytes_sent;
    bytes_received += o.bytes_received;
    collectives += o.collectives;
  }
};

// Elements per piece of ordered_sum: vectors longer than this go piece by piece, so the receive buffer
// stays at most this many elements and every MPI count fits an int.
constexpr int64_t kOrderedSumPiece = int64_t(1) << 24;

// Vectors of at most this many bytes take the gather-to-rank-0 path: it wins while n·β < 2α (the
// all-to-all's extra latencies cost more than rank 0 receiving every copy), n ≈ 2.3 KB with this machine's
// fitted α, β (results/shard.md) and ≈ 50 KB on a 100 Gb/s network; 2 KiB is safe for both.
constexpr int64_t kGatherSumBytes = 2048;

// Bytes of the receive buffer ordered_sum allocates through `alloc` on rank `rank` of a communicator of
// `ranks`, for n elements of `elem` bytes: every rank's copy on rank 0 (gather path, none elsewhere),
// or its segment of one piece from every rank (all-to-all path).
int64_t ordered_sum_buffer_bytes(int64_t n, int ranks, int64_t elem, int rank);

// How the R copies of a segment become its sum: copies holds rank j's `count` elements at
// copies[j·count ...) and may be overwritten; the sum goes to out. ordered_sum's is rank order.
using SegmentSum = std::function<void(float* copies, int64_t count, int ranks, float* out)>;
// x[i] ← segment_sum over the ranks' x[i], on every rank of comm, by the same path as ordered_sum (the
// short-vector gather to rank 0 or the all-to-all reduce-scatter + allgather).
void combined_sum(MPI_Comm comm, float* x, int64_t n, const SegmentSum& segment_sum, CountingAllocator& alloc,
                  CommStats& stats);

// x[i] ← Σ_ranks x[i] in rank order, on every rank of comm. float or double.
void ordered_sum(MPI_Comm comm, float* x, int64_t n, CountingAllocator& alloc, CommStats& stats);
void ordered_sum(MPI_Comm comm, double* x, int64_t n, CountingAllocator& alloc, CommStats& stats);
// Exact integer sum (order-free), MPI_Allreduce.
void exact_sum(MPI_Comm comm, int64_t* x, int64_t n, CommStats& stats);

// Concatenates every rank's `mine` (count[r] elements each, in rank order) into `all` on every rank.
void all_gather(MPI_Comm comm, const double* mine, int64_t count, std::vector<double>& all, CommStats& stats);
void all_gather(MPI_Comm comm, const float* mine, int64_t count, std::vector<float>& all, CommStats& stats);

// Thrown on EVERY rank when any rank reported a failure to agree_or_throw: the failing ranks' messages,
// one line each ("rank 2: ...").
struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A collective checkpoint: every rank passes its error ("" for none); if any rank has one, every rank
// throws RankFailure with all of them, so no rank is left waiting in a later collective (no hang).
// `world_rank` names the rank in the messages.
void agree_or_throw(MPI_Comm comm, const std::string& error, int world_rank);

// Open MPI's (or any MPI's) MPI_Get_library_version, first line, and the standard version.
std::string mpi_library_version();

}  // namespace lobench::shard
