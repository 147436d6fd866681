#include "harness/seqrec/seqrec_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <utility>

#include "datasets/random.hpp"
#include "datasets/sha256.hpp"
#include "datasets/seqrec_metrics.hpp"
#include "datasets/synthetic_seqrec.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/meters/peak_rss.hpp"
#include "harness/seqrec/early_stopping.hpp"
#include "harness/seqrec/seqrec_checkpoint.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/micro_batch_step.hpp"
#include "harness/seqrec/train_step.hpp"
#include "harness/system_memory.hpp"
#include "variants/operand.hpp"
#include "harness/meters/products_choice.hpp"

namespace lobench::seqrec {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string eta(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const int64_t t = int64_t(s);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}

// Evenly spaced eval users (all when max is 0 or not smaller).
std::vector<int64_t> eval_subset(int64_t count, int64_t max) {
  std::vector<int64_t> idx;
  const int64_t n = max > 0 && max < count ? max : count;
  for (int64_t i = 0; i < n; ++i) idx.push_back(i * count / n);
  return idx;
}

// The users' histories (the items before their targets) as exclusions.
struct History {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> items;
  data::Exclusions view() const { return {offsets, items}; }
};
History history_of(const SeqrecData& d, const data::EvalWindows& w, const std::vector<int64_t>& idx) {
  History h;
  for (int64_t i : idx) {
    const auto s = d.sequences.sequence(w.users[size_t(i)]);
    h.items.insert(h.items.end(), s.begin(), s.begin() + w.input_lengths[size_t(i)]);
    h.offsets.push_back(int64_t(h.items.size()));
  }
  return h;
}

std::vector<int32_t> subset_targets(const data::EvalWindows& w, const std::vector<int64_t>& idx) {
  std::vector<int32_t> t;
  for (int64_t i : idx) t.insert(t.end(), w.targets.begin() + i * w.L, w.targets.begin() + (i + 1) * w.L);
  return t;
}

// Dev or test ranking metrics of the model: the hidden state at the last window position, scored
// against the output table in vocabulary blocks.
data::RankingScores evaluate(SasRec& model, const SeqrecData& d, const data::EvalWindows& w,
                             const std::vector<int64_t>& idx, bool exclude_history) {
  const ModelConfig& m = model.config();
  const int64_t users = int64_t(idx.size()), N = m.N, D = m.D;
  std::vector<float> H(size_t(users * D));
  std::vector<int32_t> ids(size_t(m.max_batch * N));
  for (int64_t u0 = 0; u0 < users; u0 += m.max_batch) {
    const int64_t b = std::min(m.max_batch, users - u0);
    for (int64_t i = 0; i < b; ++i)
      std::copy_n(w.inputs.begin() + idx[size_t(u0 + i)] * N, N, ids.begin() + i * N);
    const float* hidden = model.forward(ids.data(), b, 0, /*training=*/false);
    for (int64_t i = 0; i < b; ++i) std::copy_n(hidden + (i * N + N - 1) * D, D, H.begin() + (u0 + i) * D);
  }
  const History h = exclude_history ? history_of(d, w, idx) : History{};
  const data::Exclusions exclude = exclude_history ? h.view() : data::Exclusions{};
  // With the item bias (null without): h·o + b, the logits the loss trains.
  const auto top = data::top_items(H.data(), users, model.output_table(), m.V, D, exclude, 0, m.threads, model.output_bias());
  return data::score_top_items(top, subset_targets(w, idx), users, w.L, m.V);
}

// The popularity baseline on test: items counted over every kept user's test input.
data::RankingScores popularity_test(const SeqrecData& d, const std::vector<int64_t>& idx, bool exclude_history) {
  const data::EvalWindows& w = d.split.test;
  std::vector<int64_t> counts(size_t(d.V), 0);
  for (int64_t i = 0; i < w.count(); ++i) {
    const auto s = d.sequences.sequence(w.users[size_t(i)]);
    for (int64_t t = 0; t < w.input_lengths[size_t(i)]; ++t) ++counts[size_t(s[size_t(t)])];
  }
  const History h = exclude_history ? history_of(d, w, idx) : History{};
  const auto top = data::top_popular(counts, int64_t(idx.size()), exclude_history ? h.view() : data::Exclusions{});
  return data::score_top_items(top, subset_targets(w, idx), int64_t(idx.size()), w.L, d.V);
}

// --negatives history: each training window's user's whole sequence (dev and test items too, as S3-Rec's
// set(items)), sorted and unique, what its sampled negatives avoid. Refused (RunRefused) when a
// sequence holds every item: no negative would be left to draw.
struct WindowHistories {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> items;
  std::span<const int32_t> of(int64_t window) const {
    return std::span<const int32_t>(items).subspan(size_t(offsets[size_t(window)]),
                                                   size_t(offsets[size_t(window + 1)] - offsets[size_t(window)]));
  }
};
WindowHistories window_histories(const SeqrecData& d) {
  WindowHistories h;
  const data::TrainWindows& tw = d.split.train;
  for (int64_t w = 0; w < tw.count(); ++w) {
    const auto s = d.sequences.sequence(tw.users[size_t(w)]);
    std::vector<int32_t> u;
    for (const auto item : s)
      if (item >= 1 && item < d.V) u.push_back(int32_t(item));
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    if (int64_t(u.size()) >= d.V - 1)
      throw RunRefused(fmt::format("--negatives history: user row {} holds every one of the {} items, so no "
                                   "negative is left to draw",
                                   tw.users[size_t(w)], d.V - 1));
    h.items.insert(h.items.end(), u.begin(), u.end());
    h.offsets.push_back(int64_t(h.items.size()));
  }
  return h;
}

// The batch of windows order[first .. first + B) gathered into contiguous arrays (and, with histories,
// each window's).
struct BatchData {
  std::vector<int32_t> ids, targets;
  std::vector<float> weights;
  std::vector<std::span<const int32_t>> avoid;
  Batch view(int64_t B, int64_t L) const {
    Batch b{B, L, ids.data(), targets.data(), weights.data()};
    b.avoid = avoid.empty() ? nullptr : avoid.data();
    return b;
  }
};
int64_t gather(const data::TrainWindows& tw, const std::vector<int64_t>& order, int64_t first, int64_t B, BatchData& b,
               const WindowHistories* histories) {
  const int64_t n = std::min<int64_t>(B, int64_t(order.size()) - first), N = tw.N, L = tw.L;
  b.ids.resize(size_t(n * N));
  b.targets.resize(size_t(n * N * L));
  b.weights.resize(size_t(n * N));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t w = order[size_t(first + i)];
    std::copy_n(tw.inputs.begin() + w * N, N, b.ids.begin() + i * N);
    std::copy_n(tw.targets.begin() + w * N * L, N * L, b.targets.begin() + i * N * L);
    std::copy_n(tw.weights.begin() + w * N, N, b.weights.begin() + i * N);
  }
  b.avoid.clear();
  if (histories)
    for (int64_t i = 0; i < n; ++i) b.avoid.push_back(histories->of(order[size_t(first + i)]));
  return n;
}

