// `lobench train-xmc`: ELMO-style low-precision XMC training on real (Mulan ARFF, XC repository) or
// synthetic data, sweeping classifier formats, roundings, update modes, chunk counts and seeds; one HDF5
// run file per run (harness/train/run_file.hpp). `--layouts` prints the predicted memory of Renee /
// fp32 / ELMO heads instead of training.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "datasets/public_datasets.hpp"
#include "harness/cli/args_file.hpp"
#include "harness/cli/option_checks.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/io/output_path.hpp"
#include "harness/provenance.hpp"
#include "harness/sweep/training_job.hpp"
#include "harness/system_memory.hpp"
#include "harness/train/classifier.hpp"
#include "harness/train/frontier_sweep.hpp"
#include "harness/train/run_file.hpp"
#include "harness/train/sharded_training.hpp"
#include "harness/train/xmc_sweep.hpp"
#if LOBENCH_HAS_MPI
#include "harness/shard/mpi_label_training.hpp"
#endif

namespace lobench {

namespace {

// The ranges of the numeric options TrainConfig::validate does not cover (it checks each run's
// configuration again), through the one place that checks options (option_checks.hpp).
void check_xmc_options(const train::XmcSweepSpec& s) {
  const train::TrainConfig& b = s.base;
  cli::check_threads("--threads", b.threads);
  cli::check_positive_real("--syn-scale", s.syn_scale);
  const sweep::Axes& a = s.axes;
  auto reals = [&](const char* axis) {
    std::vector<double> out;
    for (const auto& v : a.values(axis)) out.push_back(std::stod(v));  // validated finite by the axis
    return out;
  };
  for (int64_t v : a.int_values("labels-total")) cli::check_range("--labels-total", double(v), 0, double(INT32_MAX) - 1);
  for (int64_t v : a.int_values("dim")) cli::check_positive("--dim", v);
  for (int64_t v : a.int_values("batch")) cli::check_positive("--batch", v);
  for (int64_t v : a.int_values("chunks")) cli::check_positive("--chunks", v);
  for (int64_t v : a.int_values("seeds")) cli::check_non_negative("--seed", v);
  for (double v : reals("dropout")) cli::check_range("--dropout", v, 0.0, 0.999999);
  for (double v : reals("enc-lr")) cli::check_range("--enc-lr", v, 0.0, 1e6);
  for (double v : reals("clf-lr")) cli::check_range("--clf-lr", v, 0.0, 1e6);
  for (double v : reals("clf-init-std")) cli::check_positive_real("--clf-init-std", v);
  cli::check_range("--enc-wd", b.enc_wd, 0.0, 1e6);
  cli::check_positive("--epochs", b.epochs);
  cli::check_non_negative("--max-steps", b.max_steps);
  cli::check_range("--sr-bits", b.sr_bits, 0, 31);
  cli::check_block_size("--tile", b.tile);
  cli::check_non_negative("--warmup-steps", b.warmup_steps);
  cli::check_range("--eval-every", b.eval_every, -1, double(INT32_MAX));
  cli::check_non_negative("--eval-batch", b.eval_batch);
  cli::check_non_negative("--hist-every", b.hist_every);
  cli::check_finite("--propensity-a", b.propensity_a);
  cli::check_finite("--propensity-b", b.propensity_b);
}

void declare_shared_xmc_options(CLI::App* cmd) {
  cli::shared(cmd->get_option("--dataset"),
              "delicious | bibtex (public sets: DIR/xmc/NAME-{train,test}.arff + NAME.xml, docs/data.md), mulan:DIR/NAME, "
              "xc:TRAIN,TEST (XC repository format), synthetic:PRESET (tiny, LF-AmazonTitles-131K, Amazon-670K, "
              "Amazon-3M, ...); default delicious");
  cli::shared(cmd->get_option("--data-dir"), "holding xmc/ (or that folder itself)");
  cli::shared(cmd->get_option("--rounding"),
              "of the updated weights: rne (nearest_even), sr (stochastic, k random bits), sr_exact, rz, ..., elmo_sr "
              "(ELMO's fp8 SR: 23-M bits on the float32 pattern, then nearest into the format); a comma-separated list");
  cli::shared(cmd->get_option("--operand"),
              "of the classifier head's logits, weight and input gradients and test scores (the weights as --clf-format "
              "stores them; --clf-format and --enc-precision are storage); ELMO's pure-bf16 recipe: --clf-format bf16 "
              "--rounding sr --enc-precision bf16 --operand bf16; its fp8 recipe: --clf-format e4m3fn --rounding elmo_sr "
              "--operand e4m3 (H and the weights scaled per tensor and rounded to fp8, the logit gradient bf16); a "
              "comma-separated list");
  cli::shared(cmd->get_option("--dropout"), "on the embedding; a comma-separated list");
  cli::shared(cmd->get_option("--eval-every"), "on the test split");
  cli::shared(cmd->get_option("--threads"), "run files do not depend on it");
  cli::shared(cmd->get_option("--partition"), "each part its own --out-dir; `lobench merge OUT_DIR PART_DIRS...`");
  cli::shared(cmd->get_option("--shard"), "labels: the classifier split by labels, the encoder replicated");
  cli::shared(cmd->get_option("--quiet"), "nor per-epoch lines");
  cli::shared(cmd->get_option("--overwrite"), "run files and --layouts-out");
  cli::shared(cmd->get_option("--resume"), "keeps the finished run files in --out-dir, makes the others");
  for (const char* name : {"--no-verify", "--syn-scale", "--epochs", "--warmup-steps", "--out-dir", "--mem-limit",
                           "--dry-run", "--list"})
    cli::shared(cmd->get_option(name));
}

// The options of --frontier (the precision-frontier search: harness/train/frontier_sweep.hpp).
struct FrontierOptions {
  std::string tensors, exponents = "2-5", mantissas = "1-10", metric = "p@1", out;
  double k = 2.0, floor = 0.005;
};

void declare_frontier_options(CLI::App* cmd, FrontierOptions& f) {
  cmd->add_option("--frontier", f.tensors,
                  "instead of a grid: search the precision frontier of these tensors, clf (the classifier weights) "
                  "and/or grad (the logit gradient): per exponent width and --rounding, the fewest mantissa bits whose "
                  "metric stays within tolerance of fp32's (bisection, the boundary over every --seed; default seeds "
                  "0,1,2, roundings nearest_even,stochastic); one run file (--out). docs/formats.md");
  cmd->add_option("--frontier-exponents", f.exponents, "exponent widths searched: A-B or a comma-separated list")
      ->capture_default_str();
  cmd->add_option("--frontier-mantissas", f.mantissas, "mantissa range searched, LO-HI within 1-23")
      ->capture_default_str();
  cmd->add_option("--frontier-metric", f.metric, "p@k, ndcg@k or psp@k (k = 1, 3, 5) at the last epoch")
      ->capture_default_str();
  cmd->add_option("--frontier-k", f.k, "tolerance = max(K x the fp32 runs' seed std, --frontier-floor)")
      ->capture_default_str();
  cmd->add_option("--frontier-floor", f.floor, "the tolerance's floor, in metric units (0.005 = half a point of P@1)")
      ->capture_default_str();
  cli::shared(cmd->add_option("--out", f.out),
              "with --frontier: the search's one run file (refused if it exists, unless --overwrite or --resume)");
}

// "2-5" -> {2, 3, 4, 5}; "2,4" -> {2, 4}.
std::vector<int> int_range_or_list(const std::string& text, const char* option) {
  std::vector<int> out;
  const auto dash = text.find('-');
  try {
    if (dash != std::string::npos && dash > 0) {
      const int a = std::stoi(text.substr(0, dash)), b = std::stoi(text.substr(dash + 1));
      for (int i = a; i <= b; ++i) out.push_back(i);
      if (out.empty()) throw std::invalid_argument("empty");
      return out;
    }
    for (const auto& v : sweep::split_list(text, option)) out.push_back(std::stoi(v));
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("{}: '{}' is not A-B nor a comma-separated list of integers", option, text));
  }
  return out;
}

train::FrontierSpec frontier_spec(const train::XmcSweepSpec& xmc, const FrontierOptions& f, CLI::App* cmd) {
  train::FrontierSpec s;
  s.xmc = xmc;
  s.tensors = sweep::split_list(f.tensors, "--frontier");
  s.exponents = int_range_or_list(f.exponents, "--frontier-exponents");
  const std::vector<int> m = int_range_or_list(f.mantissas, "--frontier-mantissas");
  s.mantissa_lo = m.front();
  s.mantissa_hi = m.back();
  s.metric = f.metric;
  s.k = f.k;
  s.floor = f.floor;
  s.out = f.out;
  if (cmd->get_option("--seed")->count() + cmd->get_option("--seeds")->count() == 0) s.xmc.axes.set("seeds", "0,1,2");
  if (cmd->get_option("--rounding")->count() == 0) s.xmc.axes.set("rounding", "nearest_even,stochastic");
  for (const char* other : {"--out-dir", "--shard", "--layouts"})
    if (cmd->get_option(other)->count() > 0)
      throw std::invalid_argument(fmt::format("--frontier writes one run file (--out); it does not take {}", other));
  train::check_frontier_spec(s);
  return s;
}

// `lobench train-xmc` as a training job (sweep/training_job.hpp): its options parse into the job, run()
// makes the sweep (or --list, --layouts, --frontier) of what they ask for.
class XmcTrainingJob : public sweep::TrainingJob {
 public:
  static const io::JobFiles& run_files() { return train::xmc_run_files(); }

