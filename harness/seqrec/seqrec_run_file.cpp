#include "harness/seqrec/seqrec_run_file.hpp"

#include <cstddef>
#include <filesystem>

#include <fmt/format.h>

#include "harness/io/interrupt_guard.hpp"
#include "harness/io/provenance_attrs.hpp"

namespace lobench::seqrec {

namespace {

h5::Handle step_type() { return io::compound_type(sizeof(StepRow), StepRow::columns()); }
h5::Handle epoch_type() { return io::compound_type(sizeof(EpochRow), EpochRow::columns()); }
h5::Handle rank_type() { return io::compound_type(sizeof(RankRow), RankRow::columns()); }

void write_memory(hid_t g, const std::string& prefix, const SeqrecMemory& m) {
  h5::write_attr(g, prefix + "parameters_bytes", m.parameters);
  h5::write_attr(g, prefix + "gradients_bytes", m.gradients);
  h5::write_attr(g, prefix + "optimizer_state_bytes", m.optimizer_state);
  h5::write_attr(g, prefix + "activations_bytes", m.activations);
  h5::write_attr(g, prefix + "loss_workspace_bytes", m.loss_workspace);
  h5::write_attr(g, prefix + "loss_outputs_bytes", m.loss_outputs);
  h5::write_attr(g, prefix + "gradient_sums_bytes", m.gradient_sums);
  h5::write_attr(g, prefix + "total_bytes", m.total());
}

}  // namespace

const std::vector<io::Column>& StepRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(StepRow, LOBENCH_SEQREC_STEP_COLUMNS);
  return c;
}

const std::vector<io::Column>& RankRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(RankRow, LOBENCH_SEQREC_RANK_COLUMNS);
  return c;
}

