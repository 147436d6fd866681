// Training an XMC model ELMO's way on a sparse multi-label dataset: sparse-feature encoder (encoder.hpp)
// + low-precision classifier head (classifier.hpp), one HDF5 run file per run with a row per epoch
// (loss, P@k, nDCG@k, PSP@k on the test split), exact peak memory beside its analytic prediction, and
// optional histograms of the classifier's weight gradients (against the fp8 ranges).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/train/classifier.hpp"
#include "variants/counting_allocator.hpp"
#include "datasets/sparse_dataset.hpp"
#include "harness/train/encoder.hpp"
#include "harness/train/grad_histogram.hpp"
#include "harness/provenance.hpp"

namespace lobench::train {

struct TrainConfig {
  // encoder
  int64_t D = 512;
  Activation activation = Activation::relu;
  float dropout = 0.5f;
  EncoderPrecision encoder_precision = EncoderPrecision::fp32;
  float enc_lr = 1e-3f;
  float enc_wd = 0.0f;
  // classifier
  std::string clf_format = "fp32";  // any precision_sim::parse_format name
  bool clf_subnormals = true;        // false: the same format with subnormals flushed to zero
  std::string clf_rounding = "rne";  // parse_update_rounding
  int sr_bits = 0;
  // The format the fused update's logit gradient G = σ(z) − y is rounded to (with clf_rounding) before
  // dH and dW use it, as ELMO's fp8 gradient; "fp32" leaves it unchanged.
  std::string grad_format = "fp32";
  float clf_lr = 0.05f;
  double clf_init_std = 0.02;  // ELMO's bf16 head: N(0, 0.02)
  UpdateMode mode = UpdateMode::fused;
  int64_t chunks = 1;
  int64_t tile = 0;
  // The precision of the head's products' operands (ClassifierConfig::operand): fp32 | bf16 | e4m3 | e5m2. Not a storage
  // option: clf_format is how the weights are kept and updated, encoder_precision the encoder's storage.
  std::string operand = "fp32";
  // schedule
  int epochs = 10;
  int64_t batch = 128;
  int64_t max_steps = 0;  // stop after this many steps in all (0: no limit)
  std::string schedule = "constant";  // constant | cosine (linear warmup, cosine to 0 over the run: ELMO)
  int64_t warmup_steps = 0;
  // evaluation and records
  int eval_every = 1;    // epochs between test evaluations (0: only after the last epoch; < 0: never)
  int64_t eval_batch = 0;  // rows per evaluation batch (0: batch)
  int hist_every = 0;    // record weight-gradient histograms every this many steps (0: off)
  double propensity_a = 0.55, propensity_b = 1.5;
  // reproducibility and resources
  uint64_t seed = 0;
  int threads = 1;

  // The classifier format with clf_subnormals applied (throws std::invalid_argument for bad names).
  precision::Format classifier_format() const;
  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
  std::string describe() const;  // one line, with units
};

// Shapes the trainer sizes its buffers from.
struct DataShape {
  int64_t num_features = 0, num_labels = 0;
  int64_t train_rows = 0, test_rows = 0;
  int64_t max_features_per_row = 0;  // over train and test
  int64_t max_labels_per_row = 0;    // over train and test
  double mean_features_per_row = 0;
  static DataShape of(const data::TrainTest& d);
};

struct MemoryPrediction {
  MemoryBreakdown train;  // everything live during training steps
  int64_t eval_extra = 0;  // added while the test split is scored (label-sharded: less the dH sum's buffer, free then)
  int64_t peak(bool evaluates) const { return train.total() + (evaluates ? eval_extra : 0); }
};

// Training one label shard of a head split over several processes (harness/shard/label_shard.hpp
// makes one over MPI): this process's classifier holds labels [begin, end) of the whole head, the
// encoder is replicated, and the hooks combine what the shards computed, the same on every shard (so
// that the replicated encoders stay identical).
struct LabelShard {
  int64_t begin = 0, end = 0;
  // x[0 .. n) ← its sum over the shards, in place (the batch's dH), allocating through alloc.
  std::function<void(float* x, int64_t n, CountingAllocator& alloc)> sum_floats;
  std::function<double(double)> sum_double;    // a scalar summed over the shards
  std::function<int64_t(int64_t)> sum_int;     // an exact count summed over the shards
  // ids and scores [rows, k] of this shard's best k (whole-head ids, best first) ← the best k of all.
  std::function<void(int32_t* ids, float* scores, int64_t rows, int k)> merge_topk;
  std::function<int64_t(int64_t n)> sum_floats_bytes;  // what sum_floats(x, n) allocates (for predict_memory)
  int64_t size() const { return end - begin; }
};

// With a shard, the classifier is the shard's labels only.
ClassifierConfig classifier_config(const TrainConfig& c, const DataShape& s, const LabelShard* shard = nullptr);
EncoderConfig encoder_config(const TrainConfig& c, const DataShape& s);
MemoryPrediction predict_memory(const TrainConfig& c, const DataShape& s, const LabelShard* shard = nullptr);

struct EpochRecord {
  int64_t epoch = 0, steps = 0;
  double train_loss = 0;  // mean over the epoch's rows of the summed BCE (nats per row)
  double test_loss = 0;   // nats per test row (NaN when not evaluated)
  double p[3] = {}, ndcg[3] = {}, psp[3] = {};  // @1, @3, @5 as fractions (NaN when not evaluated)
  double lr_enc = 0, lr_clf = 0;  // at the epoch's last step
  double epoch_s = 0, eval_s = 0;
  double weight_zero_fraction = 0, weight_mean_abs = 0;
  int64_t weight_non_finite = 0;
  int64_t peak_bytes = 0;  // measured so far in the run
};

struct RunOutcome {
  std::vector<EpochRecord> epochs;
  MemoryPrediction predicted;
  int64_t measured_train_peak = 0;  // before the first evaluation
  int64_t measured_peak = 0;        // whole run
  // The independent meter beside the count: the process's peak resident set over the run minus its
  // resident set before the run's first buffer (meters::PeakRssMeter; NaN where the kernel's counters
  // cannot be reset or read).
  double measured_rss_growth = 0;
  GradientHistogram grad_hist;        // weight gradients dW of all recorded steps (empty when off)
  GradientHistogram logit_grad_hist;  // logit gradients G = σ(z) − y of the same steps
  double mean_step_s = 0;
  int64_t steps = 0;
};

// Called while training: (epoch, epochs, step in epoch, steps in epoch, running loss per row, seconds).
using ProgressFn = std::function<void(int, int, int64_t, int64_t, double, double)>;
// Called after each epoch (and its evaluation), with the epoch's histograms of the weight gradient dW
// and of the logit gradient G when --hist-every is on (else null).
using EpochFn = std::function<void(const EpochRecord&, const GradientHistogram* dW_hist, const GradientHistogram* G_hist)>;

// Trains and evaluates. Throws std::invalid_argument for a bad configuration or a dataset whose shapes
// do not match (test features/labels beyond train's).
// With `shard`, trains that label shard of the head (see LabelShard); every shard must call it with
// the same data and configuration. Gradient histograms are not available then.
RunOutcome train_xmc(const data::TrainTest& data, const TrainConfig& cfg, const ProgressFn& progress = nullptr,
                     const EpochFn& on_epoch = nullptr, const LabelShard* shard = nullptr);

}  // namespace lobench::train
