// `lobench train-seqrec`: trains the multi-label SASRec of the Cut BCE paper (harness/seqrec/) on a
// sequence file or the synthetic Yambda. Model, loss variant, dataset, L, N, B, D, layers, heads, steps,
// epochs and seed are sweep axes (comma lists, the Cartesian product, as `lobench train-xmc`); one HDF5
// run file per point (harness/seqrec/seqrec_sweep.hpp); points predicted to exceed --mem-limit are
// recorded as skipped with their predicted bytes (the paper's OOM cells).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <iostream>
#include <memory>

#include "datasets/public_datasets.hpp"
#include "harness/cli/numbers.hpp"
#include "harness/cli/option_checks.hpp"
#include "harness/cli/options.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/provenance.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/seqrec_sweep.hpp"
#include "harness/sweep/training_job.hpp"
#if LOBENCH_HAS_MPI
#include "harness/shard/seqrec_data_parallel.hpp"
#endif

namespace lobench {
namespace {

// The shared options: help and default from the one table (harness/cli/options.hpp).
void declare_shared_seqrec_options(CLI::App* cmd) {
  const std::string list = "a comma-separated list: one run per value";
  for (const char* axis : {"--B", "--N", "--D", "--epochs", "--seed"}) cli::shared(cmd->get_option(axis), list);
  cli::shared(cmd->get_option("--L"), "the next L items; " + list);
  cli::shared(cmd->get_option("--variant"), "dense | chunked | fused | sampled (SASRec's one sampled negative); default "
                                            "chunked; " + list);
  cli::shared(cmd->get_option("--operand"), "of the full-vocabulary loss (not with --variant sampled; the backbone "
                                           "stays float32; --opt-precision is storage); " + list);
  cli::shared(cmd->get_option("--reduction"), "or mean_positions (the mean over positions of the sum over V); " + list);
  cli::shared(cmd->get_option("--dataset"), "beauty, sports, toys, lastfm (under --data-dir), a sequence file, or "
                                            "synthetic:yambda; default synthetic:yambda; " + list);
  cli::shared(cmd->get_option("--data-dir"), "holding seqrec/ (or that folder itself); a file path in --dataset is "
                                             "read as given");
  cli::shared(cmd->get_option("--syn-scale"), "synthetic:yambda: 1 = 9,074 users x 876,939 items");
  cli::shared(cmd->get_option("--dropout"), "on embeddings and residual branches");
  cli::shared(cmd->get_option("--out"), "the HDF5 run file of a single-point run; refused if it exists, unless --overwrite");
  cli::shared(cmd->get_option("--out-dir"), "NAME.h5 per point; existing ones refused unless --overwrite");
  cli::shared(cmd->get_option("--resume"), "keeps the finished run files, runs the others");
  cli::shared(cmd->get_option("--partition"), "each part its own --out-dir; `lobench merge OUT_DIR PART_DIRS...`");
  cli::shared(cmd->get_option("--quiet"), "nor per-epoch lines");
  for (const char* name : {"--no-verify", "--eval-every", "--threads", "--block-v", "--mem-limit", "--dry-run", "--list",
                           "--overwrite", "--warmup-steps"})
    cli::shared(cmd->get_option(name));
}

// --preset s3rec: the settings of S3-Rec's SASRec (the published code, github.com/RUCAIBox/CIKM2020-S3Rec,
// run_finetune_full.py's defaults, trained from scratch as its README's SASRec; docs/training.md lists
// each with its source and what still differs), each unless the command line gives that option itself.
// Axes go into the sweep's axes, the rest into the base configuration.
void apply_s3rec_preset(CLI::App* cmd, seqrec::SeqrecSweepSpec& spec) {
  const auto given = [cmd](const std::string& option) { return cmd->get_option(option)->count() > 0; };
  const std::pair<const char*, const char*> axes[] = {{"variant", "sampled"}, {"L", "1"},       {"N", "50"},
                                                      {"B", "256"},         {"D", "64"},      {"layers", "2"},
                                                      {"heads", "2"},       {"epochs", "200"}};
  for (const auto& [axis, value] : axes)
    if (!given(std::string("--") + axis)) spec.axes.set(axis, value);
  seqrec::SeqrecConfig& c = spec.base;
  if (!given("--protocol")) c.protocol = "leave_one_out";
  if (!given("--dropout")) c.dropout = 0.5f;
  if (!given("--lr")) c.lr = 1e-3f;
  if (!given("--block")) c.block = "post_ln";
  if (!given("--adam-beta2")) c.adam_beta2 = 0.999f;
  if (!given("--negatives")) c.negatives = "history";
  if (!given("--select")) c.select = "ndcg@20";
  if (!given("--eval-every")) c.eval_every = 1;
  if (!given("--early-stop")) c.early_stop = 10;
  c.exclude_history = true;  // a flag: S3-Rec's full ranking leaves the history out
}

// `lobench train-seqrec` as a training job (sweep/training_job.hpp): its options parse into the job, run()
// makes the sweep (or --list) of what they ask for.
class SeqrecTrainingJob : public sweep::TrainingJob {
 public:
  static const io::JobFiles& run_files() { return seqrec::seqrec_run_files(); }

