#include "harness/seqrec/seqrec_run_file.hpp"

#include <cstddef>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "harness/io/interrupt_guard.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "variants/cpu/bf16_products.hpp"

namespace lobench::seqrec {

namespace {

h5::Handle step_type() { return io::compound_type(sizeof(StepRow), StepRow::columns()); }
h5::Handle epoch_type() { return io::compound_type(sizeof(EpochRow), EpochRow::columns()); }
h5::Handle rank_type() { return io::compound_type(sizeof(RankRow), RankRow::columns()); }

// What SCHEMA.md says of a train-seqrec run file beside its tables.
constexpr const char* kAbout =
    "One file per point of the sweep, `NAME.h5` in `--out-dir` (or `--out` for a single point). Root "
    "attributes: the provenance above, the data (`dataset`, `V`, `users`, "
    "`interactions`, `train_windows`, `eval_users`, the popularity baseline's `popularity_test_*`), the "
    "configuration (every option by its name: `L`, `N`, `B`, `D`, `layers`, `variant`, `operand`, `lr`, "
    "`seed`, ...), the run's place in its sweep (`sweep`, `sweep_index`, `sweep_runs`, `partition`), and at "
    "the end `status` (`ok`, `skipped` with the `reason`, `dry_run`, `failed`, `interrupted`), `steps`, "
    "`steps_per_s`, `rss_peak_bytes`, `parameters_hash`; with `--early-stop` the best dev epoch "
    "(`best_dev_epoch`, `best_test_*`), with `--resume-from` `resumed_from` and `resumed_at_epoch`, "
    "data-parallel `mpi_library`.";

// The root attributes: the configuration and the data.
void write_config(hid_t file, const SeqrecConfig& c, const DataSummary& d) {
  h5::write_attr(file, "schema", seqrec_run_files().schema());
  h5::write_attr(file, "dataset", d.name);
  h5::write_attr(file, "syn_scale", c.syn_scale);
  h5::write_attr(file, "data_seed", int64_t(c.data_seed));
  h5::write_attr(file, "V", d.V);
  h5::write_attr(file, "users", d.users);
  h5::write_attr(file, "users_too_short", d.too_short);
  h5::write_attr(file, "interactions", d.interactions);
  h5::write_attr(file, "train_windows", d.train_windows);
  h5::write_attr(file, "eval_users", d.eval_users);
  h5::write_attr(file, "popularity_test_hit_at_8", d.popularity_test_hit_at_8);
  h5::write_attr(file, "popularity_test_hr_at_10", d.popularity_test_hr_at_10);
  h5::write_attr(file, "popularity_test_ndcg_at_10", d.popularity_test_ndcg_at_10);
  h5::write_attr(file, "protocol", c.protocol);
  h5::write_attr(file, "L", c.L);
  h5::write_attr(file, "N", c.N);
  h5::write_attr(file, "B", c.B);
  h5::write_attr(file, "micro_batch", micro_batch_of(c));
  h5::write_attr(file, "ranks", int64_t(c.ranks));
  h5::write_attr(file, "D", c.D);
  h5::write_attr(file, "layers", c.layers);
  h5::write_attr(file, "heads", c.heads);
  h5::write_attr(file, "block", c.block);
  h5::write_attr(file, "dropout", double(c.dropout));
  h5::write_attr(file, "tied", int64_t(c.tied));
  h5::write_attr(file, "output_bias", std::string(c.item_bias ? "item" : "none"));
  h5::write_attr(file, "variant", c.variant);
  h5::write_attr(file, "block_v", c.block_v);
  h5::write_attr(file, "operand", c.operand);
  if (c.operand == "bf16") {  // the kernel of the bf16 products, or why there is none
    const auto why = cpu::bf16_products_unavailable();
    h5::write_attr(file, "bf16_kernel", why ? "none: " + *why : std::string(cpu::to_string(cpu::active_bf16_kernel())));
  }
  h5::write_attr(file, "reduction", c.reduction);
  h5::write_attr(file, "lr", double(c.lr));
  h5::write_attr(file, "weight_decay", double(c.weight_decay));
  h5::write_attr(file, "adam_eps", double(c.adam_eps));
  h5::write_attr(file, "adam_beta2", double(c.adam_beta2));
  h5::write_attr(file, "warmup_steps", c.warmup_steps);
  h5::write_attr(file, "optimizer_precision", c.optimizer_precision);
  h5::write_attr(file, "max_steps", c.steps);
  h5::write_attr(file, "epochs", c.epochs);
  h5::write_attr(file, "eval_every", c.eval_every);
  h5::write_attr(file, "max_eval_users", c.max_eval_users);
  h5::write_attr(file, "exclude_history", int64_t(c.exclude_history));
  h5::write_attr(file, "select", c.select);
  h5::write_attr(file, "negatives", c.negatives);
  h5::write_attr(file, "seed", int64_t(c.seed));
  h5::write_attr(file, "threads", int64_t(c.threads));
  h5::write_attr(file, "mem_limit_bytes", c.mem_limit);
}

// OUT's folder, created before OUT's lock is taken beside OUT.
const std::string& with_folder(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  return path;
}

}  // namespace

const io::JobFiles& seqrec_run_files() {
  static const io::JobFiles files = [] {
    io::JobFiles f;
    f.command = "train-seqrec";
    f.about = kAbout;
    f.tables = {{io::TableSpec::of<StepRow>("steps", /*chunk_rows=*/64), "one row per training step, flushed as it ends"},
                {io::TableSpec::of<EpochRow>("epochs", /*chunk_rows=*/16), "one row per epoch, flushed as it ends"},
                {io::TableSpec::of<RankRow>("ranks", /*chunk_rows=*/16),
                 "data-parallel runs only: one row per rank, gathered on rank 0 at the end"}};
    f.records = {{"memory", {"predicted_", "measured_"}, &MemoryRow::columns(),
                  "the bytes by part, predicted before the run and measured by the counting allocators at the end"}};
    return f;
  }();
  return files;
}

MemoryRow MemoryRow::from(const SeqrecMemory& m) {
  MemoryRow r;
  r.parameters_bytes = m.parameters;
  r.gradients_bytes = m.gradients;
  r.optimizer_state_bytes = m.optimizer_state;
  r.activations_bytes = m.activations;
  r.loss_workspace_bytes = m.loss_workspace;
  r.loss_outputs_bytes = m.loss_outputs;
  r.gradient_sums_bytes = m.gradient_sums;
  r.total_bytes = m.total();
  return r;
}

const std::vector<io::Column>& MemoryRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(MemoryRow, LOBENCH_SEQREC_MEMORY_COLUMNS);
  return c;
}

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
    : writer_(with_folder(path), "--out") {
  const io::JobFiles& files = seqrec_run_files();
  writer_.create(prov, {files.table("steps").spec, files.table("epochs").spec}, io::Publish::at_finish, inputs, [&](hid_t file) {
                   write_config(file, c, d);
                   h5::Handle g(H5Gcreate2(file, "memory", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
                   const MemoryRow m = MemoryRow::from(predicted);
                   io::write_record_attrs(g, "predicted_", &m, MemoryRow::columns());
                 });
}

void SeqrecRunFile::set_place(const SweepPlace& place) { io::record_place(writer_, place); }

void SeqrecRunFile::set_products(const std::string& products, const std::string& basis) {
  writer_.set_attr("fp32_products", products);
  writer_.set_attr("fp32_products_basis", basis);
}

// Every row flushed (nothing left unwritten between steps, so a kill then loses nothing); only epochs
// are also fsynced, as steps can be milliseconds apart.
void SeqrecRunFile::append_step(const StepRow& r) { writer_.append("steps", r, io::RunFileWriter::Durability::flush); }

void SeqrecRunFile::append_epoch(const EpochRow& r) { writer_.append("epochs", r); }

void SeqrecRunFile::set_ranks(const std::string& mpi_library, const std::vector<RankRow>& ranks) {
  writer_.set_attr("mpi_library", mpi_library);
  writer_.add_table(seqrec_run_files().table("ranks").spec);
  std::vector<io::RunFileWriter::Row> rows;
  for (const RankRow& r : ranks) rows.push_back({"ranks", &r, sizeof r});
  writer_.append(rows);
}

void SeqrecRunFile::set_early_stopping(int64_t patience, const EpochRow& best, int64_t stopped_at_epoch) {
  writer_.set_attr("early_stop", patience);
  writer_.set_attr("best_dev_epoch", best.epoch);
  const double none = std::numeric_limits<double>::quiet_NaN();
  const bool any = best.epoch > 0;
  writer_.set_attr("best_dev_hr_at_10", any ? best.dev_hr_at_10 : none);
  writer_.set_attr("best_dev_ndcg_at_10", any ? best.dev_ndcg_at_10 : none);
  writer_.set_attr("best_dev_ndcg_at_20", any ? best.dev_ndcg_at_20 : none);
  writer_.set_attr("best_test_hit_at_8", any ? best.test_hit_at_8 : none);
  writer_.set_attr("best_test_hr_at_10", any ? best.test_hr_at_10 : none);
  writer_.set_attr("best_test_ndcg_at_10", any ? best.test_ndcg_at_10 : none);
  writer_.set_attr("best_test_ndcg_at_20", any ? best.test_ndcg_at_20 : none);
  writer_.set_attr("early_stopped_at_epoch", stopped_at_epoch);
}

void SeqrecRunFile::set_resumed(const std::string& checkpoint, int64_t epoch) {
  writer_.set_attr("resumed_from", checkpoint);
  writer_.set_attr("resumed_at_epoch", epoch);
}

void SeqrecRunFile::finish(const std::string& status, const std::string& reason, const SeqrecMemory* measured,
                           int64_t steps, double steps_per_s, int64_t rss_peak_bytes, const std::string& parameters_hash) {
  const io::WriteSection writing;  // up to the rename
  writer_.set_attr("parameters_hash", parameters_hash);
  writer_.set_attr("status", status);
  writer_.set_attr("reason", reason);
  writer_.set_attr("steps", steps);
  writer_.set_attr("steps_per_s", steps_per_s);
  writer_.set_attr("rss_peak_bytes", rss_peak_bytes);
  if (measured) {
    const MemoryRow m = MemoryRow::from(*measured);
    writer_.set_record_attrs("memory", "measured_", &m, MemoryRow::columns());
  }
  writer_.finish(utc_now());  // the run file appears (or replaces the earlier one) complete
}

bool SeqrecRunFile::close_interrupted(const std::string& reason, int64_t steps, double steps_per_s,
                                      int64_t rss_peak_bytes) {
  const io::WriteSection writing;  // up to the rename
  // (written even where the file is then discarded: the writer decides that, at the close)
  writer_.set_attr("parameters_hash", std::string());  // (no final parameters: "" as documented)
  writer_.set_attr("status", std::string("interrupted"));
  writer_.set_attr("reason", reason);
  writer_.set_attr("steps", steps);
  writer_.set_attr("steps_per_s", steps_per_s);
  writer_.set_attr("rss_peak_bytes", rss_peak_bytes);
  return writer_.close_interrupted();
}

// Not finished (an exception ends the run): the writer removes the temporary file; OUT is as it was.
SeqrecRunFile::~SeqrecRunFile() = default;

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