  XmcTrainingJob() {
    spec_.base.epochs = 20;
    spec_.base.threads = cli::default_threads();
  }

  std::string description() const override {
    return "Train an XMC model the ELMO way: sparse features -> linear+activation+dropout encoder (Adam, fp32 or bf16 with\n"
           "Kahan compensation) -> classifier [labels x D] stored in fp32/bf16/fp8/any eXmY, BCE with sum reduction, SGD\n"
           "whose result is rounded (nearest or stochastic) into the format, updated 'separate' (materialized gradient)\n"
           "or 'fused' (tile by tile, no [labels x D] gradient), in k label chunks; the head's products with fp32 or bf16\n"
           "operands (--operand). Test P@k/nDCG@k/PSP@k per epoch.\n"
           "List options take comma-separated values; the runs are their Cartesian product, one HDF5 file each.\n"
           "A repeated option's last occurrence wins (as for every lobench command).";
  }

  void declare(CLI::App* cmd) override {
    cmd_ = cmd;
    declare_data_options(cmd);
    spec_.axes.register_options(cmd);
    declare_training_options(cmd);
    declare_sweep_options(cmd);
    // The shared options: help and default from the one table (harness/cli/options.hpp). The seeds axis
    // keeps its internal name (run files record it); the option is --seed, as in run and train-seqrec.
    cli::shared(cmd->add_option_function<std::string>("--seed", [this](const std::string& t) { spec_.axes.set("seeds", t); })
                    ->type_name("LIST"),
                "a comma-separated list: one run per value");
    old_seeds_ = cmd->get_option("--seeds");
    old_seeds_->description("deprecated: the old spelling of --seed")->default_str("");
    declare_shared_xmc_options(cmd);
    declare_frontier_options(cmd, frontier_);
  }

