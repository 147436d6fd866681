#include "harness/io/recorded_run.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "harness/io/h5_io.hpp"
#include "harness/io/output_path.hpp"

namespace lobench::io {

RecordedRun recorded_run(const std::string& path, const std::string& schema_prefix, const std::string& sweep) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return RecordedRun::absent;
  std::optional<std::string> schema, recorded_sweep, status, reason;
  try {
    h5::prepare_library();
    auto f = h5::open_file_read(path);
    schema = h5::read_attr_string(f, "schema");
    recorded_sweep = h5::read_attr_string(f, "sweep");
    status = h5::read_attr_string(f, "status");
    reason = h5::read_attr_string(f, "reason");
  } catch (const std::exception& e) {
    throw PathError(fmt::format("--resume: '{}' is not a readable run file ({}); move it away or give --overwrite",
                                path, e.what()));
  }
  if (!schema || schema->rfind(schema_prefix, 0) != 0)
    throw PathError(fmt::format("--resume: '{}' is not a {} file; move it away or give --overwrite", path,
                                schema_prefix));
  if (recorded_sweep.value_or("") != sweep)
    throw PathError(fmt::format("--resume: '{}' is a run of another sweep (its `sweep` attribute '{}' is not this "
                                "sweep's '{}'); give another --out-dir, or --overwrite to replace it",
                                path, recorded_sweep.value_or(""), sweep));
  const bool dry_run = status == "dry_run" || (status == "skipped" && reason == "dry run");
  if (!dry_run && (status == "ok" || status == "skipped" || status == "failed")) return RecordedRun::finished;
  return RecordedRun::unfinished;
}

}  // namespace lobench::io
