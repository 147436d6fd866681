// How the ranks of a data-parallel `train-seqrec` (`mpirun -np R lobench train-seqrec --data-parallel`)
// turn their partial gradients into the step's one gradient. The step (micro_batch_step.hpp) knows only
// this interface; harness/shard/seqrec_data_parallel.cpp implements it over MPI, so lobench_seqrec itself
// needs no MPI. Every rank holds the whole model, its AdamW state and the whole data; rank r computes
// its block of the step's micro-batches, the sums follow fixed_order_sum.hpp's tree, so every rank
// ends the step with the same bits as one process running all the micro-batches.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace lobench::seqrec {

// What one rank spent communicating over a run.
struct ExchangeTotals {
  double seconds = 0;  // wall time inside the collectives
  int64_t bytes_sent = 0, bytes_received = 0, collectives = 0;
  int64_t buffer_peak_bytes = 0;  // the largest receive buffer the sums allocated (counted)
};

// What the ranks of a run used, gathered on the primary, rank order.
struct RankReport {
  std::vector<int64_t> peak_bytes, predicted_bytes, rss_peak_bytes, bytes_sent, bytes_received;
  std::vector<double> comm_seconds;
};

class GradientExchange {
 public:
  virtual ~GradientExchange() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  bool primary() const { return rank() == 0; }
  virtual std::string library() const = 0;  // the MPI library and version, for the run file
  // Collective. x[i] ← the tree sum (fixed_order_sum.hpp) over ranks of their x[i], rank r's copy
  // counted where present[r] (the others' x is not read); every rank ends with the same bits.
  virtual void sum(float* x, int64_t n, const std::vector<char>& present) = 0;
  // Bytes sum() allocates (counted) on this rank for n floats.
  virtual int64_t sum_buffer_bytes(int64_t n) const = 0;
  // Collective. Every rank's `mine` (the same length on every rank), concatenated in rank order.
  virtual std::vector<double> gather(const std::vector<double>& mine) = 0;
  virtual std::vector<int64_t> gather(const std::vector<int64_t>& mine) = 0;
  // Collective. The largest of every rank's value (a signal seen by any rank stops all at the same step).
  virtual int64_t largest(int64_t value) = 0;
  // Collective. Rank 0's value on every rank (with largest: sweep/rank_agreement.hpp's check that the
  // ranks were started alike).
  virtual int64_t agree(int64_t value) = 0;
  // Collective checkpoint: when any rank's `error` is not empty, throws on every rank with the failing
  // ranks' messages ("rank 1: ..."), so that no rank is left waiting in a later collective.
  virtual void check(const std::string& error) = 0;
  // Whether every rank threw `e` at the same point (from check), so the sweep can record the run as
  // failed and go on.
  virtual bool shared_failure(const std::exception& e) const = 0;
  // Ends every rank now with exit status 2 after printing `message` with this rank's number: for a
  // failure only this rank knows of, while the others may be waiting for it in a collective.
  [[noreturn]] virtual void abort_all(const std::string& message) const = 0;
  virtual const ExchangeTotals& totals() const = 0;
  virtual void reset_totals() = 0;  // at the start of each run
};

}  // namespace lobench::seqrec
