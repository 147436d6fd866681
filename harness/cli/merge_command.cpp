// `lobench merge OUT PARTS...`: join the run files of a sweep's partitions (harness/io/merge_runs.hpp).
#include <fmt/format.h>

#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/io/merge_runs.hpp"
#include "harness/provenance.hpp"

namespace lobench {

void register_merge_command(CLI::App& app, const std::string& argv) {
  auto out = std::make_shared<std::string>();
  auto parts = std::make_shared<std::vector<std::string>>();
  auto overwrite = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "merge",
      "Join the run files of a sweep run in partitions (`lobench run --partition K/N`, e.g. a Slurm job array)\n"
      "into one. The parts must have the same schema version and sweep and be partitions 0..N-1 each once;\n"
      "no row may be in two parts. Each part's provenance is kept under /parts.");
  cmd->add_option("OUT", *out, "the merged run file (refused if it exists, unless --overwrite)")->required();
  cmd->add_option("PARTS", *parts, "the partitions' run files")->required();
  cmd->add_flag("--overwrite", *overwrite, "replace an existing OUT (a regular file)");
  cmd->callback([out, parts, overwrite, argv] {
    const io::MergeSummary s =
        io::merge_runs(*out, *parts, collect_provenance(argv), *overwrite ? OutMode::overwrite : OutMode::create_new);
    fmt::print("merged {} parts, {} rows -> {}\n", s.parts, s.rows, *out);
    set_command_exit_code(0);
  });
}

}  // namespace lobench