  // All cores, as every command (it was 1 while its message said all cores).
  SeqrecTrainingJob() { spec_.base.threads = cli::default_threads(); }

  std::string description() const override {
    return "Train the Cut BCE paper's multi-label SASRec (GPT-2 causal backbone, tied item/output embeddings) with a\n"
           "full-vocabulary BCE variant (dense = framework BCE, chunked = Cut BCE, fused) or SASRec's one sampled\n"
           "negative, on a public set (beauty, sports, toys, lastfm: --data-dir), a sequence file or synthetic:yambda. List options (--variant, --B, ...,\n"
           "--seed) take comma-separated values; the runs are their Cartesian product, one HDF5 run file each (--out\n"
           "for a single run, else --out-dir): per-step time split, loss and cut metrics, per-epoch dev/test Hit@8,\n"
           "HR@10, NDCG@10, memory predicted and measured. A repeated option's last occurrence wins.";
  }

  void declare(CLI::App* cmd) override {
    cmd_ = cmd;
    spec_.axes.register_options(cmd);
    cli::deprecated(cmd, "--seeds", "--seed", [this](const std::string& v) { seeds_ = v; });
    declare_data_options(cmd);
    declare_model_options(cmd);
    declare_run_options(cmd);
    declare_sweep_options(cmd);
    declare_shared_seqrec_options(cmd);
  }

  int run(const std::string& argv) override {
    if (preset_ == "s3rec") apply_s3rec_preset(cmd_, spec_);
    spec_.partition = sweep::Partition::parse(partition_);
    spec_.verify = data::verification_wanted(no_verify_);
    if (untied_) {
      if (cmd_->get_option("--model")->count() > 0) throw std::invalid_argument("train-seqrec: give --untied or --model, not both");
      spec_.axes.set("model", "sasrec_untied");
    }
    if (!seeds_.empty()) {
      if (cmd_->get_option("--seed")->count() > 0) throw std::invalid_argument("train-seqrec: give --seed (--seeds is its old spelling), not both");
      spec_.axes.set("seed", seeds_);
    }
    // The \r progress line only on a terminal: redirected, it would fill the log with one line per step.
    spec_.base.progress = !quiet_ && isatty(STDERR_FILENO);
    spec_.progress_lines = !quiet_;
    spec_.base.epoch_lines = !quiet_;
    cli::check_threads("--threads", spec_.base.threads);
    cli::check_non_negative("--warmup-steps", spec_.base.warmup_steps);
    cli::check_positive_real("--syn-scale", spec_.base.syn_scale);
    std::unique_ptr<seqrec::GradientExchange> exchange;  // MPI is initialised here and finalised on return
    if (data_parallel_) {
#if LOBENCH_HAS_MPI
      exchange = shard::make_mpi_gradient_exchange();
      spec_.exchange = exchange.get();
      spec_.base.ranks = exchange->ranks();
#else
      throw std::invalid_argument("--data-parallel: this lobench was built without MPI (install libopenmpi-dev and "
                                  "rebuild)");
#endif
    }
    if (list_) {
      if (spec_.out.empty() && spec_.out_dir.empty()) spec_.out_dir = ".";
      seqrec::list_seqrec_sweep(spec_, std::cout);
      return 0;
    }
    spec_.base.mem_limit = mem_->count() > 0 ? cli::parse_memory_limit("--mem-limit", mem_limit_) : cli::default_memory_limit();
    const io::InterruptGuard interrupts;  // SIGINT/SIGTERM/SIGHUP stop the sweep between steps, files closed
    return seqrec::run_seqrec_sweep(spec_, collect_provenance(argv), std::cout, std::cerr) ? 1 : 0;
  }

