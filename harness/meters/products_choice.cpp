#include "harness/meters/products_choice.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "harness/config/option_checks.hpp"
#include "harness/measure.hpp"
#include "harness/provenance.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace lobench::meters {
namespace {

constexpr int kAutoReps = 5;  // timed rounds of a measurement on a cache miss (`lobench tune` takes its own)

const char* kNotHere = "lobench's micro-kernels do not run here (they need AVX-512 in the CPU and the build, "
                       "and LOBENCH_ISA not below avx512)";

// One line on stderr, at most once per process: the cache is a convenience, never a reason to stop.
void warn_once(const std::string& what) {
  static std::once_flag once;
  std::call_once(once, [&] { fmt::print(stderr, "lobench: warning: {}\n", what); });
}

// Whether oneDNN is a path of its own here: built in, and not the process's library already.
bool onednn_path() { return !cpu::onednn_unavailable() && cpu::sgemm_library() != cpu::GemmLibrary::onednn; }

// The tiles' products of a path, for the steps made until the next call (or Fp32ProductsForD's end).
void take_path(ProductsPath path) {
  cpu::set_own_tile_kernels_enabled(path == ProductsPath::own);
  cpu::set_tile_products_library(path == ProductsPath::onednn ? std::optional(cpu::GemmLibrary::onednn) : std::nullopt);
}

// The fused step at one shape of a class, through every path, interleaved round by round.
ProductsTiming time_one_class(const Variant& fused, const char* shape_class, int64_t D, int64_t V, int threads,
                              int reps) {
  const Shape shape{32, 32, V, D, 8, Reduction::mean, false};  // P = 1024, L = 8: the reduced Table II shapes
  const StepData data = make_synthetic(shape, SyntheticSpec{});
  const StepInputs in = data.view();
  StepOutputs out;
  out.resize(in.P, in.V, in.D);
  CountingAllocator alloc;
  RunOptions options;  // fp32 operands, the variant's own block sizes
  options.threads = threads;
  auto step_with = [&](ProductsPath path) {
    return [&, path] {
      take_path(path);
      RunContext ctx{alloc, options};
      fused.run(in, out, ctx);
    };
  };
  std::vector<Contender> contenders{{"own", step_with(ProductsPath::own), {}, {}},
                                    {"library", step_with(ProductsPath::library), {}, {}}};
  if (onednn_path()) contenders.push_back({"onednn", step_with(ProductsPath::onednn), {}, {}});
  RepPolicy policy;
  policy.fixed_reps = reps;
  time_interleaved(contenders, /*warmup=*/1, policy);
  take_path(ProductsPath::own);  // (the process's defaults again)
  ProductsTiming t;
  t.shape_class = shape_class, t.P = in.P, t.V = V, t.D = D;
  t.own = contenders[0].cpu, t.library = contenders[1].cpu;
  t.own_wall = contenders[0].wall, t.library_wall = contenders[1].wall;
  if (contenders.size() > 2) t.onednn = contenders[2].cpu, t.onednn_wall = contenders[2].wall;
  return t;
}

// Both classes: D = 128 and 256 at V = 2048 and 1024 per thread (the same work, ~10 ms a step here).
CachedProducts measure_products(int threads, int reps) {
  const Variant* fused = Registry::instance().find("fused");
  if (!fused) throw std::logic_error("the fused variant is not registered: nothing to time the products on");
  CachedProducts c;
  c.threads = threads;
  c.measured_utc = utc_now();
  c.timings.push_back(time_one_class(*fused, "D<=192", 128, 2048 * int64_t(threads), threads, reps));
  c.timings.push_back(time_one_class(*fused, "D>192", 256, 1024 * int64_t(threads), threads, reps));
  return c;
}

std::string timings_text(const CachedProducts& c) {
  std::string text = fmt::format("{} thread{}, fused step", c.threads, c.threads == 1 ? "" : "s");
  for (const ProductsTiming& t : c.timings)
    text += fmt::format("{} {:.2f} CPU ms (own) vs {:.2f} CPU ms (library){} at P={} D={} V={}",
                        &t == &c.timings.front() ? ":" : ";", 1e3 * t.own.median(), 1e3 * t.library.median(),
                        t.onednn.seconds.empty() ? "" : fmt::format(" vs {:.2f} CPU ms (oneDNN)", 1e3 * t.onednn.median()),
                        t.P, t.D, t.V);
  return text + fmt::format(" (medians of {})", c.timings.front().own.seconds.size());
}

// Ours, unless a library beat them (faster_than_own); of two that did, the one with the lower median.
ProductsPath fastest_path(const ProductsTiming& t) {
  const bool library = t.faster_than_own(t.library), onednn = t.faster_than_own(t.onednn);
  if (library && onednn) return t.onednn.median() < t.library.median() ? ProductsPath::onednn : ProductsPath::library;
  return library ? ProductsPath::library : onednn ? ProductsPath::onednn : ProductsPath::own;
}

ProductsChoice choice_of(const CachedProducts& c, const std::string& basis) {
  ProductsChoice ch;
  ch.small_d = fastest_path(c.timings.at(0));
  ch.large_d = fastest_path(c.timings.at(1));
  ch.basis = basis;
  ch.timings = c.timings;
  return ch;
}

ProductsChoice with_products(ProductsChoice ch) {
  const std::string small = products_path_name(ch.small_d), large = products_path_name(ch.large_d);
  ch.products = ch.small_d == ch.large_d
                    ? small
                    : fmt::format("{} at D <= {}; {} at D > {}", small, kProductsClassMaxD, large, kProductsClassMaxD);
  return ch;
}

// Measured now and written to the cache; the basis says where (or why not).
ProductsChoice measure_and_cache(int threads, int reps, const std::optional<std::string>& path, std::string* error) {
  CachedProducts c = measure_products(threads, reps);
  c.key = products_cache_key();
  std::string where;
  if (!path) {
    *error = "no cache folder (neither XDG_CACHE_HOME nor HOME is set)";
  } else if (write_products_cache(*path, c, error)) {
    error->clear();
    where = "cached in " + *path;
  }
  if (where.empty()) where = "not cached: " + *error;
  return choice_of(c, fmt::format("measured now on {}; {}", timings_text(c), where));
}

}  // namespace

