// The folder half of the one merger (io/merge_runs.hpp: merge_parts): `lobench merge OUT PART_DIRS...` for
// the training jobs, which write one run file per run into their --out-dir (io/job_files.hpp: whichever
// are registered, train-xmc and train-seqrec among them): their parts (`--partition K/N`, e.g. a Slurm
// job array) are folders, and so is the merge: OUT is a new folder holding every part's run files, as one process of the whole sweep
// would have written them (the figure scripts read it as such). Each run file keeps its own provenance
// (the root attributes of the process that trained it). Before anything is written the parts are
// checked: every file a run file of the same command, schema and sweep (attributes `schema`, `sweep`),
// each folder holding one partition of the same N, partitions 0..N−1 each once, and the runs
// 0..sweep_runs−1 each exactly once, each in the partition that makes it. An empty folder is a partition
// that made no run (K >= sweep_runs: more tasks than runs); a partition K < sweep_runs must be there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lobench::io {

struct FolderMergeSummary {
  std::string command;  // the training job's, e.g. train-xmc
  int64_t parts = 0, runs = 0;
};

// Whether `path` is a registered training job's run file (its `schema` attribute says so).
bool is_run_folder_file(const std::string& path);

// Writes the folder `out` (refused if anything is there) from the part folders. Throws
// std::invalid_argument naming the part or run file and the problem; `out` is then not created (the
// files are copied into a temporary folder beside it, renamed onto `out` once complete).
FolderMergeSummary merge_run_folders(const std::string& out, const std::vector<std::string>& part_dirs);

}  // namespace lobench::io
