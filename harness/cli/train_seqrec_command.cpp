// `lobench train-seqrec`: trains the multi-label SASRec of the Cut BCE paper (harness/seqrec/) with one
// loss variant on a sequence file or the synthetic Yambda, one HDF5 run file per run; runs predicted to
// exceed --mem-limit are recorded as skipped with their predicted bytes (the paper's OOM cells).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/provenance.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/system_memory.hpp"

namespace lobench {

namespace {

void print_summary(const seqrec::SeqrecConfig& c, const seqrec::SeqrecOutcome& o) {
  const auto mib = [](int64_t b) { return double(b) / (1024.0 * 1024.0); };
  const seqrec::SeqrecMemory& p = o.predicted;
  fmt::print("train-seqrec {}: {}{}\n", c.variant, o.status, o.reason.empty() ? "" : " (" + o.reason + ")");
  fmt::print("  predicted MiB: parameters {:.1f}  gradients {:.1f}  optimizer {:.1f}  activations {:.1f}  loss workspace {:.1f}  "
             "loss outputs {:.1f}  total {:.1f}\n",
             mib(p.parameters), mib(p.gradients), mib(p.optimizer_state), mib(p.activations), mib(p.loss_workspace),
             mib(p.loss_outputs), mib(p.total()));
  if (o.status != "ok") return;
  const seqrec::SeqrecMemory& m = o.measured;
  fmt::print("  measured  MiB: parameters {:.1f}  gradients {:.1f}  optimizer {:.1f}  activations {:.1f}  loss workspace {:.1f}  "
             "loss outputs {:.1f}  total {:.1f}  (process RSS peak {:.1f})\n",
             mib(m.parameters), mib(m.gradients), mib(m.optimizer_state), mib(m.activations), mib(m.loss_workspace),
             mib(m.loss_outputs), mib(m.total()), mib(o.rss_peak_bytes));
  fmt::print("  {} steps, {:.4g} steps/s; mean s: forward {:.4g}  loss {:.4g}  backward {:.4g}  optimizer {:.4g}\n", o.steps,
             o.steps_per_s, o.mean_forward_s, o.mean_loss_s, o.mean_backward_s, o.mean_optimizer_s);
  fmt::print("  test Hit@8 {:.4f}  HR@10 {:.4f}  NDCG@10 {:.4f}\n", o.test_hit_at_8, o.test_hr_at_10, o.test_ndcg_at_10);
}

}  // namespace

void register_train_seqrec_command(CLI::App& app, const std::string& argv) {
  auto c = std::make_shared<seqrec::SeqrecConfig>();
  auto mem_limit = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto untied = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "train-seqrec",
      "Train the Cut BCE paper's multi-label SASRec (GPT-2 causal backbone, tied item/output embeddings) with a\n"
      "full-vocabulary BCE variant (dense = framework BCE, chunked = Cut BCE, fused) or SASRec's one sampled\n"
      "negative, on a sequence file (USER ITEM ITEM ...) or synthetic:yambda. Writes one HDF5 run file: per-step\n"
      "time split, loss and cut metrics, per-epoch dev/test Hit@8, HR@10, NDCG@10, memory predicted and measured.");
  cmd->add_option("--dataset", c->dataset, "sequence file (e.g. ../shared/datasets/seqrec/LastFM.txt) or synthetic:yambda")
      ->capture_default_str();
  cmd->add_option("--syn-scale", c->syn_scale, "synthetic:yambda: fraction of users and items (1 = 9,074 x 876,939)")
      ->capture_default_str();
  cmd->add_option("--data-seed", c->data_seed, "synthetic generator seed")->capture_default_str();
  cmd->add_option("--protocol", c->protocol, "multi_label (the paper's split) | leave_one_out (L = 1)")
      ->check(CLI::IsMember({"multi_label", "leave_one_out"}))->capture_default_str();
  cmd->add_option("--variant", c->variant, "loss: dense | chunked | fused | sampled")->capture_default_str();
  cmd->add_option("--L", c->L, "targets per position (next L items)")->capture_default_str();
  cmd->add_option("--N", c->N, "window length")->capture_default_str();
  cmd->add_option("--B", c->B, "windows per step")->capture_default_str();
  cmd->add_option("--D", c->D, "model width")->capture_default_str();
  cmd->add_option("--layers", c->layers, "transformer blocks")->capture_default_str();
  cmd->add_option("--heads", c->heads, "attention heads")->capture_default_str();
  cmd->add_option("--dropout", c->dropout, "dropout on embeddings and residual branches")->capture_default_str();
  cmd->add_flag("--untied", *untied, "a separate output table instead of the item embeddings");
  cmd->add_option("--lr", c->lr, "AdamW learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", c->weight_decay, "AdamW decoupled weight decay (matrices, embeddings)")->capture_default_str();
  cmd->add_option("--warmup", c->warmup_steps, "linear warm-up steps")->capture_default_str();
  cmd->add_option("--opt-precision", c->optimizer_precision, "fp32 | bf16 (bf16 parameters and state, Kahan)")
      ->check(CLI::IsMember({"fp32", "bf16"}))->capture_default_str();
  cmd->add_option("--steps", c->steps, "stop after this many steps (0: --epochs)")->capture_default_str();
  cmd->add_option("--epochs", c->epochs, "epochs over the training windows")->capture_default_str();
  cmd->add_option("--eval-every", c->eval_every, "evaluate every N epochs (0: last only, -1: never)")->capture_default_str();
  cmd->add_option("--max-eval-users", c->max_eval_users, "evaluate on an evenly spaced subset (0: all)")->capture_default_str();
  cmd->add_flag("--exclude-history", c->exclude_history, "rank without each user's history (S3-Rec's full ranking)");
  cmd->add_option("--seed", c->seed, "seed of init, dropout, shuffling and negatives")->capture_default_str();
  cmd->add_option("--threads", c->threads, "threads")->capture_default_str();
  cmd->add_option("--block-v", c->block_v, "the loss variant's vocabulary block (0: its choice)")->capture_default_str();
  cmd->add_option("--mem-limit", *mem_limit,
                  "record the run as skipped when its predicted bytes exceed this (e.g. 20G; default: memory available "
                  "now minus max(1 GiB, 10 %))");
  cmd->add_flag("--dry-run", c->dry_run, "write the predicted memory only");
  cmd->add_option("--out", c->out, "HDF5 run file")->required();
  cmd->add_flag("--quiet", *quiet, "no progress line");
  cmd->callback([c, mem_limit, quiet, untied, argv] {
    c->tied = !*untied;
    c->progress = !*quiet;
    if (!mem_limit->empty()) {
      c->mem_limit = parse_bytes(*mem_limit);
    } else {
      const int64_t avail = available_memory_bytes();
      c->mem_limit = avail > 0 ? avail - std::max<int64_t>(int64_t(1) << 30, avail / 10) : 0;
    }
    const seqrec::SeqrecOutcome o = seqrec::run_seqrec(*c, collect_provenance(argv), std::cout, std::cerr);
    print_summary(*c, o);
    set_command_exit_code(o.status == "failed" ? 1 : 0);
  });
}

}  // namespace lobench