  int run(const std::string& argv) override {
    prepare();
    if (!frontier_.tensors.empty()) return run_frontier(argv);
    if (cmd_->get_option("--out")->count() > 0)
      throw std::invalid_argument("train-xmc: --out is the run file of --frontier; a sweep writes --out-dir");
    if (list_) {
      train::list_xmc_sweep(spec_, std::cout);
      return 0;
    }
    spec_.progress = !quiet_;
    spec_.mem_limit = mem_->count() > 0 ? cli::parse_memory_limit("--mem-limit", mem_limit_) : cli::default_memory_limit();
    const Provenance prov = collect_provenance(argv);
    if (!layouts_.empty()) return write_layouts(prov);
    if (spec_.out_dir.empty()) throw std::invalid_argument("train-xmc: --out-dir is required (one HDF5 file per run)");
    std::unique_ptr<train::ShardedTraining> sharded;
    if (!shard_.empty()) {
#if LOBENCH_HAS_MPI
      sharded = shard::make_mpi_label_training(shard_);
      spec_.sharded = sharded.get();
#else
      throw std::invalid_argument("--shard: this lobench was built without MPI (install libopenmpi-dev and rebuild)");
#endif
    }
    const io::InterruptGuard interrupts;  // SIGINT/SIGTERM/SIGHUP stop the sweep between epochs, files closed
    return train::run_xmc_sweep(spec_, prov, std::cout, std::cerr) ? 1 : 0;
  }

