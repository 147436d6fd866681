// The HDF5 file of one `lobench train-seqrec` run: provenance and the configuration as root
// attributes, /memory (predicted and measured bytes by part, as attributes), /steps (one row per
// training step: the time split, loss, cut metrics, memory) and /epochs (one row per epoch: losses and
// dev / test ranking metrics), both appended and flushed as they complete, so a killed run keeps them.
// status is "ok", "skipped" (with the reason, e.g. predicted out of memory), "dry_run", "failed" or
// "interrupted" (a signal stopped the run between steps; the steps done are kept). Written by the one
// run-file writer (io/run_file_writer.hpp, Publish::at_finish); this class says what the file holds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/io/job_files.hpp"
#include "harness/io/sweep_place.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/io/table_row.hpp"
#include "harness/provenance.hpp"
#include "harness/seqrec/seqrec_config.hpp"
#include "harness/seqrec/seqrec_memory.hpp"

namespace lobench::seqrec {

// The /steps and /epochs tables, declared once (io/table_row.hpp): X(type, name, default, unit, meaning).
#define LOBENCH_SEQREC_STEP_COLUMNS(X)                                                                     \
  X(int64_t, step, 0, "", "the step, from 1")                                                              \
  X(int64_t, epoch, 0, "", "its epoch, from 1")                                                            \
  X(int64_t, batch, 0, "", "windows in the step's batch")                                                  \
  X(double, loss, 0, "", "the step's loss")                                                                \
  X(double, lr, 0, "", "learning rate")                                                                    \
  X(double, forward_s, 0, "s", "backbone forward")                                                         \
  X(double, loss_s, 0, "s", "loss and its gradient")                                                       \
  X(double, backward_s, 0, "s", "backbone backward")                                                       \
  X(double, optimizer_s, 0, "s", "AdamW")                                                                  \
  X(double, comm_s, 0, "s", "data-parallel: rank 0 inside the collectives summing the ranks' gradients")  \
  X(double, step_s, 0, "s", "the whole step")                                                              \
  X(int64_t, tp, 0, "", "cut metrics at logit > 0: true positives")                                        \
  X(int64_t, fp, 0, "", "false positives")                                                                 \
  X(int64_t, fn, 0, "", "false negatives")                                                                 \
  X(int64_t, tn, 0, "", "true negatives")                                                                  \
  X(double, precision, 0, "", "tp / (tp + fp) (NaN for the sampled objective)")                           \
  X(double, recall, 0, "", "tp / (tp + fn) (NaN for the sampled objective)")                              \
  X(double, f1, 0, "", "harmonic mean of precision and recall (NaN for the sampled objective)")           \
  X(int64_t, loss_workspace_bytes, 0, "bytes", "the loss's measured peak this step")                       \
  X(int64_t, rss_bytes, 0, "bytes", "the process's resident set after the step")

#define LOBENCH_SEQREC_EPOCH_COLUMNS(X)                                                                    \
  X(int64_t, epoch, 0, "", "the epoch, from 1")                                                            \
  X(int64_t, steps, 0, "", "steps so far")                                                                 \
  X(double, train_loss, 0, "", "mean loss of the epoch's steps")                                           \
  X(double, dev_hit_at_8, 0, "", "dev Hit@8 (NaN when not evaluated)")                                     \
  X(double, dev_hr_at_10, 0, "", "dev HR@10")                                                              \
  X(double, dev_ndcg_at_10, 0, "", "dev NDCG@10")                                                          \
  X(double, dev_ndcg_at_20, 0, "", "dev NDCG@20 (S3-Rec's selection metric)")                              \
  X(double, test_hit_at_8, 0, "", "test Hit@8 (NaN when not evaluated)")                                   \
  X(double, test_hr_at_10, 0, "", "test HR@10")                                                            \
  X(double, test_ndcg_at_10, 0, "", "test NDCG@10")                                                        \
  X(double, test_ndcg_at_20, 0, "", "test NDCG@20")                                                        \
  X(double, epoch_s, 0, "s", "training time of the epoch")                                                 \
  X(double, eval_s, 0, "s", "evaluation time")

// The /memory group's byte counts by part, declared once: written as the attributes predicted_NAME (the
// model, before the run) and measured_NAME (the counting allocators, at the end); lobench.results reads
// them as a table (one row each).
#define LOBENCH_SEQREC_MEMORY_COLUMNS(X)                                                                   \
  X(int64_t, parameters_bytes, 0, "bytes", "model parameters")                                             \
  X(int64_t, gradients_bytes, 0, "bytes", "their gradients")                                               \
  X(int64_t, optimizer_state_bytes, 0, "bytes", "AdamW moments")                                           \
  X(int64_t, activations_bytes, 0, "bytes", "activations kept for the backward pass")                      \
  X(int64_t, loss_workspace_bytes, 0, "bytes", "the loss's working memory")                                \
  X(int64_t, loss_outputs_bytes, 0, "bytes", "the loss's outputs (its gradients)")                         \
  X(int64_t, gradient_sums_bytes, 0, "bytes", "the micro-batches' partial gradient sums and, data-parallel, the ranks' sum's receive buffer") \
  X(int64_t, total_bytes, 0, "bytes", "the sum of the parts")

struct MemoryRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_SEQREC_MEMORY_COLUMNS)
  static MemoryRow from(const SeqrecMemory& m);
  static const std::vector<io::Column>& columns();
};

