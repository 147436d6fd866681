// shard_collective_bench: times the sharded step's collectives on this machine's MPI, for the α–β
// model (results/shard/). Under mpirun; rank 0 prints CSV rows
//   op,ranks,bytes,median_s,min_s,max_s
// for ordered_sum (the step's fixed-order sum of floats), MPI_Allreduce of the same floats (for
// comparison: what an order-free reduction costs) and agree_or_throw (the checkpoint after each step),
// over message sizes 4 B .. 64 MiB. Each point: `reps` timed calls after 2 untimed ones, ranks started
// together by a barrier, the slowest rank's time kept per call.
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "harness/shard/collectives.hpp"
#include "harness/shard/mpi_session.hpp"

namespace {

using namespace lobench::shard;

struct Stats {
  double median, min, max;
};

Stats time_calls(const std::function<void()>& fn, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps + 2; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    fn();
    double dt = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (i >= 2) t.push_back(slowest);
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const lobench::shard::MpiSession mpi(&argc, &argv);
  int rank = 0, R = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  const int64_t max_floats = argc > 2 ? std::atoll(argv[2]) : (int64_t(1) << 24);
  if (rank == 0) fmt::print("# {}\nop,ranks,bytes,median_s,min_s,max_s\n", mpi_library_version());
  auto row = [&](const char* op, int64_t bytes, Stats s) {
    if (rank == 0) fmt::print("{},{},{},{:.9g},{:.9g},{:.9g}\n", op, R, bytes, s.median, s.min, s.max);
  };
  row("agree_or_throw", 4, time_calls([&] { agree_or_throw(MPI_COMM_WORLD, "", rank); }, reps));
  for (int64_t n = 1; n <= max_floats; n *= 4) {
    std::vector<float> x(static_cast<size_t>(n), 1.0f + float(rank));
    lobench::CountingAllocator alloc;
    CommStats st;
    const int r = n >= (int64_t(1) << 20) ? std::max(5, reps / 4) : reps;
    row("ordered_sum", n * 4, time_calls([&] { ordered_sum(MPI_COMM_WORLD, x.data(), n, alloc, st); }, r));
    row("mpi_allreduce", n * 4, time_calls([&] {
          MPI_Allreduce(MPI_IN_PLACE, x.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }, r));
  }
  return 0;
}
