// A train-seqrec checkpoint (`--checkpoint FILE`, `--resume-from FILE`): everything a run needs to go on
// as if it had never stopped, bit for bit. That is the parameters, AdamW's state (its step count and
// moments) and the epoch and step reached: every random draw of a run (shuffling, dropout, the sampled
// negatives) is a counter-based stream keyed by (seed, epoch) or (seed, step), so the position in the
// run is its whole random state. Beside it, the early-stopping state and the /epochs rows so far, so
// that the continued run's file holds the whole curve. Written at the end of an evaluated epoch,
// atomically by the one writer (io::RunFileWriter::write_whole: a temporary file renamed onto FILE): a run
// killed while writing, or a full disk, leaves the previous checkpoint.
//
// Its identity is every setting that changes the bits trained, the data by the SHA-256 of its content
// (not its file name and counts: another file of the same name and size is other data), so that a run
// continues only a checkpoint of its own training.
//
// HDF5: attributes schema (version 2; version 1's identity named the data by file name and counts),
// identity, epoch, steps, optimizer_precision, optimizer_steps, early_stop_since_best; datasets
// parameters (float32), adam_m, adam_v (fp32) or adam_m16, adam_v16, adam_c16 (uint16, bf16 codes);
// tables epochs and early_stop_best (one row, or none).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/seqrec/adamw.hpp"
#include "harness/seqrec/seqrec_config.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/sweep/rank_agreement.hpp"

namespace lobench::seqrec {

struct SeqrecCheckpoint {
  std::string identity;  // checkpoint_identity() of the run that wrote it
  int64_t epoch = 0, steps = 0;
  int64_t parameter_count = 0;  // the parameters dataset's length (read whole or not)
  std::vector<float> parameters;
  AdamWState optimizer;
  EpochRow best{};  // early stopping's best epoch (epoch 0: none yet) and the evaluations since it
  int64_t since_best = 0;
  std::vector<EpochRow> epochs;  // the run file's /epochs rows up to `epoch`
};

// What a continued run must share with the run that wrote the checkpoint, each setting that changes
// the bits trained: the data (data-sha256: SeqrecData::content_sha256), the protocol, the model, the
// objective (the sampled negatives' --negatives too), the optimizer (--adam-beta2 too), the block layout
// (--block), the batch and micro-batch, and the seed; and --select, which trains nothing but decided the
// early-stopping state the checkpoint holds (its best epoch). Not: --epochs and --steps (continuing is
// raising them), --eval-every, --max-eval-users, --exclude-history (evaluation only), --threads and the
// data-parallel ranks (results do not depend on them), --early-stop, --out.
sweep::Settings training_settings(const SeqrecConfig& c, const std::string& data_sha256);

// The settings as the checkpoint's `identity` attribute: "NAME=VALUE; NAME=VALUE; ...".
std::string checkpoint_identity(const SeqrecConfig& c, const std::string& data_sha256);

// What differs between a checkpoint's identity and this run's, one clause per setting ("--lr: 0.01 in the
// checkpoint, 0.02 here; ..."); empty when they are the same.
std::string identity_differences(const std::string& checkpoint, const std::string& here);

// Writes `k` to `path` atomically (`option` names the path in errors; `inputs`: files it must not be).
void write_checkpoint(const std::string& path, const SeqrecCheckpoint& k, const std::vector<std::string>& inputs,
                      const std::string& option = "--checkpoint");

// Reads a checkpoint; throws std::runtime_error naming `option` and the path when it is missing, not a
// train-seqrec checkpoint, of an older schema, or incomplete. `with_state` false: everything but the
// parameters and the optimizer's moments, whose datasets are only checked (type, and the bytes their
// headers claim stored in the file: a truncated file is refused), what a run checks at start.
SeqrecCheckpoint read_checkpoint(const std::string& path, const std::string& option = "--resume-from",
                                 bool with_state = true);

}  // namespace lobench::seqrec
