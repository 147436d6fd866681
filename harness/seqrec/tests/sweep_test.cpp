#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "harness/io/h5_io.hpp"
#include "harness/io/output_path.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/seqrec_sweep.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"

namespace lobench::seqrec {
namespace {

namespace fs = std::filesystem;

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("seqrec_sweep_") {}
};

// A sweep of tiny synthetic runs (the runner test's shape) into `dir`.
SeqrecSweepSpec tiny_sweep(const fs::path& dir) {
  SeqrecSweepSpec s;
  s.base.syn_scale = 0.002;
  s.base.lr = 1e-2f;
  s.base.threads = 2;
  s.base.progress = false;
  s.base.eval_every = -1;
  s.axes.set("dataset", "synthetic:yambda");
  s.axes.set("L", "2");
  s.axes.set("N", "16");
  s.axes.set("B", "4");
  s.axes.set("D", "16");
  s.axes.set("layers", "1");
  s.axes.set("heads", "2");
  s.axes.set("steps", "2");
  s.out_dir = dir.string();
  return s;
}

std::string status_of(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_attr_string(f, "status").value_or("");
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SeqrecSweep, ExpandsTheProductOfTheAxesTheLastFastestWithOneNamedFileEach) {
  SeqrecSweepSpec s = tiny_sweep("runs");
  s.axes.set("variant", "chunked,fused,dense");
  s.axes.set("seed", "0,1");
  s.axes.set("B", "4,8");
  s.axes.set("model", "sasrec,sasrec_untied");
  const auto points = expand_seqrec_sweep(s);
  ASSERT_EQ(points.size(), 24u);  // 2 B x 2 models x 3 variants x 2 seeds
  // Seed varies fastest, then variant, then model, then B (declaration order).
  EXPECT_EQ(points[0].config.seed, 0u);
  EXPECT_EQ(points[1].config.seed, 1u);
  EXPECT_EQ(points[0].config.variant, "chunked");
  EXPECT_EQ(points[2].config.variant, "fused");
  EXPECT_TRUE(points[0].config.tied);
  EXPECT_FALSE(points[6].config.tied);
  EXPECT_EQ(points[11].config.B, 4);
  EXPECT_EQ(points[12].config.B, 8);
  EXPECT_EQ(points[0].name, "yambda_B4_tied_chunked_s0");
  EXPECT_EQ(points[23].name, "yambda_B8_untied_dense_s1");
  EXPECT_EQ(points[23].config.out, (fs::path("runs") / "yambda_B8_untied_dense_s1.h5").string());
  std::set<std::string> names;
  for (const auto& p : points) {
    names.insert(p.name);
    EXPECT_EQ(p.config.D, 16);  // the fixed axes reach every point
    EXPECT_EQ(p.config.steps, 2);
    EXPECT_DOUBLE_EQ(p.config.syn_scale, 0.002);  // and so does the base configuration
  }
  EXPECT_EQ(names.size(), points.size());
}

TEST(SeqrecSweep, OutNamesOneRunAndRefusesASweep) {
  SeqrecSweepSpec s = tiny_sweep("");
  s.out_dir.clear();
  s.out = "one.h5";
  auto points = expand_seqrec_sweep(s);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].config.out, "one.h5");
  s.axes.set("variant", "chunked,fused");
  EXPECT_THROW(expand_seqrec_sweep(s), std::invalid_argument);
  s.out.clear();
  EXPECT_THROW(expand_seqrec_sweep(s), std::invalid_argument);  // neither --out nor --out-dir
  s.axes.set("model", "gpt");
  s.out_dir = "x";
  EXPECT_THROW(expand_seqrec_sweep(s), std::invalid_argument);
}

TEST(SeqrecSweep, DryRunWritesEveryPointsPredictionAndTrainsNothing) {
  TempDir dir;
  SeqrecSweepSpec s = tiny_sweep(dir.path / "runs");
  s.axes.set("variant", "chunked,dense");
  s.axes.set("N", "16,32");
  s.base.dry_run = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_seqrec_sweep(s, collect_provenance("test"), out, err), 0);
  const auto points = expand_seqrec_sweep(s);
  ASSERT_EQ(points.size(), 4u);
  for (const auto& p : points) {
    ASSERT_TRUE(fs::exists(p.config.out)) << p.config.out;
    EXPECT_EQ(status_of(p.config.out), "dry_run");
    EXPECT_EQ(SeqrecRunFile::read_steps(p.config.out).size(), 0u);
    EXPECT_EQ(SeqrecRunFile::read_epochs(p.config.out).size(), 0u);
    auto f = h5::open_file_read(p.config.out);
    h5::Handle g(H5Gopen2(f, "memory", H5P_DEFAULT), H5Gclose);
    EXPECT_GT(h5::read_attr_double(g, "predicted_total_bytes").value_or(0), 0.0);
    EXPECT_FALSE(h5::read_attr_double(g, "measured_total_bytes").has_value());  // nothing measured
  }
  // dense needs its [P, V] logits: more than chunked at the same N.
  auto total = [](const std::string& path) {
    auto f = h5::open_file_read(path);
    h5::Handle g(H5Gopen2(f, "memory", H5P_DEFAULT), H5Gclose);
    return h5::read_attr_double(g, "predicted_total_bytes").value_or(0);
  };
  EXPECT_GT(total(points[1].config.out), total(points[0].config.out));
}

