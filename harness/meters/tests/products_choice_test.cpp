// The fp32 products choice (products_choice.hpp) and its cache (products_cache.hpp): the cache's round
// trip, a corrupt or unwritable cache measured again without failing, LOBENCH_PRODUCTS forcing each
// path and refusing other values, and the choice taking effect only around a step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "harness/meters/products_cache.hpp"
#include "harness/meters/products_choice.hpp"
#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/tests/scoped_env.hpp"

namespace lobench::meters {
namespace {

namespace fs = std::filesystem;

using lobench::testing::ScopedEnv;

// A fresh folder, removed with everything in it at the end of the scope.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("lobench-products-test-" + std::to_string(getpid()) + "-" +
                                               std::to_string(counter()++));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

Samples samples(std::initializer_list<double> s) { return Samples{std::vector<double>(s)}; }

CachedProducts example(const std::string& key) {
  CachedProducts c;
  c.key = key;
  c.measured_utc = "2026-12-06T05:00:00Z";
  c.threads = 2;
  c.timings.push_back({"D<=192", 1024, 4096, 128, samples({0.0152, 0.0149, 0.0160}), samples({0.0179, 0.0175, 0.0183}),
                       samples({0.0082, 0.0079, 0.0090}), samples({0.0099, 0.0095, 0.0093}), {}, {}});
  c.timings.push_back({"D>192", 1024, 2048, 256, samples({0.0201, 0.0199, 0.0210}), samples({0.0190, 0.0188, 0.0195}),
                       samples({0.0111, 0.0109, 0.0120}), samples({0.0100, 0.0098, 0.0105}), {}, {}});
  return c;
}

TEST(ProductsCache, RoundTripKeepsEverySampleAndTheKey) {
  TempDir dir;
  const std::string path = (dir.path / "sub" / "cache.txt").string();  // the folder is created
  std::string why;
  ASSERT_TRUE(write_products_cache(path, example("cpu X | build Y"), &why)) << why;
  const CacheRead r = read_products_cache(path, "cpu X | build Y");
  ASSERT_TRUE(r.products) << r.why;
  const CachedProducts& c = *r.products;
  EXPECT_EQ(c.measured_utc, "2026-12-06T05:00:00Z");
  EXPECT_EQ(c.threads, 2);
  ASSERT_EQ(c.timings.size(), 2u);
  EXPECT_EQ(c.timings[0].shape_class, "D<=192");
  EXPECT_EQ(c.timings[1].D, 256);
  EXPECT_EQ(c.timings[1].V, 2048);
  EXPECT_EQ(c.timings[0].own.seconds, example("").timings[0].own.seconds);
  EXPECT_EQ(c.timings[1].library.seconds, example("").timings[1].library.seconds);
  EXPECT_EQ(c.timings[0].library_wall.seconds, example("").timings[0].library_wall.seconds);
  EXPECT_EQ(c.timings[1].own_wall.seconds, example("").timings[1].own_wall.seconds);
  EXPECT_FALSE(c.timings[0].library_faster());
  EXPECT_TRUE(c.timings[1].library_faster());
  // Another CPU or build: a miss, not a corrupt file.
  const CacheRead other = read_products_cache(path, "cpu Z | build Y");
  EXPECT_FALSE(other.products);
  EXPECT_FALSE(other.corrupt);
  // No temporary file left beside it.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path / "sub")) ++files;
  EXPECT_EQ(files, 1);
}

// A library replaces our kernels only when faster in at least 3/4 of the paired rounds and by
// kMinLibraryGain at the median: a tie within the noise keeps ours instead of letting the noise choose.
// oneDNN's products are judged by the same rule.
TEST(ProductsCache, TheLibraryWinsOnlyAClearMajorityOfRounds) {
  ProductsTiming t;
  t.own = samples({1.0, 1.0, 1.0, 1.0});
  t.library = samples({0.9, 0.9, 0.9, 1.1});
  EXPECT_TRUE(t.library_faster());
  t.library = samples({0.9, 0.9, 1.1, 1.1});
  EXPECT_FALSE(t.library_faster());
  t.library = samples({1.1, 1.1, 1.1, 0.9});
  EXPECT_FALSE(t.library_faster());
  t.own = samples({1.0, 1.0, 1.0});
  t.library = samples({0.5, 0.5, 1.01});  // 2 of 3: not enough, however large the gain
  EXPECT_FALSE(t.library_faster());
  EXPECT_FALSE(t.faster_than_own(Samples{}));  // (oneDNN not timed)
  EXPECT_TRUE(t.faster_than_own(samples({0.9, 0.9, 0.9})));
  EXPECT_FALSE(t.faster_than_own(samples({0.985, 0.985, 0.985})));  // every round, by 1.5 %: not enough
  EXPECT_TRUE(t.faster_than_own(samples({0.965, 0.965, 0.965})));
}

// Of two libraries that beat ours, the faster by the median; one that did not never replaces ours; oneDNN
// only where it is another library here.
TEST(ProductsChoice, FastestPathTakesTheFasterOfTheLibrariesThatBeatOurs) {
  ProductsTiming t;
  t.own = samples({1.0, 1.0, 1.0, 1.0});
  t.library = samples({0.9, 0.9, 0.9, 0.9});
  t.onednn = samples({0.8, 0.8, 0.8, 0.8});
  const bool onednn_here = cpu::onednn_is_another_library();
  EXPECT_EQ(fastest_path(t), onednn_here ? ProductsPath::onednn : ProductsPath::library);
  t.onednn = samples({0.95, 0.95, 0.95, 0.95});
  EXPECT_EQ(fastest_path(t), ProductsPath::library);
  t.library = samples({1.1, 1.1, 1.1, 1.1});
  EXPECT_EQ(fastest_path(t), onednn_here ? ProductsPath::onednn : ProductsPath::own);
  t.onednn = samples({1.05, 0.9, 1.05, 1.05});  // faster in 1 of 4 rounds: ours stay
  EXPECT_EQ(fastest_path(t), ProductsPath::own);
  t.onednn = Samples{};  // not timed
  EXPECT_EQ(fastest_path(t), ProductsPath::own);
  // where our kernels do not run (no own samples), oneDNN's must beat the library's by the same rule
  t.own = Samples{};
  t.library = samples({1.0, 1.0, 1.0, 1.0});
  t.onednn = samples({0.9, 0.9, 0.9, 1.1});
  EXPECT_EQ(fastest_path(t), onednn_here ? ProductsPath::onednn : ProductsPath::library);
  t.onednn = samples({0.99, 0.99, 0.99, 0.99});  // 1 %: not enough
  EXPECT_EQ(fastest_path(t), ProductsPath::library);
}

// Every choice survives its code (what a sharded run's ranks agree on); a code that names none is refused.
TEST(ProductsChoice, EveryChoiceRoundTripsThroughItsCode) {
  const ProductsPath paths[] = {ProductsPath::library, ProductsPath::own, ProductsPath::onednn};
  for (ProductsPath small : paths)
    for (ProductsPath large : paths) {
      ProductsChoice ch;
      ch.small_d = small, ch.large_d = large;
      adopt_fp32_products(products_choice_code(ch), "test");
      const ProductsChoice& got = fp32_products_choice();
      // (oneDNN named where it is not built in: the library's products, said in the basis)
      auto here = [](ProductsPath p) { return p == ProductsPath::onednn && cpu::onednn_unavailable() ? ProductsPath::library : p; };
      EXPECT_EQ(got.small_d, here(small)) << products_path_word(small) << "/" << products_path_word(large);
      EXPECT_EQ(got.large_d, here(large)) << products_path_word(small) << "/" << products_path_word(large);
      if (here(small) != small) {
        EXPECT_NE(got.basis.find("oneDNN is not built in here"), std::string::npos) << got.basis;
      }
    }
  for (int64_t bad : {int64_t(3), int64_t(3) << 2, int64_t(16), int64_t(-1)})
    EXPECT_THROW(adopt_fp32_products(bad, "test"), std::invalid_argument) << bad;
  adopt_fp32_products(int64_t(ProductsPath::own) | int64_t(ProductsPath::own) << 2, "test: ours");
}

// The cache keeps oneDNN's samples where they were timed and reads "none" where they were not; one of its
// two lines timed and the other not is a corrupt file.
TEST(ProductsCache, OnednnSamplesRoundTrip) {
  TempDir dir;
  const std::string path = (dir.path / "cache.txt").string();
  CachedProducts c = example("k");
  c.timings[0].onednn = samples({0.0120, 0.0118, 0.0125});  // beats ours (0.0152 ...) and the library
  c.timings[0].onednn_wall = samples({0.0062, 0.0060, 0.0064});
  std::string why;
  ASSERT_TRUE(write_products_cache(path, c, &why)) << why;
  const CacheRead r = read_products_cache(path, "k");
  ASSERT_TRUE(r.products) << r.why;
  EXPECT_EQ(r.products->timings[0].onednn.seconds, c.timings[0].onednn.seconds);
  EXPECT_EQ(r.products->timings[0].onednn_wall.seconds, c.timings[0].onednn_wall.seconds);
  EXPECT_TRUE(r.products->timings[1].onednn.seconds.empty());
  EXPECT_TRUE(r.products->timings[0].faster_than_own(r.products->timings[0].onednn));
  EXPECT_FALSE(r.products->timings[1].faster_than_own(r.products->timings[1].onednn));
  // one of oneDNN's two lines timed, the other not: corrupt
  std::string text;
  {
    std::ifstream f(path);
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  const size_t at = text.find("onednn_wall_seconds: 0.006");
  ASSERT_NE(at, std::string::npos) << text;
  std::ofstream(path, std::ios::trunc) << text.substr(0, at) << "onednn_wall_seconds: none" << text.substr(text.find('\n', at));
  EXPECT_TRUE(read_products_cache(path, "k").corrupt);
  // a class measured without our kernels (a CPU without AVX-512): "none" for ours, read back empty
  c.timings[1].own = c.timings[1].own_wall = Samples{};
  ASSERT_TRUE(write_products_cache(path, c, &why)) << why;
  const CacheRead without_own = read_products_cache(path, "k");
  ASSERT_TRUE(without_own.products) << without_own.why;
  EXPECT_TRUE(without_own.products->timings[1].own.seconds.empty());
  EXPECT_EQ(without_own.products->timings[1].library.seconds, c.timings[1].library.seconds);
}

TEST(ProductsCache, MalformedFilesAreCorruptNotMisses) {
  TempDir dir;
  const std::string path = (dir.path / "cache.txt").string();
  std::string why;
  ASSERT_TRUE(write_products_cache(path, example("k"), &why)) << why;
  std::string good;
  {
    std::ifstream f(path);
    good.assign(std::istreambuf_iterator<char>(f), {});
  }
  const std::string bad[] = {"", "garbage\n", good.substr(0, good.size() / 2),
                             good.substr(0, good.find("own_cpu_seconds: ") + 17) + "0.01 nan 0.02\n" +
                                 good.substr(good.find("library_cpu_seconds")),
                             good.substr(0, good.find("own_wall_seconds: ") + 18) + "0.01 0.02\n" +
                                 good.substr(good.find("library_wall_seconds"))};  // one sample short
  for (const std::string& text : bad) {
    std::ofstream(path, std::ios::trunc) << text;
    const CacheRead r = read_products_cache(path, "k");
    EXPECT_FALSE(r.products) << text;
    EXPECT_TRUE(r.corrupt) << text;
  }
  EXPECT_FALSE(read_products_cache((dir.path / "none.txt").string(), "k").corrupt);  // absent: a miss
}

// A run without our kernels (LOBENCH_ISA below avx512) has a cache of its own: its choice is between the
// libraries only, and it must neither read nor overwrite the choice of a run where our kernels run.
TEST(ProductsCache, KeyOfARunWithoutOurKernelsDiffers) {
  if (!cpu::own_tile_kernels_available()) GTEST_SKIP() << "our kernels do not run here anyway";
  const std::string with_ours = products_cache_key();
  struct Avx2 {
    Avx2() { cpu::set_active_simd_path(cpu::SimdPath::avx2); }
    ~Avx2() { cpu::set_active_simd_path(std::nullopt); }
  } avx2;
  ASSERT_FALSE(cpu::own_tile_kernels_available());
  EXPECT_NE(products_cache_key(), with_ours);
  EXPECT_NE(products_cache_key().find("no own kernels"), std::string::npos) << products_cache_key();
}

TEST(ProductsCache, PathFollowsXdgCacheHomeAndHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/some/cache");
    const auto p = products_cache_path("key");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->rfind("/some/cache/lobench/fp32-products-", 0), 0u) << *p;
    EXPECT_NE(*p, *products_cache_path("another key"));
  }
  ScopedEnv xdg("XDG_CACHE_HOME", "");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(products_cache_path("key")->rfind("/home/someone/.cache/lobench/", 0), 0u);
}

