#include "harness/seqrec/seqrec_sweep.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "datasets/public_datasets.hpp"
#include "datasets/seqrec.hpp"
#include "datasets/synthetic_seqrec.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/recorded_run.hpp"
#include "harness/sweep/run_folder_sweep.hpp"
#include "harness/sweep/rank_agreement.hpp"
#include "harness/seqrec/seqrec_checkpoint.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/seqrec_memory.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/system_memory.hpp"
#include "variants/operand.hpp"

namespace lobench::seqrec {

namespace fs = std::filesystem;

namespace {

std::string sanitize(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) c = '-';
  return s;
}

bool is_synthetic(const std::string& dataset) { return dataset.rfind("synthetic:", 0) == 0; }

// synthetic:yambda -> "yambda"; ../shared/datasets/seqrec/LastFM.txt -> "LastFM".
std::string dataset_stem(const std::string& dataset) {
  const std::string s = is_synthetic(dataset) ? dataset.substr(10) : fs::path(dataset).stem().string();
  return sanitize(s.empty() ? "data" : s);
}

bool parse_model(const std::string& model) {
  if (model == "sasrec") return true;
  if (model == "sasrec_untied") return false;
  throw std::invalid_argument("--model: '" + model + "' is not a model (valid: sasrec (tied output table), sasrec_untied)");
}

bool parse_output_bias(const std::string& v) {
  if (v == "none") return false;
  if (v == "item") return true;
  throw std::invalid_argument("--output-bias: '" + v + "' is not an output bias (valid: none (SASRec's), item)");
}

int64_t non_negative(const sweep::AxisPoint& a, const char* axis) {
  const int64_t v = a.int_at(axis);
  if (v < 0) throw std::invalid_argument(fmt::format("--{}: {} is negative", axis, v));
  return v;
}

// The vocabulary (items + padding) of a dataset, without generating synthetic data: what the memory
// prediction of every point needs before anything runs. A file is read (the sequence files are small).
int64_t vocabulary_of(const SeqrecConfig& c) {
  if (c.dataset == "synthetic:yambda") return int64_t(data::yambda_like(c.syn_scale, c.data_seed).items) + 1;
  if (is_synthetic(c.dataset))
    throw std::invalid_argument("unknown synthetic dataset '" + c.dataset + "' (valid: synthetic:yambda)");
  io::require_input_file(c.dataset, "--dataset");
  return int64_t(data::read_sequences(c.dataset).num_items) + 1;
}

std::string summary(const std::string& head, const SeqrecConfig& c, const SeqrecOutcome& o) {
  const auto mib = [](int64_t b) { return double(b) / (1024.0 * 1024.0); };
  const SeqrecMemory& p = o.predicted;
  std::string s = fmt::format("{} {}: {}{} -> {}\n", head, c.variant, o.status, o.reason.empty() ? "" : " (" + o.reason + ")",
                              c.out);
  s += fmt::format("  predicted MiB: parameters {:.1f}  gradients {:.1f}  optimizer {:.1f}  activations {:.1f}  loss workspace "
                   "{:.1f}  loss outputs {:.1f}  gradient sums {:.1f}  total {:.1f}\n",
                   mib(p.parameters), mib(p.gradients), mib(p.optimizer_state), mib(p.activations), mib(p.loss_workspace),
                   mib(p.loss_outputs), mib(p.gradient_sums), mib(p.total()));
  if (o.status != "ok") return s;
  const SeqrecMemory& m = o.measured;
  s += fmt::format("  measured  MiB: parameters {:.1f}  gradients {:.1f}  optimizer {:.1f}  activations {:.1f}  loss workspace "
                   "{:.1f}  loss outputs {:.1f}  gradient sums {:.1f}  total {:.1f}  (process RSS peak {:.1f}{})\n",
                   mib(m.parameters), mib(m.gradients), mib(m.optimizer_state), mib(m.activations), mib(m.loss_workspace),
                   mib(m.loss_outputs), mib(m.gradient_sums), mib(m.total()), mib(o.rss_peak_bytes),
                   c.ranks > 1 ? fmt::format(", rank 0 of {}", c.ranks) : std::string());
  // After --resume-from, the speed is this process's: its steps, not the checkpoint's.
  const std::string steps = o.steps_this_process == o.steps
                                ? fmt::format("{} steps", o.steps)
                                : fmt::format("{} steps ({} in this process, after the checkpoint's {})", o.steps,
                                              o.steps_this_process, o.steps - o.steps_this_process);
  s += fmt::format("  {}, {:.4g} steps/s; mean s: forward {:.4g}  loss {:.4g}  backward {:.4g}  optimizer {:.4g}{}\n",
                   steps, o.steps_per_s, o.mean_forward_s, o.mean_loss_s, o.mean_backward_s, o.mean_optimizer_s,
                   c.ranks > 1 ? fmt::format("  communication {:.4g}", o.mean_comm_s) : std::string());
  s += fmt::format("  test Hit@8 {:.4f}  HR@10 {:.4f}  NDCG@10 {:.4f}\n", o.test_hit_at_8, o.test_hr_at_10, o.test_ndcg_at_10);
  return s;
}

// The data a point trains on is fixed by these (the protocol, scale and data seed are not axes).
using DataKey = std::tuple<std::string, int64_t, int64_t>;
DataKey data_key(const SeqrecConfig& c) { return {c.dataset, c.L, c.N}; }

// What would otherwise fail only once the sweep has trained for hours, or destroy an input: a folder
// of OUT that is a file, OUT naming the dataset itself (same path, hard link or symlink), and another
// lobench writing OUT now (its lock is taken for a moment here; the run file takes it for the run).
void check_run_file_place(const SeqrecConfig& c, const std::string& option) {
  std::error_code ec;
  for (fs::path up = fs::path(c.out).parent_path(); !up.empty(); up = up.parent_path()) {
    const fs::file_status st = fs::status(up, ec);
    if (fs::exists(st) && !fs::is_directory(st))
      throw io::PathError(fmt::format("{} '{}': '{}' is a file, not a folder; nothing was written", option, c.out,
                                      up.string()));
    if (up == up.parent_path()) break;
  }
  if (fs::is_symlink(fs::symlink_status(c.out, ec)) && !fs::exists(c.out, ec))
    throw io::PathError(fmt::format("{} '{}': is a symlink to nothing; refusing to replace it", option, c.out));
  if (!is_synthetic(c.dataset) && fs::exists(c.out, ec) && fs::equivalent(c.out, c.dataset, ec))
    throw io::PathError(fmt::format("{} '{}' is the --dataset file '{}'; refusing to overwrite the input", option, c.out,
                                    c.dataset));
  const fs::path folder = fs::path(c.out).parent_path();
  if (folder.empty() || fs::is_directory(folder, ec)) {
    const io::OutputLock probe(c.out, option);  // released at once
  }
}

}  // namespace

