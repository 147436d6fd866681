// Is the loss part of a train-seqrec step as fast as the step benchmark (`lobench run`) at that shape?
// Issue 12's target: "a training step's loss part with `fused` runs at the rate of the `fused` step
// benchmark at that shape (no overhead from the model around it)". In one process, interleaved round-
// robin (so that a shared machine's drift slows all alike), for each variant:
//   1. the loss part exactly as TrainStep runs it (Objective::compute: the variant, the counts, dA
//      copied into d hidden, dE added into the output table's gradient) on a real batch of the
//      synthetic Yambda through an initialised model (hidden = its forward);
//   2. the bare variant run (what `lobench run` times) on the same inputs;
//   3. the bare variant on `lobench run`'s synthetic inputs (A, E ~ N(0, 1), targets uniform in
//      [0, V), no weights) at the same P, V, D, L.
// 1 vs 2 is the model's overhead around the loss; 2 vs 3 what the inputs' values change.
// Wall and process CPU time (all threads) are reported, median [min, max]; repetitions follow lobench's
// one rule (time_interleaved, harness/measure.hpp).
//
//   seqrec_loss_bench [--syn-scale 0.1] [--B 8] [--N 256] [--D 256] [--L 8] [--layers 3] [--heads 4]
//                     [--variants fused,chunked] [--threads 2] [--reps 5]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "datasets/random.hpp"
#include "harness/measure.hpp"
#include "harness/seqrec/sasrec_model.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/seqrec_memory.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "variants/counting_allocator.hpp"
#include "variants/variant.hpp"

namespace {

using namespace lobench;
using namespace lobench::seqrec;

// lobench run's synthetic inputs at a shape: A, E ~ N(0, 1), targets uniform in [0, V), no weights.
struct RunInputs {
  RunInputs(int64_t P, int64_t V, int64_t D, int64_t L) : A(size_t(P * D)), E(size_t(V * D)), T(size_t(P * L)) {
    data::Rng rng(data::stream_key(0, 0xBE4C, 0));
    for (float& x : A) x = float(rng.normal());
    for (float& x : E) x = float(rng.normal());
    for (int32_t& t : T) t = int32_t(rng.below(uint64_t(V)));
  }
  std::vector<float> A, E;
  std::vector<int32_t> T;
};

// The contenders of the comparison and what they run on: an initialised model's hidden states on a real
// batch of the training windows, and lobench run's inputs at the same shape.
struct LossBench {
  LossBench(const SeqrecConfig& c, const SeqrecData& d)
      : V(d.V), N(c.N), D(c.D), L(c.L), B(std::min<int64_t>(c.B, d.split.train.count())), P(B * N),
        model(model_config(c, V), alloc), run_inputs(P, V, D, L) {
    const data::TrainWindows& tw = d.split.train;
    model.init();
    ids.assign(tw.inputs.begin(), tw.inputs.begin() + P);
    targets.assign(tw.targets.begin(), tw.targets.begin() + P * L);
    weights.assign(tw.weights.begin(), tw.weights.begin() + P);
    hidden = model.forward(ids.data(), B, 1, /*training=*/true);
    d_hidden.resize(size_t(P * D));
    ro.threads = c.threads;
  }

  // Variant v's contenders: its loss part as TrainStep runs it, the zeroing of a StepOutputs it used to
  // pay, and the bare variant on the model's inputs and on lobench run's.
  void add_contenders(const std::string& v) {
    losses.push_back(std::make_unique<FullVocabularyLoss>(v, ro));
    FullVocabularyLoss* loss = losses.back().get();
    LossBatch lb{P, V, D, L, hidden, model.output_table(), targets.data(), weights.data()};
    contenders.push_back({v + ": train-seqrec loss part (model inputs)",
                          [=, this] { loss->compute(lb, d_hidden.data(), model.output_grad()); }, {}, {}});
    outs.push_back(std::make_unique<StepOutputs>());
    StepOutputs* zeroed = outs.back().get();
    contenders.push_back({v + ": StepOutputs::resize alone (zeroing dA, dE)", [=, this] { zeroed->resize(P, V, D); }, {}, {}});
    const Variant* var = Registry::instance().find(v);
    const StepInputs in_model{P, V, D, L, hidden, model.output_table(), targets.data(), weights.data(), Reduction::mean};
    const StepInputs in_run{P, V, D, L, run_inputs.A.data(), run_inputs.E.data(), run_inputs.T.data(), nullptr,
                            Reduction::mean};
    for (auto [what, in] : {std::pair{"bare variant, model inputs", in_model}, {"bare variant, run's N(0,1) inputs", in_run}}) {
      outs.push_back(std::make_unique<StepOutputs>());
      outs.back()->resize(P, V, D);
      allocs.push_back(std::make_unique<CountingAllocator>());
      StepOutputs* out = outs.back().get();
      CountingAllocator* al = allocs.back().get();
      contenders.push_back({v + ": " + what, [=, this] {
                              RunContext ctx{*al, ro};
                              var->run(in, *out, ctx);
                            }, {}, {}});
    }
  }

  const int64_t V, N, D, L, B, P;
  CountingAllocator alloc;
  SasRec model;
  RunInputs run_inputs;
  std::vector<int32_t> ids, targets;
  std::vector<float> weights, d_hidden;
  const float* hidden = nullptr;
  RunOptions ro;
  std::vector<Contender> contenders;
  std::vector<std::unique_ptr<FullVocabularyLoss>> losses;
  std::vector<std::unique_ptr<StepOutputs>> outs;
  std::vector<std::unique_ptr<CountingAllocator>> allocs;
};

}  // namespace

int main(int argc, char** argv) {
  SeqrecConfig c;
  c.syn_scale = 0.1;
  c.threads = 2;
  std::vector<std::string> variants = {"fused", "chunked"};
  int reps = 5;
  CLI::App app{"The loss part of a train-seqrec step against the bare variant (lobench run's measurement), one run"};
  app.add_option("--syn-scale", c.syn_scale, "synthetic:yambda scale");
  app.add_option("--B", c.B, "windows per step");
  app.add_option("--N", c.N, "window length");
  app.add_option("--D", c.D, "model width");
  app.add_option("--L", c.L, "targets per position");
  app.add_option("--layers", c.layers, "blocks");
  app.add_option("--heads", c.heads, "heads");
  app.add_option("--variants", variants, "loss variants")->delimiter(',');
  app.add_option("--threads", c.threads, "threads");
  app.add_option("--reps", reps, "timed repetitions of each contender");
  CLI11_PARSE(app, argc, argv);

  const SeqrecData d = load_seqrec_data(c);
  LossBench bench(c, d);
  for (const std::string& v : variants) bench.add_contenders(v);
  RepPolicy policy;
  policy.fixed_reps = reps;
  time_interleaved(bench.contenders, /*warmup=*/1, policy);
  fmt::print("P {} (B {} N {}), V {}, D {}, L {}, threads {}, {} reps each (interleaved); seconds median [min, max]\n",
             bench.P, bench.B, bench.N, bench.V, bench.D, bench.L, c.threads, reps);
  for (const Contender& x : bench.contenders)
    fmt::print("{:<58} wall {:7.3f} [{:7.3f}, {:7.3f}]  cpu {:7.3f} [{:7.3f}, {:7.3f}]\n", x.name, x.wall.median(),
               x.wall.min(), x.wall.max(), x.cpu.median(), x.cpu.min(), x.cpu.max());
  return 0;
}