StepRow step_row(const StepRecord& r, int64_t step, int64_t epoch, int64_t batch, float lr, bool full) {
  StepRow row;
  row.step = step;
  row.epoch = epoch;
  row.batch = batch;
  row.loss = r.loss;
  row.lr = lr;
  row.forward_s = r.forward_s;
  row.loss_s = r.loss_s;
  row.backward_s = r.backward_s;
  row.optimizer_s = r.optimizer_s;
  row.comm_s = r.comm_s;
  row.step_s = r.total_s();
  row.tp = r.tp;
  row.fp = r.fp;
  row.fn = r.fn;
  row.tn = r.tn;
  const double tp = double(r.tp);
  row.precision = full && r.tp + r.fp > 0 ? tp / double(r.tp + r.fp) : kNaN;
  row.recall = full && r.tp + r.fn > 0 ? tp / double(r.tp + r.fn) : kNaN;
  row.f1 = full && 2 * r.tp + r.fp + r.fn > 0 ? 2 * tp / double(2 * r.tp + r.fp + r.fn) : kNaN;
  row.loss_workspace_bytes = r.loss_workspace_peak;
  row.rss_bytes = process_rss_bytes();
  return row;
}

}  // namespace

// The meters' readers of /proc/self/status (-1 where unreadable), as 0 where unknown.
int64_t process_rss_bytes() { return std::max<int64_t>(0, meters::resident_bytes()); }
int64_t process_rss_peak_bytes() { return std::max<int64_t>(0, meters::peak_resident_bytes()); }

namespace {

// --operand: fp32 or bf16, and bf16 only where the loss makes full-vocabulary products.
void validate_operand(const SeqrecConfig& c) {
  Operand op = Operand::fp32;
  try {
    op = parse_operand(c.operand);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("train-seqrec: --operand: ") + e.what());
  }
  if (op == Operand::tf32)
    throw std::invalid_argument("train-seqrec: --operand tf32 is a GPU tensor-core format; the loss variants compute "
                                "on the CPU with fp32 or bf16 operands");
  if (is_fp8(op))
    throw std::invalid_argument(std::string("train-seqrec: --operand ") + to_string(op) +
                                ": fp8 operands are for lobench run and train-xmc; train-seqrec computes with fp32 or "
                                "bf16 operands");
  if (op == Operand::bf16 && c.variant == "sampled")
    throw std::invalid_argument("train-seqrec: --operand bf16 applies to the full-vocabulary variants (dense, chunked, "
                                "fused); --variant sampled scores two items per position in float32 and has no such "
                                "products: give --operand fp32 with it");
}

}  // namespace

RunOptions loss_options(const SeqrecConfig& c) {
  RunOptions ro;
  ro.threads = c.threads;
  ro.block_v = c.block_v;
  ro.operand = to_string(parse_operand(c.operand));
  return ro;
}

