#include "sweep.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <ostream>
#include <utility>

#include "accuracy.hpp"
#include "measure.hpp"
#include "reference.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"
#include "results_file.hpp"
#include "stored_matrix.hpp"
#include "system_memory.hpp"

#if LOBENCH_HAS_CUDA
#include "gemm_rate.hpp"
#endif

namespace lobench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A point's float32/int32 inputs (A, E, targets, weights), and with its outputs what it needs in memory
// besides a variant's working set.
int64_t input_bytes(const Shape& s) {
  const int64_t P = s.P();
  return (P * s.D + s.V * s.D + P * s.L + (s.weighted ? P : 0)) * 4;
}
int64_t io_bytes(const Shape& s) { return input_bytes(s) + StepOutputs::bytes(s.P(), s.V, s.D); }
int64_t reference_bytes(const Shape& s) {
  return cpu::ReferenceResult::bytes(s.P(), s.V, s.D) + cpu::reference_workspace_bytes(s.P(), s.V, s.D);
}

// What the sweep asks of the GPU, and nothing where CUDA is not compiled in.
struct GpuRates {
  double fp32 = kNaN, tf32 = kNaN, bf16 = kNaN;
  std::string device_name;
  double for_operand(const std::string& op) const { return op == "tf32" ? tf32 : op == "bf16" ? bf16 : fp32; }
};
// The GPU yardstick is cuBLAS on an 8192³ product: the matrix units' practical peak in each operand
// precision. (A logit-shaped product, m = P, n = 8192, k = D = 128, is bounded by writing C and would
// flatter a kernel that never stores logits; variants/cuda/bench/cuda_step_bench reports both.)
constexpr int64_t kGpuGemmN = 8192;

