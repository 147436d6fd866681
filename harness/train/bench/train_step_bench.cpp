// How much a classifier TRAINING step (logits, loss, input gradient, weight gradient AND the rounded SGD
// update, fused or separate, in any storage format) costs against the registry's loss-and-gradient
// variants (`fused`: one pass, 6PVD; `chunked`: Cut BCE, 8PVD) at the same shape, in one run. The target
// of the issue: a fused training step at most 1.3x the loss-and-gradient step.
//
// Repetitions are interleaved (variant, step, variant, step, ...) so that a noisy shared machine slows
// both alike (time_interleaved, harness/measure.hpp: the repetition rule of every lobench timing);
// medians of wall time and of process CPU time (all threads) are reported.
//
//   train_step_bench [--V 65536,131072] [--D 512,768] [--B 128] [--L 8] [--threads 2] [--reps 7]
//                    [--configs fp32:rne:fused:1,bf16:sr:fused:1:bf16,...] [--out file.h5]
//
// A configuration is FORMAT:ROUNDING:MODE:CHUNKS[:OPERAND]: OPERAND (fp32 or bf16, default fp32) is the
// precision of the head's products' operands (ClassifierConfig::operand), and the two variants it is
// timed against run with the same operand. A bf16 configuration is also timed against the same step with
// fp32 operands, interleaved in the same repetitions: x_fp32 = fp32 step / bf16 step, per repetition.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/train/classifier.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/measure.hpp"
#include "precision_sim/format.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace {

using namespace lobench;
using namespace lobench::train;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct StepConfig {
  std::string format, rounding;
  UpdateMode mode;
  int64_t chunks;
  Operand operand = Operand::fp32;
};

StepConfig parse_config(const std::string& s) {
  std::vector<std::string> parts;
  size_t a = 0;
  for (size_t b; (b = s.find(':', a)) != std::string::npos; a = b + 1) parts.push_back(s.substr(a, b - a));
  parts.push_back(s.substr(a));
  if (parts.size() != 4 && parts.size() != 5)
    throw std::invalid_argument("--configs entries are FORMAT:ROUNDING:MODE:CHUNKS[:OPERAND], got " + s);
  return {parts[0], parts[1], parse_update_mode(parts[2]), std::stoll(parts[3]),
          parse_operand(parts.size() == 5 ? parts[4] : "fp32")};
}

struct BenchOptions {
  std::vector<int64_t> Vs = {65536, 131072}, Ds = {512, 768};
  int64_t B = 128, L = 8;
  int threads = 2, reps = 7;
  std::vector<std::string> configs = {"fp32:rne:fused:1", "fp32:rne:separate:1", "bf16:sr:fused:1",
                                      "bf16:sr:separate:8", "e4m3fn:sr:fused:8"};
  std::string out;
};

struct Row {
  std::string config;
  int64_t V, D, B, L, threads;
  double step_wall, step_cpu, fused_wall, fused_cpu, chunked_wall, chunked_cpu;
  int64_t step_peak_bytes, fused_peak_bytes;
  // bf16 operands: the fp32-operand step's median wall seconds and the per-repetition ratio fp32 / this
  // (median, min, max); NaN for fp32 configurations.
  double fp32_step_wall = kNaN, x_fp32 = kNaN, x_fp32_min = kNaN, x_fp32_max = kNaN;
};

// One shape's inputs: the variants' step inputs, and the same as a training step's (H = A, the
// positives = the targets).
struct ShapeInputs {
  ShapeInputs(const BenchOptions& o, int64_t V, int64_t D) : shape{o.B, 1, V, D, o.L, Reduction::sum, false} {
    SyntheticSpec spec;
    spec.scale_E = 0.02f;
    data = make_synthetic(shape, spec);
    off.assign(size_t(o.B + 1), 0);
    for (int64_t b = 0; b < o.B; ++b) {
      for (int64_t j = 0; j < o.L; ++j) {
        const int32_t t = data.targets[size_t(b * o.L + j)];
        if (t >= 0 && t < V) ids.push_back(t);
      }
      off[size_t(b + 1)] = int64_t(ids.size());
    }
  }
  BatchLabels labels() const { return {off, ids}; }
  Shape shape;
  StepData data;
  std::vector<int64_t> off;
  std::vector<int32_t> ids;
};