void validate(const SeqrecConfig& c) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("train-seqrec: " + m); };
  if (c.B < 1 || c.B > (1 << 20)) fail("--B must be in [1, 2^20]");
  if (c.steps < 0) fail("--steps must be >= 0");
  if (c.epochs < 1 && c.steps == 0) fail("--epochs must be >= 1 (or give --steps)");
  if (c.eval_every < -1) fail("--eval-every must be >= -1");
  if (c.early_stop < 0) fail("--early-stop must be >= 0");
  if (c.early_stop > 0 && c.eval_every < 1)
    fail(fmt::format("--early-stop {} needs an evaluation every few epochs: --eval-every >= 1 (got {})", c.early_stop,
                     c.eval_every));
  if (!c.checkpoint.empty() && c.eval_every < 0)
    fail(fmt::format("--checkpoint '{}' would never be written: it is written at the end of an evaluated whole epoch, "
                     "and --eval-every -1 evaluates none (give --eval-every 0 for the last epoch, or N for every N-th)",
                     c.checkpoint));
  if (c.max_eval_users < 0) fail("--max-eval-users must be >= 0");
  if (c.block_v < 0) fail("--block-v must be >= 0");
  if (c.threads < 1) fail("--threads must be >= 1");
  if (c.micro_batch < 0) fail("--micro-batch must be >= 0");
  if (c.ranks < 1) fail("ranks must be >= 1");
  validate(MicroBatchPlan{c.B, micro_batch_of(c), c.ranks, /*micro_given=*/c.micro_batch > 0});
  // inf passes "> 0" and turns every parameter NaN at the first step: finite values only.
  if (!(c.lr > 0.0f) || !std::isfinite(c.lr)) fail(fmt::format("--lr must be finite and > 0, got {}", c.lr));
  if (!(c.weight_decay >= 0.0f) || !std::isfinite(c.weight_decay))
    fail(fmt::format("--weight-decay must be finite and >= 0, got {}", c.weight_decay));
  if (c.warmup_steps < 0) fail("--warmup-steps must be >= 0");
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f)) fail(fmt::format("--dropout must be in [0, 1), got {}", c.dropout));
  if (!(c.adam_eps >= 0.0f) || !std::isfinite(c.adam_eps)) fail("--adam-eps must be finite and >= 0");
  if (!(c.adam_beta2 >= 0.0f && c.adam_beta2 < 1.0f))
    fail(fmt::format("--adam-beta2 must be in [0, 1), got {}", c.adam_beta2));
  if (c.block != "pre_ln" && c.block != "post_ln")
    fail(fmt::format("--block must be pre_ln or post_ln, got '{}'", c.block));
  parse_selection_metric(c.select);
  parse_negative_sampling(c.negatives);
  if (c.negatives != "positive" && c.variant != "sampled")
    fail(fmt::format("--negatives {} applies to --variant sampled (the one-negative objective), not to {} (--preset "
                     "s3rec sets it: give --negatives positive with a full-vocabulary variant)",
                     c.negatives, c.variant));
  parse_loss_reduction(c.reduction);
  if (c.mem_limit < 0) fail("--mem-limit must be >= 0");
  parse_optimizer_precision(c.optimizer_precision);
  validate_operand(c);
  data::validate(data::SplitOptions{data::parse_split_protocol(c.protocol), c.L, c.N});
}

std::string content_sha256(const data::SequenceDataset& s) {
  data::Sha256 h;
  const auto add = [&h](const auto& v) {
    h.update(std::span(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(v[0])));
  };
  const int64_t head[] = {s.num_items, s.num_users(), s.num_interactions()};
  h.update(std::span(reinterpret_cast<const uint8_t*>(head), sizeof(head)));
  add(s.user_ids);
  add(s.offsets);
  add(s.items);
  return h.hex_digest();
}

SeqrecData load_seqrec_data(const SeqrecConfig& c) {
  SeqrecData d;
  if (c.dataset == "synthetic:yambda") {
    d.name = fmt::format("synthetic:yambda@{}", c.syn_scale);
    d.sequences = data::generate_synthetic_seqrec(data::yambda_like(c.syn_scale, c.data_seed), c.threads);
    d.V = int64_t(data::yambda_like(c.syn_scale, c.data_seed).items) + 1;
  } else if (c.dataset.rfind("synthetic:", 0) == 0) {
    throw std::invalid_argument("unknown synthetic dataset '" + c.dataset + "' (valid: synthetic:yambda)");
  } else {
    d.name = c.dataset;
    d.sequences = data::read_sequences(c.dataset);
    d.V = int64_t(d.sequences.num_items) + 1;
  }
  d.content_sha256 = content_sha256(d.sequences);
  d.split = data::make_split(d.sequences, {data::parse_split_protocol(c.protocol), c.L, c.N});
  if (d.split.train.count() == 0)
    throw std::invalid_argument(fmt::format("{}: no user is long enough for the split (all {} are shorter than {})",
                                            d.name, d.split.too_short,
                                            data::min_sequence_length({data::parse_split_protocol(c.protocol), c.L, c.N})));
  return d;
}