sweep::Axes seqrec_axes() {
  using sweep::AxisKind;
  const SeqrecConfig d;
  sweep::Axes a;
  a.add("dataset", AxisKind::text, {d.dataset},
        "a public set (beauty, sports, toys, lastfm: DIR/seqrec/NAME.txt under --data-dir, checked against its "
        "published size and SHA-256, docs/data.md), a sequence file (USER ITEM ITEM ...), or synthetic:yambda");
  a.add("L", AxisKind::integer, {std::to_string(d.L)}, "targets per position (next L items)");
  a.add("N", AxisKind::integer, {std::to_string(d.N)}, "window length");
  a.add("B", AxisKind::integer, {std::to_string(d.B)}, "windows per step");
  a.add("D", AxisKind::integer, {std::to_string(d.D)}, "model width");
  a.add("layers", AxisKind::integer, {std::to_string(d.layers)}, "transformer blocks");
  a.add("heads", AxisKind::integer, {std::to_string(d.heads)}, "attention heads");
  a.add("model", AxisKind::text, {"sasrec"},
        "sasrec (output table tied to the item embeddings) | sasrec_untied (a separate output table)");
  a.add("output-bias", AxisKind::text, {"none"},
        "none (SASRec's logits h·o) | item (h·o + b_v: a learned per-item bias, initialised at each item's best "
        "constant logit; full-vocabulary variants only)");
  a.add("steps", AxisKind::integer, {std::to_string(d.steps)}, "stop after this many steps (0: --epochs)");
  a.add("epochs", AxisKind::integer, {std::to_string(d.epochs)}, "epochs over the training windows");
  a.add("variant", AxisKind::text, {d.variant}, "loss: dense | chunked | fused | sampled");
  a.add("operand", AxisKind::text, {d.operand},
        "precision of the loss's products' operands: fp32 | bf16 (the command's help: the shared table)");
  a.add("reduction", AxisKind::text, {d.reduction},
        "full-vocabulary loss reduction: mean (the paper's: mean over positions and V) | sum | mean_positions "
        "(mean over positions of the sum over V)");
  a.add("seed", AxisKind::integer, {std::to_string(d.seed)}, "seed of init, dropout, shuffling and negatives");
  return a;
}