 private:
  void declare_data_options(CLI::App* cmd) {
    seqrec::SeqrecConfig* c = &spec_.base;
    cmd->add_option("--data-dir", spec_.data_dir,
                    "data folder holding seqrec/ (or the seqrec folder itself), for --dataset beauty|sports|toys|lastfm; "
                    "default: $LOBENCH_DATA. No other folder is looked at; a file path in --dataset is read as given");
    cmd->add_flag("--no-verify", no_verify_,
                  "do not check a public set's file against its size and SHA-256 (a modified copy; also "
                  "LOBENCH_NO_VERIFY=1)");
    cmd->add_option("--syn-scale", c->syn_scale, "synthetic:yambda: fraction of users and items (1 = 9,074 x 876,939)")
        ->capture_default_str();
    cmd->add_option("--data-seed", c->data_seed, "synthetic generator seed")->capture_default_str();
    cmd->add_option("--protocol", c->protocol, "multi_label (the paper's split) | leave_one_out (L = 1)")
        ->check(CLI::IsMember({"multi_label", "leave_one_out"}))->capture_default_str();
  }

  void declare_model_options(CLI::App* cmd) {
    seqrec::SeqrecConfig* c = &spec_.base;
    cmd->add_option("--dropout", c->dropout, "dropout on embeddings and residual branches")->capture_default_str();
    cmd->add_flag("--untied", untied_, "the same as --model sasrec_untied: a separate output table");
    cmd->add_option("--lr", c->lr, "AdamW learning rate")->capture_default_str();
    cmd->add_option("--adam-eps", c->adam_eps, "AdamW's epsilon (the update is m / (sqrt(v) + eps))")->capture_default_str();
    cmd->add_option("--adam-beta2", c->adam_beta2,
                    "AdamW's beta2, in [0, 1) (SASRec's paper 0.98, the default; S3-Rec's code 0.999)")
        ->capture_default_str();
    cmd->add_option("--block", c->block,
                    "pre_ln (GPT-2: LayerNorm before each branch and one after the last block) | post_ln (BERT, as "
                    "S3-Rec's SASRec: LayerNorm after each residual sum and on the embeddings, none after the last)")
        ->check(CLI::IsMember({"pre_ln", "post_ln"}))->capture_default_str();
    cmd->add_option("--negatives", c->negatives,
                    "--variant sampled: its one negative is uniform over the items but the positive (positive) or "
                    "outside the user's whole sequence, dev and test items included (history: S3-Rec's code)")
        ->check(CLI::IsMember({"positive", "history"}))->capture_default_str();
    cmd->add_option("--select", c->select,
                    "the dev metric that picks the best epoch (the run file's best_dev_epoch) and drives --early-stop: "
                    "hr@10 | ndcg@20 (S3-Rec's code)")
        ->check(CLI::IsMember({"hr@10", "ndcg@20"}))->capture_default_str();
    cmd->add_option("--preset", preset_,
                    "s3rec: S3-Rec's SASRec, the one-negative baseline of P5's table (--variant sampled --protocol "
                    "leave_one_out --L 1 --N 50 --B 256 --D 64 --layers 2 --heads 2 --dropout 0.5 --lr 1e-3 --block "
                    "post_ln --adam-beta2 0.999 --negatives history --select ndcg@20 --eval-every 1 --early-stop 10 "
                    "--epochs 200 --exclude-history); an option given on the command line wins over the preset's")
        ->check(CLI::IsMember({"s3rec"}));
    cmd->add_option("--weight-decay", c->weight_decay, "AdamW decoupled weight decay (matrices, embeddings)")->capture_default_str();
    cmd->add_option("--warmup-steps", c->warmup_steps);  // help: the shared table
    // --warmup is `run`'s untimed repetitions; here it was the optimizer's warm-up steps, now --warmup-steps.
    cli::deprecated(cmd, "--warmup", "--warmup-steps",
                    [c](const std::string& v) { c->warmup_steps = cli::parse_count("--warmup", v); });
    cmd->add_option("--opt-precision", c->optimizer_precision, "fp32 | bf16 (bf16 parameters and state, Kahan): how the parameters are stored; the loss's products' precision is --operand")
        ->check(CLI::IsMember({"fp32", "bf16"}))->capture_default_str();
  }

