// How much a classifier TRAINING step (logits, loss, input gradient, weight gradient AND the rounded SGD
// update, fused or separate, in any storage format) costs against the registry's loss-and-gradient
// variants (`fused`: one pass, 6PVD; `chunked`: Cut BCE, 8PVD) at the same shape, in one run. The target
// of the issue: a fused training step at most 1.3x the loss-and-gradient step.
//
// Repetitions are interleaved (variant, step, variant, step, ...) so that a noisy shared machine slows
// both alike; medians of wall time and of process CPU time (all threads) are reported.
//
//   train_step_bench [--V 65536,131072] [--D 512,768] [--B 128] [--L 8] [--threads 2] [--reps 7]
//                    [--configs fp32:rne:fused:1,bf16:sr:fused:1,...] [--out file.h5]
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "harness/train/classifier.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/measure.hpp"
#include "precision_sim/format.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace {

using namespace lobench;
using namespace lobench::train;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double cpu_s() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
double median(std::vector<double> v) { return Samples{std::move(v)}.median(); }

struct StepConfig {
  std::string format, rounding;
  UpdateMode mode;
  int64_t chunks;
  std::string name() const { return fmt::format("{}:{}:{}:{}", format, rounding, to_string(mode), chunks); }
};

StepConfig parse_config(const std::string& s) {
  std::vector<std::string> parts;
  size_t a = 0;
  for (size_t b; (b = s.find(':', a)) != std::string::npos; a = b + 1) parts.push_back(s.substr(a, b - a));
  parts.push_back(s.substr(a));
  if (parts.size() != 4) throw std::invalid_argument("--configs entries are FORMAT:ROUNDING:MODE:CHUNKS, got " + s);
  return {parts[0], parts[1], parse_update_mode(parts[2]), std::stoll(parts[3])};
}

struct Row {
  std::string config;
  int64_t V, D, B, L, threads;
  double step_wall, step_cpu, fused_wall, fused_cpu, chunked_wall, chunked_cpu;
  int64_t step_peak_bytes, fused_peak_bytes;
};

}  // namespace