// The training step of one configuration against the fused and chunked variants at the shape, interleaved.
Row measure_config(const BenchOptions& o, const ShapeInputs& x, const std::string& name, const Variant& fused,
                   const Variant& chunked) {
  const StepConfig sc = parse_config(name);
  const int64_t V = x.shape.V, D = x.shape.D;
  ClassifierConfig cc;
  cc.V = V;
  cc.D = D;
  cc.format = precision::parse_format(sc.format);
  cc.rounding = parse_update_rounding(sc.rounding);
  cc.mode = sc.mode;
  cc.chunks = sc.chunks;
  cc.threads = o.threads;
  cc.max_batch = o.B;
  cc.max_positives = o.B * o.L;
  cc.operand = sc.operand;
  CountingAllocator calloc, valloc, fp32_alloc;
  Classifier clf(cc, calloc);
  clf.set_weights(x.data.E);
  const bool bf16 = sc.operand == Operand::bf16;
  ClassifierConfig cc_fp32 = cc;
  cc_fp32.operand = Operand::fp32;
  std::optional<Classifier> clf_fp32;  // the same step with fp32 operands, for a bf16 configuration
  if (bf16) clf_fp32.emplace(cc_fp32, fp32_alloc).set_weights(x.data.E);
  RunOptions run_options;
  run_options.threads = o.threads;
  run_options.operand = to_string(sc.operand);
  RunContext ctx{valloc, run_options};
  const StepInputs in = x.data.view();
  StepOutputs vout;
  vout.resize(in.P, V, D);
  std::vector<float> dH(size_t(o.B * D));
  const BatchLabels labels = x.labels();
  uint64_t step = 0, step_fp32 = 0;
  std::vector<Contender> cs = {
      {"fused", [&] { fused.run(in, vout, ctx); }, {}, {}},
      {"step", [&] { clf.step(x.data.A.data(), o.B, labels, 1e-4f, step++, dH.data()); }, {}, {}},
      {"chunked", [&] { chunked.run(in, vout, ctx); }, {}, {}}};
  if (bf16)
    cs.push_back({"step_fp32", [&] { clf_fp32->step(x.data.A.data(), o.B, labels, 1e-4f, step_fp32++, dH.data()); }, {}, {}});
  RepPolicy policy;
  policy.fixed_reps = o.reps;
  time_interleaved(cs, /*warmup=*/1, policy);
  // Peaks over warm-up and repeats: the classifier allocates at construction only, a variant the same
  // working set on every run.
  Row r{name, V, D, o.B, o.L, o.threads, cs[1].wall.median(), cs[1].cpu.median(), cs[0].wall.median(),
        cs[0].cpu.median(), cs[2].wall.median(), cs[2].cpu.median(), calloc.peak_bytes(), valloc.peak_bytes()};
  if (bf16) {
    Samples ratio;  // per repetition: both steps ran in it
    for (size_t i = 0; i < cs[1].wall.seconds.size(); ++i) ratio.seconds.push_back(cs[3].wall.seconds[i] / cs[1].wall.seconds[i]);
    r.fp32_step_wall = cs[3].wall.median();
    r.x_fp32 = ratio.median(), r.x_fp32_min = ratio.min(), r.x_fp32_max = ratio.max();
  }
  return r;
}

void print_row(const Row& r) {
  fmt::print("{:>24} {:>8} {:>5} {:>10.1f} {:>10.1f} {:>10.1f} {:>5.2f} [{:>4.2f}] {:>6.2f} [{:>4.2f}]", r.config, r.V,
             r.D, 1e3 * r.step_wall, 1e3 * r.fused_wall, 1e3 * r.chunked_wall, r.step_wall / r.fused_wall,
             r.step_cpu / r.fused_cpu, r.step_wall / r.chunked_wall, r.step_cpu / r.chunked_cpu);
  if (std::isfinite(r.x_fp32))
    fmt::print("  fp32-operand step {:.1f} ms, x_fp32 {:.2f} [{:.2f}-{:.2f}]", 1e3 * r.fp32_step_wall, r.x_fp32,
               r.x_fp32_min, r.x_fp32_max);
  fmt::print("\n");
  std::fflush(stdout);
}

// The file's content: provenance, the settings, one float64 column per quantity (a row per config).
void write_table(hid_t f, const std::vector<Row>& rows, int reps, const std::string& argv_joined) {
  write_provenance(f, collect_provenance(argv_joined));
  h5::write_attr(f, "what", std::string("classifier training step vs registry variants fused/chunked, same shape, "
                                        "interleaved repetitions; seconds are medians; bf16-operand rows also time the fp32-operand "
                                        "step (x_fp32: fp32 step / bf16 step per repetition, median, min, max)"));
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
  col("fp32_step_wall_s", [](const Row& r) { return r.fp32_step_wall; });
  col("x_fp32", [](const Row& r) { return r.x_fp32; });
  col("x_fp32_min", [](const Row& r) { return r.x_fp32_min; });
  col("x_fp32_max", [](const Row& r) { return r.x_fp32_max; });
  std::string names;
  for (const Row& r : rows) names += (names.empty() ? "" : ",") + r.config;
  h5::write_attr(f, "configs", names);
  h5::write_attr(f, "end_utc", utc_now());
}

// Written as every HDF5 file is (io::RunFileWriter::write_whole): into a temporary file beside OUT, renamed
// onto it when complete, so a failed write never leaves a half-written OUT. An OUT already there is
// replaced, as it always was.
void write_rows(const std::string& out, const std::vector<Row>& rows, int reps, const std::string& argv_joined) {
  io::RunFileWriter output(out, "--out");
  output.begin_whole({}, /*overwrite=*/true);
  output.write_whole([&](hid_t f) { write_table(f, rows, reps, argv_joined); });
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
  CLI::App app{"Time a classifier training step against the registry's loss-and-gradient variants (same shape, one run)"};
  app.add_option("--V", o.Vs, "labels")->delimiter(',');
  app.add_option("--D", o.Ds, "embedding width")->delimiter(',');
  app.add_option("--B", o.B, "rows per step");
  app.add_option("--L", o.L, "positives per row");
  app.add_option("--threads", o.threads, "threads (both sides)");
  app.add_option("--reps", o.reps, "timed repetitions (after one warm-up)");
  app.add_option("--configs", o.configs, "FORMAT:ROUNDING:MODE:CHUNKS[:OPERAND fp32|bf16]")->delimiter(',');
  app.add_option("--out", o.out, "HDF5 file for the rows");
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
  for (int64_t V : o.Vs) {
    for (int64_t D : o.Ds) {
      const ShapeInputs x(o, V, D);
      for (const std::string& name : o.configs) {
        rows.push_back(measure_config(o, x, name, *fused, *chunked));
        print_row(rows.back());
      }
    }
  }
  if (!o.out.empty()) write_rows(o.out, rows, o.reps, joined);
  return 0;
}
