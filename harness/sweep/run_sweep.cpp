#include "harness/sweep/run_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <tuple>

#include "harness/config/option_checks.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/meters/products_choice.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/sweep/driver.hpp"
#include "harness/sweep/isolated_row.hpp"
#include "harness/sweep/measure_row.hpp"
#include "harness/sweep/plan.hpp"
#include "harness/sweep/point_inputs.hpp"
#include "harness/sweep/progress.hpp"
#include "harness/sweep/row_measurer.hpp"
#include "harness/sweep/score.hpp"
#include "harness/sweep/step_point.hpp"
#include "harness/sweep/yardstick.hpp"
#include "harness/system_memory.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/operand.hpp"
#include "variants/timing.hpp"

namespace lobench::sweep {
namespace {

bool is_gpu(const Variant& v) { return v.backend() == "cuda"; }

// The points of s.partition (--list and --dry-run; the sweep itself takes them in drive()).
std::vector<StepPoint> partitioned_points(const SweepSettings& s) {
  std::vector<StepPoint> all = step_points(s.axes, s.weighted);
  std::vector<StepPoint> mine;
  for (int64_t i : partition_indices(int64_t(all.size()), s.partition)) mine.push_back(std::move(all[size_t(i)]));
  return mine;
}

MemoryLimits resolve_limits(const SweepSettings& s, const std::vector<StepPoint>& points) {
  MemoryLimits m;
  m.host_bytes = s.mem_limit > 0 ? s.mem_limit : config::default_memory_limit();
  bool any_gpu = false;
  for (const StepPoint& p : points) any_gpu = any_gpu || is_gpu(*Registry::instance().find(p.variant));
  // Read before this process allocates anything on the device (0: no device to ask, and the variants'
  // own skip reasons say why they cannot run).
  if (any_gpu) m.gpu_bytes = s.gpu_mem_limit > 0 ? s.gpu_mem_limit : default_gpu_memory_limit();
  if (s.sharded) {  // every rank must plan the same rows: the primary's limits everywhere
    m.host_bytes = s.sharded->agree(m.host_bytes);
    m.gpu_bytes = s.sharded->agree(m.gpu_bytes);
  }
  return m;
}

std::string axes_attribute(const Axes& axes) {
  std::string out;
  for (const auto& name : axes.names()) {
    std::string vals;
    for (const auto& v : axes.values(name)) vals += (vals.empty() ? "" : ",") + v;
    out += (out.empty() ? "" : ";") + name + "=" + vals;
  }
  return out;
}

// inputs_known: whether to record the synthetic inputs' settings (not on a resumed file from before them,
// whose earlier rows' settings are not known).
void write_run_attributes(ResultsFile& file, const SweepSettings& s, const MemoryLimits& limits, bool inputs_known) {
  if (s.reps.fixed_reps == 0) {
    file.set_attr("min_time_s", s.reps.min_time_s);
    file.set_attr("max_time_s", s.reps.max_time_s);
    file.set_attr("max_reps", double(s.reps.max_reps));
    file.set_attr("cv_target", s.reps.cv_target);
  }
  file.set_attr("mem_limit_bytes", double(limits.host_bytes));
  if (limits.gpu_bytes > 0) file.set_attr("gpu_mem_limit_bytes", double(limits.gpu_bytes));
  file.set_attr("seed", double(s.axes.int_values("seed").front()));
  file.set_attr("sweep_axes", axes_attribute(s.axes));
  file.set_attr("partition", s.partition.str());
  // (the synthetic inputs' settings that no row records: --resume and merge hold a file's rows to them)
  if (inputs_known) {
    file.set_attr("pad_fraction", s.pad_fraction);
    file.set_attr("dup_fraction", s.dup_fraction);
  }
}

SyntheticSpec synthetic_spec(const SweepSettings& s) {
  SyntheticSpec syn;
  syn.pad_fraction = s.pad_fraction;
  syn.dup_fraction = s.dup_fraction;
  return syn;
}

// A row whose step may make fp32 tile products on the CPU (built-in or plug-in CPU variants; Python
// variants compute in their framework).
bool uses_fp32_products(const PlannedRow& r) {
  return !r.skipped && r.variant->backend() == "cpu" && r.point.options.operand_is_fp32();
}

// The products of the fp32 tiled variants (meters/products_choice.hpp), chosen before the first row when
// a CPU row with fp32 operands will run (nothing otherwise); a sharded run's ranks take the primary's
// choice, as they must compute alike.
const meters::ProductsChoice* choose_products(const std::vector<PlannedRow>& rows, const ShardedRows* sharded) {
  if (std::none_of(rows.begin(), rows.end(), uses_fp32_products)) return nullptr;
  const meters::ProductsChoice& mine = meters::fp32_products_choice();
  if (sharded) {
    const int64_t code = meters::products_choice_code(mine);
    const int64_t agreed = sharded->agree(code);
    if (agreed != code) meters::adopt_fp32_products(agreed, "the primary rank's choice (" + mine.basis + " here)");
  }
  return &meters::fp32_products_choice();
}

// The working memory of a row whose fp32 tiles take the chosen products: a transposed tile for our own
// kernels, a row-major one for the library's (tile_scan.hpp), so predicted again once the choice is made
// (plan_rows predicted it with our own kernels enabled), and the row's fate with it.
void predict_with_chosen_products(std::vector<PlannedRow>& rows, const MemoryLimits& limits) {
  for (PlannedRow& r : rows)
    if (uses_fp32_products(r)) {
      const meters::Fp32ProductsForD chosen(r.point.shape.D);
      predict_memory(r, limits);
    }
}

void write_products_attributes(ResultsFile& file, const meters::ProductsChoice* products) {
  file.set_attr("fp32_products", products ? products->products : "not chosen: no CPU row with fp32 operands");
  if (products) file.set_attr("fp32_products_basis", products->basis);
}

// Runs one row the plan found runnable: yardstick, inputs, timing, accuracy. Exceptions become a
// failed row; the sweep goes on.
class RowRunner {
 public:
  RowRunner(const SweepSettings& s, ResultsFile* file, Printer& printer, int64_t sgemm_n, int64_t mem_limit,
            const meters::ProductsChoice* products)
      : s_(s), file_(file), printer_(printer), measurer_(synthetic_spec(s), s.warmup, s.reps, s.accuracy),
        yardsticks_(sgemm_n), mem_limit_(mem_limit), products_(products) {}

