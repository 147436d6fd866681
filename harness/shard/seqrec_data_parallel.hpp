// seqrec::GradientExchange over MPI_COMM_WORLD: what `mpirun -np R lobench train-seqrec --data-parallel`
// trains with (harness/seqrec/micro_batch_step.hpp): the ranks' partial gradients summed by the fixed
// tree of harness/seqrec/fixed_order_sum.hpp (reduce-scatter by MPI_Alltoallv, each segment's R copies
// summed by the tree on the rank that owns it, MPI_Allgatherv back: collectives.hpp's combined_sum),
// never MPI_Allreduce, whose order of additions is the library's choice. Initialises MPI on construction.
#pragma once

#include <memory>

#include "harness/seqrec/gradient_exchange.hpp"

namespace lobench::shard {

std::unique_ptr<seqrec::GradientExchange> make_mpi_gradient_exchange();

}  // namespace lobench::shard
