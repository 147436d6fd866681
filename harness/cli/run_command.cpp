// `lobench run`: a sweep of loss-and-gradient steps on synthetic inputs (harness/sweep/run_sweep.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/option_checks.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/plugin/plugin_loader.hpp"
#include "harness/cli/plugin_option.hpp"
#include "harness/provenance.hpp"
#include "harness/sweep/isolated_row.hpp"
#include "harness/sweep/run_axes.hpp"
#include "harness/sweep/run_sweep.hpp"
#include "harness/sweep/step_point.hpp"
#if LOBENCH_HAS_MPI
#include "harness/shard/mpi_rows.hpp"
#endif
#include "harness/system_memory.hpp"

namespace lobench {
namespace {

struct RunFlags {
  sweep::SweepSettings settings;
  std::string mem_limit, gpu_mem_limit, format = "text", partition = "0/1", shard;
  std::vector<std::string> plugins;  // --plugin: libraries whose variants join the sweep
  bool mem_limit_given = false, gpu_mem_limit_given = false;  // an empty value given is refused, not the default
  bool no_accuracy = false, resume = false, overwrite = false, list = false, dry_run = false;
  bool isolate = false, no_isolate = false;
};

void add_isolation_options(CLI::App* cmd, RunFlags& f) {
  cmd->add_flag("--isolate", f.isolate,
                "run every row in a child process (default: only the rows of plug-ins and Python variants): a variant "
                "that crashes, exits, hangs past --row-timeout or runs out of memory fails its row, not the sweep");
  cmd->add_flag("--no-isolate", f.no_isolate, "run every row in this process, plug-ins and Python variants too");
  cmd->add_option("--row-timeout", f.settings.row_timeout_s,
                  "an isolated row still running after this many seconds is killed and recorded as failed (0: no limit)")
      ->capture_default_str();
}

void apply_isolation(const RunFlags& f, sweep::SweepSettings& s) {
  if (f.isolate && f.no_isolate) throw std::invalid_argument("--isolate and --no-isolate exclude each other");
  cli::check_range("--row-timeout", s.row_timeout_s, 0, 86400 * 7);
  if (f.no_isolate && s.row_timeout_s > 0)
    throw std::invalid_argument("--row-timeout needs rows in a child process; it cannot bound rows run with --no-isolate");
  s.isolation = f.isolate ? sweep::Isolation::all : f.no_isolate ? sweep::Isolation::none : sweep::Isolation::automatic;
}

void add_scalar_options(CLI::App* cmd, RunFlags& f) {
  sweep::SweepSettings& s = f.settings;
  cmd->add_flag("--weighted", s.weighted, "draw position weights in [0.25, 2)");
  cmd->add_option("--pad-fraction", s.pad_fraction, "fraction of target slots that are padding (-1 or V), in [0, 1]")
      ->capture_default_str();
  cmd->add_option("--dup-fraction", s.dup_fraction, "fraction of target slots repeating an id of the same row, in [0, 1]")
      ->capture_default_str();
  cmd->add_option("--warmup", s.warmup, "untimed runs before timing")->capture_default_str();
  cmd->add_option("--reps", s.reps.fixed_reps,
                  "a fixed number of timed runs (median reported, every sample kept in /samples); 0: adaptive, "
                  "as --min-time, --cv-target, --max-reps and --max-time say")
      ->capture_default_str();
  cmd->add_option("--min-time", s.reps.min_time_s,
                  "adaptive repetitions: timed runs (at least 4) continue until their total reaches this many seconds "
                  "and their CV is at most --cv-target")
      ->capture_default_str();
  cmd->add_option("--cv-target", s.reps.cv_target, "adaptive repetitions: the coefficient of variation to reach (rows above 5% are flagged noisy)")
      ->capture_default_str();
  cmd->add_option("--max-reps", s.reps.max_reps, "adaptive repetitions: at most this many timed runs")->capture_default_str();
  cmd->add_option("--max-time", s.reps.max_time_s,
                  "adaptive repetitions: no more timed runs once their total passes this many seconds")
      ->capture_default_str();
  cmd->add_option("--sgemm-n", s.sgemm_n,
                  "size n of the n³ SGEMM (Eigen, OpenBLAS, oneDNN and our own micro-kernels) measured once per thread count as the yardstick of %GEMM; "
                  "0: 4096, or 512 for a sweep of under 100 GFLOP of timed work; rows with --operand bf16 are compared with "
                  "an n³ bf16 product, n at least 2048")
      ->capture_default_str();
  cmd->add_option_function<std::string>("--mem-limit", [&f](const std::string& t) { f.mem_limit = t, f.mem_limit_given = true; },
                  "skip points predicted to need more host memory than this (e.g. 20G); default: available now "
                  "minus max(1 GiB, 10%)");
  cmd->add_option_function<std::string>("--gpu-mem-limit", [&f](const std::string& t) { f.gpu_mem_limit = t, f.gpu_mem_limit_given = true; },
                  "GPU variants: skip points whose working + input/output bytes on the device exceed this (e.g. 80G); "
                  "default: the device's free memory at start minus max(1 GiB, 5% of its total)");
  cmd->add_flag("--no-accuracy", f.no_accuracy, "do not compute the float64 reference (faster; errors recorded as NaN)");
  cmd->add_option("--out", s.out, "run file to write (HDF5); an existing file is refused unless --resume or --overwrite");
  cmd->add_flag("--resume", f.resume, "append to --out, skipping (variant, point) rows already in it");
  cmd->add_flag("--overwrite", f.overwrite, "replace an existing --out (a regular file) instead of refusing");
  cmd->add_option("--format", f.format, "what stdout gets: text (a table), csv or jsonl (every column, for scripts)")
      ->capture_default_str();
  cmd->add_option("--partition", f.partition,
                  "run only rows i with i % N == K of the sweep, K/N with 0 <= K < N (one part of a job array; "
                  "`lobench merge` joins the parts)")
      ->capture_default_str();
  cmd->add_option("--shard", f.shard,
                  "split each row's step over the MPI ranks of `mpirun -np R lobench run ...`: vocab (rows of E), "
                  "positions, or vocab,positions (a grid); rank 0 writes the file");
  cmd->add_flag("--list", f.list, "print the rows the sweep would run and exit (writes nothing)");
  cli::add_plugin_option(cmd, f.plugins);
  add_isolation_options(cmd, f);
  cmd->add_flag("--dry-run", f.dry_run,
                "print every row's predicted memory and skip reason, and write them to --out if given; runs nothing");
}

// The options every command shares get their help and default from one table (harness/cli/options.hpp).
void declare_shared(CLI::App* cmd) {
  for (const sweep::RunAxis& axis : sweep::run_axes())  // the axes other commands take too, with run's detail
    if (axis.shared) cli::shared(cmd->get_option("--" + axis.name), axis.help);
  cli::shared(cmd->get_option("--out"), "the run file (HDF5); an existing one is refused unless --resume or --overwrite; "
                                        "its folder is made if missing (a job array's parts)");
  cli::shared(cmd->get_option("--shard"), "vocab (rows of E), positions, or vocab,positions (a grid)");
  cli::shared(cmd->get_option("--resume"), "appends to --out, skipping the (variant, point) rows already in it");
  for (const char* name : {"--mem-limit", "--gpu-mem-limit", "--overwrite", "--format", "--partition", "--list",
                           "--dry-run"})
    cli::shared(cmd->get_option(name));
}

void run(RunFlags& f, const std::string& argv) {
  sweep::SweepSettings& s = f.settings;
  plugin::load_plugins(f.plugins);  // before --variants is checked against the registry
  if (f.mem_limit_given) s.mem_limit = cli::parse_memory_limit("--mem-limit", f.mem_limit);
  if (f.gpu_mem_limit_given) s.gpu_mem_limit = cli::parse_memory_limit("--gpu-mem-limit", f.gpu_mem_limit);
  cli::check_fraction("--pad-fraction", s.pad_fraction);
  cli::check_fraction("--dup-fraction", s.dup_fraction);
  sweep::check_rep_policy(s.reps);
  cli::check_range("--warmup", s.warmup, 0, 100000);
  if (s.sgemm_n != 0) cli::check_range("--sgemm-n", double(s.sgemm_n), 64, 65536);
  s.accuracy = !f.no_accuracy;
  s.format = sweep::parse_output_format(f.format);
  s.partition = sweep::Partition::parse(f.partition);
  if (f.resume && f.overwrite) throw std::invalid_argument("--resume and --overwrite exclude each other");
  s.out_mode = f.resume ? OutMode::resume : f.overwrite ? OutMode::overwrite : OutMode::create_new;
  apply_isolation(f, s);
  sweep::step_points(s.axes, s.weighted);  // every value checked before a file is touched
  if (const auto request = sweep::isolated_row_request()) {  // this process is one row of a parent's sweep
    sweep::measure_isolated_row(s, *request);
    set_command_exit_code(0);
    return;
  }
  if (f.list) {
    sweep::list_rows(s, std::cout);
    set_command_exit_code(0);
    return;
  }
  const Provenance prov = collect_provenance(argv);
  const auto parent = std::filesystem::path(s.out).parent_path();
  if (!s.out.empty() && !parent.empty()) {  // (a path that is not a folder: named as --out, exit 2)
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw std::invalid_argument(
          fmt::format("--out '{}': cannot make its folder '{}': {}", s.out, parent.string(), ec.message()));
  }
  if (f.dry_run) {
    sweep::dry_run(s, prov, std::cout, std::cerr);
    set_command_exit_code(0);
    return;
  }
  if (s.out.empty()) throw std::invalid_argument("--out is required (the run file), except with --list or --dry-run");
  std::unique_ptr<sweep::ShardedRows> sharded;
  if (!f.shard.empty()) {
#if LOBENCH_HAS_MPI
    sharded = shard::make_mpi_rows(f.shard, nullptr, nullptr);
    s.sharded = sharded.get();
#else
    throw std::invalid_argument("--shard: this lobench was built without MPI (install libopenmpi-dev and rebuild)");
#endif
  }
  const io::InterruptGuard interrupts;  // SIGINT/SIGTERM/SIGHUP stop the sweep between rows, the file closed
  const int64_t failed = sweep::run_sweep(s, prov, std::cout, std::cerr);
  set_command_exit_code(failed ? 1 : 0);
}

}  // namespace

void register_run_command(CLI::App& app, const std::string& argv) {
  auto flags = std::make_shared<RunFlags>();
  flags->settings.axes = sweep::step_axes(cli::default_threads());
  auto* cmd = app.add_subcommand(
      "run",
      "Sweep variants over shapes on synthetic inputs (A, E ~ N(0,1), targets uniform in [0, V)).\n"
      "Every axis takes a comma-separated list; the sweep is their Cartesian product. A repeated option's last\n"
      "occurrence wins, so in `lobench run @harness/sweeps/NAME.args [more options]` later options override the file.");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  flags->settings.axes.register_options(cmd);
  add_scalar_options(cmd, *flags);
  declare_shared(cmd);
  cmd->callback([flags, argv] { run(*flags, argv); });
}

}  // namespace lobench
