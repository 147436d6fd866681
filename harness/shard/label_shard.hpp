// train-xmc with the classifier sharded by labels over MPI ranks (issue 13): rank r owns labels
// split_range(labels, R, r) and runs the fused (or separate) SR update on them; the encoder is
// replicated, and its input gradient dH (the only thing the encoder needs from the head) is summed over
// the ranks by ordered_sum, so every rank's dH, hence its encoder, is the same bit for bit. The label
// shards' losses are summed in rank order, their top-k lists merged into the whole head's top-k.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "harness/shard/collectives.hpp"
#include "harness/train/trainer.hpp"

namespace lobench::shard {

// The hooks of train::LabelShard over `comm` for a head of `labels` labels. `stats` (optional,
// outliving the shard) accumulates the communication.
train::LabelShard make_label_shard(MPI_Comm comm, int64_t labels, CommStats* stats = nullptr);

// train_xmc on this rank's label shard: every rank of comm calls it with the same data and config.
// A rank whose shard cannot train (fewer than 5 labels, bad config) stops every rank with RankFailure.
// The callbacks are train_xmc's, called on every rank.
train::RunOutcome train_xmc_sharded(MPI_Comm comm, const data::TrainTest& data, const train::TrainConfig& cfg,
                                    CommStats* stats = nullptr, const train::ProgressFn& progress = nullptr,
                                    const train::EpochFn& on_epoch = nullptr);

}  // namespace lobench::shard
