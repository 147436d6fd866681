#include "harness/meters/products_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "harness/config/option_checks.hpp"
#include "harness/measure.hpp"
#include "harness/provenance.hpp"
#include "variants/cpu/cache_info.hpp"
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
// The basis where there is nothing to choose between: our kernels do not run, and no oneDNN beside the library.
const std::string kNoChoice = std::string(kNotHere) + ", and no oneDNN is built in beside the library";

// One line on stderr, at most once per process: the cache is a convenience, never a reason to stop.
void warn_once(const std::string& what) {
  static std::once_flag once;
  std::call_once(once, [&] { fmt::print(stderr, "lobench: warning: {}\n", what); });
}

// Switches the process to a path's tile products, for the steps made until the next switch;
// ProductsPath::own is also the process's defaults (our kernels enabled, the tiles' library the process's).
void switch_tile_products_to(ProductsPath path) {
  cpu::set_own_tile_kernels_enabled(path == ProductsPath::own);
  cpu::set_tile_products_library(path == ProductsPath::onednn ? std::optional(cpu::GemmLibrary::onednn) : std::nullopt);
}

// The process's defaults again at the end of a scope, however it ends.
struct DefaultTileProductsAfter {
  ~DefaultTileProductsAfter() { switch_tile_products_to(ProductsPath::own); }
};

// A path of a choice's code (2 bits): 3 is no path.
ProductsPath path_of_code(int64_t bits) {
  if (bits < 0 || bits > 2) throw std::invalid_argument(fmt::format("products choice code {} names no path", bits));
  return ProductsPath(bits);
}

// The fused step at one shape of a class, through every path, interleaved round by round.
ProductsTiming time_one_class(const Variant& fused, const char* shape_class, int64_t D, int64_t V, int threads,
                              int reps, const std::vector<ProductsPath>& paths) {
  const Shape shape{32, 32, V, D, 8, Reduction::mean, false};  // P = 1024, L = 8: the reduced Table II shapes
  const StepData data = make_synthetic(shape, SyntheticSpec{});
  const StepInputs in = data.view();
  StepOutputs out;
  out.resize(in.P, in.V, in.D);
  CountingAllocator alloc;
  RunOptions options;  // fp32 operands, the variant's own block sizes
  options.threads = threads;
  const DefaultTileProductsAfter restore;  // (also when a step throws)
  auto step_with = [&](ProductsPath path) {
    return [&, path] {
      switch_tile_products_to(path);
      RunContext ctx{alloc, options};
      fused.run(in, out, ctx);
    };
  };
  std::vector<Contender> contenders;
  for (ProductsPath p : paths) contenders.push_back({products_path_word(p), step_with(p), {}, {}});
  RepPolicy policy;
  policy.fixed_reps = reps;
  time_interleaved(contenders, /*warmup=*/1, policy);
  ProductsTiming t;
  t.shape_class = shape_class, t.P = in.P, t.V = V, t.D = D;
  for (size_t i = 0; i < paths.size(); ++i) {
    path_samples(t, paths[i]) = contenders[i].cpu;
    path_samples(t, paths[i], /*wall=*/true) = contenders[i].wall;
  }
  return t;
}

// The vocabulary per thread of the cache-resident shapes, and the least of the streaming ones.
int64_t vocabulary_per_thread(int64_t D) { return D <= kProductsClassMaxD ? 2048 : 1024; }

int64_t timed_vocabulary(int64_t D, int threads, TimingShapes shapes) {
  return shapes == TimingShapes::cache_resident ? vocabulary_per_thread(D) * threads
                                                : products_timing_vocabulary(D, threads, cpu::cache_sizes().l3);
}

// Every path this process can take: the library's, ours where they run, oneDNN's where it is another library.
std::vector<ProductsPath> paths_here() {
  std::vector<ProductsPath> paths{ProductsPath::library};
  if (cpu::own_tile_kernels_available()) paths.push_back(ProductsPath::own);
  if (cpu::onednn_is_another_library()) paths.push_back(ProductsPath::onednn);
  return paths;
}