SeqrecOutcome run_seqrec(const SeqrecConfig& c, const Provenance& prov, std::ostream& log, std::ostream& progress) {
  validate(c);
  return run_seqrec(c, load_seqrec_data(c), prov, log, progress);
}

namespace {

// The popularity baseline ranks all V items (tables of V entries): only for a point that trains.
DataSummary summarize(const SeqrecConfig& c, const SeqrecData& d, const std::vector<int64_t>& eval_idx, bool trains) {
  DataSummary ds;
  ds.name = d.name;
  ds.V = d.V;
  ds.users = d.split.users;
  ds.too_short = d.split.too_short;
  ds.interactions = d.sequences.num_interactions();
  ds.train_windows = d.split.train.count();
  ds.eval_users = int64_t(eval_idx.size());
  ds.popularity_test_hit_at_8 = ds.popularity_test_hr_at_10 = ds.popularity_test_ndcg_at_10 = kNaN;
  if (trains && c.eval_every >= 0) {
    const data::RankingScores pop = popularity_test(d, eval_idx, c.exclude_history);
    ds.popularity_test_hit_at_8 = pop.hit_at_8;
    ds.popularity_test_hr_at_10 = pop.hr_at_10;
    ds.popularity_test_ndcg_at_10 = pop.ndcg_at_10;
  }
  return ds;
}

// The model, its optimizer and step, built from the config; every buffer from `alloc`, up front.
struct Training {
  Training(const SeqrecConfig& c, const data::TrainWindows& tw, int64_t V, Objective& objective,
           GradientExchange* exchange)
      : model(model_config(c, V), alloc), opt(optimizer_config(c), model.params(), alloc),
        opt_bytes(alloc.current_bytes() - model.allocated_parameter_bytes() - model.allocated_activation_bytes()),
        step(model, objective, alloc, MicroBatchPlan{c.B, micro_batch_of(c), c.ranks}, exchange), exchange(exchange) {
    model.init();
    if (float* b = model.mutable_output_bias()) {
      const std::vector<float> b0 = constant_predictor_logits(tw.targets.data(), tw.weights.data(), tw.count() * tw.N, tw.L, V);
      std::copy(b0.begin(), b0.end(), b);
    }
    opt.prepare(model.params());
  }
  static AdamWConfig optimizer_config(const SeqrecConfig& c) {
    AdamWConfig oc;
    oc.lr = c.lr;
    oc.weight_decay = c.weight_decay;
    oc.eps = c.adam_eps;
    oc.beta2 = c.adam_beta2;
    oc.warmup_steps = c.warmup_steps;
    oc.precision = parse_optimizer_precision(c.optimizer_precision);
    return oc;
  }
  // What the allocators hold, by part (the loss workspace is its largest step peak).
  SeqrecMemory measured(const Objective& objective) const {
    SeqrecMemory m;
    m.parameters = model.allocated_parameter_bytes() / 2;  // values and gradients: two equal buffers
    m.gradients = model.allocated_parameter_bytes() - m.parameters;
    m.optimizer_state = opt_bytes;
    m.activations = alloc.current_bytes() - model.allocated_parameter_bytes() - opt_bytes -
                    step.allocated_partial_bytes();  // incl. d hidden
    m.gradient_sums = step.allocated_partial_bytes() + (exchange ? exchange->totals().buffer_peak_bytes : 0);
    m.loss_workspace = objective.workspace_peak_bytes();
    m.loss_outputs = objective.allocated_output_bytes();
    return m;
  }
  CountingAllocator alloc;
  SasRec model;
  AdamW opt;
  int64_t opt_bytes;
  MicroBatchStep step;
  GradientExchange* exchange;
};

// Time sums over this process's steps after its first (which pays first-touch page faults), and their
// count: after --resume-from, the checkpoint's steps were timed by another process.
struct Timing {
  int64_t steps = 0;
  double total = 0, forward = 0, loss = 0, backward = 0, optimizer = 0, comm = 0;
  void add(const StepRecord& r) {
    ++steps;
    comm += r.comm_s;
    total += r.total_s();
    forward += r.forward_s;
    loss += r.loss_s;
    backward += r.backward_s;
    optimizer += r.optimizer_s;
  }
};

std::vector<int64_t> shuffled(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  data::Rng rng(data::stream_key(seed, 0x5E9E, uint64_t(epoch)));
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[size_t(i)], order[rng.below(uint64_t(i + 1))]);
  return order;
}

