#include "harness/train/xmc_sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "datasets/arff.hpp"
#include "datasets/public_datasets.hpp"
#include "datasets/synthetic_xmc.hpp"
#include "datasets/xc_format.hpp"
#include "datasets/xmc_presets.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/recorded_run.hpp"
#include "harness/sweep/run_folder_sweep.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/sweep/driver.hpp"
#include "harness/train/memory_layouts.hpp"
#include "harness/train/run_file.hpp"
#include "harness/train/sharded_training.hpp"
#include "harness/sweep/sharded_rows.hpp"
#include "harness/system_memory.hpp"
#include "variants/checked_math.hpp"
#include "variants/cpu/bf16_products.hpp"

namespace lobench::train {

namespace fs = std::filesystem;

namespace {

std::string fmt_pct(double x) { return std::isfinite(x) ? fmt::format("{:.2f} %", 100.0 * x) : "n/a"; }

std::string sanitize(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) c = '-';
  return s;
}

std::string dataset_stem(const std::string& dataset) {
  const auto colon = dataset.find(':');
  std::string s = colon == std::string::npos ? dataset : dataset.substr(colon + 1);
  if (dataset.rfind("xc:", 0) == 0) s = fs::path(s.substr(0, s.find(','))).parent_path().filename().string();
  else if (dataset.rfind("mulan:", 0) == 0) s = fs::path(s).filename().string();
  return sanitize(s.empty() ? "data" : s);
}

// A float in a file name: 0.05 -> "0.05", 1e-3 -> "0.001".
std::string num(float x) { return fmt::format("{}", x); }
std::string num(double x) { return fmt::format("{}", x); }

// A Mulan set that is not in the public table: DATA/NAME-train.arff (or DATA/xmc/...), not verified.
data::TrainTest read_unlisted_mulan(const XmcSweepSpec& spec, const std::string& ds) {
  const std::string dir = data::resolve_data_dir(spec.data_dir);
  const std::string forms = fmt::format("public sets: {} (docs/data.md); other forms: mulan:DIR/NAME, xc:TRAIN,TEST, "
                                        "synthetic:PRESET", data::public_dataset_names("xmc"));
  if (dir.empty())
    throw std::runtime_error(fmt::format("--dataset {} reads {}-train.arff, {}-test.arff and {}.xml (Mulan) from a data "
                                         "folder and none was given: pass --data-dir DIR or set {}=DIR ({})",
                                         ds, ds, ds, ds, data::kDataDirEnv, forms));
  for (const fs::path& folder : {fs::path(dir), fs::path(dir) / "xmc"})
    if (fs::exists(folder / (ds + "-train.arff"))) return data::read_mulan(folder, ds);
  throw std::runtime_error(fmt::format("no file {} (nor {}): --dataset {} reads Mulan's NAME-train.arff, NAME-test.arff "
                                       "and NAME.xml from the data folder ({})",
                                       (fs::path(dir) / (ds + "-train.arff")).string(),
                                       (fs::path(dir) / "xmc" / (ds + "-train.arff")).string(), ds, forms));
}

}  // namespace

