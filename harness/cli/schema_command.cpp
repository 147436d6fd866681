// `lobench schema`: the run files' schema (results/SCHEMA.md), generated from the one definition of
// the row (harness/io/result_row.hpp) and of `lobench run`'s axes (harness/sweep/run_axes.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>

#include "harness/cli/commands.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/result_row.hpp"
#include "harness/sweep/run_axes.hpp"

namespace lobench {

namespace {

// md into OUT the way every command writes a file (io/output_path.hpp): into a temporary file beside it,
// renamed when complete; an existing OUT only with --overwrite; a folder, FIFO or device refused.
void write_markdown(const std::string& out, const std::string& md, bool overwrite) {
  try {
    io::OutputFile file(out, {}, "--out");
    file.refuse_existing_unless(overwrite);
    {
      std::ofstream f(file.temp_path(), std::ios::binary | std::ios::trunc);
      f << md;
      f.flush();
      if (!f) throw std::runtime_error(fmt::format("--out '{}': cannot write it (a full disk?); it is left as it was", out));
    }
    file.commit();
  } catch (const io::PathError& e) {
    throw std::invalid_argument(e.what());  // a usage error: exit 2, OUT untouched
  }
}

}  // namespace

void register_schema_command(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("schema", "Print the run files' schema as Markdown (what results/SCHEMA.md holds).");
  cli::shared(cmd->add_option("--out", *out), "Markdown instead of stdout");
  cli::shared(cmd->add_flag("--overwrite", *overwrite), "OUT, a regular file");
  cmd->callback([out, overwrite] {
    const std::string md = io::schema_markdown(sweep::run_axes_markdown());
    if (out->empty()) fmt::print("{}", md);
    else write_markdown(*out, md, *overwrite);
    set_command_exit_code(0);
  });
}

}  // namespace lobench
