#include "harness/shard/mpi_label_training.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "harness/shard/collectives.hpp"
#include "harness/shard/label_shard.hpp"
#include "harness/shard/mpi_session.hpp"

namespace lobench::shard {
namespace {

class MpiLabelTraining final : public train::ShardedTraining {
 public:
  MpiLabelTraining() : session_(nullptr, nullptr) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  bool primary() const override { return rank_ == 0; }
  int ranks() const override { return size_; }
  std::string shard_name() const override { return "labels"; }
  std::string library() const override { return mpi_library_version(); }
  int64_t agree(int64_t value) const override {
    MPI_Bcast(&value, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    return value;
  }
  int64_t largest(int64_t value) const override {
    int64_t max = 0;
    MPI_Allreduce(&value, &max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return max;
  }
  void check(const std::string& error) const override { agree_or_throw(MPI_COMM_WORLD, error, rank_); }

  train::MemoryPrediction predict(const train::TrainConfig& c, const train::DataShape& s) const override {
    const train::LabelShard shard = make_label_shard(MPI_COMM_WORLD, s.num_labels);
    return train::predict_memory(c, s, &shard);
  }

  train::RunOutcome train(const data::TrainTest& d, const train::TrainConfig& c, const train::ProgressFn& progress,
                          const train::EpochFn& on_epoch, train::ShardedTotals& totals) override {
    CommStats stats;
    train::RunOutcome o = train_xmc_sharded(MPI_COMM_WORLD, d, c, &stats, progress, on_epoch);
    // Every rank reaches this point (a failure of one rank alone ends the job in abort_all), so the
    // gathering below is collective.
    int64_t peak = o.measured_peak, sum = 0;
    MPI_Allreduce(&peak, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);  // integers: exact in any order
    totals.peak_bytes_max = largest(peak);
    totals.peak_bytes_sum = sum;
    totals.comm_bytes_max = largest(stats.bytes_sent);
    MPI_Allreduce(&stats.seconds, &totals.comm_s_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return o;
  }

  bool shared_failure(const std::exception& e) const override { return dynamic_cast<const RankFailure*>(&e) != nullptr; }

  [[noreturn]] void abort_all(const std::string& message) const override {
    std::fprintf(stderr, "lobench: error: rank %d: %s (ending every rank)\n", rank_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::abort();  // MPI_Abort does not return
  }

 private:
  MpiSession session_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<train::ShardedTraining> make_mpi_label_training(const std::string& kind) {
  if (kind != "labels")
    throw std::invalid_argument(fmt::format("--shard: train-xmc shards the classifier by 'labels', not '{}'", kind));
  return std::make_unique<MpiLabelTraining>();
}

}  // namespace lobench::shard
