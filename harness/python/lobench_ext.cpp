// lobench._ext: the C++ step and precision_sim over NumPy arrays (nanobind). The Python layer
// (lobench/__init__.py) checks dtypes, ranks and shapes first and gives the friendly messages; this
// module checks everything again (it is callable on its own) and never copies an input: arrays must
// already be C-contiguous float32 / int32 on the CPU (noconvert), and are read in place while the GIL
// is released. Outputs are the StepOutputs' own buffers, handed to NumPy without a copy.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/option_checks.hpp"
#include "harness/meters/peak_rss.hpp"
#include "variants/timing.hpp"
#include "harness/system_memory.hpp"
#include "variants/counting_allocator.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"
#include "variants/packed_matrix.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/rounding.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace lobench::python {
namespace {

template <typename T, typename... Extra>
using InArray = nb::ndarray<const T, nb::c_contig, nb::device::cpu, Extra...>;
using Matrix = InArray<float, nb::ndim<2>>;
using Ids = InArray<int32_t, nb::ndim<2>>;
using Vector = InArray<float, nb::ndim<1>>;

std::string fmt_shape(std::initializer_list<int64_t> dims) {
  std::string s = "[";
  for (auto it = dims.begin(); it != dims.end(); ++it) s += (it == dims.begin() ? "" : ", ") + std::to_string(*it);
  return s + "]";
}

// Index of the first value that is not finite (NaN or ±inf), or -1. The same index at any thread
// count: each thread scans one contiguous range and the smallest hit wins.
int64_t first_non_finite(const float* x, int64_t n, int threads) {
  int64_t first = -1;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    const int64_t begin = n * t / T, end = n * (t + 1) / T;
    int64_t hit = -1;
    constexpr int64_t kBlock = 4096;  // branch-free within a block, so the loop vectorises
    for (int64_t b = begin; b < end && hit < 0; b += kBlock) {
      const int64_t e = std::min(end, b + kBlock);
      uint32_t bad = 0;
      for (int64_t i = b; i < e; ++i) {
        uint32_t bits;
        std::memcpy(&bits, x + i, 4);
        bad |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
      }
      if (bad)
        for (int64_t i = b; i < e; ++i)
          if (!std::isfinite(x[i])) {
            hit = i;
            break;
          }
    }
#pragma omp critical
    if (hit >= 0 && (first < 0 || hit < first)) first = hit;
  }
  return first;
}

void require_finite(const float* x, int64_t rows, int64_t cols, const char* name, int threads) {
  const int64_t i = first_non_finite(x, rows * cols, threads);
  if (i >= 0)
    throw nb::value_error((std::string("argument '") + name + "' holds a non-finite value (" + std::to_string(x[i]) +
                           ") at " + fmt_shape({i / cols, i % cols}) + "; expected finite floats")
                              .c_str());
}

// OpenMP after fork: libgomp's thread pool belongs to the parent, so a child forked after the parent
// ran a parallel region hangs in its first one (multiprocessing's "fork" start does exactly that). The
// pthread_atfork child handler marks such a child, and every step it runs is single-threaded.
bool g_omp_started = false;
bool g_forked_after_omp = false;
void mark_forked_child() { g_forked_after_omp = g_omp_started; }

// The thread count of one call, with the CLI's limits (harness/cli/option_checks.hpp): an explicit
// value must be in [1, kMaxThreads]; the default is OpenMP's (OMP_NUM_THREADS) capped at the CLI's
// default, every core, so OMP_NUM_THREADS=100000 cannot ask for 100000 threads.
int resolve_threads(std::optional<int> threads) {
  if (threads && (*threads < 1 || *threads > cli::kMaxThreads))
    throw nb::value_error(("argument 'threads' must be in [1, " + std::to_string(cli::kMaxThreads) + "], got " +
                           std::to_string(*threads)).c_str());
  if (g_forked_after_omp) return 1;
  g_omp_started = true;
  return threads ? *threads : std::clamp(omp_get_max_threads(), 1, cli::default_threads());
}

// The bytes one step of `v` needs (inputs, outputs and the variant's predicted working set), as
// `lobench check` predicts them, and a ValueError naming the need and the limit when they exceed it.
double planned_bytes(const Variant& v, const Shape& s, const RunOptions& opts) {
  const double inputs = 4.0 * (double(s.P()) * double(s.D) + double(s.V) * double(s.D) + double(s.P()) * double(s.L) +
                               (s.weighted ? double(s.P()) : 0.0));
  return inputs + double(StepOutputs::bytes(s.P(), s.V, s.D)) + double(v.predicted_working_bytes(s, opts));
}

