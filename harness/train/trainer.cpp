#include "harness/train/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>

#include "datasets/propensity.hpp"
#include "harness/meters/peak_rss.hpp"
#include "datasets/ranking_metrics.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"

namespace lobench::train {

namespace lp = lobench::precision;

namespace {

constexpr int kTopK = 5;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Batch buffers sized once, from the allocator: features and labels of up to B rows.
struct BatchBuffers {
  BatchBuffers(int64_t B, int64_t max_feat, int64_t max_lab, CountingAllocator& a)
      : feat_off(a, B + 1), feat_idx(a, std::max<int64_t>(1, B * max_feat)),
        feat_val(a, std::max<int64_t>(1, B * max_feat)), lab_off(a, B + 1),
        lab_ids(a, std::max<int64_t>(1, B * max_lab)) {}
  static int64_t bytes(int64_t B, int64_t max_feat, int64_t max_lab) {
    return (B + 1) * 8 * 2 + std::max<int64_t>(1, B * max_feat) * 8 + std::max<int64_t>(1, B * max_lab) * 4;
  }
  Buffer<int64_t> feat_off;
  Buffer<int32_t> feat_idx;
  Buffer<float> feat_val;
  Buffer<int64_t> lab_off;
  Buffer<int32_t> lab_ids;
  int64_t rows = 0;