  // Seconds spent measuring the machine's limits (set_yardstick), once per thread count and operand kind.
  double setup_seconds() const { return setup_s_; }

  std::vector<double> run(const PlannedRow& plan, io::ResultRow& row) {
    bool once = false;  // (the machine's limits measured now: not the point's own work)
    const double yardstick_s = seconds_of([&] { once = set_yardstick(plan, row); });
    if (once) setup_s_ += yardstick_s;
    if (s_.sharded) return run_sharded(plan, row);
    double cpu_wait = io::kNotMeasured;  // the share of the steps' thread time spent waiting for a CPU
    std::vector<double> samples;
    if (isolated(plan)) {
      samples = run_isolated_row(plan, row, cpu_wait);
      if (stopped_) return {};
    } else {
      samples = measurer_.measure(plan, row);
      cpu_wait = measurer_.last_cpu_wait_fraction();
    }
    if (row.status != "ok") return {};
    fill_timing(row, samples);
    if (row.gemm_fraction > 1.0 && !is_gpu(*plan.variant)) recheck_machine(plan, row, samples);
    measure_local_after(plan, row);
    // A rate above its yardstick means the yardstick is not this machine's limit at this shape (tiny
    // products are dominated by overheads): a measurement error, flagged rather than shown as a result.
    if (row.gemm_fraction > 1.0)
      row.reason.add(fmt::format("measurement error: {:.0f}% of the yardstick (above 100%: the yardstick at this "
                                 "shape is not the machine's limit)",
                                 100 * row.gemm_fraction),
                     /*first=*/true);
    row.flags.set(trust_flags(row, cpu_wait));
    if (const std::string drift = yardstick_drift_note(row); !drift.empty()) row.reason.add(drift);
    // First of all: what the variant did, before the machine's state (`reason` holds 191 bytes, and on a
    // busy machine the CPU-wait and drift notes filled them, cutting this one off: a CI run under load).
    if (const auto over = memory_over_prediction(row)) row.reason.add("memory: " + *over, /*first=*/true);
    if (const auto wrong = inaccurate_outputs(row)) row.reason.add("inaccurate: " + *wrong, /*first=*/true);
    return samples;
  }

  // Whether a signal stopped the last row in its child process (run_isolated): it has no result and is
  // not recorded; the sweep stops there.
  bool stopped() const { return stopped_; }

  // Whether the row runs in a child process (--isolate; by default the rows of plug-ins and Python
  // variants, whose code lobench does not know).
  bool isolated(const PlannedRow& plan) const {
    if (s_.isolation == Isolation::none || row_command().empty()) return false;
    return s_.isolation == Isolation::all || Registry::instance().origin(*plan.variant) != "built-in";
  }

  // The row measured in a child process; `cpu_wait` is the child's own run-queue wait (its reason already
  // carries the note), so that an isolated row is flagged `busy` as an in-process one is.
  std::vector<double> run_isolated_row(const PlannedRow& plan, io::ResultRow& row, double& cpu_wait) {
    IsolatedRequest request;
    request.point_index = plan.index;
    request.want_reference = plan.want_reference;
    request.mem_limit = mem_limit_;
    IsolatedResult r;
    try {
      r = sweep::run_isolated(request, s_.row_timeout_s);
    } catch (const std::exception& e) {  // no process could be started (no memory, no pids left)
      r.failure = std::string("its row could not be isolated: ") + e.what();
    }
    stopped_ = r.stopped_by != 0;
    if (!r.complete) {
      row.status.set("failed");
      row.reason.set(r.failure);
      return {};
    }
    copy_measured_columns(r.row, row);
    cpu_wait = r.cpu_wait_fraction;
    if (!r.note.empty()) row.reason.add(r.note);
    return r.samples;
  }