data::TrainTest load_xmc_dataset(const XmcSweepSpec& spec, int64_t labels_total) {
  const std::string& ds = spec.dataset;
  data::TrainTest d;
  try {
    if (ds.rfind("synthetic:", 0) == 0) {
      const std::string preset = ds.substr(10);
      if (!(spec.syn_scale > 0.0)) throw std::invalid_argument("--syn-scale must be > 0");
      if (preset == "tiny") {
        data::SyntheticXmcConfig c;
        c.rows = std::max<int64_t>(1, int64_t(std::llround(20000 * spec.syn_scale)));
        c.num_features = 2000;
        c.num_labels = 500;
        c.labels_per_row.mean = 3.0;
        c.features_per_row.mean = 20.0;
        c.signal_fraction = 0.6;
        c.seed = 0;
        d = data::generate_synthetic_xmc_split(c, std::max<int64_t>(1, c.rows / 4));
      } else {
        const data::XmcPreset& p = data::xmc_preset(preset);
        d = data::generate_synthetic_xmc_split(data::synthetic_config(p, spec.syn_scale, 0),
                                               data::scaled_test_rows(p, spec.syn_scale));
      }
    } else if (ds.rfind("xc:", 0) == 0) {
      const std::string files = ds.substr(3);
      const auto comma = files.find(',');
      if (comma == std::string::npos) throw std::invalid_argument("xc:TRAIN,TEST needs two files separated by a comma");
      d.train = data::read_xc(files.substr(0, comma));
      d.test = data::read_xc(files.substr(comma + 1));
    } else if (ds.rfind("mulan:", 0) == 0) {
      const fs::path p = ds.substr(6);
      d = data::read_mulan(p.parent_path().empty() ? fs::path(".") : p.parent_path(), p.filename().string());
    } else if (const data::PublicDataset* pub = data::find_public_dataset("xmc", ds)) {
      const auto files = data::locate_public_dataset(*pub, spec.data_dir, spec.verify);  // NAME-train.arff first
      d = data::read_mulan(files.front().parent_path(), ds);
    } else {
      d = read_unlisted_mulan(spec, ds);
    }
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(fmt::format("dataset '{}': it does not fit in this process's memory{}", ds,
                                         ds.rfind("synthetic:", 0) == 0
                                             ? fmt::format(" at --syn-scale {:g} (its rows times that); give a smaller one",
                                                           spec.syn_scale)
                                             : ""));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("dataset '{}': {}", ds, e.what()));
  }
  // The two splits share one label and feature space.
  const int64_t V = std::max(d.train.num_labels, d.test.num_labels);
  const int64_t F = std::max(d.train.num_features, d.test.num_features);
  d.train.num_labels = d.test.num_labels = V;
  d.train.num_features = d.test.num_features = F;
  if (labels_total > 0) {
    if (labels_total < V)
      throw std::runtime_error(fmt::format("--labels-total {} is below the dataset's {} labels", labels_total, V));
    data::append_random_labels(d.train, labels_total - V);
    data::append_random_labels(d.test, labels_total - V);
  }
  return d;
}

sweep::Axes xmc_axes() {
  using sweep::AxisKind;
  sweep::Axes a;
  a.add("labels-total", AxisKind::integer, {"0"},
        "grow the label space to these totals with appended labels that are never positive (ELMO's memory-vs-labels "
        "protocol); 0 = as is");
  a.add("clf-format", AxisKind::text, {"fp32"},
        "classifier storage, how the weights are kept and updated (the products' precision is --operand): fp32, bf16, "
        "e4m3fn, e5m2, fp16, any eXmY (IEEE-like), ... (_sat: saturating)");
  a.add("grad-format", AxisKind::text, {"fp32"},
        "the format the logit gradient sigmoid(z) - y is rounded to (with --rounding) before the head's dH and dW use "
        "it (ELMO's fp8 gradient): fp32 (unchanged), any eXmY, e5m2, ...");
  a.add("subnormals", AxisKind::text, {"on"}, "on | off (off: the format with subnormals flushed to zero)");
  a.add("rounding", AxisKind::text, {"rne"},
        "rounding of the updated weights: rne, sr (stochastic, k random bits), sr_exact, rz, ..., elmo_sr (ELMO's fp8 "
        "SR: 23-M bits on the float32 pattern, then nearest into the format)");
  a.add("update", AxisKind::text, {"fused"}, "separate | fused");
  a.add("chunks", AxisKind::integer, {"1"}, "label chunks k");
  a.add("dim", AxisKind::integer, {"512"}, "embedding width D");
  a.add("batch", AxisKind::integer, {"128"}, "rows per step B");
  a.add("enc-precision", AxisKind::text, {"fp32"},
        "encoder storage: fp32 | bf16 (bf16 weights, moments and Kahan buffer; its embeddings are then bf16 values)");
  a.add("operand", AxisKind::text, {"fp32"},
        "precision of the head's products' operands: fp32 | bf16 (the command's help: the shared table)");
  a.add("activation", AxisKind::text, {"relu"}, "relu | gelu");
  a.add("enc-lr", AxisKind::real, {"0.001"}, "encoder Adam learning rate");
  a.add("clf-lr", AxisKind::real, {"0.05"}, "classifier SGD learning rate");
  a.add("dropout", AxisKind::real, {"0.5"}, "dropout probability on the embedding");
  a.add("clf-init-std", AxisKind::real, {"0.02"}, "classifier init N(0, std^2)");
  a.add("seeds", AxisKind::integer, {"0"}, "seeds (init, shuffling, dropout, stochastic rounding)");
  return a;
}