void evaluate_into(EpochRow& er, SeqrecOutcome& o, Training& t, const SeqrecConfig& c, const SeqrecData& d,
                   const std::vector<int64_t>& eval_idx) {
  const auto t_eval = std::chrono::steady_clock::now();
  const data::RankingScores dev = evaluate(t.model, d, d.split.dev, eval_idx, c.exclude_history);
  const data::RankingScores test = evaluate(t.model, d, d.split.test, eval_idx, c.exclude_history);
  er.dev_hit_at_8 = dev.hit_at_8;
  er.dev_hr_at_10 = dev.hr_at_10;
  er.dev_ndcg_at_10 = dev.ndcg_at_10;
  er.dev_ndcg_at_20 = dev.ndcg_at_20;
  er.test_ndcg_at_20 = test.ndcg_at_20;
  o.test_hit_at_8 = er.test_hit_at_8 = test.hit_at_8;
  o.test_hr_at_10 = er.test_hr_at_10 = test.hr_at_10;
  o.test_ndcg_at_10 = er.test_ndcg_at_10 = test.ndcg_at_10;
  er.eval_s = seconds_since(t_eval);
}

std::string epoch_line(const std::string& variant, const EpochRow& e) {
  return fmt::format("{} epoch {} steps {} train loss {:.6g}  dev Hit@8 {:.4f} HR@10 {:.4f} NDCG@10 {:.4f} NDCG@20 {:.4f}  "
                     "test Hit@8 {:.4f} HR@10 {:.4f} NDCG@10 {:.4f}  ({:.1f} s + eval {:.1f} s)\n",
                     variant, e.epoch, e.steps, e.train_loss, e.dev_hit_at_8, e.dev_hr_at_10, e.dev_ndcg_at_10,
                     e.dev_ndcg_at_20, e.test_hit_at_8, e.test_hr_at_10, e.test_ndcg_at_10, e.epoch_s, e.eval_s);
}

}  // namespace

namespace {

// --resume-from: the checkpoint, refused (before anything is written) unless the run that wrote it trained
// what this one trains and this one has steps left after it.
SeqrecCheckpoint checked_checkpoint(const SeqrecConfig& c, const SeqrecData& d, int64_t total_steps, int64_t parameters) {
  SeqrecCheckpoint k;
  try {
    k = read_checkpoint(c.resume_from);
  } catch (const std::runtime_error& e) {  // missing, truncated, not a checkpoint: refused, not a failed run
    throw RunRefused(e.what());
  }
  if (const std::string differs = identity_differences(k.identity, checkpoint_identity(c, d.content_sha256));
      !differs.empty())
    throw RunRefused(fmt::format("--resume-from '{}' was written by another training: {}", c.resume_from, differs));
  if (k.steps >= total_steps)
    throw RunRefused(fmt::format("--resume-from '{}' holds epoch {} (step {}); this run ends at step {}: give "
                                            "--epochs above {} to train on",
                                            c.resume_from, k.epoch, k.steps, total_steps, k.epoch));
  if (int64_t(k.parameters.size()) != parameters)
    throw RunRefused(fmt::format("--resume-from '{}' holds {} parameters, the model has {}", c.resume_from,
                                            k.parameters.size(), parameters));
  return k;
}

// Puts the checkpoint's state into the run: parameters, optimizer, early stopping, the step count, and
// its /epochs rows into the run file (and `rows`). Returns the epoch it holds.
int64_t continue_from(const SeqrecCheckpoint& k, const SeqrecConfig& c, Training& t, EarlyStopping& early,
                      SeqrecOutcome& o, SeqrecRunFile* file, std::vector<EpochRow>& rows) {
  t.opt.restore(k.optimizer);
  std::copy(k.parameters.begin(), k.parameters.end(), t.model.params().values());
  early.restore(k.best, k.since_best);
  o.steps = k.steps;
  for (const EpochRow& r : k.epochs) {
    rows.push_back(r);
    if (file) file->append_epoch(r);
    if (std::isfinite(r.test_hr_at_10)) {
      o.test_hit_at_8 = r.test_hit_at_8;
      o.test_hr_at_10 = r.test_hr_at_10;
      o.test_ndcg_at_10 = r.test_ndcg_at_10;
    }
  }
  if (file) file->set_resumed(c.resume_from, k.epoch);
  return k.epoch;
}

// Whether a run over epochs first..epochs (total_steps steps, per_epoch each) ends an evaluated whole
// epoch, where --checkpoint is written (the loop in run_seqrec below).
bool writes_a_checkpoint(const SeqrecConfig& c, int64_t first, int64_t epochs, int64_t per_epoch, int64_t total_steps) {
  for (int64_t e = first; e <= epochs; ++e) {
    const bool whole = e * per_epoch <= total_steps, last = e == epochs || e * per_epoch >= total_steps;
    if (whole && c.eval_every >= 0 && (last || (c.eval_every > 0 && e % c.eval_every == 0))) return true;
  }
  return false;
}

// A --checkpoint this run would never write is refused before it starts, not found missing after it.
void refuse_unwritten_checkpoint(const SeqrecConfig& c, int64_t first, int64_t epochs, int64_t per_epoch,
                                 int64_t total_steps) {
  if (c.checkpoint.empty() || writes_a_checkpoint(c, first, epochs, per_epoch, total_steps)) return;
  throw RunRefused(fmt::format(
      "--checkpoint '{}' would never be written: it is written at the end of an evaluated whole epoch ({} steps "
      "here, --eval-every {}), and this run ends at step {}{}; give --steps a multiple of {}, or --epochs",
      c.checkpoint, per_epoch, c.eval_every, total_steps,
      first > 1 ? fmt::format(" (it continues from epoch {})", first - 1) : std::string(), per_epoch));
}

// --checkpoint: the run's state at the end of `epoch` (a whole one), written atomically.
void save_checkpoint(const SeqrecConfig& c, const SeqrecData& d, Training& t, const EarlyStopping& early,
                     const std::vector<EpochRow>& rows, int64_t epoch, int64_t steps) {
  SeqrecCheckpoint k;
  k.identity = checkpoint_identity(c, d.content_sha256);
  k.epoch = epoch;
  k.steps = steps;
  const ParameterSet& p = t.model.params();
  k.parameters.assign(p.values(), p.values() + p.size());
  k.optimizer = t.opt.state();
  k.best = early.best();
  k.since_best = early.since_best();
  k.epochs = rows;
  write_checkpoint(c.checkpoint, k, {c.dataset, c.out});
}

}  // namespace