std::vector<SeqrecSweepPoint> expand_seqrec_sweep(const SeqrecSweepSpec& spec) {
  if (spec.out.empty() == spec.out_dir.empty())
    throw std::invalid_argument("train-seqrec: give --out FILE (one run) or --out-dir DIR (one run file per point), not " +
                                std::string(spec.out.empty() ? "neither" : "both"));
  const sweep::Axes& axes = spec.axes;
  if (!spec.out.empty() && axes.size() > 1)
    throw std::invalid_argument(fmt::format(
        "train-seqrec: --out names one run file but the sweep has {} points (swept: {}); give --out-dir DIR", axes.size(),
        fmt::format("{}", fmt::join(axes.swept(), ", "))));
  auto swept = [&](const char* axis) { return axes.values(axis).size() > 1; };
  std::vector<SeqrecSweepPoint> out;
  for (const sweep::AxisPoint& a : axes.expand()) {
    SeqrecSweepPoint p;
    SeqrecConfig& c = p.config;
    c = spec.base;
    c.dataset = a.at("dataset");
    c.L = a.int_at("L");
    c.N = a.int_at("N");
    c.B = a.int_at("B");
    c.D = a.int_at("D");
    c.layers = a.int_at("layers");
    c.heads = a.int_at("heads");
    c.tied = parse_model(a.at("model"));
    c.item_bias = parse_output_bias(a.at("output-bias"));
    c.steps = non_negative(a, "steps");
    c.epochs = a.int_at("epochs");
    c.variant = a.at("variant");
    try {  // canonical names (bfloat16 -> bf16): one operand, one file name
      c.operand = to_string(parse_operand(a.at("operand")));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("train-seqrec: --operand: ") + e.what());
    }
    c.reduction = a.at("reduction");
    c.seed = uint64_t(non_negative(a, "seed"));
    std::string n = dataset_stem(c.dataset);
    if (swept("L")) n += fmt::format("_L{}", c.L);
    if (swept("N")) n += fmt::format("_N{}", c.N);
    if (swept("B")) n += fmt::format("_B{}", c.B);
    if (swept("D")) n += fmt::format("_D{}", c.D);
    if (swept("layers")) n += fmt::format("_layers{}", c.layers);
    if (swept("heads")) n += fmt::format("_heads{}", c.heads);
    if (swept("model") || !c.tied) n += c.tied ? "_tied" : "_untied";
    if (swept("output-bias") || c.item_bias) n += c.item_bias ? "_itembias" : "_nobias";
    if (swept("steps")) n += fmt::format("_steps{}", c.steps);
    if (swept("epochs")) n += fmt::format("_epochs{}", c.epochs);
    if (swept("reduction") || c.reduction != SeqrecConfig{}.reduction) n += "_" + c.reduction;
    if (swept("operand") || c.operand != SeqrecConfig{}.operand) n += "_op-" + c.operand;
    n += fmt::format("_{}_s{}", c.variant, c.seed);
    p.name = sanitize(n);
    p.describe = a.describe();
    c.out = spec.out.empty() ? (fs::path(spec.out_dir) / (p.name + ".h5")).string() : spec.out;
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// --checkpoint and --resume-from name one run's files: a single-point run (--out). What would otherwise
// be found only after the first epoch (or never) is refused here, before anything runs: a --resume-from
// that is no complete checkpoint (empty, truncated, another file; its data and settings are checked
// against the run's once the data is loaded: seqrec_runner.cpp), and a --checkpoint that is the --out run
// file or the data (under any name), a symlink to nothing, in a folder that does not exist, or there
// already (unless --overwrite, or it is the checkpoint being continued).
void check_checkpoint_paths(const SeqrecSweepSpec& spec, const SeqrecConfig& c) {
  for (const auto& [option, path] : {std::pair{"--checkpoint", &c.checkpoint}, std::pair{"--resume-from", &c.resume_from}})
    if (!path->empty() && spec.out.empty())
      throw std::invalid_argument(fmt::format("train-seqrec: {} names one run's file: give --out FILE (one run), not "
                                              "--out-dir",
                                              option));
  if (!c.resume_from.empty()) read_checkpoint(c.resume_from, "--resume-from", /*with_state=*/false);
  if (c.checkpoint.empty()) return;
  // The same file under two names, or one path spelled two ways before the file exists (./out.h5, out.h5).
  const auto same_place = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    const auto canonical = [&ec](const std::string& p) {
      const fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);  // "o.h5" alone stays relative
      return ec ? fs::path(p) : r;
    };
    return canonical(a) == canonical(b) || fs::equivalent(a, b, ec);
  };
  std::error_code ec;
  if (same_place(c.checkpoint, c.out))
    throw io::PathError(fmt::format("--checkpoint '{}' is the --out run file '{}'; give the checkpoint a path of its own",
                                    c.checkpoint, c.out));
  if (!is_synthetic(c.dataset) && same_place(c.checkpoint, c.dataset))
    throw io::PathError(fmt::format("--checkpoint '{}' is the --dataset file '{}'; refusing to overwrite the input",
                                    c.checkpoint, c.dataset));
  io::check_output_place(c.checkpoint, {}, "--checkpoint");
  const bool continued = !c.resume_from.empty() && fs::equivalent(c.checkpoint, c.resume_from, ec);
  if (fs::exists(c.checkpoint, ec) && !continued && !spec.overwrite)
    throw io::PathError(fmt::format("--checkpoint '{}' exists (give --overwrite to replace it, or --resume-from it to "
                                    "continue it; nothing was written)",
                                    c.checkpoint));
}

}  // namespace

