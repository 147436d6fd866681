#include "sweep.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <ostream>

#include "accuracy.hpp"
#include "measure.hpp"
#include "reference.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"
#include "results_file.hpp"
#include "stored_matrix.hpp"
#include "system_memory.hpp"

namespace lobench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What a point needs in memory besides a variant's working set.
int64_t io_bytes(const Shape& s) {
  const int64_t P = s.P();
  return (P * s.D + s.V * s.D + P * s.L + (s.weighted ? P : 0)) * 4 + StepOutputs::bytes(P, s.V, s.D);
}
int64_t reference_bytes(const Shape& s) {
  return cpu::ReferenceResult::bytes(s.P(), s.V, s.D) + cpu::reference_workspace_bytes(s.P(), s.V, s.D);
}

std::string shape_key(const Shape& s) {
  return fmt::format("{} {} {} {} {} {} {}", s.B, s.N, s.V, s.D, s.L, to_string(s.reduction), s.weighted);
}

std::string format_duration(double s) {
  const int64_t t = int64_t(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

void print_header(std::ostream& os) {
  fmt::print(os, "{:<10} {:>4} {:>4} {:>8} {:>4} {:>3} {:>2} {:>7} {:>10} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9}  {}\n",
             "variant", "B", "N", "V", "D", "L", "T", "status", "median_ms", "GFLOP/s", "%GEMM", "peak_MiB",
             "pred_MiB", "rel_loss", "rel_dA", "rel_dE", "note");
}

void print_row(std::ostream& os, const ResultRow& r) {
  const bool ok = std::string(r.status) == "ok";
  auto err = [](double e) { return std::isnan(e) ? std::string("-") : fmt::format("{:.1e}", e); };
  fmt::print(os, "{:<10} {:>4} {:>4} {:>8} {:>4} {:>3} {:>2} {:>7} {:>10} {:>8} {:>6} {:>10.1f} {:>10.1f} {:>9} {:>9} {:>9}  {}\n",
             r.variant, r.B, r.N, r.V, r.D, r.L, r.threads, r.status,
             ok ? fmt::format("{:.2f}", r.time_median_s * 1e3) : "-",
             ok ? fmt::format("{:.1f}", r.effective_gflops) : "-",
             ok ? fmt::format("{:.0f}%", 100 * r.gemm_fraction) : "-", double(r.peak_bytes) / 1048576.0,
             double(r.predicted_bytes) / 1048576.0, ok ? err(r.rel_loss_err) : "-", ok ? err(r.rel_dA_err) : "-",
             ok ? err(r.rel_dE_err) : "-",
             std::string(r.e_format) == "fp32" || !r.e_format[0]
                 ? std::string(r.reason)
                 : fmt::format("E {} ({}), {}; kernel-only errors {} {} {} {}", r.e_format, r.e_rounding,
                               format_bytes(double(r.e_stored_bytes)), ok ? err(r.rel_loss_err_kernel) : "-",
                               ok ? err(r.rel_dA_err_kernel) : "-", ok ? err(r.rel_dE_err_kernel) : "-", r.reason));
  os.flush();
}

}  // namespace

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  std::vector<SweepPoint> points;
  for (int64_t B : spec.B)
    for (int64_t N : spec.N)
      for (int64_t D : spec.D)
        for (int64_t L : spec.L)
          for (const auto& red : spec.reductions)
            for (int64_t V : spec.V)
              for (int T : spec.threads)
                for (int64_t bv : spec.block_v)
                  for (int64_t bp : spec.block_p)
                    for (const auto& fmt_name : spec.e_formats)
                      for (const auto& rounding : spec.e_roundings) {
                        SweepPoint p;
                        p.shape = Shape{B, N, V, D, L, parse_reduction(red), spec.weighted};
                        validate(p.shape);
                        p.options = RunOptions{T, bv, bp, fmt_name};
                        if (p.options.e_is_float32()) {
                          if (&rounding != &spec.e_roundings.front()) continue;  // float32 is not rounded
                          p.options.e_format = "fp32";
                        } else {
                          precision::parse_format(fmt_name);  // throws with the valid names
                          precision::parse_rounding(rounding);
                          p.e_rounding = rounding;
                        }
                        points.push_back(p);
                      }
  return points;
}

