// A train-seqrec checkpoint (`--checkpoint FILE`, `--resume-from FILE`): everything a run needs to go on
// as if it had never stopped, bit for bit. That is the parameters, AdamW's state (its step count and
// moments) and the epoch and step reached: every random draw of a run (shuffling, dropout, the sampled
// negatives) is a counter-based stream keyed by (seed, epoch) or (seed, step), so the position in the
// run is its whole random state. Beside it, the early-stopping state and the /epochs rows so far, so
// that the continued run's file holds the whole curve. Written at the end of an evaluated epoch,
// atomically (a temporary file renamed onto FILE, harness/io/output_path.hpp): a run killed while
// writing leaves the previous checkpoint.
//
// HDF5: attributes schema, identity, epoch, steps, optimizer_precision, optimizer_steps,
// early_stop_since_best; datasets parameters (float32), adam_m, adam_v (fp32) or adam_m16, adam_v16,
// adam_c16 (uint16, bf16 codes); tables epochs and early_stop_best (one row, or none).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/seqrec/adamw.hpp"
#include "harness/seqrec/seqrec_config.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"

namespace lobench::seqrec {

struct SeqrecCheckpoint {
  std::string identity;  // checkpoint_identity() of the run that wrote it
  int64_t epoch = 0, steps = 0;
  std::vector<float> parameters;
  AdamWState optimizer;
  EpochRow best{};  // early stopping's best epoch (epoch 0: none yet) and the evaluations since it
  int64_t since_best = 0;
  std::vector<EpochRow> epochs;  // the run file's /epochs rows up to `epoch`
};

// What a continued run must share with the run that wrote the checkpoint, as text: the data (file name,
// V, interactions, train windows), the protocol, the model, the objective, the optimizer, the batch and
// micro-batch, and the seed. Not: --epochs (continuing is raising it), --eval-every, --max-eval-users,
// --exclude-history (evaluation only), --threads (results do not depend on it), --early-stop, --out.
std::string checkpoint_identity(const SeqrecConfig& c, int64_t V, int64_t interactions, int64_t train_windows);

// Writes `k` to `path` atomically (`option` names the path in errors; `inputs`: files it must not be).
void write_checkpoint(const std::string& path, const SeqrecCheckpoint& k, const std::vector<std::string>& inputs,
                      const std::string& option = "--checkpoint");

// Reads a checkpoint; throws std::runtime_error naming `option` and the path when it is missing, not a
// train-seqrec checkpoint or incomplete.
SeqrecCheckpoint read_checkpoint(const std::string& path, const std::string& option = "--resume-from");

}  // namespace lobench::seqrec
