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

// A fingerprint of a command line (FNV-1a, 64 bits): ranks of one sharded run compare theirs at start,
// so that ranks started with different options (--reps, --seed, --V, ...) refuse together instead of
// hanging in mismatched collectives or writing rows that mix two runs.
inline int64_t options_fingerprint(const std::string& command_line) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : command_line) h = (h ^ c) * 1099511628211ull;
  return int64_t(h >> 1);  // non-negative
}

// Throws std::invalid_argument on every rank unless every rank's `command_line` is the same. `Sharded`
// is a sweep::ShardedRows or a train::ShardedTraining (agree: rank 0's value; largest: the maximum).
template <typename Sharded>
void require_same_options(const Sharded& sharded, const std::string& command_line) {
  const int64_t mine = options_fingerprint(command_line);
  const int64_t differs = sharded.largest(sharded.agree(mine) != mine ? 1 : 0);
  if (differs != 0)
    throw std::invalid_argument(
        "--shard: the ranks were started with different options (their command lines differ from rank 0's: '" +
        command_line + "' on this rank); start every rank with the same command");
}

}  // namespace lobench::sweep
