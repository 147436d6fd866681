#include "harness/sweep/run_folder_sweep.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "harness/io/recorded_run.hpp"

namespace lobench::sweep {

bool RunFolderSweep::recorded(const PlannedPoint& p) const {
  return io::recorded_run(run_path(p), folder_.files->schema_prefix(), folder_.identity) == io::RecordedRun::finished;
}

std::string RunFolderSweep::stopped_detail(const DriveResult& r) const {
  return fmt::format("{} of {} runs finished in {}; continue with the same command and --resume", r.finished(),
                     r.points, folder_.out_dir);
}

std::string RunFolderSweep::run_path(const PlannedPoint& p) const {
  return (std::filesystem::path(folder_.out_dir) / (p.key + ".h5")).string();
}

io::SweepPlace RunFolderSweep::place(int64_t index) const {
  return io::SweepPlace{folder_.identity, folder_.partition.str(), index, size()};
}

}  // namespace lobench::sweep
