#include "harness/train/run_file.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>

#include "harness/io/interrupt_guard.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "harness/train/frontier_merge.hpp"
#include "precision_sim/format.hpp"
#include "variants/cpu/bf16_products.hpp"

namespace lobench::train {

namespace {

h5::Handle epoch_type() { return io::compound_type(sizeof(EpochRow), EpochRow::columns()); }

// What SCHEMA.md says of a train-xmc run file beside its tables.
constexpr const char* kAbout =
    "One file per run of the sweep, `NAME.h5` in `--out-dir` (NAME: the dataset and the values that identify "
    "the run). Root attributes: the provenance above, the data (`dataset`, `num_features`, "
    "`num_labels`, `train_rows`, `test_rows`), the configuration (`config`, every option by its name: `D`, "
    "`clf_format`, `clf_rounding`, `operand`, `epochs`, `seed`, ...), the run's place in its sweep (`sweep`, "
    "`sweep_index`, `sweep_runs`, `partition`), and at the end `status` (`ok`, `skipped` with the `reason`, "
    "`failed`, `interrupted`), `steps`, `mean_step_s` and /memory's `measured_train_peak_bytes`, "
    "`measured_peak_bytes`, `measured_rss_growth_bytes`. Layout for readers: results/elmo/README.md.";

// The root attributes: the data and the configuration.
void write_config(hid_t file, const std::string& dataset, const TrainConfig& c, const DataShape& s) {
  h5::write_attr(file, "schema", xmc_run_files().schema());
  h5::write_attr(file, "dataset", dataset);
  h5::write_attr(file, "num_features", s.num_features);
  h5::write_attr(file, "num_labels", s.num_labels);
  h5::write_attr(file, "train_rows", s.train_rows);
  h5::write_attr(file, "test_rows", s.test_rows);
  h5::write_attr(file, "config", c.describe());
  h5::write_attr(file, "D", c.D);
  h5::write_attr(file, "activation", to_string(c.activation));
  h5::write_attr(file, "dropout", double(c.dropout));
  h5::write_attr(file, "encoder_precision", to_string(c.encoder_precision));
  h5::write_attr(file, "enc_lr", double(c.enc_lr));
  h5::write_attr(file, "enc_wd", double(c.enc_wd));
  h5::write_attr(file, "clf_format", c.clf_format);
  h5::write_attr(file, "clf_format_resolved", precision::describe(c.classifier_format()));
  h5::write_attr(file, "clf_exponent_bits", int64_t(c.classifier_format().exponent_bits));
  h5::write_attr(file, "clf_mantissa_bits", int64_t(c.classifier_format().mantissa_bits));
  h5::write_attr(file, "clf_subnormals", int64_t(c.clf_subnormals));
  h5::write_attr(file, "clf_rounding", parse_update_rounding(c.clf_rounding, c.sr_bits).name());
  h5::write_attr(file, "sr_bits", int64_t(c.sr_bits));
  h5::write_attr(file, "grad_format", c.grad_format);
  h5::write_attr(file, "clf_lr", double(c.clf_lr));
  h5::write_attr(file, "clf_init_std", c.clf_init_std);
  h5::write_attr(file, "update_mode", to_string(c.mode));
  h5::write_attr(file, "chunks", c.chunks);
  h5::write_attr(file, "tile", c.tile);
  h5::write_attr(file, "operand", std::string(to_string(parse_operand(c.operand))));
  if (products_in_bf16(parse_operand(c.operand))) {  // the kernel of the bf16 products, or why there is none
    const auto why = cpu::bf16_products_unavailable();
    h5::write_attr(file, "bf16_kernel", why ? "none: " + *why : std::string(cpu::to_string(cpu::active_bf16_kernel())));
  }
  h5::write_attr(file, "epochs", int64_t(c.epochs));
  h5::write_attr(file, "batch", c.batch);
  h5::write_attr(file, "max_steps", c.max_steps);
  h5::write_attr(file, "schedule", c.schedule);
  h5::write_attr(file, "warmup_steps", c.warmup_steps);
  h5::write_attr(file, "seed", int64_t(c.seed));
  h5::write_attr(file, "threads", int64_t(c.threads));
  h5::write_attr(file, "propensity_a", c.propensity_a);
  h5::write_attr(file, "propensity_b", c.propensity_b);
}

void write_predicted_memory(hid_t file, const TrainConfig& c, const DataShape& s, const MemoryPrediction& predicted) {
  h5::Handle g(H5Gcreate2(file, "memory", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  const MemoryRow m = MemoryRow::from(predicted.train);
  io::write_record_attrs(g, "predicted_", &m, MemoryRow::columns());
  h5::write_attr(g, "predicted_eval_extra_bytes", predicted.eval_extra);
  h5::write_attr(g, "predicted_peak_bytes", predicted.peak(c.eval_every >= 0 && s.test_rows > 0));
}

// The descriptions of the histogram tables (created empty by the writer) and their bin edges.
void describe_histograms(hid_t file, const TrainConfig& c) {
  const auto edges = GradientHistogram::octave_edges_log2();
  h5::write<double>(file, "grad_hist_edges_log2", {int64_t(edges.size())}, edges.data());
  h5::Handle hist(H5Dopen2(file, "grad_hist", H5P_DEFAULT), H5Dclose);
  h5::write_attr(hist, "bins",
                 std::string("[0] exact zeros, [1] 0<|g|<2^-48, then 4 bins per octave from 2^-48 to 2^16 "
                             "(edges in /grad_hist_edges_log2), [-2] |g|>=2^16, [-1] NaN/inf"));
  h5::write_attr(hist, "what", std::string("classifier weight gradient dW = G^T H, every element, steps "
                                           "where step % hist_every == 0"));
  h5::write_attr(hist, "hist_every", int64_t(c.hist_every));
  h5::Handle logit(H5Dopen2(file, "logit_grad_hist", H5P_DEFAULT), H5Dclose);
  h5::write_attr(logit, "what",
                 std::string("logit gradient G = sigmoid(z) - y of the classifier (every label x row of the batch), "
                             "steps where step % hist_every == 0; bins as /grad_hist"));
}

}  // namespace

const io::JobFiles& xmc_run_files() {
  static const io::JobFiles files = [] {
    io::JobFiles f;
    f.command = "train-xmc";
    f.about = kAbout;
    f.tables = {{io::TableSpec::of<EpochRow>("epochs", /*chunk_rows=*/16), "one row per epoch, flushed as it ends"},
                {io::TableSpec::counts("grad_hist", GradientHistogram::kBins, /*chunk_rows=*/16),
                 "with `--hist-every`: the classifier weight gradient's histogram, one row per epoch (bins in its "
                 "`bins` attribute, edges in `/grad_hist_edges_log2`)"},
                {io::TableSpec::counts("logit_grad_hist", GradientHistogram::kBins, /*chunk_rows=*/16),
                 "with `--hist-every`: the logit gradient's histogram, bins as `/grad_hist`"}};
    f.records = {{"memory", {"predicted_"}, &MemoryRow::columns(),
                  "the predicted bytes by part, beside `predicted_eval_extra_bytes` and `predicted_peak_bytes`"}};
    f.part_files = {&is_frontier_file, &merge_frontier_parts};  // `--frontier --partition K/N`: a file each
    return f;
  }();
  return files;
}

MemoryRow MemoryRow::from(const MemoryBreakdown& m) {
  MemoryRow r;
  r.weights_bytes = m.weights;
  r.weight_gradient_bytes = m.weight_gradient;
  r.optimizer_state_bytes = m.optimizer_state;
  r.logits_bytes = m.logits;
  r.encoder_bytes = m.encoder;
  r.workspace_bytes = m.workspace;
  r.total_bytes = m.total();
  return r;
}

const std::vector<io::Column>& MemoryRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(MemoryRow, LOBENCH_XMC_MEMORY_COLUMNS);
  return c;
}

EpochRow EpochRow::from(const EpochRecord& r) {
  EpochRow e;
  e.epoch = r.epoch;
  e.steps = r.steps;
  e.train_loss = r.train_loss;
  e.test_loss = r.test_loss;
  e.p_at_1 = r.p[0];
  e.p_at_3 = r.p[1];
  e.p_at_5 = r.p[2];
  e.ndcg_at_1 = r.ndcg[0];
  e.ndcg_at_3 = r.ndcg[1];
  e.ndcg_at_5 = r.ndcg[2];
  e.psp_at_1 = r.psp[0];
  e.psp_at_3 = r.psp[1];
  e.psp_at_5 = r.psp[2];
  e.lr_enc = r.lr_enc;
  e.lr_clf = r.lr_clf;
  e.epoch_s = r.epoch_s;
  e.eval_s = r.eval_s;
  e.weight_zero_fraction = r.weight_zero_fraction;
  e.weight_mean_abs = r.weight_mean_abs;
  e.weight_non_finite = r.weight_non_finite;
  e.peak_bytes = r.peak_bytes;
  e.utc.set(utc_now());
  return e;
}

const std::vector<io::Column>& EpochRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(EpochRow, LOBENCH_XMC_EPOCH_COLUMNS);
  return c;
}

TrainRunFile::TrainRunFile(const std::string& path, const Provenance& prov, const std::string& dataset,
                           const TrainConfig& c, const DataShape& s, const MemoryPrediction& predicted)
    : writer_(path, "run file"), histograms_(c.hist_every > 0) {
  const io::JobFiles& files = xmc_run_files();
  std::vector<io::TableSpec> tables = {files.table("epochs").spec};
  if (histograms_) {
    tables.push_back(files.table("grad_hist").spec);
    tables.push_back(files.table("logit_grad_hist").spec);
  }
  writer_.create(prov, tables, io::Publish::at_finish, {}, [&](hid_t file) {
    write_config(file, dataset, c, s);
    write_predicted_memory(file, c, s, predicted);
  });
  if (histograms_) writer_.describe([&](hid_t file) { describe_histograms(file, c); });
}

// Not finished (an exception ends the run): the writer removes the temporary file; OUT is as it was.
TrainRunFile::~TrainRunFile() = default;

void TrainRunFile::append_epoch(const EpochRecord& r, const GradientHistogram* dW_hist, const GradientHistogram* G_hist) {
  // One flush for the epoch's rows in all three tables: a killed run keeps every finished epoch.
  const EpochRow row = EpochRow::from(r);
  std::vector<io::RunFileWriter::Row> rows = {{"epochs", &row, sizeof row}};
  const GradientHistogram empty;
  if (dW_hist && histograms_) {
    const GradientHistogram& G = G_hist ? *G_hist : empty;
    rows.push_back({"grad_hist", dW_hist->counts.data(), dW_hist->counts.size() * sizeof(int64_t)});
    rows.push_back({"logit_grad_hist", G.counts.data(), G.counts.size() * sizeof(int64_t)});
  }
  writer_.append(rows);
}

void TrainRunFile::set_attr(const std::string& name, const std::string& value) { writer_.set_attr(name, value); }

void TrainRunFile::set_attr(const std::string& name, int64_t value) { writer_.set_attr(name, value); }

void TrainRunFile::finish(const RunOutcome* o, const std::string& status, const std::string& reason) {
  const io::WriteSection writing;  // up to the rename
  writer_.set_attr("status", status);
  writer_.set_attr("reason", reason);
  if (o) {
    writer_.set_attr("measured_train_peak_bytes", o->measured_train_peak, "memory");
    writer_.set_attr("measured_peak_bytes", o->measured_peak, "memory");
    writer_.set_attr("measured_rss_growth_bytes", o->measured_rss_growth, "memory");
    writer_.set_attr("steps", o->steps);
    writer_.set_attr("mean_step_s", o->mean_step_s);
  }
  writer_.finish(utc_now());
}

std::vector<EpochRow> TrainRunFile::read_epochs(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_table<EpochRow>(f, "epochs", epoch_type(), path);
}

}  // namespace lobench::train
