// How large are the gradients of a train-seqrec run, next to AdamW's ε? (results/seqrec-cpu.md,
// section 3: why full-vocabulary BCE with the paper's `mean` reduction learns so slowly on Beauty.)
// AdamW's update is lr·m̂/(sqrt(v̂) + ε); once |g| is comparable to ε the denominator no longer
// normalises the step and it shrinks by about |g|/(|g| + ε). At step 1, m̂ = g and sqrt(v̂) = |g|
// exactly, so |Δp|/lr = |g|/(|g| + ε) per element: the ratio below is that damping, measured.
// Over --steps steps of training (windows shuffled per epoch, dropout on, no weight decay), at step 1
// and every --print-every steps, per parameter group (the item table, the positions, the blocks' weight matrices, the gains, shifts
// and biases): RMS(g), the median |g|, the fraction of elements with |g| < ε, RMS(Δp)/lr of the AdamW
// step actually taken (1 at step 1 = Adam's normalised step; later also below 1 when g's sign or scale
// changes from step to step, which is not ε's doing), and ε's own share of it: the mean over elements
// of sqrt(v̂)/(sqrt(v̂) + ε), the factor by which ε shrinks each element's step (1 = ε negligible).
//
//   seqrec_grad_scale_bench --dataset beauty --data-dir DATA [--protocol leave_one_out]
//       [--L 1] [--N 50] [--B 256] [--D 64] [--layers 2] [--heads 1] [--dropout 0.5] [--lr 1e-3]
//       [--variant fused] [--reduction mean] [--adam-eps 1e-8] [--steps 5] [--print-every 1] [--threads 1]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "datasets/public_datasets.hpp"
#include "datasets/random.hpp"
#include "harness/seqrec/adamw.hpp"
#include "harness/seqrec/sasrec_model.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/seqrec_memory.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/seqrec/train_step.hpp"
#include "variants/counting_allocator.hpp"

namespace {

using namespace lobench;
using namespace lobench::seqrec;

// The four groups a tensor's name puts it in.
int group_of(const std::string& name) {
  if (name == "items" || name == "output_items") return 0;
  if (name.ends_with(".positions")) return 1;
  if (name.ends_with(".weight")) return 2;
  return 3;  // LayerNorm gains and shifts, biases
}
constexpr const char* kGroups[4] = {"item table", "positions", "weight matrices", "gains/shifts/biases"};

struct GroupStats {
  std::vector<float> abs_g;
  double sum_g2 = 0, sum_dp2 = 0, sum_damping = 0;
  int64_t below_eps = 0;
};

struct BenchOptions {
  SeqrecConfig c;
  std::string data_dir;
  bool no_verify = false;
  int64_t steps = 5, print_every = 1;
};

// The command line into o; its exit status when the run should stop (help, a bad option), else -1.
int parse_options(int argc, char** argv, BenchOptions& o) {
  SeqrecConfig& c = o.c;
  c.dataset = "beauty";
  c.protocol = "leave_one_out";
  c.L = 1;
  c.N = 50;
  c.B = 256;
  c.D = 64;
  c.layers = 2;
  c.heads = 1;
  c.dropout = 0.5f;
  c.lr = 1e-3f;
  c.variant = "fused";
  CLI::App app{"Gradient RMS against AdamW's eps for the first steps of a train-seqrec run"};
  app.add_option("--dataset", c.dataset, "a public set (beauty, sports, toys, lastfm) or a sequence file");
  app.add_option("--data-dir", o.data_dir, "data folder holding seqrec/ (default: $LOBENCH_DATA; docs/data.md)");
  app.add_flag("--no-verify", o.no_verify, "do not check a public set's file against its size and SHA-256");
  app.add_option("--protocol", c.protocol, "multi_label | leave_one_out");
  app.add_option("--L", c.L, "targets per position");
  app.add_option("--N", c.N, "window length");
  app.add_option("--B", c.B, "windows per step");
  app.add_option("--D", c.D, "model width");
  app.add_option("--layers", c.layers, "blocks");
  app.add_option("--heads", c.heads, "heads");
  app.add_option("--dropout", c.dropout, "dropout");
  app.add_option("--lr", c.lr, "learning rate");
  app.add_option("--variant", c.variant, "loss variant or sampled");
  app.add_option("--reduction", c.reduction, "mean | sum | mean_positions");
  app.add_option("--adam-eps", c.adam_eps, "AdamW's epsilon");
  app.add_option("--steps", o.steps, "steps to train");
  app.add_option("--print-every", o.print_every, "measure at step 1 and every this many steps")->check(CLI::PositiveNumber);
  app.add_option("--threads", c.threads, "threads");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (const data::PublicDataset* pub = data::find_public_dataset("seqrec", c.dataset)) {
    try {
      c.dataset = data::locate_public_dataset(*pub, o.data_dir, data::verification_wanted(o.no_verify)).front().string();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "seqrec_grad_scale_bench: %s\n", e.what());
      return 2;
    }
  }
  validate(c);
  return -1;
}

