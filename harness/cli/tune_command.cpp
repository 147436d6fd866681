// `lobench tune`: the fp32 products choice (harness/meters/products_choice.hpp) measured again on this
// machine and written to its cache, with every path's times per shape class.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "harness/cli/option_checks.hpp"
#include "harness/cli/options.hpp"
#include "harness/meters/products_choice.hpp"

namespace lobench {
namespace {

struct TuneFlags {
  int threads = cli::default_threads();
  int rounds = 7;
};

std::string samples_text(const Samples& s) {
  return fmt::format("{:7.2f} ms ({:.2f}–{:.2f})", 1e3 * s.median(), 1e3 * s.min(), 1e3 * s.max());
}

// One class's lines: each timed path's CPU time over the baseline's (ours; the library's where ours were not
// timed) and the choice, then every timed path's CPU and wall times, and what the screening left out.
void print_class(const meters::ProductsTiming& t, meters::ProductsPath chosen) {
  using meters::ProductsPath;
  using meters::path_samples;
  const ProductsPath base = t.own.seconds.empty() ? ProductsPath::library : ProductsPath::own;
  std::string ratios;
  for (ProductsPath p : meters::kProductsPaths)
    if (const Samples& s = path_samples(t, p); p != base && !s.seconds.empty() && !path_samples(t, base).seconds.empty())
      ratios += fmt::format("{}{}/{} CPU time {:.3f}", ratios.empty() ? "" : ", ", meters::products_path_word(p),
                            meters::products_path_word(base), s.median() / path_samples(t, base).median());
  fmt::print("  {} P={} D={} V={}: {} -> {}\n", t.shape_class, t.P, t.D, t.V, ratios.empty() ? "one path timed" : ratios,
             meters::products_path_word(chosen));
  for (bool wall : {false, true}) {
    std::string line = fmt::format("    {:<5}", wall ? "wall" : "CPU");
    const char* gap = " ";
    for (ProductsPath p : meters::kProductsPaths)
      if (const Samples& s = path_samples(t, p, wall); !s.seconds.empty())
        line += fmt::format("{}{} {}", gap, meters::products_path_word(p), samples_text(s)), gap = "  ";
    fmt::print("{}\n", line);
  }
  if (!t.screened.empty()) fmt::print("    ({})\n", t.screened);
}

void tune(const TuneFlags& f) {
  cli::check_threads("--threads", f.threads);
  cli::check_range("--rounds", f.rounds, 3, 1000);
  using meters::ProductsPath;
  std::string cache_error;
  const meters::ProductsChoice ch = meters::tune_fp32_products(f.threads, f.rounds, &cache_error);
  if (ch.timings.empty()) {  // nothing to choose between on this machine
    fmt::print("lobench tune: fp32 fused/chunked products: {} ({})\n", ch.products, ch.basis);
    set_command_exit_code(0);
    return;
  }
  fmt::print("lobench tune: the fused step through each path, {} threads, {} rounds interleaved; CPU time of all "
             "threads (what decides) and wall time, median (min–max):\n",
             f.threads, f.rounds);
  for (size_t i = 0; i < ch.timings.size(); ++i) print_class(ch.timings[i], i == 0 ? ch.small_d : ch.large_d);
  fmt::print("(a library replaces our kernels (oneDNN the library's, where ours were not timed) only when faster in "
             "CPU time in at least 3/4 of the rounds and by {:.0f} % at the median; of two, the faster by the median; "
             "where one path was timed, that one)\n",
             100 * meters::kMinLibraryGain);
  for (ProductsPath p : meters::kProductsPaths) {
    bool timed = false;
    for (const meters::ProductsTiming& t : ch.timings)
      timed |= !meters::path_samples(t, p).seconds.empty();
    if (timed) fmt::print("{}: {}\n", meters::products_path_word(p), meters::products_path_name(p));
  }
  fmt::print("choice: {}\n", ch.products);
  fmt::print("{}\n", cache_error.empty() ? ch.basis.substr(ch.basis.rfind("; ") + 2)
                                         : "the cache was not written: " + cache_error);
  if (const auto forced = meters::forced_products())
    fmt::print("note: LOBENCH_PRODUCTS={} is set: this process's runs would take that path instead\n", meters::products_path_word(*forced));
  set_command_exit_code(cache_error.empty() ? 0 : 1);
}

}  // namespace

void register_tune_command(CLI::App& app) {
  auto flags = std::make_shared<TuneFlags>();
  auto* cmd = app.add_subcommand(
      "tune",
      "Measure which products the fp32 fused and chunked tiles should use on this machine and cache the choice.\n"
      "Times the fused step (P = 1024; D = 128 and D = 256) through lobench's own AVX-512 micro-kernels,\n"
      "through the library (OpenBLAS, else Eigen) and through oneDNN (where built in), interleaved round by\n"
      "round: first with E in the caches (V = 2048 or 1024 per thread), then the paths within 15 % of the\n"
      "fastest there at a vocabulary whose E is twice the last-level cache (at most V = 131072), so that E\n"
      "streams from memory as at V >= 100000 (about 10 s on 2 threads). It keeps the fastest in CPU time per\n"
      "shape class (D <= 192, D > 192; a library only when it beat ours in 3/4 of the rounds and by 3 % at the\n"
      "median) and rewrites the cache under $XDG_CACHE_HOME/lobench/ (default ~/.cache/lobench/) that\n"
      "`lobench run`, check and train-seqrec read. Without it, the first run on a\n"
      "machine and build measures the same (5 rounds). LOBENCH_PRODUCTS=own|library|onednn forces a path\n"
      "instead. Exit status 1 when the cache could not be written.");
  cli::shared(cmd->add_option("--threads", flags->threads), "here of the timed fused steps, whose choice runs on any thread count then read");
  cmd->add_option("--rounds", flags->rounds, "timed rounds of each path at each shape, after one warm-up (3 to 1000)")
      ->capture_default_str();
  cmd->callback([flags] { tune(*flags); });
}

}  // namespace lobench
