// A training job is its folder and one registration (sweep/training_job.hpp): this file is a whole toy
// job, `train-toy` (a "model" that trains nothing: each epoch's loss is seed / epoch), registered below,
// and shows that it runs, resumes and merges through the code train-xmc and train-seqrec use:
// the command made from the registration (cli/training_commands.hpp), the one driver
// (sweep/run_folder_sweep.hpp over sweep::drive), the one writer (io::RunFileWriter, its table created
// from the job's declaration), --resume (io/recorded_run.hpp), `lobench merge` (io/merge_runs.hpp)
// and `lobench schema` (io/job_files.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "harness/cli/training_commands.hpp"
#include "harness/io/fixed_text.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/io/merge_runs.hpp"
#include "harness/io/result_row.hpp"
#include "harness/sweep/axes.hpp"
#include "harness/sweep/run_folder_sweep.hpp"
#include "harness/sweep/training_job.hpp"

namespace lobench::sweep {
namespace {

namespace fs = std::filesystem;

// The toy's one table, declared once (io/table_row.hpp): X(type, name, default, unit, meaning).
#define TOY_EPOCH_COLUMNS(X)                          \
  X(int64_t, epoch, 0, "", "the epoch, from 1")       \
  X(double, loss, 0, "", "seed / epoch")

struct ToyEpoch {
  LOBENCH_ROW_MEMBERS(TOY_EPOCH_COLUMNS)
  static const std::vector<io::Column>& columns() {
    static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(ToyEpoch, TOY_EPOCH_COLUMNS);
    return c;
  }
};

int64_t g_runs_made = 0;  // points this process trained (what --resume must not repeat)

// The sweep: one run per --seed, OUT_DIR/toy_seed-S.h5; `stop_at` (a seed) ends its run after one epoch,
// status interrupted, as a signal would.
class ToySweep : public RunFolderSweep {
 public:
  ToySweep(const io::JobFiles& files, const Axes& axes, const std::string& out_dir, Partition part, int64_t epochs,
           int64_t stop_at)
      : RunFolderSweep({&files, out_dir, fmt::format("seeds={}; epochs={}", fmt::join(axes.values("seed"), ","), epochs),
                        part}),
        seeds_(axes.int_values("seed")), epochs_(epochs), stop_at_(stop_at) {}

  int64_t size() const override { return int64_t(seeds_.size()); }
  std::vector<PlannedPoint> plan(const std::vector<int64_t>& indices) override {
    std::vector<PlannedPoint> out;
    for (int64_t i : indices) out.push_back({i, describe(i), double(epochs_)});
    return out;
  }
  PointStatus execute(const PlannedPoint& p) override {
    ++g_runs_made;
    fs::create_directories(folder().out_dir);
    const int64_t seed = seeds_[size_t(p.index)];
    io::RunFileWriter w(run_path(p), "--out-dir");
    w.create(Provenance{}, {folder().files->table("epochs").spec}, io::Publish::at_finish, {}, [&](hid_t f) {
      h5::write_attr(f, "schema", folder().files->schema());
      h5::write_attr(f, "seed", seed);
    });
    io::record_place(w, place(p.index));
    const bool stopped = seed == stop_at_;
    for (int64_t e = 1; e <= (stopped ? 1 : epochs_); ++e) w.append("epochs", ToyEpoch{e, double(seed) / double(e)});
    w.set_attr("status", std::string(stopped ? "interrupted" : "ok"));
    w.finish("2026-01-01T00:00:00Z");
    return stopped ? PointStatus::interrupted : PointStatus::ok;
  }
  std::string describe(int64_t index) const override { return fmt::format("toy_seed-{}", seeds_[size_t(index)]); }

 private:
  std::vector<int64_t> seeds_;
  int64_t epochs_, stop_at_;
};

class ToyJob : public TrainingJob {
 public:
  static const io::JobFiles& run_files() {
    static const io::JobFiles files = [] {
      io::JobFiles f;
      f.command = "train-toy";
      f.about = "A toy job of the tests: one file per seed.";
      f.tables = {{io::TableSpec::of<ToyEpoch>("epochs", 4), "one row per epoch"}};
      return f;
    }();
    return files;
  }
  ToyJob() { axes_.add("seed", AxisKind::integer, {"0"}, "seeds"); }
  std::string description() const override { return "train nothing, one run file per seed"; }
  void declare(CLI::App* cmd) override {
    axes_.register_options(cmd);
    cmd->add_option("--out-dir", out_dir_)->required();
    cmd->add_option("--partition", partition_);
    cmd->add_option("--epochs", epochs_);
    cmd->add_option("--stop-at", stop_at_);
    cmd->add_flag("--resume", resume_);
  }
  int run(const std::string&) override {
    ToySweep sweep(run_files(), axes_, out_dir_, Partition::parse(partition_), epochs_, stop_at_);
    DriveSettings s;
    s.partition = Partition::parse(partition_);
    s.resume = resume_;
    return drive(sweep, s).failed ? 1 : 0;
  }