TEST(ProductsChoice, EnvironmentForcesEitherPathAndRefusesOthers) {
  {
    ScopedEnv env("LOBENCH_PRODUCTS", "library");
    const ProductsChoice ch = decide_fp32_products(1);
    EXPECT_EQ(ch.small_d, ProductsPath::library);
    EXPECT_EQ(ch.large_d, ProductsPath::library);
    EXPECT_EQ(ch.basis, "LOBENCH_PRODUCTS=library");
    EXPECT_EQ(ch.products.rfind("library (", 0), 0u) << ch.products;
    EXPECT_TRUE(ch.timings.empty());
  }
  {
    ScopedEnv env("LOBENCH_PRODUCTS", "own");
    if (cpu::own_tile_kernels_available()) {
      const ProductsChoice ch = decide_fp32_products(1);
      EXPECT_EQ(ch.for_D(64), ProductsPath::own);
      EXPECT_EQ(ch.for_D(1024), ProductsPath::own);
      EXPECT_EQ(ch.products, "own AVX-512 14x32 micro-kernels");
    } else {
      EXPECT_THROW(forced_products(), std::invalid_argument);  // they cannot run here
    }
  }
  {
    ScopedEnv env("LOBENCH_PRODUCTS", "onednn");
    if (auto why = cpu::onednn_unavailable()) {
      EXPECT_THROW(forced_products(), std::invalid_argument);  // built without it
    } else {
      const ProductsChoice ch = decide_fp32_products(1);
      EXPECT_EQ(ch.small_d, ProductsPath::onednn);
      EXPECT_EQ(ch.large_d, ProductsPath::onednn);
      EXPECT_EQ(ch.basis, "LOBENCH_PRODUCTS=onednn");
      EXPECT_EQ(ch.products.rfind("oneDNN ", 0), 0u) << ch.products;
    }
  }
  for (const char* bad : {"bogus", "OWN", "own ", "libraries", "oneDNN"}) {
    ScopedEnv env("LOBENCH_PRODUCTS", bad);
    try {
      forced_products();
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("LOBENCH_PRODUCTS=") + bad), std::string::npos) << e.what();
    }
  }
  for (const char* automatic : {"auto", ""}) {
    ScopedEnv env("LOBENCH_PRODUCTS", automatic);
    EXPECT_FALSE(forced_products()) << automatic;
  }
}