int run_sweep(const SweepSpec& spec, const Provenance& prov, std::ostream& table, std::ostream& progress) {
  std::vector<const Variant*> variants;
  for (const auto& name : spec.variants) {
    const Variant* v = Registry::instance().find(name);
    if (!v) throw std::invalid_argument(fmt::format("unknown variant '{}' (see `lobench list`)", name));
    variants.push_back(v);
  }
  const auto points = expand(spec);
  const int64_t mem_limit = spec.mem_limit > 0
                                ? spec.mem_limit
                                : std::max<int64_t>(0, available_memory_bytes() - std::max<int64_t>(
                                                                                      int64_t(1) << 30, available_memory_bytes() / 10));
  if (spec.reps < 1 || spec.reps > kMaxSamples)
    throw std::invalid_argument(fmt::format("--reps must be in [1, {}], got {}", kMaxSamples, spec.reps));
  if (spec.warmup < 0) throw std::invalid_argument("--warmup must be >= 0");

  ResultsFile file(spec.out, prov, spec.resume);
  file.set_attr("mem_limit_bytes", double(mem_limit));
  file.set_attr("seed", double(spec.seed));
  fmt::print(table, "lobench run: {} points x {} variants -> {} (memory limit {})\n", points.size(), variants.size(),
             spec.out, format_bytes(double(mem_limit)));

  // The yardstick: Eigen's SGEMM rate for the point's (P, D, threads), re-measured just before each
  // point's variants so that every row's ratio compares two timings taken moments apart (these
  // machines are shared and their speed drifts).
  std::map<std::tuple<int64_t, int64_t, int>, double> gemm_rate;
  auto yardstick = [&](const SweepPoint& pt) {
    const double r = measure_sgemm_gflops(pt.shape.P(), pt.shape.D, 512, pt.options.threads);
    gemm_rate[std::tuple(pt.shape.P(), pt.shape.D, pt.options.threads)] = r;
    return r;
  };
  if (!points.empty()) {
    const double r = yardstick(points.front());
    file.set_attr("gemm_gflops", r);
    fmt::print(table, "SGEMM yardstick (Eigen, [P x D]·[D x 512], re-measured before every point): {:.1f} GFLOP/s at P={} D={} threads={}\n",
               r, points.front().shape.P(), points.front().shape.D, points.front().options.threads);
  }
  print_header(table);

  double total_work = 0, done_work = 0;
  for (const auto& pt : points) total_work += double(pt.shape.P()) * double(pt.shape.V) * double(pt.shape.D) * double(variants.size());
  const auto t_start = std::chrono::steady_clock::now();

  std::unique_ptr<StepData> data;
  std::string data_key;
  CountingAllocator ref_alloc;
  std::unique_ptr<cpu::ReferenceResult> ref;  // on the original E: what the format costs
  // E in a storage format, and the reference on its decoded values (what the kernel costs).
  std::unique_ptr<PackedMatrix> stored;
  std::unique_ptr<cpu::ReferenceResult> ref_stored;
  std::string stored_key;
  int failed = 0;
  size_t done_points = 0;

  for (const auto& pt : points) {
    const Shape& s = pt.shape;
    bool measured_yardstick = done_points == 0;
    for (const Variant* v : variants) {
      ResultRow row;
      row.set_variant(v->name());
      row.set_backend(v->backend());
      row.B = s.B, row.N = s.N, row.P = s.P(), row.V = s.V, row.D = s.D, row.L = s.L;
      row.set_reduction(to_string(s.reduction));
      row.weighted = s.weighted;
      row.block_v = pt.options.block_v, row.block_p = pt.options.block_p, row.threads = pt.options.threads;
      row.seed = int64_t(spec.seed);
      row.warmup = spec.warmup;
      row.reps = spec.reps;
      row.flops = s.flops_fused();
      row.gemm_gflops = gemm_rate[std::tuple(s.P(), s.D, pt.options.threads)];
      row.input_bytes = (s.P() * s.D + s.V * s.D + s.P() * s.L + (s.weighted ? s.P() : 0)) * 4;
      row.output_bytes = StepOutputs::bytes(s.P(), s.V, s.D);
      row.predicted_bytes = v->predicted_working_bytes(s, pt.options);
      row.set_e_format(pt.options.e_format);
      row.set_e_rounding(pt.e_rounding);
      row.rel_loss_err = row.rel_dA_err = row.rel_dE_err = row.loss = row.ref_loss = kNaN;
      row.rel_loss_err_kernel = row.rel_dA_err_kernel = row.rel_dE_err_kernel = kNaN;
      for (double& t : row.time_samples_s) t = kNaN;
      const double work = double(s.P()) * double(s.V) * double(s.D);
      if (file.has(row.key())) {  // --resume: already measured
        done_work += work;
        continue;
      }
      std::copy_n(utc_now().c_str(), 20, row.utc);

      const bool want_ref = spec.accuracy && io_bytes(s) + reference_bytes(s) <= mem_limit;
      const int64_t needed = row.predicted_bytes + io_bytes(s) + (want_ref ? reference_bytes(s) : 0);
      if (auto why = v->skip_reason(s, pt.options)) {
        row.set_status("skipped");
        row.set_reason(*why);
      } else if (needed > mem_limit) {
        row.set_status("skipped");
        row.set_reason(fmt::format("OOM predicted: {} working + {} inputs/outputs{} > limit {}",
                                   format_bytes(double(row.predicted_bytes)), format_bytes(double(io_bytes(s))),
                                   want_ref ? fmt::format(" + {} reference", format_bytes(double(reference_bytes(s)))) : "",
                                   format_bytes(double(mem_limit))));
      } else {
        if (!measured_yardstick) {
          yardstick(pt);
          measured_yardstick = true;
        }
        row.gemm_gflops = gemm_rate[std::tuple(s.P(), s.D, pt.options.threads)];
        try {
          const std::string key = shape_key(s);
          if (!data || data_key != key) {
            ref.reset();
            stored.reset();
            ref_stored.reset();
            stored_key.clear();
            data.reset();
            SyntheticSpec syn;
            syn.seed = spec.seed;
            syn.pad_fraction = spec.pad_fraction;
            syn.dup_fraction = spec.dup_fraction;
            data = std::make_unique<StepData>(make_synthetic(s, syn));
            data_key = key;
          }
          StepInputs in = data->view();
          if (want_ref && !ref) {  // computed once per shape, shared by every variant and option
            ref = std::make_unique<cpu::ReferenceResult>();
            cpu::reference_step(in, *ref, ref_alloc, pt.options.threads);
          }
          const cpu::ReferenceResult* ref_kernel = ref.get();
          if (!pt.options.e_is_float32()) {
            const std::string skey = pt.options.e_format + "/" + pt.e_rounding;
            if (stored_key != skey) {  // E rounded into the format once, shared by the variants
              precision::RoundingOptions ro;
              ro.mode = precision::parse_rounding(pt.e_rounding);
              ro.seed = spec.seed;
              stored = std::make_unique<PackedMatrix>(data->E.data(), s.V, s.D, pt.options.e_format, ro,
                                                      pt.options.threads);
              ref_stored.reset();
              if (want_ref) {
                const std::vector<float> Eq = stored->decode_all();
                StepInputs in_q = in;
                in_q.E = Eq.data();
                ref_stored = std::make_unique<cpu::ReferenceResult>();
                cpu::reference_step(in_q, *ref_stored, ref_alloc, pt.options.threads);
              }
              stored_key = skey;
            }
            in.E_stored = stored.get();
            row.e_stored_bytes = stored->stored_bytes();
            row.input_bytes += row.e_stored_bytes;
            ref_kernel = ref_stored.get();
          }
          StepOutputs out;
          out.resize(in.P, in.V, in.D);
          CountingAllocator alloc;
          RunContext ctx{alloc, pt.options};
          const Samples samples = time_repeats([&] { v->run(in, out, ctx); }, spec.warmup, spec.reps);
          for (size_t i = 0; i < samples.seconds.size(); ++i) row.time_samples_s[i] = samples.seconds[i];
          row.time_median_s = samples.median();
          row.time_min_s = samples.min();
          row.time_max_s = samples.max();
          row.effective_gflops = row.flops / row.time_median_s / 1e9;
          row.gemm_fraction = row.gemm_gflops > 0 ? row.effective_gflops / row.gemm_gflops : kNaN;
          row.peak_bytes = alloc.peak_bytes();
          row.loss = out.loss;
          if (ref) {
            row.ref_loss = ref->loss;
            row.rel_loss_err = relative_error(out.loss, ref->loss);
            row.rel_dA_err = relative_l2_error(out.dA.data(), ref->dA.data(), in.P * in.D);
            row.rel_dE_err = relative_l2_error(out.dE.data(), ref->dE.data(), in.V * in.D);
            row.counts_mismatch = count_mismatches(out.counts.data(), ref_kernel->counts.data(),
                                                   ref_kernel->near_zero.data(), in.P);
            row.rel_loss_err_kernel = relative_error(out.loss, ref_kernel->loss);
            row.rel_dA_err_kernel = relative_l2_error(out.dA.data(), ref_kernel->dA.data(), in.P * in.D);
            row.rel_dE_err_kernel = relative_l2_error(out.dE.data(), ref_kernel->dE.data(), in.V * in.D);
          } else if (spec.accuracy) {
            row.set_reason("reference does not fit the memory limit: accuracy not computed");
          }
          row.set_status("ok");
        } catch (const std::exception& e) {
          row.set_status("failed");
          row.set_reason(e.what());
          ++failed;
        }
      }
      file.append(row);
      print_row(table, row);
      done_work += work;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
      const double frac = total_work > 0 ? done_work / total_work : 1.0;
      fmt::print(progress, "progress: {:.0f}% of the work ({} of {} points), elapsed {}, ETA {}\n", 100 * frac,
                 done_points + 1, points.size(), format_duration(elapsed),
                 frac > 0 ? format_duration(elapsed / frac - elapsed) : "?");
    }
    ++done_points;
  }
  file.close(utc_now());
  return failed;
}

}  // namespace lobench