void require_memory(const Variant& v, const Shape& s, const RunOptions& opts, int64_t mem_limit) {
  const int64_t limit = mem_limit > 0 ? mem_limit : cli::default_memory_limit();
  const double need = planned_bytes(v, s, opts);
  if (need > double(limit))
    throw nb::value_error(("memory: shapes P = " + std::to_string(s.P()) + ", V = " + std::to_string(s.V) +
                           ", D = " + std::to_string(s.D) + ", L = " + std::to_string(s.L) + " need " +
                           format_bytes(need) + " with variant '" + v.name() +
                           "' (inputs, outputs and working set), more than the memory limit " +
                           format_bytes(double(limit)) + (mem_limit > 0 ? " (mem_limit)" : " (memory available now)"))
                              .c_str());
}

const Variant& find_cpu_variant(const std::string& name) {
  const Variant* v = Registry::instance().find(name);
  if (!v || v->backend() != "cpu") {
    std::string names;
    for (const Variant* x : Registry::instance().all())
      if (x->backend() == "cpu") names += (names.empty() ? "" : ", ") + x->name();
    throw nb::value_error(("argument 'variant': unknown CPU variant '" + name + "'; expected one of " + names).c_str());
  }
  return *v;
}

// A NumPy array over `data`, kept alive by `owner`.
template <typename T>
nb::object numpy_view(T* data, std::initializer_list<size_t> shape, nb::handle owner) {
  return nb::cast(nb::ndarray<nb::numpy, T>(data, shape, owner));
}

