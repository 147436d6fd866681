#include "harness/train/xmc_sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
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
#include "harness/io/output_path.hpp"
#include "harness/train/memory_layouts.hpp"
#include "harness/train/run_file.hpp"
#include "harness/train/sharded_training.hpp"
#include "harness/sweep/sharded_rows.hpp"
#include "harness/system_memory.hpp"
#include "variants/checked_math.hpp"

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
  for (const fs::path folder : {fs::path(dir), fs::path(dir) / "xmc"})
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
        "classifier storage: fp32, bf16, e4m3fn, e5m2, fp16, any eXmY (IEEE-like), ... (_sat: saturating)");
  a.add("subnormals", AxisKind::text, {"on"}, "on | off (off: the format with subnormals flushed to zero)");
  a.add("rounding", AxisKind::text, {"rne"},
        "rounding of the updated weights: rne, sr (stochastic, k random bits), sr_exact, rz, ..., elmo_sr (ELMO's fp8 "
        "SR: 23-M bits on the float32 pattern, then nearest into the format)");
  a.add("update", AxisKind::text, {"fused"}, "separate | fused");
  a.add("chunks", AxisKind::integer, {"1"}, "label chunks k");
  a.add("dim", AxisKind::integer, {"512"}, "embedding width D");
  a.add("batch", AxisKind::integer, {"128"}, "rows per step B");
  a.add("enc-precision", AxisKind::text, {"fp32"}, "fp32 | bf16 (bf16 weights, moments and Kahan buffer)");
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
    const std::string fmt_name = a.at("clf-format"), sub = a.at("subnormals"), rnd = a.at("rounding"),
                      upd = a.at("update"), encp = a.at("enc-precision"), act = a.at("activation");
    const int64_t k = a.int_at("chunks"), D = a.int_at("dim"), B = a.int_at("batch");
    const float elr = float(a.real_at("enc-lr")), clr = float(a.real_at("clf-lr")), drop = float(a.real_at("dropout"));
    const double istd = a.real_at("clf-init-std");
    const int64_t seed = a.int_at("seeds");
    if (V < 0) throw std::invalid_argument(fmt::format("--labels-total: {} is negative", V));
    if (seed < 0) throw std::invalid_argument(fmt::format("--seeds: {} is negative", seed));
    p.labels_total = V;
    TrainConfig& c = p.config;
    c = s.base;
    c.clf_format = fmt_name;
    if (sub != "on" && sub != "off") throw std::invalid_argument("--subnormals takes on and/or off, got " + sub);
    c.clf_subnormals = sub == "on";
    c.clf_rounding = rnd;
    c.mode = parse_update_mode(upd);
    c.chunks = k;
    c.D = D;
    c.batch = B;
    c.encoder_precision = parse_encoder_precision(encp);
    c.activation = parse_activation(act);
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
    if (swept("dim")) n += fmt::format("_D{}", D);
    if (swept("batch")) n += fmt::format("_B{}", B);
    if (swept("enc-precision") || c.encoder_precision != EncoderPrecision::fp32) n += "_enc-" + encp;
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
                                      "given twice, e.g. --seeds 0,0?); nothing was written",
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
    if (!spec.overwrite)
      throw io::PathError(fmt::format("--out-dir: the run file '{}' exists (give --overwrite to replace it; nothing "
                                      "was written)",
                                      path));
  }
}

std::vector<std::pair<int64_t, SweepPoint>> partition_points(const XmcSweepSpec& spec) {
  std::vector<SweepPoint> all = expand_sweep(spec);
  std::vector<std::pair<int64_t, SweepPoint>> mine;
  for (size_t i = 0; i < all.size(); ++i)
    if (int64_t(i) % spec.partition.count == spec.partition.index) mine.emplace_back(int64_t(i), std::move(all[i]));
  return mine;
}