std::vector<SweepPoint> expand_sweep(const XmcSweepSpec& s) {
  std::vector<SweepPoint> out;
  const std::string stem = dataset_stem(s.dataset);
  auto swept = [&](const char* axis) { return s.axes.values(axis).size() > 1; };
  for (const sweep::AxisPoint& a : s.axes.expand()) {
    SweepPoint p;
    const int64_t V = a.int_at("labels-total");
    const std::string fmt_name = a.at("clf-format"), grad_fmt = a.at("grad-format"), sub = a.at("subnormals"),
                      rnd = a.at("rounding"), upd = a.at("update"), encp = a.at("enc-precision"), act = a.at("activation"),
                      op = a.at("operand");
    const int64_t k = a.int_at("chunks"), D = a.int_at("dim"), B = a.int_at("batch");
    const float elr = float(a.real_at("enc-lr")), clr = float(a.real_at("clf-lr")), drop = float(a.real_at("dropout"));
    const double istd = a.real_at("clf-init-std");
    const int64_t seed = a.int_at("seeds");
    if (V < 0) throw std::invalid_argument(fmt::format("--labels-total: {} is negative", V));
    if (seed < 0) throw std::invalid_argument(fmt::format("--seed: {} is negative", seed));
    p.labels_total = V;
    TrainConfig& c = p.config;
    c = s.base;
    c.clf_format = fmt_name;
    c.grad_format = grad_fmt;
    if (sub != "on" && sub != "off") throw std::invalid_argument("--subnormals takes on and/or off, got " + sub);
    c.clf_subnormals = sub == "on";
    c.clf_rounding = rnd;
    c.mode = parse_update_mode(upd);
    c.chunks = k;
    c.D = D;
    c.batch = B;
    c.encoder_precision = parse_encoder_precision(encp);
    c.activation = parse_activation(act);
    try {  // canonical names (bfloat16 -> bf16): one operand, one file name
      c.operand = to_string(parse_operand(op));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--operand: ") + e.what());
    }
    c.enc_lr = elr;
    c.clf_lr = clr;
    c.dropout = drop;
    c.clf_init_std = istd;
    c.seed = uint64_t(seed);
    c.validate();
    // The name: dataset, format/rounding/update/chunks/seed always; other axes when swept.
    std::string n = stem;
    if (swept("labels-total") || V > 0) n += fmt::format("_V{}", V);
    n += "_" + fmt_name + (c.clf_subnormals ? "" : "-ftz") + "_" + rnd + "_" + upd + fmt::format("_k{}", k);
    if (swept("grad-format") || grad_fmt != "fp32") n += "_g-" + grad_fmt;
    if (swept("dim")) n += fmt::format("_D{}", D);
    if (swept("batch")) n += fmt::format("_B{}", B);
    if (swept("enc-precision") || c.encoder_precision != EncoderPrecision::fp32) n += "_enc-" + encp;
    if (swept("operand") || c.operand != "fp32") n += "_op-" + c.operand;
    if (swept("activation")) n += "_" + act;
    if (swept("enc-lr")) n += "_elr" + num(elr);
    if (swept("clf-lr")) n += "_clr" + num(clr);
    if (swept("dropout")) n += "_drop" + num(drop);
    if (swept("clf-init-std")) n += "_istd" + num(istd);
    n += fmt::format("_s{}", seed);
    p.name = sanitize(n);
    out.push_back(std::move(p));
  }
  return out;
}

void check_run_paths(const XmcSweepSpec& spec) {
  std::set<std::string> names;
  for (const SweepPoint& p : expand_sweep(spec))
    if (!names.insert(p.name).second)
      throw io::PathError(fmt::format("--out-dir: two runs of the sweep would write the same file '{}.h5' (a value "
                                      "given twice, e.g. --seed 0,0?); nothing was written",
                                      p.name));
  for (const auto& [index, p] : partition_points(spec)) {
    const std::string path = (fs::path(spec.out_dir) / (p.name + ".h5")).string();
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(path, ec);
    if (!fs::exists(st)) continue;
    if (fs::is_symlink(st))
      throw io::PathError(fmt::format("--out-dir: '{}' is a symlink; refusing to write through it into its target", path));
    if (const std::string what = io::not_regular_file(path); !what.empty())
      throw io::PathError(fmt::format("--out-dir: '{}' is {}, not a run file; refusing to replace it", path, what));
    if (spec.resume) {  // this sweep's run files are continued (another sweep's are refused here)
      io::recorded_run(path, xmc_run_files().schema_prefix(), sweep_identity(spec));
      continue;
    }
    if (!spec.overwrite)
      throw io::PathError(fmt::format("--out-dir: the run file '{}' exists (give --overwrite to replace it, or "
                                      "--resume to continue the sweep; nothing was written)",
                                      path));
  }
}

std::vector<std::pair<int64_t, SweepPoint>> partition_points(const XmcSweepSpec& spec) {
  std::vector<SweepPoint> all = expand_sweep(spec);
  std::vector<std::pair<int64_t, SweepPoint>> mine;
  for (int64_t i : sweep::partition_indices(int64_t(all.size()), spec.partition))
    mine.emplace_back(i, std::move(all[size_t(i)]));
  return mine;
}

