#include "harness/shard/mpi_rows.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include <memory>

#include "harness/shard/collectives.hpp"
#include "harness/shard/layout.hpp"
#include "harness/shard/mpi_session.hpp"
#include "harness/shard/sharded_measure.hpp"
#include "harness/sweep/score.hpp"
#include "variants/counting_allocator.hpp"
#include "variants/reference.hpp"

namespace lobench::shard {
namespace {

class MpiRows final : public sweep::ShardedRows {
 public:
  MpiRows(ShardKind kind, int* argc, char*** argv) : kind_(kind), session_(argc, argv) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  bool primary() const override { return rank_ == 0; }
  int ranks() const override { return size_; }
  std::string shard_name() const override { return to_string(kind_); }
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

  std::vector<double> measure(const sweep::StepPoint& pt, double pad_fraction, double dup_fraction, bool accuracy,
                              int64_t rank_mem_limit, int warmup, const RepPolicy& reps, io::ResultRow& row) override {
    SyntheticSpec syn;
    syn.seed = pt.seed;
    syn.pad_fraction = pad_fraction;
    syn.dup_fraction = dup_fraction;
    ShardOptions so;
    so.rank_mem_limit = rank_mem_limit;
    so.gather = accuracy;  // the whole outputs on rank 0, judged against the float64 reference there
    const ShardedMeasurement m =
        measure_sharded_point(MPI_COMM_WORLD, pt.shape, syn, pt.variant, pt.options, kind_, warmup, reps, so);
    if (!primary()) return {};
    row.ranks = m.layout.ranks;
    row.shard.set(to_string(kind_));
    row.peak_bytes = double(m.peak_bytes_max);
    row.peak_bytes_sum = double(m.peak_bytes_sum);
    row.predicted_bytes = m.predicted_bytes_max;
    row.comm_time_s = m.comm_s_max;
    // Every rank's compute samples reach rank 0 through one MPI_Allgather in rank order (fill_ranks).
    row.rank_time_min_s = m.rank_compute_s_min;
    row.rank_time_max_s = m.rank_compute_s_max;
    row.rss_growth_bytes = m.rss_growth_bytes_max;
    row.timing_source.set("host_clock");  // each rank's steady clock; the allocator each rank's variant was given
    row.memory_meter.set("counting_allocator");
    row.comm_bytes = double(m.comm_bytes_max);
    row.loss = m.loss;
    row.reason.set(fmt::format("{}; comm {:.1f}% of the step", m.layout.describe(), 100 * m.comm_share));
    if (accuracy && m.whole) {
      const StepData data = make_synthetic(pt.shape, syn);
      const StepInputs in = data.view();
      cpu::ReferenceResult ref;
      CountingAllocator alloc;
      cpu::reference_step(in, ref, alloc, pt.options.threads);
      sweep::score_row(row, *m.whole, in, &ref, &ref);
    }
    return m.step_s;
  }

 private:
  ShardKind kind_;
  MpiSession session_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<sweep::ShardedRows> make_mpi_rows(const std::string& kind, int* argc, char*** argv) {
  return std::make_unique<MpiRows>(parse_shard_kind(kind), argc, argv);
}

}  // namespace lobench::shard
