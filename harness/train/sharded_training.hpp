// How `lobench train-xmc --shard labels` trains when the classifier is split over several processes.
// The sweep (xmc_sweep.hpp) knows only this interface; harness/shard/mpi_label_training.cpp implements it
// over MPI (label_shard.hpp: each rank owns a label range, the encoder is replicated), so lobench_train
// itself needs no MPI. Every rank runs the same sweep; the primary writes the run files and prints.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "datasets/sparse_dataset.hpp"
#include "harness/train/trainer.hpp"

namespace lobench::train {

// What the ranks of one sharded run used, gathered on every rank.
struct ShardedTotals {
  int64_t peak_bytes_max = 0, peak_bytes_sum = 0;  // the counting allocator's peak of the whole run, per rank
  int64_t comm_bytes_max = 0;                      // bytes one rank sent in collectives over the run (largest)
  double comm_s_max = 0;                           // seconds one rank spent in them (largest)
};

class ShardedTraining {
 public:
  virtual ~ShardedTraining() = default;
  virtual bool primary() const = 0;            // writes the run files and prints (rank 0)
  virtual int ranks() const = 0;
  virtual std::string shard_name() const = 0;  // "labels"
  virtual std::string library() const = 0;     // the MPI library and version, for provenance
  // Collective. The primary's value on every rank (decisions that must be the same everywhere).
  virtual int64_t agree(int64_t value) const = 0;
  // Collective. The largest of every rank's value.
  virtual int64_t largest(int64_t value) const = 0;
  // Collective checkpoint: when any rank's `error` is not empty, throws on every rank, with the failing
  // ranks' messages ("rank 1: ..."), so that no rank is left waiting in a later collective.
  virtual void check(const std::string& error) const = 0;
  // This rank's predicted memory: its label shard of the head, the replicated encoder, the sums' buffers.
  virtual MemoryPrediction predict(const TrainConfig& c, const DataShape& s) const = 0;
  // Collective. Trains this rank's label shard of `c` on `d` (the same on every rank); the callbacks run
  // on every rank. A failure every rank knows of (a shard too small, an option not available sharded)
  // throws on every rank (shared_failure is true for it).
  virtual RunOutcome train(const data::TrainTest& d, const TrainConfig& c, const ProgressFn& progress,
                           const EpochFn& on_epoch, ShardedTotals& totals) = 0;
  // Whether every rank threw `e` at the same point (from check or train), so the sweep can record the run
  // as failed and go on with the next one.
  virtual bool shared_failure(const std::exception& e) const = 0;
  // Ends every rank now with exit status 2 after printing `message` with this rank's number: for a
  // failure only this rank knows of, while the others may be waiting for it in a collective.
  [[noreturn]] virtual void abort_all(const std::string& message) const = 0;
};

}  // namespace lobench::train
