// `lobench schema`: the run files' schema (results/SCHEMA.md), generated from the one definition of
// the row (harness/io/result_row.hpp) and of `lobench run`'s axes (harness/sweep/run_axes.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>

#include "harness/cli/commands.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/result_row.hpp"
#include "harness/sweep/run_axes.hpp"

namespace lobench {

void register_schema_command(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("schema", "Print the run files' schema as Markdown (what results/SCHEMA.md holds).");
  cli::shared(cmd->add_option("--out", *out), "Markdown instead of stdout");
  cmd->callback([out] {
    const std::string md = io::schema_markdown(sweep::run_axes_markdown());
    if (out->empty()) {
      fmt::print("{}", md);
    } else {
      std::ofstream f(*out);
      f << md;
      if (!f) throw std::runtime_error("cannot write '" + *out + "'");
    }
    set_command_exit_code(0);
  });
}

}  // namespace lobench
