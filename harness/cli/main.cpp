// lobench: benchmark and simulate the BCE loss layer over huge vocabularies.
// Subcommands live one per file in harness/cli/; this file only wires them.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "args_file.hpp"
#include "commands.hpp"
#include "quantize_command.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args;
  try {
    args = lobench::expand_args_files(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "lobench: {}\n", e.what());
    return 2;
  }
  std::string joined;
  for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;

  CLI::App app{
      "lobench: exact binary cross-entropy over huge vocabularies, benchmarked and checked.\n"
      "Variants (dense, chunked, ...) compute the same loss, gradients and cut metrics; `run` sweeps\n"
      "them over shapes and records time, peak memory and error against a float64 reference in HDF5."};
  app.require_subcommand(1);
  lobench::register_list_command(app);
  lobench::register_run_command(app, joined);
  lobench::register_check_command(app, joined);
  lobench::register_train_xmc_command(app, joined);
  lobench::register_train_seqrec_command(app, joined);
  lobench::register_quantize_command(app);

  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "lobench: error: {}\n", e.what());
    return 2;
  }
  return lobench::command_exit_code();
}