std::optional<GpuRates> measure_gpu_rates(std::string* why) {
#if LOBENCH_HAS_CUDA
  try {
    const cuda::GpuGemmRates r = cuda::measure_gpu_gemm_rates(kGpuGemmN, kGpuGemmN, kGpuGemmN);
    return GpuRates{r.fp32_gflops, r.tf32_gflops, r.bf16_gflops, r.device_name};
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
#else
  *why = "CUDA not compiled in";
  return std::nullopt;
#endif
}

// Free and total device memory now; nothing without a usable device.
std::optional<std::pair<int64_t, int64_t>> gpu_memory() {
#if LOBENCH_HAS_CUDA
  int64_t free_bytes = 0, total_bytes = 0;
  if (cuda::gpu_memory_info(&free_bytes, &total_bytes)) return std::pair(free_bytes, total_bytes);
#endif
  return std::nullopt;
}

bool is_gpu(const Variant& v) { return v.backend() == "cuda"; }

std::string shape_key(const Shape& s) {
  return fmt::format("{} {} {} {} {} {} {}", s.B, s.N, s.V, s.D, s.L, to_string(s.reduction), s.weighted);
}

std::string format_duration(double s) {
  const int64_t t = int64_t(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

void print_header(std::ostream& os) {
  fmt::print(os, "{:<12} {:>4} {:>4} {:>8} {:>4} {:>3} {:>2} {:>7} {:>10} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9}  {}\n",
             "variant", "B", "N", "V", "D", "L", "T", "status", "median_ms", "GFLOP/s", "%GEMM", "peak_MiB",
             "pred_MiB", "rel_loss", "rel_dA", "rel_dE", "note");
}

void print_row(std::ostream& os, const ResultRow& r) {
  const bool ok = std::string(r.status) == "ok";
  auto err = [](double e) { return std::isnan(e) ? std::string("-") : fmt::format("{:.1e}", e); };
  std::string note = r.reason;
  if (r.e_format[0] && std::string(r.e_format) != "fp32")
    note = fmt::format("E {} ({}), {}; kernel-only errors {} {} {} {}", r.e_format, r.e_rounding,
                       format_bytes(double(r.e_stored_bytes)), ok ? err(r.rel_loss_err_kernel) : "-",
                       ok ? err(r.rel_dA_err_kernel) : "-", ok ? err(r.rel_dE_err_kernel) : "-", note);
  if (r.operand[0] && std::string(r.operand) != "fp32") note = fmt::format("operand {}; {}", r.operand, note);
  fmt::print(os, "{:<12} {:>4} {:>4} {:>8} {:>4} {:>3} {:>2} {:>7} {:>10} {:>8} {:>6} {:>10.1f} {:>10.1f} {:>9} {:>9} {:>9}  {}\n",
             r.variant, r.B, r.N, r.V, r.D, r.L, r.threads, r.status,
             ok ? fmt::format("{:.2f}", r.time_median_s * 1e3) : "-",
             ok ? fmt::format("{:.1f}", r.effective_gflops) : "-",
             ok && std::isfinite(r.gemm_fraction) ? fmt::format("{:.0f}%", 100 * r.gemm_fraction) : "-",
             double(r.peak_bytes) / 1048576.0, double(r.predicted_bytes) / 1048576.0, ok ? err(r.rel_loss_err) : "-",
             ok ? err(r.rel_dA_err) : "-", ok ? err(r.rel_dE_err) : "-", note);
  os.flush();
}

}  // namespace

void validate_operand(const std::string& name) {
  if (name != "fp32" && name != "tf32" && name != "bf16")
    throw std::invalid_argument(fmt::format("unknown operand precision '{}' (valid: fp32, tf32, bf16)", name));
}

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  if (spec.operands.empty()) throw std::invalid_argument("--operand needs at least one value");
  for (const auto& op : spec.operands) validate_operand(op);
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
                      for (const auto& rounding : spec.e_roundings)
                        for (const auto& operand : spec.operands) {
                          SweepPoint p;
                          p.shape = Shape{B, N, V, D, L, parse_reduction(red), spec.weighted};
                          validate(p.shape);
                          p.options = RunOptions{T, bv, bp, fmt_name, operand};
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
  int64_t mem_limit = spec.mem_limit;
  if (mem_limit <= 0) {
    const int64_t available = available_memory_bytes();
    mem_limit = std::max<int64_t>(0, available - std::max<int64_t>(int64_t(1) << 30, available / 10));
  }
  if (spec.reps < 1 || spec.reps > kMaxSamples)
    throw std::invalid_argument(fmt::format("--reps must be in [1, {}], got {}", kMaxSamples, spec.reps));
  if (spec.warmup < 0) throw std::invalid_argument("--warmup must be >= 0");
  const bool any_gpu = std::any_of(variants.begin(), variants.end(), [](const Variant* v) { return is_gpu(*v); });
  const bool any_cpu = std::any_of(variants.begin(), variants.end(), [](const Variant* v) { return !is_gpu(*v); });

  // The GPU rows' memory limit, read before this process allocates anything on the device (0: no
  // device to ask, and the variants' own skip reasons say why they cannot run).
  int64_t gpu_limit = 0;
  if (any_gpu) {
    if (spec.gpu_mem_limit > 0) gpu_limit = spec.gpu_mem_limit;
    else if (const auto m = gpu_memory())
      gpu_limit = std::max<int64_t>(0, m->first - std::max<int64_t>(int64_t(1) << 30, m->second / 20));
  }

  ResultsFile file(spec.out, prov, spec.resume);
  file.set_attr("mem_limit_bytes", double(mem_limit));
  if (any_gpu) file.set_attr("gpu_mem_limit_bytes", double(gpu_limit));
  file.set_attr("seed", double(spec.seed));
  fmt::print(table, "lobench run: {} points x {} variants -> {} (memory limit {}{})\n", points.size(), variants.size(),
             spec.out, format_bytes(double(mem_limit)),
             !any_gpu ? "" : gpu_limit > 0 ? fmt::format(", GPU limit {}", format_bytes(double(gpu_limit)))
                                           : std::string(", no GPU limit: no device"));

  // The yardstick: Eigen's SGEMM rate for the point's (P, D, threads), re-measured just before each
  // point's variants so that every row's ratio compares two timings taken moments apart (these
  // machines are shared and their speed drifts). Only CPU rows use it.
  std::map<std::tuple<int64_t, int64_t, int>, double> gemm_rate;
  auto yardstick = [&](const SweepPoint& pt) {
    const double r = measure_sgemm_gflops(pt.shape.P(), pt.shape.D, 512, pt.options.threads);
    gemm_rate[std::tuple(pt.shape.P(), pt.shape.D, pt.options.threads)] = r;
    return r;
  };
  if (!points.empty() && any_cpu) {
    const double r = yardstick(points.front());
    file.set_attr("gemm_gflops", r);
    fmt::print(table, "SGEMM yardstick (Eigen, [P x D]·[D x 512], re-measured before every point): {:.1f} GFLOP/s at P={} D={} threads={}\n",
               r, points.front().shape.P(), points.front().shape.D, points.front().options.threads);
  }
  // GPU rows' yardstick: cuBLAS GEMM rates per operand precision on one fixed shape, measured once,
  // when the first GPU row is about to run, and recorded as file attributes.
  bool gpu_rates_measured = false;
  std::optional<GpuRates> gpu_rates;
  auto gpu_yardstick = [&]() -> const std::optional<GpuRates>& {
    if (gpu_rates_measured) return gpu_rates;
    gpu_rates_measured = true;
    std::string why;
    gpu_rates = measure_gpu_rates(&why);
    if (const auto& r = gpu_rates) {
      file.set_attr("gpu_gemm_fp32_gflops", r->fp32);
      file.set_attr("gpu_gemm_tf32_gflops", r->tf32);
      file.set_attr("gpu_gemm_bf16_gflops", r->bf16);
      file.set_attr("gpu_gemm_shape", fmt::format("m={} n={} k={}", kGpuGemmN, kGpuGemmN, kGpuGemmN));
      file.set_attr("gpu_name", r->device_name);
      fmt::print(table, "GPU GEMM yardstick (cuBLAS, {}³, {}): fp32 {:.0f}, tf32 {:.0f}, bf16 {:.0f} GFLOP/s\n",
                 kGpuGemmN, r->device_name, r->fp32, r->tf32, r->bf16);
    } else {
      fmt::print(table, "GPU GEMM yardstick not measured: {}\n", why);
    }
    return gpu_rates;
  };
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
      const bool on_gpu = is_gpu(*v);
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
      // The rate measured for this (P, D, threads), if any yet (operator[] would record a 0 for a
      // skipped row whose shape was never measured).
      const auto measured = gemm_rate.find(std::tuple(s.P(), s.D, pt.options.threads));
      row.gemm_gflops = on_gpu || measured == gemm_rate.end() ? kNaN : measured->second;
      row.input_bytes = input_bytes(s);
      row.output_bytes = StepOutputs::bytes(s.P(), s.V, s.D);
      row.predicted_bytes = v->predicted_working_bytes(s, pt.options);
      row.set_e_format(pt.options.e_format);
      row.set_e_rounding(pt.e_rounding);
      row.set_operand(pt.options.operand);
      row.rel_loss_err = row.rel_dA_err = row.rel_dE_err = row.loss = row.ref_loss = kNaN;
      row.rel_loss_err_kernel = row.rel_dA_err_kernel = row.rel_dE_err_kernel = kNaN;
      for (double& t : row.time_samples_s) t = kNaN;
      const double work = double(s.P()) * double(s.V) * double(s.D);
      if (file.has(row.key())) {  // --resume: already measured
        done_work += work;
        continue;
      }
      std::copy_n(utc_now().c_str(), 20, row.utc);

      // Host memory holds the inputs, the outputs and the reference, and a CPU variant's working set;
      // a GPU variant's working set and its own copy of the inputs and outputs are on the device.
      const bool want_ref = spec.accuracy && io_bytes(s) + reference_bytes(s) <= mem_limit;
      const int64_t host_working = on_gpu ? 0 : row.predicted_bytes;
      const int64_t needed = host_working + io_bytes(s) + (want_ref ? reference_bytes(s) : 0);
      const int64_t gpu_needed = row.predicted_bytes + io_bytes(s);
      if (auto why = v->skip_reason(s, pt.options)) {
        row.set_status("skipped");
        row.set_reason(*why);
      } else if (needed > mem_limit) {
        row.set_status("skipped");
        row.set_reason(fmt::format("OOM predicted: {} working + {} inputs/outputs{} > limit {}",
                                   format_bytes(double(host_working)), format_bytes(double(io_bytes(s))),
                                   want_ref ? fmt::format(" + {} reference", format_bytes(double(reference_bytes(s)))) : "",
                                   format_bytes(double(mem_limit))));
      } else if (on_gpu && gpu_limit > 0 && gpu_needed > gpu_limit) {
        row.set_status("skipped");
        row.set_reason(fmt::format("OOM predicted: {} working + {} inputs/outputs > GPU limit {}",
                                   format_bytes(double(row.predicted_bytes)), format_bytes(double(io_bytes(s))),
                                   format_bytes(double(gpu_limit))));
      } else {
        if (on_gpu) {
          const auto& rates = gpu_yardstick();
          row.gemm_gflops = rates ? rates->for_operand(pt.options.operand) : kNaN;
        } else {
          if (!measured_yardstick) {
            yardstick(pt);
            measured_yardstick = true;
          }
          row.gemm_gflops = gemm_rate[std::tuple(s.P(), s.D, pt.options.threads)];
        }
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
          Samples samples;
          if (std::unique_ptr<DeviceSession> session = v->open_session(in, pt.options)) {
            // Inputs placed on the device once; each step timed on the device's clock (caches flushed
            // before it); outputs copied back after the last one.
            for (int i = 0; i < spec.warmup; ++i) session->run_timed();
            for (int i = 0; i < spec.reps; ++i) samples.seconds.push_back(session->run_timed());
            session->download(out);
            row.peak_bytes = session->peak_working_bytes();
            row.peak_device_bytes = session->peak_device_bytes();
          } else {
            CountingAllocator alloc;
            RunContext ctx{alloc, pt.options};
            samples = time_repeats([&] { v->run(in, out, ctx); }, spec.warmup, spec.reps);
            row.peak_bytes = alloc.peak_bytes();
          }
          for (size_t i = 0; i < samples.seconds.size(); ++i) row.time_samples_s[i] = samples.seconds[i];
          row.time_median_s = samples.median();
          row.time_min_s = samples.min();
          row.time_max_s = samples.max();
          row.effective_gflops = row.flops / row.time_median_s / 1e9;
          row.gemm_fraction = row.gemm_gflops > 0 ? row.effective_gflops / row.gemm_gflops : kNaN;
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