  void gather(const data::SparseDataset& d, const int64_t* row_ids, int64_t n) {
    rows = n;
    feat_off[0] = 0;
    lab_off[0] = 0;
    for (int64_t b = 0; b < n; ++b) {
      const int64_t r = row_ids[b];
      const auto fi = d.features.row_indices(r);
      const auto fv = d.features.row_values(r);
      std::copy(fi.begin(), fi.end(), feat_idx.data() + feat_off[b]);
      std::copy(fv.begin(), fv.end(), feat_val.data() + feat_off[b]);
      feat_off[b + 1] = feat_off[b] + int64_t(fi.size());
      const auto li = d.labels.row(r);
      std::copy(li.begin(), li.end(), lab_ids.data() + lab_off[b]);
      lab_off[b + 1] = lab_off[b] + int64_t(li.size());
    }
  }
  SparseRows features() const {
    return {std::span<const int64_t>(feat_off.data(), size_t(rows + 1)),
            std::span<const int32_t>(feat_idx.data(), size_t(feat_off[rows])),
            std::span<const float>(feat_val.data(), size_t(feat_off[rows]))};
  }
  BatchLabels labels() const {
    return {std::span<const int64_t>(lab_off.data(), size_t(rows + 1)),
            std::span<const int32_t>(lab_ids.data(), size_t(lab_off[rows]))};
  }
};

// A batch's labels as one label shard sees them: ids in [begin, end) rebased to the shard, the rest dropped.
struct ShardBatchLabels {
  ShardBatchLabels(int64_t B, int64_t max_lab, CountingAllocator& a)
      : off(a, B + 1), ids(a, std::max<int64_t>(1, B * max_lab)) {}
  static int64_t bytes(int64_t B, int64_t max_lab) { return (B + 1) * 8 + std::max<int64_t>(1, B * max_lab) * 4; }
  BatchLabels rebase(const BatchLabels& whole, const LabelShard& shard) {
    const int64_t B = int64_t(whole.offsets.size()) - 1;
    off[0] = 0;
    for (int64_t b = 0; b < B; ++b) {
      int64_t n = off[b];
      for (int64_t i = whole.offsets[size_t(b)]; i < whole.offsets[size_t(b + 1)]; ++i) {
        const int64_t id = whole.ids[size_t(i)];
        if (id >= shard.begin && id < shard.end) ids[n++] = int32_t(id - shard.begin);
      }
      off[b + 1] = n;
    }
    return {std::span<const int64_t>(off.data(), size_t(B + 1)), std::span<const int32_t>(ids.data(), size_t(off[B]))};
  }
  Buffer<int64_t> off;
  Buffer<int32_t> ids;
};

// Learning-rate factor at step s (0-based) of `total`: linear warmup, then constant or cosine to 0.
double lr_factor(const TrainConfig& c, int64_t s, int64_t total) {
  if (c.warmup_steps > 0 && s < c.warmup_steps) return double(s + 1) / double(c.warmup_steps);
  if (c.schedule == "cosine") {
    const double span = double(std::max<int64_t>(1, total - c.warmup_steps));
    const double progress = std::min(1.0, double(s - c.warmup_steps) / span);
    return 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  }
  return 1.0;
}

}  // namespace

lp::Format TrainConfig::classifier_format() const {
  lp::Format f = lp::parse_format(clf_format);
  if (!clf_subnormals && f.subnormals) {
    f = lp::make_format(f.exponent_bits, f.mantissa_bits, f.bias, false, f.specials, f.overflow, f.is_signed,
                        f.name + "_ftz");
  }
  return f;
}

void TrainConfig::validate() const {
  auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  if (D < 1) bad(fmt::format("--dim must be >= 1, got {}", D));
  if (!(dropout >= 0.0f && dropout < 1.0f)) bad(fmt::format("--dropout must be in [0, 1), got {}", dropout));
  if (!(enc_lr >= 0.0f) || !std::isfinite(enc_lr)) bad(fmt::format("--enc-lr must be a finite number >= 0, got {}", enc_lr));
  if (!(clf_lr >= 0.0f) || !std::isfinite(clf_lr)) bad(fmt::format("--clf-lr must be a finite number >= 0, got {}", clf_lr));
  if (!(enc_wd >= 0.0f)) bad(fmt::format("--enc-wd must be >= 0, got {}", enc_wd));
  if (!(clf_init_std > 0.0)) bad(fmt::format("--clf-init-std must be > 0, got {}", clf_init_std));
  if (epochs < 1) bad(fmt::format("--epochs must be >= 1, got {}", epochs));
  if (batch < 1) bad(fmt::format("--batch must be >= 1, got {}", batch));
  if (max_steps < 0) bad("--max-steps must be >= 0");
  if (chunks < 1) bad(fmt::format("--chunks must be >= 1, got {}", chunks));
  if (tile < 0) bad("--tile must be >= 0");
  if (threads < 1) bad(fmt::format("--threads must be >= 1, got {}", threads));
  if (schedule != "constant" && schedule != "cosine") bad("--schedule must be constant or cosine, got " + schedule);
  if (warmup_steps < 0) bad("--warmup-steps must be >= 0");
  if (hist_every < 0) bad("--hist-every must be >= 0");
  if (eval_batch < 0) bad("--eval-batch must be >= 0");
  if (sr_bits < 0 || sr_bits > 31) bad(fmt::format("--sr-bits must be in [0, 31], got {}", sr_bits));
  Operand op = Operand::fp32;
  try {
    op = parse_operand(operand);
  } catch (const std::invalid_argument& e) {
    bad(std::string("--operand: ") + e.what());
  }
  if (op == Operand::tf32)
    bad("--operand tf32 is a GPU tensor-core format; train-xmc computes on the CPU with fp32, bf16, e4m3 or e5m2 "
        "operands");
  const lp::Format f = classifier_format();
  const UpdateRounding r = parse_update_rounding(clf_rounding, sr_bits);
  if (r.elmo && lp::code_bytes(f) == 0)
    bad(fmt::format("--rounding elmo_sr needs a classifier format of at most 16 bits, got {}", f.name));
  lp::Format g;
  try {
    g = lp::parse_format(grad_format);
  } catch (const std::invalid_argument& e) {
    bad(std::string("--grad-format: ") + e.what());
  }
  if (r.elmo && !g.same_encoding(lp::formats::float32()))
    bad(fmt::format("--grad-format {} takes a precision_sim rounding (nearest_even, stochastic, ...); elmo_sr rounds "
                    "the packed weights only",
                    grad_format));
  if (sr_bits != 0 && !(r.mode == lp::Rounding::stochastic && !r.elmo))
    bad("--sr-bits applies to --rounding stochastic (sr) only");
}

std::string TrainConfig::describe() const {
  return fmt::format(
      "D={} {} dropout={} enc={} enc_lr={} | clf {}{} {}{} lr={} init_std={} {} k={} operand={} | {} epochs x batch {} "
      "rows, {} schedule, seed {}, {} threads",
      D, to_string(activation), dropout, to_string(encoder_precision), enc_lr, clf_format,
      clf_subnormals ? "" : " (no subnormals)", parse_update_rounding(clf_rounding, sr_bits).name(),
      grad_format == "fp32" ? "" : " grad " + grad_format, clf_lr,
      clf_init_std, to_string(mode), chunks, to_string(parse_operand(operand)), epochs, batch, schedule, seed, threads);
}

DataShape DataShape::of(const data::TrainTest& d) {
  DataShape s;
  s.num_features = std::max(d.train.num_features, d.test.num_features);
  s.num_labels = std::max(d.train.num_labels, d.test.num_labels);
  s.train_rows = d.train.rows();
  s.test_rows = d.test.rows();
  int64_t feat_nnz = 0;
  for (const data::SparseDataset* p : {&d.train, &d.test}) {
    for (int64_t r = 0; r < p->rows(); ++r) {
      const int64_t nf = p->features.offsets[size_t(r + 1)] - p->features.offsets[size_t(r)];
      const int64_t nl = p->labels.offsets[size_t(r + 1)] - p->labels.offsets[size_t(r)];
      s.max_features_per_row = std::max(s.max_features_per_row, nf);
      s.max_labels_per_row = std::max(s.max_labels_per_row, nl);
    }
  }
  for (int64_t r = 0; r < d.train.rows(); ++r)
    feat_nnz += d.train.features.offsets[size_t(r + 1)] - d.train.features.offsets[size_t(r)];
  s.mean_features_per_row = d.train.rows() > 0 ? double(feat_nnz) / double(d.train.rows()) : 0.0;
  return s;
}

ClassifierConfig classifier_config(const TrainConfig& c, const DataShape& s, const LabelShard* shard) {
  ClassifierConfig k;
  k.V = shard ? shard->size() : s.num_labels;
  k.label_offset = shard ? shard->begin : 0;
  k.D = c.D;
  k.format = c.classifier_format();
  k.rounding = parse_update_rounding(c.clf_rounding, c.sr_bits);
  k.grad_format = lp::parse_format(c.grad_format);
  k.mode = c.mode;
  k.chunks = c.chunks;
  k.tile = c.tile;
  k.threads = c.threads;
  k.max_batch = std::max(c.batch, c.eval_batch);
  k.max_positives = std::max<int64_t>(1, k.max_batch * s.max_labels_per_row);
  k.seed = c.seed;
  k.operand = parse_operand(c.operand);
  return k;
}

EncoderConfig encoder_config(const TrainConfig& c, const DataShape& s) {
  EncoderConfig e;
  e.F = s.num_features;
  e.D = c.D;
  e.activation = c.activation;
  e.dropout = c.dropout;
  e.precision = c.encoder_precision;
  e.adam.lr = c.enc_lr;
  e.adam.weight_decay = c.enc_wd;
  e.max_batch = std::max(c.batch, c.eval_batch);
  e.seed = c.seed;
  e.threads = c.threads;
  return e;
}

MemoryPrediction predict_memory(const TrainConfig& c, const DataShape& s, const LabelShard* shard) {
  const ClassifierConfig kc = classifier_config(c, s, shard);
  const EncoderConfig ec = encoder_config(c, s);
  const int64_t B = kc.max_batch;
  MemoryPrediction m;
  m.train = Classifier::predicted_bytes(kc);
  m.train.encoder = Encoder::predicted_bytes(ec);
  m.train.workspace += BatchBuffers::bytes(B, s.max_features_per_row, s.max_labels_per_row) + B * c.D * 4 /* dH */;
  int64_t sum_bytes = 0;
  if (shard) {
    // The label shards' dH sum, at the largest of the batch sizes training uses: full batches and, when
    // the split does not divide and an epoch runs to its end, the last, shorter one.
    const int64_t full = std::min(c.batch, s.train_rows), last = s.train_rows % c.batch;
    const int64_t steps_per_epoch = (s.train_rows + c.batch - 1) / c.batch;
    const int64_t steps = c.max_steps > 0 ? std::min(steps_per_epoch * c.epochs, c.max_steps) : steps_per_epoch * c.epochs;
    sum_bytes = shard->sum_floats_bytes(full * c.D);
    if (last != 0 && s.train_rows > c.batch && steps >= steps_per_epoch)
      sum_bytes = std::max(sum_bytes, shard->sum_floats_bytes(last * c.D));
    m.train.workspace += ShardBatchLabels::bytes(B, s.max_labels_per_row) + sum_bytes;
  }
  const int64_t eb = c.eval_batch > 0 ? c.eval_batch : c.batch;
  m.eval_extra = Classifier::predicted_eval_bytes(kc, eb, kTopK) + std::max<int64_t>(1, s.test_rows * kTopK) * 4 +
                 eb * kTopK * 4;
  // The dH sum's receive buffer lives only inside a training step, so the test split is scored without
  // it: the run's peak is max(train, train − sum buffer + eval) = train + max(0, eval − sum buffer).
  m.eval_extra = std::max<int64_t>(0, m.eval_extra - sum_bytes);
  return m;
}

namespace {

// What train_xmc needs of the data and the label shard beyond TrainConfig::validate().
void check_run_inputs(const data::TrainTest& d, const TrainConfig& cfg, const DataShape& shape, const LabelShard* shard) {
  if (shape.num_labels < kTopK)
    throw std::invalid_argument(fmt::format("the dataset has {} labels; P@5 needs at least 5", shape.num_labels));
  if (d.train.rows() < 1) throw std::invalid_argument("the training split has no rows");
  if (shard) {
    if (shard->begin < 0 || shard->end > shape.num_labels || shard->size() < kTopK)
      throw std::invalid_argument(fmt::format("label shard [{}, {}) of {} labels: a shard needs at least {} labels",
                                              shard->begin, shard->end, shape.num_labels, kTopK));
    if (cfg.hist_every > 0) throw std::invalid_argument("--hist-every: gradient histograms are not gathered across label shards");
  }
}

// Inverse propensities of the labels from the training split (Jain et al.); none below 3 rows.
std::vector<double> training_inverse_propensities(const data::TrainTest& d, const TrainConfig& cfg,
                                                  const DataShape& shape) {
  if (d.train.rows() < 3) return {};
  std::vector<int64_t> freq(static_cast<size_t>(shape.num_labels), 0);
  for (int32_t id : d.train.labels.ids) ++freq[size_t(id)];
  return data::inverse_propensities(freq, d.train.rows(), {cfg.propensity_a, cfg.propensity_b});
}

// The histograms of the weight gradient dW and the logit gradient G (--hist-every): one per thread while
// the steps run (the classifier's observers call them from its threads), merged once per epoch.
class GradientHistograms {
 public:
  explicit GradientHistograms(const TrainConfig& cfg)
      : on_(cfg.hist_every > 0), D_(cfg.D), weights_(size_t(cfg.threads)), logits_(size_t(cfg.threads)) {}

