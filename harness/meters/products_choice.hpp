// Which products the fp32 tiled variants (fused, chunked) make their tiles with on this CPU: lobench's own
// AVX-512 micro-kernels (variants/cpu/fused_tile.hpp), the library's (cpu::sgemm: OpenBLAS, else Eigen) or
// oneDNN's (where built in: variants/cpu/onednn.hpp).
// Measured, not assumed: the 14 × 32 register blocks that win on the Zen 5 and the model-167 Xeon lose to
// OpenBLAS's SkylakeX kernels on a model-207 Xeon (issue 44: fused at 0.69–0.88 of the best SGEMM there).
//
// Decided once per process, before any variant runs: LOBENCH_PRODUCTS=own|library|onednn forces a path;
// otherwise (auto, the default) the cache of this CPU and build (products_cache.hpp) answers, and on a
// miss every path is timed now on the fused step at one shape of each class (P = 1024; D = 128 and
// D = 256; first with E in the caches, then the paths within kScreenMargin of the fastest there at V from
// products_timing_vocabulary: E streams from memory, as at the shapes the choice is for; about 10 s on 2
// threads of a Zen 5), interleaved by the
// project's one timing rule (time_interleaved), and the fastest in process CPU time kept per class,
// D <= 192 and D > 192 (ProductsTiming::faster_than_own: a library only when it beat ours in at least
// 3/4 of the rounds and by kMinLibraryGain at the median; of two that did, the faster by the median). CPU time, because on a shared machine a step's wall time is mostly the other jobs' (wall
// medians of the two paths swapped order between runs minutes apart here; their CPU times did not). A cache that is corrupt, unreadable or unwritable never fails a run: it is measured
// again, one warning says so, and the run goes on.
//
// The choice changes the last bits of fused's and chunked's results (another summation order inside
// each product), never their dependence on threads: for a given choice they are bit-identical at any
// thread count. So it is recorded in every run file (fp32_products, fp32_products_basis).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/meters/products_cache.hpp"