// A data-parallel run's /ranks table, one row per rank (rank order), gathered on rank 0 at the end.
#define LOBENCH_SEQREC_RANK_COLUMNS(X)                                                                     \
  X(int64_t, rank, 0, "", "the MPI rank")                                                                  \
  X(int64_t, predicted_bytes, 0, "bytes", "the rank's predicted memory (counted parts)")                  \
  X(int64_t, measured_bytes, 0, "bytes", "the rank's measured memory (counting allocators)")              \
  X(int64_t, rss_peak_bytes, 0, "bytes", "the rank's resident-set peak over the run (VmHWM)")             \
  X(double, comm_s, 0, "s", "time inside the collectives over the run")                                    \
  X(int64_t, comm_bytes_sent, 0, "bytes", "payload sent to other ranks over the run")                      \
  X(int64_t, comm_bytes_received, 0, "bytes", "payload received from other ranks over the run")            \
  X(int64_t, collectives, 0, "", "collective calls over the run")

struct RankRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_SEQREC_RANK_COLUMNS)
  static const std::vector<io::Column>& columns();
};

struct StepRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_SEQREC_STEP_COLUMNS)
  static const std::vector<io::Column>& columns();
};

struct EpochRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_SEQREC_EPOCH_COLUMNS)
  static const std::vector<io::Column>& columns();
};

// Scalars of the data, written as attributes.
struct DataSummary {
  std::string name;
  int64_t V = 0, users = 0, too_short = 0, interactions = 0, train_windows = 0, eval_users = 0;
  double popularity_test_hit_at_8 = 0, popularity_test_hr_at_10 = 0, popularity_test_ndcg_at_10 = 0;
};

// FNV-1a, 64 bits, of n bytes, as 16 hex digits.
std::string fnv1a_hex(const void* data, int64_t n);

// Where a run sits in its sweep (sweep, sweep_index, sweep_runs, partition), as every training job's run
// file records it: what `--resume` and `lobench merge` read.
using SweepPlace = io::SweepPlace;

// The run files of `lobench train-seqrec` as a training job declares them (io/job_files.hpp): the schema,
// /steps, /epochs, /ranks and /memory's byte counts. SeqrecRunFile creates its tables from these specs;
// `lobench schema` documents them; merge and --resume know the files by the schema.
const io::JobFiles& seqrec_run_files();

// Written as every output is (harness/io/output_path.hpp): under OUT's lock (a second writer of the same
// --out is refused), into a temporary file beside OUT that finish() renames onto it. A run that ends by
// an exception (a full disk) leaves OUT as it was, and a refused or failed replacement never destroys an
// earlier run; a run killed by SIGKILL leaves its rows in OUT.partial-XXXXXX.
class SeqrecRunFile {
 public:
  // Creates the file of `path` (its folder is created; an existing file is replaced only at finish())
  // with provenance, configuration and data. `inputs`: files OUT must not be (the dataset).
  SeqrecRunFile(const std::string& path, const Provenance& prov, const SeqrecConfig& c, const DataSummary& data,
                const SeqrecMemory& predicted, const std::vector<std::string>& inputs = {});
  ~SeqrecRunFile();
  void set_place(const SweepPlace& place);
  void append_step(const StepRow& r);  // flushed as written
  void append_epoch(const EpochRow& r);
  // Data-parallel runs: the MPI library as the `mpi_library` attribute and one /ranks row per rank.
  void set_ranks(const std::string& mpi_library, const std::vector<RankRow>& ranks);
  // --early-stop: the attributes early_stop (the patience, in evaluations), best_dev_epoch (0: none
  // evaluated; the first epoch of the highest dev --select metric, the run file's `select`),
  // best_dev_hr_at_10, best_dev_ndcg_at_10, best_dev_ndcg_at_20, best_test_hit_at_8, best_test_hr_at_10,
  // best_test_ndcg_at_10, best_test_ndcg_at_20 (test at the best dev epoch) and early_stopped_at_epoch (0:
  // it trained all its epochs).
  void set_early_stopping(int64_t patience, const EpochRow& best, int64_t stopped_at_epoch);
  // The fp32 full-vocabulary loss's tile products: the attributes fp32_products and fp32_products_basis
  // (harness/meters/products_choice.hpp).
  void set_products(const std::string& products, const std::string& basis);
  // --resume-from: the attributes resumed_from (the checkpoint's path) and resumed_at_epoch (the epoch it
  // held; /epochs has its rows up to there, /steps only the steps run here).
  void set_resumed(const std::string& checkpoint, int64_t epoch);
  // parameters_hash: FNV-1a (64 bits, hex) of the final parameters' bytes ("" when none), so that runs
  // can be compared bit for bit.
  void finish(const std::string& status, const std::string& reason, const SeqrecMemory* measured, int64_t steps,
              double steps_per_s, int64_t rss_peak_bytes, const std::string& parameters_hash = "");
  // A run a signal stopped between steps: status "interrupted" with the reason, closed by
  // io::RunFileWriter::close_interrupted (no end_utc). Returns false where the file was to replace an
  // earlier OUT (--overwrite): it is discarded and the earlier run is kept as it was.
  bool close_interrupted(const std::string& reason, int64_t steps, double steps_per_s, int64_t rss_peak_bytes);

  static std::vector<StepRow> read_steps(const std::string& path);
  static std::vector<EpochRow> read_epochs(const std::string& path);
  static std::vector<RankRow> read_ranks(const std::string& path);  // empty for a one-process run

 private:
  io::RunFileWriter writer_;  // the lock and the temporary file
};

}  // namespace lobench::seqrec