  bool on() const { return on_; }
  void record(bool on) { recording_ = on; }  // the current step's tiles are counted
  GradientObserver weight_observer() {
    if (!on_) return nullptr;
    return [this](int t, int64_t, int64_t n, const float* g) {
      if (recording_) weights_[size_t(t)].add(g, n * D_);
    };
  }
  LogitGradientObserver logit_observer() {
    if (!on_) return nullptr;
    return [this](int t, int64_t, int64_t n, int64_t rows, const float* g, int64_t ld) {
      if (!recording_) return;
      for (int64_t b = 0; b < rows; ++b) logits_[size_t(t)].add(g + b * ld, n);
    };
  }
  // Merges the threads' counts into the epoch's histograms (and the run's), and starts them afresh.
  void close_epoch(RunOutcome& out) {
    epoch_weights_.clear();
    epoch_logits_.clear();
    for (size_t t = 0; t < weights_.size(); ++t) {
      epoch_weights_.merge(weights_[t]);
      epoch_logits_.merge(logits_[t]);
      weights_[t].clear();
      logits_[t].clear();
    }
    out.grad_hist.merge(epoch_weights_);
    out.logit_grad_hist.merge(epoch_logits_);
  }
  const GradientHistogram* epoch_weights() const { return on_ ? &epoch_weights_ : nullptr; }
  const GradientHistogram* epoch_logits() const { return on_ ? &epoch_logits_ : nullptr; }