// One class. The streaming timing costs seconds a path, so every path is first timed at the cache-resident
// shape (about a second in all) and only those within kScreenMargin of the fastest there go on to it: a
// path 1.8 times slower there (OpenBLAS on Haswell kernels against ours, Zen 5) does not win by streaming
// E, where the two closest moved by 8 % between the shapes. Where one path is left (or the streaming shape
// is the screening's, as on a machine with a small L3 or many threads), the screening's timing of the paths
// left is the class's: a path screened out is never chosen.
ProductsTiming time_class(const Variant& fused, const char* shape_class, int64_t D, int threads, int reps,
                          TimingShapes shapes) {
  const std::vector<ProductsPath> all = paths_here();
  ProductsTiming screen =
      time_one_class(fused, shape_class, D, timed_vocabulary(D, threads, TimingShapes::cache_resident), threads, reps, all);
  if (shapes == TimingShapes::cache_resident) return screen;
  std::string dropped;
  const std::vector<ProductsPath> close = paths_close_to_the_fastest(screen, all, &dropped);
  const int64_t V = timed_vocabulary(D, threads, shapes);
  if (close.size() == 1 || V == screen.V) {
    screen = only_paths(screen, close);
    if (!dropped.empty())
      screen.screened = fmt::format("the others more than {:.0f} % slower here ({}){}", 100 * kScreenMargin, dropped,
                                    V == screen.V ? "" : fmt::format(", so not timed at V={}", V));
    return screen;
  }
  ProductsTiming t = time_one_class(fused, shape_class, D, V, threads, reps, close);
  if (!dropped.empty())
    t.screened = fmt::format("not timed here, more than {:.0f} % slower at V={}: {}", 100 * kScreenMargin, screen.V, dropped);
  return t;
}

// Both classes: D = 128 and 256.
CachedProducts measure_products(int threads, int reps, TimingShapes shapes) {
  const Variant* fused = Registry::instance().find("fused");
  if (!fused) throw std::logic_error("the fused variant is not registered: nothing to time the products on");
  CachedProducts c;
  c.threads = threads;
  c.measured_utc = utc_now();
  c.timings.push_back(time_class(*fused, "D<=192", 128, threads, reps, shapes));
  c.timings.push_back(time_class(*fused, "D>192", 256, threads, reps, shapes));
  return c;
}