std::map<std::string, int64_t> check_seqrec_sweep(const SeqrecSweepSpec& spec,
                                                  const std::vector<SeqrecSweepPoint>& points, bool check_outputs) {
  std::map<std::string, int64_t> vocabulary;  // by dataset
  std::set<std::string> paths;
  if (check_outputs && !spec.out_dir.empty()) {
    std::error_code ec;
    if (fs::exists(spec.out_dir, ec) && !fs::is_directory(spec.out_dir, ec))
      throw io::PathError(fmt::format("--out-dir '{}' exists and is not a folder", spec.out_dir));
  }
  for (const SeqrecSweepPoint& p : points) {
    const SeqrecConfig& c = p.config;
    try {
      validate(c);
      auto v = vocabulary.find(c.dataset);
      if (v == vocabulary.end()) v = vocabulary.emplace(c.dataset, vocabulary_of(c)).first;
      const Objective objective(c.variant, loss_options(c), c.seed, parse_loss_reduction(c.reduction), c.item_bias);  // unknown variant: throws
      predict_memory(c, v->second, objective);           // the model's shape checks, overflow-checked sizes
    } catch (const io::PathError&) {
      throw;
    } catch (const std::exception& e) {
      throw std::invalid_argument(points.size() > 1 ? fmt::format("{} ({}): {}", p.name, p.describe, e.what()) : e.what());
    }
    if (!check_outputs) continue;
    const std::string option = spec.out.empty() ? "--out-dir" : "--out";
    if (!paths.insert(c.out).second)
      throw io::PathError(fmt::format("{}: two points would write the same run file '{}' (datasets with the same file "
                                      "name?)",
                                      option, c.out));
    if (const std::string what = io::not_regular_file(c.out); !what.empty())
      throw io::PathError(fmt::format("{} '{}': {} is there, not a run file", option, c.out, what));
    std::error_code ec;
    if (spec.resume && fs::exists(c.out, ec))  // this sweep's run file is continued; another sweep's is refused
      io::recorded_run(c.out, seqrec_run_files().schema_prefix(), seqrec_sweep_identity(spec));
    else if (!spec.overwrite && fs::exists(c.out, ec))
      throw io::PathError(fmt::format("{}: the run file '{}' exists (give --overwrite to replace it, or --resume to "
                                      "continue the sweep; nothing was written)",
                                      option, c.out));
    check_run_file_place(c, option);
    check_checkpoint_paths(spec, c);
  }
  return vocabulary;
}

