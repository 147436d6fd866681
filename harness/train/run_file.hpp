// The HDF5 file of one training run (`lobench train-xmc`): provenance and the configuration as root
// attributes, `/epochs` (one row per epoch, appended and flushed as each completes), `/memory` (the
// predicted breakdown and the measured peaks, as attributes), and with histograms on `/grad_hist` (the
// classifier weight gradient dW) and `/logit_grad_hist` (the logit gradient G = σ(z) − y): one row of
// counts per epoch, bins as in grad_histogram.hpp, edges in `/grad_hist_edges_log2`.
// Written by the one run-file writer (io/run_file_writer.hpp, Publish::at_finish); this class says what
// the file holds. Layout described for readers in results/elmo/README.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/io/job_files.hpp"
#include "harness/io/sweep_place.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/io/table_row.hpp"
#include "harness/train/trainer.hpp"

namespace lobench::train {

// The /epochs table, declared once (io/table_row.hpp): X(type, name, default, unit, meaning).
#define LOBENCH_XMC_EPOCH_COLUMNS(X)                                                                     \
  X(int64_t, epoch, 0, "", "the epoch, from 1")                                                          \
  X(int64_t, steps, 0, "", "optimizer steps so far")                                                     \
  X(double, train_loss, 0, "nats/row", "mean training loss of the epoch (summed BCE over the labels)")   \
  X(double, test_loss, 0, "nats/row", "test loss (NaN when not evaluated)")                              \
  X(double, p_at_1, 0, "", "test precision@1")                                                           \
  X(double, p_at_3, 0, "", "test precision@3")                                                           \
  X(double, p_at_5, 0, "", "test precision@5")                                                           \
  X(double, ndcg_at_1, 0, "", "test nDCG@1")                                                             \
  X(double, ndcg_at_3, 0, "", "test nDCG@3")                                                             \
  X(double, ndcg_at_5, 0, "", "test nDCG@5")                                                             \
  X(double, psp_at_1, 0, "", "test propensity-scored precision@1")                                       \
  X(double, psp_at_3, 0, "", "test propensity-scored precision@3")                                       \
  X(double, psp_at_5, 0, "", "test propensity-scored precision@5")                                       \
  X(double, lr_enc, 0, "", "encoder learning rate at the epoch's end")                                   \
  X(double, lr_clf, 0, "", "classifier learning rate at the epoch's end")                                \
  X(double, epoch_s, 0, "s", "training time of the epoch")                                               \
  X(double, eval_s, 0, "s", "evaluation time")                                                           \
  X(double, weight_zero_fraction, 0, "", "classifier weights that are exactly 0")                         \
  X(double, weight_mean_abs, 0, "", "mean absolute classifier weight")                                     \
  X(int64_t, weight_non_finite, 0, "", "classifier weights that are NaN or infinite")                    \
  X(int64_t, peak_bytes, 0, "bytes", "peak counted bytes so far")                                        \
  X(io::FixedText<24>, utc, {}, "", "when the epoch ended (ISO 8601 UTC)")

struct EpochRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_XMC_EPOCH_COLUMNS)
  static EpochRow from(const EpochRecord& r);
  static const std::vector<io::Column>& columns();
};

// The /memory group's byte counts by part, declared once: written as the attributes predicted_NAME (the
// model, before the run); lobench.results reads them as a table (predicted and measured rows).
#define LOBENCH_XMC_MEMORY_COLUMNS(X)                                                                    \
  X(int64_t, weights_bytes, 0, "bytes", "classifier weights")                                            \
  X(int64_t, weight_gradient_bytes, 0, "bytes", "classifier weight gradient (a chunk or the threads' tiles)") \
  X(int64_t, optimizer_state_bytes, 0, "bytes", "classifier optimizer state")                            \
  X(int64_t, logits_bytes, 0, "bytes", "the threads' logit / logit-gradient tiles")                       \
  X(int64_t, encoder_bytes, 0, "bytes", "encoder parameters, gradient, Adam state, activations")         \
  X(int64_t, workspace_bytes, 0, "bytes", "decode tiles, dH partials, label pairs, eval buffers")        \
  X(int64_t, total_bytes, 0, "bytes", "the sum of the parts")

struct MemoryRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_XMC_MEMORY_COLUMNS)
  static MemoryRow from(const MemoryBreakdown& m);
  static const std::vector<io::Column>& columns();
};

// The run files of `lobench train-xmc` as a training job declares them (io/job_files.hpp): the schema,
// /epochs, the histogram tables and /memory's predicted byte counts. TrainRunFile creates its tables from
// these specs; `lobench schema` documents them; merge and --resume know the files by the schema.
const io::JobFiles& xmc_run_files();

class TrainRunFile {
 public:
  // Writes provenance, `dataset` (a name) and the configuration into a temporary file beside `path`
  // (io::OutputFile: refused when `path` is a directory, a device, a FIFO, ...), which finish() renames
  // onto `path`: a run file replaces an earlier one of the same name only when complete. Epochs are
  // flushed to the temporary file as they finish, so a killed run keeps them there (writing_path()).
  TrainRunFile(const std::string& path, const Provenance& prov, const std::string& dataset, const TrainConfig& cfg,
               const DataShape& shape, const MemoryPrediction& predicted);
  ~TrainRunFile();
  const std::string& writing_path() const { return writer_.writing_path(); }
  void append_epoch(const EpochRecord& r, const GradientHistogram* dW_hist, const GradientHistogram* G_hist = nullptr);
  // Where the run sits in its sweep (io/sweep_place.hpp).
  void set_place(const io::SweepPlace& place) { io::record_place(writer_, place); }
  // A root attribute more (how it was sharded), before finish().
  void set_attr(const std::string& name, const std::string& value);
  void set_attr(const std::string& name, int64_t value);
  // status: ok | skipped | failed | interrupted (by a signal, between epochs); reason: why (or empty).
  // Closes the file and renames it onto `path`.
  void finish(const RunOutcome* outcome, const std::string& status, const std::string& reason);

  static std::vector<EpochRow> read_epochs(const std::string& path);

 private:
  io::RunFileWriter writer_;
  bool histograms_ = false;
};

}  // namespace lobench::train
