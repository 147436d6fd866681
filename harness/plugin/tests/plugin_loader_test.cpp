// The plug-in loader: the example plug-in loads, is listed with its origin and matches the float64
// reference; every way a library can be wrong is refused with the file and the problem named, and
// leaves the registry as it was.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "harness/plugin/plugin_loader.hpp"
#include "variants/tests/ragged_cases.hpp"
#include "variants/tests/reference_checks.hpp"

namespace lobench {
namespace {

std::string broken(const std::string& kind) { return std::string(BROKEN_PLUGIN_DIR) + "/" + kind + "_plugin.so"; }

// The message of the std::invalid_argument that loading `path` throws ("" if it loads).
std::string refusal(const std::string& path, Registry& registry = Registry::instance()) {
  try {
    plugin::load_plugin(path, registry);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PluginLoader, TheExampleLoadsWithItsOriginOnce) {
  Registry& r = Registry::instance();
  ASSERT_NE(r.find("fused"), nullptr);
  EXPECT_EQ(r.origin(*r.find("fused")), "built-in");
  plugin::load_plugin(NAIVE_LOOP_PLUGIN);
  const Variant* v = r.find("naive_loop");
  ASSERT_NE(v, nullptr);
  const std::string origin = r.origin(*v);
  EXPECT_EQ(origin.rfind("plugin " + std::filesystem::canonical(NAIVE_LOOP_PLUGIN).string() + " sha256=", 0), 0u) << origin;
  EXPECT_NE(origin.find(" abi=3"), std::string::npos) << origin;
  const size_t count = r.all().size();
  plugin::load_plugin(NAIVE_LOOP_PLUGIN);  // the same library again (e.g. --plugin and LOBENCH_PLUGIN_PATH)
  EXPECT_EQ(r.all().size(), count);
  EXPECT_EQ(r.origins(), std::vector<std::string>{origin});
}

TEST(PluginLoader, TheExampleMatchesTheReferenceOnRaggedCases) {
  plugin::load_plugin(NAIVE_LOOP_PLUGIN);
  const Variant* v = Registry::instance().find("naive_loop");
  ASSERT_NE(v, nullptr);
  int checked = 0;
  for (const auto& c : testing::ragged_cases(12)) {
    if (v->skip_reason(c.shape, c.options)) continue;
    const StepData d = make_synthetic(c.shape, c.spec);
    const StepInputs in = d.view();
    CountingAllocator ref_alloc, alloc;
    cpu::ReferenceResult ref;
    cpu::reference_step(in, ref, ref_alloc, 1);
    StepOutputs out;
    out.resize(in.P, in.V, in.D);
    RunContext ctx{alloc, c.options};
    v->run(in, out, ctx);
    testing::expect_matches_reference(out, ref, in, "naive_loop on " + c.label());
    EXPECT_EQ(alloc.peak_bytes(), v->predicted_working_bytes(c.shape, c.options)) << c.label();
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

struct BrokenCase {
  std::string kind, reason;
};

TEST(PluginLoader, EveryBrokenLibraryIsRefusedNamingTheFileAndNothingIsRegistered) {
  const std::vector<BrokenCase> cases = {
      {"wrong_abi", "built for plug-in ABI 999, but this lobench loads ABI 3"},
      {"no_entry_point", "no lobench_register_v1 entry point"},
      {"duplicate_name", "variant cpu/fused is already registered (built-in)"},
      {"throws", "its registration failed: no device of the kind this plug-in needs"},
      {"registers_nothing", "it registers no variant"},
      {"unresolved_symbol", "cannot be loaded: "},
      {"throws_non_std", "its registration failed: it threw an exception that is not a std::exception"},
      {"bad_name", "variant name 'vendor/kernel:v2' has the character '/'"},
  };
  Registry& r = Registry::instance();
  for (const auto& c : cases) {
    const size_t before = r.all().size();
    const std::string why = refusal(broken(c.kind));
    EXPECT_NE(why.find("plug-in " + broken(c.kind) + ": "), std::string::npos) << c.kind << ": " << why;
    EXPECT_NE(why.find(c.reason), std::string::npos) << c.kind << ": " << why;
    EXPECT_EQ(r.all().size(), before) << c.kind;
  }
  EXPECT_EQ(r.find("plugin_only"), nullptr);  // the duplicate's other variant was not kept
  EXPECT_EQ(r.find("throws_after_adding"), nullptr);
  EXPECT_NE(refusal(broken("unresolved_symbol")).find("lobench_test_symbol_nobody_defines"), std::string::npos);
}

TEST(PluginLoader, MissingFilesFoldersAndNonLibrariesAreRefused) {
  const auto dir = std::filesystem::temp_directory_path() / ("lobench_plugin_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string text = (dir / "notes.so").string();
  std::ofstream(text) << "not a shared library\n";
  EXPECT_NE(refusal((dir / "absent.so").string()).find("absent.so: no such file"), std::string::npos);
  EXPECT_NE(refusal(dir.string()).find("a folder, not a shared library"), std::string::npos);
  const std::string why = refusal(text);
  EXPECT_NE(why.find("plug-in " + text + ": cannot be loaded: "), std::string::npos) << why;
  std::filesystem::remove_all(dir);
}

// dlopen of a FIFO blocks until a writer comes; a symlink loop is no "no such file".
TEST(PluginLoader, FifosAndSymlinkLoopsAreRefusedBeforeDlopen) {
  const auto dir = std::filesystem::temp_directory_path() / ("lobench_plugin_fifo_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "folder");
  const std::string fifo = (dir / "folder" / "fifo.so").string(), loop = (dir / "loop.so").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_symlink(loop, loop);
  EXPECT_NE(refusal(fifo).find("plug-in " + fifo + ": a FIFO, not a shared library"), std::string::npos) << refusal(fifo);
  EXPECT_NE(refusal(loop).find("plug-in " + loop + ": a symlink loop"), std::string::npos) << refusal(loop);
  for (const std::string& entry : {(dir / "folder").string(), loop}) {  // through the variable, a folder or a file
    ::setenv("LOBENCH_PLUGIN_PATH", entry.c_str(), 1);
    try {
      plugin::load_environment_plugins();
      ADD_FAILURE() << entry << " loaded";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("a FIFO") != std::string::npos || what.find("a symlink loop") != std::string::npos) << what;
    }
  }
  ::unsetenv("LOBENCH_PLUGIN_PATH");
  std::filesystem::remove_all(dir);
}

// A variant name the run file holds whole and --variants can name; everything else refused, not cut.
TEST(Registry, VariantNamesAreCheckedAtRegistration) {
  EXPECT_EQ(invalid_variant_name("naive_loop"), "");
  EXPECT_EQ(invalid_variant_name(std::string(kMaxVariantNameBytes, 'a')), "");
  EXPECT_EQ(invalid_variant_name("jax-dense.v2+x"), "");
  EXPECT_NE(invalid_variant_name(""), "");
  EXPECT_NE(invalid_variant_name(std::string(kMaxVariantNameBytes + 1, 'a')).find("32 bytes long; at most 31"), std::string::npos);
  EXPECT_NE(invalid_variant_name(std::string(10000, 'a')).find("10000 bytes long"), std::string::npos);
  for (const std::string bad : {"a/b", "a:b", "a,b", "a b", "a\nb", "caf\xc3\xa9", "=cmd"})
    EXPECT_NE(invalid_variant_name(bad).find("has the character"), std::string::npos) << bad;
  EXPECT_NE(invalid_variant_name("a\nb").find("'\\x0a'"), std::string::npos) << invalid_variant_name("a\nb");
}

TEST(PluginLoader, ThePathVariableListsFilesAndFoldersAndNamesAMissingEntry) {
  const std::string dir = BROKEN_PLUGIN_DIR;
  ::setenv("LOBENCH_PLUGIN_PATH", (std::string(NAIVE_LOOP_PLUGIN) + "::" + dir).c_str(), 1);
  const auto paths = plugin::environment_plugin_paths();
  ASSERT_GE(paths.size(), 2u);
  EXPECT_EQ(paths[0], NAIVE_LOOP_PLUGIN);
  EXPECT_NE(std::find(paths.begin(), paths.end(), broken("wrong_abi")), paths.end());
  // Loading them stops at the first broken library, named with the variable.
  try {
    plugin::load_environment_plugins();
    ADD_FAILURE() << "a folder of broken plug-ins loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("LOBENCH_PLUGIN_PATH: plug-in " + dir + "/", 0), 0u) << e.what();
  }
  ::setenv("LOBENCH_PLUGIN_PATH", "/nonexistent/lobench.so", 1);
  try {
    plugin::environment_plugin_paths();
    ADD_FAILURE() << "a missing entry was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("LOBENCH_PLUGIN_PATH: /nonexistent/lobench.so does not exist"), std::string::npos);
  }
  ::unsetenv("LOBENCH_PLUGIN_PATH");
  EXPECT_TRUE(plugin::environment_plugin_paths().empty());
}

}  // namespace
}  // namespace lobench
