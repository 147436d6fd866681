// train::ShardedTraining over MPI_COMM_WORLD: what `mpirun -np R lobench train-xmc --shard labels ...`
// trains each run with (train_xmc_sharded, label_shard.hpp; rank 0 writes the run files). Initialises MPI
// on construction.
#pragma once

#include <memory>
#include <string>

#include "harness/train/sharded_training.hpp"

namespace lobench::shard {

// `kind`: labels (the only way train-xmc is sharded). Throws std::invalid_argument for another name.
std::unique_ptr<train::ShardedTraining> make_mpi_label_training(const std::string& kind);

}  // namespace lobench::shard
