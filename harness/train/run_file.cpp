#include "harness/train/run_file.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>

#include "harness/io/interrupt_guard.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "precision_sim/format.hpp"

namespace lobench::train {

namespace {

h5::Handle epoch_type() { return io::compound_type(sizeof(EpochRow), EpochRow::columns()); }

void write_breakdown(hid_t obj, const std::string& prefix, const MemoryBreakdown& m) {
  h5::write_attr(obj, prefix + "weights_bytes", m.weights);
  h5::write_attr(obj, prefix + "weight_gradient_bytes", m.weight_gradient);
  h5::write_attr(obj, prefix + "optimizer_state_bytes", m.optimizer_state);
  h5::write_attr(obj, prefix + "logits_bytes", m.logits);
  h5::write_attr(obj, prefix + "encoder_bytes", m.encoder);
  h5::write_attr(obj, prefix + "workspace_bytes", m.workspace);
  h5::write_attr(obj, prefix + "total_bytes", m.total());
}

}  // namespace

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
    : path_(path), output_(std::make_unique<io::OutputFile>(path, std::vector<std::string>{}, "run file")) {
  const io::WriteSection writing;  // a second Ctrl-C waits for the flush (io/interrupt_guard.hpp)
  file_ = h5::create_file(output_->temp_path());
  write_provenance(file_, prov);
  h5::write_attr(file_, "schema", std::string("lobench train-xmc run, version 1"));
  h5::write_attr(file_, "dataset", dataset);
  h5::write_attr(file_, "num_features", s.num_features);
  h5::write_attr(file_, "num_labels", s.num_labels);
  h5::write_attr(file_, "train_rows", s.train_rows);
  h5::write_attr(file_, "test_rows", s.test_rows);
  h5::write_attr(file_, "config", c.describe());
  h5::write_attr(file_, "D", c.D);
  h5::write_attr(file_, "activation", to_string(c.activation));
  h5::write_attr(file_, "dropout", double(c.dropout));
  h5::write_attr(file_, "encoder_precision", to_string(c.encoder_precision));
  h5::write_attr(file_, "enc_lr", double(c.enc_lr));
  h5::write_attr(file_, "enc_wd", double(c.enc_wd));
  h5::write_attr(file_, "clf_format", c.clf_format);
  h5::write_attr(file_, "clf_format_resolved", precision::describe(c.classifier_format()));
  h5::write_attr(file_, "clf_exponent_bits", int64_t(c.classifier_format().exponent_bits));
  h5::write_attr(file_, "clf_mantissa_bits", int64_t(c.classifier_format().mantissa_bits));
  h5::write_attr(file_, "clf_subnormals", int64_t(c.clf_subnormals));
  h5::write_attr(file_, "clf_rounding", parse_update_rounding(c.clf_rounding, c.sr_bits).name());
  h5::write_attr(file_, "sr_bits", int64_t(c.sr_bits));
  h5::write_attr(file_, "clf_lr", double(c.clf_lr));
  h5::write_attr(file_, "clf_init_std", c.clf_init_std);
  h5::write_attr(file_, "update_mode", to_string(c.mode));
  h5::write_attr(file_, "chunks", c.chunks);
  h5::write_attr(file_, "tile", c.tile);
  h5::write_attr(file_, "epochs", int64_t(c.epochs));
  h5::write_attr(file_, "batch", c.batch);
  h5::write_attr(file_, "max_steps", c.max_steps);
  h5::write_attr(file_, "schedule", c.schedule);
  h5::write_attr(file_, "warmup_steps", c.warmup_steps);
  h5::write_attr(file_, "seed", int64_t(c.seed));
  h5::write_attr(file_, "threads", int64_t(c.threads));
  h5::write_attr(file_, "propensity_a", c.propensity_a);
  h5::write_attr(file_, "propensity_b", c.propensity_b);
  {
    h5::Handle g(H5Gcreate2(file_, "memory", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    write_breakdown(g, "predicted_", predicted.train);
    h5::write_attr(g, "predicted_eval_extra_bytes", predicted.eval_extra);
    h5::write_attr(g, "predicted_peak_bytes", predicted.peak(c.eval_every >= 0 && s.test_rows > 0));
  }
  epochs_ = h5::Table::create(file_, "epochs", epoch_type(), /*chunk_rows=*/16, path);
  // (tables name `path`, the file the user will read, in their messages)
  if (c.hist_every > 0) {
    const hsize_t bins = GradientHistogram::kBins;
    hist_ = h5::Table::create(file_, "grad_hist", H5T_NATIVE_INT64, /*chunk_rows=*/16, path, bins);
    const auto edges = GradientHistogram::octave_edges_log2();
    h5::write<double>(file_, "grad_hist_edges_log2", {int64_t(edges.size())}, edges.data());
    h5::write_attr(hist_.id(), "bins",
                   std::string("[0] exact zeros, [1] 0<|g|<2^-48, then 4 bins per octave from 2^-48 to 2^16 "
                               "(edges in /grad_hist_edges_log2), [-2] |g|>=2^16, [-1] NaN/inf"));
    h5::write_attr(hist_.id(), "what", std::string("classifier weight gradient dW = G^T H, every element, steps "
                                                   "where step % hist_every == 0"));
    h5::write_attr(hist_.id(), "hist_every", int64_t(c.hist_every));
    logit_hist_ = h5::Table::create(file_, "logit_grad_hist", H5T_NATIVE_INT64, /*chunk_rows=*/16, path, bins);
    h5::write_attr(logit_hist_.id(), "what",
                   std::string("logit gradient G = sigmoid(z) - y of the classifier (every label x row of the batch), "
                               "steps where step % hist_every == 0; bins as /grad_hist"));
  }
  h5::flush_to_disk(file_);
}

TrainRunFile::~TrainRunFile() {
  const io::WriteSection writing;
  if (file_.valid()) H5Fflush(file_, H5F_SCOPE_GLOBAL);
}

void TrainRunFile::append_epoch(const EpochRecord& r, const GradientHistogram* dW_hist, const GradientHistogram* G_hist) {
  const io::WriteSection writing;
  // One flush for the epoch's rows in all three tables, below.
  epochs_.append(EpochRow::from(r), h5::Table::Flush::no);
  if (dW_hist && hist_.valid()) {
    const GradientHistogram empty;
    const GradientHistogram& G = G_hist ? *G_hist : empty;
    hist_.append(dW_hist->counts.data(), dW_hist->counts.size() * sizeof(int64_t), h5::Table::Flush::no);
    logit_hist_.append(G.counts.data(), G.counts.size() * sizeof(int64_t), h5::Table::Flush::no);
  }
  h5::flush_to_disk(file_);  // a killed run keeps every finished epoch
}

void TrainRunFile::set_attr(const std::string& name, const std::string& value) {
  const io::WriteSection writing;
  h5::write_attr(file_, name, value);
  H5Fflush(file_, H5F_SCOPE_GLOBAL);
}

void TrainRunFile::set_attr(const std::string& name, int64_t value) {
  const io::WriteSection writing;
  h5::write_attr(file_, name, value);
  H5Fflush(file_, H5F_SCOPE_GLOBAL);
}

void TrainRunFile::finish(const RunOutcome* o, const std::string& status, const std::string& reason) {
  const io::WriteSection writing;  // up to the rename
  h5::write_attr(file_, "status", status);
  h5::write_attr(file_, "reason", reason);
  if (o) {
    h5::Handle g(H5Gopen2(file_, "memory", H5P_DEFAULT), H5Gclose);
    h5::write_attr(g, "measured_train_peak_bytes", o->measured_train_peak);
    h5::write_attr(g, "measured_peak_bytes", o->measured_peak);
    h5::write_attr(file_, "steps", o->steps);
    h5::write_attr(file_, "mean_step_s", o->mean_step_s);
  }
  h5::write_attr(file_, "end_utc", utc_now());
  h5::flush_to_disk(file_);
  epochs_ = h5::Table();
  hist_ = h5::Table();
  logit_hist_ = h5::Table();
  file_.reset();
  output_->commit();
}

std::vector<EpochRow> TrainRunFile::read_epochs(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_table<EpochRow>(f, "epochs", epoch_type(), path);
}

}  // namespace lobench::train