 private:
  void declare_data_options(CLI::App* cmd) {
    cmd->add_option("--dataset", spec_.dataset,
                    "delicious | bibtex (public sets: DIR/xmc/NAME-{train,test}.arff + NAME.xml under --data-dir, "
                    "checked against their published sizes and SHA-256, docs/data.md), mulan:DIR/NAME, xc:TRAIN,TEST "
                    "(XC repository format), synthetic:PRESET (tiny, LF-AmazonTitles-131K, Amazon-670K, Amazon-3M, ...)")
        ->capture_default_str();
    cmd->add_option("--data-dir", spec_.data_dir,
                    "data folder holding xmc/ (or the xmc folder itself); default: $LOBENCH_DATA. No other folder is "
                    "looked at");
    cmd->add_flag("--no-verify", no_verify_,
                  "do not check a public set's files against their sizes and SHA-256 (a modified copy; also "
                  "LOBENCH_NO_VERIFY=1)");
  }

  void declare_training_options(CLI::App* cmd) {
    train::TrainConfig& b = spec_.base;
    cmd->add_option("--syn-scale", spec_.syn_scale, "synthetic: fraction of the preset's rows to generate")
        ->capture_default_str();
    cmd->add_option("--epochs", b.epochs, "epochs")->capture_default_str();
    cmd->add_option("--max-steps", b.max_steps, "stop after this many steps (0 = no limit)")->capture_default_str();
    cmd->add_option("--enc-wd", b.enc_wd, "encoder L2 weight decay (weights, not bias)")->capture_default_str();
    cmd->add_option("--sr-bits", b.sr_bits, "k random bits for --rounding sr (0 = 23 - mantissa bits)")->capture_default_str();
    cmd->add_option("--tile", b.tile, "labels per tile (0 = 256)")->capture_default_str();
    cmd->add_option("--schedule", schedule_, "constant | cosine (linear warmup then cosine to 0, as ELMO)")
        ->check(CLI::IsMember({"constant", "cosine"}))->capture_default_str();
    cmd->add_option("--warmup-steps", b.warmup_steps, "linear warmup steps")->capture_default_str();
    cmd->add_option("--eval-every", b.eval_every, "evaluate the test split every N epochs (0: last only, -1: never)")
        ->capture_default_str();
    cmd->add_option("--eval-batch", b.eval_batch, "rows per evaluation batch (0 = --batch)")->capture_default_str();
    cmd->add_option("--hist-every", b.hist_every,
                    "histogram the classifier weight gradients every N steps (0 = off)")->capture_default_str();
    cmd->add_option("--propensity-a", b.propensity_a, "PSP propensity A (Jain et al.)")->capture_default_str();
    cmd->add_option("--propensity-b", b.propensity_b, "PSP propensity B")->capture_default_str();
    cmd->add_option("--threads", b.threads, "threads (default: all cores); run files do not depend on it")
        ->capture_default_str();
  }