  void declare_run_options(CLI::App* cmd) {
    seqrec::SeqrecConfig* c = &spec_.base;
    cmd->add_option("--eval-every", c->eval_every, "evaluate every N epochs (0: last only, -1: never)")->capture_default_str();
    cmd->add_option("--early-stop", c->early_stop,
                    "stop after this many evaluations (--eval-every epochs apart) in a row without a new best dev "
                    "--select metric, and record the best dev epoch with its test metrics in the run file "
                    "(best_dev_epoch, best_test_hr_at_10, ...); 0: off")
        ->capture_default_str();
    cmd->add_option("--checkpoint", c->checkpoint,
                    "write the run's state (parameters, AdamW moments and step, epoch, early-stopping state, the "
                    "/epochs rows) to this HDF5 file at the end of every evaluated whole epoch, atomically; a single "
                    "run (--out) only; an existing file is refused unless --overwrite or it is the --resume-from file, "
                    "and so is a run that would never write it (--eval-every -1, --steps ending no whole epoch)");
    cmd->add_option("--resume-from", c->resume_from,
                    "continue the run a --checkpoint file holds (the same data, by its content's SHA-256, model, "
                    "objective, optimizer, --B and --seed; refused otherwise, naming what differs) up to --epochs "
                    "(counted from the start), bit for bit as if it had never stopped; the run file gets the "
                    "checkpoint's /epochs rows and only the new /steps");
    cmd->add_option("--max-eval-users", c->max_eval_users, "evaluate on an evenly spaced subset (0: all)")->capture_default_str();
    cmd->add_flag("--exclude-history", c->exclude_history, "rank without each user's history (S3-Rec's full ranking)");
    cmd->add_option("--threads", c->threads, "threads")->capture_default_str();
    cmd->add_option("--micro-batch", c->micro_batch,
                    "gradient accumulation: each step's --B windows in micro-batches of this many, their gradients "
                    "summed in a fixed tree (0: --B, or --B / ranks with --data-parallel); what data-parallel ranks "
                    "split, so one process with the same --micro-batch gives the same bits")
        ->capture_default_str();
    cmd->add_flag("--data-parallel", data_parallel_,
                  "under `mpirun -np R`: each rank a block of every step's micro-batches, the model and AdamW "
                  "replicated, gradients summed in the fixed tree (bit-identical to one process with the same "
                  "--micro-batch); R a power of two dividing --B / --micro-batch; rank 0 writes the run files");
    cmd->add_option("--block-v", c->block_v, "the loss variant's vocabulary block (0: its choice)")->capture_default_str();
  }

  void declare_sweep_options(CLI::App* cmd) {
    mem_ = cmd->add_option("--mem-limit", mem_limit_,
                           "record points predicted to need more than this (e.g. 20G) as skipped, with their "
                           "prediction; default: memory available now minus max(1 GiB, 10 %)");
    cmd->add_flag("--dry-run", spec_.base.dry_run, "write every point's run file with its predicted memory only; train nothing");
    cmd->add_flag("--list", list_, "print the points of the sweep (their run file names) and exit; writes nothing");
    cmd->add_option("--out", spec_.out, "HDF5 run file of a single-point run (refused if it exists, unless --overwrite)");
    cmd->add_option("--out-dir", spec_.out_dir, "folder of the run files, one NAME.h5 per point (existing ones refused "
                                                "unless --overwrite)");
    cmd->add_flag("--overwrite", spec_.overwrite, "replace existing run files instead of refusing");
    cmd->add_flag("--resume", spec_.resume,
                  "continue a sweep: keep its finished run files (ok, skipped, failed), run the rest (missing, interrupted)");
    cmd->add_option("--partition", partition_,
                    "run only points i with i % N == K of the sweep (one part of a job array, its own --out-dir; "
                    "`lobench merge OUT_DIR PART_DIRS...` joins the parts)")
        ->capture_default_str();
    cmd->add_flag("--quiet", quiet_, "no progress line");
  }

  seqrec::SeqrecSweepSpec spec_;
  std::string mem_limit_, seeds_, preset_, partition_ = "0/1";
  bool quiet_ = false, untied_ = false, list_ = false, no_verify_ = false, data_parallel_ = false;
  CLI::App* cmd_ = nullptr;
  CLI::Option* mem_ = nullptr;
};

}  // namespace

LOBENCH_REGISTER_TRAINING_JOB(SeqrecTrainingJob);

}  // namespace lobench