// The screening keeps the paths within kScreenMargin of the fastest (the fastest always), and says how
// much slower the others were.
TEST(ProductsChoice, ScreeningKeepsThePathsCloseToTheFastest) {
  ProductsTiming t;
  t.own = samples({0.0100, 0.0102, 0.0101});
  t.onednn = samples({0.0096, 0.0097, 0.0110});      // the fastest by the median
  t.library = samples({0.0180, 0.0181, 0.0175});     // 1.86x: out
  const std::vector<ProductsPath> all{ProductsPath::library, ProductsPath::own, ProductsPath::onednn};
  std::string dropped;
  EXPECT_EQ(paths_close_to_the_fastest(t, all, &dropped), (std::vector<ProductsPath>{ProductsPath::own, ProductsPath::onednn}));
  EXPECT_EQ(dropped, "library 1.86x the fastest");
  t.own = samples({0.0113, 0.0112, 0.0110});  // 1.155x the fastest: out too, one path left
  dropped.clear();
  EXPECT_EQ(paths_close_to_the_fastest(t, all, &dropped), (std::vector<ProductsPath>{ProductsPath::onednn}));
  EXPECT_EQ(dropped, "library 1.86x the fastest, own 1.15x the fastest");
  t.own = samples({0.0111, 0.0111, 0.0110});  // 1.144x: in
  dropped.clear();
  EXPECT_EQ(paths_close_to_the_fastest(t, all, &dropped).size(), 2u);
}