namespace {

// The steps of the points after `i`, for the sweep's ETA: exact for points that give --steps, else
// their epochs times the per-epoch steps of the data in hand (exact when they share it).
int64_t later_steps(const std::vector<SeqrecSweepPoint>& points, size_t i, const SeqrecData& d) {
  int64_t n = 0;
  for (size_t j = i + 1; j < points.size(); ++j) {
    const SeqrecConfig& c = points[j].config;
    if (c.dry_run) continue;
    n += c.steps > 0 ? c.steps : c.epochs * ((d.split.train.count() + c.B - 1) / c.B);
  }
  return n;
}

}  // namespace

void resolve_seqrec_datasets(const SeqrecSweepSpec& spec, std::vector<SeqrecSweepPoint>& points) {
  std::map<std::string, std::string> resolved;  // given value -> file (each public set located once)
  for (SeqrecSweepPoint& p : points) {
    std::string& dataset = p.config.dataset;
    if (is_synthetic(dataset)) continue;
    auto r = resolved.find(dataset);
    if (r == resolved.end()) {
      std::string file = dataset;
      std::error_code ec;
      if (const data::PublicDataset* pub = data::find_public_dataset("seqrec", dataset); pub && !fs::exists(dataset, ec)) {
        file = data::locate_public_dataset(*pub, spec.data_dir, spec.verify).front().string();
      } else if (!fs::exists(dataset, ec)) {
        throw std::runtime_error(fmt::format("--dataset {}: no such file, and not a public set ({}; docs/data.md) or "
                                             "synthetic:yambda",
                                             dataset, data::public_dataset_names("seqrec")));
      }
      r = resolved.emplace(dataset, file).first;
    }
    dataset = r->second;
  }
}

namespace {
// --block, --adam-beta2, --select, --negatives, each only when not its default, so that the sweeps made
// before these options keep their identity (--resume).
std::string reference_settings_identity(const SeqrecConfig& b) {
  const SeqrecConfig defaults;
  std::string out;
  if (b.block != defaults.block) out += fmt::format("; block={}", b.block);
  if (b.adam_beta2 != defaults.adam_beta2) out += fmt::format("; adam-beta2={}", b.adam_beta2);
  if (b.select != defaults.select) out += fmt::format("; select={}", b.select);
  if (b.negatives != defaults.negatives) out += fmt::format("; negatives={}", b.negatives);
  return out;
}
}  // namespace

