// The one sweep driver (harness/sweep/driver.hpp) on a job of counted points: partitions K/N make
// every point exactly once between them, --resume runs only what is not recorded (and the record then
// equals the uninterrupted sweep's), a signal stops the sweep between points with end() run and the
// job's message, a point that a signal stopped is not counted as finished, and the progress line
// counts every point with an ETA; --list shows the partition's points and runs nothing.
#include "harness/sweep/driver.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "harness/io/interrupt_guard.hpp"

namespace lobench::sweep {
namespace {

// Point i's "result" is i * i, recorded in `record` under its key; a point listed in `fail` fails, one
// in `skip` is skipped; a signal is raised while running the point `signal_at` (-1: never).
// Every test starts and ends with no signal recorded (an outermost guard clears it when installed);
// a test that raises one does so inside its own guard, where it is recorded, not fatal.
class SweepDriver : public ::testing::Test {
 protected:
  SweepDriver() { const io::InterruptGuard clear; }
  ~SweepDriver() override { const io::InterruptGuard clear; }
};

class CountingJob : public SweepJob {
 public:
  explicit CountingJob(int64_t n, std::map<std::string, int64_t>* record) : n_(n), record_(record) {}
  int64_t size() const override { return n_; }
  std::vector<PlannedPoint> plan(const std::vector<int64_t>& indices) override {
    std::vector<PlannedPoint> out;
    for (int64_t i : indices) {
      std::string key("p");
      key += std::to_string(i);  // (not "p" + std::to_string(i), which GCC 12 misreads as an overlapping copy)
      out.push_back({i, key, double(i + 1)});
    }
    planned_indices = indices;
    return out;
  }
  void begin(const std::vector<PlannedPoint>&) override { began = true; }
  bool recorded(const PlannedPoint& p) const override { return record_->count(p.key) > 0; }
  PointStatus execute(const PlannedPoint& p) override {
    executed.push_back(p.index);
    if (p.index == signal_at) {
      raise(SIGINT);
      if (stop_inside) return PointStatus::interrupted;
    }
    if (fail.count(p.index)) return PointStatus::failed;
    (*record_)[p.key] = p.index * p.index;
    return skip.count(p.index) ? PointStatus::skipped : PointStatus::ok;
  }
  void end(const DriveResult& r) override { ended_with = r; }
  std::string stopped_detail(const DriveResult& r) const override {
    return std::to_string(r.finished()) + " of " + std::to_string(r.points) + " kept";
  }
  std::string describe(int64_t index) const override { return "point " + std::to_string(index); }

  std::vector<int64_t> planned_indices, executed;
  std::set<int64_t> fail, skip;
  int64_t signal_at = -1;
  bool stop_inside = false;  // the signal stops the point itself (its status: interrupted)
  bool began = false;
  DriveResult ended_with;

