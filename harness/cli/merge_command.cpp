// `lobench merge OUT PARTS...`: join the run files of a sweep's partitions, or the --out-dir folders of a
// training job's sweep's partitions (train-xmc, train-seqrec, ...: io/job_files.hpp), through the one
// merger (harness/io/merge_runs.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/interrupt_guard.hpp"
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
      "no row may be in two parts. Each part's provenance is kept under /parts.\n"
      "train-xmc and train-seqrec (`--partition K/N`, one --out-dir each): PARTS are the partitions' folders and OUT\n"
      "a new folder with every run file, checked the same way (each run of the sweep once); each file keeps its\n"
      "provenance.\n"
      "train-xmc --frontier (`--partition K/N`, one --out each): PARTS are the parts' run files and OUT one frontier\n"
      "file with every line, checked the same way (each line once, the fp32 baseline the same in every part).");
  cmd->add_option("OUT", *out, "the merged run file (refused if it exists, unless --overwrite), or the merged train-xmc / "
                               "train-seqrec folder (refused if anything is there)")->required();
  cmd->add_option("PARTS", *parts, "the partitions' run files, or train-xmc / train-seqrec partitions' --out-dir folders")->required();
  cli::shared(cmd->add_flag("--overwrite", *overwrite), "OUT, a regular file (not a folder of run files)");
  cmd->callback([out, parts, overwrite, argv] {
    const io::InterruptGuard interrupts;  // a signal leaves OUT as it was (merge writes a temporary file)
    fmt::print("{}\n", io::merge_parts(*out, *parts, collect_provenance(argv), *overwrite));
    set_command_exit_code(0);
  });
}

}  // namespace lobench