// A class where the screening left one path is that path's, whatever the rounds of the others said: it is
// never a path the basis calls too slow (a library 1.25x faster in the median but in 3 of 5 rounds only
// would otherwise lose to ours by the 3/4 rule).
TEST(ProductsChoice, OnePathTimedIsTheChoice) {
  ProductsTiming t;
  t.own = t.own_wall = samples({10, 10, 10, 10, 10});
  t.library = t.library_wall = samples({8, 8, 8, 10.5, 10.5});
  t.onednn = t.onednn_wall = samples({15, 15, 15, 15, 15});
  const std::vector<ProductsPath> all{ProductsPath::library, ProductsPath::own, ProductsPath::onednn};
  std::string dropped;
  const std::vector<ProductsPath> close = paths_close_to_the_fastest(t, all, &dropped);
  ASSERT_EQ(close, std::vector<ProductsPath>{ProductsPath::library});
  const ProductsTiming kept = only_paths(t, close);
  EXPECT_TRUE(kept.own.seconds.empty() && kept.own_wall.seconds.empty() && kept.onednn.seconds.empty());
  EXPECT_EQ(kept.library.seconds, t.library.seconds);
  EXPECT_EQ(fastest_path(kept), ProductsPath::library);
  for (ProductsPath only : all) EXPECT_EQ(fastest_path(only_paths(t, {only})), only) << products_path_word(only);
  // a screening whose medians are no time (an unreadable clock) keeps every path
  ProductsTiming zero;
  zero.own = zero.library = zero.onednn = samples({0.0});
  dropped.clear();
  EXPECT_EQ(paths_close_to_the_fastest(zero, all, &dropped), all);
  EXPECT_EQ(dropped, "");
}