std::string seqrec_sweep_identity(const SeqrecSweepSpec& spec) {
  std::string axes;
  for (const auto& name : spec.axes.names())
    axes += fmt::format("{}={}; ", name, fmt::join(spec.axes.values(name), ","));
  const SeqrecConfig& b = spec.base;
  return fmt::format("{}syn-scale={}; data-seed={}; protocol={}; dropout={}; block-v={}; lr={}; weight-decay={}; "
                     "adam-eps={}; warmup-steps={}; opt-precision={}; eval-every={}; max-eval-users={}; "
                     "exclude-history={}{}{}{}",
                     axes, b.syn_scale, b.data_seed, b.protocol, b.dropout, b.block_v, b.lr, b.weight_decay, b.adam_eps,
                     b.warmup_steps, b.optimizer_precision, b.eval_every, b.max_eval_users, int(b.exclude_history),
                     // only when given, so that the sweeps made before the option keep their identity (--resume)
                     b.micro_batch > 0 ? fmt::format("; micro-batch={}", b.micro_batch) : std::string(),
                     b.early_stop > 0 ? fmt::format("; early-stop={}", b.early_stop) : std::string(),
                     reference_settings_identity(b));
}

namespace {

// What every rank of a data-parallel sweep must be given alike: each axis with its values and every other
// option that decides what is trained, how long, or which collectives run (the data's content is compared
// per run, seqrec_runner.cpp, so --data-dir may differ by node). Not: --out, --out-dir, --overwrite,
// --checkpoint (rank 0's files), --threads, --quiet, --mem-limit (each rank's own; over any rank's, every
// rank skips the run).
sweep::Settings rank_settings(const SeqrecSweepSpec& spec) {
  sweep::Settings s;
  for (const auto& name : spec.axes.names())
    s.push_back({"--" + name, fmt::format("{}", fmt::join(spec.axes.values(name), ","))});
  const SeqrecConfig& b = spec.base;
  const auto text = [](const auto& v) { return fmt::format("{}", v); };
  s.insert(s.end(), {{"--syn-scale", text(b.syn_scale)},
                     {"--data-seed", text(b.data_seed)},
                     {"--protocol", b.protocol},
                     {"--dropout", text(b.dropout)},
                     {"--block-v", text(b.block_v)},
                     {"--lr", text(b.lr)},
                     {"--weight-decay", text(b.weight_decay)},
                     {"--adam-eps", text(b.adam_eps)},
                     {"--adam-beta2", text(b.adam_beta2)},
                     {"--block", b.block},
                     {"--select", b.select},
                     {"--negatives", b.negatives},
                     {"--warmup-steps", text(b.warmup_steps)},
                     {"--opt-precision", b.optimizer_precision},
                     {"--micro-batch", text(b.micro_batch)},
                     {"--eval-every", text(b.eval_every)},
                     {"--early-stop", text(b.early_stop)},
                     {"--max-eval-users", text(b.max_eval_users)},
                     {"--exclude-history", b.exclude_history ? "on" : "off"},
                     {"--dry-run", b.dry_run ? "on" : "off"},
                     {"--resume-from", b.resume_from},
                     {"--partition", spec.partition.str()}});
  return s;
}

// What a data-parallel run's other ranks print to: a stream without a buffer, which drops everything.
std::ostream& discard() {
  static std::ostream sink(nullptr);
  return sink;
}

// `lobench train-seqrec` as a training job's sweep (sweep/run_folder_sweep.hpp: the one driver, a run
// file per point, key: its file name, kept by --resume when finished). Every point of the partition is
// validated and its path checked in plan(), before anything is written.
class SeqrecSweepJob : public sweep::RunFolderSweep {
 public:
  SeqrecSweepJob(const SeqrecSweepSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err)
      : RunFolderSweep({&seqrec_run_files(), spec.out_dir, seqrec_sweep_identity(spec), spec.partition}),
        spec_(spec), prov_(prov), x_(spec.exchange), primary_(!x_ || x_->primary()), out_(primary_ ? out : discard()),
        err_(primary_ ? err : discard()), points_(expand_seqrec_sweep(spec)) {}

  int64_t size() const override { return int64_t(points_.size()); }

