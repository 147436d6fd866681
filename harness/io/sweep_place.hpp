// Where a run file sits in its sweep: the root attributes `sweep` (what makes processes parts of one
// sweep: the job's identity text), `sweep_index`, `sweep_runs` and `partition` (`K/N`). Every training
// job's run file records them (sweep/run_folder_sweep.hpp); `--resume` (io/recorded_run.hpp) and
// `lobench merge` (io/merge_run_folders.hpp) read them.
#pragma once

#include <cstdint>
#include <string>

#include "harness/io/run_file_writer.hpp"

namespace lobench::io {

struct SweepPlace {
  std::string sweep, partition = "0/1";
  int64_t index = 0, runs = 1;
};

// The four attributes, through the file's writer (flushed).
void record_place(RunFileWriter& writer, const SweepPlace& place);

}  // namespace lobench::io