// A class whose streaming timing left a path out (library "none", the screening's words kept) reads back
// whole, and its choice is made among the paths timed; a class with no path timed is corrupt.
TEST(ProductsCache, AScreenedClassRoundTrips) {
  TempDir dir;
  const std::string path = (dir.path / "c.txt").string();
  CachedProducts c = example("k");
  ProductsTiming& t = c.timings[1];
  t.library = t.library_wall = Samples{};
  t.onednn = samples({0.0180, 0.0181, 0.0190}), t.onednn_wall = samples({0.0090, 0.0091, 0.0095});
  t.screened = "not timed here, more than 15 % slower at V=2048: library 1.80x the fastest";
  std::string why;
  ASSERT_TRUE(write_products_cache(path, c, &why)) << why;
  const CacheRead r = read_products_cache(path, "k");
  ASSERT_TRUE(r.products) << r.why;
  const ProductsTiming& back = r.products->timings[1];
  EXPECT_TRUE(back.library.seconds.empty() && back.library_wall.seconds.empty());
  EXPECT_EQ(back.onednn.seconds, t.onednn.seconds);
  EXPECT_EQ(back.screened, t.screened);
  EXPECT_EQ(r.products->timings[0].screened, "");
  if (cpu::own_tile_kernels_available() && cpu::onednn_is_another_library()) {
    EXPECT_EQ(fastest_path(back), ProductsPath::onednn);  // 0.0181 against ours 0.0201: 3/3 rounds, 10 %
  }
  t.own = t.own_wall = t.onednn = t.onednn_wall = Samples{};
  ASSERT_TRUE(write_products_cache(path, c, &why)) << why;
  EXPECT_TRUE(read_products_cache(path, "k").corrupt);
}

