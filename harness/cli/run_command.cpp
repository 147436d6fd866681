#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "provenance.hpp"
#include "sweep.hpp"
#include "system_memory.hpp"

namespace lobench {
namespace {

// A list axis given as "a,b,c". The last occurrence wins, so that options after a named sweep
// (`@harness/sweeps/table2.args --B 32`) override the file's instead of adding to them.
template <typename T>
CLI::Option* add_list(CLI::App* cmd, const std::string& name, std::vector<T>& target, const std::string& help) {
  std::string defaults;
  for (const T& v : target) defaults += (defaults.empty() ? "" : ",") + fmt::format("{}", v);
  return cmd
      ->add_option_function<std::string>(
          name,
          [&target, name](const std::string& text) {
            std::vector<T> values;
            std::stringstream ss(text);
            std::string item;
            while (std::getline(ss, item, ',')) {
              if (item.empty()) continue;
              T v{};
              if (!CLI::detail::lexical_cast(item, v))
                throw CLI::ValidationError(name, fmt::format("'{}' is not a valid value in '{}'", item, text));
              values.push_back(v);
            }
            if (values.empty()) throw CLI::ValidationError(name, "needs at least one value");
            target = values;
          },
          help + " (comma-separated list)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->type_name("LIST")
      ->default_str(defaults);
}

}  // namespace

void register_run_command(CLI::App& app, const std::string& argv) {
  auto spec = std::make_shared<SweepSpec>();
  auto mem_limit = std::make_shared<std::string>();
  auto gpu_mem_limit = std::make_shared<std::string>();
  auto no_accuracy = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "run",
      "Sweep variants over shapes on synthetic inputs (A, E ~ N(0,1), targets uniform in [0, V)).\n"
      "Every list option takes comma-separated values; the sweep is their Cartesian product.\n"
      "Named sweeps: lobench run @harness/sweeps/NAME.args [more options]; a later option overrides an earlier one.");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_list(cmd, "--B", spec->B, "batch sizes B (positions P = B*N)");
  add_list(cmd, "--N", spec->N, "sequence lengths N");
  add_list(cmd, "--V", spec->V, "vocabulary sizes V");
  add_list(cmd, "--D", spec->D, "hidden sizes D");
  add_list(cmd, "--L", spec->L, "target ids per position L");
  add_list(cmd, "--reduction", spec->reductions, "mean (Cut BCE) and/or sum (ELMO)");
  cmd->add_flag("--weighted", spec->weighted, "draw position weights in [0.25, 2)");
  cmd->add_option("--pad-fraction", spec->pad_fraction, "fraction of target slots that are padding (-1 or V)")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--dup-fraction", spec->dup_fraction, "fraction of target slots repeating an id of the same row")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  add_list(cmd, "--block-v", spec->block_v, "vocabulary block sizes (0: the variant chooses)");
  add_list(cmd, "--block-p", spec->block_p, "position block sizes (0: the variant chooses)");
  add_list(cmd, "--threads", spec->threads, "thread counts");
  add_list(cmd, "--variants", spec->variants, "variants to run (see `lobench list`)");
  add_list(cmd, "--e-format", spec->e_formats,
           "storage formats of E: fp32, bfloat16, float8_e4m3fn, float8_e5m2, any eXmY (e3m4, e5m7, ...)");
  add_list(cmd, "--e-rounding", spec->e_roundings,
           "how E is rounded into its format: nearest_even, nearest_away, toward_zero, up, down, stochastic, stochastic_exact");
  add_list(cmd, "--operand", spec->operands,
           "precision of the products' operands: fp32, tf32, bf16 (GPU variants; CPU variants run fp32 only "
           "and record the others as skipped)");
  cmd->add_option("--seed", spec->seed, "seed of the synthetic inputs")->capture_default_str();
  cmd->add_option("--warmup", spec->warmup, "untimed runs before timing")->capture_default_str();
  cmd->add_option("--reps", spec->reps, "timed runs (median reported, every sample kept; at most 64)")->capture_default_str();
  cmd->add_option("--mem-limit", *mem_limit,
                  "skip points predicted to need more memory than this (e.g. 20G); default: available now minus max(1 GiB, 10%)");
  cmd->add_option("--gpu-mem-limit", *gpu_mem_limit,
                  "GPU variants: skip points whose working + input/output bytes on the device exceed this (e.g. 80G); "
                  "default: the device's free memory at start minus max(1 GiB, 5% of its total)");
  cmd->add_flag("--no-accuracy", *no_accuracy, "do not compute the float64 reference (faster; errors recorded as NaN)");
  cmd->add_option("--out", spec->out, "run file to write (HDF5)")->required();
  cmd->add_flag("--resume", spec->resume, "append to --out, skipping (variant, point) rows already in it");
  cmd->callback([spec, mem_limit, gpu_mem_limit, no_accuracy, argv] {
    if (!mem_limit->empty()) spec->mem_limit = parse_bytes(*mem_limit);
    if (!gpu_mem_limit->empty()) spec->gpu_mem_limit = parse_bytes(*gpu_mem_limit);
    for (const auto& op : spec->operands) validate_operand(op);  // before the run file is created
    spec->accuracy = !*no_accuracy;
    const auto parent = std::filesystem::path(spec->out).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    const int failed = run_sweep(*spec, collect_provenance(argv), std::cout, std::cerr);
    fmt::print("wrote {}{}\n", spec->out, failed ? fmt::format(" ({} rows failed)", failed) : "");
    set_command_exit_code(failed ? 1 : 0);
  });
}

}  // namespace lobench