  void declare_sweep_options(CLI::App* cmd) {
    cmd->add_option("--out-dir", spec_.out_dir, "folder for the run files (one HDF5 per run)");
    mem_ = cmd->add_option("--mem-limit", mem_limit_,
                           "record runs predicted to need more than this (e.g. 6G) as skipped, with their prediction; "
                           "default: available memory now minus max(1 GiB, 10%)");
    cmd->add_option("--partition", partition_,
                    "make only runs i with i % N == K of the sweep, K/N with 0 <= K < N (one part of a job array, "
                    "its own --out-dir; `lobench merge OUT_DIR PART_DIRS...` joins the parts)")
        ->capture_default_str();
    cmd->add_option("--shard", shard_,
                    "labels: split each run's classifier by labels over the MPI ranks of `mpirun -np R lobench train-xmc "
                    "...` (encoder replicated, its input gradient summed in rank order); rank 0 writes the run files");
    cmd->add_flag("--dry-run", spec_.dry_run, "write every run's predicted memory without training");
    cmd->add_flag("--list", list_, "print the runs the sweep would make (their file names) and exit; writes nothing");
    cmd->add_flag("--quiet", quiet_, "no progress bar or per-epoch lines");
    cmd->add_option("--layouts", layouts_,
                    "instead of training: print (and with --layouts-out write) the predicted head memory of Renee, "
                    "fp32, ELMO bf16 and ELMO fp8 for these label counts, at the first --dim and --batch and --chunks")
        ->delimiter(',');
    cmd->add_option("--layouts-out", layout_out_, "HDF5 file for --layouts (refused if it exists, unless --overwrite)");
    cmd->add_flag("--overwrite", spec_.overwrite,
                  "replace run files (and --layouts-out) that exist instead of refusing the sweep before it starts");
    cmd->add_flag("--resume", spec_.resume,
                  "continue a sweep in --out-dir: keep its finished run files (ok, skipped, failed), make the rest "
                  "(missing, interrupted)");
  }

  // What every mode needs of the parsed options: the deprecated --seeds, the checks, canonical roundings.
  void prepare() {
    if (old_seeds_->count() > 0) {
      if (cmd_->get_option("--seed")->count() > 0) throw std::invalid_argument("train-xmc: give --seed (--seeds is its old spelling), not both");
      fmt::print(stderr, "lobench train-xmc: --seeds is deprecated and will be removed in the next release; use --seed\n");
    }
    spec_.verify = data::verification_wanted(no_verify_);
    spec_.base.schedule = schedule_;
    spec_.partition = sweep::Partition::parse(partition_);
    for (int64_t labels : layouts_)  // (before the table's first line: a refusal prints nothing)
      if (labels < 1) throw std::invalid_argument(fmt::format("--layouts: label counts must be >= 1 (got {})", labels));
    if (!shard_.empty() && !layouts_.empty())
      throw std::invalid_argument("--layouts predicts one process's head memory; it does not take --shard");
    check_xmc_options(spec_);
    // Rounding aliases (rne, sr, elmo) by their canonical names (nearest_even, stochastic, elmo_sr), so that
    // one rounding gives one run file name, and two spellings of it are the duplicate they are.
    std::vector<std::string> roundings;
    for (const auto& r : spec_.axes.values("rounding")) roundings.push_back(train::parse_update_rounding(r).name());
    spec_.axes.set("rounding", roundings);
  }

  int run_frontier(const std::string& argv) {
    spec_.progress = !quiet_;
    const train::FrontierSpec fs = frontier_spec(spec_, frontier_, cmd_);
    if (list_) {
      train::list_frontier(fs, std::cout);
      return 0;
    }
    const io::InterruptGuard interrupts;  // a signal stops the search between runs, every finished run kept
    return train::run_frontier(fs, collect_provenance(argv), std::cout, std::cerr) ? 1 : 0;
  }

  int write_layouts(const Provenance& prov) {
    std::error_code ec;
    if (!layout_out_.empty() && !spec_.overwrite && std::filesystem::exists(std::filesystem::symlink_status(layout_out_, ec)))
      throw io::PathError(fmt::format("--layouts-out '{}' exists (give --overwrite to replace it)", layout_out_));
    if (!layout_out_.empty() && std::filesystem::path(layout_out_).has_parent_path())
      std::filesystem::create_directories(std::filesystem::path(layout_out_).parent_path());
    train::write_layout_table(layouts_, spec_.axes.int_values("dim").front(), spec_.axes.int_values("batch").front(),
                              spec_.axes.int_values("chunks").front(), prov, layout_out_, std::cout);
    return 0;
  }

  train::XmcSweepSpec spec_;
  std::string mem_limit_, layout_out_, schedule_ = "constant", partition_ = "0/1", shard_;
  std::vector<int64_t> layouts_;
  bool quiet_ = false, list_ = false, no_verify_ = false;
  FrontierOptions frontier_;
  CLI::App* cmd_ = nullptr;
  CLI::Option* mem_ = nullptr;
  CLI::Option* old_seeds_ = nullptr;
};

}  // namespace

LOBENCH_REGISTER_TRAINING_JOB(XmcTrainingJob);

}  // namespace lobench
