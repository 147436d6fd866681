// shard_label_memory: ELMO's memory-versus-labels experiment with the classifier sharded by labels,
// measured per rank (issue 13). Under mpirun; for each label count V (a small synthetic XMC set with
// labels appended as ELMO grows V, positive in no row) it trains 2 steps sharded over the ranks and
// rank 0 prints CSV rows
//   labels,ranks,rank,format,D,measured_train_peak,predicted_train,weights_bytes
// one per rank: the counting allocator's peak beside the exact prediction.
//   mpirun -np 2 build/harness/shard/shard_label_memory 100000,1000000 float8_e4m3fn 256
#include <fmt/format.h>
#include <mpi.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/synthetic_xmc.hpp"
#include "harness/shard/label_shard.hpp"
#include "harness/shard/mpi_session.hpp"

int main(int argc, char** argv) {
  const lobench::shard::MpiSession mpi(&argc, &argv);
  int rank = 0, R = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  std::vector<int64_t> labels;
  std::stringstream list(argc > 1 ? argv[1] : "100000");
  for (std::string item; std::getline(list, item, ',');) labels.push_back(std::atoll(item.c_str()));
  const std::string format = argc > 2 ? argv[2] : "float8_e4m3fn";
  const int64_t D = argc > 3 ? std::atoll(argv[3]) : 256;
  if (rank == 0) std::printf("labels,ranks,rank,format,D,measured_train_peak,predicted_train,weights_bytes\n");
  for (const int64_t V : labels) {
    lobench::data::SyntheticXmcConfig c;
    c.rows = 512;
    c.num_features = 5000;
    c.num_labels = 200;
    c.seed = 1;
    lobench::data::TrainTest d = lobench::data::generate_synthetic_xmc_split(c, 128);
    lobench::data::append_random_labels(d.train, V - c.num_labels);
    lobench::data::append_random_labels(d.test, V - c.num_labels);
    lobench::train::TrainConfig cfg;
    cfg.D = D;
    cfg.batch = 128;
    cfg.max_steps = 2;
    cfg.eval_every = -1;  // training memory only
    cfg.clf_format = format;
    cfg.clf_rounding = "sr";
    cfg.mode = lobench::train::UpdateMode::fused;
    cfg.chunks = 8;
    cfg.threads = 1;
    const lobench::train::RunOutcome o = lobench::shard::train_xmc_sharded(MPI_COMM_WORLD, d, cfg);
    const int64_t mine[3] = {o.measured_train_peak, o.predicted.train.total(), o.predicted.train.weights};
    std::vector<int64_t> all(size_t(3 * R));
    MPI_Gather(mine, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
      for (int r = 0; r < R; ++r)
        std::printf("%lld,%d,%d,%s,%lld,%lld,%lld,%lld\n", (long long)V, R, r, format.c_str(), (long long)D,
                    (long long)all[size_t(3 * r)], (long long)all[size_t(3 * r + 1)], (long long)all[size_t(3 * r + 2)]);
    std::fflush(stdout);
  }
  return 0;
}