  std::vector<sweep::PlannedPoint> plan(const std::vector<int64_t>& indices) override {
    // Data-parallel: the ranks' options first, before any other collective (rank_agreement.hpp).
    if (x_) sweep::require_same_settings(*x_, rank_settings(spec_), "train-seqrec --data-parallel");
    for (int64_t i : indices) mine_.push_back(points_[size_t(i)]);
    std::map<std::string, int64_t> vocabulary;
    std::string error;  // data-parallel: every rank learns any rank's refusal (exit status 2 on all)
    try {
      resolve_seqrec_datasets(spec_, mine_);
      vocabulary = check_seqrec_sweep(spec_, mine_, primary_);
    } catch (const std::exception& e) {
      if (!x_) throw;
      error = e.what();
    }
    if (x_) x_->check(error);
    std::vector<sweep::PlannedPoint> planned;
    for (size_t j = 0; j < mine_.size(); ++j) {
      const SeqrecConfig& c = mine_[j].config;
      // The ETA's unit: steps (or epochs) x the output layer's B·N·D·V.
      const double steps = double(c.steps > 0 ? c.steps : c.epochs);
      planned.push_back({indices[j], mine_[j].name,
                         c.dry_run ? 0.0 : steps * double(c.B * c.N * c.D) * double(vocabulary.at(c.dataset))});
      slot_[indices[j]] = j;
    }
    return planned;
  }

  sweep::PointStatus execute(const sweep::PlannedPoint& point) override {
    const size_t j = slot_.at(point.index);
    const SeqrecSweepPoint& p = mine_[j];
    const SeqrecConfig& c = p.config;
    if (!data_ || data_key(c) != loaded_) {
      data_.reset();  // one dataset in memory at a time
      try {
        data_ = load_seqrec_data(c);
      } catch (const std::exception& e) {
        if (x_) x_->abort_all(e.what());  // a file one rank cannot read: the others would wait for it
        throw;
      }
      loaded_ = data_key(c);
    }
    const SweepPlace place = this->place(point.index);
    ProgressContext context;
    context.label = fmt::format("{}/{} {}", point.index + 1, points_.size(), p.name);
    context.later_steps = later_steps(mine_, j, *data_);
    context.place = &place;
    const std::string head = fmt::format("[{}/{}] {}", point.index + 1, points_.size(), p.name);
    try {
      if (x_) return execute_ranked(c, head, context);
      const SeqrecOutcome o = run_seqrec(c, *data_, prov_, out_, err_, context);
      out_ << summary(head, c, o) << std::flush;
      if (o.status == "interrupted") return note_interrupted(c, o);
      return o.status == "ok" ? sweep::PointStatus::ok
             : o.status == "failed" ? sweep::PointStatus::failed : sweep::PointStatus::skipped;
    } catch (const RunRefused&) {
      throw;  // refused for what it was given, before writing anything: the command's exit status 2
    } catch (const std::exception& e) {
      // Everything else a point can be refused for was checked in plan(): what is left is a failure
      // while training (memory, I/O); the sweep records it and goes on with the next point.
      out_ << fmt::format("{}: FAILED: {}\n", head, e.what()) << std::flush;
      return sweep::PointStatus::failed;
    }
  }

  // One data-parallel run on this rank: a failure every rank shares (RankFailure from a checkpoint) is
  // recorded and the sweep goes on; one only this rank sees ends every rank (the others may be waiting
  // for it inside a collective).
  sweep::PointStatus execute_ranked(const SeqrecConfig& c, const std::string& head, const ProgressContext& context) {
    try {
      const SeqrecOutcome o = run_seqrec(c, *data_, prov_, out_, err_, context, x_);
      out_ << summary(head, c, o) << std::flush;
      if (o.status == "interrupted") return note_interrupted(c, o);
      return o.status == "ok" ? sweep::PointStatus::ok
             : o.status == "failed" ? sweep::PointStatus::failed : sweep::PointStatus::skipped;
    } catch (const RunRefused&) {
      throw;  // every rank refuses alike (the same options and data, agreed on first): exit status 2 on all
    } catch (const std::exception& e) {
      if (!x_->shared_failure(e)) x_->abort_all(e.what());
      out_ << fmt::format("{}: FAILED: {}\n", head, e.what()) << std::flush;
      return sweep::PointStatus::failed;
    }
  }

