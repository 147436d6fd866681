// What every training job's sweep shares (sweep/training_job.hpp): a point is a run, recorded as its own
// run file of the job (io/job_files.hpp), by default OUT_DIR/KEY.h5 (the planned point's key is the file
// name), with its place in the sweep (io/sweep_place.hpp) so that `lobench merge` can join the parts
// of a `--partition K/N` job array; `--resume` keeps a point whose file is finished and of this sweep
// (io/recorded_run.hpp). The job says what a point is, how it is planned and run (execute(): one run,
// its file written through io::RunFileWriter); the driver (sweep/driver.hpp) does the rest.
#pragma once

#include <string>
#include <utility>

#include "harness/io/job_files.hpp"
#include "harness/io/sweep_place.hpp"
#include "harness/sweep/driver.hpp"

namespace lobench::sweep {

struct RunFolder {
  const io::JobFiles* files = nullptr;  // the job's run files
  std::string out_dir;
  std::string identity;  // the `sweep` attribute: what makes processes parts of one sweep
  Partition partition;
};

class RunFolderSweep : public SweepJob {
 public:
  explicit RunFolderSweep(RunFolder folder) : folder_(std::move(folder)) {}

  // --resume: the point's run file exists, is this job's and this sweep's, and is finished.
  bool recorded(const PlannedPoint& p) const final;
  // "K of N runs finished in OUT_DIR; continue with the same command and --resume".
  std::string stopped_detail(const DriveResult& r) const override;

 protected:
  // The point's run file: OUT_DIR/KEY.h5 unless the job names it otherwise (a single run's --out).
  virtual std::string run_path(const PlannedPoint& p) const;
  // The run file's place in the sweep, for io::record_place.
  io::SweepPlace place(int64_t index) const;
  const RunFolder& folder() const { return folder_; }

 private:
  RunFolder folder_;
};

}  // namespace lobench::sweep