 private:
  bool on_, recording_ = false;
  int64_t D_;
  std::vector<GradientHistogram> weights_, logits_;
  GradientHistogram epoch_weights_, epoch_logits_;
};

// One training run's state: the model (encoder and classifier head, or this rank's label shard of the
// head), the batch buffers, all from one counting allocator; the row order and the step count.
class XmcRun {
 public:
  XmcRun(const data::TrainTest& d, const TrainConfig& cfg, const DataShape& shape, const LabelShard* shard)
      : d_(d), cfg_(cfg), shape_(shape), shard_(shard), kc_(classifier_config(cfg, shape, shard)),
        clf_(kc_, alloc_), enc_(encoder_config(cfg, shape), alloc_),
        batch_(kc_.max_batch, shape.max_features_per_row, shape.max_labels_per_row, alloc_),
        dH_(alloc_, kc_.max_batch * cfg.D), inv_prop_(training_inverse_propensities(d, cfg, shape)),
        order_(size_t(d.train.rows())), hist_(cfg) {
    clf_.init_normal(cfg.clf_init_std, cfg.seed * 2 + 1);
    enc_.init(cfg.seed * 2 + 2);
    if (shard) shard_labels_.emplace(kc_.max_batch, shape.max_labels_per_row, alloc_);
    const int64_t steps_per_epoch = (d.train.rows() + cfg.batch - 1) / cfg.batch;
    total_steps_ = steps_per_epoch * cfg.epochs;
    if (cfg.max_steps > 0) total_steps_ = std::min(total_steps_, cfg.max_steps);
    std::iota(order_.begin(), order_.end(), int64_t(0));
  }

