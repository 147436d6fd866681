// What one `lobench train-seqrec` run is: data, protocol, model, objective, optimizer, schedule.
// A plain struct so that a sweep engine can fill it point by point and call run_seqrec().
#pragma once

#include <cstdint>
#include <string>

#include "variants/variant.hpp"

namespace lobench::seqrec {

struct SeqrecConfig {
  // Data: a sequence file (one user per line, datasets/seqrec.hpp) or "synthetic:yambda".
  std::string dataset = "synthetic:yambda";
  double syn_scale = 1.0;      // synthetic: data::yambda_like(scale)
  uint64_t data_seed = 0;      // synthetic: generator seed
  std::string protocol = "multi_label";  // or leave_one_out (L = 1)
  int64_t L = 8;
  int64_t N = 256;
  // Model.
  int64_t B = 8, D = 256, layers = 3, heads = 4;
  // The block layout (sasrec_model.hpp ModelConfig::post_ln): pre_ln (GPT-2's, the Cut BCE paper's, the
  // default) | post_ln (BERT's, as S3-Rec's SASRec: LayerNorm after each residual sum, one on the
  // embeddings, none at the end).
  std::string block = "pre_ln";
  // Gradient accumulation: the step's B windows in micro-batches of this many, their gradients summed in
  // a fixed tree (micro_batch_step.hpp); what data-parallel ranks split. 0: B (one micro-batch, the plain
  // step), or B / ranks when data-parallel.
  int64_t micro_batch = 0;
  int ranks = 1;  // data-parallel ranks (set from the MPI world, not an option)
  float dropout = 0.1f;
  bool tied = true;
  // A learned per-item logit bias, initialised at each item's best constant logit (sasrec_model.hpp
  // ModelConfig::item_bias); the axis output_bias = none (SASRec's, the default) | item.
  bool item_bias = false;
  // Objective: a CPU step variant (dense, chunked, fused) or "sampled" (SASRec's one negative).
  std::string variant = "chunked";
  int64_t block_v = 0;  // the variant's vocabulary block (0: it chooses)
  // The precision of the full-vocabulary loss's products' operands (RunOptions::operand): fp32 | bf16
  // (hidden states and the output table rounded to bf16 for the logits, and the logit gradient for dA
  // and dE; float32 accumulation). Not a storage option: optimizer_precision is how the parameters are kept.
  std::string operand = "fp32";
  // Full-vocabulary reduction (seqrec_loss.hpp LossReduction): mean (the paper's) | sum | mean_positions.
  std::string reduction = "mean";
  // Optimizer.
  float lr = 5e-4f;
  float weight_decay = 0.0f;
  float adam_eps = 1e-8f;  // AdamW's ε (compare it with the gradients' scale: results/seqrec-cpu.md, section 3)
  float adam_beta2 = 0.98f;  // AdamW's β₂: SASRec's paper 0.98 (the default); S3-Rec's code 0.999
  int64_t warmup_steps = 0;
  std::string optimizer_precision = "fp32";  // or bf16 (bf16 + Kahan)
  // Schedule: `steps` > 0 stops after that many steps (epochs then only bound it), else `epochs`.
  int64_t steps = 0;
  int64_t epochs = 1;
  int64_t eval_every = 1;      // evaluate dev and test every this many epochs and at the end (0: end only; -1: never)
  int64_t max_eval_users = 0;  // evaluate on an evenly spaced subset of this many users (0: all)
  // Early stopping (early_stopping.hpp): stop after this many evaluations in a row without a new best dev
  // `select` metric (0: off, the run trains all its epochs; the best dev epoch is then not recorded).
  int64_t early_stop = 0;
  // The dev metric that selects the best epoch and drives early stopping: hr@10 (the default) | ndcg@20
  // (S3-Rec's code).
  std::string select = "hr@10";
  // The sampled objective's negative (seqrec_loss.hpp SampledNegativeLoss): uniform over the catalogue
  // but the positive (positive, the default) | but the user's whole sequence (history, S3-Rec's code).
  std::string negatives = "positive";
  // A checkpoint (seqrec_checkpoint.hpp) written at the end of every evaluated whole epoch (empty: none),
  // and one to continue from (empty: start from the initialisation).
  std::string checkpoint, resume_from;
  bool exclude_history = false;  // rank without the user's own history (S3-Rec's full ranking)
  uint64_t seed = 0;
  int threads = 1;
  // Memory: runs predicted to need more than mem_limit bytes are recorded as skipped (0: no limit).
  int64_t mem_limit = 0;
  bool dry_run = false;  // write the predicted memory only
  std::string out;       // the HDF5 run file
  bool progress = true;     // progress line with ETA on the progress stream
  bool epoch_lines = true;  // one line per epoch on the log stream (--quiet: none)
};

// Throws std::invalid_argument naming the first field out of range.
void validate(const SeqrecConfig& c);

// What the loss variant runs with: threads, vocabulary block and operand precision.
RunOptions loss_options(const SeqrecConfig& c);

}  // namespace lobench::seqrec