namespace lobench::meters {

// (The values are the choice's code, products_choice_code.)
enum class ProductsPath { library = 0, own = 1, onednn = 2 };
// Every path, in the order they are shown.
inline constexpr ProductsPath kProductsPaths[] = {ProductsPath::own, ProductsPath::library, ProductsPath::onednn};

// The largest D of the first shape class.
constexpr int64_t kProductsClassMaxD = 192;

// The vocabulary of a class's timed step at width D on `threads` threads, given the last-level cache's
// size in bytes: the least multiple of 1024 whose E (V·D floats) is at least twice the cache, so that E
// streams from memory as it does at V ≥ 100000 (a timing with E in the caches had chosen oneDNN's
// products at D = 256 on a Zen 5, faster there, where ours were the faster at V = 100000); at
// most kMaxTimingVocabulary (a VM may report a whole socket's L3 or more: the cost of a miss stays a
// few seconds a class), unless the cache-resident shape's V below is larger (every thread some tiles):
// then that V, and the screening's timing is the class's.
constexpr int64_t kMaxTimingVocabulary = 131072;
int64_t products_timing_vocabulary(int64_t D, int threads, int64_t last_level_cache_bytes);

// What a measurement times: `streaming` (every real choice: products_timing_vocabulary) or
// `cache_resident` (V = 2048 · threads at D = 128, 1024 · threads at D = 256: E in the caches, about a
// second on 2 threads; for tests of the choice's plumbing, whose outcome they do not rely on).
enum class TimingShapes { streaming, cache_resident };

// A path's CPU (or wall) seconds in a class's timing.
Samples& path_samples(ProductsTiming& t, ProductsPath p, bool wall = false);
const Samples& path_samples(const ProductsTiming& t, ProductsPath p, bool wall = false);

// The timing with the samples of every path not in `kept` removed (what a screened class keeps).
ProductsTiming only_paths(ProductsTiming t, const std::vector<ProductsPath>& kept);

// The screening before a streaming timing: of `paths` (each timed in `t`), those whose CPU-time median is
// within kScreenMargin of the fastest's, in their order; each other one is added to *dropped as
// "library 1.82x the fastest" (", "-separated). Where the fastest median is not a positive time, every path.
std::vector<ProductsPath> paths_close_to_the_fastest(const ProductsTiming& t, const std::vector<ProductsPath>& paths,
                                                     std::string* dropped);

// The path a class's timing chooses: the one path timed, where only one was; else ours, unless a library
// beat them (ProductsTiming::faster_than_own; oneDNN only where it is another library here); of two that
// did, the one with the lower median. Where ours were not timed (they do not run here, or the screening left
// them out), the library's, unless oneDNN's beat them.
ProductsPath fastest_path(const ProductsTiming& t);

// "own", "library", "onednn": the path as LOBENCH_PRODUCTS names it.
const char* products_path_word(ProductsPath p);

// LOBENCH_PRODUCTS: the path it forces, or nothing for auto (unset, empty or "auto"). Throws
// std::invalid_argument naming the variable for any other value, for `own` where the micro-kernels
// do not run (no AVX-512 in this CPU or build, or LOBENCH_ISA below avx512), and for `onednn` where
// lobench was built without oneDNN.
std::optional<ProductsPath> forced_products();

struct ProductsChoice {
  ProductsPath small_d = ProductsPath::library;  // D <= kProductsClassMaxD
  ProductsPath large_d = ProductsPath::library;  // D > kProductsClassMaxD
  std::string products;  // what they are (the run files' fp32_products)
  std::string basis;     // why (fp32_products_basis): forced, measured now, from the cache, or no choice here
  std::vector<ProductsTiming> timings;  // the measurement the choice rests on (now or cached), else empty
  ProductsPath for_D(int64_t D) const { return D <= kProductsClassMaxD ? small_d : large_d; }
};

// The choice of this process: made on the first call (as above; a warning about the cache at most once,
// on stderr), the same on every later call.
const ProductsChoice& fp32_products_choice();

// The decision itself, made afresh (the environment and cache read now): what the first call of
// fp32_products_choice() keeps. `threads`: of the measurement on a miss, which says on stderr that it runs.
ProductsChoice decide_fp32_products(int threads, TimingShapes shapes = TimingShapes::streaming);

// `lobench tune`: every path timed now (`reps` timed rounds after one warm-up) on `threads` threads and
// the cache rewritten; returns what an auto run will now choose. *cache_error is set where the cache
// could not be written (the choice is still returned).
ProductsChoice tune_fp32_products(int threads, int reps, std::string* cache_error);

// The choice as a number (bits 0-1: the ProductsPath at D <= 192; bits 2-3: above), and this process's
// choice replaced by the one a code names (a sharded run's ranks take the primary's: they must compute
// alike). A code that names no choice throws std::invalid_argument; oneDNN named where it is not built in
// becomes the library's products, said in the basis.
int64_t products_choice_code(const ProductsChoice& c);
void adopt_fp32_products(int64_t code, const std::string& basis);

// For its lifetime, the fused and chunked tiles of steps of width D take the path this process chose for
// D; afterwards the micro-kernels are enabled again and the tiles' library is the process's, as every
// other caller (the yardstick's own SGEMM) expects. Made around CPU steps, outside any parallel region,
// never inside a variant.
class Fp32ProductsForD {
 public:
  explicit Fp32ProductsForD(int64_t D);
  ~Fp32ProductsForD();
  Fp32ProductsForD(const Fp32ProductsForD&) = delete;
  Fp32ProductsForD& operator=(const Fp32ProductsForD&) = delete;
};

// The paths' names: "own AVX-512 14x32 micro-kernels", "library (OpenBLAS 0.3.21 ...)", "oneDNN 2.6.3 (...) (dnnl_sgemm, ...)".
std::string products_path_name(ProductsPath p);

}  // namespace lobench::meters