// The timed vocabulary makes E (V·D floats) at least twice the last-level cache, rounded up to a
// multiple of 1024, within its bounds: every thread some tiles, and no more than kMaxTimingVocabulary.
TEST(ProductsChoice, TimedVocabularyStreamsEFromMemory) {
  constexpr int64_t MiB = 1 << 20;
  EXPECT_EQ(products_timing_vocabulary(128, 2, 32 * MiB), 131072);  // the Zen 5: E of 64 MiB at D = 128
  EXPECT_EQ(products_timing_vocabulary(256, 2, 32 * MiB), 65536);   // and at D = 256
  for (int64_t D : {128, 256})
    for (int64_t l3 : {int64_t(3 * MiB), 8 * MiB + 4096, 32 * MiB}) {
      const int64_t V = products_timing_vocabulary(D, 2, l3);
      EXPECT_GE(V * D * 4, 2 * l3) << D << " " << l3;
      EXPECT_LT((V - 1024) * D * 4, 2 * l3) << D << " " << l3;  // the least such multiple
      EXPECT_EQ(V % 1024, 0);
    }
  // a VM's socket-sized L3 (or sysconf's 320 MiB): capped; many threads: every thread some tiles
  EXPECT_EQ(products_timing_vocabulary(128, 2, 320 * MiB), kMaxTimingVocabulary);
  EXPECT_EQ(products_timing_vocabulary(256, 2, 0), 2 * 1024);
  EXPECT_EQ(products_timing_vocabulary(128, 96, 32 * MiB), 96 * 2048);
}

// A miss measures and writes the cache; the next decision reads it; a corrupt file is measured again
// and rewritten; an unwritable cache still gives a measured choice.
TEST(ProductsChoice, CacheMissCorruptAndUnwritableAllMeasureAndGoOn) {
  if (!cpu::own_tile_kernels_available()) GTEST_SKIP() << "no choice to make without the micro-kernels";
  ScopedEnv forced("LOBENCH_PRODUCTS", nullptr);
  TempDir dir;
  ScopedEnv xdg("XDG_CACHE_HOME", dir.path.c_str());
  const std::string path = *products_cache_path(products_cache_key());

  // (the cache-resident shapes: this tests the plumbing, in a second instead of a streaming timing's ten)
  const ProductsChoice first = decide_fp32_products(1, TimingShapes::cache_resident);
  EXPECT_EQ(first.basis.rfind("measured now on 1 thread", 0), 0u) << first.basis;
  EXPECT_NE(first.basis.find("cached in " + path), std::string::npos) << first.basis;
  ASSERT_EQ(first.timings.size(), 2u);
  EXPECT_EQ(first.timings[0].D, 128);
  EXPECT_EQ(first.timings[1].D, 256);
  for (int i = 0; i < 2; ++i) {
    const ProductsTiming& t = first.timings[size_t(i)];
    const ProductsPath chosen = i == 0 ? first.small_d : first.large_d;
    // oneDNN timed where it is another library here; the choice is the timing's fastest path
    EXPECT_EQ(t.onednn.seconds.size(), cpu::onednn_is_another_library() ? t.own.seconds.size() : 0u);
    EXPECT_EQ(chosen, fastest_path(t));
  }

  const ProductsChoice second = decide_fp32_products(1, TimingShapes::cache_resident);
  EXPECT_EQ(second.basis.rfind("from cache " + path, 0), 0u) << second.basis;
  EXPECT_EQ(products_choice_code(second), products_choice_code(first));
  EXPECT_EQ(second.timings[1].own.seconds, first.timings[1].own.seconds);

  std::ofstream(path, std::ios::trunc) << "lobench fp32 products cache, version 1\nkey: ";
  const ProductsChoice third = decide_fp32_products(1, TimingShapes::cache_resident);
  EXPECT_EQ(third.basis.rfind("measured now", 0), 0u) << third.basis;
  EXPECT_TRUE(read_products_cache(path, products_cache_key()).products);  // rewritten whole

  const std::string blocked = (dir.path / "a-file").string();
  std::ofstream(blocked) << "not a folder";
  ScopedEnv xdg_file("XDG_CACHE_HOME", blocked.c_str());
  const ProductsChoice fourth = decide_fp32_products(1, TimingShapes::cache_resident);
  EXPECT_NE(fourth.basis.find("not cached: cannot create"), std::string::npos) << fourth.basis;
  EXPECT_EQ(fourth.timings.size(), 2u);
}

