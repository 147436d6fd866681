// The HDF5 file of one training run (`lobench train-xmc`): provenance and the configuration as root
// attributes, `/epochs` (one row per epoch, appended and flushed as each completes), `/memory` (the
// predicted breakdown and the measured peaks, as attributes), and with histograms on `/grad_hist` (the
// classifier weight gradient dW) and `/logit_grad_hist` (the logit gradient G = σ(z) − y): one row of
// counts per epoch, bins as in grad_histogram.hpp, edges in `/grad_hist_edges_log2`.
// Layout described for readers in results/elmo/README.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/io/output_path.hpp"
#include "harness/train/trainer.hpp"

namespace lobench::train {

// The start of a train-xmc run file's `schema` attribute (the version follows).
inline constexpr const char* kRunSchemaPrefix = "lobench train-xmc run";

// One /epochs row (fixed layout so h5py reads it as a NumPy structured array).
struct EpochRow {
  int64_t epoch = 0, steps = 0;
  double train_loss = 0, test_loss = 0;  // nats per row (summed BCE over the labels)
  double p_at_1 = 0, p_at_3 = 0, p_at_5 = 0;
  double ndcg_at_1 = 0, ndcg_at_3 = 0, ndcg_at_5 = 0;
  double psp_at_1 = 0, psp_at_3 = 0, psp_at_5 = 0;
  double lr_enc = 0, lr_clf = 0;
  double epoch_s = 0, eval_s = 0;
  double weight_zero_fraction = 0, weight_mean_abs = 0;
  int64_t weight_non_finite = 0;
  int64_t peak_bytes = 0;
  char utc[24] = {};
  static EpochRow from(const EpochRecord& r);
};

class TrainRunFile {
 public:
  // Writes provenance, `dataset` (a name) and the configuration into a temporary file beside `path`
  // (io::OutputFile: refused when `path` is a directory, a device, a FIFO, ...), which finish() renames
  // onto `path`: a run file replaces an earlier one of the same name only when complete. Epochs are
  // flushed to the temporary file as they finish, so a killed run keeps them there (writing_path()).
  TrainRunFile(const std::string& path, const Provenance& prov, const std::string& dataset, const TrainConfig& cfg,
               const DataShape& shape, const MemoryPrediction& predicted);
  ~TrainRunFile();
  const std::string& writing_path() const { return output_->temp_path(); }
  void append_epoch(const EpochRecord& r, const GradientHistogram* dW_hist, const GradientHistogram* G_hist = nullptr);
  // A root attribute more (where the run sits in its sweep, how it was sharded), before finish().
  void set_attr(const std::string& name, const std::string& value);
  void set_attr(const std::string& name, int64_t value);
  // status: ok | skipped | failed | interrupted (by a signal, between epochs); reason: why (or empty).
  // Closes the file and renames it onto `path`.
  void finish(const RunOutcome* outcome, const std::string& status, const std::string& reason);

  static std::vector<EpochRow> read_epochs(const std::string& path);

 private:
  std::string path_;
  std::unique_ptr<io::OutputFile> output_;
  h5::Handle file_;
  h5::Table epochs_, hist_, logit_hist_;
};

}  // namespace lobench::train