  bool done() const { return step_ >= total_steps_; }
  int64_t steps() const { return step_; }
  double mean_step_s() const { return step_ > 0 ? step_seconds_ / double(step_) : 0.0; }
  int64_t peak_bytes() const { return alloc_.peak_bytes(); }
  GradientHistograms& histograms() { return hist_; }

  // One epoch of steps over the shuffled training rows (until max_steps): rec's steps, learning rates,
  // train loss and time.
  void train_epoch(int epoch, EpochRecord& rec, const ProgressFn& progress) {
    const int64_t B = cfg_.batch, n_train = d_.train.rows(), steps_per_epoch = (n_train + B - 1) / B;
    std::mt19937_64 rng(cfg_.seed * 1000003ull + uint64_t(epoch));
    std::shuffle(order_.begin(), order_.end(), rng);
    const auto t_epoch = std::chrono::steady_clock::now();
    double loss_sum = 0;
    int64_t rows_seen = 0;
    for (int64_t r0 = 0, s_in_epoch = 0; r0 < n_train && !done(); r0 += B, ++s_in_epoch) {
      const int64_t n = std::min(B, n_train - r0);
      batch_.gather(d_.train, order_.data() + r0, n);
      loss_sum += train_step(n, rec);
      rows_seen += n;
      if (progress) progress(epoch, cfg_.epochs, s_in_epoch + 1, steps_per_epoch, loss_sum / double(rows_seen),
                             seconds_since(t_epoch));
    }
    rec.steps = step_;
    rec.train_loss = rows_seen > 0 ? loss_sum / double(rows_seen) : kNaN;
    rec.epoch_s = seconds_since(t_epoch);
  }