std::string timings_text(const CachedProducts& c) {
  std::string text = fmt::format("{} thread{}, fused step", c.threads, c.threads == 1 ? "" : "s");
  for (const ProductsTiming& t : c.timings) {
    std::string paths;
    for (ProductsPath p : kProductsPaths)
      if (const Samples& s = path_samples(t, p); !s.seconds.empty())
        paths += fmt::format("{}{:.2f} CPU ms ({})", paths.empty() ? "" : " vs ", 1e3 * s.median(),
                             p == ProductsPath::onednn ? "oneDNN" : products_path_word(p));
    text += fmt::format("{} {} at P={} D={} V={} (medians of {}){}", &t == &c.timings.front() ? ":" : ";", paths, t.P,
                        t.D, t.V, t.rounds(), t.screened.empty() ? "" : " (" + t.screened + ")");
  }
  return text;
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

// Where the library's products are the only path this process can take (paths_here): that choice, said;
// else nothing.
std::optional<ProductsChoice> no_choice_here() {
  if (paths_here().size() > 1) return std::nullopt;
  ProductsChoice ch;
  ch.basis = kNoChoice;
  return with_products(ch);
}

// What a process that found another one timing says while it waits.
void say_waiting(const std::string& lock_path) {
  fmt::print(stderr, "lobench: waiting for another lobench process timing the fp32 products (lock {}; at most {:.0f} min, "
             "then timed here) ...\n", lock_path, kMaxMeasurementWaitSeconds / 60);
}

// Measured now and written to the cache; the basis says where (or why not).
ProductsChoice measure_and_cache(int threads, int reps, TimingShapes shapes, const std::string& key,
                                 const std::optional<std::string>& path, std::string* error) {
  CachedProducts c = measure_products(threads, reps, shapes);
  c.key = key;
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

int64_t products_timing_vocabulary(int64_t D, int threads, int64_t last_level_cache_bytes) {
  const int64_t row_bytes = D * int64_t(sizeof(float));
  const int64_t beyond = (2 * std::max<int64_t>(last_level_cache_bytes, 0) + row_bytes - 1) / row_bytes;
  const int64_t rounded = (beyond + 1023) / 1024 * 1024;
  return std::max(std::min(rounded, kMaxTimingVocabulary), vocabulary_per_thread(D) * threads);
}

Samples& path_samples(ProductsTiming& t, ProductsPath p, bool wall) {
  if (p == ProductsPath::own) return wall ? t.own_wall : t.own;
  if (p == ProductsPath::onednn) return wall ? t.onednn_wall : t.onednn;
  return wall ? t.library_wall : t.library;
}

const Samples& path_samples(const ProductsTiming& t, ProductsPath p, bool wall) {
  return path_samples(const_cast<ProductsTiming&>(t), p, wall);
}

ProductsTiming only_paths(ProductsTiming t, const std::vector<ProductsPath>& kept) {
  for (ProductsPath p : kProductsPaths)
    if (std::find(kept.begin(), kept.end(), p) == kept.end())
      path_samples(t, p) = path_samples(t, p, /*wall=*/true) = Samples{};
  return t;
}

std::vector<ProductsPath> paths_close_to_the_fastest(const ProductsTiming& t, const std::vector<ProductsPath>& paths,
                                                     std::string* dropped) {
  double fastest = INFINITY;
  for (ProductsPath p : paths) fastest = std::min(fastest, path_samples(t, p).median());
  // (a median that is no time — an unreadable clock — screens nothing out)
  if (!(fastest > 0) || !std::isfinite(fastest)) return paths;
  std::vector<ProductsPath> close;
  for (ProductsPath p : paths) {
    const double ratio = path_samples(t, p).median() / fastest;
    if (ratio <= 1 + kScreenMargin) close.push_back(p);
    else *dropped += fmt::format("{}{} {:.2f}x the fastest", dropped->empty() ? "" : ", ", products_path_word(p), ratio);
  }
  return close;
}

ProductsPath fastest_path(const ProductsTiming& t) {
  // (one path timed, the others screened out or not here: that one)
  std::vector<ProductsPath> timed;
  for (ProductsPath p : kProductsPaths)
    if (!path_samples(t, p).seconds.empty()) timed.push_back(p);
  if (timed.size() == 1) return timed.front();
  // (where our kernels do not run, the library's are the baseline oneDNN's must beat)
  if (t.own.seconds.empty() || !cpu::own_tile_kernels_available())
    return cpu::onednn_is_another_library() && ProductsTiming::beats(t.onednn, t.library) ? ProductsPath::onednn
                                                                                          : ProductsPath::library;
  const bool library = t.faster_than_own(t.library);
  // (oneDNN's samples only where it runs here: a cache is keyed by oneDNN's presence, this is a second guard)
  const bool onednn = cpu::onednn_is_another_library() && t.faster_than_own(t.onednn);
  if (library && onednn) return t.onednn.median() < t.library.median() ? ProductsPath::onednn : ProductsPath::library;
  return library ? ProductsPath::library : onednn ? ProductsPath::onednn : ProductsPath::own;
}

const char* products_path_word(ProductsPath p) {
  return p == ProductsPath::own ? "own" : p == ProductsPath::onednn ? "onednn" : "library";
}

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
  if (p == ProductsPath::onednn) return cpu::gemm_library_name(cpu::GemmLibrary::onednn);
  return fmt::format("own AVX-512 {}x{} micro-kernels", cpu::kTransposedBlockRows, cpu::kTransposedPanel);
}

ProductsChoice decide_fp32_products(int threads, TimingShapes shapes) {
  ProductsChoice ch;
  if (const auto forced = forced_products()) {
    ch.small_d = ch.large_d = *forced;
    ch.basis = std::string("LOBENCH_PRODUCTS=") + products_path_word(*forced);
    return with_products(ch);
  }
  if (auto none = no_choice_here()) return *none;
  const std::string key = products_cache_key();
  const std::optional<std::string> path = products_cache_path(key);
  auto from_cache = [&](const CachedProducts& c) {
    return with_products(choice_of(c, fmt::format("from cache {} (measured {} on {})", *path, c.measured_utc, timings_text(c))));
  };
  std::optional<MeasurementLock> lock;
  if (path) {
    CacheRead r = read_products_cache(*path, key);
    if (r.products) return from_cache(*r.products);
    lock.emplace(*path, say_waiting);
    r = read_products_cache(*path, key);  // (written while this process waited for the lock)
    if (r.products) return from_cache(*r.products);
    if (r.corrupt) warn_once(fmt::format("the products cache {} {}: measured again", *path, r.why));
  }
  // (a run's first lines say what it waits for: this is seconds, once per machine and build)
  fmt::print(stderr,
             "lobench: timing the fp32 products of fused/chunked on {} thread{} (P = 1024, D = 128 and 256; the closest "
             "paths at V = {} and {}), once per machine and build; `lobench tune` does it ahead ...\n",
             threads, threads == 1 ? "" : "s", timed_vocabulary(128, threads, shapes), timed_vocabulary(256, threads, shapes));
  std::string error;
  ch = measure_and_cache(threads, kAutoReps, shapes, key, path, &error);
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
  if (auto none = no_choice_here()) return *none;
  const std::string key = products_cache_key();
  const std::optional<std::string> path = products_cache_path(key);
  std::optional<MeasurementLock> measuring;  // (not beside another process's timing)
  if (path) measuring.emplace(*path, say_waiting);
  ProductsChoice ch = with_products(measure_and_cache(threads, reps, TimingShapes::streaming, key, path, cache_error));
  measuring.reset();
  std::lock_guard<std::mutex> lock(choice_mutex);
  if (!forced_products()) process_choice = std::make_unique<ProductsChoice>(ch);
  return ch;
}

int64_t products_choice_code(const ProductsChoice& c) { return int64_t(c.small_d) | int64_t(c.large_d) << 2; }

void adopt_fp32_products(int64_t code, const std::string& basis) {
  if (code < 0 || code > 15) throw std::invalid_argument(fmt::format("products choice code {} names no choice", code));
  ProductsChoice ch;
  ch.small_d = path_of_code(code & 3);
  ch.large_d = path_of_code(code >> 2 & 3);
  ch.basis = basis;
  // A rank built without oneDNN, handed a choice of it: the library's products here (the ranks then differ
  // in the last bits, as where our kernels cannot run on a rank), never a failing step.
  for (ProductsPath* p : {&ch.small_d, &ch.large_d})
    if (*p == ProductsPath::onednn && cpu::onednn_unavailable()) {
      *p = ProductsPath::library;
      ch.basis += "; oneDNN is not built in here: the library's products instead";
    }
  std::lock_guard<std::mutex> lock(choice_mutex);
  process_choice = std::make_unique<ProductsChoice>(with_products(ch));
}

Fp32ProductsForD::Fp32ProductsForD(int64_t D) { switch_tile_products_to(fp32_products_choice().for_D(D)); }

Fp32ProductsForD::~Fp32ProductsForD() { switch_tile_products_to(ProductsPath::own); }

}  // namespace lobench::meters