TEST(SeqrecSweep, PointsOverTheMemoryLimitAreRecordedAsSkippedAndTheOthersTrain) {
  TempDir dir;
  SeqrecSweepSpec s = tiny_sweep(dir.path);
  s.axes.set("variant", "dense,fused");
  // Between the two predictions: dense (its logits, multi-hot and gradient) over, fused under.
  SeqrecSweepSpec probe = s;
  probe.base.dry_run = true;
  probe.out_dir = (dir.path / "probe").string();
  std::ostringstream sink;
  run_seqrec_sweep(probe, collect_provenance("test"), sink, sink);
  auto total = [](const std::string& path) {
    auto f = h5::open_file_read(path);
    h5::Handle g(H5Gopen2(f, "memory", H5P_DEFAULT), H5Gclose);
    return int64_t(h5::read_attr_double(g, "predicted_total_bytes").value_or(0));
  };
  const auto pp = expand_seqrec_sweep(probe);
  const int64_t dense = total(pp[0].config.out), fused = total(pp[1].config.out);
  ASSERT_GT(dense, fused);
  s.base.mem_limit = (dense + fused) / 2;
  std::ostringstream out, err;
  EXPECT_EQ(run_seqrec_sweep(s, collect_provenance("test"), out, err), 0);
  const auto points = expand_seqrec_sweep(s);
  EXPECT_EQ(status_of(points[0].config.out), "skipped");
  {
    auto f = h5::open_file_read(points[0].config.out);
    EXPECT_NE(h5::read_attr_string(f, "reason").value_or("").find("OOM predicted"), std::string::npos);
    h5::Handle g(H5Gopen2(f, "memory", H5P_DEFAULT), H5Gclose);
    EXPECT_EQ(int64_t(h5::read_attr_double(g, "predicted_total_bytes").value_or(0)), dense);
  }
  EXPECT_EQ(SeqrecRunFile::read_steps(points[0].config.out).size(), 0u);
  EXPECT_EQ(status_of(points[1].config.out), "ok");
  EXPECT_EQ(SeqrecRunFile::read_steps(points[1].config.out).size(), 2u);
  EXPECT_NE(out.str().find("OOM predicted"), std::string::npos);
}

TEST(SeqrecSweep, AnExistingRunFileIsRefusedBeforeAnythingIsWrittenUnlessOverwrite) {
  TempDir dir;
  SeqrecSweepSpec s = tiny_sweep(dir.path);
  s.axes.set("variant", "chunked,fused");
  const auto points = expand_seqrec_sweep(s);
  // The second point's file exists: the sweep must refuse, leave it byte for byte, and not write the first.
  { std::ofstream(points[1].config.out) << "hours of results"; }
  std::ostringstream out, err;
  EXPECT_THROW(run_seqrec_sweep(s, collect_provenance("test"), out, err), io::PathError);
  EXPECT_EQ(bytes_of(points[1].config.out), "hours of results");
  EXPECT_FALSE(fs::exists(points[0].config.out));
  // A folder where a run file would go is refused even with --overwrite.
  fs::create_directories(points[0].config.out);
  s.overwrite = true;
  EXPECT_THROW(run_seqrec_sweep(s, collect_provenance("test"), out, err), io::PathError);
  EXPECT_EQ(bytes_of(points[1].config.out), "hours of results");
  fs::remove(points[0].config.out);
  EXPECT_EQ(run_seqrec_sweep(s, collect_provenance("test"), out, err), 0);
  EXPECT_EQ(status_of(points[0].config.out), "ok");
  EXPECT_EQ(status_of(points[1].config.out), "ok");
}

TEST(SeqrecSweep, TheProgressLineNamesThePointAndGivesTheSweepsEta) {
  TempDir dir;
  SeqrecSweepSpec s = tiny_sweep(dir.path);
  s.axes.set("variant", "chunked,fused");
  s.base.progress = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_seqrec_sweep(s, collect_provenance("test"), out, err), 0);
  const std::string e = err.str();
  EXPECT_NE(e.find("[train-seqrec 1/2 yambda_chunked_s0] step 2/2"), std::string::npos) << e;
  EXPECT_NE(e.find(", sweep "), std::string::npos) << e;  // the first point has 2 steps of the second after it
  EXPECT_NE(e.find("[train-seqrec 2/2 yambda_fused_s0] step 1/2"), std::string::npos) << e;
  EXPECT_NE(out.str().find("[2/2] yambda_fused_s0 fused: ok"), std::string::npos) << out.str();
}