std::string sweep_identity(const XmcSweepSpec& s) {
  std::string axes;
  for (const auto& name : s.axes.names()) {
    // grad-format at its default is left out: sweeps made before the axis existed keep their identity.
    if (name == "grad-format" && s.axes.values(name) == std::vector<std::string>{"fp32"}) continue;
    std::string vals;
    for (const auto& v : s.axes.values(name)) vals += (vals.empty() ? "" : ",") + v;
    axes += fmt::format("{}={}; ", name, vals);
  }
  const TrainConfig& b = s.base;
  const bool synthetic = s.dataset.rfind("synthetic:", 0) == 0;
  return fmt::format("dataset={}{}; {}epochs={}; max-steps={}; enc-wd={}; sr-bits={}; tile={}; schedule={}; "
                     "warmup-steps={}; eval-every={}; eval-batch={}; hist-every={}; propensity={},{}",
                     s.dataset, synthetic ? fmt::format("; syn-scale={}", s.syn_scale) : "", axes, b.epochs,
                     b.max_steps, b.enc_wd, b.sr_bits, b.tile, b.schedule, b.warmup_steps, b.eval_every, b.eval_batch,
                     b.hist_every, b.propensity_a, b.propensity_b);
}

namespace {

class ProgressBar {
 public:
  ProgressBar(std::ostream& err, bool enabled, bool tty) : err_(err), enabled_(enabled), tty_(tty) {}
  void update(int epoch, int epochs, int64_t step, int64_t steps, double loss, double seconds) {
    if (!enabled_ || !tty_) return;
    const auto now = std::chrono::steady_clock::now();
    if (step != steps && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const int width = 30;
    const int filled = int(double(width) * double(step) / double(std::max<int64_t>(1, steps)));
    err_ << fmt::format("\r  epoch {:>3}/{} [{}{}] {:>3.0f} %  {:6.1f} s  loss {:.4g} nats/row   ", epoch, epochs,
                        std::string(size_t(filled), '#'), std::string(size_t(width - filled), '.'),
                        100.0 * double(step) / double(std::max<int64_t>(1, steps)), seconds, loss)
         << std::flush;
    open_ = true;
  }
  void epoch_done(const EpochRecord& r, int epochs) {
    if (!enabled_) return;
    if (open_) err_ << "\r" << std::string(100, ' ') << "\r";
    open_ = false;
    std::string line = fmt::format("  epoch {:>3}/{}: train loss {:.4g} nats/row, {:.2f} s", r.epoch, epochs,
                                   r.train_loss, r.epoch_s);
    if (std::isfinite(r.p[0]))
      line += fmt::format(" | test P@1 {} P@3 {} P@5 {}, nDCG@5 {}, PSP@5 {}, loss {:.4g} nats/row ({:.2f} s)",
                          fmt_pct(r.p[0]), fmt_pct(r.p[1]), fmt_pct(r.p[2]), fmt_pct(r.ndcg[2]), fmt_pct(r.psp[2]),
                          r.test_loss, r.eval_s);
    err_ << line << "\n" << std::flush;
  }

 private:
  std::ostream& err_;
  bool enabled_, tty_, open_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

namespace {

// Every size the memory prediction multiplies must fit in int64 (at 8 bytes per element, with room for
// the few buffers it adds), or the prediction wraps and an absurd run looks small.
void require_representable(const TrainConfig& c, const DataShape& s) {
  const int64_t B = std::max(c.batch, c.eval_batch);
  for (auto [what, a, b] : {std::tuple{"labels x --dim", s.num_labels, c.D}, {"features x --dim", s.num_features, c.D},
                            {"--batch x labels", B, s.num_labels}, {"--batch x --dim", B, c.D}})
    if (!checked_product({a, b, 64}))
      throw std::invalid_argument(fmt::format("{} = {} x {} is too large: the run's sizes overflow int64", what, a, b));
}

// The folder of the run files: created when missing (only once the dataset has loaded, so that a bad
// dataset leaves nothing behind), refused when something that is not a folder is there.
void make_out_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw std::invalid_argument(fmt::format("--out-dir '{}' exists and is not a folder", dir));
  fs::create_directories(dir, ec);
  if (ec) throw std::invalid_argument(fmt::format("--out-dir '{}' cannot be created: {}", dir, ec.message()));
}

}  // namespace

namespace {

// Why this CPU cannot compute the run's products at its --operand (bf16, e4m3 or e5m2 without AVX512_BF16
// or AMX-BF16), or nothing.
std::optional<std::string> operand_unavailable(const TrainConfig& c) {
  const Operand op = parse_operand(c.operand);
  if (!products_in_bf16(op)) return std::nullopt;
  if (auto why = cpu::bf16_products_unavailable()) return std::string("--operand ") + to_string(op) + ": " + *why;
  return std::nullopt;
}

// What a sharded run's other ranks print to: a stream without a buffer, which drops everything.
std::ostream& discard() {
  static std::ostream sink(nullptr);
  return sink;
}

// Runs `step` on this rank; sharded, every rank then passes one checkpoint, so that a failure on any
// rank (a file the primary cannot write, a dataset one rank cannot read) stops every rank with its
// message instead of leaving the others waiting in a collective.
template <typename Step>
void on_every_rank(const ShardedTraining* sharded, Step&& step) {
  if (!sharded) return step();
  std::string error;
  try {
    step();
  } catch (const std::exception& e) {
    error = e.what();
  }
  sharded->check(error);
}

// The run file's record of how the run was sharded, as `lobench run --shard` records it.
void record_shard(TrainRunFile& file, const ShardedTraining& sh, int64_t predicted_peak_max) {
  file.set_attr("ranks", int64_t(sh.ranks()));
  file.set_attr("shard", fmt::format("{} over {} ranks", sh.shard_name(), sh.ranks()));
  file.set_attr("mpi_library", sh.library());
  file.set_attr("rank_predicted_peak_bytes_max", predicted_peak_max);
}
void record_totals(TrainRunFile& file, const ShardedTotals& t) {
  file.set_attr("rank_peak_bytes_max", t.peak_bytes_max);
  file.set_attr("rank_peak_bytes_sum", t.peak_bytes_sum);
  file.set_attr("comm_bytes_max", t.comm_bytes_max);
  file.set_attr("comm_time_s_max", fmt::format("{:.6g}", t.comm_s_max));
}

std::string skipped_line(const std::string& head, const std::string& why, const MemoryPrediction& pred, bool evaluates,
                         const std::string& path) {
  return fmt::format("{}: skipped ({}), predicted peak {} (weights {}, weight gradient {}, logits {}, encoder {}, "
                     "workspace {}) -> {}\n",
                     head, why, format_bytes(double(pred.peak(evaluates))), format_bytes(double(pred.train.weights)),
                     format_bytes(double(pred.train.weight_gradient)), format_bytes(double(pred.train.logits)),
                     format_bytes(double(pred.train.encoder)), format_bytes(double(pred.train.workspace)), path);
}

std::string done_line(const std::string& head, const RunOutcome& o, bool evaluates, const std::string& path) {
  const EpochRecord& last = o.epochs.back();
  return fmt::format(
      "{}: P@1 {} P@3 {} P@5 {}, PSP@5 {}, train loss {:.4g} nats/row, test loss {}, {} steps at {:.1f} ms/step, "
      "peak {} (predicted {}) -> {}\n",
      head, fmt_pct(last.p[0]), fmt_pct(last.p[1]), fmt_pct(last.p[2]), fmt_pct(last.psp[2]), last.train_loss,
      std::isfinite(last.test_loss) ? fmt::format("{:.4g} nats/row", last.test_loss) : "n/a", o.steps,
      1e3 * o.mean_step_s, format_bytes(double(o.measured_peak)), format_bytes(double(o.predicted.peak(evaluates))),
      path);
}

// A run a signal stopped between epochs: its file, with the epochs done, becomes NAME.h5 with status
// "interrupted" (figures read only status "ok"), unless a file of that name is there already (an earlier
// sweep's run, kept rather than replaced by a partial one). Returns what became of it, for the message.
std::string keep_interrupted(std::optional<TrainRunFile>& file, const std::string& path, int sig, int64_t epochs,
                             int64_t of) {
  if (!file) return "";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec))) {
    file.reset();  // the temporary file is removed
    return fmt::format(" (the run in progress stopped after {} of {} epochs; '{}' already existed and is kept)", epochs,
                       of, path);
  }
  file->finish(nullptr, "interrupted", fmt::format("{} after {} of {} epochs", io::signal_name(sig), epochs, of));
  return fmt::format(" (the run in progress stopped after {} of {} epochs: '{}', status interrupted)", epochs, of, path);
}

}  // namespace

