// How `lobench run --shard ...` measures a row when the step is split over several processes. The
// engine (run_sweep.hpp) knows only this interface; harness/shard/mpi_rows.cpp implements it over MPI,
// so the harness library itself needs no MPI.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/io/result_row.hpp"
#include "harness/measure.hpp"
#include "harness/sweep/rank_agreement.hpp"
#include "harness/sweep/step_point.hpp"

namespace lobench::sweep {

class ShardedRows {
 public:
  virtual ~ShardedRows() = default;
  // Whether this process writes the run file and prints (rank 0); every rank measures every row.
  virtual bool primary() const = 0;
  virtual int ranks() const = 0;
  virtual std::string shard_name() const = 0;  // "vocab", "positions", "vocab,positions"
  virtual std::string library() const = 0;     // the MPI library and version, for provenance
  // The primary's value on every rank: decisions that must be the same everywhere (memory limits).
  virtual int64_t agree(int64_t value) const = 0;
  // The largest of every rank's value, on every rank (collective).
  virtual int64_t largest(int64_t value) const = 0;
  // Measures one row on every rank (collective), `warmup` untimed steps and then as many timed ones as
  // `reps` says (the one repetition rule, harness/measure.hpp: every rank judges the same samples, the
  // slowest rank's step times, so all stop together). On the primary fills the row's measured columns
  // (times, per-rank peak max and sum, communication time and bytes, loss, accuracy when asked) and
  // returns the samples. Throws on every rank when any rank cannot run, with that rank's message.
  virtual std::vector<double> measure(const StepPoint& pt, double pad_fraction, double dup_fraction, bool accuracy,
                                      int64_t rank_mem_limit, int warmup, const RepPolicy& reps,
                                      io::ResultRow& row) = 0;
};

// Throws std::invalid_argument on every rank, naming the first option that differs, unless every rank's
// `command_line` is the same (rank_agreement.hpp). `Sharded` is a sweep::ShardedRows or a
// train::ShardedTraining.
template <typename Sharded>
void require_same_options(const Sharded& sharded, const std::string& command_line) {
  require_same_settings(sharded, command_line_settings(command_line), "--shard");
}

}  // namespace lobench::sweep