// The training windows of step s (1-based), B at a time, in a fresh permutation every epoch.
class WindowBatches {
 public:
  WindowBatches(const data::TrainWindows& tw, const SeqrecConfig& c) : tw_(tw), c_(c), order_(size_t(tw.count())) {}
  // Fills ids, targets and weights with step s's windows; returns how many (B, or fewer at an epoch's end).
  int64_t gather(int64_t s) {
    const int64_t per_epoch = (tw_.count() + c_.B - 1) / c_.B, N = c_.N, L = c_.L;
    const int64_t k = (s - 1) % per_epoch;
    if (k == 0) {  // a new epoch: a fresh permutation of the windows
      data::Rng rng(data::stream_key(c_.seed, 0xB5, uint64_t(s)));
      for (int64_t i = 0; i < tw_.count(); ++i) order_[size_t(i)] = i;
      for (int64_t i = tw_.count() - 1; i > 0; --i) std::swap(order_[size_t(i)], order_[rng.below(uint64_t(i + 1))]);
    }
    const int64_t first = k * c_.B, B = std::min<int64_t>(c_.B, tw_.count() - first);
    ids.resize(size_t(B * N));
    targets.resize(size_t(B * N * L));
    weights.resize(size_t(B * N));
    for (int64_t i = 0; i < B; ++i) {
      const int64_t w = order_[size_t(first + i)];
      std::copy_n(tw_.inputs.begin() + w * N, N, ids.begin() + i * N);
      std::copy_n(tw_.targets.begin() + w * N * L, N * L, targets.begin() + i * N * L);
      std::copy_n(tw_.weights.begin() + w * N, N, weights.begin() + i * N);
    }
    return B;
  }
  std::vector<int32_t> ids, targets;
  std::vector<float> weights;

 private:
  const data::TrainWindows& tw_;
  const SeqrecConfig& c_;
  std::vector<int64_t> order_;
};

// Step s's line per parameter group: the gradients, and the AdamW step just taken (values now against
// `before`).
void print_group_stats(int64_t s, double loss, const ParameterSet& ps, const std::vector<float>& before,
                       const AdamW& opt, double eps) {
  GroupStats g[4];
  for (const ParamInfo& t : ps.tensors()) {
    GroupStats& st = g[group_of(t.name)];
    for (int64_t i = t.ref.offset; i < t.ref.offset + t.ref.size; ++i) {
      const float gi = ps.grads()[i], dp = ps.values()[i] - before[size_t(i)];
      st.abs_g.push_back(std::abs(gi));
      st.sum_g2 += double(gi) * gi;
      st.sum_dp2 += double(dp) * dp;
      st.below_eps += std::abs(gi) < eps;
      const double root_v = std::sqrt(double(opt.second_moment()[i]));
      st.sum_damping += root_v + eps > 0 ? root_v / (root_v + eps) : 1.0;
    }
  }
  for (int k = 0; k < 4; ++k) {
    GroupStats& st = g[k];
    const double n = double(st.abs_g.size());
    if (n == 0) continue;
    std::nth_element(st.abs_g.begin(), st.abs_g.begin() + st.abs_g.size() / 2, st.abs_g.end());
    fmt::print("{:>4} {:>10.5g} {:<20} {:>9} {:>11.3e} {:>11.3e} {:>9.1f}% {:>12.4f} {:>12.4f}\n", s, loss, kGroups[k],
               st.abs_g.size(), std::sqrt(st.sum_g2 / n), st.abs_g[st.abs_g.size() / 2],
               100.0 * double(st.below_eps) / n, std::sqrt(st.sum_dp2 / n) / double(opt.lr_at(s)), st.sum_damping / n);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
  if (const int status = parse_options(argc, argv, o); status >= 0) return status;
  const SeqrecConfig& c = o.c;
  const SeqrecData d = load_seqrec_data(c);
  CountingAllocator alloc;
  SasRec model(model_config(c, d.V), alloc);
  model.init();
  RunOptions ro;
  ro.threads = c.threads;
  Objective objective(c.variant, ro, c.seed, parse_loss_reduction(c.reduction));
  AdamWConfig oc;
  oc.lr = c.lr;
  oc.eps = c.adam_eps;
  AdamW opt(oc, model.params(), alloc);
  TrainStep step(model, objective, alloc);
  ParameterSet& ps = model.params();
  std::vector<float> before(size_t(ps.size()));
  fmt::print("{} V {} train windows {}; {} reduction {}, eps {:g}, lr {:g}, B {} N {} D {}\n", d.name, d.V,
             d.split.train.count(), c.variant, c.reduction, c.adam_eps, c.lr, c.B, c.N, c.D);
  fmt::print("{:>4} {:>10} {:<20} {:>9} {:>11} {:>11} {:>10} {:>12} {:>12}\n", "step", "loss", "group", "elements",
             "RMS(g)", "median|g|", "|g|<eps", "RMS(dp)/lr", "eps damping");
  WindowBatches batches(d.split.train, c);
  for (int64_t s = 1; s <= o.steps; ++s) {
    const int64_t B = batches.gather(s);
    const StepRecord r =
        step.run({B, c.L, batches.ids.data(), batches.targets.data(), batches.weights.data()}, uint64_t(s), nullptr);
    const bool measure = s == 1 || s % o.print_every == 0;
    if (measure) std::copy_n(ps.values(), ps.size(), before.begin());
    opt.step(ps, c.threads);
    if (measure) print_group_stats(s, r.loss, ps, before, opt, c.adam_eps);
  }
  return 0;
}