namespace {

// One run of the sweep as planned: its shape, memory prediction and, when it will not train, why.
struct XmcPlan {
  SweepPoint point;
  DataShape shape;
  MemoryPrediction pred;
  bool evaluates = false;
  int64_t peak = 0;  // sharded: the largest rank's
  std::string path, head, skip_reason;
};

// `lobench train-xmc` as a training job's sweep (sweep/run_folder_sweep.hpp: the one driver, a run file
// per point in spec.out_dir, key: the file name, kept by --resume when finished). Sharded, every rank
// runs the same job and passes a checkpoint at every step where one rank alone could fail (on_every_rank).
class XmcSweepJob : public sweep::RunFolderSweep {
 public:
  XmcSweepJob(const XmcSweepSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err)
      : RunFolderSweep({&xmc_run_files(), spec.out_dir, sweep_identity(spec), spec.partition}),
        spec_(spec), prov_(prov), sh_(spec.sharded), records_(!sh_ || sh_->primary()), out_(records_ ? out : discard()),
        err_(records_ ? err : discard()), points_(expand_sweep(spec)) {}

  int64_t size() const override { return int64_t(points_.size()); }
  std::ostream& err() { return err_; }

  std::vector<sweep::PlannedPoint> plan(const std::vector<int64_t>& indices) override {
    std::vector<sweep::PlannedPoint> planned;
    if (indices.empty()) return planned;
    mem_limit_ = sh_ ? sh_->agree(spec_.mem_limit) : spec_.mem_limit;  // the primary's, everywhere
    on_every_rank(sh_, [&] { loaded_ = load_xmc_dataset(spec_, 0); });
    for (int64_t i : indices) {
      XmcPlan& p = plans_[i] = plan_run(i);
      const TrainConfig& c = p.point.config;
      // The ETA's unit: the classifier's products, rows x labels x D per epoch.
      const double work = double(c.epochs) * double(p.shape.train_rows) * double(p.shape.num_labels) * double(c.D);
      planned.push_back({i, p.point.name, p.skip_reason.empty() ? work : 0.0});
    }
    return planned;
  }