namespace {

// The ranks' memory and communication, gathered on every rank (collective), rank order.
std::vector<RankRow> gather_ranks(GradientExchange& x, const SeqrecMemory& predicted, const SeqrecMemory& measured,
                                  int64_t rss_peak) {
  const ExchangeTotals& t = x.totals();
  const std::vector<int64_t> ints =
      x.gather(std::vector<int64_t>{predicted.total(), measured.total(), rss_peak, t.bytes_sent, t.bytes_received, t.collectives});
  const std::vector<double> seconds = x.gather(std::vector<double>{t.seconds});
  std::vector<RankRow> rows(size_t(x.ranks()));
  for (int r = 0; r < x.ranks(); ++r) {
    const int64_t* v = ints.data() + 6 * r;
    RankRow& row = rows[size_t(r)];
    row.rank = r;
    row.predicted_bytes = v[0];
    row.measured_bytes = v[1];
    row.rss_peak_bytes = v[2];
    row.comm_bytes_sent = v[3];
    row.comm_bytes_received = v[4];
    row.collectives = v[5];
    row.comm_s = seconds[size_t(r)];
  }
  return rows;
}

}  // namespace

namespace {

// Data-parallel: every rank's run the same, data included, or every rank refuses it naming the first
// setting that differs (sweep/rank_agreement.hpp). The sweep compared the options already; here the
// data, which one --dataset path can hold differently on two nodes.
void require_same_run(GradientExchange& x, const SeqrecConfig& c, const SeqrecData& d) {
  sweep::Settings s = training_settings(c, d.content_sha256);
  s.insert(s.end(), {{"--steps", std::to_string(c.steps)},
                     {"--epochs", std::to_string(c.epochs)},
                     {"--eval-every", std::to_string(c.eval_every)},
                     {"--early-stop", std::to_string(c.early_stop)},
                     {"--dry-run", c.dry_run ? "on" : "off"},
                     {"--resume-from", c.resume_from}});
  try {
    sweep::require_same_settings(x, s, "train-seqrec --data-parallel");
  } catch (const std::invalid_argument& e) {
    throw RunRefused(e.what());
  }
}

}  // namespace