  std::string stopped_detail(const sweep::DriveResult& r) const override {
    // (--overwrite, the earlier file kept: --resume would take that file for the run, finished, and refuses
    // --overwrite; running the command again replaces it)
    return fmt::format("{} of {} runs finished{}; {}{}", r.finished(), r.points, interrupted_note_,
                       earlier_file_kept_ ? "run the same command again to replace it" : "continue with the same command and --resume",
                       resume_from_.empty() ? "" : (earlier_file_kept_ ? ", with" : "") + resume_from_);
  }

  std::string describe(int64_t index) const override {
    const SeqrecSweepPoint& p = points_[size_t(index)];
    return fmt::format("{}  ({})", p.name, p.describe);
  }

 protected:
  // The point's --out: OUT_DIR/NAME.h5, or the single point's own --out.
  std::string run_path(const sweep::PlannedPoint& p) const override { return mine_[slot_.at(p.index)].config.out; }

 private:
  const SeqrecSweepSpec& spec_;
  const Provenance& prov_;
  GradientExchange* const x_;  // data-parallel: this rank's exchange
  const bool primary_;         // prints and writes
  std::ostream& out_;
  std::ostream& err_;
  const std::vector<SeqrecSweepPoint> points_;  // the whole sweep
  std::vector<SeqrecSweepPoint> mine_;  // this partition's, datasets resolved
  std::map<int64_t, size_t> slot_;      // a point's index in the sweep -> mine_
  std::optional<SeqrecData> data_;
  DataKey loaded_;
  std::string interrupted_note_;  // what became of the run a signal stopped
  std::string resume_from_;       // " --resume-from CHECKPOINT" where that run left a checkpoint
  bool earlier_file_kept_ = false;  // that run was to replace a file (--overwrite), which is kept

  // What became of the run a signal stopped, for stopped_detail: its file (or the earlier one --overwrite
  // was to replace, kept as it was), and the checkpoint it left, which a rerun must continue from
  // (--checkpoint refuses a file already there otherwise).
  sweep::PointStatus note_interrupted(const SeqrecConfig& c, const SeqrecOutcome& o) {
    if (!primary_) {  // (data-parallel: rank 0 alone has the file and says what became of it)
      interrupted_note_ = fmt::format(" (the run in progress stopped, {}; rank 0 says what became of '{}')", o.reason, c.out);
      return sweep::PointStatus::interrupted;
    }
    interrupted_note_ =
        o.earlier_file_kept
            ? fmt::format(" (the run in progress stopped, {}; '{}' already existed and is kept as it was)", o.reason, c.out)
            : fmt::format(" (the run in progress stopped: '{}', status interrupted, {})", c.out, o.reason);
    earlier_file_kept_ = o.earlier_file_kept;
    std::error_code ec;
    if (!c.checkpoint.empty() && fs::exists(c.checkpoint, ec)) resume_from_ = " --resume-from " + c.checkpoint;
    return sweep::PointStatus::interrupted;
  }
};

}  // namespace

void list_seqrec_sweep(const SeqrecSweepSpec& spec, std::ostream& out) {
  sweep::list_runs<SeqrecSweepJob>(spec, out);
}

int run_seqrec_sweep(const SeqrecSweepSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err) {
  sweep::refuse_with_resume(spec.resume, {{"--overwrite", spec.overwrite}, {"--dry-run", spec.base.dry_run}});
  if (spec.exchange && spec.resume)  // the ranks would each read the run files to decide what is left
    throw std::invalid_argument("train-seqrec: --resume does not take --data-parallel");
  SeqrecSweepJob job(spec, prov, out, err);
  sweep::DriveSettings d;
  d.partition = spec.partition;
  d.resume = spec.resume;
  d.progress = spec.progress_lines && (!spec.exchange || spec.exchange->primary()) ? &err : nullptr;
  d.unit = "runs";
  if (spec.exchange) d.agree_on_signal = [&spec](int64_t signal) { return spec.exchange->largest(signal); };
  return int(sweep::drive(job, d).failed);
}

}  // namespace lobench::seqrec