  void begin(const std::vector<sweep::PlannedPoint>& planned) override {
    if (!planned.empty()) return;  // more partitions than runs: this one makes none, and leaves its (empty) folder
    on_every_rank(sh_, [&] {
      if (records_) make_out_dir(spec_.out_dir);
    });
    out_ << fmt::format("partition {} of a sweep of {} runs makes none -> {}\n", spec_.partition.str(),
                        points_.size(), spec_.out_dir);
  }

  sweep::PointStatus execute(const sweep::PlannedPoint& point) override {
    const XmcPlan& p = plans_.at(point.index);
    std::optional<TrainRunFile> file;  // the primary's
    on_every_rank(sh_, [&] {
      if (!records_) return;
      make_out_dir(spec_.out_dir);
      file.emplace(p.path, prov_, spec_.dataset, p.point.config, p.shape, p.pred);
      file->set_place(place(point.index));
      if (sh_) record_shard(*file, *sh_, p.peak);
      if (p.skip_reason.empty()) return;
      file->finish(nullptr, "skipped", p.skip_reason);
      out_ << skipped_line(p.head, p.skip_reason, p.pred, p.evaluates, p.path) << std::flush;
    });
    if (!p.skip_reason.empty()) return sweep::PointStatus::skipped;
    return train_run(p, file);
  }

  std::string stopped_detail(const sweep::DriveResult& r) const override {
    return fmt::format("{} of {} runs finished in {}{}; continue with the same command and --resume",
                       r.finished(), r.points, spec_.out_dir, interrupted_note_);
  }

  std::string describe(int64_t index) const override { return points_[size_t(index)].name; }

 private:
  XmcPlan plan_run(int64_t index) const {
    XmcPlan p;
    p.point = points_[size_t(index)];
    const DataShape loaded_shape = DataShape::of(*loaded_);
    p.shape = loaded_shape;
    if (p.point.labels_total > 0) {
      if (p.point.labels_total < loaded_shape.num_labels)
        throw std::runtime_error(fmt::format("--labels-total {} is below the dataset's {} labels", p.point.labels_total,
                                             loaded_shape.num_labels));
      p.shape.num_labels = p.point.labels_total;
    }
    const TrainConfig& c = p.point.config;
    require_representable(c, p.shape);
    // Sharded: this rank's share; the run is skipped when the largest rank's exceeds the limit.
    p.pred = sh_ ? sh_->predict(c, p.shape) : predict_memory(c, p.shape);
    p.evaluates = c.eval_every >= 0 && p.shape.test_rows > 0;
    p.peak = sh_ ? sh_->largest(p.pred.peak(p.evaluates)) : p.pred.peak(p.evaluates);
    p.path = (fs::path(spec_.out_dir) / (p.point.name + ".h5")).string();
    p.head = fmt::format("[{}/{}] {}", index + 1, points_.size(), p.point.name);
    if (spec_.dry_run) p.skip_reason = "dry run";
    else if (const auto why = operand_unavailable(c)) p.skip_reason = *why;
    else if (mem_limit_ > 0 && p.peak > mem_limit_)
      p.skip_reason = fmt::format("OOM predicted: {}{} > limit {}", format_bytes(double(p.peak)),
                                  sh_ ? " on the largest rank" : "", format_bytes(double(mem_limit_)));
    return p;
  }