// Long (about 110 lines) on purpose: a run is one sequence read top to bottom (plan and skip, the run
// file, the steps with their interruption, the epochs with their evaluation, the outcome), and its loop
// shares a dozen pieces of state (file, timing, batch, optimizer, the finish callback) that a split would
// pass around; the parts that stand alone are the helpers above (summarize, step_row, evaluate_into,
// gather_ranks, epoch_line).
SeqrecOutcome run_seqrec(const SeqrecConfig& c, const SeqrecData& d, const Provenance& prov, std::ostream& log,
                         std::ostream& progress, const ProgressContext& context, GradientExchange* exchange) {
  validate(c);
  if ((exchange ? exchange->ranks() : 1) != c.ranks) throw std::logic_error("run_seqrec: c.ranks is not the exchange's");
  const bool primary = !exchange || exchange->primary();  // evaluates, prints, writes the run file
  if (exchange) require_same_run(*exchange, c, d);  // first: before any other collective of the run
  if (exchange) exchange->reset_totals();
  SeqrecOutcome o;
  o.test_hit_at_8 = o.test_hr_at_10 = o.test_ndcg_at_10 = kNaN;
  Objective objective(c.variant, loss_options(c), c.seed, parse_loss_reduction(c.reduction), c.item_bias,
                      parse_negative_sampling(c.negatives));
  // A full-vocabulary loss's fp32 tiles through the products chosen for its width (D fixed for the run:
  // chosen once, D + 1 with the bias column), from before the prediction: the tiles' workspace depends on
  // them (lobench's own micro-kernels work on a transposed copy of the hidden states, the library's
  // products do not), and the prediction is what the steps will allocate.
  std::optional<meters::Fp32ProductsForD> products;
  if (c.variant != "sampled" && loss_options(c).operand_is_fp32()) products.emplace(c.item_bias ? c.D + 1 : c.D);
  const int64_t parameters = SasRec::parameter_count(model_config(c, d.V));
  o.predicted = predict_memory(c, d.V, objective, exchange ? exchange->sum_buffer_bytes(parameters) : 0);
  const std::vector<int64_t> eval_idx = eval_subset(d.split.test.count(), c.max_eval_users);
  // Planned before anything is sized by V: a point that will not train (skipped, predicted over
  // --mem-limit, --dry-run) allocates nothing V-sized, not even the popularity baseline's tables.
  // Data-parallel, every rank decides on the largest rank's prediction, so that all train or none.
  const int64_t planned = exchange ? exchange->largest(o.predicted.total()) : o.predicted.total();
  std::optional<std::pair<std::string, std::string>> not_training;  // status, reason
  if (auto why = objective.skip_reason(micro_batch_of(c) * c.N, d.V, c.D, c.L)) not_training.emplace("skipped", *why);
  // Each rank's own limit (its --mem-limit, or its memory available): over any one, all skip together.
  else if (const bool over = c.mem_limit > 0 && planned > c.mem_limit; exchange ? exchange->largest(over) != 0 : over)
    not_training.emplace("skipped", fmt::format("OOM predicted: {} ({} B{}) > limit {} ({} B)",
                                                format_bytes(double(planned)), planned, exchange ? " on the largest rank" : "",
                                                format_bytes(double(c.mem_limit)), c.mem_limit));
  else if (c.dry_run) not_training.emplace("dry_run", "");
  const data::TrainWindows& tw = d.split.train;
  const int64_t per_epoch = (tw.count() + c.B - 1) / c.B;
  const int64_t total_steps = c.steps > 0 ? c.steps : c.epochs * per_epoch;
  const int64_t epochs = (total_steps + per_epoch - 1) / per_epoch;
  std::optional<SeqrecCheckpoint> resumed;  // read and checked before the run file exists
  if (!c.resume_from.empty() && !not_training) resumed = checked_checkpoint(c, d, total_steps, parameters);
  if (!not_training) refuse_unwritten_checkpoint(c, resumed ? resumed->epoch + 1 : 1, epochs, per_epoch, total_steps);
  std::optional<WindowHistories> histories;  // before the run file: a refusal leaves no file
  if (!not_training && parse_negative_sampling(c.negatives) == NegativeSampling::history) histories = window_histories(d);
  std::unique_ptr<SeqrecRunFile> file;
  if (!c.out.empty() && primary)
    file = std::make_unique<SeqrecRunFile>(c.out, prov, c, summarize(c, d, eval_idx, !not_training), o.predicted,
                                           std::vector<std::string>{c.dataset});  // never written over its data
  if (file && context.place) file->set_place(*context.place);
  std::string parameters_hash;
  EarlyStopping early(c.early_stop, parse_selection_metric(c.select));
  int64_t stopped_at = 0;  // the epoch early stopping ended the run after
  auto finish = [&](const std::string& status, const std::string& reason, const SeqrecMemory* measured) {
    o.status = status;
    if (file && c.early_stop > 0) file->set_early_stopping(c.early_stop, early.best(), stopped_at);
    o.reason = reason;
    o.rss_peak_bytes = process_rss_peak_bytes();
    if (exchange && measured) {
      const std::vector<RankRow> ranks = gather_ranks(*exchange, o.predicted, *measured, o.rss_peak_bytes);
      if (file) file->set_ranks(exchange->library(), ranks);
    }
    if (file && status == "interrupted")
      o.earlier_file_kept = !file->close_interrupted(reason, o.steps, o.steps_per_s, o.rss_peak_bytes);
    else if (file)
      file->finish(status, reason, measured, o.steps, o.steps_per_s, o.rss_peak_bytes, parameters_hash);
    return o;
  };
  if (not_training) return finish(not_training->first, not_training->second, nullptr);
  // The kernel's peak RSS restarts here, so a run's "process RSS peak" is its own, not that of an
  // earlier point of the same sweep (a `dense` point before a `fused` one would otherwise lend it its
  // logits' peak).
  const meters::PeakRssMeter rss_since_here;

  if (products && file) file->set_products(meters::fp32_products_choice().products, meters::fp32_products_choice().basis);
  Training t(c, d.split.train, d.V, objective, exchange);
  std::vector<EpochRow> rows;  // the /epochs rows, for the checkpoint
  const int64_t first_epoch = resumed ? continue_from(*resumed, c, t, early, o, file.get(), rows) + 1 : 1;
  resumed.reset();
  const int64_t steps_before = o.steps;  // the checkpoint's: timed by the process that ran them
  BatchData batch;
  Timing timing;
  const auto t_start = std::chrono::steady_clock::now();
  for (int64_t epoch = first_epoch; epoch <= epochs && o.steps < total_steps; ++epoch) {
    const std::vector<int64_t> order = shuffled(tw.count(), c.seed, epoch);
    const auto t_epoch = std::chrono::steady_clock::now();
    EpochRow er;
    double loss_sum = 0;
    for (int64_t first = 0; first < tw.count() && o.steps < total_steps; first += c.B) {
      const int64_t n = gather(tw, order, first, c.B, batch, histories ? &*histories : nullptr);
      const int64_t step = ++o.steps;
      const StepRecord r = t.step.run(batch.view(n, c.L), uint64_t(step), &t.opt);
      loss_sum += r.loss;
      if (step > steps_before + 1) timing.add(r);
      if (file) file->append_step(step_row(r, step, epoch, n, t.opt.lr_at(step), objective.full_vocabulary()));
      // A signal stops the run between steps, the steps done kept (io/interrupt_guard.hpp); data-parallel,
      // every rank stops at the same step (a signal any rank saw).
      int sig = io::interrupt_signal();
      if (exchange) sig = int(exchange->largest(sig));
      if (sig && o.steps < total_steps) {
        if (c.progress && primary) progress << "\n";
        return finish("interrupted", fmt::format("{} after {} of {} steps", io::signal_name(sig), o.steps, total_steps),
                      nullptr);
      }
      if (c.progress && primary) {
        const double per_step = seconds_since(t_start) / double(step - steps_before);  // this process's steps
        const std::string sweep_eta =
            context.later_steps > 0 ? ", sweep " + eta(per_step * double(total_steps - step + context.later_steps)) : "";
        progress << fmt::format("\r[train-seqrec {}] step {}/{} epoch {}/{} loss {:.6g} {:.3g} s/step ETA {}{}   ",
                                context.label.empty() ? c.variant : context.label, step, total_steps, epoch, epochs,
                                r.loss, r.total_s(), eta(per_step * double(total_steps - step)), sweep_eta)
                 << std::flush;
      }
    }
    er.epoch = epoch;
    er.steps = o.steps;
    er.train_loss = loss_sum / double(std::max<int64_t>(1, o.steps - (epoch - 1) * per_epoch));
    er.epoch_s = seconds_since(t_epoch);
    er.dev_hit_at_8 = er.dev_hr_at_10 = er.dev_ndcg_at_10 = er.dev_ndcg_at_20 = kNaN;
    er.test_hit_at_8 = er.test_hr_at_10 = er.test_ndcg_at_10 = er.test_ndcg_at_20 = kNaN;
    const bool last = epoch == epochs || o.steps >= total_steps;
    const bool evaluated = c.eval_every >= 0 && (last || (c.eval_every > 0 && epoch % c.eval_every == 0));
    // Rank 0 alone evaluates (every rank holds the same model); the others wait at the next step's sum.
    if (primary && evaluated) evaluate_into(er, o, t, c, d, eval_idx);
    rows.push_back(er);
    if (file) file->append_epoch(er);
    if (c.progress && primary) progress << "\n";
    if (primary && c.epoch_lines) log << epoch_line(c.variant, er) << std::flush;
    // Early stopping decides on rank 0's evaluation; data-parallel, every rank learns it (collective).
    bool stop = early.observe(er);
    if (exchange && c.early_stop > 0 && evaluated) stop = exchange->largest(int64_t(stop)) != 0;
    if (primary && !c.checkpoint.empty() && evaluated && o.steps == epoch * per_epoch)
      save_checkpoint(c, d, t, early, rows, epoch, o.steps);
    if (stop && !last) {
      stopped_at = epoch;
      break;
    }
  }
  if (primary && c.early_stop > 0 && early.has_best())
    log << fmt::format("best dev epoch {} (dev {} {:.4f}): test HR@10 {:.4f} NDCG@10 {:.4f}{}\n", early.best().epoch,
                       c.select, dev_value(early.best(), early.metric()), early.best().test_hr_at_10,
                       early.best().test_ndcg_at_10,
                       stopped_at ? fmt::format(", stopped after epoch {} (patience {} evaluations)", stopped_at,
                                                c.early_stop)
                                  : std::string())
        << std::flush;
  o.steps_this_process = o.steps - steps_before;
  const double k = double(std::max<int64_t>(1, timing.steps));
  o.steps_per_s = timing.total > 0 ? double(timing.steps) / timing.total : kNaN;
  o.mean_forward_s = timing.forward / k;
  o.mean_loss_s = timing.loss / k;
  o.mean_backward_s = timing.backward / k;
  o.mean_optimizer_s = timing.optimizer / k;
  o.mean_comm_s = timing.comm / k;
  o.measured = t.measured(objective);
  parameters_hash = fnv1a_hex(t.model.params().values(), t.model.params().size() * int64_t(sizeof(float)));
  if (t.alloc.peak_bytes() != t.alloc.current_bytes())
    return finish("failed", "the model allocated during training (peak above its up-front buffers)", &o.measured);
  return finish("ok",
                stopped_at ? fmt::format("early stop after epoch {}: {} evaluations without a dev {} above epoch {}'s",
                                         stopped_at, c.early_stop, c.select, early.best().epoch)
                           : std::string(),
                &o.measured);
}

}  // namespace lobench::seqrec