std::string sweep_identity(const XmcSweepSpec& s) {
  std::string axes;
  for (const auto& name : s.axes.names()) {
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

// Long because a sharded sweep passes a checkpoint at every step where one rank alone could fail; the
// training itself is train_xmc (or ShardedTraining::train).
int run_xmc_sweep(const XmcSweepSpec& spec, const Provenance& prov, std::ostream& out_stream, std::ostream& err_stream) {
  ShardedTraining* const sh = spec.sharded;
  if (sh) sweep::require_same_options(*sh, prov.argv);  // first: before any other collective
  const bool records = !sh || sh->primary();
  std::ostream& out = records ? out_stream : discard();
  std::ostream& err = records ? err_stream : discard();
  if (spec.out_dir.empty()) throw std::invalid_argument("--out-dir is required");
  const auto points = partition_points(spec);
  const int64_t sweep_runs = spec.axes.size();
  const std::string identity = sweep_identity(spec);
  on_every_rank(sh, [&] {
    std::error_code ec;
    if (records && fs::exists(spec.out_dir, ec) && !fs::is_directory(spec.out_dir, ec))
      throw std::invalid_argument(fmt::format("--out-dir '{}' exists and is not a folder", spec.out_dir));
    if (records) check_run_paths(spec);
  });
  if (points.empty()) {  // more partitions than runs: this one makes none, and leaves its (empty) folder
    on_every_rank(sh, [&] {
      if (records) make_out_dir(spec.out_dir);
    });
    out << fmt::format("partition {} of a sweep of {} runs makes none -> {}\n", spec.partition.str(), sweep_runs,
                       spec.out_dir);
    return 0;
  }
  const int64_t mem_limit = sh ? sh->agree(spec.mem_limit) : spec.mem_limit;  // the primary's, everywhere
  const bool tty = &err == &std::cerr && isatty(STDERR_FILENO);
  // The dataset as loaded, and grown to a point's --labels-total only when that point trains: appended
  // labels have no positives, so the point's shape (and its memory prediction) is the loaded one with more
  // labels, known before anything is grown, and a label total far above the limit is skipped unbuilt.
  std::optional<data::TrainTest> loaded;
  std::map<int64_t, data::TrainTest> grown;  // one label total at a time
  int failed = 0;
  int64_t finished = 0, stopped_by = 0;  // a signal stops the sweep between runs (io/interrupt_guard.hpp)
  std::string interrupted_note;           // what became of the run it stopped
  for (const auto& entry : points) {
    stopped_by = sh ? sh->agree(io::interrupt_signal()) : io::interrupt_signal();  // sharded: the ranks agree
    if (stopped_by != 0) break;
    const int64_t index = entry.first;
    const SweepPoint& p = entry.second;
    on_every_rank(sh, [&] {
      if (!loaded) loaded = load_xmc_dataset(spec, 0);
    });
    const DataShape loaded_shape = DataShape::of(*loaded);
    DataShape shape = loaded_shape;
    if (p.labels_total > 0) {
      if (p.labels_total < loaded_shape.num_labels)
        throw std::runtime_error(fmt::format("--labels-total {} is below the dataset's {} labels", p.labels_total,
                                             loaded_shape.num_labels));
      shape.num_labels = p.labels_total;
    }
    require_representable(p.config, shape);
    // Sharded: this rank's share; the run is skipped when the largest rank's exceeds the limit.
    const MemoryPrediction pred = sh ? sh->predict(p.config, shape) : predict_memory(p.config, shape);
    const bool evaluates = p.config.eval_every >= 0 && shape.test_rows > 0;
    const int64_t peak = sh ? sh->largest(pred.peak(evaluates)) : pred.peak(evaluates);
    const std::string path = (fs::path(spec.out_dir) / (p.name + ".h5")).string();
    const std::string head = fmt::format("[{}/{}] {}", index + 1, sweep_runs, p.name);
    std::optional<TrainRunFile> file;  // the primary's
    const bool skip = spec.dry_run || (mem_limit > 0 && peak > mem_limit);
    on_every_rank(sh, [&] {
      if (!records) return;
      make_out_dir(spec.out_dir);
      file.emplace(path, prov, spec.dataset, p.config, shape, pred);
      file->set_attr("sweep", identity);
      file->set_attr("sweep_index", index);
      file->set_attr("sweep_runs", sweep_runs);
      file->set_attr("partition", spec.partition.str());
      if (sh) record_shard(*file, *sh, peak);
      if (!skip) return;
      const std::string why = spec.dry_run ? "dry run"
                                           : fmt::format("OOM predicted: {}{} > limit {}", format_bytes(double(peak)),
                                                         sh ? " on the largest rank" : "", format_bytes(double(mem_limit)));
      file->finish(nullptr, "skipped", why);
      out << skipped_line(head, why, pred, evaluates, path) << std::flush;
    });
    if (skip) {
      ++finished;
      continue;
    }
    on_every_rank(sh, [&] {
      if (shape.num_labels <= loaded_shape.num_labels || grown.count(shape.num_labels)) return;
      grown.clear();
      data::TrainTest g = *loaded;
      data::append_random_labels(g.train, shape.num_labels - loaded_shape.num_labels);
      data::append_random_labels(g.test, shape.num_labels - loaded_shape.num_labels);
      grown.emplace(shape.num_labels, std::move(g));
    });
    const data::TrainTest& d = shape.num_labels > loaded_shape.num_labels ? grown.at(shape.num_labels) : *loaded;
    err << fmt::format("{}: {} rows x {} features -> {} labels; {}{}\n", head, shape.train_rows, shape.num_features,
                       shape.num_labels, p.config.describe(),
                       sh ? fmt::format("; {} over {} ranks", sh->shard_name(), sh->ranks()) : "")
        << std::flush;
    ProgressBar bar(err, spec.progress, tty);
    const ProgressFn progress = [&](int e, int E, int64_t s, int64_t S, double l, double t) { bar.update(e, E, s, S, l, t); };
    int64_t epochs_done = 0;
    const EpochFn on_epoch = [&](const EpochRecord& r, const GradientHistogram* h, const GradientHistogram* g) {
      if (file) file->append_epoch(r, h, g);
      bar.epoch_done(r, p.config.epochs);
      ++epochs_done;
      // Unsharded, a signal also stops a run between epochs (sharded ranks could be inside a collective).
      if (!sh && io::interrupt_signal() && epochs_done < p.config.epochs)
        throw io::Interrupted(io::interrupt_signal(), "training stopped between epochs");
    };
    try {
      ShardedTotals totals;
      const RunOutcome o = sh ? sh->train(d, p.config, progress, on_epoch, totals)
                              : train_xmc(d, p.config, progress, on_epoch);
      if (file && sh) record_totals(*file, totals);
      if (file) file->finish(&o, "ok", "");
      out << done_line(head, o, evaluates, path) << std::flush;
      ++finished;
    } catch (const io::Interrupted& e) {
      stopped_by = e.signal;
      interrupted_note = keep_interrupted(file, path, e.signal, epochs_done, p.config.epochs);
      break;
    } catch (const std::exception& e) {
      ++failed;
      if (file) file->finish(nullptr, "failed", e.what());
      out << fmt::format("{}: FAILED: {}\n", head, e.what()) << std::flush;
      // A failure of this rank alone: the others may be inside a collective, waiting for it.
      if (sh && !sh->shared_failure(e)) sh->abort_all(e.what());
      ++finished;
    }
  }
  if (stopped_by != 0)
    throw io::Interrupted(int(stopped_by),
                          fmt::format("{} of {} runs finished in {}{}; run the same command again for the rest (train-xmc "
                                      "has no --resume; --partition K/N splits a sweep)",
                                      finished, points.size(), spec.out_dir, interrupted_note));
  return failed;
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
  io::OutputFile output(path, {}, "--layouts-out");  // written beside it, renamed when complete
  {
    h5::Handle f = h5::create_file(output.temp_path());
    write_layouts(f, prov, D, B, chunks, labels, cols);
  }
  output.commit();
}

}  // namespace lobench::train