// Processes that miss together measure one at a time: one that finds the lock held waits, then reads the
// choice the holder wrote instead of timing again (here the holder is a thread with its own lock file
// description, which flock treats as another process would be).
TEST(ProductsChoice, AMissWaitsForTheMeasurementInProgressAndReadsIt) {
  if (!cpu::own_tile_kernels_available()) GTEST_SKIP() << "no choice to make without the micro-kernels";
  ScopedEnv forced("LOBENCH_PRODUCTS", nullptr);
  TempDir dir;
  ScopedEnv xdg("XDG_CACHE_HOME", dir.path.c_str());
  const std::string key = products_cache_key(), path = *products_cache_path(key);
  std::atomic<int> locked{0};  // 1: held; -1: could not be (the test then fails instead of waiting)
  std::thread holder([&] {
    MeasurementLock lock(path, [](const std::string&) {});
    locked = lock.held() ? 1 : -1;
    if (!lock.held()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    std::string why;
    ASSERT_TRUE(write_products_cache(path, example(key), &why)) << why;
  });
  while (locked == 0) std::this_thread::yield();
  if (locked < 0) {
    holder.join();
    FAIL() << "the holder could not take the lock " << path << ".lock";
  }
  const auto t0 = std::chrono::steady_clock::now();
  const ProductsChoice ch = decide_fp32_products(1, TimingShapes::cache_resident);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  holder.join();
  EXPECT_EQ(ch.basis.rfind("from cache " + path, 0), 0u) << ch.basis;  // the holder's, not measured again
  EXPECT_EQ(ch.timings.front().own.seconds, example(key).timings.front().own.seconds);
  EXPECT_GE(waited, 0.2);
}

// A holder that never lets go delays a miss by the wait's bound at most: the lock is then not held, and the
// process measures unlocked.
TEST(ProductsCache, TheMeasurementLockWaitsABoundedTime) {
  TempDir dir;
  const std::string path = (dir.path / "lobench" / "fp32-products-x.txt").string();
  MeasurementLock holder(path, [](const std::string&) {});
  ASSERT_TRUE(holder.held());
  int told = 0;
  const auto t0 = std::chrono::steady_clock::now();
  MeasurementLock late(path, [&](const std::string& lock_path) { told += lock_path == path + ".lock"; }, 0.2);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(late.held());
  EXPECT_EQ(told, 1);
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 5.0);
}

// The choice holds only while a guard is alive: the yardstick's own SGEMM measures the kernels outside.
TEST(ProductsChoice, GuardAppliesTheChoiceOfTheShapeClassOnly) {
  if (!cpu::own_tile_kernels_available()) GTEST_SKIP() << "no micro-kernels to switch";
  adopt_fp32_products(1, "test: own at D <= 192 only");
  EXPECT_EQ(fp32_products_choice().products,
            "own AVX-512 14x32 micro-kernels at D <= 192; " + products_path_name(ProductsPath::library) + " at D > 192");
  {
    const Fp32ProductsForD small(128);
    EXPECT_NE(cpu::own_tile_kernels(), nullptr);
  }
  {
    const Fp32ProductsForD large(256);
    EXPECT_EQ(cpu::own_tile_kernels(), nullptr);
  }
  EXPECT_NE(cpu::own_tile_kernels(), nullptr);  // enabled again after the step
  adopt_fp32_products(int64_t(ProductsPath::own) << 2, "test: own at D > 192 only");
  {
    const Fp32ProductsForD boundary(192);
    EXPECT_EQ(cpu::own_tile_kernels(), nullptr);
  }
  EXPECT_NE(cpu::own_tile_kernels(), nullptr);
  // oneDNN's products: the tiles' library for the guard's lifetime, the process's library after it
  if (!cpu::onednn_unavailable()) {
    adopt_fp32_products(int64_t(ProductsPath::onednn) | int64_t(ProductsPath::own) << 2, "test: oneDNN at D <= 192");
    EXPECT_EQ(products_choice_code(fp32_products_choice()), 2 | 1 << 2);
    {
      const Fp32ProductsForD small(64);
      EXPECT_EQ(cpu::own_tile_kernels(), nullptr);
      EXPECT_EQ(cpu::tile_products_library(), cpu::GemmLibrary::onednn);
    }
    EXPECT_EQ(cpu::tile_products_library(), cpu::sgemm_library());
    EXPECT_NE(cpu::own_tile_kernels(), nullptr);
  }
}

}  // namespace
}  // namespace lobench::meters