 private:
  int64_t n_;
  std::map<std::string, int64_t>* record_;
};

TEST_F(SweepDriver, PartitionsMakeEveryPointOnce) {
  std::map<std::string, int64_t> whole, merged;
  CountingJob all(11, &whole);
  const DriveResult r = drive(all, DriveSettings{});
  EXPECT_EQ(r.ok, 11);
  EXPECT_EQ(r.points, 11);
  for (int64_t n : {2, 3, 5, 11, 13}) {
    merged.clear();
    for (int64_t k = 0; k < n; ++k) {
      CountingJob part(11, &merged);
      DriveSettings s;
      s.partition = Partition{k, n};
      const DriveResult pr = drive(part, s);
      for (int64_t i : part.planned_indices) EXPECT_EQ(i % n, k);
      EXPECT_EQ(pr.points, int64_t(part.planned_indices.size()));
    }
    EXPECT_EQ(merged, whole) << n << " partitions";
  }
  EXPECT_EQ(partition_indices(7, Partition{1, 3}), (std::vector<int64_t>{1, 4}));
  EXPECT_TRUE(partition_indices(2, Partition{3, 5}).empty());
}

TEST_F(SweepDriver, ResumeRunsOnlyWhatIsNotRecorded) {
  std::map<std::string, int64_t> whole, resumed;
  CountingJob all(6, &whole);
  drive(all, DriveSettings{});
  resumed["p1"] = 1;
  resumed["p4"] = 16;
  CountingJob rest(6, &resumed);
  DriveSettings s;
  s.resume = true;
  const DriveResult r = drive(rest, s);
  EXPECT_EQ(rest.executed, (std::vector<int64_t>{0, 2, 3, 5}));
  EXPECT_EQ(r.kept, 2);
  EXPECT_EQ(r.ok, 4);
  EXPECT_EQ(resumed, whole);
  // Without --resume the record is not asked: every point runs.
  CountingJob again(6, &resumed);
  drive(again, DriveSettings{});
  EXPECT_EQ(again.executed.size(), 6u);
}

TEST_F(SweepDriver, ASignalStopsBetweenPointsAndResumeFinishes) {
  std::map<std::string, int64_t> whole, record;
  CountingJob all(5, &whole);
  drive(all, DriveSettings{});
  {
    const io::InterruptGuard guard;
    CountingJob job(5, &record);
    job.signal_at = 2;  // point 2 completes; the sweep stops before point 3
    try {
      drive(job, DriveSettings{});
      FAIL() << "no Interrupted";
    } catch (const io::Interrupted& e) {
      EXPECT_EQ(e.signal, SIGINT);
      EXPECT_NE(std::string(e.what()).find("3 of 5 kept"), std::string::npos) << e.what();
    }
    EXPECT_EQ(job.executed, (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(job.ended_with.stopped_by, SIGINT);  // end() ran: the record is closed
  }
  {
    const io::InterruptGuard guard;  // a new outermost guard: the second sweep starts clean
    CountingJob job(5, &record);
    DriveSettings s;
    s.resume = true;
    drive(job, s);
    EXPECT_EQ(job.executed, (std::vector<int64_t>{3, 4}));
  }
  EXPECT_EQ(record, whole);
}

TEST_F(SweepDriver, APointStoppedInsideIsNotFinished) {
  std::map<std::string, int64_t> record;
  const io::InterruptGuard guard;
  CountingJob job(4, &record);
  job.signal_at = 1;
  job.stop_inside = true;
  EXPECT_THROW(drive(job, DriveSettings{}), io::Interrupted);
  EXPECT_EQ(job.ended_with.finished(), 1);
  EXPECT_EQ(record.count("p1"), 0u);
}

TEST_F(SweepDriver, CountsAndProgress) {
  std::map<std::string, int64_t> record;
  record["p0"] = 0;
  CountingJob job(5, &record);
  job.fail = {2};
  job.skip = {3};
  std::ostringstream progress;
  DriveSettings s;
  s.resume = true;
  s.progress = &progress;
  s.unit = "runs";
  const DriveResult r = drive(job, s);
  EXPECT_TRUE(job.began);
  EXPECT_EQ(r.kept, 1);
  EXPECT_EQ(r.ok, 2);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.skipped, 1);
  EXPECT_EQ(r.finished(), 5);
  EXPECT_NE(progress.str().find("(1 of 5 runs)"), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("100% of the work (5 of 5 runs)"), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("ETA"), std::string::npos);
}

// A --dry-run plans its points with no work: progress counts its points instead of saying 100% from the
// first one (a new-user trial saw "100% of the work (1 of 12 runs)").
class NoWorkJob : public CountingJob {
 public:
  using CountingJob::CountingJob;
  std::vector<PlannedPoint> plan(const std::vector<int64_t>& indices) override {
    std::vector<PlannedPoint> out = CountingJob::plan(indices);
    for (PlannedPoint& p : out) p.work = 0;
    return out;
  }
};

TEST_F(SweepDriver, ProgressOfPointsWithoutWorkCountsThePoints) {
  std::map<std::string, int64_t> record;
  NoWorkJob job(4, &record);
  std::ostringstream progress;
  DriveSettings s;
  s.progress = &progress;
  s.unit = "runs";
  drive(job, s);
  EXPECT_NE(progress.str().find("progress: 25% of the work (1 of 4 runs)"), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("progress: 100% of the work (4 of 4 runs)"), std::string::npos) << progress.str();
}

// A job whose first point spends seconds on what is measured once (the machine's limits) and whose points
// are otherwise instant: the ETA after it leaves that time out (0:00), where extrapolating the elapsed
// time over the work done (1 of 55) had said about 1:48.
class SetupFirstJob : public CountingJob {
 public:
  using CountingJob::CountingJob;
  PointStatus execute(const PlannedPoint& p) override {
    if (p.index == 0) {
      const auto t0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::seconds(2));
      setup_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return CountingJob::execute(p);
  }
  double setup_seconds() const override { return setup_; }

 private:
  double setup_ = 0;
};

TEST_F(SweepDriver, TheEtaLeavesOutWhatIsMeasuredOnce) {
  std::map<std::string, int64_t> record;
  SetupFirstJob job(10, &record);  // work 1 + 2 + ... + 10; the first point's is 1
  std::ostringstream progress;
  DriveSettings s;
  s.progress = &progress;
  drive(job, s);
  const std::string first = progress.str().substr(0, progress.str().find('\n'));
  EXPECT_NE(first.find("(1 of 10 rows), elapsed "), std::string::npos) << progress.str();
  EXPECT_NE(first.find(", ETA 0:00"), std::string::npos) << progress.str();
}

TEST_F(SweepDriver, ListShowsThePartitionAndRunsNothing) {
  std::map<std::string, int64_t> record;
  CountingJob job(7, &record);
  std::ostringstream out;
  list_points(job, Partition{1, 3}, out, "runs");
  EXPECT_EQ(out.str(), "point 1\npoint 4\n2 runs\n");
  EXPECT_TRUE(job.planned_indices.empty());
  EXPECT_TRUE(job.executed.empty());
  EXPECT_TRUE(record.empty());
}

}  // namespace
}  // namespace lobench::sweep
