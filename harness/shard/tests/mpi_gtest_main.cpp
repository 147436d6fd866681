// GoogleTest under mpirun: every rank runs every test (the tests are collective); only rank 0 prints,
// and the exit status is the worst over the ranks, so a failure seen on any rank fails the job.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "harness/shard/mpi_session.hpp"

int main(int argc, char** argv) {
  int worst = 0;
  {
    const lobench::shard::MpiSession mpi(&argc, &argv);  // MPI_Finalize at the end of this scope
    ::testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    const int rc = RUN_ALL_TESTS();
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc != 0) std::fprintf(stderr, "rank %d: some tests failed\n", rank);
  }
  return worst;
}