  // The row's step split over the ranks (every rank calls this for every runnable row, in order).
  std::vector<double> run_sharded(const PlannedRow& plan, io::ResultRow& row) {
    try {
      std::optional<meters::Fp32ProductsForD> products;
      if (uses_fp32_products(plan)) products.emplace(plan.point.shape.D);
      const int64_t rank_limit = s_.mem_limit > 0 ? s_.mem_limit : 0;
      // The one repetition rule, as unsharded rows: every rank judges the same samples (measure()).
      std::vector<double> samples = s_.sharded->measure(plan.point, s_.pad_fraction, s_.dup_fraction, s_.accuracy,
                                                        rank_limit, s_.warmup, s_.reps, row);
      fill_timing(row, samples);
      row.flags.set(trust_flags(row));
      if (const auto wrong = inaccurate_outputs(row)) row.reason.add("inaccurate: " + *wrong, /*first=*/true);
      row.status.set("ok");
      return samples;
    } catch (const std::exception& e) {  // thrown on every rank, naming the rank that could not run
      row.ranks = s_.sharded->ranks();
      row.shard.set(s_.sharded->shard_name());
      row.status.set("failed");
      row.reason.set(e.what());
      return {};
    }
  }

  // The row's yardstick: the machine's limit for its operand, or the product at the row's own shape
  // (shape_gemm_gflops, where it was measured) when that is faster.
  static void set_limits(const meters::MachineLimits& limits, io::ResultRow& row, const std::string& operand) {
    row.gemm_gflops = limits.yardstick_gflops(operand);
    if (row.shape_gemm_gflops > row.gemm_gflops) row.gemm_gflops = row.shape_gemm_gflops;
    row.fma_peak_gflops = limits.fma.gflops;
  }

  // A skipped row still carries the machine's limits when they were measured on its threads.
  void set_skipped_yardstick(const PlannedRow& plan, io::ResultRow& row) const {
    if (is_gpu(*plan.variant)) return;
    const auto it = yardsticks_.machines().find(plan.point.options.threads);
    if (it != yardsticks_.machines().end()) set_limits(it->second, row, plan.point.options.operand);
  }

 private:
  // The row's yardsticks; returns whether the machine's limits were measured now (once per thread count,
  // and once more for bf16 rows).
  bool set_yardstick(const PlannedRow& plan, io::ResultRow& row) {
    const Shape& sh = plan.point.shape;
    const int threads = plan.point.options.threads;
    if (is_gpu(*plan.variant)) {
      std::string why;
      const bool first = !gpu_noted_;
      const auto& rates = yardsticks_.gpu(&why);
      if (!gpu_noted_) gpu_note(rates, why);
      row.gemm_gflops = rates ? rates->for_operand(plan.point.options.operand) : io::kNotMeasured;
      return first;
    }
    if (s_.sharded && !file_) return false;  // a sharded run's other ranks record nothing
    const bool first = yardsticks_.machines().count(threads) == 0;
    if (first)  // tens of seconds of silence otherwise (issue 43)
      printer_.note(fmt::format("measuring the machine's limits on {} thread{} (SGEMM with Eigen, OpenBLAS, oneDNN and "
                                "lobench's own kernels, the FMA peak: the yardstick of %GEMM; once per thread "
                                "count, up to a minute) ...", threads, threads == 1 ? "" : "s"));
    yardsticks_.machine(threads);
    const bool bf16_first = products_in_bf16(parse_operand(plan.point.options.operand)) &&
                            yardsticks_.machines().at(threads).bf16.n == 0;
    const meters::MachineLimits& limits = bf16_first ? yardsticks_.machine_with_bf16(threads) : yardsticks_.machine(threads);
    if (first || bf16_first) machine_note(limits);
    // (not on a sharded run: these yardsticks would time the other ranks' waiting too)
    const double sample_s = point_sample_s_ = local_sample_s(plan, limits);
    if (const auto products = shape_products(plan); products && !s_.sharded) {
      const bool first_of_shape = !yardsticks_.has_shape(sh.P(), sh.V, sh.D, threads, *products);
      const meters::ShapeGemmRate& shape = yardsticks_.shape(sh.P(), sh.V, sh.D, threads, *products);
      row.shape_gemm_gflops = shape.gflops;
      if (first_of_shape) {
        shape_note(plan, shape, limits.yardstick_gflops(plan.point.options.operand));
        record_shape_paths(plan, *products, shape);
      }
    }
    set_limits(limits, row, plan.point.options.operand);
    // (a shape's yardstick is not counted: a sweep over V meets a new shape at every point, so it is part
    // of each point's time, as the ETA should see it)
    const bool measured_once = first || bf16_first;
    if (s_.sharded) return measured_once;
    // The previous point's "after" is this one's "before" when they share the tile shape and the sample
    // length (before and after a point are measured alike).
    const auto key = std::tuple(sh.P(), sh.D, threads, sample_s);
    row.local_gemm_before_gflops =
        key == last_local_key_ ? last_local_ : yardsticks_.measure_local(sh.P(), sh.D, threads, sample_s);
    return measured_once;
  }

