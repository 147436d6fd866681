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
  const lp::Format f = classifier_format();
  const UpdateRounding r = parse_update_rounding(clf_rounding, sr_bits);
  if (r.elmo && lp::code_bytes(f) == 0)
    bad(fmt::format("--rounding elmo_sr needs a classifier format of at most 16 bits, got {}", f.name));
  if (sr_bits != 0 && !(r.mode == lp::Rounding::stochastic && !r.elmo))
    bad("--sr-bits applies to --rounding stochastic (sr) only");
}

std::string TrainConfig::describe() const {
  return fmt::format(
      "D={} {} dropout={} enc={} enc_lr={} | clf {}{} {} lr={} init_std={} {} k={} | {} epochs x batch {} "
      "rows, {} schedule, seed {}, {} threads",
      D, to_string(activation), dropout, to_string(encoder_precision), enc_lr, clf_format,
      clf_subnormals ? "" : " (no subnormals)", parse_update_rounding(clf_rounding, sr_bits).name(), clf_lr,
      clf_init_std, to_string(mode), chunks, epochs, batch, schedule, seed, threads);
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
  k.mode = c.mode;
  k.chunks = c.chunks;
  k.tile = c.tile;
  k.threads = c.threads;
  k.max_batch = std::max(c.batch, c.eval_batch);
  k.max_positives = std::max<int64_t>(1, k.max_batch * s.max_labels_per_row);
  k.seed = c.seed;
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

RunOutcome train_xmc(const data::TrainTest& d, const TrainConfig& cfg, const ProgressFn& progress,
                     const EpochFn& on_epoch, const LabelShard* shard) {
  cfg.validate();
  const DataShape shape = DataShape::of(d);
  if (shape.num_labels < kTopK)
    throw std::invalid_argument(fmt::format("the dataset has {} labels; P@5 needs at least 5", shape.num_labels));
  if (d.train.rows() < 1) throw std::invalid_argument("the training split has no rows");
  if (shard) {
    if (shard->begin < 0 || shard->end > shape.num_labels || shard->size() < kTopK)
      throw std::invalid_argument(fmt::format("label shard [{}, {}) of {} labels: a shard needs at least {} labels",
                                              shard->begin, shard->end, shape.num_labels, kTopK));
    if (cfg.hist_every > 0) throw std::invalid_argument("--hist-every: gradient histograms are not gathered across label shards");
  }
  const ClassifierConfig kc = classifier_config(cfg, shape, shard);
  const EncoderConfig ec = encoder_config(cfg, shape);

  RunOutcome out;
  out.predicted = predict_memory(cfg, shape, shard);
  CountingAllocator alloc;
  Classifier clf(kc, alloc);
  Encoder enc(ec, alloc);
  clf.init_normal(cfg.clf_init_std, cfg.seed * 2 + 1);
  enc.init(cfg.seed * 2 + 2);
  const int64_t B = cfg.batch, eval_B = cfg.eval_batch > 0 ? cfg.eval_batch : cfg.batch;
  BatchBuffers batch(kc.max_batch, shape.max_features_per_row, shape.max_labels_per_row, alloc);
  Buffer<float> dH(alloc, kc.max_batch * cfg.D);
  std::optional<ShardBatchLabels> shard_labels;
  if (shard) shard_labels.emplace(kc.max_batch, shape.max_labels_per_row, alloc);

  // Propensities from the training split (Jain et al.).
  std::vector<double> inv_prop;
  if (d.train.rows() >= 3) {
    std::vector<int64_t> freq(static_cast<size_t>(shape.num_labels), 0);
    for (int32_t id : d.train.labels.ids) ++freq[size_t(id)];
    inv_prop = data::inverse_propensities(freq, d.train.rows(), {cfg.propensity_a, cfg.propensity_b});
  }

  const int64_t n_train = d.train.rows();
  const int64_t steps_per_epoch = (n_train + B - 1) / B;
  int64_t total_steps = steps_per_epoch * cfg.epochs;
  if (cfg.max_steps > 0) total_steps = std::min(total_steps, cfg.max_steps);
  std::vector<int64_t> order(static_cast<size_t>(n_train));
  std::iota(order.begin(), order.end(), int64_t(0));

  // Gradient histograms: one per thread, merged after each epoch.
  std::vector<GradientHistogram> hist_threads(static_cast<size_t>(cfg.threads)),
      logit_hist_threads(static_cast<size_t>(cfg.threads));
  GradientHistogram epoch_hist, epoch_logit_hist;
  bool record_hist = false;
  GradientObserver observer = nullptr;
  LogitGradientObserver logit_observer = nullptr;
  if (cfg.hist_every > 0) {
    observer = [&](int t, int64_t, int64_t n, const float* g) {
      if (record_hist) hist_threads[size_t(t)].add(g, n * cfg.D);
    };
    logit_observer = [&](int t, int64_t, int64_t n, int64_t rows, const float* g, int64_t ld) {
      if (!record_hist) return;
      for (int64_t b = 0; b < rows; ++b) logit_hist_threads[size_t(t)].add(g + b * ld, n);
    };
  }

  int64_t step = 0;
  double step_seconds = 0;
  bool evaluated_once = false;
  for (int epoch = 1; epoch <= cfg.epochs && step < total_steps; ++epoch) {
    std::mt19937_64 rng(cfg.seed * 1000003ull + uint64_t(epoch));
    std::shuffle(order.begin(), order.end(), rng);
    EpochRecord rec;
    rec.epoch = epoch;
    const auto t_epoch = std::chrono::steady_clock::now();
    double loss_sum = 0;
    int64_t rows_seen = 0;
    int64_t s_in_epoch = 0;
    for (int64_t r0 = 0; r0 < n_train && step < total_steps; r0 += B, ++step, ++s_in_epoch) {
      const int64_t n = std::min(B, n_train - r0);
      batch.gather(d.train, order.data() + r0, n);
      const auto t_step = std::chrono::steady_clock::now();
      const SparseRows x = batch.features();
      const float* H = enc.forward(x, true, uint64_t(step));
      const double f = lr_factor(cfg, step, total_steps);
      rec.lr_enc = cfg.enc_lr * f;
      rec.lr_clf = cfg.clf_lr * f;
      record_hist = cfg.hist_every > 0 && step % cfg.hist_every == 0;
      const BatchLabels labels = shard ? shard_labels->rebase(batch.labels(), *shard) : batch.labels();
      StepResult res = clf.step(H, n, labels, float(rec.lr_clf), uint64_t(step), dH.data(), observer, logit_observer);
      if (shard) {  // the replicated encoder's input gradient: the sum of every label shard's part
        shard->sum_floats(dH.data(), n * cfg.D, alloc);
        res.loss = shard->sum_double(res.loss);
      }
      enc.backward(x, dH.data(), uint64_t(step));
      enc.adam_step(float(rec.lr_enc));
      step_seconds += seconds_since(t_step);
      loss_sum += res.loss;
      rows_seen += n;
      if (progress) progress(epoch, cfg.epochs, s_in_epoch + 1, steps_per_epoch, loss_sum / double(rows_seen),
                             seconds_since(t_epoch));
    }
    rec.steps = step;
    rec.train_loss = rows_seen > 0 ? loss_sum / double(rows_seen) : kNaN;
    rec.epoch_s = seconds_since(t_epoch);
    if (!evaluated_once) out.measured_train_peak = alloc.peak_bytes();

    const bool last = epoch == cfg.epochs || step >= total_steps;
    const bool eval_now = cfg.eval_every >= 0 && d.test.rows() > 0 &&
                          (last || (cfg.eval_every > 0 && epoch % cfg.eval_every == 0));
    rec.test_loss = kNaN;
    for (int i = 0; i < 3; ++i) rec.p[i] = rec.ndcg[i] = rec.psp[i] = kNaN;
    if (eval_now) {
      const auto t_eval = std::chrono::steady_clock::now();
      evaluated_once = true;
      const int64_t n_test = d.test.rows();
      Buffer<int32_t> topk(alloc, std::max<int64_t>(1, n_test * kTopK));
      Buffer<float> scores(alloc, eval_B * kTopK);
      std::vector<int64_t> rows(static_cast<size_t>(eval_B));
      double test_loss = 0;
      for (int64_t r0 = 0; r0 < n_test; r0 += eval_B) {
        const int64_t n = std::min(eval_B, n_test - r0);
        std::iota(rows.begin(), rows.begin() + n, r0);
        batch.gather(d.test, rows.data(), n);
        const float* H = enc.forward(batch.features(), false, 0);
        const BatchLabels labels = shard ? shard_labels->rebase(batch.labels(), *shard) : batch.labels();
        int32_t* top = topk.data() + r0 * kTopK;
        test_loss += clf.evaluate(H, n, kTopK, top, scores.data(), &labels);
        if (shard) {  // this shard's best 5 in whole-head ids, then the best 5 of all shards
          for (int64_t i = 0; i < n * kTopK; ++i) top[i] += int32_t(shard->begin);
          shard->merge_topk(top, scores.data(), n, kTopK);
        }
      }
      if (shard) test_loss = shard->sum_double(test_loss);
      const data::RankingMetrics m = data::ranking_metrics(
          std::span<const int32_t>(topk.data(), size_t(n_test * kTopK)), kTopK, d.test.labels, shape.num_labels,
          inv_prop);
      rec.test_loss = test_loss / double(n_test);
      for (int i = 0; i < 3; ++i) {
        rec.p[i] = m.precision[size_t(i)];
        rec.ndcg[i] = m.ndcg[size_t(i)];
        rec.psp[i] = m.psp.empty() ? kNaN : m.psp[size_t(i)];
      }
      rec.eval_s = seconds_since(t_eval);
    }
    Classifier::WeightStats ws = clf.weight_stats();
    if (shard) {  // the whole head's statistics from every shard's
      const double n_local = double(kc.V * kc.D), n_whole = double(shape.num_labels * kc.D);
      ws.zero_fraction = double(shard->sum_int(std::llround(ws.zero_fraction * n_local))) / n_whole;
      ws.mean_abs = shard->sum_double(ws.mean_abs * n_local) / n_whole;
      ws.non_finite = shard->sum_int(ws.non_finite);
    }
    rec.weight_zero_fraction = ws.zero_fraction;
    rec.weight_mean_abs = ws.mean_abs;
    rec.weight_non_finite = ws.non_finite;
    rec.peak_bytes = alloc.peak_bytes();
    epoch_hist.clear();
    epoch_logit_hist.clear();
    for (int t = 0; t < cfg.threads; ++t) {
      epoch_hist.merge(hist_threads[size_t(t)]);
      epoch_logit_hist.merge(logit_hist_threads[size_t(t)]);
      hist_threads[size_t(t)].clear();
      logit_hist_threads[size_t(t)].clear();
    }
    out.grad_hist.merge(epoch_hist);
    out.logit_grad_hist.merge(epoch_logit_hist);
    out.epochs.push_back(rec);
    if (on_epoch)
      on_epoch(rec, cfg.hist_every > 0 ? &epoch_hist : nullptr, cfg.hist_every > 0 ? &epoch_logit_hist : nullptr);
  }
  if (!evaluated_once) out.measured_train_peak = alloc.peak_bytes();
  out.measured_peak = alloc.peak_bytes();
  out.steps = step;
  out.mean_step_s = step > 0 ? step_seconds / double(step) : 0.0;
  return out;
}

}  // namespace lobench::train