// One step of `variant` on views of the caller's arrays. Returns a dict: loss, per_position_loss [P]
// float64, dA [P, D] and dE [V, D] float32, counts [P, 4] int64 (TP, FP, FN, TN at logit > 0),
// peak_working_bytes (counted), e_stored_bytes, step_seconds (the variant's run() alone), variant.
nb::dict bce(Matrix A, Matrix E, Ids targets, std::optional<Vector> weights, const std::string& reduction,
             const std::string& variant, const std::string& e_format, const std::string& e_rounding, uint64_t seed,
             std::optional<int> threads, int64_t mem_limit) {
  const int64_t P = int64_t(A.shape(0)), D = int64_t(A.shape(1)), V = int64_t(E.shape(0)), L = int64_t(targets.shape(1));
  if (P < 1 || D < 1) throw nb::value_error(("argument 'A' is empty (shape " + fmt_shape({P, D}) + ")").c_str());
  if (V < 1) throw nb::value_error("argument 'E' is empty: expected at least one row (V >= 1)");
  if (int64_t(E.shape(1)) != D)
    throw nb::value_error(("argument 'E' has " + std::to_string(E.shape(1)) + " columns; expected D = " +
                           std::to_string(D) + " (A's columns)").c_str());
  if (V > int64_t(INT32_MAX) - 1)
    throw nb::value_error(("argument 'E' has V = " + std::to_string(V) + " rows, more than int32 ids allow").c_str());
  if (int64_t(targets.shape(0)) != P)
    throw nb::value_error(("argument 'targets' has " + std::to_string(targets.shape(0)) + " rows; expected P = " +
                           std::to_string(P) + " (A's rows)").c_str());
  if (L < 1) throw nb::value_error("argument 'targets' has no columns: expected L >= 1");
  if (weights && int64_t(weights->shape(0)) != P)
    throw nb::value_error(("argument 'weights' has " + std::to_string(weights->shape(0)) + " entries; expected P = " +
                           std::to_string(P)).c_str());
  Reduction red;
  try {
    red = parse_reduction(reduction);
  } catch (const std::invalid_argument& e) {
    throw nb::value_error((std::string("argument 'reduction': ") + e.what()).c_str());
  }
  const Variant& v = find_cpu_variant(variant);
  RunOptions opts;
  opts.threads = resolve_threads(threads);
  opts.e_format = e_format;
  const Shape shape{1, P, V, D, L, red, weights.has_value()};
  if (auto why = v.skip_reason(shape, opts))
    throw nb::value_error(("variant '" + variant + "' cannot run this input: " + *why).c_str());
  require_memory(v, shape, opts, mem_limit);
  precision::RoundingOptions rounding;
  if (!opts.e_is_float32()) {
    try {
      precision::parse_format(e_format);
      rounding.mode = precision::parse_rounding(e_rounding);
    } catch (const std::invalid_argument& e) {
      throw nb::value_error((std::string("argument 'e_format' / 'e_rounding': ") + e.what()).c_str());
    }
    rounding.seed = seed;
  }

  StepInputs in;
  in.P = P, in.V = V, in.D = D, in.L = L;
  in.A = A.data();
  in.E = E.data();
  in.targets = targets.data();
  in.weights = weights ? weights->data() : nullptr;
  in.reduction = red;

  auto out = std::make_unique<StepOutputs>();
  CountingAllocator alloc;
  double seconds = 0.0;
  int64_t stored_bytes = 0;
  {
    nb::gil_scoped_release unlocked;
    require_finite(in.A, P, D, "A", opts.threads);
    require_finite(in.E, V, D, "E", opts.threads);
    for (int64_t p = 0; in.weights && p < P; ++p)
      if (!std::isfinite(in.weights[p]) || in.weights[p] < 0)
        throw nb::value_error(("argument 'weights' holds " + std::to_string(in.weights[p]) + " at [" + std::to_string(p) +
                               "]; expected finite weights >= 0").c_str());
    std::unique_ptr<PackedMatrix> stored;
    if (!opts.e_is_float32()) {
      stored = std::make_unique<PackedMatrix>(in.E, V, D, e_format, rounding, opts.threads);
      in.E_stored = stored.get();
      stored_bytes = stored->stored_bytes();
    }
    out->resize(P, V, D);
    RunContext ctx{alloc, opts};
    seconds = seconds_of([&] { v.run(in, *out, ctx); });
  }

  StepOutputs* raw = out.release();
  nb::capsule owner(raw, [](void* p) noexcept { delete static_cast<StepOutputs*>(p); });
  nb::dict r;
  r["loss"] = raw->loss;
  r["per_position_loss"] = numpy_view(raw->per_position_loss.data(), {size_t(P)}, owner);
  r["dA"] = numpy_view(raw->dA.data(), {size_t(P), size_t(D)}, owner);
  r["dE"] = numpy_view(raw->dE.data(), {size_t(V), size_t(D)}, owner);
  r["counts"] = numpy_view(raw->counts.data(), {size_t(P), size_t(4)}, owner);
  r["peak_working_bytes"] = alloc.peak_bytes();
  r["e_stored_bytes"] = stored_bytes;
  r["step_seconds"] = seconds;
  r["variant"] = v.backend() + "/" + v.name();
  return r;
}

// The registered CPU variants: name, description, what they support.
std::vector<nb::dict> variants() {
  std::vector<nb::dict> out;
  for (const Variant* v : Registry::instance().all()) {
    if (v->backend() != "cpu") continue;
    nb::dict d;
    d["name"] = v->name();
    d["description"] = v->description();
    d["supports"] = v->supports();
    d["stored_e"] = !v->skip_reason(Shape{}, RunOptions{1, 0, 0, "bfloat16"}).has_value();
    out.push_back(std::move(d));
  }
  return out;
}

