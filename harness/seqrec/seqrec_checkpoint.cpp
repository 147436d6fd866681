#include "harness/seqrec/seqrec_checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <stdexcept>

#include "harness/io/h5_io.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/io/table_row.hpp"
#include "harness/seqrec/seqrec_memory.hpp"

namespace lobench::seqrec {

namespace {

constexpr const char* kSchema = "lobench train-seqrec checkpoint, version 2";
constexpr const char* kSchemaV1 = "lobench train-seqrec checkpoint, version 1";

h5::Handle epoch_type() { return io::compound_type(sizeof(EpochRow), EpochRow::columns()); }

template <typename T>
void write_vector(hid_t f, const std::string& name, const std::vector<T>& v) {
  h5::write<T>(f, name, {int64_t(v.size())}, v.data());
}

void write_rows(hid_t f, const std::string& name, const std::vector<EpochRow>& rows, const std::string& what) {
  const h5::Handle type = epoch_type();
  h5::Table t = h5::Table::create(f, name, type, /*chunk_rows=*/16, what);
  for (const EpochRow& r : rows) t.append(r, h5::Table::Flush::no);
}

}  // namespace

sweep::Settings training_settings(const SeqrecConfig& c, const std::string& data_sha256) {
  const auto text = [](const auto& v) { return fmt::format("{}", v); };
  return {{"data-sha256", data_sha256},
          {"--protocol", c.protocol},
          {"--L", text(c.L)},
          {"--N", text(c.N)},
          {"--B", text(c.B)},
          {"--micro-batch", text(micro_batch_of(c))},
          {"--D", text(c.D)},
          {"--layers", text(c.layers)},
          {"--heads", text(c.heads)},
          {"--block", c.block},
          {"--model", c.tied ? "sasrec" : "sasrec_untied"},
          {"--output-bias", c.item_bias ? "item" : "none"},
          {"--dropout", text(c.dropout)},
          {"--variant", c.variant},
          {"--block-v", text(c.block_v)},
          {"--operand", c.operand},
          {"--reduction", c.reduction},
          {"--lr", text(c.lr)},
          {"--weight-decay", text(c.weight_decay)},
          {"--adam-eps", text(c.adam_eps)},
          {"--adam-beta2", text(c.adam_beta2)},
          {"--negatives", c.negatives},
          {"--warmup-steps", text(c.warmup_steps)},
          {"--opt-precision", c.optimizer_precision},
          {"--seed", text(c.seed)},
          {"--select", c.select}};
}

std::string checkpoint_identity(const SeqrecConfig& c, const std::string& data_sha256) {
  std::string out;
  for (const sweep::Setting& s : training_settings(c, data_sha256))
    out += (out.empty() ? "" : "; ") + s.name + "=" + s.value;
  return out;
}

namespace {

// "NAME=VALUE; ..." back into (name, value) pairs, in order (no value holds "; ").
std::vector<std::pair<std::string, std::string>> identity_fields(const std::string& identity) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t at = 0; at <= identity.size();) {
    size_t end = identity.find("; ", at);
    if (end == std::string::npos) end = identity.size();
    const std::string field = identity.substr(at, end - at);
    const size_t eq = field.find('=');
    out.emplace_back(field.substr(0, eq), eq == std::string::npos ? "" : field.substr(eq + 1));
    at = end + 2;
  }
  return out;
}

}  // namespace

std::string identity_differences(const std::string& checkpoint, const std::string& here) {
  if (checkpoint == here) return "";
  const auto theirs = identity_fields(checkpoint), ours = identity_fields(here);
  std::string out;
  const auto add = [&](const std::string& clause) { out += (out.empty() ? "" : "; ") + clause; };
  for (const auto& [name, value] : ours) {
    const auto it = std::find_if(theirs.begin(), theirs.end(), [&](const auto& f) { return f.first == name; });
    if (it == theirs.end()) add(fmt::format("{}: not in the checkpoint, {} here", name, value));
    else if (it->second != value)
      add(name == "data-sha256" ? fmt::format("the data: its content (SHA-256) is {} in the checkpoint, {} here (another "
                                              "file, or the file changed)",
                                              it->second.substr(0, 16), value.substr(0, 16))
                                : fmt::format("{}: {} in the checkpoint, {} here", name, it->second, value));
  }
  for (const auto& [name, value] : theirs)
    if (std::none_of(ours.begin(), ours.end(), [&](const auto& f) { return f.first == name; }))
      add(fmt::format("{}: {} in the checkpoint, not a setting here", name, value));
  return out.empty() ? fmt::format("identity '{}' in the checkpoint, '{}' here", checkpoint, here) : out;
}

