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
// Wall and process CPU time (all threads) are reported, median [min, max].
//
//   seqrec_loss_bench [--syn-scale 0.1] [--B 8] [--N 256] [--D 256] [--L 8] [--layers 3] [--heads 4]
//                     [--variants fused,chunked] [--threads 2] [--reps 5]
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <time.h>

#include <chrono>
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

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double cpu_s() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Contender {
  std::string name;
  std::function<void()> run;
  std::vector<double> wall, cpu;
};

}  // namespace

// One long main on purpose: a benchmark's protocol (set-up, the interleaved timed loop, the report)
// reads top to bottom, and nothing in it is reused elsewhere.
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
  const int64_t V = d.V, N = c.N, D = c.D, L = c.L, B = std::min<int64_t>(c.B, d.split.train.count()), P = B * N;
  const data::TrainWindows& tw = d.split.train;
  CountingAllocator alloc;
  SasRec model(model_config(c, V), alloc);
  model.init();
  std::vector<int32_t> ids(tw.inputs.begin(), tw.inputs.begin() + P);
  std::vector<int32_t> targets(tw.targets.begin(), tw.targets.begin() + P * L);
  std::vector<float> weights(tw.weights.begin(), tw.weights.begin() + P);
  const float* hidden = model.forward(ids.data(), B, 1, /*training=*/true);
  std::vector<float> d_hidden(size_t(P * D));

  // lobench run's synthetic inputs at the same shape.
  std::vector<float> A(size_t(P * D)), E(size_t(V * D));
  std::vector<int32_t> T(size_t(P * L));
  {
    data::Rng rng(data::stream_key(0, 0xBE4C, 0));
    for (float& x : A) x = float(rng.normal());
    for (float& x : E) x = float(rng.normal());
    for (int32_t& t : T) t = int32_t(rng.below(uint64_t(V)));
  }
  RunOptions ro;
  ro.threads = c.threads;
  std::vector<Contender> cs;
  std::vector<std::unique_ptr<FullVocabularyLoss>> losses;
  std::vector<std::unique_ptr<StepOutputs>> outs;
  std::vector<std::unique_ptr<CountingAllocator>> allocs;
  for (const std::string& v : variants) {
    losses.push_back(std::make_unique<FullVocabularyLoss>(v, ro));
    FullVocabularyLoss* loss = losses.back().get();
    LossBatch lb{P, V, D, L, hidden, model.output_table(), targets.data(), weights.data()};
    cs.push_back({v + ": train-seqrec loss part (model inputs)",
                  [=, &d_hidden, &model] { loss->compute(lb, d_hidden.data(), model.output_grad()); }, {}, {}});
    {  // What a step paid before the loss kept its outputs: zeroing them (StepOutputs::resize).
      outs.push_back(std::make_unique<StepOutputs>());
      StepOutputs* out = outs.back().get();
      cs.push_back({v + ": StepOutputs::resize alone (zeroing dA, dE)", [=] { out->resize(P, V, D); }, {}, {}});
    }
    const Variant* var = Registry::instance().find(v);
    StepInputs in_model{P, V, D, L, hidden, model.output_table(), targets.data(), weights.data(), Reduction::mean};
    StepInputs in_run{P, V, D, L, A.data(), E.data(), T.data(), nullptr, Reduction::mean};
    for (auto [what, in] : {std::pair{"bare variant, model inputs", in_model}, {"bare variant, run's N(0,1) inputs", in_run}}) {
      outs.push_back(std::make_unique<StepOutputs>());
      outs.back()->resize(P, V, D);
      allocs.push_back(std::make_unique<CountingAllocator>());
      StepOutputs* out = outs.back().get();
      CountingAllocator* al = allocs.back().get();
      cs.push_back({v + ": " + what, [=] {
                      RunContext ctx{*al, ro};
                      var->run(in, *out, ctx);
                    }, {}, {}});
    }
  }
  for (auto& x : cs) x.run();  // warm-up
  for (int r = 0; r < reps; ++r)
    for (auto& x : cs) {
      const double w0 = now_s(), c0 = cpu_s();
      x.run();
      x.wall.push_back(now_s() - w0);
      x.cpu.push_back(cpu_s() - c0);
    }
  fmt::print("P {} (B {} N {}), V {}, D {}, L {}, threads {}, {} reps each (interleaved); seconds median [min, max]\n", P,
             B, N, V, D, L, c.threads, reps);
  for (auto& x : cs) {
    const Samples w{x.wall}, u{x.cpu};
    fmt::print("{:<58} wall {:7.3f} [{:7.3f}, {:7.3f}]  cpu {:7.3f} [{:7.3f}, {:7.3f}]\n", x.name, w.median(), w.min(),
               w.max(), u.median(), u.min(), u.max());
  }
  return 0;
}