 private:
  Axes axes_;
  std::string out_dir_, partition_ = "0/1";
  int64_t epochs_ = 3, stop_at_ = -1;
  bool resume_ = false;
};

}  // namespace
}  // namespace lobench::sweep

// The one registration.
using lobench::sweep::ToyJob;
LOBENCH_REGISTER_TRAINING_JOB(ToyJob);

namespace lobench::sweep {
namespace {

// `lobench train-toy ARGS...` through the command the registration makes; returns its exit status.
int lobench_toy(std::vector<std::string> args) {
  CLI::App app;
  int status = -1;
  cli::register_training_commands(app, "lobench train-toy", [&](int s) { status = s; });
  args.insert(args.begin(), "train-toy");
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  app.parse(reversed);
  return status;
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

struct ToyTrainingJob : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "toy_job_XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir = t;
    g_runs_made = 0;
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(ToyTrainingJob, RunsThroughTheCommandItsRegistrationMakes) {
  EXPECT_EQ(lobench_toy({"--seed", "1,2,3", "--out-dir", (dir / "one").string()}), 0);
  EXPECT_EQ(files_in(dir / "one"), (std::set<std::string>{"toy_seed-1.h5", "toy_seed-2.h5", "toy_seed-3.h5"}));
  auto f = h5::open_file_read((dir / "one" / "toy_seed-2.h5").string());
  EXPECT_EQ(h5::read_attr_string(f, "schema").value_or(""), "lobench train-toy run, version 1");
  EXPECT_EQ(h5::read_attr_int64(f, "sweep_index").value_or(-1), 1);
  EXPECT_EQ(h5::read_attr_int64(f, "sweep_runs").value_or(-1), 3);
  const auto rows = h5::read_table<ToyEpoch>(f, "epochs", io::compound_type(sizeof(ToyEpoch), ToyEpoch::columns()),
                                             "toy_seed-2.h5");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].epoch, 3);
  EXPECT_DOUBLE_EQ(rows[2].loss, 2.0 / 3.0);
}

TEST_F(ToyTrainingJob, ResumeKeepsFinishedRunsAndMakesTheRest) {
  const std::string out = (dir / "run").string();
  // Seed 5's run stops after one epoch (status interrupted) and the sweep with it: seed 6 is not made.
  EXPECT_EQ(lobench_toy({"--seed", "4,5,6", "--out-dir", out, "--stop-at", "5"}), 0);
  EXPECT_EQ(g_runs_made, 2);
  EXPECT_EQ(files_in(out), (std::set<std::string>{"toy_seed-4.h5", "toy_seed-5.h5"}));
  const auto finished_at = fs::last_write_time(dir / "run" / "toy_seed-4.h5");
  g_runs_made = 0;
  EXPECT_EQ(lobench_toy({"--seed", "4,5,6", "--out-dir", out, "--resume"}), 0);
  EXPECT_EQ(g_runs_made, 2) << "the finished run is kept, the interrupted and the missing one made";
  EXPECT_EQ(fs::last_write_time(dir / "run" / "toy_seed-4.h5"), finished_at);
  auto f = h5::open_file_read((dir / "run" / "toy_seed-5.h5").string());
  EXPECT_EQ(h5::read_attr_string(f, "status").value_or(""), "ok");
  // Another sweep's run files (other epochs: another `sweep` attribute) are refused, not taken for this one's.
  EXPECT_THROW(lobench_toy({"--seed", "4,5,6", "--out-dir", out, "--resume", "--epochs", "2"}), std::runtime_error);
}

TEST_F(ToyTrainingJob, PartitionsMergeIntoTheWholeSweep) {
  for (const char* part : {"0/2", "1/2"})
    EXPECT_EQ(lobench_toy({"--seed", "7,8,9", "--partition", part, "--out-dir", (dir / fmt::format("p{}", part[0])).string()}), 0);
  const std::string merged = (dir / "merged").string();
  const std::string summary = io::merge_parts(merged, {(dir / "p0").string(), (dir / "p1").string()}, Provenance{}, false);
  EXPECT_NE(summary.find("train-toy"), std::string::npos) << summary;
  EXPECT_EQ(files_in(merged), (std::set<std::string>{"toy_seed-7.h5", "toy_seed-8.h5", "toy_seed-9.h5"}));
  // A partition missing: refused, nothing written.
  EXPECT_THROW(io::merge_parts((dir / "bad").string(), {(dir / "p0").string()}, Provenance{}, false),
               std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir / "bad"));
}

TEST(ToyTrainingJobSchema, ItsSectionIsGeneratedFromItsDeclaration) {
  const std::string md = io::schema_markdown("");
  EXPECT_NE(md.find("## `lobench train-toy` run files (`schema` = `lobench train-toy run, version 1`)"),
            std::string::npos);
  EXPECT_NE(md.find("| `loss` | float64 |  | seed / epoch |"), std::string::npos) << md;
}

}  // namespace
}  // namespace lobench::sweep