// One long main on purpose: a benchmark's protocol (set-up, the timed loops of each contender in the same
// run, the file written) reads top to bottom, and nothing in it is reused elsewhere.
int main(int argc, char** argv) {
  std::vector<int64_t> Vs = {65536, 131072}, Ds = {512, 768};
  int64_t B = 128, L = 8;
  int threads = 2, reps = 7;
  std::vector<std::string> config_names = {"fp32:rne:fused:1", "fp32:rne:separate:1", "bf16:sr:fused:1",
                                           "bf16:sr:separate:8", "e4m3fn:sr:fused:8"};
  std::string out;
  CLI::App app{"Time a classifier training step against the registry's loss-and-gradient variants (same shape, one run)"};
  app.add_option("--V", Vs, "labels")->delimiter(',');
  app.add_option("--D", Ds, "embedding width")->delimiter(',');
  app.add_option("--B", B, "rows per step");
  app.add_option("--L", L, "positives per row");
  app.add_option("--threads", threads, "threads (both sides)");
  app.add_option("--reps", reps, "timed repetitions (after one warm-up)");
  app.add_option("--configs", config_names, "FORMAT:ROUNDING:MODE:CHUNKS")->delimiter(',');
  app.add_option("--out", out, "HDF5 file for the rows");
  CLI11_PARSE(app, argc, argv);
  std::string joined;
  for (int i = 0; i < argc; ++i) joined += (i ? " " : "") + std::string(argv[i]);

  const Variant* fused = Registry::instance().find("fused");
  const Variant* chunked = Registry::instance().find("chunked");
  if (!fused || !chunked) {
    fmt::print(stderr, "train_step_bench: the registry has no fused/chunked variant\n");
    return 2;
  }
  std::vector<Row> rows;
  fmt::print("{:>24} {:>8} {:>5} {:>10} {:>10} {:>10} {:>12} {:>12}   (wall medians; cpu-time ratios in brackets)\n",
             "config", "V", "D", "step ms", "fused ms", "chunked ms", "step/fused", "step/chunked");
  for (int64_t V : Vs) {
    for (int64_t D : Ds) {
      Shape shape{B, 1, V, D, L, Reduction::sum, false};
      SyntheticSpec spec;
      spec.scale_E = 0.02f;
      const StepData data = make_synthetic(shape, spec);
      const StepInputs in = data.view();
      StepOutputs vout;
      vout.resize(in.P, V, D);
      // The same inputs as a training step: H = A, positives = the targets.
      std::vector<int64_t> off(size_t(B + 1), 0);
      std::vector<int32_t> ids;
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t j = 0; j < L; ++j) {
          const int32_t t = data.targets[size_t(b * L + j)];
          if (t >= 0 && t < V) ids.push_back(t);
        }
        off[size_t(b + 1)] = int64_t(ids.size());
      }
      const BatchLabels labels{off, ids};
      std::vector<float> dH(size_t(B * D));
      for (const std::string& cn : config_names) {
        const StepConfig sc = parse_config(cn);
        ClassifierConfig cc;
        cc.V = V;
        cc.D = D;
        cc.format = precision::parse_format(sc.format);
        cc.rounding = parse_update_rounding(sc.rounding);
        cc.mode = sc.mode;
        cc.chunks = sc.chunks;
        cc.threads = threads;
        cc.max_batch = B;
        cc.max_positives = B * L;
        CountingAllocator calloc;
        Classifier clf(cc, calloc);
        clf.set_weights(data.E);
        CountingAllocator valloc;
        RunOptions run_options;
        run_options.threads = threads;
        RunContext ctx{valloc, run_options};
        std::vector<double> sw, sc_, fw, fc, kw, kc;
        uint64_t step = 0;
        auto time_step = [&] {
          const double w0 = now_s(), c0 = cpu_s();
          clf.step(data.A.data(), B, labels, 1e-4f, step++, dH.data());
          sw.push_back(now_s() - w0);
          sc_.push_back(cpu_s() - c0);
        };
        auto time_variant = [&](const Variant* v, std::vector<double>& w, std::vector<double>& c) {
          const double w0 = now_s(), c0 = cpu_s();
          v->run(in, vout, ctx);
          w.push_back(now_s() - w0);
          c.push_back(cpu_s() - c0);
        };
        time_step();  // warm-up
        time_variant(fused, fw, fc);
        time_variant(chunked, kw, kc);
        sw.clear(), sc_.clear(), fw.clear(), fc.clear(), kw.clear(), kc.clear();
        valloc.reset_peak();
        calloc.reset_peak();
        for (int r = 0; r < reps; ++r) {
          time_variant(fused, fw, fc);
          time_step();
          time_variant(chunked, kw, kc);
        }
        Row row{cn, V, D, B, L, threads, median(sw), median(sc_), median(fw), median(fc), median(kw), median(kc),
                calloc.peak_bytes(), valloc.peak_bytes()};
        rows.push_back(row);
        fmt::print("{:>24} {:>8} {:>5} {:>10.1f} {:>10.1f} {:>10.1f} {:>5.2f} [{:>4.2f}] {:>6.2f} [{:>4.2f}]\n", cn, V, D,
                   1e3 * row.step_wall, 1e3 * row.fused_wall, 1e3 * row.chunked_wall, row.step_wall / row.fused_wall,
                   row.step_cpu / row.fused_cpu, row.step_wall / row.chunked_wall, row.step_cpu / row.chunked_cpu);
        std::fflush(stdout);
      }
    }
  }
  if (!out.empty()) {
    h5::Handle f = h5::create_file(out);
    write_provenance(f, collect_provenance(joined));
    h5::write_attr(f, "what", std::string("classifier training step vs registry variants fused/chunked, same shape, "
                                          "interleaved repetitions; seconds are medians"));
    h5::write_attr(f, "reps", int64_t(reps));
    const int64_t n = int64_t(rows.size());
    auto col = [&](const char* name, auto get) {
      std::vector<double> v;
      for (const Row& r : rows) v.push_back(double(get(r)));
      h5::write<double>(f, name, {n}, v.data());
    };
    col("V", [](const Row& r) { return r.V; });
    col("D", [](const Row& r) { return r.D; });
    col("B", [](const Row& r) { return r.B; });
    col("L", [](const Row& r) { return r.L; });
    col("threads", [](const Row& r) { return r.threads; });
    col("step_wall_s", [](const Row& r) { return r.step_wall; });
    col("step_cpu_s", [](const Row& r) { return r.step_cpu; });
    col("fused_wall_s", [](const Row& r) { return r.fused_wall; });
    col("fused_cpu_s", [](const Row& r) { return r.fused_cpu; });
    col("chunked_wall_s", [](const Row& r) { return r.chunked_wall; });
    col("chunked_cpu_s", [](const Row& r) { return r.chunked_cpu; });
    col("step_peak_bytes", [](const Row& r) { return r.step_peak_bytes; });
    col("fused_peak_bytes", [](const Row& r) { return r.fused_peak_bytes; });
    std::string names;
    for (const Row& r : rows) names += (names.empty() ? "" : ",") + r.config;
    h5::write_attr(f, "configs", names);
    h5::write_attr(f, "end_utc", utc_now());
  }
  return 0;
}