  // Every path of the product at a row's shape, into the file's attribute
  // shape_gemm_paths_<P>x<V>x<D>_t<threads>_<fp32|bf16>: "NAME R GFLOP/s; ...; fastest: NAME; timed V: N;
  // tiles: P' positions x V' entries" (the row keeps the fastest rate, shape_gemm_gflops; which path it was
  // and by how much is here, and the tiles, which `fused` and `chunked` use too and which fix their sums).
  void record_shape_paths(const PlannedRow& plan, meters::ShapeProducts products, const meters::ShapeGemmRate& shape) {
    if (!file_) return;
    const Shape& sh = plan.point.shape;
    std::string paths;
    for (const auto& [name, gflops] : shape.paths) paths += fmt::format("{} {:.1f} GFLOP/s; ", name, gflops);
    file_->set_attr(fmt::format("shape_gemm_paths_{}x{}x{}_t{}_{}", sh.P(), sh.V, sh.D, plan.point.options.threads,
                                products == meters::ShapeProducts::bf16 ? "bf16" : "fp32"),
                    fmt::format("{}fastest: {}; timed V: {}; tiles: {}", paths, shape.fastest, shape.timed_v,
                                cpu::tile_description(shape.tiles)));
  }

  // Says so where the product at a shape is the yardstick (faster than the square product `square`), once
  // per shape: the machine-limits line names only the square product.
  void shape_note(const PlannedRow& plan, const meters::ShapeGemmRate& shape, double square) {
    if (!(shape.gflops > square)) return;
    const Shape& sh = plan.point.shape;
    // (the library's full name is on the machine-limits line and in sgemm_library)
    auto short_name = [](const std::string& name) {
      if (name == "own" || name.rfind("bf16 products", 0) == 0) return name;
      return std::string(name.rfind("oneDNN", 0) == 0 ? "oneDNN" : "library");
    };
    std::string others;
    for (const auto& [name, gflops] : shape.paths)
      if (name != shape.fastest) others += fmt::format("; {} {:.1f}", short_name(name), gflops);
    printer_.note(fmt::format("yardstick at P = {}, V = {}, D = {} on {} threads: the logit product on fused's tiles, "
                              "{:.1f} GFLOP/s ({}{}), above the square product's {:.1f}: these rows' %GEMM is against it",
                              sh.P(), sh.V, sh.D, plan.point.options.threads, shape.gflops, short_name(shape.fastest),
                              others, square));
  }

  // The products a CPU row's operands are computed with, for the product at its shape: fp32's, or the bf16
  // products for bf16 and fp8 operands where they run; nothing for others (tf32 is a GPU format).
  static std::optional<meters::ShapeProducts> shape_products(const PlannedRow& plan) {
    const RunOptions& o = plan.point.options;
    if (o.operand_is_fp32()) return meters::ShapeProducts::fp32;
    if (products_in_bf16(parse_operand(o.operand)) && !cpu::bf16_products_unavailable())
      return meters::ShapeProducts::bf16;
    return std::nullopt;
  }

  // A row faster than its yardstick says it was measured while the machine was busy: the machine's
  // limits and the product at the row's shape are measured again, each kept if higher (for this row and
  // the rest of the run; earlier rows keep the value they were compared with, in their gemm_gflops), and
  // the row is flagged only if it still exceeds them.
  void recheck_machine(const PlannedRow& plan, io::ResultRow& row, const std::vector<double>& samples) {
    const double before = row.gemm_gflops;
    const std::string& operand = plan.point.options.operand;
    const int threads = plan.point.options.threads;
    const double machine_was = yardsticks_.machine(threads).yardstick_gflops(operand);
    const meters::MachineLimits& limits = yardsticks_.remeasure_machine(threads);
    if (!std::isnan(row.shape_gemm_gflops)) {
      const Shape& sh = plan.point.shape;
      const meters::ShapeProducts products = *shape_products(plan);
      const meters::ShapeGemmRate& shape = yardsticks_.remeasure_shape(sh.P(), sh.V, sh.D, threads, products);
      row.shape_gemm_gflops = shape.gflops;
      record_shape_paths(plan, products, shape);
    }
    set_limits(limits, row, operand);
    if (limits.yardstick_gflops(operand) > machine_was) machine_note(limits, /*remeasured=*/true);
    if (row.gemm_gflops > before) fill_timing(row, samples);
  }

  void measure_local_after(const PlannedRow& plan, io::ResultRow& row) {
    if (is_gpu(*plan.variant)) return;
    const Shape& sh = plan.point.shape;
    const int threads = plan.point.options.threads;
    // (the sample length of the point's "before": the limits may have been measured again since)
    const double sample_s = point_sample_s_;
    last_local_ = row.local_gemm_after_gflops = yardsticks_.measure_local(sh.P(), sh.D, threads, sample_s);
    last_local_key_ = std::tuple(sh.P(), sh.D, threads, sample_s);
  }

  static double local_sample_s(const PlannedRow& plan, const meters::MachineLimits& limits) {
    return local_sample_seconds(plan.row.flops, limits.best_sgemm_gflops());
  }