  // The dataset grown to the run's --labels-total (appended labels have no positives), one total at a time.
  const data::TrainTest& data_for(const DataShape& shape) {
    const int64_t loaded_labels = DataShape::of(*loaded_).num_labels;
    if (shape.num_labels <= loaded_labels) return *loaded_;
    on_every_rank(sh_, [&] {
      if (grown_.count(shape.num_labels)) return;
      grown_.clear();
      data::TrainTest g = *loaded_;
      data::append_random_labels(g.train, shape.num_labels - loaded_labels);
      data::append_random_labels(g.test, shape.num_labels - loaded_labels);
      grown_.emplace(shape.num_labels, std::move(g));
    });
    return grown_.at(shape.num_labels);
  }

  sweep::PointStatus train_run(const XmcPlan& p, std::optional<TrainRunFile>& file) {
    const TrainConfig& c = p.point.config;
    const data::TrainTest& d = data_for(p.shape);
    err_ << fmt::format("{}: {} rows x {} features -> {} labels; {}{}\n", p.head, p.shape.train_rows,
                        p.shape.num_features, p.shape.num_labels, c.describe(),
                        sh_ ? fmt::format("; {} over {} ranks", sh_->shard_name(), sh_->ranks()) : "")
         << std::flush;
    ProgressBar bar(err_, spec_.progress, &err_ == &std::cerr && isatty(STDERR_FILENO));
    const ProgressFn progress = [&](int e, int E, int64_t s, int64_t S, double l, double t) { bar.update(e, E, s, S, l, t); };
    int64_t epochs_done = 0;
    const EpochFn on_epoch = [&](const EpochRecord& r, const GradientHistogram* h, const GradientHistogram* g) {
      if (file) file->append_epoch(r, h, g);
      bar.epoch_done(r, c.epochs);
      ++epochs_done;
      // Unsharded, a signal also stops a run between epochs (sharded ranks could be inside a collective).
      if (!sh_ && io::interrupt_signal() && epochs_done < c.epochs)
        throw io::Interrupted(io::interrupt_signal(), "training stopped between epochs");
    };
    try {
      ShardedTotals totals;
      const RunOutcome o = sh_ ? sh_->train(d, c, progress, on_epoch, totals) : train_xmc(d, c, progress, on_epoch);
      if (file && sh_) record_totals(*file, totals);
      if (file) file->finish(&o, "ok", "");
      out_ << done_line(p.head, o, p.evaluates, p.path) << std::flush;
      return sweep::PointStatus::ok;
    } catch (const io::Interrupted& e) {
      interrupted_note_ = keep_interrupted(file, p.path, e.signal, epochs_done, c.epochs);
      return sweep::PointStatus::interrupted;
    } catch (const std::exception& e) {
      if (file) file->finish(nullptr, "failed", e.what());
      out_ << fmt::format("{}: FAILED: {}\n", p.head, e.what()) << std::flush;
      // A failure of this rank alone: the others may be inside a collective, waiting for it.
      if (sh_ && !sh_->shared_failure(e)) sh_->abort_all(e.what());
      return sweep::PointStatus::failed;
    }
  }

  const XmcSweepSpec& spec_;
  const Provenance& prov_;
  ShardedTraining* const sh_;
  const bool records_;  // a sharded run's other ranks write and print nothing
  std::ostream& out_;
  std::ostream& err_;
  const std::vector<SweepPoint> points_;  // the whole sweep
  int64_t mem_limit_ = 0;
  std::map<int64_t, XmcPlan> plans_;  // this partition's runs, by index in the sweep
  // The dataset as loaded, and grown to a run's --labels-total only when that run trains: appended
  // labels have no positives, so the run's shape (and its memory prediction) is the loaded one with
  // more labels, known before anything is grown, and a label total far above the limit is skipped unbuilt.
  std::optional<data::TrainTest> loaded_;
  std::map<int64_t, data::TrainTest> grown_;  // one label total at a time
  std::string interrupted_note_;              // what became of the run a signal stopped
};

}  // namespace

void list_xmc_sweep(const XmcSweepSpec& spec, std::ostream& out) {
  sweep::list_runs<XmcSweepJob>(spec, out);
}