std::string fnv1a_hex(const void* data, int64_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 14695981039346656037ull;
  for (int64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

const std::vector<io::Column>& EpochRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(EpochRow, LOBENCH_SEQREC_EPOCH_COLUMNS);
  return c;
}

SeqrecRunFile::SeqrecRunFile(const std::string& path, const Provenance& prov, const SeqrecConfig& c,
                             const DataSummary& d, const SeqrecMemory& predicted, const std::vector<std::string>& inputs)
    : path_(path) {
  const io::WriteSection writing;  // a second Ctrl-C waits for the flush (io/interrupt_guard.hpp)
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  output_ = std::make_unique<io::OutputFile>(path, inputs, "--out");
  file_ = h5::create_file(output_->temp_path());
  write_provenance(file_, prov);
  h5::write_attr(file_, "schema", std::string("lobench train-seqrec run, version 1"));
  h5::write_attr(file_, "dataset", d.name);
  h5::write_attr(file_, "syn_scale", c.syn_scale);
  h5::write_attr(file_, "data_seed", int64_t(c.data_seed));
  h5::write_attr(file_, "V", d.V);
  h5::write_attr(file_, "users", d.users);
  h5::write_attr(file_, "users_too_short", d.too_short);
  h5::write_attr(file_, "interactions", d.interactions);
  h5::write_attr(file_, "train_windows", d.train_windows);
  h5::write_attr(file_, "eval_users", d.eval_users);
  h5::write_attr(file_, "popularity_test_hit_at_8", d.popularity_test_hit_at_8);
  h5::write_attr(file_, "popularity_test_hr_at_10", d.popularity_test_hr_at_10);
  h5::write_attr(file_, "popularity_test_ndcg_at_10", d.popularity_test_ndcg_at_10);
  h5::write_attr(file_, "protocol", c.protocol);
  h5::write_attr(file_, "L", c.L);
  h5::write_attr(file_, "N", c.N);
  h5::write_attr(file_, "B", c.B);
  h5::write_attr(file_, "micro_batch", micro_batch_of(c));
  h5::write_attr(file_, "ranks", int64_t(c.ranks));
  h5::write_attr(file_, "D", c.D);
  h5::write_attr(file_, "layers", c.layers);
  h5::write_attr(file_, "heads", c.heads);
  h5::write_attr(file_, "dropout", double(c.dropout));
  h5::write_attr(file_, "tied", int64_t(c.tied));
  h5::write_attr(file_, "output_bias", std::string(c.item_bias ? "item" : "none"));
  h5::write_attr(file_, "variant", c.variant);
  h5::write_attr(file_, "block_v", c.block_v);
  h5::write_attr(file_, "reduction", c.reduction);
  h5::write_attr(file_, "lr", double(c.lr));
  h5::write_attr(file_, "weight_decay", double(c.weight_decay));
  h5::write_attr(file_, "adam_eps", double(c.adam_eps));
  h5::write_attr(file_, "warmup_steps", c.warmup_steps);
  h5::write_attr(file_, "optimizer_precision", c.optimizer_precision);
  h5::write_attr(file_, "max_steps", c.steps);
  h5::write_attr(file_, "epochs", c.epochs);
  h5::write_attr(file_, "eval_every", c.eval_every);
  h5::write_attr(file_, "max_eval_users", c.max_eval_users);
  h5::write_attr(file_, "exclude_history", int64_t(c.exclude_history));
  h5::write_attr(file_, "seed", int64_t(c.seed));
  h5::write_attr(file_, "threads", int64_t(c.threads));
  h5::write_attr(file_, "mem_limit_bytes", c.mem_limit);
  {
    h5::Handle g(H5Gcreate2(file_, "memory", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    write_memory(g, "predicted_", predicted);
  }
  steps_ = h5::Table::create(file_, "steps", step_type(), 64, path);
  epochs_ = h5::Table::create(file_, "epochs", epoch_type(), 16, path);
  h5::flush_to_disk(file_);
}

void SeqrecRunFile::set_place(const SweepPlace& place) {
  const io::WriteSection writing;
  h5::write_attr(file_, "sweep", place.sweep);
  h5::write_attr(file_, "sweep_index", place.index);
  h5::write_attr(file_, "sweep_runs", place.runs);
  h5::write_attr(file_, "partition", place.partition);
  h5::flush_to_disk(file_);
}

// Every row flushed (nothing left unwritten between steps, so a kill then loses nothing); only epochs
// are also fsynced, as steps can be milliseconds apart.
void SeqrecRunFile::append_step(const StepRow& r) {
  const io::WriteSection writing;
  steps_.append(r, h5::Table::Flush::yes);
}

void SeqrecRunFile::append_epoch(const EpochRow& r) {
  const io::WriteSection writing;
  epochs_.append(r, h5::Table::Flush::no);
  h5::flush_to_disk(file_);
}

void SeqrecRunFile::set_ranks(const std::string& mpi_library, const std::vector<RankRow>& ranks) {
  const io::WriteSection writing;
  h5::write_attr(file_, "mpi_library", mpi_library);
  h5::Table t = h5::Table::create(file_, "ranks", rank_type(), 16, path_);
  for (const RankRow& r : ranks) t.append(r, h5::Table::Flush::no);
  h5::flush_to_disk(file_);
}

void SeqrecRunFile::finish(const std::string& status, const std::string& reason, const SeqrecMemory* measured,
                           int64_t steps, double steps_per_s, int64_t rss_peak_bytes, const std::string& parameters_hash) {
  const io::WriteSection writing;
  h5::write_attr(file_, "parameters_hash", parameters_hash);
  h5::write_attr(file_, "status", status);
  h5::write_attr(file_, "reason", reason);
  h5::write_attr(file_, "steps", steps);
  h5::write_attr(file_, "steps_per_s", steps_per_s);
  h5::write_attr(file_, "rss_peak_bytes", rss_peak_bytes);
  if (measured) {
    h5::Handle g(H5Gopen2(file_, "memory", H5P_DEFAULT), H5Gclose);
    write_memory(g, "measured_", *measured);
  }
  h5::write_attr(file_, "end_utc", utc_now());
  h5::flush_to_disk(file_);
  steps_ = h5::Table();
  epochs_ = h5::Table();
  file_.reset();
  output_->commit();  // the run file appears (or replaces the earlier one) complete
}

// Not finished (an exception ends the run): the temporary file is closed, then removed by output_.
SeqrecRunFile::~SeqrecRunFile() {
  steps_ = h5::Table();
  epochs_ = h5::Table();
  file_.reset();
}

std::vector<StepRow> SeqrecRunFile::read_steps(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_table<StepRow>(f, "steps", step_type(), path);
}

std::vector<RankRow> SeqrecRunFile::read_ranks(const std::string& path) {
  auto f = h5::open_file_read(path);
  if (H5Lexists(f, "ranks", H5P_DEFAULT) <= 0) return {};
  return h5::read_table<RankRow>(f, "ranks", rank_type(), path);
}

std::vector<EpochRow> SeqrecRunFile::read_epochs(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_table<EpochRow>(f, "epochs", epoch_type(), path);
}

}  // namespace lobench::seqrec