  // The machine's limits on a thread count, into the file's attributes (the first thread count under
  // the plain names, others with `_t{threads}` appended) and a note.
  void machine_note(const meters::MachineLimits& m, bool remeasured = false) {
    const std::string suffix = first_threads_ < 0 || first_threads_ == m.threads ? "" : fmt::format("_t{}", m.threads);
    if (remeasured && file_) file_->set_attr("sgemm_remeasured" + suffix, utc_now());
    if (first_threads_ < 0) first_threads_ = m.threads;
    if (file_) {
      // One rate as {prefix}_gflops, {prefix}_n, and {prefix}_library or, where it was not measured, {prefix}_why.
      auto record = [&](const std::string& prefix, const meters::SgemmRate& r) {
        file_->set_attr(prefix + "_gflops" + suffix, r.gflops);
        file_->set_attr(prefix + "_n" + suffix, double(r.n));
        file_->set_attr(prefix + (r.why.empty() ? "_library" : "_why") + suffix, r.why.empty() ? r.library : r.why);
        if (!r.kernels.empty()) file_->set_attr(prefix + "_kernels" + suffix, r.kernels);
        if (!r.loaded.empty()) file_->set_attr(prefix + "_loaded" + suffix, r.loaded);
      };
      file_->set_attr("sgemm_threads" + suffix, double(m.threads));
      record("sgemm_eigen", m.eigen);
      record("sgemm_openblas", m.openblas);
      record("sgemm_onednn", m.onednn);
      record("sgemm_own", m.own);
      file_->set_attr("sgemm_best_gflops" + suffix, m.best_sgemm_gflops());
      if (m.bf16.n != 0) {
        record("bf16_gemm", m.bf16);
        record("bf16_gemm_onednn", m.bf16_onednn);
        file_->set_attr("bf16_gemm_best_gflops" + suffix, m.best_bf16_gflops());
      }
      file_->set_attr("fma_peak_gflops" + suffix, m.fma.gflops);
      file_->set_attr("fma_peak_isa" + suffix, m.fma.isa);
    }
    // A rate, with `detail` in parentheses where there is one (fp32: the note, e.g. OpenBLAS's core type;
    // bf16: which products ran), or why it was not measured.
    auto rate_text = [](const meters::SgemmRate& r, const std::string& detail) {
      if (!r.why.empty()) return "not measured (" + r.why + ")";
      return detail.empty() ? fmt::format("{:.1f}", r.gflops) : fmt::format("{:.1f} ({})", r.gflops, detail);
    };
    const std::string openblas = rate_text(m.openblas, m.openblas.note), onednn = rate_text(m.onednn, m.onednn.note),
                      own = rate_text(m.own, m.own.note);
    const std::string bf16 = m.bf16.n == 0 ? ""
                                           : fmt::format("; bf16 {}³ lobench's {}, oneDNN {} GFLOP/s (the yardstick of bf16 rows: {:.1f})",
                                                         m.bf16.n, rate_text(m.bf16, m.bf16.library),
                                                         rate_text(m.bf16_onednn, m.bf16_onednn.library), m.best_bf16_gflops());
    const std::string products =
        products_ ? fmt::format("; fp32 fused/chunked products: {} ({})", products_->products, products_->basis) : "";
    printer_.note(fmt::format("machine limits on {} thread{}{}: SGEMM {}³ Eigen {:.1f}, OpenBLAS {}, oneDNN {}, lobench's own {} "
                              "GFLOP/s (the yardstick of %GEMM: {:.1f}){}; FMA peak {:.1f} GFLOP/s ({}){}",
                              m.threads, m.threads == 1 ? "" : "s", remeasured ? " (measured again: a row ran faster than the first measurement)" : "",
                              m.eigen.n, m.eigen.gflops, openblas, onednn, own, m.best_sgemm_gflops(), bf16, m.fma.gflops, m.fma.isa,
                              products));
  }

  void gpu_note(const std::optional<GpuRates>& rates, const std::string& why) {
    gpu_noted_ = true;
    if (!rates) {
      printer_.note("GPU GEMM yardstick not measured: " + why);
      return;
    }
    if (file_) file_->set_attr("gpu_gemm_fp32_gflops", rates->fp32);
    if (file_) file_->set_attr("gpu_gemm_tf32_gflops", rates->tf32);
    if (file_) file_->set_attr("gpu_gemm_bf16_gflops", rates->bf16);
    if (file_) {
      file_->set_attr("gpu_gemm_shape", fmt::format("m={} n={} k={}", kGpuGemmN, kGpuGemmN, kGpuGemmN));
      file_->set_attr("gpu_name", rates->device_name);
    }
    printer_.note(fmt::format("GPU GEMM yardstick (cuBLAS, {}³, {}): fp32 {:.0f}, tf32 {:.0f}, bf16 {:.0f} GFLOP/s",
                              kGpuGemmN, rates->device_name, rates->fp32, rates->tf32, rates->bf16));
  }