  // Loss, P@k, nDCG@k and PSP@k on the test split (k = 1, 3, 5), into rec.
  void evaluate(EpochRecord& rec) {
    const auto t_eval = std::chrono::steady_clock::now();
    const int64_t n_test = d_.test.rows(), eval_B = cfg_.eval_batch > 0 ? cfg_.eval_batch : cfg_.batch;
    Buffer<int32_t> topk(alloc_, std::max<int64_t>(1, n_test * kTopK));
    Buffer<float> scores(alloc_, eval_B * kTopK);
    std::vector<int64_t> rows(static_cast<size_t>(eval_B));
    double test_loss = 0;
    for (int64_t r0 = 0; r0 < n_test; r0 += eval_B) {
      const int64_t n = std::min(eval_B, n_test - r0);
      std::iota(rows.begin(), rows.begin() + n, r0);
      batch_.gather(d_.test, rows.data(), n);
      const float* H = enc_.forward(batch_.features(), false, 0);
      const BatchLabels labels = shard_ ? shard_labels_->rebase(batch_.labels(), *shard_) : batch_.labels();
      int32_t* top = topk.data() + r0 * kTopK;
      test_loss += clf_.evaluate(H, n, kTopK, top, scores.data(), &labels);
      if (shard_) {  // this shard's best 5 in whole-head ids, then the best 5 of all shards
        for (int64_t i = 0; i < n * kTopK; ++i) top[i] += int32_t(shard_->begin);
        shard_->merge_topk(top, scores.data(), n, kTopK);
      }
    }
    if (shard_) test_loss = shard_->sum_double(test_loss);
    const data::RankingMetrics m = data::ranking_metrics(
        std::span<const int32_t>(topk.data(), size_t(n_test * kTopK)), kTopK, d_.test.labels, shape_.num_labels,
        inv_prop_);
    rec.test_loss = test_loss / double(n_test);
    for (int i = 0; i < 3; ++i) {
      rec.p[i] = m.precision[size_t(i)];
      rec.ndcg[i] = m.ndcg[size_t(i)];
      rec.psp[i] = m.psp.empty() ? kNaN : m.psp[size_t(i)];
    }
    rec.eval_s = seconds_since(t_eval);
  }

  // The head's weight statistics (of the whole head when sharded) and the peak memory so far, into rec.
  void record_weights(EpochRecord& rec) {
    Classifier::WeightStats ws = clf_.weight_stats();
    if (shard_) {  // the whole head's statistics from every shard's
      const double n_local = double(kc_.V * kc_.D), n_whole = double(shape_.num_labels * kc_.D);
      ws.zero_fraction = double(shard_->sum_int(std::llround(ws.zero_fraction * n_local))) / n_whole;
      ws.mean_abs = shard_->sum_double(ws.mean_abs * n_local) / n_whole;
      ws.non_finite = shard_->sum_int(ws.non_finite);
    }
    rec.weight_zero_fraction = ws.zero_fraction;
    rec.weight_mean_abs = ws.mean_abs;
    rec.weight_non_finite = ws.non_finite;
    rec.peak_bytes = alloc_.peak_bytes();
  }

