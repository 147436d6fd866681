#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

#include "harness/check.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_checks.hpp"
#include "harness/cli/options.hpp"

namespace lobench {

void register_check_command(CLI::App& app, const std::string& argv) {
  struct Opts {
    std::string in, variant, out, mem_limit;
    int64_t threads = cli::default_threads();
    bool overwrite = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "check",
      "Run one variant on your own inputs and write its outputs, to compare with your framework.\n"
      "IN: A float32 [P,D], E float32 [V,D], targets int32 [P,L] (ids outside [0,V) are padding),\n"
      "    optional weights float32 [P], optional string attribute 'reduction' (mean|sum, default mean).\n"
      "OUT: loss float64 scalar, per_position_loss float64 [P], dA float32 [P,D], dE float32 [V,D],\n"
      "     counts int64 [P,4] (TP, FP, FN, TN at logit > 0). Written to a temporary file beside OUT and\n"
      "     renamed at the end: on any error OUT is left as it was. OUT may not be IN, nor anything that\n"
      "     is not a regular file; an existing OUT is replaced only with --overwrite. Outputs do not\n"
      "     depend on --threads (bit for bit).");
  cmd->add_option("--in", o->in, "input HDF5 file")->required();
  cmd->add_option("--variant", o->variant, "variant to run (see `lobench list`)")->required();
  cmd->add_option("--out", o->out, "output HDF5 file")->required();
  cmd->add_flag("--overwrite", o->overwrite);
  cmd->add_option("--threads", o->threads, "threads (default: all cores)")->capture_default_str();
  auto* mem = cmd->add_option("--mem-limit", o->mem_limit,
                  "refuse inputs whose inputs + outputs + working set exceed this (e.g. 20G); default: available "
                  "memory now minus max(1 GiB, 10%)");
  cli::shared(cmd->get_option("--in"), "A, E, targets and optional weights, as above");
  cli::shared(cmd->get_option("--variant"), "one variant");
  cli::shared(cmd->get_option("--out"), "outputs as above, written beside it and renamed when complete; an existing "
                                        "file is refused unless --overwrite, IN always");
  cli::shared(cmd->get_option("--overwrite"), "OUT, a regular file");
  cli::shared(cmd->get_option("--threads"));
  cli::shared(mem);
  cmd->callback([o, argv, mem] {
    const int threads = cli::check_threads("--threads", o->threads);
    const int64_t limit = mem->count() > 0 ? cli::parse_memory_limit("--mem-limit", o->mem_limit)
                                           : cli::default_memory_limit();
    run_check(o->in, o->variant, o->out, threads, argv, limit, o->overwrite);
    fmt::print("wrote {} (variant {})\n", o->out, o->variant);
  });
}

}  // namespace lobench