// Rounds x (float32, any shape, C-contiguous) into `format`: values on the format's grid (float32)
// and, for formats of at most 16 bits, their codes (uint8 up to 8 bits, uint16 up to 16; the bit
// patterns ml_dtypes uses for the same-named type). bits: the random bits of stochastic rounding
// (0 = the format's default).
nb::dict quantize(InArray<float> x, const std::string& format, const std::string& rounding, uint64_t seed, int bits,
                  std::optional<int> threads) {
  precision::Format f;
  precision::RoundingOptions ro;
  try {
    f = precision::parse_format(format);
  } catch (const std::invalid_argument& e) {
    throw nb::value_error((std::string("argument 'format': ") + e.what()).c_str());
  }
  try {
    ro.mode = precision::parse_rounding(rounding);
  } catch (const std::invalid_argument& e) {
    throw nb::value_error((std::string("argument 'rounding': ") + e.what()).c_str());
  }
  ro.seed = seed;
  ro.sr_bits = bits;
  const precision::Quantizer q(f);
  try {
    q.resolved_sr_bits(bits);
  } catch (const std::invalid_argument& e) {
    throw nb::value_error((std::string("argument 'bits': ") + e.what()).c_str());
  }
  const int T = resolve_threads(threads);
  std::vector<size_t> shape(x.ndim());
  size_t n = 1;
  for (size_t i = 0; i < x.ndim(); ++i) n *= (shape[i] = x.shape(i));
  const std::span<const float> in(x.data(), n);

  auto values = std::make_unique<std::vector<float>>(n);
  auto codes8 = std::make_unique<std::vector<uint8_t>>();
  auto codes16 = std::make_unique<std::vector<uint16_t>>();
  {
    nb::gil_scoped_release unlocked;
    q.round(in, std::span<float>(*values), ro, T);
    if (precision::code_bytes(f) == 1) {
      codes8->resize(n);
      q.encode(in, std::span<uint8_t>(*codes8), ro, T);
    } else if (precision::code_bytes(f) == 2) {
      codes16->resize(n);
      q.encode(in, std::span<uint16_t>(*codes16), ro, T);
    }
  }
  auto own = [](auto vec) {
    using V = typename decltype(vec)::element_type;
    V* raw = vec.release();
    return std::pair(raw, nb::capsule(raw, [](void* p) noexcept { delete static_cast<V*>(p); }));
  };
  nb::dict r;
  auto [vals, vals_owner] = own(std::move(values));
  r["values"] = nb::cast(nb::ndarray<nb::numpy, float>(vals->data(), shape.size(), shape.data(), vals_owner));
  if (precision::code_bytes(f) == 1) {
    auto [c, c_owner] = own(std::move(codes8));
    r["codes"] = nb::cast(nb::ndarray<nb::numpy, uint8_t>(c->data(), shape.size(), shape.data(), c_owner));
  } else if (precision::code_bytes(f) == 2) {
    auto [c, c_owner] = own(std::move(codes16));
    r["codes"] = nb::cast(nb::ndarray<nb::numpy, uint16_t>(c->data(), shape.size(), shape.data(), c_owner));
  } else {
    r["codes"] = nb::none();
  }
  r["format"] = f.name;
  r["bits"] = f.bits();
  r["description"] = precision::describe(f);
  return r;
}

}  // namespace
}  // namespace lobench::python

NB_MODULE(_ext, m) {
  using namespace lobench::python;
  m.doc() = "lobench's C++ BCE step and number formats (use the lobench package, not this module)";
  pthread_atfork(nullptr, nullptr, &mark_forked_child);
  m.def("bce", &bce, "A"_a.noconvert(), "E"_a.noconvert(), "targets"_a.noconvert(), "weights"_a.noconvert().none(),
        "reduction"_a, "variant"_a, "e_format"_a, "e_rounding"_a, "seed"_a, "threads"_a.none(), "mem_limit"_a = 0);
  // The memory a step would need (bytes, as `lobench check` predicts it) and the default limit.
  m.def("planned_bytes", [](int64_t P, int64_t V, int64_t D, int64_t L, bool weighted, const std::string& variant,
                            std::optional<int> threads) {
    lobench::RunOptions opts;
    opts.threads = resolve_threads(threads);
    return planned_bytes(find_cpu_variant(variant), lobench::Shape{1, P, V, D, L, lobench::Reduction::mean, weighted},
                         opts);
  });
  m.def("default_memory_limit", &lobench::cli::default_memory_limit);
  m.def("max_threads_limit", [] { return lobench::cli::kMaxThreads; });
  m.def("forked_child", [] { return g_forked_after_omp; });
  m.def("variants", &variants);
  m.def("quantize", &quantize, "x"_a.noconvert(), "format"_a, "rounding"_a, "seed"_a, "bits"_a, "threads"_a.none());
  m.def("formats", &lobench::precision::format_names);
  m.def("roundings", &lobench::precision::rounding_names);
  m.def("max_threads", [] { return resolve_threads(std::nullopt); });
  // The process's resident set now and its peak (VmRSS, VmHWM) in bytes, -1 if unreadable: the C++
  // meter's own readers (harness/meters/peak_rss.hpp), for Python benchmarks.
  m.def("resident_bytes", &lobench::meters::resident_bytes);
  m.def("peak_resident_bytes", &lobench::meters::peak_resident_bytes);
}