TEST(SeqrecSweep, ABadPointIsRefusedBeforeAnyPointRuns) {
  TempDir dir;
  SeqrecSweepSpec s = tiny_sweep(dir.path);
  s.axes.set("heads", "2,3");  // D = 16 is not a multiple of 3
  std::ostringstream out, err;
  try {
    run_seqrec_sweep(s, collect_provenance("test"), out, err);
    FAIL() << "a sweep with heads = 3 at D = 16 ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir.path));
  s = tiny_sweep(dir.path);
  s.axes.set("variant", "chunked,nosuch");
  EXPECT_THROW(run_seqrec_sweep(s, collect_provenance("test"), out, err), std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(dir.path));
  // The per-item bias: an unknown value, and the sampled objective (it has no full-vocabulary logits).
  for (const char* bad : {"none,per_item", "item"}) {
    s = tiny_sweep(dir.path);
    s.axes.set("output-bias", bad);
    s.axes.set("variant", "fused,sampled");
    try {
      run_seqrec_sweep(s, collect_provenance("test"), out, err);
      FAIL() << "--output-bias " << bad << " with fused,sampled ran";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(bad) == "item" ? "sampled" : "per_item"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fs::is_empty(dir.path));
  }
  s = tiny_sweep(dir.path);
  s.axes.set("output-bias", "none,item");
  const auto named = expand_seqrec_sweep(s);
  ASSERT_EQ(named.size(), 2u);
  EXPECT_FALSE(named[0].config.item_bias);
  EXPECT_TRUE(named[1].config.item_bias);
  EXPECT_NE(named[1].name.find("_itembias"), std::string::npos) << named[1].name;
  s = tiny_sweep(dir.path);
  s.axes.set("dataset", "synthetic:yambda," + (dir.path / "nosuch.txt").string());
  EXPECT_ANY_THROW(run_seqrec_sweep(s, collect_provenance("test"), out, err));
  EXPECT_TRUE(fs::is_empty(dir.path));
}

// --dataset lastfm is the public set's file under the data folder (--data-dir, else LOBENCH_DATA; no
// other default), checked against its size and SHA-256; a path is read as given; anything else is refused.
TEST(SeqrecSweep, NamedSetsResolveUnderTheDataFolderAndAreVerified) {
  const TempDir dir;
  const fs::path copy = dir.path / "data" / "seqrec" / "LastFM.txt";
  fs::create_directories(copy.parent_path());
  std::ofstream(copy) << "1 1 2 3\n2 2 3 4\n";  // not the published file
  const char* env = std::getenv("LOBENCH_DATA");
  const std::string saved = env ? env : "";
  ::unsetenv("LOBENCH_DATA");
  SeqrecSweepSpec s = tiny_sweep(dir.path / "runs");
  s.axes.set("dataset", "lastfm," + copy.string());
  auto points = expand_seqrec_sweep(s);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].name.rfind("lastfm_", 0), 0u) << points[0].name;  // named by what was given
  auto message = [&](SeqrecSweepSpec spec) {
    auto p = expand_seqrec_sweep(spec);
    try {
      resolve_seqrec_datasets(spec, p);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(nothing thrown)");
  };
  EXPECT_NE(message(s).find("seqrec/LastFM.txt"), std::string::npos) << message(s);  // no folder given
  EXPECT_NE(message(s).find("--data-dir"), std::string::npos) << message(s);
  s.data_dir = (dir.path / "data").string();
  EXPECT_NE(message(s).find("sha256"), std::string::npos) << message(s);  // a changed copy is refused
  s.verify = false;
  resolve_seqrec_datasets(s, points);
  EXPECT_EQ(points[0].config.dataset, copy.string());
  EXPECT_EQ(points[1].config.dataset, copy.string());  // the path, as given
  ::setenv("LOBENCH_DATA", (dir.path / "data").string().c_str(), 1);  // the environment, when no --data-dir
  s.data_dir.clear();
  points = expand_seqrec_sweep(s);
  resolve_seqrec_datasets(s, points);
  EXPECT_EQ(points[0].config.dataset, copy.string());
  s.axes.set("dataset", "lastfmm");
  EXPECT_NE(message(s).find("beauty, sports, toys, lastfm"), std::string::npos) << message(s);
  if (env) ::setenv("LOBENCH_DATA", saved.c_str(), 1);
  else ::unsetenv("LOBENCH_DATA");
}

}  // namespace
}  // namespace lobench::seqrec
