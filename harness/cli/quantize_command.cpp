#include "harness/cli/quantize_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/cli/option_checks.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/system_memory.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/rounding.hpp"

namespace lobench {

namespace {

namespace lp = lobench::precision;

constexpr const char* kHelp =
    "Round the float32 dataset 'x' of an HDF5 file (any rank) into a number format and write 'values'\n"
    "(float32, the rounded values) and 'codes' (uint8 up to 8 bits, uint16 up to 16 bits) of the same\n"
    "shape, with attributes format, rounding, seed, sr_bits, nan_inputs and out_of_range_inputs.\n"
    "Semantics are ml_dtypes' (precision_sim/README.md): NaN inputs become the format's NaN with their\n"
    "sign (formats without NaN, fp4/fp6, give a zero of the opposite sign, as ml_dtypes does); values\n"
    "beyond the largest finite one become inf, or NaN where the format has no inf (e4m3fn: anything\n"
    "above 464), unless the format name ends in _sat, which saturates. Stochastic rounding draws its\n"
    "bits from Philox keyed by --seed and the element index, so results do not depend on --threads.";

// A message for the user: which file, which dataset, what is wrong.
[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error("quantize: " + msg); }

template <typename Code>
std::vector<Code> encode_all(const lp::Quantizer& q, const std::vector<float>& x, const lp::RoundingOptions& ro,
                             int threads) {
  std::vector<Code> codes(x.size());
  q.encode(x, codes, ro, threads);
  return codes;
}

}  // namespace

// Longer than most functions on purpose: it is the command's whole protocol in the order it must happen
// (check options, check the input's shape before reading it, convert, write to a temporary file, rename),
// numbered in its comments, so that the order that keeps files safe is visible in one place.
void run_quantize(const QuantizeOptions& opt) {
  // 1. Everything that can be checked without touching files.
  lp::Format format;
  lp::Rounding mode;
  try {
    format = lp::parse_format(opt.format);
    mode = lp::parse_rounding(opt.rounding);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  if (!lp::can_pack(format))
    fail(fmt::format("format {} has {} bits; quantize stores codes of at most 16 bits (uint8/uint16), so use a "
                     "format of at most 16 bits (float32 and tf32 cannot be packed)",
                     format.name, format.bits()));
  if (opt.bits != 0 && !lp::is_stochastic(mode))
    fail(fmt::format("--bits applies to stochastic rounding only (rounding is {})", lp::rounding_name(mode)));
  int threads = 0;
  int64_t mem_limit = 0;
  try {
    threads = opt.threads == 0 ? cli::default_threads() : cli::check_threads("--threads", opt.threads);
    mem_limit = cli::memory_limit_or_default("--mem-limit", opt.mem_limit);
  } catch (const cli::OptionError& e) {
    fail(e.what());
  }
  const lp::Quantizer q(format);
  lp::RoundingOptions ro;
  ro.mode = mode;
  ro.seed = opt.seed;
  try {
    ro.sr_bits = q.resolved_sr_bits(opt.bits);
  } catch (const std::invalid_argument& e) {
    fail(fmt::format("--bits: {}", e.what()));
  }
  if (opt.in.empty() || opt.out.empty()) fail("--in and --out are required");

  // 2. The files: IN a regular file, OUT neither IN nor anything but a regular file; written beside OUT.
  std::unique_ptr<io::RunFileWriter> output;
  try {
    io::require_input_file(opt.in, "--in");
    output = std::make_unique<io::RunFileWriter>(opt.out, "--out");
    output->begin_whole({opt.in}, opt.overwrite);
  } catch (const io::PathError& e) {
    fail(e.what());
  }

  // 3. Read x, after checking from its header that x, its rounded values and its codes fit the limit.
  h5::Array<float> x;
  try {
    h5::Handle in = h5::open_file_read(opt.in);
    if (!h5::exists(in, "x")) fail(fmt::format("input '{}' has no dataset 'x' (quantize reads the float32 dataset 'x')", opt.in));
    const h5::DatasetInfo info = h5::inspect(in, "x");
    h5::require_type<float>(info, "x");
    const double needed = double(info.elements) * double(4 + 4 + lp::code_bytes(format));
    if (needed > double(mem_limit))
      fail(fmt::format("input '{}': dataset 'x' has shape {}: quantizing it needs {}, more than the memory limit {} "
                       "(--mem-limit)",
                       opt.in, h5::shape_text(info.shape), format_bytes(needed), format_bytes(double(mem_limit))));
    x = h5::read<float>(in, "x");
  } catch (const h5::Error& e) {
    fail(fmt::format("input '{}': {}", opt.in, e.what()));
  }

  // 4. Round and encode.
  std::vector<float> values(x.data.size());
  q.round(x.data, values, ro, threads);
  int64_t nan_inputs = 0, out_of_range = 0;
  const double max_finite = format.max_finite();
  for (float v : x.data) {
    if (std::isnan(v)) ++nan_inputs;
    else if (std::fabs(static_cast<double>(v)) > max_finite) ++out_of_range;
  }

  std::vector<uint8_t> codes8;
  std::vector<uint16_t> codes16;
  if (lp::code_bytes(format) == 1) codes8 = encode_all<uint8_t>(q, x.data, ro, threads);
  else codes16 = encode_all<uint16_t>(q, x.data, ro, threads);

  // 5. Write OUT (io::RunFileWriter: through a temporary file renamed onto OUT only when complete, so a
  // failure leaves OUT as it was).
  try {
    output->write_whole([&](hid_t out) {
      h5::write<float>(out, "values", x.shape, values.data());
      if (lp::code_bytes(format) == 1) h5::write<uint8_t>(out, "codes", x.shape, codes8.data());
      else h5::write<uint16_t>(out, "codes", x.shape, codes16.data());
      h5::write_attr(out, "format", format.name);
      h5::write_attr(out, "format_description", lp::describe(format));
      h5::write_attr(out, "rounding", std::string(lp::rounding_name(mode)));
      h5::write_attr(out, "seed", static_cast<int64_t>(opt.seed));  // the uint64 seed's bit pattern
      h5::write_attr(out, "sr_bits", static_cast<int64_t>(lp::is_stochastic(mode) ? ro.sr_bits : 0));
      h5::write_attr(out, "nan_inputs", nan_inputs);
      h5::write_attr(out, "out_of_range_inputs", out_of_range);
      h5::write_attr(out, "source", fmt::format("{}:/x", opt.in));
    });
  } catch (const std::exception& e) {
    output.reset();  // removes the temporary file
    fail(fmt::format("output '{}': {}", opt.out, e.what()));
  }

  std::string shape;
  for (int64_t d : x.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
  fmt::print("quantize: {} values of x[{}] -> {} ({}), {} NaN, {} out of range -> {}\n", x.data.size(),
             shape.empty() ? "scalar" : shape, format.name, lp::rounding_name(mode), nan_inputs, out_of_range, opt.out);
}

void register_quantize_command(CLI::App& app) {
  auto opt = std::make_shared<QuantizeOptions>();
  auto* cmd = app.add_subcommand("quantize", "Round an HDF5 float32 array into a number format (values + codes)");
  cmd->footer(kHelp);
  // --to, not --format: in every other command --format is what stdout gets (harness/cli/options.hpp).
  cmd->add_option("--to", opt->format,
                  "the number format to round x into, e.g. e4m3fn, e5m2, bf16, fp16, e2m1fn, e5m7, e4m3fn_sat "
                  "(required)");
  cli::deprecated(cmd, "--format", "--to", [opt](const std::string& v) { opt->format = v; });
  cli::shared(cmd->add_option("--rounding", opt->rounding),
              "nearest_even, nearest_away, toward_zero, up, down, stochastic, stochastic_exact");
  cmd->add_option("--bits", opt->bits, "Random bits k for stochastic rounding (1..31; default 23 - mantissa bits)");
  cli::shared(cmd->add_option("--seed", opt->seed), "here only stochastic rounding draws");
  auto* threads = cli::shared(cmd->add_option("--threads", opt->threads), "results do not depend on it");
  auto* mem = cli::shared(cmd->add_option("--mem-limit", opt->mem_limit), "x, its values and its codes");
  cli::shared(cmd->add_option("--in", opt->in), "with the float32 dataset 'x' (required)")->required();
  cli::shared(cmd->add_option("--out", opt->out),
              "HDF5, written beside it and renamed when complete; an existing file is refused unless "
              "--overwrite; never the input, never anything but a regular file (required)")
      ->required();
  cli::shared(cmd->add_flag("--overwrite", opt->overwrite), "OUT, a regular file");
  cmd->callback([opt, threads, mem] {
    if (opt->format.empty()) fail("--to FORMAT is required (the number format to round x into)");
    // Given, --threads must be a count in [1, max] (0 is only run_quantize's "not given"), and
    // --mem-limit a size (empty is only "not given").
    try {
      if (threads->count() > 0) cli::check_threads("--threads", opt->threads);
      if (mem->count() > 0) cli::parse_memory_limit("--mem-limit", opt->mem_limit);
    } catch (const cli::OptionError& e) {
      fail(e.what());
    }
    run_quantize(*opt);
  });
}

}  // namespace lobench
