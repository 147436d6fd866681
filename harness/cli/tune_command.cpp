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
  for (size_t i = 0; i < ch.timings.size(); ++i) {
    const meters::ProductsTiming& t = ch.timings[i];
    const bool own = !t.own.seconds.empty(), onednn = !t.onednn.seconds.empty();
    // (ratios over our kernels' time; over the library's where ours do not run)
    const Samples& base = own ? t.own : t.library;
    const char* base_word = own ? "own" : "library";
    std::string ratios = own ? fmt::format("library/own CPU time {:.3f}", t.library.median() / t.own.median()) : "";
    if (onednn)
      ratios += fmt::format("{}onednn/{} {:.3f}", own ? ", " : "CPU time ", base_word, t.onednn.median() / base.median());
    fmt::print("  {} P={} D={} V={}: {} -> {}\n", t.shape_class, t.P, t.D, t.V, ratios,
               meters::products_path_word(i == 0 ? ch.small_d : ch.large_d));
    fmt::print("    CPU   {}library {}{}\n", own ? "own " + samples_text(t.own) + "  " : "", samples_text(t.library),
               onednn ? "  onednn " + samples_text(t.onednn) : "");
    fmt::print("    wall  {}library {}{}\n", own ? "own " + samples_text(t.own_wall) + "  " : "",
               samples_text(t.library_wall), onednn ? "  onednn " + samples_text(t.onednn_wall) : "");
  }
  fmt::print("(a library replaces our kernels (oneDNN the library's, where ours do not run) only when faster in CPU "
             "time in at least 3/4 of the rounds and by {:.0f} % at the median; of two, the faster by the median)\n",
             100 * meters::kMinLibraryGain);
  if (!ch.timings.front().own.seconds.empty()) fmt::print("own: {}\n", meters::products_path_name(ProductsPath::own));
  fmt::print("library: {}\n", meters::products_path_name(ProductsPath::library));
  if (!ch.timings.front().onednn.seconds.empty())
    fmt::print("onednn: {}\n", meters::products_path_name(ProductsPath::onednn));
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
      "Times the fused step (P = 1024; D = 128 and D = 256, at a vocabulary whose E is twice the last-level\n"
      "cache, at most V = 131072, so that E streams from memory as at V >= 100000; about 15 s on 2 threads)\n"
      "through lobench's own AVX-512 micro-kernels,\n"
      "through the library (OpenBLAS, else Eigen) and through oneDNN (where built in), interleaved round by\n"
      "round, keeps the fastest in CPU time per shape class (D <= 192, D > 192; a library only when it beat\n"
      "ours in 3/4 of the rounds and by 3 % at the median) and rewrites the cache under $XDG_CACHE_HOME/lobench/ (default\n"
      "~/.cache/lobench/) that `lobench run`, check and train-seqrec read. Without it, the first run on a\n"
      "machine and build measures the same (5 rounds). LOBENCH_PRODUCTS=own|library|onednn forces a path\n"
      "instead. Exit status 1 when the cache could not be written.");
  cli::shared(cmd->add_option("--threads", flags->threads), "here of the timed fused steps, whose choice runs on any thread count then read");
  cmd->add_option("--rounds", flags->rounds, "timed rounds of each path at each shape, after one warm-up (3 to 1000)")
      ->capture_default_str();
  cmd->callback([flags] { tune(*flags); });
}

}  // namespace lobench
