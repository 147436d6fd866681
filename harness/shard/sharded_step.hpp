// One BCE step sharded over the ranks of an MPI communicator (issue 13; Cut BCE's sharding-aware
// collective hoisting). Each rank runs any registered CPU variant on its block of the problem, with the
// whole step's V (and Σw) in the mean's scale and the targets rebased to its rows (shard_inputs.hpp);
// then, with one set of collectives after the step (none inside it):
//   across the vocabulary shards (ranks holding the same positions): the per-position losses and dA
//     by ordered_sum, the counts by an exact integer sum;
//   across the position shards (ranks holding the same rows of E): dE by ordered_sum;
//   the scalar loss from the whole step's per-position losses and weights, in position order, on
//     every rank.
// dE stays sharded (each rank its rows); gather_whole assembles everything on rank 0 when asked.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "variants/variant.hpp"
#include "harness/shard/collectives.hpp"
#include "harness/shard/layout.hpp"
#include "harness/shard/shard_inputs.hpp"

namespace lobench::shard {

// The communicators of a layout on `world` (whose size must be layout.ranks): across_vocab joins the
// ranks holding the same positions (numbered by vocab_index), across_positions those holding the same
// rows of E (numbered by position_index). Collective; throws std::invalid_argument on a size mismatch.
class ShardComms {
 public:
  ShardComms(MPI_Comm world, const ShardLayout& layout);
  ~ShardComms();
  ShardComms(const ShardComms&) = delete;
  ShardComms& operator=(const ShardComms&) = delete;

  MPI_Comm world = MPI_COMM_NULL, across_vocab = MPI_COMM_NULL, across_positions = MPI_COMM_NULL;
  int rank = 0;  // in world
};

// Where one rank's step time went.
struct ShardTimes {
  double compute_s = 0.0;  // the variant on the shard
  double wait_s = 0.0;     // the checkpoint after it: waiting for the slowest rank (plus one latency)
  CommStats comm;          // the collectives after the checkpoint
};

struct ShardResult {
  double loss = 0.0;  // the whole step's, the same on every rank
  // per_position_loss, counts and dA for the rank's positions (summed over the vocabulary shards); dE
  // for its rows of E (summed over the position shards); local.loss is unused.
  StepOutputs local;
};

// The shape of rank `rank`'s block as a step of its own (B = 1, N = its positions, V = its rows).
// N or V may be 0 (a rank that holds nothing of that axis).
Shape shard_shape(const Shape& whole, const ShardLayout& layout, int rank);

// Exactly the peak working bytes sharded_step allocates through ctx.alloc on rank `rank`: the
// variant's on its block, or the collectives' receive buffers, whichever is larger (never live
// together). A rank with an empty block runs no variant.
int64_t predicted_rank_working_bytes(const Variant& v, const Shape& whole, const ShardLayout& layout, int rank,
                                     const RunOptions& options);
// Bytes a rank holds as inputs and outputs: its block of the inputs, its outputs, and (positions split)
// the whole step's weights and per-position losses gathered for the loss.
int64_t rank_io_bytes(const Shape& whole, const ShardLayout& layout, int rank);

// Why rank `rank` cannot run its block (a CPU variant and E in float32 are required; the variant's own
// skip reason; the predicted working + io bytes over mem_limit when mem_limit > 0), or "" when it can.
std::string rank_preflight(const Variant& v, const Shape& whole, const ShardLayout& layout, int rank,
                           const RunOptions& options, int64_t mem_limit);

// One sharded step (collective over comms.world). `out.local` is resized here. A rank whose variant
// throws (bad input, out of memory) makes every rank throw RankFailure with its message.
void sharded_step(const ShardComms& comms, const ShardLayout& layout, const ShardData& data, const Variant& variant,
                  RunContext& ctx, ShardResult& out, ShardTimes& times);

// The whole step's outputs assembled on rank 0 (MPI_Gatherv over comms.world; other ranks get an
// empty StepOutputs). For checks and for writing dE from one place; counts must fit MPI's int.
StepOutputs gather_whole(const ShardComms& comms, const ShardLayout& layout, const ShardResult& r, int64_t D);

}  // namespace lobench::shard
