#include "harness/train/xmc_sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "datasets/arff.hpp"
#include "datasets/synthetic_xmc.hpp"
#include "datasets/xc_format.hpp"
#include "datasets/xmc_presets.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/train/memory_layouts.hpp"
#include "harness/train/run_file.hpp"
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
    } else {
      const fs::path train = fs::path(spec.data_dir) / (ds + "-train.arff");
      if (!fs::exists(train))
        throw std::runtime_error(fmt::format(
            "no file {} (--dataset {} reads Mulan's NAME-train.arff, NAME-test.arff and NAME.xml from --data-dir "
            "{}; other forms: mulan:DIR/NAME, xc:TRAIN,TEST, synthetic:PRESET)",
            train.string(), ds, spec.data_dir));
      d = data::read_mulan(spec.data_dir, ds);
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

int run_xmc_sweep(const XmcSweepSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err) {
  if (spec.out_dir.empty()) throw std::invalid_argument("--out-dir is required");
  const std::vector<SweepPoint> points = expand_sweep(spec);
  {
    std::error_code ec;
    if (fs::exists(spec.out_dir, ec) && !fs::is_directory(spec.out_dir, ec))
      throw std::invalid_argument(fmt::format("--out-dir '{}' exists and is not a folder", spec.out_dir));
  }
  const bool tty = &err == &std::cerr && isatty(STDERR_FILENO);
  // The dataset as loaded, and grown to a point's --labels-total only when that point trains: appended
  // labels have no positives, so the point's shape (and its memory prediction) is the loaded one with more
  // labels, known before anything is grown, and a label total far above the limit is skipped unbuilt.
  std::optional<data::TrainTest> loaded;
  std::map<int64_t, data::TrainTest> grown;  // one label total at a time
  int failed = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    if (!loaded) loaded = load_xmc_dataset(spec, 0);
    const DataShape loaded_shape = DataShape::of(*loaded);
    DataShape shape = loaded_shape;
    if (p.labels_total > 0) {
      if (p.labels_total < loaded_shape.num_labels)
        throw std::runtime_error(fmt::format("--labels-total {} is below the dataset's {} labels", p.labels_total,
                                             loaded_shape.num_labels));
      shape.num_labels = p.labels_total;
    }
    require_representable(p.config, shape);
    const MemoryPrediction pred = predict_memory(p.config, shape);
    make_out_dir(spec.out_dir);
    const bool evaluates = p.config.eval_every >= 0 && shape.test_rows > 0;
    const std::string path = (fs::path(spec.out_dir) / (p.name + ".h5")).string();
    const std::string head = fmt::format("[{}/{}] {}", i + 1, points.size(), p.name);
    TrainRunFile file(path, prov, spec.dataset, p.config, shape, pred);
    if (spec.dry_run || (spec.mem_limit > 0 && pred.peak(evaluates) > spec.mem_limit)) {
      const std::string why = spec.dry_run ? "dry run"
                                           : fmt::format("OOM predicted: {} > limit {}", format_bytes(double(pred.peak(evaluates))),
                                                         format_bytes(double(spec.mem_limit)));
      file.finish(nullptr, "skipped", why);
      out << fmt::format("{}: skipped ({}), predicted peak {} (weights {}, weight gradient {}, logits {}, encoder {}, "
                         "workspace {}) -> {}\n",
                         head, why, format_bytes(double(pred.peak(evaluates))), format_bytes(double(pred.train.weights)),
                         format_bytes(double(pred.train.weight_gradient)), format_bytes(double(pred.train.logits)),
                         format_bytes(double(pred.train.encoder)), format_bytes(double(pred.train.workspace)), path)
          << std::flush;
      continue;
    }
    if (shape.num_labels > loaded_shape.num_labels && !grown.count(shape.num_labels)) {
      grown.clear();
      data::TrainTest g = *loaded;
      data::append_random_labels(g.train, shape.num_labels - loaded_shape.num_labels);
      data::append_random_labels(g.test, shape.num_labels - loaded_shape.num_labels);
      grown.emplace(shape.num_labels, std::move(g));
    }
    const data::TrainTest& d = shape.num_labels > loaded_shape.num_labels ? grown.at(shape.num_labels) : *loaded;
    err << fmt::format("{}: {} rows x {} features -> {} labels; {}\n", head, shape.train_rows, shape.num_features,
                       shape.num_labels, p.config.describe())
        << std::flush;
    ProgressBar bar(err, spec.progress, tty);
    try {
      const RunOutcome o = train_xmc(
          d, p.config, [&](int e, int E, int64_t s, int64_t S, double l, double t) { bar.update(e, E, s, S, l, t); },
          [&](const EpochRecord& r, const GradientHistogram* h, const GradientHistogram* g) {
            file.append_epoch(r, h, g);
            bar.epoch_done(r, p.config.epochs);
          });
      file.finish(&o, "ok", "");
      const EpochRecord& last = o.epochs.back();
      out << fmt::format(
                 "{}: P@1 {} P@3 {} P@5 {}, PSP@5 {}, train loss {:.4g} nats/row, test loss {}, {} steps "
                 "at {:.1f} ms/step, peak {} (predicted {}) -> {}\n",
                 head, fmt_pct(last.p[0]), fmt_pct(last.p[1]), fmt_pct(last.p[2]), fmt_pct(last.psp[2]), last.train_loss,
                 std::isfinite(last.test_loss) ? fmt::format("{:.4g} nats/row", last.test_loss) : "n/a", o.steps, 1e3 * o.mean_step_s, format_bytes(double(o.measured_peak)),
                 format_bytes(double(o.predicted.peak(evaluates))), path)
          << std::flush;
    } catch (const std::exception& e) {
      ++failed;
      file.finish(nullptr, "failed", e.what());
      out << fmt::format("{}: FAILED: {}\n", head, e.what()) << std::flush;
    }
  }
  return failed;
}

void write_layout_table(const std::vector<int64_t>& labels, int64_t D, int64_t B, int64_t chunks, const Provenance& prov,
                        const std::string& path, std::ostream& out) {
  if (labels.empty()) throw std::invalid_argument("--layouts needs at least one label count");
  const auto layouts = all_layouts();
  out << fmt::format("Predicted classifier-head memory (D = {}, B = {}, ELMO chunks = {}; encoder not included), GiB:\n",
                     D, B, chunks);
  out << fmt::format("{:>12}", "labels");
  for (Layout l : layouts) out << fmt::format(" {:>12}", to_string(l));
  out << fmt::format(" {:>16} {:>16}\n", "renee/elmo_bf16", "renee/elmo_fp8");
  std::map<Layout, std::map<std::string, std::vector<int64_t>>> cols;
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
  h5::Handle f = h5::create_file(path);
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

}  // namespace lobench::train