void write_checkpoint(const std::string& path, const SeqrecCheckpoint& k, const std::vector<std::string>& inputs,
                      const std::string& option) {
  io::RunFileWriter out(path, option);
  out.begin_whole(inputs, /*overwrite=*/true);  // the previous checkpoint of this run is replaced (checked at start)
  out.write_whole([&](hid_t f) {
    h5::write_attr(f, "schema", std::string(kSchema));
    h5::write_attr(f, "identity", k.identity);
    h5::write_attr(f, "epoch", k.epoch);
    h5::write_attr(f, "steps", k.steps);
    h5::write_attr(f, "optimizer_precision", to_string(k.optimizer.precision));
    h5::write_attr(f, "optimizer_steps", k.optimizer.steps);
    h5::write_attr(f, "early_stop_since_best", k.since_best);
    write_vector(f, "parameters", k.parameters);
    if (k.optimizer.precision == OptimizerPrecision::fp32) {
      write_vector(f, "adam_m", k.optimizer.m);
      write_vector(f, "adam_v", k.optimizer.v);
    } else {
      write_vector(f, "adam_m16", k.optimizer.m16);
      write_vector(f, "adam_v16", k.optimizer.v16);
      write_vector(f, "adam_c16", k.optimizer.c16);
    }
    write_rows(f, "epochs", k.epochs, path);
    write_rows(f, "early_stop_best", k.best.epoch > 0 ? std::vector<EpochRow>{k.best} : std::vector<EpochRow>{}, path);
  });
}

namespace {

// Dataset `name` of `f` read whole (with_state), or only checked: its header, that it holds T, and that
// the file stores the bytes its header claims (h5::inspect), without reading them. Returns its length.
template <typename T>
int64_t read_or_check(hid_t f, const char* name, bool with_state, std::vector<T>& into) {
  if (with_state) {
    into = h5::read<T>(f, name).data;
    return int64_t(into.size());
  }
  const h5::DatasetInfo info = h5::inspect(f, name);
  h5::require_type<T>(info, name);
  return info.elements;
}

}  // namespace

SeqrecCheckpoint read_checkpoint(const std::string& path, const std::string& option, bool with_state) {
  const auto fail = [&](const std::string& why) {
    return std::runtime_error(fmt::format("{} '{}': {}", option, path, why));
  };
  io::require_input_file(path, option);
  h5::prepare_library();
  if (H5Fis_hdf5(path.c_str()) <= 0) throw fail("not an HDF5 file (empty, truncated, or another kind of file)");
  SeqrecCheckpoint k;
  try {
    const h5::Handle f = h5::open_file_read(path);
    const auto text = [&](const char* name) {
      if (auto v = h5::read_attr_string(f, name)) return *v;
      throw fail(fmt::format("no '{}' attribute (not a complete train-seqrec checkpoint)", name));
    };
    const auto count = [&](const char* name) {
      if (auto v = h5::read_attr_int64(f, name)) return *v;
      throw fail(fmt::format("no '{}' attribute (not a complete train-seqrec checkpoint)", name));
    };
    if (const std::string schema = text("schema"); schema == kSchemaV1)
      throw fail("written by an older lobench (checkpoint version 1, whose identity names the data by its file name "
                 "and counts, not its content); it cannot be checked against this data: train from the start");
    else if (schema != kSchema)
      throw fail(schema.rfind("lobench train-seqrec checkpoint", 0) == 0
                     ? fmt::format("schema '{}', not '{}' (from a newer lobench?)", schema, kSchema)
                     : fmt::format("not a train-seqrec checkpoint (its schema: '{}')", schema));
    k.identity = text("identity");
    k.epoch = count("epoch");
    k.steps = count("steps");
    k.since_best = count("early_stop_since_best");
    k.optimizer.precision = parse_optimizer_precision(text("optimizer_precision"));
    k.optimizer.steps = count("optimizer_steps");
    k.parameter_count = read_or_check(f, "parameters", with_state, k.parameters);
    std::vector<int64_t> lengths;
    if (k.optimizer.precision == OptimizerPrecision::fp32) {
      lengths = {read_or_check(f, "adam_m", with_state, k.optimizer.m), read_or_check(f, "adam_v", with_state, k.optimizer.v)};
    } else {
      lengths = {read_or_check(f, "adam_m16", with_state, k.optimizer.m16),
                 read_or_check(f, "adam_v16", with_state, k.optimizer.v16),
                 read_or_check(f, "adam_c16", with_state, k.optimizer.c16)};
    }
    for (const int64_t n : lengths)
      if (n != k.parameter_count)
        throw fail(fmt::format("{} parameters but optimizer moments of {}: not a complete checkpoint", k.parameter_count, n));
    const h5::Handle type = epoch_type();
    k.epochs = h5::read_table<EpochRow>(f, "epochs", type, path);
    const std::vector<EpochRow> best = h5::read_table<EpochRow>(f, "early_stop_best", type, path);
    if (best.size() > 1) throw fail("more than one early_stop_best row");
    if (!best.empty()) k.best = best.front();
  } catch (const h5::Error& e) {
    throw fail(e.what());
  } catch (const std::invalid_argument& e) {  // an optimizer precision that is none
    throw fail(e.what());
  }
  if (k.epoch < 1 || k.steps < 1 || k.optimizer.steps != k.steps)
    throw fail(fmt::format("epoch {}, steps {}, optimizer steps {}: not a checkpoint of a run that trained", k.epoch,
                           k.steps, k.optimizer.steps));
  return k;
}

}  // namespace lobench::seqrec