  const SweepSettings& s_;
  ResultsFile* file_;  // null on a sharded run's other ranks
  Printer& printer_;
  RowMeasurer measurer_;
  Yardsticks yardsticks_;
  const int64_t mem_limit_;  // the host limit the plan used: an isolated row's process maps no more
  const meters::ProductsChoice* products_;  // null: no CPU row with fp32 operands in this run
  std::tuple<int64_t, int64_t, int, double> last_local_key_{-1, -1, -1, 0.0};
  double point_sample_s_ = 0.03;  // the current point's local yardstick samples (set_yardstick)
  double setup_s_ = 0;            // setup_seconds()
  bool stopped_ = false;          // stopped()
  double last_local_ = io::kNotMeasured;
  int first_threads_ = -1;
  bool gpu_noted_ = false;
};

// --sgemm-n 0: the machine yardstick's product is 4096³, unless the whole sweep's timed work is under
// 100 GFLOP (a sweep of seconds, such as a test's), where a 4096³ product (about 10 s for both libraries)
// would dwarf it: then 512³. Either way every row is compared with the same run's measurement.
int64_t auto_sgemm_n(const std::vector<PlannedRow>& rows, const RepPolicy& reps) {
  double flops = 0;
  for (const PlannedRow& r : rows)
    if (!r.skipped && std::isfinite(r.row.flops)) flops += r.row.flops * double(1 + reps.expected_reps());
  return flops >= 1e11 ? 4096 : 512;
}

std::string limits_note(size_t rows, const std::string& out, const MemoryLimits& m, const Partition& part) {
  return fmt::format("lobench run: {} rows{} -> {} (memory limit {}{})", rows,
                     part.count > 1 ? fmt::format(" (partition {})", part.str()) : "", out,
                     format_bytes(double(m.host_bytes)),
                     m.gpu_bytes > 0 ? fmt::format(", GPU limit {}", format_bytes(double(m.gpu_bytes))) : "");
}

// What a process that does not record (a sharded run's other ranks) prints to: a stream without a
// buffer, which drops everything.
std::ostream& discard() {
  static std::ostream sink(nullptr);
  return sink;
}

// `lobench run` as a job of the one driver (sweep/driver.hpp): a point is a (variant, step point) row,
// planned by plan_rows, recorded in the run file, measured by RowRunner.
class StepSweepJob : public SweepJob {
 public:
  StepSweepJob(const SweepSettings& s, const Provenance& prov, std::ostream& out, std::ostream& err)
      : s_(s), prov_(prov), records_(!s.sharded || s.sharded->primary()), out_(records_ ? out : discard()),
        err_(records_ ? err : discard()), points_(step_points(s.axes, s.weighted)) {}

  int64_t size() const override { return int64_t(points_.size()); }
  std::ostream& progress_stream() { return err_; }

  std::vector<PlannedPoint> plan(const std::vector<int64_t>& indices) override {
    std::vector<StepPoint> mine;
    for (int64_t i : indices) mine.push_back(points_[size_t(i)]);
    limits_ = resolve_limits(s_, mine);
    // A sharded row's working set is split over the ranks (each rank checks its own share exactly).
    plan_limits_ = limits_;
    if (s_.sharded) plan_limits_.host_bytes = limits_.host_bytes > INT64_MAX / s_.sharded->ranks()
                                                  ? INT64_MAX : limits_.host_bytes * s_.sharded->ranks();
    rows_ = plan_rows(mine, plan_limits_, s_.accuracy, s_.warmup, s_.reps.expected_reps());
    std::vector<PlannedPoint> planned;
    for (size_t j = 0; j < rows_.size(); ++j) {
      rows_[j].index = indices[j];
      planned.push_back({indices[j], rows_[j].row.key(), rows_[j].work});
      slot_[indices[j]] = j;
    }
    return planned;
  }

  // --resume of a file older than schema version 5 (no epilogue column, its rows fp32's) with rows of another
  // epilogue to add: refused before anything is opened for writing or measured, the file as it was.
  void refuse_epilogues_the_file_cannot_hold() const {
    const auto other = std::find_if(rows_.begin(), rows_.end(), [](const PlannedRow& r) {
      return !r.point.options.epilogue_is_fp32();
    });
    if (other == rows_.end()) return;
    int64_t version = io::kSchemaVersion;
    try {
      version = ResultsFile::schema_version_of(h5::open_file_read(s_.out), s_.out);
    } catch (const std::exception&) {
      return;  // (not a run file, or unreadable: ResultsFile says so)
    }
    if (version < 5)
      throw std::invalid_argument(fmt::format("--resume: '{}' has schema version {}, which has no epilogue column (its rows "
                                              "are fp32's): rows with --epilogue {} cannot be added to it; write a new run "
                                              "file (the file is unchanged)",
                                              s_.out, version, other->point.options.epilogue));
  }