int run_xmc_sweep(const XmcSweepSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err) {
  ShardedTraining* const sh = spec.sharded;
  if (sh) sweep::require_same_options(*sh, prov.argv);  // first: before any other collective
  if (spec.out_dir.empty()) throw std::invalid_argument("--out-dir is required");
  sweep::refuse_with_resume(spec.resume, {{"--overwrite", spec.overwrite}, {"--dry-run", spec.dry_run}, {"--shard", sh != nullptr}});
  const bool records = !sh || sh->primary();
  on_every_rank(sh, [&] {
    std::error_code ec;
    if (records && fs::exists(spec.out_dir, ec) && !fs::is_directory(spec.out_dir, ec))
      throw std::invalid_argument(fmt::format("--out-dir '{}' exists and is not a folder", spec.out_dir));
    if (records) check_run_paths(spec);
  });
  XmcSweepJob job(spec, prov, out, err);
  sweep::DriveSettings d;
  d.partition = spec.partition;
  d.resume = spec.resume;
  d.progress = spec.progress ? &job.err() : nullptr;
  d.unit = "runs";
  if (sh) d.agree_on_signal = [sh](int64_t signal) { return sh->agree(signal); };
  return int(sweep::drive(job, d).failed);
}

using LayoutColumns = std::map<Layout, std::map<std::string, std::vector<int64_t>>>;

namespace {

// The --layouts table as HDF5: provenance, the shape, V and one group per layout with its parts.
void write_layouts(hid_t f, const Provenance& prov, int64_t D, int64_t B, int64_t chunks,
                   const std::vector<int64_t>& labels, const LayoutColumns& cols) {
  write_provenance(f, prov);
  h5::write_attr(f, "what", std::string("predicted-only classifier-head memory of published layouts "
                                        "(harness/train/memory_layouts.hpp); encoder not included"));
  h5::write_attr(f, "D", D);
  h5::write_attr(f, "B", B);
  h5::write_attr(f, "chunks", chunks);
  h5::write<int64_t>(f, "V", {int64_t(labels.size())}, labels.data());
  for (auto& [l, c] : cols) {
    h5::Handle g(H5Gcreate2(f, to_string(l).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    for (auto& [name, v] : c) h5::write<int64_t>(g, name + "_bytes", {int64_t(v.size())}, v.data());
  }
  h5::write_attr(f, "end_utc", utc_now());
}

}  // namespace

void write_layout_table(const std::vector<int64_t>& labels, int64_t D, int64_t B, int64_t chunks, const Provenance& prov,
                        const std::string& path, std::ostream& out) {
  if (labels.empty()) throw std::invalid_argument("--layouts needs at least one label count");
  const auto layouts = all_layouts();
  out << fmt::format("Predicted classifier-head memory (D = {}, B = {}, ELMO chunks = {}; encoder not included), GiB:\n",
                     D, B, chunks);
  out << fmt::format("{:>12}", "labels");
  for (Layout l : layouts) out << fmt::format(" {:>12}", to_string(l));
  out << fmt::format(" {:>16} {:>16}\n", "renee/elmo_bf16", "renee/elmo_fp8");
  LayoutColumns cols;
  for (int64_t V : labels) {
    LayoutShape s;
    s.V = V;
    s.D = D;
    s.B = B;
    s.chunks = chunks;
    out << fmt::format("{:>12}", V);
    std::map<Layout, int64_t> tot;
    for (Layout l : layouts) {
      const MemoryBreakdown m = layout_bytes(l, s);
      tot[l] = m.total();
      out << fmt::format(" {:>12.2f}", double(m.total()) / double(int64_t(1) << 30));
      auto& c = cols[l];
      c["weights"].push_back(m.weights);
      c["weight_gradient"].push_back(m.weight_gradient);
      c["optimizer_state"].push_back(m.optimizer_state);
      c["logits"].push_back(m.logits);
      c["workspace"].push_back(m.workspace);
      c["total"].push_back(m.total());
    }
    out << fmt::format(" {:>15.1f}x {:>15.1f}x\n", double(tot[Layout::renee]) / double(tot[Layout::elmo_bf16]),
                       double(tot[Layout::renee]) / double(tot[Layout::elmo_fp8]));
  }
  if (path.empty()) return;
  io::RunFileWriter output(path, "--layouts-out");  // written beside it, renamed when complete
  output.begin_whole({}, /*overwrite=*/true);
  output.write_whole([&](hid_t f) { write_layouts(f, prov, D, B, chunks, labels, cols); });
}

}  // namespace lobench::train
