#include "harness/seqrec/seqrec_checkpoint.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "harness/io/h5_io.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/table_row.hpp"
#include "harness/seqrec/seqrec_memory.hpp"

namespace lobench::seqrec {

namespace {

constexpr const char* kSchema = "lobench train-seqrec checkpoint, version 1";

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

std::string checkpoint_identity(const SeqrecConfig& c, int64_t V, int64_t interactions, int64_t train_windows) {
  return fmt::format(
      "dataset={} (V={}, interactions={}, train windows={}); syn-scale={}; data-seed={}; protocol={}; L={}; N={}; "
      "B={}; micro-batch={}; D={}; layers={}; heads={}; tied={}; output-bias={}; dropout={}; variant={}; "
      "block-v={}; reduction={}; lr={}; weight-decay={}; adam-eps={}; warmup-steps={}; opt-precision={}; seed={}{}",
      std::filesystem::path(c.dataset).filename().string(), V, interactions, train_windows, c.syn_scale, c.data_seed,
      c.protocol, c.L, c.N, c.B, micro_batch_of(c), c.D, c.layers, c.heads, int(c.tied), c.item_bias ? "item" : "none",
      c.dropout, c.variant, c.block_v, c.reduction, c.lr, c.weight_decay, c.adam_eps, c.warmup_steps,
      c.optimizer_precision, c.seed,
      // The products' operands (--operand) only when not fp32: checkpoints written before it existed stay valid.
      c.operand == "fp32" ? std::string() : "; operand=" + c.operand);
}

void write_checkpoint(const std::string& path, const SeqrecCheckpoint& k, const std::vector<std::string>& inputs,
                      const std::string& option) {
  const io::WriteSection writing;  // a second signal waits for the rename
  io::OutputFile out(path, inputs, option);
  out.refuse_existing_unless(true);  // the previous checkpoint of this run is replaced (the run checked it at start)
  {
    const h5::Handle f = h5::create_file(out.temp_path());
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
    h5::flush_to_disk(f);
  }
  out.commit();
}

SeqrecCheckpoint read_checkpoint(const std::string& path, const std::string& option) {
  const auto fail = [&](const std::string& why) {
    return std::runtime_error(fmt::format("{} '{}': {}", option, path, why));
  };
  io::require_input_file(path, option);
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
    if (const std::string schema = text("schema"); schema != kSchema)
      throw fail(fmt::format("schema '{}', not '{}'", schema, kSchema));
    k.identity = text("identity");
    k.epoch = count("epoch");
    k.steps = count("steps");
    k.since_best = count("early_stop_since_best");
    k.optimizer.precision = parse_optimizer_precision(text("optimizer_precision"));
    k.optimizer.steps = count("optimizer_steps");
    k.parameters = h5::read<float>(f, "parameters").data;
    if (k.optimizer.precision == OptimizerPrecision::fp32) {
      k.optimizer.m = h5::read<float>(f, "adam_m").data;
      k.optimizer.v = h5::read<float>(f, "adam_v").data;
    } else {
      k.optimizer.m16 = h5::read<uint16_t>(f, "adam_m16").data;
      k.optimizer.v16 = h5::read<uint16_t>(f, "adam_v16").data;
      k.optimizer.c16 = h5::read<uint16_t>(f, "adam_c16").data;
    }
    const h5::Handle type = epoch_type();
    k.epochs = h5::read_table<EpochRow>(f, "epochs", type, path);
    const std::vector<EpochRow> best = h5::read_table<EpochRow>(f, "early_stop_best", type, path);
    if (best.size() > 1) throw fail("more than one early_stop_best row");
    if (!best.empty()) k.best = best.front();
  } catch (const h5::Error& e) {
    throw fail(e.what());
  }
  if (k.epoch < 1 || k.steps < 1 || k.optimizer.steps != k.steps)
    throw fail(fmt::format("epoch {}, steps {}, optimizer steps {}: not a checkpoint of a run that trained", k.epoch,
                           k.steps, k.optimizer.steps));
  return k;
}

}  // namespace lobench::seqrec
