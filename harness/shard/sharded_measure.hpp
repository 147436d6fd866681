// One sharded point measured the way the sweep engine measures a single-process one: warm-up, timed
// repeats, exact peak memory, every rank's numbers gathered onto every rank. What `lobench run
// --shard ...` calls per point.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "variants/problem.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"
#include "harness/measure.hpp"
#include "harness/shard/layout.hpp"

namespace lobench::shard {

struct ShardOptions {
  int vocab_parts = 0;            // grid only: vocabulary parts (0: closest to square)
  Split split = Split::balanced;  // how each axis is cut
  int64_t rank_mem_limit = 0;     // bytes one rank may use (working + io); 0: no check
  bool gather = false;            // also assemble the whole outputs on rank 0 (ShardedMeasurement::whole)
};

// One rank's numbers at a point.
struct RankMeasurement {
  int rank = 0;
  Range vocab, positions;
  std::vector<double> compute_s, wait_s, comm_s;  // every timed repeat
  int64_t comm_bytes_sent = 0, comm_bytes_received = 0, collectives = 0;  // per step
  int64_t peak_working_bytes = 0;       // counting allocator, over warm-up and repeats
  int64_t predicted_working_bytes = 0;  // predicted_rank_working_bytes (equal to the peak)
  int64_t io_bytes = 0;                 // rank_io_bytes
  double rss_growth_bytes = 0;          // meters::PeakRssMeter over the timed repeats (NaN: not measurable)
};

struct ShardedMeasurement {
  ShardLayout layout;
  std::string variant;      // backend/name
  std::string mpi_library;  // mpi_library_version(), for provenance
  std::vector<RankMeasurement> ranks;  // index = rank in the communicator
  std::vector<double> step_s;          // per repeat: the slowest rank's compute + wait + comm
  double step_s_median = 0;
  double compute_s_max = 0, compute_s_min = 0;  // medians over repeats of the slowest / fastest rank
  // Each rank's median compute time over the repeats (collectives and waiting excluded), index = rank,
  // and its largest and smallest value: the rows' rank_time_max_s and rank_time_min_s.
  std::vector<double> rank_compute_s_median;
  double rank_compute_s_max = 0, rank_compute_s_min = 0;
  double comm_s_max = 0;                        // median over repeats of the slowest rank's collectives
  double wait_s_max = 0;
  double comm_share = 0;                        // comm_s_max / step_s_median
  int64_t comm_bytes_max = 0, comm_bytes_sum = 0;  // sent per step
  int64_t peak_bytes_max = 0, peak_bytes_sum = 0;  // working + io per rank
  int64_t predicted_bytes_max = 0;                 // predicted working + io, the largest rank
  double rss_growth_bytes_max = 0;                 // the largest rank's resident-set growth (NaN if any rank's is)
  double loss = 0;
  std::optional<StepOutputs> whole;  // rank 0 with ShardOptions::gather
};

// Measures `variant` (a registry name) on the synthetic problem (shape, spec) sharded by `kind` over
// comm. Collective. Each rank draws only its block of the inputs (same values as make_synthetic).
// Throws RankFailure on every rank when any rank cannot run (its message names the rank), and
// std::invalid_argument for an unknown variant or a bad layout (the same on every rank).
// Repeats follow lobench's one timing rule (collect_samples with `policy`, harness/measure.hpp) on the
// step's time (the slowest rank's, the same on every rank, so that all ranks stop together).
ShardedMeasurement measure_sharded_point(MPI_Comm comm, const Shape& shape, const SyntheticSpec& spec,
                                         const std::string& variant, const RunOptions& options, ShardKind kind,
                                         int warmup, const RepPolicy& policy, const ShardOptions& shard_options = {});
// The same with exactly `reps` repeats (RepPolicy::fixed_reps).
ShardedMeasurement measure_sharded_point(MPI_Comm comm, const Shape& shape, const SyntheticSpec& spec,
                                         const std::string& variant, const RunOptions& options, ShardKind kind,
                                         int warmup, int reps, const ShardOptions& shard_options = {});

// Whether this process is one of several MPI ranks: the size of MPI_COMM_WORLD once MPI is
// initialised, else what the launcher exported (OMPI_COMM_WORLD_SIZE or PMI_SIZE), so a
// command line can decide before initialising MPI.
bool mpi_world_size_above_one();

}  // namespace lobench::shard
