// `lobench merge`, the one merger of every run-file kind: the parts of a sweep run as a job array
// (`--partition K/N`) joined after checking that they belong together, the partitions checked by one
// rule (io/partition.hpp: the same N, each once, no gap). `lobench run`'s parts are files, joined into
// one run file (the same schema version and sweep, no row twice); a training job's (train-xmc's,
// train-seqrec's, ...: io/job_files.hpp) are folders of run files, joined into one folder
// (io/merge_run_folders.hpp), or files of the job's own kind joined by its rule (PartFileMerge).
#pragma once

#include <string>
#include <vector>

#include "harness/io/results_file.hpp"
#include "harness/provenance.hpp"

namespace lobench::io {

struct MergeSummary {
  int64_t parts = 0, rows = 0;
};

// Writes `out` (refused if it exists, unless mode is OutMode::overwrite) with every part's rows and
// samples and, under /parts/NAME, each part's root attributes (its provenance). Throws
// std::invalid_argument naming the part and the problem; `out` is then not created.
MergeSummary merge_runs(const std::string& out, const std::vector<std::string>& parts, const Provenance& prov,
                        OutMode mode);

// What `lobench merge OUT PARTS...` does: parts a training job merges itself (PartFileMerge) go to its
// rule, folders (or a training job's run file, refused with its explanation) to merge_run_folders, run
// files to merge_runs (`overwrite`: OUT may be replaced;
// refused for a folder). Returns the summary line ("merged 3 parts, 12 rows -> OUT").
std::string merge_parts(const std::string& out, const std::vector<std::string>& parts, const Provenance& prov,
                        bool overwrite);

}  // namespace lobench::io
