// One SASRec training run, from a SeqrecConfig to its HDF5 run file: load or generate the data, split
// it, predict the memory (and record the run as skipped when it exceeds the limit or the variant
// declines the shape), train with the time split per step, evaluate dev and test by epoch, and write
// the measured memory beside the predicted. The sweep engine calls run_seqrec once per point.
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>

#include "datasets/seqrec.hpp"
#include "datasets/seqrec_split.hpp"
#include "harness/provenance.hpp"
#include "harness/seqrec/gradient_exchange.hpp"
#include "harness/seqrec/seqrec_config.hpp"
#include "harness/seqrec/seqrec_memory.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"

namespace lobench::seqrec {

struct SeqrecData {
  std::string name;
  data::SequenceDataset sequences;
  data::SeqSplit split;
  int64_t V = 0;  // items + 1 (padding)
  // SHA-256 of the sequences as read (user ids, their items, the largest item id): the data's identity
  // in a checkpoint and among data-parallel ranks, whatever the file is called.
  std::string content_sha256;
};

// A run refused before it wrote anything, for what it was given (a --resume-from checkpoint of another
// training, a --checkpoint it would never write, data-parallel ranks on other data): the command ends
// with exit status 2 and the message, instead of recording a failed run and going on.
struct RunRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The SHA-256 of a data set's sequences (SeqrecData::content_sha256).
std::string content_sha256(const data::SequenceDataset& s);

// Reads the file or generates "synthetic:yambda" (std::invalid_argument / ParseError / runtime_error
// naming the input on failure).
SeqrecData load_seqrec_data(const SeqrecConfig& c);

struct SeqrecOutcome {
  std::string status;  // ok | skipped | dry_run | failed | interrupted
  std::string reason;
  bool earlier_file_kept = false;  // interrupted, --overwrite: the run file was discarded, OUT kept as it was
  SeqrecMemory predicted, measured;
  int64_t steps = 0;             // the run's steps, a checkpoint's included
  int64_t steps_this_process = 0;  // those this process ran (--resume-from: after the checkpoint)
  double steps_per_s = 0;  // over this process's steps after its first (the means below likewise)
  double mean_forward_s = 0, mean_loss_s = 0, mean_backward_s = 0, mean_optimizer_s = 0;
  double mean_comm_s = 0;  // data-parallel: rank 0's time in the gradient sums
  double test_hit_at_8 = 0, test_hr_at_10 = 0, test_ndcg_at_10 = 0;  // the last evaluation (NaN if none)
  int64_t rss_peak_bytes = 0;
};

// Where a run sits in a sweep, for its progress line: the label ("[2/6] yambda_fused_s0") and the steps
// of the points after it, so that the line gives the ETA of the sweep beside the run's.
struct ProgressContext {
  std::string label;
  int64_t later_steps = 0;
  const SweepPlace* place = nullptr;  // recorded in the run file when set (seqrec_run_file.hpp)
};

// Runs c (validated first) on already loaded data; writes c.out when not empty. `log` gets one line per
// epoch; `progress` the progress line (when c.progress).
// `exchange` (c.ranks of them): data-parallel, this process one rank of it (gradient_exchange.hpp):
// every rank trains, rank 0 alone evaluates, prints and writes the run file (with the /ranks table).
SeqrecOutcome run_seqrec(const SeqrecConfig& c, const SeqrecData& data, const Provenance& prov, std::ostream& log,
                         std::ostream& progress, const ProgressContext& context = {},
                         GradientExchange* exchange = nullptr);
// Loads the data, then the above.
SeqrecOutcome run_seqrec(const SeqrecConfig& c, const Provenance& prov, std::ostream& log, std::ostream& progress);

// The process's resident set now and its peak (VmRSS, VmHWM of /proc/self/status; 0 where unknown).
int64_t process_rss_bytes();
int64_t process_rss_peak_bytes();

}  // namespace lobench::seqrec