  // --resume continues this sweep, widens it (more values of an axis, the whole sweep after a partition)
  // or adds variants at its points. Refused before anything is opened for writing or measured, the file
  // as it was: a file holding rows at points this run does not have (another sweep's, or another
  // partition's: they would count as done, and sweep_axes, rewritten, would not describe them), and one
  // made from other synthetic inputs (--pad-fraction, --dup-fraction: no row records them; a file from
  // before these attributes is not checked for them). Returns whether the file records them.
  bool refuse_a_file_of_another_sweep() const {
    std::optional<double> pad, dup;
    std::vector<io::ResultRow> recorded;
    try {
      const auto file = h5::open_file_read(s_.out);
      pad = h5::read_attr_double(file, "pad_fraction");
      dup = h5::read_attr_double(file, "dup_fraction");
      recorded = ResultsFile::read_all(s_.out);
    } catch (const std::exception&) {
      return true;  // (not a run file, or unreadable: ResultsFile says so)
    }
    auto refuse = [&](const std::string& why) {
      throw std::invalid_argument(fmt::format("--resume: '{}' {}; give another --out, or --overwrite to replace it "
                                              "(the file is unchanged)", s_.out, why));
    };
    if (pad && *pad != s_.pad_fraction)
      refuse(fmt::format("was made with --pad-fraction {}, not {}", *pad, s_.pad_fraction));
    if (dup && *dup != s_.dup_fraction)
      refuse(fmt::format("was made with --dup-fraction {}, not {}", *dup, s_.dup_fraction));
    // Points, not rows: other variants at this run's points are welcome (scripts/table2.sh adds the torch
    // peer's rows from another interpreter).
    std::set<std::string> mine;
    for (const PlannedRow& r : rows_) mine.insert(point_key(r.row));
    auto foreign = [&](const io::ResultRow& r) { return mine.count(point_key(r)) == 0; };
    const auto first = std::find_if(recorded.begin(), recorded.end(), foreign);
    if (first != recorded.end())
      refuse(fmt::format("is a run of another sweep: {} of its {} rows are at points this run does not have (the "
                         "first: {})",
                         std::count_if(recorded.begin(), recorded.end(), foreign), recorded.size(), point_key(*first)));
    return pad.has_value() && dup.has_value();
  }

  // A row's point: its key without the variant (and its backend).
  static std::string point_key(const io::ResultRow& r) {
    io::ResultRow point = r;
    point.variant.set("");
    point.backend.set("");
    return point.key();
  }

  void begin(const std::vector<PlannedPoint>& planned) override {
    bool inputs_known = true;  // (false: a resumed file from before the pad_fraction and dup_fraction attributes)
    if (records_ && s_.out_mode == OutMode::resume) {
      refuse_epilogues_the_file_cannot_hold();
      inputs_known = refuse_a_file_of_another_sweep();
    }
    if (records_) file_ = std::make_unique<ResultsFile>(s_.out, prov_, s_.out_mode);  // (a refused --out: nothing measured)
    const meters::ProductsChoice* products = choose_products(rows_, s_.sharded);
    if (products) predict_with_chosen_products(rows_, plan_limits_);
    if (records_) {
      write_run_attributes(*file_, s_, limits_, inputs_known);
      write_products_attributes(*file_, products);
      if (s_.sharded) {
        file_->set_attr("mpi_library", s_.sharded->library());
        file_->set_attr("shard", fmt::format("{} over {} ranks", s_.sharded->shard_name(), s_.sharded->ranks()));
      }
    }
    printer_ = make_printer(s_.format, out_, err_, s_.axes.swept());
    printer_->note(limits_note(planned.size(), s_.out, limits_, s_.partition));
    runner_ = std::make_unique<RowRunner>(s_, file_.get(), *printer_,
                                          s_.sgemm_n > 0 ? s_.sgemm_n : auto_sgemm_n(rows_, s_.reps), limits_.host_bytes,
                                          products);
  }

  bool recorded(const PlannedPoint& p) const override { return file_ && file_->has(p.key); }

  double setup_seconds() const override { return runner_ ? runner_->setup_seconds() : 0.0; }

  PointStatus execute(const PlannedPoint& p) override {
    const PlannedRow& plan = rows_[slot_.at(p.index)];
    io::ResultRow row = plan.row;
    row.utc.set(utc_now());
    std::vector<double> samples;
    if (plan.skipped) runner_->set_skipped_yardstick(plan, row);
    else samples = runner_->run(plan, row);
    if (runner_->stopped()) return PointStatus::interrupted;  // (its row in a child, stopped by the signal)
    if (file_) row.row_id = file_->rows();  // what append records: csv/jsonl show the file's row index
    if (file_) file_->append(row, samples);
    printer_->row(row);
    return row.status == "ok" ? PointStatus::ok : row.status == "skipped" ? PointStatus::skipped : PointStatus::failed;
  }

  void end(const DriveResult& r) override {
    if (file_ && r.stopped_by != 0) out_kept_ = file_->close_interrupted();
    else if (file_) file_->close(utc_now());
    if (r.stopped_by != 0) return;
    RunSummary sum;
    sum.ok = r.ok;
    sum.skipped = r.skipped;
    sum.failed = r.failed;
    sum.wall_seconds = r.wall_seconds;
    sum.file = s_.out;
    printer_->summary(sum);
  }