 private:
  // One step on the gathered batch of n rows: encoder forward, the head's step (and its update), the
  // encoder's backward pass and Adam step. Returns the batch's summed loss (of the whole head).
  double train_step(int64_t n, EpochRecord& rec) {
    const auto t_step = std::chrono::steady_clock::now();
    const SparseRows x = batch_.features();
    const float* H = enc_.forward(x, true, uint64_t(step_));
    const double f = lr_factor(cfg_, step_, total_steps_);
    rec.lr_enc = cfg_.enc_lr * f;
    rec.lr_clf = cfg_.clf_lr * f;
    hist_.record(hist_.on() && step_ % cfg_.hist_every == 0);
    const BatchLabels labels = shard_ ? shard_labels_->rebase(batch_.labels(), *shard_) : batch_.labels();
    StepResult res = clf_.step(H, n, labels, float(rec.lr_clf), uint64_t(step_), dH_.data(), hist_.weight_observer(),
                               hist_.logit_observer());
    if (shard_) {  // the replicated encoder's input gradient: the sum of every label shard's part
      shard_->sum_floats(dH_.data(), n * cfg_.D, alloc_);
      res.loss = shard_->sum_double(res.loss);
    }
    enc_.backward(x, dH_.data(), uint64_t(step_));
    enc_.adam_step(float(rec.lr_enc));
    step_seconds_ += seconds_since(t_step);
    ++step_;
    return res.loss;
  }

  const data::TrainTest& d_;
  const TrainConfig& cfg_;
  const DataShape shape_;
  const LabelShard* shard_;
  const ClassifierConfig kc_;
  CountingAllocator alloc_;  // before every buffer below
  Classifier clf_;
  Encoder enc_;
  BatchBuffers batch_;
  Buffer<float> dH_;
  std::optional<ShardBatchLabels> shard_labels_;
  std::vector<double> inv_prop_;
  std::vector<int64_t> order_;
  GradientHistograms hist_;
  int64_t total_steps_ = 0, step_ = 0;
  double step_seconds_ = 0;
};

}  // namespace

RunOutcome train_xmc(const data::TrainTest& d, const TrainConfig& cfg, const ProgressFn& progress,
                     const EpochFn& on_epoch, const LabelShard* shard) {
  cfg.validate();
  const DataShape shape = DataShape::of(d);
  check_run_inputs(d, cfg, shape, shard);
  RunOutcome out;
  out.predicted = predict_memory(cfg, shape, shard);
  const meters::PeakRssMeter rss;  // before the run's first buffer
  XmcRun run(d, cfg, shape, shard);
  bool evaluated_once = false;
  for (int epoch = 1; epoch <= cfg.epochs && !run.done(); ++epoch) {
    EpochRecord rec;
    rec.epoch = epoch;
    run.train_epoch(epoch, rec, progress);
    if (!evaluated_once) out.measured_train_peak = run.peak_bytes();
    const bool last = epoch == cfg.epochs || run.done();
    rec.test_loss = kNaN;
    for (int i = 0; i < 3; ++i) rec.p[i] = rec.ndcg[i] = rec.psp[i] = kNaN;
    if (cfg.eval_every >= 0 && d.test.rows() > 0 && (last || (cfg.eval_every > 0 && epoch % cfg.eval_every == 0))) {
      evaluated_once = true;
      run.evaluate(rec);
    }
    run.record_weights(rec);
    run.histograms().close_epoch(out);
    out.epochs.push_back(rec);
    if (on_epoch) on_epoch(rec, run.histograms().epoch_weights(), run.histograms().epoch_logits());
  }
  if (!evaluated_once) out.measured_train_peak = run.peak_bytes();
  out.measured_peak = run.peak_bytes();
  out.measured_rss_growth = rss.growth_bytes();
  out.steps = run.steps();
  out.mean_step_s = run.mean_step_s();
  return out;
}

}  // namespace lobench::train