std::optional<ProductsPath> forced_products() {
  const char* v = std::getenv("LOBENCH_PRODUCTS");
  const std::string value = v ? v : "";
  if (value.empty() || value == "auto") return std::nullopt;
  if (value == "library") return ProductsPath::library;
  if (value == "onednn") {
    if (auto why = cpu::onednn_unavailable()) throw std::invalid_argument("LOBENCH_PRODUCTS=onednn: " + *why);
    return ProductsPath::onednn;
  }
  if (value != "own")
    throw std::invalid_argument("LOBENCH_PRODUCTS=" + value + " is not a products path (own, library, onednn, auto)");
  if (!cpu::own_tile_kernels_available()) throw std::invalid_argument(std::string("LOBENCH_PRODUCTS=own: ") + kNotHere);
  return ProductsPath::own;
}

std::string products_path_name(ProductsPath p) {
  if (p == ProductsPath::library) return "library (" + cpu::sgemm_library_name() + ")";
  if (p == ProductsPath::onednn) return "library (" + cpu::gemm_library_name(cpu::GemmLibrary::onednn) + ")";
  return fmt::format("own AVX-512 {}x{} micro-kernels", cpu::kTransposedBlockRows, cpu::kTransposedPanel);
}

ProductsChoice decide_fp32_products(int threads) {
  ProductsChoice ch;
  if (const auto forced = forced_products()) {
    ch.small_d = ch.large_d = *forced;
    ch.basis = std::string("LOBENCH_PRODUCTS=") + (*forced == ProductsPath::own      ? "own"
                                                   : *forced == ProductsPath::onednn ? "onednn"
                                                                                     : "library");
    return with_products(ch);
  }
  if (!cpu::own_tile_kernels_available()) {
    ch.basis = kNotHere;
    return with_products(ch);
  }
  const std::string key = products_cache_key();
  const std::optional<std::string> path = products_cache_path(key);
  if (path) {
    const CacheRead r = read_products_cache(*path, key);
    if (r.products)
      return with_products(choice_of(*r.products, fmt::format("from cache {} (measured {} on {})", *path,
                                                              r.products->measured_utc, timings_text(*r.products))));
    if (r.corrupt) warn_once(fmt::format("the products cache {} {}: measured again", *path, r.why));
  }
  std::string error;
  ch = measure_and_cache(threads, kAutoReps, path, &error);
  if (!error.empty()) warn_once("the products choice was measured but not cached: " + error);
  return with_products(ch);
}

namespace {
std::mutex choice_mutex;
std::unique_ptr<ProductsChoice> process_choice;
}  // namespace

const ProductsChoice& fp32_products_choice() {
  std::lock_guard<std::mutex> lock(choice_mutex);
  if (!process_choice) process_choice = std::make_unique<ProductsChoice>(decide_fp32_products(config::default_threads()));
  return *process_choice;
}

ProductsChoice tune_fp32_products(int threads, int reps, std::string* cache_error) {
  if (!cpu::own_tile_kernels_available()) {
    ProductsChoice ch;
    ch.basis = kNotHere;
    return with_products(ch);
  }
  const std::string key = products_cache_key();
  ProductsChoice ch = with_products(measure_and_cache(threads, reps, products_cache_path(key), cache_error));
  std::lock_guard<std::mutex> lock(choice_mutex);
  if (!forced_products()) process_choice = std::make_unique<ProductsChoice>(ch);
  return ch;
}

int64_t products_choice_code(const ProductsChoice& c) { return int64_t(c.small_d) | int64_t(c.large_d) << 2; }

void adopt_fp32_products(int64_t code, const std::string& basis) {
  auto path = [](int64_t bits) { return bits == 1 ? ProductsPath::own : bits == 2 ? ProductsPath::onednn : ProductsPath::library; };
  ProductsChoice ch;
  ch.small_d = path(code & 3);
  ch.large_d = path(code >> 2 & 3);
  ch.basis = basis;
  std::lock_guard<std::mutex> lock(choice_mutex);
  process_choice = std::make_unique<ProductsChoice>(with_products(ch));
}

Fp32ProductsForD::Fp32ProductsForD(int64_t D) { take_path(fp32_products_choice().for_D(D)); }

Fp32ProductsForD::~Fp32ProductsForD() { take_path(ProductsPath::own); }

}  // namespace lobench::meters