  std::string stopped_detail(const DriveResult& r) const override {
    if (!out_kept_)  // (--overwrite: OUT is replaced only by a run that ends)
      return fmt::format("'{}' already existed and is kept as it was; this run's {} of {} rows are not kept", s_.out,
                         file_ ? file_->rows() : 0, r.points);
    return fmt::format("{} of {} rows kept in {}; continue with --resume", file_ ? file_->rows() : 0, r.points, s_.out);
  }

  std::string describe(int64_t index) const override { return points_[size_t(index)].describe(); }

 private:
  const SweepSettings& s_;
  const Provenance& prov_;
  const bool records_;  // a sharded run's other ranks record nothing
  std::ostream& out_;
  std::ostream& err_;
  const std::vector<StepPoint> points_;  // the whole sweep
  MemoryLimits limits_;
  MemoryLimits plan_limits_;  // limits_, with a sharded row's working set split over the ranks
  std::vector<PlannedRow> rows_;    // this partition's, planned
  std::map<int64_t, size_t> slot_;  // a point's index in the sweep -> its row in rows_
  std::unique_ptr<ResultsFile> file_;
  bool out_kept_ = true;  // OUT holds this run's rows (false: a signal stopped an --overwrite run; OUT as it was)
  std::unique_ptr<Printer> printer_;
  std::unique_ptr<RowRunner> runner_;
};

}  // namespace

void check_rep_policy(const RepPolicy& r) {
  config::check_range("--reps", r.fixed_reps, 0, 100000);
  config::check_range("--max-reps", r.max_reps, r.min_reps, 100000);
  config::check_range("--min-time", r.min_time_s, 0, 86400);
  config::check_range("--max-time", r.max_time_s, r.min_time_s, 86400);
  config::check_range("--cv-target", r.cv_target, 1e-6, 1);
}

void list_rows(const SweepSettings& s, std::ostream& out) {
  const Provenance none;  // nothing is recorded
  const StepSweepJob job(s, none, out, out);
  list_points(job, s.partition, out, "rows");
}

void dry_run(const SweepSettings& s, const Provenance& prov, std::ostream& out, std::ostream& err) {
  const auto points = partitioned_points(s);
  const MemoryLimits limits = resolve_limits(s, points);
  const auto rows = plan_rows(points, limits, s.accuracy, s.warmup, s.reps.expected_reps());
  std::unique_ptr<ResultsFile> file;
  if (!s.out.empty()) {
    file = std::make_unique<ResultsFile>(s.out, prov, s.out_mode == OutMode::resume ? OutMode::create_new : s.out_mode);
    write_run_attributes(*file, s, limits, /*inputs_known=*/true);
    file->set_attr("dry_run", 1.0);
  }
  auto printer = make_printer(s.format, out, err, s.axes.swept());
  printer->note(limits_note(rows.size(), s.out.empty() ? "(no file)" : s.out, limits, s.partition) + ", dry run");
  RunSummary sum;
  sum.dry_run = true;
  for (const PlannedRow& r : rows) {
    io::ResultRow row = r.row;
    if (!r.skipped) row.status.set("planned");
    (r.skipped ? sum.skipped : sum.ok) += 1;
    row.row_id = sum.ok + sum.skipped - 1;  // the row's index in the file, as append sets it
    if (file) file->append(row, {});
    printer->row(row);
  }
  if (file) file->close(utc_now());
  sum.file = s.out;
  printer->summary(sum);
}

void measure_isolated_row(const SweepSettings& s, const IsolatedRequest& r) {
  const std::vector<StepPoint> points = step_points(s.axes, s.weighted);
  if (r.point_index >= int64_t(points.size()))
    throw std::invalid_argument(fmt::format("isolated row {}: the sweep has {} rows", r.point_index, points.size()));
  PlannedRow plan;
  plan.point = points[size_t(r.point_index)];
  plan.index = r.point_index;
  plan.variant = Registry::instance().find(plan.point.variant);
  plan.want_reference = r.want_reference;
  io::ResultRow row = identity_row(plan.point, *plan.variant);
  RowMeasurer measurer(synthetic_spec(s), s.warmup, s.reps, s.accuracy);
  const std::vector<double> samples = measurer.measure(plan, row);
  send_row(r, row, samples, measurer.last_cpu_wait_fraction());
}

int64_t run_sweep(const SweepSettings& s, const Provenance& prov, std::ostream& out, std::ostream& err) {
  if (s.sharded) require_same_options(*s.sharded, prov.argv);  // first: before any other collective
  check_rep_policy(s.reps);
  config::check_range("--warmup", s.warmup, 0, 100000);
  if (s.sgemm_n != 0) config::check_range("--sgemm-n", double(s.sgemm_n), 64, 65536);
  if (s.sharded && s.out_mode == OutMode::resume)
    throw std::invalid_argument("--resume with --shard is not supported: write a new run file");
  StepSweepJob job(s, prov, out, err);
  DriveSettings d;
  d.partition = s.partition;
  d.resume = s.out_mode == OutMode::resume;
  d.progress = &job.progress_stream();
  if (s.sharded) d.agree_on_signal = [&s](int64_t signal) { return s.sharded->agree(signal); };
  return drive(job, d).failed;
}

}  // namespace lobench::sweep
