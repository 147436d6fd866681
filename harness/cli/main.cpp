// lobench: benchmark and simulate the BCE loss layer over huge vocabularies.
// Subcommands live one per file in harness/cli/; this file only wires them and maps every usage error
// (CLI11's own, and ours) to exit code 2 with one line on stderr.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "harness/cli/args_file.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/environment.hpp"
#include "harness/cli/numbers.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/plugin/plugin_loader.hpp"
#include "harness/sweep/isolated_row.hpp"
#include "harness/cli/quantize_command.hpp"
#include "harness/cli/suggest.hpp"
#include "harness/cli/training_commands.hpp"
#include "precision_sim/cpu_dispatch.hpp"
#include "variants/cpu/sgemm.hpp"
#include "harness/provenance.hpp"

namespace {

constexpr int kUsageError = 2;

std::string version_text() {
  const lobench::Provenance p = lobench::collect_provenance("");
  return fmt::format("lobench {} (built from commit {}{})\nbuild: {}", lobench::lobench_version(), p.build_commit,
                     p.build_dirty ? ", modified" : "", lobench::build_flags());
}

// LOBENCH_ISA names a path every kernel family must take (precision_sim/cpu_dispatch.hpp). A name that
// is not a path, or one this CPU cannot run, is a usage error now, not a failed row per point later
// (rows that `run --resume` would then never retry).
void check_isa_environment() {
  namespace cd = lobench::cpu_dispatch;
  const auto isa = cd::forced_by_environment();  // throws naming the variable and the valid names
  if (isa && !cd::cpu_supports(*isa))
    throw std::invalid_argument(fmt::format("LOBENCH_ISA={}: this CPU cannot run that path (valid here: portable{}{})",
                                            cd::name(*isa), cd::cpu_supports(cd::Isa::avx2) ? ", avx2" : "",
                                            cd::cpu_supports(cd::Isa::avx512) ? ", avx512" : ""));
}

}  // namespace

int main(int argc, char** argv) {
  // HDF5 1.10 leaves a file whose H5Fclose failed (its last flush hit a full disk) half freed, and its
  // own exit handler then closes it a second time: a segfault after the run's message. Every file is
  // closed by its owner (h5::Handle) before exit, so the library's exit handler is not wanted.
  H5dont_atexit();
  std::vector<std::string> args;
  try {
    args = lobench::expand_args_files(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "lobench: {}\n", e.what());
    return kUsageError;
  }
  try {
    lobench::cpu::sgemm_library();  // LOBENCH_GEMM, checked before any command starts
    check_isa_environment();        // LOBENCH_ISA, likewise: a bad value would fail every row instead
    lobench::cli::check_environment();  // OMP_NUM_THREADS, LOBENCH_NO_VERIFY, LOBENCH_DATA, LOBENCH_PRODUCTS
    lobench::plugin::load_environment_plugins();  // LOBENCH_PLUGIN_PATH: their variants for every command
  } catch (const std::exception& e) {
    fmt::print(stderr, "lobench: {}\n", e.what());
    return kUsageError;
  }
  std::string joined;
  for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;
  {  // how `lobench run --isolate` starts a row again: this program, these (expanded) arguments
    std::error_code ec;
    std::vector<std::string> again = args;
    again[0] = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (!ec) lobench::sweep::set_row_command(std::move(again));
  }

  CLI::App app{
      "lobench: exact binary cross-entropy over huge vocabularies, benchmarked and checked.\n"
      "Variants (dense, chunked, fused, ...) compute the same loss, gradients and cut metrics; `run` sweeps\n"
      "them over shapes and records time, peak memory and error against a float64 reference in HDF5.\n"
      "Exit status: 0 success, 1 finished with failed rows, 2 bad usage or input, 128 + N stopped by signal N\n"
      "(130 Ctrl-C, 143 SIGTERM) with every finished row kept.",
      "lobench"};  // the program's name, for `Usage: lobench [OPTIONS] SUBCOMMAND`
  app.require_subcommand(1);
  app.footer(lobench::cli::environment_help());
  app.set_version_flag("--version", version_text(), "print the version, commit and build flags and exit");
  lobench::register_list_command(app);
  lobench::register_run_command(app, joined);
  lobench::register_check_command(app, joined);
  lobench::cli::register_training_commands(app, joined, lobench::set_command_exit_code);  // the registered jobs
  lobench::register_quantize_command(app);
  lobench::register_schema_command(app);
  lobench::register_merge_command(app, joined);
  lobench::register_compare_command(app);
  lobench::register_tune_command(app);
  lobench::cli::register_options_command(app);
  lobench::cli::show_each_commands_default(app);
  lobench::cli::accept_count_notation(app);  // every integer option takes 1e5, 100k, 1.5M

  // `lobench comprae --help`: CLI11 would answer the --help with the main help and exit 0; a first word
  // that is no subcommand is a usage error whatever follows it.
  const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  const auto is_subcommand = [&](const std::string& w) {
    return std::any_of(subcommands.begin(), subcommands.end(), [&](const CLI::App* s) { return s->get_name() == w; });
  };
  if (args.size() > 1 && args[1].rfind('-', 0) != 0 && !is_subcommand(args[1])) {
    const std::vector<std::string> given(args.begin() + 1, args.end());
    if (const auto hint = lobench::typo_hint(app, given)) fmt::print(stderr, "lobench: {}\n", *hint);
    fmt::print(stderr, "Run with --help for more information.\n");
    return kUsageError;
  }

  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::vector<std::string> given(args.begin() + 1, args.end());
    if (const auto hint = lobench::typo_hint(app, given)) fmt::print(stderr, "lobench: {}\n", *hint);
    else fmt::print(stderr, "lobench: {}\n", e.what());
    fmt::print(stderr, "Run with --help for more information.\n");
    return kUsageError;
  } catch (const lobench::io::Interrupted& e) {  // stopped by a signal, its files closed: 128 + the signal
    fmt::print(stderr, "lobench: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "lobench: error: {}\n", e.what());
    return kUsageError;
  }
  return lobench::command_exit_code();
}
