// sweep::ShardedRows over MPI_COMM_WORLD: what `lobench run --shard KIND` runs each row with
// (measure_sharded_point per row, rank 0 recording). Initialises MPI on construction.
#pragma once

#include <memory>
#include <string>

#include "harness/sweep/sharded_rows.hpp"

namespace lobench::shard {

// `kind`: vocab | positions | vocab,positions. Throws std::invalid_argument for another name.
std::unique_ptr<sweep::ShardedRows> make_mpi_rows(const std::string& kind, int* argc, char*** argv);

}  // namespace lobench::shard
