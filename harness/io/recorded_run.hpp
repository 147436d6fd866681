// What `--resume` finds of one run of a command that writes one run file per run (train-xmc,
// train-seqrec): nothing, a finished run (kept), or an unfinished one (run again, its file replaced).
// Each run file records the sweep it belongs to (attribute `sweep`), so a file of another sweep under
// the same name is refused rather than taken for this sweep's run.
#pragma once

#include <string>

namespace lobench::io {

enum class RecordedRun {
  absent,      // no file of that name
  finished,    // status ok, skipped or failed (and not a --dry-run's prediction): kept by --resume
  unfinished,  // status interrupted, a --dry-run's file, or no status: run again
};

// Reads `path` (the run's final name; temporary files beside it are not runs). Throws io::PathError
// naming the file when it is not a run file whose `schema` attribute starts with `schema_prefix`, or
// when its `sweep` attribute is not `sweep` (another sweep's run file: give another --out-dir).
RecordedRun recorded_run(const std::string& path, const std::string& schema_prefix, const std::string& sweep);

}  // namespace lobench::io
